"""The variance network of 000 Fig. 1 in the reference model: one exact result per frame.

Layout (gen/kernels.py, ``variance_fields``): with a 32-bit index the result is 144 bits,
``n [143:112] | sum [111:64] | sum_sq [63:0]``, exact for 16-bit pixels and frames below 2^32 pixels.
"""

import random
from dataclasses import replace

import numpy as np
import pytest
from graphs import ports

import sfdf.gen.analysis
from sfdf.gen.goldens import VarianceJoin, VarianceMean, VarianceMeanSq, VarianceSource, unpack_variance
from sfdf.gen.refmodel import FRAME_END, simulate
from sfdf.gen.spec import load_spec

SCHEDULERS = ("random", "round_robin", "adversarial")


@pytest.fixture
def variance(examples):
    return load_spec(examples / "variance.toml")


@pytest.fixture
def frames(examples):
    lines = (examples / "frames.txt").read_text().splitlines()
    return [[int(w) for w in line.split()] for line in lines if line.strip() and not line.startswith("#")]


def check_results(result, frames, index_width=32):
    """Each frame gets one result (at its last index) then its frame end, exact against numpy."""
    assert not result.deadlocked, result.summary_lines()
    log = result.outputs["x"]
    ends = np.cumsum([len(f) for f in frames]).tolist()
    assert [e[0] for e in log] == ["data", "control"] * len(frames)
    for k, frame in enumerate(frames):
        (_, index, payload), (_, message) = log[2 * k], log[2 * k + 1]
        assert (index % 2**index_width, message) == (ends[k] % 2**index_width, (FRAME_END, k))
        pixels = np.array(frame, dtype=np.uint64)
        n, s, sq = unpack_variance(payload, index_width)
        assert (n, s, sq) == (len(frame), int(pixels.sum()), int((pixels * pixels).sum())), (k, frame)
        assert sq / n - (s / n) ** 2 == pytest.approx(np.var(pixels.astype(float)), rel=1e-9, abs=1e-6)


def random_frames(seed, count=12, bits=16):
    rng = random.Random(seed)
    frames = []
    for _ in range(count):
        length = rng.randint(1, 64)
        kind = rng.random()
        if kind < 0.2:
            frames.append([0] * length)
        else:
            density = rng.choice([0.1, 0.5, 1.0])
            frames.append([rng.randrange(1, 2**bits) if rng.random() < density else 0 for _ in range(length)])
    return frames


# -- the shipped example ---------------------------------------------------------------------------
def test_variance_example_is_safe(variance):
    assert sfdf.gen.analysis.check(variance).deadlock_free


@pytest.mark.parametrize("scheduler", SCHEDULERS)
def test_frames_txt_is_exact(variance, frames, scheduler):
    check_results(simulate(variance, inputs={"u": frames}, scheduler=scheduler, seed=3), frames)


@pytest.mark.parametrize("seed", range(6))
@pytest.mark.parametrize("scheduler", SCHEDULERS)
def test_random_frames_are_exact(variance, scheduler, seed):
    frames = random_frames(seed)
    check_results(simulate(variance, inputs={"u": frames}, scheduler=scheduler, seed=seed), frames)


@pytest.mark.parametrize("algorithm", ["naive", "propagation", "nonpropagation"])
def test_inband_variance_is_exact(variance, algorithm):
    network = replace(variance, mode="inband", dummy_algorithm=algorithm).with_edges(
        replace(e, interval="auto") for e in variance.edges)
    assert sfdf.gen.analysis.check(network).deadlock_free
    frames = random_frames(7)
    for scheduler in SCHEDULERS:
        check_results(simulate(network, inputs={"u": frames}, scheduler=scheduler, seed=1), frames)


def test_largest_pixels_and_all_zero_frames_are_exact(variance):
    frames = [[65535] * 5000, [0] * 7, [0, 0, 65535], [1]]
    check_results(simulate(variance, inputs={"u": frames}, scheduler="round_robin"), frames)


def test_narrow_index_counts_n_modulo_its_width(examples):
    # With a 12-bit index, n, sum and sum_sq are exact for frames below 4096 pixels; the index wraps.
    network = load_spec(examples / "variance.toml")
    network = replace(network, index_width=12).with_edges(
        replace(e, width={17: 17, 48: 28, 64: 44}[e.width]) for e in network.edges)
    frames = [[65535] * 4095, [3] * 100, [65535] * 4095]
    check_results(simulate(network, inputs={"u": frames}, scheduler="round_robin"), frames, index_width=12)


# -- the kernels alone -----------------------------------------------------------------------------
def test_source_marks_the_last_word():
    source = VarianceSource(ports=ports(outputs=2, width=17))
    assert source.step({"i": 0}, last=False) == {"a": None, "b": None}
    assert source.step({"i": 9}, last=False) == {"a": 9, "b": 9}
    assert source.step({"i": 0}, last=True) == {"a": 1 << 16, "b": 1 << 16}
    assert source.step({"i": 65535}, last=True) == {"a": 1 << 16 | 65535, "b": 1 << 16 | 65535}
    with pytest.raises(ValueError, match="16-bit pixels"):
        source.step({"i": 1 << 16}, last=False)


def test_means_and_join_build_the_result():
    mean, mean_sq = VarianceMean(ports=ports(width=48)), VarianceMeanSq(ports=ports(width=64))
    join = VarianceJoin(ports=ports(inputs=(("sq", 64), ("s", 48)), width=144))  # told apart by their widths
    for word in (3, 4):
        assert mean.step({"i": word}) == {"o": None} and mean_sq.step({"i": word}) == {"o": None}
    last = 1 << 16 | 5  # index 4: word 3 was a filtered zero
    assert mean.step({"i": last}) == {"o": 12}
    assert mean_sq.step({"i": last}) == {"o": 50}
    assert unpack_variance(join.step({"s": 12, "sq": 50}, 4)["o"], 32) == (4, 12, 50)
    assert mean.step({"i": 1 << 16 | 7})["o"] == 7  # cleared after the result
    assert unpack_variance(join.step({"s": 7, "sq": 49}, 6)["o"], 32) == (2, 7, 49)  # n from the indices


def test_source_without_zero_filtering_sends_every_pixel(variance):
    assert VarianceSource(ports=ports(width=17), filter_zeros=0).step({"i": 0}, last=False) == {"o": 0}
    network = replace(variance, nodes=tuple(replace(n, params={"filter_zeros": 0}) if n.name == "u" else n
                                            for n in variance.nodes))
    frames = random_frames(11)
    result = simulate(network, inputs={"u": frames}, seed=1)
    check_results(result, frames)
    assert result.per_edge["uw"]["data_tokens"] == sum(map(len, frames))


@pytest.mark.parametrize("golden, inputs", [(VarianceMean, 2), (VarianceMeanSq, 2), (VarianceJoin, 1),
                                            (VarianceJoin, (("a", 48), ("b", 48)))])
def test_result_kernels_check_their_inputs(golden, inputs):
    with pytest.raises(ValueError, match="needs"):
        golden(ports=ports(inputs=inputs, width=48))

"""The variance network of 000 Fig. 1 in the reference model: one exact, flagged result per frame.

Layout (gen/refmodel/kernels.py, ``VarianceSource``): a 64-bit result
``OVF_SUM[63] | OVF_SQ[62] | n mod 2^14 [61:48] | sum mod 2^20 [47:28] | sum_sq mod 2^28 [27:0]``;
the numbers are exact iff both flags are clear, which 8-bit pixels guarantee up to 4112 words.
"""

import random
from dataclasses import replace

import numpy as np
import pytest

import gen.analysis
from gen.refmodel import FRAME_END, simulate
from gen.refmodel.kernels import (
    VarianceJoin,
    VarianceMean,
    VarianceMeanSq,
    VarianceSource,
    make_kernel,
    unpack_variance,
)
from gen.spec import load_spec

SCHEDULERS = ("random", "round_robin", "adversarial")


@pytest.fixture
def variance(examples):
    return load_spec(examples / "variance.toml")


@pytest.fixture
def frames(examples):
    lines = (examples / "frames.txt").read_text().splitlines()
    return [[int(w) for w in line.split()] for line in lines if line.strip() and not line.startswith("#")]


def expected(frame):
    """The exact result fields and flags of ``frame``."""
    n, s, sq = len(frame), sum(frame), sum(w * w for w in frame)
    return (n % 2**14, s % 2**20, sq % 2**28, n >= 2**14 or s >= 2**20, sq >= 2**28)


def check_results(result, frames, exact=True):
    """Each frame gets one result (at its last index) then its frame end; fields as :func:`expected`."""
    assert not result.deadlocked, result.summary_lines()
    log = result.outputs["x"]
    ends = np.cumsum([len(f) for f in frames]).tolist()
    assert [e[0] for e in log] == ["data", "control"] * len(frames)
    for k, frame in enumerate(frames):
        (_, index, payload), (_, message) = log[2 * k], log[2 * k + 1]
        assert (index, message) == (ends[k], (FRAME_END, k))
        fields = unpack_variance(payload)
        assert fields == expected(frame), (k, frame)
        if exact:
            n, s, sq, ovf_sum, ovf_sq = fields
            assert (n, s, sq, ovf_sum, ovf_sq) == (len(frame), sum(frame), int((np.array(frame) ** 2).sum()),
                                                   False, False)
            assert sq / n - (s / n) ** 2 == pytest.approx(np.var(frame), rel=1e-9, abs=1e-9)
            if not any(frame):
                assert (n, s, sq) == (len(frame), 0, 0)


def random_frames(seed, count=12, bits=8):
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
    assert variance.data_width == 64
    assert gen.analysis.check(variance).deadlock_free


@pytest.mark.parametrize("scheduler", SCHEDULERS)
def test_frames_txt_8bit_is_exact(variance, frames, scheduler):
    eight = [[w >> 8 for w in frame] for frame in frames]
    check_results(simulate(variance, inputs={"u": eight}, scheduler=scheduler, seed=3), eight)


@pytest.mark.parametrize("scheduler", SCHEDULERS)
def test_frames_txt_16bit_overflow_is_flagged(variance, frames, scheduler):
    # 64 16-bit pixels need 22 bits of sum and 38 of sum_sq: one 64-bit result cannot hold them
    # with n; the flags say so (never a silently wrong number).
    result = simulate(variance, inputs={"u": frames}, scheduler=scheduler, seed=5)
    check_results(result, frames, exact=False)
    assert sum(unpack_variance(e[2])[4] for e in result.outputs["x"] if e[0] == "data") == sum(
        any(frame) for frame in frames)


@pytest.mark.parametrize("seed", range(6))
@pytest.mark.parametrize("scheduler", SCHEDULERS)
def test_random_frames_are_exact(variance, scheduler, seed):
    frames = random_frames(seed)
    check_results(simulate(variance, inputs={"u": frames}, scheduler=scheduler, seed=seed), frames)


@pytest.mark.parametrize("seed", range(3))
def test_random_16bit_frames_exact_or_flagged(variance, seed):
    frames = random_frames(100 + seed, bits=16)
    check_results(simulate(variance, inputs={"u": frames}, scheduler="adversarial", seed=seed), frames, exact=False)


@pytest.mark.parametrize("algorithm", ["naive", "propagation", "nonpropagation"])
def test_inband_variance_is_exact(variance, algorithm):
    network = replace(variance, mode="inband", dummy_algorithm=algorithm).with_edges(
        replace(e, interval="auto") for e in variance.edges)
    assert gen.analysis.check(network).deadlock_free
    frames = random_frames(7)
    for scheduler in SCHEDULERS:
        check_results(simulate(network, inputs={"u": frames}, scheduler=scheduler, seed=1), frames)


def test_largest_exact_8bit_frame(variance):
    frames = [[255] * 4112, [255] * 4113, [1] * (2**14 + 2)]
    result = simulate(variance, inputs={"u": frames}, scheduler="round_robin")
    check_results(result, frames, exact=False)
    assert [unpack_variance(e[2])[3:] for e in result.outputs["x"] if e[0] == "data"] == [
        (False, False), (True, False), (True, False)]


# -- the kernels alone -----------------------------------------------------------------------------
def test_source_marks_the_last_word_with_n_at_width_64():
    source = VarianceSource(0, 2, 64)
    assert source.compute(0, False) == (0, [False, False])
    assert source.compute(9, False) == (9, [True, True])
    assert source.compute(0, True) == (3 << 48, [True, True])
    assert source.compute(5, True) == (1 << 48 | 5, [True, True])  # the count restarts
    with pytest.raises(ValueError, match="16-bit pixels"):
        source.compute(1 << 16, False)


def test_means_and_join_pack_disjoint_fields():
    mean, mean_sq = VarianceMean(1, 1, 64), VarianceMeanSq(1, 1, 64)
    for word in (3, 4):
        assert mean.compute(word, False) == (0, [False]) and mean_sq.compute(word, False) == (0, [False])
    last = 3 << 48 | 5
    pv, (emit_v,) = mean.compute(last, False)
    pw, (emit_w,) = mean_sq.compute(last, False)
    assert (emit_v, emit_w) == (True, True)
    assert (pv, pw) == (3 << 48 | 12 << 28, 50) and pv & pw == 0
    assert unpack_variance(VarianceJoin(2, 1, 64).compute(pv + pw, False)[0]) == (3, 12, 50, False, False)
    assert mean.compute(1 << 48 | 7, False)[0] == 1 << 48 | 7 << 28  # cleared after the result


@pytest.mark.parametrize("kernel", ["variance_mean", "variance_mean_sq", "variance_join"])
def test_result_kernels_need_width_64(kernel):
    with pytest.raises(ValueError, match="data_width 64"):
        make_kernel(kernel, {}, 1 + (kernel == "variance_join"), 1, 32)

"""The fast simulated device (sw/sim/fastsim.py, harness.py, fastbuild.py): the compiled harness against the
reference model, token by token, on the variance network (000 Fig. 1; results also against numpy) and the
filtering diamond (002 Fig. 1).

Each network is generated and built once per module; builds are cached in ``build/fastsim`` (override
with ``SFDF_FASTSIM_BUILD``), so only the first run after a change compiles. A missing toolchain fails.
"""

from __future__ import annotations

import json
import os
import random
import time
from pathlib import Path

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from sfdf.gen.analysis import check
from sfdf.gen.refmodel import simulate
from sfdf.gen.refmodel.kernels import unpack_variance
from sfdf.gen.spec import load_spec
from sfdf.hdl.generate import generate
from sfdf.sw.sim.build import build
from sfdf.sw.sim.fastsim import FastSim, FastSimError
from sfdf.sw.sim.harness import HARNESS, harness_source, wrapper_source

REPO = Path(__file__).resolve().parent.parent
BUILD = Path(os.environ.get("SFDF_FASTSIM_BUILD", REPO / "build" / "fastsim"))


class Design:
    """A generated network, its manifest and its compiled harness."""

    def __init__(self, spec: Path, folder: Path):
        report = check(load_spec(spec))
        self.network = report.network
        self.verilog, self.manifest_path = generate(self.network, folder, report=report)
        self.manifest = json.loads(self.manifest_path.read_text())
        self.library = build(self.verilog, self.manifest, BUILD)
        self.index_width = self.manifest["index_width"]

    def sim(self, **kwargs) -> FastSim:
        return FastSim(self.library, self.manifest, **kwargs)


@pytest.fixture(scope="module")
def variance(tmp_path_factory) -> Design:
    return Design(REPO / "examples" / "variance.toml", tmp_path_factory.mktemp("variance"))


#: Two sources, two sinks, 40-bit words, 16-bit indices: ports the examples do not have.
MULTI = """
[network]
name = "multi"
data_width = 40
index_width = 16
""" + "".join(f"""
[[node]]
name = "{name}"
kernel = "random_filter"
params = {{ rate = {rate}, seed = {seed} }}
""" for name, rate, seed in [("a", 0.2, 3), ("b", 0.0, 4), ("j", 0.3, 5), ("x", 0.1, 6), ("y", 0.0, 7)]) + "".join(f"""
[[edge]]
from = "{src}"
to = "{dst}"
capacity = {capacity}
""" for src, dst, capacity in [("a", "j", 8), ("b", "j", 4), ("j", "x", 4), ("j", "y", 16), ("a", "y", 16)])


@pytest.fixture(scope="module")
def multi(tmp_path_factory) -> Design:
    folder = tmp_path_factory.mktemp("multi")
    (folder / "multi.toml").write_text(MULTI)
    return Design(folder / "multi.toml", folder)


@pytest.fixture(scope="module")
def variance8(tmp_path_factory) -> Design:
    """The variance network at 8-bit indices, the least its index watermark allows (docs/semantics.md)."""
    folder = tmp_path_factory.mktemp("variance8")
    text = (REPO / "examples" / "variance.toml").read_text()
    text = text.replace('name = "variance"', 'name = "variance8"', 1).replace("index_width = 32", "index_width = 8")
    (folder / "variance8.toml").write_text(text)
    return Design(folder / "variance8.toml", folder)


@pytest.fixture(scope="module")
def diamond(tmp_path_factory) -> Design:
    return Design(REPO / "examples" / "diamond.toml", tmp_path_factory.mktemp("diamond"))


def feed(sim: FastSim, source: str, frames: list[list[int]], end_of_stream: bool = False) -> None:
    """Every frame as one packet (tlast on its last word); tuser[0] on the very last word if asked."""
    words = [w for frame in frames for w in frame]
    tlast = [int(k == len(frame) - 1) for frame in frames for k in range(len(frame))]
    eos = [0] * len(words)
    if end_of_stream:
        eos[-1] = 1
    sim.push(source, words, tlast=tlast, eos=eos)


def sink_log(design: Design, beats) -> tuple[list, int]:
    """Beats as the reference model logs them, and the number of EOS beats."""
    kinds = {code: kind for kind, code in design.manifest["beat_kinds"].items()}
    mask = (1 << design.index_width) - 1
    log, eos = [], 0
    for beat in beats:
        kind = kinds[beat.tuser >> design.index_width]
        if kind == "data":
            log.append(("data", beat.tuser & mask, beat.tdata))
        elif kind == "message":
            log.append(("control", ("frame_end", beat.tdata)))
        else:
            eos += 1
    return log, eos


def model_log(design: Design, inputs: dict, seed: int = 1) -> dict[str, list]:
    result = simulate(design.network, inputs=inputs, seed=seed)
    assert not result.deadlocked
    return {sink: [tuple(e) if e[0] == "data" else e for e in log] for sink, log in result.outputs.items()}


def run_frames(design: Design, inputs: dict, *, budget: int = 200_000, end_of_stream: bool = False,
               pause: float = 0.0, seed: int = 1) -> tuple[FastSim, dict[str, list]]:
    sim = design.sim()
    if pause:
        for n, port in enumerate(sim.sinks):
            sim.set_pause(port.node, pause, seed + n, sink=True)
        for n, port in enumerate(sim.sources):
            sim.set_pause(port.node, pause, seed + 100 + n, sink=False)
    for source, frames in inputs.items():
        feed(sim, source, frames, end_of_stream)
    frames = len(next(iter(inputs.values())))
    result = sim.run(budget, until_messages=frames)
    assert result.reason == "target", (result, sim.counters())
    if end_of_stream:
        sim.run(1000, idle_cycles=50)
    logs = {}
    for port in sim.sinks:
        logs[port.node], eos = sink_log(design, sim.read(port.node))
        assert eos == int(end_of_stream)
    return sim, logs


def variance_frames(seed: int) -> list[list[int]]:
    """Sparse 16-bit frames with many zeros, an all-zero frame, full-scale frames, a one-pixel frame."""
    rng = random.Random(seed)
    frames = [[rng.randrange(1, 1 << 16) if rng.random() < 0.2 else 0 for _ in range(rng.randint(1, 80))]
              for _ in range(12)]
    frames[3] = [0] * 17
    frames[5] = [65535] * 40
    frames[8] = [65535]
    frames.append([0])
    return frames


def check_variance(log: list, frames: list[list[int]], index_width: int) -> None:
    """One data beat (at the frame's last index) then the frame end, per frame, exact against numpy."""
    assert [event[0] for event in log] == ["data", "control"] * len(frames)
    ends = np.cumsum([len(f) for f in frames])
    for k, frame in enumerate(frames):
        (_, index, payload), (_, message) = log[2 * k], log[2 * k + 1]
        assert index == ends[k] % 2**index_width and message == ("frame_end", k)
        pixels = np.array(frame, dtype=np.uint64)
        assert unpack_variance(payload, index_width) == (len(frame), int(pixels.sum()), int((pixels**2).sum()))


# -- the harness is generated from the manifest ----------------------------------------------------
def test_template_names_no_port():
    text = HARNESS.read_text()
    assert "s_axis_" not in text and "m_axis_" not in text


def test_harness_and_wrapper_follow_the_manifest(variance):
    source = harness_source(variance.manifest)
    wrapper = wrapper_source(variance.manifest)
    for port in variance.manifest["ports"]:
        assert f"top->{port['name']}_tdata" in source
        assert f"[{port['tdata_width'] - 1}:0] {port['name']}_tdata" in wrapper
        assert f"[{port['tuser_width'] - 1}:0] {port['name']}_tuser" in wrapper
    assert "[143:0] m_axis_x_tdata" in wrapper  # VlWide in the model


def test_second_build_is_cached(variance):
    start = time.monotonic()
    again = build(variance.verilog, variance.manifest, BUILD)
    assert again == variance.library
    assert time.monotonic() - start < 5  # hashing and a stat, no compiler


def test_library_refuses_another_manifest(variance, diamond):
    with pytest.raises(FastSimError, match="built for another design"):
        FastSim(variance.library, diamond.manifest)


def test_unknown_port_is_named(variance):
    with variance.sim() as sim, pytest.raises(FastSimError, match="no source port 'v'"):
        sim.push("v", [1])


# -- the variance network --------------------------------------------------------------------------
@pytest.mark.parametrize("seed", [1, 2])
def test_variance_matches_model_and_numpy(variance, seed):
    frames = variance_frames(seed)
    sim, logs = run_frames(variance, {"u": frames})
    assert logs == model_log(variance, {"u": frames}, seed)
    check_variance(logs["x"], frames, variance.index_width)
    sim.close()


def test_variance_end_of_stream(variance):
    frames = variance_frames(3)
    _, logs = run_frames(variance, {"u": frames}, end_of_stream=True)
    assert logs == model_log(variance, {"u": frames})


def test_variance_under_backpressure_and_idle_sources(variance):
    frames = variance_frames(4)
    _, logs = run_frames(variance, {"u": frames}, pause=0.4, seed=9)
    check_variance(logs["x"], frames, variance.index_width)


@settings(max_examples=15, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(frames=st.lists(st.lists(st.one_of(st.just(0), st.just(65535), st.integers(0, 65535)), min_size=1,
                                max_size=40), min_size=1, max_size=8))
def test_variance_any_frames(variance, frames):
    _, logs = run_frames(variance, {"u": frames})
    check_variance(logs["x"], frames, variance.index_width)


def test_frames_stream_without_bubbles(variance):
    """Without back-pressure the source takes one word per cycle, across frame boundaries too."""
    frames = variance_frames(5)
    with variance.sim() as sim:
        feed(sim, "u", frames)
        sim.run(10_000, until_messages=len(frames))
        ends = [sim.frame_end_cycle("u", k) for k in range(len(frames))]
        assert np.diff(ends).tolist() == [len(f) for f in frames[1:]]
        assert sim.frame_end_cycle("u", len(frames)) is None
        assert sim.counters()["u"]["accepted"] == sum(map(len, frames))


def test_run_stops_when_idle_or_at_the_budget(variance):
    with variance.sim() as sim:
        assert sim.run(500, idle_cycles=20) == (20, "idle")
        assert sim.run(30) == (30, "budget")
        assert sim.cycles == 50
        feed(sim, "u", [[1, 2, 3]])
        assert sim.run(1000, until_messages=1).reason == "target"
        assert [b.tlast for b in sim.read("x")] == [False, True]
        assert sim.run(10, until_messages=1) == (0, "target")  # already there


def test_push_checks_word_width(variance):
    with variance.sim() as sim, pytest.raises(FastSimError, match="does not fit 16 bits"):
        sim.push("u", [1 << 16])


def test_variance_wraps_its_indices_ten_times_exactly(variance8):
    """Endless streams: more than ten times 2^8 words through 8-bit indices (the watermark holds the
    source within 127 of the sink), every frame's result exact against numpy, with and without
    back-pressure."""
    rng = random.Random(5)
    frames = []
    while sum(map(len, frames)) <= 10 * 2**8 + 17:
        frames.append([rng.randrange(1, 1 << 16) if rng.random() < 0.3 else 0 for _ in range(rng.randint(1, 200))])
    for pause, seed in ((0.0, 1), (0.4, 2)):
        _, logs = run_frames(variance8, {"u": frames}, pause=pause, seed=seed)
        check_variance(logs["x"], frames, 8)


# -- a filtering network (random_filter kernels, in-band dummies) ----------------------------------
@pytest.mark.parametrize(("pause", "seed"), [(0.0, 1), (0.3, 2), (0.6, 3)])
def test_diamond_matches_model(diamond, pause, seed):
    rng = random.Random(seed)
    frames = [[rng.getrandbits(32) for _ in range(rng.randint(1, 12))] for _ in range(40)]
    _, logs = run_frames(diamond, {"u": frames}, pause=pause, seed=seed, end_of_stream=True)
    assert logs == model_log(diamond, {"u": frames}, seed)


def test_two_sources_two_sinks_match_model(multi):
    """Sources framed at the same indices (docs/hardware.md), 40-bit words, 18-bit tuser, back-pressure."""
    rng = random.Random(7)
    lengths = [rng.randint(1, 9) for _ in range(30)]
    inputs = {s: [[rng.getrandbits(40) for _ in range(n)] for n in lengths] for s in ("a", "b")}
    assert [p["tuser_width"] for p in multi.manifest["ports"] if p["direction"] == "out"] == [18, 18]
    for pause in (0.0, 0.5):
        _, logs = run_frames(multi, inputs, pause=pause, seed=3, end_of_stream=True)
        assert logs == model_log(multi, inputs)
        assert sum(e[0] == "data" for e in logs["x"]) > 0

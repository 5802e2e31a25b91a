"""004's frequency-hopping radio in the SDF model (gen/sdf/kernels.py): the radio's kernels one by one, and
both versions (teleport messages, examples/fhr.toml; the feedback loop, examples/fhr_feedback.toml) on the
same hopping input give the same outputs, in which every hop shows for exactly the frames between it and
the firing its retune lands at."""

from __future__ import annotations

import itertools
from pathlib import Path

import pytest

from sfdf.gen.sdf.kernels import Detector, Forward, HopSignal, Magnitude, RFtoIF
from sfdf.gen.sdf.model import run_sdf
from sfdf.gen.spec import load_spec

EXAMPLES = Path(__file__).resolve().parents[1] / "examples"
FRAME, HOLDOFF, LATENCY = 512, 6, 6


def radio(version: str):
    return load_spec(EXAMPLES / f"{version}.toml")


def test_the_kernels_one_by_one():
    assert Forward().fire([[1, 2], [3]], 1, [1, 2, 0]) == [[1], [2, 3], []]
    mixer = RFtoIF()
    assert mixer.fire([[10]], 1, [1]) == [[10]]
    mixer.message(3)
    assert mixer.fire([[10]], 3, [1]) == [[7]] and mixer.fire([[10]], 4, [1]) == [[10]]  # the imaginary part passes
    assert mixer.fire([[10], [1, 1]], 5, [1]) == [[5]]  # the loop's retunes first
    assert Magnitude().fire([[(-3) & 0xFFFFFFFF, 4, 5, 0]], 1, [2]) == [[7, 5]]
    detector = Detector(low=10, high=20, holdoff=2)
    assert detector.fire([[1, 15, 12]], 1, [3, 1]) == [[1, 15, 12], [15]] and detector.send() == 15
    assert detector.fire([[15]], 2, [1, 1]) == [[15], [0]] and detector.send() is None  # holding off
    assert detector.fire([[20, 9]], 4, [2]) == [[20, 9]] and detector.send() is None  # outside the band


def test_the_hop_signal_hops_into_the_detectors_bands():
    signal = HopSignal(seed=3)
    words = signal.words(FRAME * 64)
    assert words[1::2] == [0] * (FRAME * 32)  # imaginary parts
    carriers = [words[f * FRAME] for f in range(64)]
    assert all(len(set(words[f * FRAME:(f + 1) * FRAME:2])) == 1 for f in range(64))  # constant over a frame
    steps = [b - a for a, b in itertools.pairwise(carriers) if b != a]
    assert len(steps) >= 3 and all(256 <= s < 1280 for s in steps)
    assert HopSignal(seed=3).words(100) == words[:100]


@pytest.fixture(scope="module")
def runs():
    words = HopSignal(seed=1).words(FRAME * 48)
    return {version: run_sdf(radio(version), source_firings=len(words), bounded=True, words={"antenna": words})
            for version in ("fhr", "fhr_feedback")}


def test_both_versions_give_the_same_outputs_on_a_hopping_input(runs):
    teleport, feedback = runs["fhr"], runs["fhr_feedback"]
    assert teleport.outputs == feedback.outputs and not feedback.deliveries
    assert len(teleport.deliveries) >= 2  # the detectors send only when they see a hop
    for d in teleport.deliveries:  # SDEP_RFtoIF<-D(n) = 512 n
        assert (d.receiver, d.when, d.firing) == ("RFtoIF", "after", FRAME * (d.n + LATENCY))


def test_each_hop_shows_until_its_retune_lands(runs):
    run = runs["fhr"]
    out = run.outputs["out"]
    shown = {f for f in range(len(out) // 256) if any(out[256 * f:256 * (f + 1)])}  # frames from 0
    expected = {d.n - 1 + k for d in run.deliveries for k in range(LATENCY + 1)}  # detector firing n sees frame n - 1
    assert shown == expected and shown


def test_the_loop_one_frame_short_lands_the_retunes_a_frame_early(tmp_path, runs):
    path = tmp_path / "short.toml"
    path.write_text((EXAMPLES / "fhr_feedback.toml").read_text().replace("initial = 28", "initial = 24"))
    words = HopSignal(seed=1).words(FRAME * 48)
    early = run_sdf(load_spec(path), source_firings=len(words), bounded=True, words={"antenna": words})
    assert early.outputs != runs["fhr"].outputs


def test_the_antenna_is_fed_the_hopping_signal_by_default(runs):
    default = run_sdf(radio("fhr"), source_firings=FRAME * 48, bounded=True)
    assert default.outputs == runs["fhr"].outputs

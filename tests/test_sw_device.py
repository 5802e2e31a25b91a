"""The frame codec (sw/device/codec.py) and the device API (sw/device/) on the fast simulated device.

Codec: hypothesis round trips of frames, beats and byte packets for any port width (above 64 bits too),
a byte stream cut anywhere, and corrupted packets. Device: the variance network against numpy and the
diamond against the reference model, through the child process and in-process; a frame over its cycle
budget and a killed simulator give errors that name the frame and lose no answered result. Links: the
in-process and child-process links are both a sw.link.Link and report the same steps; the child takes
typed calls only and answers anything else with an error, serving on.
"""

from __future__ import annotations

import json
import os
import random
import signal
import socket
import threading
from multiprocessing.connection import Connection
from pathlib import Path

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from test_sw_sim_fastsim import MULTI

from sfdf.gen.analysis import check
from sfdf.gen.refmodel import simulate
from sfdf.gen.spec import load_spec
from sfdf.hdl.generate import generate
from sfdf.sw.device import DeviceDied, DeviceError, FrameTimeout, harness_library, open_device
from sfdf.sw.device.codec import Codec, FrameError, FramingError, read_packet
from sfdf.sw.device.link import Link, StepResult
from sfdf.sw.device.process import BadRequest, Call, ProcessLink, Reply, request, serve
from sfdf.sw.device.simlink import RESET_CYCLES, SimLink
from sfdf.sw.sim.fastsim import FastSim

REPO = Path(__file__).resolve().parent.parent
BUILD = Path(os.environ.get("SFDF_FASTSIM_BUILD", REPO / "build" / "fastsim"))


# -- codec -----------------------------------------------------------------------------------------
def manifest_with(word_width: int, result_width: int, index_width: int, fields=None) -> dict:
    """A manifest with one source and one sink port of the given widths (the shape of gen/generate.py's)."""
    return {
        "name": "t", "top": "t", "index_width": index_width, "payload_width": 16,
        "beat_kinds": {"data": 0, "message": 1, "eos": 2},
        "ports": [
            {"name": "s_axis_u", "node": "u", "direction": "in", "tdata_width": word_width, "tuser_width": 1,
             "tlast": True, "fields": [{"name": "data", "lsb": 0, "width": word_width}],
             "tuser_fields": [{"name": "eos", "lsb": 0, "width": 1}]},
            {"name": "m_axis_x", "node": "x", "direction": "out", "tdata_width": result_width,
             "tuser_width": index_width + 2, "tlast": True,
             "fields": fields or [{"name": "data", "lsb": 0, "width": result_width}],
             "tuser_fields": [{"name": "index", "lsb": 0, "width": index_width},
                              {"name": "kind", "lsb": index_width, "width": 2}]},
        ],
    }


@st.composite
def frames_of_any_width(draw):
    width = draw(st.integers(1, 160))
    pixels = draw(st.lists(st.integers(0, (1 << width) - 1), min_size=1, max_size=50))
    frame_id = draw(st.integers(-(1 << 63), (1 << 63) - 1))
    return width, pixels, frame_id


@given(frames_of_any_width(), st.booleans())
def test_frame_packet_round_trip(case, end_of_stream):
    width, pixels, frame_id = case
    codec = Codec(manifest_with(width, 32, 32))
    packet = codec.pack_frame(frame_id, pixels, end_of_stream=end_of_stream)
    decoded = codec.unpack_frame(packet)
    assert (decoded.frame_id, decoded.values(), decoded.end_of_stream) == (frame_id, pixels, end_of_stream)
    words, tlast, tuser = codec.axis_words(pixels, end_of_stream=end_of_stream)
    assert words == pixels
    assert tlast == [0] * (len(pixels) - 1) + [1]
    assert tuser == [0] * (len(pixels) - 1) + [int(end_of_stream)]


@given(st.lists(st.integers(0, 65535), min_size=1, max_size=200))
def test_numpy_frames_pack_like_lists(pixels):
    codec = Codec(manifest_with(16, 32, 32))
    for dtype in (np.uint16, np.int64, np.uint64):
        assert codec.frame_words(np.array(pixels, dtype=dtype)) == codec.frame_words(pixels)


@given(st.data())
def test_beats_round_trip_and_fields(data):
    index_width = data.draw(st.integers(1, 64))
    widths = data.draw(st.lists(st.integers(1, 70), min_size=1, max_size=4))
    lsbs = np.cumsum([0, *widths[:-1]]).tolist()
    fields = [{"name": f"f{i}", "lsb": lsb, "width": w} for i, (lsb, w) in enumerate(zip(lsbs, widths, strict=True))]
    codec = Codec(manifest_with(16, sum(widths), index_width, fields))
    beats = data.draw(st.lists(st.tuples(st.integers(0, (1 << sum(widths)) - 1), st.integers(0, 2),
                                         st.integers(0, (1 << index_width) - 1)), max_size=20))
    values = [(tdata, kind << index_width | index, kind != 0) for tdata, kind, index in beats]
    decoded = codec.unpack_beats(codec.pack_beat_values("x", values))
    assert [(b.tdata, b.index, b.tlast) for b in decoded] == [(d, i, k != 0) for d, k, i in beats]
    assert [b.kind for b in decoded] == [("data", "message", "eos")[k] for _, k, _ in beats]
    for beat, (tdata, kind, _) in zip(decoded, beats, strict=True):
        if kind == 0:
            assert beat.fields == {f["name"]: tdata >> f["lsb"] & ((1 << f["width"]) - 1) for f in fields}
        if kind == 1:
            assert beat.frame == tdata % (1 << 16)


@given(st.data())
def test_read_packet_takes_a_stream_cut_anywhere(data):
    codec = Codec(manifest_with(16, 144, 32))
    frames = data.draw(st.lists(st.lists(st.integers(0, 65535), min_size=1, max_size=30), min_size=1, max_size=6))
    packets = [codec.pack_frame(k, frame) for k, frame in enumerate(frames)]
    packets.insert(1, codec.pack_beat_values("x", [(1 << 140, 1 << 33 | 5, True)]))
    stream = b"".join(packets)
    cuts = sorted(data.draw(st.lists(st.integers(0, len(stream)), max_size=10)))
    buffer, got = bytearray(), []
    for a, b in zip([0, *cuts], [*cuts, len(stream)], strict=True):
        buffer += stream[a:b]
        while True:
            packet, used = read_packet(buffer, codec)
            if packet is None:
                break
            got.append(packet)
            del buffer[:used]
    assert not buffer
    assert [p.values() for p in got if not isinstance(p, list)] == frames
    assert got[1][0].tdata == 1 << 140


@settings(max_examples=50)
@given(st.lists(st.integers(0, 65535), min_size=1, max_size=20), st.data())
def test_any_corrupted_bit_is_caught(pixels, data):
    codec = Codec(manifest_with(16, 32, 32))
    packet = bytearray(codec.pack_frame(7, pixels))
    bit = data.draw(st.integers(0, 8 * len(packet) - 1))
    packet[bit // 8] ^= 1 << bit % 8
    with pytest.raises(FramingError):
        codec.unpack_frame(bytes(packet))


def test_bad_frames_name_the_frame():
    codec = Codec(manifest_with(16, 32, 32))
    with pytest.raises(FrameError, match="frame 12: a frame is a non-empty"):
        codec.pack_frame(12, [])
    with pytest.raises(FrameError, match="frame 13: pixel 1 is 65536, wider than 16 bits"):
        codec.pack_frame(13, [1, 65536])
    with pytest.raises(FrameError, match="frame 14: pixel 0 is -1, negative"):
        codec.pack_frame(14, np.array([-1, 2]))
    with pytest.raises(FrameError, match=r"frame 15: pixel 0 is 1\.5"):
        codec.pack_frame(15, [1.5])
    with pytest.raises(FrameError, match="64-bit signed"):
        codec.pack_frame(1 << 63, [1])


def test_variance_manifest_fields(variance_manifest):
    codec = Codec(json.loads(variance_manifest.read_text()))
    beat = codec.decode_beat("x", 3 << 112 | 8 << 64 | 34, 5, False)
    assert (beat.kind, beat.index, dict(beat.fields)) == ("data", 5, {"n": 3, "sum": 8, "sum_sq": 34})


# -- the device ------------------------------------------------------------------------------------
@pytest.fixture(scope="module")
def variance_manifest(tmp_path_factory) -> Path:
    return generate(load_spec(REPO / "examples" / "variance.toml"), tmp_path_factory.mktemp("variance"))[1]


@pytest.fixture(scope="module")
def diamond_manifest(tmp_path_factory) -> Path:
    return generate(load_spec(REPO / "examples" / "diamond.toml"), tmp_path_factory.mktemp("diamond"))[1]


def pixel_frames(seed: int, count: int = 30) -> list[np.ndarray]:
    """Sparse frames (most pixels zero), an all-zero frame and a full-scale frame."""
    rng = np.random.default_rng(seed)
    frames = []
    for _ in range(count):
        frame = rng.integers(0, 65536, rng.integers(1, 300), dtype=np.uint16)
        frame[rng.random(frame.size) < 0.8] = 0
        frames.append(frame)
    frames[1] = np.zeros(50, dtype=np.uint16)
    frames[2] = np.full(200, 65535, dtype=np.uint16)
    return frames


def assert_variance(result, frame) -> None:
    pixels = np.asarray(frame, dtype=np.uint64)
    assert result.fields == {"n": pixels.size, "sum": int(pixels.sum()), "sum_sq": int((pixels**2).sum())}
    variance = result.fields["sum_sq"] / result.fields["n"] - (result.fields["sum"] / result.fields["n"]) ** 2
    assert variance == pytest.approx(np.var(pixels.astype(float)), rel=1e-9, abs=1e-6)


@pytest.mark.parametrize("process", [True, False])
def test_variance_device_against_numpy(variance_manifest, process):
    frames = pixel_frames(1)
    ids = random.Random(1).sample(range(-(10**12), 10**12), len(frames))  # any 64-bit ids, any order
    with open_device(variance_manifest, build_dir=BUILD, process=process) as device:
        assert (device.link.pid is not None) == process
        device.send_frames(zip(ids, frames, strict=True))
        assert device.pending == ids
        results = device.results()
        assert [r.frame_id for r in results] == ids and [r.frame for r in results] == list(range(len(frames)))
        for result, frame in zip(results, frames, strict=True):
            assert_variance(result, frame)
        assert device.pending == [] and device.cycles >= sum(map(len, frames))
        assert device.results() == []


def test_receive_and_stream(variance_manifest):
    frames = pixel_frames(2, 60)
    with open_device(variance_manifest, build_dir=BUILD, backpressure=0.3, idle=0.2, seed=5) as device:
        device.send(100, frames[0])
        device.send(101, frames[1])
        assert device.receive().frame_id == 100
        assert device.receive().frame_id == 101
        with pytest.raises(DeviceError, match="no frame is pending"):
            device.receive()
        results = list(device.stream(enumerate(frames), window=7))
    assert [r.frame_id for r in results] == list(range(len(frames)))
    for result, frame in zip(results, frames, strict=True):
        assert_variance(result, frame)


@pytest.mark.heavy
def test_diamond_device_against_model(diamond_manifest):
    network = check(load_spec(REPO / "examples" / "diamond.toml")).network
    rng = random.Random(4)
    frames = [[rng.getrandbits(32) for _ in range(rng.randint(1, 10))] for _ in range(25)]
    expected = per_frame(simulate(network, inputs={"u": frames}, seed=4).outputs["x"])
    with open_device(diamond_manifest, build_dir=BUILD) as device:
        device.send_frames(enumerate(frames))
        results = device.results()
    assert [[(b.index, b.fields["data"]) for b in r.beats["x"]] for r in results] == expected
    assert sum(map(len, expected)) > 0


def per_frame(log) -> list[list[tuple[int, int]]]:
    """A model sink log cut at its frame ends: (index, payload) of each frame's data."""
    frames, data = [], []
    for event in log:
        if event[0] == "data":
            data.append((event[1], event[2]))
        else:
            frames.append(data)
            data = []
    return frames


@pytest.mark.heavy
def test_two_sources_two_sinks(tmp_path):
    (tmp_path / "multi.toml").write_text(MULTI)
    network = check(load_spec(tmp_path / "multi.toml")).network
    rng = random.Random(8)
    lengths = [rng.randint(1, 9) for _ in range(20)]
    inputs = {s: [[rng.getrandbits(40) for _ in range(n)] for n in lengths] for s in ("a", "b")}
    expected = {sink: per_frame(log) for sink, log in simulate(network, inputs={**inputs}, seed=1).outputs.items()}
    with open_device(tmp_path / "multi.toml", build_dir=BUILD, backpressure=0.3) as device:
        device.send_frames((k, {"a": inputs["a"][k], "b": inputs["b"][k]}) for k in range(len(lengths)))
        results = device.results()
    for sink in ("x", "y"):
        assert [[(b.index, b.fields["data"]) for b in r.beats[sink]] for r in results] == expected[sink]
    with pytest.raises(ValueError, match="has 2 source ports"):
        Codec(json.loads(json.dumps(device.codec.manifest))).source()


def test_end_of_stream_closes_sending(variance_manifest):
    with open_device(variance_manifest, build_dir=BUILD, process=False) as device:
        device.send(1, [5, 6], end_of_stream=True)
        assert_variance(device.receive(), [5, 6])
        device.run(100)
        assert device.eos == {"x"}
        with pytest.raises(DeviceError, match="stream has ended"):
            device.send(2, [1])


def test_frame_over_budget_names_it_and_loses_nothing(variance_manifest):
    with open_device(variance_manifest, build_dir=BUILD) as device:
        device.send(7, [1, 2, 3])
        assert device.run(1000) == 1                   # answered, kept
        device.send(8, [4, 5])
        with pytest.raises(FrameTimeout, match="frame 8 .*no result within 1 cycles") as error:
            device.results(timeout_cycles=1)
        assert error.value.frame_id == 8
        assert [r.frame_id for r in error.value.results] == [7]  # handed over
        assert device.pending == [8]
        (late,) = device.results()                     # the frame is still there for a larger budget
        assert late.frame_id == 8
        assert_variance(late, [4, 5])


def test_killed_simulator_names_the_frame(variance_manifest):
    device = open_device(variance_manifest, build_dir=BUILD)
    try:
        device.send(21, [9, 9])
        device.run(1000)
        device.send(22, [1])
        device.send(23, [2])
        os.kill(device.link.pid, signal.SIGKILL)
        with pytest.raises(DeviceDied, match=r"died \(simulator process \d+ was killed by signal SIGKILL\) with "
                                             r"frame 22 .*and 1 later frame") as error:
            device.results()
        assert error.value.frame_id == 22
        assert [r.frame_id for r in error.value.results] == [21]
        with pytest.raises(DeviceDied, match="unusable"):
            device.send(24, [1])
    finally:
        device.close()


def test_frame_sent_to_a_dead_simulator_is_named(variance_manifest):
    with open_device(variance_manifest, build_dir=BUILD) as device:
        device.send(30, [1])
        assert device.results()[0].frame_id == 30
        os.kill(device.link.pid, signal.SIGKILL)
        with pytest.raises(DeviceDied, match="with frame 31 ") as error:
            device.send_frames([(31, [2]), (32, [3])])
        assert error.value.frame_id == 31 and error.value.results == []


def test_wrong_sources_and_backend(variance_manifest):
    with pytest.raises(ValueError, match="only 'sim'"):
        open_device(variance_manifest, backend="board")
    with open_device(variance_manifest, build_dir=BUILD, process=False) as device:
        with pytest.raises(DeviceError, match="give pixels for each"):
            device.send(1, {"u": [1], "v": [2]})
        device.send(2, {"u": [3]})
        assert device.results()[0].fields["n"] == 1
        with pytest.raises(FrameError, match="frame 3"):
            device.send(3, [])


def test_open_from_spec(tmp_path):
    with open_device(REPO / "examples" / "variance.toml", build_dir=BUILD, process=False) as device:
        device.send(0, [3, 4])
        assert device.results()[0].fields == {"n": 2, "sum": 7, "sum_sq": 25}


# -- the links -------------------------------------------------------------------------------------
def test_process_link_and_sim_link_are_links_that_agree(variance_manifest):
    library, facts = harness_library(variance_manifest, BUILD)
    codec = Codec(facts)
    frames = pixel_frames(3, 12)
    packets = b"".join(codec.pack_frame(k, frame) for k, frame in enumerate(frames))
    runs = []
    for link in (SimLink(FastSim(library, facts, RESET_CYCLES), codec), ProcessLink(library, facts)):
        try:
            assert isinstance(link, Link)
            link.set_pause("x", 0.3, 5, sink=True)
            link.set_pause("u", 0.2, 6, sink=False)
            link.push(packets)
            runs.append([link.step(300, 0), link.step(10**6, 5), link.step(10**6, len(frames))])
        finally:
            link.close()
    in_process, in_child = runs
    assert all(isinstance(step, StepResult) for step in in_child)
    assert in_child == in_process
    assert [step.reason for step in in_process] == ["budget", "target", "target"]
    assert sum(len(ends) for step in in_process for ends in step.frame_ends) == len(frames)


def test_the_child_refuses_a_bad_call_and_serves_on(variance_manifest):
    library, facts = harness_library(variance_manifest, BUILD)
    ours, theirs = socket.socketpair()
    child = threading.Thread(target=serve, args=(theirs.detach(),))
    child.start()
    conn = Connection(ours.detach())

    def answer():
        assert conn.poll(60), "the server thread did not answer"
        return conn.recv()

    try:
        conn.send((str(library), facts, RESET_CYCLES))
        assert answer()[0] == Reply.READY.value
        for bad in [("reboot", (), {}), ("_step", (10, 0), {}), ("close",), "step", None,
                    (Call.STEP.value, (10,), {}), (Call.SET_PAUSE.value, ("x", 0.5, 1, True), {})]:
            conn.send(bad)
            status, message = answer()
            assert (status, message.split(":")[0]) == (Reply.ERROR.value, "BadRequest"), bad
        packet = Codec(facts).pack_frame(1, [3, 4])
        conn.send((Call.PUSH.value, (packet[:-1],), {}))  # a call the simulator refuses
        refusal = f"ValueError: push: bytes 0..{len(packet) - 1} are not a whole frame packet"
        assert answer() == (Reply.ERROR.value, refusal)
        conn.send((Call.PUSH.value, (packet,), {}))
        assert answer() == (Reply.OK.value, None)
        conn.send((Call.STEP.value, (10**5, 1), {}))
        status, step = answer()
        assert status == Reply.OK.value and step.reason == "target"
        conn.send((Call.CLOSE.value, (), {}))
        child.join(30)
        assert not child.is_alive()
    finally:
        conn.close()
        child.join(30)


@pytest.mark.parametrize(("message", "error"), [
    (("reboot", (), {}), "not a request"),
    ((Call.STEP.value, (1, 0)), "not a request"),
    ((Call.STEP.value, 5, {}), "not a request"),
    ((Call.STEP.value, (1, 0, 2), {}), "step: too many positional arguments"),
    ((Call.SET_PAUSE.value, ("x", 0.5, 1), {"sink": True, "source": 1}), "set_pause: got an unexpected keyword"),
    ((Call.SET_PAUSE.value, ("x", 0.5, 1, True), {}), "set_pause: too many positional arguments"),
])
def test_requests_are_checked_before_any_call(message, error):
    with pytest.raises(BadRequest, match=error):
        request(message)


def test_requests_name_their_call():
    assert request((Call.STEP.value, [5, 1], {})) == (Call.STEP, (5, 1), {})
    assert request((Call.SET_PAUSE.value, ("u", 0.1, 3), {"sink": False})) == (Call.SET_PAUSE, ("u", 0.1, 3),
                                                                              {"sink": False})
    assert request((Call.CLOSE.value, (), {})) == (Call.CLOSE, (), {})


def test_a_refused_call_leaves_the_child_serving(variance_manifest):
    library, facts = harness_library(variance_manifest, BUILD)
    link = ProcessLink(library, facts)
    try:
        with pytest.raises(DeviceError, match=r"simulator process: FramingError: no packet at the front"):
            link.push(b"bad packet")
        link.push(Codec(facts).pack_frame(9, [1, 2]))
        assert link.step(10**5, 1).reason == "target"
    finally:
        link.close()

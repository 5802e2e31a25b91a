"""sfdf.sw.device.uart without a board: open_device(..., backend="serial:...") against a fake board transport.

The fake speaks the board's side of sw.codec (boards/link.py): a break resets it and it says hello (an
empty beats packet for sink 0); it checks every frame packet's CRC and drops a bad one, as the hardware
does; it answers the variance network's n, sum, sum_sq and frame end, computed with numpy; and it
asserts that the host never has more words unanswered than the board buffers.
"""

from __future__ import annotations

import json
import zlib
from collections import deque
from pathlib import Path

import numpy as np
import pytest
from packets import status_packet

from sfdf.boards.facts import read_board_facts
from sfdf.boards.packets import Status
from sfdf.sw.device import DeviceDied, DeviceError, FrameTimeout, ProtocolError, open_device
from sfdf.sw.device.codec import Codec, FramePacket, FramingError, read_packet
from sfdf.sw.device.link import Link

pytestmark = pytest.mark.board

EXAMPLES = Path(__file__).resolve().parents[1] / "examples"
CLK_HZ = 1_000_000      # a slow board clock keeps the cycle budgets of these tests small
BUFFER = 64


@pytest.fixture(scope="module")
def board_dir(tmp_path_factory):
    """The variance network's manifest and board file, as sfdf build writes them (no toolchain run)."""
    from sfdf.boards import BOARDS
    from sfdf.boards.build import build
    from sfdf.gen.analysis import check
    from sfdf.gen.spec import load_spec

    out = tmp_path_factory.mktemp("variance-board")
    network = check(load_spec(EXAMPLES / "variance.toml")).network
    result = build(network, BOARDS["ulx3s-85f"], out, do_build=False, buffer_words=BUFFER)
    assert result["built"] is False
    facts = json.loads((out / "variance.board.json").read_text())
    facts["clk_hz"] = CLK_HZ
    (out / "variance.board.json").write_text(json.dumps(facts))
    return out


class FakeBoard:
    """The board's side of the link (module docstring); ``clock`` is advanced by every read."""

    def __init__(self, manifest: dict, buffer_words: int, *, corrupt=(), noise=b"", silent=False, mute_from=None,
                 wrong_frame_end=None):
        self.codec = Codec(manifest)
        self.buffer_words = buffer_words
        self.corrupt, self.noise, self.silent = set(corrupt), noise, silent
        self.mute_from = float("inf") if mute_from is None else mute_from
        self.wrong_frame_end = wrong_frame_end
        self.time = 0.0
        self.out = bytearray()
        self.rx = bytearray()
        self.frames = 0            # frames answered since the last break
        self.held = deque()        # (words) of frames in the buffer, unanswered
        self.packets_seen = 0
        self.breaks = 0
        self.most_held = 0
        self.closed = False

    def clock(self) -> float:
        return self.time

    # -- Transport --------------------------------------------------------------------------------
    def send_break(self, duration: float) -> None:
        self.breaks += 1
        self.rx.clear()
        self.out.clear()
        self.frames = 0
        self.held.clear()
        if not self.silent:
            self.out += self.noise + status_packet(Status.HELLO)

    def reset_input_buffer(self) -> None:
        self.out.clear()

    def write(self, data: bytes) -> None:
        self.rx += data
        at = 0
        while True:
            try:
                packet, used = read_packet(self.rx, self.codec, at)
            except FramingError:  # a damaged packet: dropped and acknowledged so, then the next "SF"
                self.out += status_packet(Status.DROPPED)
                at = self.rx.find(b"SF", at + 1)
                at = len(self.rx) if at < 0 else at
                continue
            if packet is None:
                break
            assert isinstance(packet, FramePacket)
            self._frame(packet)
            at += used
        del self.rx[:at]

    def read(self, size: int) -> bytes:
        self.time += 0.001
        data, self.out[:] = bytes(self.out[:size]), self.out[size:]
        return data

    def close(self) -> None:
        self.closed = True

    # -- the board --------------------------------------------------------------------------------
    def _frame(self, packet: FramePacket) -> None:
        self.packets_seen += 1
        self.out += status_packet(Status.COMMITTED)
        held = sum(self.held) + packet.count
        self.most_held = max(self.most_held, held)
        assert held <= self.buffer_words, f"the host overran the board's buffer: {held} > {self.buffer_words}"
        pixels = np.array(packet.values(), dtype=np.int64)
        number = self.frames
        self.frames += 1
        if number >= self.mute_from:
            self.held.append(packet.count)  # stays in the buffer: the network never answers it
            return
        n, total, squares = len(pixels), int(pixels.sum()), int((pixels * pixels).sum())
        port = self.codec.sinks[0]
        frame_end = self.wrong_frame_end if self.wrong_frame_end is not None and number == 1 else number
        beats = [(n << 112 | total << 64 | squares, 0, False), (frame_end, 1 << 32, True)]
        for tdata, tuser, tlast in beats:
            packed = self.codec.pack_beat_values(port.number, [(tdata, tuser, tlast)])
            if number in self.corrupt:
                packed = packed[:12] + bytes([packed[12] ^ 1]) + packed[13:]
            self.out += packed


def open_fake(board_dir, **kwargs):
    manifest = json.loads((board_dir / "variance.json").read_text())
    board = FakeBoard(manifest, BUFFER, **kwargs)
    device = open_device(board_dir / "variance.json", backend="serial:fake", transport=board)
    device.link.clock = board.clock
    device.link._start = board.time
    return board, device


def frames_of(count, seed=1, longest=40):
    rng = np.random.default_rng(seed)
    return [rng.integers(0, 65536, size=rng.integers(1, longest + 1)) * (rng.random() < 0.7) for _ in range(count)]


def check_variance(results, frames, ids):
    assert [r.frame_id for r in results] == list(ids)
    for result, pixels in zip(results, frames, strict=True):
        p = np.asarray(pixels, dtype=np.int64)
        assert result.fields == {"n": len(p), "sum": int(p.sum()), "sum_sq": int((p * p).sum())}


def test_board_file_is_written_beside_the_manifest(board_dir):
    facts = read_board_facts(board_dir / "variance.json")
    assert facts["board"] == "ulx3s-85f" and facts["baud"] == 1_000_000 and facts["buffer_words"] == BUFFER
    assert facts["sources"] == {"u": 16}


def test_the_board_link_is_a_link_without_pause_knobs(board_dir):
    _board, device = open_fake(board_dir)
    with device:
        assert isinstance(device.link, Link) and device.link.pid is None
        with pytest.raises(DeviceError, match="a board has no back-pressure or idle patterns"):
            device.link.set_pause("x", 0.5, 1, sink=True)


def test_frames_round_trip_with_a_window(board_dir):
    board, device = open_fake(board_dir)
    frames = frames_of(60)
    with device:
        device.send_frames(zip(range(100, 160), frames))
        check_variance(device.results(), frames, range(100, 160))
    assert board.breaks == 1 and board.closed
    assert board.packets_seen == 60
    assert BUFFER - 40 < board.most_held <= BUFFER  # the window filled, never overflowed


def test_stream_and_receive(board_dir):
    _board, device = open_fake(board_dir)
    frames = frames_of(25, seed=2)
    with device:
        results = list(device.stream(enumerate(frames), window=7))
        check_variance(results, frames, range(25))
        device.send(99, [1, 2, 3])
        assert device.receive().fields == {"n": 3, "sum": 6, "sum_sq": 14}


def test_noise_before_the_hello_and_between_packets_is_skipped(board_dir):
    board, device = open_fake(board_dir, noise=b"\x00SBxx\xffS")
    with device:
        device.send(1, [4])
        board.out += b"garbage S"
        device.send(2, [5, 6])
        check_variance(device.results(), [[4], [5, 6]], [1, 2])
        assert device.link.dropped_bytes == len(b"garbage S")


def test_a_frame_longer_than_the_buffer_is_refused_and_nothing_is_sent(board_dir):
    board, device = open_fake(board_dir)
    with device:
        with pytest.raises(DeviceError, match=rf"frame 5 has {BUFFER + 1} words for u; the board buffers {BUFFER} "):
            device.send(5, [1] * (BUFFER + 1))
        assert device.pending == [] and board.packets_seen == 0
        device.send(6, [7] * BUFFER)
        assert device.results()[0].fields["n"] == BUFFER


def test_no_hello_is_an_error(board_dir):
    manifest = json.loads((board_dir / "variance.json").read_text())
    board = FakeBoard(manifest, BUFFER, silent=True)
    with pytest.raises(DeviceError, match=r"no board answered on the link within 2 s of a break"):
        from sfdf.sw.device.uart import open_board
        open_board(board_dir / "variance.json", "fake", transport=board, clock=board.clock)
    assert board.closed


def test_a_frame_without_an_answer_times_out_naming_it(board_dir):
    _board, device = open_fake(board_dir, mute_from=1)  # the network stops answering after frame 0
    with device:
        device.send_frames([(10, [1]), (11, [2]), (12, [3])])
        with pytest.raises(FrameTimeout, match=r"frame 11 \(frame 1 on variance\) has no result within 5000 cycles") \
                as error:
            device.results(timeout_cycles=5000)
        assert [r.frame_id for r in error.value.results] == [10]
        assert device.pending == [11, 12]


def test_a_damaged_beats_packet_is_dropped_and_reported(board_dir):
    _board, device = open_fake(board_dir, corrupt={1})
    with device:
        device.send_frames([(1, [1]), (2, [2]), (3, [3])])
        with pytest.raises(ProtocolError, match=r"frame 2: sink x sent frame end 2, expected 1") as error:
            device.results()
        assert [r.frame_id for r in error.value.results] == [1]
        assert device.link.dropped_bytes > 0


def test_a_wrong_frame_end_is_a_protocol_error(board_dir):
    _board, device = open_fake(board_dir, wrong_frame_end=7)
    with device:
        device.send_frames([(1, [1]), (2, [2])])
        with pytest.raises(ProtocolError, match=r"frame 2: sink x sent frame end 7, expected 1"):
            device.results()


def test_board_knobs_and_bad_paths(board_dir, tmp_path):
    with pytest.raises(ValueError, match="simulator knobs"):
        open_device(board_dir / "variance.json", backend="serial:fake", backpressure=0.5)
    with pytest.raises(ValueError, match="not a spec"):
        open_device(EXAMPLES / "variance.toml", backend="serial:fake")
    lonely = tmp_path / "variance.json"
    lonely.write_text((board_dir / "variance.json").read_text())
    with pytest.raises(FileNotFoundError, match="variance.board.json does not exist"):
        open_device(lonely, backend="serial:fake")
    with pytest.raises(DeviceError, match="cannot open /nonexistent/tty at 1000000 baud"):
        open_device(board_dir / "variance.json", backend="serial:/nonexistent/tty")


class Damaging:
    """Flips one bit of the ``nth`` frame packet the host writes (line noise on the way to the board)."""

    def __init__(self, board, nth):
        self.board, self.nth, self.writes = board, nth, 0

    def __getattr__(self, name):
        return getattr(self.board, name)

    def write(self, data):
        if self.writes == self.nth:
            data = data[:20] + bytes([data[20] ^ 4]) + data[21:]
        self.writes += 1
        self.board.write(data)


def test_a_frame_the_board_dropped_ends_the_session_naming_it(board_dir):
    manifest = json.loads((board_dir / "variance.json").read_text())
    board = FakeBoard(manifest, BUFFER)
    device = open_device(board_dir / "variance.json", backend="serial:fake", transport=Damaging(board, 1))
    with device:
        device.send(1, [1, 2])
        assert device.results()[0].fields["n"] == 2
        device.send_frames([(2, [3]), (3, [4])])
        with pytest.raises(DeviceDied, match=r"the board dropped frame 2's packet for u \(damaged on the line, or no "
                                             r"room in its buffer\); reopen the device") as error:
            device.results()
        assert error.value.frame_id == 2


def test_crc_is_zlibs():
    assert zlib.crc32(b"123456789") == 0xCBF43926  # the check value of CRC-32/ISO-HDLC, which boards.link uses

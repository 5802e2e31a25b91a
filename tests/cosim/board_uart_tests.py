"""cocotb tests of the board core over its UART (tests/cosim/board_uart.py): cocotbext-uart plays the host
at the board's baud rate, with sw.codec's packets, and every result is checked against numpy.

Run by test_board_uart.py through :func:`sfdf.cosim.runner.build_and_run`; ``SFDF_BOARD_UART_MANIFEST`` names
the manifest (with a ``board_uart`` entry: clock, baud, buffer).
"""

from __future__ import annotations

import json
import logging
import os
import random
import zlib
from pathlib import Path

import cocotb
import numpy as np
from cocotb.clock import Clock
from cocotb.triggers import ClockCycles, Timer, with_timeout
from cocotbext.uart import UartSink, UartSource

from sfdf.sw.datasets import sparse_frames
from sfdf.sw.device.codec import Codec, read_packet

#: Byte 3 of the board's status packets (boards/link.py).
HELLO, COMMITTED, DROPPED = 0, 1, 2
#: LED bits (boards/core.py).
LED_RECEIVING, LED_SENDING, LED_FRAMING, LED_DROPPED, LED_DEADLOCK = 0, 1, 3, 4, 5


class Host:
    """The host side of the link: the UART model, sw.codec, and the packets received so far."""

    def __init__(self, dut):
        self.dut = dut
        facts = json.loads(Path(os.environ["SFDF_BOARD_UART_MANIFEST"]).read_text())
        self.board = facts["board_uart"]
        self.codec = Codec(facts)
        self.bit_ns = 1e9 / self.board["baud"]
        self.source = UartSource(dut.rx, baud=self.board["baud"])
        self.sink = UartSink(dut.tx, baud=self.board["baud"])
        for uart in (self.source, self.sink):
            uart.log.setLevel(logging.WARNING)
        self.received = bytearray()

    async def start(self) -> None:
        period_ns = round(1e9 / self.board["clk_hz"])
        cocotb.start_soon(Clock(self.dut.clk, period_ns, unit="ns").start())
        self.dut.rst.value = 1
        await ClockCycles(self.dut.clk, 4)
        self.dut.rst.value = 0

    async def packet(self, limit_bytes: int = 400):
        """The next packet from the board: ``(status, port, beats)``."""
        async def wait():
            while True:
                packet, used = read_packet(self.received, self.codec) if len(self.received) >= 2 else (None, 0)
                if packet is not None:
                    raw = bytes(self.received[:used])
                    del self.received[:used]
                    return raw[3], raw[4], packet
                self.received += await self.sink.read()
        return await with_timeout(wait(), limit_bytes * 10 * self.bit_ns, "ns")

    async def hello(self) -> None:
        status, port, beats = await self.packet()
        assert (status, port, beats) == (HELLO, 0, []), (status, port, beats)

    async def line_break(self, bits: int = 30) -> None:
        """Hold the line low for ``bits`` bit times (the host's reset)."""
        await self.source.wait()
        self.dut.rx.value = 0
        await Timer(round(bits * self.bit_ns), "ns")
        self.dut.rx.value = 1
        await Timer(round(2 * self.bit_ns), "ns")

    async def results(self, count: int) -> list[tuple[int, list]]:
        """``count`` frames' answers: ``(acknowledgement, beats)`` in order, the beats ending with the frame end."""
        answers, beats = [], []
        acks = []
        while len(answers) < count:
            status, _, packet = await self.packet()
            if not packet:
                assert status in (COMMITTED, DROPPED), f"status {status} in the middle of a session"
                acks.append(status)
                continue
            (beat,) = packet
            beats.append(beat)
            if beat.kind == "message":
                answers.append(beats)
                beats = []
        return acks, answers


def uart_frames(rng: random.Random, count: int, longest: int) -> list[list[int]]:
    """Frames of 16-bit pixels, 70% zeros, with an all-zero frame and a one-pixel frame among them."""
    frames = sparse_frames(count, 0.7, (1, longest), rng)
    frames[1] = [0] * 5
    frames[2] = [65535]
    return frames


def check_variance(answers: list, frames: list[list[int]], numbers: list[int]) -> None:
    assert len(answers) == len(frames)
    for beats, pixels, number in zip(answers, frames, numbers, strict=True):
        data, end = beats
        p = np.asarray(pixels, dtype=np.int64)
        expected = {"n": len(p), "sum": int(p.sum()), "sum_sq": int((p * p).sum())}
        assert data.kind == "data" and dict(data.fields) == expected, (dict(data.fields), expected, pixels)
        assert end.kind == "message" and end.frame == number, (end, number)


@cocotb.test()
async def variance_frames_through_the_uart(dut):
    """40 sparse frames sent back to back as the window allows; every n, sum, sum_sq checked."""
    host = Host(dut)
    await host.start()
    await host.hello()
    frames = uart_frames(random.Random(cocotb.RANDOM_SEED), 40, 24)
    window, sent, outstanding = host.board["buffer_words"], 0, []
    answers, acks = [], []
    while len(answers) < len(frames):
        while sent < len(frames) and sum(outstanding) + len(frames[sent]) <= window:
            await host.source.write(host.codec.pack_frame(1000 + sent, frames[sent]))
            outstanding.append(len(frames[sent]))
            sent += 1
        more_acks, got = await host.results(1)
        acks += more_acks
        answers += got
        outstanding.pop(0)
    assert acks == [COMMITTED] * len(frames), acks
    check_variance(answers, frames, list(range(len(frames))))
    leds = int(dut.leds.value)
    assert leds >> LED_RECEIVING & 1 and leds >> LED_SENDING & 1, f"leds {leds:08b}"
    assert not leds >> LED_FRAMING & 1 and not leds >> LED_DROPPED & 1 and not leds >> LED_DEADLOCK & 1


@cocotb.test()
async def damaged_packet_is_dropped_and_acknowledged(dut):
    """Frame 1 arrives with a flipped pixel bit: acknowledged as dropped, never reaches the network; the
    frames around it are answered, and the board numbers the frames it took (frame 2 ends as 1)."""
    host = Host(dut)
    await host.start()
    await host.hello()
    frames = [[3, 0, 4], [5, 6], [7, 0, 0, 8]]
    damaged = bytearray(host.codec.pack_frame(1, frames[1]))
    damaged[22] ^= 0x40
    for packet in (host.codec.pack_frame(0, frames[0]), bytes(damaged), host.codec.pack_frame(2, frames[2])):
        await host.source.write(packet)
    acks, answers = await host.results(2)
    while len(acks) < 3:
        status, _, beats = await host.packet()
        assert beats == []
        acks.append(status)
    assert acks == [COMMITTED, DROPPED, COMMITTED], acks
    check_variance(answers, [frames[0], frames[2]], [0, 1])
    assert int(dut.leds.value) >> LED_DROPPED & 1


@cocotb.test()
async def overflow_and_bad_headers_are_dropped(dut):
    """A frame longer than the buffer (cut short: its header is enough), noise, and a wrong version: each bad
    packet is acknowledged as dropped at its header, and the good ones are answered."""
    host = Host(dut)
    await host.start()
    await host.hello()
    too_long = host.codec.pack_frame(9, [1] * (host.board["buffer_words"] + 1))
    wrong = bytearray(host.codec.pack_frame(8, [1]))
    wrong[2] = 7
    wrong[-4:] = zlib.crc32(bytes(wrong[:-4])).to_bytes(4, "little")
    good = [[10, 20], [30]]
    for packet in (too_long[:40], b"\x00noise S", bytes(wrong), host.codec.pack_frame(0, good[0]),
                   host.codec.pack_frame(1, good[1])):
        await host.source.write(packet)
    acks, answers = await host.results(2)
    check_variance(answers, good, [0, 1])
    assert acks == [DROPPED, DROPPED, COMMITTED, COMMITTED], acks


@cocotb.test()
async def break_resets_the_network_and_the_numbering(dut):
    """A break in the middle of a session: the board says hello again and numbers frames from 0."""
    host = Host(dut)
    await host.start()
    await host.hello()
    await host.source.write(host.codec.pack_frame(0, [1, 2, 3]))
    _, answers = await host.results(1)
    check_variance(answers, [[1, 2, 3]], [0])
    host.received.clear()
    host.sink.clear()
    await host.line_break()  # the board says hello while the line is still low: the bytes wait in the sink
    await host.hello()
    await host.source.write(host.codec.pack_frame(5, [4]))
    _, answers = await host.results(1)
    check_variance(answers, [[4]], [0])
    assert not int(dut.leds.value) >> LED_FRAMING & 1  # a break is not a framing error

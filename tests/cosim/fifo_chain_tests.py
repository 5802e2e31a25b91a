"""cocotb tests of the FIFO chain (tests/cosim/fifo_chain.py): every word scoreboarded with and without
back-pressure on either side, a deadlock forced by a sink that is never ready, and a mismatch the
scoreboard must report. Run by test_fifo_chain.py through :func:`sfdf.cosim.runner.build_and_run`.
"""

from __future__ import annotations

import itertools
import random

import cocotb
from cocotb.clock import Clock
from cocotb.triggers import ClockCycles, with_timeout
from fifo_chain import DEPTHS

from sfdf.cosim.axis import AxisBus, AxisSink, AxisSource
from sfdf.cosim.scoreboard import Scoreboard, Token
from sfdf.cosim.watchdog import DeadlockError, DeadlockWatchdog

#: Frames per stream test, and their longest length in words.
FRAMES, MAX_FRAME = 200, 16
#: Pause pattern of the back-pressured runs: busy two cycles in three.
PAUSE = (1, 1, 0)
#: Cycles without token movement that mean deadlock: far above the longest pause (2 cycles).
BOUND = 64
#: Simulated-time limit of a test, in microseconds (a 10 ns clock).
LIMIT_US = 400


class Bench:
    """Clock, reset, one source, one sink, a scoreboard and a watchdog around the FIFO chain."""

    def __init__(self, dut):
        self.dut = dut
        self.source = AxisSource(AxisBus.from_prefix(dut, "s_axis_in"), dut.clk, dut.rst)
        self.sink = AxisSink(AxisBus.from_prefix(dut, "m_axis_out"), dut.clk, dut.rst)
        self.scoreboard = Scoreboard()
        self.watchdog = DeadlockWatchdog(dut.clk, self.levels, BOUND, busy=lambda: not self.scoreboard.done())
        self.words = 0

    def levels(self) -> dict[str, int]:
        """Handshake counters and FIFO levels: what the watchdog watches and prints."""
        return {
            "s_axis_in beats": self.source.count,
            "fifo0.level": int(self.dut.fifo0.level.value),
            "fifo1.level": int(self.dut.fifo1.level.value),
            "m_axis_out beats": self.sink.count,
        }

    async def start(self) -> None:
        """Start the clock and hold reset for three cycles."""
        cocotb.start_soon(Clock(self.dut.clk, 10, unit="ns").start())
        self.dut.rst.value = 1
        await ClockCycles(self.dut.clk, 3)
        self.dut.rst.value = 0

    def send(self, frame: list[int], expected: list[int] | None = None) -> None:
        """Queue ``frame``, expect it back with indices counting on (``expected``: other payloads)."""
        payloads = frame if expected is None else expected
        tokens = [Token(self.words + n + 1, word, n == len(frame) - 1) for n, word in enumerate(payloads)]
        self.words += len(frame)
        self.source.send_nowait(frame)
        self.scoreboard.expect("m_axis_out", tokens)

    async def drain(self) -> None:
        """Wait for every expected token, then a few cycles more so an extra one would show."""
        await with_timeout(self.scoreboard.wait(), LIMIT_US, "us")
        await ClockCycles(self.dut.clk, 2 * sum(DEPTHS) + 4)
        self.scoreboard.finish()


def random_frames(rng: random.Random, count: int, width: int) -> list[list[int]]:
    """``count`` frames of 1 to :data:`MAX_FRAME` random ``width``-bit words."""
    return [[rng.getrandbits(width) for _ in range(rng.randint(1, MAX_FRAME))] for _ in range(count)]


@cocotb.test()
@cocotb.parametrize(source_pause=[False, True], sink_pause=[False, True])
async def every_word_in_order(dut, source_pause: bool, sink_pause: bool) -> None:
    """200 random frames through the chain; every word checked for index, payload and tlast."""
    bench = Bench(dut)
    if source_pause:
        bench.source.set_pause_generator(itertools.cycle(PAUSE))
    if sink_pause:
        bench.sink.set_pause_generator(itertools.cycle(PAUSE))
    await bench.start()
    bench.scoreboard.attach("m_axis_out", bench.sink)
    bench.watchdog.start()
    for frame in random_frames(random.Random(cocotb.RANDOM_SEED), FRAMES, len(dut.s_axis_in_tdata)):
        bench.send(frame)
    await bench.drain()
    assert bench.source.idle(), f"source still holds frames after {bench.source.count} beats"
    assert bench.sink.count == bench.words, f"sink saw {bench.sink.count} beats, sent {bench.words}"


@cocotb.test()
async def deadlock_when_sink_never_ready(dut) -> None:
    """tready held low: both FIFOs fill, tokens stop, and the watchdog reports it with the levels."""
    bench = Bench(dut)
    bench.sink.set_pause_generator(itertools.repeat(1))
    await bench.start()
    for frame in random_frames(random.Random(cocotb.RANDOM_SEED), 4, len(dut.s_axis_in_tdata)):
        bench.send(frame + [0] * MAX_FRAME)
    try:
        await with_timeout(bench.watchdog.run(), LIMIT_US, "us")
    except DeadlockError as error:
        assert f"deadlock after {BOUND} cycles without token movement" in str(error), str(error)
        assert "  fifo0.level       4\n" in str(error), str(error)
        assert error.levels == {"s_axis_in beats": sum(DEPTHS), "fifo0.level": DEPTHS[0],
                                "fifo1.level": DEPTHS[1], "m_axis_out beats": 0}, error.levels
    else:
        raise AssertionError("the watchdog returned without reporting a deadlock")


@cocotb.test(skip=True)  # fails on purpose: test_fifo_chain.py runs it by name and checks the report
async def scoreboard_reports_mismatch(dut) -> None:
    """The fifth word is expected one higher than sent: the scoreboard must fail on exactly that token."""
    bench = Bench(dut)
    await bench.start()
    bench.scoreboard.attach("m_axis_out", bench.sink)
    frame = [10, 20, 30, 40, 50, 60]
    bench.send(frame, expected=[10, 20, 30, 40, 51, 60])
    await bench.drain()


@cocotb.test()
async def driver_errors_show_the_numbers(dut) -> None:
    """A missing signal, a word too wide and an empty frame are refused with the values involved."""
    try:
        AxisBus.from_prefix(dut, "s_axis_nope")
    except AttributeError as error:
        assert str(error) == ("fifo_chain has no s_axis_nope_tdata, s_axis_nope_tvalid, s_axis_nope_tready "
                              "(signals with prefix 's_axis_nope': none)"), str(error)
    else:
        raise AssertionError("from_prefix accepted a missing bus")
    source = AxisSource(AxisBus.from_prefix(dut, "s_axis_in"), dut.clk, dut.rst)
    for frame, message in [([1, 70000], "s_axis_in: tdata value 70000 (word 1) does not fit 16 bits (0..65535)"),
                           ([], "s_axis_in: a frame needs at least one word, not 0")]:
        try:
            source.send_nowait(frame)
        except ValueError as error:
            assert str(error) == message, str(error)
        else:
            raise AssertionError(f"send_nowait accepted {frame}")
    assert source.idle()

"""cocotb tests of the FIFO chain (tests/cosim/fifo_chain.py): every word scoreboarded with and without
back-pressure on either side, a deadlock forced by a sink that is never ready, and a mismatch the
scoreboard must report. The ports are driven by cocotbext-axi, as in :mod:`sfdf.cosim.network_tests`.
Run by test_fifo_chain.py through :func:`sfdf.cosim.runner.build_and_run`.
"""

from __future__ import annotations

import itertools
import random

import cocotb
from cocotb.clock import Clock
from cocotb.triggers import ClockCycles, with_timeout
from cocotbext.axi import AxiStreamBus, AxiStreamSink, AxiStreamSource
from fifo_chain import DEPTHS

from sfdf.cosim.network_tests import bind
from sfdf.cosim.scoreboard import Scoreboard, Token
from sfdf.cosim.watchdog import DeadlockError, DeadlockWatchdog, HandshakeCounter
from sfdf.hdl.manifest import Field, Port

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
        self.source = AxiStreamSource(AxiStreamBus.from_prefix(dut, "s_axis_in"), dut.clk, dut.rst, byte_lanes=1)
        self.sink = AxiStreamSink(AxiStreamBus.from_prefix(dut, "m_axis_out"), dut.clk, dut.rst, byte_lanes=1)
        self.beats = HandshakeCounter(dut.clk, {"s_axis_in": self.source.bus, "m_axis_out": self.sink.bus})
        self.scoreboard = Scoreboard()
        self.watchdog = DeadlockWatchdog(dut.clk, self.levels, BOUND, busy=lambda: not self.scoreboard.done())
        self.words = 0

    def levels(self) -> dict[str, int]:
        """Handshake counters and FIFO levels: what the watchdog watches and prints."""
        return {
            "s_axis_in beats": self.beats["s_axis_in"],
            "fifo0.level": int(self.dut.fifo0.level.value),
            "fifo1.level": int(self.dut.fifo1.level.value),
            "m_axis_out beats": self.beats["m_axis_out"],
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
    beats = bench.beats.counts
    assert bench.source.idle(), f"source still holds frames after {beats['s_axis_in']} beats"
    assert beats == {"s_axis_in": bench.words, "m_axis_out": bench.words}, f"{beats}, sent {bench.words}"


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


def _port(name: str, direction: str, tuser_width: int) -> Port:
    tuser = (Field("index", 0, tuser_width),) if tuser_width else ()
    return Port(name, "n", "fifo", direction, 0, 16, tuser_width, True, (), tuser)


@cocotb.test()
async def driver_errors_show_the_numbers(dut) -> None:
    """A port the top lacks, or whose ``tuser`` it lacks, is refused with the missing signals named
    (cocotbext-axi's bus would bind without them)."""
    for port, message in [
        (_port("s_axis_nope", "in", 0),
         ("fifo_chain has no s_axis_nope_tdata, s_axis_nope_tvalid, s_axis_nope_tready, s_axis_nope_tlast "
          "(manifest port s_axis_nope)")),
        (_port("s_axis_in", "in", 1), "fifo_chain has no s_axis_in_tuser (manifest port s_axis_in)"),
    ]:
        try:
            bind(dut, port, dut.clk, dut.rst)
        except AttributeError as error:
            assert str(error) == message, str(error)
        else:
            raise AssertionError(f"bind accepted {port.name} with tuser_width {port.tuser_width}")
    sink = bind(dut, _port("m_axis_out", "out", len(dut.m_axis_out_tuser)), dut.clk, dut.rst)
    assert isinstance(sink, AxiStreamSink) and (sink.byte_lanes, sink.byte_size) == (1, len(dut.m_axis_out_tdata))

"""The board top: the board's oscillator (through a PLL when the design runs faster), reset, UART pins
and LEDs around a :class:`sfdf.boards.core.BoardCore`.

A :class:`Board` (one per file: :mod:`sfdf.boards.ulx3s`, :mod:`sfdf.boards.icebreaker`) says which amaranth-boards
platform to build for, how to make a clock of a given frequency, and how its LEDs show the core's 8.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

from amaranth import Cat, ClockDomain, Elaboratable, Module, Signal
from amaranth.lib.cdc import ResetSynchronizer

from .core import DEFAULT_BAUD, DEFAULT_BUFFER_WORDS, BoardCore

__all__ = ["Board", "BoardTop"]


@dataclass(frozen=True)
class Board:
    """One board a network can be built for.

    Members
    -------
    name : str
        As ``sfdf build --board`` takes it.
    platform : type
        The amaranth-boards platform class.
    family : {"ecp5", "ice40"}
    clock_hz : float
        Default design clock (``sfdf build --clock``): what the shipped examples meet (docs/fpga.md).
    fmax_probe_hz : float
        The constraint bench/fpga.py builds with to find Fmax (above what any design reaches).
    pll : callable
        ``pll(m, platform, clk_hz, clk) -> locked``: drives the signal ``clk`` at ``clk_hz``.
    leds : callable
        ``leds(m, platform, status)``: shows the 8 status bits (:data:`sfdf.boards.core.LED_MEANINGS`).
    programmer : str
        The tool ``--program`` runs (``OPENFPGALOADER`` or ``ICEPROG`` overrides it).
    buffer_words : int
        Default words buffered per source (the longest frame): what the block RAM affords.
    """

    name: str
    platform: type
    family: str
    clock_hz: float
    fmax_probe_hz: float
    pll: Callable
    leds: Callable
    programmer: str
    buffer_words: int = DEFAULT_BUFFER_WORDS
    description: str = ""

    @property
    def device(self) -> str:
        return self.platform.device

    @property
    def oscillator_hz(self) -> float:
        return self.platform().default_clk_frequency


class BoardTop(Elaboratable):
    """A network on ``board`` at ``clk_hz`` with the UART host link (:class:`sfdf.boards.core.BoardCore`).

    Parameters
    ----------
    board : Board
    network : wiring.Component
        The network top (:class:`sfdf.hdl.top.NetworkTop` or a baseline with the same ports).
    index_width : int
        Bits of the sinks' index field.
    clk_hz : float
        Design clock; a PLL makes it unless it is the oscillator's.
    baud, buffer_words, watchdog_s
        As for :class:`sfdf.boards.core.BoardCore`.
    """

    def __init__(self, board: Board, network, *, index_width: int, clk_hz: float, baud: int = DEFAULT_BAUD,
                 buffer_words: int = DEFAULT_BUFFER_WORDS, watchdog_s: float = 0.5):
        self.board = board
        self.clk_hz = clk_hz
        self.core = BoardCore(network, index_width=index_width, clk_hz=clk_hz, baud=baud,
                              buffer_words=buffer_words, watchdog_s=watchdog_s)

    def elaborate(self, platform):
        m = Module()
        m.domains.sync = sync = ClockDomain("sync")
        locked = self.board.pll(m, platform, self.clk_hz, sync.clk)
        m.submodules.reset_sync = ResetSynchronizer(~locked, domain="sync")
        platform.add_clock_constraint(sync.clk, self.clk_hz)

        m.submodules.core = core = self.core
        uart = platform.request("uart", 0)
        m.d.comb += [core.rx.eq(uart.rx.i), uart.tx.o.eq(core.tx)]
        status = Signal(8)
        m.d.comb += status.eq(Cat(core.leds[:7], locked))
        self.board.leds(m, platform, status)
        return m

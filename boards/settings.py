"""What ``sfdf build`` is asked for, checked before any tool runs: the board, its clock, the UART rate
and the frame buffer.

The clock is the board's oscillator or what its PLL makes of the requested frequency (:mod:`.pll`);
the UART must reach its baud rate at that clock within 2% (:func:`.uart.uart_divisor`); each source
buffers a power of two of words, the longest frame the board takes (:mod:`.link`).
"""

from __future__ import annotations

from dataclasses import dataclass

from sfdf.gen.errors import UserError

from . import BOARDS
from .pll import ecp5_pll, ice40_pll
from .top import Board
from .uart import uart_divisor

__all__ = ["BuildSettings", "build_settings"]


@dataclass(frozen=True)
class BuildSettings:
    """A board build's settings, each one checked.

    Members
    -------
    board : Board
    clock_hz : float
        The design clock the board makes (the oscillator's, or its PLL's nearest to the request).
    baud : int
        UART bits per second.
    buffer_words : int
        Words buffered per source.
    """

    board: Board
    clock_hz: float
    baud: int
    buffer_words: int


def build_settings(spec: str, board: str, clock_mhz: float | str | None, baud: int,
                   buffer_words: int | None) -> BuildSettings:
    """Check the options of ``sfdf build SPEC --board B [--clock MHZ] [--baud N] [--buffer-words N]``.

    ``None`` takes the board's default clock or buffer; ``clock_mhz = "max"`` the board's Fmax probe target
    (:attr:`sfdf.boards.top.Board.fmax_probe_hz`: placed for it, nextpnr reports the design's own Fmax).

    Raises
    ------
    UserError
        Naming ``spec`` and the option: an unknown board, a clock no PLL setting makes, a baud rate the
        UART cannot reach at that clock, a buffer that is not a power of two of at least 2 words.
    """
    found = BOARDS.get(board)
    if found is None:
        raise UserError(spec, "--board", f"{board!r} is not a board", f"use one of {', '.join(BOARDS)}")
    clock_hz = found.clock_hz if clock_mhz is None else found.fmax_probe_hz if clock_mhz == "max" else clock_mhz * 1e6
    if clock_hz != found.oscillator_hz:
        try:
            clock_hz = (ecp5_pll if found.family == "ecp5" else ice40_pll)(found.oscillator_hz, clock_hz).f_out
        except ValueError as error:
            raise UserError(spec, "--clock", str(error), "choose another frequency") from None
    try:
        uart_divisor(clock_hz, baud)
    except ValueError as error:
        raise UserError(spec, "--baud", str(error), "choose another --baud or --clock") from None
    words = buffer_words or found.buffer_words
    if words < 2 or words & (words - 1):
        raise UserError(spec, "--buffer-words", f"{words} is not a power of two >= 2", "use 256, 1024, 2048, ...")
    return BuildSettings(found, clock_hz, baud, words)

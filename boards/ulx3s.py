"""ULX3S (Lattice ECP5, LFE5U-12F/25F/45F/85F, CABGA381): 25 MHz oscillator, FT231X UART, 8 LEDs.

The design clock comes from an ``EHXPLLL`` (:mod:`sfdf.boards.pll`) unless it is the oscillator's 25 MHz;
the LEDs show the core's 8 status bits in order (:data:`sfdf.boards.core.LED_MEANINGS`, LED 0 = bit 0).
"""

from amaranth import Const, Signal
from amaranth_boards.ulx3s import (
    ULX3S_12F_Platform,
    ULX3S_25F_Platform,
    ULX3S_45F_Platform,
    ULX3S_85F_Platform,
)

from .pll import ecp5_pll
from .top import Board

__all__ = ["ULX3S_12F", "ULX3S_25F", "ULX3S_45F", "ULX3S_85F"]


def _clock(m, platform, clk_hz, clk):
    oscillator = platform.request(platform.default_clk, 0)
    if clk_hz == platform.default_clk_frequency:
        m.d.comb += clk.eq(oscillator.i)
        return Const(1)
    locked = Signal()
    m.submodules.pll = ecp5_pll(platform.default_clk_frequency, clk_hz).instance(oscillator.i, clk, locked)
    return locked


def _leds(m, platform, status):
    for n in range(8):
        m.d.comb += platform.request("led", n).o.eq(status[n])


def _variant(size: str, platform: type, clock_hz: float) -> Board:
    return Board(name=f"ulx3s-{size.lower()}", platform=platform, family="ecp5", clock_hz=clock_hz,
                 fmax_probe_hz=250e6, pll=_clock, leds=_leds, programmer="openFPGALoader",
                 description=f"ULX3S {size} ({platform.device}, 25 MHz oscillator, FT231X UART, 8 LEDs)")


ULX3S_12F = _variant("12F", ULX3S_12F_Platform, 25e6)
ULX3S_25F = _variant("25F", ULX3S_25F_Platform, 25e6)
ULX3S_45F = _variant("45F", ULX3S_45F_Platform, 25e6)
ULX3S_85F = _variant("85F", ULX3S_85F_Platform, 25e6)

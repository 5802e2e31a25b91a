"""iCEBreaker (Lattice iCE40UP5K, SG48): 12 MHz oscillator, FT2232H UART, a red and a green LED.

The design clock comes from an ``SB_PLL40_PAD`` on the oscillator pin (:mod:`sfdf.boards.pll`) unless it is
the oscillator's 12 MHz. Each source buffers 256 words (the UP5K has 30 block RAMs of 4 kbit). Green: the link is receiving or sending; red: a framing error, a dropped
packet or a deadlock (:data:`sfdf.boards.core.LED_MEANINGS` bits 3-5) since the last reset.
"""

from amaranth import Const, Signal
from amaranth_boards.icebreaker import ICEBreakerPlatform

from .pll import ice40_pll
from .top import Board

__all__ = ["ICEBREAKER"]


def _clock(m, platform, clk_hz, clk):
    if clk_hz == platform.default_clk_frequency:
        m.d.comb += clk.eq(platform.request(platform.default_clk, 0).i)
        return Const(1)
    pad = platform.request(platform.default_clk, 0, dir="-")
    locked = Signal()
    m.submodules.pll = ice40_pll(platform.default_clk_frequency, clk_hz).instance(pad.io, clk, locked)
    return locked


def _leds(m, platform, status):
    m.d.comb += [platform.request("led", 0).o.eq(status[3:6].any()),
                 platform.request("led", 1).o.eq(status[0:2].any())]


ICEBREAKER = Board(name="icebreaker", platform=ICEBreakerPlatform, family="ice40", clock_hz=12e6,
                   fmax_probe_hz=80e6, pll=_clock, leds=_leds, programmer="iceprog", buffer_words=256,
                   description="iCEBreaker (iCE40UP5K, 12 MHz oscillator, FT2232H UART, 2 LEDs)")

"""PLL settings for ECP5 (``EHXPLLL``) and iCE40 (``SB_PLL40_PAD``), computed as ``ecppll``/``icepll`` do.

Pure functions (frequencies in, dividers out), so a board top elaborates without any tool installed;
tests/test_boards.py compares them with the two tools where they are present.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

from amaranth import Instance

__all__ = ["ECP5PLL", "ICE40PLL", "ecp5_pll", "ice40_pll"]

# ECP5 sysCLOCK limits (Lattice TN1263; ecppll uses the same).
_ECP5_PFD = (3.125e6, 400e6)
_ECP5_VCO = (400e6, 800e6)
_ECP5_OUT = (3.125e6, 400e6)
# iCE40 PLL limits with SIMPLE feedback (iCE40 sysCLOCK PLL design guide; icepll uses the same).
_ICE40_PFD = (10e6, 133e6)
_ICE40_VCO = (533e6, 1066e6)
_ICE40_OUT = (16e6, 275e6)


@dataclass(frozen=True)
class ECP5PLL:
    """Dividers of an ``EHXPLLL`` with ``CLKOP`` fed back: ``f_out = f_in / clki_div * clkfb_div``."""

    f_in: float
    f_out: float
    clki_div: int
    clkfb_div: int
    clkop_div: int

    @property
    def f_vco(self) -> float:
        return self.f_out * self.clkop_div

    def instance(self, clk_in, clk_out, locked) -> Instance:
        """The ``EHXPLLL`` cell driving ``clk_out`` from ``clk_in``, with ``locked``."""
        return Instance(
            "EHXPLLL",
            a_FREQUENCY_PIN_CLKI=f"{self.f_in / 1e6:g}", a_FREQUENCY_PIN_CLKOP=f"{self.f_out / 1e6:g}",
            a_ICP_CURRENT="12", a_LPF_RESISTOR="8", a_MFG_ENABLE_FILTEROPAMP="1", a_MFG_GMCREF_SEL="2",
            p_PLLRST_ENA="DISABLED", p_INTFB_WAKE="DISABLED", p_STDBY_ENABLE="DISABLED",
            p_DPHASE_SOURCE="DISABLED", p_OUTDIVIDER_MUXA="DIVA", p_OUTDIVIDER_MUXB="DIVB",
            p_OUTDIVIDER_MUXC="DIVC", p_OUTDIVIDER_MUXD="DIVD",
            p_CLKI_DIV=self.clki_div, p_CLKOP_ENABLE="ENABLED", p_CLKOP_DIV=self.clkop_div,
            p_CLKOP_CPHASE=self.clkop_div - 1, p_CLKOP_FPHASE=0, p_FEEDBK_PATH="CLKOP",
            p_CLKFB_DIV=self.clkfb_div,
            i_RST=0, i_STDBY=0, i_CLKI=clk_in, i_CLKFB=clk_out, o_CLKOP=clk_out,
            i_PHASESEL0=0, i_PHASESEL1=0, i_PHASEDIR=1, i_PHASESTEP=1, i_PHASELOADREG=1, i_PLLWAKESYNC=0,
            i_ENCLKOP=0, o_LOCK=locked)


@dataclass(frozen=True)
class ICE40PLL:
    """Dividers of an ``SB_PLL40_PAD`` with SIMPLE feedback:
    ``f_out = f_in * (divf + 1) / ((divr + 1) * 2 ** divq)``."""

    f_in: float
    f_out: float
    divr: int
    divf: int
    divq: int

    @property
    def filter_range(self) -> int:
        pfd = self.f_in / (self.divr + 1)
        for bound, value in ((17e6, 1), (26e6, 2), (44e6, 3), (66e6, 4), (101e6, 5)):
            if pfd < bound:
                return value
        return 6

    def instance(self, pad, clk_out, locked) -> Instance:
        """The ``SB_PLL40_PAD`` on the clock pin ``pad`` (a raw port) driving the global ``clk_out``."""
        return Instance(
            "SB_PLL40_PAD",
            p_FEEDBACK_PATH="SIMPLE", p_DIVR=self.divr, p_DIVF=self.divf, p_DIVQ=self.divq,
            p_FILTER_RANGE=self.filter_range,
            i_PACKAGEPIN=pad, i_RESETB=1, i_BYPASS=0, o_PLLOUTGLOBAL=clk_out, o_LOCK=locked)


def _choose(candidates, f_out):
    best = None
    for error, rank, settings in candidates:
        if best is None or (abs(error), rank) < (abs(best[0]), best[1]):
            best = (error, rank, settings)
    if best is None:
        raise ValueError(f"no PLL setting reaches {f_out / 1e6:g} MHz")
    return best[2]


def _check_reach(family: str, f_in: float, f_out: float, out: float, limits: tuple[float, float]) -> None:
    """A request outside the PLL's output range says so; one it cannot make within 5% names the nearest."""
    if not limits[0] <= f_out <= limits[1]:
        raise ValueError(f"{family} PLL: {f_out / 1e6:g} MHz is outside its output range "
                         f"({limits[0] / 1e6:g}-{limits[1] / 1e6:g} MHz)")
    if abs(out - f_out) > 0.05 * f_out or not limits[0] <= out <= limits[1]:
        raise ValueError(f"{family} PLL: {f_out / 1e6:g} MHz from {f_in / 1e6:g} MHz is out of reach "
                         f"(nearest {out / 1e6:g} MHz)")


def ecp5_pll(f_in: float, f_out: float) -> ECP5PLL:
    """The ``EHXPLLL`` dividers closest to ``f_out`` (VCO nearest 600 MHz among equals, as ``ecppll``).

    Raises
    ------
    ValueError
        No setting within the sysCLOCK limits (for example ``f_out`` above 400 MHz).
    """
    def candidates():
        for clki in range(1, 129):
            pfd = f_in / clki
            if not _ECP5_PFD[0] <= pfd <= _ECP5_PFD[1]:
                continue
            for clkfb in range(1, 81):
                out = pfd * clkfb
                dividers = [d for d in (math.floor(600e6 / out), math.ceil(600e6 / out))
                            if 1 <= d <= 128 and _ECP5_VCO[0] <= out * d <= _ECP5_VCO[1]]
                for clkop in dividers:
                    yield out - f_out, abs(out * clkop - 600e6), (clki, clkfb, clkop, out)
    clki, clkfb, clkop, out = _choose(candidates(), f_out)
    _check_reach("ECP5", f_in, f_out, out, _ECP5_OUT)
    return ECP5PLL(f_in, out, clki, clkfb, clkop)


def ice40_pll(f_in: float, f_out: float) -> ICE40PLL:
    """The ``SB_PLL40`` dividers closest to ``f_out`` (the first found among equals, as ``icepll``).

    Raises
    ------
    ValueError
        No setting within 5% of ``f_out`` (the iCE40 PLL makes 16-275 MHz).
    """
    def candidates():
        order = 0
        for divr in range(16):
            pfd = f_in / (divr + 1)
            if not _ICE40_PFD[0] <= pfd <= _ICE40_PFD[1]:
                continue
            for divf in range(128):
                vco = pfd * (divf + 1)
                if not _ICE40_VCO[0] <= vco <= _ICE40_VCO[1]:
                    continue
                for divq in range(1, 7):
                    order += 1
                    yield vco / 2 ** divq - f_out, order, (divr, divf, divq, vco / 2 ** divq)
    divr, divf, divq, out = _choose(candidates(), f_out)
    _check_reach("iCE40", f_in, f_out, out, _ICE40_OUT)
    return ICE40PLL(f_in, out, divr, divf, divq)

"""A multiplier pipelined in the FPGA's own DSP registers.

:class:`RegisteredMultiplier` registers its operands and its product: ``o_product`` is
``i_a * i_b`` of two cycles before, every cycle. Where the platform has the DSP block for it
(:attr:`sfdf.hdl.traits.PlatformTraits.dsp_multiplier`, ECP5) it is one MULT18X18D with its input
registers and output register (``REG_INPUTA_CLK``, ``REG_INPUTB_CLK``, ``REG_OUTPUT_CLK``), so the multiply
runs from a register to a register inside the DSP block and no fabric routing is on its path: Yosys maps a
``*`` to a MULT18X18D without registers (it packs no flip-flops into ECP5 DSPs), which leaves routing on
each side of the multiply. Elsewhere it is two rows of flip-flops around ``*``, the same cycle for cycle.
The registers are not reset, in the DSP block as in the fabric: the product of the cycle after a reset is
that of whatever the inputs held, as for any pipelined kernel (:mod:`sfdf.hdl.kernels`).
"""

from dataclasses import dataclass

from amaranth import ClockSignal, Const, Instance, Module, Signal
from amaranth.lib import wiring
from amaranth.lib.wiring import In, Out

from .traits import PlatformTraits

__all__ = ["MULT18X18D_WIDTH", "FamilyOnly", "RegisteredMultiplier"]

#: Operand bits of an ECP5 MULT18X18D.
MULT18X18D_WIDTH = 18


@dataclass(frozen=True)
class FamilyOnly:
    """A stand-in platform for elaborating a design outside a build: its FPGA family and no pins
    (:meth:`sfdf.hdl.traits.PlatformTraits.of` reads it as a board's platform)."""

    family: str


class RegisteredMultiplier(wiring.Component):
    """Unsigned ``i_a * i_b`` with registered operands and product: latency 2 (module docstring).

    Parameters
    ----------
    a_width, b_width : int
        Operand bits (at most 18 each for the ECP5 DSP block; wider operands use fabric registers and
        Yosys's multiplier).

    Members
    -------
    i_a : In(a_width)
    i_b : In(b_width)
    o_product : Out(a_width + b_width)
    """

    latency = 2

    def __init__(self, a_width: int, b_width: int):
        self.a_width, self.b_width = a_width, b_width
        super().__init__({"i_a": In(a_width), "i_b": In(b_width), "o_product": Out(a_width + b_width)})

    def elaborate(self, platform):
        m = Module()
        if PlatformTraits.of(platform).dsp_multiplier and max(self.a_width, self.b_width) <= MULT18X18D_WIDTH:
            p = Signal(2 * MULT18X18D_WIDTH)
            ports = {"i_CLK0": ClockSignal(), "i_CE0": 1, "i_RST0": 0, "i_SIGNEDA": 0, "i_SIGNEDB": 0,
                     "i_SOURCEA": 0, "i_SOURCEB": 0}
            for k in (1, 2, 3):
                ports[f"i_CLK{k}"], ports[f"i_CE{k}"], ports[f"i_RST{k}"] = 0, 0, 0
            a = self.i_a.as_unsigned() | Const(0, MULT18X18D_WIDTH)
            b = self.i_b.as_unsigned() | Const(0, MULT18X18D_WIDTH)
            for k in range(MULT18X18D_WIDTH):
                ports[f"i_A{k}"], ports[f"i_B{k}"], ports[f"i_C{k}"] = a[k], b[k], 0
            for k in range(2 * MULT18X18D_WIDTH):
                ports[f"o_P{k}"] = p[k]
            m.submodules.mult = Instance(
                "MULT18X18D", p_REG_INPUTA_CLK="CLK0", p_REG_INPUTB_CLK="CLK0", p_REG_PIPELINE_CLK="NONE",
                p_REG_OUTPUT_CLK="CLK0", p_RESETMODE="SYNC", **ports)
            m.d.comb += self.o_product.eq(p)
        else:
            a = Signal(self.a_width, reset_less=True)
            b = Signal(self.b_width, reset_less=True)
            product = Signal(self.a_width + self.b_width, reset_less=True)
            m.d.sync += [a.eq(self.i_a), b.eq(self.i_b), product.eq(a * b)]
            m.d.comb += self.o_product.eq(product)
        return m

"""Multiplexers written as trees of 2:1 ``Mux``es, not ``Array`` proxies (whose ``case`` statements
without a default fail the Verilator lint of the generated Verilog)."""

from amaranth.hdl import Mux

__all__ = ["pick"]


def pick(sel, values):
    """``values[sel]``: a tree of 2:1 multiplexers on the bits of ``sel``, low bits first (the high bits,
    which a caller may compute last, drive the last multiplexers); past the end of ``values``, the last."""
    values = list(values)
    values += [values[-1]] * ((1 << len(sel)) - len(values))
    for bit in range(len(sel)):
        values = [Mux(sel[bit], values[i + 1], values[i]) for i in range(0, len(values), 2)]
    return values[0]

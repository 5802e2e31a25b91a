"""Multiplexers written as trees of 2:1 ``Mux``es, not ``Array`` proxies (whose ``case`` statements
without a default fail the Verilator lint of the generated Verilog)."""

from amaranth.hdl import Mux
from amaranth.lib import data
from amaranth.lib.wiring import Out

__all__ = ["chosen", "next_index_members", "offered_index", "pick"]


def pick(sel, values):
    """``values[sel]``: a tree of 2:1 multiplexers on the bits of ``sel``, low bits first (the high bits,
    which a caller may compute last, drive the last multiplexers); past the end of ``values``, the last."""
    values = list(values)
    values += [values[-1]] * ((1 << len(sel)) - len(values))
    for bit in range(len(sel)):
        values = [Mux(sel[bit], values[i + 1], values[i]) for i in range(0, len(values), 2)]
    return values[0]


def next_index_members(index_width) -> dict:
    """A credit receiver's offered index in parts, for a join that orders its next heads a cycle ahead
    (:class:`sfdf.hdl.join.SFDFJoin`'s ``lookahead``): ``o_indices`` (three candidates, each from a
    register), ``o_early`` (a register choosing between the first two) and ``o_choice`` (the late choice
    of the third); the offer's index is :func:`offered_index` of them, so the join compares the candidates
    straight from registers and chooses after."""
    return {"o_indices": Out(data.ArrayLayout(index_width, 3)), "o_early": Out(1), "o_choice": Out(1)}


def chosen(values, early, choice):
    """Of three values, one per candidate of :func:`next_index_members`, the offered one's: ``values[2]`` if
    ``choice``, else ``values[early]`` (whatever is computed per candidate, the choice after it)."""
    return Mux(choice, values[2], Mux(early, values[1], values[0]))


def offered_index(receiver):
    """The index a receiver with :func:`next_index_members` offers: ``o_indices[2]`` if ``o_choice``, else
    ``o_indices[o_early]``."""
    return chosen(receiver.o_indices, receiver.o_early, receiver.o_choice)

"""The index watermark: the least index the sinks have reached, which holds the sources back.

Live credit lets a sender whose edge carries only dummies run ahead of its receiver without bound (a
newer dummy overwrites the heartbeat register, 000 Alg. 4 with coalescing), so the indices alive at a
join could drift ``2^(w-1)`` apart and serial comparison would mis-order them. The watermark closes
that: each sink reports its last computation's index (``o_current`` of :class:`sfdf.hdl.join.SFDFJoin`),
which is at or below every other node's, this module takes their serial minimum through registers (a
few cycles old, so never above the true one: indices only grow), and a source starts index ``i`` only
while ``i - watermark <= W``, ``W = 2^(k-1) - 1`` (:func:`sfdf.gen.analysis.control.watermark`;
docs/semantics.md, "Index watermark"). Every index alive at a node then lies within ``W`` above its
last computation, for endless streams, so the network carries ``k``-bit indices.
"""

from amaranth.hdl import Module, Mux, Signal
from amaranth.lib import data, wiring
from amaranth.lib.wiring import In, Out

__all__ = ["Watermark"]


class Watermark(wiring.Component):
    """Registered serial minimum of the sinks' positions.

    The positions of one cycle lie within ``W < 2^(w-1)`` of each other (the watermark's own invariant),
    so ``a`` precedes ``b`` iff ``(a - b) mod 2^w`` has its top bit set; every stage registers all its
    values, so each comparison is between positions of the same cycle.

    Parameters
    ----------
    sinks : int
    index_width : int

    Members
    -------
    i_positions : In(ArrayLayout(index_width, sinks))
        Each sink's last computation index (0 before the first).
    o_low : Out(index_width)
        Their minimum, ``ceil(log2(sinks)) + 1`` cycles old.
    """

    def __init__(self, *, sinks, index_width):
        if sinks < 1:
            raise ValueError(f"A watermark needs at least one sink, not {sinks}")
        self.sinks, self.index_width = sinks, index_width
        super().__init__({"i_positions": In(data.ArrayLayout(index_width, sinks)),
                          "o_low": Out(index_width)})

    def elaborate(self, platform):
        m = Module()
        w = self.index_width
        level = [self.i_positions[k] for k in range(self.sinks)]
        while len(level) > 1:  # every stage registered whole: the values compared are of one cycle
            nxt = []
            for k in range(0, len(level), 2):
                low = Signal(w, name=f"low{len(level)}_{k // 2}")
                pair = level[k:k + 2]
                m.d.sync += low.eq(Mux((pair[0] - pair[1])[w - 1], pair[0], pair[1]) if len(pair) == 2 else pair[0])
                nxt.append(low)
            level = nxt
        m.d.sync += self.o_low.eq(level[0])
        return m

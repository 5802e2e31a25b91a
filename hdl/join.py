"""The SFDF join: choose the least index among the inputs' heads (002 Alg. 1, 5; 000 Alg. 4).

Each input offers a head (:func:`sfdf.hdl.tokens.head_layout`): a data token, a dummy index, or EOS. Once
every input offers one, the join picks the least index in serial-number order (every ordered pair of
heads compared side by side for up to three inputs, a tree of :func:`sfdf.hdl.serial.serial_min_offset`
relative to the node's current index beyond; both exact while the pending indices lie within
``2^(w-1)`` after the current one, as docs/semantics.md's index-width rule guarantees), presents the
payloads of the data heads with that index, and on ``i_commit`` consumes every head with that index.
When every head is EOS the node is done.
"""

import operator
from functools import reduce

from amaranth.hdl import Cat, Module, Mux, Signal
from amaranth.lib import data, wiring
from amaranth.lib.wiring import In, Out

from .serial import serial_min_offset
from .tokens import head_layout

__all__ = ["PAIRWISE_MAX", "SFDFJoin"]

#: Joins of up to this many inputs compare every ordered pair of offsets side by side (``n (n - 1)``
#: comparators); wider ones use a tree (:func:`sfdf.hdl.serial.serial_min_offset`).
PAIRWISE_MAX = 3


class SFDFJoin(wiring.Component):
    """Least-index join over ``inputs`` heads.

    Parameters
    ----------
    inputs : int
    index_width, data_width, payload_width : int

    Members
    -------
    i_heads : In(ArrayLayout(head_layout, inputs))
    o_ready : Out(1)
        Every input offers a head and not all are EOS: a computation can start.
    o_eos : Out(1)
        Every input offers EOS.
    o_index : Out(index_width)
        The computation index.
    o_offset : Out(index_width)
        Its distance from the previous computation's index (from 0 before the first).
    o_payloads : Out(ArrayLayout(data_width, inputs)), o_mask : Out(inputs)
        Data present at the index.
    o_at : Out(inputs)
        Inputs whose head has the chosen index (they are consumed when committing).
    o_msg_mask : Out(inputs), o_msgs : Out(ArrayLayout(payload_width, inputs))
        Inputs delivering a user message at the index, and their payloads.
    i_commit : In(1)
        The node performs the computation this cycle.
    o_consume : Out(inputs)
        Heads taken (those with the chosen index) when committing.
    o_current : Out(index_width)
        The last computation's index (0 before the first): the join's position for the index watermark
        (:class:`sfdf.hdl.watermark.Watermark`).
    """

    def __init__(self, *, inputs, index_width, data_width, payload_width):
        if inputs < 1:
            raise ValueError(f"A join needs at least one input, not {inputs}")
        self.inputs, self.index_width = inputs, index_width
        super().__init__({
            "i_heads": In(data.ArrayLayout(head_layout(index_width, data_width, payload_width), inputs)),
            "o_ready": Out(1),
            "o_eos": Out(1),
            "o_index": Out(index_width),
            "o_offset": Out(index_width),
            "o_payloads": Out(data.ArrayLayout(data_width, inputs)),
            "o_mask": Out(inputs),
            "o_at": Out(inputs),
            "o_msg_mask": Out(inputs),
            "o_msgs": Out(data.ArrayLayout(payload_width, inputs)),
            "i_commit": In(1),
            "o_consume": Out(inputs),
            "o_current": Out(index_width),
        })

    def elaborate(self, platform):
        m = Module()
        # every pending index lies in (current, current + 2^(w-1)): pairwise serial order is exact there
        current = Signal(self.index_width)
        heads = [self.i_heads[k] for k in range(self.inputs)]
        offered = [h.valid for h in heads]
        live = [h.valid & ~h.eos for h in heads]
        if self.inputs <= PAIRWISE_MAX:
            least, offset, any_live, ats = self._pairwise(heads, live, current)
        else:
            least, offset, any_live = serial_min_offset([h.index for h in heads], live, self.index_width,
                                                        base=current)
            ats = [live[k] & (h.index == least) for k, h in enumerate(heads)]
        all_offered = Signal()
        m.d.comb += [
            self.o_current.eq(current),
            all_offered.eq(Cat(*offered).all()),
            self.o_ready.eq(all_offered & any_live),
            self.o_eos.eq(all_offered & ~any_live),
            self.o_index.eq(least),
            self.o_offset.eq(offset),
        ]
        for k, (h, at_least) in enumerate(zip(heads, ats, strict=True)):
            m.d.comb += [
                self.o_payloads[k].eq(h.data),
                self.o_at[k].eq(at_least),
                self.o_mask[k].eq(at_least & h.is_data),
                self.o_msg_mask[k].eq(at_least & h.is_msg),
                self.o_msgs[k].eq(h.msg),
                self.o_consume[k].eq(self.i_commit & self.o_ready & at_least),
            ]
        with m.If(self.i_commit & self.o_ready):
            m.d.sync += current.eq(least)
        return m

    def _pairwise(self, heads, live, current):
        """Few inputs: every ordered pair of heads compared side by side by the sign of their difference
        (``a`` precedes ``b`` iff ``(a - b) mod 2^w`` has its top bit set: exact while they are less than
        ``2^(w-1)`` apart, docs/semantics.md; equal indices are not ordered), so the chosen inputs are known
        one subtractor after the heads, without ``current``: it only gives the offset, beside them."""
        w = self.index_width
        offsets = [(h.index - current)[:w] for h in heads]
        ats = []
        for k in range(self.inputs):
            beaten = [live[j] & (heads[j].index - heads[k].index)[w - 1] for j in range(self.inputs) if j != k]
            ats.append(live[k] & ~Cat(*beaten).any() if beaten else live[k])
        if self.inputs == 1:
            return heads[0].index, offsets[0], live[0], ats
        # inputs at the least index share it: OR the chosen ones
        least = reduce(operator.or_, [Mux(at, h.index, 0) for at, h in zip(ats, heads, strict=True)])
        offset = reduce(operator.or_, [Mux(at, off, 0) for at, off in zip(ats, offsets, strict=True)])
        return least, offset, Cat(*live).any(), ats

"""The SFDF join: choose the least index among the inputs' heads (002 Alg. 1, 5; 000 Alg. 4).

Each input offers a head (:func:`sfdf.hdl.tokens.head_layout`): a data token, a dummy index, or EOS. Once
every input offers one, the join picks the least index in serial-number order (every ordered pair of
heads compared side by side for up to three inputs, or up to five whose order is kept in registers; a
tree of :func:`sfdf.hdl.serial.serial_min_offset` relative to the node's current index beyond; both
exact while the pending indices lie within ``2^(w-1)`` after the current one, as docs/semantics.md's
index-width rule guarantees), presents the payloads of the data heads with that index, and on
``i_commit`` consumes every head with that index. When every head is EOS the node is done.
"""

import operator
from functools import reduce

from amaranth.hdl import Cat, Module, Mux, Signal
from amaranth.lib import data, wiring
from amaranth.lib.wiring import In, Out

from .select import pick
from .serial import serial_min_offset
from .tokens import head_layout

__all__ = ["LOOKAHEAD_MAX", "PAIRWISE_MAX", "PICK_FIRST_CANDIDATES", "SFDFJoin"]

#: Joins of up to this many inputs compare every ordered pair of offsets side by side (``n (n - 1)``
#: comparators); wider ones use a tree (:func:`sfdf.hdl.serial.serial_min_offset`).
PAIRWISE_MAX = 3
#: Joins of up to this many inputs keep their pairwise order in registers, computed a cycle ahead, when
#: their heads are registered offers (``lookahead``): ``n (n - 1)`` registers, and no tree on the decide
#: loop (docs/fpga.md, "Wide joins").
LOOKAHEAD_MAX = 5
#: Joins ordering inputs of at least this many candidates (credit inputs, ``hdl.node.NEXT_TABLE`` and
#: ``EARLY_HEAD_TABLE``), or of more than :data:`PAIRWISE_MAX` inputs, pick each input's next index before
#: ordering it: three subtractors per ordered pair of inputs (``SFDFJoin._narrowed_order``). Narrower
#: ones (an in-band input's two) compare every pair of candidates, ``(C + 1)^2 - 1`` subtractors with the
#: choice after them (docs/fpga.md, "The next index picked first").
PICK_FIRST_CANDIDATES = 3


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
    i_next : In(ArrayLayout(ArrayLayout(index_width, lookahead), inputs)), i_next_sel : In(ArrayLayout(range(len(table)), inputs))
        With ``lookahead = C > 1`` (heads held in offer registers, :class:`sfdf.hdl.offer.OfferRegister`):
        head ``k`` is replaced at the end of every cycle in which it is not offered or is consumed, and
        otherwise unchanged; the new head's index, if it is offered, is ``i_next[k][table[i_next_sel[k]]]``
        (``table``: a tuple of candidate numbers, by default ``range(C)``; several codes may name one
        candidate, so each bit of the code can come from its own register or late signal).
        Every candidate is a register (the offer register's spare, the receiver's channel heads and
        heartbeat), so the join orders the next
        cycle's heads pairwise in this cycle, from registers, and keeps the order in registers: no
        subtractor lies between the heads and ``o_consume`` (docs/hardware.md, "Join and emission").
        A join of one input has no order; it keeps ``o_offset`` in a register so, computed a cycle ahead
        from the same candidates (:meth:`_offset_ahead`).
    """

    def __init__(self, *, inputs, index_width, data_width, payload_width, lookahead=0, table=None):
        if inputs < 1:
            raise ValueError(f"A join needs at least one input, not {inputs}")
        self.inputs, self.index_width = inputs, index_width
        self.lookahead = lookahead if inputs <= LOOKAHEAD_MAX else 0
        self.table = tuple(range(self.lookahead) if table is None else table)
        if self.lookahead and not all(0 <= c < self.lookahead for c in self.table):
            raise ValueError(f"Candidate table {self.table} names candidates beyond {self.lookahead}")
        members = {} if not self.lookahead else {
            "i_next": In(data.ArrayLayout(data.ArrayLayout(index_width, self.lookahead), inputs)),
            "i_next_sel": In(data.ArrayLayout(range(len(self.table)), inputs)),
        }
        super().__init__({
            **members,
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
        if self.inputs <= PAIRWISE_MAX or self.lookahead:
            least, offset, any_live, ats = self._pairwise(m, heads, live, current)
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

    def _pairwise(self, m, heads, live, current):
        """Few inputs: every ordered pair of heads compared side by side by the sign of their difference
        (``a`` precedes ``b`` iff ``(a - b) mod 2^w`` has its top bit set: exact while they are less than
        ``2^(w-1)`` apart, docs/semantics.md; equal indices are not ordered), so the chosen inputs are known
        one subtractor after the heads, without ``current``: it only gives the offset, beside them.
        With ``lookahead`` the order is a register, computed a cycle ahead (:meth:`_registered_order`)."""
        w = self.index_width
        offsets = [(h.index - current)[:w] for h in heads]
        if self.lookahead:
            precedes = self._registered_order(m, heads)
        else:
            precedes = {(j, k): (heads[j].index - heads[k].index)[w - 1]
                        for j in range(self.inputs) for k in range(self.inputs) if j != k}
        ats = []
        for k in range(self.inputs):
            beaten = [live[j] & precedes[j, k] for j in range(self.inputs) if j != k]
            ats.append(live[k] & ~Cat(*beaten).any() if beaten else live[k])
        if self.inputs == 1:
            offset = self._offset_ahead(m, heads[0], current) if self.lookahead else offsets[0]
            return heads[0].index, offset, live[0], ats
        # inputs at the least index share it: OR the chosen ones
        least = reduce(operator.or_, [Mux(at, h.index, 0) for at, h in zip(ats, heads, strict=True)])
        offset = reduce(operator.or_, [Mux(at, off, 0) for at, off in zip(ats, offsets, strict=True)])
        return least, offset, Cat(*live).any(), ats

    def _offset_ahead(self, m, head, current):
        """A one-input join's ``o_offset`` from a register, computed a cycle ahead: the head's index less
        ``current`` in the next cycle. A consumed head is replaced by the next candidate and ``current``
        becomes its index; a head not offered is replaced and ``current`` stays; else both stay. Each case's
        subtractor reads registers only (the head, ``current``, the candidates), and the consumption
        chooses among them, so no subtractor lies between the head and the decided record."""
        following = self._next_index(m, 0)
        offset = Signal(self.index_width, name="offset")
        self.offset = offset  # after elaboration, for checks in simulation (tests/test_hdl_network.py)
        m.d.sync += offset.eq(Mux(self.o_consume[0], following - head.index,
                                  Mux(head.valid, head.index - current, following - current)))
        return offset

    def _next_index(self, m, k):
        """Input ``k``'s next index, if its head is replaced: ``i_next[k][table[i_next_sel[k]]]``, a
        multiplexer whose select bits are registers or a gate after them."""
        index = Signal(self.index_width, name=f"next_{k}")
        m.d.comb += index.eq(pick(self.i_next_sel[k], [self.i_next[k][t] for t in self.table]))
        return index

    def _replaced(self, heads):
        """Heads replaced at the end of this cycle: not offered, or consumed (the offer register's free slot)."""
        return [~h.valid | self.o_consume[k] for k, h in enumerate(heads)]

    def _registered_order(self, m, heads):
        """``precedes_j_k`` registers: head ``j`` precedes head ``k``, for the heads of this cycle.

        Head ``k`` is replaced when it is not offered or is consumed (``load``), by candidate
        ``table[i_next_sel[k]]``. Where the join picks the next index first (:meth:`_narrowed_order`), see
        there; else every pair of candidates (the present head or a next one, on either side) is
        compared from registers, each order by its own subtractor's sign (no zero test after the carry
        chain). The choice among the candidates (a multiplexer tree on the binary choices, low bits
        first: ``i_next_sel``'s high bits, the receivers' late choices, come last) comes before the one by
        ``load`` (the join's consumption), so the consumption is one multiplexer away from the registers."""
        n, c = self.inputs, self.lookahead
        load = self._replaced(heads)
        order = {(j, k): Signal(name=f"precedes_{j}_{k}") for j in range(n) for k in range(n) if j != k}
        self.order = order  # after elaboration, for checks in simulation (tests/test_hdl_network.py)
        if n > PAIRWISE_MAX or c >= PICK_FIRST_CANDIDATES:
            return self._narrowed_order(m, heads, load, order)
        # candidates of each input: 0 = the present head, then the next ones
        cands = [[h.index] + [self.i_next[k][i] for i in range(c)] for k, h in enumerate(heads)]

        def pick2(sel_a, sel_b, table):
            """``table[sel_a][sel_b]``, choosing by the low bits of both selections first, so the high bits
            (the receivers' late choices) are the last multiplexers."""
            rows = [row + [row[-1]] * ((1 << len(sel_b)) - len(row)) for row in table]
            rows += [rows[-1]] * ((1 << len(sel_a)) - len(rows))
            bits = [(0, i) for i in range(len(sel_a))] + [(1, i) for i in range(len(sel_b))]
            bits.sort(key=lambda side_bit: (side_bit[1], -side_bit[0]))  # b's bit before a's, low first
            order_sel = Cat(*((sel_b if side else sel_a)[i] for side, i in bits))
            leaves = []
            for code in range(1 << len(bits)):
                a = sum(((code >> pos) & 1) << i for pos, (side, i) in enumerate(bits) if side == 0)
                b = sum(((code >> pos) & 1) << i for pos, (side, i) in enumerate(bits) if side == 1)
                leaves.append(rows[a][b])
            return pick(order_sel, leaves)

        for j in range(n):
            for k in range(n):
                if j == k:
                    continue
                sign = {}  # (a, b): cands[j][a] precedes cands[k][b]
                for a, x in enumerate(cands[j]):
                    for b, y in enumerate(cands[k]):
                        if (a, b) != (0, 0):
                            sign[a, b] = _precedes(m, f"diff_{j}_{k}_{a}_{b}", x, y)
                sel_j, sel_k = self.i_next_sel[j], self.i_next_sel[k]
                nexts = [1 + candidate for candidate in self.table]  # the candidate each code names
                both, only_j, only_k = (Signal(name=f"precedes_{j}_{k}_{t}") for t in ("nn", "nh", "hn"))
                m.d.comb += [
                    both.eq(pick2(sel_j, sel_k, [[sign[a, b] for b in nexts] for a in nexts])),
                    only_j.eq(pick(sel_j, [sign[a, 0] for a in nexts])),
                    only_k.eq(pick(sel_k, [sign[0, b] for b in nexts])),
                ]
                _update(m, order[j, k], load[j], load[k], both, only_j, only_k)
        return order

    def _narrowed_order(self, m, heads, load, order):
        """The registered order with each input's next index picked first (:data:`PICK_FIRST_CANDIDATES`):
        ``i_next[k][table[i_next_sel[k]]]``, a multiplexer whose select bits are registers or a gate after
        them, so an ordered pair of inputs needs three subtractors (both next, next against the present
        head, present against next), not ``(C + 1)^2 - 1`` (15 for three candidates); with two candidates
        (in-band) the choice comes after the subtractors instead (docs/fpga.md, "The next index picked
        first")."""
        nexts = [self._next_index(m, k) for k in range(self.inputs)]
        for (j, k), reg in order.items():
            both = _precedes(m, f"diff_{j}_{k}_nn", nexts[j], nexts[k])
            only_j = _precedes(m, f"diff_{j}_{k}_nh", nexts[j], heads[k].index)
            only_k = _precedes(m, f"diff_{j}_{k}_hn", heads[j].index, nexts[k])
            _update(m, reg, load[j], load[k], both, only_j, only_k)
        return order


def _precedes(m, name, a, b):
    """``a`` precedes ``b`` in serial-number order: the sign of ``(a - b) mod 2^w``, from a subtractor
    named ``name`` (no zero test: equal indices are not ordered)."""
    d = Signal(len(a), name=name)
    m.d.comb += d.eq(a - b)
    return d[-1]


def _update(m, reg, load_j, load_k, both, only_j, only_k):
    """``precedes_j_k`` for the next cycle: the order of whichever heads the inputs hold then (each is
    replaced by its next one where ``load``), or the register itself where neither is."""
    m.d.sync += reg.eq(Mux(load_j, Mux(load_k, both, only_j), Mux(load_k, only_k, reg)))

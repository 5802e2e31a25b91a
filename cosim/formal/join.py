"""Proof of the SFDF join (hdl/join.py; 002 Alg. 1, 5; 000 Alg. 4): it consumes only heads that are offered
and at the least index.

The environment: every input's head (valid, index, kinds, payloads, EOS) and ``i_commit`` are ``AnySeq``;
with ``lookahead`` (heads held in offer registers) a head is a register replaced exactly when it is not
offered or is consumed, by a free head whose index is the candidate ``i_next_sel`` names (through the
join's ``table``) among free ``i_next``, and the join's registered pairwise order is proved equal to the
live heads' order.
Assumed, as the receivers and docs/semantics.md's index-width rule guarantee on a real network: a live
head's index lies in ``(current, current + 2 ** (w - 1))`` (docs/hardware.md, "Join and emission"; the
harness keeps its own ``current``, the index of the last committed computation, from 0).

What is proved, in every reachable state:

* ``o_ready`` exactly when every input offers a head and one is live (not EOS); ``o_eos`` exactly when
  every input offers EOS;
* ``o_index`` is the least live index in serial-number order relative to ``current``, and ``o_offset`` its
  distance from ``current``;
* the join consumes (``o_consume``) only when committing while ready, and then exactly the live heads at
  ``o_index``: never an EOS head, a head not offered, or one with a larger index;
* ``o_mask`` / ``o_msg_mask`` mark exactly the data / message heads at ``o_index``.
"""

from __future__ import annotations

from amaranth.asserts import AnySeq
from amaranth.hdl import Assert, Assume, Cat, Elaboratable, Module, Signal

from sfdf.hdl.join import SFDFJoin

from .channel import driven_signals
from .sby import FormalError

__all__ = ["JoinHarness"]


class JoinHarness(Elaboratable):
    """``SFDFJoin(inputs, index_width)`` under free heads; see the module docstring."""

    def __init__(self, *, inputs=2, index_width=4, join=SFDFJoin, lookahead=0, table=None):
        self.inputs, self.index_width, self.join_class, self.lookahead = inputs, index_width, join, lookahead
        self.table = table

    def elaborate(self, platform):
        m = Module()
        n, w = self.inputs, self.index_width
        dut = self.join_class(inputs=n, index_width=w, data_width=1, payload_width=1, lookahead=self.lookahead,
                              table=self.table)
        dut._MustUse__silence = True  # elaborated here, to reach its register
        module = m.submodules.join = dut.elaborate(platform)
        names = driven_signals(module)
        if "current" not in names:
            raise FormalError("SFDFJoin has no internal register current; update cosim/formal/join.py")
        heads = [dut.i_heads[k] for k in range(n)]
        m.d.comb += dut.i_commit.eq(AnySeq(1))
        for k, h in enumerate(heads):
            fields = [h.valid, h.index, h.is_data, h.data, h.is_msg, h.msg, h.eos]
            if not dut.lookahead:
                m.d.comb += [f.eq(AnySeq(len(f))) for f in fields]
                continue
            # an offer register: replaced when not offered or consumed, by the chosen candidate
            held = [Signal(len(f), name=f"head{k}_{i}") for i, f in enumerate(fields)]
            m.d.comb += [f.eq(r) for f, r in zip(fields, held, strict=True)]
            sel = dut.i_next_sel[k]
            m.d.comb += [dut.i_next[k][c].eq(AnySeq(w)) for c in range(dut.lookahead)]
            m.d.comb += [sel.eq(AnySeq(len(sel))), Assume(sel < len(dut.table), f"head {k}: a candidate")]
            with m.If(~h.valid | dut.o_consume[k]):
                m.d.sync += [r.eq(AnySeq(len(r))) for r in held]
                for code, c in enumerate(dut.table):
                    with m.If(sel == code):
                        m.d.sync += held[1].eq(dut.i_next[k][c])
        current = Signal(w)
        live = [h.valid & ~h.eos for h in heads]
        for k, h in enumerate(heads):
            ahead = (h.index - current)[:w]
            m.d.comb += Assume(~live[k] | (ahead != 0) & ~ahead[w - 1], f"head {k}: index in (current, current + 2^(w-1))")
        go = dut.i_commit & dut.o_ready
        with m.If(go):
            m.d.sync += current.eq(dut.o_index)

        offset = [(h.index - current)[:w] for h in heads]
        least = Signal(w)
        m.d.comb += least.eq((dut.o_index - current)[:w])
        all_offered = Cat(*(h.valid for h in heads)).all()
        any_live = Cat(*live).any()
        m.d.comb += [
            Assert(dut.o_ready == (all_offered & any_live), "ready iff every input offers and one is live"),
            Assert(dut.o_eos == (all_offered & ~any_live), "EOS iff every input offers EOS"),
            Assert(~(dut.o_consume != 0) | go, "consume only when committing while ready"),
            Assert(names["current"] == current, "invariant: the join's current index"),
        ]
        if dut.lookahead:
            for j in range(n):
                for k in range(n):
                    if j == k:
                        continue
                    order = names.get(f"precedes_{j}_{k}")
                    if order is None:
                        raise FormalError("SFDFJoin(lookahead=...) has no register precedes_j_k; "
                                          "update cosim/formal/join.py")
                    with m.If(live[j] & live[k]):
                        m.d.comb += Assert(order == (heads[j].index - heads[k].index)[w - 1],
                                           f"invariant: the registered order of heads {j}, {k}")
        with m.If(dut.o_ready):
            m.d.comb += Assert(dut.o_offset == least, "o_offset = o_index - current")
            m.d.comb += Assert(Cat(*(live[k] & (heads[k].index == dut.o_index) for k in range(n))).any(),
                               "o_index is a live head's index")
        for k, h in enumerate(heads):
            at = live[k] & (h.index == dut.o_index)
            with m.If(dut.o_ready & live[k]):
                m.d.comb += Assert(offset[k] >= least, f"head {k}: o_index is the least (serial order)")
            with m.If(dut.o_ready):
                m.d.comb += [
                    Assert(dut.o_at[k] == at, f"head {k}: o_at iff live at o_index"),
                    Assert(dut.o_mask[k] == (at & h.is_data), f"head {k}: o_mask iff data at o_index"),
                    Assert(dut.o_msg_mask[k] == (at & h.is_msg), f"head {k}: o_msg_mask iff message at o_index"),
                ]
            m.d.comb += [
                Assert(~dut.o_consume[k] | (h.valid & ~h.eos), f"head {k}: consumed only if offered and live"),
                Assert(dut.o_consume[k] == (go & at), f"head {k}: consumed iff committing at its index"),
            ]
        return m

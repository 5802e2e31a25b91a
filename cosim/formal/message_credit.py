"""Proof of a teleport message route's credit (hdl/sdf_message.py, hdl/sdf_node.py; 004 with credits in
logic): no receiver passes a firing a pending message targets, and no message is lost.

The design: the sender's :class:`~sfdf.hdl.sdf_message.MessageTarget` and the receiver's
:class:`~sfdf.hdl.sdf_message.MessageQueue`, wired as :class:`sfdf.hdl.sdf_network.SDFNetwork` wires
them. The environment: the sender steps its target and decides to send ``AnySeq`` (at a firing's start,
the SDF test kernel's node; at its decision, a stream kernel's, :class:`~sfdf.hdl.sdf_stream.SDFStreamNode`),
with any payload (the firing's number, a detector's report), and a firing that sends waits for the
queue's room, as the sender node does; the receiver counts its firings from 1 and starts one
``AnySeq`` when the queue's credit allows, which is all the receiving :class:`~sfdf.hdl.sdf_node.SDFNode`
adds (its start is the AND of its data rule and every route's ``o_credit``; the rest of it is checked
against the model cycle for cycle, tests/test_gen_sdf_pipeline.py). Assumed, as a
network's channels guarantee (:func:`sfdf.gen.sdf.credits.queue_depths`' bound on the sender's lead):
the sender's next target is less than ``2^(w - 2)`` firings past the receiver, so serial order holds.
Proved with ``w``-bit counters (``width``, 6 by default; the hardware's are 32 bits, the same logic).

What is proved, in every reachable state, with ``f`` the receiver's next firing and every comparison in
serial order from ``f``:

* every message in the queue targets a firing the receiver has not started (``target >= f``), and so does
  one being sent: the receiver never passes a firing a pending message targets;
* the queue's targets increase strictly, none past the sender's next target, which is at least ``f``;
* an entry is handled only at the receiver's next firing: downstream with its start (immediately before
  it), upstream once the credit is past it;
* the sum of the payloads of the messages sent and not yet handled is the sum the queue holds: none is
  lost or counted twice.
"""

from __future__ import annotations

from amaranth.asserts import AnySeq
from amaranth.hdl import Array, Assert, Assume, Const, Elaboratable, Module, Mux, Signal

from sfdf.gen.sdf.credits import TargetTable
from sfdf.hdl.sdf_message import MessageQueue, MessageTarget, ahead

from .channel import driven_signals
from .sby import FormalError

__all__ = ["MessageCreditHarness"]


class MessageCreditHarness(Elaboratable):
    """One route of target ``table``, a queue of ``depth`` (``upstream`` or not), see the module docstring;
    ``queue``: the queue's class (a broken variant for the mutant)."""

    def __init__(self, table: TargetTable, depth: int, upstream: bool, queue=MessageQueue, width: int = 6):
        self.table, self.depth, self.upstream, self.queue, self.width = table, depth, upstream, queue, width

    def elaborate(self, platform):
        m = Module()
        w = self.width
        target_dut = MessageTarget(self.table, w)
        target_dut._MustUse__silence = True
        target_module = m.submodules.target = target_dut.elaborate(platform)
        queue = self.queue(self.depth, self.upstream, self.table.first[0], w)
        queue._MustUse__silence = True
        module = m.submodules.queue = queue.elaborate(platform)
        names = driven_signals(module) | driven_signals(target_module)
        wanted = ([f"target{i}" for i in range(self.depth)] + [f"sum{i}" for i in range(self.depth)]
                  + ["level", "last", "index", "base", "target", "credit", "due"])
        if missing := [n for n in wanted if n not in names]:
            raise FormalError(f"MessageQueue/MessageTarget lack the registers {missing}; update cosim/formal/message_credit.py")

        start, send, payload = Signal(), Signal(), Signal(w)
        m.d.comb += [start.eq(AnySeq(1)), send.eq(AnySeq(1)), payload.eq(AnySeq(w)), Assume(~(start & send) | queue.o_room,
                                                                    "a firing that sends waits for room")]
        m.d.comb += [
            target_dut.i_start.eq(start), target_dut.i_send.eq(send),
            queue.i_valid.eq(target_dut.o_valid), queue.i_n.eq(payload), queue.i_target.eq(target_dut.o_target),
        ]
        f, begin = Signal(w, init=1, name="receiver_next"), Signal(name="receiver_start")
        m.d.comb += [begin.eq(AnySeq(1) & queue.o_credit), queue.i_next.eq(f), queue.i_limit.eq(target_dut.o_target),
                     queue.i_start.eq(begin), queue.i_following.eq(target_dut.o_following),
                     queue.i_sender_start.eq(start)]
        with m.If(begin):
            m.d.sync += f.eq(f + 1)

        def past(value):  # serial distance from f
            return (value - f)[:w]

        half = 1 << (w - 1)
        limit = target_dut.o_target
        m.d.comb += Assume(past(limit) < (1 << (w - 2)), "the sender's lead is bounded (its channels)")
        m.d.comb += Assert(names["index"] < len(self.table.first), "invariant: the table index is in range")
        m.d.comb += Assert(past(limit) < half, "the sender's next target is not behind the receiver")
        with m.If(target_dut.o_valid):
            m.d.comb += Assert((past(target_dut.o_target) < half) & ~(begin & (target_dut.o_target == f)),
                               "a message sent targets a firing the receiver has not started, nor starts now")

        level = names["level"]
        targets = [names[f"target{i}"] for i in range(self.depth)]
        sums = [names[f"sum{i}"] for i in range(self.depth)]
        table = Array(Const(t % (1 << w), w) for t in self.table.first)
        m.d.comb += [Assert(level <= self.depth, "invariant: the queue holds at most its depth"),
                     Assert(names["target"] == (names["base"] + table[names["index"]])[:w],
                            "invariant: the sender's register holds its next target")]
        m.d.comb += [Assert(names["credit"] == ahead(m, limit, f, w), "invariant: the credit register is limit > f"),
                     Assert(names["due"] == ((level != 0) & (targets[0] == f)), "invariant: due is head == f")]
        live = [level > k for k in range(self.depth)]  # entry 0 is the head
        for k in range(self.depth):
            with m.If(live[k]):
                m.d.comb += [Assert(past(targets[k]) < half, f"entry {k}: its target is a firing the receiver has not started"),
                             Assert(past(targets[k]) <= past(limit), f"entry {k}: not past the sender's next target")]
            if k + 1 < self.depth:
                with m.If(live[k + 1]):
                    m.d.comb += Assert(past(targets[k + 1]) > past(targets[k]), f"entry {k + 1}: targets increase")
            with m.If(level == k + 1):
                m.d.comb += Assert(names["last"] == targets[k], "invariant: last is the newest entry's target")
        held = Signal(w)
        m.d.comb += held.eq(sum(Mux(live[k], sums[k], 0) for k in range(self.depth)))
        sent_sum = Signal(w)  # of the messages sent and not handled, kept here
        m.d.sync += sent_sum.eq(sent_sum + Mux(target_dut.o_valid, payload, 0) - Mux(queue.o_handled, queue.o_sum, 0))
        m.d.comb += Assert(sent_sum == held, "the queue holds the sum of the messages sent and not handled")
        with m.If(queue.o_handled):
            m.d.comb += Assert(queue.o_handled_target == f, "handled at the receiver's next firing")
            if self.upstream:
                m.d.comb += Assert(queue.o_credit, "upstream: handled once no more messages can come for it")
            else:
                m.d.comb += Assert(begin, "downstream: handled with the firing's start")
        return m

"""Teleport messages in hardware (004, with credits in logic; :mod:`sfdf.gen.sdf.credits` has the rules):
the sender's target table and the receiver's message queue, one of each per route.

:class:`MessageTarget` sits by the sender: it holds ``T(started + 1)``, the target of the sender's next
firing (``o_target``), stepping through the route's :class:`~sfdf.gen.sdf.credits.TargetTable` at each
start. It is two things at once: the target of the message a firing that sends carries (``o_valid`` in
the cycle of that start, with ``o_n`` the firing, counted from 1), and the receiver's *limit*: the
receiver starts its firing ``f`` only while ``f < o_target`` (no message the sender may still send can act
on ``f``).

:class:`MessageQueue` sits by the receiver: a circular buffer of ``(target, sum)`` entries in target
order, a message whose target is the last entry's added to its sum (the SDF test kernel's handler adds
``n``, so messages of one target act as one). Its head is *due* when its target is the receiver's next
firing ``i_next``; it is taken with that firing's start (``i_start``; downstream: handled immediately
before it) or, upstream (handled immediately after the firing before it, which has started), as soon as
no more messages can come for it: when the receiver's credit (``i_limit``, the sender's
:class:`MessageTarget`) is past it.
``o_room`` is low only when a new target would not fit, which the depth of
:func:`sfdf.gen.sdf.credits.queue_depths` rules out; the sender then waits rather than lose a message.
Counters and targets are 32 bits and compared by their difference, so they wrap.
"""

from amaranth import Array, Const, Module, Mux, Signal
from amaranth.lib import wiring
from amaranth.lib.wiring import In, Out

from sfdf.gen.sdf.credits import TargetTable

__all__ = ["COUNT", "MessageQueue", "MessageTarget", "ahead"]

#: Bits of firing counters, message targets and sums (wrapping; compared by difference).
COUNT = 32


def ahead(m: Module, a, b):
    """``a > b`` for wrapping ``COUNT``-bit counters less than ``2^31`` apart (their difference, in ``m``)."""
    difference = Signal(COUNT)
    m.d.comb += difference.eq(a - b)
    return (difference != 0) & ~difference[COUNT - 1]


class MessageTarget(wiring.Component):
    """The target table of one route at its sender (see the module docstring)."""

    i_start: In(1)
    i_send: In(1)
    o_valid: Out(1)
    o_n: Out(COUNT)
    o_target: Out(COUNT)

    def __init__(self, table: TargetTable):
        self.table = table
        super().__init__()

    def elaborate(self, platform):
        m = Module()
        first = self.table.first
        index = Signal(range(len(first)))
        base = Signal(COUNT)
        n = Signal(COUNT, init=1)
        targets = Array(Const(t % (1 << COUNT), COUNT) for t in first)
        m.d.comb += [self.o_target.eq(base + targets[index]), self.o_n.eq(n), self.o_valid.eq(self.i_start & self.i_send)]
        with m.If(self.i_start):
            m.d.sync += n.eq(n + 1)
            with m.If(index == len(first) - 1):
                m.d.sync += [index.eq(self.table.wrap), base.eq(base + self.table.step)]
            with m.Else():
                m.d.sync += index.eq(index + 1)
        return m


class MessageQueue(wiring.Component):
    """The message queue of one route at its receiver (see the module docstring); ``depth`` entries,
    ``upstream`` for a route to an upstream receiver.

    ``o_handled`` rises in the cycle the head is taken, ``o_sum`` the sum of its messages' ``n`` (the
    receiver adds it to its accumulator) and ``o_handled_target`` its target (verification: the cosim pairs
    it with the messages sent to that target); ``o_level`` counts the entries (verification)."""

    i_valid: In(1)
    i_n: In(COUNT)
    i_target: In(COUNT)
    i_next: In(COUNT)
    i_limit: In(COUNT)
    i_start: In(1)
    o_room: Out(1)
    o_sum: Out(COUNT)
    o_handled: Out(1)
    o_handled_target: Out(COUNT)
    o_level: Out(COUNT)

    def __init__(self, depth: int, upstream: bool):
        self.depth, self.upstream = depth, upstream
        super().__init__()

    def elaborate(self, platform):
        m = Module()
        depth = self.depth
        targets = Array(Signal(COUNT, name=f"target{i}") for i in range(depth))
        sums = Array(Signal(COUNT, name=f"sum{i}") for i in range(depth))
        head, level = Signal(range(depth)), Signal(range(depth + 1))
        tail = Signal(range(depth))  # the last entry, when level > 0
        m.d.comb += tail.eq(Mux(head + level - 1 >= depth, head + level - 1 - depth, head + level - 1))
        fresh = Signal(range(depth))  # where a new entry goes
        m.d.comb += fresh.eq(Mux(head + level >= depth, head + level - depth, head + level))
        merge = Signal()
        m.d.comb += merge.eq((level != 0) & (targets[tail] == self.i_target))
        pop, due = Signal(), Signal()
        take = ahead(m, self.i_limit, self.i_next) if self.upstream else self.i_start
        m.d.comb += [
            due.eq((level != 0) & (targets[head] == self.i_next)),
            self.o_sum.eq(sums[head]),
            pop.eq(due & take),
            self.o_room.eq(merge | (level != depth)),
            self.o_handled.eq(pop),
            self.o_handled_target.eq(targets[head]),
            self.o_level.eq(level),
        ]
        push = Signal()
        m.d.comb += push.eq(self.i_valid & ~merge & (level != depth))
        with m.If(self.i_valid & merge):  # never the head being taken: a new target is past the receiver's limit
            m.d.sync += sums[tail].eq(sums[tail] + self.i_n)
        with m.If(push):
            m.d.sync += [targets[fresh].eq(self.i_target), sums[fresh].eq(self.i_n)]
        with m.If(pop):
            m.d.sync += head.eq(Mux(head == depth - 1, 0, head + 1))
        m.d.sync += level.eq(level + push - pop)
        return m

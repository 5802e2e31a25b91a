"""Teleport messages in hardware (004, with credits in logic; :mod:`sfdf.gen.sdf.credits` has the rules):
the sender's target table and the receiver's message queue, one of each per route.

:class:`MessageTarget` sits by the sender: it holds ``T(started + 1)``, the target of the sender's next
firing (``o_target``), stepping through the route's :class:`~sfdf.gen.sdf.credits.TargetTable` at each
start. It is two things at once: the target of the message a firing that sends carries (``o_valid`` in
the cycle of that start, with ``o_n`` the firing, counted from 1), and the receiver's *limit*: the
receiver starts its firing ``f`` only while ``f < o_target`` (no message the sender may still send can act
on ``f``).

:class:`MessageQueue` sits by the receiver: a shift register of ``(target, sum)`` entries in target
order, the head first (a pop shifts the others down), a message whose target is the last entry's added
to its sum (the SDF test kernel's handler adds ``n``, so messages of one target act as one). Its head is
*due* when its target is the receiver's next firing ``i_next``; it is taken with that firing's start
(``i_start``; downstream: handled immediately before it) or, upstream (handled immediately after the
firing before it, which has started), as soon as no more messages can come for it: when the receiver's
credit (``i_limit``, the sender's :class:`MessageTarget`) is past it. ``o_room`` is low only when a new
target would not fit, which the depth of :func:`sfdf.gen.sdf.credits.queue_depths` rules out; the sender
then waits rather than lose a message (a sender that decides after its start cannot wait: the bound
alone keeps its queue from overflowing). Counters and targets are 32 bits and compared by their
difference, so they wrap; the credit and ``due`` are registers (see :class:`MessageQueue`), and no read of
the queue goes through a multiplexer, so a receiver's start waits on no wide comparison.
"""

from amaranth import Array, Const, Module, Mux, Signal
from amaranth.lib import wiring
from amaranth.lib.wiring import In, Out

from sfdf.gen.sdf.credits import TargetTable

__all__ = ["COUNT", "MessageQueue", "MessageTarget", "ahead"]

#: Bits of firing counters, message targets and sums (wrapping; compared by difference).
COUNT = 32


def ahead(m: Module, a, b, width: int = COUNT):
    """``a > b`` for wrapping ``width``-bit counters less than ``2^(width - 1)`` apart (their difference, in ``m``)."""
    difference = Signal(width)
    m.d.comb += difference.eq(a - b)
    return (difference != 0) & ~difference[width - 1]


class MessageTarget(wiring.Component):
    """The target table of one route at its sender (see the module docstring); counters of ``width`` bits
    (:data:`COUNT`; narrower in a formal proof). ``o_following``: the target after ``o_target``, what it
    becomes at the next start."""

    def __init__(self, table: TargetTable, width: int = COUNT):
        self.table, self.width = table, width
        super().__init__({"i_start": In(1), "i_send": In(1), "o_valid": Out(1), "o_n": Out(width),
                          "o_target": Out(width), "o_following": Out(width)})

    def elaborate(self, platform):
        m = Module()
        first, width, table = self.table.first, self.width, self.table
        index = Signal(range(len(first)), name="index")
        base = Signal(width, name="base")
        n = Signal(width, init=1, name="n")
        # T(started + 1) in a register; the next one computed from the registers, so a start only selects it
        target = Signal(width, init=first[0] % (1 << width), name="target")
        targets = Array(Const(t % (1 << width), width) for t in first)
        m.d.comb += [self.o_target.eq(target), self.o_n.eq(n), self.o_valid.eq(self.i_start & self.i_send)]
        wraps = index == len(first) - 1
        following = Signal(width)
        m.d.comb += [following.eq(Mux(wraps, base + table.step + targets[table.wrap], base + targets[index + 1])),
                     self.o_following.eq(following)]
        with m.If(self.i_start):
            m.d.sync += [n.eq(n + 1), target.eq(following)]
            with m.If(wraps):
                m.d.sync += [index.eq(table.wrap), base.eq(base + table.step)]
            with m.Else():
                m.d.sync += index.eq(index + 1)
        return m


class MessageQueue(wiring.Component):
    """The message queue of one route at its receiver (see the module docstring); ``depth`` entries,
    ``upstream`` for a route to an upstream receiver.

    ``o_credit``: the receiver may start its next firing ``i_next`` (it is below ``i_limit``), a register:
    computed a cycle ahead for each of the two starts that move it, the sender's (``i_sender_start``: the
    limit becomes ``i_following``) and the receiver's (``i_start``: ``i_next`` steps), so the receiver's start
    depends on no comparison of counters; so is whether the head is due. ``first_target``: the limit at
    reset, the sender's first firing's target.
    ``o_handled`` rises in the cycle the head is taken, ``o_sum`` the sum of its messages' ``n`` (the
    receiver adds it to its accumulator) and ``o_handled_target`` its target (verification: the cosim pairs
    it with the messages sent to that target); ``o_level`` counts the entries (verification). Counters,
    targets and sums of ``width`` bits."""

    def __init__(self, depth: int, upstream: bool, first_target: int, width: int = COUNT):
        self.depth, self.upstream, self.first_target, self.width = depth, upstream, first_target, width
        super().__init__({
            "i_valid": In(1), "i_n": In(width), "i_target": In(width), "i_next": In(width), "i_limit": In(width),
            "i_following": In(width), "i_sender_start": In(1),
            "i_start": In(1), "o_credit": Out(1), "o_room": Out(1), "o_sum": Out(width), "o_handled": Out(1),
            "o_handled_target": Out(width), "o_level": Out(range(depth + 1)),
        })

    def elaborate(self, platform):
        m = Module()
        depth, width = self.depth, self.width
        # entry 0 is the head: a pop shifts every entry down one place, so no read needs a multiplexer
        targets = [Signal(width, name=f"target{i}") for i in range(depth)]
        sums = [Signal(width, name=f"sum{i}") for i in range(depth)]
        level = Signal(range(depth + 1), name="level")
        last = Signal(width, name="last")  # the newest entry's target, for the merge test
        merge, push, pop = Signal(name="merge"), Signal(name="push"), Signal(name="pop")
        # registers: the credit, ahead(i_limit, i_next), and whether the head is due, level > 0 and
        # targets[0] == i_next; next cycle's values for every combination of this cycle's starts and pop
        credit = Signal(init=(self.first_target - 1) % (1 << width) in range(1, 1 << (width - 1)), name="credit")
        due = Signal(name="due")
        step = Signal(width)
        m.d.comb += step.eq(self.i_next + 1)
        limits = [self.i_limit, self.i_following]
        nexts = [self.i_next, step]
        ahead_of = [[ahead(m, lim, f, width) for f in nexts] for lim in limits]
        m.d.sync += credit.eq(Mux(self.i_sender_start, Mux(self.i_start, ahead_of[1][1], ahead_of[1][0]),
                                  Mux(self.i_start, ahead_of[0][1], ahead_of[0][0])))
        second = targets[1] if depth > 1 else targets[0]
        equal = {name: [value == f for f in nexts] for name, value in
                 (("in", self.i_target), ("second", second), ("head", targets[0]))}

        def at(name):  # the candidate head against next cycle's i_next
            return Mux(self.i_start, equal[name][1], equal[name][0])

        fresh_head = push & (level - pop == 0)
        kept = (level > 1) | ((level == 1) & ~pop)
        m.d.sync += due.eq(Mux(fresh_head, at("in"), kept & Mux(pop, at("second"), at("head"))))
        m.d.comb += self.o_credit.eq(credit)
        take = credit if self.upstream else self.i_start
        m.d.comb += [
            merge.eq((level != 0) & (last == self.i_target)),
            push.eq(self.i_valid & ~merge & (level != depth)),
            pop.eq(due & take),
            self.o_sum.eq(sums[0]),
            self.o_room.eq(merge | (level != depth)),
            self.o_handled.eq(pop),
            self.o_handled_target.eq(targets[0]),
            self.o_level.eq(level),
        ]
        added = self.i_valid & merge  # never the head being taken: a new target is past the receiver's limit
        for i in range(depth):
            target_in = targets[i + 1] if i + 1 < depth else targets[i]
            sum_in = sums[i + 1] if i + 1 < depth else sums[i]
            kept_target, kept_sum = Mux(pop, target_in, targets[i]), Mux(pop, sum_in, sums[i])
            with m.If(push & (level - pop == i)):
                m.d.sync += [targets[i].eq(self.i_target), sums[i].eq(self.i_n)]
            with m.Elif(added & (level - pop - 1 == i)):
                m.d.sync += [targets[i].eq(kept_target), sums[i].eq(kept_sum + self.i_n)]
            with m.Else():
                m.d.sync += [targets[i].eq(kept_target), sums[i].eq(kept_sum)]
        with m.If(push):
            m.d.sync += last.eq(self.i_target)
        m.d.sync += level.eq(level + push - pop)
        return m

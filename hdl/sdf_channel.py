"""An SDF edge's channel (004 networks in hardware): a FIFO of exact capacity whose first items the
receiver reads as a window and pops several at once, holding the edge's initial items at reset.

The sender writes one item per cycle (``w_valid``/``w_data``, taken whenever ``o_room`` is not 0; a node
checks ``o_room`` against its phase's pushes before it starts a firing, and only it writes, so the room it
saw stays). The receiver sees ``o_level`` (the items held) and reads the item ``r_offset`` places past the
head (``r_data`` a cycle later, the memory's registered read, so block RAM holds large channels); it
pops ``r_pop`` items at once, which frees their room in the same cycle. The edge's ``initial`` items are
zeros (docs/semantics.md, "SDF networks"), in place at reset: the level starts at ``initial``, and until
they are popped a read of one of them gives 0 whatever the memory held before the reset (memories do
not reset).

Parameters
----------
width : int
    Bits of an item.
capacity : int
    Items the channel holds (the edge's capacity, at least ``initial`` and 1).
initial : int
    Items at reset.
window : int
    The most the receiver reads past the head (its largest peek); ``r_offset`` is below it.
max_pop : int
    The most the receiver pops at once.
"""

from __future__ import annotations

from amaranth import Module, Mux, Signal, unsigned
from amaranth.lib import wiring
from amaranth.lib.memory import Memory
from amaranth.lib.wiring import In, Out

__all__ = ["SDFChannel"]


class SDFChannel(wiring.Component):
    def __init__(self, width: int, capacity: int, initial: int = 0, window: int = 1, max_pop: int = 1):
        if not 1 <= capacity or not 0 <= initial <= capacity:
            raise ValueError(f"capacity {capacity} must be at least 1 and hold the {initial} initial items")
        if not window <= capacity or not max_pop <= capacity:
            raise ValueError(f"a window of {window} or pops of {max_pop} do not fit a capacity of {capacity}")
        self.width, self.capacity, self.initial = width, capacity, initial
        self.window, self.max_pop = max(window, 1), max(max_pop, 1)
        count = unsigned(capacity.bit_length())
        super().__init__({
            "w_valid": In(1), "w_data": In(width), "o_room": Out(count),
            "o_level": Out(count), "r_offset": In(range(self.window)), "r_data": Out(width),
            "r_pop": In(range(self.max_pop + 1)),
        })

    def elaborate(self, platform):
        m = Module()
        depth = self.capacity
        m.submodules.storage = storage = Memory(shape=self.width, depth=depth, init=[])
        w_port, r_port = storage.write_port(), storage.read_port()
        head = Signal(range(depth), init=0)
        tail = Signal(range(depth), init=self.initial % depth)
        level = Signal(range(depth + 1), init=self.initial)
        write = Signal()
        # initial items not yet popped (reads of them are zeros), and whether the read under way is one
        unpopped = Signal(range(self.initial + 1), init=self.initial)
        zero = Signal()

        def wrap(value):  # value < 2 * depth
            return Mux(value >= depth, value - depth, value)

        m.d.comb += [
            self.o_level.eq(level),
            self.o_room.eq(depth - level),
            write.eq(self.w_valid & (level != depth)),
            w_port.addr.eq(tail),
            w_port.data.eq(self.w_data),
            w_port.en.eq(write),
            r_port.addr.eq(wrap(head + self.r_offset)),
            self.r_data.eq(Mux(zero, 0, r_port.data)),
        ]
        if self.initial:
            m.d.sync += [zero.eq(self.r_offset < unpopped),
                         unpopped.eq(Mux(unpopped > self.r_pop, unpopped - self.r_pop, 0))]
        m.d.sync += [
            level.eq(level + write - self.r_pop),
            head.eq(wrap(head + self.r_pop)),
        ]
        with m.If(write):
            m.d.sync += tail.eq(Mux(tail == depth - 1, 0, tail + 1))
        return m

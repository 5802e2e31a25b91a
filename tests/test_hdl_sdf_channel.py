# amaranth: UnusedElaboratable=no
"""hdl/sdf_channel.py: an SDF edge's channel against a Python queue, cycle by cycle, under random writes,
window reads and multi-item pops; its initial items are zeros at reset, also after a reset that finds
other data in the memory."""

from __future__ import annotations

import random
from collections import deque

import pytest
from amaranth import Module, Signal
from amaranth.hdl import ResetInserter
from amaranth.sim import Simulator

from sfdf.hdl.sdf_channel import SDFChannel


def run(top, bench):
    sim = Simulator(top)
    sim.add_clock(1e-8)
    sim.add_testbench(bench)
    sim.run()


@pytest.mark.parametrize(("capacity", "initial", "window", "max_pop", "seed"),
                         [(1, 0, 1, 1, 1), (4, 2, 3, 2, 2), (7, 0, 5, 3, 3), (16, 5, 4, 4, 4), (9, 9, 9, 9, 5)])
def test_the_channel_is_a_queue_with_a_window(capacity, initial, window, max_pop, seed):
    dut = SDFChannel(16, capacity, initial, window, max_pop)
    rng = random.Random(seed)

    async def bench(ctx):
        queue = deque([0] * initial)
        expect = None  # the item the read of the cycle before must give
        for _ in range(600):
            assert ctx.get(dut.o_level) == len(queue) and ctx.get(dut.o_room) == capacity - len(queue)
            if expect is not None:
                assert ctx.get(dut.r_data) == expect
            write = len(queue) < capacity and rng.random() < 0.6
            value = rng.randrange(1, 1 << 16)
            pop = rng.randint(0, min(len(queue), max_pop)) if rng.random() < 0.5 else 0
            offset = rng.randrange(min(len(queue), window)) if queue else 0
            expect = queue[offset] if queue else None
            ctx.set(dut.w_valid, write)
            ctx.set(dut.w_data, value)
            ctx.set(dut.r_offset, offset)
            ctx.set(dut.r_pop, pop)
            await ctx.tick()
            for _ in range(pop):
                queue.popleft()
            if write:
                queue.append(value)

    run(dut, bench)


def test_initial_items_are_zeros_after_a_reset_over_other_data():
    reset = Signal()
    chan = SDFChannel(8, 4, initial=2, window=2, max_pop=2)
    top = Module()
    top.submodules.chan = ResetInserter(reset)(chan)

    async def bench(ctx):
        ctx.set(chan.r_pop, 2)  # the initial zeros out, then 0xaa and 0xbb over their rows
        await ctx.tick()
        ctx.set(chan.r_pop, 0)
        for value in (0xaa, 0xbb, 0xcc):
            ctx.set(chan.w_valid, 1)
            ctx.set(chan.w_data, value)
            await ctx.tick()
        ctx.set(chan.w_valid, 0)
        ctx.set(reset, 1)
        await ctx.tick()
        ctx.set(reset, 0)
        assert ctx.get(chan.o_level) == 2
        for offset in (0, 1):
            ctx.set(chan.r_offset, offset)
            await ctx.tick()
            assert ctx.get(chan.r_data) == 0, f"initial item {offset} after the reset"

    run(top, bench)


def test_a_window_or_pop_beyond_the_capacity_is_refused():
    with pytest.raises(ValueError, match="do not fit a capacity of 4"):
        SDFChannel(8, 4, window=5)

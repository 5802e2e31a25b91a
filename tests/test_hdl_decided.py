# amaranth: UnusedElaboratable=no
"""The queue of decided computations and the pipelined kernels' result lane (hdl/decided.py)."""

import random

import pytest
from amaranth.lib import data
from amaranth.sim import Simulator

from sfdf.hdl.decided import DecidedQueue

RECORD = data.StructLayout({"index": 8, "emit": 1})


@pytest.mark.parametrize("latency", [0, 1, 2, 3])
@pytest.mark.parametrize("busy", [0.0, 0.4])
@pytest.mark.parametrize("registered", [(), ("index", "emit")])
@pytest.mark.parametrize("staged", [False, True])
def test_each_computation_leaves_with_its_own_data(latency, busy, registered, staged):
    """A kernel whose result for the record taken at cycle t is ready at t + latency: every computation
    leaves once, in order, with its data; with an always-ready reader and a record every cycle, one
    leaves every cycle (the queue's depth covers the latency). Fields given from registers of their own
    (``registered``) are the same, and so is every field when records go into their slots a cycle after
    the take (``staged``). ``o_next`` (``ahead``, the registered fields) is, in every cycle, what those fields
    are in the next when a computation is offered then."""
    dut = DecidedQueue(RECORD, data_width=16, latency=latency, registered=registered, staged=staged,
                       ahead=registered)
    rng = random.Random(latency)
    count = 60
    taken, left = [], []

    async def writer(ctx):
        index = 0
        history = [None] * (latency + 1)  # the kernel's pipeline: data of the record offered `latency` ago
        while index < count:
            offer = rng.random() >= busy
            ctx.set(dut.i_record.valid, offer)
            ctx.set(dut.i_record.payload, {"index": index, "emit": index & 1})
            history = [index * 7 + 3] + history[:-1]
            if history[latency] is not None:
                ctx.set(dut.i_data, history[latency])
            _, _, ready = await ctx.tick().sample(dut.i_record.ready)
            if offer and ready:
                taken.append(index)
                index += 1
        ctx.set(dut.i_record.valid, 0)
        for _ in range(latency + 1):  # the kernel's pipeline keeps running
            history = [0] + history[:-1]
            if history[latency] is not None:
                ctx.set(dut.i_data, history[latency])
            await ctx.tick()

    async def reader(ctx):
        cycles = 0
        while len(left) < count:
            ready = rng.random() >= busy
            ctx.set(dut.o_comp.ready, ready)
            _, _, valid, payload = await ctx.tick().sample(dut.o_comp.valid, dut.o_comp.payload)
            if valid and ready:
                left.append((payload.index, payload.emit, payload.data, cycles))
            cycles += 1

    checked = []

    async def lookahead(ctx):
        previous = None
        async for _, _, valid, payload, ahead in ctx.tick().sample(
                dut.o_comp.valid, dut.o_comp.payload, dut.o_next if registered else dut.o_comp.valid):
            if valid and previous is not None:
                checked.append(all(getattr(payload, name) == getattr(previous, name) for name in registered))
            previous = ahead

    sim = Simulator(dut)
    sim.add_clock(1e-8)
    sim.add_testbench(writer)
    sim.add_testbench(reader)
    sim.add_process(lookahead)
    sim.run()
    assert [(i, e, d) for i, e, d, _ in left] == [(i, i & 1, i * 7 + 3) for i in range(count)]
    assert all(checked) and len(checked) >= count
    if not busy:
        cycles = [c for *_, c in left]
        assert cycles == list(range(cycles[0], cycles[0] + count)), "one computation per cycle"


def test_depth_and_latency_must_make_sense():
    with pytest.raises(ValueError, match="Latency"):
        DecidedQueue(RECORD, data_width=4, latency=-1)


@pytest.mark.parametrize("latency", [0, 1, 2, 3])
@pytest.mark.parametrize("staged", [False, True])
def test_latency_and_room_are_the_throughput_bound_s(latency, staged):
    """The cycles gen/analysis/throughput.py takes from hdl/timing.py: a computation decided at cycle t
    leaves at t + 1 + latency for an always-ready reader, and a stalled reader lets the queue take
    DECIDED + latency computations before its room is gone."""
    from sfdf.hdl.node import DECIDED

    dut = DecidedQueue(RECORD, data_width=16, latency=latency, depth=DECIDED, staged=staged)
    seen = {}

    async def bench(ctx):
        ctx.set(dut.o_comp.ready, 1)
        ctx.set(dut.i_record.valid, 1)
        ctx.set(dut.i_record.payload, {"index": 5, "emit": 0})
        await ctx.tick()  # taken at cycle 0
        ctx.set(dut.i_record.valid, 0)
        for cycle in range(1, 8):
            _, _, valid = await ctx.tick().sample(dut.o_comp.valid)  # valid during cycle ``cycle``
            if valid and "leaves" not in seen:
                seen["leaves"] = cycle
        ctx.set(dut.o_comp.ready, 0)
        ctx.set(dut.i_record.valid, 1)
        taken = 0
        for _ in range(3 * (DECIDED + latency)):
            _, _, ready = await ctx.tick().sample(dut.i_record.ready)
            taken += ready
        seen["room"] = taken

    sim = Simulator(dut)
    sim.add_clock(1e-8)
    sim.add_testbench(bench)
    sim.run()
    assert seen == {"leaves": 1 + latency, "room": DECIDED + latency}

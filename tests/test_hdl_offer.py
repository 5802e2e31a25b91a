# amaranth: UnusedElaboratable=no
"""The offer register between a receiver and the join (hdl/offer.py): two slots, and iCE40's one."""

import random

import pytest
from amaranth.sim import Simulator

from sfdf.hdl.dsp import FamilyOnly
from sfdf.hdl.offer import SLOTS, OfferRegister, offer_slots
from sfdf.hdl.traits import PlatformTraits


def _head(index, *, valid=1, is_data=1):
    return {"valid": valid, "index": index, "is_data": is_data, "data": index * 3, "is_msg": 0, "msg": 0, "eos": 0}


def _run(dut, bench):
    sim = Simulator(dut)
    sim.add_clock(1e-8)
    sim.add_testbench(bench)
    sim.run()


def test_offer_register_takes_holds_and_releases():
    """Takes the receiver's offers while its second slot is free, a registered ``take``: two offers wait
    for a stalled join, the join reads the older one, and a consumed offer releases what taking it popped."""
    dut = OfferRegister(index_width=8, data_width=8, payload_width=4)

    async def bench(ctx):
        assert ctx.get(dut.o_take), "an empty register takes the receiver's offer"
        ctx.set(dut.i_head, _head(5))
        ctx.set(dut.i_popped, {"data": 1, "ctrl": 0})
        await ctx.tick()
        ctx.set(dut.i_head, _head(9, is_data=0))  # the receiver's next offer: a dummy, popping nothing
        ctx.set(dut.i_popped, {"data": 0, "ctrl": 0})
        assert ctx.get(dut.o_head.valid) and ctx.get(dut.o_head.index) == 5 and ctx.get(dut.o_head.data) == 15
        assert ctx.get(dut.o_take), "the second slot takes the next offer while the join waits"
        await ctx.tick()
        ctx.set(dut.i_head, _head(12))
        ctx.set(dut.i_popped, {"data": 1, "ctrl": 0})
        assert ctx.get(dut.o_head.index) == 5, "the older offer stays at the join"
        assert not ctx.get(dut.o_take), "both slots full: the receiver waits"
        ctx.set(dut.i_consume, 1)
        assert not ctx.get(dut.o_take), "take is a register: consuming frees a slot only on the next cycle"
        assert ctx.get(dut.o_release.data) and not ctx.get(dut.o_release.ctrl)
        await ctx.tick()
        assert ctx.get(dut.o_head.index) == 9 and not ctx.get(dut.o_head.is_data)
        assert ctx.get(dut.o_take) and not ctx.get(dut.o_release.data), "a dummy held no token"
        await ctx.tick()  # 9 consumed, 12 taken straight into the join's slot
        assert ctx.get(dut.o_head.index) == 12 and ctx.get(dut.o_release.data)
        ctx.set(dut.i_head, _head(0, valid=0))
        await ctx.tick()
        ctx.set(dut.i_consume, 0)
        assert not ctx.get(dut.o_head.valid) and ctx.get(dut.o_take)

    _run(dut, bench)


def test_one_slot_takes_in_the_cycle_the_join_consumes():
    """One slot: the receiver's offer is taken whenever the join's slot is free after this cycle (empty, or
    consumed now: ``take`` follows the consumption), and the spare slot never holds one."""
    dut = OfferRegister(index_width=8, data_width=8, payload_width=4, slots=1)

    async def bench(ctx):
        assert ctx.get(dut.o_take), "an empty register takes the receiver's offer"
        ctx.set(dut.i_head, _head(5))
        ctx.set(dut.i_popped, {"data": 1, "ctrl": 0})
        await ctx.tick()
        ctx.set(dut.i_head, _head(9))
        assert ctx.get(dut.o_head.index) == 5 and not ctx.get(dut.o_spare.valid)
        assert not ctx.get(dut.o_take), "the slot is full and the join waits: the receiver waits"
        await ctx.tick()
        assert ctx.get(dut.o_head.index) == 5
        ctx.set(dut.i_consume, 1)
        assert ctx.get(dut.o_take), "the join consumes: the next offer is taken in the same cycle"
        assert ctx.get(dut.o_release.data)
        await ctx.tick()
        assert ctx.get(dut.o_head.index) == 9 and not ctx.get(dut.o_spare.valid)

    _run(dut, bench)


def test_offer_slots_by_platform():
    """Two slots on a pipelined platform (generic Verilog, ECP5); on iCE40 one for a join of two or more
    inputs, none for one input."""
    generic, ecp5, ice40 = (PlatformTraits.of(p) for p in (None, FamilyOnly("ecp5"), FamilyOnly("ice40")))
    assert [offer_slots(n, generic) for n in (1, 2, 3)] == [SLOTS] * 3
    assert [offer_slots(n, ecp5) for n in (1, 2)] == [SLOTS] * 2
    assert [offer_slots(n, ice40) for n in (1, 2, 3)] == [0, 1, 1]
    assert offer_slots(2, generic, registered=False) == 0
    with pytest.raises(ValueError, match="1 or 2 offers, not 3"):
        OfferRegister(index_width=8, data_width=8, payload_width=4, slots=3)


@pytest.mark.parametrize("slots", [SLOTS, 1])
@pytest.mark.parametrize("seed", range(3))
def test_offers_reach_the_join_in_order_one_per_cycle(seed, slots):
    """Random offers and a random join: every offer taken reaches the join once, in order, each release
    is the one its offer popped, at most ``slots`` wait, and with a join that always consumes an offer
    taken on one cycle is at the join on the next (one per cycle)."""
    rng = random.Random(seed)
    dut = OfferRegister(index_width=8, data_width=8, payload_width=4, slots=slots)
    taken, seen = [], []

    async def bench(ctx):
        index, offered_last = 0, False
        for cycle in range(400):
            steady = cycle < 100  # the join consumes every cycle
            offering = rng.random() < 0.8
            popped = rng.random() < 0.5
            ctx.set(dut.i_head, _head(index, valid=offering, is_data=popped))
            ctx.set(dut.i_popped, {"data": offering and popped, "ctrl": 0})
            consume = steady or rng.random() < 0.5
            ctx.set(dut.i_consume, consume)
            head = ctx.get(dut.o_head)
            if head.valid and consume:
                seen.append(head.index)
                assert ctx.get(dut.o_release.data) == head.is_data
            if steady and offered_last:
                assert head.valid and head.index == index - 1, "taken on one cycle, at the join on the next"
            offered_last = False
            if offering and ctx.get(dut.o_take):
                taken.append(index)
                offered_last = True
                index += 1
            assert len(taken) - len(seen) <= slots
            await ctx.tick()

    _run(dut, bench)
    assert seen == taken[:len(seen)] and len(taken) - len(seen) <= slots and len(seen) > 200

# amaranth: UnusedElaboratable=no
"""The offer register between a credit receiver and the join (hdl/offer.py)."""

from amaranth.sim import Simulator

from sfdf.hdl.offer import OfferRegister


def _head(index, *, valid=1, is_data=1):
    return {"valid": valid, "index": index, "is_data": is_data, "data": index * 3, "is_msg": 0, "msg": 0, "eos": 0}


def test_offer_register_takes_holds_and_releases():
    """Free: takes every offer. Held: takes nothing until the join consumes, then takes the next offer
    in the same cycle. A consumed offer releases exactly what taking it popped."""
    dut = OfferRegister(index_width=8, data_width=8, payload_width=4)

    async def bench(ctx):
        assert ctx.get(dut.o_take), "an empty register takes the receiver's offer"
        ctx.set(dut.i_head, _head(5))
        ctx.set(dut.i_popped, {"data": 1, "ctrl": 0})
        await ctx.tick()
        ctx.set(dut.i_head, _head(9, is_data=0))  # the receiver's next offer: a dummy, popping nothing
        ctx.set(dut.i_popped, {"data": 0, "ctrl": 0})
        assert ctx.get(dut.o_head.valid) and ctx.get(dut.o_head.index) == 5 and ctx.get(dut.o_head.data) == 15
        assert not ctx.get(dut.o_take), "a held offer waits for the join"
        assert ctx.get(dut.o_release.data) == 0
        await ctx.tick()
        assert ctx.get(dut.o_head.index) == 5, "still held"
        ctx.set(dut.i_consume, 1)
        assert ctx.get(dut.o_take) and ctx.get(dut.o_release.data) and not ctx.get(dut.o_release.ctrl)
        await ctx.tick()
        assert ctx.get(dut.o_head.index) == 9 and not ctx.get(dut.o_head.is_data), "taken as the join consumed"
        assert ctx.get(dut.o_take) and not ctx.get(dut.o_release.data), "a dummy held no token"
        ctx.set(dut.i_head, _head(0, valid=0))
        await ctx.tick()
        ctx.set(dut.i_consume, 0)
        assert not ctx.get(dut.o_head.valid) and ctx.get(dut.o_take)

    sim = Simulator(dut)
    sim.add_clock(1e-8)
    sim.add_testbench(bench)
    sim.run()

"""Live credit's LFSR counts (hdl.stamps): every width a capacity needs has a full period, and the
hardware step is the integer one."""

import pytest
from amaranth.hdl import Module, Signal
from amaranth.sim import Simulator

from sfdf.gen.spec import MAX_CAPACITY
from sfdf.hdl.stamps import STAMP_SEED, stamp_sequence, stamp_step, stamp_step_value
from sfdf.hdl.tokens import stamp_width


@pytest.mark.parametrize("width", range(stamp_width(1), stamp_width(MAX_CAPACITY) + 1))
def test_every_width_steps_through_all_nonzero_states(width):
    states = stamp_sequence(width)
    assert len(states) == (1 << width) - 1
    assert sorted(states) == list(range(1, 1 << width))  # distinct, never 0
    assert stamp_step_value(states[-1], width) == STAMP_SEED
    # a stamp is at most |q| tokens ahead of the pops: the period covers |q| + 1 counts for the largest
    # capacity of this width
    largest = (1 << width) - 2
    assert stamp_width(largest) == width and len(states) >= largest + 1


@pytest.mark.parametrize("width", [2, 6, 17])
def test_the_hardware_step_is_the_integer_step(width):
    m = Module()
    state, stepped = Signal(width), Signal(width)
    m.d.comb += stepped.eq(stamp_step(state))
    sim = Simulator(m)
    seen = []

    async def bench(ctx):
        for value in stamp_sequence(width)[:200]:
            ctx.set(state, value)
            seen.append((value, ctx.get(stepped)))

    sim.add_testbench(bench)
    sim.run()
    assert len(seen) == min(200, (1 << width) - 1)
    assert all(got == stamp_step_value(value, width) for value, got in seen)


def test_a_capacity_needs_a_width_the_table_has():
    with pytest.raises(ValueError, match="Stamp width must be 2..17 bits"):
        stamp_step_value(1, 18)

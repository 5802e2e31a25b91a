# amaranth: UnusedElaboratable=no
"""sfdf.hdl.channels in the Amaranth simulator: exact capacity, order, throughput and ``level``.

Every run has a background monitor that checks, on every cycle, the channel against a naive count of
the transfers: ``level`` equals the count, ``o_stream.valid`` is exactly ``level != 0`` and
``i_stream.ready`` is exactly ``level < capacity or o_stream.ready``. So no test below can pass with
a channel that ever blocks a write it should take, holds ``capacity + 1``, or hides a token.
"""

import random

import pytest
from amaranth import unsigned
from amaranth.hdl import Fragment
from amaranth.lib import data
from amaranth.sim import Simulator

from sfdf.hdl.channels import _LUTRAM_MAX_ROWS, _NO_LUTRAM_MAX_ROWS, ControlChannel, DataChannel
from sfdf.hdl.dsp import FamilyOnly

CAPACITIES = [1, 2, 3, 5, 16, 100]


def _writer(dut, tokens, offer_at, accepted):
    """Offer ``tokens`` in order, ``offer_at(cycle)`` deciding each cycle; log ``(cycle, token)``."""

    async def testbench(ctx):
        pending = list(tokens)
        cycle = 0
        while pending:
            offer = offer_at(cycle)
            ctx.set(dut.i_stream.valid, offer)
            ctx.set(dut.i_stream.payload, pending[0])
            _, _, ready = await ctx.tick().sample(dut.i_stream.ready)
            if offer and ready:
                accepted.append((cycle, pending.pop(0)))
            cycle += 1
        ctx.set(dut.i_stream.valid, 0)

    return testbench


def _reader(dut, count, ready_at, received):
    """Take ``count`` tokens, ``ready_at(cycle)`` deciding each cycle; log ``(cycle, token)``."""

    async def testbench(ctx):
        cycle = 0
        while len(received) < count:
            ready = ready_at(cycle)
            ctx.set(dut.o_stream.ready, ready)
            _, _, valid, payload = await ctx.tick().sample(dut.o_stream.valid, dut.o_stream.payload)
            if ready and valid:
                received.append((cycle, payload))
            cycle += 1
        ctx.set(dut.o_stream.ready, 0)

    return testbench


def _monitor(dut, levels):
    """Check the cycle-exact contract against a naive count; log ``level`` at every edge."""

    async def testbench(ctx):
        count = 0
        signals = (dut.i_stream.valid, dut.i_stream.ready, dut.o_stream.valid, dut.o_stream.ready,
                   dut.level)
        async for _, _, i_valid, i_ready, o_valid, o_ready, level in ctx.tick().sample(*signals):
            assert level == count, f"level {level}, but {count} tokens written and not read"
            assert o_valid == (count != 0), f"o_stream.valid {o_valid} with {count} tokens held"
            expected_ready = count < dut.capacity
            assert i_ready == expected_ready, (
                f"i_stream.ready {i_ready} with {count} of {dut.capacity} held, o_stream.ready {o_ready}")
            count += (i_valid and i_ready) - (o_valid and o_ready)
            levels.append(level)

    return testbench


def _run(dut, tokens, offer_at, ready_at, family=None):
    """Simulate one writer and one reader, ``dut`` elaborated for ``family`` (None: generic Verilog);
    return (accepted, received, levels)."""
    accepted, received, levels = [], [], []
    sim = Simulator(Fragment.get(dut, FamilyOnly(family)) if family else dut)
    sim.add_clock(1e-6)
    sim.add_testbench(_writer(dut, tokens, offer_at, accepted))
    sim.add_testbench(_reader(dut, len(tokens), ready_at, received))
    sim.add_testbench(_monitor(dut, levels), background=True)
    sim.run()
    return accepted, received, levels


def _cycles(log):
    return [cycle for cycle, _ in log]


def _values(log):
    return [value for _, value in log]


def check_capacity(capacity, cls=DataChannel, shape=16, family=None):
    """Back-to-back writes fill exactly ``capacity`` slots; one read frees exactly one."""
    dut = cls(shape, capacity)
    read_cycle = capacity + 3  # the writer has been blocked for 3 cycles by then
    drain_from = read_cycle + 4
    tokens = [(k * 7919 + 1) % (1 << shape) for k in range(capacity + 1)]
    accepted, received, levels = _run(
        dut, tokens, offer_at=lambda cycle: True,
        ready_at=lambda cycle: cycle == read_cycle or cycle >= drain_from, family=family)
    assert _cycles(accepted) == list(range(capacity)) + [read_cycle + 1]  # ready is registered
    assert levels[capacity:read_cycle + 1] == [capacity] * (read_cycle + 1 - capacity)
    assert levels[read_cycle + 1] == capacity - 1
    assert levels[read_cycle + 2:drain_from + 1] == [capacity] * (drain_from - read_cycle - 1)
    assert _cycles(received) == [read_cycle] + list(range(drain_from, drain_from + capacity))
    assert _values(received) == tokens


def check_streaming_from_empty(capacity, count=None, family=None):
    """Always valid, always ready: a token in and a token out every cycle (every other cycle at capacity 1,
    whose registered ready waits for the read), latency one cycle."""
    count = count or 3 * capacity + 20
    dut = DataChannel(16, capacity)
    tokens = list(range(100, 100 + count))
    accepted, received, _ = _run(dut, tokens, offer_at=lambda cycle: True, ready_at=lambda cycle: True,
                                 family=family)
    step = 2 if capacity == 1 else 1
    assert _cycles(accepted) == list(range(0, step * count, step))
    assert _cycles(received) == list(range(1, step * count + 1, step))
    assert _values(received) == tokens


def check_streaming_when_full(capacity, stall=None, family=None):
    """Fill, then read every cycle: ready is registered (``level < capacity``), so the full channel takes
    a write in the cycle after the first read, then one per cycle; at capacity 1 every other cycle."""
    stall = stall or capacity + 2
    count = capacity + 40
    dut = DataChannel(16, capacity)
    tokens = list(range(count))
    accepted, received, levels = _run(
        dut, tokens, offer_at=lambda cycle: True, ready_at=lambda cycle: cycle >= stall, family=family)
    if capacity == 1:
        assert _cycles(accepted) == [0] + [stall + 1 + 2 * k for k in range(count - 1)]
        assert _cycles(received) == [stall + 2 * k for k in range(count)]
    else:
        assert _cycles(accepted) == list(range(capacity)) + list(range(stall + 1, stall + 1 + count - capacity))
        assert _cycles(received) == list(range(stall, stall + count))
        streaming = levels[stall + 1:stall + count - capacity]
        assert streaming == [capacity - 1] * len(streaming)
    assert _values(received) == tokens


def check_random(capacity, offer_rate, ready_rate, seed, cls=DataChannel, count=200, family=None):
    """Random valid and ready: every token delivered once, in order."""
    dut = cls(16, capacity)
    offers, readies = random.Random(seed), random.Random(seed + 1)
    tokens = [random.Random(seed + 2).getrandbits(16) for _ in range(count)]
    accepted, received, levels = _run(
        dut, tokens, offer_at=lambda cycle: offers.random() < offer_rate,
        ready_at=lambda cycle: readies.random() < ready_rate, family=family)
    assert _values(accepted) == tokens
    assert _values(received) == tokens
    assert max(levels) <= capacity


@pytest.mark.parametrize("capacity", CAPACITIES)
def test_capacity_exact(capacity):
    check_capacity(capacity)


@pytest.mark.parametrize("capacity", CAPACITIES)
def test_streaming_from_empty(capacity):
    check_streaming_from_empty(capacity)


@pytest.mark.parametrize("capacity", CAPACITIES)
def test_streaming_when_full(capacity):
    check_streaming_when_full(capacity)


@pytest.mark.parametrize("capacity", CAPACITIES)
def test_random_backpressure(capacity):
    check_random(capacity, offer_rate=0.8, ready_rate=0.5, seed=capacity)


@pytest.mark.parametrize("capacity", CAPACITIES)
def test_random_slow_writer(capacity):
    check_random(capacity, offer_rate=0.3, ready_rate=0.9, seed=100 + capacity)


RATES = [(0.95, 0.95), (0.95, 0.6), (0.6, 0.95), (0.5, 0.5)]


@pytest.mark.parametrize("capacity", [2, 3, 5, 17, _LUTRAM_MAX_ROWS + 1])
@pytest.mark.parametrize(("offer_rate", "ready_rate"), RATES)
def test_lutram_storage_random(capacity, offer_rate, ready_rate):
    """The head register in front of LUT RAM rows (one row at capacity 2) under every mix of rates."""
    check_random(capacity, offer_rate, ready_rate, seed=capacity * 1000 + int(100 * offer_rate + ready_rate),
                 count=400)


@pytest.mark.parametrize("capacity", [_LUTRAM_MAX_ROWS + 2, _LUTRAM_MAX_ROWS + 9])
@pytest.mark.parametrize(("offer_rate", "ready_rate"), RATES)
def test_block_storage_random(capacity, offer_rate, ready_rate):
    """The block-RAM channel's output registers under every mix of rates: order, exact level, and the
    head valid exactly while tokens are held (the monitor's checks)."""
    check_random(capacity, offer_rate, ready_rate, seed=capacity * 1000 + int(100 * offer_rate + ready_rate),
                 count=400)


#: iCE40's block-RAM channels (beyond its few rows of registers): the RAM's output register is the head
ICE40_BLOCK = [_NO_LUTRAM_MAX_ROWS + 2, 16, 33]


@pytest.mark.parametrize("capacity", ICE40_BLOCK)
@pytest.mark.parametrize(("offer_rate", "ready_rate"), RATES)
def test_block_head_storage_random(capacity, offer_rate, ready_rate):
    """iCE40's block-RAM channel, its head the RAM's output register beside a bypass register, under every
    mix of rates: order, exact level, the head valid exactly while tokens are held."""
    check_random(capacity, offer_rate, ready_rate, seed=capacity * 1000 + int(100 * offer_rate + ready_rate),
                 count=400, family="ice40")


@pytest.mark.parametrize("capacity", ICE40_BLOCK)
def test_block_head_storage_cycles(capacity):
    """The same cycles as every other channel: exact capacity, a token per cycle from empty and when full."""
    check_capacity(capacity, family="ice40")
    check_streaming_from_empty(capacity, family="ice40")
    check_streaming_when_full(capacity, family="ice40")


def test_capacity_exact_at_register_boundary():
    check_capacity(2)


def test_capacity_exact_at_block_ram_boundary():
    check_capacity(_LUTRAM_MAX_ROWS + 1)
    check_capacity(_LUTRAM_MAX_ROWS + 2)


def test_capacity_exact_without_payload():
    check_capacity(5, shape=0)


def test_control_channel_capacity():
    check_capacity(3, cls=ControlChannel)


def test_control_channel_random():
    check_random(7, offer_rate=0.6, ready_rate=0.6, seed=7, cls=ControlChannel)


def test_struct_payload_order():
    layout = data.StructLayout({"index": 12, "credit": 4, "dummy": 1})
    dut = ControlChannel(layout, 9)
    rng = random.Random(3)
    tokens = [{"index": k, "credit": rng.getrandbits(4), "dummy": rng.getrandbits(1)} for k in range(60)]
    _, received, _ = _run(dut, tokens, offer_at=lambda cycle: rng.random() < 0.7,
                          ready_at=lambda cycle: rng.random() < 0.6)
    assert [(t.index, t.credit, t.dummy) for t in _values(received)] == [
        (t["index"], t["credit"], t["dummy"]) for t in tokens]


@pytest.mark.parametrize("capacity", [1, 2, 5, 16])
def test_signature(capacity):
    dut = DataChannel(unsigned(10), capacity)
    assert dut.capacity == capacity
    assert dut.i_stream.payload.shape() == unsigned(10)
    assert dut.level.shape() == unsigned(capacity.bit_length())
    assert isinstance(ControlChannel(8, capacity), DataChannel)


@pytest.mark.parametrize("capacity", [0, -3, 2.5, True, "4", None])
def test_capacity_must_be_positive_integer(capacity):
    with pytest.raises(TypeError) as excinfo:
        DataChannel(8, capacity)
    assert str(excinfo.value) == f"Channel capacity must be a positive integer, not {capacity!r}"


def test_control_capacity_must_be_positive_integer():
    with pytest.raises(TypeError) as excinfo:
        ControlChannel(8, 0)
    assert str(excinfo.value) == "Channel capacity must be a positive integer, not 0"


def test_lutram_rows_by_family():
    """iCE40 has no LUT RAM: its channels go to block RAM beyond a few rows; elsewhere LUT RAM."""
    from types import SimpleNamespace

    from sfdf.hdl.channels import lutram_rows
    from sfdf.hdl.traits import PlatformTraits

    assert lutram_rows(PlatformTraits.of(SimpleNamespace(family="iCE40"))) == 4
    assert lutram_rows(PlatformTraits.of(SimpleNamespace(family="ecp5"))) == _LUTRAM_MAX_ROWS
    assert lutram_rows(PlatformTraits.of(None)) == _LUTRAM_MAX_ROWS


@pytest.mark.parametrize("capacity", [1, 2, 3, 16, 100])
def test_release_counts_the_held_token(capacity):
    """With ``release``, a token read stays in the count of room until released (an offer register,
    hdl/offer.py): ``i_stream.ready`` is exactly ``level + held < capacity`` under random traffic, and
    every token arrives once, in order."""
    dut = DataChannel(16, capacity, release=True)
    rng = random.Random(capacity)
    tokens = [rng.getrandbits(16) for _ in range(150)]
    accepted, received = [], []

    async def reader(ctx):
        holding = False
        while len(received) < len(tokens):
            release = holding and rng.random() < 0.5
            ready = (not holding or release) and rng.random() < 0.7
            ctx.set(dut.i_release, release)
            ctx.set(dut.o_stream.ready, ready)
            _, _, valid, payload = await ctx.tick().sample(dut.o_stream.valid, dut.o_stream.payload)
            holding = holding and not release
            if ready and valid:
                received.append(payload)
                holding = True
        ctx.set(dut.o_stream.ready, 0)

    async def monitor(ctx):
        count = held = 0
        signals = (dut.i_stream.valid, dut.i_stream.ready, dut.o_stream.valid, dut.o_stream.ready,
                   dut.level, dut.held, dut.i_release)
        async for _, _, i_valid, i_ready, o_valid, o_ready, level, held_out, release in ctx.tick().sample(*signals):
            assert (level, held_out) == (count, held)
            assert o_valid == (count != 0)
            assert i_ready == (count + held < capacity), f"ready {i_ready} with {count} + {held} of {capacity}"
            read = o_valid and o_ready
            held = (held and not release) or read
            count += (i_valid and i_ready) - read

    sim = Simulator(dut)
    sim.add_clock(1e-6)
    sim.add_testbench(_writer(dut, tokens, lambda cycle: rng.random() < 0.8, accepted))
    sim.add_testbench(reader)
    sim.add_testbench(monitor, background=True)
    sim.run()
    assert received == tokens


@pytest.mark.parametrize("capacity", [2, 3, 5, 17])
def test_ahead_is_next_cycles_valid_and_head(capacity):
    """``ahead``: ``o_ahead`` in every cycle is what ``o_stream.valid`` and the named head field are in the
    next, under random writes and reads (a live-credit receiver's ``due`` a cycle ahead, hdl/counter.py)."""
    layout = data.StructLayout({"quiet": 1, "index": 8})
    dut = DataChannel(layout, capacity, ahead=("quiet",))
    rng = random.Random(capacity)
    tokens = [{"quiet": rng.getrandbits(1), "index": k % 256} for k in range(200)]
    accepted, received, checked = [], [], []

    async def monitor(ctx):
        expected = None
        signals = (dut.o_stream.valid, dut.o_stream.payload.quiet, dut.o_ahead.valid, dut.o_ahead.quiet)
        async for _, _, valid, quiet, ahead_valid, ahead_quiet in ctx.tick().sample(*signals):
            if expected is not None:
                assert valid == expected[0], "o_ahead.valid is next cycle's valid"
                assert not valid or quiet == expected[1], "o_ahead.quiet is next cycle's head quiet"
                checked.append(valid)
            expected = (ahead_valid, ahead_quiet)

    sim = Simulator(dut)
    sim.add_clock(1e-6)
    sim.add_testbench(_writer(dut, tokens, lambda cycle: rng.random() < 0.6, accepted))
    sim.add_testbench(_reader(dut, len(tokens), lambda cycle: rng.random() < 0.6, received))
    sim.add_testbench(monitor, background=True)
    sim.run()
    assert [token.quiet for _, token in received] == [token["quiet"] for token in tokens]
    assert any(checked) and not all(checked)


def test_ahead_needs_a_capacity_of_two_or_more():
    with pytest.raises(ValueError, match="capacity of 2 or more"):
        DataChannel(data.StructLayout({"quiet": 1}), 1, ahead=("quiet",))

"""SFDFJoin and the kernels in the Amaranth simulator, against Python models."""

import random

import pytest
from amaranth.sim import Simulator
from graphs import ports

from sfdf.gen.kernels import filter_threshold, lfsr_seed, lfsr_step
from sfdf.hdl.dsp import RegisteredMultiplier
from sfdf.hdl.join import SFDFJoin
from sfdf.hdl.kernels import RandomFilter, VarianceSum


def simulate(dut, bench):
    sim = Simulator(dut)
    sim.add_clock(1e-8)
    sim.add_testbench(bench)
    sim.run()


def check_join(inputs, width, steps, seed):
    """Random heads each cycle within ``2^(w-1)`` after ``current`` (docs/semantics.md's index-width rule);
    the join's choice equals the least live index after ``current``."""
    rng = random.Random(seed)
    dut = SFDFJoin(inputs=inputs, index_width=width, data_width=8, payload_width=4)
    mod = 1 << width

    async def bench(ctx):
        current = 0
        for _ in range(steps):
            heads = []
            for _ in range(inputs):
                valid = rng.random() < 0.9
                eos = rng.random() < 0.1
                heads.append({"valid": valid, "index": (current + rng.randint(1, mod // 2 - 1)) % mod,
                              "is_data": rng.random() < 0.7, "data": rng.randrange(256), "eos": eos})
            commit = rng.random() < 0.8
            ctx.set(dut.i_heads, heads)
            ctx.set(dut.i_commit, commit)
            live = [h for h in heads if h["valid"] and not h["eos"]]
            ready = all(h["valid"] for h in heads) and bool(live)
            assert ctx.get(dut.o_ready) == ready
            assert ctx.get(dut.o_eos) == (all(h["valid"] for h in heads) and not live)
            if ready:
                least = min(live, key=lambda h: (h["index"] - current) % mod)["index"]
                assert ctx.get(dut.o_index) == least
                at = [h["valid"] and not h["eos"] and h["index"] == least for h in heads]
                assert ctx.get(dut.o_mask) == sum((a and h["is_data"]) << k for k, (a, h) in enumerate(zip(at, heads)))
                assert ctx.get(dut.o_consume) == (sum(a << k for k, a in enumerate(at)) if commit else 0)
                if commit:
                    current = least
            await ctx.tick()

    simulate(dut, bench)


@pytest.mark.parametrize("inputs", [1, 2, 3, 5])
def test_join_least_index(inputs):
    check_join(inputs, width=4, steps=400, seed=inputs)  # 4 bits: indices wrap every 16


def test_join_wide_indices():
    check_join(3, width=32, steps=300, seed=9)


def check_filter(inputs, outputs, seed, rate, steps=200, ahead=False):
    rng = random.Random(seed)
    dut = RandomFilter(ports=ports(inputs, outputs, width=16), features={}, seed=seed, rate=rate, ahead=ahead)
    states = [lfsr_seed(seed, j) for j in range(outputs)]
    threshold = filter_threshold(rate)

    async def bench(ctx):
        nonlocal states
        for _ in range(steps):
            payloads = [rng.randrange(1 << 16) for _ in range(inputs)]
            mask = rng.randrange(1, 1 << inputs)  # a data computation: some input present
            step = rng.random() < 0.7
            for k, beat in enumerate(dut.inputs):
                ctx.set(beat.payload, {"present": mask >> k & 1, "data": payloads[k]})
                ctx.set(beat.valid, step)
                assert ctx.get(beat.ready)  # a kernel of fixed timing always takes its beats
            total = sum(p for k, p in enumerate(payloads) if mask >> k & 1) % (1 << 16)
            stepped = [lfsr_step(s) for s in states]
            emits = sum(((s >> 16) >= threshold) << j for j, s in enumerate(stepped))
            assert ctx.get(dut.emit_early) == emits
            for j, out in enumerate(dut.outputs):
                assert (ctx.get(out.valid), ctx.get(out.payload.data), ctx.get(out.payload.emit)) == \
                    (step, total, emits >> j & 1)
            if step:  # only a computation's beats step the LFSRs (docs/semantics.md)
                states = stepped
            await ctx.tick()

    simulate(dut, bench)


@pytest.mark.parametrize("ahead", [False, True])
@pytest.mark.parametrize("inputs,outputs,seed,rate", [
    (1, 1, 1, 0.0), (1, 2, 7, 0.9), (2, 3, 12345, 0.5), (3, 1, 0, 1.0), (2, 2, 2**20, 0.25),
])
def test_random_filter_matches_the_model(inputs, outputs, seed, rate, ahead):
    """``ahead``: the decisions from registers (a single-stage node's kernel), the same in every cycle."""
    check_filter(inputs, outputs, seed, rate, ahead=ahead)


def test_threshold_is_pythons_round():
    assert filter_threshold(0.5) == 32768
    assert filter_threshold(1.0) == 65536
    assert filter_threshold(0.75 / 65536 * 2) == 2  # 1.5 rounds to even
    with pytest.raises(ValueError, match=r"Filter rate must be in \[0, 1\], not 1.5"):
        filter_threshold(1.5)


def test_registered_multiplier_answers_two_cycles_later():
    dut = RegisteredMultiplier(16, 16)
    rng = random.Random(5)
    operands = [(rng.randrange(1 << 16), rng.randrange(1 << 16)) for _ in range(50)]

    async def bench(ctx):
        for t, (a, b) in enumerate(operands):
            ctx.set(dut.i_a, a)
            ctx.set(dut.i_b, b)
            await ctx.tick()
            if t >= 1:
                a2, b2 = operands[t - 1]
                assert ctx.get(dut.o_product) == a2 * b2   # the operands of the cycle before the last

    simulate(dut, bench)


@pytest.mark.parametrize("pipelined", [True, False])
@pytest.mark.parametrize("squares", [False, True])
def test_variance_sum_pipeline_matches_the_sum(squares, pipelined):
    """Each cycle's computation's result ``latency`` cycles later: the frame's sum so far plus its term,
    the accumulator advancing only on a stepped data computation and clearing after a word marked last.
    Unpipelined (iCE40, sfdf.hdl.dsp.pipelined) the result comes in the computation's own cycle."""
    width = 32 + 16 if squares else 16 + 16
    dut = VarianceSum(squares=squares, ports=ports(width=17, outputs=(("o", width),), index_width=16), features={},
                      pipelined=pipelined)
    assert dut.latency == ((2 if squares else 1) if pipelined else 0)
    (beat,), (out,) = dut.inputs, dut.outputs
    rng = random.Random(11)
    acc, expected = 0, []
    for _ in range(120):
        pixel, last, step = rng.randrange(1 << 16), rng.random() < 0.2, rng.random() < 0.6
        term = pixel * pixel if squares else pixel
        expected.append(((pixel | last << 16, step), (acc + term) % (1 << width), last))
        if step:
            acc = 0 if last else acc + term

    async def bench(ctx):
        for t in range(len(expected) + dut.latency):
            if t < len(expected):
                (payload, step), _, last = expected[t]
                ctx.set(beat.payload, {"present": 1, "data": payload})
                ctx.set(beat.valid, step)
                assert ctx.get(dut.emit_early) == last  # the word's mark, as it is offered
            if t >= dut.latency:
                (_, step), value, last = expected[t - dut.latency]
                assert ctx.get(out.valid) == step
                if step:
                    assert (ctx.get(out.payload.data), ctx.get(out.payload.emit)) == (value, last)
            await ctx.tick()

    simulate(dut, bench)

"""InbandSender -> DataChannel -> InbandReceiver -> join in the Amaranth simulator, against the reference
model's in-band sender (002 Alg. 2, 5; docs/semantics.md, "Inband mode", "Channels and output buffers")."""

import gc
import itertools
import random
import types
import warnings

import pytest
from amaranth.hdl import Module, Mux
from amaranth.lib import stream, wiring
from amaranth.lib.wiring import In, Out
from amaranth.sim import Simulator

from sfdf.gen.model import Edge as SpecEdge
from sfdf.gen.refmodel.channels import DATA, DUMMY, EOS, FLAGGED
from sfdf.gen.refmodel.inband import InbandNode, PropagationNode
from sfdf.gen.refmodel.link import Link
from sfdf.hdl.channels import DataChannel
from sfdf.hdl.gap import delta_width
from sfdf.hdl.inband import InbandReceiver, InbandSender, flushed_width
from sfdf.hdl.join import SFDFJoin
from sfdf.hdl.tokens import computation_layout, inband_token_layout

DW, PW = 16, 8


class Edge(wiring.Component):
    """Sender -> channel of exactly ``|q|`` tokens -> receiver -> a single-input join."""

    def __init__(self, *, q, ob, interval, algorithm, iw, inputs, mask):
        self.q, self.iw, self.buffered = q, iw, ob > 1
        self.delta_width = delta_width([interval])
        self.tx_args = {"capacity": q, "output_buffer": ob, "interval": interval, "algorithm": algorithm,
                        "index_width": iw, "data_width": DW, "payload_width": PW, "inputs": inputs,
                        "propagate_mask": mask, "delta_width": self.delta_width}
        super().__init__({
            "i_comp": In(stream.Signature(computation_layout(iw, DW, PW, self.delta_width))),
            "i_delta_after": In(self.delta_width),  # the next computation's delta, once this one commits
            "i_dummy_in": In(inputs),
            "o_flushed": Out(flushed_width(q)),
            "i_commit": In(1),
            "o_ready": Out(1),
            "o_eos": Out(1),
            "o_index": Out(iw),
            "o_data": Out(DW),
            "o_is_data": Out(1),
            "o_msg": Out(PW),
            "o_is_msg": Out(1),
            "o_dummy": Out(1),
            "o_head_valid": Out(1),
        })

    def elaborate(self, platform):
        m = Module()
        tx = m.submodules.tx = InbandSender(**self.tx_args)
        fifo = m.submodules.fifo = DataChannel(inband_token_layout(self.iw, DW, PW), self.q)
        rx = m.submodules.rx = InbandReceiver(capacity=self.q, index_width=self.iw, data_width=DW, payload_width=PW,
                                              buffered=self.buffered)
        join = m.submodules.join = SFDFJoin(inputs=1, index_width=self.iw, data_width=DW, payload_width=PW)
        wiring.connect(m, wiring.flipped(self.i_comp), tx.i_comp)
        if self.tx_args["interval"] is not None:  # next cycle's delta, as a node's decided queue gives it
            commit = self.i_comp.valid & tx.i_comp.ready
            m.d.comb += tx.i_delta_next.eq(Mux(commit, self.i_delta_after, self.i_comp.payload.delta))
        wiring.connect(m, tx.o_token, fifo.i_stream)
        wiring.connect(m, fifo.o_stream, rx.i_token)
        if self.buffered:  # without an output buffer no count is kept: o_flushed stays 0
            m.d.comb += [rx.i_flushed.eq(tx.o_flushed), self.o_flushed.eq(tx.o_flushed)]
        m.d.comb += [
            tx.i_dummy_in.eq(self.i_dummy_in),
            join.i_heads[0].eq(rx.o_head),
            rx.i_consume.eq(join.o_consume[0]),
            join.i_commit.eq(self.i_commit),
            self.o_ready.eq(join.o_ready),
            self.o_eos.eq(join.o_eos),
            self.o_index.eq(join.o_index),
            self.o_data.eq(join.o_payloads[0]),
            self.o_is_data.eq(join.o_mask[0]),
            self.o_msg.eq(rx.o_head.msg),  # also on EOS, which the join does not present
            self.o_is_msg.eq(rx.o_head.is_msg),
            self.o_dummy.eq(rx.o_head.dummy),
            self.o_head_valid.eq(rx.o_head.valid),
        ]
        return m


def make_plan(rng, n, *, filter_rate, msg_rate, dummy_rate, skip_rate, inputs, eos_msg):
    """``n`` computations ``(index, emit, data, msg or None, dummy_in bits)``, then EOS (index None)."""
    plan, i = [], 0
    for _ in range(n):
        i += 1 + (rng.randrange(1, 4) if rng.random() < skip_rate else 0)  # a node skips indices no input has
        bits = sum(1 << k for k in range(inputs) if rng.random() < dummy_rate)
        msg = rng.randrange(1 << PW) if rng.random() < msg_rate else None
        plan.append((i, rng.random() >= filter_rate, rng.randrange(1 << DW), msg, bits))
    plan.append((None, False, 0, rng.randrange(1 << PW) if eos_msg else None, 0))
    return plan


def model_run(plan, *, ob, interval, algorithm, mask):
    """The reference model's sender on one channel (gen.refmodel.inband), never blocked.

    Returns the channel's tokens in order and, after each computation, how many are pushed and visible.
    """
    propagation = algorithm == "propagation"
    edge = SpecEdge(name="u_v", src="u", dst="v", capacity=len(plan) + ob + 1, output_buffer=ob, interval=interval,
                    width=DW)
    link = Link(edge, 0, False, not propagation, DW)
    link.dst = types.SimpleNamespace(waiting=None, also_waiting=None)  # a receiver that never blocks
    node = (PropagationNode if propagation else InbandNode)("u", 0, [], [link], None)
    link.src = node
    pushed, visible = [], []
    for i, emit, value, msg, bits in plan:
        messages = () if msg is None else (msg,)
        if i is None:
            node._emit_end(messages)
        else:
            node._emit(i, [value], [emit], messages, {0} if bits & mask else None)
        while node.pending:
            action = node.pending.popleft()
            action[0](node, action)
        pushed.append(len(link.data.queue))
        visible.append(link.data.visible)
    return list(link.data.queue), pushed, visible


def as_seen(token, iw):
    """A model token as the join sees it: ``(index, data or None, dummy flag, message or None)``."""
    kind, index, payload, messages = token
    msg = messages[0] if messages else None
    if kind == EOS:
        return ("eos", msg)
    return (index % (1 << iw), payload if kind in (DATA, FLAGGED) else None, kind in (FLAGGED, DUMMY), msg)


def run_edge(plan, *, q, ob, interval, algorithm, iw, inputs, mask, consume_rate, idle_rate, seed):
    """Drive ``plan`` into one edge; record commits, ``o_flushed`` after each, and what the join saw when."""
    dut = Edge(q=q, ob=ob, interval=interval, algorithm=algorithm, iw=iw, inputs=inputs, mask=mask)
    rng = random.Random(seed)
    rec = {"commit_tick": [], "flushed": [], "seen": [], "first_seen": [], "ready_ignores_valid": True}
    limit = 20 * len(plan) + 200

    top = (1 << dut.delta_width) - 1
    indices = [0] + [i for i, *_ in plan if i is not None]
    # the step ``delta`` of each computation from the node's previous one (unwrapped), saturated; EOS's is 1
    deltas = [min(b - a, top) for a, b in itertools.pairwise(indices)] + [1]

    async def producer(ctx):
        tick = 0
        for k, (i, emit, value, msg, bits) in enumerate(plan):
            ctx.set(dut.i_comp.payload, {"index": 0 if i is None else i % (1 << iw), "delta": deltas[k],
                                         "emit": emit, "data": value, "msg_valid": msg is not None,
                                         "msg": msg or 0, "eos": i is None})
            ctx.set(dut.i_delta_after, deltas[min(k + 1, len(plan) - 1)])
            # as a node's decided queue, nothing is offered in the first cycle after the reset
            while tick == 0 or rng.random() < idle_rate:
                ctx.set(dut.i_comp.valid, 0)
                await ctx.tick()
                tick += 1
            ctx.set(dut.i_dummy_in, bits)
            while True:
                ctx.set(dut.i_comp.valid, 0)
                idle_ready = ctx.get(dut.i_comp.ready)
                ctx.set(dut.i_comp.valid, 1)
                rec["ready_ignores_valid"] &= idle_ready == ctx.get(dut.i_comp.ready)
                _, _, ready = await ctx.tick().sample(dut.i_comp.ready)  # after the consumer's choice
                tick += 1
                if ready:
                    break
                assert tick < limit, "the sender never committed: the edge deadlocked"
            rec["commit_tick"].append(tick)
            rec["flushed"].append(ctx.get(dut.o_flushed))
        ctx.set(dut.i_comp.valid, 0)

    async def consumer(ctx):
        tick = 0
        while True:
            take = rng.random() < consume_rate
            ctx.set(dut.i_commit, take)
            if ctx.get(dut.o_head_valid) and len(rec["first_seen"]) == len(rec["seen"]):
                rec["first_seen"].append(tick)
            if ctx.get(dut.o_eos):
                rec["seen"].append(("eos", ctx.get(dut.o_msg) if ctx.get(dut.o_is_msg) else None))
                return
            if take and ctx.get(dut.o_ready):
                rec["seen"].append((ctx.get(dut.o_index), ctx.get(dut.o_data) if ctx.get(dut.o_is_data) else None,
                                    bool(ctx.get(dut.o_dummy)), ctx.get(dut.o_msg) if ctx.get(dut.o_is_msg) else None))
            await ctx.tick()
            tick += 1
            assert tick < limit, "the receiver never saw EOS: the edge deadlocked"

    sim = Simulator(dut)
    sim.add_clock(1e-8)
    sim.add_testbench(producer)
    sim.add_testbench(consumer)
    sim.run()
    return rec


def check_edge(*, n=150, q=4, ob=0, interval=None, algorithm="nonpropagation", iw=16, inputs=1, mask=None,
               filter_rate=0.0, msg_rate=0.0, dummy_rate=0.0, skip_rate=0.0, eos_msg=False, consume_rate=0.6,
               idle_rate=0.0, seed=1):
    """Run one edge; the receiver must see the model's tokens, each exactly when the model makes it visible."""
    mask = (1 << inputs) - 1 if mask is None else mask
    plan = make_plan(random.Random(seed), n, filter_rate=filter_rate, msg_rate=msg_rate, dummy_rate=dummy_rate,
                     skip_rate=skip_rate, inputs=inputs, eos_msg=eos_msg)
    tokens, pushed, visible = model_run(plan, ob=ob, interval=interval, algorithm=algorithm, mask=mask)
    rec = run_edge(plan, q=q, ob=ob, interval=interval, algorithm=algorithm, iw=iw, inputs=inputs, mask=mask,
                   consume_rate=consume_rate, idle_rate=idle_rate, seed=seed + 1000)
    assert rec["ready_ignores_valid"], "i_comp.ready must not depend on i_comp.valid"
    # the same token stream, EOS last (so at most one token per index: the model never sends two)
    assert rec["seen"] == [as_seen(t, iw) for t in tokens]
    live = [t[0] for t in rec["seen"][:-1]]
    assert all(0 < (b - a) % (1 << iw) < 1 << (iw - 1) for a, b in itertools.pairwise(live))
    # visibility: after each computation the sender has made exactly the model's tokens visible (without
    # an output buffer every token is visible at once, and no count is kept)
    if ob > 1:
        width = flushed_width(q)
        assert rec["flushed"] == [v % (1 << width) for v in visible]
    else:
        assert visible == pushed and rec["flushed"] == [0] * len(visible)
    # ... and the receiver offers token k only from the cycle after the computation that made it visible,
    # at once when nothing is ahead of it and the join always consumes
    made_visible = [next(c for c, v in enumerate(visible) if v > k) for k in range(len(tokens))]
    for k, first in enumerate(rec["first_seen"]):
        due = rec["commit_tick"][made_visible[k]]
        assert first >= due, f"token {k} {tokens[k]} offered at cycle {first}, visible only from {due}"
        if consume_rate == 1.0:
            assert first == max(due, rec["first_seen"][k - 1] + 1 if k else 0), (k, tokens[k])
    if idle_rate == 0:  # a computation that pushes nothing commits at once, even into a full channel
        ticks = [1, *rec["commit_tick"]]  # the first computation is offered in the second cycle
        silent = [k for k in range(len(plan)) if pushed[k] == (pushed[k - 1] if k else 0)]
        assert all(ticks[k + 1] == ticks[k] + 1 for k in silent)
    return types.SimpleNamespace(plan=plan, tokens=tokens, visible=visible, rec=rec)


def kinds(tokens):
    """``(data, flagged, dummies, messages on data, messages on dummies)`` counts."""
    return (sum(t[0] == DATA for t in tokens), sum(t[0] == FLAGGED for t in tokens),
            sum(t[0] == DUMMY for t in tokens), sum(t[0] in (DATA, FLAGGED) and bool(t[3]) for t in tokens),
            sum(t[0] == DUMMY and bool(t[3]) for t in tokens))


# -- Non-Propagation (002 Alg. 5) ------------------------------------------------------------------------

@pytest.mark.parametrize("filter_rate", [0.0, 0.5, 0.95])
@pytest.mark.parametrize("interval", [1, 3, 8, None])
def test_nonpropagation(interval, filter_rate):
    run = check_edge(interval=interval, filter_rate=filter_rate, skip_rate=0.2, seed=interval or 99)
    _, flagged, dummies, _, _ = kinds(run.tokens)
    assert flagged == 0, "Non-Propagation never flags a data token"
    if interval is None or filter_rate == 0:
        assert dummies == 0, "a dummy only where the interval rule demands visibility and no data is sent"
    elif filter_rate > 0.9:
        assert dummies > 0


def test_naive_is_nonpropagation_with_interval_one():
    """Naive (002 Sec. 3.1): every filtered index sends a dummy, so every index computed has a token."""
    run = check_edge(algorithm="naive", interval=1, filter_rate=0.5, skip_rate=0.2, seed=5)
    assert [t[1] for t in run.tokens] == [i for i, *_ in run.plan[:-1]] + [float("inf")]


@pytest.mark.parametrize("ob", [0, 1, 4])
@pytest.mark.parametrize("interval", [3, None])
def test_nonpropagation_output_buffer(ob, interval):
    check_edge(q=4, ob=ob, interval=interval, filter_rate=0.5, skip_rate=0.1, consume_rate=1.0, seed=ob + 7)


def test_output_buffer_hides_until_full_or_eos():
    """No filtering, no interval: tokens appear in groups of |q|_o; EOS flushes the remainder."""
    run = check_edge(n=30, q=6, ob=4, consume_rate=1.0, seed=3)
    assert run.visible[:-1] == [(k + 1) // 4 * 4 for k in range(30)]
    assert run.visible[-1] == len(run.tokens) == 31


def test_interval_flushes_the_output_buffer():
    """Non-Propagation with |q|_o = |q|: the interval rule, not a full buffer, makes data visible."""
    run = check_edge(n=60, q=8, ob=8, interval=3, consume_rate=1.0, seed=4)
    assert run.visible[:-1] == [(k + 1) // 3 * 3 for k in range(60)]


# -- Propagation (002 Alg. 2) ----------------------------------------------------------------------------

@pytest.mark.parametrize("dummy_rate", [0.0, 0.2])
@pytest.mark.parametrize("interval", [1, 3, 8, None])
def test_propagation(interval, dummy_rate):
    run = check_edge(algorithm="propagation", interval=interval, filter_rate=0.5, dummy_rate=dummy_rate,
                     skip_rate=0.2, seed=(interval or 50) + int(dummy_rate * 10))
    _, flagged, dummies, _, _ = kinds(run.tokens)
    assert (flagged + dummies > 0) == (interval is not None or dummy_rate > 0)


@pytest.mark.parametrize("ob", [0, 1, 4])
def test_propagation_output_buffer(ob):
    check_edge(algorithm="propagation", q=4, ob=ob, interval=8, filter_rate=0.3, dummy_rate=0.05, consume_rate=1.0,
               seed=ob + 20)


def test_propagation_only_within_the_biconnected_component():
    """Dummy flags on inputs 1 and 2 of 3 propagate only through the mask (002 Sec. 3.2)."""
    run = check_edge(algorithm="propagation", interval=None, inputs=3, mask=0b101, filter_rate=0.3,
                     dummy_rate=0.15, seed=11)
    assert sum(t[0] in (FLAGGED, DUMMY) for t in run.tokens) > 0


def test_propagation_without_filtering_flags_data():
    run = check_edge(algorithm="propagation", interval=4, ob=4, q=4, seed=12)
    _, flagged, dummies, _, _ = kinds(run.tokens)
    assert flagged > 0 and dummies == 0


# -- messages, EOS, back-pressure, throughput ---------------------------------------------------------------

@pytest.mark.parametrize("algorithm", ["nonpropagation", "propagation"])
@pytest.mark.parametrize("ob", [0, 4])
def test_messages_ride_on_data_and_forced_dummies(algorithm, ob):
    run = check_edge(algorithm=algorithm, q=4, ob=ob, interval=None, filter_rate=0.5, msg_rate=0.2,
                     eos_msg=True, seed=30 + ob)
    *_, on_data, on_dummies = kinds(run.tokens)
    assert on_data > 0 and on_dummies > 0
    assert run.tokens[-1][0] == EOS and run.tokens[-1][3], "the message owed at EOS rides on EOS"


@pytest.mark.parametrize("q", [1, 2, 5])
def test_back_pressure_and_idle_source(q):
    check_edge(q=q, ob=min(q, 2), interval=2, filter_rate=0.5, msg_rate=0.1, consume_rate=0.3, idle_rate=0.3, seed=q)


def test_indices_wrap():
    """6-bit indices over 200 computations: serial arithmetic in the interval rule."""
    check_edge(n=200, iw=6, interval=5, filter_rate=0.7, skip_rate=0.3, seed=40)
    check_edge(n=200, iw=6, algorithm="propagation", interval=5, filter_rate=0.7, skip_rate=0.3, dummy_rate=0.05,
               seed=41)


@pytest.mark.parametrize(("q", "step"), [(1, 2), (2, 1), (4, 1)])
def test_one_token_per_cycle(q, step):
    """No filtering, no output buffer: one computation and one token per cycle; every other cycle at
    ``|q| = 1``, whose registered ready waits for the read (hdl.channels.DataChannel)."""
    run = check_edge(n=200, q=q, interval=3, consume_rate=1.0, seed=50)
    ticks, seen = run.rec["commit_tick"], run.rec["first_seen"]
    assert ticks[-1] - ticks[0] == step * (len(ticks) - 1)
    assert seen[-1] - seen[0] == step * (len(ticks) - 1)


def test_sender_checks_parameters():
    kw = {"capacity": 4, "index_width": 8, "data_width": 8, "payload_width": 8}
    with warnings.catch_warnings():  # the half-built components are never elaborated, by design
        warnings.simplefilter("ignore")
        with pytest.raises(ValueError, match=r"Output buffer must be an integer in \[0, 4\], not 5"):
            InbandSender(output_buffer=5, interval=1, algorithm="naive", **kw)
        with pytest.raises(ValueError, match="Algorithm must be one of naive, propagation, nonpropagation, "
                                             "not 'credit'"):
            InbandSender(output_buffer=0, interval=1, algorithm="credit", **kw)
        with pytest.raises(TypeError, match="Interval must be an integer >= 0, not -1"):
            InbandSender(output_buffer=0, interval=-1, algorithm="naive", **kw)
        with pytest.raises(ValueError, match=r"Interval must be below 2 \*\* \(index_width - 1\) = 128, not 128"):
            InbandSender(output_buffer=0, interval=128, algorithm="naive", **kw)
        with pytest.raises(ValueError, match="Propagate mask must select among 2 inputs, not 0b100"):
            InbandSender(output_buffer=0, interval=1, algorithm="propagation", inputs=2, propagate_mask=4, **kw)
        with pytest.raises(TypeError, match="Capacity must be an integer >= 1, not 0"):
            InbandReceiver(capacity=0, index_width=8, data_width=8, payload_width=8)
        gc.collect()


@pytest.mark.parametrize("algorithm", ["nonpropagation", "propagation"])
def test_spontaneous_flush_shows_earlier_tokens_only(algorithm):
    """``i_flush`` (verification, 003 Fig. 2): tokens pushed before the cycle become visible, not the
    one pushed with it; a full output buffer still flushes by itself."""
    tx = InbandSender(capacity=8, output_buffer=4, interval=None, algorithm=algorithm, index_width=8,
                      data_width=DW, payload_width=PW, flushable=True)
    seen = []

    async def bench(ctx):
        ctx.set(tx.o_token.ready, 1)
        # (push this cycle?, flush this cycle?) -> o_flushed after the edge
        for push, flush in [(1, 0), (1, 0), (1, 1), (0, 1), (0, 1), (1, 0), (1, 0), (1, 0), (1, 0)]:
            index = len(seen) + 1
            ctx.set(tx.i_comp.valid, push)
            ctx.set(tx.i_comp.payload, {"index": index, "emit": 1, "data": index})
            ctx.set(tx.i_flush, flush)
            await ctx.tick()
            seen.append(ctx.get(tx.o_flushed))

    sim = Simulator(tx)
    sim.add_clock(1e-8)
    sim.add_testbench(bench)
    sim.run()
    assert seen == [0, 0, 2, 3, 3, 3, 3, 3, 7]
    with warnings.catch_warnings():  # never elaborated, by design
        warnings.simplefilter("ignore")
        plain = InbandSender(capacity=8, output_buffer=1, interval=None, algorithm=algorithm, index_width=8,
                             data_width=DW, payload_width=PW, flushable=True)
        assert "i_flush" not in plain.signature.members  # no output buffer, nothing to flush
        assert "o_flushed" not in plain.signature.members  # ... and nothing hidden: no count
        del plain
        gc.collect()

"""One credit-mode edge over real FIFOs in the Amaranth simulator (000 Alg. 1, 2, 4; Thm. 3.1): live credit
(CounterSender + CounterReceiver, the default) and 000's credit messages (CreditSender + CreditReceiver)."""

import gc
import itertools
import random
import warnings

import pytest
from amaranth.hdl import Module
from amaranth.lib import stream, wiring
from amaranth.lib.wiring import In, Out
from amaranth.sim import Simulator

from sfdf.hdl.channels import DataChannel
from sfdf.hdl.counter import CounterReceiver, CounterSender
from sfdf.hdl.credit import CreditReceiver, CreditSender
from sfdf.hdl.gap import delta_width
from sfdf.hdl.tokens import computation_layout, head_layout

IW, DW, PW = 16, 16, 8


class Edge(wiring.Component):
    """Sender -> data FIFO (|q|) and control FIFO (|q'|) -> receiver: one edge of 000 Fig. 2."""

    def __init__(self, q, qc, threshold, heartbeat, live=True):
        self.q, self.qc, self.threshold, self.heartbeat, self.live = q, qc, threshold, heartbeat, live
        self.delta_width = delta_width([heartbeat])
        super().__init__({
            "i_comp": In(stream.Signature(computation_layout(IW, DW, PW, self.delta_width))),
            "o_head": Out(head_layout(IW, DW, PW)),
            "i_consume": In(1),
        })

    def elaborate(self, platform):
        m = Module()
        widths = {"capacity": self.q, "control_capacity": self.qc, "index_width": IW, "data_width": DW, "payload_width": PW}
        if self.live:
            tx = m.submodules.tx = CounterSender(heartbeat=self.heartbeat, delta_width=self.delta_width, **widths)
            rx = m.submodules.rx = CounterReceiver(**widths)
        else:
            tx = m.submodules.tx = CreditSender(threshold=self.threshold, heartbeat=self.heartbeat,
                                                delta_width=self.delta_width, **widths)
            rx = m.submodules.rx = CreditReceiver(**widths)
        # the edge's own exact channels: live credit needs channels that show a write after the same delay
        for name, out, inp, depth in (("data", tx.o_data, rx.i_data, self.q), ("ctrl", tx.o_ctrl, rx.i_ctrl, self.qc)):
            channel = m.submodules[name] = DataChannel(out.payload.shape(), depth)
            wiring.connect(m, out, channel.i_stream)
            wiring.connect(m, channel.o_stream, inp)
        m.d.comb += [rx.i_heartbeat.eq(tx.o_heartbeat), tx.i_heartbeat_clear.eq(rx.o_heartbeat_clear)]
        wiring.connect(m, wiring.flipped(self.i_comp), tx.i_comp)
        m.d.comb += [self.o_head.eq(rx.o_head), rx.i_consume.eq(self.i_consume)]
        return m


def run_edge(*, n=200, q=8, qc=None, threshold=None, heartbeat=None, emit_rate=1.0, msg_rate=0.0,
             consume_rate=1.0, seed=1, idle_tail=40, emits=None, live=True):
    """Drive ``n`` computations (then EOS) through one edge; return what the receiving join saw.

    ``emits``: which computations send a token (cycled), instead of ``emit_rate``."""
    rng = random.Random(seed)
    qc = qc or 2 * 2 * q + 1
    threshold = q - 3 if threshold is None else threshold
    dut = Edge(q, qc, max(0, threshold), heartbeat, live)
    plan = [(i, rng.random() < emit_rate if emits is None else emits[(i - 1) % len(emits)], rng.randrange(1 << DW),
             rng.random() < msg_rate) for i in range(1, n + 1)]
    seen = {"data": [], "dummies": [], "msgs": [], "eos": False, "cycles": 0, "known_before_eos": 0}
    done = {"sent": False}

    async def producer(ctx):
        for i, emit, value, msg in plan:  # consecutive indices: the node's step (delta) is always 1
            ctx.set(dut.i_comp.payload, {"index": i, "delta": 1, "emit": emit, "data": value,
                                         "msg_valid": msg, "msg": i & 0xFF, "eos": 0})
            ctx.set(dut.i_comp.valid, 1)
            await ctx.tick().until(dut.i_comp.ready)
        ctx.set(dut.i_comp.valid, 0)
        for _ in range(idle_tail):  # let heartbeats and credits reach the receiver
            await ctx.tick()
        seen["known_before_eos"] = max([d[0] for d in seen["data"]] + seen["dummies"] + [0])
        ctx.set(dut.i_comp.payload, {"index": n + 1, "delta": 1, "emit": 0, "data": 0, "msg_valid": 0, "msg": 0,
                                     "eos": 1})
        ctx.set(dut.i_comp.valid, 1)
        await ctx.tick().until(dut.i_comp.ready)
        ctx.set(dut.i_comp.valid, 0)
        done["sent"] = True

    async def join(ctx):
        cycles = 0
        while not seen["eos"]:
            take = rng.random() < consume_rate
            ctx.set(dut.i_consume, take)
            head = ctx.get(dut.o_head)
            if head.valid and head.eos:
                seen["eos"] = True
            elif head.valid and take:
                seen.setdefault("order", []).append(head.index)
                if head.is_data:
                    seen["data"].append((head.index, head.data))
                    seen.setdefault("data_cycles", []).append(cycles)
                if head.is_msg:  # alone, or with the token it was sent after
                    seen["msgs"].append((head.msg, head.index, len(seen["data"])))
                if not (head.is_data or head.is_msg):
                    seen["dummies"].append(head.index)
            await ctx.tick()
            cycles += 1
            assert cycles < 100 * n + 1000, "no progress: the edge deadlocked"
        seen["cycles"] = cycles

    sim = Simulator(dut)
    sim.add_clock(1e-8)
    sim.add_testbench(producer)
    sim.add_testbench(join)
    sim.run()
    seen["plan"] = plan
    return seen


def check_edge(**kw):
    seen = run_edge(**kw)
    plan = seen["plan"]
    # every data token, in order, once (nothing lost when the channel is full)
    assert seen["data"] == [(i, v) for i, emit, v, _ in plan if emit]
    # 000 Thm. 3.1: a message sent after computing i comes after all data <= i and before any later data
    sent_msgs = [(i & 0xFF, i, sum(1 for j, e, _, _ in plan if e and j <= i)) for i, _, _, msg in plan if msg]
    assert seen["msgs"] == sent_msgs
    # dummies only say something new: above the data before them, increasing
    assert all(a < b for a, b in zip(seen["dummies"], seen["dummies"][1:]))
    order = seen.get("order", [])
    assert all(a <= b for a, b in itertools.pairwise(order)), "the join was offered an index below an earlier one"
    if kw.get("heartbeat") is not None:  # Alg. 4: the receiver is never more than [e] behind
        assert seen["known_before_eos"] >= len(plan) - kw["heartbeat"]
    assert seen["eos"]
    return seen


def test_no_filtering_streams_everything():
    check_edge(n=300, q=8)


def test_full_throughput_when_threshold_leaves_room():
    """T = |q| - 3: credit in flight never stalls the stream (~1 token per cycle)."""
    seen = check_edge(n=500, q=16, idle_tail=0)
    first, last = seen["data_cycles"][0], seen["data_cycles"][-1]
    assert (len(seen["data"]) - 1) / (last - first) >= 0.98, (first, last)


@pytest.mark.parametrize("q", [1, 2, 3, 8])
@pytest.mark.parametrize(("threshold", "live"), [(0, False), (None, False), (None, True)])
def test_back_pressure_and_small_channels(q, threshold, live):
    check_edge(n=150, q=q, threshold=threshold, consume_rate=0.4, seed=q, live=live)


@pytest.mark.parametrize("q", [1, 2, 5])
def test_live_credit_messages_and_dummies_with_small_channels(q):
    """Stamps wrap at ``bits(|q| + 1)`` bits and the pop counts at ``seq_width``: long runs of tokens,
    messages and dummies over the smallest channels, under back-pressure."""
    check_edge(n=400, q=q, qc=2, heartbeat=1, emit_rate=0.5, msg_rate=0.3, consume_rate=0.5, seed=q)


@pytest.mark.parametrize("live", [True, False])
@pytest.mark.parametrize("heartbeat", [0, 3, 7])
def test_filtering_with_heartbeats(heartbeat, live):
    seen = check_edge(n=300, q=8, heartbeat=heartbeat, emit_rate=0.2, consume_rate=0.7, seed=heartbeat, live=live)
    assert seen["dummies"], "filtering with a finite heartbeat must send dummies"


@pytest.mark.parametrize("live", [True, False])
@pytest.mark.parametrize(("run", "consume_rate", "seed"), [(12, 0.5, 0), (16, 0.3, 0), (16, 0.5, 1), (20, 0.7, 1)])
def test_obsolete_heartbeat_never_returns(run, consume_rate, seed, live):
    """A dummy the receiver never needed (a later credit message was read first) is cleared: with
    ``|q'| = 3`` the pop count has 3 bits and wraps every 8 messages, and a heartbeat left valid through
    a run of tokens would match it again and offer its old index (found by the random-DAG cosim)."""
    check_edge(n=150, q=2, qc=3, threshold=0, heartbeat=1, consume_rate=consume_rate, seed=seed,
               emits=[True] * 3 + [False] * 3 + [True] * run, live=live)


@pytest.mark.parametrize("live", [True, False])
def test_messages_are_precisely_ordered(live):
    check_edge(n=300, q=8, heartbeat=5, emit_rate=0.5, msg_rate=0.2, consume_rate=0.6, seed=9, live=live)


def test_without_live_credit_tokens_wait_for_the_threshold():
    """000's receiver (live = False), no heartbeat: the few tokens sent never reach T = 7, so they stay
    uncredited until EOS flushes their credit (the Fig. 3 mechanism)."""
    seen = run_edge(n=40, q=8, threshold=7, heartbeat=None, emit_rate=0.1, seed=3, live=False)
    assert seen["known_before_eos"] == 0
    assert seen["data"] == [(i, v) for i, e, v, _ in seen["plan"] if e]


def test_uncredited_tokens_are_taken_on_live_credit():
    """No heartbeat, T = 7: 000's sender would send no credit message for these few tokens before EOS
    (000's receiver would hold them: the Fig. 3 mechanism); with live credit the receiver takes each one
    a cycle after it is pushed (docs/hardware.md, "Live credit")."""
    seen = run_edge(n=40, q=8, threshold=7, heartbeat=None, emit_rate=0.1, seed=3)
    sent = [(i, v) for i, e, v, _ in seen["plan"] if e]
    assert 0 < len(sent) <= 7
    assert seen["data"] == sent
    assert seen["known_before_eos"] == sent[-1][0]  # every token known before EOS carried their credit


def test_sender_checks_parameters():
    with warnings.catch_warnings():  # the half-built components are never elaborated, by design
        warnings.simplefilter("ignore")
        with pytest.raises(ValueError, match="Threshold must be below the capacity 4, not 4"):
            CreditSender(capacity=4, control_capacity=9, threshold=4, heartbeat=None, index_width=8,
                         data_width=8, payload_width=8)
        with pytest.raises(TypeError, match="Capacity must be an integer >= 1, not 0"):
            CreditReceiver(capacity=0, control_capacity=9, index_width=8, data_width=8, payload_width=8)
        gc.collect()

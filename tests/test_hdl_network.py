"""Whole credit-mode networks in the Amaranth simulator against the reference model, token by token."""

import random
from dataclasses import replace

import pytest
from amaranth.sim import Simulator

from sfdf.gen.analysis import resolve
from sfdf.gen.analysis.cycles import edges_on_cycles
from sfdf.gen.randomnet import random_dag
from sfdf.gen.refmodel import simulate
from sfdf.gen.spec import load_spec
from sfdf.hdl.join import SFDFJoin
from sfdf.hdl.manifest import BeatKind
from sfdf.hdl.top import NetworkTop


def frames_for(rng, sources, n_frames, zero_rate=0.3):
    return {s: [[0 if rng.random() < zero_rate else rng.randrange(1, 1 << 16) for _ in range(rng.randint(1, 6))]
                for _ in range(n_frames)] for s in sources}


def run_rtl(network, inputs, seed, source_idle=0.0, sink_stall=0.0, max_cycles=20000, extra=None):
    """Drive ``inputs`` (frames per source) into the top; return each sink's log like the model's.
    ``extra(sim)``, if given, adds processes once the simulator has elaborated the design."""
    dut = NetworkTop(network)
    rng = random.Random(seed)
    logs = {s: [] for s in network.sinks}
    finished = set()

    def source_bench(name):
        async def bench(ctx):
            port = getattr(dut, name)
            words = [(w, i == len(f) - 1) for f in inputs[name] for i, w in enumerate(f)]
            for n, (word, last) in enumerate(words):
                while rng.random() < source_idle:
                    ctx.set(port.tvalid, 0)
                    await ctx.tick()
                ctx.set(port.tdata, word)
                ctx.set(port.tlast, last)
                ctx.set(port.tuser, n == len(words) - 1)  # tuser[0]: end of stream
                ctx.set(port.tvalid, 1)
                await ctx.tick().until(port.tready)
            ctx.set(port.tvalid, 0)
        return bench

    def sink_bench(name):
        async def bench(ctx):
            port = getattr(dut, name)
            mask = (1 << network.index_width) - 1
            for _ in range(max_cycles):
                ready = rng.random() >= sink_stall
                ctx.set(port.tready, ready)
                await ctx.delay(1e-9)
                if ready and ctx.get(port.tvalid):
                    tuser, tdata = ctx.get(port.tuser), ctx.get(port.tdata)
                    kind, index = tuser >> network.index_width, tuser & mask
                    if kind == BeatKind.DATA:
                        logs[name].append(("data", index, tdata))
                    elif kind == BeatKind.MESSAGE:
                        logs[name].append(("control", ("frame_end", tdata)))
                    else:
                        assert kind == BeatKind.EOS
                        finished.add(name)
                        return
                await ctx.tick()
            raise AssertionError(f"sink {name}: no EOS after {max_cycles} cycles (deadlock?)")
        return bench

    sim = Simulator(dut)
    sim.add_clock(1e-8)
    for s in network.sources:
        sim.add_testbench(source_bench(s))
    for s in network.sinks:
        sim.add_testbench(sink_bench(s))
    if extra is not None:
        extra(sim)
    sim.run()
    return logs


def check_against_model(network, seed=1, n_frames=6, **kw):
    network = resolve(network)
    inputs = frames_for(random.Random(seed), network.sources, n_frames)
    expected = simulate(network, inputs=inputs, seed=seed)
    assert not expected.deadlocked
    got = run_rtl(network, inputs, seed, **kw)
    for sink in network.sinks:
        assert got[sink] == expected.outputs[sink], sink


def credit(network):
    nodes = tuple(replace(n, kernel="random_filter", params={"rate": n.params.get("rate", 0.0),
                                                             "seed": n.params.get("seed", 1)})
                  for n in network.nodes)
    return replace(network, mode="credit", nodes=nodes).with_edges(
        replace(e, interval="auto", threshold="auto", control_capacity="auto") for e in network.edges)


def test_diamond_matches_model(examples):
    check_against_model(credit(load_spec(examples / "diamond.toml")))


def test_diamond_with_back_pressure_and_idle_sources(examples):
    check_against_model(credit(load_spec(examples / "diamond.toml")), seed=2, source_idle=0.3, sink_stall=0.5)


@pytest.mark.parametrize("seed", range(4))
def test_random_dags_match_model(seed):
    rng = random.Random(100 + seed)
    while True:
        net = random_dag(rng, rng.randint(3, 5), rng.randint(3, 6), capacities=(1, 6))
        if edges_on_cycles(net) and len(net.sources) == 1:
            break
    nodes = tuple(replace(n, kernel="random_filter", params={"rate": rng.choice([0.0, 0.5, 0.9]),
                                                             "seed": rng.randrange(1000)}) for n in net.nodes)
    net = replace(net, nodes=nodes, mode="credit", index_width=8)  # 8-bit indices wrap: serial arithmetic
    check_against_model(net, seed=seed, n_frames=8, sink_stall=0.3)


ALGORITHMS = ["nonpropagation", "propagation", "naive"]


@pytest.mark.parametrize("algorithm", ALGORITHMS)
@pytest.mark.parametrize("example", ["diamond", "blast"])
def test_inband_examples_match_model(example, algorithm, examples):
    net = load_spec(examples / f"{example}.toml")
    net = replace(net, dummy_algorithm=algorithm).with_edges(replace(e, interval="auto") for e in net.edges)
    check_against_model(net, seed=3, n_frames=5, sink_stall=0.3)


@pytest.mark.parametrize("algorithm", ALGORITHMS)
@pytest.mark.parametrize("seed", range(3))
def test_inband_random_dags_with_output_buffers_match_model(algorithm, seed):
    rng = random.Random(200 + seed)
    while True:
        net = random_dag(rng, rng.randint(3, 5), rng.randint(3, 6), capacities=(1, 6))
        if edges_on_cycles(net) and len(net.sources) == 1 and set(net.sources).isdisjoint(net.sinks):
            break
    nodes = tuple(replace(n, kernel="random_filter", params={"rate": rng.choice([0.0, 0.5, 0.9]),
                                                             "seed": rng.randrange(1000)}) for n in net.nodes)
    edges = [replace(e, output_buffer=rng.randint(0, e.capacity)) for e in net.edges]
    net = replace(net, nodes=nodes, mode="inband", dummy_algorithm=algorithm, index_width=8).with_edges(edges)
    check_against_model(net, seed=seed, n_frames=8, sink_stall=0.3)


# -- the variance network of 000 Fig. 1: kernels with their own widths --------------------------------
def variance_frames(seed, n_frames=5):
    """Sparse 16-bit frames, one all zero, one of full-scale pixels."""
    rng = random.Random(seed)
    frames = [[0 if rng.random() < 0.6 else rng.randrange(1, 1 << 16) for _ in range(rng.randint(1, 12))]
              for _ in range(n_frames)]
    return frames + [[0] * 5, [65535] * 9]


@pytest.mark.parametrize("mode, filter_zeros", [("credit", 1), ("inband", 1), ("credit", 0)])
def test_variance_network_matches_model(examples, mode, filter_zeros):
    network = load_spec(examples / "variance.toml")
    network = replace(network, nodes=tuple(replace(n, params={"filter_zeros": filter_zeros}) if n.name == "u" else n
                                           for n in network.nodes))
    if mode == "inband":
        network = replace(network, mode="inband").with_edges(replace(e, interval="auto") for e in network.edges)
    network = resolve(network)
    inputs = {"u": variance_frames(3)}
    expected = simulate(network, inputs=inputs, seed=3)
    got = run_rtl(network, inputs, seed=3, source_idle=0.2, sink_stall=0.3)
    assert got["x"] == expected.outputs["x"]
    assert [e[0] for e in got["x"]] == ["data", "control"] * len(inputs["u"])  # one result per frame


@pytest.mark.parametrize(("seed", "capacities", "candidates", "widths"), [
    (0, (1, 6), None, (2, 3)), (1, (1, 6), None, (2, 3)), (2, (1, 6), None, (2, 3)), (3, (1, 1), 4, (2, 3)),
    (0, (2, 6), 3, (2, 3)), (1, (2, 6), 3, (2, 3)), (0, (1, 6), None, (4, 5)), (1, (2, 6), 3, (4, 5))])
def test_registered_join_order_matches_the_heads(monkeypatch, seed, capacities, candidates, widths):
    """Credit joins of 2-5 inputs order their heads a cycle ahead (hdl.join, ``lookahead``): in every cycle
    of a whole network under back-pressure, each order register equals the order of the live heads, so
    the node offers the join the candidates it assumes (the spare slot, the receiver's indices). With
    every channel of capacity 2 up the heartbeat's index rides in the data channel's head
    (hdl.plan.heartbeat_in_head_edges): three candidates; with capacity-1 channels, four; capacities
    1-6 mix both. ``widths``: the network has a join of that many inputs (4-5: hdl.join.LOOKAHEAD_MAX)."""
    joins = []
    elaborate = SFDFJoin.elaborate

    def collecting(self, platform):
        module = elaborate(self, platform)
        if self.lookahead:
            joins.append(self)
        return module

    monkeypatch.setattr(SFDFJoin, "elaborate", collecting)
    rng = random.Random(300 + seed)
    while True:  # filtering nodes ahead of joins: heads at different indices, dummies among them
        net = random_dag(rng, rng.randint(4, 6), rng.randint(5, 8) + 3 * (widths[0] > 3), capacities=capacities)
        if len(net.sources) != 1 or not any(len(net.in_edges(n.name)) in widths for n in net.nodes):
            continue
        nodes = tuple(replace(n, kernel="random_filter", params={"rate": rng.choice([0.3, 0.6, 0.9]),
                                                                 "seed": rng.randrange(1000)}) for n in net.nodes)
        network = resolve(credit(replace(net, nodes=nodes, mode="credit", index_width=8)))
        inputs = frames_for(random.Random(seed), network.sources, 10)
        expected = simulate(network, inputs=inputs, seed=seed)
        if not expected.deadlocked:
            break
    differing = []

    def extra(sim):
        assert any(join.inputs in widths for join in joins), [join.inputs for join in joins]
        assert candidates is None or all(join.lookahead == candidates for join in joins), \
            [join.lookahead for join in joins]

        async def check(ctx):
            async for _ in ctx.tick():
                for join in joins:
                    w, heads = join.index_width, [join.i_heads[k] for k in range(join.inputs)]
                    live = [ctx.get(h.valid) and not ctx.get(h.eos) for h in heads]
                    index = [ctx.get(h.index) for h in heads]
                    for (j, k), register in join.order.items():
                        if live[j] and live[k]:
                            assert ctx.get(register) == ((index[j] - index[k]) >> (w - 1)) & 1, (j, k, index)
                            differing.append(index[j] != index[k])
        sim.add_testbench(check, background=True)

    got = run_rtl(network, inputs, seed=seed, source_idle=0.2, sink_stall=0.4, extra=extra)
    for sink in network.sinks:
        assert got[sink] == expected.outputs[sink], sink
    assert sum(differing) > 20, sum(differing)  # pairs of live heads at different indices checked


@pytest.mark.parametrize("seed", range(3))
def test_one_input_offset_register_matches_the_head(monkeypatch, seed):
    """In-band one-input joins keep their offset a cycle ahead (hdl.join, ``_offset_ahead``): in every cycle
    of a whole network under back-pressure, with filtering nodes ahead (heads far from ``current``, dummies
    among them) and 8-bit indices that wrap, the register equals the live head's index less ``current``."""
    joins = []
    elaborate = SFDFJoin.elaborate

    def collecting(self, platform):
        module = elaborate(self, platform)
        if self.inputs == 1 and self.lookahead:
            joins.append(self)
        return module

    monkeypatch.setattr(SFDFJoin, "elaborate", collecting)
    rng = random.Random(400 + seed)
    while True:
        net = random_dag(rng, rng.randint(4, 6), rng.randint(4, 7), capacities=(1, 6))
        if len(net.sources) == 1 and sum(len(net.in_edges(n.name)) == 1 for n in net.nodes) >= 2:
            break
    nodes = tuple(replace(n, kernel="random_filter", params={"rate": rng.choice([0.3, 0.6, 0.9]),
                                                             "seed": rng.randrange(1000)}) for n in net.nodes)
    network = resolve(replace(net, nodes=nodes, mode="inband", index_width=8).with_edges(
        replace(e, interval="auto") for e in net.edges))
    inputs = frames_for(random.Random(seed), network.sources, 25)
    expected = simulate(network, inputs=inputs, seed=seed)
    checked = []

    def extra(sim):
        assert len(joins) >= 2, len(joins)

        async def check(ctx):
            async for _ in ctx.tick():
                for join in joins:
                    head = join.i_heads[0]
                    if ctx.get(head.valid) and not ctx.get(head.eos):
                        index, current = ctx.get(head.index), ctx.get(join.o_current)
                        assert ctx.get(join.offset) == (index - current) % (1 << join.index_width), (index, current)
                        checked.append(index - current != 1)
        sim.add_testbench(check, background=True)

    got = run_rtl(network, inputs, seed=seed, source_idle=0.2, sink_stall=0.4, extra=extra)
    for sink in network.sinks:
        assert got[sink] == expected.outputs[sink], sink
    assert sum(checked) > 20, sum(checked)  # heads more than one index ahead of current checked


def test_heartbeat_in_head_edges(examples):
    """The heartbeat's index rides in the data head on the inputs of lookahead joins only: live credit,
    a pipelined platform, 2-5 inputs, every input's channel reloading its head while empty."""
    from sfdf.hdl.dsp import FamilyOnly
    from sfdf.hdl.plan import heartbeat_in_head_edges
    from sfdf.hdl.traits import GENERIC, PlatformTraits

    network = resolve(load_spec(examples / "variance.toml"))
    assert heartbeat_in_head_edges(network, GENERIC) == {"vx", "wx"}  # x's inputs; v and w have one each
    ice40 = PlatformTraits.of(FamilyOnly("ice40"))
    assert heartbeat_in_head_edges(network, ice40) == set()  # no two-slot offer registers
    assert heartbeat_in_head_edges(replace(network, live_credit=False), GENERIC) == set()
    assert heartbeat_in_head_edges(replace(network, mode="inband"), GENERIC) == set()
    narrow = network.with_edges(replace(e, capacity=1) if e.name == "wx" else e for e in network.edges)
    assert heartbeat_in_head_edges(narrow, GENERIC) == set()  # a capacity-1 channel's head holds still
    deep = network.with_edges(replace(e, capacity=200) if e.name == "vx" else e for e in network.edges)
    assert heartbeat_in_head_edges(deep, GENERIC) == set()  # nor does a block-RAM channel's

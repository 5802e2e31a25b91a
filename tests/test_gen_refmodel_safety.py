"""The analysis and the reference model agree: computed intervals never deadlock; without them the
adversarial histories of 002 Thm. 2.2 and 000 Fig. 3 do, and the model names the blocking cycle."""

import random
from dataclasses import replace

import pytest

from sfdf.gen.analysis import check, resolve
from sfdf.gen.analysis.cycles import edges_on_cycles, undirected_cycles
from sfdf.gen.randomnet import random_dag
from sfdf.gen.refmodel import adversarial_filter_history, random_words, simulate

#: The protocols, as Network fields: credit with live credit (the default) and with 000's receiver, and
#: the three in-band dummy algorithms.
PROTOCOLS = [
    {"mode": "credit"},
    {"mode": "credit", "live_credit": False},
    {"mode": "inband", "dummy_algorithm": "nonpropagation"},
    {"mode": "inband", "dummy_algorithm": "propagation"},
    {"mode": "inband", "dummy_algorithm": "naive"},
]
PROTOCOL_IDS = ["credit-live", "credit-batched", "inband-nonpropagation", "inband-propagation", "inband-naive"]


def random_case(seed):
    """A random DAG with at least one undirected cycle, random filter rates, capacities 1..8."""
    rng = random.Random(seed)
    while True:
        net = random_dag(rng, rng.randint(3, 7), rng.randint(3, 10), capacities=(1, 8))
        if edges_on_cycles(net):
            break
    nodes = tuple(replace(n, kernel="random_filter",
                          params={"rate": rng.choice([0.0, 0.3, 0.7, 0.9, 1.0]), "seed": rng.randrange(1 << 16)})
                  for n in net.nodes)
    return replace(net, nodes=nodes), rng


@pytest.mark.parametrize("protocol", PROTOCOLS, ids=PROTOCOL_IDS)
def test_computed_intervals_never_deadlock_random_filtering(protocol):
    """250 (graph, seed) cases per protocol, 1,250 in all, random and adversarial schedules."""
    for seed in range(250):
        net, rng = random_case(seed)
        net = replace(net, **protocol)
        assert check(net).deadlock_free, seed
        scheduler = ("random", "adversarial", "round_robin")[seed % 3]
        res = simulate(net, computations=rng.randint(20, 120), seed=seed, scheduler=scheduler)
        assert not res.deadlocked, (seed, protocol, res.blocking_cycle)
        assert res.computations > 0


def deadlocks_with_a_frame_end_at_every_word(protocol, cases=100):
    """The seeds of ``cases`` random cases that ``sfdf check`` passes and the model deadlocks on, every source
    word a frame of its own: a frame end (a user message) at every index, on every edge the frame crosses."""
    deadlocked = []
    for seed in range(cases):
        net, _ = random_case(seed)
        report = check(replace(net, **protocol))
        if not report.deadlock_free:
            continue
        inputs = {source: [[word] for word in random_words(seed, source, 60)] for source in report.network.sources}
        if simulate(report.network, inputs=inputs, seed=seed).deadlocked:
            deadlocked.append(seed)
    return deadlocked


@pytest.mark.parametrize("protocol", PROTOCOLS, ids=PROTOCOL_IDS)
def test_computed_intervals_never_deadlock_with_a_frame_end_at_every_word(protocol):
    """With live credit this found a model defect (bench/cosim.py's random-DAG seeds 21 and 29: the model
    deadlocked, the RTL ran on): the model kept a dummy in a control slot, where the hardware keeps it in
    the heartbeat register beside the control FIFO. 13 of these 100 cases then blocked on a control
    channel of |q| = 1, |q'| = 2 holding an obsolete dummy and a frame end while its receiver waited on
    the edge's twin, which the sender, mid-computation, had not reached yet."""
    assert deadlocks_with_a_frame_end_at_every_word(protocol) == []


def cycles_of(net, limit=6):
    return [c for _, c in zip(range(limit), undirected_cycles(net))]


def adversarial_runs(net, computations):
    """Every cycle, both blockwise orientations, under 002 Thm. 2.2's filtering history."""
    for cycle in cycles_of(net):
        for blockwise_forward in (True, False):
            oracle = adversarial_filter_history(net, cycle, blockwise_forward=blockwise_forward)
            yield cycle, simulate(net, computations=computations, seed=1, filter_oracle=oracle)


@pytest.mark.parametrize("protocol", PROTOCOLS, ids=PROTOCOL_IDS)
def test_computed_intervals_survive_the_adversarial_history(protocol):
    for seed in range(40):
        net, _ = random_case(1000 + seed)
        net = replace(net, **protocol)
        budget = 4 * sum(e.capacity for e in net.edges) + 10
        for cycle, res in adversarial_runs(net, budget):
            assert not res.deadlocked, (seed, cycle, res.blocking_cycle)


@pytest.mark.parametrize("protocol", [p for p in PROTOCOLS if "dummy_algorithm" not in p] + [{"mode": "inband"}],
                         ids=["credit-live", "credit-batched", "inband"])
def test_without_intervals_every_adversarial_cycle_deadlocks(protocol):
    """002 Thm. 2.2 (<-): on every undirected cycle the constructed history deadlocks, and the model's
    blocking cycle is an undirected cycle of the network (often that one; a non-filtering chord or
    parallel edge can close a smaller one first)."""
    for seed in range(25):
        net, _ = random_case(2000 + seed)
        net = replace(net, **protocol).with_intervals({e.name: None for e in net.edges})
        net = resolve(net)  # thresholds and control capacities; intervals stay infinite
        if net.mode == "credit":  # the credit threshold alone must not flush: T = |q| - 1
            net = net.with_edges(replace(e, threshold=e.capacity - 1) for e in net.edges)
        budget = 4 * sum(e.capacity for e in net.edges) + 10
        real = {frozenset(n for n, _ in c) for c in undirected_cycles(net)}
        for cycle, res in adversarial_runs(net, budget):
            assert res.deadlocked, (seed, cycle)
            assert frozenset(res.blocking_cycle) in real, (seed, cycle, res.blocking_cycle)


def test_fig3_spec_deadlocks_and_its_safe_variant_completes(examples):
    from sfdf.gen.spec import load_spec

    net = load_spec(examples / "fig3_deadlock.toml")
    assert not check(net).deadlock_free
    res = simulate(net, computations=2000, seed=1)
    assert res.deadlocked
    assert sorted(res.blocking_cycle) == ["uv", "uw", "vx", "wx"]
    safe = net.with_edges(replace(e, interval="auto") for e in net.edges)
    assert check(safe).deadlock_free
    assert not simulate(safe, computations=2000, seed=1).deadlocked
    # the deadlock is credit batching: live credit (the default) runs the shipped spec to the end
    assert not simulate(replace(net, live_credit=True), computations=2000, seed=1).deadlocked


def test_a_user_message_stands_for_its_index(examples):
    """000 Fig. 3 with w filtering everything (rate 1) and no heartbeats: only w's forwarded frame ends
    reach x on wx. Each carries the index of the computation it follows, so x computes up to it on v's
    tokens alone, as the hardware's join does (docs/semantics.md, credit-mode receiver); with one frame
    (one message, at the end) the network deadlocks as the check says. Outputs equal the safe variant's."""
    from sfdf.gen.spec import load_spec

    net = load_spec(examples / "fig3_deadlock.toml")
    net = replace(net, nodes=tuple(replace(n, params={**n.params, "rate": 1.0}) if n.name == "w" else n
                                   for n in net.nodes))
    words = [(k * 40503) & 0xFFFF for k in range(400)]
    frames = {"u": [words[a:a + 8] for a in range(0, 400, 8)]}
    framed = simulate(net, inputs=frames, seed=1)
    assert not framed.deadlocked
    safe = net.with_edges(replace(e, interval="auto") for e in net.edges)
    assert framed.outputs == simulate(safe, inputs=frames, seed=1).outputs
    assert sum(ev[0] == "data" for ev in framed.outputs["x"]) == 400
    assert simulate(net, inputs={"u": [words]}, seed=1).deadlocked


def test_the_random_cases_have_teeth():
    """Without intervals, a good share of the same random cases deadlock: the lane above can fail."""
    deadlocks = 0
    for seed in range(120):
        net, rng = random_case(seed)
        net = replace(net, mode="inband").with_intervals({e.name: None for e in net.edges})
        res = simulate(net, computations=rng.randint(20, 120), seed=seed, scheduler="adversarial")
        deadlocks += res.deadlocked
    assert deadlocks >= 40, deadlocks  # 81 of 120 when written


# -- the pipelined node: a node that decides ahead of its emission (docs/hardware.md) ---------------

DEPTHS = [2, 3, 6]


@pytest.mark.parametrize("protocol", PROTOCOLS, ids=PROTOCOL_IDS)
def test_pipelined_nodes_never_deadlock_and_compute_the_same(protocol):
    """Nodes holding up to ``depth`` decided, unemitted computations, with the intervals computed for
    the atomic node: no deadlock, and every sink's output equal to the atomic node's, token for token
    (80 cases per protocol, three schedulers, three depths)."""
    for seed in range(80):
        net, rng = random_case(seed)
        net = replace(net, **protocol)
        computations = rng.randint(20, 120)
        scheduler = ("random", "adversarial", "round_robin")[seed % 3]
        atomic = simulate(net, computations=computations, seed=seed, scheduler=scheduler)
        for depth in DEPTHS:
            res = simulate(net, computations=computations, seed=seed, scheduler=scheduler, depth=depth)
            assert not res.deadlocked, (seed, depth, res.blocking_cycle)
            assert res.outputs == atomic.outputs, (seed, depth)


@pytest.mark.parametrize("protocol", PROTOCOLS, ids=PROTOCOL_IDS)
def test_pipelined_nodes_survive_the_adversarial_history(protocol):
    for seed in range(20):
        net, _ = random_case(1000 + seed)
        net = replace(net, **protocol)
        budget = 4 * sum(e.capacity for e in net.edges) + 10
        for cycle in cycles_of(net):
            for blockwise_forward in (True, False):
                oracle = adversarial_filter_history(net, cycle, blockwise_forward=blockwise_forward)
                res = simulate(net, computations=budget, seed=1, filter_oracle=oracle, depth=4,
                               scheduler="adversarial")
                assert not res.deadlocked, (seed, cycle, res.blocking_cycle)


def test_pipelined_nodes_still_deadlock_without_intervals():
    """Deciding ahead adds room but no dummies: the random cases without intervals still deadlock, so
    the two tests above can fail."""
    deadlocks = 0
    for seed in range(120):
        net, rng = random_case(seed)
        net = replace(net, mode="inband").with_intervals({e.name: None for e in net.edges})
        res = simulate(net, computations=rng.randint(20, 120), seed=seed, scheduler="adversarial", depth=4)
        deadlocks += res.deadlocked
    assert deadlocks >= 40, deadlocks  # 81 of 120 when written, as at depth 1


def test_depth_must_be_positive():
    net, _ = random_case(0)
    with pytest.raises(ValueError, match="Depth must be a positive integer"):
        simulate(net, computations=5, depth=0)

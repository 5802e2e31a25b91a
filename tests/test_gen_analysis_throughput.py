"""The throughput bound of the generated hardware (gen/analysis/throughput.py on hdl/timing.py's cycles):
exact figures on the structures bench/throughput.py measures, the bound against every simple cycle on
small random networks, the sizing against trying every assignment, and what ``sfdf check`` prints.
The bound against Verilator: tests/cosim/test_throughput_bound.py."""

from __future__ import annotations

import itertools
import json
from dataclasses import replace
from fractions import Fraction

import networkx as nx
import pytest
from graphs import dags
from hypothesis import given, settings
from hypothesis import strategies as st

from sfdf.cli import main
from sfdf.cli.commands import _throughput_lines
from sfdf.gen.analysis import batches, check
from sfdf.gen.analysis.batches import batch_rate, credit_batches, schedule_rate
from sfdf.gen.analysis.throughput import (
    StageTiming,
    event_graph,
    full_rate_sizing,
    network_rate,
    nodes_rate,
    throughput_bound,
    throughput_summary,
)
from sfdf.gen.model import Edge, Network, Node
from sfdf.hdl.dsp import FamilyOnly
from sfdf.hdl.timing import stage_timing

#: Every node's inputs through an offer register (hop 1 + offer 1 on each node, as on ECP5), folded into ``hop``.
PIPELINED = StageTiming(hop=2, release=1, decided=2)
UNPIPELINED = StageTiming(hop=1, release=1, decided=2)


def network(paths, capacity=16, capacities=None, ii=None):
    """Nodes and edges along ``paths`` (lists of node names), every edge ``capacity`` unless named in
    ``capacities``; ``ii``: node -> initiation interval."""
    pairs = list(dict.fromkeys(p for path in paths for p in itertools.pairwise(path)))
    names = list(dict.fromkeys(v for path in paths for v in path))
    edges = tuple(Edge(f"{u}_{v}", u, v, (capacities or {}).get(f"{u}_{v}", capacity)) for u, v in pairs)
    return Network("t", tuple(Node(v, ii=(ii or {}).get(v, 1)) for v in names), edges)


def residual(skip, hops=8):
    branch = ["a"] + [f"b{k}" for k in range(1, hops + 1)] + ["e"]
    return network([branch, ["a", "e"]], capacities={"a_e": skip})


@pytest.mark.parametrize(("skip", "rate"), [(8, Fraction(8, 27)), (16, Fraction(16, 27)), (24, Fraction(8, 9)),
                                            (27, Fraction(1)), (32, Fraction(1))])
def test_residual_block_bound_is_the_skip_over_the_branch_latency(skip, rate):
    """bench/throughput.py measures 0.297, 0.594, 0.889, 1.000 at skip capacity 8, 16, 24, 32 (docs/hardware.md)."""
    bound = throughput_bound(residual(skip), PIPELINED)
    assert bound.rate == rate
    if rate < 1:
        assert bound.edges == ("a_e",) and (bound.tokens, bound.cycles) == (skip, 27)
    assert full_rate_sizing(residual(skip), PIPELINED) == ({"a_e": 27} if rate < 1 else {})


def test_residual_block_unpipelined_takes_two_cycles_per_hop():
    assert throughput_bound(residual(16), UNPIPELINED).rate == Fraction(16, 18)
    assert full_rate_sizing(residual(16), UNPIPELINED) == {"a_e": 18}


@pytest.mark.parametrize(("capacity", "pipelined", "unpipelined"), [(1, Fraction(1, 3), Fraction(1, 2)),
                                                                    (2, Fraction(2, 3), Fraction(1)),
                                                                    (3, Fraction(1), Fraction(1))])
def test_chain_rate_by_capacity(capacity, pipelined, unpipelined):
    """A token counts in its channel until the next node decides: capacity 3 streams with offer registers,
    2 without (measured: tests/cosim/test_throughput_bound.py)."""
    chain = network([["n0", "n1", "n2", "n3"]], capacity=capacity)
    assert throughput_bound(chain, PIPELINED).rate == pipelined
    assert throughput_bound(chain, UNPIPELINED).rate == unpipelined


def test_initiation_interval_and_split_join():
    chain = network([["n0", "n1", "n2"]], ii={"n1": 3})
    bound = throughput_bound(chain, PIPELINED)
    assert bound.rate == Fraction(1, 3) and bound.edges == () and "n1" in bound.describe()
    split = network([["a", "b1", "b2", "b3", "e"], ["a", "c1", "e"]], capacity=4)
    bound = throughput_bound(split, PIPELINED)
    # forward 11 cycles along b, back through c's rooms (4 + 2 decided + 4 tokens, 3 cycles)
    assert (bound.rate, bound.tokens, bound.cycles) == (Fraction(5, 7), 10, 14)
    assert set(bound.edges) == {"a_c1", "c1_e"}


def test_kernel_latency_lengthens_the_branch():
    split = network([["a", "m", "e"], ["a", "e"]], capacities={"a_e": 4})
    assert throughput_bound(split, PIPELINED).rate == Fraction(4, 6)
    assert throughput_bound(split, replace(PIPELINED, latency={"m": 2})).rate == Fraction(4, 8)


def test_stage_timing_is_the_hardware_s():
    variance = Network("v", (Node("u", "variance_source"), Node("v", "variance_mean"), Node("w", "variance_mean_sq"),
                             Node("x", "variance_join")),
                       (Edge("uv", "u", "v", 4), Edge("uw", "u", "w", 4), Edge("vx", "v", "x", 4),
                        Edge("wx", "w", "x", 4)))
    deep = stage_timing(variance)
    assert (deep.hop, deep.release, deep.decided) == (1, 1, 2)
    assert dict(deep.latency) == {"u": 0, "v": 1, "w": 2, "x": 1}
    assert dict(deep.offer) == {"v": 1, "w": 1, "x": 1}  # every node with inputs has offer registers
    small = stage_timing(variance, FamilyOnly("ice40"))
    assert small.hop == 1 and set(small.latency.values()) == {0}
    assert dict(small.offer) == {"x": 1}  # the join of two inputs has a one-slot offer register
    assert stage_timing(variance, FamilyOnly("ecp5")) == deep


def test_unregistered_offers_take_a_cycle_off_each_hop():
    """``registered_offers = false`` on the branch: two cycles per hop into those nodes, not three."""
    block = pinned(residual(16))
    branch = replace(block, nodes=tuple(replace(n, registered_offers=not n.name.startswith("b")) for n in block.nodes))
    assert dict(stage_timing(branch).offer) == {"e": 1}
    assert throughput_bound(branch, stage_timing(branch)).rate == Fraction(16, 19)
    every = replace(block, nodes=tuple(replace(n, registered_offers=n.name == "a") for n in block.nodes))
    assert not stage_timing(every).offer and not stage_timing(every, FamilyOnly("ice40")).offer
    assert throughput_bound(every, stage_timing(every)).rate == Fraction(16, 18)


@pytest.mark.parametrize(("skip", "rate"), [(4, Fraction(4, 11)), (8, Fraction(8, 11)), (11, Fraction(1)),
                                            (16, Fraction(1))])
def test_single_stage_nodes_take_one_cycle_per_hop(skip, rate):
    """``pipelined = false`` on the branch: a token pushed at t is consumed at t + 1 along it, so the skip
    covers 8 cycles of the branch and 3 of the join's own (docs/hardware.md, "The single-stage node")."""
    block = residual(skip)
    branch = replace(block, nodes=tuple(replace(n, pipelined=not n.name.startswith("b")) for n in block.nodes))
    timing = stage_timing(branch)
    assert dict(timing.offer) == {"e": 1} and timing.single == {f"b{k}" for k in range(1, 9)}
    bound = throughput_bound(branch, timing)
    assert bound.rate == rate
    if rate < 1:
        assert bound.edges == ("a_e",) and (bound.tokens, bound.cycles) == (skip, 11)


def pinned(net):
    """``net`` with ``pipelined = true`` on every node ("auto" would make a slow reconvergent path's nodes
    single-stage)."""
    return replace(net, nodes=tuple(replace(n, pipelined=True) for n in net.nodes))


@pytest.mark.parametrize(("skip", "single", "rate"), [(4, True, Fraction(4, 11)), (16, True, Fraction(1)),
                                                      (26, True, Fraction(1)), (27, False, Fraction(1))])
def test_auto_makes_a_slow_branch_single_stage(skip, single, rate):
    """``pipelined = "auto"`` (the default): the branch's nodes single-stage where that raises the rate (every
    skip capacity below the 27 the pipelined branch needs), pipelined where it does not; ``a`` (two outputs)
    and ``e`` (two inputs) cannot be."""
    timing = stage_timing(residual(skip))
    assert timing.single == ({f"b{k}" for k in range(1, 9)} if single else set())
    assert throughput_bound(residual(skip), timing).rate == rate
    assert not stage_timing(pinned(residual(skip))).single  # pipelined = true keeps them
    assert not stage_timing(network([["n0", "n1", "n2", "n3"]], capacity=1)).single  # a chain: no path to raise
    ice40 = stage_timing(residual(skip), FamilyOnly("ice40"))  # two cycles per hop pipelined there: 18 for full rate
    assert ice40.single == ({f"b{k}" for k in range(1, 9)} if skip < 18 else set())


def brute_force_rate(places):
    """The least tokens over cycles over every simple cycle of the event graph (places as vertices)."""
    graph = nx.DiGraph()
    for k, p in enumerate(places):
        graph.add_edge(p.src, k)
        graph.add_edge(k, p.dst)
    return min(Fraction(sum(places[k].tokens for k in cycle if isinstance(k, int)),
                        sum(places[k].delay for k in cycle if isinstance(k, int)))
               for cycle in nx.simple_cycles(graph))


@settings(max_examples=60, deadline=None)
@given(dags(max_nodes=5, max_edges=6, capacities=(1, 6)),
       st.sampled_from([PIPELINED, UNPIPELINED, replace(PIPELINED, decided=1)]), st.integers(1, 3),
       st.sets(st.integers(0, 4)))
def test_bound_is_the_least_cycle_ratio(net, timing, ii, single):
    """Against every simple cycle; ``single``: nodes (by position) that send as they decide."""
    net = replace(net, nodes=tuple(replace(n, ii=ii) if k == 0 else n for k, n in enumerate(net.nodes)))
    timing = replace(timing, single=frozenset(n.name for k, n in enumerate(net.nodes) if k in single))
    bound = throughput_bound(net, timing)
    assert bound.rate == brute_force_rate(event_graph(net, timing))
    assert bound.rate == Fraction(bound.tokens, bound.cycles)
    assert [p.dst for p in bound.cycle] == [p.src for p in bound.cycle[1:] + bound.cycle[:1]]  # a cycle
    deep = sum(p.delay for p in event_graph(net, timing)) + 1  # rooms no simple cycle can exhaust
    assert nodes_rate(net, timing) == throughput_bound(net, timing, {e.name: deep for e in net.edges}).rate


def test_sizing_a_short_branch_of_two_edges_adds_the_least_in_total():
    split = network([["a", "b1", "b2", "b3", "e"], ["a", "c1", "e"]], capacity=4)
    sized = full_rate_sizing(split, PIPELINED)  # 4 + 2 + 4 tokens over 14 cycles: 4 more on c's side
    assert set(sized) <= {"a_c1", "c1_e"} and sum(q - 4 for q in sized.values()) == 4
    assert throughput_bound(split, PIPELINED, sized).rate == 1
    slow = network([["a", "b1", "e"], ["a", "e"]], capacities={"a_e": 2}, ii={"b1": 2})
    assert nodes_rate(slow, PIPELINED) == Fraction(1, 2)
    assert throughput_bound(slow, PIPELINED, full_rate_sizing(slow, PIPELINED)).rate == Fraction(1, 2)


def least_total_sizing(net, timing, target, most=12):
    """The least total capacity added to reach ``target``, by trying every assignment (small networks)."""
    best = None
    for added in itertools.product(range(most + 1), repeat=len(net.edges)):
        if best is not None and sum(added) >= best:
            continue
        capacities = {e.name: e.capacity + a for e, a in zip(net.edges, added)}
        if throughput_bound(net, timing, capacities).rate >= target:
            best = sum(added)
    return best


@settings(max_examples=20, deadline=None)
@given(dags(max_nodes=4, max_edges=4, capacities=(1, 3)), st.sampled_from([PIPELINED, UNPIPELINED]),
       st.integers(1, 2))
def test_sizing_reaches_the_rate_with_the_least_added(net, timing, ii):
    net = replace(net, nodes=tuple(replace(n, ii=ii) if k == 0 else n for k, n in enumerate(net.nodes)))
    target = nodes_rate(net, timing)
    sized = full_rate_sizing(net, timing)
    capacities = {e.name: sized.get(e.name, e.capacity) for e in net.edges}
    assert throughput_bound(net, timing, capacities).rate == target
    for name in sized:  # none can shrink alone
        assert throughput_bound(net, timing, {**capacities, name: capacities[name] - 1}).rate < target
    added = sum(capacities[e.name] - e.capacity for e in net.edges)
    assert added == least_total_sizing(net, timing, target)


def test_sfdf_check_prints_the_bound_and_the_capacity_to_raise(examples, capsys):
    """examples/residual_pipelined.toml: the residual block at capacity 16, its branch pipelined
    (docs/hardware.md's example); examples/residual.toml, the same with "auto", builds it single-stage."""
    assert main(["check", str(examples / "residual_pipelined.toml")]) == 0
    out = capsys.readouterr().out
    assert "throughput (the generated hardware with no filtering" in out
    assert "0.593 tokens per cycle: the room of a_e (16 tokens) against the 27 cycles of latency around it" in out
    assert out.splitlines()[-4:-2] == ["  edge  capacity  sized", "  a_e         16     27"]
    assert out.splitlines()[-2:] == [
        ("or without offer registers on b1, b2, b3, b4, b5, b6, b7, b8, e (registered_offers = false: a cycle less per "
         "hop into each, at a slower clock): 0.889 tokens per cycle"),
        ("or single-stage b1, b2, b3, b4, b5, b6, b7, b8 (pipelined = false: one cycle per hop through each, at a "
         "slower clock): 1.000 tokens per cycle")]
    assert main(["check", "--json", str(examples / "residual_pipelined.toml")]) == 0
    rate = json.loads(capsys.readouterr().out)["throughput"]
    assert (rate["exact"], rate["binding_edges"], rate["full_rate_sizing"]) == ("16/27", ["a_e"], {"a_e": 27})
    assert rate["unregistered_offers"] == {"nodes": ["b1", "b2", "b3", "b4", "b5", "b6", "b7", "b8", "e"],
                                           "tokens_per_cycle": 8 / 9, "exact": "8/9"}
    assert rate["single_stage"] == {"nodes": [f"b{k}" for k in range(1, 9)], "tokens_per_cycle": 1.0, "exact": "1"}
    assert rate["auto_single_stage"] is None
    assert main(["check", str(examples / "residual.toml")]) == 0
    out = capsys.readouterr().out.splitlines()
    assert out[-2].endswith("1.000 tokens per cycle: a's initiation interval (1), no channel limits it")
    assert out[-1] == ('single-stage (pipelined = "auto"): b1, b2, b3, b4, b5, b6, b7, b8, one cycle per hop through '
                       "each at a slower clock where they limit it; pipelined they give 0.593 tokens per cycle "
                       "(pipelined = true keeps them so)")
    assert main(["check", "--json", str(examples / "residual.toml")]) == 0
    rate = json.loads(capsys.readouterr().out)["throughput"]
    assert rate["auto_single_stage"] == {"nodes": [f"b{k}" for k in range(1, 9)], "pipelined_tokens_per_cycle": 16 / 27,
                                         "pipelined_exact": "16/27"}


@settings(max_examples=40, deadline=None)
@given(dags(max_nodes=5, max_edges=6, capacities=(1, 6)), st.sampled_from([PIPELINED, UNPIPELINED]), st.data())
def test_throughput_never_falls_as_a_capacity_grows(net, timing, data):
    """A capacity is the tokens of one place, and a cycle's ratio only grows with its tokens."""
    if not net.edges:
        return
    e = data.draw(st.sampled_from(net.edges))
    rates = [throughput_bound(net, timing, {e.name: q}).rate for q in range(1, 30)]
    assert rates == sorted(rates)


def test_what_the_bound_does_not_model_makes_it_an_upper_one(monkeypatch):
    """Output buffers (003) only delay tokens: the summary says "at most" (measured below the bound:
    tests/cosim/test_throughput_bound.py); so it does for 000's credit batches only where their schedule
    is too long to follow."""
    chain = network([["u", "v", "x"]], capacity=16)
    assert throughput_summary(chain, PIPELINED)["unmodelled"] == []
    buffered = replace(chain, mode="inband").with_edges(replace(e, output_buffer=4) if e.name == "v_x" else e
                                                        for e in chain.edges)
    summary = throughput_summary(buffered, PIPELINED)
    assert summary["unmodelled"] == ["output buffers on v_x"] and "(at most: output buffers on v_x" in summary["describe"]
    batched = check(replace(chain, live_credit=False)).network
    assert throughput_summary(batched, PIPELINED)["unmodelled"] == []  # the batches' schedule is exact
    monkeypatch.setattr(batches, "SCHEDULE_BUDGET", 10)  # a schedule too long to follow: the bound, "at most"
    summary = throughput_summary(batched, PIPELINED)
    assert summary["unmodelled"] == ["the credit batches' schedule (live_credit = false)"]
    assert "(at most: the credit batches' schedule" in summary["describe"]


def batch_schedule_rate(capacity, threshold, hop, release, batches=None):
    """The rate of one edge of 000's batched credits by brute force: the earliest cycle of every commit
    ``W`` and take ``C`` under the hardware's rules alone (one commit and one take per cycle; a token taken
    ``hop`` cycles after the commit of its batch's last, which carries the credit; its room back
    ``release`` cycles after the take), and the rate of the periodic schedule it settles into."""
    size = threshold + 1
    n = (batches or 40 * (capacity + hop + release + 2)) * size
    w, c = [], []
    for j in range(n):
        w.append(max(w[j - 1] + 1 if j else 0, c[j - capacity] + release if j >= capacity else 0))
        # token j - threshold ends its batch when j does: take every token of the batch now
        if (j + 1) % size == 0:
            for k in range(j + 1 - size, j + 1):
                c.append(max(c[k - 1] + 1 if k else 0, w[j] + hop))
    tail = len(c) // 2 // size * size  # a batch boundary in the settled half
    for period in range(1, (len(c) - tail) // 4):
        span = period * size
        steps = {w[k + span] - w[k] for k in range(tail, len(c) - span)}
        if len(steps) == 1:
            return Fraction(span, steps.pop())
    raise AssertionError("no period")


@pytest.mark.parametrize("loop", [2, 3, 4])
def test_batch_rate_is_the_brute_force_schedule_s(loop):
    """batch_rate's unrolled batch against the schedule commit by commit, every T at |q| = 1..12, and no
    capacity lowers it (measured on Verilator: tests/cosim/test_throughput_bound.py)."""
    for capacity in range(1, 13):
        for threshold in range(capacity):
            assert batch_rate(capacity, threshold, loop) == batch_schedule_rate(capacity, threshold, loop - 1, 1), \
                (capacity, threshold, loop)
    for threshold in range(8):
        rates = [batch_rate(q, threshold, loop) for q in range(threshold + 1, 30)]
        assert rates == sorted(rates)


def test_batched_credit_binds_where_t_leaves_too_little_room(capsys, tmp_path):
    """000's receiver as printed at |q| = 16: T = 13 streams (the auto T), T = 14 takes 15 of every 16
    cycles and T = 15 16 of 18; without the receiving node's offer register a cycle less round the
    loop, so T = 14 streams again. ``sfdf check`` says so, sizes the edge, and names the register."""
    pair = replace(network([["u", "x"]]), live_credit=False).with_intervals({"u_x": 15})
    rates = {t: throughput_bound(pair.with_edges(replace(e, threshold=t) for e in pair.edges), PIPELINED).rate
             for t in (13, 14, 15)}
    assert rates == {13: 1, 14: Fraction(15, 16), 15: Fraction(8, 9)}
    # 000 Alg. 4 closes a batch at [e] + 1 tokens where that is fewer: heartbeat 0, a credit with every token
    assert throughput_bound(pair.with_edges(replace(e, threshold=15, interval=0) for e in pair.edges),
                            PIPELINED).rate == 1
    with pytest.raises(ValueError, match="resolved"):
        throughput_bound(replace(network([["u", "x"]]), live_credit=False), PIPELINED)
    t14 = pair.with_edges(replace(e, threshold=14) for e in pair.edges)
    summary = throughput_summary(t14, PIPELINED)
    assert summary["binding_edges"] == ["u_x"] and summary["full_rate_sizing"] == {"u_x": 17}
    assert "credit batches of T + 1 = 15 tokens" in summary["describe"] and "T <= 13 streams" in summary["describe"]
    timing = stage_timing(t14)  # the generic Verilog: x's offer register is one of the 3 cycles
    assert summary["tokens_per_cycle"] == throughput_summary(t14, timing)["tokens_per_cycle"]
    assert throughput_summary(t14, timing)["unregistered_offers"] == {"nodes": ["x"], "tokens_per_cycle": 1.0,
                                                                        "exact": "1"}
    spec = tmp_path / "pair.toml"
    spec.write_text('[network]\nname = "pair"\nlive_credit = false\n[[node]]\nname = "u"\n[[node]]\nname = "x"\n'
                    '[[edge]]\nfrom = "u"\nto = "x"\ncapacity = 16\nthreshold = 15\n')
    assert main(["check", str(spec)]) == 0
    out = capsys.readouterr().out
    assert "0.889 tokens per cycle: u_x's credit batches of T + 1 = 16 tokens" in out
    assert "or without offer registers on x" in out and "0.941 tokens per cycle" in out


def test_the_batches_schedule_is_the_closed_form_on_one_edge():
    """schedule_rate (the event graph with each token waiting for its batch's last, fired token by token
    until it repeats) against batch_rate on one edge, every T at |q| = 1..8, with and without the
    receiving node's offer register."""
    for capacity in range(1, 9):
        for threshold in range(capacity):
            for offer in (0, 1):
                timing = StageTiming(hop=1, release=1, decided=2, offer={"x": offer})
                pair = replace(network([["u", "x"]], capacity), live_credit=False)
                pair = pair.with_edges(replace(e, threshold=threshold, interval=None) for e in pair.edges)
                (batch,) = credit_batches(pair, timing)
                got = schedule_rate(event_graph(pair, timing), [batch])
                assert got == min(batch_rate(capacity, threshold, 2 + offer), nodes_rate(pair, timing)), \
                    (capacity, threshold, offer)


def test_credit_batches_add_their_waits_along_a_reconvergent_path():
    """A split-join with T = 15 on its long branch's last edge and the skip (the first two edges' heartbeat
    of 0 sends a credit with every token): each edge alone allows 8/9, but a token waits for its batch
    on the long branch and the skip must cover it: 2/3 (Verilator: 0.671,
    tests/cosim/test_throughput_bound.py). The sizing reaches full rate, and no sized edge can give one
    slot back alone."""
    split = replace(network([["a", "b", "c", "e"], ["a", "e"]], 16), live_credit=False)
    resolved = check(split.with_edges(replace(e, threshold=15) for e in split.edges)).network
    assert {e.name: e.interval for e in resolved.edges} == {"a_b": 0, "b_c": 0, "c_e": 15, "a_e": 15}
    timing = stage_timing(resolved)
    assert throughput_bound(resolved, timing).rate == Fraction(8, 9)
    assert network_rate(resolved, timing) == (Fraction(2, 3), True)
    summary = throughput_summary(resolved, timing)
    assert summary["exact"] == "2/3" and "add their waits along every path" in summary["describe"]
    # the waits add up along the whole long branch: every offer register into it counts, not e's alone
    assert summary["unregistered_offers"] == {"nodes": ["b", "c", "e"], "tokens_per_cycle": 16 / 21, "exact": "16/21"}
    sized = summary["full_rate_sizing"]
    assert sized == {"c_e": 18, "a_e": 24} and summary["full_rate_sizing_least"]
    assert network_rate(resolved, timing, sized) == (1, True)
    for edge in sized:
        assert network_rate(resolved, timing, {**sized, edge: sized[edge] - 1})[0] < 1


def test_sizing_past_the_schedules_budget_is_enough_not_the_least(monkeypatch):
    """Where lowering on the schedule would take too many schedules (batches.SIZING_BUDGET), the sizing
    is the linear programme's on the graph in which each token waits T commits: enough, not known to be
    the least (here it is), and said so."""
    split = replace(network([["a", "b", "c", "e"], ["a", "e"]], 16), live_credit=False)
    resolved = check(split.with_edges(replace(e, threshold=15) for e in split.edges)).network
    timing = stage_timing(resolved)
    monkeypatch.setattr(batches, "SIZING_BUDGET", 0)
    summary = throughput_summary(resolved, timing)
    sized = summary["full_rate_sizing"]
    assert not summary["full_rate_sizing_least"] and sum(sized.values()) >= 18 + 24
    assert network_rate(resolved, timing, sized) == (1, True)
    assert "enough, not the least" in _throughput_lines(resolved, summary)[1]


@settings(max_examples=40, deadline=None)
@given(dags(max_nodes=5, max_edges=6, capacities=(2, 8)), st.sampled_from([PIPELINED, UNPIPELINED]), st.data())
def test_the_batches_schedule_lies_between_the_waits_graph_and_the_bound(net, timing, data):
    """On random networks with 000's credit batches (any T, any heartbeat): the schedule's rate is at most
    each cycle's and each edge's batches' alone (throughput_bound), and at least the graph's in which every
    token waits T commits (batch_waits); the sizing reaches the nodes' rate on the schedule, and no sized
    edge can give a slot back alone. (Against Verilator: tests/cosim/test_throughput_bound.py.)"""
    net = replace(net, mode="credit", live_credit=False).with_edges(
        replace(e, threshold=data.draw(st.integers(0, e.capacity - 1)),
                interval=data.draw(st.one_of(st.none(), st.integers(0, 6)))) for e in net.edges)
    rate, exact = network_rate(net, timing)
    assert exact
    waits = event_graph(net, timing, batch_waits=True)
    assert brute_force_rate(waits) <= rate <= throughput_bound(net, timing).rate
    target = nodes_rate(net, timing)
    sized = full_rate_sizing(net, timing, rate)
    capacities = {e.name: sized.get(e.name, e.capacity) for e in net.edges}
    assert network_rate(net, timing, capacities)[0] == target
    for name in sized:
        assert network_rate(net, timing, {**capacities, name: capacities[name] - 1})[0] < target

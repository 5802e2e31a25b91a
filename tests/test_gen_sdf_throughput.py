"""Self-timed throughput of SDF networks with bounded channels (gen/sdf/throughput.py): on rate-1 graphs
against the maximum cycle ratio of the equivalent marked graph (every cycle, by enumeration), and on
multirate graphs against a cycle-by-cycle simulation of the same rules over ten periods."""

from __future__ import annotations

from dataclasses import replace
from fractions import Fraction

import networkx as nx
from graphs import sdf_edge, sdf_networks
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from sfdf.gen.model import Network, Node
from sfdf.gen.sdf.liveness import ample, bounded_execution
from sfdf.gen.sdf.rates import edge_rates, phases, repetitions
from sfdf.gen.sdf.throughput import self_timed_throughput


def max_cycle_ratio_rate(network, durations) -> Fraction:
    """1 / the maximum over the cycles of (cycles of its nodes) / (tokens on its edges) of the marked graph
    of a rate-1 network: each edge's items forward, its free room backward, one token on a self-loop per
    node (one firing at a time); 0 when a cycle holds no token."""
    graph = nx.DiGraph()
    def add(u, v, tokens):
        if not graph.has_edge(u, v) or graph[u][v]["tokens"] > tokens:
            graph.add_edge(u, v, tokens=tokens)
    for n in network.nodes:
        add(n.name, n.name, 1)
    for e in network.edges:
        add(e.src, e.dst, e.initial)
        add(e.dst, e.src, e.capacity - e.initial)
    worst = Fraction(0)
    for cycle in nx.simple_cycles(graph):
        pairs = list(zip(cycle, cycle[1:] + cycle[:1], strict=True))
        tokens = sum(graph[u][v]["tokens"] for u, v in pairs)
        time = sum(durations[n] for n in cycle)
        if tokens == 0:
            return Fraction(0)
        worst = max(worst, Fraction(time, tokens))
    return 1 / worst


@st.composite
def rate_one(draw):
    """A connected rate-1 network of 2-5 nodes (a DAG, sometimes a feedback edge with initial items),
    capacities 1-4 and durations 1-5."""
    n = draw(st.integers(2, 5))
    names = [f"n{k}" for k in range(n)]
    edges = [sdf_edge(f"e{k}", names[draw(st.integers(0, k - 1))], names[k]) for k in range(1, n)]
    edges += [sdf_edge(f"x{a}{b}", names[a], names[b]) for a in range(n) for b in range(a + 1, n)
              if draw(st.integers(0, 3)) == 0]
    if draw(st.booleans()):
        edges.append(sdf_edge("back", names[-1], names[0], initial=draw(st.integers(1, 2))))
    edges = [replace(e, capacity=draw(st.integers(max(e.initial, 1), 4))) for e in edges]
    durations = {x: draw(st.integers(1, 5)) for x in names}
    return Network(name="r1", nodes=tuple(Node(x) for x in names), edges=tuple(edges)), durations


@settings(max_examples=80, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(rate_one())
def test_rate_one_throughput_is_the_marked_graphs_cycle_bound(case):
    net, durations = case
    result = self_timed_throughput(net, durations)
    assert result.iterations_per_cycle == max_cycle_ratio_rate(net, durations)
    assert result.deadlocked == (not bounded_execution(net).live)


def stepped_firings(network, durations, cycles: int, node: str) -> list[int]:
    """Completed firings of ``node`` at the end of each cycle, simulated one cycle at a time."""
    count = phases(network)
    rates = {e.name: edge_rates(e, count) for e in network.edges}
    names = [n.name for n in network.nodes]
    items = {e.name: e.initial for e in network.edges}
    room = {e.name: e.capacity - e.initial for e in network.edges}
    phase, left, done = dict.fromkeys(names, 0), dict.fromkeys(names, 0), dict.fromkeys(names, 0)
    trace = []
    for _ in range(cycles):
        for n in names:
            k = phase[n]
            if not left[n] and all(items[e.name] >= rates[e.name][2][k] for e in network.in_edges(n)) and \
                    all(room[e.name] >= rates[e.name][0][k] for e in network.out_edges(n)):
                for e in network.in_edges(n):
                    items[e.name] -= rates[e.name][1][k]
                for e in network.out_edges(n):
                    room[e.name] -= rates[e.name][0][k]
                left[n] = durations[n][k]
        for n in names:
            if left[n]:
                left[n] -= 1
                if not left[n]:
                    k = phase[n]
                    for e in network.out_edges(n):
                        items[e.name] += rates[e.name][0][k]
                    for e in network.in_edges(n):
                        room[e.name] += rates[e.name][1][k]
                    phase[n] = (k + 1) % count[n]
                    done[n] += 1
        trace.append(done[node])
    return trace


@st.composite
def timed(draw):
    net = draw(sdf_networks(max_nodes=4))
    net = replace(net, messages=(), edges=tuple(
        replace(e, capacity=draw(st.integers(max(e.initial, 1), ample(net, e) + 2))) for e in net.edges))
    count = phases(net)
    durations = {n.name: tuple(draw(st.integers(1, 4)) for _ in range(count[n.name])) for n in net.nodes}
    return net, durations


@settings(max_examples=120, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(timed())
def test_multirate_throughput_is_what_a_cycle_by_cycle_run_does_over_ten_periods(case):
    net, durations = case
    result = self_timed_throughput(net, durations)
    node = net.nodes[0].name
    if result.deadlocked:  # nothing completes after the cycle it stopped at
        trace = stepped_firings(net, durations, result.transient + 50, node)
        assert len(set(trace[result.transient:])) == 1
        return
    end = result.transient + 10 * result.period
    trace = stepped_firings(net, durations, end, node)
    before = trace[result.transient - 1] if result.transient else 0
    assert trace[end - 1] - before == 10 * result.period * result.firings_per_cycle(repetitions(net), node)


def test_a_channel_of_one_halves_a_chain_and_two_restore_it():
    """A -> B, rate 1, one cycle each: capacity 1 makes them take turns (1/2 per cycle), 2 lets both run."""
    def chain(capacity):
        return Network(name="ab", nodes=(Node("A"), Node("B")),
                       edges=(replace(sdf_edge("ab", "A", "B"), capacity=capacity),))
    assert self_timed_throughput(chain(1), {"A": 1, "B": 1}).iterations_per_cycle == Fraction(1, 2)
    assert self_timed_throughput(chain(2), {"A": 1, "B": 1}).iterations_per_cycle == 1
    # 004's radio-like rates: A pushes 512 in 512 cycles, B pops 512 in 512: a double buffer is full rate
    big = Network(name="ab", nodes=(Node("A"), Node("B")),
                  edges=(replace(sdf_edge("ab", "A", "B", push=512, pop=512), capacity=1024),))
    assert self_timed_throughput(big, {"A": 512, "B": 512}).iterations_per_cycle == Fraction(1, 512)
    single = replace(big, edges=(replace(big.edges[0], capacity=512),))
    assert self_timed_throughput(single, {"A": 512, "B": 512}).iterations_per_cycle == Fraction(1, 1024)

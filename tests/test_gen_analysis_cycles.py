"""Undirected cycles, bridges and biconnected components (002 Sec. 2, 3.2) against brute force."""

import random
from collections import Counter
from dataclasses import replace
from itertools import combinations

import networkx as nx
import pytest
from graphs import dags
from hypothesis import given, settings

from sfdf.gen.analysis import ALGORITHMS, check, intervals
from sfdf.gen.analysis.cycles import (
    DirectedPath,
    biconnected_edge_components,
    cycle_structure,
    edges_on_cycles,
    has_potential_deadlock,
    maximal_paths_on_cycle,
    sender_paths,
    undirected_cycles,
)
from sfdf.gen.randomnet import layered_dag, network_from_pairs, random_dag
from sfdf.gen.refmodel import simulate
from sfdf.gen.spec import load_spec


def net(*edges, caps=None):
    """A network from ``"u>v"`` strings (nodes in order of appearance)."""
    pairs = [tuple(e.split(">")) for e in edges]
    nodes = list(dict.fromkeys(n for p in pairs for n in p))
    return network_from_pairs(nodes, pairs, caps or [1] * len(pairs))


DIAMOND = net("u>v", "v>x", "u>w", "w>x")
PARALLEL = net("u>v", "u>v")
# Two diamonds sharing node x, then a bridge x2 -> y.
TWO_DIAMONDS = net("u>v", "v>x", "u>w", "w>x", "x>a", "a>y", "x>b", "b>y", "y>z")


def edge_set_cycles(network):
    """Brute force over edge subsets: the edge sets forming one simple undirected cycle."""
    found = set()
    for k in range(2, len(network.edges) + 1):
        for subset in combinations(network.edges, k):
            g = nx.MultiGraph()
            g.add_edges_from((e.src, e.dst) for e in subset)
            if all(d == 2 for _, d in g.degree()) and nx.is_connected(g):
                found.add(frozenset(e.name for e in subset))
    return found


def check_closed_walk(network, cycle):
    """The cycle is a closed walk visiting each vertex once."""
    heads = []
    tails = []
    for name, forward in cycle:
        e = network.edge_by_name[name]
        tail, head = (e.src, e.dst) if forward else (e.dst, e.src)
        tails.append(tail)
        heads.append(head)
    assert heads == tails[1:] + tails[:1]
    assert len(set(tails)) == len(tails)


def check_split(network, cycle):
    """Maximal paths partition the cycle, are directed, alternate, and pair up at senders."""
    paths = maximal_paths_on_cycle(network, cycle)
    assert len(paths) % 2 == 0 and len(paths) >= 2
    assert sorted(n for p in paths for n in p.edges) == sorted(n for n, _ in cycle)
    for p in paths:
        nodes = [network.edge_by_name[p.edges[0]].src] + [network.edge_by_name[n].dst for n in p.edges]
        assert all(network.edge_by_name[a].dst == network.edge_by_name[b].src for a, b in zip(p.edges, p.edges[1:]))
        assert (nodes[0], nodes[-1]) == (p.sender, p.receiver)
    cycle_edges = [network.edge_by_name[n] for n, _ in cycle]
    for p in paths:  # a sender's cycle edges both leave it, a receiver's both enter it
        assert all(e.dst != p.sender and e.src != p.receiver for e in cycle_edges)
    pairs = list(sender_paths(paths))
    assert len(pairs) == len(paths) // 2
    assert {s for s, _, _ in pairs} == {p.sender for p in paths}


def test_diamond_cycle():
    assert list(undirected_cycles(DIAMOND)) == [(("u_v", True), ("v_x", True), ("w_x", False), ("u_w", False))]


def test_diamond_split():
    (cycle,) = undirected_cycles(DIAMOND)
    assert maximal_paths_on_cycle(DIAMOND, cycle) == (
        DirectedPath(("u_v", "v_x"), "u", "x"),
        DirectedPath(("u_w", "w_x"), "u", "x"),
    )


def test_parallel_edges_form_a_2_cycle():
    assert list(undirected_cycles(PARALLEL)) == [(("u_v", True), ("u_v_2", False))]
    assert has_potential_deadlock(PARALLEL)
    assert edges_on_cycles(PARALLEL) == {"u_v", "u_v_2"}
    assert biconnected_edge_components(PARALLEL) == {"u_v": 0, "u_v_2": 0}


def test_chain_has_no_cycle():
    chain = net("a>b", "b>c", "a>d")
    assert list(undirected_cycles(chain)) == []
    assert not has_potential_deadlock(chain)
    assert edges_on_cycles(chain) == frozenset()
    assert biconnected_edge_components(chain) == {"a_b": 0, "b_c": 1, "a_d": 2}


def test_two_diamonds_components():
    assert biconnected_edge_components(TWO_DIAMONDS) == {
        "u_v": 0, "v_x": 0, "u_w": 0, "w_x": 0, "x_a": 1, "a_y": 1, "x_b": 1, "b_y": 1, "y_z": 2,
    }  # fmt: skip
    assert edges_on_cycles(TWO_DIAMONDS) == frozenset(TWO_DIAMONDS.edge_by_name) - {"y_z"}
    assert len(list(undirected_cycles(TWO_DIAMONDS))) == 2


def test_triangle_has_a_two_edge_path():
    triangle = net("a>b", "b>c", "a>c")
    (cycle,) = undirected_cycles(triangle)
    assert set(maximal_paths_on_cycle(triangle, cycle)) == {
        DirectedPath(("a_b", "b_c"), "a", "c"),
        DirectedPath(("a_c",), "a", "c"),
    }


def test_two_senders():
    # u -> x <- w -> y <- u: senders u and w, receivers x and y.
    square = net("u>x", "w>x", "w>y", "u>y")
    (cycle,) = undirected_cycles(square)
    paths = maximal_paths_on_cycle(square, cycle)
    assert {p.sender for p in paths} == {"u", "w"} and {p.receiver for p in paths} == {"x", "y"}
    check_split(square, cycle)


@settings(max_examples=120, deadline=None)
@given(dags())
def test_cycles_match_edge_subsets(network):
    cycles = list(undirected_cycles(network))
    edge_sets = [frozenset(n for n, _ in c) for c in cycles]
    assert len(edge_sets) == len(set(edge_sets))
    assert set(edge_sets) == edge_set_cycles(network)
    for cycle in cycles:
        check_closed_walk(network, cycle)
        check_split(network, cycle)
        assert cycle[0][1] and cycle[0][0] == min((n for n, _ in cycle), key=list(network.edge_by_name).index)


@settings(max_examples=150, deadline=None)
@given(dags(max_nodes=8, max_edges=12))
def test_deadlock_bridges_components_match_cycles(network):
    cycles = [frozenset(n for n, _ in c) for c in undirected_cycles(network)]
    assert has_potential_deadlock(network) == bool(cycles)
    assert edges_on_cycles(network) == frozenset().union(*cycles)
    component = biconnected_edge_components(network)
    assert set(component) == set(network.edge_by_name)
    for c in cycles:
        assert len({component[n] for n in c}) == 1
    # Conversely, two edges share a component only if some simple cycle holds both.
    for a, b in combinations(network.edge_by_name, 2):
        assert (component[a] == component[b]) == any({a, b} <= c for c in cycles)


# -- one cycle structure per topology ------------------------------------------------------------


@pytest.fixture
def derivations(monkeypatch):
    """Counts the runs of the two expensive derivations: biconnected components, cycle enumeration."""
    calls = Counter()

    def spy(name, real):
        def counted(*args, **kwargs):
            calls[name] += 1
            return real(*args, **kwargs)

        return counted

    for name in ("biconnected_component_edges", "simple_cycles"):
        monkeypatch.setattr(nx, name, spy(name, getattr(nx, name)))
    return calls


@pytest.mark.parametrize("spec, enumerates", [("variance.toml", False), ("blast.toml", True)])
def test_each_entry_point_derives_the_cycle_structure_once(examples, derivations, spec, enumerates):
    network = load_spec(examples / spec)
    assert cycle_structure(network).potential_deadlock
    derivations.clear()
    check(network)  # resolution, then the safety check of the resolved network: one topology
    # credit mode checks by the mirror graph and never needs the cycles themselves (000 Sec. 4.2)
    assert derivations == Counter(biconnected_component_edges=1, simple_cycles=enumerates)
    for algorithm in ALGORITHMS:
        derivations.clear()
        intervals(network, algorithm)
        assert max(derivations.values(), default=0) == (algorithm != "naive"), algorithm


def test_a_shared_structure_is_derived_once_for_every_pass(examples, derivations):
    network = load_spec(examples / "blast.toml")
    cycles = cycle_structure(network)
    check(network, cycles=cycles)
    for algorithm in ALGORITHMS:
        intervals(network, algorithm, cycles=cycles)
    # the same topology under another protocol: resolution and Propagation's components reuse it
    assert not simulate(replace(network, dummy_algorithm="propagation"), 20, cycles=cycles).deadlocked
    assert derivations == {"biconnected_component_edges": 1, "simple_cycles": 1}


def test_a_structure_serves_only_its_own_topology():
    cycles = cycle_structure(DIAMOND)
    resized = DIAMOND.with_edges(replace(e, capacity=7, interval=3) for e in DIAMOND.edges)
    assert cycle_structure(resized, cycles) is cycles
    with pytest.raises(ValueError, match=r"^The cycle structure passed for network 'random' must come from a "
                                         r"network with the same nodes and edges, not from 'random'$"):
        cycle_structure(TWO_DIAMONDS, cycles)


def test_cycles_are_enumerated_once_and_only_as_far_as_read(derivations):
    cycles = cycle_structure(TWO_DIAMONDS)
    expected = [(c, maximal_paths_on_cycle(TWO_DIAMONDS, c)) for c in undirected_cycles(TWO_DIAMONDS)]
    derivations.clear()
    first = cycles.cycles()
    assert next(first) == expected[0]
    assert cycles._found == expected[:1]  # the second cycle is not enumerated yet
    assert list(cycles.cycles()) == expected  # a second walk finishes the enumeration ...
    assert list(first) == expected[1:]  # ... and the first one reads on from the shared list
    assert derivations == {"simple_cycles": 1}


# -- the random networks themselves -------------------------------------------------------------


def check_random_network(network, n_edges, capacities=(1, 8)):
    assert len(network.edges) == n_edges
    assert len(network.edge_by_name) == n_edges
    assert nx.is_directed_acyclic_graph(network.graph())
    assert all(capacities[0] <= e.capacity <= capacities[1] for e in network.edges)
    assert all(e.output_buffer == 0 and e.interval == "auto" and e.threshold == "auto" for e in network.edges)


def test_random_dag():
    network = random_dag(random.Random(3), 12, 40, capacities=(2, 5))
    check_random_network(network, 40, (2, 5))
    assert [n.name for n in network.nodes] == [f"n{i}" for i in range(12)]


def test_random_dag_without_parallel_edges():
    network = random_dag(random.Random(4), 6, 15, parallel=False)
    check_random_network(network, 15)
    assert len({(e.src, e.dst) for e in network.edges}) == 15


def test_random_dag_too_many_edges():
    with pytest.raises(ValueError, match=r"^A DAG on 4 nodes has room for 6 edges without parallel ones; "
                                         r"asked for 7 edges \(parallel=False\)$"):
        random_dag(random.Random(0), 4, 7, parallel=False)


@pytest.mark.parametrize("n_edges, width", [(1, 2), (7, 4), (100, 8), (1000, 8), (999, 32)])
def test_layered_dag(n_edges, width):
    network = layered_dag(random.Random(n_edges), n_edges, width=width)
    check_random_network(network, n_edges)
    layer = {n.name: i // width for i, n in enumerate(network.nodes)}
    assert all(layer[e.dst] == layer[e.src] + 1 for e in network.edges)
    assert len({(e.src, e.dst) for e in network.edges}) == n_edges


def test_layered_dag_bad_width():
    with pytest.raises(ValueError, match=r"^Need n_edges >= 1, width >= 2 and 1 <= fanout <= width; "
                                         r"got n_edges=10, width=1, fanout=2$"):
        layered_dag(random.Random(0), 10, width=1)

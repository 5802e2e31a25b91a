"""Bounded channels of SDF networks (gen/sdf/liveness.py): the one execution it runs against every
interleaving (brute force over firing counts), the least live capacity against a scan of brute force,
and the capacity fix it names at a deadlock."""

from __future__ import annotations

import json
from collections import deque
from dataclasses import replace
from fractions import Fraction

from graphs import sdf_edge, sdf_networks
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from sfdf.gen.model import Network, Node
from sfdf.gen.sdf.liveness import ample, bounded_execution, capacity_fix, least_capacity
from sfdf.gen.sdf.rates import edge_rates, phases
from sfdf.gen.spec import load_spec

EXAMPLES = __import__("pathlib").Path(__file__).resolve().parents[1] / "examples"


def brute_live(network, capacities: dict[str, int]) -> bool:
    """No interleaving of firings (each node one at a time) reaches a state where no node can fire: a
    breadth-first search over every reachable state (the items on each edge and each node's phase; the
    capacities bound the items, so there are finitely many)."""
    names, edges = [n.name for n in network.nodes], list(network.edges)
    count = phases(network)
    rates = {e.name: edge_rates(e, count) for e in edges}
    where = {e.name: k for k, e in enumerate(edges)}

    def can_fire(node, items, phase):
        k = phase[names.index(node)]
        return (all(items[where[e.name]] >= rates[e.name][2][k] for e in network.in_edges(node))
                and all(capacities[e.name] - items[where[e.name]] >= rates[e.name][0][k]
                        for e in network.out_edges(node)))

    def fire(node, items, phase):
        k, items = phase[names.index(node)], list(items)
        for e in network.in_edges(node):
            items[where[e.name]] -= rates[e.name][1][k]
        for e in network.out_edges(node):
            items[where[e.name]] += rates[e.name][0][k]
        phase = list(phase)
        phase[names.index(node)] = (k + 1) % count[node]
        return tuple(items), tuple(phase)

    start = (tuple(e.initial for e in edges), tuple(0 for _ in names))
    seen, queue = {start}, deque([start])
    while queue:
        items, phase = queue.popleft()
        enabled = [n for n in names if can_fire(n, items, phase)]
        if not enabled:
            return False
        for node in enabled:
            if (state := fire(node, items, phase)) not in seen:
                seen.add(state)
                queue.append(state)
    return True


@st.composite
def bounded(draw):
    """A random consistent SDF network without messages, each capacity drawn between its initial items (at
    least 1) and one that never blocks its sender."""
    net = draw(sdf_networks(max_nodes=4))
    edges = tuple(replace(e, capacity=draw(st.integers(max(e.initial, 1), ample(net, e)))) for e in net.edges)
    return replace(net, edges=edges, messages=())


def capacities(network) -> dict[str, int]:
    return {e.name: e.capacity for e in network.edges}


@settings(max_examples=80, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(bounded())
def test_one_execution_decides_as_every_interleaving_does(net):
    assert bounded_execution(net).live == brute_live(net, capacities(net))


@settings(max_examples=30, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(bounded(), st.data())
def test_least_capacity_is_the_least_live_one_of_every_interleaving(net, data):
    e = data.draw(st.sampled_from(net.edges))
    caps = capacities(net)
    scan = next((c for c in range(max(e.initial, 1), ample(net, e) + 1) if brute_live(net, caps | {e.name: c})),
                None)
    assert least_capacity(net, e.name, limit=ample(net, e)) == scan


@settings(max_examples=40, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(bounded())
def test_a_deadlock_names_where_each_node_waits_and_a_capacity_that_fixes_it(net):
    run = bounded_execution(net)
    if run.live:
        assert not run.stalls
        return
    assert run.stalls and {s.waits for s in run.stalls} <= {"items", "room"}
    fix = capacity_fix(net, run.stalls)
    if fix is not None:
        edge, need = fix
        assert need > net.edge_by_name[edge].capacity
        assert brute_live(net, capacities(net) | {edge: need})
        assert not brute_live(net, capacities(net) | {edge: need - 1})


def test_a_chain_needs_room_for_a_whole_push():
    """A pushes 3, B pops 2: capacity 3 holds one push, and after B pops 2 the one item left leaves room
    for 2, not 3; 004's buffer (3 + 2 - gcd 1 = 4) is the least live capacity."""
    net = Network(name="ab", nodes=(Node("A"), Node("B")),
                  edges=(replace(sdf_edge("ab", "A", "B", push=3, pop=2), capacity=3),))
    run = bounded_execution(net)
    assert not run.live
    assert [s.describe() for s in run.stalls] == ["A waits for room for 3 items on ab (2 free)",
                                                  "B waits for 2 items on ab (1 there)"]
    assert capacity_fix(net, run.stalls) == ("ab", 4)


def test_the_examples_are_live_with_their_capacities():
    for name in ("teleport.toml", "fhr.toml"):
        net = load_spec(EXAMPLES / name)
        assert bounded_execution(net).live, name
        assert bounded_execution(net, messages=False).live, name


CHAIN = """[network]
name = "ab"

[[node]]
name = "A"

[[node]]
name = "B"

[[edge]]
from = "A"
to = "B"
capacity = {capacity}
push = 3
pop = 2
"""


def check(capsys, tmp_path, capacity, *flags):
    from sfdf.cli import main

    path = tmp_path / "ab.toml"
    path.write_text(CHAIN.format(capacity=capacity))
    status = main(["check", str(path), *flags])
    out, err = capsys.readouterr()
    return status, out, err


def test_check_names_the_edge_one_too_small_and_the_capacity_it_needs(capsys, tmp_path):
    status, out, _ = check(capsys, tmp_path, 3)
    assert status == 1
    assert out.splitlines() == [
        ("ab: SDF, deadlocks with these capacities after 2 firings: A waits for room for 3 items on A_B (2 free); "
         "B waits for 2 items on A_B (1 there)"),
        "  edge A_B: capacity 3 -> 4 makes it live (the least, the other capacities as they are)"]
    status, out, _ = check(capsys, tmp_path, 4, "--json")
    report = json.loads(out)
    assert status == 0 and report["deadlock_free"] and not report["violations"]
    assert report["sdf"]["least_capacities"] == {"A_B": 4} and report["sdf"]["repetitions"] == {"A": 2, "B": 3}
    status, out, _ = check(capsys, tmp_path, 3, "--json")
    report = json.loads(out)
    assert status == 1 and report["potential_deadlock"] and report["sdf"]["fix"] == {"edge": "A_B", "capacity": 4}
    assert report["violations"][0]["kind"] == "capacity" and report["violations"][0]["edges"] == ["A_B"]


def test_check_gives_the_hardwares_throughput_and_sized_writes_the_full_rate_capacities(capsys, tmp_path):
    """A pushes 3, B pops 2: at the least live capacity the hardware alternates; --sized writes the capacity at
    which it runs at the rate the nodes allow (A writing every cycle), checked again."""
    from sfdf.gen.sdf.pipeline import hardware_throughput

    out_path = tmp_path / "sized.toml"
    status, out, _ = check(capsys, tmp_path, 4, "--json", "--sized", str(out_path))
    report = json.loads(out)
    rate = report["sdf"]["throughput"]
    assert status == 0 and rate["full_rate"]["exact"] == "1/6"  # A writes 2 x 3 items an iteration, one a cycle
    assert rate["iterations_per_cycle"]["value"] < rate["full_rate"]["value"]
    sized = rate["full_rate_sizing"]["A_B"]
    assert report["sized"]["written"] and report["sized"]["iterations_per_cycle"] == rate["full_rate"]
    written = load_spec(out_path)
    assert written.edge_by_name["A_B"].capacity == sized
    assert hardware_throughput(written, {"A_B": sized - 1}).iterations_per_cycle < Fraction(1, 6)


def test_check_repair_is_refused_for_an_sdf_network_in_one_line(capsys, tmp_path):
    status, _, err = check(capsys, tmp_path, 4, "--repair")
    assert status == 2 and err.count("\n") == 1 and "--repair: does not apply to an SDF network" in err

"""Safety analysis against brute-force cycle enumeration (000 (3)-(5), 003 (2)-(5), 002 Thm. 3.2/3.3)."""

from dataclasses import replace
from fractions import Fraction

import numpy as np
import pytest
from graphs import dags
from hypothesis import given, settings
from hypothesis import strategies as st
from scipy.optimize import Bounds, LinearConstraint, milp

from sfdf.gen.analysis import check, intervals, repair_output_buffers, resolve
from sfdf.gen.analysis.cycles import edges_on_cycles, maximal_paths_on_cycle, undirected_cycles
from sfdf.gen.analysis.heartbeat import heartbeat_intervals
from sfdf.gen.analysis.mirror import find_nonpositive_cycle, mirror_arcs, potentials
from sfdf.gen.analysis.output_buffers import output_buffer_cycle
from sfdf.gen.model import Edge, Network, Node

SETTINGS = settings(max_examples=150, deadline=None)


# -- brute force -------------------------------------------------------------------------------------
def cycle_sums(network, cycle, hidden):
    """Both orientations of one undirected cycle: (hidden one way, capacity the other way)."""
    edges = network.edge_by_name
    fwd = [n for n, f in cycle if f]
    back = [n for n, f in cycle if not f]
    return [
        (sum(hidden[n] for n in fwd), sum(edges[n].capacity for n in back)),
        (sum(hidden[n] for n in back), sum(edges[n].capacity for n in fwd)),
    ]


def brute_safe(network, hidden, per_edge=True):
    """Every undirected cycle satisfies sum hidden < sum capacity both ways (and (5) per edge)."""
    if per_edge and any(hidden[e.name] >= e.capacity for e in network.edges):
        return False
    return all(h < c for cyc in undirected_cycles(network) for h, c in cycle_sums(network, cyc, hidden))


def brute_best_total(network, upper):
    """Exact integer optimum of sum h under the enumerated cycle constraints (MILP)."""
    names = [e.name for e in network.edges]
    if not names:
        return 0
    col = {n: i for i, n in enumerate(names)}
    rows, ub = [], []
    for cyc in undirected_cycles(network):
        fwd = [n for n, f in cyc if f]
        back = [n for n, f in cyc if not f]
        for hid, cap in ((fwd, back), (back, fwd)):
            row = np.zeros(len(names))
            for n in hid:
                row[col[n]] += 1
            rows.append(row)
            ub.append(sum(network.edge_by_name[n].capacity for n in cap) - 1)
    cons = [LinearConstraint(np.array(rows), -np.inf, np.array(ub))] if rows else []
    res = milp(-np.ones(len(names)), constraints=cons, integrality=np.ones(len(names)),
               bounds=Bounds(np.zeros(len(names)), np.array([upper[n] for n in names], float)))
    return round(-res.fun)


def amounts(draw, network, top=12):
    return {e.name: draw(st.integers(0, top)) for e in network.edges}


# -- the mirror graph is exact ---------------------------------------------------------------------
@SETTINGS
@given(dags(), st.data())
def test_mirror_check_equals_cycle_enumeration(network, data):
    hidden = amounts(data.draw, network)
    found = find_nonpositive_cycle(mirror_arcs(network, hidden))
    assert (found is None) == brute_safe(network, hidden)
    if found is not None:  # the reported cycle really violates
        assert sum(a.weight for a in found) <= 0
        assert found[0].tail == found[-1].head


@SETTINGS
@given(dags(), st.data())
def test_potentials_characterise_feasible_intervals(network, data):
    """Issue claim: integer [e] feasible iff potentials with [e] + d <= pi(v) - pi(u) <= |q| - d exist."""
    hidden = amounts(data.draw, network)
    arcs = mirror_arcs(network, hidden)
    pi = potentials(arcs)
    assert (pi is not None) == brute_safe(network, hidden)
    if pi is not None:
        k = len({a.tail for a in arcs} | {a.head for a in arcs})
        d = Fraction(1, k + 1)
        for e in network.edges:
            diff = Fraction(pi[e.dst] - pi[e.src], k + 1)
            assert hidden[e.name] + d <= diff <= e.capacity - d


# -- auto heartbeats: feasible, and close to the best total --------------------------------------------
@SETTINGS
@given(dags(max_edges=8))
def test_auto_heartbeats_are_feasible_and_near_optimal(network):
    chosen = intervals(network, "heartbeat")
    assert brute_safe(network, chosen)
    upper = {e.name: e.capacity - 1 for e in network.edges}
    best = brute_best_total(network, upper)
    total = sum(chosen.values())
    assert total <= best
    # rounding the LP vertex loses less than one unit per edge on a cycle
    assert best - total < max(1, len(edges_on_cycles(network)))


def test_auto_heartbeats_gap_is_small_on_average():
    """Report how far the LP + floor is from the exact optimum on random small DAGs."""
    import random

    from sfdf.gen.randomnet import random_dag

    rng = random.Random(5)
    gaps = []
    for _ in range(60):
        net = random_dag(rng, rng.randint(3, 7), rng.randint(3, 10))
        upper = {e.name: e.capacity - 1 for e in net.edges}
        best = brute_best_total(net, upper)
        gaps.append(best - sum(intervals(net, "heartbeat").values()))
    assert min(gaps) >= 0
    assert sum(gaps) / len(gaps) <= 1.0, gaps


def test_bridge_heartbeat_is_capacity_minus_one():
    net = Network("p", [Node("a"), Node("b"), Node("c")],
                  [Edge("ab", "a", "b", 9), Edge("bc", "b", "c", 3)])
    assert intervals(net, "heartbeat") == {"ab": 8, "bc": 2}


def test_fig3_diamond_heartbeats():
    """000 Fig. 3 capacities: 31 on every edge (31 + 31 < 32 + 32, and 31 < 32)."""
    assert intervals(diamond(32, 32, 32, 32), "heartbeat") == dict.fromkeys(["uv", "uw", "vx", "wx"], 31)


def test_unbounded_control_forces_heartbeat_zero():
    net = Network("p", [Node("a", control_messages=None), Node("b")], [Edge("ab", "a", "b", 9)])
    assert resolve(net).edges[0].interval == 0


def test_user_heartbeats_are_kept_and_others_fill_in():
    net = diamond(8, 8, 8, 8, intervals={"uv": 7, "vx": 7})
    got = {e.name: e.interval for e in resolve(net).edges}
    assert got["uv"] == 7 and got["vx"] == 7
    assert brute_safe(net, got)
    assert got["uw"] + got["wx"] == 14  # 7 + 7 < 8 + 8 both ways; (5) caps each at 7


# -- credit-mode check -----------------------------------------------------------------------------
def diamond(uv, uw, vx, wx, mode="credit", intervals=None, **kw):
    caps = {"uv": uv, "uw": uw, "vx": vx, "wx": wx}
    iv = intervals or {}
    return Network("diamond", [Node(n) for n in "uvwx"],
                   [Edge(n, n[0], n[1], c, interval=iv.get(n, "auto"), **kw) for n, c in caps.items()],
                   mode=mode)


def kinds(report):
    return sorted(v.kind for v in report.violations)


def test_check_fig3_without_heartbeats_is_unsafe():
    report = check(diamond(32, 32, 32, 32, intervals=dict.fromkeys(["uv", "uw", "vx", "wx"], None)))
    assert not report.deadlock_free
    assert kinds(report) == ["heartbeat_missing"] * 4
    assert report.to_json()["intervals"] == dict.fromkeys(["uv", "uw", "vx", "wx"], None)


def test_check_heartbeat_cycle_names_the_cycle():
    report = check(diamond(4, 16, 4, 16, intervals={"uw": 15, "wx": 15, "uv": 3, "vx": 3}))
    (v,) = report.violations
    assert v.kind == "heartbeat_cycle"
    assert sorted(v.edges) == ["uv", "uw", "vx", "wx"]
    assert "total 30 >= capacity on" in v.detail and "total 8" in v.detail


@SETTINGS
@given(dags(), st.data())
def test_credit_check_equals_enumeration(network, data):
    hidden = amounts(data.draw, network)
    report = check(replace(network.with_intervals(hidden), mode="credit"))
    assert report.deadlock_free == brute_safe(network, hidden)
    assert report.potential_deadlock == bool(edges_on_cycles(network))


def test_check_json_has_the_contract_keys():
    js = check(diamond(4, 4, 4, 4)).to_json()
    assert {"network", "potential_deadlock", "deadlock_free", "violations", "intervals"} <= set(js)


@pytest.mark.parametrize("live", [True, False])
def test_check_says_which_credit_receiver(live):
    report = check(replace(diamond(4, 4, 4, 4), mode="credit", live_credit=live))
    assert report.to_json()["live_credit"] is live
    assert report.summary_lines()[0].endswith("live credit)" if live else "no live credit)")
    assert check(replace(diamond(4, 4, 4, 4), mode="inband")).to_json()["live_credit"] is None


# -- output buffers (003) ----------------------------------------------------------------------------
def ob_net(base, obs):
    net = base.with_edges([replace(e, output_buffer=obs[e.name]) for e in base.edges])
    return replace(net, mode="inband", filtering=False)


def test_fig2_output_buffers_unsafe_and_repaired():
    net = ob_net(diamond(4, 16, 4, 16), {"uv": 0, "vx": 0, "uw": 8, "wx": 8})
    report = check(net)
    (v,) = report.violations
    assert v.kind == "output_buffer_cycle" and "total 14" in v.detail and "total 8" in v.detail
    fix = repair_output_buffers(net)
    fixed = ob_net(net, {**{e.name: e.output_buffer for e in net.edges}, **fix})
    assert check(fixed).deadlock_free
    # the smallest total reduction: hidden |uw|'_o + |wx|'_o must drop from 14 to 7 < 4 + 4
    after = {e.name: fix.get(e.name, e.output_buffer) for e in net.edges}
    assert sum(max(o - 1, 0) for o in after.values()) == 7


def test_erratum3_output_buffer_of_one_is_none():
    """003 Claim 4.3 printed weight -|q|_o calls |q|_o = 1 unsafe; the corrected -(|q|_o - 1) does not."""
    net = ob_net(diamond(1, 1, 1, 1), dict.fromkeys(["uv", "uw", "vx", "wx"], 1))
    printed = {e.name: e.output_buffer for e in net.edges}
    assert find_nonpositive_cycle(mirror_arcs(net, printed)) is not None  # the printed weight
    assert output_buffer_cycle(net) is None
    assert check(net).deadlock_free


def test_erratum3_printed_floyd_warshall_misses_the_cycle():
    """003 Alg. 1 keeps the larger of d_ij and d_ik + d_kj: on 003 Fig. 2 it sees no cycle."""
    net = ob_net(diamond(4, 16, 4, 16), {"uv": 0, "vx": 0, "uw": 8, "wx": 8})
    arcs = mirror_arcs(net, {e.name: max(e.output_buffer - 1, 0) for e in net.edges})
    nodes = sorted({a.tail for a in arcs})
    inf = float("inf")

    def floyd(better):
        d = {(i, j): inf for i in nodes for j in nodes}
        for a in arcs:
            d[a.tail, a.head] = min(d[a.tail, a.head], a.weight)
        for k in nodes:
            for i in nodes:
                for j in nodes:
                    if d[i, k] + d[k, j] != inf and better(d[i, k] + d[k, j], d[i, j]):
                        d[i, j] = d[i, k] + d[k, j]
                    if d[i, i] <= 0:
                        return True
        return False

    assert floyd(lambda new, old: old < new) is False  # printed: "if d_ij < d_ik + d_kj then update"
    assert floyd(lambda new, old: new < old) is True


@SETTINGS
@given(dags(), st.data())
def test_output_buffer_check_equals_enumeration(network, data):
    obs = {e.name: data.draw(st.integers(0, e.capacity)) for e in network.edges}
    net = ob_net(network, obs)
    hidden = {n: max(o - 1, 0) for n, o in obs.items()}
    assert check(net).deadlock_free == brute_safe(net, hidden, per_edge=False)


@settings(max_examples=80, deadline=None)
@given(dags(max_edges=7), st.data())
def test_repair_is_safe_and_minimal(network, data):
    obs = {e.name: data.draw(st.integers(0, e.capacity)) for e in network.edges}
    net = ob_net(network, obs)
    fix = repair_output_buffers(net)
    repaired = ob_net(net, {**obs, **fix})
    assert check(repaired).deadlock_free
    assert all(fix[n] < obs[n] for n in fix)
    hidden = {n: max(o - 1, 0) for n, o in obs.items()}
    best = brute_best_total(net, hidden)
    kept = sum(max(o - 1, 0) for o in {**obs, **fix}.values())
    assert best - kept < max(1, len(edges_on_cycles(net)))


# -- inband interval checks -------------------------------------------------------------------------
def inband_brute_safe(network, ivs, first_only):
    for cyc in undirected_cycles(network):
        paths = maximal_paths_on_cycle(network, cyc)
        walked = {n for n, f in cyc if f}
        for empty_fwd in (True, False):
            empty = [p for p in paths if (p.edges[0] in walked) == empty_fwd]
            full = [p for p in paths if (p.edges[0] in walked) != empty_fwd]
            cost = [ivs[p.edges[0]] - 1 for p in empty] if first_only else [
                ivs[n] - 1 for p in empty for n in p.edges]
            if sum(cost) >= sum(network.edge_by_name[n].capacity for p in full for n in p.edges):
                return False
    return True


@SETTINGS
@pytest.mark.parametrize("algorithm", ["nonpropagation", "propagation", "naive"])
@given(network=dags(), data=st.data())
def test_inband_check_equals_enumeration(algorithm, network, data):
    ivs = {e.name: data.draw(st.integers(1, 20)) for e in network.edges}
    net = replace(network.with_intervals(ivs), mode="inband", dummy_algorithm=algorithm)
    assert check(net).deadlock_free == inband_brute_safe(net, ivs, algorithm == "propagation")


@SETTINGS
@pytest.mark.parametrize("algorithm", ["nonpropagation", "propagation", "naive"])
@given(network=dags())
def test_inband_auto_intervals_pass_the_check(algorithm, network):
    net = replace(network, mode="inband", dummy_algorithm=algorithm)
    assert check(net).deadlock_free


def test_heartbeat_intervals_handles_forced_zero_and_fixed():
    net = diamond(8, 8, 8, 8)
    got = heartbeat_intervals(net, edges_on_cycles(net), {"uv": 0})
    assert got["uv"] == 0 and brute_safe(net, got)

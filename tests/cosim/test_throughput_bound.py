"""The throughput bound of ``sfdf check`` (gen/analysis/throughput.py on hdl/timing.py's cycles) against the
generated hardware on Verilator: chains whose capacity or a node's initiation interval binds, a residual
block and a split-join whose reconvergent paths bind, in credit and in-band mode, generic (pipelined, as
ECP5) and for iCE40 (unpipelined), with nodes whose spec turns their offer registers off or makes them
single-stage (``pipelined = false``), and with 000's
credit batches (``live_credit = false``). Sinks always ready, no filtering, one frame; the rate is the
sink's beats per cycle from its first beat to its last."""

from __future__ import annotations

import itertools
import random
from dataclasses import replace
from fractions import Fraction

import pytest

from sfdf.cosim.rates import run_measurement, steady_rate
from sfdf.gen.analysis import check
from sfdf.gen.analysis.throughput import network_rate, throughput_bound, throughput_summary
from sfdf.gen.model import Edge, Network, Node
from sfdf.gen.randomnet import random_dag
from sfdf.gen.refmodel import random_words
from sfdf.hdl.dsp import FamilyOnly
from sfdf.hdl.timing import stage_timing

pytestmark = pytest.mark.cosim

WORDS = 400


def network(name, paths, capacity, capacities=None, mode="credit", output_buffers=None, ii=None, unregistered=(),
            thresholds=None, single=()):
    """``thresholds``: edge -> T of 000's batched credits (``live_credit = false`` on the whole network);
    ``single``: single-stage nodes (``pipelined = false``)."""
    pairs = list(dict.fromkeys(p for path in paths for p in itertools.pairwise(path)))
    names = list(dict.fromkeys(v for path in paths for v in path))
    edges = tuple(Edge(f"{u}_{v}", u, v, (capacities or {}).get(f"{u}_{v}", capacity),
                       output_buffer=(output_buffers or {}).get(f"{u}_{v}", 0),
                       threshold=(thresholds or {}).get(f"{u}_{v}", "auto")) for u, v in pairs)
    return Network(name, tuple(Node(v, ii=(ii or {}).get(v, 1), registered_offers=v not in unregistered,
                                    pipelined=v not in single)
                               for v in names), edges, mode=mode, live_credit=thresholds is None)


CHAIN = [["n0", "n1", "n2", "n3"]]
PAIR = [["u", "x"]]
RESIDUAL = [["a", "b1", "b2", "b3", "e"], ["a", "e"]]
SPLIT = [["a", "b1", "b2", "b3", "e"], ["a", "c1", "e"]]

#: name -> (network, platform family or None, the bound as worked out by hand)
CASES = {
    "chain_q1": (network("tb_chain_q1", CHAIN, 1), None, Fraction(1, 3)),
    "chain_q2": (network("tb_chain_q2", CHAIN, 2), None, Fraction(2, 3)),
    "chain_ii3": (network("tb_chain_ii3", CHAIN, 4, ii={"n2": 3}), None, Fraction(1, 3)),
    "residual": (network("tb_residual", RESIDUAL, 16, {"a_e": 4}), None, Fraction(4, 12)),
    "residual_inband": (network("tb_residual_ib", RESIDUAL, 16, {"a_e": 4}, mode="inband"), None, Fraction(4, 12)),
    "split": (network("tb_split", SPLIT, 4), None, Fraction(10, 14)),
    # registered_offers = false: a cycle less per hop into those nodes (into e, a join, in "split_u")
    "residual_u": (network("tb_residual_u", RESIDUAL, 16, {"a_e": 4}, unregistered=("b1", "b2", "b3")), None,
                   Fraction(4, 9)),
    "residual_inband_u": (network("tb_residual_ib_u", RESIDUAL, 16, {"a_e": 4}, mode="inband",
                                  unregistered=("b1", "b2", "b3", "e")), None, Fraction(4, 8)),
    "split_u": (network("tb_split_u", SPLIT, 4, unregistered=("e",)), None, Fraction(10, 13)),
    # pipelined = false: one cycle per hop along the branch (a token pushed at t is consumed at t + 1)
    "residual_s": (network("tb_residual_s", RESIDUAL, 16, {"a_e": 4}, single=("b1", "b2", "b3")), None,
                   Fraction(4, 6)),
    "split_s": (network("tb_split_s", SPLIT, 4, single=("b1", "b2", "b3", "c1")), None, Fraction(1)),
    "chain_q1_s": (network("tb_chain_q1_s", CHAIN, 1, single=("n1", "n2")), None, Fraction(1, 3)),
    "residual_s_ice40": (network("tb_residual_s_i", RESIDUAL, 16, {"a_e": 4}, single=("b1", "b2", "b3")), "ice40",
                         Fraction(4, 6)),
    # 000's receiver as printed: batches of T + 1 against |q| = 16 and 3 cycles (2 without x's register)
    "batch_t14": (network("tb_batch_t14", PAIR, 16, thresholds={"u_x": 14}), None, Fraction(15, 16)),
    "batch_t15": (network("tb_batch_t15", PAIR, 16, thresholds={"u_x": 15}), None, Fraction(8, 9)),
    "batch_t15_u": (network("tb_batch_t15_u", PAIR, 16, thresholds={"u_x": 15}, unregistered=("x",)), None,
                    Fraction(16, 17)),
    "batch_q5_t3": (network("tb_batch_q5", PAIR, 5, thresholds={"u_x": 3}), None, Fraction(4, 5)),
    # a chain: each edge's batches alone (measured equal to the slower edge's)
    "batch_chain": (network("tb_batch_chain", [["n0", "n1", "n2"]], 8, thresholds={"n0_n1": 6, "n1_n2": 5}), None,
                    Fraction(7, 8)),
    "chain_q1_ice40": (network("tb_chain_q1_i", CHAIN, 1), "ice40", Fraction(1, 2)),
    # iCE40: one cycle per hop, but e (a join of two inputs) has one-slot offer registers: two on b3 -> e
    "split_ice40": (network("tb_split_i", SPLIT, 2), "ice40", Fraction(6, 11)),
}


@pytest.mark.parametrize("case", list(CASES))
def test_hardware_streams_at_the_bound(case, verilator_toolchain, cosim_build_root):
    net, family, expected = CASES[case]
    report = check(net)
    resolved = report.network
    platform = FamilyOnly(family) if family else None
    bound = throughput_bound(resolved, stage_timing(resolved, platform))
    assert bound.rate == expected
    inputs = {s: [random_words(1, s, WORDS)] for s in resolved.sources}
    raw, _ = run_measurement(net, inputs, cosim_build_root / "throughput", platform=platform, report=report)
    (sink,) = resolved.sinks
    assert len(raw["sink_beat_cycles"][sink]) == WORDS  # nothing filtered
    assert steady_rate(raw["sink_beat_cycles"][sink]) == pytest.approx(float(bound.rate), rel=0.015)


def test_output_buffers_only_slow_the_hardware_below_the_bound(verilator_toolchain, cosim_build_root):
    """In-band output buffers (003) hide tokens until a flush, which the bound does not model: the long
    branch's buffers of 4 slow the residual block below its 2/3 (measured 0.576)."""
    net = network("tb_residual_ob", RESIDUAL, 16, {"a_e": 8}, mode="inband", output_buffers={"a_b1": 4, "b1_b2": 4})
    report = check(net)
    bound = throughput_bound(report.network, stage_timing(report.network))
    assert bound.rate == Fraction(2, 3)
    raw, _ = run_measurement(net, {"a": [random_words(1, "a", WORDS)]}, cosim_build_root / "throughput", report=report)
    assert steady_rate(raw["sink_beat_cycles"]["e"]) < 0.95 * float(bound.rate)


def test_credit_batches_add_their_waits_along_a_reconvergent_path(verilator_toolchain, cosim_build_root):
    """000's batched credits on a split-join (T = 15, capacity 16; the long branch's first two edges get a
    heartbeat of 0, a credit with every token): each edge alone allows 8/9 (``throughput_bound``), but a
    batch's wait lengthens the long branch, which the skip must cover; the schedule with the waits
    (``network_rate``) is 2/3, and with ``sfdf check``'s sizing (b2_e 18, a_e 24, the heartbeats held) the
    block streams."""
    thresholds = dict.fromkeys(("a_b1", "b1_b2", "b2_e", "a_e"), 15)
    heartbeats = {"a_b1": 0, "b1_b2": 0, "b2_e": 15, "a_e": 15}  # what "auto" gives at capacity 16, held
    for capacities, expected in (({}, Fraction(2, 3)), ({"b2_e": 18, "a_e": 24}, Fraction(1))):
        net = network(f"tb_batch_split{len(capacities)}", [["a", "b1", "b2", "e"], ["a", "e"]], 16, capacities,
                      thresholds=thresholds)
        net = net.with_intervals(heartbeats) if capacities else net
        report = check(net)
        assert report.deadlock_free and {e.name: e.interval for e in report.network.edges} == heartbeats
        timing = stage_timing(report.network)
        assert throughput_bound(report.network, timing).rate == (Fraction(8, 9) if not capacities else 1)
        assert network_rate(report.network, timing) == (expected, True)
        if not capacities:
            assert throughput_summary(report.network, timing)["full_rate_sizing"] == {"b2_e": 18, "a_e": 24}
        raw, _ = run_measurement(net, {"a": [random_words(1, "a", WORDS)]}, cosim_build_root / "throughput",
                                 report=report)
        assert steady_rate(raw["sink_beat_cycles"]["e"]) == pytest.approx(float(expected), rel=0.015)


@pytest.mark.parametrize("seed", [1, 2, 16])
def test_credit_batches_schedule_on_random_networks(seed, verilator_toolchain, cosim_build_root):
    """Random DAGs with 000's credit batches, drawn T on every edge (seeds whose batches bind below every
    cycle's bound: 4/9 against 3/4, 36/61 against 4/5, 1/3 against 1/2): every sink streams at the
    schedule's rate (``network_rate``) within 1.5%."""
    rng = random.Random(seed)
    net = replace(random_dag(rng, rng.randint(3, 6), rng.randint(3, 7), capacities=(3, 12), name=f"tb_batch_r{seed}"),
                  mode="credit", live_credit=False)
    net = net.with_edges(replace(e, threshold=rng.randint(0, e.capacity - 1)) for e in net.edges)
    report = check(net)
    timing = stage_timing(report.network)
    rate, exact = network_rate(report.network, timing)
    assert exact and rate < throughput_bound(report.network, timing).rate
    raw, _ = run_measurement(net, {s: [random_words(1, s, WORDS)] for s in report.network.sources},
                             cosim_build_root / "throughput", report=report)
    for cycles in raw["sink_beat_cycles"].values():
        assert steady_rate(cycles) == pytest.approx(float(rate), rel=0.015)

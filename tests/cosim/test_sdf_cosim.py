"""The cosim lane for SDF networks (004): their generated Verilog on Verilator against the SDF model with the
same capacities, firing by firing and message by message (the firing the RTL handled each at, those it did
not reach pending), with random back-pressure on both sides: 004's examples with their teleport messages,
a downstream message of negative latency, random multirate networks with phases, peeking, feedback with
initial items and messages both ways sent at random firings, each handled firing checked against SDEP by
its definition (brute force, not 004's closed form); and a network one capacity short, which ``sfdf
check`` names, which deadlocks in RTL, and which, raised to what the check asks, runs at the throughput it
states."""

from __future__ import annotations

from dataclasses import replace
from fractions import Fraction
from pathlib import Path

import pytest
from graphs import sdf_edge, sdf_networks
from hypothesis import HealthCheck, assume, given, settings
from hypothesis import strategies as st

from sfdf.cosim.sdf import run_sdf_network
from sfdf.gen.model import Network, Node
from sfdf.gen.sdf.liveness import ample, bounded_execution, capacity_fix, firing_capacity
from sfdf.gen.sdf.pipeline import hardware_throughput
from sfdf.gen.sdf.rates import Simulation, repetitions
from sfdf.gen.spec import load_spec

pytestmark = pytest.mark.cosim

EXAMPLES = Path(__file__).resolve().parents[2] / "examples"


def sdep_by_definition(network, upstream: str, downstream: str, n: int) -> int:
    """SDEP_{upstream<-downstream}(n) by 004's definition: the fewest firings of ``upstream`` with which
    ``downstream`` can fire ``n`` times, every other node as often as it likes (unbounded channels: a
    firing disables none, so the most firings of ``downstream`` with ``upstream`` held to ``c`` is what
    firing everything else as long as it can gives)."""
    def most(c: int) -> int:
        sim = Simulation(network)
        cap = {x.name: 64 * n + 64 for x in network.nodes} | {upstream: c}
        moved = True
        while moved and sim.fired[downstream] < n:
            moved = False
            for x in cap:
                if x != downstream or sim.fired[x] < n:
                    while sim.fired[x] < cap[x] and sim.short(x) is None:
                        sim.fire(x)
                        moved = True
        return sim.fired[downstream]
    return next(c for c in range(64 * n + 65) if most(c) >= n)


def check_handled_by_definition(network, messages: list[dict]) -> None:
    """Each message the RTL handled at 004's firing: before ``min m >= 1`` with ``SDEP_{S<-R}(m) >= n + k``
    downstream, after ``SDEP_{R<-S}(n + k)`` upstream."""
    for d in messages:
        k = network.messages[d["message"]].latency[0]
        if d["side"] == "before":
            m = next(m for m in range(1, 10_000) if sdep_by_definition(network, d["from"], d["to"], m) >= d["sent"] + k)
        else:
            m = sdep_by_definition(network, d["to"], d["from"], d["sent"] + k)
        assert d["handled"] == m, d


@pytest.mark.parametrize(("spec", "firings"), [("teleport.toml", 120), ("fhr.toml", 6000)])
def test_the_examples_match_the_model_message_by_message(spec, firings, verilator_toolchain, cosim_build_root):
    net = load_spec(EXAMPLES / spec)
    run = run_sdf_network(net, computations=firings, build_dir=cosim_build_root)
    assert run.passed, run.results.summary()
    assert all(run.expected.values()) and run.messages and run.pending  # the last messages' points are past the end
    if spec == "teleport.toml":
        check_handled_by_definition(net, run.messages)
    else:  # SDEP_RFtoIF<-D(n) = 512 n (004): after RFtoIF's firing 512 (n + 6)
        assert all(d["handled"] == 512 * (d["sent"] + 6) for d in run.messages)


def test_the_radios_feedback_version_matches_the_model(verilator_toolchain, cosim_build_root):
    """004's manual radio (examples/fhr_feedback.toml): RFtoIF's 512 phases, the loop's 28 initial items; the
    hop of the antenna's second frame shows in the output until its retune comes round the loop."""
    run = run_sdf_network(load_spec(EXAMPLES / "fhr_feedback.toml"), computations=6000, build_dir=cosim_build_root)
    assert run.passed and not run.model_deadlocked, run.results.summary()
    shown = [any(run.expected["out"][256 * f:256 * (f + 1)]) for f in range(10)]  # frames from 0
    assert shown[:9] == [False] + [True] * 7 + [False]


def test_a_downstream_message_of_negative_latency_is_carried_by_credits(verilator_toolchain, cosim_build_root):
    net = load_spec(EXAMPLES / "teleport.toml")
    net = replace(net, name="teleport_early", messages=(replace(net.messages[0], latency=(-2, -2)), net.messages[1]))
    run = run_sdf_network(net, computations=120, build_dir=cosim_build_root)
    assert run.passed, run.results.summary()
    early = [d for d in run.messages if d["message"] == 0]
    assert early
    check_handled_by_definition(net, run.messages)


@st.composite
def bounded_networks(draw):
    """A random SDF network with its messages sent at every firing or at random ones, each capacity between
    what one firing needs and ample."""
    net = draw(sdf_networks(max_nodes=4))
    send = draw(st.sampled_from([1.0, 0.6]))
    return replace(net, nodes=tuple(replace(n, params={"send": send, "seed": k + 7}) for k, n in enumerate(net.nodes)),
                   edges=tuple(replace(e, capacity=draw(st.integers(firing_capacity(net, e),
                                                                    max(firing_capacity(net, e), ample(net, e)))))
                               for e in net.edges))


@settings(max_examples=8, derandomize=True, deadline=None, suppress_health_check=list(HealthCheck))
@given(net=bounded_networks())
def test_random_multirate_networks_match_the_model(net, verilator_toolchain, cosim_build_root):
    assume(net.is_sdf and net.messages and net.sources and bounded_execution(net).live)
    run = run_sdf_network(net, computations=30, build_dir=cosim_build_root)
    assert run.passed, run.results.summary()
    check_handled_by_definition(net, run.messages)


def skew(capacity: int) -> Network:
    """A splits to B, which gathers 3 items a firing, and to D, which needs B's items to go on: the A -> D
    channel must hold the items A sends while B gathers."""
    return Network(name=f"skew{capacity}", nodes=(Node("A"), Node("B"), Node("D")), edges=(
        replace(sdf_edge("A_B", "A", "B", push=1, pop=3), capacity=4),
        replace(sdf_edge("B_D", "B", "D", push=3, pop=1), capacity=4),
        replace(sdf_edge("A_D", "A", "D", push=1, pop=1), capacity=capacity)))


def test_a_capacity_one_short_deadlocks_in_rtl_and_the_one_check_asks_runs_at_its_bound(
        verilator_toolchain, cosim_build_root):
    short = bounded_execution(skew(2))
    assert not short.live and capacity_fix(skew(2), short.stalls) == ("A_D", 3)
    stuck = run_sdf_network(skew(2), computations=40, build_dir=cosim_build_root)
    assert stuck.model_deadlocked and not stuck.passed
    assert "deadlock" in stuck.results.tests[stuck.results.failed[0]].message.lower()

    net = skew(3)
    bound = hardware_throughput(net)
    assert bound.iterations_per_cycle > 0 and not bound.deadlocked
    run = run_sdf_network(net, computations=600, pause=0.0, build_dir=cosim_build_root)
    assert run.passed and not run.model_deadlocked, run.results.summary()
    cycles = run.cycles["D"]
    start = bound.transient + 2 * bound.period + 50  # well inside the regime, whatever the drivers' latency
    window = 10 * bound.period
    assert start + window + bound.period < cycles[-1], "the run ends before the window"
    measured = sum(start <= c < start + window for c in cycles)
    assert Fraction(measured, window) == bound.firings_per_cycle(repetitions(net), "D")

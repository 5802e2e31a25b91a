"""The cosim lane for SDF networks (004): their generated Verilog on Verilator against the SDF model with the
same capacities, firing by firing, with random back-pressure on both sides: 004's examples' data paths
(their messages set aside: not carried in hardware yet), random multirate networks with phases, peeking
and feedback with initial items, and a network one capacity short, which ``sfdf check`` names, which
deadlocks in RTL, and which, raised to what the check asks, runs at the throughput it states."""

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
from sfdf.gen.sdf.rates import repetitions
from sfdf.gen.spec import load_spec

pytestmark = pytest.mark.cosim

EXAMPLES = Path(__file__).resolve().parents[2] / "examples"


@pytest.mark.parametrize(("spec", "firings"), [("teleport.toml", 120), ("fhr.toml", 1100)])
def test_the_examples_data_paths_match_the_model(spec, firings, verilator_toolchain, cosim_build_root):
    net = replace(load_spec(EXAMPLES / spec), messages=())
    run = run_sdf_network(net, computations=firings, build_dir=cosim_build_root)
    assert run.passed, run.results.summary()
    assert all(run.expected.values())


@st.composite
def bounded_networks(draw):
    """A random SDF network without messages, each capacity between what one firing needs and ample."""
    net = draw(sdf_networks(max_nodes=4))
    return replace(net, messages=(), edges=tuple(
        replace(e, capacity=draw(st.integers(firing_capacity(net, e), max(firing_capacity(net, e), ample(net, e)))))
        for e in net.edges))


@settings(max_examples=6, derandomize=True, deadline=None, suppress_health_check=list(HealthCheck))
@given(net=bounded_networks())
def test_random_multirate_networks_match_the_model(net, verilator_toolchain, cosim_build_root):
    assume(net.is_sdf and net.sources and bounded_execution(net).live)  # all rates 1: an SFDF network
    run = run_sdf_network(net, computations=30, build_dir=cosim_build_root)
    assert run.passed, run.results.summary()


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

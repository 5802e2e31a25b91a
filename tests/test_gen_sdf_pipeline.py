# amaranth: UnusedElaboratable=no
"""gen/sdf/pipeline.py: the generated SDF hardware's timing, cycle for cycle against the RTL's ``fired``
outputs in Amaranth's simulator (every source allowed, every sink ready), and its throughput against a run
of that timing over ten periods."""

from __future__ import annotations

from dataclasses import replace
from fractions import Fraction

import pytest
from graphs import sdf_edge, sdf_networks, small_radio
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from sdf_rtl import simulate

from sfdf.gen.model import Network, Node
from sfdf.gen.sdf.liveness import ample, firing_capacity
from sfdf.gen.sdf.pipeline import Pipeline, full_rate_capacities, hardware_throughput
from sfdf.gen.sdf.rates import repetitions
from sfdf.hdl.sdf_network import SDFNetwork


def rtl_fired(network, cycles: int) -> list[set[str]]:
    """The nodes whose ``fired`` output is high, cycle by cycle."""
    dut = SDFNetwork(network)
    trace = []

    async def bench(ctx):
        for n in network.nodes:
            if not network.in_edges(n.name):
                ctx.set(getattr(dut, f"{n.name}_allow"), 1)
            if not network.out_edges(n.name):
                ctx.set(getattr(dut, f"{n.name}_ready"), 1)
        for _ in range(cycles):
            trace.append({n.name for n in network.nodes if ctx.get(getattr(dut, f"{n.name}_fired"))})
            await ctx.tick()

    simulate(dut, bench)
    return trace


def model_fired(network, cycles: int) -> list[set[str]]:
    pipeline = Pipeline(network)
    return [set(pipeline.step()) for _ in range(cycles)]


@st.composite
def sized(draw):
    """A random SDF network (phases, peeking, initial items, feedback, messages both ways whose senders send
    at every firing or at random ones) with capacities from what a firing needs up to ample."""
    net = draw(sdf_networks(max_nodes=4))
    send = draw(st.sampled_from([1.0, 0.5]))
    least = {e.name: firing_capacity(net, e) for e in net.edges}
    return replace(net, nodes=tuple(replace(n, params={"send": send, "seed": k + 5}) for k, n in enumerate(net.nodes)),
                   edges=tuple(replace(e, capacity=draw(st.integers(least[e.name], max(least[e.name], ample(net, e)) + 3)))
                               for e in net.edges))


@settings(max_examples=30, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(sized())
def test_the_timing_is_the_rtls_cycle_for_cycle(net):
    assert rtl_fired(net, 300) == model_fired(net, 300)


@pytest.mark.parametrize("feedback", [False, True])
def test_the_stream_kernels_timing_is_the_rtls_cycle_for_cycle(feedback):
    """The radio's stream kernels (hdl/sdf_stream.py): a step a cycle, writes a cycle behind, a detector's
    target stepping at its decision."""
    net = small_radio(feedback)
    assert rtl_fired(net, 400) == model_fired(net, 400)


@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(sized())
def test_the_throughput_is_what_ten_periods_of_the_timing_do(net):
    result = hardware_throughput(net)
    node = net.nodes[0].name
    pipeline = Pipeline(net)
    trace, done = [], 0
    for _ in range(result.transient + 10 * result.period):
        done += pipeline.step().count(node)
        trace.append(done)
    before = trace[result.transient - 1] if result.transient else 0
    assert trace[-1] - before == 10 * result.period * result.firings_per_cycle(repetitions(net), node)
    assert result.deadlocked == (result.iterations_per_cycle == 0)


def test_a_channel_needs_the_places_its_items_hold_while_they_move():
    """An item's place is claimed at its writer's start and freed by its reader's pop, 6 cycles on: a
    rate-1 channel needs 6 places for an item every cycle; 512-item firings need three buffers."""
    def chain(capacity):
        return Network(name="ab", nodes=(Node("A"), Node("B")),
                       edges=(replace(sdf_edge("ab", "A", "B"), capacity=capacity),))
    assert hardware_throughput(chain(6)).iterations_per_cycle == 1
    assert hardware_throughput(chain(5)).iterations_per_cycle == Fraction(5, 6)

    def wide(capacity):  # 004's radio rates: 512 items a firing, written and read one a cycle
        return Network(name="ab", nodes=(Node("A"), Node("B")),
                       edges=(replace(sdf_edge("ab", "A", "B", push=512, pop=512), capacity=capacity),))
    # a double buffer loses the cycles from B's pop to A's first write; room comes in firings of 512
    assert hardware_throughput(wide(1024)).iterations_per_cycle == Fraction(1, 514)
    assert hardware_throughput(wide(1535)).iterations_per_cycle == Fraction(1, 514)
    assert hardware_throughput(wide(1536)).iterations_per_cycle == Fraction(1, 512)


def test_teleport_sized_for_full_rate_runs_at_the_stated_bound_in_rtl():
    """004's example, with its messages, at the capacities ``sfdf check --sized`` writes: the RTL's sink firings over ten periods
    of its regime are the bound the check states (measured in Amaranth's simulator, not the model)."""
    from pathlib import Path

    from sfdf.gen.spec import load_spec

    net = load_spec(Path(__file__).resolve().parents[1] / "examples" / "teleport.toml")
    full = full_rate_capacities(net)
    net = replace(net, edges=tuple(replace(e, capacity=full.capacities[e.name]) for e in net.edges))
    bound = hardware_throughput(net)
    assert bound.iterations_per_cycle == full.iterations_per_cycle > 0
    trace = rtl_fired(net, bound.transient + 10 * bound.period)[bound.transient:]
    assert sum("E" in fired for fired in trace) == 10 * bound.period * bound.firings_per_cycle(repetitions(net), "E")


@settings(max_examples=40, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(sized())
def test_no_capacity_passes_the_nodes_bound(net):
    from sfdf.gen.sdf.pipeline import node_bound

    roomy = {e.name: 4 * ample(net, e) + 8 for e in net.edges}
    assert hardware_throughput(net, roomy).iterations_per_cycle <= node_bound(net)

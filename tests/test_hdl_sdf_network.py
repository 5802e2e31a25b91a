# amaranth: UnusedElaboratable=no
"""hdl/sdf_network.py: SDF networks in RTL (Amaranth's simulator) against the SDF model with the same
capacities, token by token: every sink's values after N firings of each source, with random back-pressure
at the sinks, on 004's examples with their teleport messages and on random consistent SDF graphs with
phases, peeking, initial items, feedback and messages both ways (negative downstream latencies and seeded
send decisions among them), whose handlers change every later value; and the radio's stream kernels
(hdl/sdf_stream.py) on a small radio, both ways, on a hopping input."""

from __future__ import annotations

import random
from dataclasses import replace

from graphs import sdf_networks, small_radio
from hypothesis import HealthCheck, assume, given, settings
from hypothesis import strategies as st
from sdf_rtl import simulate

from sfdf.gen.sdf.kernels import HopSignal
from sfdf.gen.sdf.liveness import ample, bounded_execution
from sfdf.gen.sdf.model import run_sdf
from sfdf.gen.spec import load_spec
from sfdf.hdl.sdf_network import SDFNetwork

EXAMPLES = __import__("pathlib").Path(__file__).resolve().parents[1] / "examples"


def rtl_outputs(network, firings: int, seed: int = 0, quiet: int = 2000, most: int = 400_000,
                words: dict | None = None) -> dict[str, list[int]]:
    """Each sink's values when every source has fired ``firings`` times and nothing has fired for ``quiet``
    cycles since (at most ``most`` cycles in all); sinks take a value with probability 0.7 a cycle; a source
    in ``words`` is given its firings' words."""
    dut = SDFNetwork(network)
    sources = [n.name for n in network.nodes if not network.in_edges(n.name)]
    sinks = [n.name for n in network.nodes if not network.out_edges(n.name)]
    outputs = {s: [] for s in sinks}
    rng = random.Random(seed)

    async def bench(ctx):
        fired = dict.fromkeys(sources, 0)
        idle = 0
        for _ in range(most):
            if idle >= quiet:
                break
            for s in sources:
                ctx.set(getattr(dut, f"{s}_allow"), fired[s] < firings)
                if words and s in words and fired[s] < firings:
                    ctx.set(getattr(dut, f"{s}_word"), words[s][fired[s]])
            for s in sinks:
                ctx.set(getattr(dut, f"{s}_ready"), rng.random() < 0.7)
            moved = False
            for s in sinks:
                if ctx.get(getattr(dut, f"{s}_valid")) and ctx.get(getattr(dut, f"{s}_ready")):
                    outputs[s].append(ctx.get(getattr(dut, f"{s}_value")))
            for s in sources:
                fired[s] += ctx.get(getattr(dut, f"{s}_start"))
            moved = any(ctx.get(getattr(dut, f"{n.name}_fired")) for n in network.nodes)
            idle = 0 if moved else idle + 1
            await ctx.tick()
        assert idle >= quiet, f"still firing after {most} cycles"

    simulate(dut, bench)
    return outputs


def test_the_example_matches_the_model():
    """004's example with its two messages (the radio, whose first message lands after 3,584 firings of
    its source, runs on Verilator: tests/cosim/test_sdf_cosim.py)."""
    net = load_spec(EXAMPLES / "teleport.toml")
    run = run_sdf(net, source_firings=40, bounded=True)
    assert rtl_outputs(net, 40) == run.outputs and any(run.outputs.values()) and run.deliveries
    # without the messages the values differ: each handler shows in every later value
    assert rtl_outputs(replace(net, messages=()), 40) != run.outputs
    # a latency range is delivered at its min's point, in the RTL as in the model
    ranged = replace(net, messages=(replace(net.messages[0], latency=(1, 3)), replace(net.messages[1], latency=(1, 2))))
    early = replace(net, messages=(replace(net.messages[0], latency=(1, 1)), replace(net.messages[1], latency=(1, 1))))
    assert rtl_outputs(ranged, 40) == run_sdf(ranged, source_firings=40, bounded=True).outputs == rtl_outputs(early, 40)


@settings(max_examples=40, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(sdf_networks(max_nodes=4), st.sampled_from([1.0, 0.5]))
def test_random_sdf_networks_match_the_model(net, send):
    nodes = tuple(replace(n, params={"send": send, "seed": k + 3}) for k, n in enumerate(net.nodes))
    net = replace(net, nodes=nodes, edges=tuple(replace(e, capacity=ample(net, e)) for e in net.edges))
    assume(net.sources and bounded_execution(net).live)
    expect = run_sdf(net, source_firings=6, bounded=True).outputs
    assert rtl_outputs(net, 6, quiet=300) == expect


def test_a_small_radio_matches_the_model_both_ways():
    """The radio's kernels in RTL (frames of 8): the detectors send only when they see a hop, the teleport
    and feedback versions give the model's values and so each other's, and the hops show in them."""
    words = HopSignal(2, frame=8, dwell=(3, 5)).words(240)
    values = []
    for feedback in (False, True):
        net = small_radio(feedback)
        run = run_sdf(net, source_firings=len(words), bounded=True, words={"antenna": words})
        assert bool(run.deliveries) != feedback
        values.append(rtl_outputs(net, len(words), quiet=200, words={"antenna": words}))
        assert values[-1] == run.outputs
    assert values[0] == values[1] and any(values[0]["out"]) and 0 in values[0]["out"]

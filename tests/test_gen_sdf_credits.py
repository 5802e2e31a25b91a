"""gen/sdf/credits.py: teleport messages in hardware. Each route's target table is 004's delivery point
(:meth:`Deliveries.point`, one firing on upstream) for every firing, the receiver's credit in closed form
is the rule ``sfdf check`` proves live (:meth:`Deliveries.required_sends` with ``held``), and the static
queue depth covers what the RTL holds: with queues deeper than the bound, under random back-pressure and
random source pauses, no queue ever holds more entries than the bound says."""

from __future__ import annotations

import random
from dataclasses import replace

from graphs import sdf_networks, small_radio
from hypothesis import HealthCheck, assume, given, settings
from hypothesis import strategies as st
from sdf_rtl import simulate

from sfdf.gen.sdf.credits import queue_depths, route_tables
from sfdf.gen.sdf.kernels import HopSignal
from sfdf.gen.sdf.liveness import ample, bounded_execution
from sfdf.gen.sdf.messages import UPSTREAM, Deliveries
from sfdf.gen.sdf.rates import repetitions
from sfdf.gen.spec import load_spec
from sfdf.hdl.sdf_network import SDFNetwork

EXAMPLES = __import__("pathlib").Path(__file__).resolve().parents[1] / "examples"


def check_tables(net) -> None:
    deliveries = Deliveries(net)
    reps = repetitions(net)
    for route, table in route_tables(net):
        after = route.direction == UPSTREAM
        for n in range(1, 10 * reps[route.sender] + len(table.first) + 2):
            assert table(n) == deliveries.point(route, n, route.latency[0]) + after, (route, n)
        for f in range(1, 6 * reps[route.receiver] + 8):
            started = next(s for s in range(10**6) if f < table(s + 1))  # the credit: f < T(started + 1)
            assert started == deliveries.required_sends(route, f - 1, held=True), (route, f)


def test_the_examples_tables_and_credits():
    for spec in ("teleport.toml", "fhr.toml"):
        check_tables(load_spec(EXAMPLES / spec))


@settings(max_examples=80, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(sdf_networks(max_nodes=4))
def test_random_tables_and_credits(net):
    assume(net.messages)
    check_tables(net)


def most_entries(net, depths: dict, cycles: int, seed: int, words: dict | None = None) -> dict:
    """The most entries each route's queue held in ``cycles`` cycles of RTL with queues of ``depths``,
    sources allowed and sinks ready at random (a source in ``words`` given its firings' words)."""
    dut = SDFNetwork(net, depths=depths)
    rng = random.Random(seed)
    most = {}

    async def bench(ctx):
        fired = dict.fromkeys(net.sources, 0)
        for _ in range(cycles):
            for n in net.sources:
                ctx.set(getattr(dut, f"{n}_allow"), rng.random() < 0.8)
                if words and n in words:
                    ctx.set(getattr(dut, f"{n}_word"), words[n][fired[n] % len(words[n])])
                    fired[n] += ctx.get(getattr(dut, f"{n}_start"))
            for n in net.sinks:
                ctx.set(getattr(dut, f"{n}_ready"), rng.random() < 0.6)
            for route, queue in dut.queues.items():
                most[route] = max(most.get(route, 0), ctx.get(queue.o_level))
            await ctx.tick()

    simulate(dut, bench)
    return most


@settings(max_examples=25, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(sdf_networks(max_nodes=4), st.integers(0, 3), st.sampled_from([1.0, 0.5]))
def test_no_queue_holds_more_than_its_bound(net, seed, send):
    nodes = tuple(replace(n, params={"send": send, "seed": k + 1}) for k, n in enumerate(net.nodes))
    net = replace(net, nodes=nodes, edges=tuple(replace(e, capacity=ample(net, e) + seed) for e in net.edges))
    assume(net.messages and net.sources and bounded_execution(net).live)
    bound = queue_depths(net)
    most = most_entries(net, {route: depth + 4 for route, depth in bound.items()}, 400, seed)
    assert all(most[route] <= bound[route] for route in bound), (most, bound)


def test_the_radio_holds_its_bound():
    """The radio with detectors that send at every firing (the SDF test kernel's), the most its queues hold."""
    net = load_spec(EXAMPLES / "fhr.toml")
    net = replace(net, nodes=tuple(replace(n, kernel="sdf_test", params={}) if n.kernel == "detector" else n
                                   for n in net.nodes))
    bound = queue_depths(net)
    most = most_entries(net, {route: depth + 4 for route, depth in bound.items()}, 6000, 1)
    assert all(0 < most[route] <= bound[route] for route in bound), (most, bound)


def test_detectors_that_hold_off_need_fewer_entries():
    """A detector reports at most once in ``holdoff + 1`` firings, so its queue needs fewer entries than one
    that may send at every firing; with a hop every frame (as often as the input can) the RTL stays in it."""
    net = small_radio(feedback=False)
    bound = queue_depths(net)
    eager = replace(net, nodes=tuple(replace(n, kernel="sdf_test", params={}) if n.kernel == "detector" else n
                                     for n in net.nodes))
    assert all(bound[r] < d for r, d in queue_depths(eager).items())
    words = HopSignal(5, frame=8, dwell=(1, 1)).words(8 * 40)
    most = most_entries(net, {route: depth + 4 for route, depth in bound.items()}, 3000, 2, {"antenna": words})
    assert all(most[route] <= bound[route] for route in bound) and any(most.values()), (most, bound)

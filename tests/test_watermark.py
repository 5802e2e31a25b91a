"""The index watermark (docs/semantics.md, "Index watermark"): analysis, reference model and hardware.

Live credit lets a branch of dummies run ahead of a join without bound; the watermark holds the sources
within ``W = 2^(k-1) - 1`` of the sinks' least position, so serial comparison and distances at ``k`` bits
stay exact for endless streams and the network carries ``k``-bit indices inside. The cosim at the
narrowest widths is in tests/cosim/test_network.py.
"""

import itertools
import random
from dataclasses import replace

import networkx as nx
import pytest
from amaranth.sim import Simulator

from sfdf.gen.analysis import check, resolve
from sfdf.gen.analysis.control import (
    WATERMARK_LEAD_BITS,
    WATERMARK_MARGIN_BITS,
    joins,
    watermark,
    watermark_drain_bound,
    watermark_lead,
)
from sfdf.gen.analysis.cycles import edges_on_cycles
from sfdf.gen.randomnet import random_dag
from sfdf.gen.refmodel import simulate
from sfdf.gen.spec import load_spec
from sfdf.hdl.watermark import Watermark


def intervals(network):
    return {e.name: e.interval for e in network.edges}


def credit_diamond(examples, rates=(0.1, 0.9, 0.9, 0.5), join_ii=8, capacity=4):
    """The diamond in credit mode, every edge at ``capacity``, its nodes filtering at ``rates``."""
    net = load_spec(examples / "diamond.toml")
    nodes = tuple(replace(n, kernel="random_filter", params={"rate": r, "seed": k + 1}, ii=join_ii if n.name == "x" else 1)
                  for k, (n, r) in enumerate(zip(net.nodes, rates, strict=True)))
    net = replace(net, mode="credit", nodes=nodes).with_edges(
        replace(e, capacity=capacity, interval="auto", threshold="auto", control_capacity="auto", output_buffer=0)
        for e in net.edges)
    return resolve(net)


# -- analysis ------------------------------------------------------------------------------------

def test_variance_drains_within_the_sum_of_its_heartbeats(examples):
    net = resolve(load_spec(examples / "variance.toml"))
    assert watermark_drain_bound(net, intervals(net)) == sum(e.interval for e in net.edges) == 124
    mark = watermark(net, intervals(net))
    # 2^7 >= 124 + 3: 8 bits needed, two more inside (a window four times the drain bound)
    # the channels on u-w-x hold 64 tokens: 8 bits hold them, fewer than the drain bound's 10
    assert mark == {"bits": 8 + WATERMARK_MARGIN_BITS, "window": 2 ** (7 + WATERMARK_MARGIN_BITS) - 1,
                    "drain_bound": 124, "bits_needed": 8, "lead": 64, "lead_bits": 8}
    assert watermark(replace(net, index_width=9), intervals(net))["bits"] == 9  # never above the spec's


def test_heartbeat_zero_sizes_the_window_by_the_channels(examples):
    """Heartbeat 0 on every edge (000 Fig. 4's NoFilter) drains at once (bound 0, 3 bits), but a window of
    15 would hold the source while the channels hold 64 tokens: the window covers twice the lead."""
    net = resolve(load_spec(examples / "variance.toml"))
    net = net.with_edges(replace(e, interval=0) for e in net.edges)
    mark = watermark(net, intervals(net))
    assert (mark["drain_bound"], mark["bits_needed"], mark["lead"], mark["lead_bits"]) == (0, 3, 64, 8)
    assert mark["bits"] == 8 + WATERMARK_LEAD_BITS and mark["window"] >= 2 * mark["lead"]


@pytest.mark.parametrize("seed", range(20))
def test_lead_is_the_heaviest_path_by_brute_force(seed):
    """:func:`watermark_lead` against every source-to-sink path of a random DAG, enumerated."""
    rng = random.Random(seed)
    net = random_dag(rng, rng.randint(2, 9), rng.randint(1, 14), capacities=(1, 40), name=f"lead{seed}")
    g = net.graph()
    paths = (p for s, t in itertools.product(net.sources, net.sinks) for p in nx.all_simple_edge_paths(g, s, t))
    assert watermark_lead(net) == max((sum(g.edges[e]["capacity"] for e in p) for p in paths), default=0)


def test_no_watermark_without_live_credit_or_a_heartbeat_everywhere(examples):
    net = resolve(load_spec(examples / "variance.toml"))
    printed = replace(net, live_credit=False)
    assert watermark(printed, intervals(printed)) is None
    assert watermark(net, {**intervals(net), "vx": None}) is None  # an edge without heartbeat
    inband = resolve(replace(load_spec(examples / "diamond.toml")))
    assert watermark(inband, intervals(inband)) is None
    chain = net.with_edges(e for e in net.edges if e.name in ("uv", "vx"))
    chain = replace(chain, nodes=[n for n in chain.nodes if n.name != "w"])
    assert watermark(chain, {**intervals(chain), "uv": None}) is None
    assert not joins(chain) and check(chain).index_width["serial_comparison_proved"]  # nothing compared


def test_check_refuses_an_index_width_too_narrow_for_the_drain_bound(examples, tmp_path):
    from sfdf.cli import main

    report = check(replace(load_spec(examples / "variance.toml"), index_width=7))
    assert not report.deadlock_free
    (violation,) = report.violations
    assert violation.kind == "index_width" and "set index_width = 8" in violation.detail
    assert check(replace(load_spec(examples / "variance.toml"), index_width=8)).deadlock_free
    spec = tmp_path / "narrow.toml"
    spec.write_text((examples / "variance.toml").read_text().replace("index_width = 32", "index_width = 7"))
    assert main(["check", str(spec)]) == 1


# -- reference model ----------------------------------------------------------------------------

def test_without_the_watermark_a_branch_drifts_past_the_window(examples):
    """Sparse branches and a slow join: producers first (adversarial scheduler), the indices the join
    compares drift 86 apart at w = 5 (window 15); with the watermark they stay within it, and the outputs
    are the same."""
    net = replace(credit_diamond(examples), index_width=5)  # 12 needs 5 bits, and gets no more
    held = simulate(net, computations=2000, seed=3, scheduler="adversarial", depth=3)
    free = simulate(net, computations=2000, seed=3, scheduler="adversarial", depth=3, watermark=False)
    assert held.watermark == 15 and free.watermark is None
    assert free.index_spread > 2 * held.watermark
    assert held.index_spread <= held.watermark
    assert not held.deadlocked and held.outputs == free.outputs


def live_random_network(seed):
    rng = random.Random(seed)
    while True:
        net = random_dag(rng, rng.randint(3, 8), rng.randint(4, 12), capacities=(1, 8), name=f"mark{seed}")
        if edges_on_cycles(net) and set(net.sources).isdisjoint(net.sinks):
            break
    nodes = tuple(replace(n, kernel="random_filter", params={"rate": rng.choice([0.0, 0.5, 0.9, 1.0]),
                                                             "seed": rng.randrange(1 << 16)})
                  for n in net.nodes)
    net = resolve(replace(net, nodes=nodes, mode="credit", live_credit=True))
    return replace(net, index_width=watermark(net, intervals(net))["bits_needed"])


@pytest.mark.parametrize("seed", range(40))
def test_at_the_narrowest_width_the_watermark_never_holds_for_good(seed):
    """Random DAGs at the least width the drain bound allows, producers first: no deadlock, every compared
    spread within the window, the outputs of the run that nothing held."""
    net = live_random_network(seed)
    for scheduler in ("adversarial", "random"):
        held = simulate(net, computations=600, seed=seed, scheduler=scheduler, depth=3)
        assert not held.deadlocked, held.summary_lines()
        assert held.index_spread <= held.watermark == 2 ** (net.index_width - 1) - 1  # no room beyond
        free = simulate(net, computations=600, seed=seed, scheduler=scheduler, depth=3, watermark=False)
        assert held.outputs == free.outputs


def test_below_the_drain_bound_the_watermark_holds_a_source_for_good():
    """Below ``k_min`` (here 2 bits, window 1) the model deadlocks on the watermark and says so: the bound is
    what keeps it away, not a formality."""
    net = replace(live_random_network(14), index_width=2)
    held = simulate(net, computations=600, seed=14, scheduler="adversarial", depth=3)
    assert held.deadlocked
    assert "waits on the sinks: index watermark" in held.blocked.values()


# -- hardware -----------------------------------------------------------------------------------

def test_watermark_is_the_serial_minimum_of_one_cycle():
    """Three sinks at 6 bits, positions near the wrap: the registered minimum in serial order."""
    dut = Watermark(sinks=3, index_width=6)
    cases = [(5, 9, 7), (62, 3, 60), (1, 63, 2), (30, 10, 20), (0, 0, 0)]
    seen = []

    async def bench(ctx):
        for positions in cases:
            for k, p in enumerate(positions):
                ctx.set(dut.i_positions[k], p)
            for _ in range(3):  # two pairwise stages and the output register
                await ctx.tick()
            seen.append(ctx.get(dut.o_low))

    sim = Simulator(dut)
    sim.add_clock(1e-6)
    sim.add_testbench(bench)
    sim.run()
    assert seen == [5, 60, 63, 10, 0]


def test_check_refuses_an_inband_width_below_its_spread_bound(examples):
    """In-band needs no watermark (back-pressure bounds the spread, 160 on the diamond), but the width must
    hold it: 8 bits are refused with the width that does."""
    narrow = check(replace(load_spec(examples / "diamond.toml"), index_width=8))
    (violation,) = narrow.violations
    assert violation.kind == "index_width" and "set index_width = 9" in violation.detail
    wide = check(replace(load_spec(examples / "diamond.toml"), index_width=9))
    assert wide.deadlock_free and wide.index_width["bits_inside"] == 9

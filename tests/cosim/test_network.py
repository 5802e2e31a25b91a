"""The cocotb regression: generated networks on Verilator against the reference model, token by token.

With and without back-pressure: the variance network with its own kernels on sparse 16-bit frames in
credit mode and in-band under each dummy algorithm; the diamond and BLAST-like topologies in credit
mode (random_filter kernels) and in-band under each algorithm, as is 003 Fig. 2 made safe (output
buffers); random DAGs with undirected cycles, random capacities and filter rates (8 seeds here, 60 in
bench/cosim.py); nodes without offer registers (``registered_offers = false``) and single-stage nodes
(``pipelined = false``). The unsafe specs
deadlock where the model says: 000 Fig. 3 without heartbeats (and 000's receiver; with live credit it
completes), and 003 Fig. 2 under an adversarial flush.
"""

from __future__ import annotations

import re
from dataclasses import replace

import pytest

from sfdf.cosim.network import run_network
from sfdf.cosim.randomdag import random_credit_network, single_stage
from sfdf.gen.analysis import check as analysis_check
from sfdf.gen.kernels import at_index_width
from sfdf.gen.spec import load_spec
from sfdf.hdl.dsp import FamilyOnly
from sfdf.hdl.timing import single_stage as built_single_stage

pytestmark = pytest.mark.cosim


def as_credit_hardware(network):
    """The topology in credit mode with random_filter kernels that filter half the tokens."""
    nodes = tuple(replace(n, kernel="random_filter",
                          params={"rate": n.params.get("rate", 0.5 if n.kernel else 0.0), "seed": n.params.get("seed", 1)})
                  for n in network.nodes)
    return replace(network, mode="credit", nodes=nodes).with_edges(
        replace(e, interval="auto", threshold="auto", control_capacity="auto", output_buffer=0) for e in network.edges)


def check(network, root, **kw):
    run = run_network(network, build_dir=root, **kw)
    assert not run.model_deadlocked
    assert run.passed, run.results.summary()


PAUSES = [0.0, 0.4]
MODES = ["credit", "nonpropagation", "propagation", "naive"]


def in_mode(network, mode):
    """``network`` in credit mode or in-band with dummy algorithm ``mode``, intervals "auto"."""
    if mode == "credit":
        return replace(network, mode="credit").with_edges(
            replace(e, interval="auto", threshold="auto", control_capacity="auto") for e in network.edges)
    return replace(network, mode="inband", dummy_algorithm=mode).with_edges(
        replace(e, interval="auto") for e in network.edges)


@pytest.mark.parametrize("pause", PAUSES)
@pytest.mark.parametrize("mode", MODES)
def test_variance_matches_model(mode, pause, examples, verilator_toolchain, cosim_build_root):
    """The 000 Fig. 1 kernels: sparse 16-bit frames (70% zeros), one exact result per frame."""
    check(in_mode(load_spec(examples / "variance.toml"), mode), cosim_build_root, computations=200, seed=5,
          pause=pause, zeros=0.7, max_frame=24)


@pytest.mark.parametrize("live_credit", [True, False])
def test_unpipelined_ice40_variance_matches_model(live_credit, examples, verilator_toolchain, cosim_build_root):
    """The variance network as ``sfdf build --board icebreaker`` elaborates it: kernels without pipeline
    stages and receivers' offers straight to the join (sfdf.hdl.dsp.pipelined), with back-pressure,
    live credit and 000's receiver as printed."""
    network = replace(in_mode(load_spec(examples / "variance.toml"), "credit"), live_credit=live_credit)
    check(network, cosim_build_root, computations=200, seed=9, pause=0.4, zeros=0.7, max_frame=24,
          platform=FamilyOnly("ice40"))


@pytest.mark.parametrize("seed", [2, 7])
def test_unpipelined_ice40_random_dag_matches_model(seed, verilator_toolchain, cosim_build_root):
    check(random_credit_network(seed), cosim_build_root, computations=120, seed=seed, pause=0.3,
          platform=FamilyOnly("ice40"))


def unregistered(network):
    """``network`` with ``registered_offers = false`` on every node with inputs (the spec refuses it on a
    source): the receivers offer to the joins straight."""
    return replace(network, nodes=tuple(replace(n, registered_offers=not network.in_edges(n.name))
                                        for n in network.nodes))


@pytest.mark.parametrize("mode", ["credit", "nonpropagation"])
def test_unregistered_offers_variance_matches_model(mode, examples, verilator_toolchain, cosim_build_root):
    """The generic (pipelined) elaboration without offer registers, as a spec may ask, with back-pressure."""
    check(unregistered(in_mode(load_spec(examples / "variance.toml"), mode)), cosim_build_root, computations=200,
          seed=11, pause=0.4, zeros=0.7, max_frame=24)


def test_unregistered_offers_random_dag_matches_model(verilator_toolchain, cosim_build_root):
    check(unregistered(random_credit_network(3)), cosim_build_root, computations=120, seed=3, pause=0.3)


@pytest.mark.parametrize("family", [None, "ice40"])
def test_single_stage_residual_matches_model(family, examples, verilator_toolchain, cosim_build_root):
    """examples/residual.toml, whose branch "auto" builds single-stage, every node filtering 40%, with
    back-pressure, on 8-bit indices that wrap (400 computations): the branch's single-stage nodes send
    dummies on the heartbeat rule, 000 Alg. 4 tested per candidate index modulo 2^8 (docs/hardware.md,
    "The single-stage node")."""
    network = load_spec(examples / "residual.toml")
    platform = FamilyOnly(family) if family else None
    assert built_single_stage(analysis_check(network).network, platform) == {f"b{k}" for k in range(1, 9)}
    network = replace(network, index_width=8, nodes=tuple(replace(n, params={"rate": 0.4, "seed": k + 1})
                                                           for k, n in enumerate(network.nodes)))
    check(network, cosim_build_root, computations=400, seed=2, pause=0.4, platform=platform)


#: Random DAGs (live credit) with nodes of one input and one output: 2, 2, 2 and 3 of them.
SINGLE_STAGE_SEEDS = [12, 65, 109, 133]


@pytest.mark.parametrize("seed", SINGLE_STAGE_SEEDS)
def test_single_stage_random_dag_matches_model(seed, verilator_toolchain, cosim_build_root):
    network = single_stage(random_credit_network(seed))
    assert not all(n.pipelined for n in network.nodes)
    check(network, cosim_build_root, computations=120, seed=seed, pause=0.3)


@pytest.mark.parametrize("pause", PAUSES)
@pytest.mark.parametrize("example", ["diamond", "blast"])
def test_example_matches_model(example, pause, examples, verilator_toolchain, cosim_build_root):
    network = as_credit_hardware(load_spec(examples / f"{example}.toml"))
    check(network, cosim_build_root, computations=150, seed=7, pause=pause)


@pytest.mark.parametrize("pause", PAUSES)
@pytest.mark.parametrize("algorithm", ["nonpropagation", "propagation", "naive"])
@pytest.mark.parametrize("example", ["diamond", "blast", "ob_fig2_safe"])
def test_inband_example_matches_model(example, algorithm, pause, examples, verilator_toolchain, cosim_build_root):
    check(in_mode(load_spec(examples / f"{example}.toml"), algorithm), cosim_build_root, computations=150, seed=11,
          pause=pause)


#: Seeds of the regression here: 8-, 16- and 32-bit indices, 000's receiver as printed (3, 7, 11) and live
#: credit, up to 7 nodes and 10 edges. ``bench/cosim.py`` sweeps 60 seeds the same way.
RANDOM_SEEDS = [0, 3, 6, 7, 11, 12, 16, 17]


@pytest.mark.parametrize("seed", RANDOM_SEEDS)
def test_random_dag_matches_model(seed, verilator_toolchain, cosim_build_root):
    check(random_credit_network(seed), cosim_build_root, computations=120, seed=seed, pause=0.3)


def test_fig3_completes_with_live_credit(examples, verilator_toolchain, cosim_build_root):
    """The same spec with live credit (the default): no credit-batching deadlock, RTL = model."""
    network = replace(load_spec(examples / "fig3_deadlock.toml"), live_credit=True)
    check(network, cosim_build_root, computations=400, seed=1, pause=0.0, max_frame=400)


def test_fig3_with_w_filtering_everything_completes_in_both(examples, verilator_toolchain, cosim_build_root):
    """000's receiver, no heartbeats, w at rate 1: only w's forwarded frame ends reach x on wx, and their
    indices let x go on (docs/semantics.md); the model once popped them without an index and deadlocked
    where the RTL ran on."""
    network = load_spec(examples / "fig3_deadlock.toml")
    network = replace(network, nodes=tuple(replace(n, params={**n.params, "rate": 1.0}) if n.name == "w" else n
                                           for n in network.nodes))
    check(network, cosim_build_root, computations=200, seed=1, pause=0.3)


def test_variance_without_zero_filtering_matches_model(examples, verilator_toolchain, cosim_build_root):
    """variance_source's other bound: filter_zeros = 0 sends every pixel (the no-filtering baseline)."""
    network = load_spec(examples / "variance.toml")
    network = replace(network, nodes=tuple(replace(n, params={"filter_zeros": 0}) if n.kernel == "variance_source"
                                           else n for n in network.nodes))
    check(network, cosim_build_root, computations=120, seed=3, pause=0.3, zeros=0.5, max_frame=16)


def test_fig3_deadlocks_where_the_model_says(examples, verilator_toolchain, cosim_build_root):
    """No heartbeats, T = 31, one long frame: RTL and model both deadlock, uv and vx full."""
    network = load_spec(examples / "fig3_deadlock.toml")
    run = run_network(network, build_dir=cosim_build_root, computations=400, seed=1, pause=0.0,
                      max_frame=400)
    assert run.model_deadlocked and sorted(run.blocking_cycle) == ["uv", "uw", "vx", "wx"]
    assert not run.passed
    (message,) = [run.results.tests[name].message for name in run.results.failed]
    assert "deadlock after" in message
    levels = dict(re.findall(r"^\s+(\w+ data)\s+(\d+)$", message, re.MULTILINE))
    full = sorted(name.split()[0] for name, level in levels.items()
                  if int(level) == network.edge_by_name[name.split()[0]].capacity)
    assert full == ["uv", "vx"], levels  # the counterblockwise channels of the model's blocking cycle


def test_ob_fig2_deadlocks_where_the_model_says(examples, verilator_toolchain, cosim_build_root):
    """003 Fig. 2: u flushes uw's output buffer right after index 4 (an adversarial flush), then both
    long-branch buffers hide what x needs. RTL and model deadlock on the same cycle: the short branch
    (uv, vx) full, every token on the long branch (uw, wx) hidden. The model runs at the RTL's depth
    (hdl.node.decided_depth): its counts on the long branch are at least the RTL's, its nodes taking a token
    before knowing the output has room where the RTL's emit all or nothing."""
    network = load_spec(examples / "ob_fig2.toml")
    run = run_network(network, build_dir=cosim_build_root, computations=100, seed=1, pause=0.0, max_frame=100,
                      flush_after={"uw": 4})
    assert run.model_deadlocked and sorted(run.blocking_cycle) == ["uv", "uw", "vx", "wx"]
    assert not run.passed
    (message,) = [run.results.tests[name].message for name in run.results.failed]
    assert "deadlock after" in message
    levels = dict(re.findall(r"^\s+(\w+(?: data| beats out))\s+(\d+)$", message, re.MULTILINE))
    states = run.model_states
    for edge in ("uv", "vx"):  # counterblockwise: full in both
        assert int(levels[f"{edge} data"]) == states[edge]["data"] == 4, (levels, states)
    for edge in ("uw", "wx"):  # blockwise: all hidden in the model; in RTL w and x would otherwise compute
        assert states[edge]["hidden"] == states[edge]["data"] > 0, states
        assert 0 < int(levels[f"{edge} data"]) <= states[edge]["data"], (levels, states)
    assert levels["x beats out"] == "0"
    # Without the early flush, the same RTL completes (the forced flushes alone never deadlock here).
    check(network, cosim_build_root, computations=100, seed=1, pause=0.0, max_frame=100)


def test_cli_shows_the_ob_fig2_deadlock(examples, verilator_toolchain, cosim_build_root, capsys):
    from sfdf.cli import main

    status = main(["cosim", str(examples / "ob_fig2.toml"), "--flush", "uw:4", "--no-backpressure",
                   "--computations", "100", "--frame-max", "100", "--build-dir", str(cosim_build_root)])
    out, err = capsys.readouterr()
    assert status == 1 and "not deadlock-free" in err
    assert "model DEADLOCKED on" in out and "RTL deadlock: DeadlockError: watchdog: deadlock after" in out


def narrow(network, capacity=None):
    """``network`` at the least index width its index watermark allows (every edge at ``capacity``)."""
    from sfdf.gen.analysis import check as analyse

    if capacity is not None:
        network = network.with_edges(replace(e, capacity=capacity) for e in network.edges)
    bits = analyse(network).index_width["watermark"]["bits_needed"]
    return replace(at_index_width(network, bits), name=f"{network.name}_w{bits}")


def sparse(network):
    """Both branches of the diamond filter nine in ten and the join takes eight cycles per data computation:
    four tokens in a channel span about forty indices, and the branches drift apart while it catches up
    (in the model, under the adversarial scheduler, 86 indices at ``w = 5`` without the watermark:
    tests/test_watermark.py)."""
    nodes = tuple(replace(n, params={**n.params, "rate": 0.9}) if n.name in ("v", "w") else
                  replace(n, ii=8) if n.name == "x" else n for n in network.nodes)
    return replace(network, nodes=nodes, name=f"sparse_{network.name}")


@pytest.mark.parametrize("example", ["diamond", "sparse_diamond", "variance"])
def test_indices_wrap_ten_times_token_exact(example, examples, verilator_toolchain, cosim_build_root):
    """Endless streams (docs/semantics.md, "Index watermark"): at the narrowest index width the analysis
    allows, more than ten times ``2^w`` computations under back-pressure, token-exact against the model."""
    if example.endswith("diamond"):  # u filters little, w nine in ten: its edges carry mostly dummies
        network = narrow(as_credit_hardware(load_spec(examples / "diamond.toml")), capacity=4)
        network = sparse(network) if example == "sparse_diamond" else network
        kw = {"max_frame": 8}
    else:  # its own kernels; frames below 2^w words, so each frame's n fits
        network = narrow(load_spec(examples / "variance.toml"))
        kw = {"max_frame": 24, "zeros": 0.7}
    computations = 10 * 2 ** network.index_width + 17
    check(network, cosim_build_root, computations=computations, seed=3, pause=0.3, **kw)

"""Fmax and utilisation of sfdf networks on ECP5-85F (ULX3S) and iCE40UP5K (iCEBreaker), against the
no-control baseline of the same topology (boards/baseline.py), all inside the same UART board top.

Designs: a 5-node FIFO chain (4 edges of 32 x 16 bits), plain and credit mode; the variance network of
000 Fig. 1, plain, credit and in-band (Non-Propagation), with the example's 32-bit indices and with 16
(``variance16``: exact for frames below 65,536 pixels); a 20-node random DAG (30 edges, capacities
4-32, 32-bit data), plain and credit. Each is built with nextpnr constrained above what it reaches
(the board's ``fmax_probe_hz``) so the reported Fmax is the design's, one build at a time: Yosys once,
then nextpnr with three placement seeds (``--seeds``): each row is the median seed's build, ``fmax_seeds``
lists every seed's Fmax. Each design is elaborated in a fresh interpreter, so its row does not depend on
the designs built before it.

Control logic per edge: Yosys ``synth_ecp5 -noflatten`` (LUTs mapped by ``abc -lut 4``) on the network alone,
LUT4s (a carry cell is two)
of the credit senders (``tx*``, heartbeat register included) and receivers (``rx*``) per edge; a credit
join's offer registers (``offer*``, two slots per input between its receiver and the join: pipelining
for the clock, hdl/offer.py) and the joins (the least-index comparators) are listed apart. FIFOs are
excluded.

The rows live in docs/fpga.json, committed with the tables they make: a run writes it after every build
(so an interrupted run resumes with --resume, in any checkout), and each row names the commit its HDL
was built at. The tables of docs/results.md (every row), docs/fpga.md (the summary and the targets) and
README.md (the headline and the summary) are made from it, between their markers (``--tables``).

    .venv/bin/python bench/fpga.py [--boards ulx3s-85f icebreaker] [--designs variance-credit ...] [--resume]
    .venv/bin/python bench/fpga.py --build variance-credit [--boards icebreaker] --save   # one row, kept
    .venv/bin/python bench/fpga.py --control variance-credit --save                       # one design's control
    .venv/bin/python bench/fpga.py --tables                                               # tables from the rows
    .venv/bin/python bench/fpga.py --place variance-credit --seeds 4 5 6 7 --save         # more seeds, same netlist

``--save`` merges the row into docs/fpga.json under a lock, replacing the row of the same design and
board, so builds of different designs may run side by side (two on two cores). ``--place`` places a saved
row's own netlist (its build directory, whose ``top.json`` must match the row's ``netlist`` digest) with
more seeds: they go into
``more_seeds``, apart from the row's three, and the tables give the median over all of them beside the
median of three (a design's seeds spread over 9-17 MHz; seven say more than three).
"""

from __future__ import annotations

import argparse
import fcntl
import hashlib
import itertools
import json
import logging
import math
import random
import re
import statistics
import subprocess
import sys
import tempfile
import time
from dataclasses import replace
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]

from sfdf.boards import BOARDS
from sfdf.boards.baseline import PlainNetworkTop
from sfdf.boards.build import (
    BuildFailed,
    build,
    critical_path_summary,
    place_again,
    toolchain_env,
    yosys_stat,
)
from sfdf.gen.analysis import check
from sfdf.gen.kernels import at_index_width
from sfdf.gen.randomnet import network_from_pairs, random_dag
from sfdf.gen.spec import load_spec

from results import markers, splice  # bench/results.py

OUT = ROOT / "docs" / "fpga.json"
DOC = ROOT / "docs" / "fpga.md"
RESULTS = ROOT / "docs" / "results.md"
README = ROOT / "README.md"
BUILD = ROOT / "build" / "bench" / "fpga"
BEGIN, END = markers("fpga", "fpga table")
SUMMARY_BEGIN, SUMMARY_END = markers("fpga", "fpga summary")
TARGETS_BEGIN, TARGETS_END = markers("fpga", "fpga targets")
#: Targets: ECP5-85F unless named; "must" is the floor below the target.
TARGET_MHZ, MUST_MHZ, TARGET_RATIO, MUST_RATIO = 150.0, 120.0, 0.90, 0.85
TARGET_PLAIN_MHZ, TARGET_CHAIN_MHZ, MUST_CHAIN_MHZ, TARGET_ICE40_MHZ = 150.0, 180.0, 150.0, 24.0
TARGET_LUTS_PER_EDGE, MUST_LUTS_PER_EDGE, TARGET_INBAND_LUTS_PER_EDGE = 60, 80, 30

#: (design, board) -> nextpnr's router where it is not nextpnr's default (router1): on random20-credit's
#: congested placements router1 takes 20-30 min per seed, router2 about 2 (docs/fpga.md, "Routing a large
#: network"), at a slower clock; its baseline is routed the same way, so the ratio compares one flow.
ROUTER = {("random20-credit", "ulx3s-85f"): "router2", ("random20-plain", "ulx3s-85f"): "router2"}

log = logging.getLogger("bench.fpga")


def chain():
    """5 nodes in a line, 4 edges of capacity 32, 16-bit data, random_filter rate 0 (no filtering)."""
    names = [f"n{i}" for i in range(5)]
    net = network_from_pairs(names, itertools.pairwise(names), [32] * 4, name="chain", mode="credit")
    return replace(net, data_width=16)


def random20():
    """A random DAG of 20 nodes and 30 edges (seed 21: 5 sources, 5 sinks), credit mode."""
    return replace(random_dag(random.Random(21), 20, 30, capacities=(4, 32), name="random20"), mode="credit")


def variance(mode, index_width=32):
    """The variance network of examples/variance.toml at ``index_width``, its edges as wide as its kernels then
    send (:func:`sfdf.gen.kernels.kernel_output_width`)."""
    net = at_index_width(load_spec(ROOT / "examples" / "variance.toml"), index_width)
    if mode == "inband":
        return replace(net, mode="inband", dummy_algorithm="nonpropagation").with_edges(
            replace(e, interval="auto") for e in net.edges)
    return net


#: name -> (topology, control, network maker)
DESIGNS = {
    "chain-plain": ("chain", "plain", chain),
    "chain-credit": ("chain", "credit", chain),
    "variance-plain": ("variance", "plain", lambda: variance("credit")),
    "variance-credit": ("variance", "credit", lambda: variance("credit")),
    "variance-inband": ("variance", "inband", lambda: variance("inband")),
    "variance16-plain": ("variance16", "plain", lambda: variance("credit", 16)),
    "variance16-credit": ("variance16", "credit", lambda: variance("credit", 16)),
    "variance16-inband": ("variance16", "inband", lambda: variance("inband", 16)),
    "random20-plain": ("random20", "plain", random20),
    "random20-credit": ("random20", "credit", random20),
    "residual-plain": ("residual", "plain", lambda: load_spec(ROOT / "examples" / "residual.toml")),
    "residual-credit": ("residual", "credit", lambda: load_spec(ROOT / "examples" / "residual.toml")),
    # the branch's nodes with registered_offers = false: a cycle less per hop, at a slower clock
    "residual-unregistered-credit": ("residual", "credit",
                                     lambda: load_spec(ROOT / "examples" / "residual_unregistered.toml")),
    # the branch's nodes pipelined (pipelined = true), where "auto" makes them single-stage in residual-credit
    "residual-pipelined-credit": ("residual", "credit",
                                  lambda: load_spec(ROOT / "examples" / "residual_pipelined.toml")),
}


def resolved(make):
    report = check(make())
    assert report.deadlock_free, report.summary_lines()
    return report.network


def build_design(name: str, board_name: str, seeds=(1, 2, 3), netlist_seed: int = 0) -> dict:
    """One design on one board, placed with every seed in ``seeds``: the row is the median seed's build
    (nextpnr's Fmax moves 5-10% with the placement seed), ``fmax_seeds`` lists them all. A ``netlist_seed``
    builds another netlist of the same logic (:func:`sfdf.boards.build.build`), in a directory of its own."""
    topology, control, make = DESIGNS[name]
    board = BOARDS[board_name]
    network = resolved(make)
    top = PlainNetworkTop(network) if control == "plain" else None
    start = time.monotonic()
    runs = []
    for seed in seeds:
        try:  # Yosys once, nextpnr per seed
            result = place_again(runs[0], board, seed) if runs else \
                build(network, board, BUILD / f"{name}-{board_name}{f'-netlist{netlist_seed}' if netlist_seed else ''}",
                      clock_hz=board.fmax_probe_hz, top=top, seed=seed, router=ROUTER.get((name, board_name)),
                      netlist_seed=netlist_seed)
        except BuildFailed as failure:  # a tool's own failure: recorded, and the other builds go on
            result = {"board": board_name, "device": board.device, "fits": False, "failed": True,
                      "fmax_mhz": 0.0, "luts": 0, "ffs": 0, "brams": 0, "error": str(failure)}
        result["seed"] = seed
        runs.append(result)
        if result.get("failed") or not result.get("fits", True):
            break  # placement seeds do not change whether it fits
    runs.sort(key=lambda r: r["fmax_mhz"])
    result = runs[len(runs) // 2]
    if result.get("directory"):
        result["netlist"] = netlist_digest(result["directory"])
    result.update({"design": name, "topology": topology, "control": control, "edges": len(network.edges),
                   "nodes": len(network.nodes), "wall_s": round(time.monotonic() - start, 1),
                   "fmax_seeds": {r["seed"]: r["fmax_mhz"] for r in runs}})
    if result.get("critical_path"):
        result["critical_path_summary"] = critical_path_summary(result["critical_path"])
    result.pop("critical_path", None)  # the whole path stays in the build's report
    if netlist_seed:
        result["netlist_seed"] = netlist_seed
    return result


def _in_fresh_process(*args: str) -> dict:
    """This script run with ``args`` in a new interpreter, its JSON output parsed: a result that depends
    on the HDL alone, never on what elaborating other designs left behind (:func:`control_in_fresh_process`)."""
    done = subprocess.run([sys.executable, __file__, *args], capture_output=True, text=True, check=True)
    return json.loads(done.stdout)


def build_in_fresh_process(name: str, board_name: str, seeds=(1, 2, 3), netlist_seed: int = 0) -> dict:
    """:func:`build_design` in a new interpreter (:func:`_in_fresh_process`)."""
    return _in_fresh_process("--build", name, "--boards", board_name, "--seeds", *map(str, seeds),
                             "--netlist-seed", str(netlist_seed))


# -- control logic per edge ------------------------------------------------------------------------

def module_luts(name: str) -> dict:
    """LUT4s per module of the network alone (``synth_ecp5 -noflatten``), by module name."""
    from sfdf.hdl.generate import generate

    network = resolved(DESIGNS[name][2])
    with tempfile.TemporaryDirectory(prefix="sfdf-luts-") as scratch:
        v_path, _ = generate(network, scratch)
        # abc9 (synth_ecp5's LUT mapper) trips an assertion on some modules without flattening, so the
        # flow stops before LUT mapping and maps with abc -lut 4 instead.
        script = (f"read_verilog {v_path.name}; synth_ecp5 -noflatten -top {network.name} -run :map_luts; "
                  "abc -lut 4; opt_clean; stat")
        done = subprocess.run([toolchain_env()["YOSYS"], "-q", "-l", "stat.log", "-p", script], cwd=scratch,
                              capture_output=True, text=True, check=False)
        if done.returncode:
            raise RuntimeError(f"yosys failed: {done.stderr[-2000:]}")
        text = (Path(scratch) / "stat.log").read_text()
    modules = {module: sum(n * (2 if cell == "CCU2C" else 1) for cell, n in cells.items()
                           if cell in ("$lut", "LUT4", "CCU2C"))  # a CCU2C is two LUT4s
               for module, cells in yosys_stat(text).items()}
    return {"network": network.name, "edges": len(network.edges), "modules": modules}


def control_per_edge(name: str) -> dict:
    facts = module_luts(name)
    modules = facts["modules"]

    def total(pattern):
        return sum(n for module, n in modules.items() if re.search(pattern, module))

    senders, receivers = total(r"\.tx\d+$"), total(r"\.rx\d+$")
    joins, kernels = total(r"\.join$"), total(r"\.kernel$")
    offers = total(r"\.offer\d+$")  # a credit join's registered offers, one per input (hdl.offer)
    fifos = total(r"\.edge_[^.]+\.qc?$")  # an edge's channels q and qc (sfdf.hdl.links)
    decided = total(r"\.decided(\.\w+)?$")  # the queue between a node's two stages (hdl.decided)
    mark = total(r"\.watermark$")  # the index watermark (hdl.watermark), shared: counted per edge too
    edges = facts["edges"]
    return {"design": name, "edges": edges, "senders": senders, "receivers": receivers, "watermark": mark,
            "offers": offers, "joins": joins, "kernels": kernels, "fifos": fifos, "decided": decided,
            "total": sum(modules.values()),
            "per_edge": round((senders + receivers + mark) / edges, 1),
            "per_edge_with_joins": round((senders + receivers + mark + offers + joins) / edges, 1)}


def control_in_fresh_process(name: str) -> dict:
    """:func:`control_per_edge` in a new interpreter: Amaranth numbers anonymous signals with a global
    counter, so Verilog generated after other elaborations names them differently, and ABC's mapping
    of the same logic then varies (the chain's senders: 286 LUT4 fresh, 510 after 14 board builds)."""
    return _in_fresh_process("--control", name)


# -- the rows: docs/fpga.json ----------------------------------------------------------------------

def commit_of_hdl() -> str:
    """The commit the working tree's HDL is at (``+dirty`` when hdl/ or boards/ differ from it)."""
    head = subprocess.run(["git", "rev-parse", "--short", "HEAD"], cwd=ROOT, capture_output=True, text=True,
                          check=False)
    if head.returncode:
        return "unknown"
    dirty = subprocess.run(["git", "diff", "--quiet", "HEAD", "--", "hdl", "boards"], cwd=ROOT, check=False).returncode
    return head.stdout.strip() + ("+dirty" if dirty else "")


def _portable(row: dict) -> dict:
    """``row`` as committed: paths relative to the repository (the build's own files stay under build/)."""
    row = dict(row)
    for key in ("directory", "report", "bitstream"):
        if key in row:
            path = Path(row[key])
            if path.is_absolute():  # a relative path is the repository's already
                row[key] = str(path.relative_to(ROOT)) if path.is_relative_to(ROOT) else path.name
    return row


def load_rows(path: Path = OUT) -> dict:
    """``builds`` (one row per design and board), ``control``, and ``netlists``: rows of other netlists of
    a design's logic (``netlist_seed``), the flow's netlist noise beside its seed noise."""
    rows = json.loads(path.read_text()) if path.is_file() else {"builds": [], "control": []}
    rows.setdefault("netlists", [])
    return rows


def save_rows(rows: dict, path: Path = OUT) -> None:
    order = {(d, b): i for i, (d, b) in enumerate((d, b) for b in BOARDS for d in DESIGNS)}
    for kind in ("builds", "netlists"):
        rows.setdefault(kind, []).sort(key=lambda r: (order.get((r["design"], r["board"]), len(order)),
                                                      r.get("netlist_seed", 0)))
    names = list(DESIGNS)
    rows["control"].sort(key=lambda c: names.index(c["design"]) if c["design"] in names else len(names))
    path.write_text(json.dumps(rows, indent=1) + "\n")


def merge_row(kind: str, row: dict, path: Path = OUT) -> None:
    """Put ``row`` into the ``kind`` list (``builds``, ``control`` or ``netlists``) of ``path``, replacing the
    row of the same design (and board, and netlist seed), under an exclusive lock: side-by-side runs never
    lose each other's rows."""
    with open(path.with_suffix(".lock"), "w") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)
        rows = load_rows(path)
        same = (lambda r: r["design"] == row["design"] and r.get("board") == row.get("board")
                and r.get("netlist_seed", 0) == row.get("netlist_seed", 0))
        rows[kind] = [r for r in rows[kind] if not same(r)] + [row]
        save_rows(rows, path)


def netlist_digest(directory) -> str | None:
    """A digest of the Yosys netlist a build placed (``top.json`` in its directory), or None without one."""
    netlist = Path(directory) / "top.json"
    return hashlib.sha256(netlist.read_bytes()).hexdigest()[:16] if netlist.is_file() else None


def place_more(name: str, board_name: str, seeds, path: Path = OUT) -> dict:
    """The saved row of ``name`` on ``board_name`` with its netlist placed again with every seed in ``seeds``
    (:func:`sfdf.boards.build.place_again`), their Fmax in ``more_seeds``. The row's build directory must
    hold the netlist the row was built with (``netlist``, :func:`netlist_digest`)."""
    rows = load_rows(path)
    row = next((r for r in rows["builds"] if r["design"] == name and r["board"] == board_name), None)
    if row is None or not row.get("fits", True) or row.get("failed"):
        raise SystemExit(f"{path}: no placed row of {name} on {board_name}; build it first with --build {name} --save")
    built = {**row, "directory": str(ROOT / row["directory"])}
    if row.get("netlist") is None or row["netlist"] != netlist_digest(built["directory"]):
        raise SystemExit(f"{path}: the netlist in {row['directory']} is not the one {name} on {board_name} was built "
                         f"with; rebuild it first with --build {name} --save")
    more = dict(row.get("more_seeds", {}))
    for seed in seeds:
        more[str(seed)] = place_again(built, BOARDS[board_name], seed)["fmax_mhz"]
    return {**row, "more_seeds": more}


def _ratio_text(ratio: float) -> str:
    """``ratio`` to three decimals, truncated: a ratio shown never reads as meeting a target it misses
    (134.50 / 149.48 = 0.89978 shows as 0.899, not 0.900)."""
    return f"{math.floor(ratio * 1000) / 1000:.3f}"


def all_seeds(row: dict) -> dict:
    """Every seed's Fmax of ``row``: its three and ``more_seeds``."""
    return {int(k): v for k, v in {**row.get("fmax_seeds", {}), **row.get("more_seeds", {})}.items()}


# -- report ----------------------------------------------------------------------------------------

def _fmax(result):
    if result.get("failed"):
        return "build failed"
    if not result.get("fits", True):
        return "does not fit"
    seeds = all_seeds(result)
    if len(seeds) > len(result.get("fmax_seeds", {})):
        return f"{result['fmax_mhz']:.1f} ({len(seeds)} seeds: {statistics.median(seeds.values()):.1f})"
    return f"{result['fmax_mhz']:.1f}"


def table(results: list[dict], control: list[dict]) -> str:
    lines = ["| design | device | Fmax MHz | vs. plain | LUT4 | FF | BRAM | critical path (through) |",
             "|---|---|---:|---:|---:|---:|---:|---|"]
    by = {(r["design"], r["board"]): r for r in results}
    for r in results:
        plain = by.get((f"{r['topology']}-plain", r["board"]))
        ratio = ""
        if plain and plain is not r and plain.get("fits", True) and r.get("fits", True) and plain["fmax_mhz"]:
            ratio = _ratio_text(r['fmax_mhz'] / plain['fmax_mhz'])
        through = " → ".join(f"{b['block']}" for b in r.get("critical_path_through", [])[:8])
        if len(r.get("critical_path_through", [])) > 8:
            through += " → …"
        over = "; ".join(re.sub(r"\s+", " ", part.replace("Info:", "")).strip()
                         for part in r.get("error", "").split(";") if "%" in part)
        if r.get("failed"):
            over = re.sub(r"\s+", " ", r["error"].split("ERROR:")[-1].split("(logs in")[0]).strip()[:110]
        size = (f"{r['luts']} | {r['ffs']} | {r['brams']}" if r.get("fits", True) else f"– | – | – ({over})")
        lines.append(f"| {r['design']} | {r['device']} | {_fmax(r)} | {ratio} | {size} | {through} |")
    lines += ["", ("Control logic on ECP5 (Yosys `synth_ecp5 -noflatten`, LUTs mapped by `abc -lut 4`, a carry "
                   "cell counts two LUT4s; FIFOs excluded):"), "",
              ("| design | edges | senders (tx, heartbeat incl.) | receivers (rx) | watermark | per edge | "
               "offer registers (credit joins' inputs) | joins | per edge with offers and joins | FIFOs | "
               "decided (node stages) | kernels | whole network |"),
              "|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|"]
    for c in control:
        lines.append(f"| {c['design']} | {c['edges']} | {c['senders']} | {c['receivers']} | {c.get('watermark', 0)} | "
                     f"**{c['per_edge']}** | {c.get('offers', '')} | "
                     f"{c['joins']} | {c['per_edge_with_joins']} | {c['fifos']} | {c.get('decided', '')} | "
                     f"{c['kernels']} | {c['total']} |")
    return "\n".join(lines)


def _verdict(value, target, must, higher=True) -> str:
    """``met``, ``must met`` (the issue's floor but not its target) or ``MISSED``."""
    ok = (lambda a, b: a >= b) if higher else (lambda a, b: a <= b)
    return "met" if ok(value, target) else "must met" if ok(value, must) else "MISSED"


def targets(results: list[dict], control: list[dict]) -> list[str]:
    """The targets (median of the placement seeds), met or missed, with the critical path of a miss."""
    by = {(r["design"], r["board"]): r for r in results}
    lines = []

    def path(r):
        return f"; critical path {r.get('critical_path_summary')}"

    plain = by.get(("variance-plain", "ulx3s-85f"))
    if plain and plain.get("fits"):
        v = _verdict(plain["fmax_mhz"], TARGET_PLAIN_MHZ, TARGET_PLAIN_MHZ)
        lines.append(f"- variance-plain, ECP5-85F: {plain['fmax_mhz']:.1f} MHz (>= {TARGET_PLAIN_MHZ:.0f}): {v}"
                     + ("" if v == "met" else path(plain)))
    for design in ("variance-credit", "variance-inband"):
        r = by.get((design, "ulx3s-85f"))
        if not (r and r.get("fits")):
            continue
        v = _verdict(r["fmax_mhz"], TARGET_MHZ, MUST_MHZ)
        lines.append(f"- {design}, ECP5-85F: {r['fmax_mhz']:.1f} MHz (>= {TARGET_MHZ:.0f}, must {MUST_MHZ:.0f}): {v}"
                     + ("" if v == "met" else path(r)))
        if plain and plain.get("fits") and plain["fmax_mhz"]:
            ratio = r["fmax_mhz"] / plain["fmax_mhz"]
            lines.append(f"- {design} vs. variance-plain: {_ratio_text(ratio)} (>= {TARGET_RATIO}, must {MUST_RATIO}): "
                         f"{_verdict(ratio, TARGET_RATIO, MUST_RATIO)}")
    chain = by.get(("chain-credit", "ulx3s-85f"))
    if chain and chain.get("fits"):
        v = _verdict(chain["fmax_mhz"], TARGET_CHAIN_MHZ, MUST_CHAIN_MHZ)
        lines.append(f"- chain-credit, ECP5-85F: {chain['fmax_mhz']:.1f} MHz (>= {TARGET_CHAIN_MHZ:.0f}, must "
                     f"{MUST_CHAIN_MHZ:.0f}): {v}" + ("" if v == "met" else path(chain)))
    ice = by.get(("variance-credit", "icebreaker"))
    if ice:
        fits = ice.get("fits", True) and not ice.get("failed")
        lines.append(f"- variance-credit, iCE40UP5K: {_fmax(ice)}" + (f" MHz (>= {TARGET_ICE40_MHZ:.0f}): "
                     f"{_verdict(ice['fmax_mhz'], TARGET_ICE40_MHZ, TARGET_ICE40_MHZ)}" if fits else ": MISSED"))
    big = by.get(("random20-credit", "ulx3s-85f"))
    if big:
        seconds = big["wall_s"] / max(1, len(big.get("fmax_seeds", {1: 0})))
        lines.append(f"- random20-credit on ECP5: {seconds / 60:.1f} min per build, nextpnr's "
                     f"{big.get('router', ROUTER.get(('random20-credit', 'ulx3s-85f'), 'router1'))} (<= 15): "
                     f"{'met' if seconds <= 900 and big.get('fits', True) else 'MISSED'}")
    for c in control:
        if DESIGNS[c["design"]][0] == "residual":  # rows for the latency trade (docs/hardware.md), not targets
            continue
        target, must = (TARGET_LUTS_PER_EDGE, MUST_LUTS_PER_EDGE) if DESIGNS[c["design"]][1] == "credit" \
            else (TARGET_INBAND_LUTS_PER_EDGE, TARGET_INBAND_LUTS_PER_EDGE)
        kind = "credit + heartbeat" if DESIGNS[c["design"]][1] == "credit" else "in-band dummy"
        offers = (f"; the join's offer registers add {c['offers'] / c['edges']:.1f} more per edge, not counted"
                  if c.get("offers") else "")
        lines.append(f"- {c['design']}: {kind} logic {c['per_edge']} LUT4 per edge beyond its FIFOs (<= {target}"
                     f"{'' if must == target else f', must {must}'}): "
                     f"{_verdict(c['per_edge'], target, must, higher=False)}{offers}")
    return lines


def summary(results: list[dict], control: list[dict]) -> str:
    """README's table: one row per design, both devices side by side."""
    by = {(r["design"], r["board"]): r for r in results}
    per_edge = {c["design"]: c["per_edge"] for c in control}
    lines = ["| design | ECP5-85F Fmax MHz | vs. plain | LUT4 | control LUT4 per edge | iCE40UP5K Fmax MHz |",
             "|---|---:|---:|---:|---:|---:|"]
    for design, (topology, _, _) in DESIGNS.items():
        ecp5, ice40 = by.get((design, "ulx3s-85f")), by.get((design, "icebreaker"))
        if ecp5 is None and ice40 is None:
            continue
        plain = by.get((f"{topology}-plain", "ulx3s-85f"))
        ratio = ""
        if ecp5 and plain and plain is not ecp5 and ecp5.get("fits", True) and plain.get("fits", True):
            ratio = _ratio_text(ecp5['fmax_mhz'] / plain['fmax_mhz'])
        lines.append(f"| {design} | {_fmax(ecp5) if ecp5 else ''} | {ratio} | "
                     f"{ecp5['luts'] if ecp5 and ecp5.get('fits', True) else ''} | {per_edge.get(design, '')} | "
                     f"{_fmax(ice40) if ice40 else ''} |")
    return "\n".join(lines)


def netlist_noise(results: list[dict], netlists: list[dict]) -> str:
    """The Fmax of other netlists of a design's logic beside its row's: the flow's netlist noise, which a
    change of the HDL that alters no function draws from as well (docs/fpga.md, "Netlist noise")."""
    if not netlists:
        return ""
    lines = ["Netlist noise (the same logic, Yosys's private names scrambled by a seed; the row is netlist 0):", "",
             "| design | device | netlist | Fmax MHz, seeds 1 / 2 / 3 | median | LUT4 |",
             "|---|---|---:|---|---:|---:|"]
    by = {(r["design"], r["board"]): r for r in results}
    for key in dict.fromkeys((n["design"], n["board"]) for n in netlists):
        rows = [by[key]] if key in by else []
        rows += [n for n in netlists if (n["design"], n["board"]) == key]
        medians = []
        for r in rows:
            seeds = r.get("fmax_seeds", {})
            medians.append(r["fmax_mhz"])
            lines.append(f"| {key[0]} | {r['device']} | {r.get('netlist_seed', 0)} | "
                         f"{' / '.join(f'{seeds[k]:.1f}' for k in sorted(seeds, key=int))} | {r['fmax_mhz']:.1f} | "
                         f"{r['luts']} |")
        if len(medians) > 1:
            lines.append(f"| {key[0]} | | spread | | {min(medians):.1f}-{max(medians):.1f} "
                         f"({(max(medians) - min(medians)) / min(medians):.1%}) | |")
    return "\n".join(lines)


def headline(results: list[dict], control: list[dict]) -> str:
    """README's headline sentence: the variance network on both devices, from the rows alone."""
    by = {(r["design"], r["board"]): r for r in results}
    per_edge = {c["design"]: c["per_edge"] for c in control}
    rows = [by.get((d, "ulx3s-85f")) for d in ("variance-credit", "variance-inband", "variance-plain")]
    if not all(r and r.get("fits", True) and not r.get("failed") for r in rows):
        return ""
    credit, inband, plain = rows
    ice = by.get(("variance-credit", "icebreaker"))
    ice_text = (f"; on the iCE40UP5K (iCEBreaker) credit mode places at {ice['fmax_mhz']:.1f} MHz"
                if ice and ice.get("fits", True) and not ice.get("failed") else "")
    return (f"On ECP5-85F (ULX3S) the variance network places at {credit['fmax_mhz']:.1f} MHz in credit mode and "
            f"{inband['fmax_mhz']:.1f} MHz in-band, {_ratio_text(credit['fmax_mhz'] / plain['fmax_mhz'])} and "
            f"{_ratio_text(inband['fmax_mhz'] / plain['fmax_mhz'])} of the no-control baseline's "
            f"{plain['fmax_mhz']:.1f} (nextpnr placing for the board's probe target, as `sfdf build --clock max` "
            f"does, median of placement seeds 1-3; at its default clock `sfdf build` places for that clock and "
            f"reports less), with "
            f"{per_edge.get('variance-credit', '?')} LUT4 of control logic per edge in credit mode and "
            f"{per_edge.get('variance-inband', '?')} in-band{ice_text}.")


def write_doc(results: list[dict], control: list[dict], netlists: list[dict] = (), *, results_doc: Path = RESULTS,
              fpga_doc: Path = DOC, readme: Path = README) -> None:
    """Every generated FPGA table in its home: all rows, the control logic, the netlist noise and the targets
    in docs/results.md; the summary and the targets in docs/fpga.md; the headline and the summary in README."""
    noise = netlist_noise(results, list(netlists))
    verdicts = "Targets (median of the seeds):\n\n" + "\n".join(targets(results, control))
    splice(results_doc, BEGIN, END, f"{table(results, control)}\n\n" + (f"{noise}\n\n" if noise else "") + verdicts)
    splice(fpga_doc, TARGETS_BEGIN, TARGETS_END, f"{summary(results, control)}\n\n{verdicts}")
    splice(readme, SUMMARY_BEGIN, SUMMARY_END, f"{headline(results, control)}\n\n{summary(results, control)}")


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--boards", nargs="+", default=["ulx3s-85f", "icebreaker"], choices=sorted(BOARDS))
    parser.add_argument("--designs", nargs="+", default=list(DESIGNS), choices=list(DESIGNS))
    parser.add_argument("--resume", action="store_true", help="keep the results in fpga.json, build the rest")
    parser.add_argument("--seeds", type=int, nargs="+", default=[1, 2, 3],
                        help="nextpnr placement seeds; the table reports the median (default: 1 2 3)")
    parser.add_argument("--no-control", action="store_true", help="skip the per-module LUT count")
    parser.add_argument("--control", choices=list(DESIGNS), help="print one design's per-module LUT count as JSON")
    parser.add_argument("--build", choices=list(DESIGNS), help="build one design on the first board, print its row as JSON")
    parser.add_argument("--save", action="store_true", help="with --build or --control: merge the row into docs/fpga.json")
    parser.add_argument("--tables", action="store_true", help="write the tables from docs/fpga.json, build nothing")
    parser.add_argument("--place", choices=list(DESIGNS), help="place a saved row's netlist again with --seeds")
    parser.add_argument("--netlist-seed", type=int, default=0, metavar="N",
                        help="with --build: another netlist of the same logic (Yosys's private names scrambled by "
                             "seed N); --save keeps it under netlists, beside the design's row")
    args = parser.parse_args(argv)
    if args.place:
        row = place_more(args.place, args.boards[0], args.seeds)
        if args.save:
            merge_row("builds", row)
        seeds = all_seeds(row)
        print(json.dumps({"design": row["design"], "board": row["board"], "seeds": seeds,
                          "median": statistics.median(seeds.values())}))
        return 0
    if args.control or args.build:
        row = control_per_edge(args.control) if args.control else \
            build_design(args.build, args.boards[0], args.seeds, args.netlist_seed)
        row["commit"] = commit_of_hdl()
        if args.save:
            merge_row("control" if args.control else "netlists" if args.netlist_seed else "builds", _portable(row))
        print(json.dumps(row))
        return 0
    if args.tables:
        saved = load_rows()
        write_doc(saved["builds"], saved["control"], saved["netlists"])
        print(table(saved["builds"], saved["control"]))
        print(netlist_noise(saved["builds"], saved["netlists"]))
        print("\n".join(targets(saved["builds"], saved["control"])))
        return 0
    logging.basicConfig(level=logging.INFO, format="%(asctime)s %(message)s")
    saved = load_rows() if args.resume else {"builds": [], "control": [], "netlists": []}
    done = {(r["design"], r["board"]) for r in saved["builds"]}
    plan = [(d, b) for b in args.boards for d in args.designs if (d, b) not in done]
    commit = commit_of_hdl()
    for n, (design, board) in enumerate(plan, 1):
        log.info("[%d/%d] %s on %s", n, len(plan), design, board)
        result = build_in_fresh_process(design, board, args.seeds)
        if result.get("failed"):
            log.error("  BUILD FAILED: %s", result["error"])
        else:
            log.info("  %s MHz, %s LUT4, %s FF, %s BRAM (%s s)%s", _fmax(result), result["luts"], result["ffs"],
                     result["brams"], result.get("build_s"), "" if result.get("fits", True) else " DOES NOT FIT")
        result["commit"] = commit
        saved["builds"].append(_portable(result))
        save_rows(saved)
    if not args.no_control:
        have = {c["design"] for c in saved["control"]}
        for design in (d for d in args.designs if DESIGNS[d][1] != "plain" and d not in have):
            log.info("control logic of %s (yosys -noflatten)", design)
            saved["control"].append({**control_in_fresh_process(design), "commit": commit})
            save_rows(saved)
    save_rows(saved)
    write_doc(saved["builds"], saved["control"], saved["netlists"])
    print(table(saved["builds"], saved["control"]))
    print("\n".join(targets(saved["builds"], saved["control"])))
    return 0


if __name__ == "__main__":
    sys.exit(main())

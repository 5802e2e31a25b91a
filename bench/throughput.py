"""Throughput of the generated RTL on Verilator (cocotb): tokens per cycle against the credit threshold T,
control messages per data token, per-channel rates of the variance topology without filtering, the
000 Fig. 4 experiment, and the simulated cycles per second of the cocotb bench.

Target: >= 0.98 tokens per cycle per channel with no filtering and auto T. The Fig. 4
experiment runs the variance network (000 Fig. 1) on 32x32 frames with 10..90% zeros, the
mean-of-squares node ``w`` at ``ii = 4`` as the bottleneck, in frames per 1,000 cycles for: Filter
(auto heartbeats), NoFilter (the paper's stand-in, heartbeat 0 on every edge), and Unfiltered (a
source that sends its zeros: ``filter_zeros = 0``). Writes bench/out/throughput.png, reconvergent.png and
fig4.png, and a full run with the defaults docs/throughput.json and its tables in docs/results.md
(bench/results.py).

    python bench/throughput.py [--words 2000] [--capacity 16] [--frames 6] [--tables]
"""

from __future__ import annotations

import argparse
import itertools
import random
import re
from pathlib import Path

from sfdf.cosim.rates import run_measurement, steady_rate
from sfdf.gen.analysis import check
from sfdf.gen.analysis.throughput import network_rate, throughput_bound
from sfdf.gen.refmodel import random_words
from sfdf.gen.spec import parse_spec
from sfdf.gen.specedit import with_values
from sfdf.hdl.timing import stage_timing
from sfdf.sw.datasets import sparse_frames

from results import publish, table, tables_flag, tables_only

OUT = Path(__file__).parent / "out"
WORDS, CAPACITY, FRAMES = 2000, 16, 6
ROOT = Path(__file__).resolve().parent.parent
PAIR = """[network]
name = "pair_{tag}"
{network}
[[node]]
name = "u"
[[node]]
name = "x"
{x}
[[edge]]
from = "u"
to = "x"
capacity = {q}
{edge}
"""


def pair(q: int, t: int | None, unregistered: bool = False) -> str:
    """One edge of capacity ``q``: 000's credit messages with threshold ``t`` (``live_credit = false``, where
    T matters), or live credit (``t`` None: no credit messages, no threshold); ``unregistered``: the
    receiving node ``x`` with ``registered_offers = false``."""
    if t is None:
        return PAIR.format(tag="live", network="", q=q, edge="", x="")
    return PAIR.format(tag=f"t{t}{'u' if unregistered else ''}", network="live_credit = false", q=q,
                       edge=f"threshold = {t}", x="registered_offers = false" if unregistered else "")


def measure(network, words, build_dir, report=None):
    """Run ``network`` with one frame of ``words`` words per source; return the throughput figures, with
    ``sfdf check``'s bound. ``report``: its :func:`check` report, when the caller has it."""
    report = report or check(network)
    resolved = report.network
    raw, _ = run_measurement(network, {s: [random_words(1, s, words)] for s in resolved.sources}, build_dir,
                             report=report)
    rates = {sink: steady_rate(cycles) for sink, cycles in raw["sink_beat_cycles"].items()}
    bound, _ = network_rate(resolved, stage_timing(resolved))  # sfdf check's figure (with 000's batches)
    return {
        "network": resolved.name, "thresholds": {e.name: e.threshold for e in resolved.edges},
        "bound": float(bound), "bound_exact": str(bound),
        "sink_tokens_per_cycle": rates, "cycles": raw["cycles"], "cycles_per_s": raw["cycles_per_s"],
        "control_per_data_token": {e: raw["control_pushes"][e] / max(1, raw["data_tokens"][e])
                                   for e in raw["control_pushes"]},
        "channel_tokens_per_cycle": {e: (n - 1) / max(1, raw["data_push_window"][e][1] - raw["data_push_window"][e][0])
                                     for e, n in raw["data_tokens"].items() if n > 1},
    }


def reconvergent_spec(name: str, branches: dict[str, int], capacity: int, skip_capacity: int,
                      branch_setting: dict[str, str] | None = None) -> str:
    """``a`` forks into branches of ``random_filter`` nodes at rate 0 that meet again at ``e``.

    ``branches``: prefix -> nodes on it (0: a direct edge, the skip). Every edge has ``capacity``
    except the skip's ``skip_capacity``. ``branch_setting``: prefix -> a line for each of that branch's
    nodes (``registered_offers = false``: a cycle less per hop into each; ``pipelined = false``: one cycle
    per hop through each).
    """
    branch_setting = branch_setting or {}
    nodes = ["a", "e"] + [f"{b}{k}" for b, n in branches.items() for k in range(1, n + 1)]
    edges = []
    for b, n in branches.items():
        path = ["a"] + [f"{b}{k}" for k in range(1, n + 1)] + ["e"]
        edges += [(u, v, skip_capacity if n == 0 else capacity) for u, v in itertools.pairwise(path)]
    lines = [f'[network]\nname = "{name}"\n'] + [
        f'[[node]]\nname = "{v}"\n' + (f"{branch_setting[v.rstrip('0123456789')]}\n"
                                        if v.rstrip("0123456789") in branch_setting else "")
        for v in nodes]
    for u, v, q in edges:
        lines.append(f'[[edge]]\nfrom = "{u}"\nto = "{v}"\ncapacity = {q}\n')
    return "\n".join(lines)


#: The branch settings of :data:`RECONVERGENT`: pipelined (three cycles per hop), without offer registers
#: (two), single-stage (one, what "auto" builds where the skip is short).
PIPELINED = {"b": "pipelined = true"}
UNREGISTERED = {"b": "registered_offers = false\npipelined = true"}
SINGLE_STAGE = {"b": "pipelined = false"}

#: Reconvergent structures: a residual block (a skip edge around eight nodes, its branch pipelined),
#: the same without the branch's offer registers and single-stage, and a split-join (branches of four and
#: one node); name -> (branches, skip capacities to sweep, the branch's setting).
RECONVERGENT = {
    "residual": ({"b": 8, "s": 0}, (8, 16, 24, 32, 40, 48, 64, 96), PIPELINED),
    "residual_unregistered": ({"b": 8, "s": 0}, (8, 16, 24), UNREGISTERED),
    "residual_single": ({"b": 8, "s": 0}, (4, 8, 11, 16), SINGLE_STAGE),
    "splitjoin": ({"b": 4, "c": 1}, (16,), None),
}


def reconvergent(build_dir, words, capacity=16):
    """Words per cycle out of ``e`` for each structure and skip capacity, with live credit (the default: no
    threshold, so there is no T to sweep)."""
    rows = []
    for name, (branches, skips, setting) in RECONVERGENT.items():
        for skip in skips:
            tag = f"{name}_s{skip}"
            spec = reconvergent_spec(tag, branches, capacity, skip if "s" in branches else capacity, setting)
            network = parse_spec(spec, f"{tag}.toml")
            report = check(network)
            row = measure(network, words, build_dir, report)
            rate = row["sink_tokens_per_cycle"]["e"]
            rows.append({"structure": name, "skip_capacity": skip, "words_per_cycle": rate,
                         "bound": row["bound"], "bound_exact": row["bound_exact"]})  # sfdf check's figure
            print(f"{name}: skip |q| = {skip}: {rate:.3f} words/cycle (bound {row['bound_exact']} = "
                  f"{row['bound']:.3f})", flush=True)
    plot_reconvergent(rows, capacity)
    return rows


def plot_reconvergent(rows, capacity=16):
    """The residual block's measured words per cycle against the skip capacity, with ``sfdf check``'s bound
    for the generated Verilog (as ECP5) and for iCE40 (no offer registers): bench/out/reconvergent.png."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    from sfdf.hdl.dsp import FamilyOnly

    branches = RECONVERGENT["residual"][0]
    skips = list(range(4, 101, 2))
    fig, ax = plt.subplots(figsize=(6, 4))
    for family, setting, style, color, label in (
            (None, PIPELINED, "-", "C0", "bound, generic Verilog and ECP5, pipelined (3 cycles per hop)"),
            (None, UNREGISTERED, "-.", "C2", "bound, the same, registered_offers = false on the branch (2)"),
            (None, SINGLE_STAGE, ":", "C3", "bound, the same, pipelined = false on the branch (1)"),
            ("ice40", PIPELINED, "--", "C1", "bound, iCE40, pipelined (2 cycles per hop)")):
        bounds = []
        for skip in skips:
            spec = reconvergent_spec("residual", branches, capacity, skip, setting)
            net = check(parse_spec(spec, "residual.toml")).network
            bounds.append(float(throughput_bound(net, stage_timing(net, FamilyOnly(family) if family else None)).rate))
        ax.plot(skips, bounds, style, color=color, label=label)
    for structure, color, which in (("residual", "C0", ""), ("residual_unregistered", "C2", ", branch unregistered"),
                                    ("residual_single", "C3", ", branch single-stage")):
        measured = [r for r in rows if r["structure"] == structure]
        ax.plot([r["skip_capacity"] for r in measured], [r["words_per_cycle"] for r in measured], "o", color=color,
                label=f"measured (Verilator, generic Verilog){which}")
    ax.axhline(0.98, color="grey", lw=0.8, ls=":", label="target 0.98")
    ax.set_xlabel("skip edge capacity")
    ax.set_ylabel("words per cycle out of the join")
    ax.set_title(f"Residual block: skip edge around eight nodes, |q| = {capacity} elsewhere")
    ax.legend(fontsize=8, loc="lower right")
    fig.tight_layout()
    fig.savefig(OUT / "reconvergent.png", dpi=120)


#: 000 Fig. 4's configurations: name -> (every edge's values, the source's params) set in examples/variance.toml.
FIG4_CONFIGS = {
    "Filter": ({}, {}),
    "NoFilter": ({"interval": 0}, {}),
    "Unfiltered": ({}, {"filter_zeros": 0}),
}
ZEROS = (0.1, 0.3, 0.5, 0.7, 0.9)
FIG4_LABELS = {"Filter": "auto heartbeats", "NoFilter": "heartbeat 0", "Unfiltered": "`filter_zeros = 0`"}


def fig4_spec(config: str) -> str:
    """examples/variance.toml with ``w`` at ``ii = 4`` and the configuration's edges and source."""
    edge, source = FIG4_CONFIGS[config]
    path = ROOT / "examples" / "variance.toml"
    text = path.read_text()
    edges = {e.name: edge for e in parse_spec(text, str(path)).edges} if edge else {}
    nodes = {"w": {"ii": 4}, **({"u": {"params": source}} if source else {})}
    return with_values(text, str(path), edges=edges, nodes=nodes)


def fig4(build_dir, frames_per_run):
    """The 000 Fig. 4 experiment in RTL: frames per 1,000 cycles for each configuration and sparsity.

    Steady state: (results - 1) over the cycles from the first frame's result to the last one's.
    The paper's output-buffer variants have no credit-mode counterpart: credit-mode senders have no
    output buffer in hardware (the receiver takes data only against credits, and every credit flushes
    one), so the spec refuses ``output_buffer`` in credit mode.
    """
    rows = []
    for config in FIG4_CONFIGS:
        plain = parse_spec(fig4_spec(config), f"fig4_{config}.toml")
        for zeros in ZEROS:
            frames = sparse_frames(frames_per_run, zeros, 32 * 32, random.Random(f"fig4:{zeros}"))
            raw, _ = run_measurement(plain, {"u": frames}, build_dir, f"fig4_{config}")
            beats = raw["sink_beat_cycles"]["x"]
            assert len(beats) == frames_per_run, beats
            rate = 1000 * (len(beats) - 1) / (beats[-1] - beats[0])
            row = {"config": config, "zeros": zeros, "frames_per_kcycle": rate, "cycles": raw["cycles"],
                   "cycles_per_s": raw["cycles_per_s"], "control_pushes": raw["control_pushes"],
                   "data_tokens": raw["data_tokens"]}
            rows.append(row)
            print(f"Fig. 4 {config:10s} {zeros:.0%} zeros: {rate:.3f} frames per 1,000 cycles; "
                  f"w computed {raw['data_tokens']['uw']} tokens, "
                  f"cocotb {raw['cycles_per_s']:.0f} cycles/s")
    return rows


def plot_fig4(rows):
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    fig, ax = plt.subplots(figsize=(6, 4))
    styles = {"Filter": ("o-", 9), "NoFilter": ("s--", 5), "Unfiltered": ("^-", 6)}
    for config in FIG4_CONFIGS:
        pts = [r for r in rows if r["config"] == config]
        style, size = styles[config]
        ax.plot([100 * r["zeros"] for r in pts], [r["frames_per_kcycle"] for r in pts], style, ms=size,
                label=config)
    ax.set_xlabel("zero pixels (%)")
    ax.set_ylabel("frames per 1,000 cycles")
    ax.set_title("000 Fig. 4 in RTL: variance network, 32x32 frames, w at ii = 4")
    ax.legend(fontsize=8)
    fig.tight_layout()
    fig.savefig(OUT / "fig4.png", dpi=120)


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--words", type=int, default=WORDS)
    ap.add_argument("--capacity", type=int, default=CAPACITY)
    ap.add_argument("--frames", type=int, default=FRAMES, help="32x32 frames per Fig. 4 run")
    tables_flag(ap)
    ap.add_argument("--only-fig4", action="store_true")
    ap.add_argument("--only-reconvergent", action="store_true")
    ap.add_argument("--build-dir", default=str(ROOT / "build" / "bench"))
    args = ap.parse_args(argv)
    OUT.mkdir(exist_ok=True)
    build_dir = Path(args.build_dir)
    if tables_only(args, "throughput", sections):
        return
    if args.only_reconvergent:
        reconvergent(build_dir, args.words, args.capacity)
        return
    fig4_rows = fig4(build_dir, args.frames)
    plot_fig4(fig4_rows)
    if args.only_fig4:
        return
    q = args.capacity
    curve = []
    for t in sorted({0, 1, 2, 4, q // 2, q - 4, q - 3, q - 2, q - 1}):
        row = measure(parse_spec(pair(q, t), f"pair_t{t}.toml"), args.words, build_dir)
        rate = row["sink_tokens_per_cycle"]["x"]
        ctrl = row["control_per_data_token"]["u_x"]
        # x's offer register releases a popped token a cycle later (when the join consumes it), so q holds
        # one more: a batch of T + 1 streams up to T = |q| - 3; without it (registered_offers = false) |q| - 2
        # (sfdf check's bound: gen.analysis.throughput.batch_rate)
        bare = measure(parse_spec(pair(q, t, unregistered=True), f"pair_t{t}_u.toml"), args.words, build_dir)
        unregistered = bare["sink_tokens_per_cycle"]["x"]
        curve.append({"threshold": t, "tokens_per_cycle": rate, "bound": row["bound"], "control_per_token": ctrl,
                      "tokens_per_cycle_unregistered": unregistered, "bound_unregistered": bare["bound"],
                      "cycles_per_s": row["cycles_per_s"]})
        auto = " (auto)" if t == max(0, q - 3) else ""
        print(f"|q| = {q}, T = {t:2d}{auto}: {rate:.3f} tokens/cycle (bound {row['bound_exact']}; "
              f"{unregistered:.3f} with registered_offers = false, bound {bare['bound_exact']}), "
              f"{ctrl:.3f} control messages per token, cocotb {row['cycles_per_s']:.0f} cycles/s")
    live = measure(parse_spec(pair(q, None), "pair_live.toml"), args.words, build_dir)
    print(f"|q| = {q}, live credit (no threshold): {live['sink_tokens_per_cycle']['x']:.3f} tokens/cycle, "
          f"{live['control_per_data_token']['u_x']:.3f} control messages per token")
    text = re.sub(r'"variance_[a-z_]*"', '"random_filter"', (ROOT / "examples" / "variance.toml").read_text())
    variance = measure(parse_spec(text, "variance_nofilter.toml"), args.words, build_dir)
    print("variance topology, no filtering, auto T: sink "
          f"{variance['sink_tokens_per_cycle']['x']:.3f} tokens/cycle; per channel "
          + ", ".join(f"{e} {r:.3f}" for e, r in variance["channel_tokens_per_cycle"].items())
          + f" (first to last token); cocotb {variance['cycles_per_s']:.0f} cycles/s")
    rows = reconvergent(build_dir, args.words, args.capacity)
    plot(curve, q)
    data = {"words": args.words, "capacity": q, "frames": args.frames, "threshold_curve": curve, "live_credit": live,
            "variance": variance, "fig4": fig4_rows, "reconvergent": rows}
    if (args.words, args.capacity, args.frames) == (WORDS, CAPACITY, FRAMES):
        publish("throughput", data, sections, ["throughput.png", "reconvergent.png", "fig4.png"])


def sections(data: dict) -> dict[str, str]:
    """docs/results.md's RTL throughput tables (bench/results.py)."""
    q = data["capacity"]
    curve = table(
        ["T", "tokens per cycle", "sfdf check's bound", "x's `registered_offers = false`", "its bound",
         "control messages per data token", "cocotb cycles/s"],
        [[f"{r['threshold']}" + (" (auto)" if r["threshold"] == max(0, q - 3) else ""), f"{r['tokens_per_cycle']:.3f}",
          f"{r['bound']:.3f}", f"{r['tokens_per_cycle_unregistered']:.3f}", f"{r['bound_unregistered']:.3f}",
          f"{r['control_per_token']:.3f}", f"{r['cycles_per_s']:,.0f}"] for r in data["threshold_curve"]], "rrrrrrr")
    live, variance = data["live_credit"], data["variance"]
    lines = (f"Verilator, one frame of {data['words']:,} words, no filtering. One credit edge with `|q| = {q}`: with live "
             f"credit (the default) {live['sink_tokens_per_cycle']['x']:.3f} tokens per cycle and "
             f"{live['control_per_data_token']['u_x']:.3f} control messages per data token; with 000's receiver as "
             f"printed (`live_credit = false`) against the credit threshold T:\n\n{curve}\n\n"
             f"The variance topology, no filtering, auto settings: {variance['sink_tokens_per_cycle']['x']:.3f} tokens "
             "per cycle out of the sink; per channel (first to last token) "
             + ", ".join(f"{e} {r:.3f}" for e, r in variance["channel_tokens_per_cycle"].items()) + ".")
    structures = {"residual": "residual block, branch pipelined", "residual_unregistered":
                  "residual block, branch `registered_offers = false`", "residual_single":
                  "residual block, branch single-stage", "splitjoin": "split-join (branches of 4 and 1 nodes)"}
    reconv = table(["structure", "skip capacity", "words per cycle", "sfdf check's bound"],
                   [[structures.get(r["structure"], r["structure"]), r["skip_capacity"], f"{r['words_per_cycle']:.3f}",
                     f"{r['bound_exact']} = {r['bound']:.3f}" if "/" in r["bound_exact"] else r["bound_exact"]]
                    for r in data["reconvergent"]], "lrrr")
    zeros = sorted({r["zeros"] for r in data["fig4"]})
    rate = {(r["config"], r["zeros"]): r["frames_per_kcycle"] for r in data["fig4"]}
    fig4_table = table(["zeros", *(f"{c} ({FIG4_LABELS[c]})" for c in FIG4_CONFIGS)],
                       [[f"{100 * z:.0f}%", *(f"{rate[c, z]:.3f}" for c in FIG4_CONFIGS)] for z in zeros], "rrrr")
    return {"throughput threshold": lines, "throughput reconvergent": reconv,
            "fig4 table": f"{data['frames']} frames of 32x32 16-bit pixels per point, the mean-of-squares node `w` at "
                          f"`ii = 4`, frames per 1,000 cycles in steady state:\n\n{fig4_table}"}


def plot(curve, q):
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    fig, ax = plt.subplots(figsize=(6, 4))
    ts = [r["threshold"] for r in curve]
    ax.plot(ts, [r["tokens_per_cycle"] for r in curve], "o-", label="tokens per cycle")
    ax.plot(ts, [r["bound"] for r in curve], "k_", ms=14, label="sfdf check's bound")
    ax.plot(ts, [r["tokens_per_cycle_unregistered"] for r in curve], "^:", label="the same, x's registered_offers = false")
    ax.plot(ts, [r["bound_unregistered"] for r in curve], "_", color="grey", ms=10, label="its bound")
    ax.plot(ts, [r["control_per_token"] for r in curve], "s--", label="control messages per data token")
    ax.axhline(0.98, color="grey", lw=0.8, ls=":", label="target 0.98")
    ax.axvline(q - 3, color="C2", lw=0.8, ls="-.", label=f"auto T = |q| - 3 = {q - 3}")
    ax.set_xlabel("credit threshold T")
    ax.set_title(f"One credit edge (000 as printed), |q| = {q}, no filtering (Verilator)")
    ax.legend(fontsize=8)
    fig.tight_layout()
    fig.savefig(OUT / "throughput.png", dpi=120)


if __name__ == "__main__":
    main()

"""`sfdf check` at scale: layered random DAGs of 24 to 10,000 edges.

Credit mode with auto heartbeats (potential LP + Bellman-Ford certificate), in-band mode with auto
dummy intervals (the same LP, gen.analysis.dummies.potential_intervals; 002's Non-Propagation below
CYCLE_BUDGET cycles), and the 003 output-buffer check, against the papers' cycle-enumerating method
(000 Sec. 4.2, 003 Sec. 4.2 "enumerate all undirected cycles") on the sizes it finishes within a budget.
The throughput bound and sizing of ``sfdf check`` (gen.analysis.throughput) on the same networks.
Quality of the in-band intervals on small random DAGs: the LP's total, 002 Alg. 6's, auto's, against
the exact optimum found by trying every interval vector. Prints tables, writes bench/out/analysis.png and
(a run with the default sizes) docs/analysis.json and its tables in docs/results.md (bench/results.py).
Targets: credit 10,000 edges in under 2 s, in-band in under 5 s.

    python bench/analysis.py [--sizes 100 1000 10000] [--enum-budget 20] [--quality 30] [--tables]
"""

from __future__ import annotations

import argparse
import itertools
import random
import time
import tracemalloc
from dataclasses import replace
from pathlib import Path

from sfdf.gen.analysis import check, resolve, throughput_summary
from sfdf.gen.analysis.cycles import edges_on_cycles, undirected_cycles
from sfdf.gen.analysis.dummies import nonpropagation_intervals, potential_intervals
from sfdf.gen.randomnet import layered_dag, random_dag
from sfdf.hdl.timing import stage_timing

from results import publish, table, tables_flag, tables_only

OUT = Path(__file__).parent / "out"
DEFAULT_SIZES = [24, 40, 100, 1000, 10000]


def timed(fn, arg, repeat):
    """Best wall time of ``repeat`` runs, then one more run under tracemalloc for the peak (MiB)."""
    seconds = []
    for _ in range(repeat):
        t0 = time.perf_counter()
        result = fn(arg)
        seconds.append(time.perf_counter() - t0)
    tracemalloc.start()
    fn(arg)
    peak = tracemalloc.get_traced_memory()[1]
    tracemalloc.stop()
    return result, min(seconds), peak / 2**20


def enumerate_check(network, hidden, budget):
    """The papers' method: every undirected cycle, both orientations. None if over budget."""
    caps = {e.name: e.capacity for e in network.edges}
    t0 = time.perf_counter()
    count = 0
    for cycle in undirected_cycles(network):
        count += 1
        fwd = [n for n, f in cycle if f]
        back = [n for n, f in cycle if not f]
        for h, c in ((fwd, back), (back, fwd)):
            if sum(hidden[n] for n in h) >= sum(caps[n] for n in c):
                return False, count, time.perf_counter() - t0
        if count % 1000 == 0 and time.perf_counter() - t0 > budget:
            return None, count, time.perf_counter() - t0
    return True, count, time.perf_counter() - t0


def safe_by_enumeration(network, intervals) -> bool:
    """``sum_B ([q] - 1) < sum_F |q|`` on every undirected cycle, both ways round (docs/semantics.md)."""
    caps = {e.name: e.capacity for e in network.edges}
    for cycle in undirected_cycles(network):
        fwd = [n for n, f in cycle if f]
        back = [n for n, f in cycle if not f]
        for empty, full in ((fwd, back), (back, fwd)):
            if sum(intervals[n] - 1 for n in empty) >= sum(caps[n] for n in full):
                return False
    return True


def exact_optimum(network) -> int:
    """The largest total of safe intervals on the edges on cycles, trying every vector (an interval
    above the sum of the capacities is never needed: the other side of any cycle holds less)."""
    on = sorted(edges_on_cycles(network))
    top = sum(e.capacity for e in network.edges)
    best = 0
    for values in itertools.product(range(1, top + 1), repeat=len(on)):
        if sum(values) > best and safe_by_enumeration(network, dict(zip(on, values))):
            best = sum(values)
    return best


def quality(count: int) -> list[dict]:
    """In-band interval totals on small random DAGs: LP, 002 Alg. 6, auto, exact optimum."""
    rng = random.Random(13)
    rows = []
    while len(rows) < count:
        net = replace(random_dag(rng, rng.randint(3, 5), rng.randint(3, 5), capacities=(1, 4)), mode="inband")
        on = sorted(edges_on_cycles(net))
        if not 2 <= len(on) <= 4:
            continue
        paper = nonpropagation_intervals(net)
        auto = {e.name: e.interval for e in resolve(net).edges}
        lp = potential_intervals(net)
        rows.append({"edges": len(net.edges), "on_cycles": len(on), "lp": sum(lp[n] for n in on),
                     "alg6": sum(paper[n] for n in on), "auto": sum(auto[n] for n in on),
                     "optimum": exact_optimum(net)})
    for key in ("lp", "alg6", "auto"):
        ratios = [r[key] / r["optimum"] for r in rows]
        print(f"in-band intervals, {key:>4}: mean {sum(ratios) / len(ratios):.3f} of the exact optimum "
              f"(min {min(ratios):.3f}, optimal in {sum(x == 1 for x in ratios)}/{len(rows)})")
    return rows


def sizing(sizes: list[int], repeat: int) -> list[dict]:
    """``sfdf check``'s throughput bound and full-rate sizing where capacities go down to 2, so that some
    edges need sizing (bench/results.py's "analysis sizing")."""
    rows = []
    for n_edges in sizes:
        net = layered_dag(random.Random(n_edges), n_edges, width=8, fanout=2, capacities=(2, 64))
        resolved = check(replace(net, mode="credit")).network
        rate, sec, _ = timed(lambda n: throughput_summary(n, stage_timing(n)), resolved, repeat)
        rows.append({"edges": n_edges, "capacities": [2, 64], "sized_edges": len(rate["full_rate_sizing"]),
                     "throughput": rate["exact"], "throughput_s": round(sec, 4)})
        print(f"{n_edges:>6} edges, capacities 2..64: {rows[-1]['sized_edges']} edges sized, {sec:.3f} s")
    return rows


def _seconds(s: float) -> str:
    return f"{s:.3f} s"


def sections(data: dict) -> dict[str, str]:
    """docs/results.md's analysis tables (bench/results.py)."""
    budget = data["enum_budget_s"]
    scale = table(
        ["edges", "nodes", "credit check", "peak memory", "in-band check", "OB check", "throughput bound and sizing",
         "cycle enumeration (the papers' method)"],
        [[f"{r['edges']:,}", f"{r['nodes']:,}", _seconds(r["credit_check_s"]), f"{r['credit_peak_mib']:.1f} MiB",
          _seconds(r["inband_check_s"]), _seconds(r["ob_check_s"]), _seconds(r["throughput_s"]),
          f"{r['enumeration_s']:.2f} s ({r['enumeration_cycles_seen']:,} cycles)" if r["enumeration_finished"]
          else f"gave up after {budget:.0f} s, {r['enumeration_cycles_seen']:,}+ cycles"] for r in data["scale"]],
        "rrrrrrr")
    largest = max(data["scale"], key=lambda r: r["edges"])
    verdicts = [f"{what} {largest[key]:.3f} s ({'<' if largest[key] < target else '>='} {target} s: "
                f"{'met' if largest[key] < target else 'MISSED'})"
                for what, key, target in (("credit", "credit_check_s", 2), ("in-band", "inband_check_s", 5))]
    scale += f"\n\nTargets at {largest['edges']:,} edges: " + ", ".join(verdicts) + "."
    sized = table(["edges", "capacities", "edges sized for full rate", "throughput bound and sizing"],
                  [[f"{r['edges']:,}", "{}..{}".format(*r["capacities"]), f"{r['sized_edges']:,}",
                    _seconds(r["throughput_s"])] for r in data["sizing"]], "rlrr")
    rows = data["quality"]
    share = {key: [r[key] / r["optimum"] for r in rows] for key in ("lp", "alg6", "auto")}
    quality_text = (f"On {len(rows)} small random in-band DAGs (2-4 edges on cycles, capacities 1..4), the total of "
                    "the intervals on cycles as a share of the exact optimum (every vector tried), mean (worst; "
                    "optimal on):\n\n" + table(
                        ["intervals", "mean", "worst", "optimal on"],
                        [[label, f"{sum(v) / len(v):.3f}", f"{min(v):.3f}", f"{sum(x == 1 for x in v)} of {len(v)}"]
                         for label, v in (("the LP (`h = [q] - 1`)", share["lp"]), ("002 Alg. 6", share["alg6"]),
                                          ("`auto`", share["auto"]))], "lrrr"))
    return {"analysis scale": scale, "analysis sizing": sized, "analysis quality": quality_text}


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--sizes", type=int, nargs="+", default=DEFAULT_SIZES)
    ap.add_argument("--enum-budget", type=float, default=30.0, help="seconds for cycle enumeration")
    ap.add_argument("--repeat", type=int, default=3)
    ap.add_argument("--quality", type=int, default=30, help="small random DAGs for the in-band quality table")
    ap.add_argument("--sizing", type=int, nargs="*", default=[1000, 10000],
                    help="sizes for the sizing table (capacities 2..64)")
    tables_flag(ap)
    args = ap.parse_args(argv)
    if tables_only(args, "analysis", sections):
        return
    OUT.mkdir(exist_ok=True)
    rows = []
    for n_edges in args.sizes:
        net = layered_dag(random.Random(n_edges), n_edges, width=8, fanout=2, capacities=(4, 64))
        credit = replace(net, mode="credit")
        report, sec, mem = timed(check, credit, args.repeat)
        obs = replace(net.with_edges(replace(e, output_buffer=max(1, e.capacity // 3)) for e in net.edges),
                      mode="inband", filtering=False)
        ob_report, ob_sec, ob_mem = timed(check, obs, args.repeat)
        inband = replace(net, mode="inband", dummy_algorithm="nonpropagation")
        ib_report, ib_sec, ib_mem = timed(check, inband, args.repeat)
        rate, rate_sec, _ = timed(lambda n: throughput_summary(n, stage_timing(n)), report.network, args.repeat)
        enum_ok, cycles, enum_sec = enumerate_check(credit, report.intervals, args.enum_budget)
        row = {
            "edges": n_edges, "nodes": len(net.nodes),
            "credit_check_s": round(sec, 4), "credit_peak_mib": round(mem, 1),
            "deadlock_free": report.deadlock_free,
            "interval_total": sum(report.intervals.values()),
            "ob_check_s": round(ob_sec, 4), "ob_peak_mib": round(ob_mem, 1), "ob_safe": ob_report.deadlock_free,
            "inband_check_s": round(ib_sec, 4), "inband_peak_mib": round(ib_mem, 1),
            "inband_deadlock_free": ib_report.deadlock_free,
            "throughput_s": round(rate_sec, 4), "throughput": rate["exact"], "sized_edges": len(rate["full_rate_sizing"]),
            "enumeration_finished": enum_ok is not None, "enumeration_cycles_seen": cycles,
            "enumeration_s": round(enum_sec, 3),
            "ratio_enum_over_lp": round(enum_sec / sec, 1) if enum_ok is not None else None,
        }
        if enum_ok is not None:
            assert enum_ok == report.deadlock_free, "enumeration disagrees with the mirror check"
        rows.append(row)
        print(f"{n_edges:>6} edges {len(net.nodes):>5} nodes | credit check {sec:7.3f} s peak {mem:6.1f} MiB"
              f" | in-band check {ib_sec:7.3f} s | OB check {ob_sec:7.3f} s"
              f" | throughput {rate['exact']} and sizing ({row['sized_edges']} edges) {rate_sec:6.3f} s | enumeration "
              + (f"{enum_sec:8.2f} s over {cycles} cycles (x{row['ratio_enum_over_lp']})" if enum_ok is not None
                 else f"gave up after {enum_sec:.0f} s, {cycles}+ cycles"))
    data = {"enum_budget_s": args.enum_budget, "repeat": args.repeat, "scale": rows,
            "sizing": sizing(args.sizing, args.repeat), "quality": quality(args.quality) if args.quality else []}
    plot(rows)
    if args.sizes == DEFAULT_SIZES and args.quality and args.sizing:
        publish("analysis", data, sections, ["analysis.png"])
    else:
        print(f"wrote {OUT / 'analysis.png'} (docs/analysis.json is written by a run with the default sizes)")


def plot(rows):
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    fig, ax = plt.subplots(figsize=(6, 4))
    x = [r["edges"] for r in rows]
    ax.loglog(x, [r["credit_check_s"] for r in rows], "o-", label="sfdf check, credit (LP + Bellman-Ford)")
    ax.loglog(x, [r["ob_check_s"] for r in rows], "s-", label="sfdf check, output buffers (003)")
    ax.loglog(x, [r["inband_check_s"] for r in rows], "d-", label="sfdf check, in-band (auto intervals: LP)")
    ax.loglog(x, [r["throughput_s"] for r in rows], "v-", label="sfdf check, throughput bound and sizing")
    fin = [r for r in rows if r["enumeration_finished"]]
    if fin:
        ax.loglog([r["edges"] for r in fin], [r["enumeration_s"] for r in fin], "x--",
                  label="cycle enumeration (papers)")
    gave_up = [r for r in rows if not r["enumeration_finished"]]
    if gave_up:
        ax.scatter([r["edges"] for r in gave_up], [r["enumeration_s"] for r in gave_up], marker="^",
                   color="C2", label="enumeration gave up (budget)")
    ax.axhline(2.0, color="grey", lw=0.8, ls=":", label="target 2 s")
    ax.set_xlabel("edges")
    ax.set_ylabel("seconds")
    ax.set_title("Deadlock-safety analysis on layered random DAGs")
    ax.legend(fontsize=8)
    fig.tight_layout()
    fig.savefig(OUT / "analysis.png", dpi=120)


if __name__ == "__main__":
    main()

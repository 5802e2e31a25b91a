"""The random-DAG cosim sweep: many more seeds of the regression ``make test`` runs a few of.

Each seed is one network of :func:`sfdf.cosim.randomdag.random_credit_network` (credit mode, random filter
rates and initiation intervals, 8-, 16- or 32-bit indices, one in four with 000's receiver as printed),
generated, built with Verilator and run under cocotb against the reference model token by token, with
random back-pressure and idle sources (pause 0.3) and the deadlock watchdog, exactly as
``tests/cosim/test_network.py`` runs its seeds. A row per seed: the network, the verdict, the simulated
time and the build and run seconds. Exits 1 when a seed does not match the model (its log's path is in
the row), so a sweep can gate a change.

Prints a table, and keeps each variant's sweep in docs/cosim.json with its row in docs/results.md
(bench/results.py). ``--unregistered`` runs the same seeds with ``registered_offers = false`` on every
node with inputs (the receivers offer to the joins straight; docs/hardware.md, "Registered offers");
``--single-stage`` with ``pipelined = false`` on every node that can be single-stage (one input and one
output, ``ii = 1``, live credit; docs/hardware.md, "The single-stage node").

    .venv/bin/python bench/cosim.py [--seeds 0-59] [--jobs 2] [--unregistered | --single-stage] [--tables]
"""

from __future__ import annotations

import argparse
import sys
import time
from concurrent.futures import ProcessPoolExecutor
from dataclasses import replace
from pathlib import Path

from sfdf.cosim.network import run_network
from sfdf.cosim.randomdag import random_credit_network, single_stage

from results import data_path, load, publish, table, tables_flag, tables_only

ROOT = Path(__file__).resolve().parents[1]
#: The regression's settings (tests/cosim/test_network.py, test_random_dag_matches_model).
COMPUTATIONS, PAUSE = 120, 0.3


def seeds(text: str) -> list[int]:
    """``"0-59"``, ``"3,7,11"`` or a mix, as seed numbers."""
    out = []
    for part in text.split(","):
        low, _, high = part.partition("-")
        out += range(int(low), int(high or low) + 1)
    return out


#: ``--unregistered`` and ``--single-stage``: the variant's name in build and output paths, and the network.
VARIANTS = {
    "unregistered": lambda network: replace(network, nodes=tuple(
        replace(n, registered_offers=not network.in_edges(n.name)) for n in network.nodes)),
    "single": single_stage,
}


def run_seed(seed: int, build_dir: str, variant: str | None = None) -> dict:
    network = random_credit_network(seed)
    if variant:
        network = VARIANTS[variant](network)
    start = time.monotonic()
    run = run_network(network, build_dir=build_dir, computations=COMPUTATIONS, seed=seed, pause=PAUSE)
    return {
        "seed": seed, "nodes": len(network.nodes), "edges": len(network.edges),
        "index_width": network.index_width, "live_credit": network.live_credit,
        "single_stage": sum(not n.pipelined for n in network.nodes),
        "model_deadlocked": run.model_deadlocked, "passed": run.passed and not run.model_deadlocked,
        "sim_ns": int(sum(t.sim_time_ns for t in run.results.tests.values())),
        "build_s": round(run.results.build_s, 1), "run_s": round(run.results.run_s, 1),
        "seconds": round(time.monotonic() - start, 1),
        "log": "" if run.passed else str(run.results.sim_log),
    }


VARIANT_NAMES = {"default": "as generated", "unregistered": "`registered_offers = false` on every node with inputs",
                 "single": "every eligible node single-stage (`pipelined = false`)"}


def sections(data: dict) -> dict[str, str]:
    """docs/results.md's cosim table (bench/results.py): a row per variant's last sweep."""
    rows = []
    for variant, run in data["sweeps"].items():
        eligible = [r for r in run["rows"] if variant != "single" or r["single_stage"]]
        widths = sorted({r["index_width"] for r in eligible})
        rows.append([VARIANT_NAMES.get(variant, variant), run["seeds"], len(eligible),
                     ", ".join(map(str, widths)), sum(r["live_credit"] for r in eligible),
                     f"{sum(r['passed'] for r in eligible)} of {len(eligible)}", f"{run['seconds'] / 60:.0f} min"])
    return {"cosim table": f"{data['computations']} computations per source, pause {data['pause']}, against the "
                           "reference model token by token:\n\n" + table(
                               ["nodes", "seeds", "networks", "index widths", "with live credit", "match the model",
                                "sweep (2 jobs)"], rows, "llrrrrr")}


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--seeds", default="0-59", help="seeds, e.g. 0-59 or 3,7,11 (default 0-59)")
    parser.add_argument("--jobs", type=int, default=2, help="seeds built and run at once (default 2)")
    parser.add_argument("--build-dir", default=None, help="default build/cosim (build/cosim-unregistered)")
    variant = parser.add_mutually_exclusive_group()
    variant.add_argument("--unregistered", action="store_const", const="unregistered", dest="variant",
                         help="every node with inputs without offer registers (registered_offers = false)")
    variant.add_argument("--single-stage", action="store_const", const="single", dest="variant",
                         help="every node that can be single-stage made so (pipelined = false)")
    tables_flag(parser)
    args = parser.parse_args(argv)
    if tables_only(args, "cosim", sections):
        return 0
    suffix = f"-{args.variant}" if args.variant else ""
    build_dir = args.build_dir or str(ROOT / "build" / f"cosim{suffix}")
    header = (f"{'seed':>4} {'nodes':>5} {'edges':>5} {'w':>3} {'live':>5} {'result':<8} {'sim ns':>7} "
              f"{'build s':>8} {'run s':>6}")
    print(header)
    print("-" * len(header))
    rows = []
    start = time.monotonic()
    chosen = seeds(args.seeds)
    with ProcessPoolExecutor(args.jobs) as pool:
        for row in pool.map(run_seed, chosen, [build_dir] * len(chosen), [args.variant] * len(chosen)):
            rows.append(row)
            print(f"{row['seed']:>4} {row['nodes']:>5} {row['edges']:>5} {row['index_width']:>3} "
                  f"{str(row['live_credit']).lower():>5} {'PASS' if row['passed'] else 'FAIL':<8} {row['sim_ns']:>7} "
                  f"{row['build_s']:>8} {row['run_s']:>6}" + (f"  {row['log']}" if row["log"] else ""), flush=True)
    failed = [row["seed"] for row in rows if not row["passed"]]
    print(f"{len(rows) - len(failed)} of {len(rows)} seeds match the model token by token"
          + (f"; failed: {failed}" if failed else "") + f" ({time.monotonic() - start:.0f} s, {args.jobs} jobs)")
    if args.variant == "single":  # the seeds with no eligible node ran the network as generated
        print(f"{sum(bool(r['single_stage']) for r in rows)} of them with a single-stage node")
    saved = load("cosim") if data_path("cosim").is_file() else {"computations": COMPUTATIONS, "pause": PAUSE,
                                                                 "sweeps": {}}
    saved["sweeps"][args.variant or "default"] = {"seeds": args.seeds, "jobs": args.jobs,
                                                  "seconds": round(time.monotonic() - start), "rows": rows}
    publish("cosim", saved, sections)
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())

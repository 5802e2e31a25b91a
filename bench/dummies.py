"""Dummies sent by Naive, Propagation and Non-Propagation (002 Sec. 3.4) in the reference model.

1. The BLAST-like pipeline (examples/blast.toml) as the filtering rate of its six filtering stages
   rises to the >95% overall filtering of 002 Sec. 3.4 (Mercury BLAST: 72,000 dummies with
   Non-Propagation vs 4x10^8 with Propagation). Standalone dummies are what costs bandwidth; dummy
   flags riding on data tokens are reported beside them.
2. The case of 002 Sec. 3.4 where Propagation wins: a source that filters everything on a branch of k
   channels of an undirected cycle. Propagation sends about k m / q dummies, Non-Propagation about
   k m / ceil(q / k).

Prints tables, writes bench/out/dummies.png and (with the default computations) docs/dummies.json and its
tables in docs/results.md (bench/results.py).

    python bench/dummies.py [--computations 20000] [--tables]
"""

from __future__ import annotations

import argparse
import itertools
from dataclasses import replace
from pathlib import Path

from sfdf.gen.model import Edge, Network, Node
from sfdf.gen.refmodel import simulate
from sfdf.gen.spec import load_spec

from results import publish, table, tables_flag, tables_only

OUT = Path(__file__).parent / "out"
ROOT = Path(__file__).resolve().parent.parent
ALGORITHMS = ("naive", "propagation", "nonpropagation")
COMPUTATIONS = 20000


FILTERS = ("seed_match", "two_hit_fwd", "two_hit_rev", "ungapped_ext", "gapped_fwd", "gapped_rev")


def with_rate(network, rate):
    """Every filtering stage of the BLAST-like pipeline filters with probability ``rate``."""
    nodes = [replace(n, params={**n.params, "rate": rate}) if n.name in FILTERS else n for n in network.nodes]
    return replace(network, nodes=tuple(nodes))


def blast_sweep(computations, rates):
    base = load_spec(ROOT / "examples" / "blast.toml")
    rows = []
    for rate in rates:
        net = with_rate(base, rate)
        row = {"stage_rate": rate}
        for algorithm in ALGORITHMS:
            res = simulate(replace(net, dummy_algorithm=algorithm), computations=computations, seed=3)
            assert not res.deadlocked, f"{algorithm} deadlocked at rate {rate}"
            reported = sum(1 for ev in res.outputs["report"] if ev[0] == "data")
            row[algorithm] = {"dummies": res.dummies, "dummy_flags": res.dummy_flags,
                              "data_tokens": res.data_tokens}
            row["overall_filtering"] = round(1 - reported / computations, 6)
        rows.append(row)
        print(f"stage rate {rate:4.2f}  overall filtering {row['overall_filtering']:6.2%}  "
              + "  ".join(f"{a} {row[a]['dummies']:>8} dummies" for a in ALGORITHMS))
    return rows


def long_branch(k, q):
    """u -> a1 -> ... -> a(k-1) -> x (k channels) and u -> x: one undirected cycle."""
    names = ["u"] + [f"a{i}" for i in range(1, k)] + ["x"]
    edges = [Edge(f"{s}_{d}", s, d, q) for s, d in itertools.pairwise(names)] + [Edge("u_x_direct", "u", "x", q)]
    return Network(f"long{k}", [Node(n) for n in names], edges, mode="inband"), edges[0].name


def propagation_wins(computations, ks, q):
    rows = []
    for k in ks:
        net, first = long_branch(k, q)
        oracle = lambda node, out, index, first=first: False if out == first else None
        row = {"k": k, "q": q}
        for algorithm in ("propagation", "nonpropagation"):
            res = simulate(replace(net, dummy_algorithm=algorithm), computations=computations, seed=1,
                           filter_oracle=oracle)
            assert not res.deadlocked
            row[algorithm] = res.dummies
        # 002 Sec. 3.4: k * floor(m / q) against k * m / ceil(q / k)
        row["predicted_propagation"] = k * (computations // q)
        row["predicted_nonpropagation"] = k * (computations // -(-q // k))
        rows.append(row)
        print(f"k = {k:2d}, |q| = {q}: propagation {row['propagation']:>7} dummies, "
              f"non-propagation {row['nonpropagation']:>7}  (x{row['nonpropagation'] / max(1, row['propagation']):.1f}; "
              f"predicted {row['predicted_propagation']} and {row['predicted_nonpropagation']})")
    return rows


def plot(blast, wins):
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    fig, (a, b) = plt.subplots(1, 2, figsize=(10, 4))
    x = [r["overall_filtering"] * 100 for r in blast]
    for algorithm, marker in zip(ALGORITHMS, "os^"):
        a.semilogy(x, [max(1, r[algorithm]["dummies"]) for r in blast], marker + "-", label=algorithm)
    a.set_xlabel("overall filtering (%)")
    a.set_ylabel("standalone dummies sent")
    a.set_title("BLAST-like pipeline")
    a.legend()
    ks = [r["k"] for r in wins]
    b.plot(ks, [r["propagation"] for r in wins], "s-", label="propagation")
    b.plot(ks, [r["nonpropagation"] for r in wins], "^-", label="nonpropagation")
    b.set_xlabel("channels k on the filtered branch")
    b.set_ylabel("dummies sent")
    b.set_title("002 Sec. 3.4: where Propagation wins")
    b.legend()
    fig.tight_layout()
    fig.savefig(OUT / "dummies.png", dpi=120)


def _percent(share: float) -> str:
    """A share as a percentage, with the digits that tell 99.99% from all."""
    return f"{100 * share:.2f}%" if share < 0.999 or share == 1 else f"{100 * share:.3f}%"


def sections(data: dict) -> dict[str, str]:
    """docs/results.md's dummy tables (bench/results.py)."""
    blast = table(
        ["stage rate", "overall filtering", "Naive", "Propagation (+ flags on data)", "Non-Propagation"],
        [[r["stage_rate"], _percent(r["overall_filtering"]), f"{r['naive']['dummies']:,}",
          f"{r['propagation']['dummies']:,} (+{r['propagation']['dummy_flags']:,})",
          f"{r['nonpropagation']['dummies']:,}"] for r in data["blast"]], "rrrrr")
    wins = table(
        ["k", "\\|q\\|", "Propagation", "k floor(m / \\|q\\|)", "Non-Propagation", "k m / ceil(\\|q\\| / k)"],
        [[r["k"], r["q"], f"{r['propagation']:,}", f"{r['predicted_propagation']:,}", f"{r['nonpropagation']:,}",
          f"{r['predicted_nonpropagation']:,}"] for r in data["propagation_wins"]], "rrrrrr")
    return {"dummies blast": f"Reference model, {data['computations']:,} words per run.\n\n{blast}",
            "dummies propagation wins": wins}


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--computations", type=int, default=COMPUTATIONS)
    tables_flag(ap)
    args = ap.parse_args(argv)
    if tables_only(args, "dummies", sections):
        return
    OUT.mkdir(exist_ok=True)
    blast = blast_sweep(args.computations, [0.0, 0.1, 0.3, 0.5, 0.7, 0.9, 0.95])
    wins = propagation_wins(args.computations, [2, 4, 8, 16], 32)
    plot(blast, wins)
    if args.computations == COMPUTATIONS:
        publish("dummies", {"computations": args.computations, "blast": blast, "propagation_wins": wins}, sections,
                ["dummies.png"])


if __name__ == "__main__":
    main()

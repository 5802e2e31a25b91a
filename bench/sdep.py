"""SDEP query cost (004): the closed form of two tabulated steady states (Eq. 3, 4) against the pull
schedule (Thm. 1), on SDF chains and layered DAGs of 10 to 1,000 actors.

Rates come from per-actor repetitions ``r`` in 1..4 (push = r_dst / g, pop = r_src / g balances every
edge), one in four edges peeks two items more than it pops. For each graph: the time to tabulate
``SDEP_{Y<-X}`` for the last actor ``X`` (``|I ^ X| + 2 |S ^ X|`` pulled firings), the mean time of a
closed-form query at random ``n`` up to 10^9, and the pull schedule's time for one query at
``n = 1,000`` (it grows linearly with ``n``; the closed form does not). Every closed-form value at
``n <= 1,000`` is checked against the pull schedule. Prints a table, writes bench/out/sdep.png and (with
the default sizes) docs/sdep.json and its table in docs/results.md (bench/results.py).

    python bench/sdep.py [--sizes 10 100 1000] [--queries 2000] [--tables]
"""

from __future__ import annotations

import argparse
import itertools
import math
import random
import time
from pathlib import Path

from sfdf.gen.model import Edge, Network, Node
from sfdf.gen.sdf.rates import sdep
from sfdf.gen.sdf.sdep import SDEPTable

from results import publish, table, tables_flag, tables_only

OUT = Path(__file__).parent / "out"
SIZES = [10, 100, 300, 1000]


def sdf_graph(kind: str, actors: int, seed: int) -> Network:
    """A consistent SDF ``chain`` or ``layered`` DAG (layers of up to four actors, each fed by one or two
    actors of the layer above); the last actor is downstream of every other."""
    rng = random.Random(seed)
    names = [f"a{k}" for k in range(actors)]
    r = [rng.randint(1, 4) for _ in names]
    if kind == "chain":
        pairs = [(k - 1, k) for k in range(1, actors)]
    else:
        layers, k = [], 0
        while k < actors:
            width = min(rng.randint(1, 4), actors - k)
            layers.append(list(range(k, k + width)))
            k += width
        pairs = []
        for upper, lower in itertools.pairwise(layers):
            for b in lower:
                for a in rng.sample(upper, min(len(upper), rng.randint(1, 2))):
                    pairs.append((a, b))
            for a in upper:  # every actor feeds the layer below
                if not any(p[0] == a for p in pairs):
                    pairs.append((a, rng.choice(lower)))
        pairs += [(a, layers[-1][-1]) for a in layers[-1][:-1]]  # the last actor is downstream of everything
    edges = []
    for a, b in pairs:
        g = math.gcd(r[a], r[b])
        push, pop = r[b] // g, r[a] // g
        peek = pop + 2 if rng.random() < 0.25 else None
        edges.append(Edge(name=f"e{a}_{b}", src=names[a], dst=names[b], capacity=1 << 16, push=push, pop=pop,
                          peek=peek))
    return Network(name=f"{kind}{actors}", nodes=tuple(Node(x) for x in names), edges=tuple(edges))


def measure(kind: str, actors: int, queries: int, seed: int = 1) -> dict:
    net = sdf_graph(kind, actors, seed)
    first, last = net.nodes[0].name, net.nodes[-1].name
    t0 = time.perf_counter()
    table = SDEPTable(net, last)
    build = time.perf_counter() - t0
    rng = random.Random(seed)
    ns = [rng.randint(1, 10**9) for _ in range(queries)]
    t0 = time.perf_counter()
    for n in ns:
        table(first, n)
    query = (time.perf_counter() - t0) / queries
    t0 = time.perf_counter()
    pulled = sdep(net, first, last, 1000)
    pull = time.perf_counter() - t0
    assert pulled == table.series(first, 1000), f"{kind}{actors}: closed form and pull schedule disagree"
    return {"kind": kind, "actors": actors, "edges": len(net.edges), "init": table.init, "period": table.period,
            "table_rows": len(table.rows), "build_s": build, "query_us": query * 1e6, "pull_1000_s": pull,
            "sdep_1000": pulled[-1]}


def _ms(seconds: float) -> str:
    return f"{seconds * 1e3:,.1f} ms" if seconds < 1 else f"{seconds:.2f} s"


def sections(data: dict) -> dict[str, str]:
    """docs/results.md's SDEP table (bench/results.py)."""
    rows = [[r["kind"], f"{r['actors']:,}", f"{r['edges']:,}", f"{r['table_rows'] - 1:,}", _ms(r["build_s"]),
             f"{r['query_us']:.2f} us", _ms(r["pull_1000_s"])] for r in data["rows"]]
    return {"sdep table": f"{data['queries']:,} closed-form queries per graph at random n up to 10^9:\n\n" + table(
        ["graph", "actors", "edges", "table (\\|I^X\\| + 2\\|S^X\\|)", "table build", "closed-form query",
         "pull schedule, one query at n = 1,000"], rows, "lrrrrrr")}


def main(argv=None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--sizes", type=int, nargs="+", default=SIZES)
    parser.add_argument("--queries", type=int, default=2000)
    tables_flag(parser)
    args = parser.parse_args(argv)
    if tables_only(args, "sdep", sections):
        return
    rows = [measure(kind, n, args.queries) for kind in ("chain", "layered") for n in args.sizes]
    data = {"queries": args.queries, "rows": rows}
    print(sections(data)["sdep table"])
    OUT.mkdir(exist_ok=True)
    plot(rows)
    if args.sizes == SIZES:
        publish("sdep", data, sections, ["sdep.png"])


def plot(rows: list[dict]) -> None:
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    fig, ax = plt.subplots(figsize=(6.4, 4))
    for kind, marker in (("chain", "o"), ("layered", "s")):
        mine = [r for r in rows if r["kind"] == kind]
        x = [r["actors"] for r in mine]
        ax.loglog(x, [r["query_us"] * 1e-6 for r in mine], marker=marker, label=f"{kind}: closed form, one query")
        ax.loglog(x, [r["pull_1000_s"] for r in mine], marker=marker, linestyle="--",
                  label=f"{kind}: pull schedule, n = 1,000")
        ax.loglog(x, [r["build_s"] for r in mine], marker=marker, linestyle=":", label=f"{kind}: table build")
    ax.set_xlabel("actors")
    ax.set_ylabel("seconds")
    ax.set_title("SDEP: closed form (004 Eq. 3, 4) vs pull schedule")
    ax.legend(fontsize=7)
    fig.tight_layout()
    fig.savefig(OUT / "sdep.png", dpi=120)


if __name__ == "__main__":
    main()

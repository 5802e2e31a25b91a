"""Space-time memory (001): the cost of the GC conditions, and memory under sparse production.

(a) minKV and minO against threads, i_conns and items: minKV costs O(threads + i_conns), since keep times
    are kept incrementally; minO adds the items between minK and minV times the i_conns of their channel
    (001 Sec. 6). Each row times one computation (best of 5) on a system of ``threads`` threads, each with
    one i_conn on each of ``channels`` channels, and ``items`` present items per channel between minK and
    minV.
(c) Memory over 10^6 timestamps with sparse production: a producer puts one timestamp in ``gap``, a reader
    gets and consumes each (never skipping with consume_until, so keep times stall at the first absent
    timestamp and only minO sees past it), and the daemon collects at minO every 1,000 puts; the items
    held (just before each collection) and the memory traced stay flat, against a collector using minKV
    alone, which holds every item (run on a tenth of the timestamps).

(b) 001 Sec. 8's ping-pong over two address spaces, each an OS process (:mod:`sfdf.sw.stm.process`): a
    driver and an echo thread, channels of capacity 100, the three placements of
    :data:`sfdf.sw.stm.pingpong.PLACEMENTS`, 128- and 4096-byte items; the driver's round-trip time with the
    distributed collector (daemons every 5 ms) against reference counting (each item reclaimed when
    consumed), where 001 Fig. 6 reports 95-104%.

Prints tables, writes bench/out/stm.png and (with the defaults) docs/stm.json and its tables in
docs/results.md (bench/results.py).

    python bench/stm.py [--timestamps 1000000] [--rounds 2000] [--tables]
"""

from __future__ import annotations

import argparse
import time
import tracemalloc
from pathlib import Path

from sfdf.sw.stm.gc import collect, min_kv, min_o
from sfdf.sw.stm.model import SpaceTimeMemory
from sfdf.sw.stm.pingpong import PLACEMENTS, programs
from sfdf.sw.stm.process import run as run_spaces

from results import publish, table, tables_flag, tables_only

OUT = Path(__file__).parent / "out"
TIMESTAMPS, ROUNDS = 1_000_000, 2000


def system(threads: int, channels: int, items: int) -> SpaceTimeMemory:
    """001 Sec. 6's worst case for minO: timestamp 0 absent (every keep time stays at 0), items 1..N
    consumed on every i_conn except the last item on the last one, every VT past them."""
    stm = SpaceTimeMemory()
    stm.thread("producer", 0)
    for c in range(channels):
        stm.channel(f"c{c}")
        stm.oconn("producer", f"c{c}", f"o{c}")
        for ts in range(1, items + 1):
            stm.put(f"o{c}", ts)
    for t in range(threads):
        stm.thread(f"t{t}", 0)
        for c in range(channels):
            conn = f"i{t}_{c}"
            stm.attach(f"t{t}", f"c{c}", conn)
            for ts in range(1, items + 1):
                if (t, c, ts) != (threads - 1, channels - 1, items):
                    stm.get(conn, ts)
                    stm.consume(conn, ts)
        stm.set_vt(f"t{t}", items + 10)
    stm.set_vt("producer", items + 10)
    return stm


def best(fn, repeat=5) -> float:
    times = []
    for _ in range(repeat):
        t0 = time.perf_counter()
        fn()
        times.append(time.perf_counter() - t0)
    return min(times)


def costs() -> list[dict]:
    rows = []
    for threads, channels, items in [(10, 2, 10), (100, 2, 10), (1000, 2, 10), (100, 2, 100), (100, 2, 1000),
                                     (100, 20, 100)]:
        stm = system(threads, channels, items)
        rows.append({"threads": threads, "channels": channels, "i_conns": threads * channels, "items": items,
                     "min_kv_us": best(lambda s=stm: min_kv(s)) * 1e6, "min_o_us": best(lambda s=stm: min_o(s)) * 1e6})
    return rows


def sparse(timestamps: int, gap: int = 3, every: int = 1000, condition=min_o) -> dict:
    """A producer putting one timestamp in ``gap``; a reader consuming each; collection every ``every``."""
    stm = SpaceTimeMemory(audit=False)
    stm.channel("c")
    stm.thread("p", 0)
    stm.oconn("p", "c", "o")
    stm.thread("r", 0)
    stm.attach("r", "c", "i")
    held, peak = [], 0
    tracemalloc.start()
    for ts in range(0, timestamps, gap):
        stm.put("o", ts)
        stm.set_vt("p", ts + 1)
        stm.get("i", ts)
        stm.consume("i", ts)
        stm.set_vt("r", ts + 1)
        if ts // gap % every == 0:
            held.append((ts, len(stm.channels["c"].items)))  # just before the daemon runs
            peak = max(peak, tracemalloc.get_traced_memory()[0])
            collect(stm, condition(stm))
    tracemalloc.stop()
    return {"condition": condition.__name__, "timestamps": timestamps, "gap": gap, "held": held,
            "held_max": max(n for _, n in held), "peak_mib": peak / 2**20}


def pingpong(rounds: int) -> list[dict]:
    rows = []
    for placement in PLACEMENTS:
        for size in (128, 4096):
            row = {"placement": placement, "bytes": size}
            for mode in ("gc", "refcount"):
                directory, progs = programs(placement, rounds, size)
                times, collected = run_spaces(2, directory, progs, capacities={"d": 100, "e": 100},
                                       refcount=mode == "refcount", timeout=600)
                row[f"{mode}_rtt_us"] = times["D"] / rounds * 1e6
                row[f"{mode}_collected"] = sum(collected.values())
            row["ratio"] = row["gc_rtt_us"] / row["refcount_rtt_us"]
            rows.append(row)
    return rows


def _us(us: float) -> str:
    return f"{us:,.0f} us" if us < 1000 else f"{us / 1000:.1f} ms"


def sections(data: dict) -> dict[str, str]:
    """docs/results.md's space-time memory tables (bench/results.py)."""
    pings = table(["placement", "item bytes", "round trip, distributed GC", "reference counting", "ratio"],
                  [[r["placement"], f"{r['bytes']:,}", _us(r["gc_rtt_us"]), _us(r["refcount_rtt_us"]),
                    f"{100 * r['ratio']:.0f}%"] for r in data["pingpong"]], "lrrrr")
    costs = table(["threads", "channels", "i_conns", "items between minK and minV", "minKV", "minO"],
                  [[f"{r['threads']:,}", r["channels"], f"{r['i_conns']:,}", f"{r['items']:,}", _us(r["min_kv_us"]),
                    _us(r["min_o_us"])] for r in data["costs"]], "rrrrrr")
    sparse_rows = table(["collected at", "timestamps", "one in", "most items held", "peak memory traced"],
                        [[f"`{r['condition']}`", f"{r['timestamps']:,}", r["gap"], f"{r['held_max']:,}",
                          f"{r['peak_mib']:.1f} MiB"] for r in data["sparse"]], "lrrrr")
    return {"stm pingpong": f"{data['rounds']:,} rounds, channels of 100 items, two OS processes:\n\n{pings}",
            "stm costs": costs, "stm sparse": sparse_rows}


def main(argv=None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--timestamps", type=int, default=TIMESTAMPS)
    parser.add_argument("--rounds", type=int, default=ROUNDS)
    tables_flag(parser)
    args = parser.parse_args(argv)
    if tables_only(args, "stm", sections):
        return
    rows = costs()
    pings = pingpong(args.rounds)
    runs = [sparse(args.timestamps, condition=min_o), sparse(args.timestamps // 10, condition=min_kv)]
    data = {"rounds": args.rounds, "costs": rows, "pingpong": pings,
            "sparse": [{k: v for k, v in run.items() if k != "held"} for run in runs]}
    print("\n\n".join(sections(data).values()))
    OUT.mkdir(exist_ok=True)
    plot(rows, runs)
    if (args.timestamps, args.rounds) == (TIMESTAMPS, ROUNDS):
        publish("stm", data, sections, ["stm.png"])


def plot(rows, runs) -> None:
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    fig, (left, right) = plt.subplots(1, 2, figsize=(10, 4))
    by_threads = [r for r in rows if r["channels"] == 2 and r["items"] == 10]
    left.loglog([r["i_conns"] for r in by_threads], [r["min_kv_us"] for r in by_threads], "o-", label="minKV")
    left.loglog([r["i_conns"] for r in by_threads], [r["min_o_us"] for r in by_threads], "s-", label="minO")
    left.set_xlabel("i_conns (threads x 2 channels, 10 items each)")
    left.set_ylabel("microseconds")
    left.legend()
    left.set_title("GC condition cost (001 Sec. 6)")
    for run in runs:
        right.plot([ts for ts, _ in run["held"]], [n for _, n in run["held"]], label=f"collected at {run['condition']}")
    right.set_xlabel("timestamp")
    right.set_ylabel("items held")
    right.set_title("sparse production (one timestamp in 3)")
    right.legend()
    fig.tight_layout()
    fig.savefig(OUT / "stm.png", dpi=120)


if __name__ == "__main__":
    main()

"""Throughput of the generated RTL on Verilator (cocotb): tokens per cycle against the credit threshold T,
control messages per data token, per-channel rates of the variance topology without filtering, and the
simulated cycles per second of the cocotb bench.

Target (issue 3): >= 0.98 tokens per cycle per channel with no filtering and auto T. Writes
bench/out/throughput.json and bench/out/throughput.png.

    python bench/throughput.py [--words 2000] [--capacity 16]
"""

from __future__ import annotations

import argparse
import json
import re
from pathlib import Path

from cosim.network import run_tests, watchdog_cycles
from gen.analysis import check
from gen.generate import generate
from gen.refmodel import random_words
from gen.spec import parse_spec

OUT = Path(__file__).parent / "out"
ROOT = Path(__file__).resolve().parent.parent
TESTS = ROOT / "cosim" / "throughput_tests.py"
PAIR = """[network]
name = "pair_t{t}"
[[node]]
name = "u"
[[node]]
name = "x"
[[edge]]
from = "u"
to = "x"
capacity = {q}
threshold = {t}
"""


def measure(network, words, build_dir):
    """Run ``network`` with one frame of ``words`` words per source; return the throughput figures."""
    report = check(network)
    resolved = report.network
    folder = build_dir / resolved.name
    v_path, j_path = generate(network, folder, report=report)
    config = {
        "manifest": json.loads(j_path.read_text()), "seed": 1, "pause": 0.0,
        "inputs": {s: [random_words(1, s, words)] for s in resolved.sources},
        "watchdog_cycles": watchdog_cycles(resolved, 0.0), "max_cycles": 20 * words,
        "result_path": str((folder / "throughput.json").resolve()),
    }
    results = run_tests(resolved.name, v_path, config, folder / "throughput_config.json", TESTS, build_dir,
                        timeout_s=900)
    assert results.passed, results.summary()
    raw = json.loads((folder / "throughput.json").read_text())
    rates = {}
    for sink, cycles in raw["sink_beat_cycles"].items():
        rates[sink] = (len(cycles) - 1) / (cycles[-1] - cycles[0]) if len(cycles) > 1 else None
    return {
        "network": resolved.name, "thresholds": {e.name: e.threshold for e in resolved.edges},
        "sink_tokens_per_cycle": rates, "cycles": raw["cycles"], "cycles_per_s": raw["cycles_per_s"],
        "control_per_data_token": {e: raw["control_pushes"][e] / max(1, raw["data_tokens"][e])
                                   for e in raw["control_pushes"]},
        "channel_tokens_per_cycle": {e: (n - 1) / max(1, raw["data_push_window"][e][1] - raw["data_push_window"][e][0])
                                     for e, n in raw["data_tokens"].items() if n > 1},
    }


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--words", type=int, default=2000)
    ap.add_argument("--capacity", type=int, default=16)
    ap.add_argument("--build-dir", default=str(ROOT / "build" / "bench"))
    args = ap.parse_args(argv)
    OUT.mkdir(exist_ok=True)
    build_dir = Path(args.build_dir)
    q = args.capacity
    curve = []
    for t in sorted({0, 1, 2, 4, q // 2, q - 4, q - 3, q - 2, q - 1}):
        row = measure(parse_spec(PAIR.format(t=t, q=q), f"pair_t{t}.toml"), args.words, build_dir)
        rate = row["sink_tokens_per_cycle"]["x"]
        ctrl = row["control_per_data_token"]["u_x"]
        curve.append({"threshold": t, "tokens_per_cycle": rate, "control_per_token": ctrl,
                      "cycles_per_s": row["cycles_per_s"]})
        auto = " (auto)" if t == max(0, q - 3) else ""
        print(f"|q| = {q}, T = {t:2d}{auto}: {rate:.3f} tokens/cycle, {ctrl:.3f} control messages per token, "
              f"cocotb {row['cycles_per_s']:.0f} cycles/s")
    text = re.sub(r'"variance_[a-z_]*"', '"random_filter"', (ROOT / "examples" / "variance.toml").read_text())
    variance = measure(parse_spec(text, "variance_nofilter.toml"), args.words, build_dir)
    print("variance topology, no filtering, auto T: sink "
          f"{variance['sink_tokens_per_cycle']['x']:.3f} tokens/cycle; per channel "
          + ", ".join(f"{e} {r:.3f}" for e, r in variance["channel_tokens_per_cycle"].items())
          + f" (first to last token); cocotb {variance['cycles_per_s']:.0f} cycles/s")
    (OUT / "throughput.json").write_text(json.dumps({"threshold_curve": curve, "variance": variance}, indent=2))
    plot(curve, q)
    print(f"wrote {OUT / 'throughput.json'} and {OUT / 'throughput.png'}")


def plot(curve, q):
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    fig, ax = plt.subplots(figsize=(6, 4))
    ts = [r["threshold"] for r in curve]
    ax.plot(ts, [r["tokens_per_cycle"] for r in curve], "o-", label="tokens per cycle")
    ax.plot(ts, [r["control_per_token"] for r in curve], "s--", label="control messages per data token")
    ax.axhline(0.98, color="grey", lw=0.8, ls=":", label="target 0.98")
    ax.axvline(q - 3, color="C2", lw=0.8, ls="-.", label=f"auto T = |q| - 3 = {q - 3}")
    ax.set_xlabel("credit threshold T")
    ax.set_title(f"One credit-mode edge, |q| = {q}, no filtering (Verilator)")
    ax.legend(fontsize=8)
    fig.tight_layout()
    fig.savefig(OUT / "throughput.png", dpi=120)


if __name__ == "__main__":
    main()

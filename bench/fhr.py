"""004's frequency-hopping radio both ways on the same input: teleport messages (examples/fhr.toml) against
the manual feedback loop (examples/fhr_feedback.toml), in sfdf's hardware.

004 (Thies et al., "Teleport Messaging", Sec. "Case Study") measured the teleport version 49% faster with
35% fewer items moved than the feedback loop, on a cluster of workstations. Here, per version:

* ``frames_per_cycle``: FFT frames (iterations: 512 antenna words, 256 sink values) per cycle in steady
  state on the fast simulated device (:class:`sfdf.sw.device.sdf.SDFDevice`, every source always offered,
  every sink always ready), from the cycles of the second half of the frames' first values; every value
  checked against the SDF model with the same capacities first (:func:`sfdf.gen.sdf.model.run_sdf`); beside
  it ``stated``, the bound ``sfdf check`` states for the generated hardware
  (:func:`sfdf.gen.sdf.pipeline.hardware_throughput`);
* ``items_per_frame``: the items pushed over every channel per frame (the model's run);
* ``messages``: the teleport messages handled in the run;
* ``fmax_mhz`` (median of ``--seeds`` placement seeds), ``luts``, ``ffs``, ``brams``: ``sfdf build`` for
  ECP5-85F (ULX3S), placed for the board's probe clock so nextpnr reports the design's own Fmax.

The nodes run the radio's kernels (docs/semantics.md, "SDF networks"; a stand-in FFT with the real rates)
on the antenna's hopping input, the detectors reporting each hop once. Prints a table; with the default firings and seeds writes docs/fhr.json,
docs/img/fhr.png, the table and headline in docs/results.md and the headline in README.md (bench/results.py).

    .venv/bin/python bench/fhr.py [--frames 48] [--seeds 1 2 3] [--no-fpga] [--tables]
"""

from __future__ import annotations

import argparse
import statistics
from collections import Counter
from dataclasses import replace
from pathlib import Path

from sfdf.boards import BOARDS
from sfdf.boards.build import build, place_again
from sfdf.gen.sdf.kernels import stimulus
from sfdf.gen.sdf.model import run_sdf
from sfdf.gen.sdf.pipeline import full_rate_capacities, hardware_throughput
from sfdf.gen.sdf.rates import edge_rates, phases, repetitions
from sfdf.gen.spec import load_spec
from sfdf.hdl.generate import generate
from sfdf.sw.device import open_device

from results import OUT, load, publish, table, tables_flag, tables_only, write_sections

ROOT = Path(__file__).resolve().parents[1]
README = ROOT / "README.md"
VERSIONS = {"teleport": "fhr.toml", "feedback": "fhr_feedback.toml"}
BOARD, SEEDS, FRAMES = "ulx3s-85f", [1, 2, 3], 48
BUILD = ROOT / "build" / "bench" / "fhr"
#: 004's figures for the teleport version against the feedback loop (cluster of workstations).
PAPER = {"throughput": 0.49, "items": -0.35}


def items_pushed(network, firings: list[str]) -> int:
    """The items every firing in ``firings`` pushes, over all channels."""
    count = phases(network)
    pushes = {n: [0] * count[n] for n in count}
    for e in network.edges:
        for k, push in enumerate(edge_rates(e, count)[0]):
            pushes[e.src][k] += push
    seen, total = Counter(), 0
    for node in firings:
        total += pushes[node][seen[node] % count[node]]
        seen[node] += 1
    return total


def measure(name: str, frames: int, sized: bool = False) -> dict:
    """One version on the fast device against the model: frames per cycle, items per frame, messages; with
    ``sized``, at the capacities ``sfdf check --sized`` writes (the rate the nodes allow)."""
    spec = ROOT / "examples" / VERSIONS[name]
    network = load_spec(spec)
    if sized:
        full = full_rate_capacities(network).capacities
        network = replace(network, edges=tuple(replace(e, capacity=full[e.name]) for e in network.edges))
        _, spec = generate(network, BUILD / f"{name}-sized")
    reps = repetitions(network)
    (source,), (sink,) = network.sources, network.sinks
    firings = frames * reps[source]
    words = stimulus(network, firings)[source]
    model = run_sdf(network, source_firings=firings, bounded=True, words={source: words})
    with open_device(spec, build_dir=ROOT / "build" / "fastsim") as device:
        device.fire(words)
        values = device.run()
        cycles = device.cycles[sink]
    if values != model.outputs or len(cycles) < 4 * reps[sink]:
        raise SystemExit(f"{name}: the device gave {len(cycles)} values, not the model's {len(model.outputs[sink])}")
    starts = cycles[::reps[sink]]  # each frame's first value
    half = len(starts) // 2
    steady = (len(starts) - 1 - half) / (starts[-1] - starts[half])
    stated = hardware_throughput(network).iterations_per_cycle
    return {"version": name, "spec": f"examples/{VERSIONS[name]}", "sized": sized, "source_firings": firings,
            "capacity": sum(e.capacity for e in network.edges),
            "frames": len(cycles) / reps[sink], "frames_per_cycle": steady, "stated": float(stated),
            "stated_fraction": str(stated), "items_per_frame": items_pushed(network, model.firings) * reps[sink]
            / len(model.outputs[sink]), "messages": len(model.deliveries)}


def fpga(name: str, seeds: list[int]) -> dict:
    """``sfdf build`` of one version for ECP5-85F, placed with each seed: the median seed's figures."""
    board = BOARDS[BOARD]
    network = load_spec(ROOT / "examples" / VERSIONS[name])
    first = build(network, board, BUILD / name, clock_hz=board.fmax_probe_hz, seed=seeds[0])
    runs = [first] + [place_again(first, board, s) for s in seeds[1:]]
    fmax = [r["fmax_mhz"] for r in runs]
    return {"board": BOARD, "seeds": seeds, "fmax_seeds_mhz": fmax, "fmax_mhz": statistics.median(fmax),
            "luts": first["luts"], "ffs": first["ffs"], "brams": first["brams"]}


def _change(ours: float, theirs: float) -> str:
    return f"{(ours / theirs - 1) * 100:+.1f}%"


def sections(data: dict) -> dict[str, str]:
    """docs/results.md's table and headline (bench/results.py); the headline is README's too."""
    rows, (teleport, feedback) = [], (data["rows"]["teleport"], data["rows"]["feedback"])
    for row in (teleport, feedback, *data.get("sized", {}).values()):
        hw = row.get("fpga")
        rows.append([row["version"] + (" (sized)" if row["sized"] else ""), row["capacity"],
                     f"{1 / row['frames_per_cycle']:.1f}", f"{1 / row['stated']:.1f}",
                     f"{row['items_per_frame']:.0f}", row["messages"],
                     *([f"{hw['fmax_mhz']:.1f} ({' / '.join(f'{f:.1f}' for f in hw['fmax_seeds_mhz'])})",
                        hw["luts"], hw["ffs"], hw["brams"]] if hw else ["-"] * 4)])
    text = table(["version", "capacity (items)", "cycles per frame", "stated by sfdf check", "items per frame",
                  "messages handled", "Fmax MHz (seeds)", "LUT4", "FF", "DP16KD"], rows, "lrrrrrrrrr")
    line = (f"004's frequency-hopping radio in hardware, teleport messages against the feedback loop on the same "
            f"hopping input (the same outputs): frames per cycle "
            f"{_change(teleport['frames_per_cycle'], feedback['frames_per_cycle'])}")
    if data.get("sized"):
        line += (" at the spec's capacities and "
                 f"{_change(data['sized']['teleport']['frames_per_cycle'], data['sized']['feedback']['frames_per_cycle'])}"
                 " at the capacities for full rate")
    line += f", items per frame {_change(teleport['items_per_frame'], feedback['items_per_frame'])}"
    if teleport.get("fpga") and feedback.get("fpga"):
        tf, ff = teleport["fpga"], feedback["fpga"]
        line += (f", on ECP5-85F {tf['fmax_mhz']:.1f} MHz against {ff['fmax_mhz']:.1f} (median of 3 seeds), "
                 f"{tf['luts']:,} LUT4 against {ff['luts']:,}")
    line += (f"; 004 measured {PAPER['throughput'] * 100:+.0f}% throughput and {PAPER['items'] * 100:+.0f}% items on a "
             "cluster of workstations.")
    return {"fhr table": text, "fhr headline": line}


def plot(data: dict, path: Path) -> None:
    import matplotlib
    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    rows = [data["rows"][v] for v in VERSIONS]
    figures = [("cycles per frame", [1 / r["frames_per_cycle"] for r in rows]),
               ("items per frame", [r["items_per_frame"] for r in rows])]
    if all(r.get("fpga") for r in rows):
        figures += [("Fmax MHz (median of 3 seeds)", [r["fpga"]["fmax_mhz"] for r in rows]),
                    ("LUT4", [r["fpga"]["luts"] for r in rows])]
    fig, axes = plt.subplots(1, len(figures), figsize=(3.2 * len(figures), 3))
    for ax, (title, values) in zip(axes, figures, strict=True):
        ax.bar(list(VERSIONS), values, color=["tab:blue", "tab:gray"])
        ax.set_title(title, fontsize=9)
    fig.suptitle("004's frequency-hopping radio: teleport messages against the feedback loop", fontsize=10)
    fig.tight_layout()
    fig.savefig(path, dpi=110)


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--frames", type=int, default=FRAMES, help="FFT frames (iterations) per version")
    parser.add_argument("--seeds", type=int, nargs="+", default=SEEDS)
    parser.add_argument("--no-fpga", action="store_true", help="skip the ECP5 builds")
    tables_flag(parser)
    args = parser.parse_args(argv)
    if tables_only(args, "fhr", sections):
        write_sections("fhr", {"fhr headline": sections(load("fhr"))["fhr headline"]}, README)
        return
    rows = {}
    for name in VERSIONS:
        rows[name] = measure(name, args.frames)
        print(f"{name}: {1 / rows[name]['frames_per_cycle']:.1f} cycles per frame (stated "
              f"{rows[name]['stated_fraction']} frames per cycle), {rows[name]['items_per_frame']:.0f} items per frame",
              flush=True)
        if not args.no_fpga:
            rows[name]["fpga"] = fpga(name, args.seeds)
            print(f"{name}: {rows[name]['fpga']}", flush=True)
    sized = {name: measure(name, args.frames, sized=True) for name in VERSIONS}
    data = {"frames": args.frames, "rows": rows, "sized": sized}
    print("\n\n".join(sections(data).values()))
    OUT.mkdir(parents=True, exist_ok=True)
    plot(data, OUT / "fhr.png")
    if (args.frames, args.seeds, args.no_fpga) == (FRAMES, SEEDS, False):
        publish("fhr", data, sections, images=["fhr.png"])
        write_sections("fhr", {"fhr headline": sections(data)["fhr headline"]}, README)


if __name__ == "__main__":
    main()

"""Host-side speed of the variance network (000 Fig. 1): simulated cycles per second of the fast device
(sw/sim/fastsim.py: a compiled Verilator harness, no Python per cycle) against the cocotb bench (Python
every cycle), one thread each. Figures only, never timed assertions.

Also the Spark job's frames/s on ``local[1]`` and ``local[2]`` (target: at least 1.7x), the end-to-end
time of ``make demo``, and the Spark job on ``local[2]`` through simulated boards (``sfdf board-sim --pty``:
the board core on Verilator behind a pty, its UART simulated bit for bit at 5 cycles per bit) against the
fast simulated device: one board, two boards, one synthesized netlist.

One function per measurement, each returning a dict with ``cycles`` and ``cycles_per_s`` (more keys as
it likes); :data:`MEASUREMENTS` lists them. Each run merges its measurements (with the load average at
their start) into docs/host.json and writes its table in docs/results.md (bench/results.py).

    python bench/host.py [--pixels 4000000] [--computations 3000] [--repeat 3] [--spark-frames 20000] [--tables]
"""

from __future__ import annotations

import argparse
import json
import os
import re
import time
import xml.etree.ElementTree as ET
from pathlib import Path

import numpy as np

from sfdf.sw.datasets import sparse_frames

from results import data_path, load, publish, table, tables_flag, tables_only

ROOT = Path(__file__).resolve().parent.parent
SPEC = ROOT / "examples" / "variance.toml"


def frames_of(pixels: int, seed: int = 1, zeros: float = 0.5, longest: int = 1024) -> list[np.ndarray]:
    """About ``pixels`` 16-bit pixels in frames of 1..``longest`` (:func:`sfdf.sw.datasets.sparse_frames`),
    a ``zeros`` fraction of them zero, as the arrays the harness and the device take."""
    count = max(1, round(2 * pixels / (longest + 1)))  # the mean frame holds (longest + 1) / 2 pixels
    return [np.asarray(f, dtype=np.uint16) for f in sparse_frames(count, zeros, (1, longest), seed)]


def generated(build_dir: Path) -> Path:
    """The variance network's manifest (with its Verilog beside it) under ``build_dir``."""
    from sfdf.gen.spec import load_spec
    from sfdf.hdl.generate import generate

    return generate(load_spec(SPEC), build_dir / "variance")[1]


def measure_fast_harness(manifest: Path, frames: list[np.ndarray], build_dir: Path, repeat: int) -> dict:
    """The harness alone, in this process: every frame queued, then one ``run`` until the last result
    (the wall time of that call only); best of ``repeat`` fresh devices."""
    from sfdf.sw.sim.build import build
    from sfdf.sw.sim.fastsim import FastSim

    facts = json.loads(manifest.read_text())
    library = build(manifest.with_name(f"{facts['name']}.v"), facts, build_dir)
    words = np.concatenate(frames).astype("<u2").tobytes()
    flags = np.zeros(sum(f.size for f in frames), dtype=np.uint8)
    flags[np.cumsum([f.size for f in frames]) - 1] = 1
    best = None
    for _ in range(repeat):
        with FastSim(library, facts) as sim:
            sim.push_bytes("u", words, flags.tobytes())
            start = time.perf_counter()
            run = sim.run(100 * len(flags), until_messages=len(frames))
            wall = time.perf_counter() - start
            assert run.reason == "target", run
            assert sim.counters()["x"]["beats"] == 2 * len(frames)
        if best is None or run.cycles / wall > best["cycles_per_s"]:
            best = {"cycles": run.cycles, "wall_s": wall, "cycles_per_s": run.cycles / wall}
    return {**best, "frames": len(frames), "pixels": len(flags), "repeat": repeat}


def measure_fast_device(manifest: Path, frames: list[np.ndarray], build_dir: Path, window: int = 512) -> dict:
    """The device API end to end: a child process, sw.codec packets both ways, results checked
    against numpy (outside the timed part), ``window`` frames in flight."""
    from sfdf.sw.device import open_device

    with open_device(manifest, build_dir=build_dir) as device:
        start = time.perf_counter()
        results = list(device.stream(enumerate(frames), window=window))
        wall = time.perf_counter() - start
        cycles = device.cycles
    for result, frame in zip(results, frames, strict=True):
        pixels = frame.astype(np.uint64)
        assert result.fields == {"n": pixels.size, "sum": int(pixels.sum()), "sum_sq": int((pixels**2).sum())}
    pixels = sum(f.size for f in frames)
    return {"cycles": cycles, "wall_s": wall, "cycles_per_s": cycles / wall, "frames": len(frames),
            "pixels": pixels, "pixels_per_s": pixels / wall, "frames_per_s": len(frames) / wall, "window": window}


def measure_cocotb(computations: int, build_dir: Path, seed: int = 1) -> dict:
    """``cosim.network.run_network`` on the same network: its cycles (the bench's own count) over the
    wall time of its one cocotb test (cocotb's results XML), reference-model checks included."""
    from sfdf.cosim.network import run_network
    from sfdf.gen.spec import load_spec

    run = run_network(load_spec(SPEC), computations=computations, seed=seed, pause=0.0, max_frame=64,
                      zeros=0.5, build_dir=build_dir)
    assert run.passed, run.results.summary()
    (case,) = ET.parse(run.results.results_xml).getroot().iter("testcase")
    wall = float(case.get("time"))
    found = re.search(r"cosim: (\d+) cycles", run.results.sim_log.read_text(errors="replace"))
    assert found, f"no cycle count in {run.results.sim_log}"
    cycles = int(found.group(1))
    return {"cycles": cycles, "wall_s": wall, "cycles_per_s": cycles / wall, "computations": computations}


def measure_spark(master: str, frames: int, build_dir: Path, repeat: int = 2) -> dict:
    """``sfdf spark`` on ``frames`` VERITAS-like 32x32 frames with ``master``: frames/s of the job (read,
    every frame through a device and checked, Parquet written), best of ``repeat`` after a warm-up run
    (the first job of a session also warms the JVM); session start and the harness build excluded."""
    from sfdf.sw.datasets import veritas, write_frames
    from sfdf.sw.spark.config import spark_session
    from sfdf.sw.spark.runs import run_job

    data = build_dir / f"veritas{frames}"
    if not data.is_dir():
        write_frames(veritas(frames, seed=7), data, rows_per_file=250)
    warm = build_dir / "warm"
    if not warm.is_dir():
        write_frames(veritas(200, seed=8), warm)
    spark = spark_session(master)
    try:
        run_job(SPEC, warm, build_dir / "out-warm", spark=spark, master=master)
        runs = []
        for _ in range(repeat):
            busy, start = _busy_seconds(), time.perf_counter()
            runs.append(run_job(SPEC, data, build_dir / "out", spark=spark, master=master))
            # CPUs busy over the whole call (the summary and plot too), machine-wide
            runs[-1]["cpus_busy"] = (_busy_seconds() - busy) / (time.perf_counter() - start)
    finally:
        spark.stop()
    best = min(runs, key=lambda r: r["wall_s"])
    assert best["checked"] == frames and best["mismatches"] == 0, best
    cycles = best["cycles_per_frame_mean"] * frames
    return {"cycles": int(cycles), "wall_s": best["wall_s"], "cycles_per_s": cycles / best["wall_s"],
            "frames": frames, "frames_per_s": frames / best["wall_s"], "master": master,
            "cpus_busy": best["cpus_busy"]}


def _busy_seconds() -> float:
    """CPU seconds the whole machine spent busy so far (/proc/stat: all but idle and iowait)."""
    fields = [int(x) for x in Path("/proc/stat").read_text().split("\n", 1)[0].split()[1:]]
    return (sum(fields) - fields[3] - fields[4]) / os.sysconf("SC_CLK_TCK")


def measure_boards(frames: int, build_dir: Path) -> dict:
    """``sfdf spark --device ...`` on ``local[2]`` over ``frames`` UCI digits (8x8; ids repeat the set):
    ``sim``, one RTL board, two RTL boards, one netlist board (each a ``sfdf board-sim --pty`` process, the
    variance network built ``--no-build --baud 5000000``: 5 cycles per bit); frames/s of the job, best of
    two after a warm-up, every frame checked by the job."""
    import subprocess
    import sys

    from sfdf.sw.datasets import digits, write_frames
    from sfdf.sw.sim.boardsim import board_process
    from sfdf.sw.spark.config import spark_session
    from sfdf.sw.spark.runs import run_job

    board = build_dir / "board"
    subprocess.run([str(Path(sys.executable).with_name("sfdf")), "build", str(SPEC), "--board", "ulx3s-85f",
                    "--no-build", "--baud", "5000000", "-o", str(board)], check=True, capture_output=True)
    base = digits()
    data = build_dir / f"digits{frames}"
    if not data.is_dir():
        write_frames([(k, base[k % len(base)][1]) for k in range(frames)], data, rows_per_file=500)
    spark = spark_session("local[2]")
    rows = {}
    try:
        def job(label, device):
            best = None
            for _ in range(3):  # a warm-up, then the best of two
                summary = run_job(SPEC, data, build_dir / "out", spark=spark, master="local[2]", partitions=4,
                                  device=device, board_dir=None if device == "sim" else board)
                assert summary["checked"] == frames and summary["mismatches"] == 0, summary
                best = summary if best is None or summary["wall_s"] < best["wall_s"] else best
            rows[label] = {"frames_per_s": frames / best["wall_s"], "wall_s": best["wall_s"], "device": device}
            print(f"  spark local[2], {label:28s} {frames / best['wall_s']:8.1f} frames/s")

        job("sim", "sim")
        with board_process(board, build_dir=build_dir / "boardsim") as (a, _), \
                board_process(board, build_dir=build_dir / "boardsim") as (b, _):
            job("one board (RTL)", f"serial:{a}")
            job("two boards (RTL)", f"serial:{a},{b}")
        with board_process(board, "--netlist", build_dir=build_dir / "boardsim") as (n, _):
            job("one board (netlist)", f"serial:{n}")
    finally:
        spark.stop()
    return {"frames": frames, "runs": rows}


def measure_demo() -> dict:
    """Wall time of ``make demo`` (installed already: the analysis, both Spark jobs, the Fig. 3 demo)."""
    import subprocess

    start = time.perf_counter()
    subprocess.run(["make", "demo"], cwd=ROOT, check=True, capture_output=True)
    wall = time.perf_counter() - start
    return {"cycles": 0, "wall_s": wall, "cycles_per_s": 0.0}


#: name -> (description, function of the parsed arguments and the manifest).
MEASUREMENTS = {
    "fast_harness": ("fast harness (C++ loop, in process)",
                     lambda args, manifest: measure_fast_harness(manifest, frames_of(args.pixels),
                                                                 args.build_dir / "fastsim", args.repeat)),
    "fast_device": ("fast device (child process, codec, results checked)",
                    lambda args, manifest: measure_fast_device(manifest, frames_of(args.pixels // 4, seed=2),
                                                               args.build_dir / "fastsim")),
    "cocotb": ("cocotb bench (Python every cycle)",
               lambda args, manifest: measure_cocotb(args.computations, args.build_dir / "cosim")),
    "spark_local1": ("sfdf spark on local[1] (frames read, simulated, checked, written)",
                     lambda args, manifest: measure_spark("local[1]", args.spark_frames, args.build_dir / "spark")),
    "spark_local2": ("sfdf spark on local[2]",
                     lambda args, manifest: measure_spark("local[2]", args.spark_frames, args.build_dir / "spark")),
    "demo": ("make demo, end to end", lambda args, manifest: measure_demo()),
    "boards": ("sfdf spark through simulated boards (pty, 5 cycles per UART bit)",
               lambda args, manifest: measure_boards(args.board_frames, args.build_dir / "boards")),
}


def _rate(x: float, unit: str) -> str:
    return f"{x / 1e6:.2f} M {unit}" if x >= 1e6 else f"{x:,.0f} {unit}"


def sections(data: dict) -> dict[str, str]:
    """docs/results.md's host table (bench/results.py): a row per measurement of the last run of each."""
    rows = []
    for name, (label, _) in MEASUREMENTS.items():
        m = data.get(name)
        if not m:
            continue
        load = f"{m['load_average']:.1f}"
        if name == "boards":
            rows += [[f"{label}: {run}", f"{r['frames_per_s']:,.1f} frames/s ({m['frames']:,} digits)", load]
                     for run, r in m["runs"].items()]
        elif name == "demo":
            rows.append([label, f"{m['wall_s']:.0f} s", load])
        elif name.startswith("spark"):
            busy = f"{m['cpus_busy']:.2f} CPUs busy machine-wide"
            rows.append([label, f"{m['frames_per_s']:,.0f} frames/s ({m['frames']:,} frames; {busy})", load])
        elif name == "fast_device":
            rows.append([label, f"{_rate(m['cycles_per_s'], 'cycles/s')}, {m['frames_per_s']:,.0f} frames/s", load])
        else:
            rows.append([label, _rate(m["cycles_per_s"], "cycles/s"), load])
    if "fast_harness" in data and "cocotb" in data:
        rows.append(["fast harness / cocotb bench",
                     f"{data['fast_harness']['cycles_per_s'] / data['cocotb']['cycles_per_s']:,.0f}x", ""])
    if "spark_local1" in data and "spark_local2" in data:
        rows.append(["Spark local[2] / local[1] (target 1.7)",
                     f"{data['spark_local2']['frames_per_s'] / data['spark_local1']['frames_per_s']:.2f}", ""])
    return {"host table": f"The variance network, {data['cpus']} CPUs:\n\n"
                          + table(["measurement", "figure", "load average at its start"], rows, "lrr")}


def main(argv=None) -> dict:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--pixels", type=int, default=4_000_000, help="pixels through the fast harness")
    ap.add_argument("--computations", type=int, default=3000, help="source words through the cocotb bench")
    ap.add_argument("--repeat", type=int, default=3, help="fast harness runs (the best counts)")
    ap.add_argument("--spark-frames", type=int, default=20_000, help="VERITAS-like frames through the Spark job")
    ap.add_argument("--board-frames", type=int, default=4000, help="digits through the simulated boards")
    ap.add_argument("--only", nargs="*", choices=sorted(MEASUREMENTS), help="run only these measurements")
    ap.add_argument("--build-dir", type=Path, default=ROOT / "build" / "bench" / "host")
    tables_flag(ap)
    args = ap.parse_args(argv)
    if tables_only(args, "host", sections):
        return load("host")
    manifest = generated(args.build_dir)
    saved = load("host") if data_path("host").is_file() else {}
    saved.update(network="variance", cpus=os.cpu_count())
    for name, (label, measure) in MEASUREMENTS.items():
        if args.only and name not in args.only:
            continue
        load_average = os.getloadavg()[0]
        saved[name] = row = {**measure(args, manifest), "load_average": load_average}
        publish("host", saved, sections)  # each measurement kept as it is made: a later one failing loses none
        if "runs" in row:  # frames/s, printed as measured
            continue
        print(f"{label:55s} {row['cycles_per_s']:>14,.0f} cycles/s ({row['cycles']:,} cycles in {row['wall_s']:.2f} s)")
    print(sections(saved)["host table"])
    return saved


if __name__ == "__main__":
    main()

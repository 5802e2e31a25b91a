"""Measured rates of a generated network on Verilator: when each sink beat and each channel push happened
(:mod:`sfdf.cosim.throughput_tests`), for bench/throughput.py and for the test of the throughput bound
(tests/cosim/test_throughput_bound.py against :mod:`sfdf.gen.analysis.throughput`)."""

from __future__ import annotations

import json
from pathlib import Path

from sfdf.gen.analysis import check

from .network import generated, run_tests, watchdog_cycles

__all__ = ["TESTS", "run_measurement", "steady_rate"]

TESTS = Path(__file__).with_name("throughput_tests.py")


def run_measurement(network, inputs, build_dir, folder_name=None, platform=None, report=None):
    """Run ``network`` (generated for ``platform``; None: generic Verilog) on ``inputs`` (frames per source)
    with sinks always ready; returns the figures :mod:`sfdf.cosim.throughput_tests` writes and the Verilog's path.
    ``report``: the :func:`sfdf.gen.analysis.check` report of ``network`` when the caller has it already."""
    report = report or check(network)
    resolved = report.network
    folder = Path(build_dir) / (folder_name or resolved.name)
    v_path, j_path, sources = generated(folder, network, report=report, platform=platform)
    words = sum(len(f) for frames in inputs.values() for f in frames)
    config = {
        "manifest": json.loads(j_path.read_text()), "seed": 1, "pause": 0.0, "inputs": inputs,
        "watchdog_cycles": watchdog_cycles(resolved, 0.0), "max_cycles": 20 * words,
        "result_path": str((folder / "throughput.json").resolve()),
    }
    results = run_tests(resolved.name, sources, config, folder / "throughput_config.json", TESTS, build_dir,
                        timeout_s=900)
    if not results.passed:  # a measurement that did not run to the end has no figures
        raise RuntimeError(f"{resolved.name}: the measurement did not finish: {results.summary()}")
    return json.loads((folder / "throughput.json").read_text()), v_path


def steady_rate(cycles) -> float | None:
    """Beats per cycle from the first beat to the last (None for fewer than two beats)."""
    return (len(cycles) - 1) / (cycles[-1] - cycles[0]) if len(cycles) > 1 else None

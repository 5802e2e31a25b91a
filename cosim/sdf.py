"""``sfdf cosim`` of an SDF network (004): its generated Verilog on Verilator under cocotb, against the SDF
model with the same capacities.

Each source is offered ``firings`` beats (one a firing, :func:`sfdf.gen.sdf.kernels.source_words`: the
radio's hopping signal for an ``antenna``, else seeded random words, which the SDF test kernel does not
read); the model (:func:`sfdf.gen.sdf.model.run_sdf` with ``bounded``) runs the sources that many times
and every other node as long as its items and its outputs' room let it, which is where the hardware's
self-timed execution stops too (a persistent system: every order ends in the same state), so
:mod:`sfdf.cosim.sdf_tests` compares every sink's values with it, firing by firing, and then that no
more come, and every teleport message the RTL handled at the firing the model delivered it, those it
did not handle pending in both. Where the capacities deadlock, the model stops before its sources have fired ``firings``
times, and the RTL's watchdog finds the beats the sources are not taken. The watchdog's bound: no channel level and no port may stand still longer than twice the
longest firing (a read of its largest peek and a write of its largest push) plus the drivers' pauses.
"""

from __future__ import annotations

import json
import tempfile
from dataclasses import dataclass
from pathlib import Path

from sfdf.gen.sdf.kernels import stimulus
from sfdf.gen.sdf.model import run_sdf
from sfdf.gen.sdf.rates import repetitions
from sfdf.hdl.buildcache import COSIM_DIR
from sfdf.hdl.sdf_manifest import quiet_cycles

from .network import generated, run_tests
from .runner import RunResults

__all__ = ["SDFCosimRun", "default_firings", "run_sdf_network", "sdf_watchdog_cycles"]

TESTS = Path(__file__).with_name("sdf_tests.py")


@dataclass
class SDFCosimRun:
    """What one cosimulation of an SDF network did: the model's sink values and whether it stopped before
    the sources fired their count (deadlocked), the RTL's verdict, where the files are and, read from the
    RTL when it passed: the cycle (from the end of reset) each sink firing was taken in, every message it
    handled and every one it sent and did not handle (``sfdf cosim --json``'s entries)."""

    network: object
    expected: dict[str, list[int]]
    model_deadlocked: bool
    results: RunResults
    folder: Path
    cycles: dict[str, list[int]]
    messages: list[dict]
    pending: list[dict]

    @property
    def passed(self) -> bool:
        return self.results.passed


def sdf_watchdog_cycles(manifest: dict, pause: float) -> int:
    """Cycles without a level or a port moving that mean deadlock (see the module docstring): the device's
    quiet bound, and the drivers' pauses."""
    return quiet_cycles(manifest) + (64 if pause else 0)


def default_firings(network, least: int) -> int:
    """``sfdf cosim``'s source firings when ``--computations`` is not given: ten iterations of ``network`` (its
    repetitions), at least ``least``, so the radio's retunes are handled (its first hop comes in frame 2 and
    lands 6 frames on)."""
    reps = repetitions(network)
    return max(least, 10 * max(reps[s] for s in network.sources))


def run_sdf_network(network, *, computations: int = 200, seed: int = 1, pause: float = 0.3, waves: bool = False,
                    build_dir: str | Path = COSIM_DIR, timeout_s: float = 600, progress=None,
                    progress_file: Path | None = None) -> SDFCosimRun:
    """Generate ``network``, run it ``computations`` firings of each source in the model and in RTL, compare.

    ``pause``: probability that a source or sink driver idles or back-pressures in a cycle (0: none).
    """
    if progress:
        progress("generating the Verilog")
    folder = Path(build_dir) / network.name
    _, j_path, sources = generated(folder, network, allow_unsafe=True)
    if progress:
        progress("the SDF model")
    words = stimulus(network, computations, seed)
    model = run_sdf(network, source_firings=computations, bounded=True, words=words)
    expected = model.outputs
    manifest = json.loads(j_path.read_text())
    config = {
        "manifest": manifest, "seed": seed, "pause": pause,
        "words": words,
        "expected": expected, "watchdog_cycles": sdf_watchdog_cycles(manifest, pause),
        "deliveries": model.deliveries_json(), "pending": model.deliveries_json(pending=True),
        "progress_file": str(progress_file) if progress_file else None,
    }
    with tempfile.TemporaryDirectory(dir=folder) as scratch:
        config["cycles_file"] = str(Path(scratch, "cycles.json").resolve())
        results = run_tests(network.name, sources, config, folder / f"{network.name}_cosim.json", TESTS, build_dir,
                            waves=waves, timeout_s=timeout_s, seed=seed, progress=progress)
        written = Path(config["cycles_file"])
        observed = json.loads(written.read_text()) if written.exists() else {}
    deadlocked = any(model.firings.count(s) < computations for s in network.sources)  # stopped before the end
    return SDFCosimRun(network, expected, deadlocked, results, folder, observed.get("cycles", {}),
                       observed.get("messages", []), observed.get("pending", []))

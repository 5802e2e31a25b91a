"""``sfdf cosim``: a spec's generated Verilog on Verilator under cocotb, against the reference model.

The stimulus is the model's own: each source reads ``computations`` seeded random words
(:func:`sfdf.gen.refmodel.random_words`) cut into frames of 1 to ``max_frame`` words; the model runs the
same frames, and :mod:`sfdf.cosim.network_tests` compares every sink beat with its log. The watchdog bound
comes from the spec: no token may stand still longer than every node's initiation interval in a row
plus the longest pause the drivers insert.
"""

from __future__ import annotations

import hashlib
import json
import os
import random
import tempfile
from dataclasses import dataclass
from pathlib import Path

from sfdf.gen.analysis import check
from sfdf.gen.refmodel import random_words, simulate
from sfdf.hdl.buildcache import COSIM_DIR
from sfdf.hdl.generate import generate
from sfdf.hdl.node import decided_depth

from .runner import RunResults, build_and_run

__all__ = ["CosimRun", "generated", "run_network", "run_tests", "stimulus", "watchdog_cycles"]

TESTS = Path(__file__).with_name("network_tests.py")

#: Extra Verilator arguments: the regression's simulations are short and its builds are not, and the
#: C++ compiler at -O0 builds a 10-edge network in 25 s instead of 67 s (measured on 2 cores).
BUILD_ARGS = ("-CFLAGS", "-O0")
#: The signals :mod:`sfdf.cosim.network_tests` reads inside the network (besides the top's ports): each
#: channel's level and held token (the watchdog), and its input stream (003 Fig. 2's flush adversary).
PUBLIC = ("level", "held", "i_stream__valid", "i_stream__ready", "i_stream__payload")


@dataclass
class CosimRun:
    """What one cosimulation did: the model's verdict, the RTL's, and where the files are."""

    network: object
    safe: bool
    model_deadlocked: bool
    blocking_cycle: list
    model_states: dict
    results: RunResults
    folder: Path

    @property
    def passed(self) -> bool:
        return self.results.passed


def stimulus(network, computations: int, seed: int, max_frame: int = 8,
             zeros: float = 0.0) -> dict[str, list[list[int]]]:
    """Frames per source: the model's seeded words, cut into frames of 1..``max_frame`` words.

    ``zeros``: the probability that a word is replaced by 0 (sparse frames for zero-filtering sources).

    Every source is cut at the same indices: the sources of one network frame together, so copies of
    frame end k reach a join at one index (docs/hardware.md: the join forwards them once there).
    """
    rng = random.Random(f"frames:{seed}")
    cuts, at = [], 0
    while at < computations:
        size = rng.randint(1, max_frame)
        cuts.append((at, min(at + size, computations)))
        at += size
    inputs = {}
    for source in network.sources:
        words = random_words(seed, source, computations)
        if zeros:
            blank = random.Random(f"zeros:{seed}:{source}")
            words = [0 if blank.random() < zeros else w for w in words]
        inputs[source] = [words[a:b] for a, b in cuts]
    return inputs


def watchdog_cycles(network, pause: float) -> int:
    """Cycles without token movement that mean deadlock (see the module docstring)."""
    return 64 + sum(node.ii for node in network.nodes) + (64 if pause else 0)


def run_tests(name: str, sources: list[Path], config: dict, config_path: Path, test_module: Path,
              build_dir: str | Path, **kwargs) -> RunResults:
    """Write ``config`` where ``test_module`` reads it (``SFDF_COSIM_CONFIG``), then build ``sources`` (the
    network's Verilog and its kernels', :func:`generated`) and run.

    ``kwargs`` go to :func:`sfdf.cosim.runner.build_and_run` (``waves``, ``timeout_s``, ``seed``).
    """
    # this process's own file: two processes (pytest-xdist workers) running designs of one name never
    # read each other's configuration
    config_path = config_path.with_name(f"{config_path.stem}-{os.getpid()}{config_path.suffix}")
    config_path.write_text(json.dumps(config))
    try:
        return build_and_run(sources, name, test_module, Path(build_dir) / "sim", build_args=BUILD_ARGS,
                             public=PUBLIC, extra_env={"SFDF_COSIM_CONFIG": str(config_path.resolve())}, **kwargs)
    finally:  # read once, when the simulation starts; named after this process, so no other reads it
        config_path.unlink(missing_ok=True)


def generated(folder: Path, network, **options) -> tuple[Path, Path, list[Path]]:
    """:func:`sfdf.hdl.generate.generate` into ``folder``, each file named after its contents
    (``<name>-<hash>.v``, ``.json``): two processes generating different designs of one name (a credit and
    an in-band variance network on two pytest-xdist workers) never overwrite what the other builds from.
    Returns the Verilog, the manifest and every Verilog source to build (the network's, then its user
    kernels' files, :func:`sfdf.hdl.manifest.kernel_sources`)."""
    folder.mkdir(parents=True, exist_ok=True)
    with tempfile.TemporaryDirectory(dir=folder) as scratch:
        paths = generate(network, scratch, **options)
        kernels = [Path(scratch, name) for name in json.loads(paths[1].read_text()).get("kernel_sources", [])]
        kept = []
        for path in [*paths, *kernels]:
            named = folder / f"{path.stem}-{hashlib.sha256(path.read_bytes()).hexdigest()[:12]}{path.suffix}"
            os.replace(path, named)  # atomic; a file of this name holds these bytes already if it exists
            kept.append(named)
    return kept[0], kept[1], [kept[0], *kept[2:]]


def run_network(network, *, computations: int = 200, seed: int = 1, pause: float = 0.3, waves: bool = False,
                build_dir: str | Path = COSIM_DIR, timeout_s: float = 600, max_frame: int = 8,
                inputs: dict[str, list[list[int]]] | None = None, zeros: float = 0.0,
                flush_after: dict[str, int] | None = None, report=None, platform=None,
                progress=None, progress_file: Path | None = None) -> CosimRun:
    """Generate ``network``, simulate it in the model and in RTL, compare (see the module docstring).

    ``pause``: probability that a source or sink driver idles or back-pressures in a cycle (0: none).
    ``max_frame``: longest frame; frame ends carry credits, so long frames let credit-starved
    configurations (000 Fig. 3) show their deadlock. ``inputs``: explicit frames per source instead;
    ``zeros``: the fraction of zero words in the generated ones (:func:`stimulus`).
    ``flush_after``: an adversarial flush (003 Fig. 2): edge -> index; the sender's output buffer is
    flushed right after it pushes that index, in the model (its flush oracle) and in RTL (the
    verification-only ``flush_<edge>`` port, pulsed the next cycle).
    ``report``: the :func:`sfdf.gen.analysis.check` report of ``network`` when the caller has it already.
    ``platform``: the RTL elaborated for a board's family (:func:`sfdf.hdl.generate.generate`).
    ``progress``: told each phase as it starts; ``progress_file``: where the bench writes its cycles so far
    (:mod:`sfdf.cli.progress`).
    """
    if progress:
        progress("generating the Verilog")
    report = report or check(network)
    resolved = report.network
    folder = Path(build_dir) / (resolved.name + (f"-{platform.family}" if platform is not None else ""))
    flush_after = flush_after or {}
    _, j_path, sources = generated(folder, network, allow_unsafe=True, report=report, flush_ports=bool(flush_after),
                               platform=platform)
    inputs = inputs or stimulus(resolved, computations, seed, max_frame, zeros)
    if progress:
        progress("the reference model")
    oracle = (lambda edge, hidden, index: flush_after.get(edge) == index) if flush_after else None
    # the model's nodes hold as many decided computations as the RTL's (docs/hardware.md, "The pipelined
    # node"; a pipelined kernel's adds its latency): the outputs are the same at any depth
    expected = simulate(resolved, inputs=inputs, seed=seed, flush_oracle=oracle, depth=decided_depth(resolved))
    config = {
        "manifest": json.loads(j_path.read_text()), "inputs": inputs, "seed": seed, "pause": pause,
        "expected": {sink: [list(ev) for ev in log] for sink, log in expected.outputs.items()},
        "watchdog_cycles": watchdog_cycles(resolved, pause), "flush_after": flush_after,
        "progress_file": str(progress_file) if progress_file else None,
    }
    results = run_tests(resolved.name, sources, config, folder / f"{resolved.name}_cosim.json", TESTS,
                        build_dir, waves=waves, timeout_s=timeout_s, seed=seed, progress=progress)
    return CosimRun(resolved, report.deadlock_free, expected.deadlocked, list(expected.blocking_cycle),
                    dict(expected.channel_states), results, folder)

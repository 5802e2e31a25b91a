"""A simulated board: the board core's Verilog on Verilator with its UART pins driven bit by bit.

:func:`build` compiles a board core (``<name>.board.v`` that ``sfdf build`` writes: UART, link, commit
FIFOs and the network, module ``sfdf_board`` with ``clk``, ``rst``, ``rx``, ``tx``, ``leds``), or a netlist
of it with the cell models it needs, with ``cosim/harness/boardsim.cpp`` into a shared library kept in
the build cache by content (:class:`sfdf.cosim.cache.BuildCache`, as the fast harness's builds are).
:class:`BoardSim` runs it: the host's bytes go onto ``rx`` as 8N1 characters at the core's own divisor
(clock cycles per bit, ``clk_hz / baud``), a break holds ``rx`` low, and the characters on ``tx`` come
back as bytes. The UART is simulated bit for bit at the rate the core was built for: a core built with
``--baud 5000000`` at 25 MHz takes 5 cycles per bit, at 1 Mbaud 25 (``sfdf.sw.boardsim`` serves it on a
pseudo-terminal).
"""

from __future__ import annotations

import ctypes
import hashlib
import inspect
import os
from pathlib import Path

from .cache import BuildCache
from .fastbuild import _Steps
from .toolchain import find_toolchain

__all__ = ["LIBRARY", "BoardSim", "build"]

LIBRARY = "libboardsim.so"
HARNESS = Path(__file__).with_name("harness") / "boardsim.cpp"
#: Verilator: two-state, no timing; cell libraries warn about much that does not matter here.
VERILATOR_FLAGS = ("--x-assign", "fast", "--x-initial", "fast", "--no-timing", "-Wno-fatal", "-Wno-lint",
                   "-Wno-style", "-O3", "--autoflush")
CXX_FLAGS = ("-O2", "-fPIC")


def build(sources: list[Path], top: str, build_dir: str | os.PathLike = "build/boardsim",
          include_dirs: tuple[Path, ...] = ()) -> Path:
    """Compile ``sources`` (top module ``top``) with the board harness; reuse a finished build.

    Returns the shared library. Raises :class:`sfdf.cosim.harness.FastSimError` when Verilator or the
    compiler fails (the tail of ``build.log`` in the message), ``ToolchainError`` without Verilator.
    """
    toolchain = find_toolchain()
    digest = hashlib.sha256()
    for part in ([p.read_bytes() for p in sources]
                 + [HARNESS.read_bytes(), top.encode(), repr((VERILATOR_FLAGS, CXX_FLAGS)).encode(),
                    toolchain.version.encode(), inspect.getsource(_compile).encode()]):
        digest.update(part + b"\0")
    for folder in include_dirs:
        for path in sorted(folder.glob("*.v*")):
            digest.update(path.read_bytes())
    folder = BuildCache(build_dir).held_build(
        digest.hexdigest()[:16], LIBRARY, lambda folder: _compile(folder, toolchain, sources, top, include_dirs),
        f"{top}: board simulation")
    return folder / LIBRARY


def _compile(folder: Path, toolchain, sources, top, include_dirs) -> None:
    names = []
    for path in sources:
        (folder / path.name).write_bytes(path.read_bytes())
        names.append(path.name)
    (folder / "boardsim.cpp").write_text(HARNESS.read_text())
    env = {**os.environ, **toolchain.env()}
    with open(folder / "build.log", "w") as out:
        step = _Steps(folder, env, out, top)
        step([str(toolchain.executable), "--cc", *names, "--top-module", top, "--prefix", "Vbs", "--exe",
              "boardsim.cpp", "--Mdir", "obj", "-o", f"../{LIBRARY}", *VERILATOR_FLAGS,
              *[f"-I{d}" for d in include_dirs],
              "-CFLAGS", " ".join(CXX_FLAGS), "-LDFLAGS", "-shared"])
        step(["make", "-C", "obj", "-f", "Vbs.mk", "-j", str(os.cpu_count() or 1), "OPT_FAST=-O2"])


class BoardSim:
    """The board core of a :func:`build` library at ``divisor`` clock cycles per UART bit (module docstring).

    Reset at creation (``rst`` for 16 cycles, as the board top's power-on reset), then run until the hello
    the core says after it is sent, to nobody: a host always starts with a break, and a hello cut short by
    that break would reach it as a stray byte.
    """

    _RESET_CYCLES = 16
    #: Characters of time the power-on hello (13 bytes) takes, with room to spare.
    _HELLO_CHARACTERS = 32

    def __init__(self, library: str | os.PathLike, divisor: int):
        lib = ctypes.CDLL(str(library))
        handle, u8p, u64 = ctypes.c_void_p, ctypes.POINTER(ctypes.c_uint8), ctypes.c_uint64
        for name, args, result in [
            ("bs_create", [ctypes.c_uint32], handle), ("bs_destroy", [handle], None),
            ("bs_reset", [handle, ctypes.c_uint32], None), ("bs_send", [handle, ctypes.c_char_p, u64], None),
            ("bs_break", [handle, ctypes.c_uint32], None), ("bs_drop_queued", [handle], None),
            ("bs_run", [handle, u64, u64], u64), ("bs_receive", [handle, u8p, u64], u64),
            ("bs_pending", [handle], u64), ("bs_leds", [handle], ctypes.c_uint32),
        ]:
            function = getattr(lib, name)
            function.argtypes, function.restype = args, result
        self._lib = lib
        self.divisor = divisor
        self._sim = lib.bs_create(divisor)
        self._buffer = (ctypes.c_uint8 * 65536)()
        lib.bs_reset(self._sim, self._RESET_CYCLES)
        self.run(self._HELLO_CHARACTERS * 10 * divisor)
        self.receive()

    def send(self, data: bytes) -> None:
        """Queue bytes for the board's ``rx``."""
        self._lib.bs_send(self._sim, data, len(data))

    def send_break(self, characters: int = 2) -> None:
        """The host's break: the bytes it queued and has not started sending are dropped (its output flush),
        ``rx`` is held low for ``characters`` characters' time, and what the board sent so far is discarded
        (it belongs to the session the break ends)."""
        self._lib.bs_drop_queued(self._sim)
        self._lib.bs_break(self._sim, characters * 10 * self.divisor)
        self.receive()

    def run(self, cycles: int, until_bytes: int = 0) -> int:
        """Run up to ``cycles`` clock cycles, stopping once the host's line is idle and ``until_bytes``
        bytes came back (0: run them all); returns the cycles run."""
        return self._lib.bs_run(self._sim, cycles, until_bytes)

    def receive(self) -> bytes:
        """The bytes the board sent since the last call."""
        out = bytearray()
        while n := self._lib.bs_receive(self._sim, self._buffer, len(self._buffer)):
            out += bytes(self._buffer[:n])
        return bytes(out)

    @property
    def pending(self) -> int:
        """Bytes (and breaks) queued for ``rx`` or on the line."""
        return self._lib.bs_pending(self._sim)

    @property
    def leds(self) -> int:
        return self._lib.bs_leds(self._sim)

    def close(self) -> None:
        if self._sim:
            self._lib.bs_destroy(self._sim)
            self._sim = None

    def __enter__(self):
        return self

    def __exit__(self, *exc) -> None:
        self.close()

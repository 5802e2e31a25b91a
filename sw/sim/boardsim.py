"""``sfdf board-sim DIR``: the board ``sfdf build -o DIR`` made, simulated, behind a real serial device node.

The board core that ``sfdf build`` wrote (``DIR/<name>.board.v``: UART, link, commit FIFOs and the
network, the logic of the bitstream without the board's PLL and pin buffers) is compiled by Verilator
(:func:`build`), or with ``netlist=True`` the same core as Yosys synthesizes it for the
board's family (:mod:`sfdf.boards.netlist`: ``synth_ecp5 -nodsp`` / ``synth_ice40``, simulated with
Yosys's cell models). Its UART pins are driven bit for bit at the divisor it was built with (clock cycles
per bit = ``clk_hz / baud`` of ``DIR/<name>.board.json``: build with ``--baud 5000000`` at 25 MHz for 5
cycles per bit, the speed the tests use; the 1 Mbaud default simulates 25).

:class:`PtyBoard` bridges the UART to a pseudo-terminal (``pty.openpty()``) whose device path it prints,
so pyserial, the board device (``open_device(DIR/<name>.json, backend="serial:/dev/pts/N")``) and
``sfdf spark --device serial:`` talk to the RTL through a real serial device node. The simulation runs
as fast as it can while the host sends or frames are in the network, and sleeps on the pty otherwise.

Break. A pseudo-terminal carries no line conditions: the kernel drops ``tcsendbreak`` on a pty. The
board device therefore flushes its output when it breaks on a pty (:class:`sfdf.sw.device.uart.SerialTransport`),
which the master side sees in packet mode (``TIOCPKT_FLUSHWRITE``); the bridge then holds ``rx`` low for two
characters' time, a real break on the simulated board's pin, which resets its network and link. Between
the host's input flush (the board device flushes its input just before it breaks) and the break, and before
the first break, the board's bytes are dropped: they would belong to no session, and one arriving after the
host's flush (a stale hello) would be taken for the answer to its break. The bridge reads the host before
each write, so what the board said in a step during which the host flushed is dropped too. The host's
bytes are dropped from its break until the bridge first writes to it: a host sends nothing before the
board's hello, and the output flush that stands for a break does not clear what the kernel had already
passed to the master's line discipline (up to 4 KiB of an earlier host's frames, which the board would
otherwise take as the new session's). A real serial port has no such leftovers: closing it waits until
its output has gone out.

Faults, for tests: ``corrupt_byte=N`` flips the low bit of the N-th byte from the host (1 = the first:
line noise; the link's CRC drops the packet and says so); ``die_after_bytes=N`` ends the process
abruptly once N bytes from the host have arrived (a board losing power mid-job).

The core on Verilator. :func:`build` compiles a board core (``<name>.board.v`` that ``sfdf build`` writes: UART, link, commit
FIFOs and the network, module ``sfdf_board`` with ``clk``, ``rst``, ``rx``, ``tx``, ``leds``), or a netlist
of it with the cell models it needs, with ``sw/sim/templates/boardsim.cpp`` into a shared library kept in
the build cache by content (:class:`sfdf.hdl.buildcache.BuildCache`, as the fast harness's builds are).
:class:`BoardSim` runs it: the host's bytes go onto ``rx`` as 8N1 characters at the core's own divisor
(clock cycles per bit, ``clk_hz / baud``), a break holds ``rx`` low, and the characters on ``tx`` come
back as bytes. The UART is simulated bit for bit at the rate the core was built for: a core built with
``--baud 5000000`` at 25 MHz takes 5 cycles per bit, at 1 Mbaud 25 (:class:`PtyBoard` serves it on a
pseudo-terminal).
"""

from __future__ import annotations

import ctypes
import errno
import fcntl
import hashlib
import inspect
import json
import os
import pty
import select
import struct
import subprocess
import sys
import termios
import time
import tty
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path

from sfdf.boards.netlist import cell_models, rtl_models, synthesize
from sfdf.boards.uart import uart_divisor
from sfdf.gen.errors import UserError
from sfdf.hdl.buildcache import BOARDSIM_DIR, BuildCache
from sfdf.hdl.toolchain import find_toolchain

from .build import BuildSteps

__all__ = ["LIBRARY", "BoardDir", "BoardSim", "PtyBoard", "SimTransport", "board_dir", "board_process", "build",
           "simulated_board"]

LIBRARY = "libboardsim.so"
HARNESS = Path(__file__).with_name("templates") / "boardsim.cpp"
#: Verilator: two-state, no timing, no assertions (one would end the process); cell libraries warn about
#: much that does not matter here.
VERILATOR_FLAGS = ("--x-assign", "fast", "--x-initial", "fast", "--no-timing", "--no-assert", "-Wno-fatal",
                   "-Wno-lint", "-Wno-style", "-O3", "--autoflush")
CXX_FLAGS = ("-fPIC",)
#: GCC's optimisation of an RTL build (``OPT_FAST`` too: ``verilated.mk`` compiles with ``-Os`` unless told).
CXX_OPT = "-O2"
#: GCC's optimisation of a netlist build (``simulated_board(netlist=True)``): a netlist check of a few
#: frames waits for GCC, not for the simulation, and ``-O0`` builds in well under half the time of
#: ``-O2`` for about half the cycles per second.
NETLIST_CXX_OPT = "-O0"


def build(sources: list[Path], top: str, build_dir: str | os.PathLike = BOARDSIM_DIR,
          include_dirs: tuple[Path, ...] = (), cxx_opt: str = CXX_OPT) -> Path:
    """Compile ``sources`` (top module ``top``) with the board harness at GCC's ``cxx_opt``; reuse a
    finished build.

    Returns the shared library. Raises :class:`sfdf.sw.sim.harness.FastSimError` when Verilator or the
    compiler fails (the tail of ``build.log`` in the message), ``ToolchainError`` without Verilator.
    """
    toolchain = find_toolchain()
    digest = hashlib.sha256()
    for part in ([p.read_bytes() for p in sources]
                 + [HARNESS.read_bytes(), top.encode(), repr((VERILATOR_FLAGS, CXX_FLAGS, cxx_opt)).encode(),
                    toolchain.version.encode(), inspect.getsource(_compile).encode()]):
        digest.update(part + b"\0")
    for folder in include_dirs:
        for path in sorted(folder.glob("*.v*")):
            digest.update(path.read_bytes())
    folder = BuildCache(build_dir).held_build(
        digest.hexdigest()[:16], LIBRARY, lambda folder: _compile(folder, toolchain, sources, top, include_dirs, cxx_opt),
        f"{top}: board simulation")
    return folder / LIBRARY


def _compile(folder: Path, toolchain, sources, top, include_dirs, cxx_opt) -> None:
    names = []
    for path in sources:
        (folder / path.name).write_bytes(path.read_bytes())
        names.append(path.name)
    (folder / "boardsim.cpp").write_text(HARNESS.read_text())
    env = {**os.environ, **toolchain.env()}
    with open(folder / "build.log", "w") as out:
        step = BuildSteps(folder, env, out, top)
        step([str(toolchain.executable), "--cc", *names, "--top-module", top, "--prefix", "Vbs", "--exe",
              "boardsim.cpp", "--Mdir", "obj", "-o", f"../{LIBRARY}", *VERILATOR_FLAGS,
              *[f"-I{d}" for d in include_dirs],
              "-CFLAGS", " ".join((cxx_opt, *CXX_FLAGS)), "-LDFLAGS", "-shared"])
        step(["make", "-C", "obj", "-f", "Vbs.mk", "-j", str(os.cpu_count() or 1), f"OPT_FAST={cxx_opt}"])


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


#: Cycles simulated per step: :class:`SimTransport`'s, and the most and the least of the bridge's.
_CHUNK, _LEAST_CHUNK = 20_000, 64
#: Wall time a step of the bridge's loop aims at: the board's bytes wait at most this long for the host
#: (the netlist simulation runs about 19,000 cycles a second, so 20,000 cycles would hold them for a second).
_CHUNK_S = 0.02
#: How long the bridge sleeps on the pty when the board is idle.
_IDLE_S = 0.01
#: Cycles the bridge goes on simulating after the board's last byte or the host's last event: the board may
#: still answer after a silence (a reset after a break, then its hello), and steps are as short as
#: :data:`_LEAST_CHUNK`, so one silent step must not end the simulation (one step of :data:`_CHUNK` did).
_QUIET_CYCLES = _CHUNK
#: LED bit 2: frames in the network (:data:`sfdf.boards.core.LED_MEANINGS`).
_FRAMES_IN_NETWORK = 1 << 2
#: Bytes from the board kept for a host that does not read, before the oldest are lost (as on a UART).
_BACKLOG = 1 << 20


@dataclass(frozen=True)
class BoardDir:
    """What ``sfdf build -o DIR`` wrote that a simulated board needs."""

    manifest: Path
    core: Path
    core_top: str
    family: str
    divisor: int
    facts: dict


def board_dir(directory: str | os.PathLike) -> BoardDir:
    """The build folder ``directory`` (``sfdf build -o DIR``); a one-line :class:`UserError` when it is not one."""
    folder = Path(directory)
    found = sorted(folder.glob("*.board.json")) if folder.is_dir() else []
    if len(found) != 1:
        what = "does not exist" if not folder.is_dir() else \
            "holds no <name>.board.json" if not found else f"holds {len(found)} boards' files"
        raise UserError(str(folder), "DIR", what, "give the folder of one sfdf build -o DIR (sfdf build SPEC "
                        "--board B -o DIR --no-build writes what the simulation needs)")
    facts = json.loads(found[0].read_text())
    if "core" not in facts:
        raise UserError(str(found[0]), "core", "is missing (built before sfdf board-sim existed)",
                        "run sfdf build again into this folder")
    return BoardDir(folder / facts["manifest"], folder / facts["core"], facts["core_top"], facts["family"],
                    uart_divisor(float(facts["clk_hz"]), int(facts["baud"])), facts)


def simulated_board(board: BoardDir, *, netlist: bool = False, build_dir: str | os.PathLike = BOARDSIM_DIR,
                    progress=None):
    """A :class:`BoardSim` of ``board``'s core, as RTL or as its synthesized netlist; ``progress`` is told
    each phase as it starts (:mod:`sfdf.cli.progress`)."""
    progress = progress or (lambda phase: None)
    if netlist:
        cells, include = cell_models(board.family, Path(build_dir))
        progress(f"synthesizing the netlist (Yosys for {board.family}; reused while the core is unchanged)")
        sources, includes = [synthesize(board.core, board.core_top, board.family, Path(build_dir)), *cells], (include,)
    else:
        sources, includes = [board.core, *rtl_models(board.family)], ()
    progress("Verilator build (reused while the design is unchanged)")
    return BoardSim(build(sources, board.core_top, build_dir, include_dirs=includes,
                          cxx_opt=NETLIST_CXX_OPT if netlist else CXX_OPT), board.divisor)


class PtyBoard:
    """A simulated board on a pseudo-terminal (module docstring); :attr:`path` is its device node."""

    def __init__(self, sim, *, corrupt_byte: int | None = None, die_after_bytes: int | None = None):
        self.sim = sim
        self.master, self._slave = pty.openpty()   # the slave stays open: hosts come and go
        tty.setraw(self._slave)
        fcntl.ioctl(self.master, termios.TIOCPKT, struct.pack("i", 1))
        os.set_blocking(self.master, False)
        self.path = os.ttyname(self._slave)
        self.corrupt_byte, self.die_after_bytes = corrupt_byte, die_after_bytes
        self.received = 0          # bytes from the host
        self._out = bytearray()
        self._muted = True        # until the first break: what the board said before belongs to no session
        self._stale = True        # until the board's first bytes after a break: the host's bytes are an old session's
        self._chunk = _LEAST_CHUNK  # cycles per step, sized to _CHUNK_S of wall time as the simulation runs
        self._quiet = 0             # cycles simulated since the board's last byte or the host's last event

    def serve(self, stop=lambda: False) -> None:
        """Bridge until ``stop()`` is true (checked every step)."""
        while not stop():
            busy = self._quiet < _QUIET_CYCLES or self.sim.pending or self.sim.leds & _FRAMES_IN_NETWORK
            wait = [self.master] if self._out else []
            readable, writable, _ = select.select([self.master], wait, [], 0 if busy else _IDLE_S)
            if readable:
                self._from_host()
            ran = self._step() if busy or readable else 0
            data = self.sim.receive()
            output = bool(data)
            self._quiet = 0 if output or readable else self._quiet + ran
            if not self._muted:
                self._out += data
            del self._out[:max(0, len(self._out) - _BACKLOG)]
            if self._out and (writable or output):
                self._host_first()
                self._to_host()

    def _step(self) -> int:
        """Run the simulation for one step of about :data:`_CHUNK_S` seconds; returns the cycles run."""
        start = time.monotonic()
        ran = self.sim.run(self._chunk)
        elapsed = time.monotonic() - start
        if elapsed > 0:
            self._chunk = max(_LEAST_CHUNK, min(_CHUNK, int(ran * _CHUNK_S / elapsed)))
        return ran

    def _host_first(self) -> None:
        """Read what the host sent while the simulation ran its chunk, before writing to it: a flush the host
        made meanwhile mutes the board's bytes of that chunk (a stale hello among them would be taken for
        the answer to the host's break, and the real hello would then end its session as a reset)."""
        while self._out and select.select([self.master], [], [], 0)[0] and self._from_host():
            pass

    def _from_host(self) -> bool:
        """One packet from the host (packet mode: a status byte, then data); False if there was none."""
        try:
            chunk = os.read(self.master, 65536)
        except OSError as error:  # EIO: no host has the port open
            if error.errno in (errno.EIO, errno.EAGAIN):
                return False
            raise
        if not chunk:
            return False
        status, data = chunk[0], bytearray(chunk[1:])
        if status & termios.TIOCPKT_FLUSHREAD:  # the host flushed its input, as it does before a break
            self._muted = True
            self._out.clear()
            self.sim.receive()
        if status & termios.TIOCPKT_FLUSHWRITE:  # the host's break (module docstring)
            self.sim.send_break()
            self._muted, self._stale = False, True
            return True
        if status != termios.TIOCPKT_DATA or self._stale:
            return True
        if self.corrupt_byte is not None and self.received < self.corrupt_byte <= self.received + len(data):
            data[self.corrupt_byte - self.received - 1] ^= 1
            print(f"sfdf board-sim: flipped a bit of byte {self.corrupt_byte} from the host", file=sys.stderr,
                  flush=True)
        self.received += len(data)
        self.sim.send(bytes(data))
        if self.die_after_bytes is not None and self.received >= self.die_after_bytes:
            os._exit(3)  # power lost: no goodbye, the pty vanishes with the process
        return True

    def _to_host(self) -> None:
        try:
            written = os.write(self.master, self._out)
        except BlockingIOError:
            return
        del self._out[:written]
        if written:  # the board answered the break: the host's bytes are its session's
            self._stale = False

    def close(self) -> None:
        for fd in (self.master, self._slave):
            try:
                os.close(fd)
            except OSError:
                pass
        self.sim.close()


class SimTransport:
    """The simulated board as a :class:`sfdf.sw.device.boardlink.Transport` in this process, without a pty
    (``sfdf board-sim DIR`` without ``--pty``; ``open_board(..., transport=SimTransport(sim))``): each read
    runs the board for a step."""

    port = "the simulated board"

    def __init__(self, sim):
        self.sim = sim

    def read(self, size: int) -> bytes:
        self.sim.run(_CHUNK, until_bytes=size)
        return self.sim.receive()

    def write(self, data: bytes) -> None:
        self.sim.send(data)

    def send_break(self, duration: float) -> None:
        self.sim.send_break()

    def reset_input_buffer(self) -> None:
        self.sim.receive()

    def close(self) -> None:
        self.sim.close()


@contextmanager
def board_process(directory: str | os.PathLike, *flags: str, build_dir: str | os.PathLike = BOARDSIM_DIR
                  ) -> Iterator[tuple[str, subprocess.Popen]]:
    """``sfdf board-sim DIRECTORY --pty FLAGS`` in a child process (tests, benchmarks, a host script):
    yields ``(its pty's path, the process)``; ends it on exit.

    Raises
    ------
    RuntimeError
        The child ended without printing a path (its standard error in the message).
    """
    command = [str(Path(sys.executable).with_name("sfdf")), "board-sim", str(directory), "--pty",
               "--build-dir", str(build_dir), *flags]
    proc = subprocess.Popen(command, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    try:
        path = proc.stdout.readline().strip()
        if not path:
            proc.wait(timeout=30)
            raise RuntimeError(f"sfdf board-sim {directory} printed no device path: {proc.stderr.read().strip()}")
        yield path, proc
    finally:
        proc.terminate()
        proc.wait(timeout=30)

"""The fast simulated device: a network compiled with the fast harness, run through ctypes.

The network's Verilog and a C++ harness generated from its manifest (:mod:`sfdf.sw.sim.harness`) are compiled
by Verilator into a shared library (:func:`sfdf.sw.sim.build.build`, cached by content); :class:`FastSim`
loads it and moves whole frames per call, so no Python runs per cycle. Byte strings are copied into
signals as they lie in memory: the host must be little-endian (x86, Arm).

    sim = FastSim(build("out/variance.v", "out/variance.json"), "out/variance.json")
    sim.push("u", [3, 0, 5], tlast=[0, 0, 1])
    sim.run(10_000, until_messages=1)
    beats = sim.read("x")          # [Beat(tdata, tuser, tlast, cycle), ...]

The build sits above the run time: ``build`` comes from :mod:`sfdf.sw.sim.build`, whose profile
training runs a :class:`FastSim`.
"""

from __future__ import annotations

import ctypes
import json
import os
from collections.abc import Iterable, Mapping, Sequence
from pathlib import Path
from typing import NamedTuple, Self

import numpy as np

from sfdf.hdl.manifest import Port

from .harness import FastSimError, harness_ports, load_manifest, record_bytes, signature

__all__ = ["Beat", "ContractViolation", "FastSim", "FastSimError", "RunResult", "split_records"]

#: What ``fs_frame_end_cycle`` answers for a frame not ended yet.
_NOT_YET = (1 << 64) - 1


class Beat(NamedTuple):
    """One transfer on a sink port: raw ``tdata``, ``tuser``, ``tlast`` and the cycle it happened."""

    tdata: int
    tuser: int
    tlast: bool
    cycle: int


class ContractViolation(FastSimError):
    """A user kernel broke its contract on the device (the network's ``contract_violation`` output): names the
    node (docs/kernels.md)."""


class RunResult(NamedTuple):
    """What :meth:`FastSim.run` did: cycles run and why it stopped (``"target"``, ``"idle"``, ``"budget"``)."""

    cycles: int
    reason: str


class FastSim:
    """One instance of the compiled network: queue source words, run cycles, read sink beats.

    Parameters
    ----------
    library : path
        A library from :func:`build` for ``manifest``.
    manifest : mapping or path
        The manifest the library was built for (checked against the library's signature).
    reset_cycles : int
        Cycles with ``rst`` high before the first cycle counted.

    Members
    -------
    manifest : dict
    sources, sinks : list of sfdf.hdl.manifest.Port
        In manifest order; methods accept a port's node name (``"u"``), port name (``"s_axis_u"``)
        or position.
    """

    def __init__(self, library: str | os.PathLike, manifest: Mapping | str | os.PathLike, reset_cycles: int = 4):
        self.manifest = load_manifest(manifest)
        self.sources, self.sinks = harness_ports(self.manifest)
        self._lib = _load(Path(library))
        have = self._lib.fs_signature().decode()
        if have != signature(self.manifest):
            raise FastSimError(f"{library} was built for another design: {have!r}, manifest says "
                               f"{signature(self.manifest)!r}")
        self._handle = self._lib.fs_create(reset_cycles)
        if not self._handle:
            raise FastSimError(f"{library}: fs_create failed")
        self._counters = (ctypes.c_uint64 * (2 + 4 * len(self.sources) + 3 * len(self.sinks)))()

    # -- ports -----------------------------------------------------------------------------------
    def source_index(self, port: str | int) -> int:
        """Position of a source port given by node name, port name or position."""
        return _port_index(self.sources, port, "source")

    def sink_index(self, port: str | int) -> int:
        """Position of a sink port given by node name, port name or position."""
        return _port_index(self.sinks, port, "sink")

    # -- stimulus --------------------------------------------------------------------------------
    def push_bytes(self, source: str | int, words: bytes, flags: bytes) -> None:
        """Queue words already packed little-endian, ``tdata_bytes`` each, with one flags byte per word.

        Flags: bit 0 ``tlast`` (end of frame), bit 1 ``tuser[0]`` (end of stream).
        """
        i = self.source_index(source)
        n = len(flags)
        if len(words) != n * self.sources[i].tdata_bytes:
            raise FastSimError(f"{self.sources[i].name}: {len(words)} bytes for {n} words of "
                               f"{self.sources[i].tdata_bytes} bytes")
        if n:
            self._lib.fs_push(self._live(), i, words, flags, n)

    def push(self, source: str | int, words: Sequence[int] | np.ndarray, tlast: Iterable[int] | None = None,
             eos: Iterable[int] | None = None) -> None:
        """Queue ``words`` (unsigned, fitting ``tdata``) with ``tlast``/``eos`` per word (default all 0)."""
        i = self.source_index(source)
        port = self.sources[i]
        values = list(words)
        if any(not 0 <= int(w) < 1 << port.tdata_width for w in values):
            bad = next(w for w in values if not 0 <= int(w) < 1 << port.tdata_width)
            raise FastSimError(f"{port.name}: word {bad} does not fit {port.tdata_width} bits")
        flags = np.zeros(len(values), dtype=np.uint8)
        if tlast is not None:
            flags |= np.asarray(list(tlast), dtype=np.uint8) & 1
        if eos is not None:
            flags |= (np.asarray(list(eos), dtype=np.uint8) & 1) << 1
        packed = b"".join(int(w).to_bytes(port.tdata_bytes, "little") for w in values)
        self.push_bytes(i, packed, flags.tobytes())

    def set_pause(self, port: str | int, probability: float, seed: int = 1, *, sink: bool) -> None:
        """Idle a source (``sink=False``) or back-pressure a sink with ``probability`` per cycle."""
        if not 0.0 <= probability < 1.0:
            raise FastSimError(f"pause probability must be in [0, 1), not {probability}")
        index = self.sink_index(port) if sink else self.source_index(port)
        self._lib.fs_set_pause(self._live(), int(sink), index, int(probability * 2**32), seed & 0xFFFFFFFF)

    # -- running ---------------------------------------------------------------------------------
    def run(self, max_cycles: int, until_messages: int = 0, idle_cycles: int = 0) -> RunResult:
        """Run up to ``max_cycles`` cycles; stop once every sink has delivered ``until_messages`` message
        beats in all (``"target"``, when > 0) or no port moved for ``idle_cycles`` cycles (``"idle"``)."""
        reason = ctypes.c_int(0)
        cycles = self._lib.fs_run(self._live(), max_cycles, until_messages, idle_cycles, ctypes.byref(reason))
        if reason.value == 3:
            bits = self._lib.fs_violation(self._live())
            nodes = [name for k, name in enumerate(self.manifest.get("contract_violation", ())) if bits >> k & 1]
            raise ContractViolation(f"contract violation: {', '.join(f'node {json.dumps(n)}' for n in nodes)}: its "
                                    "kernel filtered a token though it declares may_filter = false, or answered a "
                                    "message with a result where its computation emitted (docs/kernels.md)")
        return RunResult(cycles, ("budget", "target", "idle")[reason.value])

    # -- results ---------------------------------------------------------------------------------
    def read_bytes(self, sink: str | int, limit: int | None = None) -> bytes:
        """Take the waiting beats of ``sink`` as records (tdata, tuser, tlast byte, 64-bit cycle)."""
        k = self.sink_index(sink)
        handle = self._live()
        n = self._lib.fs_available(handle, k)
        n = n if limit is None else min(n, limit)
        if not n:
            return b""
        size = record_bytes(self.sinks[k])
        buffer = ctypes.create_string_buffer(n * size)
        got = self._lib.fs_read(handle, k, buffer, n)
        return buffer.raw[:got * size]

    def read(self, sink: str | int, limit: int | None = None) -> list[Beat]:
        """Take the waiting beats of ``sink``."""
        port = self.sinks[self.sink_index(sink)]
        return split_records(port, self.read_bytes(sink, limit))

    @property
    def cycles(self) -> int:
        """Cycles run since reset was released."""
        return self.counters()["cycles"]

    def counters(self) -> dict:
        """``cycles``, ``idle`` and per port: sources ``waiting``, ``accepted``, ``frames``,
        ``last_accept``; sinks ``beats``, ``messages``, ``eos``."""
        self._lib.fs_counters(self._live(), self._counters)
        values = list(self._counters)
        out = {"cycles": values[0], "idle": values[1]}
        at = 2
        for p in self.sources:
            out[p.node] = dict(zip(("waiting", "accepted", "frames", "last_accept"), values[at:at + 4], strict=True))
            at += 4
        for p in self.sinks:
            out[p.node] = dict(zip(("beats", "messages", "eos"), values[at:at + 3], strict=True))
            at += 3
        return out

    def frame_end_cycle(self, source: str | int, frame: int) -> int | None:
        """The cycle at which the tlast word of frame ``frame`` (0, 1, ...) was taken, or ``None``."""
        cycle = self._lib.fs_frame_end_cycle(self._live(), self.source_index(source), frame)
        return None if cycle == _NOT_YET else cycle

    def close(self) -> None:
        """Destroy the model (idempotent)."""
        if getattr(self, "_handle", None):
            self._lib.fs_destroy(self._handle)
            self._handle = None

    def __enter__(self) -> Self:
        return self

    def __exit__(self, *exc) -> None:
        self.close()

    def __del__(self) -> None:
        self.close()

    def _live(self):
        if not self._handle:
            raise FastSimError("the fast simulator is closed")
        return self._handle


def split_records(port: Port, data: bytes) -> list[Beat]:
    """Records of :meth:`FastSim.read_bytes` as :class:`Beat`s."""
    size, td, tu = record_bytes(port), port.tdata_bytes, port.tuser_bytes
    beats = []
    for at in range(0, len(data), size):
        record = data[at:at + size]
        beats.append(Beat(int.from_bytes(record[:td], "little"), int.from_bytes(record[td:td + tu], "little"),
                          bool(record[td + tu]), int.from_bytes(record[td + tu + 1:], "little")))
    return beats


def _port_index(ports: list[Port], port: str | int, what: str) -> int:
    if isinstance(port, int):
        if 0 <= port < len(ports):
            return port
    else:
        for i, p in enumerate(ports):
            if port in (p.node, p.name):
                return i
    raise FastSimError(f"no {what} port {port!r}; {what}s: {', '.join(p.node for p in ports)}")


_LIBRARIES: dict[Path, ctypes.CDLL] = {}


def _load(path: Path) -> ctypes.CDLL:
    path = path.resolve()
    if path in _LIBRARIES:
        return _LIBRARIES[path]
    try:
        lib = ctypes.CDLL(str(path))
    except OSError as error:
        raise FastSimError(f"cannot load {path}: {error}") from None
    u64, ptr, cint = ctypes.c_uint64, ctypes.c_void_p, ctypes.c_int
    lib.fs_signature.restype = ctypes.c_char_p
    lib.fs_create.restype, lib.fs_create.argtypes = ptr, [ctypes.c_uint32]
    lib.fs_destroy.restype, lib.fs_destroy.argtypes = None, [ptr]
    lib.fs_push.restype, lib.fs_push.argtypes = cint, [ptr, cint, ctypes.c_char_p, ctypes.c_char_p, u64]
    lib.fs_run.restype, lib.fs_run.argtypes = u64, [ptr, u64, u64, u64, ctypes.POINTER(cint)]
    lib.fs_available.restype, lib.fs_available.argtypes = u64, [ptr, cint]
    lib.fs_read.restype, lib.fs_read.argtypes = u64, [ptr, cint, ctypes.c_char_p, u64]
    lib.fs_counters.restype, lib.fs_counters.argtypes = None, [ptr, ctypes.POINTER(u64)]
    lib.fs_frame_end_cycle.restype, lib.fs_frame_end_cycle.argtypes = u64, [ptr, cint, u64]
    lib.fs_violation.restype, lib.fs_violation.argtypes = u64, [ptr]
    lib.fs_set_pause.restype = cint
    lib.fs_set_pause.argtypes = [ptr, cint, cint, ctypes.c_uint32, ctypes.c_uint32]
    _LIBRARIES[path] = lib
    return lib

"""The device API (DESIGN.md, Host side): open a device, send frames, receive each frame's results, close.

    with open_device("out/variance.json") as device:
        device.send_frames(enumerate(frames))          # (frame id, pixels) pairs
        for result in device.results():
            print(result.frame_id, result.fields)      # {"n": ..., "sum": ..., "sum_sq": ...}

Frames and results. Every input frame yields exactly its results: per sink, the data beats the network
emits for it, then its frame-end message (docs/hardware.md: the source turns ``tlast`` into a frame
end ordered precisely with the data). Frames are processed in order, and the frame end carries the
frame number mod ``2^payload_width``, so the device checks each one against the frame it expects and
maps results back to the caller's frame ids. The variance network gives one data beat per frame,
the ``n``/``sum``/``sum_sq`` of :attr:`FrameResult.fields`.

Backends. ``"sim"``: the network's Verilog compiled with the fast harness (:mod:`cosim.fastsim`),
by default in a child Python process (:class:`ProcessLink`) so that a crash of the model cannot take the
caller down; the parent and the child speak the byte framing of :mod:`sw.codec`, as a serial board link will.
``"serial:<port>"``: a board built by ``sfdf build``, over a UART (:mod:`sw.serial`); :class:`Device`
only needs a link with ``push``/``step``/``close``.

Failures. A frame whose results do not appear within ``timeout_cycles`` simulated cycles of the later
of (its last word taken by the device, the previous frame answered; while its words are still being
taken: the last word taken) raises :class:`FrameTimeout` naming the frame id; the frames stay pending,
so a later call with a larger budget can still collect them. A device that died (the child process
killed or crashed) raises :class:`DeviceDied` naming the oldest pending frame; so does every later call.
Results already answered are never lost: an error hands them over in ``error.results``.
"""

from __future__ import annotations

import contextlib
import json
import os
import signal
import socket
import subprocess
import sys
import tempfile
from collections import deque
from collections.abc import Iterable, Iterator, Mapping, Sequence
from dataclasses import dataclass, field
from multiprocessing.connection import Connection
from pathlib import Path
from typing import Self

import numpy as np

from .codec import Beat, Codec, read_packet

__all__ = [
    "DEFAULT_TIMEOUT_CYCLES", "Device", "DeviceDied", "DeviceError", "FrameResult", "FrameTimeout", "ProcessLink",
    "ProtocolError", "SimLink", "open_device",
]

#: Default cycle budget of one frame (see the module docstring).
DEFAULT_TIMEOUT_CYCLES = 1_000_000
#: Cycles with reset high when a simulated device starts.
RESET_CYCLES = 4

Pixels = Sequence[int] | np.ndarray


class DeviceError(RuntimeError):
    """A device call failed.

    Members
    -------
    frame_id : int or None
        The frame the failure concerns.
    results : list of FrameResult
        Results answered before the failure and not yet returned: handed over here.
    """

    def __init__(self, message: str, frame_id: int | None = None, results: list[FrameResult] | None = None):
        super().__init__(message)
        self.frame_id = frame_id
        self.results = results or []


class FrameTimeout(DeviceError):
    """A frame's results did not appear within the cycle budget; the frame stays pending."""


class DeviceDied(DeviceError):
    """The device stopped answering (its simulator process exited or was killed)."""


class ProtocolError(DeviceError):
    """The device sent beats that do not fit the frames sent (a frame end out of order, a beat too many)."""


class LinkDown(Exception):
    """Raised by a link whose other end is gone; :class:`Device` turns it into :class:`DeviceDied`."""


@dataclass(frozen=True)
class FrameResult:
    """The results of one input frame.

    Members
    -------
    frame_id : int
        The caller's id.
    frame : int
        Its position in the device's stream (0, 1, ...).
    beats : dict of str to tuple of Beat
        Per sink node, the frame's data beats in order (decoded by :mod:`sw.codec`).
    cycle : int or None
        The cycle at which its last frame end arrived (simulated devices).
    """

    frame_id: int
    frame: int
    beats: Mapping[str, tuple[Beat, ...]]
    cycle: int | None = None

    @property
    def fields(self) -> dict[str, int]:
        """The fields of the frame's one data beat (the variance network: ``n``, ``sum``, ``sum_sq``).

        Raises
        ------
        ValueError
            The network has several sinks, or the frame gave other than one data beat (filtering
            networks: use :attr:`beats`).
        """
        if len(self.beats) != 1:
            raise ValueError(f"frame {self.frame_id}: {len(self.beats)} sinks ({', '.join(self.beats)}); use .beats")
        (beats,) = self.beats.values()
        if len(beats) != 1:
            raise ValueError(f"frame {self.frame_id}: {len(beats)} data beats, not one; use .beats")
        return dict(beats[0].fields)

    def data(self, sink: str | None = None) -> list[dict[str, int]]:
        """The fields of every data beat at ``sink`` (``None``: the only sink)."""
        if sink is None:
            if len(self.beats) != 1:
                raise ValueError(f"frame {self.frame_id}: name one of the sinks {', '.join(self.beats)}")
            (sink,) = self.beats
        return [dict(beat.fields) for beat in self.beats[sink]]


@dataclass
class _Pending:
    frame: int
    frame_id: int
    words: int
    sent_at: int
    taken_at: int | None = None  # cycle its last word was taken, once every source took it
    sources_done: int = 0
    last_taken: int = 0
    beats: dict[str, tuple[Beat, ...]] = field(default_factory=dict)


class Device:
    """A network behind a link: send frames, get each frame's results (module docstring).

    Parameters
    ----------
    codec : Codec
        Of the network's manifest.
    link : SimLink or ProcessLink
        The transport.
    timeout_cycles : int, optional
        Default cycle budget of a frame: :data:`DEFAULT_TIMEOUT_CYCLES` simulated cycles, or on a board
        two seconds of its clock (:mod:`sw.serial`).
    """

    def __init__(self, codec: Codec, link, timeout_cycles: int = DEFAULT_TIMEOUT_CYCLES):
        self.codec = codec
        self.link = link
        self.timeout_cycles = timeout_cycles
        self._pending: deque[_Pending] = deque()
        self._ready: deque[FrameResult] = deque()
        self._sent = 0           # frames sent
        self._ended = dict.fromkeys((p.node for p in codec.sinks), 0)  # frame ends seen per sink
        self._partial: dict[str, list[Beat]] = {p.node: [] for p in codec.sinks}
        self._taken = [0] * len(codec.sources)  # frames whose last word each source took
        self._now = 0            # the device's cycle count
        self._last_accept = 0    # cycle a source last took a word
        self._answered_at = 0    # cycle the last frame was answered
        self._stream_ended = False
        self.eos: set[str] = set()
        """Sinks that delivered end of stream (after ``send(..., end_of_stream=True)``)."""
        self._dead: DeviceError | None = None

    # -- sending ---------------------------------------------------------------------------------
    def send(self, frame_id: int, pixels: Pixels | Mapping[str, Pixels], *, end_of_stream: bool = False) -> None:
        """Queue one frame: ``pixels`` for the only source, or ``{source node: pixels}`` for every source.

        ``end_of_stream``: the stream ends after this frame (``tuser[0]`` on its last word); no frame
        may follow.

        Raises
        ------
        sw.codec.FrameError
            An empty frame or a pixel that does not fit (nothing is sent).
        DeviceError
            The stream has ended, or the device is dead.
        """
        self._send([(frame_id, pixels)], end_of_stream)

    def send_frames(self, frames: Iterable[tuple[int, Pixels | Mapping[str, Pixels]]]) -> int:
        """Queue ``(frame_id, pixels)`` pairs in order (one transfer to the device); returns how many."""
        batch = list(frames)
        self._send(batch, False)
        return len(batch)

    def _send(self, frames: list, end_of_stream: bool) -> None:
        self._check_alive()
        if self._stream_ended:
            raise DeviceError("the stream has ended (end_of_stream was sent); open a new device")
        packets, pending = [], []
        for n, (frame_id, pixels) in enumerate(frames):
            last = end_of_stream and n == len(frames) - 1
            by_source = pixels if isinstance(pixels, Mapping) else {None: pixels}
            if len(by_source) != len(self.codec.sources):
                raise DeviceError(f"frame {frame_id!r}: {self.codec.name} has {len(self.codec.sources)} sources "
                                  f"({', '.join(p.node for p in self.codec.sources)}); give pixels for each",
                                  frame_id)
            words = 0
            for source, values in by_source.items():
                packets.append(self.codec.pack_frame(frame_id, values, source, end_of_stream=last))
                words += len(values)
            pending.append(_Pending(self._sent + len(pending), frame_id, words, self._now))
        if not packets:
            return
        self._pending.extend(pending)  # pending from here: a device dying now names them
        self._sent += len(pending)
        try:
            self._call("push", b"".join(packets))
        except DeviceDied:
            raise
        except DeviceError:  # refused by a live device: not sent
            for _ in pending:
                self._pending.pop()
            self._sent -= len(pending)
            raise
        self._stream_ended = end_of_stream

    # -- receiving -------------------------------------------------------------------------------
    def results(self, timeout_cycles: int | None = None) -> list[FrameResult]:
        """Run until every frame sent so far is answered; return the results not returned yet, in order.

        Raises
        ------
        FrameTimeout, DeviceDied, ProtocolError
            See the module docstring; ``error.results`` holds what was answered.
        """
        self._advance(self._sent, timeout_cycles)
        return self._take_ready()

    def receive(self, timeout_cycles: int | None = None) -> FrameResult:
        """The next result in frame order, running the device until it is there.

        Raises
        ------
        DeviceError
            Nothing was sent that is not answered and returned already.
        FrameTimeout, DeviceDied, ProtocolError
            As :meth:`results`.
        """
        if not self._ready:
            if not self._pending:
                raise DeviceError("receive: no frame is pending")
            self._advance(self._pending[0].frame + 1, timeout_cycles)
        return self._ready.popleft()

    def stream(self, frames: Iterable[tuple[int, Pixels | Mapping[str, Pixels]]], window: int = 256,
               timeout_cycles: int | None = None) -> Iterator[FrameResult]:
        """Send ``frames`` in batches of ``window`` and yield every result in order (bounded memory)."""
        frames = iter(frames)
        while True:
            batch = [item for _, item in zip(range(window), frames, strict=False)]
            if batch:
                self.send_frames(batch)
            if not self._pending and not self._ready:
                return
            yield from self.results(timeout_cycles)

    def run(self, cycles: int) -> int:
        """Run the device ``cycles`` cycles, keeping what is answered for the next :meth:`results` or
        :meth:`receive`; returns how many results wait there."""
        self._check_alive()
        if cycles > 0:
            self._absorb(self._call("step", cycles, 0))
        return len(self._ready)

    @property
    def pending(self) -> list[int]:
        """Ids of the frames sent and not answered yet, in order."""
        return [p.frame_id for p in self._pending]

    @property
    def cycles(self) -> int:
        """Cycles the device has run (as of the last call that ran it)."""
        return self._now

    @property
    def frames_sent(self) -> int:
        """Frames sent since the device was opened."""
        return self._sent

    def close(self) -> None:
        """Stop the device (idempotent). Unreturned results are dropped; call :meth:`results` first."""
        if self.link is not None:
            self.link.close()
            self.link = None
            self._dead = self._dead or DeviceError("the device is closed")

    def __enter__(self) -> Self:
        return self

    def __exit__(self, *exc) -> None:
        self.close()

    # -- the run loop ----------------------------------------------------------------------------
    def _advance(self, target: int, timeout_cycles: int | None) -> None:
        """Run until ``target`` frames (counted from the first) are answered."""
        budget = self.timeout_cycles if timeout_cycles is None else timeout_cycles
        self._check_alive()
        while self._pending and self._pending[0].frame < target:
            oldest = self._pending[0]
            deadline = self._deadline(oldest, budget)
            if self._now >= deadline:
                raise FrameTimeout(self._timeout_message(oldest, budget), oldest.frame_id, self._take_ready())
            self._absorb(self._call("step", deadline - self._now, target))

    def _deadline(self, frame: _Pending, budget: int) -> int:
        if frame.taken_at is not None:
            return max(frame.taken_at, self._answered_at) + budget
        return max(self._last_accept, frame.sent_at, self._answered_at) + budget

    def _timeout_message(self, frame: _Pending, budget: int) -> str:
        taken = (f"its last word was taken at cycle {frame.taken_at}" if frame.taken_at is not None
                 else f"its {frame.words} words were not all taken (the last word any source took: "
                      f"cycle {self._last_accept})")
        return (f"frame {frame.frame_id!r} (frame {frame.frame} on {self.codec.name}) has no result within "
                f"{budget} cycles: {taken}; the previous frame was answered at cycle {self._answered_at}; "
                f"the device is at cycle {self._now} with {len(self._pending)} frame(s) pending; results "
                "answered before it are in error.results")

    def _absorb(self, step: Mapping) -> None:
        self._now = step["now"]
        self._last_accept = max(self._last_accept, step["last_accept"])
        for i, cycles in enumerate(step["frame_ends"]):
            for cycle in cycles:
                frame = self._taken[i]
                self._taken[i] += 1
                record = self._find(frame)
                if record is not None:
                    record.sources_done += 1
                    record.last_taken = max(record.last_taken, cycle)
                    if record.sources_done == len(self.codec.sources):
                        record.taken_at = record.last_taken
        for port, packet, cycles in zip(self.codec.sinks, step["packets"], step["beat_cycles"], strict=True):
            for beat, cycle in zip(self.codec.unpack_beats(packet), cycles, strict=True):
                self._beat(port.node, beat, cycle)

    def _find(self, frame: int) -> _Pending | None:
        if self._pending and self._pending[0].frame <= frame:
            at = frame - self._pending[0].frame
            if at < len(self._pending):
                return self._pending[at]
        return None

    def _beat(self, sink: str, beat: Beat, cycle: int) -> None:
        frame = self._ended[sink]
        if beat.kind == "eos":
            self.eos.add(sink)
            return
        record = self._find(frame)
        if record is None:
            self._fail(ProtocolError(f"{self.codec.name}: sink {sink} sent a {beat.kind} beat (index {beat.index}) "
                                     f"after the frame end of every frame sent ({self._sent})", None,
                                     self._take_ready()))
        if beat.kind == "data":
            self._partial[sink].append(beat)
            return
        if beat.frame != self.codec.frame_number(frame):
            self._fail(ProtocolError(f"frame {record.frame_id!r}: sink {sink} sent frame end {beat.frame}, expected "
                                     f"{self.codec.frame_number(frame)} (frame {frame} on {self.codec.name})",
                                     record.frame_id, self._take_ready()))
        record.beats[sink] = tuple(self._partial[sink])
        self._partial[sink] = []
        self._ended[sink] += 1
        if len(record.beats) == len(self._ended):
            self._pending.popleft()  # sinks end frames in order, so the record is the oldest
            self._answered_at = cycle
            self._ready.append(FrameResult(record.frame_id, record.frame, dict(record.beats), cycle))

    # -- failures --------------------------------------------------------------------------------
    def _call(self, method: str, *args):
        if self.link is None:
            raise DeviceError("the device is closed")
        try:
            return self.link.call(method, *args)
        except LinkDown as down:
            oldest = self._pending[0] if self._pending else None
            what = (f"frame {oldest.frame_id!r} (frame {oldest.frame} on {self.codec.name}) and "
                    f"{len(self._pending) - 1} later frame(s) pending" if oldest else "no frame pending")
            self._fail(DeviceDied(f"the {self.codec.name} device died ({down}) with {what}; results answered "
                                  "before are in error.results", oldest.frame_id if oldest else None,
                                  self._take_ready()))

    def _fail(self, error: DeviceError) -> None:
        self._dead = error
        raise error

    def _check_alive(self) -> None:
        if self._dead is not None:
            raise type(self._dead)(f"device unusable: {self._dead}", self._dead.frame_id, self._take_ready())

    def _take_ready(self) -> list[FrameResult]:
        out = list(self._ready)
        self._ready.clear()
        return out


class SimLink:
    """The simulated device in this process: frame packets in, beats packets out (:mod:`sw.codec`).

    ``call("push", packets)`` queues frame packets; ``call("step", max_cycles, frames)`` runs until
    ``frames`` frame ends reached every sink (or the budget) and returns what happened.
    """

    def __init__(self, sim, codec: Codec):
        self.sim = sim
        self.codec = codec
        self._reported = [0] * len(codec.sources)
        self.pid = None

    def call(self, method: str, *args):
        return getattr(self, f"_{method}")(*args)

    def _push(self, packets: bytes) -> None:
        """Queue every frame packet of ``packets``; one harness call per source port."""
        words: list[list[bytes]] = [[] for _ in self.codec.sources]
        flags: list[list[np.ndarray]] = [[] for _ in self.codec.sources]
        at = 0
        while at < len(packets):
            packet, used = read_packet(packets, self.codec, at)
            if packet is None or isinstance(packet, list):
                raise ValueError(f"push: bytes {at}..{len(packets)} are not a whole frame packet")
            last = np.zeros(packet.count, dtype=np.uint8)
            last[-1] = 1 | (2 if packet.end_of_stream else 0)  # tlast, tuser[0]
            words[packet.port.number].append(packet.words)
            flags[packet.port.number].append(last)
            at += used
        for number, (data, marks) in enumerate(zip(words, flags, strict=True)):
            if data:
                self.sim.push_bytes(number, b"".join(data), np.concatenate(marks).tobytes())

    def _step(self, max_cycles: int, frames: int) -> dict:
        run = self.sim.run(max_cycles, until_messages=frames)
        packets, beat_cycles = [], []
        for port in self.codec.sinks:
            raw = np.frombuffer(self.sim.read_bytes(port.number), dtype=np.uint8).reshape(-1, port.beat_bytes + 8)
            packets.append(self.codec.pack_beats(port.number, raw[:, :port.beat_bytes].tobytes()))
            beat_cycles.append(np.ascontiguousarray(raw[:, port.beat_bytes:]).view("<u8").ravel().tolist())
        counters = self.sim.counters()
        frame_ends = []
        for i, port in enumerate(self.codec.sources):
            done = counters[port.node]["frames"]
            frame_ends.append([self.sim.frame_end_cycle(i, k) for k in range(self._reported[i], done)])
            self._reported[i] = done
        return {"cycles": run.cycles, "reason": run.reason, "now": counters["cycles"], "packets": packets,
                "beat_cycles": beat_cycles, "frame_ends": frame_ends,
                "last_accept": max(counters[p.node]["last_accept"] for p in self.codec.sources)}

    def _set_pause(self, port: str, probability: float, seed: int, sink: bool) -> None:
        self.sim.set_pause(port, probability, seed, sink=sink)

    def close(self) -> None:
        self.sim.close()


class ProcessLink:
    """A :class:`SimLink` in a child Python process, over a socket pair (``multiprocessing`` connections).

    The child is started with ``subprocess`` (``python -c``), not ``multiprocessing``, so the caller's
    main module is never imported again and scripts need no ``__main__`` guard. It exits when the
    parent closes the link or dies (end of file on its socket).

    Members
    -------
    pid : int
        The child's process id (a test may kill it).
    """

    def __init__(self, library: Path, manifest: Mapping, reset_cycles: int = RESET_CYCLES,
                 start_timeout_s: float = 120.0):
        ours, theirs = socket.socketpair()
        with theirs:
            self.process = subprocess.Popen(
                [sys.executable, "-c", "import sys; from sfdf.sw.device import _serve; _serve(int(sys.argv[1]))",
                 str(theirs.fileno())], pass_fds=[theirs.fileno()], stdin=subprocess.DEVNULL)
        self._conn = Connection(ours.detach())
        self.pid = self.process.pid
        try:
            self._conn.send((str(library), dict(manifest), reset_cycles))
            if not self._conn.poll(start_timeout_s):
                raise DeviceDied(f"the simulator process did not start within {start_timeout_s:g} s")
            status, value = self._conn.recv()
        except (EOFError, OSError):
            self.close()
            raise DeviceDied(f"the simulator process failed to start ({self._exit()})") from None
        except DeviceDied:
            self.close()
            raise
        if status != "ready":
            self.close()
            raise DeviceError(f"the simulator process failed to start: {value}")

    def call(self, method: str, *args):
        try:
            self._conn.send((method, args))
            status, value = self._conn.recv()
        except (EOFError, OSError):
            raise LinkDown(f"simulator process {self.pid} {self._exit()}") from None
        if status == "error":
            raise DeviceError(f"simulator process: {value}")
        return value

    def close(self) -> None:
        """Ask the child to stop, then make sure it has (idempotent)."""
        if self.process is None:
            return
        with contextlib.suppress(OSError):
            self._conn.send(("close", ()))
        self._conn.close()
        try:
            self.process.wait(5)
        except subprocess.TimeoutExpired:
            self.process.kill()
            self.process.wait(5)
        self.process = None

    def _exit(self) -> str:
        try:
            code = self.process.wait(1)
        except subprocess.TimeoutExpired:
            return "stopped answering"
        if code < 0:
            return f"was killed by signal {signal.Signals(-code).name}"
        return f"exited with status {code}"


def _serve(fd: int) -> None:
    """The child of :class:`ProcessLink`: one :class:`SimLink`, serving calls until ``close`` or EOF.

    Errors of a call (bad arguments, the simulator refusing) go back to the parent; anything else is a
    bug that ends the process, which the parent reports as :class:`DeviceDied`.
    """
    from sfdf.cosim.fastsim import FastSim

    conn = Connection(fd)
    library, manifest, reset_cycles = conn.recv()
    try:
        link = SimLink(FastSim(library, manifest, reset_cycles), Codec(manifest))
    except (RuntimeError, ValueError, KeyError, OSError) as error:  # reported to the parent, which raises it
        conn.send(("error", f"{type(error).__name__}: {error}"))
        return
    conn.send(("ready", os.getpid()))
    while True:
        try:
            method, args = conn.recv()
        except (EOFError, OSError):
            break
        if method == "close":
            break
        try:
            conn.send(("ok", link.call(method, *args)))
        except (RuntimeError, ValueError, KeyError, OSError) as error:  # the parent raises DeviceError with it
            conn.send(("error", f"{type(error).__name__}: {error}"))
    link.close()


def _library(path: Path, build_dir: str | os.PathLike) -> tuple[Path, dict]:
    """The harness library and manifest of a manifest path, or of a spec generated into a scratch folder
    (the build copies what it needs, so processes opening the same spec at once never share files)."""
    from sfdf.cosim.fastsim import build

    if path.suffix == ".toml":
        from sfdf.gen.spec import load_spec
        from sfdf.hdl.generate import generate

        with tempfile.TemporaryDirectory(prefix="sfdf-spec-") as scratch:
            return _library(generate(load_spec(path), scratch)[1], build_dir)
    facts = json.loads(path.read_text())
    verilog = path.with_name(f"{facts['name']}.v")
    if not verilog.is_file():
        raise FileNotFoundError(f"{verilog} (the Verilog beside {path}) does not exist; run sfdf generate")
    return build(verilog, facts, build_dir), facts


def open_device(manifest: str | os.PathLike, backend: str = "sim", *, build_dir: str | os.PathLike = "build/fastsim",
                process: bool = True, timeout_cycles: int | None = None, backpressure: float = 0.0,
                idle: float = 0.0, seed: int = 1, transport=None) -> Device:
    """Open the network of ``manifest`` (``<name>.json`` beside ``<name>.v``, as ``sfdf generate`` writes them).

    Parameters
    ----------
    manifest : path
        The manifest; the Verilog is ``<name>.v`` in the same folder. A spec (``*.toml``) is generated
        first (:func:`sfdf.hdl.generate.generate`; an unsafe spec is refused).
    backend : {"sim", "serial:<port>"}
        ``"sim"``: the fast Verilator harness (built once per design under ``build_dir``).
        ``"serial:/dev/ttyUSB0"`` (any pyserial URL): a board ``sfdf build -o DIR`` made, ``manifest``
        being ``DIR/<name>.json`` (:mod:`sw.serial`).
    process : bool
        Run the simulator in a child process (default) or in this one.
    timeout_cycles : int, optional
        Default cycle budget of a frame: :data:`DEFAULT_TIMEOUT_CYCLES` simulated cycles, or on a board
        two seconds of its clock (:mod:`sw.serial`).
    backpressure, idle : float
        Probability per cycle that each sink holds ``tready`` low / each source idles (tests).
    seed : int
        Seeds the back-pressure and idle patterns.
    transport : sw.serial.Transport, optional
        ``serial:`` only: an open transport instead of the port (tests use a fake board).

    Returns
    -------
    Device
        A context manager.

    Raises
    ------
    FileNotFoundError
        The manifest or its Verilog is missing.
    cosim.toolchain.ToolchainError, cosim.fastsim.FastSimError
        The harness cannot be built.
    """
    if backend.startswith("serial:"):
        if backpressure or idle:
            raise ValueError("backpressure and idle are simulator knobs; a board has none")
        from .serial import open_board

        return open_board(manifest, backend.removeprefix("serial:"), timeout_cycles=timeout_cycles,
                          transport=transport)
    if backend != "sim":
        raise ValueError(f"backend {backend!r}: only 'sim' and 'serial:<port>' (such as serial:/dev/ttyUSB0) exist")
    from sfdf.cosim.fastsim import FastSim

    timeout_cycles = DEFAULT_TIMEOUT_CYCLES if timeout_cycles is None else timeout_cycles

    library, facts = _library(Path(manifest), build_dir)
    codec = Codec(facts)
    link = ProcessLink(library, facts) if process else SimLink(FastSim(library, facts, RESET_CYCLES), codec)
    device = Device(codec, link, timeout_cycles)
    try:
        for n, port in enumerate(codec.sinks):
            if backpressure:
                link.call("set_pause", port.node, backpressure, seed * 7919 + n, True)
        for n, port in enumerate(codec.sources):
            if idle:
                link.call("set_pause", port.node, idle, seed * 104729 + n, False)
    except BaseException:
        device.close()
        raise
    return device

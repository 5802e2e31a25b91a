"""AXI4-Stream bus, source and sink for cocotb 2 (the cocotbext-axi API on sfdf's port names).

A bus is a bundle of DUT signals (:class:`AxisBus`, ``from_prefix(dut, "s_axis_u")``); drivers take
``(bus, clock, reset)`` and share one API: ``send``/``send_nowait``, ``recv``/``recv_nowait``,
``idle``, ``wait``, ``set_pause_generator``. A frame is a list of words; the source raises ``tlast``
on its last word. The sink delivers beats ``(tdata, tuser, tlast)``.

Sampling: each driver reads the handshake in the read-only phase of a cycle and acts on the next
rising edge, so a beat moves exactly when ``tvalid`` and ``tready`` were both high before that edge,
on any simulator.
"""

from __future__ import annotations

import logging
from collections import deque
from collections.abc import Iterable, Iterator, Sequence
from typing import Any, NamedTuple

import cocotb
from cocotb.queue import Queue, QueueEmpty, QueueFull
from cocotb.simtime import get_sim_time
from cocotb.triggers import Event, ReadOnly, RisingEdge

__all__ = ["AxisBeat", "AxisBus", "AxisSink", "AxisSource", "QueueEmpty", "QueueFull"]


class AxisBeat(NamedTuple):
    """One transfer seen by :class:`AxisSink`; ``tuser``/``tlast`` are ``None`` when the bus lacks them."""

    tdata: int
    tuser: int | None
    tlast: bool | None


class AxisBus:
    """The signals of one AXI4-Stream port.

    Parameters
    ----------
    name : str
        Port prefix, for messages (``"s_axis_u"``).
    tdata, tvalid, tready : cocotb handle
        Required signals.
    tlast, tuser : cocotb handle or None
        Optional signals.

    Members
    -------
    name : str
    tdata, tvalid, tready, tlast, tuser
        The handles (``tlast``/``tuser`` may be ``None``).
    log : logging.Logger
        ``cocotb.<dut>.<name>``: the one logger of this bus, shared by its drivers.
    """

    signals = ("tdata", "tvalid", "tready")
    optional_signals = ("tlast", "tuser")

    def __init__(self, name: str, tdata, tvalid, tready, tlast=None, tuser=None, *,
                 log_parent: str = "cocotb"):
        self.name = name
        self.tdata, self.tvalid, self.tready, self.tlast, self.tuser = tdata, tvalid, tready, tlast, tuser
        self.log = logging.getLogger(f"{log_parent}.{name}")

    @classmethod
    def from_prefix(cls, dut, prefix: str) -> AxisBus:
        """Bind ``<prefix>_tdata``, ``_tvalid``, ``_tready`` and, when present, ``_tlast``, ``_tuser``.

        Raises
        ------
        AttributeError
            A required signal is missing; the message lists the signals the DUT has with that prefix.
        """
        found = {}
        for name in cls.signals + cls.optional_signals:
            found[name] = _child(dut, f"{prefix}_{name}")
        missing = [name for name in cls.signals if found[name] is None]
        if missing:
            have = sorted(handle._name for handle in dut if handle._name.startswith(prefix))
            raise AttributeError(f"{dut._name} has no {', '.join(f'{prefix}_{m}' for m in missing)} "
                                 f"(signals with prefix {prefix!r}: {have or 'none'})")
        return cls(prefix, **found, log_parent=f"cocotb.{dut._name}")

    @property
    def tdata_width(self) -> int:
        """Bits of ``tdata``."""
        return len(self.tdata)

    @property
    def tuser_width(self) -> int:
        """Bits of ``tuser``; 0 when the bus has none."""
        return 0 if self.tuser is None else len(self.tuser)

    def __repr__(self) -> str:
        return f"AxisBus({self.name!r}, tdata={self.tdata_width} bits, tuser={self.tuser_width} bits)"


class _Driver:
    """What sources and sinks share: clock, reset, pause generator, handshake counter."""

    def __init__(self, bus: AxisBus, clock, reset=None, *, queue_limit: int | None = None):
        self.bus = bus
        self.clock = clock
        self.reset = reset
        self.log = bus.log
        self.queue_limit = queue_limit
        self.count = 0
        """Beats transferred so far (handshakes), a probe for :class:`sfdf.cosim.watchdog.DeadlockWatchdog`."""
        self._pause: Iterator[Any] | None = None
        self._task = cocotb.start_soon(self._run())

    def set_pause_generator(self, generator: Iterable[Any] | None = None) -> None:
        """Pause (a true item) or run (a false item) one cycle per item; ``None`` or the end: never pause.

        Example: ``set_pause_generator(itertools.cycle([1, 1, 0]))`` runs one cycle in three.
        """
        self._pause = None if generator is None else iter(generator)

    def clear_pause_generator(self) -> None:
        """Never pause again."""
        self._pause = None

    def kill(self) -> None:
        """Stop driving the bus."""
        self._task.cancel()

    def _paused(self) -> bool:
        if self._pause is None:
            return False
        try:
            return bool(next(self._pause))
        except StopIteration:
            self._pause = None
            return False

    def _in_reset(self) -> bool:
        return self.reset is not None and bool(self.reset.value)

    def _read(self, handle, what: str) -> int:
        value = handle.value
        try:
            return int(value)
        except ValueError:
            raise ValueError(f"{self.bus.name}: {what} is {value} (not 0/1) on beat {self.count} "
                             f"at {get_sim_time('ns'):g} ns") from None

    async def _run(self) -> None:
        raise NotImplementedError


class AxisSource(_Driver):
    """Drive frames into an AXI4-Stream port (``tvalid``, ``tdata``, ``tlast``, ``tuser``).

    Once ``tvalid`` is high it stays high, with the same beat, until the DUT takes it; the pause
    generator is consulted on each cycle where a new beat could be presented.

    Parameters
    ----------
    bus : AxisBus
    clock : cocotb handle
        Rising edges time the transfers.
    reset : cocotb handle or None
        Active-high: ``tvalid`` stays low while it is high.
    queue_limit : int or None
        Most frames waiting; ``send`` waits and ``send_nowait`` raises :class:`QueueFull` past it.

    Members
    -------
    count : int
        Beats accepted by the DUT so far.
    """

    def __init__(self, bus: AxisBus, clock, reset=None, *, queue_limit: int | None = None):
        self._frames: deque[tuple[list[int], list[int] | None]] = deque()
        self._space = Event()
        self._queued = Event()
        self._idle = Event()
        self._idle.set()
        self._active = False
        super().__init__(bus, clock, reset, queue_limit=queue_limit)
        bus.tvalid.value = 0

    async def send(self, frame: Sequence[int], tuser: int | Sequence[int] | None = None) -> None:
        """Queue ``frame``, waiting for room when the queue is at ``queue_limit``."""
        while self._full():
            self._space.clear()
            await self._space.wait()
        self.send_nowait(frame, tuser)

    def send_nowait(self, frame: Sequence[int], tuser: int | Sequence[int] | None = None) -> None:
        """Queue ``frame`` (a non-empty sequence of words); ``tuser`` is one value per word or one for all.

        Raises
        ------
        QueueFull
            The queue is at ``queue_limit``.
        ValueError
            The frame is empty, a word does not fit ``tdata``, or ``tuser`` does not fit the bus.
        """
        if self._full():
            raise QueueFull(f"{self.bus.name}: {len(self._frames)} frames queued, limit {self.queue_limit}")
        words = [int(word) for word in frame]
        if not words:
            raise ValueError(f"{self.bus.name}: a frame needs at least one word, not 0")
        _check_fit(self.bus.name, "tdata", words, self.bus.tdata_width)
        users = None
        if tuser is not None:
            if self.bus.tuser is None:
                raise ValueError(f"{self.bus.name}: tuser given but the bus has no tuser")
            users = [int(tuser)] * len(words) if isinstance(tuser, int) else [int(u) for u in tuser]
            if len(users) != len(words):
                raise ValueError(f"{self.bus.name}: {len(users)} tuser values for {len(words)} words")
            _check_fit(self.bus.name, "tuser", users, self.bus.tuser_width)
        self._frames.append((words, users))
        self._idle.clear()
        self._queued.set()

    def idle(self) -> bool:
        """No frame queued and none in flight."""
        return not self._frames and not self._active

    async def wait(self) -> None:
        """Return once every queued frame has been accepted."""
        while not self.idle():
            await self._idle.wait()

    def _full(self) -> bool:
        return self.queue_limit is not None and len(self._frames) >= self.queue_limit

    async def _run(self) -> None:
        bus = self.bus
        words: list[int] = []
        users: list[int] | None = None
        valid = False
        while True:
            if not valid and not words and not self._frames:
                self._queued.clear()
                await self._queued.wait()  # nothing to drive: sleep instead of polling every cycle
            await ReadOnly()
            ready = valid and self._read(bus.tready, "tready")
            in_reset = self._in_reset()
            await RisingEdge(self.clock)
            if in_reset:
                if words:
                    self.log.warning("%s: reset dropped a frame with %d words left", bus.name, len(words))
                words, users, valid = [], None, False
                bus.tvalid.value = 0
                continue
            if ready:
                self.count += 1
                valid = False
                if not words:
                    self._active = False
                    if not self._frames:
                        self._idle.set()
            if valid:
                continue  # AXI4-Stream: tvalid stays high, with the same beat, until the handshake
            if not words and self._frames:
                words, users = self._frames.popleft()
                self._active = True
                self._space.set()
            if not words or self._paused():
                bus.tvalid.value = 0
                continue
            bus.tdata.value = words.pop(0)
            if bus.tlast is not None:
                bus.tlast.value = int(not words)
            if bus.tuser is not None:
                bus.tuser.value = users.pop(0) if users else 0
            bus.tvalid.value = 1
            valid = True


class AxisSink(_Driver):
    """Accept beats from an AXI4-Stream port, with back-pressure from a pause generator.

    ``tready`` is high unless the pause generator says pause for that cycle (or the queue is at
    ``queue_limit``).

    Parameters
    ----------
    bus : AxisBus
    clock : cocotb handle
    reset : cocotb handle or None
        Active-high: ``tready`` stays low and nothing is sampled while it is high.
    queue_limit : int or None
        Most beats held; ``tready`` stays low while the queue is at it.

    Members
    -------
    count : int
        Beats received so far.
    """

    def __init__(self, bus: AxisBus, clock, reset=None, *, queue_limit: int | None = None):
        self._beats: Queue[AxisBeat] = Queue()
        self._arrived = Event()
        self._in_frame = False
        super().__init__(bus, clock, reset, queue_limit=queue_limit)
        bus.tready.value = 0

    async def recv(self) -> AxisBeat:
        """The next beat, waiting for it."""
        return await self._beats.get()

    def recv_nowait(self) -> AxisBeat:
        """The next beat.

        Raises
        ------
        QueueEmpty
            No beat is waiting.
        """
        return self._beats.get_nowait()

    def empty(self) -> bool:
        """No beat is waiting."""
        return self._beats.empty()

    def idle(self) -> bool:
        """Not inside a frame: the last beat (if any) had ``tlast``."""
        return not self._in_frame

    async def wait(self) -> None:
        """Return once a beat is waiting."""
        while self._beats.empty():
            self._arrived.clear()
            await self._arrived.wait()

    async def _run(self) -> None:
        bus = self.bus
        ready = False
        while True:
            await ReadOnly()
            if ready and not self._in_reset() and self._read(bus.tvalid, "tvalid"):
                self._take(bus)
            await RisingEdge(self.clock)
            full = self.queue_limit is not None and self._beats.qsize() >= self.queue_limit
            drive = not (self._in_reset() or full or self._paused())
            if drive != ready:
                bus.tready.value = int(drive)
            ready = drive

    def _take(self, bus: AxisBus) -> None:
        tdata = self._read(bus.tdata, "tdata")
        tuser = None if bus.tuser is None else self._read(bus.tuser, "tuser")
        tlast = None if bus.tlast is None else bool(self._read(bus.tlast, "tlast"))
        self.count += 1
        self._in_frame = tlast is False
        self._beats.put_nowait(AxisBeat(tdata, tuser, tlast))
        self._arrived.set()


def _child(dut, name: str):
    try:
        return getattr(dut, name)
    except AttributeError:
        return None


def _check_fit(port: str, field: str, values: list[int], width: int) -> None:
    for position, value in enumerate(values):
        if not 0 <= value < 1 << width:
            raise ValueError(f"{port}: {field} value {value} (word {position}) does not fit {width} bits "
                             f"(0..{(1 << width) - 1})")


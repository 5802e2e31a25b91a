"""A device session: frames sent over a :class:`~sfdf.sw.device.link.Link`, each frame's results matched back to it.

Frames and results. Every input frame yields exactly its results: per sink, the data beats the network
emits for it, then its frame-end message (docs/hardware.md: the source turns ``tlast`` into a frame
end ordered precisely with the data). Frames are processed in order, and the frame end carries the
frame number mod ``2^payload_width``, so the device checks each one against the frame it expects and
maps results back to the caller's frame ids. The variance network gives one data beat per frame,
the ``n``/``sum``/``sum_sq`` of :attr:`FrameResult.fields`.

Failures. A frame whose results do not appear within ``timeout_cycles`` cycles of the later of (its last
word taken by the device, the previous frame answered; while its words are still being taken: the last
word taken) raises :class:`FrameTimeout` naming the frame id; the frames stay pending, so a later call
with a larger budget can still collect them. A device that died (the child process killed or crashed,
the board gone) raises :class:`DeviceDied` naming the oldest pending frame; so does every later call.
Results already answered are never lost: an error hands them over in ``error.results``.

:func:`sfdf.sw.device.open_device` makes a session on the backend asked for; users import
:class:`Device` from :mod:`sfdf.sw.device`.
"""

from __future__ import annotations

import contextlib
from collections import deque
from collections.abc import Iterable, Iterator, Mapping, Sequence
from dataclasses import dataclass, field
from typing import NoReturn, Self

import numpy as np

from .codec import Beat, Codec
from .link import Link, LinkDown, StepResult
from .results import DeviceDied, DeviceError, FrameResult, FrameTimeout, ProtocolError

__all__ = ["DEFAULT_TIMEOUT_CYCLES", "Device", "Pixels"]

#: Default cycle budget of one frame (see the module docstring).
DEFAULT_TIMEOUT_CYCLES = 1_000_000

#: One source's pixels of one frame.
Pixels = Sequence[int] | np.ndarray


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
    link : Link
        The transport (:mod:`sfdf.sw.device.link`); the session closes it.
    timeout_cycles : int, optional
        Default cycle budget of a frame: :data:`DEFAULT_TIMEOUT_CYCLES` simulated cycles, or on a board
        two seconds of its clock, thirty on a simulated board (:mod:`sfdf.sw.device.uart`).
    """

    def __init__(self, codec: Codec, link: Link, timeout_cycles: int = DEFAULT_TIMEOUT_CYCLES):
        self.codec = codec
        self.link: Link | None = link
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
            with self._live_link() as link:
                link.push(b"".join(packets))
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
            with self._live_link() as link:
                step = link.step(cycles, 0)
            self._absorb(step)
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
            with self._live_link() as link:
                step = link.step(deadline - self._now, target)
            self._absorb(step)

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

    def _absorb(self, step: StepResult) -> None:
        self._now = step.now
        self._last_accept = max(self._last_accept, step.last_accept)
        for i, cycles in enumerate(step.frame_ends):
            for cycle in cycles:
                frame = self._taken[i]
                self._taken[i] += 1
                record = self._find(frame)
                if record is not None:
                    record.sources_done += 1
                    record.last_taken = max(record.last_taken, cycle)
                    if record.sources_done == len(self.codec.sources):
                        record.taken_at = record.last_taken
        for port, packet, cycles in zip(self.codec.sinks, step.packets, step.beat_cycles, strict=True):
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
    @contextlib.contextmanager
    def _live_link(self) -> Iterator[Link]:
        """The link, for one call; its going down kills the device (:class:`DeviceDied`)."""
        if self.link is None:
            raise DeviceError("the device is closed")
        try:
            yield self.link
        except LinkDown as down:
            oldest = self._pending[0] if self._pending else None
            what = (f"frame {oldest.frame_id!r} (frame {oldest.frame} on {self.codec.name}) and "
                    f"{len(self._pending) - 1} later frame(s) pending" if oldest else "no frame pending")
            self._fail(DeviceDied(f"the {self.codec.name} device died ({down}) with {what}; results answered "
                                  "before are in error.results", oldest.frame_id if oldest else None,
                                  self._take_ready()))

    def _fail(self, error: DeviceError) -> NoReturn:
        self._dead = error
        raise error

    def _check_alive(self) -> None:
        if self._dead is not None:
            raise type(self._dead)(f"device unusable: {self._dead}", self._dead.frame_id, self._take_ready())

    def _take_ready(self) -> list[FrameResult]:
        out = list(self._ready)
        self._ready.clear()
        return out

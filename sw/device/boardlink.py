"""The board's side of the device API: :class:`BoardLink`, a :class:`~sfdf.sw.device.link.Link` over a byte
:class:`Transport` to a board that ``sfdf build`` made.

The link speaks :mod:`sfdf.sw.device.codec`'s packets in both directions (:mod:`sfdf.boards.link` is the hardware
side). Opening sends a UART *break*, which resets the board's network and link, and waits for the board's
hello (an empty beats packet): frame numbering starts at 0 again, whatever the board did before.

Acknowledgements. The board answers every frame packet with a status packet (an empty beats packet for
sink 0 whose byte 3, 0 in :mod:`sfdf.sw.device.codec` and ignored by it, is 1: taken, or 2: dropped because it
arrived damaged or found no room; :class:`sfdf.boards.packets.Status`). A dropped frame would shift every
later result onto the wrong frame, so it ends the session: the link goes down
(:class:`~sfdf.sw.device.link.LinkDown`), the session raises :class:`~sfdf.sw.device.results.DeviceDied` naming it and
hands over what was answered before; reopening resets the board, and the frames can be sent again from
that one.

Flow control. A UART has no back-pressure, so the board keeps each frame in a buffer of ``buffer_words``
words per source (it checks the CRC before the network sees a word). The link keeps at most that many
words of each source sent and unanswered; it sends the rest as results come back. A frame longer than
the buffer is refused (:class:`~sfdf.sw.device.results.DeviceError`, nothing sent).

Time. The device API counts cycles; a board's are its clock's, read from the wall clock (``clk_hz``):
a beat arrives at the cycle it was read, and a frame's last word counts as taken once its last byte
has left the host at the baud rate.
"""

from __future__ import annotations

import logging
import time
from collections import deque
from collections.abc import Callable, Mapping
from typing import Protocol

from sfdf.boards.packets import BEATS_HEADER, BEATS_MAGIC, VERSION, Status

from .codec import Codec, FramePacket, FramingError, read_packet
from .link import LinkDown, StepResult
from .results import DeviceError

__all__ = ["BREAK_S", "HELLO_TIMEOUT_S", "BoardLink", "Transport"]

log = logging.getLogger(__name__)

#: How long a break lasts, and how long the board may take to say hello after it.
BREAK_S, HELLO_TIMEOUT_S = 0.05, 2.0
#: Bits on the line per byte (8N1).
_BITS_PER_BYTE = 10


class Transport(Protocol):
    """A byte pipe to the board (LiteX's comm interface)."""

    def read(self, size: int) -> bytes: ...          # up to ``size`` bytes, after a short wait at most
    def write(self, data: bytes) -> None: ...
    def send_break(self, duration: float) -> None: ...
    def reset_input_buffer(self) -> None: ...
    def close(self) -> None: ...


class BoardLink:
    """A :class:`~sfdf.sw.device.link.Link` to a board (module docstring).

    Parameters
    ----------
    transport : Transport
    codec : Codec
    board : mapping
        ``clk_hz``, ``baud`` and ``buffer_words`` (``<name>.board.json``).
    clock : callable
        Seconds, monotonic (tests may pass their own).
    hello_timeout_s : float
        How long :meth:`reset` waits for the hello (:data:`HELLO_TIMEOUT_S`; longer for a simulated board,
        whose process may wait for a loaded machine's CPU).
    """

    def __init__(self, transport: Transport, codec: Codec, board: Mapping, clock: Callable[[], float] = time.monotonic,
                 hello_timeout_s: float = HELLO_TIMEOUT_S):
        self.transport = transport
        self.codec = codec
        self.clk_hz = float(board["clk_hz"])
        self.baud = int(board["baud"])
        self.buffer_words = int(board["buffer_words"])
        self.clock = clock
        self.pid: int | None = None
        self.dropped_bytes = 0            # bytes skipped to find the next packet (line noise)
        self._rx = bytearray()
        self._queue: deque[tuple[int, FramePacket, bytes]] = deque()    # (frame, packet, bytes) unsent
        self._unanswered: deque[tuple[int, int, int]] = deque()        # (frame, source, words) sent
        self._outstanding = [0] * len(codec.sources)
        self._queued = [0] * len(codec.sources)                         # frame packets queued per source
        self._ends = [0] * len(codec.sinks)
        self._unacknowledged: deque[tuple[int, str]] = deque()          # (frame id, source) sent
        self._taken: deque[tuple[float, int]] = deque()                 # (time its last byte is out, source)
        self._line_free = 0.0                                          # when the host's bytes are all out
        self._start = clock()
        self.hello_timeout_s = hello_timeout_s
        self.reset()

    # -- the link's clock ------------------------------------------------------------------------
    def _cycles(self, at: float | None = None) -> int:
        return int(((self.clock() if at is None else at) - self._start) * self.clk_hz)

    # -- reset -----------------------------------------------------------------------------------
    def reset(self) -> None:
        """Break, then wait for the board's hello (module docstring).

        Raises
        ------
        sfdf.sw.device.results.DeviceError
            No hello within ``hello_timeout_s``.
        """
        timeout_s = self.hello_timeout_s
        self.transport.reset_input_buffer()
        self.transport.send_break(BREAK_S)
        self._rx.clear()
        deadline = self.clock() + timeout_s
        while self.clock() < deadline:
            self._rx += self.transport.read(4096)
            for sink, status, beats in self._packets():
                if sink == 0 and not beats and status == Status.HELLO:
                    self._rx.clear()  # nothing the board sends before its hello belongs to this session
                    self.dropped_bytes = 0
                    return
        raise DeviceError(f"no board answered on {getattr(self.transport, 'port', 'the link')} within "
                          f"{timeout_s:g} s of a break (is the bitstream loaded, the baud {self.baud}?)")

    # -- the Link protocol -----------------------------------------------------------------------
    def push(self, packets: bytes) -> None:
        """Queue ``packets`` and send what each source's window has room for (module docstring).

        Raises
        ------
        sfdf.sw.device.results.DeviceError
            The bytes are not whole frame packets, or a frame is longer than the board buffers (nothing
            is queued).
        LinkDown
            Writing to the board failed.
        """
        at, batch = 0, []
        while at < len(packets):
            packet, used = read_packet(packets, self.codec, at)
            if not isinstance(packet, FramePacket):
                raise DeviceError(f"push: bytes {at}..{len(packets)} are not a whole frame packet")
            if packet.count > self.buffer_words:
                raise DeviceError(f"frame {packet.frame_id!r} has {packet.count} words for {packet.port.node}; the "
                                  f"board buffers {self.buffer_words} per source (sfdf build --buffer-words)",
                                  packet.frame_id)
            batch.append((packet, packets[at:at + used]))
            at += used
        for packet, raw in batch:
            number = packet.port.number
            self._queue.append((self._queued[number], packet, raw))
            self._queued[number] += 1
        self._send()

    def _send(self) -> None:
        """Write queued packets while each source's window has room."""
        out = bytearray()
        while self._queue:
            frame, packet, raw = self._queue[0]
            number = packet.port.number
            if self._outstanding[number] + packet.count > self.buffer_words:
                break
            self._queue.popleft()
            self._outstanding[number] += packet.count
            self._unanswered.append((frame, number, packet.count))
            self._unacknowledged.append((packet.frame_id, packet.port.node))
            now = self.clock()
            self._line_free = max(self._line_free, now) + len(raw) * _BITS_PER_BYTE / self.baud
            self._taken.append((self._line_free, number))
            out += raw
        if out:
            try:
                self.transport.write(bytes(out))
            except OSError as error:
                raise LinkDown(f"writing to the board failed: {error}") from None

    def step(self, max_cycles: int, frames: int) -> StepResult:
        """Read the board for ``max_cycles`` of its clock, or until ``frames`` frame ends reached every sink.

        Raises
        ------
        LinkDown
            Reading failed, or the board dropped a frame packet or reset itself (module docstring).
        """
        start = self._cycles()
        deadline = start + max_cycles
        packets: list[list[bytes]] = [[] for _ in self.codec.sinks]
        cycles: list[list[int]] = [[] for _ in self.codec.sinks]
        frame_ends: list[list[int]] = [[] for _ in self.codec.sources]
        last_accept = 0
        reason = "cycles"
        while True:
            try:
                data = self.transport.read(4096)
            except OSError as error:
                raise LinkDown(f"reading from the board failed: {error}") from None
            now = self._cycles()
            self._rx += data
            for sink, status, beats in self._packets():
                if not beats:
                    self._acknowledged(status)
                    continue
                port = self.codec.sinks[sink]
                for beat in beats:
                    packets[sink].append(beat)
                    cycles[sink].append(now)
                    if beat[port.tdata_bytes + port.tuser_bytes] and self._kind(port, beat) == "message":
                        self._ends[sink] += 1
                self._answered()
            while self._taken and self._cycles(self._taken[0][0]) <= now:
                at, number = self._taken.popleft()
                frame_ends[number].append(self._cycles(at))
                last_accept = max(last_accept, self._cycles(at))
            self._send()
            if frames and min(self._ends) >= frames:
                reason = "messages"
                break
            if now >= deadline:
                break
        return StepResult(cycles=self._cycles() - start, reason=reason, now=self._cycles(),
                          packets=[self.codec.pack_beats(n, b"".join(p)) for n, p in enumerate(packets)],
                          beat_cycles=cycles, frame_ends=frame_ends, last_accept=last_accept)

    def set_pause(self, port: str, probability: float, seed: int, *, sink: bool) -> None:
        raise DeviceError("a board has no back-pressure or idle patterns (backpressure and idle are for 'sim')")

    def close(self) -> None:
        self.transport.close()

    # -- bytes from the board --------------------------------------------------------------------
    def _kind(self, port, beat: bytes) -> str:
        tuser = int.from_bytes(beat[port.tdata_bytes:port.tdata_bytes + port.tuser_bytes], "little")
        return self.codec.kinds.get(port.tuser_field("kind").get(tuser), "?")

    def _packets(self):
        """Whole beats packets at the front of the received bytes: ``(sink number, status, [raw beat])``."""
        at = 0
        while True:
            try:
                self._plausible(at)
                packet, used = read_packet(self._rx, self.codec, at)
            except FramingError as error:
                skip = self._rx.find(BEATS_MAGIC, at + 1)
                skip = len(self._rx) - 1 if skip < 0 else skip
                log.warning("board link: skipping %d byte(s) that are no packet (%s)", skip - at, error)
                self.dropped_bytes += skip - at
                at = skip
                continue
            if packet is None:
                break
            if isinstance(packet, FramePacket):  # the board never sends frames: line noise that looks like one
                self.dropped_bytes += used
                at += used
                continue
            raw = bytes(self._rx[at:at + used])
            number = raw[4]
            size = self.codec.sinks[number].beat_bytes
            body = raw[BEATS_HEADER.size:-4]
            at += used
            yield number, raw[3], [body[k:k + size] for k in range(0, len(body), size)]
        del self._rx[:at]

    def _plausible(self, at: int) -> None:
        """A board sends beats packets of one beat, or none (its hello): a header that says otherwise is
        line noise, and waiting for the bytes it announces would stall the link."""
        head = self._rx[at:at + BEATS_HEADER.size]
        if len(head) == BEATS_HEADER.size and head[:2] == BEATS_MAGIC and (
                head[2] != VERSION or int.from_bytes(head[5:9], "little") > 1):
            raise FramingError(f"a beats packet header announcing {int.from_bytes(head[5:9], 'little')} beats "
                               f"(version {head[2]}) is not the board's")

    def _acknowledged(self, status: int) -> None:
        """The board's word on the oldest frame packet not acknowledged yet (:class:`sfdf.boards.link.BeatSerializer`)."""
        if status == Status.HELLO:
            raise LinkDown("the board reset itself (a hello in the middle of a session: power, or another host "
                           "sent a break)")
        if not self._unacknowledged:
            raise LinkDown(f"the board acknowledged a frame packet that was not sent (status {status}): line noise")
        frame_id, source = self._unacknowledged.popleft()
        if status != Status.COMMITTED:
            raise LinkDown(f"the board dropped frame {frame_id!r}'s packet for {source} (damaged on the line, or no "
                           "room in its buffer); reopen the device and send again from that frame")

    def _answered(self) -> None:
        """Frames every sink has ended free their words in the window."""
        done = min(self._ends)
        while self._unanswered and self._unanswered[0][0] < done:
            _, number, words = self._unanswered.popleft()
            self._outstanding[number] -= words

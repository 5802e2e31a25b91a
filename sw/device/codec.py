"""The frame codec (docs/host.md): frames to AXI4-Stream words, sink beats to results, and the byte
framing that the simulated device and a serial board link share. It reads only the manifest.

Words. A frame is a non-empty sequence of unsigned integers that fit the source port's ``tdata``; it
becomes one AXI4-Stream packet: one word per pixel, ``tlast`` on the last (:meth:`Codec.axis_words`).
``tuser[0]`` ends the stream and is set only on the last word of the last frame, when asked.

Beats. A sink beat is ``(tdata, tuser, tlast)`` with ``tuser = {kind, index}`` at the positions of the
port's ``tuser_fields``; kinds come from the manifest's ``beat_kinds`` (data, message = frame end with the
frame number mod ``2^payload_width`` in ``tdata``, eos). A data beat's ``tdata`` splits into the port's
``fields`` (the variance network: ``n``, ``sum``, ``sum_sq``; other specs: ``data``).

Bytes: the host link's frame and beats packets (:mod:`sfdf.boards.packets`, the one definition).
:func:`read_packet` takes packets off the front of a byte stream, for a serial link.
"""

from __future__ import annotations

import struct
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import NamedTuple

import numpy as np

from sfdf.boards import packets
from sfdf.boards.packets import BEATS_MAGIC, END_OF_STREAM, FRAME_MAGIC, VERSION
from sfdf.hdl.manifest import Port, read_manifest

__all__ = ["Beat", "Codec", "FrameError", "FramePacket", "FramingError", "read_packet"]


class FrameError(ValueError):
    """A frame that cannot be sent: empty, or a pixel that does not fit the port; names the frame."""


class FramingError(ValueError):
    """Bytes that are not a valid packet (magic, version, port, length or CRC)."""


class Beat(NamedTuple):
    """A decoded sink beat: ``kind`` is ``"data"``, ``"message"`` or ``"eos"``; ``fields`` of a data beat
    by the port's ``fields``; ``frame`` of a message beat: its payload (frame number mod ``2^payload_width``)."""

    sink: str
    kind: str
    index: int
    tdata: int
    tlast: bool
    fields: Mapping[str, int] = {}
    frame: int | None = None


class FramePacket(NamedTuple):
    """A decoded frame packet."""

    port: Port
    frame_id: int
    words: bytes  # count words, tdata_bytes each, little-endian
    count: int
    end_of_stream: bool

    def values(self) -> list[int]:
        """The words as integers."""
        size = self.port.tdata_bytes
        return [int.from_bytes(self.words[i:i + size], "little") for i in range(0, len(self.words), size)]


@dataclass
class Codec:
    """Everything the host needs to talk to one generated network, from its manifest.

    Members
    -------
    manifest : Mapping
        The manifest's JSON object (given as such, as a :class:`~sfdf.hdl.manifest.Manifest` or a path).
    name : str
    sources, sinks : tuple of Port
        The manifest's ``in`` and ``out`` ports, in manifest order.
    index_width, payload_width : int
    kinds : dict of int to str
        Beat kind names (``"data"``, ``"message"``, ``"eos"``) by their ``tuser`` code.
    """

    manifest: Mapping
    name: str = field(init=False)
    sources: tuple[Port, ...] = field(init=False)
    sinks: tuple[Port, ...] = field(init=False)
    index_width: int = field(init=False)
    payload_width: int = field(init=False)
    kinds: dict[int, str] = field(init=False)

    def __post_init__(self) -> None:
        m = read_manifest(self.manifest)
        self.manifest, self.name, self.index_width, self.payload_width = m.json, m.name, m.index_width, m.payload_width
        self.kinds = {code: kind.name.lower() for code, kind in m.kinds.items()}
        self.sources, self.sinks = m.sources, m.sinks
        if not self.sources or not self.sinks:
            raise ValueError(f"manifest {self.name!r}: needs a source and a sink port")

    # -- ports -----------------------------------------------------------------------------------
    def source(self, port: str | int | None = None) -> Port:
        """A source port by node name, port name or number; ``None``: the only one."""
        return _find(self.sources, port, "source", self.name)

    def sink(self, port: str | int | None = None) -> Port:
        """A sink port by node name, port name or number; ``None``: the only one."""
        return _find(self.sinks, port, "sink", self.name)

    # -- frames ----------------------------------------------------------------------------------
    def frame_words(self, pixels: Sequence[int] | np.ndarray, port: str | int | None = None,
                    frame_id: object = None) -> bytes:
        """The words of one frame, ``tdata_bytes`` each, little-endian.

        Raises
        ------
        FrameError
            The frame is empty, or a pixel is negative, not an integer or too wide for ``tdata``.
        """
        p = self.source(port)
        label = f"frame {frame_id!r}" if frame_id is not None else "frame"
        array = np.asarray(pixels)
        if array.dtype.kind == "f" and not isinstance(pixels, np.ndarray):
            array = np.asarray(pixels, dtype=object)  # Python ints from 2**63 up: numpy made floats of them
        if array.ndim != 1 or array.size == 0:
            raise FrameError(f"{label}: a frame is a non-empty sequence of pixels (got shape {array.shape}) "
                             f"for port {p.name}")
        if p.tdata_width <= 64 and array.dtype.kind in "iu":
            if array.dtype.kind == "i" and (array < 0).any():
                bad = int(np.flatnonzero(array < 0)[0])
                raise FrameError(f"{label}: pixel {bad} is {int(array[bad])}, negative; {p.name} takes unsigned "
                                 f"{p.tdata_width}-bit words")
            wide = array.astype(np.uint64)
            if p.tdata_width < 64 and (wide >> np.uint64(p.tdata_width)).any():
                bad = int(np.flatnonzero(wide >> np.uint64(p.tdata_width))[0])
                raise FrameError(f"{label}: pixel {bad} is {int(wide[bad])}, wider than {p.tdata_width} bits "
                                 f"(0..{(1 << p.tdata_width) - 1}) for {p.name}")
            return wide.astype("<u8").view(np.uint8).reshape(-1, 8)[:, :p.tdata_bytes].tobytes()
        out = bytearray()
        for position, pixel in enumerate(array.tolist()):
            if not isinstance(pixel, int) or isinstance(pixel, bool) or not 0 <= pixel < 1 << p.tdata_width:
                raise FrameError(f"{label}: pixel {position} is {pixel!r}, not an unsigned {p.tdata_width}-bit "
                                 f"integer for {p.name}")
            out += pixel.to_bytes(p.tdata_bytes, "little")
        return bytes(out)

    def axis_words(self, pixels: Sequence[int] | np.ndarray, port: str | int | None = None,
                   end_of_stream: bool = False) -> tuple[list[int], list[int], list[int]]:
        """One frame as AXI4-Stream words: ``(tdata, tlast, tuser)`` lists; ``tlast`` on the last word,
        ``tuser[0]`` on the last word only with ``end_of_stream``."""
        p = self.source(port)
        data = self.frame_words(pixels, p.number)
        words = [int.from_bytes(data[i:i + p.tdata_bytes], "little") for i in range(0, len(data), p.tdata_bytes)]
        last = [0] * (len(words) - 1) + [1]
        return words, last, [0] * (len(words) - 1) + [int(end_of_stream)]

    def pack_frame(self, frame_id: int, pixels: Sequence[int] | np.ndarray, port: str | int | None = None,
                   end_of_stream: bool = False) -> bytes:
        """A frame packet (module docstring) for ``pixels`` on source ``port``."""
        p = self.source(port)
        if not isinstance(frame_id, int) or not -(1 << 63) <= frame_id < 1 << 63:
            raise FrameError(f"frame id {frame_id!r} is not a 64-bit signed integer (Spark's long)")
        words = self.frame_words(pixels, p.number, frame_id)
        head = packets.FRAME_HEADER.pack(FRAME_MAGIC, VERSION, END_OF_STREAM if end_of_stream else 0, p.number, frame_id,
                                  len(words) // p.tdata_bytes)
        return _sealed(head + words)

    def unpack_frame(self, packet: bytes) -> FramePacket:
        """Decode one whole frame packet.

        Raises
        ------
        FramingError
            Bad magic, version, port, length or CRC.
        """
        _, _, flags, number, frame_id, count = _header(packets.FRAME_HEADER, packet, FRAME_MAGIC)
        port = self._numbered(self.sources, number, "source")
        body = _checked(packet, packets.FRAME_HEADER.size + count * port.tdata_bytes)
        return FramePacket(port, frame_id, body[packets.FRAME_HEADER.size:], count, bool(flags & END_OF_STREAM))

    # -- beats -----------------------------------------------------------------------------------
    def pack_beats(self, port: str | int | None, beats: bytes) -> bytes:
        """A beats packet of ``beats``: ``beat_bytes`` each (tdata, tuser, tlast byte) for sink ``port``."""
        p = self.sink(port)
        if len(beats) % p.beat_bytes:
            raise FramingError(f"{len(beats)} bytes are not whole beats of {p.beat_bytes} bytes ({p.name})")
        return _sealed(packets.BEATS_HEADER.pack(BEATS_MAGIC, VERSION, 0, p.number, len(beats) // p.beat_bytes) + beats)

    def pack_beat_values(self, port: str | int | None, beats: Sequence[tuple[int, int, bool]]) -> bytes:
        """A beats packet of ``(tdata, tuser, tlast)`` integers."""
        p = self.sink(port)
        return self.pack_beats(p.number, b"".join(
            int(d).to_bytes(p.tdata_bytes, "little") + int(u).to_bytes(p.tuser_bytes, "little") + bytes([bool(t)])
            for d, u, t in beats))

    def unpack_beats(self, packet: bytes) -> list[Beat]:
        """Decode one whole beats packet into :class:`Beat`s.

        Raises
        ------
        FramingError
            Bad magic, version, port, length or CRC.
        """
        _, _, _, number, count = _header(packets.BEATS_HEADER, packet, BEATS_MAGIC)
        port = self._numbered(self.sinks, number, "sink")
        body = _checked(packet, packets.BEATS_HEADER.size + count * port.beat_bytes)[packets.BEATS_HEADER.size:]
        td, tu, size = port.tdata_bytes, port.tuser_bytes, port.beat_bytes
        return [self.decode_beat(port.number, int.from_bytes(body[at:at + td], "little"),
                                 int.from_bytes(body[at + td:at + td + tu], "little"), bool(body[at + td + tu]))
                for at in range(0, len(body), size)]

    def decode_beat(self, port: str | int | None, tdata: int, tuser: int, tlast: bool) -> Beat:
        """A sink beat's kind, index and fields (module docstring)."""
        p = self.sink(port)
        code = p.tuser_field("kind").get(tuser)
        kind = self.kinds.get(code)
        if kind is None:
            raise FramingError(f"{p.name}: beat kind {code} is not one of {self.kinds}")
        index = p.tuser_field("index").get(tuser)
        if kind == "data":
            return Beat(p.node, kind, index, tdata, tlast, {f.name: f.get(tdata) for f in p.fields})
        if kind == "message":
            return Beat(p.node, kind, index, tdata, tlast, {}, tdata & ((1 << self.payload_width) - 1))
        return Beat(p.node, kind, index, tdata, tlast)

    def frame_number(self, frame: int) -> int:
        """The payload of frame ``frame``'s end message: ``frame mod 2^payload_width``."""
        return frame % (1 << self.payload_width)

    def _numbered(self, ports: tuple[Port, ...], number: int, what: str) -> Port:
        if number >= len(ports):
            raise FramingError(f"{what} port {number} does not exist in {self.name} ({len(ports)} {what}s)")
        return ports[number]


def read_packet(buffer: bytes | bytearray, codec: Codec, offset: int = 0) -> tuple[FramePacket | list[Beat] | None, int]:
    """The whole packet at ``buffer[offset:]`` and how many bytes it took; ``(None, 0)`` when the packet is
    not complete yet.

    Raises
    ------
    FramingError
        The front of ``buffer`` is not a packet (a serial link should resynchronise or reset).
    """
    have = len(buffer) - offset
    if have < 2:
        return None, 0
    magic = bytes(buffer[offset:offset + 2])
    if magic == FRAME_MAGIC:
        if have < packets.FRAME_HEADER.size:
            return None, 0
        *_, number, _, count = packets.FRAME_HEADER.unpack_from(buffer, offset)
        size = packets.FRAME_HEADER.size + count * codec._numbered(codec.sources, number, "source").tdata_bytes
        decode = codec.unpack_frame
    elif magic == BEATS_MAGIC:
        if have < packets.BEATS_HEADER.size:
            return None, 0
        *_, number, count = packets.BEATS_HEADER.unpack_from(buffer, offset)
        size = packets.BEATS_HEADER.size + count * codec._numbered(codec.sinks, number, "sink").beat_bytes
        decode = codec.unpack_beats
    else:
        raise FramingError(f"no packet at the front of the stream: starts with {magic!r}, not {FRAME_MAGIC!r} "
                           f"or {BEATS_MAGIC!r}")
    if have < size + packets.CRC.size:
        return None, 0
    return decode(bytes(buffer[offset:offset + size + packets.CRC.size])), size + packets.CRC.size


def _sealed(body: bytes) -> bytes:
    return body + packets.CRC.pack(packets.crc32(body))


def _header(layout: struct.Struct, packet: bytes, magic: bytes) -> tuple:
    if len(packet) < layout.size + packets.CRC.size:
        raise FramingError(f"packet of {len(packet)} bytes is shorter than its header and CRC "
                           f"({layout.size + packets.CRC.size})")
    values = layout.unpack_from(packet)
    if values[0] != magic:
        raise FramingError(f"packet starts with {values[0]!r}, not {magic!r}")
    if values[1] != VERSION:
        raise FramingError(f"packet version {values[1]}, this codec speaks {VERSION}")
    return values


def _checked(packet: bytes, size: int) -> bytes:
    if len(packet) != size + packets.CRC.size:
        raise FramingError(f"packet is {len(packet)} bytes, its header says {size + packets.CRC.size}")
    (crc,) = packets.CRC.unpack_from(packet, size)
    if crc != packets.crc32(packet[:size]):
        raise FramingError(f"packet CRC {crc:#010x} does not match its contents ({packets.crc32(packet[:size]):#010x})")
    return packet[:size]


def _find(ports: tuple[Port, ...], port: str | int | None, what: str, network: str) -> Port:
    if port is None:
        if len(ports) == 1:
            return ports[0]
        raise ValueError(f"{network} has {len(ports)} {what} ports ({', '.join(p.node for p in ports)}); name one")
    for p in ports:
        if port in (p.node, p.name) or port == p.number and isinstance(port, int):
            return p
    raise ValueError(f"{network} has no {what} port {port!r} ({', '.join(p.node for p in ports)})")

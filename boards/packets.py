"""The host link's packet format, in one place: what :mod:`sfdf.boards.link` speaks in hardware and
:mod:`sfdf.sw.device.codec` on the host (the simulated device and the board device alike).

Little-endian throughout; the CRC is zlib's CRC-32 over every byte before it::

    frame packet   "SF" | u8 version | u8 flags (bit 0: end of stream) | u8 source port | i64 frame id
                   | u32 count | count words of ceil(tdata_width / 8) bytes | u32 crc
    beats packet   "SB" | u8 version | u8 status | u8 sink port | u32 count
                   | count beats of ceil(tdata_width / 8) + ceil(tuser_width / 8) + 1 (tlast) bytes | u32 crc

Ports are numbered by their position among the manifest's ``in`` (sources) or ``out`` (sinks) ports.
A beats packet's status byte is 0 except in a board's *status packets*: empty beats packets for sink 0
that say hello after a reset or answer a frame packet (:class:`Status`).
"""

from __future__ import annotations

import enum
import struct
import zlib

__all__ = [
    "BEATS_HEADER", "BEATS_MAGIC", "CRC", "END_OF_STREAM", "FRAME_HEADER", "FRAME_MAGIC", "VERSION", "Status",
    "crc32",
]

FRAME_MAGIC = b"SF"
BEATS_MAGIC = b"SB"
#: Version byte of both packet kinds.
VERSION = 1
#: magic, version, flags, source port, frame id (signed: Spark's long), word count.
FRAME_HEADER = struct.Struct("<2sBBBqI")
#: magic, version, status, sink port, beat count.
BEATS_HEADER = struct.Struct("<2sBBBI")
#: The trailing CRC.
CRC = struct.Struct("<I")
#: Frame packet flag: the stream ends after this frame (``tuser[0]`` on its last word).
END_OF_STREAM = 1


class Status(enum.IntEnum):
    """Byte 3 of a board's status packet (an empty beats packet for sink 0)."""

    #: The board came out of reset: its frame numbering restarts at 0.
    HELLO = 0
    #: A frame packet arrived whole and its words are in the source's buffer.
    COMMITTED = 1
    #: A frame packet arrived damaged or found no room, and was dropped.
    DROPPED = 2


def crc32(data: bytes) -> int:
    """The packets' CRC: zlib's CRC-32 (ISO-HDLC)."""
    return zlib.crc32(data)

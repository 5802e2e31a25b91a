"""What a board says on its own: the status packets of boards/packets.py, built as the board builds them."""

from __future__ import annotations

import zlib

from sfdf.sw.codec import Codec


def status_packet(codec: Codec, status: int) -> bytes:
    """An empty beats packet for sink 0 with ``status`` in its status byte (:class:`sfdf.boards.packets.Status`)."""
    packet = bytearray(codec.pack_beats(0, b""))
    packet[3] = status
    packet[-4:] = zlib.crc32(bytes(packet[:-4])).to_bytes(4, "little")
    return bytes(packet)

"""What a board says on its own: the status packets of boards/packets.py, built from its header layout."""

from __future__ import annotations

from sfdf.boards import packets


def status_packet(status: int) -> bytes:
    """An empty beats packet for sink 0 with ``status`` in its status byte (:class:`sfdf.boards.packets.Status`)."""
    body = packets.BEATS_HEADER.pack(packets.BEATS_MAGIC, packets.VERSION, status, 0, 0)
    return body + packets.CRC.pack(packets.crc32(body))

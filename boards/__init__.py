"""sfdf boards layer (docs/architecture.md): one file per board, the UART host link around a network, ``sfdf build``.

:data:`BOARDS` maps the names ``sfdf build --board`` takes to :class:`sfdf.boards.top.Board`.
"""

from .icebreaker import ICEBREAKER
from .ulx3s import ULX3S_12F, ULX3S_25F, ULX3S_45F, ULX3S_85F

__all__ = ["BOARDS"]

#: Every board, by the name ``sfdf build --board`` takes.
BOARDS = {board.name: board for board in (ULX3S_85F, ULX3S_45F, ULX3S_25F, ULX3S_12F, ICEBREAKER)}

"""The index watermark in the reference model (docs/semantics.md, "Index watermark").

The hardware's sources start index ``i`` only while ``i - W`` is below every sink's last computation
(:mod:`sfdf.hdl.watermark`; ``W`` from :func:`sfdf.gen.analysis.control.watermark`), so the indices a
join compares span at most ``W`` and serial comparison at the hardware's index width stays exact. The
model holds its sources the same way and measures what the joins compare (:attr:`Watermark.spread`):
the largest difference between the indices offered at one computation of any join. Without a
watermark (``window`` None) it only measures, which shows how far a network drifts when nothing holds
it.
"""

from __future__ import annotations

__all__ = ["WAIT_WATERMARK", "Watermark"]

#: Why a source waits: some sink is ``W`` or more indices behind its next computation.
WAIT_WATERMARK = "index watermark"


class Watermark:
    """Shared by the nodes of one run: the sinks report their positions, the joins their spreads, the
    sources ask."""

    __slots__ = ("sinks", "sources", "spread", "window")

    def __init__(self, window: int | None):
        self.window = window
        self.sinks: list = []
        self.sources: list = []
        self.spread = 0

    def holds(self, i: int) -> bool:
        """Index ``i`` may not start yet (a sink's position is ``W`` or more below it)."""
        return self.window is not None and i - self.low() > self.window

    def low(self) -> int:
        return min(s.position for s in self.sinks)

    def lowest(self):
        """The sink whose position is least (what a held source waits on)."""
        return min(self.sinks, key=lambda s: s.position)

    def compared(self, offers) -> None:
        """A join compares ``offers`` (EOS excluded by the caller): record their spread."""
        if len(offers) > 1:
            self.spread = max(self.spread, max(offers) - min(offers))

    def moved(self) -> None:
        """A sink advanced: a held source may go on (also one blocked on an output that would compute
        ahead, so every unfinished source is asked again; one that cannot blocks again)."""
        for source in self.sources:
            if not source.finished:
                source.ready(source.rank)

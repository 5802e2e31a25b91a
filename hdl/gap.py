"""Narrow distance counters for the senders' interval tests (000 Alg. 4; 002 Alg. 2, 5).

Both algorithms ask, at every computation ``i`` of a node, whether ``i - last`` exceeds a constant
(credit heartbeat: ``i - LastRecvIdx > [e]``; in-band: ``i - LastOutputIndex_q >= [q]``), where ``last``
is an index the edge remembers. Comparing ``w``-bit indices costs two ``w``-bit carry chains per edge on
the node's critical path. Only the comparison matters, so each edge keeps a *budget* instead,
``limit - (prev - last)`` for the node's previous computation ``prev``, and the node computes its step
``delta = i - prev`` once (from the join's offset, :class:`sfdf.hdl.join.SFDFJoin`), saturated at
``2 ** delta_width - 1 > limit``. At computation ``i`` the budget left is ``budget - delta``, and the
distance exceeds ``limit`` exactly when that is negative: one subtraction of ``bits(limit) + 1`` bits
per edge, its sign bit the test. A budget once negative is clamped at -1 (still exceeded), so it never
wraps.

Given next cycle's ``delta`` (a node's decided queue knows it: ``DecidedQueue``'s ``o_next``), what is left,
``budget - delta``, can be a register instead, computed a cycle ahead from the budget's next value
(:meth:`GapCounter.update`), and the test is its sign bit. The subtraction then ends at flip-flops and no
longer starts the sender's push, its ``ready`` and the channel's write enable (in-band mode,
docs/hardware.md); it is still one subtraction per edge.
"""

from amaranth.hdl import Mux, Signal, signed

__all__ = ["GapCounter", "delta_width"]


def delta_width(intervals) -> int:
    """Bits of a node's ``delta`` so that its saturation exceeds every edge's limit."""
    return max([(interval + 1).bit_length() for interval in intervals if interval is not None], default=1)


class GapCounter:
    """The budget ``limit - (prev - last)`` of one edge, clamped at -1.

    Parameters
    ----------
    limit : int
        The distance ``i - last`` may reach without exceeding: ``[e]`` (credit), ``[q] - 1`` (in-band).
    delta : Value
        The computation's step from the previous one, saturated by the node above ``limit``.
    name : str
    delta_next : Value or None
        ``delta`` of the next cycle (of whatever computation is offered then): ``left`` is then a register,
        which :meth:`update` computes a cycle ahead. Its reset value, ``limit``, is right for a ``delta``
        of 0, so the first cycle after a reset must offer no computation or one of ``delta = 0``.

    Attributes
    ----------
    budget : Signal
        The register, relative to the previous computation.
    left : Value
        ``budget - delta``, what is left at this computation (a register with ``delta_next``).
    exceeded : Value
        At this computation: ``i - last > limit``.
    """

    def __init__(self, limit, delta, *, name, delta_next=None):
        self.limit = limit
        width = max(limit.bit_length(), len(delta)) + 1
        self.budget = Signal(signed(width), init=limit, name=f"{name}_budget")
        self._delta_next = delta_next
        self._next = Signal.like(self.budget, name=f"{name}_next")
        self.left = self.budget - delta  # the budget left at this computation
        if delta_next is not None:
            self.left = Signal(self.left.shape(), init=limit, name=f"{name}_left")
        self.exceeded = self.left[-1]

    def advanced(self, reset):
        """The budget relative to this computation: ``limit`` if ``last`` becomes ``i`` (``reset``), else
        what is left, clamped at -1."""
        return Mux(reset, self.limit, Mux(self.exceeded, -1, self.left))

    def update(self, m, budget):
        """The register's next value ``budget`` (every cycle), and with ``delta_next`` what is left then."""
        m.d.comb += self._next.eq(budget)
        m.d.sync += self.budget.eq(self._next)
        if self._delta_next is not None:
            m.d.sync += self.left.eq(self._next - self._delta_next)

"""What a node's committed computations look like to an edge's sender: the one environment both edge
harnesses assume (:mod:`.credit_edge`, :mod:`.inband_edge`).

A node commits a computation (``valid & ready``) at a growing index, never wrapping (at most
``2 ** index_width - 1`` computations), with ``delta`` the step from the previous committed index (from 0
before the first) saturated at ``2 ** delta_width - 1`` (:mod:`sfdf.hdl.gap`); EOS carries no token and no
message, and nothing is committed after it. Requests that are not committed are left unconstrained.
"""

from __future__ import annotations

from amaranth.hdl import Assume, Mux, Signal

__all__ = ["committed_computations"]


def committed_computations(m, request, index_width: int, delta_width: int):
    """Assume the above of ``request`` (a sender's ``i_comp`` stream) in module ``m``.

    Returns
    -------
    commit : Signal
        The computation is committed this cycle.
    prev : Signal
        The last committed index (0 before the first).
    ended : Signal
        EOS has been committed.
    """
    comp = request.payload
    commit = Signal()
    prev = Signal(index_width)
    ended = Signal()
    step = Signal(index_width)
    saturated = (1 << delta_width) - 1
    m.d.comb += [commit.eq(request.valid & request.ready), step.eq(comp.index - prev)]
    with m.If(commit):
        m.d.comb += Assume(~ended, "nothing is committed after EOS")
        with m.If(comp.eos):
            m.d.comb += Assume(~comp.emit & ~comp.msg_valid, "EOS carries no token and no message")
            m.d.sync += ended.eq(1)
        with m.Else():
            m.d.comb += [
                Assume(comp.index > prev, "indices grow, without wrapping"),
                Assume(comp.delta == Mux(step > saturated, saturated, step), "delta = step, saturated"),
            ]
            m.d.sync += prev.eq(comp.index)
    return commit, prev, ended

"""What a node's committed computations look like to an edge's sender: the one environment the edge
harnesses assume (:mod:`.credit_edge`, :mod:`.counter_edge`, :mod:`.inband_edge`).

A node commits a computation (``valid & ready``) at a growing index, never wrapping (at most
``2 ** index_width - 1`` computations), with ``delta`` the step from the previous committed index (from 0
before the first) saturated at ``2 ** delta_width - 1`` (:mod:`sfdf.hdl.gap`); EOS carries no token and no
message, and nothing is committed after it. Requests that are not committed are left unconstrained.
The two credit-edge harnesses drive that request and the join's consumption the same way
(:func:`any_requests`) and name what moved on the edge the same way (:func:`credit_moves`).
"""

from __future__ import annotations

from typing import NamedTuple

from amaranth.asserts import AnySeq
from amaranth.hdl import Assume, Mux, Signal

__all__ = ["CreditMoves", "any_requests", "committed_computations", "credit_moves"]


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


def any_requests(m, sender, receiver, index_width: int, delta_width: int, *, messages=True, eos=True):
    """A credit edge's environment: the sending node's request ``AnySeq`` every cycle (no user messages
    without ``messages``, no EOS without ``eos``), assumed only of committed computations
    (:func:`committed_computations`, whose three signals it returns), and the receiving join's
    ``i_consume`` ``AnySeq``."""
    comp = sender.i_comp.payload
    m.d.comb += [
        sender.i_comp.valid.eq(AnySeq(1)),
        comp.index.eq(AnySeq(index_width)),
        comp.delta.eq(AnySeq(delta_width)),
        comp.emit.eq(AnySeq(1)),
        comp.data.eq(AnySeq(1)),
        comp.msg_valid.eq(AnySeq(1) if messages else 0),
        comp.msg.eq(AnySeq(1)),
        comp.eos.eq(AnySeq(1) if eos else 0),
        receiver.i_consume.eq(AnySeq(1)),
    ]
    return committed_computations(m, sender.i_comp, index_width, delta_width)


class CreditMoves(NamedTuple):
    """What moved on a credit edge this cycle: into and out of its data and control channels, the
    receiver's offer consumed, and whether that offer is the heartbeat."""

    d_in: object
    c_in: object
    d_out: object
    c_out: object
    consume: object
    offers_heartbeat: object


def credit_moves(data_channel, control_channel, receiver) -> CreditMoves:
    """:class:`CreditMoves` of an edge's two channels and its receiver."""
    head = receiver.o_head
    return CreditMoves(
        d_in=data_channel.i_stream.valid & data_channel.i_stream.ready,
        c_in=control_channel.i_stream.valid & control_channel.i_stream.ready,
        d_out=data_channel.o_stream.valid & data_channel.o_stream.ready,
        c_out=control_channel.o_stream.valid & control_channel.o_stream.ready,
        consume=receiver.i_consume & head.valid,
        offers_heartbeat=head.valid & ~head.is_data & ~head.is_msg & ~head.eos,
    )

"""The in-band protocol of 002 in hardware: ``InbandSender`` (Alg. 2, 5) and ``InbandReceiver``.

One channel per edge (:class:`sfdf.hdl.channels.DataChannel` of exactly ``|q|`` entries) carries every token
of :func:`sfdf.hdl.tokens.inband_token_layout`: data, dummies (alone or as a flag on the data token of their
index), EOS, and the user message riding on the token of its index (docs/semantics.md, "Inband mode").

Output buffer (003 Sec. 2; docs/semantics.md, "Channels and output buffers"): hidden tokens are not held
in a separate sender-side buffer. The sender writes every token straight into the channel and counts
the tokens it has made visible, ``o_flushed`` (mod ``2 ** flushed_width(|q|)``); the receiver counts
the tokens it has popped and offers its head only while that count differs from ``o_flushed``. The
channel then holds at most ``|q|`` tokens, output buffer included, exactly as the model's channel does,
the newest ``hidden`` of them invisible; a flush is one register update and costs no cycle. Both
counters and the channel's level change on the same clock edge, so a token becomes visible in the
cycle after the computation that flushes it, like a token written into an unbuffered channel.
"""

from amaranth.hdl import Const, Module, Mux, Signal
from amaranth.lib import stream, wiring
from amaranth.lib.wiring import In, Out

from .gap import GapCounter
from .params import check_integer
from .tokens import computation_layout, head_layout, inband_token_layout

__all__ = ["INBAND_ALGORITHMS", "InbandReceiver", "InbandSender", "flushed_width"]

#: Sender behaviours (gen.model.DUMMY_ALGORITHMS): Naive is Non-Propagation whose resolved intervals
#: are 1 (002 Sec. 3.1); the sender obeys the interval it is given, as the reference model does.
INBAND_ALGORITHMS = ("naive", "propagation", "nonpropagation")


def flushed_width(capacity: int) -> int:
    """Bits of the visible-token counters of a channel of ``capacity`` (``|q|``) tokens.

    The sender's count of tokens made visible runs at most ``|q|`` ahead of the receiver's count of
    tokens popped (both are tokens in the channel), so ``bits(|q|)`` bits never alias. Only an edge with
    an output buffer (``|q|_o > 1``; 003's buffer of 1 is none) keeps the counts: without one, every
    token is visible once written.
    """
    check_integer("Capacity", capacity, 1)
    return capacity.bit_length()


class InbandSender(wiring.Component):
    """Sender side of one in-band channel ``q``: 002 Alg. 5 (Non-Propagation, Naive) or Alg. 2.

    After computing index ``i`` (docs/semantics.md, "Inband mode"), with ``gap = i - LastOutputIndex_q
    >= [q]`` in serial arithmetic (never when ``[q]`` is None):

    * Non-Propagation / Naive: ``LastOutputIndex_q`` is the last index made visible. A message rides on
      the data token of ``i``, or on a dummy forced for it, and flushes. Otherwise an emitted data token
      is pushed and flushed if ``gap``; a filtered index pushes ``dummy(i)`` (flushing) if ``gap``. Any
      flush at ``i`` makes ``i`` visible: ``LastOutputIndex_q = i``.
    * Propagation: a dummy is scheduled if ``gap`` or a dummy flag arrived at ``i`` on an input of
      ``q``'s biconnected component (``i_dummy_in & propagate_mask``, 002 Sec. 3.2); a message with no
      data token forces one. A scheduled dummy sets ``LastOutputIndex_q = i``, rides on the data token
      of ``i`` as a flag or goes alone, and flushes; a message on a data token flushes too.

    Every push also flushes when the output buffer would hold ``|q|_o`` hidden tokens (so 0 and 1 mean
    none), and EOS (carrying any message owed) flushes. One computation pushes at most one token, so the
    channel carries at most one token per index. It commits (``i_comp.valid & i_comp.ready``) when the
    channel takes that token: ``i_comp.ready`` depends on the request, the state and ``o_token.ready``,
    never on ``i_comp.valid``.

    ``gap`` is a register (:class:`sfdf.hdl.gap.GapCounter` with ``delta_next``), computed a cycle ahead
    from ``i_delta_next``, so the subtraction it needs is not on the path from the request to the push,
    ``ready`` and the channel's write enable.

    Parameters
    ----------
    capacity : int
        ``|q|``: the channel's capacity, output buffer included; sizes ``o_flushed``.
    output_buffer : int
        ``|q|_o``, ``0 <= |q|_o <= |q|``; 0 is none.
    interval : int or None
        ``[q] >= 0``; None is infinite (no dummies from the interval rule).
    algorithm : {"naive", "propagation", "nonpropagation"}
    index_width, data_width, payload_width : int
    inputs : int
        Width of ``i_dummy_in`` (Propagation: one bit per input of the node, or 1 if the node combines
        them).
    propagate_mask : int or None
        Inputs in ``q``'s biconnected component (bit ``k``: input ``k``); None: all.
    delta_width : int
        Bits of the computation's ``delta`` (:func:`sfdf.hdl.gap.delta_width`).
    flushable : bool
        Verification only: add ``i_flush`` (when ``|q|_o > 1``), a spontaneous flush such as 003 allows
        at any time (its Fig. 2 deadlock needs one). It makes every token pushed *before* this cycle
        visible.

    Members
    -------
    i_comp : In(stream.Signature(computation_layout))
        One computation's request for this channel.
    i_dummy_in : In(inputs)
        Propagation: the token consumed at this index on input ``k`` carried a dummy flag.
    i_delta_next : In(delta_width)
        With an interval: ``i_comp.payload.delta`` of the next cycle (a node's decided queue's ``o_next``);
        the first cycle after a reset offers no computation.
    o_token : Out(stream.Signature(inband_token_layout))
        To the channel.
    o_flushed : Out(flushed_width(capacity))
        With an output buffer (``|q|_o > 1``) only: tokens made visible so far, modulo
        ``2 ** flushed_width(capacity)`` (registered). Without one every token is visible once written.
    i_flush : In(1)
        With ``flushable``: flush now (see above).
    """

    def __init__(self, *, capacity, output_buffer, interval, algorithm, index_width, data_width, payload_width,
                 inputs=1, propagate_mask=None, flushable=False, delta_width=1):
        check_integer("Capacity", capacity, 1)
        check_integer("Index width", index_width, 1)
        if not isinstance(output_buffer, int) or isinstance(output_buffer, bool) \
                or not 0 <= output_buffer <= capacity:
            raise ValueError(f"Output buffer must be an integer in [0, {capacity}], not {output_buffer!r}")
        if interval is not None:
            check_integer("Interval", interval)
            if interval >= 1 << (index_width - 1):
                raise ValueError(f"Interval must be below 2 ** (index_width - 1) = {1 << (index_width - 1)}, "
                                 f"not {interval}")
        if algorithm not in INBAND_ALGORITHMS:
            raise ValueError(f"Algorithm must be one of {', '.join(INBAND_ALGORITHMS)}, not {algorithm!r}")
        check_integer("Inputs", inputs, 1)
        if propagate_mask is None:
            propagate_mask = (1 << inputs) - 1
        check_integer("Propagate mask", propagate_mask)
        if propagate_mask >> inputs:
            raise ValueError(f"Propagate mask must select among {inputs} inputs, not {propagate_mask:#b}")
        self.capacity, self.output_buffer, self.interval = capacity, output_buffer, interval
        self.algorithm, self.index_width, self.propagate_mask = algorithm, index_width, propagate_mask
        self.flushable = flushable and output_buffer > 1
        members = {
            "i_comp": In(stream.Signature(computation_layout(index_width, data_width, payload_width,
                                                             delta_width))),
            "i_dummy_in": In(inputs),
            "o_token": Out(stream.Signature(inband_token_layout(index_width, data_width, payload_width))),
        }
        if interval is not None:
            members["i_delta_next"] = In(delta_width)
        if output_buffer > 1:
            members["o_flushed"] = Out(flushed_width(capacity))
        if self.flushable:
            members["i_flush"] = In(1)
        super().__init__(members)

    def elaborate(self, platform):
        m = Module()
        comp = self.i_comp.payload
        # i - LastOutputIndex_q, saturated (hdl.gap); None: no interval rule
        last = None if self.interval is None else GapCounter(self.interval - 1, comp.delta, name="last",
                                                             delta_next=self.i_delta_next)
        ob = self.output_buffer
        hidden = Signal(range(ob)) if ob > 1 else Const(0)  # a push reaching |q|_o hidden flushes

        emit = Signal()
        gap = Signal()
        flag = Signal()  # the token is a dummy, alone or as a flag on the data token
        push = Signal()
        flush = Signal()  # the push makes every hidden token and itself visible
        set_last = Signal()
        ob_full = hidden == ob - 1 if ob > 1 else Const(1)
        m.d.comb += [
            emit.eq(comp.emit & ~comp.eos),
            gap.eq(0 if last is None else last.exceeded),
            push.eq(comp.eos | emit | flag),
        ]
        if self.algorithm == "propagation":
            scheduled = gap | (self.i_dummy_in & self.propagate_mask).any()
            m.d.comb += [
                flag.eq(~comp.eos & (scheduled | (comp.msg_valid & ~emit))),
                flush.eq(comp.eos | flag | comp.msg_valid | ob_full),
                set_last.eq(flag),
            ]
        else:
            m.d.comb += [
                flag.eq(~comp.eos & ~emit & (comp.msg_valid | gap)),
                flush.eq(comp.eos | comp.msg_valid | gap | ob_full),
                set_last.eq(push & flush),
            ]

        token = self.o_token.payload
        m.d.comb += [
            self.i_comp.ready.eq(~push | self.o_token.ready),
            self.o_token.valid.eq(self.i_comp.valid & push),
            token.index.eq(comp.index),
            token.is_data.eq(emit),
            token.data.eq(comp.data),
            token.dummy.eq(flag),
            token.eos.eq(comp.eos),
            token.msg_valid.eq(comp.msg_valid),
            token.msg.eq(comp.msg),
        ]

        commit = self.i_comp.valid & self.i_comp.ready
        with m.If(commit):
            if ob > 1:
                with m.If(push & flush):
                    m.d.sync += [self.o_flushed.eq(self.o_flushed + hidden + 1), hidden.eq(0)]
                with m.Elif(push):
                    m.d.sync += hidden.eq(hidden + 1)
        budget = None if last is None else Mux(commit, last.advanced(set_last), last.budget)
        if self.flushable:
            budget = self._spontaneous_flush(m, commit, commit & push, commit & push & flush, hidden, last, budget)
        if last is not None:
            last.update(m, budget)
        return m

    def _spontaneous_flush(self, m, commit, pushed, flushed, hidden, last, budget):
        """``i_flush``: the tokens hidden before this cycle become visible; one pushed now stays hidden.

        Non-Propagation and Naive track visibility (``LastOutputIndex_q`` = the newest visible index),
        so the sender keeps the distance to its newest push (hdl.gap), as it keeps ``LastOutputIndex_q``.
        Returns ``last``'s next budget, given ``budget`` without the flush.
        """
        flush = self.i_flush & ~flushed & (hidden != 0)
        with m.If(flush):
            m.d.sync += [self.o_flushed.eq(self.o_flushed + hidden), hidden.eq(pushed)]
        if self.algorithm == "propagation" or last is None:
            return budget
        newest = GapCounter(last.limit, self.i_comp.payload.delta, name="newest")  # budget since the newest push
        with m.If(commit):
            m.d.sync += newest.budget.eq(newest.advanced(pushed))
        # on a flush LastOutputIndex_q := the newest push before this cycle
        return Mux(flush, Mux(commit, newest.advanced(0), newest.budget), budget)


class InbandReceiver(wiring.Component):
    """Receiver side of one in-band channel (002 Alg. 1, 2, 5: "wait until every input channel has a
    pending token").

    Offers the join the channel's head once it is visible: the receiver's count of popped tokens differs
    from the sender's ``o_flushed``. A data token offers its payload (``is_data``), a dummy its index, a
    token carrying a user message also the message (``is_msg``, delivered in the computation of its
    index), EOS offers EOS and stays. ``o_head.dummy`` tells the node that the head carries a dummy flag
    (Propagation, 002 Alg. 2).

    Parameters
    ----------
    capacity : int
        ``|q|``; sizes ``i_flushed``.
    index_width, data_width, payload_width : int
    buffered : bool
        The sender may hide tokens (an output buffer ``|q|_o > 1``). ``False``: every token it writes
        is visible at once (003: a buffer of 1 is none), so the head is offered whenever the channel
        holds one, and no pop count is kept.

    Members
    -------
    i_token : In(stream.Signature(inband_token_layout))
        From the channel.
    i_flushed : In(flushed_width(capacity))
        With ``buffered`` only: the sender's ``o_flushed``.
    o_head : Out(head_layout)
        The offer to the join; ``dummy``: it is a dummy or carries a dummy flag.
    i_consume : In(1)
        The join takes the head this cycle (ignored for EOS).
    """

    def __init__(self, *, capacity, index_width, data_width, payload_width, buffered=True):
        check_integer("Capacity", capacity, 1)
        self.buffered = bool(buffered)
        members = {
            "i_token": In(stream.Signature(inband_token_layout(index_width, data_width, payload_width))),
            "o_head": Out(head_layout(index_width, data_width, payload_width, dummy=True)),
            "i_consume": In(1),
        }
        if self.buffered:
            members["i_flushed"] = In(flushed_width(capacity))
        super().__init__(members)

    def elaborate(self, platform):
        m = Module()
        token = self.i_token.payload
        head = self.o_head
        offer = Signal()
        if self.buffered:  # visible while the pop count differs from the sender's flushed count
            popped = Signal.like(self.i_flushed)
            visible = popped != self.i_flushed
            with m.If(self.i_token.ready):
                m.d.sync += popped.eq(popped + 1)
        else:
            visible = 1
        m.d.comb += [
            offer.eq(self.i_token.valid & visible),
            head.valid.eq(offer),
            head.index.eq(token.index),
            head.is_data.eq(offer & token.is_data),
            head.data.eq(token.data),
            head.is_msg.eq(offer & token.msg_valid),
            head.msg.eq(token.msg),
            head.eos.eq(offer & token.eos),
            head.dummy.eq(offer & token.dummy),
        ]
        with m.If(self.i_consume & offer & ~token.eos):
            m.d.comb += self.i_token.ready.eq(1)
        return m

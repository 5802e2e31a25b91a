"""The credit protocol of 000 as printed, in hardware: ``CreditSender`` (Alg. 2, 4) and ``CreditReceiver``
(Alg. 1, 4), built for ``live_credit = false`` (credit messages batched by the threshold ``T``; 000 Fig. 3
deadlocks on them). The default, live credit, is :mod:`sfdf.hdl.counter`.

See docs/hardware.md: one computation pushes at most one control message (a user message carries the
whole SCB), and dummies live in a heartbeat register owned by the sender, ordered after earlier control
messages by a push count, so they never fill the control channel (000 Sec. 4.3) and never overtake a
credit. The printed Alg. 4 loop is corrected as docs/semantics.md says (erratum 5 in the README).
"""

from amaranth.hdl import Module, Mux, Signal
from amaranth.lib import stream, wiring
from amaranth.lib.wiring import In, Out

from .gap import GapCounter
from .params import check_integer
from .select import next_index_members, offered_index
from .tokens import (
    CTRL_CREDIT,
    CTRL_EOS,
    CTRL_USER,
    computation_layout,
    control_layout,
    data_layout,
    head_layout,
    heartbeat_layout,
    seq_width,
)

__all__ = ["CreditReceiver", "CreditSender"]


class CreditSender(wiring.Component):
    """Sender side of one edge: 000 Alg. 2 (threshold ``T``) and Alg. 4 (heartbeat ``[e]``).

    A computation is committed (``i_comp.valid & i_comp.ready``) only when the data channel can take
    its token and the control channel its message: ``i_comp.ready`` depends on the request and on the
    channels' ``ready``, never on ``i_comp.valid``.

    Parameters
    ----------
    capacity : int
        ``|q|``; SCB never exceeds it.
    control_capacity : int
        ``|q'|``; sizes the push counter.
    threshold : int
        ``T``, ``0 <= T < |q|``.
    heartbeat : int or None
        ``[e]``; None: never (unsafe on a cycle, for demonstrations).
    index_width, data_width, payload_width : int
    delta_width : int
        Bits of the computation's ``delta`` (:func:`sfdf.hdl.gap.delta_width`).

    Members
    -------
    i_comp : In(stream.Signature(computation_layout))
        One computation's request for this edge.
    o_data : Out(stream.Signature(data_layout))
        To the data channel.
    o_ctrl : Out(stream.Signature(control_layout))
        To the control channel.
    o_heartbeat : Out(heartbeat_layout)
        The heartbeat register, read by the receiver.
    i_heartbeat_clear : In(1)
        The receiver consumed the heartbeat.
    """

    def __init__(self, *, capacity, control_capacity, threshold, heartbeat, index_width, data_width,
                 payload_width, delta_width=1):
        check_integer("Capacity", capacity, 1)
        check_integer("Control capacity", control_capacity, 1)
        check_integer("Threshold", threshold)
        if threshold >= capacity:
            raise ValueError(f"Threshold must be below the capacity {capacity}, not {threshold}")
        if heartbeat is not None:
            check_integer("Heartbeat", heartbeat)
        self.capacity, self.threshold, self.heartbeat = capacity, threshold, heartbeat
        self.index_width = index_width
        super().__init__({
            "i_comp": In(stream.Signature(computation_layout(index_width, data_width, payload_width,
                                                             delta_width))),
            "o_data": Out(stream.Signature(data_layout(index_width, data_width))),
            "o_ctrl": Out(stream.Signature(control_layout(capacity, index_width, payload_width))),
            "o_heartbeat": Out(heartbeat_layout(index_width, control_capacity)),
            "i_heartbeat_clear": In(1),
        })
        self._seq_width = seq_width(control_capacity)

    def elaborate(self, platform):
        m = Module()
        comp = self.i_comp.payload
        scb = Signal(range(self.capacity + 1))
        pushes = Signal(self._seq_width)
        scb1 = Signal(range(self.capacity + 2))
        m.d.comb += scb1.eq(scb + comp.emit)

        # one control message: user message (carries all credits), EOS, or a credit flush. SCB <= T
        # between computations (a push empties it), so SCB' > T is SCB = T with a token, and SCB' != 0
        # a token or SCB != 0: equalities, no comparator on the commit path
        push = Signal()
        credit_due = Signal()
        dummy = Signal()
        m.d.comb += push.eq(comp.msg_valid | comp.eos | credit_due)
        batch_full = comp.emit & (scb == self.threshold)
        if self.heartbeat is None:
            m.d.comb += credit_due.eq(batch_full)
        else:
            # 000 Alg. 4 on budgets, not indices (hdl.gap): i - LastRecv > [e], i - LastSent > [e]
            recv = GapCounter(self.heartbeat, comp.delta, name="recv")
            sent = GapCounter(self.heartbeat, comp.delta, name="sent")
            m.d.comb += [
                credit_due.eq(batch_full | (recv.exceeded & (comp.emit | (scb != 0)))),
                # LastRecv := LastSent' with the control message, LastSent' = i when the token goes out
                dummy.eq(~comp.eos & Mux(push, ~comp.emit & sent.exceeded, recv.exceeded)),
            ]
            with m.If(self.i_comp.valid & self.i_comp.ready):
                sent_next = sent.advanced(comp.emit)
                m.d.sync += [sent.budget.eq(sent_next),
                             recv.budget.eq(Mux(dummy, self.heartbeat, Mux(push, sent_next, recv.advanced(0))))]
        kind = Signal(2)
        with m.If(comp.eos):
            m.d.comb += kind.eq(CTRL_EOS)
        with m.Elif(comp.msg_valid):
            m.d.comb += kind.eq(CTRL_USER)
        with m.Else():
            m.d.comb += kind.eq(CTRL_CREDIT)

        data_ok = ~comp.emit | self.o_data.ready
        ctrl_ok = ~push | self.o_ctrl.ready
        m.d.comb += [
            self.i_comp.ready.eq(data_ok & ctrl_ok),
            self.o_data.valid.eq(self.i_comp.valid & comp.emit & ctrl_ok),
            self.o_data.payload.index.eq(comp.index),
            self.o_data.payload.data.eq(comp.data),
            self.o_ctrl.valid.eq(self.i_comp.valid & push & data_ok),
            self.o_ctrl.payload.kind.eq(kind),
            self.o_ctrl.payload.credits.eq(scb1),
            self.o_ctrl.payload.index.eq(comp.index),
            self.o_ctrl.payload.with_token.eq(comp.emit),
            self.o_ctrl.payload.payload.eq(comp.msg),
        ]

        hb = self.o_heartbeat
        with m.If(self.i_heartbeat_clear):
            m.d.sync += hb.valid.eq(0)
        with m.If(self.i_comp.valid & self.i_comp.ready):
            m.d.sync += [scb.eq(Mux(push, 0, scb1)), pushes.eq(pushes + push)]
            with m.If(dummy):  # a newer dummy overwrites the register (coalescing), never blocks
                m.d.sync += [hb.valid.eq(1), hb.index.eq(comp.index), hb.seq.eq(pushes + push)]
        return m


class CreditReceiver(wiring.Component):
    """Receiver side of one edge: 000 Alg. 1 and the receive part of Alg. 4, as printed
    (``live_credit = false``; the default is :class:`sfdf.hdl.counter.CounterReceiver`).

    Offers the join one head per cycle: the data token when ``RCB > 0``; with ``RCB = 0`` a user message
    (after the data its credits covered: 000 Thm. 3.1) or EOS at the head of the control channel; else
    the heartbeat index once every control message pushed before it has been read. A user message is offered
    with the index it was sent after, so the join delivers it in that computation: copies of one message
    reaching a join on several inputs meet in one computation and are forwarded once (docs/hardware.md).
    At most one user message per index per edge.

    Parameters
    ----------
    capacity, control_capacity, index_width, data_width, payload_width : int

    Members
    -------
    i_data : In(stream.Signature(data_layout))
    i_ctrl : In(stream.Signature(control_layout))
    i_heartbeat : In(heartbeat_layout)
    o_heartbeat_clear : Out(1)
    o_head : Out(head_layout)
        The offer to the join.
    i_consume : In(1)
        The join takes the head this cycle.
    o_indices, o_early, o_choice
        ``o_head.index`` in parts (:func:`sfdf.hdl.select.next_index_members`): the heartbeat's index, the
        control head's and the data head's; ``o_early``: the control channel holds a message;
        ``o_choice``: the data head has credit.
    """

    def __init__(self, *, capacity, control_capacity, index_width, data_width, payload_width):
        check_integer("Capacity", capacity, 1)
        check_integer("Control capacity", control_capacity, 1)
        self.capacity = capacity
        super().__init__({
            "i_data": In(stream.Signature(data_layout(index_width, data_width))),
            "i_ctrl": In(stream.Signature(control_layout(capacity, index_width, payload_width))),
            "i_heartbeat": In(heartbeat_layout(index_width, control_capacity)),
            "o_heartbeat_clear": Out(1),
            "o_head": Out(head_layout(index_width, data_width, payload_width)),
            "i_consume": In(1),
            **next_index_members(index_width),
        })
        self._seq_width = seq_width(control_capacity)

    def elaborate(self, platform):
        m = Module()
        rcb = Signal(range(self.capacity + 1))
        taken = Signal()  # the head message's credits are already in RCB
        pops = Signal(self._seq_width)
        ctrl = self.i_ctrl.payload
        head = self.o_head
        fresh = (ctrl.credits != 0) & ~taken
        # credits on the head message are absorbed and usable in the same cycle: no bubble per batch
        absorb = (rcb == 0) & self.i_ctrl.valid & fresh
        rcb_eff = Signal(range(self.capacity + 1))
        m.d.comb += rcb_eff.eq(Mux(absorb, ctrl.credits, rcb))
        with m.If(absorb):
            with m.If(ctrl.kind == CTRL_CREDIT):
                m.d.comb += self.i_ctrl.ready.eq(1)
            with m.Else():
                m.d.sync += taken.eq(1)
        m.d.sync += [rcb.eq(rcb_eff), pops.eq(pops + (self.i_ctrl.valid & self.i_ctrl.ready))]

        # the index offered: a data token's with credit, else a control message's, else the heartbeat's
        # (one two-level mux with no default: the valid bits say which, if any, counts)
        has_credit = (rcb != 0) | absorb  # RCB' != 0 (absorbed messages carry credits)
        m.d.comb += [
            head.data.eq(self.i_data.payload.data),
            head.msg.eq(ctrl.payload),
            self.o_indices[0].eq(self.i_heartbeat.index),
            self.o_indices[1].eq(ctrl.index),
            self.o_indices[2].eq(self.i_data.payload.index),
            self.o_early.eq(self.i_ctrl.valid),
            self.o_choice.eq(has_credit),
            head.index.eq(offered_index(self)),
        ]
        with m.If(has_credit):
            m.d.comb += [head.valid.eq(self.i_data.valid), head.is_data.eq(1)]
            # the user message sent with this token (holding its last credit) goes with it
            last_credit = Mux(absorb, ctrl.credits == 1, rcb == 1)  # RCB' == 1
            with_msg = (last_credit & self.i_ctrl.valid & (ctrl.kind == CTRL_USER) & (taken | absorb)
                        & ctrl.with_token)
            m.d.comb += head.is_msg.eq(with_msg)
            with m.If(self.i_consume & self.i_data.valid):
                m.d.comb += self.i_data.ready.eq(1)
                m.d.sync += rcb.eq(rcb_eff - 1)
                with m.If(with_msg):
                    m.d.comb += self.i_ctrl.ready.eq(1)
                    m.d.sync += taken.eq(0)  # overrides a same-cycle "taken"
        with m.Elif(self.i_ctrl.valid):
            with m.If(ctrl.kind == CTRL_USER):
                m.d.comb += [head.valid.eq(1), head.is_msg.eq(1)]
                with m.If(self.i_consume):
                    m.d.comb += self.i_ctrl.ready.eq(1)
                    m.d.sync += taken.eq(0)
            with m.Elif(ctrl.kind == CTRL_EOS):
                m.d.comb += [head.valid.eq(1), head.eos.eq(1)]
        # the heartbeat is current while exactly the messages pushed before it have been popped
        current = self.i_heartbeat.valid & (self.i_heartbeat.seq == pops)
        with m.Elif(current):
            m.d.comb += head.valid.eq(1)
            with m.If(self.i_consume):
                m.d.comb += self.o_heartbeat_clear.eq(1)
        # popping a message pushed after the dummy makes the dummy obsolete (that message's tokens have
        # larger indices): clear it, or the pop count would wrap round to its seq and offer a stale index
        with m.If(current & self.i_ctrl.valid & self.i_ctrl.ready):
            m.d.comb += self.o_heartbeat_clear.eq(1)
        return m

"""The credit protocol of 000 in hardware: ``CreditSender`` (Alg. 2, 4) and ``CreditReceiver`` (Alg. 1, 4).

See docs/hardware.md: one computation pushes at most one control message (a user message carries the
whole SCB), and dummies live in a heartbeat register owned by the sender, ordered after earlier control
messages by a push count, so they never fill the control channel (000 Sec. 4.3) and never overtake a
credit. The printed Alg. 4 loop is corrected as docs/semantics.md says (erratum 5 in the README).
"""

from amaranth.hdl import Const, Module, Mux, Signal
from amaranth.lib import stream, wiring
from amaranth.lib.wiring import In, Out

from .params import check_integer
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
                 payload_width):
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
            "i_comp": In(stream.Signature(computation_layout(index_width, data_width, payload_width))),
            "o_data": Out(stream.Signature(data_layout(index_width, data_width))),
            "o_ctrl": Out(stream.Signature(control_layout(capacity, index_width, payload_width))),
            "o_heartbeat": Out(heartbeat_layout(index_width, control_capacity)),
            "i_heartbeat_clear": In(1),
        })
        self._seq_width = seq_width(control_capacity)

    def _gap_exceeds(self, index, last):
        """``i - last > [e]`` in serial arithmetic (000 Alg. 4's heartbeat test)."""
        if self.heartbeat is None:
            return Const(0)
        return ((index - last) & ((1 << self.index_width) - 1)) > self.heartbeat

    def elaborate(self, platform):
        m = Module()
        comp = self.i_comp.payload
        scb = Signal(range(self.capacity + 1))
        last_sent = Signal(self.index_width)
        last_recv = Signal(self.index_width)
        pushes = Signal(self._seq_width)

        scb1 = Signal(range(self.capacity + 2))
        last_sent1 = Signal(self.index_width)
        m.d.comb += [scb1.eq(scb + comp.emit), last_sent1.eq(last_sent)]
        with m.If(comp.emit):
            m.d.comb += last_sent1.eq(comp.index)

        # one control message: user message (carries all credits), EOS, or a credit flush
        credit_due = (scb1 > self.threshold) | (self._gap_exceeds(comp.index, last_recv) & (scb1 != 0))
        push = Signal()
        kind = Signal(2)
        m.d.comb += push.eq(comp.msg_valid | comp.eos | credit_due)
        with m.If(comp.eos):
            m.d.comb += kind.eq(CTRL_EOS)
        with m.Elif(comp.msg_valid):
            m.d.comb += kind.eq(CTRL_USER)
        with m.Else():
            m.d.comb += kind.eq(CTRL_CREDIT)
        last_recv1 = Signal(self.index_width)
        m.d.comb += last_recv1.eq(last_recv)
        with m.If(push):
            m.d.comb += last_recv1.eq(last_sent1)
        dummy = Signal()
        m.d.comb += dummy.eq(~comp.eos & self._gap_exceeds(comp.index, last_recv1))

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
            self.o_ctrl.payload.payload.eq(comp.msg),
        ]

        hb = self.o_heartbeat
        with m.If(self.i_heartbeat_clear):
            m.d.sync += hb.valid.eq(0)
        with m.If(self.i_comp.valid & self.i_comp.ready):
            m.d.sync += [
                scb.eq(Mux(push, 0, scb1)),
                last_sent.eq(last_sent1),
                last_recv.eq(Mux(dummy, comp.index, last_recv1)),
                pushes.eq(pushes + push),
            ]
            with m.If(dummy):  # a newer dummy overwrites the register (coalescing), never blocks
                m.d.sync += [hb.valid.eq(1), hb.index.eq(comp.index), hb.seq.eq(pushes + push)]
        return m


class CreditReceiver(wiring.Component):
    """Receiver side of one edge: 000 Alg. 1 and the receive part of Alg. 4.

    Offers the join one head per cycle: the data token when ``RCB > 0``; with ``RCB = 0`` a user message
    (after the data its credits covered: 000 Thm. 3.1) or EOS at the head of the control channel, else the
    heartbeat index once every control message pushed before it has been read. A user message is offered
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
                m.d.sync += pops.eq(pops + 1)
            with m.Else():
                m.d.sync += taken.eq(1)
        m.d.sync += rcb.eq(rcb_eff)

        with m.If(rcb_eff != 0):
            m.d.comb += [
                head.valid.eq(self.i_data.valid),
                head.index.eq(self.i_data.payload.index),
                head.data.eq(self.i_data.payload.data),
                head.is_data.eq(1),
            ]
            # the user message sent right after this token (same index, holding its credit) goes with it
            with_msg = ((rcb_eff == 1) & self.i_ctrl.valid & (ctrl.kind == CTRL_USER) & (taken | absorb)
                        & (ctrl.index == self.i_data.payload.index))
            m.d.comb += [head.is_msg.eq(with_msg), head.msg.eq(ctrl.payload)]
            with m.If(self.i_consume & self.i_data.valid):
                m.d.comb += self.i_data.ready.eq(1)
                m.d.sync += rcb.eq(rcb_eff - 1)
                with m.If(with_msg):
                    m.d.comb += self.i_ctrl.ready.eq(1)
                    m.d.sync += [pops.eq(pops + 1), taken.eq(0)]  # overrides a same-cycle "taken"
        with m.Elif(self.i_ctrl.valid):
            with m.If(ctrl.kind == CTRL_USER):
                m.d.comb += [head.valid.eq(1), head.index.eq(ctrl.index), head.is_msg.eq(1),
                             head.msg.eq(ctrl.payload)]
                with m.If(self.i_consume):
                    m.d.comb += self.i_ctrl.ready.eq(1)
                    m.d.sync += [pops.eq(pops + 1), taken.eq(0)]
            with m.Elif(ctrl.kind == CTRL_EOS):
                m.d.comb += [head.valid.eq(1), head.eos.eq(1)]
        with m.Elif(self.i_heartbeat.valid & (self.i_heartbeat.seq == pops)):
            m.d.comb += [head.valid.eq(1), head.index.eq(self.i_heartbeat.index)]
            with m.If(self.i_consume):
                m.d.comb += self.o_heartbeat_clear.eq(1)
        return m

"""Live credit: 000's credit protocol with the credits carried by counters beside the FIFOs.

000 (Alg. 1, 2) keeps data tokens and control messages in two channels and orders them with credits: a
control message carries the number of tokens pushed since the previous one, and the receiver takes a
token only with credit, so it never takes a token that a message pushed before it should precede.
Credits travel in control messages, batched by the threshold ``T``, so a token waits for its batch.

In hardware both channels are written by the same commit and are visible to the receiver after the
same latency (:class:`sfdf.hdl.channels.DataChannel`), so the receiver sees every message pushed before
the token at its data head. A message therefore needs only its *stamp*, the count of tokens pushed
before it (its own token not counted when it is sent with one), and the receiver only its count of
tokens popped. Both counts are LFSR states (:mod:`sfdf.hdl.stamps`: they are only compared for
equality, exactly modulo ``2 ** stamp_width - 1``, and step with no carry chain):

* the head message is *due* when its stamp equals the pops: it precedes the next token;
* otherwise every token up to the stamp is credited (000's credits: ``stamp - pops``), and with no
  message in flight every token is (the credit of each token arrives with it);
* a message sent with a token (``with_token``; its stamp equals the pops while its token is the data
  head) goes with that token, and is never due.

There are no credit messages and no threshold (``T`` has no effect): a token is consumable downstream
the cycle after its push, and the control channel holds only user messages and EOS. The heartbeat
register of docs/hardware.md holds the latest dummy, and pushing a later token or message clears it:
that item has a larger index, and a receiver that sees it learns more than the dummy says. So the
register only ever holds a dummy that follows everything in the channels, and the receiver offers it
once both channels are empty: no stamp and no message count are needed. The sender's interval test is
000 Alg. 4's ``i - LastRecvIdx > [e]`` with ``LastRecvIdx`` the last token's or dummy's index (every
token is visible to the receiver at once). The reference model runs the same protocol
(``gen.refmodel.credit``, ``live_credit``); docs/hardware.md has the argument.
"""

from amaranth.hdl import Module, Mux, Signal
from amaranth.lib import data, stream, wiring
from amaranth.lib.wiring import In, Out

from .gap import GapCounter
from .params import check_integer
from .select import chosen, next_index_members, offered_index
from .stamps import STAMP_SEED, stamp_step, stamp_step_value
from .tokens import (
    computation_layout,
    counter_ahead_layout,
    counter_control_layout,
    counter_data_layout,
    counter_heartbeat_layout,
    head_layout,
    stamp_width,
)

__all__ = ["CounterReceiver", "CounterSender"]


class CounterSender(wiring.Component):
    """Sender side of one live-credit edge: tokens, stamped user messages and EOS, and dummies in the
    heartbeat register (000 Alg. 2, 4 with credits by counter).

    ``i_comp.ready`` depends on the request and on the channels' ``ready``, never on ``i_comp.valid``;
    a computation commits (``valid & ready``) only when both channels can take what it pushes. A commit
    that pushes a token or a message clears the heartbeat register unless it writes a new dummy.

    Parameters
    ----------
    capacity : int
        ``|q|``: sizes the stamps.
    control_capacity : int
        ``|q'|``.
    heartbeat : int or None
        ``[e]``; None: never (unsafe on a cycle, for demonstrations).
    index_width, data_width, payload_width, delta_width : int
        As :class:`sfdf.hdl.credit.CreditSender`.
    candidates : bool
        000 Alg. 4's test ``i - LastRecvIdx > [e]`` taken for each of a receiver's three candidate indices
        (``i_indices``, ``i_early``, ``i_choice``: :func:`sfdf.hdl.select.next_index_members`, each index a
        register) against ``LastRecvIdx`` (a register), the receiver's choice after, instead of the budget
        of ``comp.delta`` (:mod:`sfdf.hdl.gap`), whose subtraction follows the choice: for a node that sends in
        the cycle its receiver offers (:class:`sfdf.hdl.single_stage.SingleStageNode`; docs/hardware.md, "The
        single-stage node", for why the distance is exact modulo ``2^w``). ``comp.index`` must be the chosen
        candidate; ``heartbeat`` not None.
    heartbeat_in_head : bool
        The data channel's head carries the heartbeat's index while the channel is empty (for a
        receiver with :class:`CounterReceiver`'s ``heartbeat_in_head``): the heartbeat register's index
        is then the last committed computation's (at or above the dummy's: a stronger promise, as true),
        and the write data's index is the register's next one. Only for a channel whose head register
        reloads the write data in every cycle it is empty (:class:`sfdf.hdl.channels.DataChannel` with a
        head in front of LUT RAM rows, capacity 2 and up).

    Members
    -------
    i_comp : In(stream.Signature(computation_layout))
    o_data : Out(stream.Signature(counter_data_layout))
    o_ctrl : Out(stream.Signature(counter_control_layout))
    o_heartbeat : Out(counter_heartbeat_layout)
    i_heartbeat_clear : In(1)
    i_indices, i_early, i_choice
        With ``candidates``: the receiver's ``o_indices``, ``o_early``, ``o_choice``.
    """

    def __init__(self, *, capacity, control_capacity, heartbeat, index_width, data_width, payload_width,
                 delta_width=1, heartbeat_in_head=False, candidates=False):
        check_integer("Capacity", capacity, 1)
        check_integer("Control capacity", control_capacity, 1)
        if heartbeat is not None:
            check_integer("Heartbeat", heartbeat)
        elif candidates:
            raise ValueError("A sender without heartbeat has no interval test to take per candidate")
        self.capacity, self.heartbeat = capacity, heartbeat
        self.heartbeat_in_head, self.candidates = heartbeat_in_head, candidates
        super().__init__({
            **({"i_indices": In(data.ArrayLayout(index_width, 3)), "i_early": In(1), "i_choice": In(1)}
               if candidates else {}),
            "i_comp": In(stream.Signature(computation_layout(index_width, data_width, payload_width,
                                                             delta_width))),
            "o_data": Out(stream.Signature(counter_data_layout(index_width, data_width))),
            "o_ctrl": Out(stream.Signature(counter_control_layout(capacity, index_width, payload_width))),
            "o_heartbeat": Out(counter_heartbeat_layout(index_width)),
            "i_heartbeat_clear": In(1),
        })

    def elaborate(self, platform):
        m = Module()
        comp = self.i_comp.payload
        commit = self.i_comp.valid & self.i_comp.ready
        # tokens pushed, as an LFSR's state (hdl.stamps): a message's stamp is the count before its own
        # token, so it needs no adder, and the count steps by a shift and an XOR
        pushed = Signal(stamp_width(self.capacity), init=STAMP_SEED)
        push = Signal()
        m.d.comb += push.eq(comp.msg_valid | comp.eos)
        # no token pushed since the previous message (or the start): the next message's stamp equals its
        quiet = Signal(init=1)

        dummy = Signal()
        if self.candidates:
            # LastRecvIdx: the last token's or dummy's index; a distance per candidate, the choice after
            last = Signal.like(comp.index, name="last_recv")
            w = len(comp.index)
            late = [(self.i_indices[c] - last)[:w] > self.heartbeat for c in range(3)]
            m.d.comb += dummy.eq(~comp.eos & ~comp.emit & chosen(late, self.i_early, self.i_choice))
            with m.If(commit & (comp.emit | dummy)):
                m.d.sync += last.eq(comp.index)
        elif self.heartbeat is not None:
            # 000 Alg. 4: i - LastRecvIdx > [e], LastRecvIdx the last token's or dummy's index
            recv = GapCounter(self.heartbeat, comp.delta, name="recv")
            m.d.comb += dummy.eq(~comp.eos & ~comp.emit & recv.exceeded)
            with m.If(commit):
                m.d.sync += recv.budget.eq(recv.advanced(comp.emit | dummy))

        data_ok = ~comp.emit | self.o_data.ready
        ctrl_ok = ~push | self.o_ctrl.ready
        ctrl = self.o_ctrl.payload
        hb = self.o_heartbeat
        index = comp.index
        if self.heartbeat_in_head:
            # the heartbeat register's next index (the committed computation's): an empty channel's head
            # register takes the write data every cycle, so it holds the heartbeat's index then
            index = Mux(commit, comp.index, hb.index)
        m.d.comb += [
            self.i_comp.ready.eq(data_ok & ctrl_ok),
            self.o_data.valid.eq(self.i_comp.valid & comp.emit & ctrl_ok),
            self.o_data.payload.index.eq(index),
            self.o_data.payload.data.eq(comp.data),
            self.o_data.payload.msg.eq(push),
            self.o_ctrl.valid.eq(self.i_comp.valid & push & data_ok),
            ctrl.eos.eq(comp.eos),
            ctrl.stamp.eq(pushed),
            ctrl.quiet.eq(quiet & ~comp.emit),
            ctrl.index.eq(comp.index),
            ctrl.with_token.eq(comp.emit),
            ctrl.payload.eq(comp.msg),
        ]

        with m.If(self.i_heartbeat_clear | commit & (comp.emit | push)):  # consumed, or a later item pushed
            m.d.sync += hb.valid.eq(0)
        with m.If(commit & comp.emit):
            m.d.sync += pushed.eq(stamp_step(pushed))
        with m.If(commit):
            with m.If(push):
                m.d.sync += quiet.eq(1)
            with m.Elif(comp.emit):
                m.d.sync += quiet.eq(0)
            with m.If(dummy):  # a newer dummy overwrites the register (coalescing), never blocks
                m.d.sync += hb.valid.eq(1)
            # the dummy's index; with heartbeat_in_head every committed computation's (no token at or
            # below it is to come; a dummy is never EOS)
            with m.If(~comp.eos if self.heartbeat_in_head else dummy):
                m.d.sync += hb.index.eq(comp.index)
        return m


class CounterReceiver(wiring.Component):
    """Receiver side of one live-credit edge: offers the join one head per cycle, in push order.

    * the head control message when it is due (its stamp equals the tokens popped): a user message
      alone, with the index it was sent after, or EOS;
    * else the data token, with the user message sent with it (``with_token``, stamp = pops);
    * else the heartbeat's index once both channels are empty: the sender clears the register when it
      pushes a later token or message, so everything in the channels precedes the dummy.

    Parameters
    ----------
    capacity, control_capacity, index_width, data_width, payload_width : int
    heartbeat_in_head : bool
        The sender keeps the heartbeat's index in the empty data channel's head (:class:`CounterSender`'s
        ``heartbeat_in_head``), so the heartbeat's offer takes the data head's index: ``o_indices[0]`` is
        ``o_indices[1]``, and a join ordering the next heads compares one early candidate, not two:
        ``o_join_index``, the same index from the data channel's copy of its head's index
        (``i_join_index``, :class:`sfdf.hdl.channels.DataChannel`'s ``copy``), for the join's comparators.
        Its ``due`` is then a register, computed a cycle ahead from the channels' next state
        (``i_ahead``, :class:`sfdf.hdl.channels.DataChannel`'s ``ahead``), so the offer's choice leaves a
        flip-flop.

    Members
    -------
    i_data : In(stream.Signature(counter_data_layout))
    i_ctrl : In(stream.Signature(counter_control_layout))
    i_heartbeat : In(counter_heartbeat_layout)
    o_heartbeat_clear : Out(1)
    o_head : Out(head_layout)
        The offer to the join.
    i_consume : In(1)
        The join takes the head this cycle.
    o_indices, o_early, o_choice
        ``o_head.index`` in parts (:func:`sfdf.hdl.select.next_index_members`): the heartbeat's index, the
        data head's and the control head's; ``o_early``: the data channel holds a token; ``o_choice``: the
        control head is due.
    """

    def __init__(self, *, capacity, control_capacity, index_width, data_width, payload_width,
                 heartbeat_in_head=False):
        check_integer("Capacity", capacity, 1)
        check_integer("Control capacity", control_capacity, 1)
        self.capacity, self.heartbeat_in_head = capacity, heartbeat_in_head
        super().__init__({
            **next_index_members(index_width),
            "i_data": In(stream.Signature(counter_data_layout(index_width, data_width))),
            "i_ctrl": In(stream.Signature(counter_control_layout(capacity, index_width, payload_width))),
            "i_heartbeat": In(counter_heartbeat_layout(index_width)),
            "o_heartbeat_clear": Out(1),
            "o_head": Out(head_layout(index_width, data_width, payload_width)),
            "i_consume": In(1),
            **({"i_join_index": In(index_width), "o_join_index": Out(index_width),
                "i_ahead": In(counter_ahead_layout())} if heartbeat_in_head else {}),
        })

    def elaborate(self, platform):
        m = Module()
        width = stamp_width(self.capacity)
        pops = Signal(width, init=STAMP_SEED)  # tokens popped, as the sender counts them (hdl.stamps)
        pops1 = Signal(width, init=stamp_step_value(STAMP_SEED, width))  # one more, for next cycle's test
        ctrl, hb, head = self.i_ctrl.payload, self.i_heartbeat, self.o_head
        data_valid = self.i_data.valid
        # whether the head message is due (its stamp equals the pops) comes from two registers, by what
        # the last cycle did (docs/hardware.md, "Live credit"):
        # * the control channel was empty (renewed, not known): a head now was pushed then, and its stamp
        #   less the pops is the data channel's level (both channels show a push after the same delay),
        #   so it is due iff the data channel is empty;
        # * a message was popped (renewed, known): the pops equal its stamp, and the head now is the next
        #   message, due iff no token was pushed between the two (``quiet``, stamped by the sender);
        # * else the head stayed (not renewed), and ``known`` is whether its stamp equals this cycle's pops:
        #   last cycle's ``due`` if no token was popped, else its stamp compared with ``pops + 1``
        #   (``pops1``, and not sent with a token).
        #   Five inputs in all: one LUT5 after the registers.
        # With heartbeat_in_head (a join ordering its heads a cycle ahead) ``due`` is itself a register,
        # the same cases decided a cycle early from the channels' next state (``i_ahead``).
        due = Signal()
        current = Signal()
        ride = Signal()  # the data head carries a message (sent with it): the control head (never due)
        data_pop, ctrl_pop = Signal(), Signal()
        # after a token is popped, the head message (if it stays) is due iff it precedes the next token: its
        # stamp (the tokens before its own, hdl.stamps) equals the pops after the pop, and it was not sent
        # with a token (that one goes with its token, never alone)
        following = (ctrl.stamp == pops1) & ~ctrl.with_token
        if self.heartbeat_in_head:
            # the same three cases a cycle ahead, from the channels' next state: a head that stays (due
            # again unless a token is popped, then its stamp against pops + 1); a head after a pop (its
            # quiet); a message into an empty control channel (due iff the data channel will be empty)
            ahead = self.i_ahead
            stays = self.i_ctrl.valid & ~ctrl_pop
            m.d.sync += due.eq(Mux(stays, Mux(data_pop, following, due),
                                   ahead.ctrl_valid & Mux(self.i_ctrl.valid, ahead.ctrl_quiet, ~ahead.data_valid)))
        else:
            renewed = Signal(init=1)
            known = Signal()
            m.d.comb += due.eq(Mux(renewed, self.i_ctrl.valid & Mux(known, ctrl.quiet, ~data_valid), known))
            m.d.sync += [
                renewed.eq(~self.i_ctrl.valid | ctrl_pop),
                # a head that stays and no token popped: this cycle's due (exact) is next cycle's comparison,
                # so one comparator serves: the stamp against the pops after a pop
                known.eq(self.i_ctrl.valid & (ctrl_pop | Mux(data_pop, following, due))),
            ]
        m.d.comb += [
            ride.eq(data_valid & self.i_data.payload.msg),
            # the control pop, flat: a due message (EOS stays), or the one sent with the popped token
            ctrl_pop.eq(self.i_consume & Mux(due, ~ctrl.eos, ride)),
            current.eq(hb.valid & ~data_valid & ~self.i_ctrl.valid),  # everything before it popped
            head.data.eq(self.i_data.payload.data),
            head.msg.eq(ctrl.payload),
            # with heartbeat_in_head the data head's index is the heartbeat's while the channel is empty
            self.o_indices[0].eq(self.i_data.payload.index if self.heartbeat_in_head else hb.index),
            self.o_indices[1].eq(self.i_data.payload.index),
            *([self.o_join_index.eq(self.i_join_index)] if self.heartbeat_in_head else []),
            self.o_indices[2].eq(ctrl.index),
            self.o_early.eq(data_valid),
            self.o_choice.eq(due),
            head.index.eq(offered_index(self)),
            self.i_data.ready.eq(data_pop),
            self.i_ctrl.ready.eq(ctrl_pop),
        ]
        with m.If(due):
            m.d.comb += [head.valid.eq(1), head.is_msg.eq(~ctrl.eos), head.eos.eq(ctrl.eos)]
        with m.Elif(data_valid):
            m.d.comb += [head.valid.eq(1), head.is_data.eq(1), head.is_msg.eq(ride),
                         data_pop.eq(self.i_consume)]
        with m.Elif(current):
            m.d.comb += [head.valid.eq(1), self.o_heartbeat_clear.eq(self.i_consume)]
        with m.If(data_pop):
            m.d.sync += [pops.eq(pops1), pops1.eq(stamp_step(pops1))]
        return m

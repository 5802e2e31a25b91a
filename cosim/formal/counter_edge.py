"""Proof of one live-credit edge: ``CounterSender`` -> data channel + control channel + heartbeat register
-> ``CounterReceiver`` (000 Alg. 1, 2, 4 with credits by counter; :mod:`sfdf.hdl.counter`; docs/hardware.md,
"Live credit").

The environment is :mod:`.credit_edge`'s: the sending node's request is ``AnySeq`` every cycle, assumed
only of committed computations (:func:`.environment.committed_computations`: growing indices, ``delta``
the saturated step, nothing after EOS), and the receiving join's ``i_consume`` is ``AnySeq``.

What is proved, in every reachable state:

* no channel overflows: a committed token enters the data channel and a committed user message or EOS
  the control channel in the same cycle, and nothing enters otherwise;
* the stamps are exact: every message's stamp is at most ``|q|`` tokens ahead of the receiver's pops
  (so the counts, LFSR states of period ``2 ** bits(|q| + 1) - 1`` (:mod:`sfdf.hdl.stamps`), never
  alias), and the receiver's counts equal the sender's less what the channels hold; the proof reads
  each state as its number of steps from the seed;
* the receiver never offers an index older than one it offered before (EOS is index infinity), and a
  heartbeat it offers is below every token still in the data channel (000 Alg. 4);
* the receiver's ``due`` (from registers, or itself a register with ``heartbeat_in_head``) is exactly
  whether the head message's stamp equals its pops;
* the receiver pops only what it offered and the join consumed, and pops what was consumed; it clears
  the heartbeat only when it was consumed, and the heartbeat follows every item in the channels (the
  sender clears it when it pushes a later one).

The ``invariant:`` assertions (the merged commit order of tokens, messages and the dummy, by stamp and
push count) make the properties inductive and are proved like the rest.
"""

from __future__ import annotations

from amaranth.asserts import AnySeq
from amaranth.hdl import Assert, Assume, Cat, Elaboratable, Module, Mux, Signal
from amaranth.lib import wiring

from sfdf.hdl.channels import ControlChannel, DataChannel
from sfdf.hdl.counter import CounterReceiver, CounterSender
from sfdf.hdl.gap import delta_width
from sfdf.hdl.select import chosen
from sfdf.hdl.stamps import stamp_sequence, stamp_step
from sfdf.hdl.tokens import counter_control_layout, counter_data_layout

from .channel import attach_channel, driven_signals
from .credit_edge import internal_registers
from .environment import any_requests, credit_moves
from .fifo import ModelFifo

__all__ = ["CounterEdgeHarness"]


class CounterEdgeHarness(Elaboratable):
    """One live-credit edge under an unconstrained environment; see the module docstring.

    Parameters
    ----------
    capacity, control_capacity : int
        ``|q|``, ``|q'|``.
    heartbeat : int or None
        ``[e]``.
    index_width : int
        ``w``: at most ``2 ** w - 1`` computations per run.
    channels : {"model", "rtl"}
        As :class:`.credit_edge.CreditEdgeHarness`.
    sender, receiver, data_channel : type
        The classes under proof (subclasses for the broken variants of :mod:`.mutants`; ``data_channel``
        with ``channels="rtl"``).
    strengthen : bool
        Assert the strengthening invariants.
    heartbeat_in_head : bool
        Sender and receiver with ``heartbeat_in_head`` (the heartbeat's index in the empty data channel's
        head register; needs ``channels="rtl"`` and ``capacity >= 2``, whose head reloads while empty),
        and the data channel's copy of its head's index for the join (``DataChannel(copy="index")``);
        the receiver's ``due`` is then a register computed a cycle ahead from the channels' next state
        (``DataChannel(ahead=...)``), and the proof asserts it equals the stamp comparison.
    candidates : bool
        The sender takes 000 Alg. 4's test for each of three candidate indices against its ``LastRecvIdx``
        and chooses after (``CounterSender(candidates=True)``, the single-stage node's): the candidates and
        the choice are ``AnySeq``, assumed to choose the requested computation's index; the proof asserts
        the same test, and that the sender's ``LastRecvIdx`` is the last token's or dummy's index.
    """

    def __init__(self, *, capacity=2, control_capacity=2, heartbeat=1, index_width=4, channels="model",
                 sender=CounterSender, receiver=CounterReceiver, strengthen=True, heartbeat_in_head=False,
                 data_channel=DataChannel, candidates=False):
        if channels not in ("model", "rtl"):
            raise ValueError(f"channels must be 'model' or 'rtl', not {channels!r}")
        if heartbeat_in_head and (channels != "rtl" or capacity < 2):
            raise ValueError("heartbeat_in_head needs the RTL channels and a capacity of 2 or more")
        self.capacity, self.control_capacity, self.heartbeat = capacity, control_capacity, heartbeat
        self.index_width, self.channels, self.heartbeat_in_head = index_width, channels, heartbeat_in_head
        self.sender_class, self.receiver_class, self.strengthen = sender, receiver, strengthen
        self.data_channel_class = data_channel
        if candidates and heartbeat is None:
            raise ValueError("candidates needs a heartbeat: there is no test to take without one")
        self.candidates = candidates

    def elaborate(self, platform):
        m = Module()
        c, cc, w = self.capacity, self.control_capacity, self.index_width
        dw = delta_width([self.heartbeat])
        widths = {"capacity": c, "control_capacity": cc, "index_width": w, "data_width": 1, "payload_width": 1}
        in_head = {"heartbeat_in_head": True} if self.heartbeat_in_head else {}
        snd = self.sender_class(heartbeat=self.heartbeat, delta_width=dw, **widths, **in_head,
                                **({"candidates": True} if self.candidates else {}))
        rcv = self.receiver_class(**widths, **in_head)
        modules = {}
        for name, part in (("sender", snd), ("receiver", rcv)):
            part._MustUse__silence = True  # elaborated here, to reach the registers
            modules[name] = m.submodules[name] = part.elaborate(platform)
        sent = driven_signals(modules["sender"])
        pushed, quiet = internal_registers(sent, snd, "pushed", "quiet")
        budget = sender_last = dummy = None
        if self.candidates:
            sender_last, dummy = internal_registers(sent, snd, "last_recv", "dummy")
        elif self.heartbeat is not None:
            budget, dummy = internal_registers(sent, snd, "recv_budget", "dummy")
        received = driven_signals(modules["receiver"])
        pops, pops1, due, ride = internal_registers(received, rcv, "pops", "pops1", "due", "ride")
        # without heartbeat_in_head, due comes from two registers set by what the last cycle did; with it,
        # due is itself a register, computed a cycle ahead from the channels' next state
        renewed, known = (None, None) if self.heartbeat_in_head else internal_registers(received, rcv, "renewed", "known")

        dlayout, clayout = counter_data_layout(w, 1), counter_control_layout(c, w, 1)
        if self.channels == "model":
            dch, cch = ModelFifo(dlayout, c), ModelFifo(clayout, cc)
        else:
            copy = "index" if self.heartbeat_in_head else None
            # with heartbeat_in_head the channels tell the receiver's due their next state
            dch = self.data_channel_class(dlayout, c, copy=copy, ahead=() if copy else None)
            cch = ControlChannel(clayout, cc, ahead=("quiet",) if copy else None)
        dent = attach_channel(m, dch, "data")
        ctrl = attach_channel(m, cch, "control")
        wiring.connect(m, snd.o_data, dch.i_stream)
        wiring.connect(m, dch.o_stream, rcv.i_data)
        wiring.connect(m, snd.o_ctrl, cch.i_stream)
        wiring.connect(m, cch.o_stream, rcv.i_ctrl)
        m.d.comb += [rcv.i_heartbeat.eq(snd.o_heartbeat), snd.i_heartbeat_clear.eq(rcv.o_heartbeat_clear)]
        if self.heartbeat_in_head:
            m.d.comb += [rcv.i_join_index.eq(dch.o_copy), rcv.i_ahead.data_valid.eq(dch.o_ahead.valid),
                         rcv.i_ahead.ctrl_valid.eq(cch.o_ahead.valid), rcv.i_ahead.ctrl_quiet.eq(cch.o_ahead.quiet)]

        comp = snd.i_comp.payload
        commit, prev, ended = any_requests(m, snd, rcv, w, dw)
        if self.candidates:  # any candidates, the choice naming the requested index
            picks = snd.i_indices
            m.d.comb += [*(picks[k].eq(AnySeq(w)) for k in range(3)), snd.i_early.eq(AnySeq(1)),
                         snd.i_choice.eq(AnySeq(1)),
                         Assume(chosen(picks, snd.i_early, snd.i_choice) == comp.index)]
        d_in, c_in, d_out, c_out, consume, offers_heartbeat = credit_moves(dch, cch, rcv)
        head = rcv.o_head
        hb = snd.o_heartbeat
        clevel, dlevel = cch.level, dch.level
        # the counts are LFSR states (hdl.stamps): the proof reads them as numbers of steps from the seed
        width = len(pops)
        period = (1 << width) - 1

        def steps(state):  # tokens counted to reach ``state`` (modulo the period; 0 for the unreachable 0)
            value = Signal(width)
            with m.Switch(state):
                for n, reached in enumerate(stamp_sequence(width)):
                    with m.Case(reached):
                        m.d.comb += value.eq(n)
            return value

        popped = steps(pops)

        def ahead(state, extra=0):  # tokens counted in ``state`` (plus ``extra``) and not yet popped
            total, value = Signal(width + 1), Signal(width)
            m.d.comb += [total.eq(steps(state) + extra),
                         value.eq(Mux(total >= period + popped, total - period - popped,
                                      Mux(total >= popped, total - popped, total + period - popped)))]
            return value

        # tokens pushed before each message (its own too when sent with one) and not yet popped
        befores = [ahead(entry.stamp, entry.with_token) for entry in ctrl]
        pushed_ahead = ahead(pushed)

        m.d.comb += [
            Assert(d_in == (commit & comp.emit), "a token enters the data channel iff a committed computation emits"),
            Assert(c_in == (commit & (comp.msg_valid | comp.eos)),
                   "a message enters the control channel iff a committed computation sends a user message or EOS"),
            Assert(dlevel <= c, "data channel level <= |q|"),
            Assert(clevel <= cc, "control channel level <= |q'|"),
            Assert(pushed_ahead == dlevel, "tokens pushed - popped = tokens in q"),
        ]
        for k, entry in enumerate(ctrl):
            with m.If(k < clevel):
                m.d.comb += Assert(befores[k] <= dlevel, f"message {k}: its stamp is within q")

        last = Signal(w)  # the latest index offered
        with m.If(head.valid & ~head.eos):
            m.d.comb += Assert(head.index >= last, "no offer older than an earlier offer on the edge")
            m.d.sync += last.eq(head.index)
        if self.heartbeat_in_head:  # the join orders the next heads by the copy: it is the offered index
            with m.If(head.valid & head.is_data | offers_heartbeat):
                m.d.comb += Assert(rcv.o_join_index == head.index,
                                   "the join's copy is the index of the data head or heartbeat offered")
        with m.If(offers_heartbeat):
            for p, token in enumerate(dent):
                with m.If(p < dlevel):
                    m.d.comb += Assert(token.index > head.index, "an offered heartbeat is below every token in q")

        # the receiver's due and ride, from registers, are the comparisons of 000's credits by counter:
        # the head message's stamp equals the pops; the data head's message is the control head, its
        # stamp one ahead of the pops
        cvalid = clevel != 0
        m.d.comb += [
            Assert(due == (cvalid & (befores[0] == 0)), "due iff the head message's stamp equals the pops"),
            Assert(due | (ride == (cvalid & ctrl[0].with_token & (befores[0] == 1) & (dlevel != 0))),
                   "a data head carries a message iff the control head was sent with it (when none is due)"),
        ]

        m.d.comb += [
            Assert(~d_out | (consume & head.is_data), "a data token is popped only when consumed as offered"),
            Assert(~(consume & head.is_data) | d_out, "a consumed data head is popped"),
            Assert(~c_out | (consume & head.is_msg), "a user message is popped only when consumed as offered"),
            Assert(~(consume & head.is_msg) | c_out, "a consumed user message is popped"),
            Assert(~c_out | ~ctrl[0].eos, "EOS is never popped"),
            Assert(~rcv.o_heartbeat_clear | (consume & offers_heartbeat),
                   "the receiver clears the heartbeat only when it is consumed"),
            Assert(~(consume & offers_heartbeat) | rcv.o_heartbeat_clear, "a consumed heartbeat is cleared"),
        ]

        # strengthening invariants: every committed computation appends its token, its message and its
        # dummy, in this order; indices grow along that order
        inv = []

        def invariant(value, message):
            inv.append((value, message))

        invariant(pops1 == stamp_step(pops), "pops1 = pops + 1")
        invariant((pops != 0) & (pushed != 0), "the counts are LFSR states, never 0")
        invariant(last <= prev, "the latest offer <= the last committed index")
        for p, token in enumerate(dent):
            held = p < dlevel
            invariant(~held | (token.index <= prev) & (token.index >= last), f"token {p}: last <= index <= prev")
            if p + 1 < c:
                invariant(~(p + 1 < dlevel) | (token.index < dent[p + 1].index), f"tokens {p}, {p + 1} in order")
        for k, entry in enumerate(ctrl):
            held, live = k < clevel, (k < clevel) & ~entry.eos
            invariant(~held | (entry.stamp != 0), f"message {k}: its stamp is an LFSR state, never 0")
            invariant(~live | (entry.index <= prev) & (entry.index >= last), f"message {k}: last <= index <= prev")
            invariant(~held | ~entry.eos | ended & (k + 1 == clevel) & ~entry.with_token, f"message {k}: EOS is last")
            invariant(~held | ~entry.with_token | (befores[k] != 0), f"message {k}: its token is in q")
            if k + 1 < cc:
                invariant(~(k + 1 < clevel) | (befores[k] <= befores[k + 1]), f"messages {k}, {k + 1}: stamps in order")
                invariant(~(k + 1 < clevel) | ~live | ctrl[k + 1].eos | (entry.index < ctrl[k + 1].index),
                          f"messages {k}, {k + 1} in order")
            for p, token in enumerate(dent):
                invariant(~live | ~(p < dlevel) | Mux(p < befores[k], token.index <= entry.index, token.index > entry.index),
                          f"token {p} and message {k} in commit order")
                invariant(~live | ~(p < dlevel) | ~entry.with_token | (p + 1 != befores[k]) | (token.index == entry.index),
                          f"message {k} rides on token {p}")
        if renewed is not None:  # the registers behind due: what the last cycle did to the control channel
            invariant(~renewed | known | (clevel <= 1) & (~cvalid | (befores[0] == dlevel)),
                      "a message pushed into an empty control channel: its stamp less the pops is q's level")
            invariant(~renewed | ~known | ~cvalid | (ctrl[0].quiet == (befores[0] == 0)),
                      "after a pop the pops equal the popped message's stamp: the head's quiet is its due")
            invariant(renewed | cvalid & (known == (befores[0] == 0)),
                      "a kept head's due was compared with this cycle's pops")
        for k in range(1, cc):
            invariant(~(k < clevel) | (ctrl[k].quiet == (befores[k] == befores[k - 1])),
                      f"message {k}: quiet iff its stamp equals message {k - 1}'s")
            invariant(~(k < clevel) | ~ctrl[k].with_token | (befores[k - 1] < befores[k]),
                      f"message {k}: sent with a token, its stamp is above message {k - 1}'s")
        for k in range(cc):
            invariant(~(k + 1 == clevel) | (quiet == (pushed_ahead == befores[k])),
                      f"sender: quiet iff no token pushed since message {k}, the last")
        for p, token in enumerate(dent):
            rides = [(k < clevel) & ctrl[k].with_token & (befores[k] == p + 1) for k in range(cc)]
            invariant(~(p < dlevel) | (token.msg == Cat(*rides).any()),
                      f"token {p}: msg iff a message was sent with it")
        if dummy is not None:
            # 000 Alg. 4 exactly: a computation without a token writes a dummy iff i - LastRecvIdx > [e], with
            # LastRecvIdx the last token's or dummy's index (0 at the start); the sender's budget is
            # [e] - (prev - LastRecvIdx), never negative before EOS (its clamp at -1 acts only at EOS), or
            # with candidates its own LastRecvIdx
            last_recv, gap, since = Signal(w), Signal(w), Signal(w)
            m.d.comb += [gap.eq(comp.index - last_recv), since.eq(prev - last_recv)]
            with m.If(commit & ~comp.eos & (comp.emit | dummy)):
                m.d.sync += last_recv.eq(comp.index)
            with m.If(commit & ~comp.eos & ~comp.emit):
                m.d.comb += Assert(dummy == (gap > self.heartbeat), "a dummy iff i - LastRecvIdx > [e] (000 Alg. 4)")
            invariant(last_recv <= prev, "LastRecvIdx <= prev")
            if budget is not None:
                invariant(ended | (since <= self.heartbeat) & (budget == self.heartbeat - since),
                          "the sender's budget is [e] - (prev - LastRecvIdx), not negative")
            else:
                invariant(ended | (since <= self.heartbeat), "prev - LastRecvIdx <= [e]")
                invariant(ended | (sender_last == last_recv), "the sender's LastRecvIdx")
        # the heartbeat follows everything in the channels: every token and message was pushed before it
        invariant(~hb.valid | (hb.index <= prev), "heartbeat: index <= prev")
        invariant(~hb.valid | (hb.index >= last), "heartbeat: index >= last")
        for k, entry in enumerate(ctrl):
            invariant(~hb.valid | ~(k < clevel) | ~entry.eos & (entry.index <= hb.index),
                      f"message {k} precedes the heartbeat")
        for p, token in enumerate(dent):
            invariant(~hb.valid | ~(p < dlevel) | (token.index < hb.index), f"token {p} precedes the heartbeat")
        if self.heartbeat_in_head:
            # (while no dummy is held the head may differ: after a reset it holds the last write data)
            invariant((dlevel != 0) | ~hb.valid | (dch.o_stream.payload.index == hb.index),
                      "an empty data channel's head holds the heartbeat's index while one is held")
            invariant(hb.index == prev, "the heartbeat's index is the last committed computation's")
            # the join's copy of the head's index, a register of the channel's own, equals the head's but
            # in the cycle after a reset (the copy resets, the head does not), when nothing is offered
            invariant((dch.o_copy == dch.o_stream.payload.index) | (dlevel == 0) & ~hb.valid,
                      "the channel's copy is its head's index while the head or a heartbeat is held")
        if self.strengthen:
            for value, message in inv:
                m.d.comb += Assert(value, f"invariant: {message}")
        return m

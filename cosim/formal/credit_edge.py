"""Proof of one credit-mode edge of 000 as printed (``live_credit = false``): ``CreditSender`` -> data
channel + control channel + heartbeat register -> ``CreditReceiver`` (000 Alg. 1, 2, 4; Thm. 3.2;
docs/hardware.md, "One edge"). The live-credit edge is :mod:`.counter_edge`'s.

The environment is the node on either side, left free where the protocol lets it be:

* the sending node's request ``i_comp`` is ``AnySeq`` every cycle (``valid``, index, delta, emit, data,
  message, EOS), with ``valid`` free to rise and fall whether or not the sender is ready. The sender
  never needs AXI-stream valid stability: its ``ready`` does not look at ``valid`` and its registers
  move only on a commit (``valid & ready``). Assumed, of *committed* requests only, because a node
  produces nothing else (hdl/node.py, hdl/join.py):

  - a computation's index is above the previous committed one's (the join's least index grows), as an
    unsigned number: no wraparound, so a run has at most ``2 ** index_width - 1`` computations (the
    runs docs/semantics.md guarantees never wrap; small widths keep the state small);
  - ``delta`` is the step from the previous committed index (from 0 before the first), saturated at
    ``2 ** delta_width - 1`` (hdl/gap.py, as the node computes it from the join's offset);
  - an EOS computation emits no token and no message, and nothing is committed after it (the node's
    ``done``); its index and delta are free (nobody reads them);

* the receiving join's ``i_consume`` is ``AnySeq``, with no assumption: it may consume while the
  receiver offers nothing, or something the join would not pick.

What is proved, in every reachable state (``ProofResult.status == "PASS"``):

* no channel overflows: a committed token enters the data channel and a committed control message the
  control channel in the same cycle, and nothing enters otherwise (with the channels' own
  ``level <= capacity``, proved in :mod:`sfdf.cosim.formal.channel`);
* ``SCB <= T`` between computations, ``RCB <= |q|``, and tokens in the data channel = ``RCB`` + credits
  in the control channel not yet absorbed + ``SCB``, so the credits not yet spent never exceed the
  tokens present (000 Thm. 3.2);
* the receiver never offers an index older than one it offered before on this edge (data, message or
  heartbeat; EOS is index infinity and not compared), and a heartbeat it offers is below every token
  still in the data channel: a dummy never overtakes a token (000 Alg. 4);
* the receiver pops only what it offered and the join consumed: a data token only when the join
  consumes an offered data head, a user message only when consumed (or with its data token), the
  heartbeat register only when its offered index is consumed or a later message (one of larger index)
  is popped and makes it obsolete; a pure credit message is
  absorbed (it is never offered). ``i_consume`` while ``!o_head.valid`` changes nothing the join can
  see. Conversely, a consumed offer is popped.

The harness also asserts *strengthening invariants* (prefixed ``invariant:``) relating the sender's and
receiver's registers (SCB, RCB, push and pop counts, the "credits taken" flag) to the channels'
contents; they are what makes the properties
inductive, and are proved like the rest.
"""

from __future__ import annotations

from amaranth.hdl import Assert, Elaboratable, Module, Mux, Signal
from amaranth.lib import wiring

from sfdf.hdl.channels import ControlChannel, DataChannel
from sfdf.hdl.credit import CreditReceiver, CreditSender
from sfdf.hdl.gap import delta_width
from sfdf.hdl.tokens import CTRL_CREDIT, CTRL_EOS, control_layout, data_layout

from .channel import attach_channel, driven_signals
from .environment import any_requests, credit_moves
from .fifo import ModelFifo
from .sby import FormalError

__all__ = ["CreditEdgeHarness"]


def internal_registers(names, component, *wanted):
    missing = [name for name in wanted if name not in names]
    if missing:
        raise FormalError(f"{type(component).__name__} has no internal register {', '.join(missing)}; "
                          "update the harness in cosim/formal")
    return [names[name] for name in wanted]


class CreditEdgeHarness(Elaboratable):
    """One credit edge under an unconstrained environment; see the module docstring.

    Parameters
    ----------
    capacity, control_capacity, threshold : int
        ``|q|``, ``|q'|``, ``T``.
    heartbeat : int or None
        ``[e]``.
    index_width : int
        ``w``: at most ``2 ** w - 1`` computations per run.
    channels : {"model", "rtl"}
        ``model``: :class:`ModelFifo` in place of the channels (sound by the channel proof; see
        :mod:`sfdf.cosim.formal.fifo`); ``rtl``: ``DataChannel`` and ``ControlChannel`` themselves.
    messages, eos : bool
        Whether the node may send user messages / EOS.
    sender, receiver : type
        The classes under proof (subclasses for the broken variants of :mod:`sfdf.cosim.formal.mutants`).
    strengthen : bool
        Assert the strengthening invariants (without them only a bounded check is meaningful).
    """

    def __init__(self, *, capacity=2, control_capacity=3, threshold=0, heartbeat=1, index_width=4,
                 channels="model", messages=True, eos=True, sender=CreditSender, receiver=CreditReceiver,
                 strengthen=True):
        if channels not in ("model", "rtl"):
            raise ValueError(f"channels must be 'model' or 'rtl', not {channels!r}")
        self.capacity, self.control_capacity, self.threshold = capacity, control_capacity, threshold
        self.heartbeat, self.index_width, self.channels = heartbeat, index_width, channels
        self.messages, self.eos = messages, eos
        self.sender_class, self.receiver_class = sender, receiver
        self.strengthen = strengthen

    def elaborate(self, platform):
        m = Module()
        c, cc, w = self.capacity, self.control_capacity, self.index_width
        dw = delta_width([self.heartbeat])
        snd = self.sender_class(capacity=c, control_capacity=cc, threshold=self.threshold,
                                heartbeat=self.heartbeat, index_width=w, data_width=1, payload_width=1,
                                delta_width=dw)
        rcv = self.receiver_class(capacity=c, control_capacity=cc, index_width=w, data_width=1,
                                  payload_width=1)
        modules = {}
        for name, part in (("sender", snd), ("receiver", rcv)):
            part._MustUse__silence = True  # elaborated here, to reach the registers
            modules[name] = m.submodules[name] = part.elaborate(platform)
        scb, pushes = internal_registers(driven_signals(modules["sender"]), snd, "scb", "pushes")
        rcb, taken, pops = internal_registers(driven_signals(modules["receiver"]), rcv, "rcb", "taken", "pops")

        dlayout, clayout = data_layout(w, 1), control_layout(c, w, 1)
        if self.channels == "model":
            dch, cch = ModelFifo(dlayout, c), ModelFifo(clayout, cc)
        else:
            dch, cch = DataChannel(dlayout, c), ControlChannel(clayout, cc)
        dent = attach_channel(m, dch, "data")
        cent = attach_channel(m, cch, "control")
        wiring.connect(m, snd.o_data, dch.i_stream)
        wiring.connect(m, dch.o_stream, rcv.i_data)
        wiring.connect(m, snd.o_ctrl, cch.i_stream)
        wiring.connect(m, cch.o_stream, rcv.i_ctrl)
        m.d.comb += [rcv.i_heartbeat.eq(snd.o_heartbeat), snd.i_heartbeat_clear.eq(rcv.o_heartbeat_clear)]

        # the environment
        comp = snd.i_comp.payload
        commit, prev, ended = any_requests(m, snd, rcv, w, dw, messages=self.messages, eos=self.eos)

        # what moved
        d_in, c_in, d_out, c_out, consume, offers_heartbeat = credit_moves(dch, cch, rcv)
        head = rcv.o_head
        hb = snd.o_heartbeat

        # no overflow: what the sender commits is what the channels take
        m.d.comb += [
            Assert(d_in == (commit & comp.emit), "a token enters the data channel iff a committed computation emits"),
            Assert(~c_in | commit, "a control message enters the control channel only on a commit"),
            Assert(~(commit & (comp.msg_valid | comp.eos)) | c_in,
                   "a committed user message or EOS enters the control channel"),
            Assert(dch.level <= c, "data channel level <= |q|"),
            Assert(cch.level <= cc, "control channel level <= |q'|"),
        ]

        # credits (000 Alg. 1, 2; Thm. 3.2)
        ctrl = [cent[k] for k in range(cc)]
        in_flight = sum(Mux(k < cch.level, entry.credits, 0) for k, entry in enumerate(ctrl))
        in_flight = in_flight - Mux(taken, ctrl[0].credits, 0)
        m.d.comb += [
            Assert(scb <= self.threshold, "SCB <= T between computations"),
            Assert(rcb <= c, "RCB <= |q|"),
            Assert(dch.level == scb + in_flight + rcb, "tokens in q = RCB + credits in flight + SCB (000 Thm. 3.2)"),
            Assert(rcb + in_flight <= dch.level, "credits not yet spent never exceed the tokens present (000 Thm. 3.2)"),
        ]

        # offers never go back in index; a heartbeat never overtakes a token (000 Alg. 4)
        last = Signal(w)  # the latest index offered
        with m.If(head.valid & ~head.eos):
            m.d.comb += Assert(head.index >= last, "no offer older than an earlier offer on the edge")
            m.d.sync += last.eq(head.index)
        with m.If(offers_heartbeat):
            for k, entry in enumerate(dent):
                with m.If(k < dch.level):
                    m.d.comb += Assert(entry.index > head.index, "an offered heartbeat is below every token in q")

        # the receiver pops only what it offered and the join consumed (000 Alg. 1, 4)
        m.d.comb += [
            Assert(~d_out | (consume & head.is_data), "a data token is popped only when consumed as offered"),
            Assert(~(consume & head.is_data) | d_out, "a consumed data head is popped"),
            Assert(~c_out | (ctrl[0].kind == CTRL_CREDIT) | (consume & head.is_msg),
                   "a user message is popped only when consumed as offered; credit messages are absorbed"),
            Assert(~(consume & head.is_msg) | c_out, "a consumed user message is popped"),
            Assert(~rcv.o_heartbeat_clear | (consume & offers_heartbeat) | c_out & (ctrl[0].index > hb.index)
                   | d_out & (dent[0].index > hb.index),
                   "the heartbeat is cleared only when consumed or made obsolete by a pop of a later message or token"),
            Assert(~(consume & offers_heartbeat) | rcv.o_heartbeat_clear, "a consumed heartbeat is cleared"),
            Assert(~c_out | (ctrl[0].kind != CTRL_EOS), "EOS is never popped"),
        ]

        # strengthening invariants: the merged order of the edge. Every committed computation appends, in
        # this order, its token, its control message and its dummy; indices grow along that order and the
        # receiver offers its earliest pending item. covered[k]: tokens credited by RCB and by the messages
        # up to k (credits of a message already taken are in RCB)
        inv = []

        def invariant(value, message):
            inv.append((value, message))

        def check(value, message):  # an invariant under an m.If
            return Assert(value, message) if self.strengthen else []

        clevel, dlevel = cch.level, dch.level
        seq_mask = (1 << len(pops)) - 1
        invariant(((pushes - pops) & seq_mask) == clevel, "pushes - pops = control messages in q'")
        invariant(~ended | (scb == 0), "SCB = 0 after EOS")
        invariant(last <= prev, "the latest offer <= the last committed index")
        effective = [Mux((k < clevel) & ~(taken & (k == 0)), entry.credits, 0) for k, entry in enumerate(ctrl)]
        covered = []
        total = rcb
        for k in range(cc):
            total = total + effective[k]
            covered.append(total)
        for p, token in enumerate(dent):
            held = p < dlevel
            invariant(~held | (token.index <= prev), f"token {p} <= the last committed index")
            invariant(~held | (token.index >= last), f"token {p} >= the last offer")
            if p + 1 < c:
                invariant(~(p + 1 < dlevel) | (token.index < dent[p + 1].index), f"tokens {p}, {p + 1} in order")
        for k, entry in enumerate(ctrl):
            held = k < clevel
            live = held & (entry.kind != CTRL_EOS)
            invariant(~held | (entry.kind != 3), f"message {k}: a kind")
            invariant(~held | (entry.credits <= c), f"message {k}: credits <= |q|")
            invariant(~held | (entry.kind != CTRL_CREDIT) | (entry.credits != 0), f"message {k}: credit > 0")
            invariant(~held | ~entry.with_token | (entry.credits != 0), f"message {k}: its token is credited")
            invariant(~held | ~entry.with_token | (entry.kind != CTRL_EOS), f"message {k}: EOS rides on no token")
            invariant(~live | (entry.index <= prev) & (entry.index >= last), f"message {k}: last <= index <= prev")
            invariant(~held | (entry.kind != CTRL_EOS) | ended & (k + 1 == clevel), f"message {k}: EOS is last")
            invariant(~(live & (entry.kind == CTRL_CREDIT)) | ~taken | (k != 0), "credits taken from a user message")
            with m.If(live & entry.with_token):  # its last credited token has its index
                for p, token in enumerate(dent):
                    with m.If((covered[k] == p + 1) & (p < dlevel)):
                        m.d.comb += check(token.index == entry.index, f"invariant: message {k} rides on token {p}")
            for p, token in enumerate(dent):
                with m.If(live & (p < dlevel)):
                    m.d.comb += check(Mux(p < covered[k], token.index <= entry.index,
                                          token.index > entry.index),
                                       f"invariant: token {p} and message {k} in commit order")
            if k + 1 < cc:
                invariant(~(k + 1 < clevel) | ~live | (ctrl[k + 1].kind == CTRL_EOS) | (entry.index < ctrl[k + 1].index),
                          f"messages {k}, {k + 1} in order")
        invariant(~taken | (clevel != 0) & (ctrl[0].kind != CTRL_CREDIT) & (ctrl[0].credits != 0),
                  "taken: the head message's credits are in RCB")
        invariant(~taken | ~ctrl[0].with_token | (rcb != 0), "taken with a token: that token is in RCB")
        # the heartbeat: `before` control messages in q' were pushed before it
        before = Signal(len(pops))
        m.d.comb += before.eq(hb.seq - pops)
        # a message pushed after the heartbeat at the head of q' (before == 0) makes it obsolete: the
        # receiver offers that message (or its credited tokens) instead and clears the heartbeat when
        # it pops it, so the heartbeat may then be older than the latest offer
        obsolete = (before == 0) & (clevel != 0)
        invariant(~hb.valid | (hb.index <= prev), "heartbeat: index <= prev")
        invariant(~hb.valid | obsolete | (hb.index >= last), "heartbeat: index >= last unless obsolete")
        invariant(~hb.valid | (before <= clevel), "heartbeat: pushed after the messages popped")
        tokens_before = Signal(range(c * (cc + 1) + 1))  # tokens of q committed before the heartbeat
        m.d.comb += tokens_before.eq(Mux(taken & (before == 0), 0, rcb))
        for k in range(cc):
            with m.If(before == k + 1):
                m.d.comb += tokens_before.eq(covered[k])
        with m.If(hb.valid):
            for k, entry in enumerate(ctrl):
                with m.If((k < clevel) & (entry.kind != CTRL_EOS)):
                    m.d.comb += check(Mux(k < before, entry.index <= hb.index, entry.index > hb.index),
                                       f"invariant: message {k} and the heartbeat in commit order")
            for p, token in enumerate(dent):
                with m.If(p < dlevel):
                    m.d.comb += check(Mux(p < tokens_before, token.index < hb.index,
                                          token.index > hb.index),
                                       f"invariant: token {p} and the heartbeat in commit order")
        if self.strengthen:
            for value, message in inv:
                m.d.comb += Assert(value, f"invariant: {message}")
        return m

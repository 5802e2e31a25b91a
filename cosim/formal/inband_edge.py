"""Proof of one in-band edge: ``InbandSender`` -> data channel -> ``InbandReceiver`` (002 Alg. 2, 5; 003 output
buffers; docs/hardware.md, "In-band mode").

The environment, free where the protocol lets it be:

* the sending node's request ``i_comp`` is ``AnySeq`` every cycle, ``valid`` included (the sender's
  ``ready`` does not look at ``valid`` and its registers move only on a commit, so no valid stability is
  needed). Assumed of *committed* requests, as a node makes them (hdl/node.py): indices grow without
  wrapping (at most ``2 ** index_width - 1`` computations), ``delta`` is the saturated step from the
  previous committed index, an EOS computation emits no token and no message, nothing follows EOS.
  ``delta`` comes from a register of an ``AnySeq`` chosen a cycle earlier (reset to 0), which is the
  sender's ``i_delta_next``, as a node's decided queue gives it;
* ``i_dummy_in`` (Propagation's dummy flags from the node's inputs) and, with an output buffer of two or
  more, the verification-only spontaneous flush ``i_flush`` are ``AnySeq``: any input may carry a flag
  at any index, a flush may come in any cycle;
* the join's ``i_consume`` is ``AnySeq``.

What is proved, in every reachable state. ``visible`` is the harness' own count, ``o_flushed`` minus the
tokens it saw leave the channel (modulo ``2 ** bits(|q|)``, as the hardware counts); without an output
buffer the sender keeps no count and ``visible`` is the channel's level:

* the channel never overflows: a token enters it only on a commit, every committed data token, message
  and EOS enters it, and ``level <= |q|``;
* flushed never runs more than ``|q|`` ahead of popped: ``visible <= level <= |q|``;
* the receiver never offers a hidden (unflushed) token: it offers only when ``visible >= 1`` (the
  visible tokens are the oldest ones);
* a dummy, a user message and EOS are never hidden (002 Alg. 2, 5: they flush), and at most
  ``|q|_o - 1`` tokens are hidden (003: an output buffer of ``|q|_o``);
* the receiver offers tokens in strictly increasing index order (one token per index), pops only a
  token it offered and the join consumed, pops every such token except EOS, and never pops EOS;
* what the sender's interval test reads, a register computed a cycle ahead (:class:`sfdf.hdl.gap.GapCounter`),
  is in every cycle its budget less this cycle's ``delta``, whose sign is 002 Alg. 5's test.

Strengthening invariants (``invariant:``) tie the receiver's pop count and the sender's hidden count to
the harness' counts, and the tokens' indices to the sender's last index.
"""

from __future__ import annotations

from amaranth.asserts import AnySeq
from amaranth.hdl import Assert, Const, Elaboratable, Module, Signal
from amaranth.lib import wiring

from sfdf.hdl.channels import DataChannel
from sfdf.hdl.gap import delta_width
from sfdf.hdl.inband import InbandReceiver, InbandSender, flushed_width
from sfdf.hdl.tokens import inband_token_layout

from .channel import attach_channel, driven_signals
from .environment import committed_computations
from .fifo import ModelFifo
from .sby import FormalError

__all__ = ["InbandEdgeHarness"]


class InbandEdgeHarness(Elaboratable):
    """One in-band edge under an unconstrained environment; see the module docstring.

    Parameters
    ----------
    capacity, output_buffer : int
        ``|q|``, ``|q|_o``.
    interval : int or None
        ``[q]``.
    algorithm : {"naive", "propagation", "nonpropagation"}
    index_width : int
    channels : {"model", "rtl"}
        As for :class:`sfdf.cosim.formal.credit_edge.CreditEdgeHarness`.
    flushable : bool
        Give the sender the spontaneous flush input (003 Fig. 2's adversary), driven by ``AnySeq``.
    sender, receiver : type
        The classes under proof.
    strengthen : bool
        Assert the strengthening invariants (without them only a bounded check is meaningful).
    """

    def __init__(self, *, capacity=2, output_buffer=0, interval=2, algorithm="nonpropagation", index_width=4,
                 channels="model", flushable=True, sender=InbandSender, receiver=InbandReceiver,
                 strengthen=True):
        if channels not in ("model", "rtl"):
            raise ValueError(f"channels must be 'model' or 'rtl', not {channels!r}")
        self.capacity, self.output_buffer, self.interval = capacity, output_buffer, interval
        self.algorithm, self.index_width, self.channels = algorithm, index_width, channels
        self.flushable = flushable
        self.sender_class, self.receiver_class = sender, receiver
        self.strengthen = strengthen

    def elaborate(self, platform):
        m = Module()
        c, ob, w = self.capacity, self.output_buffer, self.index_width
        dw = delta_width([self.interval])
        snd = self.sender_class(capacity=c, output_buffer=ob, interval=self.interval, algorithm=self.algorithm,
                                index_width=w, data_width=1, payload_width=1, flushable=self.flushable,
                                delta_width=dw)
        rcv = self.receiver_class(capacity=c, index_width=w, data_width=1, payload_width=1, buffered=ob > 1)
        modules = {}
        for name, part in (("sender", snd), ("receiver", rcv)):
            part._MustUse__silence = True  # elaborated here, to reach the registers
            modules[name] = m.submodules[name] = part.elaborate(platform)
        sender_names, receiver_names = driven_signals(modules["sender"]), driven_signals(modules["receiver"])
        if rcv.buffered and "popped" not in receiver_names:
            raise FormalError("InbandReceiver has no internal register popped; update cosim/formal/inband_edge.py")
        popped = receiver_names.get("popped")  # none without an output buffer: every token is visible
        # the sender's count of hidden tokens: ``hidden = Signal(...) if ob > 1 else Const(0)`` gets no name
        # from Amaranth's tracer, so it is the one driven signal called "$signal"
        hidden = sender_names.get("hidden", sender_names.get("$signal")) if ob > 1 else Const(0)
        if hidden is None:
            raise FormalError("InbandSender's hidden count not found; update cosim/formal/inband_edge.py")

        layout = inband_token_layout(w, 1, 1)
        ch = ModelFifo(layout, c) if self.channels == "model" else DataChannel(layout, c)
        entries = attach_channel(m, ch, "channel")
        wiring.connect(m, snd.o_token, ch.i_stream)
        wiring.connect(m, ch.o_stream, rcv.i_token)
        if ob > 1:
            m.d.comb += rcv.i_flushed.eq(snd.o_flushed)

        # the environment
        comp = snd.i_comp.payload
        delta = Signal(dw)  # this cycle's delta, chosen a cycle ahead (the sender's i_delta_next)
        delta_next = Signal(dw)
        m.d.sync += delta.eq(delta_next)
        if self.interval is not None:
            m.d.comb += snd.i_delta_next.eq(delta_next)
        m.d.comb += [
            delta_next.eq(AnySeq(dw)),
            snd.i_comp.valid.eq(AnySeq(1)),
            comp.index.eq(AnySeq(w)),
            comp.delta.eq(delta),
            comp.emit.eq(AnySeq(1)),
            comp.data.eq(AnySeq(1)),
            comp.msg_valid.eq(AnySeq(1)),
            comp.msg.eq(AnySeq(1)),
            comp.eos.eq(AnySeq(1)),
            snd.i_dummy_in.eq(AnySeq(len(snd.i_dummy_in))),
            rcv.i_consume.eq(AnySeq(1)),
        ]
        if snd.flushable:
            m.d.comb += snd.i_flush.eq(AnySeq(1))
        commit, prev, ended = committed_computations(m, snd.i_comp, w, dw)

        t_in = ch.i_stream.valid & ch.i_stream.ready
        t_out = ch.o_stream.valid & ch.o_stream.ready
        head = rcv.o_head
        level = ch.level
        fw = flushed_width(c)
        seen = Signal(fw)  # tokens that left the channel, modulo 2 ** fw
        with m.If(t_out):
            m.d.sync += seen.eq(seen + 1)
        visible = Signal(fw)  # without an output buffer no count is kept: every token is visible once written
        m.d.comb += visible.eq(snd.o_flushed - seen if ob > 1 else level)

        m.d.comb += [
            Assert(~t_in | commit, "a token enters the channel only on a commit"),
            Assert(~(commit & (comp.emit | comp.msg_valid | comp.eos)) | t_in,
                   "every committed data token, message and EOS enters the channel"),
            Assert(level <= c, "level <= |q|"),
            Assert(visible <= level, "flushed never runs more than |q| ahead of popped (visible <= level)"),
            Assert(~head.valid | (visible != 0), "the receiver never offers a hidden token"),
            Assert(level - visible <= max(ob - 1, 0), "at most |q|_o - 1 tokens are hidden"),
            Assert(~t_out | (rcv.i_consume & head.valid & ~head.eos), "a token is popped only when consumed as offered"),
            Assert(~(rcv.i_consume & head.valid & ~head.eos) | t_out, "a consumed offer is popped"),
        ]
        if self.interval is not None:
            budget, left = sender_names.get("last_budget"), sender_names.get("last_left")
            if budget is None or left is None:
                raise FormalError("InbandSender's last_budget / last_left not found; "
                                  "update cosim/formal/inband_edge.py")
            m.d.comb += Assert(left == budget - comp.delta, "the interval test's register = budget - delta")
        for k, entry in enumerate(entries):
            with m.If((k < level) & (entry.dummy | entry.msg_valid | entry.eos)):
                m.d.comb += Assert(k < visible, f"a dummy, message or EOS is never hidden (token {k})")
        last = Signal(w)  # index of the last token popped
        started = Signal()
        with m.If(head.valid & ~head.eos & started):
            m.d.comb += Assert(head.index > last, "offers in strictly increasing index order")
        with m.If(t_out):
            m.d.sync += [last.eq(head.index), started.eq(1)]

        # strengthening invariants
        inv = [(popped == seen, "the receiver's pop count = the tokens that left")] if rcv.buffered else []
        inv += [
            (hidden == level - visible, "the sender's hidden count = tokens not yet visible"),
            (~ended | (visible == level), "after EOS everything is visible"),
            (last <= prev, "the last popped index <= the last committed index"),
        ]
        for k, entry in enumerate(entries):
            held = k < level
            inv += [
                (~held | entry.eos | (entry.index <= prev), f"token {k} <= the last committed index"),
                (~held | entry.eos | ~started | (entry.index > last), f"token {k} > the last popped"),
                (~held | ~entry.eos | ended & (k + 1 == level), f"token {k}: EOS is last"),
            ]
            if k + 1 < c:
                inv.append((~(k + 1 < level) | entries[k + 1].eos | (entry.index < entries[k + 1].index),
                            f"tokens {k}, {k + 1} in order"))
        if self.strengthen:
            for value, message in inv:
                m.d.comb += Assert(value, f"invariant: {message}")
        return m

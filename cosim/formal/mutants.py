"""Deliberately broken variants of the protocol hardware: each must make its proof FAIL with a counterexample
trace from the initial state, which shows the proof can fail (tests/test_cosim_formal.py, bench/formal.py).

Each is a subclass of the real component that overrides one signal after the real logic (in Amaranth the
last assignment to a signal in a module wins), so the rest of the design is the one proved correct.
"""

from __future__ import annotations

from amaranth.hdl import Module, Mux, Value
from amaranth.lib import wiring

from sfdf.hdl.channels import DataChannel
from sfdf.hdl.counter import CounterReceiver, CounterSender
from sfdf.hdl.credit import CreditReceiver, CreditSender
from sfdf.hdl.inband import InbandReceiver, InbandSender
from sfdf.hdl.join import SFDFJoin
from sfdf.hdl.sdf_message import MessageQueue, ahead

from .channel import driven_signals

__all__ = [
    "CorruptWhenFullChannel",
    "DummyOvertakesSender",
    "EagerCreditReceiver",
    "EarlyDummySender",
    "EarlyTokenReceiver",
    "ForgetfulReleaseChannel",
    "GenerousCreditQueue",
    "GreedyChannel",
    "HeadOnlyCandidateSender",
    "LateOrderJoin",
    "PeekingInbandReceiver",
    "PopBlindBlockChannel",
    "PopBlindBlockHeadChannel",
    "RiderDueReceiver",
    "StickyHeartbeatSender",
    "UncommittedHeartbeatHeadSender",
    "UncountedCreditSender",
    "UnreadyJoin",
    "WriteDataCopyChannel",
]


class GreedyChannel(DataChannel):
    """A channel whose ``i_stream.ready`` ignores the capacity: it takes a token when full (and loses one)."""

    def elaborate(self, platform):
        m = super().elaborate(platform)
        m.d.comb += self.i_stream.ready.eq(1)
        return m


class ForgetfulReleaseChannel(DataChannel):
    """A channel with ``release`` whose room forgets the token the reader holds (as a channel without
    ``release`` would): ``|q| + 1`` tokens fit behind an offer register."""

    def __init__(self, payload_shape, capacity):
        super().__init__(payload_shape, capacity, release=True)

    def elaborate(self, platform):
        m = super().elaborate(platform)
        m.d.comb += self.i_stream.ready.eq(self.level != self.capacity)
        return m


class CorruptWhenFullChannel(DataChannel):
    """A channel around a real one that flips bit 0 of its head while full: the count is right, a token is
    not. Its storage is the inner channel's, so prove it with ``ChannelHarness(..., strengthen=False)``."""

    def elaborate(self, platform):
        m = Module()
        m.submodules.inner = inner = DataChannel(self.payload_shape, self.capacity)
        wiring.connect(m, wiring.flipped(self.i_stream), inner.i_stream)
        m.d.comb += [
            self.o_stream.valid.eq(inner.o_stream.valid),
            inner.o_stream.ready.eq(self.o_stream.ready),
            self.level.eq(inner.level),
            Value.cast(self.o_stream.payload).eq(Value.cast(inner.o_stream.payload) ^ (inner.level == self.capacity)),
        ]
        return m


class UncountedCreditSender(CreditSender):
    """A sender that forgets to count a credit: a control message carries ``SCB`` instead of ``SCB'``, so
    the token of the computation that sends it is never credited (000 Alg. 2 off by one)."""

    def elaborate(self, platform):
        m = super().elaborate(platform)
        m.d.comb += self.o_ctrl.payload.credits.eq(driven_signals(m)["scb"])  # SCB
        return m


class DummyOvertakesSender(CreditSender):
    """A sender that writes a dummy without first flushing its pending credits: ``credit_due`` is only the
    threshold test, not 000 Alg. 4's "``i - LastRecvIdx > [e]`` with credits pending". The receiver then
    offers the dummy's index while tokens of lower index wait uncredited in ``q``: a dummy overtaking a
    token (the hazard of erratum 5, docs/semantics.md)."""

    def elaborate(self, platform):
        m = super().elaborate(platform)
        comp = self.i_comp.payload
        signals = driven_signals(m)
        m.d.comb += signals["credit_due"].eq(comp.emit & (signals["scb"] == self.threshold))
        return m


class EagerCreditReceiver(CreditReceiver):
    """A receiver that pops the data channel whenever the join consumes, credit or not (000 Alg. 1 without
    its ``RCB > 0`` test): it pops a token it never offered."""

    def elaborate(self, platform):
        m = super().elaborate(platform)
        with m.If(self.i_consume & self.i_data.valid):
            m.d.comb += self.i_data.ready.eq(1)
        return m


class EarlyTokenReceiver(CounterReceiver):
    """A live-credit receiver that offers a waiting token before a due message (a message is due only with
    the data channel empty): the token overtakes a message pushed before it (000 Thm. 3.1), and the
    message's stamp falls behind the pops."""

    def elaborate(self, platform):
        m = super().elaborate(platform)
        ctrl = self.i_ctrl.payload
        m.d.comb += driven_signals(m)["due"].eq(self.i_ctrl.valid & (ctrl.stamp == driven_signals(m)["pops"])
                                                & ~self.i_data.valid)
        return m


class RiderDueReceiver(CounterReceiver):
    """A live-credit receiver whose comparison after a token pop forgets ``with_token``: a message sent with
    the next token (its stamp counts the tokens before that token, :mod:`sfdf.hdl.stamps`) is taken as
    due and offered alone, before the token it goes with."""

    def elaborate(self, platform):
        m = super().elaborate(platform)
        signals = driven_signals(m)
        ctrl = self.i_ctrl.payload
        data_pop, ctrl_pop = self.i_data.ready, self.i_ctrl.ready  # the receiver's pops, as it drives them
        m.d.sync += signals["known"].eq(self.i_ctrl.valid & (ctrl_pop | Mux(data_pop, ctrl.stamp == signals["pops1"],
                                                                             signals["due"])))
        return m


class StaleAheadReceiver(CounterReceiver):
    """With ``heartbeat_in_head`` (``due`` a cycle ahead): a message entering an empty control channel is
    taken as due when the data channel is empty *now*, not in the next cycle: a token pushed with the
    message, or just before it, is overtaken (000 Thm. 3.1)."""

    def elaborate(self, platform):
        m = super().elaborate(platform)
        signals = driven_signals(m)
        due = signals["due"]
        data_pop, ctrl_pop = self.i_data.ready, self.i_ctrl.ready  # the receiver's pops, as it drives them
        ctrl, ahead = self.i_ctrl.payload, self.i_ahead
        stays = self.i_ctrl.valid & ~ctrl_pop
        m.d.sync += due.eq(Mux(stays, Mux(data_pop, (ctrl.stamp == signals["pops1"]) & ~ctrl.with_token, due),
                               ahead.ctrl_valid & Mux(self.i_ctrl.valid, ahead.ctrl_quiet, ~self.i_data.valid)))
        return m


class EarlyDummySender(CounterSender):
    """A live-credit sender whose interval test is one short: it writes a dummy once ``i - LastRecvIdx``
    reaches ``[e]``, not only past it (000 Alg. 4's ``>`` read as ``>=``)."""

    def elaborate(self, platform):
        m = super().elaborate(platform)
        signals = driven_signals(m)
        comp = self.i_comp.payload
        left = signals["recv_budget"] - comp.delta
        m.d.comb += signals["dummy"].eq(~comp.eos & ~comp.emit & (left <= 0))
        return m


class HeadOnlyCandidateSender(CounterSender):
    """A per-candidate sender (``candidates``, the single-stage node's) that takes the data head's test
    whatever the receiver chose: a heartbeat or a message offered alone is tested at the wrong index."""

    def elaborate(self, platform):
        m = super().elaborate(platform)
        signals = driven_signals(m)
        comp = self.i_comp.payload
        late = (self.i_indices[1] - signals["last_recv"])[:len(comp.index)] > self.heartbeat
        m.d.comb += signals["dummy"].eq(~comp.eos & ~comp.emit & late)
        return m


class StickyHeartbeatSender(CounterSender):
    """A live-credit sender that keeps its dummy when it pushes a later token or message: the receiver,
    which offers the dummy once the channels are empty, then offers an index older than the later item
    it already took."""

    def elaborate(self, platform):
        m = super().elaborate(platform)
        signals = driven_signals(m)
        hb = self.o_heartbeat
        with m.If(~self.i_heartbeat_clear & ~(self.i_comp.valid & self.i_comp.ready & signals["dummy"])):
            m.d.sync += hb.valid.eq(hb.valid)
        return m


class UncommittedHeartbeatHeadSender(CounterSender):
    """With ``heartbeat_in_head``: the write data's index is the computation's whenever it would write a
    dummy, committed or not, so an empty data channel's head (the heartbeat's offer) takes the index of a
    computation that never happened."""

    def elaborate(self, platform):
        m = super().elaborate(platform)
        comp = self.i_comp.payload
        dummy = driven_signals(m)["dummy"]
        index = Mux(comp.emit | dummy, comp.index, self.o_heartbeat.index)
        m.d.comb += self.o_data.payload.index.eq(index)
        return m


class PopBlindBlockChannel(DataChannel):
    """A block-RAM channel (prove it under :func:`sfdf.cosim.formal.channel.block_storage`) whose second
    output register chooses without the pop: when the lone head is read while last cycle's read arrives
    and a write bypasses the memory, it takes the read's data, not the write's, so that token is
    offered twice and the write's is lost."""

    def elaborate(self, platform):
        m = super().elaborate(platform)
        names = driven_signals(m)
        valid, two = self.o_stream.valid, names["two"]
        arriving = Mux(names["pending"], names["storage_r_data"], Value.cast(self.i_stream.payload))
        with m.If(self.o_stream.ready | ~two):
            m.d.sync += names["out1"].eq(Mux(valid & ~two, arriving, Value.cast(self.i_stream.payload)))
        return m


class PopBlindBlockHeadChannel(DataChannel):
    """An iCE40 block-RAM channel (prove it elaborated for ``FamilyOnly("ice40")``) whose head, the RAM's
    output register, takes the next row only while it is empty, blind to the pop: a head read while rows
    hold tokens stays, so that token is offered twice."""

    def elaborate(self, platform):
        m = super().elaborate(platform)
        names = driven_signals(m)
        with m.If(self.o_stream.valid & self.o_stream.ready & ~names["none"]):
            m.d.sync += names["storage_r_data"].eq(names["storage_r_data"])
        return m


class WriteDataCopyChannel(DataChannel):
    """A data channel (``copy="index"``) whose copy of its head's index, for the join, also takes the index
    of every token written: once a token waits behind the head, the copy is not the head's index."""

    def elaborate(self, platform):
        m = super().elaborate(platform)
        with m.If(self.i_stream.valid & self.i_stream.ready):
            m.d.sync += driven_signals(m)["copy"].eq(self.i_stream.payload.index)
        return m


class PeekingInbandReceiver(InbandReceiver):
    """An in-band receiver that offers the channel's head without waiting for the sender's flush: it offers
    hidden output-buffer tokens (003)."""

    def elaborate(self, platform):
        m = super().elaborate(platform)
        m.d.comb += driven_signals(m)["offer"].eq(self.i_token.valid)
        return m


class StaleIntervalInbandSender(InbandSender):
    """An in-band sender whose interval test's register is computed from this cycle's ``delta``, not the next
    cycle's: after a commit it tests the next computation with the step of the one before."""

    def elaborate(self, platform):
        m = super().elaborate(platform)
        names = driven_signals(m)
        m.d.sync += names["last_left"].eq(names["last_next"] - self.i_comp.payload.delta)
        return m


class StayingOffsetJoin(SFDFJoin):
    """A one-input join whose offset register, computed a cycle ahead, forgets that a consumed head's
    successor is measured from the consumed head's index, not from the old ``current``."""

    def elaborate(self, platform):
        m = super().elaborate(platform)
        names = driven_signals(m)
        following = names["next_0"]
        m.d.sync += names["offset"].eq(following - names["current"])
        with m.If(self.i_heads[0].valid & ~self.o_consume[0]):
            m.d.sync += names["offset"].eq(self.i_heads[0].index - names["current"])
        return m


class UnreadyJoin(SFDFJoin):
    """A join that consumes the heads at the least index on ``i_commit`` even when not every input offers
    a head (``o_ready`` low)."""

    def elaborate(self, platform):
        m = super().elaborate(platform)
        m.d.comb += self.o_consume.eq(Mux(self.i_commit, self.o_at, 0))
        return m


class LateOrderJoin(SFDFJoin):
    """A join with registered order (``lookahead``) that recomputes it only for consumed heads, not for an
    offer arriving in an empty slot: the order stays the old, not offered, head's."""

    def _replaced(self, heads):
        return [self.o_consume[k] for k in range(len(heads))]


class GenerousCreditQueue(MessageQueue):
    """A message queue whose credit is one firing too generous: its receiver may start the firing the
    sender's next message targets before that message is sent."""

    def elaborate(self, platform):
        m = super().elaborate(platform)
        m.d.comb += self.o_credit.eq(ahead(m, self.i_limit + 1, self.i_next, self.width))
        return m

"""Registered offers: the join of a node reads each input's head from a two-slot register.

A credit receiver's offer (000 Alg. 1, 4) is a function of its counters, the heads of two channels and
the heartbeat register (an in-band receiver's, 002 Alg. 2, 5, of its channel's head and the sender's
flush count): three or four LUT levels that, offered to the join combinationally, sat at the start of
the decide stage's loop (heads -> join -> consumption -> the next heads, docs/hardware.md,
"Registered offers"). :class:`OfferRegister` holds up to two offers: the join reads the older one from
a register, and the receiver's offer is taken whenever the second slot is free, a register too. So the
join's consumption reaches only the offer register, and the receiver and its channels move on a
registered ``take``: the loop is cut in two (a skid buffer, as in high-clock AXI-Stream pipelines).
The receiver is unchanged: to it the register is a join that consumes every offer at once.

Where the platform is not pipelined (iCE40, short of logic cells), a node of two or more inputs has
one slot per input (:func:`offer_slots`): the join reads its offer from a register, but the receiver's
offer is taken in the cycle the join consumes the slot's (``take`` is the join's consumption, not a
register). That cuts the receivers' offer logic (its counters, heads and heartbeat comparisons) out of
the loop through the join, which then runs from the slot through the join to the receivers' pops. It
costs a register of the head's width per input, with no spare slot, multiplexer or lookahead
(docs/fpga.md, "Round of one-slot offers").

Exactness: a token or user message in either slot has left its channel but still counts against the
channel's capacity until the join consumes it (the channels' ``release = 2``), so ``q`` and ``q'`` hold
exactly ``|q|`` and ``|q'|`` for the analysis. Every offer stays true while it waits: tokens and
messages are consumed as offered, and a dummy index is a lower bound on the edge's later indices that
no later event falsifies; offers on an edge never go back in index, so a waiting dummy never hides a
lower index. The cost is one cycle of latency per hop, and a multiplexer of the head's width.
"""

from amaranth.hdl import Module, Signal
from amaranth.lib import data, wiring
from amaranth.lib.wiring import In, Out

from .tokens import head_layout
from .traits import PlatformTraits

__all__ = ["SLOTS", "OfferRegister", "offer_slots", "release_layout"]


#: Offers an input holds at most: the channels' ``release``.
SLOTS = 2


def offer_slots(inputs: int, traits: PlatformTraits, registered: bool = True) -> int:
    """Offers an offer register holds per input of a node of ``inputs`` inputs on a platform of ``traits``
    (0: none, the receivers offer to the join straight): :data:`SLOTS` where the platform is pipelined
    (:attr:`sfdf.hdl.traits.PlatformTraits.pipelined`), else one for a join of two or more inputs (module
    docstring); none for a node whose spec says ``registered_offers = false`` (``registered``)."""
    if not registered:
        return 0
    if traits.pipelined:
        return SLOTS
    return 1 if inputs > 1 else 0


def release_layout() -> data.StructLayout:
    """What a credit-mode input lets go of in one cycle: a data token; control messages, up to two (one
    consumed from an offer register, one credit message absorbed by 000's receiver)."""
    return data.StructLayout({"data": 1, "ctrl": range(SLOTS + 1)})


class OfferRegister(wiring.Component):
    """One input's offers, held in two registers between the receiver and the join.

    Parameters
    ----------
    index_width, data_width, payload_width : int
    dummy : bool
        The heads carry the in-band ``dummy`` flag (:func:`sfdf.hdl.tokens.head_layout`).
    slots : int
        :data:`SLOTS`, or 1: no spare slot (``o_spare`` never valid), and ``o_take`` is whether the join's
        slot is free after this cycle, from the join's consumption.

    Members
    -------
    i_head : In(head_layout)
        The receiver's offer.
    o_take : Out(1)
        The register takes the receiver's offer this cycle (the receiver's ``i_consume``): its second
        slot is free (registered).
    i_popped : In(release_layout)
        What taking the offer pops from the channels and holds (a data token; a user message; a credit
        message is absorbed, not held: the caller releases it at once).
    o_head : Out(head_layout)
        The older offer, to the join (registered).
    i_consume : In(1)
        The join consumes ``o_head``.
    o_release : Out(release_layout)
        The channels' tokens the consumed offer held.
    o_spare : Out(head_layout)
        The newer offer (registered): ``o_head`` is replaced by it when the join's slot is free and it is
        valid, else by ``i_head`` (:class:`sfdf.hdl.join.SFDFJoin`'s ``lookahead`` orders the candidates).
    """

    def __init__(self, *, index_width, data_width, payload_width, dummy=False, slots=SLOTS):
        if slots not in (1, SLOTS):
            raise ValueError(f"An offer register holds 1 or {SLOTS} offers, not {slots}")
        self.slots = slots
        self._layout = layout = head_layout(index_width, data_width, payload_width, dummy=dummy)
        super().__init__({
            "i_head": In(layout),
            "o_take": Out(1),
            "i_popped": In(release_layout()),
            "o_head": Out(layout),
            "i_consume": In(1),
            "o_release": Out(release_layout()),
            "o_spare": Out(layout),
        })

    def elaborate(self, platform):
        m = Module()
        held = Signal(release_layout())
        spare = self.o_spare
        spare_held = Signal(release_layout())
        consume = self.i_consume & self.o_head.valid
        free = ~self.o_head.valid | consume  # the join's slot is free after this cycle
        # one slot: the receiver's offer is taken whenever the join's slot is free; two: while the spare is
        m.d.comb += [
            self.o_take.eq(free if self.slots == 1 else ~spare.valid),
            self.o_release.data.eq(consume & held.data),
            self.o_release.ctrl.eq(consume & held.ctrl),
        ]
        if self.slots == 1:
            with m.If(free):
                m.d.sync += [self.o_head.eq(self.i_head), held.eq(self.i_popped)]
            return m
        with m.If(free):
            with m.If(spare.valid):
                m.d.sync += [self.o_head.eq(spare), held.eq(spare_held), spare.valid.eq(0)]
            with m.Else():
                m.d.sync += [self.o_head.eq(self.i_head), held.eq(self.i_popped)]
        # an empty spare slot loads the receiver's offer whatever the join does, so only its valid bit
        # waits for the consumption: the slot's contents matter only while it is valid
        with m.If(~spare.valid):
            m.d.sync += [spare.eq(self.i_head), spare_held.eq(self.i_popped), spare.valid.eq(self.i_head.valid & ~free)]
        return m

"""Per-edge links: what crosses between a node and one of its edges, and the edge components.

A *link* is everything one edge carries, as one :class:`~amaranth.lib.wiring.Signature` seen from the
edge's sender (its producer): :class:`CreditLinkSignature` for an edge of 000 (Fig. 2: data channel
``q``, control channel ``q'``, and the heartbeat register of docs/hardware.md) and
:class:`InbandLinkSignature` for an edge of 002 (one channel of in-band tokens, plus the visible-token
count of 003's output buffer). A node holds ``Out(link)`` per output edge and ``In(link)`` per input
edge (:class:`LinksSignature`); between them sits the edge component (:class:`CreditEdge`,
:class:`InbandEdge`) with the edge's channels, so :class:`sfdf.hdl.top.NetworkTop` joins an edge with two
:func:`~amaranth.lib.wiring.connect` calls::

    wiring.connect(m, src.outputs[j], edge.i_link)
    wiring.connect(m, edge.o_link, dst.inputs[k])
"""

from collections.abc import Sequence

from amaranth.hdl import Module
from amaranth.lib import stream, wiring
from amaranth.lib.wiring import In, Out

from .channels import ControlChannel, DataChannel
from .inband import flushed_width
from .offer import SLOTS, release_layout
from .tokens import (
    control_layout,
    counter_ahead_layout,
    counter_control_layout,
    counter_data_layout,
    counter_heartbeat_layout,
    data_layout,
    heartbeat_layout,
    inband_token_layout,
)

__all__ = ["CreditEdge", "CreditLinkSignature", "InbandEdge", "InbandLinkSignature", "Links", "LinksSignature",
           "connect_credit_receiver", "connect_credit_sender", "edge_link"]


class CreditLinkSignature(wiring.Signature):
    """One credit-mode edge (000 Fig. 2), seen from its sender.

    Parameters
    ----------
    capacity : int
        ``|q|``: sizes the credits of a control message.
    control_capacity : int
        ``|q'|``: sizes the heartbeat's push count.
    index_width, data_width, payload_width : int
        Index bits, the edge's payload bits (its ``width``), user message bits.
    live : bool
        Live credit (:mod:`sfdf.hdl.counter`): stamped messages, no credit messages; else 000's credit
        messages (:mod:`sfdf.hdl.credit`).
    heartbeat_in_head : bool
        With live credit, an input of a join that orders its next heads a cycle ahead
        (:func:`sfdf.hdl.plan.heartbeat_in_head_edges`): the link also carries ``join_index`` and
        ``ahead``.

    Members
    -------
    data : Out(stream.Signature(data_layout or counter_data_layout))
        The data channel ``q``: data tokens ``{index, data}``; with live credit also ``msg`` (a message
        was sent with the token).
    ctrl : Out(stream.Signature(control_layout or counter_control_layout))
        The control channel ``q'``: credits, user messages and EOS (000 Sec. 3); with live credit user
        messages and EOS, stamped.
    heartbeat : Out(heartbeat_layout or counter_heartbeat_layout)
        The sender's heartbeat register: the latest dummy index (000 Alg. 4) and the control pushes
        before it, in place of dummies in ``q'`` (docs/hardware.md).
    heartbeat_clear : In(1)
        Flows back: the receiver consumed the heartbeat.
    release : In(release_layout)
        Flows back to the channels: the receiver's offer register let go of the data token or the
        control message it held (:class:`sfdf.hdl.offer.OfferRegister`); the sender ignores it.
    join_index : Out(index_width)
        With ``heartbeat_in_head``: the data channel's copy of its head's index, for the comparators of
        the receiver's join (:class:`sfdf.hdl.channels.DataChannel`'s ``copy``): the edge drives it
        towards the receiver; the sender leaves it undriven.
    ahead : Out(counter_ahead_layout)
        With ``heartbeat_in_head``: whether each channel will hold an item in the next cycle, and the next
        control head's ``quiet`` (the channels' ``o_ahead``), for the receiver's ``due`` a cycle ahead
        (:class:`sfdf.hdl.counter.CounterReceiver`); driven by the edge like ``join_index``.
    """

    def __init__(self, *, capacity, control_capacity, index_width, data_width, payload_width, live=True,
                 heartbeat_in_head=False):
        self.capacity, self.control_capacity = capacity, control_capacity
        self.index_width, self.data_width, self.payload_width = index_width, data_width, payload_width
        self.live, self.heartbeat_in_head = bool(live), bool(heartbeat_in_head)
        if self.live:
            self.data_layout = counter_data_layout(index_width, data_width)
            self.control_layout = counter_control_layout(capacity, index_width, payload_width)
            heartbeat = counter_heartbeat_layout(index_width)
        else:
            self.data_layout = data_layout(index_width, data_width)
            self.control_layout = control_layout(capacity, index_width, payload_width)
            heartbeat = heartbeat_layout(index_width, control_capacity)
        super().__init__({
            "data": Out(stream.Signature(self.data_layout)),
            "ctrl": Out(stream.Signature(self.control_layout)),
            "heartbeat": Out(heartbeat),
            "heartbeat_clear": In(1),
            "release": In(release_layout()),
            **({"join_index": Out(index_width), "ahead": Out(counter_ahead_layout())}
               if self.live and self.heartbeat_in_head else {}),
        })

    def __eq__(self, other):
        return type(other) is type(self) and self.members == other.members

    def __repr__(self):
        return (f"CreditLinkSignature(capacity={self.capacity}, control_capacity={self.control_capacity}, "
                f"index_width={self.index_width}, data_width={self.data_width}, "
                f"payload_width={self.payload_width}, live={self.live}, heartbeat_in_head={self.heartbeat_in_head})")


class InbandLinkSignature(wiring.Signature):
    """One in-band edge (002 Alg. 2, 5; docs/semantics.md, "Inband mode"), seen from its sender.

    Parameters
    ----------
    capacity : int
        ``|q|``, output buffer included: sizes ``flushed``.
    index_width, data_width, payload_width : int
        Index bits, the edge's payload bits (its ``width``), user message bits.
    buffered : bool
        The edge has an output buffer (``|q|_o > 1``): add the ``flushed`` member.
    flush : bool
        Verification only: add the ``flush`` member. Only the sender's half of an edge with an output
        buffer ``|q|_o > 1`` has it (:class:`InbandEdge`); the receiver's half never does.

    Members
    -------
    token : Out(stream.Signature(inband_token_layout))
        The channel ``q``: data tokens, dummies, EOS, user messages riding on the token of their index.
    flushed : Out(flushed_width(capacity))
        With ``buffered``: the sender's count of tokens made visible (003's output buffer flushed), modulo
        ``2 ** flushed_width(capacity)`` (:class:`sfdf.hdl.inband.InbandSender`).
    flush : In(1)
        With ``flush``, flows back: a spontaneous flush of the output buffer (003 Fig. 2).
    release : In(1)
        Flows back: the receiver lets go of the oldest token it read and holds (in its offer register,
        :class:`sfdf.hdl.offer.OfferRegister`); the sender ignores it.
    """

    def __init__(self, *, capacity, index_width, data_width, payload_width, buffered=True, flush=False):
        self.capacity, self.index_width, self.data_width = capacity, index_width, data_width
        self.payload_width, self.buffered, self.flush = payload_width, buffered, flush
        members = {
            "token": Out(stream.Signature(inband_token_layout(index_width, data_width, payload_width))),
            "release": In(1),
        }
        if buffered:
            members["flushed"] = Out(flushed_width(capacity))
        if flush:
            members["flush"] = In(1)
        super().__init__(members)

    def __eq__(self, other):
        return type(other) is type(self) and self.members == other.members

    def __repr__(self):
        return (f"InbandLinkSignature(capacity={self.capacity}, index_width={self.index_width}, "
                f"data_width={self.data_width}, payload_width={self.payload_width}, buffered={self.buffered}, "
                f"flush={self.flush})")


def edge_link(edge, *, mode, index_width, payload_width, flush=False, live_credit=True, heartbeat_in_head=False):
    """The link of ``edge`` (a resolved ``gen.model.Edge``) in ``mode`` (``"credit"`` or ``"inband"``;
    ``live_credit``: the network's, in credit mode; ``heartbeat_in_head``: the edge is one of
    :func:`sfdf.hdl.plan.heartbeat_in_head_edges`, whose link carries the join's copy of the head index).

    ``flush``: the sender's half of an in-band edge whose spontaneous flush is wired (verification);
    it has a ``flush`` member only when the edge's output buffer is above 1 (as
    :class:`sfdf.hdl.inband.InbandSender` has ``i_flush``).
    """
    if mode == "inband":
        return InbandLinkSignature(capacity=edge.capacity, index_width=index_width, data_width=edge.width,
                                   payload_width=payload_width, buffered=edge.output_buffer > 1,
                                   flush=flush and edge.output_buffer > 1)
    return CreditLinkSignature(capacity=edge.capacity, control_capacity=edge.control_capacity,
                               index_width=index_width, data_width=edge.width, payload_width=payload_width,
                               live=live_credit, heartbeat_in_head=heartbeat_in_head)


def connect_credit_receiver(m, link, rx, *, ahead=False):
    """Wire a credit receiver (:class:`sfdf.hdl.credit.CreditReceiver` or
    :class:`sfdf.hdl.counter.CounterReceiver`) to its node's ``In`` ``link``: both channels' heads, the
    heartbeat register and its clear, and with ``ahead`` (``heartbeat_in_head``) the data channel's copy of
    its head's index and next state. Returns the cycle's pops ``(data, ctrl)``; the caller wires the
    release."""
    wiring.connect(m, wiring.flipped(link.ctrl), rx.i_ctrl)
    wiring.connect(m, wiring.flipped(link.data), rx.i_data)
    m.d.comb += [rx.i_heartbeat.eq(link.heartbeat), link.heartbeat_clear.eq(rx.o_heartbeat_clear)]
    if ahead:
        m.d.comb += [rx.i_join_index.eq(link.join_index), rx.i_ahead.eq(link.ahead)]
    return link.data.valid & link.data.ready, link.ctrl.valid & link.ctrl.ready


def connect_credit_sender(m, tx, link):
    """Wire a credit sender (:class:`sfdf.hdl.credit.CreditSender` or :class:`sfdf.hdl.counter.CounterSender`)
    to its node's ``Out`` ``link``: both channels' tails, the heartbeat register and its clear."""
    wiring.connect(m, tx.o_data, wiring.flipped(link.data))
    wiring.connect(m, tx.o_ctrl, wiring.flipped(link.ctrl))
    m.d.comb += [link.heartbeat.eq(tx.o_heartbeat), tx.i_heartbeat_clear.eq(link.heartbeat_clear)]


class LinksSignature(wiring.Signature):
    """A node's input or output links, in spec order: member ``e<k>`` is ``Out(links[k])``.

    Why not an array member (``Out(link).array(n)``): Amaranth arrays give every element one
    signature, and each edge has its own widths and capacities. Why not names built per edge
    (``in<k>_data``): the link is one member, joined with one ``wiring.connect``. The interface
    object (:class:`Links`) is a sequence as well, so ``node.inputs[k]`` is input edge ``k``'s link
    with no member name built at run time.

    :meth:`flip` flips each member and returns a ``LinksSignature`` again (not a
    :class:`~amaranth.lib.wiring.FlippedSignature`, whose interface objects hide the sequence), so a
    node's ``In(LinksSignature(links))`` is the sequence of its ``In(link)`` members.

    Parameters
    ----------
    links : sequence of Signature or Member
        A signature is taken as ``Out(signature)``; ``In(signature)`` flows the other way.
    """

    def __init__(self, links):
        members = {}
        for k, link in enumerate(links):
            member = link if isinstance(link, wiring.Member) else Out(link)
            if not member.is_signature or member.dimensions:
                raise TypeError(f"Link {k} must be a signature without dimensions, not {link!r}")
            members[f"e{k}"] = member
        super().__init__(members)

    def flip(self):
        return LinksSignature([member.flip() for member in self.members.values()])

    def __eq__(self, other):
        return type(other) is type(self) and self.members == other.members

    def create(self, *, path=None, src_loc_at=0):
        return Links(self, path=path, src_loc_at=1 + src_loc_at)

    def __repr__(self):
        return f"LinksSignature({list(self.members.values())!r})"


class Links(Sequence):
    """The interface object of a :class:`LinksSignature`: members ``e0``, ``e1``, ... and a sequence of
    them (``links[k]``, ``len(links)``, iteration)."""

    def __init__(self, signature, *, path=None, src_loc_at=0):
        self.signature = signature
        members = signature.members.create(path=path, src_loc_at=1 + src_loc_at)
        self.__dict__.update(members)
        self._links = tuple(members[f"e{k}"] for k in range(len(members)))

    def __getitem__(self, k):
        return self._links[k]

    def __len__(self):
        return len(self._links)

    def __repr__(self):
        return f"Links({list(self._links)!r})"


class CreditEdge(wiring.Component):
    """One credit-mode edge (000 Fig. 2): the data channel ``q`` (:class:`sfdf.hdl.channels.DataChannel` of
    exactly ``|q|`` tokens) and the control channel ``q'`` (:class:`sfdf.hdl.channels.ControlChannel` of
    ``|q'|`` messages), both counting what the receiver's offer register holds (up to two) until it is
    released;
    the heartbeat register, kept by the sender, and its clear pass straight through.

    Parameters
    ----------
    link : CreditLinkSignature

    Members
    -------
    i_link : In(link)
        From the sender.
    o_link : Out(link)
        To the receiver.

    Submodules ``q`` and ``qc`` are the two channels (``level`` is each one's fill).
    """

    def __init__(self, link):
        if not isinstance(link, CreditLinkSignature):
            raise TypeError(f"A credit edge needs a CreditLinkSignature, not {link!r}")
        self.link = link
        super().__init__({"i_link": In(link), "o_link": Out(link)})

    def elaborate(self, platform):
        m = Module()
        link = self.link
        early = "join_index" in link.members  # the join's copy of the head index, and the channels' next state
        m.submodules.q = q = DataChannel(link.data_layout, link.capacity, release=SLOTS,
                                         copy="index" if early else None, ahead=() if early else None)
        m.submodules.qc = qc = ControlChannel(link.control_layout, link.control_capacity, release=SLOTS,
                                              ahead=("quiet",) if early else None)
        wiring.connect(m, wiring.flipped(self.i_link.data), q.i_stream)
        wiring.connect(m, q.o_stream, wiring.flipped(self.o_link.data))
        wiring.connect(m, wiring.flipped(self.i_link.ctrl), qc.i_stream)
        wiring.connect(m, qc.o_stream, wiring.flipped(self.o_link.ctrl))
        m.d.comb += [
            self.o_link.heartbeat.eq(self.i_link.heartbeat),
            self.i_link.heartbeat_clear.eq(self.o_link.heartbeat_clear),
            q.i_release.eq(self.o_link.release.data),
            qc.i_release.eq(self.o_link.release.ctrl),
            *([self.o_link.join_index.eq(q.o_copy), self.o_link.ahead.data_valid.eq(q.o_ahead.valid),
               self.o_link.ahead.ctrl_valid.eq(qc.o_ahead.valid), self.o_link.ahead.ctrl_quiet.eq(qc.o_ahead.quiet)]
              if early else []),
        ]
        return m


class InbandEdge(wiring.Component):
    """One in-band edge (002): the channel ``q`` (:class:`sfdf.hdl.channels.DataChannel` of exactly ``|q|``
    tokens, output buffer included, counting what the receiver's offer register holds until it is
    released); the sender's visible-token count passes straight through.

    Parameters
    ----------
    link : InbandLinkSignature
        The sender's half; the receiver's is the same without ``flush``.
    release : int
        Tokens the receiver's offer register holds at most (the channel's ``release``):
        :data:`sfdf.hdl.offer.SLOTS` where the platform is pipelined, else 0, every token released as it is
        popped (the plan's choice, :class:`sfdf.hdl.plan.EdgePlan`).

    Members
    -------
    i_link : In(link)
        From the sender.
    o_link : Out(link without flush)
        To the receiver.
    flush : In(1)
        Only with ``link.flush`` (verification): passed to the sender as ``i_link.flush``
        (:class:`sfdf.hdl.top.NetworkTop`'s ``flush_<edge>``).

    Submodule ``q`` is the channel (``level`` is its fill).
    """

    def __init__(self, link, release=SLOTS):
        if not isinstance(link, InbandLinkSignature):
            raise TypeError(f"An in-band edge needs an InbandLinkSignature, not {link!r}")
        self.link, self.release = link, release
        receiver = InbandLinkSignature(capacity=link.capacity, index_width=link.index_width,
                                       data_width=link.data_width, payload_width=link.payload_width,
                                       buffered=link.buffered)
        members = {"i_link": In(link), "o_link": Out(receiver)}
        if link.flush:
            members["flush"] = In(1)
        super().__init__(members)

    def elaborate(self, platform):
        m = Module()
        link = self.link
        # without held offers the receiver releases every token as it pops it, and the channel needs no
        # count of held tokens
        held = self.release
        m.submodules.q = q = DataChannel(inband_token_layout(link.index_width, link.data_width, link.payload_width),
                                         link.capacity, release=held)
        wiring.connect(m, wiring.flipped(self.i_link.token), q.i_stream)
        wiring.connect(m, q.o_stream, wiring.flipped(self.o_link.token))
        if held:
            m.d.comb += q.i_release.eq(self.o_link.release)
        if link.buffered:
            m.d.comb += self.o_link.flushed.eq(self.i_link.flushed)
        if link.flush:
            m.d.comb += self.i_link.flush.eq(self.flush)
        return m

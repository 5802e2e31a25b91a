"""An edge at run time: its channels, the protocol variables of both ends, and its counters.

The sender's variables (``SCB``, ``LastSentIdx``, ``LastRecvIdx`` of 000 Alg. 4; ``LastOutputIndex``
of 002 Alg. 2, 5) and the receiver's ``RCB`` live here beside the channels they govern. Every
change a node makes to a channel goes through the link, which wakes the node at the other end if
it is blocked on this edge.
"""

from __future__ import annotations

from .channels import ControlChannel, DataChannel

__all__ = ["COUNTERS", "Link"]

#: Per-edge counters reported in :attr:`SimResult.per_edge`.
COUNTERS = ("data_tokens", "dummies", "coalesced", "dummy_flags", "credits", "control_messages", "flushes")


class Link:
    """One edge of the running network.

    Parameters
    ----------
    edge : gen.model.Edge
        The resolved edge (concrete interval, threshold and control capacity).
    position : int
        The edge's position in spec order.
    credit : bool
        Credit mode: the edge has a control channel.
    track_visible : bool
        Non-Propagation/Naive (002 Alg. 5): ``LastOutputIndex`` follows what is made visible.
    live_credit : bool
        Live credit: the control channel's dummy waits in the heartbeat register (:class:`.channels.ControlChannel`).

    Members
    -------
    data : DataChannel
    control : ControlChannel or None
    src, dst : NodeSim
        Set when the nodes are built.
    scb, rcb, last_sent, last_recv : int
        Credit protocol variables (000 Alg. 1, 2, 4).
    borrowed : int
        Tokens the receiver took on live credit, before their credit message (docs/hardware.md).
    last_output : int
        ``LastOutputIndex_q`` (002 Alg. 2, 5).
    interval : int or None
        ``[e]`` or ``[q]``; None is infinite.
    threshold : int
        ``T``.
    bicomp : int
        Biconnected component (002 Sec. 3.2), used by Propagation only.
    """

    __slots__ = ("name", "position", "data", "control", "src", "dst", "scb", "rcb", "borrowed", "last_sent",
                 "last_recv", "last_output", "interval", "threshold", "track_visible", "bicomp",
                 "flush_oracle") + COUNTERS

    def __init__(self, edge, position: int, credit: bool, track_visible: bool, live_credit: bool = False):
        self.name = edge.name
        self.position = position
        self.data = DataChannel(edge.capacity, edge.output_buffer)
        self.control = ControlChannel(edge.control_capacity, live_credit) if credit else None
        self.src = self.dst = None
        self.scb = self.rcb = self.borrowed = self.last_sent = self.last_recv = self.last_output = 0
        self.interval = edge.interval
        self.threshold = edge.threshold
        self.track_visible = track_visible
        self.bicomp = 0
        self.flush_oracle = None
        for counter in COUNTERS:
            setattr(self, counter, 0)

    # -- waking the other end ------------------------------------------------------------------
    def wake_dst(self) -> None:
        """The receiver may proceed if it was blocked on this edge (or also on it: a node computing ahead)."""
        node = self.dst
        if node.waiting is self or node.also_waiting is self:
            node.waiting = node.also_waiting = None
            node.ready(node.rank)

    def wake_src(self) -> None:
        """The sender may proceed if it was blocked on this edge."""
        node = self.src
        if node.waiting is self or node.also_waiting is self:
            node.waiting = node.also_waiting = None
            node.ready(node.rank)

    # -- sender side of the data channel -------------------------------------------------------
    def push(self, token: tuple) -> None:
        """Push a token (the caller checked room); honour forced and spontaneous flushes."""
        q = self.data
        if q.push(token):
            oracle = self.flush_oracle
            if oracle is not None and oracle(self.name, q.hidden, token[1]):
                self.flush()
            return
        if q.output_buffer > 1:
            self.flushes += 1  # the forced flush of a full output buffer (size 1 is none)
        if self.track_visible:
            self.last_output = q.last_index
        self.wake_dst()

    def push_flush(self, token: tuple) -> None:
        """Push a token that flushes the output buffer with it (the caller checked room)."""
        q = self.data
        if q.push_flush(token):
            self.flushes += 1
        if self.track_visible:
            self.last_output = q.last_index
        self.wake_dst()

    def flush(self) -> bool:
        """Make the output buffer visible (003 Sec. 2); return whether anything was hidden."""
        q = self.data
        if not q.hidden:
            return False
        q.hidden = 0
        self.flushes += 1
        if self.track_visible:
            self.last_output = q.last_index
        self.wake_dst()
        return True

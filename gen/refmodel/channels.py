"""Bounded channels: the data channel ``q`` with its output buffer and the control channel ``q'``.

A data channel holds at most ``|q|`` tokens *in total*; the newest ``hidden`` of them sit in the
sender's output buffer and are invisible to the receiver until flushed (003 Sec. 2). A control
channel holds at most ``|q'|`` messages (000 Fig. 2); a dummy pushed behind a dummy replaces it
(dummy coalescing, docs/semantics.md).

Tokens are tuples ``(kind, index, payload, messages)``: ``messages`` is the tuple of in-band user
control messages riding on the token (002 in-band, docs/semantics.md; always empty in credit mode,
where they travel on the control channel). Control messages are lists ``[kind, credits, value]``
(mutable: the receiver detaches credits, the sender coalesces dummies). Plain tuples and lists keep
the simulator fast.
"""

from __future__ import annotations

from collections import deque

__all__ = [
    "DATA",
    "DUMMY",
    "EOS",
    "FLAGGED",
    "INF",
    "MSG_CREDIT",
    "MSG_DUMMY",
    "MSG_EOS",
    "MSG_USER",
    "ControlChannel",
    "DataChannel",
]

#: The index of EOS: larger than every computation index (002 Sec. 1).
INF = float("inf")

# Token kinds on a data channel.
#: A data token ``(DATA, index, payload, messages)``.
DATA = 0
#: A data token carrying a dummy flag (002 Alg. 2: a dummy combined with data of the same index).
FLAGGED = 1
#: A standalone dummy ``(DUMMY, index, None, messages)`` (002 Sec. 3), also the one forced to carry
#: user messages at an index with no data token.
DUMMY = 2
#: End of stream ``(EOS, INF, None, messages)``: it carries the messages a node still owes at EOS.
EOS = 3

# Message kinds on a control channel (000 Sec. 3, 4.2).
#: A credit message: no content but its credits.
MSG_CREDIT = 0
#: A user control message; its ``value`` is the message, delivered to the kernel.
MSG_USER = 1
#: A dummy message; its ``value`` is the sender's computation index.
MSG_DUMMY = 2
#: End of stream; its ``value`` is ``INF``.
MSG_EOS = 3


class DataChannel:
    """A data channel of exact capacity ``|q|``, output buffer included (003 Sec. 2).

    Parameters
    ----------
    capacity : int
        ``|q| >= 1``: most tokens held, hidden ones included.
    output_buffer : int
        ``|q|_o``: the sender must flush when ``hidden`` reaches it; 0 (or 1) means every token is
        visible at once.

    Members
    -------
    queue : collections.deque
        Tokens, oldest first; the last ``hidden`` are in the output buffer.
    hidden : int
        Tokens invisible to the receiver.
    last_index : int
        Index of the newest token pushed (0 before any): what a flush makes visible.
    """

    __slots__ = ("capacity", "hidden", "last_index", "output_buffer", "queue")

    def __init__(self, capacity: int, output_buffer: int = 0):
        if not isinstance(capacity, int) or capacity < 1:
            raise ValueError(f"Channel capacity must be a positive integer, not {capacity!r}")
        if not isinstance(output_buffer, int) or not 0 <= output_buffer <= capacity:
            raise ValueError(f"Output buffer must be an integer in [0, {capacity}], not {output_buffer!r}")
        self.capacity = capacity
        self.output_buffer = output_buffer
        self.queue: deque = deque()
        self.hidden = 0
        self.last_index = 0

    @property
    def level(self) -> int:
        """Tokens held, hidden ones included."""
        return len(self.queue)

    @property
    def visible(self) -> int:
        """Tokens the receiver can see."""
        return len(self.queue) - self.hidden

    @property
    def full(self) -> bool:
        """Whether a push would block the sender."""
        return len(self.queue) >= self.capacity

    def push(self, token: tuple) -> bool:
        """Append ``token`` (the caller checked :attr:`full`); return whether it stays hidden.

        A token enters the output buffer when there is one; reaching ``|q|_o`` hidden tokens forces
        the flush (003 Sec. 2), so an output buffer of 1 behaves as none.
        """
        self.queue.append(token)
        self.last_index = token[1]
        if self.output_buffer:
            self.hidden += 1
            if self.hidden >= self.output_buffer:
                self.hidden = 0
        return self.hidden > 0

    def push_flush(self, token: tuple) -> bool:
        """Append ``token`` and flush with it; return whether hidden tokens became visible.

        Dummies, flagged tokens, tokens carrying user messages and EOS flush the output buffer
        (docs/semantics.md, 000 Sec. 4.4).
        """
        self.queue.append(token)
        self.last_index = token[1]
        flushed = self.hidden > 0
        self.hidden = 0
        return flushed

    def flush(self) -> bool:
        """Make every hidden token visible; return whether any was hidden."""
        if self.hidden:
            self.hidden = 0
            return True
        return False


class ControlChannel:
    """A control channel of capacity ``|q'|`` with dummy coalescing (000 Sec. 4.2, 4.3).

    Parameters
    ----------
    capacity : int
        ``|q'| >= 1``: most messages held; the sender blocks when it is reached.
    register : bool
        Live credit: a dummy waits in the edge's heartbeat register beside the FIFO (docs/hardware.md,
        :mod:`sfdf.hdl.counter`), so it takes no slot and never blocks the sender, and the next token or
        message pushed clears it (:meth:`clear_dummy`): it is only ever the tail of :attr:`queue`.

    Members
    -------
    queue : collections.deque
        Messages ``[kind, credits, value]``, oldest first.
    """

    __slots__ = ("capacity", "queue", "register")

    def __init__(self, capacity: int, register: bool = False):
        if not isinstance(capacity, int) or capacity < 1:
            raise ValueError(f"Control channel capacity must be a positive integer, not {capacity!r}")
        self.capacity = capacity
        self.register = register
        self.queue: deque = deque()

    @property
    def level(self) -> int:
        """Slots used: the messages held, but a dummy in the heartbeat register."""
        queue = self.queue
        return len(queue) - (self.register and bool(queue) and queue[-1][0] == MSG_DUMMY)

    @property
    def full(self) -> bool:
        """Whether pushing a message that does not coalesce would block the sender."""
        return self.level >= self.capacity

    def push_dummy(self, index: int, credits: int = 0) -> int:
        """Push ``dummy(index)`` carrying ``credits``: 2 if it coalesced into a tail dummy, 1 if appended,
        0 if full (never with the heartbeat register).

        The tail has not been consumed yet (the receiver consumes from the head and a computation is
        atomic), so raising its index only says more: no token with a lower index will come. Its
        credits add up (live credit: a dummy credits the tokens pushed before it).
        """
        queue = self.queue
        if queue and queue[-1][0] == MSG_DUMMY:
            queue[-1][1] += credits
            queue[-1][2] = index
            return 2
        if not self.register and len(queue) >= self.capacity:
            return 0
        queue.append([MSG_DUMMY, credits, index])
        return 1

    def clear_dummy(self) -> int:
        """The heartbeat register's dummy is cleared by a later push (the item pushed has a larger index
        and says more): drop it and return the credits it still carries, which the next message carries
        instead. 0 without a register or a dummy in it."""
        queue = self.queue
        if self.register and queue and queue[-1][0] == MSG_DUMMY:
            return queue.pop()[1]
        return 0

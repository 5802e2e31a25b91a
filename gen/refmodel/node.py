"""The node state machine shared by both protocols: receive, compute, then emit one message at a time.

A node alternates between two phases (002 Alg. 1, 000 Alg. 4):

1. *receive and compute*, one atomic action: scan the inputs in spec order as the protocol says
   (:mod:`.credit`, :mod:`.inband`), find the least index ``i`` every input can account for,
   consume the tokens with index ``i``, run the kernel, and queue the outputs;
2. *emit*: the queued outputs, one token or message per action, each blocking while its channel
   is full. Blocking half-way through its outputs (one written, the next full) is how a node joins
   a blocking cycle (002 Sec. 2): atomic multi-output emission would hide deadlocks.

A node holds at most ``depth`` computations decided but not yet wholly emitted (docs/hardware.md,
"The pipelined node"): with ``depth = 1`` it computes only once the previous computation's outputs
are all out; with more, a node blocked on an output computes ahead, consuming its inputs, as the
hardware's join stage does while its emit stage waits. A node blocked both ways waits on both edges.

An action reports progress or blocks; a blocked node records the edge and the reason, which the
deadlock analysis turns into the waits-for relation (002 Def. 2). Emit actions are tuples
``(function, link, *arguments)`` whose function returns one of :data:`BLOCKED`, :data:`DONE`,
:data:`NOOP` (nothing observable happened: fold into the next action) or :data:`KEEP` (progress,
and the same action runs again).
"""

from __future__ import annotations

from collections import deque

from .watermark import WAIT_WATERMARK

__all__ = [
    "BLOCKED",
    "DONE",
    "KEEP",
    "NOOP",
    "SENDER_WAITS",
    "WAIT_CONTROL_EMPTY",
    "WAIT_CONTROL_FULL",
    "WAIT_DATA_EMPTY",
    "WAIT_DATA_FULL",
    "WAIT_HIDDEN",
    "NodeSim",
]

BLOCKED = 0
DONE = 1
NOOP = 2
KEEP = 3

# Why a node waits: the first two block a sender (the receiver blocks it), the rest a receiver.
WAIT_DATA_FULL = "data channel full"
WAIT_CONTROL_FULL = "control channel full"
WAIT_DATA_EMPTY = "data channel empty"
WAIT_HIDDEN = "head token hidden in the output buffer"
WAIT_CONTROL_EMPTY = "control channel empty with RCB = 0"
#: Reasons under which the *receiver* of the edge blocks the waiting node (002 Def. 2).
SENDER_WAITS = frozenset((WAIT_DATA_FULL, WAIT_CONTROL_FULL))


def _retire(node, action) -> int:
    """``(_retire,)``: the outputs of one computation are out."""
    node.queued -= 1
    return NOOP


class NodeSim:
    """A running node; protocol subclasses supply ``_receive``, ``_emit`` and ``_emit_end``.

    Parameters
    ----------
    name : str
        Node name.
    rank : int
        Position in the topological order (the scheduler's node id).
    inputs, outputs : list of Link
        In spec order.
    kernel : object
        See :mod:`.kernels`.
    words : list of int or None
        A source's input words (computation ``k`` reads ``words[k - 1]``); None for other nodes.
    frame_ends : dict
        Source only: index -> tuple of user messages sent after that computation.
    log : list or None
        A sink's output log of ``("data", index, payload)`` and ``("control", message)``.
    filter_oracle : callable or None
        ``(node, output, index) -> bool | None`` overriding the kernel's emit decisions.
    depth : int
        Computations decided and not yet wholly emitted that the node may hold (at least 1).

    Members
    -------
    pending : collections.deque
        Queued emit actions.
    waiting : Link or None
        The edge a blocked node waits on; ``reason`` says why.
    also_waiting : Link or None
        A node blocked on an output with room to compute ahead also waits on the input it lacks.
    queued : int
        Computations decided and not yet wholly emitted.
    ending, finished : bool
        EOS queued on the outputs; everything sent.
    computations : int
        Computations performed, null ones included.
    ready : callable
        ``ready(rank)``: tell the scheduler this node may proceed (set by the simulator).
    position : int
        The index of the last computation (0 before the first).
    watermark : .watermark.Watermark or None
        The run's index watermark (set by the simulator): it holds a source, a sink reports its position.
    """

    __slots__ = (
        "also_waiting",
        "computations",
        "depth",
        "ending",
        "filter_oracle",
        "finished",
        "frame_ends",
        "inputs",
        "kernel",
        "log",
        "name",
        "offers",
        "output_names",
        "outputs",
        "pending",
        "position",
        "queued",
        "rank",
        "ready",
        "reason",
        "waiting",
        "watermark",
        "words",
    )

    def __init__(self, name, rank, inputs, outputs, kernel, words=None, frame_ends=None, log=None,
                 filter_oracle=None, depth=1):
        if not isinstance(depth, int) or depth < 1:
            raise ValueError(f"Depth must be a positive integer, not {depth!r}")
        self.name = name
        self.rank = rank
        self.inputs = inputs
        self.outputs = outputs
        self.output_names = [link.name for link in outputs] or ["m_axis"]
        self.kernel = kernel
        self.words = words
        self.frame_ends = frame_ends or {}
        self.position = 0
        self.log = log
        self.filter_oracle = filter_oracle
        self.pending: deque = deque()
        self.waiting = None
        self.also_waiting = None
        self.reason = None
        self.depth = depth
        self.queued = 0
        self.ending = False
        self.finished = False
        self.computations = 0
        self.offers = [0] * len(inputs)
        self.ready = None
        self.watermark = None

    # -- the action loop -----------------------------------------------------------------------
    def step(self) -> bool:
        """Perform one action; False when blocked (``waiting`` and ``reason`` say on what)."""
        pending = self.pending
        while pending:
            action = pending[0]
            result = action[0](self, action)
            if result == NOOP:
                pending.popleft()
                continue
            if result == DONE:
                pending.popleft()
                if self.queued:  # depth > 1: close the computations whose last output that was
                    while pending and pending[0][0] is _retire:
                        pending.popleft()
                        self.queued -= 1
                if self.ending and not pending:
                    self.finished = True
                return True
            if result == KEEP:
                return True
            return self.depth > 1 and self._compute_ahead()
        if self.ending:
            self.finished = True
            return True
        return self._decide_next()

    def _decide_next(self) -> bool:
        """Receive and compute the next computation (a source: read the next word)."""
        if self.words is not None:
            return self._source()
        return self._receive()

    def _compute_ahead(self) -> bool:
        """The head output blocked: compute the next computation if the node may hold another one.

        Blocked on that too, the node waits on both edges, the output staying its ``waiting`` (the
        blocking cycle walks the outputs a full pipeline waits on)."""
        if self.queued >= self.depth or self.ending:
            return False
        output, reason = self.waiting, self.reason
        if self._decide_next():
            self.waiting = None
            return True
        self.also_waiting = self.waiting
        self.waiting, self.reason = output, reason
        return False

    def _decided(self) -> None:
        """Close the outputs queued for one computation: it counts against ``depth`` until they are out."""
        if self.depth > 1 and self.pending:  # at depth 1 nothing is computed while outputs are pending
            self.queued += 1
            self.pending.append((_retire,))

    def block(self, link, reason: str) -> int:
        """Record what this node waits on; return :data:`BLOCKED`."""
        self.waiting = link
        self.also_waiting = None
        self.reason = reason
        return BLOCKED

    # -- compute -------------------------------------------------------------------------------
    def _source(self) -> bool:
        """A source computation: index ``k`` reads word ``k`` (002 Alg. 1), then EOS.

        A frame end due after word ``k`` is sent after computation ``k``; the kernel learns that the
        word is its frame's last (``variance_source`` always sends it).
        """
        words = self.words
        if self.position == len(words):
            self._end(None)
            return True
        i = self.position + 1
        if self.watermark is not None and self.watermark.holds(i):
            return self.block(None, WAIT_WATERMARK)
        self.position = i
        self.computations += 1
        messages = self.frame_ends.get(i, ())
        values, emits = self._decide(i, [words[i - 1]], bool(messages))
        if messages and self.kernel.messages:
            values, emits = self._answer(i, values, emits, messages)
        if self.log is not None:
            self._log(i, values, emits, messages)
        self._emit(i, values, emits, messages, None)
        self._decided()
        return True

    def _compute(self, i: int, present: bool, values: list, flags, arrived) -> None:
        """Compute index ``i`` from the inputs' ``values`` (``None`` where absent), then deliver the user
        messages ``arrived`` with its tokens.

        With no value present it is a null computation (no kernel call). ``flags`` is what the
        protocol needs from the consumed tokens (Propagation: the dummies' biconnected components).
        ``arrived`` lists ``(port, messages)`` of the consumed tokens carrying in-band messages
        (None if none did); what the kernel forwards is sent after computation ``i``.
        """
        self.computations += 1
        self.position = i
        if not self.outputs and self.watermark is not None:
            self.watermark.moved()
        if present:
            values, emits = self._decide(i, values, False)
        else:
            emits = None
        messages = self._release(arrived) if arrived else ()
        if messages and self.kernel.messages:
            values, emits = self._answer(i, values, emits, messages)
        if self.log is not None:
            self._log(i, values, emits, messages)
        self._emit(i, values, emits, messages, flags)
        self._decided()

    def _decide(self, i: int, values: list, last: bool) -> tuple[list, list[bool]]:
        """The kernel's outputs at index ``i``; the filter oracle may override its emits (forcing out a
        token the kernel filtered sends 0)."""
        values, emits = self.kernel.compute(i, values, last)
        oracle = self.filter_oracle
        if oracle is not None:
            for j, output in enumerate(self.output_names):
                verdict = oracle(self.name, output, i)
                if verdict is not None:
                    emits[j] = verdict
        return values, emits

    def _answer(self, i: int, values, emits, messages) -> tuple[list, list[bool]]:
        """A kernel taking messages as beats (``messages = true``) answers each message forwarded after
        computation ``i``: a result it returns for an output is a token at index ``i`` there, which the
        computation itself must not have emitted (docs/kernels.md)."""
        if emits is None:  # a null computation: the message alone reaches the kernel
            values, emits = [0] * len(self.output_names), [False] * len(self.output_names)
        else:
            values, emits = list(values), list(emits)
        for message in messages:
            for j, value in enumerate(self.kernel.answer(i, message)):
                if value is not None:
                    if emits[j]:
                        raise self.kernel.twice(i, j, message)
                    values[j], emits[j] = value, True
        return values, emits

    def _log(self, i, values, emits, messages) -> None:
        if emits is not None and emits[0]:
            self.log.append(("data", i, values[0]))
        for message in messages:
            self.log.append(("control", message))

    # -- delivered messages and EOS -----------------------------------------------------------
    def _no_result(self, messages) -> None:
        """A kernel taking messages answers ``messages`` forwarded apart from any computation (owed at EOS, or
        delivered after the computation it follows): a result there would have no index."""
        for message in messages:
            for j, value in enumerate(self.kernel.answer(self.position, message)):
                if value is not None:
                    raise self.kernel.unplaced(self.position, j, message)

    def _release(self, arrived) -> tuple:
        """Deliver ``(port, messages)`` pairs to the kernel; return the messages it forwards now."""
        control = self.kernel.control
        forwarded: list = []
        for port, messages in arrived:
            for message in messages:
                forwarded += control(port, message)
        return tuple(forwarded)

    def _end(self, arrived) -> None:
        """Every input is at EOS (or the source is done): send the messages owed, then EOS.

        ``arrived`` are the user messages riding on the inputs' EOS tokens, as for :meth:`_compute`;
        after them the kernel releases the messages some input never delivered (docs/semantics.md).
        """
        owed = (*(self._release(arrived) if arrived else ()), *self.kernel.finish())
        if owed and self.kernel.messages:  # a message owed at EOS follows no computation: no result rides on it
            self._no_result(owed)
        if self.log is not None:
            self.log.extend(("control", message) for message in owed)
        self._emit_end(owed)
        self._decided()
        self.ending = True
        if not self.pending:
            self.finished = True

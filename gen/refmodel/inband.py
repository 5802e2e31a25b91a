"""Inband mode: dummies and user control messages travel on the data channel (002 Alg. 2, 5).

Receiver (002 Alg. 1): the node waits until every input shows a visible token with an index
(data, a dummy or EOS). User messages are delivered when they reach the head of *any* input, also
while the node still waits for another input: a message parked at the head of a channel takes a
slot, and a receiver that left it there while waiting elsewhere could close a blocking cycle even
under Naive (``u -> x``, ``u -> v -> x``, capacities 1: ``x`` waits on ``vx`` while ``u`` waits
to push behind the message on ``ux``). Copies of one message from several inputs are aligned by
the kernel; distinct messages arriving on different inputs between the same two computations are
delivered in arrival order.

Sender, after computing ``i``, per output channel ``q`` in spec order:

- Non-Propagation (002 Alg. 5) and Naive (its ``[q] = 1`` case): ``LastOutputIndex_q`` is the last
  index made *visible*. A data token is pushed (into the output buffer if any); then if
  ``i - LastOutputIndex_q >= [q]``: flush if a data token with index ``i`` was pushed, else push
  ``dummy(i)`` and flush; ``LastOutputIndex_q = i``.
- Propagation (002 Alg. 2): a dummy is scheduled if ``i - LastOutputIndex_q >= [q]`` or an input
  consumed at ``i`` carried a dummy (standalone or as a flag) and lies in the same biconnected
  component as ``q`` (002 Sec. 3.2); only then ``LastOutputIndex_q = i``. A scheduled dummy rides on
  the data token as a flag, or goes alone; either flushes the output buffer.

User messages and EOS flush the output buffer (003 Sec. 2). A source's user messages follow the
computation's tokens on *every* output, not edge by edge as in credit mode: in-band they take data
slots, and a node blocked on a message for one output before sending index ``i`` on another could
close a blocking cycle even under Naive (two parallel channels of capacity 1: ``u`` fills the first
with ``i`` and its message waits behind it while the receiver waits for ``i`` on the second).
"""

from __future__ import annotations

from .channels import CONTROL, DATA, DUMMY, EOS, FLAGGED, INF
from .node import DONE, NOOP, WAIT_DATA_EMPTY, WAIT_DATA_FULL, WAIT_HIDDEN, NodeSim

__all__ = ["InbandNode", "PropagationNode"]


def _push_data(node, action) -> int:
    """``(_push_data, link, i, payload)``: a data token, hidden while the output buffer has room."""
    link = action[1]
    q = link.data
    if len(q.queue) >= q.capacity:
        return node.block(link, WAIT_DATA_FULL)
    link.push((DATA, action[2], action[3]))
    link.data_tokens += 1
    return DONE


def _push_flagged(node, action) -> int:
    """``(_push_flagged, link, i, payload)``: a data token carrying a dummy flag; it flushes."""
    link = action[1]
    q = link.data
    if len(q.queue) >= q.capacity:
        return node.block(link, WAIT_DATA_FULL)
    link.push_flush((FLAGGED, action[2], action[3]))
    link.data_tokens += 1
    link.dummy_flags += 1
    return DONE


def _push_dummy(node, action) -> int:
    """``(_push_dummy, link, i)``: a standalone dummy; it flushes."""
    link = action[1]
    q = link.data
    if len(q.queue) >= q.capacity:
        return node.block(link, WAIT_DATA_FULL)
    link.push_flush((DUMMY, action[2], None))
    link.dummies += 1
    return DONE


def _interval(node, action) -> int:
    """``(_interval, link, i, pushed)``: 002 Alg. 5's rule against what is visible now."""
    link, i = action[1], action[2]
    if i - link.last_output < link.interval:
        return NOOP
    if action[3]:
        flushed = link.flush()
        link.last_output = i
        return DONE if flushed else NOOP
    result = _push_dummy(node, action)
    if result == DONE:
        link.last_output = i
    return result


def _push_control(node, action) -> int:
    """``(_push_control, link, message)``: an in-band user message; it flushes."""
    link = action[1]
    q = link.data
    if len(q.queue) >= q.capacity:
        return node.block(link, WAIT_DATA_FULL)
    link.push_flush((CONTROL, None, action[2]))
    link.control_messages += 1
    if len(q.queue) == 1:
        link.wake_reader()  # it is at the head: the receiver takes it even while waiting elsewhere
    return DONE


def _push_eos(node, action) -> int:
    """``(_push_eos, link)``: EOS; it flushes."""
    link = action[1]
    q = link.data
    if len(q.queue) >= q.capacity:
        return node.block(link, WAIT_DATA_FULL)
    link.push_flush((EOS, INF, None))
    return DONE


class InbandNode(NodeSim):
    """A node running 002 Alg. 5 (Non-Propagation; Naive is its ``[q] = 1`` case)."""

    USER_ACTION = staticmethod(_push_control)
    EOS_ACTION = staticmethod(_push_eos)

    __slots__ = ()

    def _receive(self) -> bool:
        inputs = self.inputs
        offers = self.offers
        starved = None
        for k, link in enumerate(inputs):
            q = link.data
            queue = q.queue
            while len(queue) > q.hidden and queue[0][0] == CONTROL:
                link.wake_src()
                self._deliver(k, queue.popleft()[2])
                if self.pending:
                    return True
            if len(queue) > q.hidden:
                offers[k] = queue[0][1]
            elif starved is None:
                starved = link
        if starved is not None:
            return self.block(starved, WAIT_HIDDEN if starved.data.hidden else WAIT_DATA_EMPTY)
        i = min(offers)
        if i == INF:
            for link in inputs:
                link.data.queue.popleft()
                link.wake_src()
            self._end()
            return True
        payload = 0
        present = False
        flags = None
        for k, link in enumerate(inputs):
            if offers[k] == i:
                token = link.data.queue.popleft()
                link.wake_src()
                kind = token[0]
                if kind <= FLAGGED:
                    payload += token[2]
                    present = True
                if kind != DATA:
                    if flags is None:
                        flags = set()
                    flags.add(link.bicomp)
        self._compute(i, present, payload, flags)
        return True

    def _emit(self, i, payload, emits, messages, flags) -> None:
        pending = self.pending
        for j, link in enumerate(self.outputs):
            pushed = emits is not None and emits[j]
            if pushed:
                pending.append((_push_data, link, i, payload & link.data_mask))
            if link.interval is not None:
                pending.append((_interval, link, i, pushed))
        self._queue_messages(messages)

    def _queue_messages(self, messages) -> None:
        """User messages go after the computation's tokens on *every* output (see module doc)."""
        for message in messages:
            for link in self.outputs:
                self.pending.append((_push_control, link, message))


class PropagationNode(InbandNode):
    """A node running 002 Alg. 2 (Propagation) with dummies confined to biconnected components."""

    __slots__ = ()

    def _emit(self, i, payload, emits, messages, flags) -> None:
        pending = self.pending
        for j, link in enumerate(self.outputs):
            interval = link.interval
            dummy = (interval is not None and i - link.last_output >= interval) or (
                flags is not None and link.bicomp in flags)
            if dummy:
                link.last_output = i
            if emits is not None and emits[j]:
                pending.append((_push_flagged if dummy else _push_data, link, i, payload & link.data_mask))
            elif dummy:
                pending.append((_push_dummy, link, i))
        self._queue_messages(messages)

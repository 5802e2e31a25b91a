"""Inband mode: dummies and user control messages travel on the data channel (002 Alg. 2, 5).

Receiver (002 Alg. 1): the node waits until every input shows a visible token (data, a dummy or
EOS), computes the least index ``i`` shown, and consumes the tokens with index ``i``. The user
messages riding on them are delivered after computing ``i`` and before any later index (000 Thm.
3.1, in-band); copies of one message arriving on several inputs are delivered in that same
computation and forwarded once (:class:`.kernels._ControlBarrier`).

Sender, after computing ``i``, per output channel ``q`` in spec order:

- Non-Propagation (002 Alg. 5) and Naive (its ``[q] = 1`` case): ``LastOutputIndex_q`` is the last
  index made *visible*. A data token is pushed (into the output buffer if any); then if
  ``i - LastOutputIndex_q >= [q]``: flush if a data token with index ``i`` was pushed, else push
  ``dummy(i)`` and flush; ``LastOutputIndex_q = i``.
- Propagation (002 Alg. 2): a dummy is scheduled if ``i - LastOutputIndex_q >= [q]`` or an input
  consumed at ``i`` carried a dummy (standalone or as a flag) and lies in the same biconnected
  component as ``q`` (002 Sec. 3.2); only then ``LastOutputIndex_q = i``. A scheduled dummy rides on
  the data token as a flag, or goes alone; either flushes the output buffer.

User messages sent after computing ``i`` ride on the token with index ``i`` of every output: the
data token if one is emitted, else a dummy forced to carry them (docs/semantics.md). They take no
slot of their own, so every channel carries at most one token per index, as the interval theorems
(002 Thm. 3.2, 3.3) assume. A token carrying messages flushes the output buffer (003 Sec. 2); a
forced dummy makes ``i`` visible (Non-Propagation) and is a dummy like any other (Propagation: it
sets ``LastOutputIndex_q`` and propagates). Messages a node still owes at EOS ride on its EOS.
"""

from __future__ import annotations

from .channels import DATA, DUMMY, EOS, FLAGGED, INF
from .node import DONE, NOOP, WAIT_DATA_EMPTY, WAIT_DATA_FULL, WAIT_HIDDEN, NodeSim

__all__ = ["InbandNode", "PropagationNode"]


def _push_data(node, action) -> int:
    """``(_push_data, link, i, payload)``: a plain data token, hidden while the output buffer has room."""
    link = action[1]
    q = link.data
    if len(q.queue) >= q.capacity:
        return node.block(link, WAIT_DATA_FULL)
    link.push((DATA, action[2], action[3], ()))
    link.data_tokens += 1
    return DONE


def _push_flush(node, action) -> int:
    """``(_push_flush, link, token)``: a token that flushes the output buffer with it.

    Any token carrying user messages, a dummy (standalone or a flag) or EOS (docs/semantics.md).
    """
    link = action[1]
    q = link.data
    if len(q.queue) >= q.capacity:
        return node.block(link, WAIT_DATA_FULL)
    token = action[2]
    link.push_flush(token)
    kind = token[0]
    if kind == DUMMY:
        link.dummies += 1
    elif kind != EOS:
        link.data_tokens += 1
        if kind == FLAGGED:
            link.dummy_flags += 1
    link.control_messages += len(token[3])
    return DONE


def _interval(node, action) -> int:
    """``(_interval, link, i, pushed)``: 002 Alg. 5's rule against what is visible now.

    Making ``i`` visible (a flush, or the dummy's push) sets ``LastOutputIndex_q = i`` in the link.
    """
    link, i = action[1], action[2]
    if i - link.last_output < link.interval:
        return NOOP
    if action[3]:
        return DONE if link.flush() else NOOP
    return _push_flush(node, (_push_flush, link, (DUMMY, i, None, ())))


class InbandNode(NodeSim):
    """A node running 002 Alg. 5 (Non-Propagation; Naive is its ``[q] = 1`` case)."""

    __slots__ = ()

    def _receive(self) -> bool:
        inputs = self.inputs
        offers = self.offers
        for k, link in enumerate(inputs):
            q = link.data
            if len(q.queue) == q.hidden:
                return self.block(link, WAIT_HIDDEN if q.hidden else WAIT_DATA_EMPTY)
            offers[k] = q.queue[0][1]
        i = min(offers)
        values = [None] * len(inputs)
        present = False
        flags = None
        arrived = None
        for k, link in enumerate(inputs):
            if offers[k] == i:
                token = link.data.queue.popleft()
                link.wake_src()
                kind = token[0]
                if kind <= FLAGGED:
                    values[k] = token[2]
                    present = True
                if kind != DATA:
                    if flags is None:
                        flags = set()
                    flags.add(link.bicomp)
                if token[3]:
                    if arrived is None:
                        arrived = []
                    arrived.append((k, token[3]))
        if i == INF:
            self._end(arrived)
        else:
            self._compute(i, present, values, flags, arrived)
        return True

    def _emit(self, i, values, emits, messages, flags) -> None:
        pending = self.pending
        for j, link in enumerate(self.outputs):
            pushed = emits is not None and emits[j]
            if messages:  # the carrier flushes: i is visible and the interval rule has nothing to do
                token = (DATA, i, values[j], messages) if pushed else (DUMMY, i, None, messages)
                pending.append((_push_flush, link, token))
                continue
            if pushed:
                pending.append((_push_data, link, i, values[j]))
            if link.interval is not None:
                pending.append((_interval, link, i, pushed))

    def _emit_end(self, messages) -> None:
        """EOS on every output, carrying the messages owed."""
        for link in self.outputs:
            self.pending.append((_push_flush, link, (EOS, INF, None, messages)))


class PropagationNode(InbandNode):
    """A node running 002 Alg. 2 (Propagation) with dummies confined to biconnected components."""

    __slots__ = ()

    def _emit(self, i, values, emits, messages, flags) -> None:
        pending = self.pending
        for j, link in enumerate(self.outputs):
            interval = link.interval
            dummy = (interval is not None and i - link.last_output >= interval) or (
                flags is not None and link.bicomp in flags)
            if emits is not None and emits[j]:
                if dummy:
                    link.last_output = i
                if dummy or messages:
                    token = (FLAGGED if dummy else DATA, i, values[j], messages)
                    pending.append((_push_flush, link, token))
                else:
                    pending.append((_push_data, link, i, values[j]))
            elif dummy or messages:  # a dummy scheduled, or forced to carry the messages
                link.last_output = i
                pending.append((_push_flush, link, (DUMMY, i, None, messages)))

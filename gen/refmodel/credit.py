"""Credit mode: paired data and control channels with credits, heartbeats and dummies (000 Alg. 1, 2, 4).

Receiver (000 Alg. 4, per input edge in spec order): while ``RCB = 0``, look at the head control
message: credits are detached into ``RCB`` (the message stays, with 0 credits); a 0-credit credit
message is popped; a dummy or EOS stops the loop and stands for its index. A 0-credit user message
stands for its index (the computation it follows) like a dummy while that is above the node's last
computation, and arrives with the computation at it; otherwise it is delivered and popped at once
(docs/semantics.md: 000 pops every one at once, which the hardware's join does not). With ``RCB > 0``
the edge offers its head data token. A token pushed with user messages (``follows``, the RTL token's
``msg`` bit) takes them with it: they arrive with the computation that consumes it.

Live credit (``network.live_credit``, the default; docs/hardware.md): every token is credited as it is
pushed, by the counters beside the FIFOs of :mod:`sfdf.hdl.counter` rather than by credit messages. The
sender pushes no credit messages (``T`` has no effect) and no output buffer hides a token; a user
message, a dummy or EOS carries the credits of the tokens pushed since the previous message (its
*stamp*), and ``LastRecvIdx`` is the last token's or dummy's index. The receiver: with ``RCB = 0`` and
no control message in flight, the data channel holds exactly the sender's ``SCB - borrowed``
uncredited tokens, and nothing can precede them: the visible head is offered at once, taking it is
``borrowed += 1``, and the next message's credits are detached as ``credits - borrowed``. A dummy takes
no control slot: it waits in the heartbeat register, which the next token or message pushed clears
(:meth:`.channels.ControlChannel.clear_dummy`), as the RTL's does; so a dummy is never followed by a
token, and a token behind a control message is credited by it. The RTL
(:class:`sfdf.hdl.counter.CounterReceiver`) takes the same tokens in the same order.

Sender without live credit, after computing ``i``, per output edge in spec order (docs/semantics.md,
000 Alg. 4 with the erratum of the printed ``while`` loop, which never ends when ``i`` was filtered with
``SCB > 0``)::

    if a data token is emitted:      push it; SCB += 1; LastSentIdx = i
    for each user control message:   push it carrying SCB credits (flush OB); SCB = 0; LastRecvIdx = LastSentIdx
    if SCB > T or i - LastRecvIdx > [e]:
        if SCB > 0:                  push a credit message (flush OB); SCB = 0; LastRecvIdx = LastSentIdx
        if i - LastRecvIdx > [e]:    push dummy(i); LastRecvIdx = i

User messages the kernel's barrier releases go out after the computation they arrive with, or at once
(before the next computation, stamped with the last one's index) when they are delivered at once. At EOS the sender pushes the messages it owes, its remaining credits, then an EOS message.
"""

from __future__ import annotations

from .channels import DATA, INF, MSG_CREDIT, MSG_EOS, MSG_USER
from .node import (
    BLOCKED,
    DONE,
    KEEP,
    NOOP,
    WAIT_CONTROL_EMPTY,
    WAIT_CONTROL_FULL,
    WAIT_DATA_EMPTY,
    WAIT_DATA_FULL,
    WAIT_HIDDEN,
    NodeSim,
)

__all__ = ["CreditNode"]


def _push_data(node, action) -> int:
    """``(_push_data, link, i, payload, follows)``: a data token; ``SCB += 1``, ``LastSentIdx = i``. The token's
    last field is ``follows``: user messages follow it in its computation (the RTL token's ``msg`` bit)."""
    link = action[1]
    q = link.data
    if len(q.queue) >= q.capacity:
        return node.block(link, WAIT_DATA_FULL)
    if node.live_credit:  # every token is visible and credited at once: no output buffer
        link.scb += link.control.clear_dummy()
        link.push_flush((DATA, action[2], action[3], action[4]))
        link.last_recv = action[2]
    else:
        link.push((DATA, action[2], action[3], action[4]))
    link.scb += 1
    link.last_sent = action[2]
    link.data_tokens += 1
    return DONE


def _push_credits(node, link, kind: int, value, index=None) -> int:
    """Flush the output buffer and push a message carrying all of ``SCB`` (000 Alg. 2); a user message
    also carries its ``index``, the computation it follows."""
    ctl = link.control
    if ctl.full:
        return node.block(link, WAIT_CONTROL_FULL)
    link.scb += ctl.clear_dummy()
    link.flush()
    ctl.queue.append([kind, link.scb, value] if index is None else [kind, link.scb, value, index])
    link.scb = 0
    if not node.live_credit:
        link.last_recv = link.last_sent
    link.wake_dst()
    return DONE


def _push_user(node, action) -> int:
    """``(_push_user, link, message, i)``: a user control message after computation ``i``, with the
    pending credits."""
    link = action[1]
    result = _push_credits(node, link, MSG_USER, action[2], action[3])
    if result == DONE:
        link.control_messages += 1
    return result


def _beat(node, action) -> int:
    """``(_beat, link, i)``: the threshold and heartbeat rule; one message per run."""
    link, i = action[1], action[2]
    interval = link.interval
    late = interval is not None and i - link.last_recv > interval
    if node.live_credit:  # no credit messages: the dummy carries the credits of the tokens before it
        if not late:
            return NOOP
        pushed = link.control.push_dummy(i, link.scb)
        if not pushed:
            return node.block(link, WAIT_CONTROL_FULL)
        link.scb = 0
    elif link.scb > link.threshold or (late and link.scb):
        result = _push_credits(node, link, MSG_CREDIT, None)
        if result == BLOCKED:
            return BLOCKED
        link.credits += 1
        return KEEP  # LastRecvIdx moved: a dummy may still be due
    else:
        if not late:
            return NOOP
        pushed = link.control.push_dummy(i)
        if not pushed:
            return node.block(link, WAIT_CONTROL_FULL)
    link.flush()
    if pushed == 2:
        link.coalesced += 1
    else:
        link.dummies += 1
    link.last_recv = i
    link.wake_dst()
    return DONE


def _push_eos(node, action) -> int:
    """``(_push_eos, link)``: the remaining credits, then EOS."""
    link = action[1]
    if link.scb and not node.live_credit:  # with live credit EOS carries them
        result = _push_credits(node, link, MSG_CREDIT, None)
        if result == BLOCKED:
            return BLOCKED
        link.credits += 1
        return KEEP
    return _push_credits(node, link, MSG_EOS, INF)


def _live(link) -> bool:
    """Live credit: with ``RCB = 0``, may the data head be taken before its credit arrives?

    Only when no control message is in flight and a token is visible: then every token in ``q`` is
    one of the sender's uncredited ``SCB - borrowed`` (see the module docstring).
    """
    q = link.data
    return not link.control.queue and len(q.queue) > q.hidden


class CreditNode(NodeSim):
    """A node running 000 Alg. 4 on every input and output edge (with live credit if the network says)."""

    __slots__ = ("live_credit",)

    def __init__(self, *args, live_credit: bool = True, **kwargs):
        super().__init__(*args, **kwargs)
        self.live_credit = live_credit

    def _receive(self) -> bool:
        inputs = self.inputs
        offers = self.offers
        live = self.live_credit
        for k, link in enumerate(inputs):
            while not link.rcb:
                ctl = link.control.queue
                if live and _live(link):
                    head = link.data.queue[0]
                    if head[3]:  # its messages are the sender's next pushes: the token waits to come with them
                        return self.block(link, WAIT_CONTROL_EMPTY)
                    offer = head[1]
                    break
                if not ctl:
                    return self.block(link, WAIT_CONTROL_EMPTY)
                message = ctl[0]
                if message[1]:
                    link.rcb = message[1] - link.borrowed
                    link.borrowed = 0
                    message[1] = 0
                elif message[0] == MSG_USER:
                    if message[3] > self.position:  # it stands for its index, like a dummy, and
                        offer = message[3]          # arrives with that computation (as in the RTL)
                        break
                    ctl.popleft()                   # it follows a computation done: forwarded at once
                    link.wake_src()
                    self._deliver(k, message[2])
                    if self.pending:
                        return True
                elif message[0] == MSG_CREDIT:
                    ctl.popleft()
                    link.wake_src()
                else:  # a dummy or EOS stands for its index
                    offer = message[2]
                    break
            else:
                q = link.data
                if len(q.queue) == q.hidden:
                    return self.block(link, WAIT_HIDDEN if q.hidden else WAIT_DATA_EMPTY)
                offer = q.queue[0][1]
            offers[k] = offer
        i = min(offers)
        if self.watermark is not None and len(offers) > 1:
            self.watermark.compared([o for o in offers if o != INF])
        if i == INF:
            for link in inputs:
                link.control.queue.popleft()
                link.wake_src()
            self._end(None)
            return True
        values = [None] * len(inputs)
        present = False
        arrived = None
        for k, link in enumerate(inputs):
            if offers[k] == i:
                if link.rcb or live and _live(link):  # the data token, on credit or on live credit
                    token = link.data.queue.popleft()
                    values[k] = token[2]
                    present = True
                    if link.rcb:
                        link.rcb -= 1
                    else:
                        link.borrowed += 1
                    if token[3]:  # the messages sent with it arrive with the computation, as in the RTL
                        arrived = self._with_token(k, link, i, arrived)
                else:
                    message = link.control.queue.popleft()  # the dummy or the user message with index i
                    if message[0] == MSG_USER:
                        arrived = [*(arrived or ()), (k, (message[2],))]
                link.wake_src()
        self._compute(i, present, values, None, arrived)
        return True

    def _emit(self, i, values, emits, messages, flags) -> None:
        pending = self.pending
        for j, link in enumerate(self.outputs):
            if emits is not None and emits[j]:
                pending.append((_push_data, link, i, values[j], bool(messages)))
            for message in messages:
                pending.append((_push_user, link, message, i))
            pending.append((_beat, link, i))

    def _emit_end(self, messages) -> None:
        """The messages owed on every output, then on each its remaining credits and EOS."""
        pending = self.pending
        for message in messages:
            for link in self.outputs:
                pending.append((_push_user, link, message, self.position))
        for link in self.outputs:
            pending.append((_push_eos, link))

    def _with_token(self, k: int, link, i: int, arrived):
        """The user messages that follow the token of index ``i`` just taken from input ``k`` (its credits
        were theirs: they head the control channel), taken with the computation: ``arrived`` extended."""
        ctl = link.control.queue
        messages = []
        while ctl and ctl[0][0] == MSG_USER and ctl[0][1] == 0 and ctl[0][3] == i:
            messages.append(ctl.popleft()[2])
            link.wake_src()
        return [*(arrived or ()), (k, tuple(messages))]

    def _deliver(self, port: int, message) -> None:
        """A user message reached the head of input ``port``: forward what the kernel releases now."""
        forwarded = self.kernel.control(port, message)
        if forwarded and self.kernel.messages:  # it follows no computation of this node's: no result rides on it
            self._no_result(forwarded)
        if self.log is not None:
            self.log.extend(("control", m) for m in forwarded)
        for m in forwarded:
            for link in self.outputs:
                self.pending.append((_push_user, link, m, self.position))

"""Teleport messages (004 Sec. "Semantics of Messaging"): direction, delivery by SDEP, and the
schedule constraints they impose.

004 Def. (Message delivery), followed exactly. ``S`` sends a message at its ``n``-th firing with
latency ``k``:

* to a *downstream* receiver ``R`` (a directed path runs from ``S`` to ``R``): the handler runs
  immediately **before** ``R``'s ``m``-th firing, ``m = min m' s.t. SDEP_{S<-R}(m') >= n + k``;
* to an *upstream* receiver (a path from ``R`` to ``S``): immediately **after** ``R``'s ``m``-th firing,
  ``m = SDEP_{R<-S}(n + k)``.

On a feedback loop both paths exist; 004's footnote then takes the message as upstream. Receivers
with no path either way (parallel actors) are refused, as 004 supports messages only "wherever there
is a directed path". An upstream message with negative latency is refused too: 004 shows some
iteration of the sender can never deliver it. ``m' >= 1`` in the downstream rule (erratum: 004 writes
``min m'`` over all ``m'``, and ``SDEP(0) = 0`` would give ``m = 0``, "before the 0th firing", for
a message sent in the first ``-k`` firings with negative ``k``; 004 says those messages wait until the
buffers are established, which is before the receiver's first firing: ``m = 1``).

A latency range ``[min, max]`` lets the message land anywhere between the two points (004): a schedule
exists when no receiver need pass a ``max`` point before the message is sent (004 "Constraints on the
Schedule", what ``sfdf schedule`` decides). The model delivers it at the ``min`` point, the receiver
waiting there for the message, so that every execution delivers it at the same firing (``held`` in
:meth:`Deliveries.required_sends`; :mod:`sfdf.gen.sdf.model`).
"""

from __future__ import annotations

from dataclasses import dataclass
from functools import cached_property

import networkx as nx

from .rates import SDFError
from .sdep import SDEPTable

__all__ = ["Deliveries", "Route", "routes"]

DOWNSTREAM, UPSTREAM = "downstream", "upstream"


@dataclass(frozen=True)
class Route:
    """One sender-receiver pair of a ``[[message]]`` (a portal has one route per receiver)."""

    message: int  # index of the [[message]] in the spec
    sender: str
    receiver: str
    direction: str  # "downstream" or "upstream"
    latency: tuple[int, int]

    def describe(self) -> str:
        low, high = self.latency
        k = str(low) if low == high else f"[{low}, {high}]"
        return f"message[{self.message}] {self.sender} -> {self.receiver} ({self.direction}, latency {k})"


def routes(network) -> list[Route]:
    """Every route of every message, with its direction; :class:`SDFError` names a message between
    parallel actors, an upstream message with negative latency, or a latency range the wrong way round."""
    graph = nx.MultiDiGraph((e.src, e.dst) for e in network.edges)
    graph.add_nodes_from(n.name for n in network.nodes)
    result = []
    for index, message in enumerate(network.messages):
        low, high = message.latency
        if low > high:
            raise SDFError(f"[{low}, {high}] has min above max", "write [min, max]", ("message", index, "latency"))
        for receiver in message.receivers:
            if receiver == message.sender:
                raise SDFError(f"{receiver} sends to itself", "name another node", ("message", index, "to"))
            up = nx.has_path(graph, receiver, message.sender)
            down = nx.has_path(graph, message.sender, receiver)
            if not (up or down):
                raise SDFError(f"{message.sender} and {receiver} are parallel (no directed path joins them, so "
                               "SDEP cannot time the message, 004)", "send it along a path", ("message", index, "to"))
            direction = UPSTREAM if up else DOWNSTREAM  # 004's footnote: on a feedback loop, upstream
            if direction == UPSTREAM and low < 0:
                raise SDFError(f"{receiver} is upstream of {message.sender}, and an upstream message with negative "
                               "latency cannot always be delivered (004)", "use a latency >= 0",
                               ("message", index, "latency"))
            result.append(Route(index, message.sender, receiver, direction, (low, high)))
    return result


class Deliveries:
    """Delivery points of a network's messages, from cached SDEP tables (:class:`SDEPTable`, 004 Eq. 3)."""

    def __init__(self, network):
        self.network = network
        self.routes = routes(network)
        self._tables: dict[str, SDEPTable] = {}

    def table(self, downstream: str) -> SDEPTable:
        if downstream not in self._tables:
            self._tables[downstream] = SDEPTable(self.network, downstream)
        return self._tables[downstream]

    def point(self, route: Route, n: int, k: int) -> int:
        """The receiver firing ``m`` for a message sent at the sender's ``n``-th firing with latency ``k``:
        before ``m`` (downstream) or after ``m`` (upstream)."""
        if route.direction == UPSTREAM:
            return self.table(route.sender)(route.receiver, n + k)
        return self.first_reaching(route.sender, route.receiver, n + k)

    def first_reaching(self, sender: str, receiver: str, target: int) -> int:
        """``min m >= 1`` with ``SDEP_{sender<-receiver}(m) >= target`` (SDEP is non-decreasing and
        unbounded along a path: an exponential, then a binary search)."""
        return _least(lambda m: self.table(receiver)(sender, m) >= target)

    @cached_property
    def by_receiver(self) -> dict[str, list[Route]]:
        """Routes by receiver: the messages a node must wait for."""
        by: dict[str, list[Route]] = {}
        for route in self.routes:
            by.setdefault(route.receiver, []).append(route)
        return by

    @cached_property
    def by_sender(self) -> dict[str, list[Route]]:
        """Routes by sender: the messages each of its firings sends."""
        by: dict[str, list[Route]] = {}
        for route in self.routes:
            by.setdefault(route.sender, []).append(route)
        return by

    def required_sends(self, route: Route, receiver_fired: int, *, held: bool = False) -> int:
        """Firings the sender must have completed before the receiver fires its ``receiver_fired + 1``-th
        time, so that no message is delivered late: past the latency's ``max`` point (004 "Constraints on
        the Schedule"), or with ``held`` past its ``min`` point, where the model delivers it (the receiver
        waits there for the message)."""
        k = route.latency[0 if held else 1]
        if route.direction == DOWNSTREAM:
            # delivered before firing m <= receiver_fired + 1 iff SDEP(receiver_fired + 1) >= n + k
            return max(0, self.table(route.receiver)(route.sender, receiver_fired + 1) - k)
        # upstream: delivered after firing m = SDEP_{R<-S}(n + k); every n with m <= receiver_fired must
        # be sent before the receiver's next firing
        table = self.table(route.sender)
        return _least(lambda n: table(route.receiver, n + k) > receiver_fired) - 1


def _least(holds) -> int:
    """The least ``m >= 1`` where the monotone predicate ``holds`` turns true."""
    high = 1
    while not holds(high):
        high *= 2
    low = high // 2  # holds(low) is false, or low = 0
    while high - low > 1:
        middle = (low + high) // 2
        low, high = (low, middle) if holds(middle) else (middle, high)
    return high

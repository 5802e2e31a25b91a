"""Teleport messages in hardware (004's implementation with credits, in logic): each route's target
table, the receiver's credit, and the depth of its message queue.

A message ``S -> R`` sent at ``S``'s ``n``-th firing acts on ``R``'s kernel from firing ``T(n)`` on:
``T(n) = m`` for a downstream route (handled immediately before firing ``m``), ``T(n) = m + 1`` for an
upstream one (immediately after firing ``m``), ``m`` the point of the latency's ``min``
(:meth:`sfdf.gen.sdf.messages.Deliveries.point`, 004 Def. "Message delivery"). ``T`` is non-decreasing
and, past an initialization, periodic: ``T(n + reps_S) = T(n) + reps_R`` (SDEP's own periodicity, 004
Eq. 3), so the sender steps through a table of ``init + reps_S`` targets (:class:`TargetTable`).

**Credit.** ``R`` may start its firing ``f`` only when every message that can act on it has been sent:
every ``n`` with ``T(n) <= f`` is at most the firings ``S`` has started, that is ``f < T(started_S + 1)``,
the target of ``S``'s next firing, which the sender holds in a register (the receiver's *limit*). This
is :meth:`~sfdf.gen.sdf.messages.Deliveries.required_sends` with ``held`` (the rule ``sfdf check``
proves live) in closed form; the hardware sends at a firing's start, when the SDF test kernel decides
(a stream kernel decides at its firing's end, and ``started_S`` is then its decided firings).

**Queue.** Messages wait at the receiver in a queue, merged by target (one entry per ``T``, the sum of
their ``n``: the SDF test kernel's handler adds ``n`` to its accumulator, so messages of one target act
as their sum). Its entries are the distinct targets of sent, unhandled messages: ``T(n) > started_R`` for
``n <= started_S``. :func:`queue_depths` bounds them statically: with ``started_R = f`` every channel's
capacity bounds how far its sender is ahead (its pushes claimed at start fit the room its receiver's
started firings have freed) and every channel's items how far its receiver is (its started firings
needed the items its sender's started firings wrote); relaxing these over the graph bounds
``started_S`` by ``B(f)``, and the depth is the most targets in ``(f, T(B(f))]`` over two periods past
the initializations; a sender whose kernel sends at most once in ``s`` firings (a detector with holdoff
``s - 1``, :func:`sfdf.gen.sdf.kernels.send_spacing`) sends at most ``ceil(w / s)`` of the ``w`` firings
those targets come from, which bounds them too.
"""

from __future__ import annotations

from dataclasses import dataclass

from .kernels import send_spacing
from .messages import DOWNSTREAM, Deliveries, Route
from .rates import SDFError, edge_rates, phases, repetitions

__all__ = ["TargetTable", "firing_bounds", "queue_depths", "route_tables", "target_table"]

#: A firing count no bound has reached yet (the relaxation starts every node but the receiver there).
_UNBOUNDED = 1 << 62


@dataclass(frozen=True)
class TargetTable:
    """``T(n)`` for ``n >= 1``: ``first[n - 1]`` up to ``len(first)``, then ``T(n - period) + step``."""

    first: tuple[int, ...]
    period: int
    step: int

    def __call__(self, n: int) -> int:
        if n < 1:
            raise ValueError(f"firings count from 1, not {n}")
        if n <= len(self.first):
            return self.first[n - 1]
        laps = -(-(n - len(self.first)) // self.period)  # whole periods back into the table
        return self.first[n - 1 - laps * self.period] + laps * self.step

    @property
    def wrap(self) -> int:
        """The table index (from 0) the sender returns to after its last entry, adding ``step``."""
        return len(self.first) - self.period


def target_table(deliveries: Deliveries, route: Route) -> TargetTable:
    """The route's :class:`TargetTable`: ``T`` tabulated until it repeats with the repetitions (checked over
    four more periods)."""
    reps = repetitions(deliveries.network)
    period, step = reps[route.sender], reps[route.receiver]
    after = 0 if route.direction == DOWNSTREAM else 1

    def target(n: int) -> int:
        return deliveries.point(route, n, route.latency[0]) + after

    values = [target(n) for n in range(1, 8 * period + 65)]
    for init in range(len(values) - 4 * period):
        if all(values[n + period] == values[n] + step for n in range(init, len(values) - period)):
            return TargetTable(tuple(values[: init + period]), period, step)
    raise SDFError(f"the targets of {route.describe()} do not repeat with the repetitions", "report it as a bug")


def route_tables(network) -> list[tuple[Route, TargetTable]]:
    """Every route of ``network``'s messages with its :class:`TargetTable` (capacities change none: SDEP is
    capacity-free)."""
    deliveries = Deliveries(network)
    return [(route, target_table(deliveries, route)) for route in deliveries.routes]


def _cumulative(rates: tuple[int, ...], firings: int) -> int:
    """Items of the first ``firings`` firings of a phased rate."""
    laps, rest = divmod(firings, len(rates))
    return laps * sum(rates) + sum(rates[:rest])


def _need(pop: tuple[int, ...], peek: tuple[int, ...], g: int) -> int:
    """The most items any of the first ``g`` firings of a receiver needed on the edge to start: firing ``j``
    needs its peek on top of the ``j - 1`` firings' pops; a lap later it needs ``sum(pop)`` more, so the
    most is among the first and the last lap's firings."""
    laps = len(peek)
    firings = sorted({*range(1, min(g, laps) + 1), *range(max(1, g - laps + 1), g + 1)})
    return max((_cumulative(pop, j - 1) + peek[(j - 1) % laps] for j in firings), default=0)


def _most_firings(fits, high: int) -> int:
    """The most firings ``g`` in ``[0, high]`` with ``fits(g)`` (``fits`` true at 0 and monotone): doubling,
    then bisection."""
    low, probe = 0, 1
    while probe <= high and fits(probe):
        low, probe = probe, 2 * probe
    high = min(high, probe - 1)
    while low < high:
        middle = (low + high + 1) // 2
        low, high = (middle, high) if fits(middle) else (low, middle - 1)
    return low


def firing_bounds(network, receiver: str, started: int, *, passes: int | None = None) -> dict[str, int]:
    """Upper bounds on the firings every node has started while ``receiver`` has started ``started`` (see
    the module docstring): the channels' room and items relaxed over the graph from ``receiver``,
    ``passes`` times over every edge at most (each pass is sound, so stopping early only loosens them)."""
    count = phases(network)
    rates = {e.name: edge_rates(e, count) for e in network.edges}
    bound = {n.name: _UNBOUNDED for n in network.nodes} | {receiver: started}
    for _ in range(passes or 4 * len(network.edges) + 4):
        changed = False
        for e in network.edges:
            push, pop, peek = rates[e.name]
            a, b = e.src, e.dst
            if a != receiver and bound[b] < _UNBOUNDED:
                # room: the sender's started pushes fit the capacity and what the receiver's started firings popped
                room = e.capacity - e.initial + _cumulative(pop, bound[b])
                most = _most_firings(lambda g, push=push, room=room: _cumulative(push, g) <= room, bound[a])
                if most < bound[a]:
                    bound[a], changed = most, True
            if b != receiver and bound[a] < _UNBOUNDED:
                # items: each started firing of the receiver found its peek among what the sender's started firings wrote
                have = e.initial + _cumulative(push, bound[a])
                fed = _most_firings(lambda g, pop=pop, peek=peek, have=have: _need(pop, peek, g) <= have, bound[b])
                if fed < bound[b]:
                    bound[b], changed = fed, True
        if not changed:
            break
    return bound


def queue_depths(network, deliveries: Deliveries | None = None) -> dict[Route, int]:
    """The most entries each route's message queue can hold (see the module docstring), at least 1: the
    most distinct targets above ``f`` among ``T(1..B(f))``, over ``f`` until the count has repeated with
    the receiver's repetitions for a whole period."""
    deliveries = deliveries or Deliveries(network)
    reps = repetitions(network)
    tables = {route: target_table(deliveries, route) for route in deliveries.routes}
    spacing = {n.name: send_spacing(n) for n in network.nodes}
    depths = {}
    for receiver, routes in deliveries.by_receiver.items():
        period = reps[receiver]
        counts = {route: [] for route in routes}
        f = 0
        while True:
            bound = firing_bounds(network, receiver, f)
            for route in routes:
                sent = bound[route.sender]
                if sent >= _UNBOUNDED:
                    raise SDFError(f"nothing bounds {route.sender}'s firings against {receiver}'s", "report it as a bug")
                counts[route].append(_pending_targets(tables[route], sent, f, spacing[route.sender]))
            f += 1
            # the counts of the last period repeat the one before, after every table's initialization
            if f >= 3 * period + max(tables[r](len(tables[r].first)) for r in routes) and all(
                    c[-period:] == c[-2 * period:-period] for c in counts.values()):
                break
            if f > 64 * period + 4096:
                raise SDFError(f"the message queues of {receiver} do not settle", "report it as a bug")
        depths |= {route: max(1, *counts[route]) for route in routes}
    return depths


def _pending_targets(table: TargetTable, sent: int, started: int, spacing: int = 1) -> int:
    """The distinct targets above ``started`` among ``T(1..sent)`` (``T`` is non-decreasing: the last ones),
    or the messages a sender that sends once in ``spacing`` firings can send from those firings if fewer."""
    targets = set()
    n = sent
    while n >= 1 and (t := table(n)) > started:
        targets.add(t)
        n -= 1
    return min(len(targets), -(-(sent - n) // spacing))

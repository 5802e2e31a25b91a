"""Dummy intervals for in-band deadlock avoidance: Naive, Propagation, Non-Propagation (002 Sec. 3).

Every function maps each edge name to its dummy interval ``[q]``: a positive integer, or ``None``
for infinite (the channel never needs a dummy). ``|p|`` is the sum of the capacities on a directed
path ``p``. The printed pseudocode of 002 has errors; the proofs of Thm. 3.2 and 3.3 win (see
seeds/README.md errata 1 and 2).
"""

from __future__ import annotations

import heapq
import itertools
import math
from collections import defaultdict, deque

from sfdf.gen.analysis.cycles import CycleStructure, DirectedPath, cycle_structure, sender_paths
from sfdf.gen.analysis.heartbeat import max_hidden_amounts
from sfdf.gen.model import Edge, Network

__all__ = [
    "naive_intervals",
    "nonpropagation_intervals",
    "potential_intervals",
    "propagation_intervals",
    "propagation_intervals_enumerating",
]

Intervals = dict[str, int | None]


def _infinite(network: Network) -> Intervals:
    return {e.name: None for e in network.edges}


def _tighten(intervals: Intervals, edge: str, bound: int) -> None:
    """``[edge] <- min([edge], bound)`` with ``None`` as infinity."""
    current = intervals[edge]
    if current is None or bound < current:
        intervals[edge] = bound


def _bound_path(intervals: Intervals, path: DirectedPath, bound: int) -> None:
    """``[q] <- min([q], bound)`` for every channel ``q`` on ``path``."""
    for name in path.edges:
        _tighten(intervals, name, bound)


def _length(network: Network, path: DirectedPath) -> int:
    """``|p|``: total capacity of the channels on ``path``."""
    edge_by_name = network.edge_by_name
    return sum(edge_by_name[name].capacity for name in path.edges)


def naive_intervals(network: Network) -> Intervals:
    """Interval 1 on every channel: each computation emits a data token or a dummy (002 Sec. 3.1).

    With no filtering left, the Filtering Theorem (002 Thm. 3.1) rules out deadlock.
    """
    return {e.name: 1 for e in network.edges}


def propagation_intervals_enumerating(network: Network, *, cycles: CycleStructure | None = None) -> Intervals:
    """Propagation intervals by cycle enumeration (002, Alg. 3, corrected: see seeds/README.md erratum 1).

    For every undirected cycle and every sender ``u`` on it, with maximal directed paths ``p1`` and
    ``p2`` leaving ``u`` on the cycle, the *first* channel of each path is bounded by the buffer
    total of the *other* path: ``[first(p1)] <= |p2|`` and ``[first(p2)] <= |p1|``. Then ``u`` cannot
    fill ``p2`` without sending a dummy down ``p1`` (the key observation in the proof of Thm. 3.2).
    The printed ``[uv1] <- min(|p1|, [uv1])`` bounds a channel by its own path and can deadlock.

    Exponential time: the reference for :func:`propagation_intervals`. Edges that are not the first
    channel of a maximal path on some cycle get ``None``. ``cycles``: the network's
    :class:`~sfdf.gen.analysis.cycles.CycleStructure`, when the caller has it.
    """
    intervals = _infinite(network)
    for _, paths in cycle_structure(network, cycles).cycles():
        for _, p1, p2 in sender_paths(paths):
            _tighten(intervals, p1.edges[0], _length(network, p2))
            _tighten(intervals, p2.edges[0], _length(network, p1))
    return intervals


def _components(network: Network, cycles: CycleStructure) -> list[list[Edge]]:
    """The edges of each biconnected component (002 Sec. 3.2), in spec order."""
    members: dict[int, list[Edge]] = defaultdict(list)
    component_of = cycles.components
    for e in network.edges:
        members[component_of[e.name]].append(e)
    return list(members.values())


class _Component:
    """One biconnected component's adjacency, for the path search of 002 Alg. 4."""

    def __init__(self, edges: list[Edge]):
        self.out_edges: dict[str, list[Edge]] = {}
        self.in_edges: dict[str, list[Edge]] = {}
        for e in edges:
            self.out_edges.setdefault(e.src, []).append(e)
            self.in_edges.setdefault(e.dst, []).append(e)

    def outs(self, node: str) -> list[Edge]:
        return self.out_edges.get(node, [])

    def ins(self, node: str) -> list[Edge]:
        return self.in_edges.get(node, [])

    def neighbours(self, node: str):
        yield from (e.dst for e in self.outs(node))
        yield from (e.src for e in self.ins(node))

    def reaches(self, x: str, removed: set[str], wanted: set[str]) -> set[str]:
        """Which of ``wanted`` the vertex ``x`` reaches in ``G*`` (002 Alg. 4, lines 292-295).

        ``G*`` is the component, undirected, without the vertices in ``removed`` and without the
        out-edges of ``x``; ``x`` reaches itself. A path from ``x`` leaves it by an in-edge and never
        comes back, so the search starts at the in-neighbours of ``x`` with ``x`` blocked. Each target
        is met by a bidirectional search that shares the forward side with the other targets.
        """
        blocked = removed | {x}
        source = _Search(self, [e.src for e in self.ins(x) if e.src not in blocked], blocked)
        return {w for w in sorted(wanted) if w == x or (w not in blocked and source.meets(w))}


class _Search:
    """A resumable breadth-first search of ``G*`` (the component, undirected, minus ``blocked``)."""

    def __init__(self, component: _Component, starts: list[str], blocked: set[str]):
        self.component = component
        self.blocked = blocked
        self.frontier = deque(dict.fromkeys(starts))
        self.seen = set(self.frontier)

    def step(self, other: set[str]) -> bool:
        """Expand one vertex; whether it reached a vertex of ``other``."""
        node = self.frontier.popleft()
        met = False
        for n in self.component.neighbours(node):
            if n not in self.seen and n not in self.blocked:
                self.seen.add(n)
                self.frontier.append(n)
                met = met or n in other
        return met

    def meets(self, target: str) -> bool:
        """Whether ``target`` is connected to the search's start, growing the smaller side first."""
        if target in self.seen:
            return True
        back = _Search(self.component, [target], self.blocked)
        while self.frontier and back.frontier:
            if self.step(back.seen) if len(self.frontier) <= len(back.frontier) else back.step(self.seen):
                return True
        return False


def _bound_siblings(component: _Component, first: Edge, siblings: list[Edge], intervals: Intervals) -> None:
    """Bound every sibling ``uw`` of ``first = uv1`` by the lightest ``p1`` closing a cycle with it.

    Directed paths ``p1`` that start with ``uv1`` are explored lightest first (002 Sec. 3.2.1 asks for
    increasing length), so the first ``p1`` found for a sibling is its bound, and a sibling whose
    interval is already at most ``|p1|`` (from an earlier ``uv1``) needs no more paths.
    """
    tie = itertools.count()
    heap = [(first.capacity, next(tie), (first.src, first.dst))]
    while heap:
        weight, _, nodes = heapq.heappop(heap)
        open_ = [w for w in siblings if intervals[w.name] is None or intervals[w.name] > weight]
        if not open_:
            return
        x = nodes[-1]
        reached = component.reaches(x, set(nodes[:-1]), {w.dst for w in open_})
        for w in open_:
            if w.dst in reached:
                intervals[w.name] = weight
        for e in component.outs(x):
            heapq.heappush(heap, (weight + e.capacity, next(tie), nodes + (e.dst,)))


def propagation_intervals(network: Network, *, cycles: CycleStructure | None = None) -> Intervals:
    """Propagation intervals without cycle enumeration (002, Alg. 4, corrected: see seeds/README.md erratum 1).

    For each node ``u`` and each out-edge ``uv1``, directed paths ``p1`` starting with ``uv1`` are
    enumerated inside ``uv1``'s biconnected component ``G0``, lightest first. With ``x`` the end of
    ``p1``, ``G*`` is ``G0`` undirected, minus the vertices of ``p1`` other than ``x``, minus the
    out-edges of ``x``. If the head ``w`` of *another* out-edge ``uw`` of ``u`` in ``G0`` is reachable
    from ``x`` in ``G*``, some simple cycle has ``u`` as a sender with maximal paths ``p1`` and one
    starting with ``uw``, so ``[uw] <- min([uw], |p1|)`` (printed: ``[uv1] <- min([uv1], |p1|)``,
    the same error as Alg. 3).

    "Another out-edge", not "another child" as Sec. 3.2.1 words it: ``w == x`` counts (the cycle
    is ``p1`` closed by ``uw`` straight into ``x``; two parallel edges are the case ``p1 = uv1``),
    while the head of ``uv1`` itself must not count, or every ``uv1`` would be bounded by its own
    capacity. Read as "a child other than ``v1``", parallel channels stay unbounded and can deadlock
    (a further erratum; tests/test_gen_analysis_dummies.py shows it).

    Equal to :func:`propagation_intervals_enumerating` on every network; directed paths may still
    be exponentially many, but the search stops as soon as every sibling is bounded. ``cycles``: the
    network's :class:`~sfdf.gen.analysis.cycles.CycleStructure`, when the caller has it.
    """
    intervals = _infinite(network)
    for edges in _components(network, cycle_structure(network, cycles)):
        component = _Component(edges)
        for outs in component.out_edges.values():
            if len(outs) < 2:
                continue
            for first in outs:
                siblings = [w for w in outs if w is not first]
                _bound_siblings(component, first, siblings, intervals)
    return intervals


def nonpropagation_intervals(network: Network, *, cycles: CycleStructure | None = None) -> Intervals:
    """Non-Propagation intervals (002, Alg. 6, corrected: see seeds/README.md erratum 2).

    For every undirected cycle and every sender on it, with maximal directed paths ``p1`` (``m``
    channels) and ``p2`` (``n`` channels): every channel on ``p1`` gets at most ``ceil(|p2| / m)``
    and every channel on ``p2`` at most ``ceil(|p1| / n)``. Then ``sum([q] - 1)`` over a path is less
    than the buffer total of its sibling path, which is what the proof of Thm. 3.3 needs. The
    printed algorithm bounds ``uw1`` twice, never ``uv1``, and divides ``|p1|`` by ``m`` on ``p2``.

    Cycles are enumerated (exponential, as in the paper; networkx searches one biconnected component
    at a time); every edge on no cycle gets ``None``. ``cycles``: the network's
    :class:`~sfdf.gen.analysis.cycles.CycleStructure`, when the caller has it.
    """
    intervals = _infinite(network)
    for _, paths in cycle_structure(network, cycles).cycles():
        for _, p1, p2 in sender_paths(paths):
            _bound_path(intervals, p1, math.ceil(_length(network, p2) / len(p1.edges)))
            _bound_path(intervals, p2, math.ceil(_length(network, p1) / len(p2.edges)))
    return intervals


def potential_intervals(network: Network, *, cycles: CycleStructure | None = None,
                        fixed: Intervals | None = None) -> Intervals:
    """In-band dummy intervals in polynomial time, by the potential LP of the heartbeats
    (:func:`sfdf.gen.analysis.heartbeat.max_hidden_amounts`).

    The proof of 002 Thm. 3.3, summed around a blocking cycle, needs ``sum_B ([q] - 1) < sum_F |q|``
    over its blockwise (empty) channels B and counterblockwise (full) channels F (docs/semantics.md,
    "What `sfdf check` proves"): the mirror graph with forward weight ``|q|`` and mirror weight
    ``-([q] - 1)`` has no non-positive cycle. With ``h = [q] - 1`` capped at ``|q| - 1`` that is the
    heartbeat LP's feasibility, so the LP's optimum, floored, gives integer intervals of a large total
    (at most the best capped total, often equal), certified by the LP's potentials or Bellman-Ford, in one
    pass over the edges on cycles (no cycle enumeration). Safe for
    Non-Propagation and for Propagation, whose proof (Thm. 3.2) counts only each empty path's first
    channel, a sum no larger. Edges on no undirected cycle get ``None``. ``fixed``: intervals the user
    set (kept; ``None`` is an infinite interval); if they leave nothing feasible the free edges get 1 and
    the check reports the cycle.
    """
    cycles = cycle_structure(network, cycles)
    fixed = dict(fixed or {})
    big = sum(e.capacity for e in network.edges) + 1  # an infinite interval breaks every cycle through it
    on = set(cycles.on_cycles)
    upper = {e.name: e.capacity - 1 for e in network.edges}
    held = {name: (big if iv is None else max(iv - 1, 0)) for name, iv in fixed.items() if name in on}
    upper.update(held)
    amounts = max_hidden_amounts(network, upper, on, held)
    result: Intervals = {e.name: None for e in network.edges}
    if amounts is None:
        amounts = {name: 0 for name in on if name not in held}
    result.update({name: h + 1 for name, h in amounts.items() if name not in held})
    result.update(fixed)
    return result

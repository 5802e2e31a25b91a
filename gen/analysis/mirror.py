"""Mirror graphs and their non-positive cycles: the polynomial form of the papers' cycle constraints.

003 Sec. 4.2 (Def. 4.2, Claim 4.3) turns "for every undirected cycle C, the buffers one way round
exceed the hidden amount the other way round" into "the mirror graph has no cycle of non-positive
weight": every edge ``u -> v`` gives a forward arc of weight ``|q|`` and a mirror arc ``v -> u`` of
weight ``-h(e)`` (``h`` is the heartbeat ``[e]`` for 000 (3)-(4), ``|q|'_o`` for 003 (2)-(3), or
``[q] - 1`` for 002 Non-Propagation). A simple directed cycle of the mirror graph is either an
undirected cycle of the network traversed one way round, or the 2-cycle of one edge (``|q| > h(e)``,
000 (5) / 003 (5)); any closed walk splits into simple cycles, so the check is exact whenever every
edge satisfies its 2-cycle constraint.

Integer weights ``w`` become strictly negative-cycle problems by the scaling ``W = (k + 1) w - 1`` for a
graph of ``k`` vertices: a simple cycle of ``j <= k`` arcs has ``W < 0`` iff ``w <= 0``. The paper's
Alg. 1 runs Floyd-Warshall in O(N^3) (and compares the wrong way, erratum 3); here one Bellman-Ford
from a virtual source (scipy's compiled one) answers, and a short SPFA recovers the cycle only when
there is one.
"""

from __future__ import annotations

from collections import deque
from collections.abc import Hashable, Iterable, Sequence
from dataclasses import dataclass

import numpy as np
from scipy.sparse import csr_matrix
from scipy.sparse.csgraph import NegativeCycleError, bellman_ford

__all__ = ["Arc", "find_nonpositive_cycle", "mirror_arcs", "offer_potentials", "potentials"]

#: Recent candidate potentials (scaled, as :func:`potentials` returns them), keyed by vertex set.
#: They are only hints: :func:`find_nonpositive_cycle` verifies a hint on every arc before using it.
_HINTS: dict[frozenset, dict] = {}


@dataclass(frozen=True)
class Arc:
    """A weighted arc of a mirror graph; ``edge`` names the network edge, ``mirror`` its direction."""

    tail: Hashable
    head: Hashable
    weight: int
    edge: str
    mirror: bool


def mirror_arcs(network, hidden, edges: Iterable[str] | None = None) -> list[Arc]:
    """The arcs of the mirror graph of ``network`` (003 Def. 4.2).

    Parameters
    ----------
    network : gen.model.Network
    hidden : Mapping[str, int]
        ``h(e)``: the mirror arc of edge ``e`` weighs ``-h(e)``.
    edges : iterable of str, optional
        Restrict to these edges (for example the edges on undirected cycles).
    """
    keep = None if edges is None else set(edges)
    arcs = []
    for e in network.edges:
        if keep is not None and e.name not in keep:
            continue
        arcs.append(Arc(e.src, e.dst, e.capacity, e.name, False))
        arcs.append(Arc(e.dst, e.src, -hidden[e.name], e.name, True))
    return arcs


def _index(arcs: Sequence[Arc]):
    vertices = sorted({a.tail for a in arcs} | {a.head for a in arcs}, key=repr)
    return {v: i for i, v in enumerate(vertices)}, vertices


def _scaled_matrix(arcs, index):
    """CSR matrix of scaled weights plus a virtual source (last row) with arcs of weight 1.

    Parallel arcs keep their minimum (a CSR built from duplicates would add them up).
    """
    k = len(index)
    tail = np.fromiter((index[a.tail] for a in arcs), dtype=np.int64, count=len(arcs))
    head = np.fromiter((index[a.head] for a in arcs), dtype=np.int64, count=len(arcs))
    # (k + 1) w - 1 is never 0, so no arc is lost as an explicit zero
    weight = np.fromiter((a.weight for a in arcs), dtype=np.int64, count=len(arcs)) * (k + 1) - 1
    order = np.lexsort((weight, head, tail))
    tail, head, weight = tail[order], head[order], weight[order]
    first = np.ones(len(arcs), dtype=bool)
    first[1:] = (tail[1:] != tail[:-1]) | (head[1:] != head[:-1])
    rows = np.concatenate([tail[first], np.full(k, k)])
    cols = np.concatenate([head[first], np.arange(k)])
    data = np.concatenate([weight[first], np.ones(k, dtype=np.int64)]).astype(float)
    return csr_matrix((data, (rows, cols)), shape=(k + 1, k + 1))


def potentials(arcs: Sequence[Arc]) -> dict[Hashable, int] | None:
    """Shortest scaled distances from a virtual source, or None if a non-positive cycle exists.

    The result is a feasibility certificate: for every arc, ``pi[head] - pi[tail] <= (k+1) w - 1``.
    """
    if not arcs:
        return {}
    index, vertices = _index(arcs)
    try:
        dist = bellman_ford(_scaled_matrix(arcs, index), directed=True, indices=len(index))
    except NegativeCycleError:
        return None
    return {v: round(dist[i]) for i, v in enumerate(vertices)}


def offer_potentials(pi: dict) -> None:
    """Remember candidate potentials (for example an LP's) for the next check on the same vertices."""
    if len(_HINTS) >= 4:
        _HINTS.pop(next(iter(_HINTS)))
    _HINTS[frozenset(pi)] = pi


def _certified_by_hint(arcs: Sequence[Arc]) -> bool:
    """True if remembered potentials satisfy every scaled arc: a proof that no cycle weighs <= 0.

    Telescoping ``pi[h] - pi[t] <= (k + 1) w - 1/2`` round a simple cycle of ``j <= k`` arcs gives
    ``(k + 1) W >= j / 2 > 0`` for its weight ``W``, hence ``W >= 1``: real-valued hints suffice.
    """
    vertices = frozenset(a.tail for a in arcs) | frozenset(a.head for a in arcs)
    pi = _HINTS.get(vertices)
    if pi is None:
        return False
    k = len(vertices)
    tail = np.fromiter((pi[a.tail] for a in arcs), dtype=float, count=len(arcs))
    head = np.fromiter((pi[a.head] for a in arcs), dtype=float, count=len(arcs))
    weight = np.fromiter((a.weight for a in arcs), dtype=float, count=len(arcs))
    return bool(np.all(head - tail <= (k + 1) * weight - 0.5))


def find_nonpositive_cycle(arcs: Sequence[Arc]) -> list[Arc] | None:
    """A simple cycle of total weight <= 0 in the mirror graph, as its arcs in order, or None."""
    if _certified_by_hint(arcs) or potentials(arcs) is not None:
        return None
    index, _ = _index(arcs)
    k = len(index)
    out: dict[Hashable, list[Arc]] = {}
    for a in arcs:
        out.setdefault(a.tail, []).append(a)
    dist = {v: 0 for v in index}
    parent: dict[Hashable, Arc] = {}
    queue = deque(index)
    queued = set(index)
    relaxations = 0
    while queue:
        u = queue.popleft()
        queued.discard(u)
        for a in out.get(u, ()):
            w = (k + 1) * a.weight - 1
            if dist[u] + w < dist[a.head]:
                dist[a.head] = dist[u] + w
                parent[a.head] = a
                relaxations += 1
                if relaxations % k == 0:
                    cycle = _parent_cycle(parent, a.head)
                    if cycle is not None:
                        return cycle
                if a.head not in queued:
                    queued.add(a.head)
                    queue.append(a.head)
    raise AssertionError("Bellman-Ford saw a negative cycle that SPFA did not find")  # pragma: no cover


def _parent_cycle(parent: dict, start) -> list[Arc] | None:
    """Walk parent arcs back from ``start``; return the cycle met, in forward order."""
    seen = {}
    v = start
    step = 0
    while v in parent and v not in seen:
        seen[v] = step
        v = parent[v].tail
        step += 1
    if v not in seen:
        return None
    cycle = []
    u = v
    while True:
        a = parent[u]
        cycle.append(a)
        u = a.tail
        if u == v:
            break
    cycle.reverse()
    return cycle

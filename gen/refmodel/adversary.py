"""The filtering history that turns an undirected cycle into a blocking cycle (002 Thm. 2.2).

The proof's construction: choose the blockwise direction of the cycle ``C``; in reverse topological
order let ``M_u = 0`` for a sink, ``M_u = max M_uv`` over every out-channel ``uv`` otherwise, with
``M_uv = M_v + |uv| + 1`` if ``uv`` is counterblockwise on ``C`` and ``M_uv = M_v`` otherwise. A
blockwise channel ``uv`` carries tokens while ``u``'s index is at most ``M_uv``, then filters;
every other channel never filters. Counterblockwise channels then fill and blockwise ones drain,
so every node on ``C`` blocks its blockwise neighbour.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable

__all__ = ["adversarial_filter_history", "cycle_marks"]


def cycle_marks(network, cycle: Iterable[tuple[str, bool]], blockwise_forward: bool = True
                ) -> tuple[dict[str, int], dict[str, int], frozenset[str]]:
    """``M_u``, ``M_uv`` and the blockwise channels of 002 Thm. 2.2's construction.

    Parameters
    ----------
    network : Network
        Capacities ``|uv|`` and the topology.
    cycle : iterable of (str, bool)
        ``(edge_name, forward)`` in traversal order (:func:`sfdf.gen.analysis.cycles.undirected_cycles`).
    blockwise_forward : bool
        Whether the traversal direction is blockwise (else the opposite direction is).

    Returns
    -------
    node_marks : dict of str to int
        ``M_u`` for every node.
    edge_marks : dict of str to int
        ``M_uv`` for every edge.
    blockwise : frozenset of str
        Edges of the cycle oriented blockwise.
    """
    cycle = tuple(cycle)
    edges = network.edge_by_name
    unknown = [name for name, _ in cycle if name not in edges]
    if unknown:
        raise ValueError(f"Cycle edges must be edges of network {network.name!r}; unknown: {', '.join(unknown)}")
    blockwise = frozenset(name for name, forward in cycle if forward == blockwise_forward)
    counterblockwise = frozenset(name for name, _ in cycle) - blockwise
    node_marks: dict[str, int] = {}
    edge_marks: dict[str, int] = {}
    for u in reversed(network.topological_order()):
        best = 0
        for e in network.out_edges(u):
            mark = node_marks[e.dst] + (e.capacity + 1 if e.name in counterblockwise else 0)
            edge_marks[e.name] = mark
            best = max(best, mark)
        node_marks[u] = best
    return node_marks, edge_marks, blockwise


def adversarial_filter_history(network, cycle: Iterable[tuple[str, bool]], blockwise_forward: bool = True
                               ) -> Callable[[str, str, int], bool]:
    """A ``filter_oracle`` for :func:`~sfdf.gen.refmodel.simulate` that deadlocks ``cycle`` (002 Thm. 2.2).

    Parameters
    ----------
    network : Network
        The network to be simulated.
    cycle : iterable of (str, bool)
        ``(edge_name, forward)`` in traversal order.
    blockwise_forward : bool
        Whether the traversal direction is blockwise.

    Returns
    -------
    callable
        ``oracle(node, output, index) -> bool``: True (emit) except on a blockwise channel ``uv``
        once ``index > M_uv``.
    """
    _, edge_marks, blockwise = cycle_marks(network, cycle, blockwise_forward)
    limits = {name: edge_marks[name] for name in blockwise}

    def oracle(node: str, output: str, index: int) -> bool:
        limit = limits.get(output)
        return limit is None or index <= limit

    return oracle

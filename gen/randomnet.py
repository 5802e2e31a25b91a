"""Random DAG multigraph networks for property tests and benchmarks.

Nodes are named ``n0 .. n<k>``; edges ``<src>_<dst>``, then ``<src>_<dst>_2``, ``_3`` for parallel
edges (the default naming of :class:`sfdf.gen.model.Edge`). Every channel has output buffer 0 and
``"auto"`` interval and threshold, so the analysis decides them.
"""

from __future__ import annotations

import math
import random
from collections import Counter
from collections.abc import Iterable

from sfdf.gen.model import Edge, Network, Node

__all__ = [
    "DEFAULT_CAPACITIES",
    "layered_dag",
    "network_from_pairs",
    "random_dag",
]

#: Inclusive range of random channel capacities ``|q|``.
DEFAULT_CAPACITIES = (1, 8)


def _edge_names(pairs: Iterable[tuple[str, str]]) -> list[str]:
    seen: Counter = Counter()
    names = []
    for src, dst in pairs:
        seen[src, dst] += 1
        k = seen[src, dst]
        names.append(f"{src}_{dst}" if k == 1 else f"{src}_{dst}_{k}")
    return names


def network_from_pairs(
    node_names: Iterable[str],
    pairs: Iterable[tuple[str, str]],
    capacities: Iterable[int],
    *,
    name: str = "random",
    mode: str = "inband",
) -> Network:
    """Build a :class:`~sfdf.gen.model.Network` from node names and ``(src, dst)`` pairs.

    Parameters
    ----------
    node_names : iterable of str
        Nodes in spec order.
    pairs : iterable of (str, str)
        Edges in spec order; the caller guarantees the result is acyclic. Repeated pairs are
        parallel edges, named ``<src>_<dst>_2``, ``_3`` and so on.
    capacities : iterable of int
        ``|q|`` of each edge, in the order of ``pairs``.
    name, mode : str
        Passed to :class:`~sfdf.gen.model.Network`.
    """
    pairs = list(pairs)
    capacities = list(capacities)
    if len(capacities) != len(pairs):
        raise ValueError(f"Need one capacity per edge: {len(pairs)} edges, {len(capacities)} capacities")
    edges = tuple(
        Edge(name=edge_name, src=src, dst=dst, capacity=capacity)
        for edge_name, (src, dst), capacity in zip(_edge_names(pairs), pairs, capacities)
    )
    return Network(name=name, nodes=tuple(Node(n) for n in node_names), edges=edges, mode=mode)


def _check_capacities(capacities: tuple[int, int]) -> None:
    low, high = capacities
    if not 1 <= low <= high:
        raise ValueError(f"Capacities must be a range 1 <= low <= high, not {capacities!r}")


def random_dag(
    rng: random.Random,
    n_nodes: int,
    n_edges: int,
    *,
    parallel: bool = True,
    capacities: tuple[int, int] = DEFAULT_CAPACITIES,
    name: str = "random",
) -> Network:
    """A uniformly drawn DAG multigraph on ``n_nodes`` nodes with ``n_edges`` edges.

    A random permutation of the node names is the topological order, so the spec order says
    nothing about the edge directions.

    Parameters
    ----------
    rng : random.Random
        Source of randomness (seed it for a reproducible network).
    n_nodes, n_edges : int
        Size. Without ``parallel``, ``n_edges`` must not exceed ``n_nodes * (n_nodes - 1) / 2``.
    parallel : bool
        Whether two edges may join the same ordered pair of nodes.
    capacities : (int, int)
        Inclusive range of the uniformly drawn ``|q|``.
    name : str
        Network name.
    """
    _check_capacities(capacities)
    most = n_nodes * (n_nodes - 1) // 2
    if n_edges < 0 or (n_edges > 0 and most == 0) or (not parallel and n_edges > most):
        raise ValueError(
            f"A DAG on {n_nodes} nodes has room for {most} edges without parallel ones; "
            f"asked for {n_edges} edges (parallel={parallel})"
        )
    names = [f"n{i}" for i in range(n_nodes)]
    order = names[:]
    rng.shuffle(order)
    if parallel:
        ranks = [sorted(rng.sample(range(n_nodes), 2)) for _ in range(n_edges)]
    else:
        all_pairs = [(i, j) for i in range(n_nodes) for j in range(i + 1, n_nodes)]
        ranks = rng.sample(all_pairs, n_edges)
    pairs = [(order[i], order[j]) for i, j in ranks]
    caps = [rng.randint(*capacities) for _ in pairs]
    return network_from_pairs(names, pairs, caps, name=name)


def _layer_edges(rng: random.Random, lower: list[str], upper: list[str], quota: int) -> list[tuple]:
    """``quota`` distinct edges from ``lower`` to ``upper``: a cover first, then random fill."""
    chosen: dict[tuple[str, str], None] = {}
    for src in rng.sample(lower, len(lower)):
        chosen.setdefault((src, rng.choice(upper)), None)
    fed = {dst for _, dst in chosen}
    for dst in upper:
        if dst not in fed:
            chosen.setdefault((rng.choice(lower), dst), None)
    cover = list(chosen)[:quota]
    rest = [(s, d) for s in lower for d in upper if (s, d) not in chosen]
    return cover + rng.sample(rest, quota - len(cover))


def layered_dag(
    rng: random.Random,
    n_edges: int,
    *,
    width: int = 8,
    fanout: int = 2,
    capacities: tuple[int, int] = DEFAULT_CAPACITIES,
    name: str = "layered",
) -> Network:
    """A layered streaming-style DAG with exactly ``n_edges`` edges (for benchmarks).

    Layers of ``width`` nodes; edges join consecutive layers only, about ``fanout`` per node. Each
    gap first gets a cover (every node of the lower layer an out-edge, every node of the upper
    layer an in-edge, as far as the gap's share of edges allows), then random distinct edges.

    Parameters
    ----------
    rng : random.Random
        Source of randomness.
    n_edges : int
        Total number of edges, at least 1.
    width : int
        Nodes per layer, at least 2.
    fanout : int
        Average out-degree; sets the number of layers, ``ceil(n_edges / (fanout * width)) + 1``.
        Must be at most ``width``.
    capacities : (int, int)
        Inclusive range of the uniformly drawn ``|q|``.
    name : str
        Network name.
    """
    _check_capacities(capacities)
    if n_edges < 1 or width < 2 or not 1 <= fanout <= width:
        raise ValueError(
            f"Need n_edges >= 1, width >= 2 and 1 <= fanout <= width; got n_edges={n_edges}, "
            f"width={width}, fanout={fanout}"
        )
    gaps = math.ceil(n_edges / (fanout * width))
    layers = [[f"n{layer * width + i}" for i in range(width)] for layer in range(gaps + 1)]
    quotas = [n_edges // gaps + (1 if g < n_edges % gaps else 0) for g in range(gaps)]
    pairs = [
        pair for g, quota in enumerate(quotas) for pair in _layer_edges(rng, layers[g], layers[g + 1], quota)
    ]
    caps = [rng.randint(*capacities) for _ in pairs]
    return network_from_pairs([n for layer in layers for n in layer], pairs, caps, name=name)

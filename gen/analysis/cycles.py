"""Undirected cycles of a network, its bridges and biconnected components (002 Sec. 2, 3.2).

A network is a directed acyclic *multigraph*: two parallel edges form an undirected cycle of length
2. networkx's cycle and biconnectivity routines work on simple graphs, so they run on the
*subdivided* graph, where every edge ``e = u -> v`` becomes the path ``u - (e) - v`` through a
midpoint vertex of its own. Subdivision keeps simple cycles and biconnected components one-to-one
and turns parallel edges into an ordinary 4-cycle.
"""

from __future__ import annotations

from collections.abc import Iterable, Iterator
from dataclasses import dataclass

import networkx as nx

from sfdf.gen.model import Network

__all__ = [
    "Cycle",
    "DirectedPath",
    "biconnected_edge_components",
    "edges_on_cycles",
    "has_potential_deadlock",
    "maximal_paths_on_cycle",
    "sender_paths",
    "undirected_cycles",
]

#: An oriented simple undirected cycle: ``(edge_name, forward)`` in traversal order, where
#: ``forward`` means the walk follows the edge from ``src`` to ``dst``.
Cycle = tuple[tuple[str, bool], ...]


@dataclass(frozen=True)
class DirectedPath:
    """A maximal directed path of an undirected cycle (002 Sec. 3.2, Fig. 2).

    Members
    -------
    edges : tuple of str
        Edge names in the direction of data flow, from ``sender`` to ``receiver``.
    sender : str
        First node: on the cycle, both its edges are outgoing.
    receiver : str
        Last node: on the cycle, both its edges are incoming.
    """

    edges: tuple[str, ...]
    sender: str
    receiver: str


def _midpoint(edge_name: str) -> tuple[str, str]:
    # Tuples never collide with node names, which are strings.
    return ("edge", edge_name)


def _subdivided(network: Network, edges: Iterable | None = None) -> nx.Graph:
    """The undirected graph with a midpoint vertex on every edge (of ``edges``, default all)."""
    g = nx.Graph()
    g.add_nodes_from(n.name for n in network.nodes)
    for e in network.edges if edges is None else edges:
        mid = _midpoint(e.name)
        g.add_edge(e.src, mid)
        g.add_edge(mid, e.dst)
    return g


def _canonical(cycle: list[tuple[str, bool]], rank: dict[str, int]) -> Cycle:
    """Rotate and orient so the edge first in spec order comes first, traversed forward."""
    start = min(range(len(cycle)), key=lambda i: rank[cycle[i][0]])
    if not cycle[start][1]:
        cycle = [(name, not forward) for name, forward in reversed(cycle)]
        start = len(cycle) - 1 - start
    return tuple(cycle[start:] + cycle[:start])


def _cycle_from_vertices(network: Network, vertices: list) -> Cycle:
    """Map a vertex cycle of the subdivided graph back to oriented edges of the network."""
    edge_by_name = network.edge_by_name
    if isinstance(vertices[0], tuple):  # start the walk on a node, not a midpoint
        vertices = vertices[1:] + vertices[:1]
    walk = []
    for i in range(0, len(vertices), 2):
        node, mid = vertices[i], vertices[i + 1]
        walk.append((mid[1], edge_by_name[mid[1]].src == node))
    return _canonical(walk, {e.name: i for i, e in enumerate(network.edges)})


def undirected_cycles(network: Network) -> Iterator[Cycle]:
    """Every simple undirected cycle of the network, exactly once (002 Def. 6).

    Brute force (the number of cycles is exponential in general): the reference the faster
    analyses are tested against. Each cycle is rotated and oriented so that its edge earliest in
    spec order comes first and is traversed forward.

    Parameters
    ----------
    network : Network
        The DAG multigraph. Parallel edges form cycles of length 2.

    Yields
    ------
    tuple of (str, bool)
        ``(edge_name, forward)`` in traversal order.
    """
    for vertices in nx.simple_cycles(_subdivided(network)):
        yield _cycle_from_vertices(network, vertices)


def has_potential_deadlock(network: Network) -> bool:
    """Whether some filtering history can deadlock the network (002 Thm. 2.2).

    By the theorem this holds iff the undirected multigraph has a cycle, that is iff
    ``|E| > |V| - (number of connected components)``, parallel edges counted: linear time.
    """
    g = nx.MultiGraph()
    g.add_nodes_from(n.name for n in network.nodes)
    g.add_edges_from((e.src, e.dst) for e in network.edges)
    return len(network.edges) > g.number_of_nodes() - nx.number_connected_components(g)


def biconnected_edge_components(network: Network) -> dict[str, int]:
    """Biconnected component of every edge of the undirected multigraph (002 Sec. 3.2).

    Hopcroft and Tarjan's algorithm (002 ref. [12], through networkx) on the subdivided graph. Every
    simple undirected cycle lies within one component, and any two edges of one component lie on a
    common simple cycle. A bridge is a component of its own; parallel edges share one.

    Returns
    -------
    dict of str to int
        Edge name to component id; ids are ``0, 1, ...`` in the spec order of each component's
        first edge.
    """
    half_to_component = {}
    for cid, halves in enumerate(nx.biconnected_component_edges(_subdivided(network))):
        for a, b in halves:
            half_to_component[frozenset((a, b))] = cid
    raw = {e.name: half_to_component[frozenset((e.src, _midpoint(e.name)))] for e in network.edges}
    renumber: dict[int, int] = {}
    return {name: renumber.setdefault(cid, len(renumber)) for name, cid in raw.items()}


def edges_on_cycles(network: Network) -> frozenset[str]:
    """Edges on some undirected cycle: those that are not bridges (002 Sec. 3.2).

    An edge is a bridge iff its biconnected component holds no other edge; a parallel edge never is.
    """
    components = biconnected_edge_components(network)
    sizes: dict[int, int] = {}
    for cid in components.values():
        sizes[cid] = sizes.get(cid, 0) + 1
    return frozenset(name for name, cid in components.items() if sizes[cid] > 1)


def maximal_paths_on_cycle(network: Network, cycle: Cycle) -> tuple[DirectedPath, ...]:
    """Split an oriented cycle into its maximal directed paths (002 Sec. 3.2, proof of Thm. 3.2).

    A run of edges walked in one direction is a directed path; walked backwards, the path's flow
    order is the reverse of the walk. Because the network is acyclic every cycle has at least one
    sender and one receiver, so there are an even number (at least 2) of paths, alternating
    between walked forward and walked backward.

    Parameters
    ----------
    network : Network
        Gives the edges' endpoints.
    cycle : tuple of (str, bool)
        As yielded by :func:`undirected_cycles`.

    Returns
    -------
    tuple of DirectedPath
        In the order the cycle's walk meets them; consecutive paths share a sender or a receiver.
    """
    n = len(cycle)
    # Start the split at a change of direction so no run wraps around the end of the tuple.
    start = next(i for i in range(n) if cycle[i][1] != cycle[i - 1][1])
    walk = cycle[start:] + cycle[:start]
    runs: list[list[tuple[str, bool]]] = []
    for step in walk:
        if runs and runs[-1][-1][1] == step[1]:
            runs[-1].append(step)
        else:
            runs.append([step])
    paths = []
    for run in runs:
        names = [name for name, _ in run]
        forward = run[0][1]
        if not forward:
            names.reverse()
        sender = network.edge_by_name[names[0]].src
        receiver = network.edge_by_name[names[-1]].dst
        paths.append(DirectedPath(tuple(names), sender, receiver))
    return tuple(paths)


def sender_paths(paths: tuple[DirectedPath, ...]) -> Iterator[tuple[str, DirectedPath, DirectedPath]]:
    """Each sender of a split cycle with its two paths ``(sender, p1, p2)`` (002 Alg. 3, 6).

    Parameters
    ----------
    paths : tuple of DirectedPath
        As returned by :func:`maximal_paths_on_cycle`.
    """
    by_sender: dict[str, list[DirectedPath]] = {}
    for p in paths:
        by_sender.setdefault(p.sender, []).append(p)
    for sender, (p1, p2) in by_sender.items():
        yield sender, p1, p2

"""Undirected cycles of a network, its bridges and biconnected components (002 Sec. 2, 3.2).

The analysis derives them once per network, as a :class:`CycleStructure` (:func:`cycle_structure`), and
hands that to every pass; the functions taking a :class:`Network` answer one question each.

A network is a directed acyclic *multigraph*: two parallel edges form an undirected cycle of length
2. networkx's cycle and biconnectivity routines work on simple graphs, so they run on the
*subdivided* graph, where every edge ``e = u -> v`` becomes the path ``u - (e) - v`` through a
midpoint vertex of its own. Subdivision keeps simple cycles and biconnected components one-to-one
and turns parallel edges into an ordinary 4-cycle.
"""

from __future__ import annotations

from collections.abc import Iterator, Mapping
from dataclasses import dataclass, field
from functools import cached_property
from types import MappingProxyType

import networkx as nx

from sfdf.gen.model import Network

__all__ = [
    "Cycle",
    "CycleStructure",
    "DirectedPath",
    "biconnected_edge_components",
    "cycle_structure",
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


def _subdivided(network: Network) -> nx.Graph:
    """The undirected graph with a midpoint vertex on every edge."""
    g = nx.Graph()
    g.add_nodes_from(n.name for n in network.nodes)
    for e in network.edges:
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


def _cycle_from_vertices(network: Network, vertices: list, rank: dict[str, int]) -> Cycle:
    """Map a vertex cycle of the subdivided graph back to oriented edges of the network."""
    edge_by_name = network.edge_by_name
    if isinstance(vertices[0], tuple):  # start the walk on a node, not a midpoint
        vertices = vertices[1:] + vertices[:1]
    walk = []
    for i in range(0, len(vertices), 2):
        node, mid = vertices[i], vertices[i + 1]
        walk.append((mid[1], edge_by_name[mid[1]].src == node))
    return _canonical(walk, rank)


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
    rank = {e.name: i for i, e in enumerate(network.edges)}
    for vertices in nx.simple_cycles(_subdivided(network)):
        yield _cycle_from_vertices(network, vertices, rank)


def has_potential_deadlock(network: Network) -> bool:
    """Whether some filtering history can deadlock the network (002 Thm. 2.2).

    By the theorem this holds iff the undirected multigraph has a cycle, that is iff some edge is not
    a bridge: see :attr:`CycleStructure.potential_deadlock`.
    """
    return cycle_structure(network).potential_deadlock


def biconnected_edge_components(network: Network) -> dict[str, int]:
    """Biconnected component of every edge of the undirected multigraph (002 Sec. 3.2).

    See :attr:`CycleStructure.components`.

    Returns
    -------
    dict of str to int
        Edge name to component id; ids are ``0, 1, ...`` in the spec order of each component's
        first edge.
    """
    return dict(cycle_structure(network).components)


def edges_on_cycles(network: Network) -> frozenset[str]:
    """Edges on some undirected cycle: those that are not bridges (002 Sec. 3.2).

    See :attr:`CycleStructure.on_cycles`.
    """
    return cycle_structure(network).on_cycles


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


def _topology(network: Network) -> tuple:
    """What the cycle structure depends on: node names, and edge names with their ends, in spec order."""
    return tuple(n.name for n in network.nodes), tuple((e.name, e.src, e.dst) for e in network.edges)


@dataclass(frozen=True, eq=False)
class CycleStructure:
    """The undirected-cycle structure of a network, derived once and handed to every pass.

    002 Thm. 2.2 (potential deadlock), Sec. 3.2 (bridges, biconnected components, maximal directed
    paths) and Def. 6 (simple undirected cycles) describe it; the safety constraints of 000 (3), (4)
    and 003 (2), (3) range over the same cycles. It depends on the topology alone, so it serves every
    network with the same nodes and edges whatever its capacities, intervals, thresholds or buffers
    (:func:`resolve <gen.analysis.resolve>` changes none of those). Each member is computed on first
    use and at most once; only a pass that needs the cycles themselves enumerates them.

    Members
    -------
    network : Network
        The network it was derived from (only its topology is read).
    components : Mapping of str to int
        Biconnected component of every edge, as :func:`biconnected_edge_components` returns it.
    on_cycles : frozenset of str
        The edges on some undirected cycle (non-bridges).
    potential_deadlock : bool
        The undirected multigraph has a cycle (002 Thm. 2.2).
    """

    network: Network
    # The cycles enumerated so far, each with its maximal directed paths (see :meth:`cycles`).
    _found: list = field(default_factory=list, init=False, repr=False, compare=False)

    @cached_property
    def components(self) -> Mapping[str, int]:
        """Hopcroft and Tarjan's algorithm (002 ref. [12], through networkx) on the subdivided graph.

        Every simple undirected cycle lies within one component, and any two edges of one component
        lie on a common simple cycle. A bridge is a component of its own; parallel edges share one.
        Ids are ``0, 1, ...`` in the spec order of each component's first edge.
        """
        half_to_component = {}
        for cid, halves in enumerate(nx.biconnected_component_edges(_subdivided(self.network))):
            for a, b in halves:
                half_to_component[frozenset((a, b))] = cid
        raw = {e.name: half_to_component[frozenset((e.src, _midpoint(e.name)))] for e in self.network.edges}
        renumber: dict[int, int] = {}
        return MappingProxyType({name: renumber.setdefault(cid, len(renumber)) for name, cid in raw.items()})

    @cached_property
    def on_cycles(self) -> frozenset[str]:
        """An edge is a bridge iff its biconnected component holds no other edge; a parallel edge never is."""
        sizes: dict[int, int] = {}
        for cid in self.components.values():
            sizes[cid] = sizes.get(cid, 0) + 1
        return frozenset(name for name, cid in self.components.items() if sizes[cid] > 1)

    @property
    def potential_deadlock(self) -> bool:
        """Some filtering history can deadlock the network iff it has an undirected cycle (002 Thm. 2.2)."""
        return bool(self.on_cycles)

    @cached_property
    def _topology(self) -> tuple:
        return _topology(self.network)

    @cached_property
    def _enumeration(self) -> Iterator[Cycle]:
        return undirected_cycles(self.network)

    def cycles(self) -> Iterator[tuple[Cycle, tuple[DirectedPath, ...]]]:
        """Every simple undirected cycle (002 Def. 6) with its maximal directed paths (Sec. 3.2).

        In the order of :func:`undirected_cycles`, paths as :func:`maximal_paths_on_cycle` splits them.
        The enumeration is shared by every call and runs only as far as some caller reads: the number
        of cycles is exponential in general, and a check that stops at its first violated cycle leaves
        the rest unenumerated.

        Yields
        ------
        tuple of (Cycle, tuple of DirectedPath)
        """
        found = self._found
        i = 0
        while True:
            if i == len(found):
                cycle = next(self._enumeration, None)
                if cycle is None:
                    return
                found.append((cycle, maximal_paths_on_cycle(self.network, cycle)))
            yield found[i]
            i += 1


def cycle_structure(network: Network, known: CycleStructure | None = None) -> CycleStructure:
    """The :class:`CycleStructure` of ``network`` (002 Sec. 2, 3.2), or ``known`` when a caller has it.

    Parameters
    ----------
    network : Network
    known : CycleStructure, optional
        A structure derived earlier, for example by the pass that called this one: returned as it is.

    Raises
    ------
    ValueError
        ``known`` was derived from a network with another topology.
    """
    if known is None:
        return CycleStructure(network)
    if known._topology != _topology(network):
        raise ValueError(f"The cycle structure passed for network {network.name!r} must come from a network "
                         f"with the same nodes and edges, not from {known.network.name!r}")
    return known

"""Hypothesis strategies for random networks (small DAG multigraphs), built on :mod:`sfdf.gen.randomnet`, and
004's SDF example graph."""

from __future__ import annotations

from hypothesis import strategies as st

from sfdf.gen.model import Edge, Network, Node
from sfdf.gen.randomnet import DEFAULT_CAPACITIES, network_from_pairs

__all__ = ["dags", "fig_sdep", "sdf_edge"]


@st.composite
def dags(
    draw,
    max_nodes: int = 7,
    max_edges: int = 10,
    parallel: bool = True,
    capacities: tuple[int, int] = DEFAULT_CAPACITIES,
    min_nodes: int = 2,
) -> Network:
    """Random DAG multigraph networks: nodes ``n0 .. n<k>``, edges ``<src>_<dst>[_k]``.

    The topological order is a drawn permutation of the nodes, so spec order and edge direction
    are unrelated. Channels get a drawn capacity in ``capacities`` (inclusive), output buffer 0,
    and ``"auto"`` interval and threshold. Shrinks towards fewer nodes, fewer edges, capacity
    ``capacities[0]``.

    Parameters
    ----------
    max_nodes, min_nodes : int
        Node count range, ``min_nodes >= 2``.
    max_edges : int
        Most edges.
    parallel : bool
        Whether parallel edges may be drawn.
    capacities : (int, int)
        Inclusive range of ``|q|``.
    """
    n = draw(st.integers(min_nodes, max_nodes))
    order = draw(st.permutations(range(n)))
    rank_pair = st.tuples(st.integers(0, n - 1), st.integers(0, n - 1)).filter(lambda p: p[0] != p[1])
    ranked = st.builds(lambda p: tuple(sorted(p)), rank_pair)
    most = max_edges if parallel else min(max_edges, n * (n - 1) // 2)
    ranks = draw(st.lists(ranked, max_size=most, unique=not parallel))
    caps = draw(st.lists(st.integers(*capacities), min_size=len(ranks), max_size=len(ranks)))
    pairs = [(f"n{order[i]}", f"n{order[j]}") for i, j in ranks]
    return network_from_pairs([f"n{i}" for i in range(n)], pairs, caps)


def sdf_edge(name, src, dst, **rates):
    return Edge(name=name, src=src, dst=dst, capacity=64, **rates)


def fig_sdep():
    """004's example graph (its figure did not survive in the seed text; this graph fits the caption and
    gives every number of the paper's table): A a round-robin splitter, E a round-robin joiner."""
    return Network(name="fig", nodes=tuple(Node(n) for n in "ABCDE"), edges=(
        sdf_edge("AC", "A", "C", push=(1, 0), pop=3), sdf_edge("AB", "A", "B", push=(0, 1), pop=1),
        sdf_edge("CE", "C", "E", push=2, pop=(1, 0)), sdf_edge("BD", "B", "D", push=2, pop=3),
        sdf_edge("DE", "D", "E", push=1, pop=(0, 1))))


def ports(inputs=1, outputs=1, width=32, index_width=32, data_width=None):
    """A kernel's :class:`~sfdf.gen.contract.KernelPorts` for a golden alone: ``inputs``/``outputs`` are
    counts (ports ``i``/``o`` for one, ``a``, ``b``, ... for several) or ``(name, width)`` pairs."""
    from sfdf.gen.contract import KernelPorts

    def side(spec, single):
        if isinstance(spec, int):
            return ((single, width),) if spec == 1 else tuple((chr(ord("a") + k), width) for k in range(spec))
        return tuple(spec)

    ins, outs = side(inputs, "i"), side(outputs, "o")
    return KernelPorts(inputs=ins, outputs=outs, edges_in=tuple(n for n, _ in ins if n != "i"),
                       edges_out=tuple(n for n, _ in outs if n != "o"), index_width=index_width,
                       data_width=data_width or width)

"""Hypothesis strategies for random networks (small DAG multigraphs, built on :mod:`sfdf.gen.randomnet`, and
consistent SDF networks) and 004's SDF example graph."""

from __future__ import annotations

import itertools
import math

import networkx as nx
from hypothesis import assume
from hypothesis import strategies as st

from sfdf.gen.model import Edge, Message, Network, Node
from sfdf.gen.randomnet import DEFAULT_CAPACITIES, network_from_pairs
from sfdf.gen.sdf.rates import SDFError
from sfdf.gen.sdf.schedule import constrained_schedule

__all__ = ["dags", "fig_sdep", "sdf_edge", "sdf_networks"]


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


@st.composite
def sdf_networks(draw, max_nodes=4):
    """A connected, consistent SDF network: rates from per-node repetitions ``r`` (push = t r_dst / g, pop =
    t r_src / g balances every edge), sometimes peeking, initial items, a feedback edge with enough
    initial items to be live, and messages along paths."""
    n = draw(st.integers(2, max_nodes))
    names = [f"n{k}" for k in range(n)]
    r = [draw(st.integers(1, 3)) for _ in names]
    pairs = [(draw(st.integers(0, k - 1)), k) for k in range(1, n)]  # a spanning tree, parents first
    pairs += [p for p in itertools.combinations(range(n), 2) if p not in pairs and draw(st.booleans())]
    edges = []
    for a, b in pairs:
        t = draw(st.integers(1, 2))
        g = math.gcd(r[a], r[b])
        push, pop = t * r[b] // g, t * r[a] // g
        extra = draw(st.sampled_from([0, 0, 0, 1, 2]))
        edges.append(sdf_edge(f"e{a}_{b}", names[a], names[b], push=push, pop=pop, peek=pop + extra if extra else None,
                          initial=draw(st.sampled_from([0, 0, 0, 1, pop]))))
    if n > 2 and draw(st.booleans()):  # feedback: from the last node to the first, live by its initial items
        g = math.gcd(r[-1], r[0])
        push, pop = r[0] // g, r[-1] // g
        edges.append(sdf_edge("back", names[-1], names[0], push=push, pop=pop, initial=pop * r[0] * 2))
    messages = []
    for _ in range(draw(st.integers(0, 2))):
        a, b = sorted(draw(st.lists(st.integers(0, n - 1), min_size=2, max_size=2, unique=True)))
        up = draw(st.booleans())
        low = draw(st.integers(0, 3)) if up else draw(st.integers(-2, 3))
        messages.append((names[b], names[a], low) if up else (names[a], names[b], low))
    net = Network(name="random", nodes=tuple(Node(x) for x in names), edges=tuple(edges))
    try:  # peeking on the feedback loop can starve it: only live networks
        constrained_schedule(net)
    except SDFError:
        assume(False)
    routes_ok = []
    graph = nx.MultiDiGraph((e.src, e.dst) for e in edges)
    for s, d, k in messages:
        down, upward = nx.has_path(graph, s, d), nx.has_path(graph, d, s)
        if (down or upward) and not (upward and k < 0):
            routes_ok.append(Message(s, (d,), (k, k)))
    return Network(name="random", nodes=net.nodes, edges=net.edges, messages=tuple(routes_ok))


def small_radio(feedback: bool) -> Network:
    """004's radio (examples/fhr.toml, examples/fhr_feedback.toml) shrunk to frames of 8 words, two detectors
    and a retune latency of 2, with the radio's kernels; :class:`sfdf.gen.sdf.kernels.HopSignal` with
    ``frame=8`` hops into the detectors' bands."""
    def node(name, kernel, **params):
        return Node(name, kernel=kernel, params=params)
    nodes = [node("antenna", "antenna", seed=1), node("RFtoIF", "rf_to_if"), node("FFT", "forward"),
             node("Mag", "magnitude"), node("Split", "forward"), node("D1", "detector", low=256, high=768, holdoff=2),
             node("D2", "detector", low=768, high=1280, holdoff=2), node("Join", "forward"), node("out", "forward")]
    edges = [Edge("a_r", "antenna", "RFtoIF", 2), Edge("r_f", "RFtoIF", "FFT", 16, pop=8),
             Edge("f_m", "FFT", "Mag", 16, push=8, pop=2), Edge("m_s", "Mag", "Split", 8, pop=4),
             Edge("s_1", "Split", "D1", 4, push=2, pop=2), Edge("s_2", "Split", "D2", 4, push=2, pop=2),
             Edge("1_j", "D1", "Join", 4, push=2, pop=2), Edge("2_j", "D2", "Join", 4, push=2, pop=2),
             Edge("j_o", "Join", "out", 8, push=4)]
    messages = ()
    if feedback:  # the retunes through Hops, three frames of initial items: read at RFtoIF's firing 8 (n + 2) + 1
        nodes.append(node("Hops", "forward"))
        edges += [Edge("1_h", "D1", "Hops", 2), Edge("2_h", "D2", "Hops", 2),
                  Edge("h_r", "Hops", "RFtoIF", 10, push=2, initial=6, pop=(2,) + (0,) * 7)]
    else:
        messages = tuple(Message(sender=d, receivers=("RFtoIF",), latency=(2, 2)) for d in ("D1", "D2"))
    return Network(name="radio_fb" if feedback else "radio", nodes=tuple(nodes), edges=tuple(edges), messages=messages)

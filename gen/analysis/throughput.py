"""The generated hardware's throughput bound, and the capacities that reach it (docs/hardware.md, "Latency,
and how to size a reconvergent path").

When every computation emits a token on every output and no control message travels (no filtering),
the hardware of :mod:`sfdf.hdl` is a *timed marked graph* (Commoner, Holt, Even and Pnueli, "Marked
directed graphs", 1971; Ramamoorthy and Ho, "Performance evaluation of asynchronous concurrent systems
using Petri nets", 1980): each node is two transitions, its decide stage ``C`` (consumes one token of
every input, steps the kernel) and its emit stage ``W`` (pushes one token on every output), and every
buffer is a pair of places, one holding what is in it and one holding its room:

* edge ``u -> v``: ``W_u -> C_v`` (no token; ``hop`` cycles: the channel's register, and where nodes
  register their offers, the offer register) and ``C_v -> W_u`` (``|q|`` tokens, the room; ``release``
  cycles from the decide stage's release to the sender seeing the room: 000's data channel counts a
  token until the join takes it);
* node ``v``: ``C_v -> W_v`` (no token; ``1 + L_v`` cycles, the decided stage and the kernel's latency)
  and ``W_v -> C_v`` (``decided + L_v`` tokens, the decided queue's slots; ``release`` cycles), and
  ``C_v -> C_v`` (one token, ``ii`` cycles: one computation per initiation interval).

In steady state every transition fires at the same rate, and that rate is the least, over the graph's
cycles, of the tokens on the cycle over the cycles it takes (the cycle-time theorem of timed marked
graphs, Ramamoorthy and Ho Thm. 1). A reconvergent path gives the binding cycle: forward along the long
branch, back through the short branch's rooms, so the short branch must hold a token for every cycle of
the long branch's latency. :func:`throughput_bound` finds the binding cycle exactly (integer
Dinkelbach steps on Bellman-Ford's negative cycles); :func:`full_rate_capacities` gives each edge the
least capacity at which it no longer binds. Measured on Verilator, tests/cosim/test_throughput_bound.py.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from fractions import Fraction

__all__ = ["Place", "StageTiming", "ThroughputBound", "event_graph", "full_rate_capacities", "throughput_bound",
           "throughput_summary"]


@dataclass(frozen=True)
class StageTiming:
    """The cycles of the generated hardware the bound rests on (:func:`sfdf.hdl.timing.stage_timing`).

    Members
    -------
    hop : int
        Cycles from a sender's commit to the receiving node's decide stage taking the token: the
        channel's register, plus the offer register where the platform has one.
    release : int
        Cycles from a consumption to the writer seeing the room (``ready`` is a register).
    decided : int
        Computations the decided queue holds between a node's two stages, before the kernel's latency.
    latency : Mapping[str, int]
        The kernel's latency per node (0 where absent).
    """

    hop: int
    release: int
    decided: int
    latency: Mapping[str, int] = field(default_factory=dict)


@dataclass(frozen=True)
class Place:
    """A place of the event graph: ``tokens`` at reset, ``delay`` cycles from ``src`` firing to ``dst``
    seeing a token; ``edge``: the network edge whose room this is (None for other places)."""

    src: str
    dst: str
    tokens: int
    delay: int
    what: str
    edge: str | None = None


@dataclass(frozen=True)
class ThroughputBound:
    """The steady rate of every node, in computations (tokens) per cycle, and the cycle that binds it.

    Members
    -------
    rate : Fraction
        ``tokens / cycles`` of :attr:`cycle`; at most ``1 / ii`` of the slowest node.
    cycle : tuple of Place
        The binding cycle, in order.
    """

    rate: Fraction
    cycle: tuple[Place, ...]

    @property
    def tokens(self) -> int:
        return sum(p.tokens for p in self.cycle)

    @property
    def cycles(self) -> int:
        return sum(p.delay for p in self.cycle)

    @property
    def edges(self) -> tuple[str, ...]:
        """The network edges whose room lies on the binding cycle (the capacities that would raise it)."""
        return tuple(p.edge for p in self.cycle if p.edge is not None)

    def describe(self) -> str:
        """One line: the rate, and what the binding cycle is made of."""
        rate = f"{float(self.rate):.3f} tokens per cycle"
        if self.edges:
            return (f"{rate}: the room of {', '.join(self.edges)} ({self.tokens} tokens) against the "
                    f"{self.cycles} cycles of latency around it")
        if len(self.cycle) == 1:  # a node's own loop: one computation per ``ii`` cycles
            return f"{rate}: {self.cycle[0].what} ({self.cycles}), no channel limits it"
        return f"{rate}: {', '.join(p.what for p in self.cycle)} ({self.tokens} over {self.cycles} cycles)"


def event_graph(network, timing: StageTiming, capacities: Mapping[str, int] | None = None) -> list[Place]:
    """The places of ``network``'s hardware as a timed marked graph (module docstring); ``capacities``
    overrides edges' ``|q|`` by name."""
    capacities = capacities or {}
    places = []
    for node in network.nodes:
        v, latency = node.name, timing.latency.get(node.name, 0)
        places += [
            Place(f"C:{v}", f"W:{v}", 0, 1 + latency, f"{v} decided"),
            Place(f"W:{v}", f"C:{v}", timing.decided + latency, timing.release, f"{v} decided room"),
            Place(f"C:{v}", f"C:{v}", 1, node.ii, f"{v}'s initiation interval"),
        ]
    for e in network.edges:
        places += [
            Place(f"W:{e.src}", f"C:{e.dst}", 0, timing.hop, f"{e.name} tokens"),
            Place(f"C:{e.dst}", f"W:{e.src}", capacities.get(e.name, e.capacity), timing.release, f"{e.name} room",
                  e.name),
        ]
    return places


def throughput_bound(network, timing: StageTiming, capacities: Mapping[str, int] | None = None) -> ThroughputBound:
    """The least tokens-per-cycle ratio over the cycles of :func:`event_graph` (module docstring)."""
    places = event_graph(network, timing, capacities)
    best = min((p for p in places if p.src == p.dst), key=lambda p: Fraction(p.tokens, p.delay))
    cycle = (best,)
    while True:
        rate = Fraction(sum(p.tokens for p in cycle), sum(p.delay for p in cycle))
        lower = _cycle_below(places, rate)
        if lower is None:
            return ThroughputBound(rate, _rotated(cycle))
        cycle = lower


def full_rate_capacities(network, timing: StageTiming) -> dict[str, int]:
    """Each edge's least capacity at which its room binds no cycle below the rate the network reaches
    with that edge unbounded (the other capacities as they are): ``{edge: capacity}``."""
    # a room of as many tokens as all places' cycles together never binds a simple cycle below 1
    deep = sum(p.delay for p in event_graph(network, timing)) + 1
    needed = {}
    for e in network.edges:
        def rate(capacity, name=e.name):
            return throughput_bound(network, timing, {name: capacity}).rate

        reach, top = rate(deep), 1
        while rate(top) < reach:
            top *= 2
        low = top // 2 + 1 if top > 1 else 1
        while low < top:  # the least capacity in [low, top] that reaches ``reach``
            mid = (low + top) // 2
            low, top = (mid + 1, top) if rate(mid) < reach else (low, mid)
        needed[e.name] = top
    return needed


def throughput_summary(network, timing: StageTiming) -> dict | None:
    """``sfdf check``'s throughput report: the bound, its binding cycle and every edge's capacity for the rate
    the network reaches without that edge's limit (JSON-ready); None for a network without edges."""
    if not network.edges:
        return None
    bound = throughput_bound(network, timing)
    return {"tokens_per_cycle": float(bound.rate), "exact": str(bound.rate), "binding_edges": list(bound.edges),
            "binding_cycle": [p.what for p in bound.cycle], "tokens": bound.tokens, "cycles": bound.cycles,
            "describe": bound.describe(), "full_rate_capacities": full_rate_capacities(network, timing)}


def _cycle_below(places, rate: Fraction):
    """A cycle whose tokens over cycles is below ``rate``, or None: a negative cycle of the weights
    ``tokens * d - delay * n`` for ``rate = n / d`` (Bellman-Ford from every vertex at once)."""
    n, d = rate.numerator, rate.denominator
    vertices = sorted({p.src for p in places} | {p.dst for p in places})
    dist = dict.fromkeys(vertices, 0)
    parent: dict[str, Place] = {}
    changed = None
    for _ in range(len(vertices)):
        changed = None
        for p in places:
            w = dist[p.src] + p.tokens * d - p.delay * n
            if w < dist[p.dst]:
                dist[p.dst], parent[p.dst], changed = w, p, p.dst
        if changed is None:
            return None
    v = changed
    for _ in range(len(vertices)):  # walk back into the cycle
        v = parent[v].src
    cycle, u = [], v
    while True:
        p = parent[u]
        cycle.append(p)
        u = p.src
        if u == v:
            break
    return tuple(reversed(cycle))


def _rotated(cycle):
    """The cycle starting at its first edge room, if any (a stable order for reports and tests)."""
    for k, p in enumerate(cycle):
        if p.edge is not None:
            return cycle[k:] + cycle[:k]
    return cycle

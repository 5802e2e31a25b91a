"""Liveness of an SDF network's bounded channels in self-timed execution (004 networks in hardware).

The execution ``sfdf check`` proves (docs/semantics.md, "Bounded channels"): a node starts its next
firing, in phase ``k``, once every input edge holds the ``peek_k`` items it reads, every output edge has
room for the ``push_k`` items it writes (its capacity minus the items it holds, the initial items among
them), and every teleport message due before that firing has been sent (its latency's ``min`` point,
where it is delivered: :meth:`sfdf.gen.sdf.messages.Deliveries.required_sends`); the firing then pops ``pop_k`` items from
each input and pushes ``push_k`` on each output. Capacities bound this execution, where 004's schedule
(:mod:`sfdf.gen.sdf.schedule`) is capacity-free.

The execution is *persistent*: a firing only adds items to its outputs' receivers, room to its inputs'
senders and sent messages to its receivers, so it never disables another node's next firing, and each
edge has one sender and one receiver. By Keller's theorem on persistent, commutative systems (Keller,
"A Fundamental Theorem of Asynchronous Parallel Computation", 1975) every maximal execution is then a
permutation of every other: all stop in the same state or none stops. One execution decides, so
:func:`bounded_execution` runs it in rounds, each firing every node in turn as often as it can (a node
that can fire stays able while the others fire), until a round fires none (a deadlock: where each node
waits is reported) or the state at a round's start repeats (the items on every edge and the nodes' phases; with messages also how
far each node is ahead of the others, seen three times): rounds are a function of the state, so the
network then runs forever. Increasing a capacity never disables a firing either, so the least live
capacity of an edge is found by bisection (:func:`least_capacity`).
"""

from __future__ import annotations

from dataclasses import dataclass, field

from .messages import Deliveries
from .rates import SDFError, Simulation, edge_rates, phases, repetitions

__all__ = ["Bounded", "Stall", "ample", "bounded_execution", "capacity_fix", "firing_capacity", "least_capacity"]


@dataclass(frozen=True)
class Stall:
    """Where a node that cannot fire waits: for ``items`` on an input edge, for ``room`` on an output edge
    (``have`` of the ``need``), or for a ``message`` (``edge`` then describes the route)."""

    node: str
    waits: str
    edge: str
    have: int
    need: int

    def describe(self) -> str:
        if self.waits == "items":
            return f"{self.node} waits for {self.need} items on {self.edge} ({self.have} there)"
        if self.waits == "room":
            return f"{self.node} waits for room for {self.need} items on {self.edge} ({self.have} free)"
        return f"{self.node} waits for {self.edge}"


@dataclass
class Bounded:
    """What :func:`bounded_execution` found: ``live``, the ``firings`` it ran, and at a deadlock where every
    node waits (``stalls``)."""

    live: bool
    firings: int
    stalls: list[Stall] = field(default_factory=list)

    def deadlock_line(self, name: str) -> str:
        """The deadlock in one line, as ``generate`` and ``build`` refuse the network (``sfdf check`` names the
        capacity that frees it)."""
        return (f"{name}: SDF, deadlocks with these capacities after {self.firings} firings: "
                f"{'; '.join(s.describe() for s in self.stalls)} (sfdf check names the capacity that frees it)")


class _Run:
    def __init__(self, network, capacities: dict[str, int], deliveries: Deliveries | None):
        self.sim = Simulation(network)
        self.capacity = capacities
        self.rates = self.sim.rates
        self.routes = deliveries.by_receiver if deliveries is not None else {}
        self.deliveries = deliveries

    def stall(self, node: str) -> Stall | None:
        """Why ``node`` cannot start its next firing, or None when it can."""
        sim = self.sim
        k = sim.phase(node)
        for e in sim.ins[node]:
            need = self.rates[e.name][2][k]
            if sim.items[e.name] < need:
                return Stall(node, "items", e.name, sim.items[e.name], need)
        for e in sim.outs[node]:
            need, free = self.rates[e.name][0][k], self.capacity[e.name] - sim.items[e.name]
            if free < need:
                return Stall(node, "room", e.name, free, need)
        for route in self.routes.get(node, ()):
            need = self.deliveries.required_sends(route, sim.fired[node], held=True)
            if sim.fired[route.sender] < need:
                return Stall(node, "message", route.describe(), sim.fired[route.sender], need)
        return None


def bounded_execution(network, capacities: dict[str, int] | None = None, *, messages: bool = True,
                      deliveries: Deliveries | None = None, max_firings: int = 1 << 22) -> Bounded:
    """Run ``network`` with its capacities (``capacities`` overrides some, by edge name) in the
    self-timed execution of the module docstring; ``messages=False`` ignores its ``[[message]]`` tables
    (``deliveries``: their SDEP tables, which capacities do not change, from an earlier call).
    :class:`SDFError` when the rates have no repetition vector."""
    reps = repetitions(network)
    caps = {e.name: e.capacity for e in network.edges} | dict(capacities or {})
    deliveries = (deliveries or Deliveries(network)) if messages and network.messages else None
    run = _Run(network, caps, deliveries)
    names = [n.name for n in network.nodes]
    edges = [e.name for e in network.edges]
    sim = run.sim
    # without messages a node's next firing depends on the items and the phases alone; with them on how far
    # each node is past the others too, and past the initialization, so a state counts once seen three times
    repeats = 1 if run.deliveries is None else 3
    seen: dict[tuple, int] = {}
    total = 0
    while total <= max_firings:
        key = (tuple(sim.items[e] for e in edges), tuple(sim.phase(n) for n in names))
        if run.deliveries is not None:
            lap = min(sim.fired[n] // reps[n] for n in names)
            key += (tuple(sim.fired[n] - lap * reps[n] for n in names),)
        seen[key] = seen.get(key, 0) + 1
        if seen[key] > repeats:  # a round of every enabled node's next firing is a function of the state
            return Bounded(True, total)
        before = total
        for node in names:  # each node as often as it can, in turn (persistent: none disables another)
            while run.stall(node) is None:
                sim.fire(node)
                total += 1
        if total == before:
            return Bounded(False, total, [run.stall(n) for n in names])
    raise SDFError(f"no state repeats within {max_firings} firings", "report it as a bug")


def ample(network, edge) -> int:
    """A capacity of ``edge`` that holds its initial items, one iteration's pushes and the most its
    receiver peeks: where :func:`least_capacity` starts looking."""
    reps, count = repetitions(network), phases(network)
    push, _, peek = edge_rates(edge, count)
    return edge.initial + reps[edge.src] // count[edge.src] * sum(push) + max(peek)


def firing_capacity(network, edge) -> int:
    """The least capacity of ``edge`` with which each of its firings can start at all: its initial items,
    its largest push and its receiver's largest peek (a pop is at most the peek), and 1 (below it some
    firing never starts; the hardware's channel takes no less, :class:`sfdf.hdl.sdf_channel.SDFChannel`)."""
    return max(edge.initial, 1, *(max(r) for r in edge_rates(edge, phases(network))))


def least_capacity(network, edge: str, capacities: dict[str, int] | None = None, *,
                   limit: int | None = None, deliveries: Deliveries | None = None) -> int | None:
    """The least capacity of ``edge`` (the others as in ``capacities`` or the spec) with which the network
    is live, or None when none up to ``limit`` (64 times :func:`ample`) is: doubling from the edge's
    capacity to a live one, then bisection (liveness only grows with a capacity). ``deliveries``: the
    messages' SDEP tables, from an earlier call."""
    e = network.edge_by_name[edge]
    caps = dict(capacities or {})
    deliveries = (deliveries or Deliveries(network)) if network.messages else None

    def live(capacity: int) -> bool:
        return bounded_execution(network, caps | {edge: capacity}, deliveries=deliveries).live

    low = firing_capacity(network, e)
    if live(low):
        return low
    limit = 64 * ample(network, e) if limit is None else limit
    high = max(caps.get(edge, e.capacity), low + 1)
    while not live(high):
        if high >= limit:
            return None
        high = min(2 * high, limit)
    while high - low > 1:  # live at high, not at low
        middle = (low + high) // 2
        low, high = (low, middle) if live(middle) else (middle, high)
    return high


def capacity_fix(network, stalls: list[Stall], deliveries: Deliveries | None = None) -> tuple[str, int] | None:
    """At a deadlock, the edge whose capacity alone, raised least, makes the network live and that
    capacity: among the edges a stalled node waits for room on. None when raising one is not enough."""
    deliveries = (deliveries or Deliveries(network)) if network.messages else None
    fixes = [(edge, need) for edge in dict.fromkeys(s.edge for s in stalls if s.waits == "room")
             if (need := least_capacity(network, edge, deliveries=deliveries)) is not None]
    return min(fixes, key=lambda fix: fix[1] - network.edge_by_name[fix[0]].capacity, default=None)

"""The generated hardware's throughput bound, and the capacities that reach it (docs/hardware.md, "Latency,
and how to size a reconvergent path").

When every computation emits a token on every output and no control message travels (no filtering),
and no token waits for a flush (003's output buffers: the bound is then an upper one, as ``sfdf check``
says), the hardware of :mod:`sfdf.hdl` is a *timed marked graph* (Commoner, Holt, Even and Pnueli, "Marked
directed graphs", 1971; Ramamoorthy and Ho, "Performance evaluation of asynchronous concurrent systems
using Petri nets", 1980): each node is two transitions, its decide stage ``C`` (consumes one token of
every input, steps the kernel) and its emit stage ``W`` (pushes one token on every output), and every
buffer is a pair of places, one holding what is in it and one holding its room:

* edge ``u -> v``: ``W_u -> C_v`` (no token; ``hop`` cycles, the channel's register, and ``offer`` cycles
  more where ``v`` holds its inputs' offers in registers) and
  ``C_v -> W_u`` (``|q|`` tokens, the room; ``release`` cycles from the decide stage's release to the
  sender seeing the room: 000's data channel counts a token until the join takes it);
* node ``v``: ``C_v -> W_v`` (no token; ``1 + L_v`` cycles, the decided stage and the kernel's latency)
  and ``W_v -> C_v`` (``decided + L_v`` tokens, the decided queue's slots; ``release`` cycles), and
  ``C_v -> C_v`` (one token, ``ii`` cycles: one computation per initiation interval).

In steady state every transition fires at the same rate, and that rate is the least, over the graph's
cycles, of the tokens on the cycle over the cycles it takes (the cycle-time theorem of timed marked
graphs, Ramamoorthy and Ho Thm. 1). A reconvergent path gives the binding cycle: forward along the long
branch, back through the short branch's rooms, so the short branch must hold a token for every cycle of
the long branch's latency. :func:`throughput_bound` finds the binding cycle exactly (integer
Dinkelbach steps on negative cycles, found by SPFA from the as-soon-as-possible schedule);
with 000's receiver as printed (``live_credit = false``) it is also at most each edge's
:func:`~.batches.batch_rate`, and :func:`network_rate` is the exact rate of the schedule with the batches
(:mod:`.batches`); :func:`full_rate_sizing` gives the capacities that reach the rate the nodes allow
(:func:`nodes_rate`), by a linear programme over the graph's firing times. Measured on Verilator:
tests/cosim/test_throughput_bound.py.
"""

from __future__ import annotations

from collections import deque
from collections.abc import Mapping
from dataclasses import dataclass, field, replace
from fractions import Fraction

from .batches import CreditBatch, batch_rate, credit_batches, schedule_rate, schedules_to_size

__all__ = [
    "Place",
    "StageTiming",
    "ThroughputBound",
    "event_graph",
    "full_rate_sizing",
    "network_rate",
    "nodes_rate",
    "single_stage_nodes",
    "sizing_lowered",
    "throughput_bound",
    "throughput_summary",
    "unregistered_offers",
]


@dataclass(frozen=True)
class StageTiming:
    """The cycles of the generated hardware the bound rests on (:func:`sfdf.hdl.timing.stage_timing`).

    Members
    -------
    hop : int
        Cycles from a sender's commit to the receiving node's decide stage taking the token, through the
        channel's register (an offer register adds ``offer``).
    release : int
        Cycles from a consumption to the writer seeing the room (``ready`` is a register).
    decided : int
        Computations the decided queue holds between a node's two stages, before the kernel's latency.
    latency : Mapping[str, int]
        The kernel's latency per node (0 where absent).
    offer : Mapping[str, int]
        Cycles a node's offer register adds to the hop of its inputs, per node (0 where it has none).
    single : frozenset of str
        Single-stage nodes: each decides and sends in one cycle, with no decided queue (``pipelined =
        false``, or ``"auto"`` where :func:`sfdf.hdl.timing.single_stage` chooses it).
    """

    hop: int
    release: int
    decided: int
    latency: Mapping[str, int] = field(default_factory=dict)
    offer: Mapping[str, int] = field(default_factory=dict)
    single: frozenset = frozenset()


@dataclass(frozen=True)
class Place:
    """A place of the event graph: ``tokens`` at reset, ``delay`` cycles from ``src`` firing to ``dst``
    seeing a token; ``edge``: the network edge whose room this is, ``carries``: whose tokens travel it
    (None for other places)."""

    src: str
    dst: str
    tokens: int
    delay: int
    what: str
    edge: str | None = None
    carries: str | None = None


@dataclass(frozen=True)
class ThroughputBound:
    """The steady rate of every node, in computations (tokens) per cycle, and the cycle that binds it.

    Members
    -------
    rate : Fraction
        ``tokens / cycles`` of :attr:`cycle`; at most ``1 / ii`` of the slowest node.
    cycle : tuple of Place
        The binding cycle, in order.
    batch : CreditBatch or None
        The edge whose credit batches bind (:func:`~.batches.batch_rate`; its cycle is one batch unrolled),
        if any.
    """

    rate: Fraction
    cycle: tuple[Place, ...]
    batch: CreditBatch | None = None

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
        if self.batch is not None:
            b = self.batch
            return (f"{rate}: {b.edge}'s credit batches of T + 1 = {b.threshold + 1} tokens, each taken when the "
                    f"credit message sent with its last arrives, against its room of {b.capacity} and the "
                    f"{b.loop} cycles round it (T <= {b.streaming_threshold} streams)")
        if self.edges:
            return (f"{rate}: the room of {', '.join(self.edges)} ({self.tokens} tokens) against the "
                    f"{self.cycles} cycles of latency around it")
        if len(self.cycle) == 1:  # a node's own loop: one computation per ``ii`` cycles
            return f"{rate}: {self.cycle[0].what} ({self.cycles}), no channel limits it"
        return f"{rate}: {', '.join(p.what for p in self.cycle)} ({self.tokens} over {self.cycles} cycles)"


def event_graph(network, timing: StageTiming, capacities: Mapping[str, int] | None = None,
                batch_waits: bool = False) -> list[Place]:
    """The places of ``network``'s hardware as a timed marked graph (module docstring); ``capacities``
    overrides edges' ``|q|`` by name. ``batch_waits``: each of 000's batched edges' token place holds ``-T``
    tokens, a token waiting for the commit ``T`` after its own (at least its batch's last, :mod:`.batches`),
    so that the hardware streams at least at this graph's rate."""
    capacities = capacities or {}
    waits = {b.edge: b.threshold for b in credit_batches(network, timing)} if batch_waits else {}
    places = []
    for node in network.nodes:
        v, latency = node.name, timing.latency.get(node.name, 0)
        if v in timing.single:  # decided and sent in the same cycle
            places.append(Place(f"C:{v}", f"W:{v}", 0, 0, f"{v} sends as it decides"))
        else:
            places += [Place(f"C:{v}", f"W:{v}", 0, 1 + latency, f"{v} decided"),
                       Place(f"W:{v}", f"C:{v}", timing.decided + latency, timing.release, f"{v} decided room")]
        places.append(Place(f"C:{v}", f"C:{v}", 1, node.ii, f"{v}'s initiation interval"))
    for e in network.edges:
        places += [
            Place(f"W:{e.src}", f"C:{e.dst}", -waits.get(e.name, 0), timing.hop + timing.offer.get(e.dst, 0),
                  f"{e.name} tokens", carries=e.name),
            Place(f"C:{e.dst}", f"W:{e.src}", capacities.get(e.name, e.capacity), timing.release, f"{e.name} room",
                  e.name),
        ]
    return places


def throughput_bound(network, timing: StageTiming, capacities: Mapping[str, int] | None = None) -> ThroughputBound:
    """The least tokens-per-cycle ratio over the cycles of :func:`event_graph` (module docstring), and
    over the edges' credit batches alone where the network has them (:mod:`.batches`): exact without
    batches, an upper bound with them (:func:`network_rate`)."""
    places = event_graph(network, timing, capacities)
    best = min((p for p in places if p.src == p.dst), key=lambda p: Fraction(p.tokens, p.delay))
    cycle = (best,)
    while True:
        rate = Fraction(sum(p.tokens for p in cycle), sum(p.delay for p in cycle))
        lower = _cycle_below(places, rate)
        if lower is None:
            break
        cycle = lower
    bound = ThroughputBound(rate, _rotated(cycle))
    for batch in credit_batches(network, timing, capacities):
        rate = batch_rate(batch.capacity, batch.threshold, batch.loop)
        if rate < bound.rate:
            bound = ThroughputBound(rate, _batch_cycle(timing, batch), batch)
    return bound


def _batch_cycle(timing: StageTiming, batch: CreditBatch) -> tuple[Place, ...]:
    """:func:`~.batches.batch_rate`'s binding cycle as places, for the report (its tokens over its cycles are
    the rate where below 1): the room, the commits from position ``p`` to a batch's last, the credit sent
    with it."""
    w, c = batch.token_place
    p = batch.capacity % (batch.threshold + 1)
    return (
        Place(c, w, batch.capacity - p, timing.release, f"{batch.edge} room", batch.edge),
        Place(w, w, 0, batch.threshold - p, f"{batch.src}'s commits to a batch's last"),
        Place(w, c, 0, batch.loop - timing.release, f"{batch.edge}'s batch credit"),
    )


def network_rate(network, timing: StageTiming, capacities: Mapping[str, int] | None = None,
                 bound: ThroughputBound | None = None) -> tuple[Fraction, bool]:
    """The hardware's rate with no filtering, and whether it is exact: :func:`throughput_bound` (``bound``,
    if the caller has it), or with 000's credit batches the schedule's (:func:`~.batches.schedule_rate`),
    and where that finds no period within its budget the bound again, not exact."""
    batches = credit_batches(network, timing, capacities)
    if batches:
        rate = schedule_rate(event_graph(network, timing, capacities), batches)
        if rate is not None:
            return rate, True
    return (bound or throughput_bound(network, timing, capacities)).rate, not batches


def nodes_rate(network, timing: StageTiming) -> Fraction:
    """The rate the hardware reaches when no channel's capacity limits it. A cycle with no edge's room
    stays inside one node (every other way back crosses an edge's room), so it is a node's own loop
    (``1 / ii``) or its two stages' (``decided + L`` tokens over ``1 + L + release`` cycles)."""
    return min(min(Fraction(1, node.ii), Fraction(timing.decided + lat, 1 + lat + timing.release))
               if node.name not in timing.single else Fraction(1, node.ii)
               for node in network.nodes for lat in [timing.latency.get(node.name, 0)])


def full_rate_sizing(network, timing: StageTiming, rate: Fraction | None = None) -> dict[str, int]:
    """Capacities that let the hardware reach :func:`nodes_rate`: ``{edge: capacity}`` for the edges
    that must grow (empty when none must), with little added in total and none that can shrink alone.

    Rate ``r`` is reached iff the event graph has firing-time potentials ``t`` with ``t(b) - t(a) >=
    delay - tokens / r`` on every place ``a -> b`` (the schedule ``t(x) + k / r`` of a timed marked graph);
    an edge's room gives ``|q| >= r (release + t(C_v) - t(W_u))``. The least total of such ``|q| >=`` the
    spec's is a linear programme (HiGHS); its capacities, rounded up, reach ``r``, and each is then
    lowered while the exact bound (:func:`throughput_bound`) stays at ``r``. With 000's credit batches the
    programme runs on the graph in which each token waits ``T`` commits (``batch_waits``, a rate the
    hardware reaches or exceeds), and each grown capacity is then lowered while the schedule's exact rate
    (:func:`network_rate`) stays at ``r``, where that fits the sizing's budget
    (:func:`~.batches.schedules_to_size`; else the capacities are enough, not the least). ``rate``: the
    network's :func:`network_rate`, if the caller has it.
    """
    import numpy as np
    from scipy.optimize import linprog
    from scipy.sparse import coo_matrix

    target = nodes_rate(network, timing)
    if (rate if rate is not None else network_rate(network, timing)[0]) >= target:
        return {}
    places = event_graph(network, timing, batch_waits=True)
    vertices = sorted({p.src for p in places} | {p.dst for p in places})
    vid = {x: k for k, x in enumerate(vertices)}
    edges = list(network.edges)
    eid = {e.name: k for k, e in enumerate(edges)}
    n, m = len(vertices), len(edges)
    rows, cols, vals, rhs = [], [], [], []
    for row, p in enumerate(places):  # t(a) - t(b) [- q_e / r] <= tokens / r - delay
        rows += [row, row]
        cols += [vid[p.src], vid[p.dst]]
        vals += [1.0, -1.0]
        if p.edge is None:
            rhs.append(p.tokens / target - p.delay)
        else:
            rows.append(row)
            cols.append(n + eid[p.edge])
            vals.append(-1.0 / float(target))
            rhs.append(-p.delay)
    a_ub = coo_matrix((vals, (rows, cols)), shape=(len(places), n + m)).tocsr()
    bounds = [(None, None)] * n + [(e.capacity, None) for e in edges]
    bounds[0] = (0, 0)
    res = linprog(np.concatenate([np.zeros(n), np.ones(m)]), A_ub=a_ub, b_ub=np.array(rhs), bounds=bounds,
                  method="highs")
    if res.status != 0:  # pragma: no cover: the target is what deep rooms reach, so it is feasible
        raise RuntimeError(f"throughput sizing LP failed: {res.message}")
    exact = res.x[n:]
    sized = {e.name: max(e.capacity, int(np.ceil(x - 1e-6))) for e, x in zip(edges, exact)}
    rounded = [e for e, x in zip(edges, exact) if sized[e.name] > e.capacity and abs(x - round(x)) > 1e-6]
    for e in rounded:  # rounding up may leave room to spare: lower each while the rate holds
        low, high = e.capacity, sized[e.name]
        while low < high:
            mid = (low + high) // 2
            if _reaches(network, timing, {**sized, e.name: mid}, target):
                high = mid
            else:
                low = mid + 1
        sized[e.name] = high
    # the LP's firing times certify capacities at or above its own; after lowering, the SPFA does
    assert _schedules(places, vid, res.x[:n], sized, target) if not rounded else _reaches(network, timing, sized, target)
    if sizing_lowered(network, timing):
        for e in edges:  # each token waits for its batch's last, not T commits: lower each while exact
            low, high = e.capacity, sized[e.name]
            while low < high:
                mid = (low + high) // 2
                reached, exact = network_rate(network, timing, {**sized, e.name: mid})
                if exact and reached >= target:
                    high = mid
                else:
                    low = mid + 1
            sized[e.name] = high
    return {e.name: sized[e.name] for e in edges if sized[e.name] > e.capacity}


def sizing_lowered(network, timing: StageTiming) -> bool:
    """Whether :func:`full_rate_sizing` lowers a network with 000's credit batches on their schedule (it
    fits :func:`~.batches.schedules_to_size`'s budget; each step where the schedule shows its period);
    False without batches, where the bound itself sizes."""
    batches = credit_batches(network, timing)
    return bool(batches) and schedules_to_size(event_graph(network, timing), batches, len(network.edges))


def _schedules(places, vid, t, capacities, rate: Fraction) -> bool:
    """Whether firing times ``t`` satisfy ``t(b) - t(a) >= delay - tokens / rate`` on every place with the
    rooms at ``capacities``, to within a slack too small to hide a cycle below ``rate`` (round a cycle of
    ``j`` places the margins add up to ``0``, and a cycle below ``rate`` would need at least ``1 / n``)."""
    tol = 1 / (2 * rate.numerator * (len(vid) + 1))
    for p in places:
        tokens = capacities.get(p.edge, p.tokens)  # an edge's room at its capacity; other places as they are
        if t[vid[p.dst]] - t[vid[p.src]] < p.delay - tokens / float(rate) - tol:
            return False
    return True


def throughput_summary(network, timing: StageTiming) -> dict | None:
    """``sfdf check``'s throughput report (JSON-ready): the bound and its binding cycle, the rate the nodes
    allow, and the capacities that reach it; None for a network without edges."""
    if not network.edges:
        return None
    bound = throughput_bound(network, timing)
    rate, exact = network_rate(network, timing, bound=bound)
    full = nodes_rate(network, timing)
    # an output buffer (003) hides its tokens until a flush: that only delays tokens, so the bound stays a
    # bound; so do 000's credit batches where their schedule finds no period in its budget
    hidden = [e.name for e in network.edges if e.output_buffer > 1]
    unmodelled = ([f"output buffers on {', '.join(hidden)}"] if hidden else []) + \
        ([] if exact else ["the credit batches' schedule (live_credit = false)"])
    describe = bound.describe()
    if rate < bound.rate:  # the batches' waits add up along paths (.batches)
        describe = (f"{float(rate):.3f} tokens per cycle: 000's credit batches add their waits along every "
                    f"path (the schedule, computed until it repeats); the tightest single cycle allows {describe}")
    describe += f" (at most: {' and '.join(unmodelled)} not modelled)" if unmodelled else ""
    sized = full_rate_sizing(network, timing, rate)
    return {"tokens_per_cycle": float(rate), "exact": str(rate), "binding_edges": list(bound.edges),
            "binding_cycle": [p.what for p in bound.cycle], "tokens": bound.tokens, "cycles": bound.cycles,
            "describe": describe, "unmodelled": unmodelled, "full_rate": float(full),
            "full_rate_exact": str(full), "full_rate_sizing": sized,
            # with 000's batches the sizing is the least only where it was lowered on their schedule
            "full_rate_sizing_least": not sized or not credit_batches(network, timing) or sizing_lowered(network, timing),
            "unregistered_offers": unregistered_offers(network, timing, bound, rate),
            "single_stage": single_stage_nodes(network, timing, bound, rate)}


def unregistered_offers(network, timing: StageTiming, bound: ThroughputBound, rate: Fraction | None = None) -> dict | None:
    """The other way to a faster reconvergent path than capacity: the nodes whose offer registers lengthen
    ``bound``'s binding cycle (a token's place into them), and the rate with none there (the spec's
    ``registered_offers = false``: a cycle less per hop into each, at a slower clock; :func:`network_rate`,
    ``rate`` the network's if the caller has it); None if that is no faster."""
    if not bound.edges:  # the nodes' own rate binds, no channel's room
        return None
    rate = rate if rate is not None else network_rate(network, timing, bound=bound)[0]
    # an edge's tokens place W_u -> C_v (event_graph) is the one an offer register of v lengthens; where
    # 000's batches bind below every cycle their waits add up along whole paths, so every register counts
    into = {(f"W:{e.src}", f"C:{e.dst}"): e.dst for e in network.edges}
    entered = set(into.values()) if rate < bound.rate else {into.get((p.src, p.dst)) for p in bound.cycle}
    nodes = sorted(v for v in entered if v and timing.offer.get(v))
    if not nodes:
        return None
    kept = {name: cycles for name, cycles in timing.offer.items() if name not in nodes}
    faster, _ = network_rate(network, replace(timing, offer=kept))
    if faster <= rate:
        return None
    return {"nodes": nodes, "tokens_per_cycle": float(faster), "exact": str(faster)}


def single_stage_nodes(network, timing: StageTiming, bound: ThroughputBound, rate: Fraction | None = None,
                       allowed=None) -> dict | None:
    """The third way to a faster reconvergent path: the pipelined nodes on ``bound``'s binding cycle that can
    be single-stage (:meth:`~sfdf.gen.model.Network.single_stage_problem`; only those in ``allowed`` unless
    it is None), and the rate with them so (the spec's ``pipelined = false``: one cycle per hop through
    each, at a slower clock); None if that is no faster or there are none."""
    if not bound.edges:
        return None
    rate = rate if rate is not None else network_rate(network, timing, bound=bound)[0]
    on_cycle = {place.split(":", 1)[1] for p in bound.cycle for place in (p.src, p.dst)}
    nodes = sorted(v for v in on_cycle if v not in timing.single and network.single_stage_problem(v) is None
                   and (allowed is None or v in allowed))
    if not nodes:
        return None
    faster, _ = network_rate(network, replace(timing, single=timing.single | set(nodes),
                                              offer={v: c for v, c in timing.offer.items() if v not in nodes}))
    if faster <= rate:
        return None
    return {"nodes": nodes, "tokens_per_cycle": float(faster), "exact": str(faster)}


def _cycle_below(places, rate: Fraction):
    """A cycle whose tokens over cycles is below ``rate``, or None: a negative cycle of the integer weights
    ``w = tokens * d - delay * n`` for ``rate = n / d``.

    Shortest paths by SPFA from the potentials of the as-soon-as-possible schedule (:func:`_asap`, which
    satisfies every place without tokens, so few arcs are relaxed); a negative cycle is found by walking
    the parents every ``V`` relaxations and whenever a path reaches ``V`` arcs.
    """
    n, d = rate.numerator, rate.denominator
    out: dict[str, list[tuple[str, int, Place]]] = {}
    for p in places:
        out.setdefault(p.src, []).append((p.dst, p.tokens * d - p.delay * n, p))
    vertices = sorted({p.src for p in places} | {p.dst for p in places})
    start = _asap(places)
    dist = {v: -n * start.get(v, 0) for v in vertices}
    parent: dict[str, Place] = {}
    length = dict.fromkeys(vertices, 0)
    queue, queued = deque(vertices), set(vertices)
    relaxations = 0
    while queue:
        u = queue.popleft()
        queued.discard(u)
        for v, w, p in out.get(u, ()):
            if dist[u] + w < dist[v]:
                dist[v], parent[v], length[v] = dist[u] + w, p, length[u] + 1
                relaxations += 1
                # a path of V arcs runs round a cycle; and every V relaxations the parents are looked at
                # (a short negative cycle shows there long before a path is V arcs long)
                if length[v] >= len(vertices) or relaxations % len(vertices) == 0:
                    cycle = _parent_cycle(parent, v)
                    if cycle is not None:
                        return cycle
                if v not in queued:
                    queued.add(v)
                    queue.append(v)
    return None


def _parent_cycle(parent, v):
    """The cycle of parent places that ``v``'s path runs round, in order (negative: every cycle of parents
    closed by a relaxation is), or None if the path now starts at a root."""
    seen = set()
    while v in parent and v not in seen:
        seen.add(v)
        v = parent[v].src
    if v not in parent:
        return None
    cycle, u = [], v
    while True:
        p = parent[u]
        cycle.append(p)
        u = p.src
        if u == v:
            return tuple(reversed(cycle))


def _asap(places) -> dict[str, int]:
    """Each stage's earliest firing time over the places without tokens (the forward places: a DAG for a
    network without directed cycles; stages on a cycle of them keep 0)."""
    indegree: dict[str, int] = {}
    succs: dict[str, list[Place]] = {}
    for p in places:
        if p.tokens == 0 and p.src != p.dst:
            indegree[p.dst] = indegree.get(p.dst, 0) + 1
            indegree.setdefault(p.src, 0)
            succs.setdefault(p.src, []).append(p)
    time = dict.fromkeys(indegree, 0)
    ready = deque(v for v, k in indegree.items() if k == 0)
    while ready:
        u = ready.popleft()
        for p in succs.get(u, ()):
            time[p.dst] = max(time[p.dst], time[u] + p.delay)
            indegree[p.dst] -= 1
            if indegree[p.dst] == 0:
                ready.append(p.dst)
    return time


def _reaches(network, timing, capacities, rate: Fraction) -> bool:
    """Whether ``network``'s event graph with ``capacities`` and ``batch_waits`` streams at ``rate`` or
    faster."""
    return _cycle_below(event_graph(network, timing, capacities, batch_waits=True), rate) is None


def _rotated(cycle):
    """The cycle starting at its first edge room, if any (a stable order for reports and tests)."""
    for k, p in enumerate(cycle):
        if p.edge is not None:
            return cycle[k:] + cycle[:k]
    return cycle

"""The generated SDF hardware's timing, cycle by cycle, and its throughput by state-space exploration (004
networks; SDF3's method, Stuijk, Geilen and Basten, IEEE TC 2008, applied to the hardware's own states).

:class:`sfdf.hdl.sdf_node.SDFNode` runs each firing through three stages (read ``P = max(1, peeks)``
cycles, land one cycle behind, write ``U = max(1, pushes)`` cycles, a two-entry skid between land and
write) and starts a firing on the levels after the cycle's pops and the room its earlier firings have not
claimed, and on a receiver's credits for the messages it may still be sent (:mod:`sfdf.gen.sdf.credits`);
:class:`sfdf.hdl.sdf_stream.SDFStreamNode` (a stream kernel's, the radio's) reads ``max(1, pops)`` steps, one
a cycle, and writes a cycle behind each step on the outputs :func:`sfdf.gen.sdf.kernels.stream_writes`
lists for it; its firing ends with its last item landed (a detector's a cycle later, with its report),
and a sender's target steps then (it decides there). :class:`sfdf.hdl.sdf_channel.SDFChannel` counts an item written in a cycle from the next.
:class:`Pipeline` steps exactly those registers, a cycle at a time, with every source allowed and every
sink ready; the test of this module checks it against the RTL's ``fired`` outputs cycle for cycle. The
execution is deterministic and its state finite, so it repeats: :func:`hardware_throughput` runs it to the
first repeated state and gives the iterations (repetition vectors) per cycle over the period, the
throughput bound of the generated hardware with those capacities (what a sink that is always ready sees).
"""

from __future__ import annotations

from dataclasses import dataclass
from fractions import Fraction

from .credits import route_tables
from .kernels import REPORTING, STREAM_KERNELS, read_order, stream_writes
from .liveness import ample, firing_capacity
from .rates import SDFError, edge_rates, phases, repetitions

__all__ = ["FullRate", "Pipeline", "full_rate_capacities", "hardware_throughput", "longest_firing", "node_bound"]


@dataclass
class _Node:
    """One node's registers, named as in :class:`sfdf.hdl.sdf_node.SDFNode`."""

    next_phase: int = 0
    r_busy: bool = False
    r_phase: int = 0
    r_step: int = 0
    d_valid: bool = False
    d_last: bool = False
    inflight: int = 0
    skid: int = 0
    w_busy: bool = False
    w_phase: int = 0
    w_step: int = 0

    d_phase: int = 0  # a stream node's landing step
    d_step: int = 0
    e_valid: bool = False  # a reporting stream node's report, a cycle after its last landing
    e_phase: int = 0

    def key(self) -> tuple:
        return (self.next_phase, self.r_busy, self.r_phase, self.r_step, self.d_valid, self.d_last,
                self.inflight, self.skid, self.w_busy, self.w_phase, self.w_step, self.d_phase, self.d_step,
                self.e_valid, self.e_phase)


class Pipeline:
    """The hardware's state: each node's registers, what each output has claimed and not written (``owed``)
    and each channel's level. :meth:`step` runs one clock cycle and returns the nodes whose firing ended
    in it (the RTL's ``<node>_fired``). ``tables``: the messages' :func:`~sfdf.gen.sdf.credits.route_tables`,
    from an earlier call."""

    def __init__(self, network, capacities: dict[str, int] | None = None, tables: list | None = None):
        self.count = phases(network)
        self.names = [n.name for n in network.nodes]
        self.edges = [e.name for e in network.edges]
        self.capacity = {e.name: e.capacity for e in network.edges} | dict(capacities or {})
        rates = {e.name: edge_rates(e, self.count) for e in network.edges}
        self.push = {e: rates[e][0] for e in self.edges}
        self.pop = {e: rates[e][1] for e in self.edges}
        self.peek = {e: rates[e][2] for e in self.edges}
        self.ins = {n: [e.name for e in network.in_edges(n)] for n in self.names}
        self.outs = {n: [e.name for e in network.out_edges(n)] for n in self.names}
        self.reads = {n: [max([1] + [self.peek[e][k] for e in self.ins[n]]) for k in range(self.count[n])]
                      for n in self.names}
        self.writes = {n: [max([1] + [self.push[e][k] for e in self.outs[n]]) for k in range(self.count[n])]
                       for n in self.names}
        # stream nodes: a step a cycle over their pops, and the output edges each step writes (a sink's none)
        kernels = {n.name: n.kernel or "sdf_test" for n in network.nodes}
        self.schedule: dict[str, list[list[list[str]]]] = {}
        self.report: dict[str, list[list[str]]] = {}  # per phase, what a reporting node's report writes
        for n in self.names:
            if kernels[n] in STREAM_KERNELS:
                ordered = [self.ins[n][j] for j in read_order(kernels[n], len(self.ins[n]))]
                self.schedule[n] = [[[self.outs[n][j] for j in step if self.outs[n]] for step in stream_writes(
                    kernels[n], [self.pop[e][k] for e in ordered] or [1], [self.push[e][k] for e in self.outs[n]] or [1])]
                    for k in range(self.count[n])]
                if kernels[n] in REPORTING:
                    self.report[n] = [steps.pop() for steps in self.schedule[n]]
                self.reads[n] = [len(steps) for steps in self.schedule[n]]
                self.writes[n] = [1 + (n in self.report)] * self.count[n]  # the last landing (and the report)
        self.level = {e.name: e.initial for e in network.edges}
        self.owed = dict.fromkeys(self.edges, 0)
        self.node = {n: _Node() for n in self.names}
        # teleport messages: the firings each node has started and, per receiver, its credits
        self.started = dict.fromkeys(self.names, 0)
        self.decided = dict.fromkeys(self.names, 0)  # a stream node's firings landed (a sender decides then)
        self.reps = repetitions(network)
        self.settled = 0  # laps of every node past which the credits repeat with the repetitions
        self.tables = []  # per route: its target table, and the receiver's limit (the sender's next target)
        self.limit: list[int] = []
        self.credits = {n: [] for n in self.names}  # per receiver its routes, per sender its routes
        self.sends = {n: [] for n in self.names}
        if network.messages:
            for r, (route, table) in enumerate(route_tables(network) if tables is None else tables):
                self.tables.append(table)
                self.limit.append(table(1))
                self.credits[route.receiver].append(r)
                self.sends[route.sender].append(r)
                self.settled = max(self.settled, -(-len(table.first) // self.reps[route.sender]) + 1)

    def key(self) -> tuple:
        key = (tuple(self.node[n].key() for n in self.names), tuple(self.level[e] for e in self.edges),
               tuple(self.owed[e] for e in self.edges))
        if self.settled:  # the credits depend on how far each node is past the others, and early on on more
            lap = min(self.started[n] // self.reps[n] for n in self.names)
            key += (tuple(self.started[n] - lap * self.reps[n] for n in self.names), min(lap, self.settled))
        return key

    def step(self) -> list[str]:
        comb = {n: self._comb(n) for n in self.names}  # every node's decisions on this cycle's registers
        fired = []
        for n, (start, r_last, landing, taking, w_done, writes) in comb.items():
            s = self.node[n]
            stream = n in self.schedule
            for e in self.ins[n]:
                if r_last:
                    self.level[e] -= self.pop[e][s.r_phase]
            for e in self.outs[n]:
                if start:
                    self.owed[e] += self.push[e][s.next_phase]
                if e in writes:
                    self.owed[e] -= 1
                    self.level[e] += 1
            if stream and (s.e_valid if n in self.report else s.d_valid and s.d_last):
                fired.append(n)  # its last item landed, or its report is out: the firing ends, a sender decides
                self.decided[n] += 1
                for r in self.sends[n]:
                    self.limit[r] = self.tables[r](self.decided[n] + 1)
            if n in self.report:
                s.e_valid, s.e_phase = s.d_valid and s.d_last, s.d_phase
            s.d_valid, s.d_last = s.r_busy, r_last
            if stream:
                s.d_phase, s.d_step = s.r_phase, s.r_step
            if start:
                s.r_busy, s.r_phase, s.r_step = True, s.next_phase, 0
                s.next_phase = (s.next_phase + 1) % self.count[n]
                self.started[n] += 1
                for r in self.sends[n] if not stream else ():  # the test kernel decides at its start
                    self.limit[r] = self.tables[r](self.started[n] + 1)
            elif r_last:
                s.r_busy = False
            elif s.r_busy:
                s.r_step += 1
            if stream:
                continue
            stays = s.skid - (taking and s.skid > 0)
            s.skid = stays + (landing and not (taking and s.skid == 0))
            s.inflight += start - taking
            if taking:
                s.w_busy, s.w_step = True, 0
            elif w_done:
                s.w_busy = False
            elif s.w_busy:
                s.w_step += 1
            if w_done:
                s.w_phase = (s.w_phase + 1) % self.count[n]
                fired.append(n)
        return fired

    def _comb(self, n: str):
        s = self.node[n]
        r_last = s.r_busy and s.r_step == self.reads[n][s.r_phase] - 1
        if n in self.schedule:  # a stream node: no write stage; it writes a cycle behind each step
            k = s.next_phase
            start = (all(self.level[e] - (self.pop[e][s.r_phase] if r_last else 0) >= self.pop[e][k] for e in self.ins[n])
                     and all(self.capacity[e] - self.level[e] - self.owed[e] >= self.push[e][k] for e in self.outs[n])
                     and (not s.r_busy or r_last) and all(self.started[n] < self.limit[r] - 1 for r in self.credits[n]))
            writes = set(self.schedule[n][s.d_phase][s.d_step]) if s.d_valid else set()
            if s.e_valid:
                writes |= set(self.report[n][s.e_phase])
            return start, r_last, False, False, False, writes
        landing = s.d_valid and s.d_last
        w_done = s.w_busy and (s.w_step == self.writes[n][s.w_phase] - 1 if self.outs[n] else True)
        taking = (not s.w_busy or w_done) and (s.skid > 0 or landing)
        k = s.next_phase
        start = (all(self.level[e] - (self.pop[e][s.r_phase] if r_last else 0) >= self.peek[e][k] for e in self.ins[n])
                 and all(self.capacity[e] - self.level[e] - self.owed[e] >= self.push[e][k] for e in self.outs[n])
                 and (not s.r_busy or r_last) and s.inflight - taking <= 1
                 and all(self.started[n] < self.limit[r] - 1 for r in self.credits[n]))
        writes = {e for e in self.outs[n] if s.w_busy and s.w_step < self.push[e][s.w_phase]}
        return start, r_last, landing, taking, w_done, writes


@dataclass(frozen=True)
class HardwareThroughput:
    """``iterations_per_cycle`` in the periodic regime, which starts at cycle ``transient`` and repeats every
    ``period`` cycles; ``deadlocked`` when the hardware stops (then the rate is 0)."""

    iterations_per_cycle: Fraction
    period: int
    transient: int
    deadlocked: bool = False

    def firings_per_cycle(self, reps: dict[str, int], node: str) -> Fraction:
        return self.iterations_per_cycle * reps[node]


def hardware_throughput(network, capacities: dict[str, int] | None = None, *, tables: list | None = None,
                        max_cycles: int = 1 << 24) -> HardwareThroughput:
    """The generated hardware's iterations per cycle with the spec's capacities (``capacities`` overrides
    some), every source always allowed and every sink always ready: :class:`Pipeline` run to its first
    repeated state."""
    reps = repetitions(network)
    pipeline = Pipeline(network, capacities, tables)
    reference = min(pipeline.names, key=lambda n: reps[n])
    # the state is looked up where the reference's firings end (and while nothing ends, every so often): a
    # periodic execution in which it fires passes those states again, one period on (the node that fires
    # least often, so the states looked up are few)
    seen: dict[tuple, tuple[int, int]] = {}
    done = quiet = 0
    for t in range(max_cycles):
        if quiet == 0 or quiet % 4096 == 0:
            key = pipeline.key()
            if key in seen:
                start, before = seen[key]
                if done == before:
                    return HardwareThroughput(Fraction(0), t - start, start, deadlocked=True)
                return HardwareThroughput(Fraction(done - before, reps[reference]) / (t - start), t - start, start)
            seen[key] = (t, done)
        fired = pipeline.step().count(reference)
        done += fired
        quiet = 0 if fired else quiet + 1
    raise SDFError(f"no state repeats within {max_cycles} cycles", "report it as a bug")


def longest_firing(network) -> int:
    """The most cycles one firing spends in the read and write stages (``P + U``, its largest peek and push):
    what the cosim's watchdog and the device's quiet bound allow twice over (the manifest carries it)."""
    pipeline = Pipeline(network)
    return max(pipeline.reads[n][k] + pipeline.writes[n][k] for n in pipeline.names for k in range(pipeline.count[n]))


def node_bound(network) -> Fraction:
    """The most iterations per cycle any schedule of the hardware can give: each node starts a firing at most
    every ``max(P, U)`` cycles (its read and write stages), so an iteration takes it at least the sum over
    its firings of an iteration."""
    pipeline = Pipeline(network)
    cycles = max(Fraction(sum(max(pipeline.reads[n][k], pipeline.writes[n][k]) for k in range(pipeline.count[n]))
                          * pipeline.reps[n], pipeline.count[n]) for n in pipeline.names)
    return 1 / cycles


def _roomy(network, tables: list) -> tuple[dict[str, int], Fraction]:
    """Capacities no channel of the hardware waits on, and the throughput with them: doubled from three
    times :func:`ample`'s until the throughput stops growing (three firings' worth is what a channel of
    equal push and pop needs), or at once where it is :func:`node_bound`, which no capacity passes."""
    caps = {e.name: 3 * ample(network, e) + 8 for e in network.edges}
    rate = hardware_throughput(network, caps, tables=tables).iterations_per_cycle
    if rate == node_bound(network):
        return caps, rate
    for _ in range(8):
        wider = {name: 2 * c for name, c in caps.items()}
        more = hardware_throughput(network, wider, tables=tables).iterations_per_cycle
        if more == rate:
            return caps, rate
        caps, rate = wider, more
    raise SDFError("the hardware's throughput still grows with capacities 768 times ample", "report it as a bug")


@dataclass(frozen=True)
class FullRate:
    """The iterations per cycle the nodes allow (no capacity limiting) and the least capacities that reach
    it, each edge's least with the others roomy (``least``: together they reach it; otherwise raised until
    they do, enough but maybe not the least)."""

    iterations_per_cycle: Fraction
    capacities: dict[str, int]
    least: bool


def _upstream_first(network) -> list:
    """The edges by their sender's depth from the sources (feedback edges last)."""
    import networkx as nx

    graph = nx.DiGraph([(e.src, e.dst) for e in network.edges if not e.initial])
    graph.add_nodes_from(n.name for n in network.nodes)
    depth = {}
    for n in nx.topological_sort(graph) if nx.is_directed_acyclic_graph(graph) else graph.nodes:
        depth[n] = max([depth.get(p, 0) + 1 for p in graph.predecessors(n) if p in depth], default=0)
    return sorted(network.edges, key=lambda e: (bool(e.initial), depth[e.src]))


def full_rate_capacities(network) -> FullRate:
    """Each edge's least capacity at which the hardware runs at the rate the nodes allow, the other edges
    roomy: bisection (throughput only grows with a capacity); then, if together they fall short, the edge
    whose raise gains most is doubled towards its roomy capacity until the rate is reached."""
    tables = route_tables(network)
    roomy, target = _roomy(network, tables)
    sized = dict(roomy)
    for e in _upstream_first(network):  # sized edges upstream keep the channels that fill while testing short
        low = firing_capacity(network, e)

        def fast(capacity, name=e.name):
            return hardware_throughput(network, sized | {name: capacity}, tables=tables).iterations_per_cycle == target

        high = roomy[e.name]
        if fast(low):
            sized[e.name] = low
            continue
        while high - low > 1:  # fast at high, not at low
            middle = (low + high) // 2
            low, high = (low, middle) if fast(middle) else (middle, high)
        sized[e.name] = high
    least = True
    while (rate := hardware_throughput(network, sized, tables=tables).iterations_per_cycle) < target:
        least = False
        gains = {name: hardware_throughput(network, sized | {name: min(2 * c, roomy[name])}, tables=tables).iterations_per_cycle
                 for name, c in sized.items() if c < roomy[name]}
        best = max(gains, key=lambda name: (gains[name], -sized[name]))
        if gains[best] <= rate:  # no single raise gains: raise them all
            sized = {name: min(2 * c, roomy[name]) for name, c in sized.items()}
        else:
            sized[best] = min(2 * sized[best], roomy[best])
    return FullRate(target, sized, least)

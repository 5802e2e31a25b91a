"""Synchronous dataflow (004 Sec. 3): phases, the repetition vector, pull schedules and SDEP.

An edge's ``push`` and ``pop`` (and ``peek``) are integers or one entry per *phase* of that end's node
(cyclo-static rates, as StreamIt's round-robin splitters and joiners need); a node's phase count is the
common length of its lists, and one *firing* is one phase, as 004 counts (SDEP and repetitions count
phases). Pure functions over :class:`sfdf.gen.model.Network`; ``initial`` items count as already
produced.

- :func:`phases`: each node's phase count (one-line :class:`SDFError` when a node's lists disagree).
- :func:`repetitions`: the steady state's firings per node, the least positive solution of the balance
  equations (Lee and Messerschmitt, cited by 004), or the edge where no solution exists.
- :func:`pull_schedule`: 004's Algorithm (Fig. "Pull scheduling"): the firings that let a node fire ``n``
  times with every other node firing as few times as possible.
- :func:`sdep`: ``SDEP_{A<-B}(1..n)`` by 004 Thm. 1, ``|pullSchedule(B, n) ^ A|``; 0 where no directed
  path runs from A to B.
"""

from __future__ import annotations

import math
from collections import defaultdict
from fractions import Fraction

import networkx as nx

__all__ = ["SDFError", "Simulation", "edge_rates", "phases", "pull_counts", "pull_schedule", "repetitions", "sdep"]


class SDFError(ValueError):
    """Rates with no steady state, phase lists that disagree, a cycle that starves, a message that cannot
    be timed: one line, ``<where>: <problem>; <fix>``.

    ``where`` is ``("edge", name, key)``, ``("node", name, key)`` or ``("message", index, key)`` (``key``
    the spec field, or None) so that the spec parser can point at the line; None for the network.
    """

    def __init__(self, problem: str, fix: str, where: tuple | None = None):
        self.problem, self.fix, self.where = problem, fix, where
        super().__init__(f"{_where(where)}: {problem}; {fix}" if where else f"{problem}; {fix}")


def _where(where: tuple) -> str:
    kind, name, key = where
    text = {"edge": f"edge {name}", "node": f'node "{name}"', "message": f"message[{name}]"}[kind]
    return f"{text}.{key}" if key else text


def _rates(value, count: int) -> tuple[int, ...]:
    return tuple(value) if isinstance(value, tuple | list) else (value,) * count


def phases(network) -> dict[str, int]:
    """Phase count of every node: the common length of its edges' per-phase lists (1 without lists)."""
    lengths: dict[str, dict[int, str]] = defaultdict(dict)
    for e in network.edges:
        for node, values in ((e.src, [e.push]), (e.dst, [e.pop, e.peek])):
            for value in values:
                if isinstance(value, tuple | list):
                    lengths[node].setdefault(len(value), e.name)
    result = {}
    for n in network.nodes:
        seen = lengths.get(n.name, {})
        if len(seen) > 1:
            (a, ea), (b, eb) = list(seen.items())[:2]
            raise SDFError(f"edge {ea} lists {a} phases and edge {eb} {b}", "give every list of one node the same "
                           "length", ("edge", eb, None))
        result[n.name] = next(iter(seen), 1)
    return result


def edge_rates(e, count: dict[str, int]):
    """``(push per sender phase, pop per receiver phase, peek per receiver phase)``."""
    push = _rates(e.push, count[e.src])
    pop = _rates(e.pop, count[e.dst])
    peek = pop if e.peek is None else _rates(e.peek, count[e.dst])
    return push, pop, peek


def repetitions(network) -> dict[str, int]:
    """Firings of each node in one steady state: the least positive integers with, on every edge, items
    pushed equal to items popped (a node's firings a multiple of its phases). Each set of nodes joined
    by edges that carry items is solved on its own. :class:`SDFError` names an edge whose balance cannot
    hold."""
    count = phases(network)
    graph = nx.MultiGraph()
    graph.add_nodes_from(n.name for n in network.nodes)
    for e in network.edges:
        graph.add_edge(e.src, e.dst, key=e.name, edge=e)
    cycles: dict[str, Fraction] = {}  # full phase cycles per steady state, relative within a group
    result: dict[str, int] = {}
    for start in sorted(graph.nodes):
        if start in cycles:
            continue
        cycles[start] = Fraction(1)
        group = [start]
        for node in group:
            for _, other, data in graph.edges(node, data=True):
                e = data["edge"]
                push, pop, _ = edge_rates(e, count)
                produced, consumed = sum(push), sum(pop)
                if produced == 0 or consumed == 0:
                    if produced != consumed:
                        raise SDFError(f"{e.src} pushes {produced} and {e.dst} pops {consumed} items per phase "
                                       "cycle: no steady state", "make both nonzero", ("edge", e.name, None))
                    continue
                ratio = Fraction(produced, consumed)  # cycles(dst) = cycles(src) * produced / consumed
                want = cycles[node] * ratio if node == e.src else cycles[node] / ratio
                if other not in cycles:
                    cycles[other] = want
                    group.append(other)
                elif cycles[other] != want:
                    raise SDFError("the rates are inconsistent (no repetition vector: the balance of "
                                   f"{e.src} and {e.dst} contradicts another path between them)", "fix push or pop",
                                   ("edge", e.name, None))
        scale = math.lcm(*(cycles[n].denominator for n in group))  # the group's least integer solution
        whole = {n: int(cycles[n] * scale) for n in group}
        common = math.gcd(*whole.values())
        result.update({n: whole[n] // common * count[n] for n in group})
    return {n.name: result[n.name] for n in network.nodes}


class Simulation:
    """Items on every edge and each node's next phase (004: initial items already produced)."""

    def __init__(self, network):
        self.count = phases(network)
        self.rates = {e.name: edge_rates(e, self.count) for e in network.edges}
        self.items = {e.name: e.initial for e in network.edges}
        self.fired = defaultdict(int)
        self.ins = defaultdict(list)
        self.outs = defaultdict(list)
        for e in network.edges:
            self.ins[e.dst].append(e)
            self.outs[e.src].append(e)

    def phase(self, node: str) -> int:
        return self.fired[node] % self.count[node]

    def short(self, node: str):
        """An input edge without enough items for ``node``'s next phase, or None."""
        k = self.phase(node)
        for e in self.ins[node]:
            if self.items[e.name] < self.rates[e.name][2][k]:
                return e
        return None

    def fire(self, node: str) -> None:
        k = self.phase(node)
        for e in self.ins[node]:
            self.items[e.name] -= self.rates[e.name][1][k]
        for e in self.outs[node]:
            self.items[e.name] += self.rates[e.name][0][k]
        self.fired[node] += 1


def _pull(sim: Simulation, node: str, schedule: list[str]) -> None:
    """One firing of ``node``, pulling its predecessors first (004's ``pullSchedule(X, 1)``), with an
    explicit stack (a chain of a thousand actors is a thousand nested pulls). A node that its own pull
    reaches again depends on its own next firing: a cycle without enough initial items (it starves)."""
    stack = [[node, None, 0, 0]]  # [actor, edge it last pulled for, items then, pulls without a change]
    waiting = {node}
    while stack:
        level = stack[-1]
        actor = level[0]
        edge = sim.short(actor)
        if edge is None:
            sim.fire(actor)
            schedule.append(actor)
            stack.pop()
            waiting.discard(actor)
            continue
        if level[1] is edge and sim.items[edge.name] == level[2]:
            level[3] += 1
            if level[3] > sim.count[edge.src]:  # a phase of the sender may push nothing here, not all
                raise SDFError(f"{edge.src} never pushes on it, so {actor} never fires", "give it a phase that "
                               "pushes", ("edge", edge.name, "push"))
        else:
            level[1:] = [edge, sim.items[edge.name], 0]
        if edge.src in waiting:
            path = [lvl[0] for lvl in stack[[lvl[0] for lvl in stack].index(edge.src):]] + [edge.src]
            raise SDFError(f"directed cycle {' -> '.join(reversed(path))} starves: each waits for the next",
                           "add initial items on one of its edges", ("edge", edge.name, "initial"))
        stack.append([edge.src, None, 0, 0])
        waiting.add(edge.src)


def pull_schedule(network, node: str, n: int) -> list[str]:
    """004's pull schedule for ``n`` firings of ``node``: for each, while some input lacks the items its
    next phase needs (``peek``), pull one firing of that input's sender (recursively), then fire."""
    sim = Simulation(network)
    schedule: list[str] = []
    for _ in range(n):
        _pull(sim, node, schedule)
    return schedule


def pull_counts(network, node: str):
    """Endless pull schedule of ``node``: after each of its firings, yield every node's firings so far
    (a dict, shared: copy what you keep). By 004 Thm. 1 the count of an actor ``Y`` after ``n`` firings
    is ``SDEP_{Y<-node}(n)``."""
    sim = Simulation(network)
    schedule: list[str] = []
    while True:
        _pull(sim, node, schedule)
        schedule.clear()
        yield sim.fired


def sdep(network, upstream: str, downstream: str, n: int) -> list[int]:
    """``[SDEP_{upstream<-downstream}(1), ..., (n)]``: the fewest firings of ``upstream`` that let
    ``downstream`` fire ``k`` times (004 Def. SDEP, Thm. 1); zeros where no directed path joins them."""
    graph = nx.MultiDiGraph((e.src, e.dst) for e in network.edges)
    graph.add_nodes_from(x.name for x in network.nodes)
    if upstream == downstream or not nx.has_path(graph, upstream, downstream):
        return [0] * n
    sim = Simulation(network)
    schedule: list[str] = []
    result = []
    for _ in range(n):
        _pull(sim, downstream, schedule)
        result.append(sim.fired[upstream])
    return result

"""Constrained scheduling (004 Fig. "Constrained scheduling algorithm"): a schedule of the whole network
that delivers every teleport message in time, split into initialization and steady state, with the
buffer sizes it needs.

004's ``constrainedSchedule(X)`` is a pull schedule of one firing of ``X`` that first fires, recursively,
every actor whose data ``X`` needs and every actor that might still send ``X`` a message due before
that firing (:meth:`sfdf.gen.sdf.messages.Deliveries.required_sends`); finding ``X`` on its own call
stack means the message constraints are unsatisfiable (an actor's firing depends on itself). A stack
cycle made only of data edges is a cycle without enough initial items: the network starves (no
schedule at all), which is an invalid spec rather than an unsatisfiable message set.

The network is driven by firing, each step, the actor furthest behind its repetitions (least
``fired / r``, spec order breaking ties). 004 then cuts the sequence into "whatever is leftover before
the first steady-state execution" and a steady state: a segment after which every actor has fired
exactly its repetitions more, so every channel holds what it held. Here a segment counts as the steady
state once the next segment repeats it firing for firing.

Capacities do not constrain the schedule (SDEP is capacity-free, 004); the schedule's peak occupancy
of each edge is the buffer size it needs, and an edge whose capacity is smaller makes the set
unsatisfiable *with the given capacities*. The schedule is a pull schedule, firing an actor only when
a data or message dependence asks for it, so its buffers are the least any such schedule needs
(004: "derives a fine-grained schedule with minimal latency").
"""

from __future__ import annotations

from dataclasses import dataclass, field
from fractions import Fraction

from .messages import Deliveries
from .rates import SDFError, Simulation, repetitions

__all__ = ["Schedule", "Unsatisfiable", "constrained_schedule"]


class Unsatisfiable(SDFError):
    """The messages' latencies cannot all be met (004 "Unsatisfiable Constraints"): ``path`` is the
    dependence cycle, each step ``(actor, why it needs the next)``."""

    def __init__(self, text: str, path: list[tuple[str, str]]):
        super().__init__(text, "widen a latency or remove a message (004 \"Unsatisfiable Constraints\")")
        self.path = path


@dataclass
class Schedule:
    """A constrained schedule (004) and what it needs.

    Members
    -------
    repetitions : dict
        Firings per node in one steady state.
    initialization, steady : list of str
        Firings, in order: once, then repeated forever.
    buffers : dict
        Most items each edge holds during initialization and two steady states (peeked items included).
    over : list of (edge, needed, capacity)
        Edges whose capacity is below what the schedule needs.
    """

    repetitions: dict[str, int]
    initialization: list[str]
    steady: list[str]
    buffers: dict[str, int]
    over: list[tuple[str, int, int]] = field(default_factory=list)

    @property
    def fits(self) -> bool:
        return not self.over


class _Scheduler:
    def __init__(self, network, held: bool):
        self.network = network
        self.held = held
        self.sim = Simulation(network)
        self.deliveries = Deliveries(network)
        self.fired: list[str] = []
        self.stack: list[tuple[str, str]] = []  # (actor, why it was called)
        self.peak = {e.name: e.initial for e in network.edges}

    def fire(self, node: str, why: str) -> None:
        """``constrainedSchedule(node)``: one firing of ``node`` and whatever it depends on."""
        for depth, (actor, _) in enumerate(self.stack):
            if actor == node:
                self._cycle(self.stack[depth:] + [(node, why)])
        self.stack.append((node, why))
        sim = self.sim
        while True:
            edge = sim.short(node)
            if edge is not None:  # data dependences (004's pull)
                before, idle = sim.items[edge.name], 0
                while sim.items[edge.name] == before:  # a phase of the sender may push nothing here
                    self.fire(edge.src, f"edge {edge.name}")
                    idle += 1
                    if idle > sim.count[edge.src]:
                        raise SDFError(f"{edge.src} never pushes on it, so {node} never fires",
                                       "give it a phase that pushes", ("edge", edge.name, "push"))
                continue
            late = next(((route, need) for route in self.deliveries.by_receiver.get(node, ())
                         if sim.fired[route.sender] < (need := self.deliveries.required_sends(route, sim.fired[node], held=self.held))),
                        None)
            if late is None:
                break
            route, need = late  # message dependences: the sender must first send what is due here
            while sim.fired[route.sender] < need:
                self.fire(route.sender, route.describe())
        sim.fire(node)
        self.fired.append(node)
        for e in sim.outs[node]:
            self.peak[e.name] = max(self.peak[e.name], sim.items[e.name])
        self.stack.pop()

    def _cycle(self, path: list[tuple[str, str]]) -> None:
        steps = [f"{actor} waits for {path[k + 1][0]} ({path[k + 1][1]})" for k, (actor, _) in enumerate(path[:-1])]
        if all(why.startswith("edge ") for _, why in path[1:]):
            edge = path[-1][1].removeprefix("edge ")
            raise SDFError(f"directed cycle {' -> '.join(a for a, _ in reversed(path))} starves ({', '.join(steps)})",
                           "add initial items on one of its edges", ("edge", edge, "initial"))
        raise Unsatisfiable("unsatisfiable message constraints: " + ", ".join(steps), path[1:])


def constrained_schedule(network, *, held: bool = False, max_steady_states: int = 64) -> Schedule:
    """004's constrained schedule of ``network`` (see the module docstring); :class:`Unsatisfiable` when
    the messages' latencies cannot be met, :class:`SDFError` when the rates have no steady state or a
    cycle starves. ``held``: every message delivered at its latency's ``min`` point, as the model delivers
    it (:meth:`sfdf.gen.sdf.messages.Deliveries.required_sends`), not anywhere in its range."""
    reps = repetitions(network)
    order = [n.name for n in network.nodes]
    s = _Scheduler(network, held)
    seen: dict[tuple, int] = {}  # fired counts at a step -> schedule length then
    total = sum(reps.values())
    while len(s.fired) <= max_steady_states * total:
        counts = tuple(s.sim.fired[n] for n in order)
        here = len(s.fired)
        back = tuple(c - reps[n] for c, n in zip(counts, order, strict=True))
        if back in seen:
            start = seen[back]
            earlier = tuple(c - reps[n] for c, n in zip(back, order, strict=True))
            if earlier in seen and s.fired[seen[earlier]:start] == s.fired[start:here]:
                begin = seen[earlier]
                return _finish(network, reps, s, begin, start)
        seen[counts] = here
        node = min(order, key=lambda n: Fraction(s.sim.fired[n], reps[n]))
        s.fire(node, "the schedule")
    raise SDFError(f"no periodic schedule within {max_steady_states} steady states", "report it as a bug")


def _finish(network, reps, s: _Scheduler, begin: int, end: int) -> Schedule:
    buffers = dict(s.peak)
    over = [(e.name, buffers[e.name], e.capacity) for e in network.edges if buffers[e.name] > e.capacity]
    return Schedule(repetitions=reps, initialization=s.fired[:begin], steady=s.fired[begin:end],
                    buffers=buffers, over=over)

"""The SDF reference model (004): an execution of an SDF network under any valid schedule that delivers
every teleport message at exactly the firing 004's rules name.

Messages: each ``[[message]]`` is sent at the firings of its sender that its kernel decides to send at
(the SDF test kernel: every firing by default, as 004's constraints assume, or with ``params = { send = p
}`` a seeded chance ``p``; the radio's detectors when they see a hop), to every receiver of its portal,
carrying the kernel's payload (the SDF test kernel's: the sender's firing number ``n``). Delivery points come from
:class:`sfdf.gen.sdf.messages.Deliveries` (004 Def. "Message delivery"): a downstream receiver runs
the handler immediately before its ``m``-th firing, an upstream one immediately after its ``m``-th. With
a latency range the message is delivered at the ``min`` latency's point: the receiver waits there for
the message, so every schedule delivers it at the same firing; a firing
sequence that lets the receiver pass that point before the message exists is refused
(:class:`LateMessage`).

Every node runs its kernel's golden (:mod:`sfdf.gen.sdf.kernels`; by default the SDF test kernel,
:class:`sfdf.gen.goldens.SDFTest`, docs/semantics.md, "SDF networks"): its ``f``-th firing (from 1) reads the
``peek`` window of each input edge in spec order (a source: the firing's word) and gives the items of
each output edge; a sink records its one value per firing. A message's handler is the golden's
``message``. A source's words are the caller's, or :func:`sfdf.gen.sdf.kernels.source_words`.

Schedules (:func:`run_sdf`): ``"constrained"`` (004's constrained schedule), ``"random"`` (any node
whose data and message dependences are met, chosen by a seeded generator), ``"eager"`` (adversarial:
the node furthest ahead of its repetitions, so buffers fill and receivers run as early as the
constraints let them). All run to the same firing counts, so by Kahn's determinism and exact delivery
they give the same outputs.
"""

from __future__ import annotations

import random
from dataclasses import dataclass, field
from fractions import Fraction

from .kernels import golden, source_words
from .messages import DOWNSTREAM, Deliveries, Route
from .rates import SDFError, edge_rates, phases, repetitions
from .schedule import constrained_schedule

__all__ = ["SCHEDULES", "Delivery", "LateMessage", "SDFRun", "run_sdf"]

SCHEDULES = ("constrained", "random", "eager")


class LateMessage(SDFError):
    """The schedule let a receiver pass a message's delivery point before the message was sent."""


@dataclass(frozen=True)
class Delivery:
    """One message delivered: sent at the sender's ``n``-th firing, handled ``when`` ("before" or
    "after") the receiver's ``firing``-th firing."""

    message: int
    sender: str
    n: int
    receiver: str
    when: str
    firing: int


@dataclass
class SDFRun:
    """What :func:`run_sdf` did: the firings in order, each sink's values, every delivery, and the messages
    still pending when a run of ``source_firings`` ended (each a :class:`Delivery` at the point it was due,
    which its receiver did not reach)."""

    firings: list[str]
    outputs: dict[str, list[int]]
    deliveries: list[Delivery] = field(default_factory=list)
    pending: list[Delivery] = field(default_factory=list)

    def deliveries_json(self, pending: bool = False) -> list[dict]:
        """Each delivery (or pending message) as ``sfdf simulate --json`` and ``sfdf cosim --json`` report it:
        ``message`` (the 0-based index of its ``[[message]]``), ``from``, ``to``, ``sent`` and ``handled``
        (firings from 1), ``side`` ("before" or "after" the handled firing)."""
        return [{"message": d.message, "from": d.sender, "to": d.receiver, "sent": d.n, "handled": d.firing,
                 "side": d.when} for d in (self.pending if pending else self.deliveries)]


class _Execution:
    def __init__(self, network, deliveries: Deliveries, words=None):
        self.count = phases(network)
        self.rates = {e.name: edge_rates(e, self.count) for e in network.edges}
        self.items = {e.name: [0] * e.initial for e in network.edges}  # initial items are zeros
        self.fired = dict.fromkeys(self.count, 0)
        self.kernels = {n.name: golden(n) for n in network.nodes}
        self.words = dict(words or {})
        self.given = set(self.words)
        self.nodes = {n.name: n for n in network.nodes}
        self.ins = {n: network.in_edges(n) for n in self.count}
        self.outs = {n: network.out_edges(n) for n in self.count}
        self.deliveries = deliveries
        # per receiver: (route, n, min point, payload)
        self.pending: dict[str, list[tuple[Route, int, int, int]]] = {n: [] for n in self.count}
        self.log: list[Delivery] = []
        self.outputs = {n: [] for n in network.sinks}
        self.firings: list[str] = []

    # -- dependences ----------------------------------------------------------------------------------
    def data_ready(self, node: str) -> bool:
        k = self.fired[node] % self.count[node]
        return all(len(self.items[e.name]) >= self.rates[e.name][2][k] for e in self.ins[node])

    def room_ready(self, node: str) -> bool:
        """Every output edge has room (its capacity minus the items on it) for what the next firing pushes."""
        k = self.fired[node] % self.count[node]
        return all(e.capacity - len(self.items[e.name]) >= self.rates[e.name][0][k] for e in self.outs[node])

    def messages_ready(self, node: str) -> bool:
        return all(self.fired[r.sender] >= self.deliveries.required_sends(r, self.fired[node], held=True)
                   for r in self.deliveries.by_receiver.get(node, ()))

    # -- firing ------------------------------------------------------------------------------------------
    def fire(self, node: str) -> None:
        f = self.fired[node] + 1
        self._deliver(node, "before", f)
        k = (f - 1) % self.count[node]
        kernel = self.kernels[node]
        windows = [self.items[e.name][: self.rates[e.name][2][k]] for e in self.ins[node]]
        if not self.ins[node] and kernel.READS_WORD:
            windows = [[self._word(node, f)]]
        pushes = [self.rates[e.name][0][k] for e in self.outs[node]] or [1]
        produced = kernel.fire(windows, f, pushes)
        for e in self.ins[node]:
            del self.items[e.name][: self.rates[e.name][1][k]]
        for e, items in zip(self.outs[node], produced):
            self.items[e.name].extend(items)
        if node in self.outputs:
            self.outputs[node].append(produced[0][0])
        self.fired[node] = f
        self.firings.append(node)
        self._deliver(node, "after", f)
        payload = kernel.send()
        if payload is not None:
            self._send(node, f, payload)

    def _word(self, node: str, f: int) -> int:
        words = self.words.get(node)
        if words is not None and len(words) < f and node in self.given:
            raise ValueError(f"{node} fires {f} times, yet was given {len(words)} words")
        if words is None or len(words) < f:  # the default stimulus (a longer one starts alike)
            words = self.words[node] = source_words(self.nodes[node], max(2 * f, 4096))
        return words[f - 1]

    def _send(self, sender: str, n: int, payload: int) -> None:
        for route in self.deliveries.by_sender.get(sender, ()):
            low = self.deliveries.point(route, n, route.latency[0])
            when = "before" if route.direction == DOWNSTREAM else "after"
            reached = self.fired[route.receiver] + (1 if when == "before" else 0)  # the next point it reaches
            if reached > low:
                raise LateMessage(f"{route.receiver} passed the point {when} its firing {low} of {route.describe()} "
                                  f"sent at {sender}'s firing {n}", "use a schedule that meets the constraints "
                                  "(sfdf schedule)")
            self.pending[route.receiver].append((route, n, low, payload))
            if when == "after" and reached >= low:  # immediately after the firing that just completed
                self._deliver(route.receiver, "after", self.fired[route.receiver])

    def _deliver(self, node: str, when: str, firing: int) -> None:
        """Run the handlers due ``when`` (before or after) ``node``'s ``firing``: every pending message
        of that kind whose ``min`` point it is (points are visited in order, and :meth:`_send` refuses a
        message sent after its point)."""
        keep = []
        for item in self.pending[node]:
            route, n, low, payload = item
            if ("before" if route.direction == DOWNSTREAM else "after") != when or firing < low:
                keep.append(item)
                continue
            self.kernels[node].message(payload)
            self.log.append(Delivery(route.message, route.sender, n, node, when, firing))
        self.pending[node] = keep


def run_sdf(network, *, steady_states: int = 2, schedule: str = "constrained", seed: int = 0,
            firings=None, source_firings: int | None = None, bounded: bool = False, words=None) -> SDFRun:
    """Run ``network``'s initialization and ``steady_states`` steady states (of 004's constrained
    schedule: the same firing counts whatever ``schedule`` orders them by); or, with ``source_firings``,
    every source (a node without inputs) that many times and every other node as long as its items and
    messages let it (``schedule`` then picks among the nodes that can fire: the one furthest behind its
    repetitions, a random one, or the one furthest ahead; a persistent system, so all end alike); or
    exactly the sequence ``firings`` when given (:class:`LateMessage` if it makes a message late,
    :class:`SDFError` if a node fires without its items). ``bounded`` (with ``source_firings``): a node
    also needs room on its outputs for its pushes, the edges' capacities bounding the run as in the
    hardware (docs/semantics.md, "Bounded channels"; still persistent, so every order ends alike).
    ``words``: ``{source: words}``, one word per firing (a source not in it is fed
    :func:`sfdf.gen.sdf.kernels.source_words`)."""
    if schedule not in SCHEDULES:
        raise ValueError(f"schedule must be one of {', '.join(SCHEDULES)}, not {schedule!r}")
    deliveries = Deliveries(network)
    run = _Execution(network, deliveries, words)
    if source_firings is not None:
        return _run_sources(network, run, source_firings, schedule, seed, bounded)
    if firings is not None:
        for node in firings:
            if not run.data_ready(node):
                raise SDFError(f"fires without the items its phase needs (firing {run.fired[node] + 1})",
                               "fire its senders first", ("node", node, None))
            run.fire(node)
        return SDFRun(firings=run.firings, outputs=run.outputs, deliveries=run.log)
    plan = constrained_schedule(network, held=True)
    order = plan.initialization + plan.steady * steady_states
    if schedule == "constrained":
        for node in order:
            run.fire(node)
    else:
        target = {n: 0 for n in run.fired}
        for node in order:
            target[node] += 1
        pick = _picker(schedule, seed, run, plan.repetitions)
        while run.fired != target:
            ready = [n for n in target if run.fired[n] < target[n] and run.data_ready(n) and run.messages_ready(n)]
            if not ready:
                raise SDFError("the schedule is stuck before its firing counts", "report it as a bug")
            run.fire(pick(ready))
    return SDFRun(firings=run.firings, outputs=run.outputs, deliveries=run.log)


def _run_sources(network, run: _Execution, count: int, schedule: str, seed: int, bounded: bool) -> SDFRun:
    sources = {n for n in run.count if not run.ins[n]}
    if not sources:
        raise SDFError("has no source (every node has an input), so no count of source firings ends it",
                       "run its steady states instead")
    pick = _picker(schedule, seed, run, repetitions(network))
    while ready := [n for n in run.count if (n not in sources or run.fired[n] < count) and run.data_ready(n)
                    and run.messages_ready(n) and (not bounded or run.room_ready(n))]:
        run.fire(pick(ready))
    pending = [Delivery(route.message, route.sender, n, node, "before" if route.direction == DOWNSTREAM else "after",
                        low) for node, items in run.pending.items() for route, n, low, _ in items]
    return SDFRun(firings=run.firings, outputs=run.outputs, deliveries=run.log, pending=pending)


def _picker(schedule: str, seed: int, run: _Execution, reps: dict[str, int]):
    """Which of the nodes that can fire fires next: a random one (seeded), the one furthest ahead of its
    repetitions (eager), or the one furthest behind (constrained, 004's driver); spec order breaks ties."""
    if schedule == "random":
        return random.Random(seed).choice
    order = {n: k for k, n in enumerate(run.count)}

    def ahead(n):
        return Fraction(run.fired[n], reps[n]), -order[n]
    return (lambda ready: max(ready, key=ahead)) if schedule == "eager" else (lambda ready: min(ready, key=ahead))

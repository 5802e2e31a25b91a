"""Throughput of an SDF network's self-timed execution with bounded channels, by state-space exploration
(Stuijk, Geilen and Basten, "Throughput-Buffering Trade-Off Exploration for Cyclo-Static and Synchronous
Dataflow Graphs", IEEE TC 2008: SDF3's throughput analysis).

The timed execution: a node's firing in phase ``k`` takes ``durations[node][k]`` cycles (at least 1) and
starts, as soon as the node is idle (one firing at a time: no auto-concurrency), once every input holds the
items the phase peeks and every output has room for what it pushes (liveness's rule,
:mod:`sfdf.gen.sdf.liveness`). At the start it takes its ``pop`` items off each input and claims room for
its ``push`` items on each output; at the end the pushed items appear and the popped items' room is
freed. Every node starts whenever it can (self-timed), so the execution is deterministic; its state (the
items and free room of every edge, each node's phase and the cycles left of its firing) has finitely many
values, so it repeats, and from the first repetition on the execution is periodic. The throughput is the
iterations (repetition vectors) per cycle over that period: :func:`self_timed_throughput`. Messages are
not modelled here.
"""

from __future__ import annotations

from dataclasses import dataclass
from fractions import Fraction

from .rates import SDFError, edge_rates, phases, repetitions

__all__ = ["Throughput", "self_timed_throughput"]


@dataclass(frozen=True)
class Throughput:
    """``iterations_per_cycle`` in the periodic regime, which starts at cycle ``transient`` and repeats every
    ``period`` cycles; ``deadlocked`` when the execution stops (then the rate is 0)."""

    iterations_per_cycle: Fraction
    period: int
    transient: int
    deadlocked: bool = False

    def firings_per_cycle(self, reps: dict[str, int], node: str) -> Fraction:
        return self.iterations_per_cycle * reps[node]


def self_timed_throughput(network, durations: dict[str, tuple[int, ...]], capacities: dict[str, int] | None = None,
                          *, max_cycles: int = 1 << 26) -> Throughput:
    """The self-timed execution of the module docstring with ``durations`` (node -> cycles per phase; one
    entry repeats) and the spec's capacities (``capacities`` overrides some)."""
    count = phases(network)
    reps = repetitions(network)
    caps = {e.name: e.capacity for e in network.edges} | dict(capacities or {})
    names = [n.name for n in network.nodes]
    edges = list(network.edges)
    rates = {e.name: edge_rates(e, count) for e in edges}
    ins = {n: network.in_edges(n) for n in names}
    outs = {n: network.out_edges(n) for n in names}
    time_of = {}
    for n in names:
        d = tuple(durations[n]) if isinstance(durations[n], tuple | list) else (durations[n],)
        if any(x < 1 for x in d):
            raise SDFError(f"a firing of {n} takes {min(d)} cycles", "give every firing at least 1 cycle")
        time_of[n] = d if len(d) == count[n] else d * count[n] if len(d) == 1 else None
        if time_of[n] is None:
            raise SDFError(f"{n} has {count[n]} phases and {len(d)} durations", "give one per phase, or one")
    items = {e.name: e.initial for e in edges}
    room = {e.name: caps[e.name] - e.initial for e in edges}
    phase = dict.fromkeys(names, 0)
    left = dict.fromkeys(names, 0)  # cycles left of the firing under way (0: idle)
    done = dict.fromkeys(names, 0)  # completed firings
    reference = names[0]
    seen: dict[tuple, tuple[int, int]] = {}
    t = 0
    while t <= max_cycles:
        for n in names:  # starts (independent: a start only takes what its own node consumes or fills)
            if left[n] == 0:
                k = phase[n]
                if all(items[e.name] >= rates[e.name][2][k] for e in ins[n]) and \
                        all(room[e.name] >= rates[e.name][0][k] for e in outs[n]):
                    for e in ins[n]:
                        items[e.name] -= rates[e.name][1][k]
                    for e in outs[n]:
                        room[e.name] -= rates[e.name][0][k]
                    left[n] = time_of[n][k]
        busy = [n for n in names if left[n]]
        if not busy:
            return Throughput(Fraction(0), 0, t, deadlocked=True)
        key = (tuple(items[e.name] for e in edges), tuple(room[e.name] for e in edges),
               tuple(phase[n] for n in names), tuple(left[n] for n in names))
        if key in seen:
            start, fired = seen[key]
            iterations = Fraction(done[reference] - fired, reps[reference])
            return Throughput(iterations / (t - start), t - start, start)
        seen[key] = (t, done[reference])
        step = min(left[n] for n in busy)
        t += step
        for n in busy:
            left[n] -= step
            if left[n] == 0:  # the end: pushed items appear, popped items' room is freed
                k = phase[n]
                for e in outs[n]:
                    items[e.name] += rates[e.name][0][k]
                for e in ins[n]:
                    room[e.name] += rates[e.name][1][k]
                phase[n] = (k + 1) % count[n]
                done[n] += 1
    raise SDFError(f"no state repeats within {max_cycles} cycles", "report it as a bug")

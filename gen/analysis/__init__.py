"""Static analysis of SFDF networks (002, 003, 000): potential deadlock, intervals, safety.

Pure functions over :class:`sfdf.gen.model.Network`. The entry points:

- :func:`resolve`: every ``"auto"`` replaced by a concrete value (intervals, thresholds, control
  capacities);
- :func:`intervals`: one algorithm's intervals, for ``sfdf intervals``;
- :func:`check`: the safety report of ``sfdf check``;
- :func:`repair_output_buffers`: the smallest output-buffer reductions that make a spec safe;
- :func:`throughput_summary`: the generated hardware's throughput bound and the capacities that reach
  it, on the cycles the hardware gives (:mod:`.throughput`).

Each derives the network's :class:`~.cycles.CycleStructure` once (or takes the caller's, keyword
``cycles``) and hands it to every pass it runs.
"""

from __future__ import annotations

from dataclasses import replace

from ..model import AUTO, INTERVAL_ALGORITHMS
from .check import CheckReport, check
from .control import auto_threshold, required_control_capacity
from .cycles import CycleStructure, cycle_structure
from .dummies import naive_intervals, nonpropagation_intervals, potential_intervals, propagation_intervals
from .heartbeat import heartbeat_intervals
from .output_buffers import repair_output_buffers as _repair
from .throughput import throughput_summary

__all__ = ["ALGORITHMS", "CheckReport", "CycleStructure", "check", "cycle_structure", "intervals", "repair_output_buffers",
           "resolve", "throughput_summary"]

ALGORITHMS = INTERVAL_ALGORITHMS


def intervals(network, algorithm: str, *, cycles: CycleStructure | None = None) -> dict[str, int | None]:
    """The intervals ``algorithm`` assigns from the capacities alone (user intervals ignored).

    ``heartbeat``: 000 Sec. 4.2 by the potential LP; ``potential``: in-band dummy intervals by the same LP
    (what ``"auto"`` resolves to in-band, :func:`~.dummies.potential_intervals`); the others: 002 Sec. 3
    (errata 1, 2 corrected), kept for comparison.
    """
    cycles = cycle_structure(network, cycles)
    if algorithm == "heartbeat":
        return heartbeat_intervals(network, cycles.on_cycles)
    if algorithm == "naive":
        return naive_intervals(network)
    if algorithm == "propagation":
        return propagation_intervals(network, cycles=cycles)
    if algorithm == "nonpropagation":
        return nonpropagation_intervals(network, cycles=cycles)
    if algorithm == "potential":
        return potential_intervals(network, cycles=cycles)
    raise ValueError(f"Algorithm must be one of {', '.join(ALGORITHMS)}, not {algorithm!r}")


def _resolved_intervals(network, cycles: CycleStructure) -> dict[str, int | None]:
    given = {e.name: e.interval for e in network.edges if e.interval != AUTO}
    if len(given) == len(network.edges):
        return given
    if network.mode == "credit":
        clamp = {n: network.edge_by_name[n].capacity - 1 if iv is None else iv for n, iv in given.items()}
        chosen = heartbeat_intervals(network, cycles.on_cycles, clamp)
    elif not network.filtering:
        chosen = {e.name: None for e in network.edges}
    elif network.dummy_algorithm == "naive":
        chosen = naive_intervals(network)
    else:
        chosen = auto_dummy_intervals(network, cycles, given)
    chosen.update(given)
    return chosen


#: Undirected cycles up to which ``"auto"`` in-band also runs 002's own algorithm (exponential in general)
#: and keeps the better of it and the potential LP; beyond, the LP alone (polynomial). A biconnected
#: component with cyclomatic number ``c`` has at most ``2^c - 1`` simple cycles, which bounds the count
#: in linear time.
CYCLE_BUDGET = 2000


def _few_cycles(cycles: CycleStructure) -> bool:
    """At most :data:`CYCLE_BUDGET` undirected cycles, by the components' cyclomatic numbers."""
    edges: dict[int, int] = {}
    nodes: dict[int, set] = {}
    for e in cycles.network.edges:
        cid = cycles.components[e.name]
        edges[cid] = edges.get(cid, 0) + 1
        nodes.setdefault(cid, set()).update((e.src, e.dst))
    bound = 0
    for cid, count in edges.items():
        rank = count - len(nodes[cid]) + 1
        if rank > CYCLE_BUDGET.bit_length():
            return False
        bound += (1 << rank) - 1
    return bound <= CYCLE_BUDGET


def _total(chosen: dict[str, int | None], names) -> int:
    return sum(chosen[n] for n in names if chosen[n] is not None)


def auto_dummy_intervals(network, cycles: CycleStructure, given: dict[str, int | None]) -> dict[str, int | None]:
    """In-band ``"auto"`` for Propagation and Non-Propagation: the potential LP around the user's own
    intervals (:func:`~.dummies.potential_intervals`: polynomial, every interval at most its capacity),
    or 002's algorithm for the network's dummy algorithm when the network has at most
    :data:`CYCLE_BUDGET` undirected cycles (:func:`_few_cycles`) and it gives the larger total (it may set an interval above
    the capacity where a short branch parallels a long one, which the LP cannot; docs/semantics.md)."""
    lp = potential_intervals(network, cycles=cycles, fixed=given)
    if given or not _few_cycles(cycles):
        return lp
    paper = intervals(network, network.dummy_algorithm, cycles=cycles)
    return paper if _total(paper, cycles.on_cycles) > _total(lp, cycles.on_cycles) else lp


def resolve(network, *, cycles: CycleStructure | None = None):
    """A copy of ``network`` with every ``"auto"`` replaced (see docs/semantics.md).

    ``cycles``: the network's :class:`~.cycles.CycleStructure`, when the caller has it.
    """
    chosen = _resolved_intervals(network, cycle_structure(network, cycles))
    edges = []
    for e in network.edges:
        m = network.node_by_name[e.src].control_messages
        edges.append(replace(
            e,
            interval=chosen[e.name],
            threshold=auto_threshold(e.capacity) if e.threshold == AUTO else e.threshold,
            control_capacity=(required_control_capacity(e.capacity, m, network.live_credit)
                              if e.control_capacity == AUTO else e.control_capacity),
        ))
    return network.with_edges(edges)


def repair_output_buffers(network, *, cycles: CycleStructure | None = None) -> dict[str, int]:
    """Smallest output-buffer reductions that make an unsafe spec safe (003 Sec. 4.2)."""
    return _repair(network, cycle_structure(network, cycles).on_cycles)


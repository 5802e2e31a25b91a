"""Static analysis of SFDF networks (002, 003, 000): potential deadlock, intervals, safety.

Pure functions over :class:`sfdf.gen.model.Network`. The entry points:

- :func:`resolve`: every ``"auto"`` replaced by a concrete value (intervals, thresholds, control
  capacities);
- :func:`intervals`: one algorithm's intervals, for ``sfdf intervals``;
- :func:`check`: the safety report of ``sfdf check``;
- :func:`repair_output_buffers`: the smallest output-buffer reductions that make a spec safe.

Each derives the network's :class:`~.cycles.CycleStructure` once (or takes the caller's, keyword
``cycles``) and hands it to every pass it runs.
"""

from __future__ import annotations

from dataclasses import replace

from ..model import AUTO
from .check import CheckReport, check
from .control import auto_threshold, required_control_capacity
from .cycles import CycleStructure, cycle_structure
from .dummies import naive_intervals, nonpropagation_intervals, propagation_intervals
from .heartbeat import heartbeat_intervals
from .output_buffers import repair_output_buffers as _repair

__all__ = ["ALGORITHMS", "CheckReport", "CycleStructure", "check", "cycle_structure", "intervals", "repair_output_buffers",
           "resolve"]

ALGORITHMS = ("naive", "propagation", "nonpropagation", "heartbeat")


def intervals(network, algorithm: str, *, cycles: CycleStructure | None = None) -> dict[str, int | None]:
    """The intervals ``algorithm`` assigns from the capacities alone (user intervals ignored).

    ``heartbeat``: 000 Sec. 4.2 by the potential LP; the others: 002 Sec. 3 (errata 1, 2 corrected).
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
    else:
        chosen = intervals(network, network.dummy_algorithm, cycles=cycles)
    chosen.update(given)
    return chosen


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


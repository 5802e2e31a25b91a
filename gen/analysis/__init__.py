"""Static analysis of SFDF networks (002, 003, 000): potential deadlock, intervals, safety.

Pure functions over :class:`gen.model.Network`. The entry points:

- :func:`resolve`: every ``"auto"`` replaced by a concrete value (intervals, thresholds, control
  capacities);
- :func:`intervals`: one algorithm's intervals, for ``sfdf intervals``;
- :func:`check`: the safety report of ``sfdf check``;
- :func:`repair_output_buffers`: the smallest output-buffer reductions that make a spec safe.
"""

from __future__ import annotations

from dataclasses import replace

from ..model import AUTO
from .check import CheckReport, check
from .control import auto_threshold, required_control_capacity
from .cycles import edges_on_cycles
from .dummies import naive_intervals, nonpropagation_intervals, propagation_intervals
from .heartbeat import heartbeat_intervals
from .output_buffers import repair_output_buffers as _repair

__all__ = ["ALGORITHMS", "CheckReport", "check", "intervals", "repair_output_buffers", "resolve"]

ALGORITHMS = ("naive", "propagation", "nonpropagation", "heartbeat")


def intervals(network, algorithm: str) -> dict[str, int | None]:
    """The intervals ``algorithm`` assigns from the capacities alone (user intervals ignored).

    ``heartbeat``: 000 Sec. 4.2 by the potential LP; the others: 002 Sec. 3 (errata 1, 2 corrected).
    """
    if algorithm == "heartbeat":
        return heartbeat_intervals(network, edges_on_cycles(network))
    if algorithm == "naive":
        return naive_intervals(network)
    if algorithm == "propagation":
        return propagation_intervals(network)
    if algorithm == "nonpropagation":
        return nonpropagation_intervals(network)
    raise ValueError(f"Algorithm must be one of {', '.join(ALGORITHMS)}, not {algorithm!r}")


def _resolved_intervals(network, on_cycles) -> dict[str, int | None]:
    given = {e.name: e.interval for e in network.edges if e.interval != AUTO}
    if len(given) == len(network.edges):
        return given
    if network.mode == "credit":
        clamp = {n: network.edge_by_name[n].capacity - 1 if iv is None else iv for n, iv in given.items()}
        chosen = heartbeat_intervals(network, on_cycles, clamp)
    elif not network.filtering:
        chosen = {e.name: None for e in network.edges}
    else:
        chosen = intervals(network, network.dummy_algorithm)
    chosen.update(given)
    return chosen


def resolve(network, on_cycles=None):
    """A copy of ``network`` with every ``"auto"`` replaced (see docs/semantics.md).

    ``on_cycles``: the edges on undirected cycles, when the caller has them already.
    """
    if on_cycles is None:
        on_cycles = edges_on_cycles(network)
    chosen = _resolved_intervals(network, on_cycles)
    edges = []
    for e in network.edges:
        m = network.node_by_name[e.src].control_messages
        edges.append(replace(
            e,
            interval=chosen[e.name],
            threshold=auto_threshold(e.capacity) if e.threshold == AUTO else e.threshold,
            control_capacity=(required_control_capacity(e.capacity, m)
                              if e.control_capacity == AUTO else e.control_capacity),
        ))
    return network.with_edges(edges)


def repair_output_buffers(network) -> dict[str, int]:
    """Smallest output-buffer reductions that make an unsafe spec safe (003 Sec. 4.2)."""
    return _repair(network, edges_on_cycles(network))


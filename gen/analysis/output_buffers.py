"""Output-buffer safety (003): the OB-graph check and the repair of an unsafe configuration.

003 Thm. 4.1: a configuration is deadlock-free iff for every undirected cycle, the hidden amounts
``|q|'_o = |q|_o - 1`` (0 when ``|q|_o = 0``) one way round stay below the buffer total the other way
round (inequalities (2)-(5)). Claim 4.3 turns this into "the OB-graph has no non-positive cycle"; the
paper weighs mirror edges ``-|q|_o``, which with its own remark that ``|q|_o = 1`` behaves as 0 must be
``-|q|'_o`` (seeds/README.md erratum 3), and its Alg. 1 relaxes the wrong way (erratum 3). The check
here is one Bellman-Ford (:mod:`sfdf.gen.analysis.mirror`) instead of Floyd-Warshall.
"""

from __future__ import annotations

from .heartbeat import max_hidden_amounts
from .mirror import find_nonpositive_cycle, mirror_arcs

__all__ = ["hidden_amounts", "output_buffer_cycle", "repair_output_buffers"]


def hidden_amounts(network) -> dict[str, int]:
    """``|q|'_o = max(|q|_o - 1, 0)`` per edge (003 Sec. 4.1)."""
    return {e.name: max(e.output_buffer - 1, 0) for e in network.edges}


def output_buffer_cycle(network):
    """The arcs of a non-positive OB-graph cycle (an unsafe undirected cycle), or None if safe."""
    return find_nonpositive_cycle(mirror_arcs(network, hidden_amounts(network)))


def repair_output_buffers(network, on_cycles) -> dict[str, int]:
    """The smallest output-buffer reductions that make ``network`` safe (003 Sec. 4.2).

    Maximises the total hidden amount kept, each capped by the current one, by the potential LP of
    :func:`sfdf.gen.analysis.heartbeat.max_hidden_amounts`. Returns ``{edge: new output_buffer}`` for the
    edges that must shrink (empty when already safe).
    """
    if output_buffer_cycle(network) is None:
        return {}
    current = hidden_amounts(network)
    kept = max_hidden_amounts(network, current, set(on_cycles))
    changes = {}
    for e in network.edges:
        if e.name in kept and kept[e.name] < current[e.name]:
            changes[e.name] = kept[e.name] + 1 if kept[e.name] > 0 else min(e.output_buffer, 1)
    return changes

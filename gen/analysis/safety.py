"""Deadlock safety of a resolved network: which constraint each edge set violates, and why.

The constraint family depends on the protocol (see docs/semantics.md, "What `sfdf check` proves"):

- credit mode: 000 (3), (4) on every undirected cycle and (5) per edge, as a mirror graph with
  mirror weight ``-[e]`` (polynomial);
- inband Non-Propagation / Naive: the proof of 002 Thm. 3.3 summed around a blocking cycle: with
  blockwise (empty) channels B and counterblockwise (full) channels F, ``sum_B ([q] - 1) < sum_F |q|``.
  Mirror weight ``-([q] - 1)``; the mirror graph is exact when every edge has ``[q] - 1 < |q|``, and a
  non-positive cycle that is only one edge's 2-cycle sends the check to cycle enumeration;
- inband Propagation: the proof of 002 Thm. 3.2: a dummy from the sender of each empty path reaches its
  receiver, so only the first channel of each empty path counts: ``sum ([first] - 1) < sum_F |q|``;
  the Non-Propagation mirror graph proves it first (its sum is no smaller), and only when that fails are
  cycles enumerated, as the paper's Alg. 3 does;
- inband without filtering: the output-buffer constraints of 003 (2)-(5).
"""

from __future__ import annotations

from dataclasses import dataclass

from .control import required_control_capacity
from .cycles import CycleStructure, cycle_structure
from .mirror import Arc, find_nonpositive_cycle, mirror_arcs
from .output_buffers import hidden_amounts

__all__ = ["Violation", "violations"]


@dataclass(frozen=True)
class Violation:
    """One broken constraint: ``kind``, the edges involved (in cycle order), and a sentence."""

    kind: str
    edges: tuple[str, ...]
    detail: str

    def to_json(self) -> dict:
        return {"kind": self.kind, "edges": list(self.edges), "detail": self.detail}


def _walk(arcs: list[Arc]) -> str:
    """``u -> w -> x <- v <- u``: the cycle as the network's edges are oriented."""
    text = str(arcs[0].tail)
    for a in arcs:
        text += (" <- " if a.mirror else " -> ") + str(a.head)
    return text


def _mirror_violation(kind: str, arcs: list[Arc], what: str, paper: str) -> Violation:
    names = tuple(a.edge for a in arcs)
    hidden = [a for a in arcs if a.mirror]
    full = [a for a in arcs if not a.mirror]
    lhs = sum(-a.weight for a in hidden)
    rhs = sum(a.weight for a in full)
    return Violation(
        kind, names,
        f"cycle {_walk(arcs)}: {what} on {{{', '.join(a.edge for a in hidden)}}} total {lhs} "
        f">= capacity on {{{', '.join(a.edge for a in full)}}} total {rhs} ({paper})",
    )


def _big(network) -> int:
    """A hidden amount that breaks every cycle through its edge: an infinite interval."""
    return sum(e.capacity for e in network.edges) + 1


def _credit(network, on_cycles) -> list[Violation]:
    out = []
    for e in network.edges:
        if e.interval is None:
            out.append(Violation("heartbeat_missing", (e.name,),
                                 f"edge {e.name}: credit mode needs a finite heartbeat below its capacity "
                                 f"{e.capacity} (000 (5), Alg. 4); set interval = \"auto\""))
        elif e.interval >= e.capacity:
            out.append(Violation("heartbeat_bound", (e.name,),
                                 f"edge {e.name}: heartbeat {e.interval} must be below its capacity "
                                 f"{e.capacity} (000 (5))"))
    # Clamped to |q| - 1, no single edge closes a non-positive 2-cycle: what is found is a real
    # undirected cycle, violated even before the per-edge excess reported above.
    hidden = {e.name: e.capacity - 1 if e.interval is None else min(e.interval, e.capacity - 1)
              for e in network.edges}
    cycle = find_nonpositive_cycle(mirror_arcs(network, hidden, on_cycles))
    if cycle is not None:
        out.append(_mirror_violation("heartbeat_cycle", cycle, "heartbeats", "000 (3), (4)"))
    for e in network.edges:
        node = network.node_by_name[e.src]
        need = required_control_capacity(e.capacity, node.control_messages, network.live_credit)
        if node.control_messages is not None and e.control_capacity < need:
            rule = "(m + 1) |q| + 1" if network.live_credit else "2 (m + 1) |q| + 1 (no live credit)"
            out.append(Violation("control_capacity", (e.name,),
                                 f"edge {e.name}: control capacity {e.control_capacity} < {need} = "
                                 f"{rule} with m = {node.control_messages}; a full control "
                                 "channel can block the sender first (000 Sec. 4.3)"))
        if node.control_messages is None and e.interval not in (0, None):
            out.append(Violation("control_unbounded", (e.name,),
                                 f"edge {e.name}: node {e.src} sends unbounded control messages, so its "
                                 "out-edges need heartbeat 0 (000 Thm. 4.5)"))
    return out


def _cycle_sum_violation(network, cycle, paths, first_only: bool) -> Violation | None:
    """Check one undirected cycle, split into its maximal ``paths``, both ways round (proofs of 002
    Thm. 3.2 / 3.3)."""
    edges = network.edge_by_name
    walked_forward = {name for name, fwd in cycle if fwd}
    big = _big(network)

    def cost(name):
        iv = edges[name].interval
        return big if iv is None else iv - 1

    for empty_forward in (True, False):
        empty = [p for p in paths if (p.edges[0] in walked_forward) == empty_forward]
        full = [p for p in paths if (p.edges[0] in walked_forward) != empty_forward]
        lhs = sum(cost(p.edges[0]) if first_only else sum(cost(n) for n in p.edges) for p in empty)
        rhs = sum(edges[n].capacity for p in full for n in p.edges)
        if lhs >= rhs:
            counted = [p.edges[0] for p in empty] if first_only else [n for p in empty for n in p.edges]
            lhs_text = "inf" if lhs >= big else str(lhs)
            rule = "002 Thm. 3.2" if first_only else "002 Thm. 3.3"
            return Violation(
                "interval_cycle", tuple(name for name, _ in cycle),
                f"cycle through {', '.join(name for name, _ in cycle)}: sum([q] - 1) on "
                f"{{{', '.join(counted)}}} = {lhs_text} >= capacity on "
                f"{{{', '.join(n for p in full for n in p.edges)}}} = {rhs} (proof of {rule})",
            )
    return None


def _inband(network, cycles: CycleStructure) -> list[Violation]:
    if not network.filtering:
        cycle = find_nonpositive_cycle(mirror_arcs(network, hidden_amounts(network)))
        return [] if cycle is None else [
            _mirror_violation("output_buffer_cycle", cycle, "hidden output-buffer tokens |q|'_o",
                              "003 (2), (3)")]
    first_only = network.dummy_algorithm == "propagation"
    # Thm. 3.3's sum over every empty channel, on the mirror graph (polynomial); it is at least
    # Propagation's sum over first channels, so passing it proves Propagation safe too
    big = _big(network)
    hidden = {e.name: (big if e.interval is None else e.interval - 1) for e in network.edges}
    cycle = find_nonpositive_cycle(mirror_arcs(network, hidden, cycles.on_cycles))
    if cycle is None:
        return []
    if not first_only and len({a.edge for a in cycle}) > 1:
        return [_mirror_violation("interval_cycle", cycle, "sum([q] - 1)", "proof of 002 Thm. 3.3")]
    for cycle, paths in cycles.cycles():
        v = _cycle_sum_violation(network, cycle, paths, first_only)
        if v is not None:
            return [v]
    return []


def violations(network, *, cycles: CycleStructure | None = None) -> list[Violation]:
    """Every deadlock-safety violation of a resolved network (no ``"auto"`` left).

    ``cycles``: the network's :class:`~sfdf.gen.analysis.cycles.CycleStructure`, when the caller has it.
    """
    cycles = cycle_structure(network, cycles)
    if network.mode == "credit":
        return _credit(network, cycles.on_cycles)
    return _inband(network, cycles)

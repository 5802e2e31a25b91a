"""The report of ``sfdf check``: potential deadlock, the resolved intervals, every violation."""

from __future__ import annotations

from dataclasses import dataclass, field

from .control import index_width_report
from .cycles import CycleStructure, cycle_structure
from .safety import Violation, violations

__all__ = ["CheckReport", "check"]


@dataclass(frozen=True)
class CheckReport:
    """Safety of one network with its intervals and output buffers ("auto" resolved).

    Members
    -------
    network : gen.model.Network
        The resolved network the verdict is about.
    potential_deadlock : bool
        The graph has an undirected cycle (002 Thm. 2.2).
    violations : tuple of Violation
        Empty iff the network is deadlock-free under its protocol.
    index_width : dict
        See :func:`sfdf.gen.analysis.control.index_width_report`.
    """

    network: object
    potential_deadlock: bool
    violations: tuple[Violation, ...]
    index_width: dict = field(default_factory=dict)

    @property
    def deadlock_free(self) -> bool:
        return not self.violations

    @property
    def intervals(self) -> dict[str, int | None]:
        return {e.name: e.interval for e in self.network.edges}

    def to_json(self) -> dict:
        net = self.network
        return {
            "network": net.name,
            "potential_deadlock": self.potential_deadlock,
            "deadlock_free": self.deadlock_free,
            "violations": [v.to_json() for v in self.violations],
            "intervals": self.intervals,
            "mode": net.mode,
            "dummy_algorithm": net.dummy_algorithm if net.mode == "inband" else None,
            "live_credit": net.live_credit if net.mode == "credit" else None,
            "filtering": net.filtering,
            "thresholds": {e.name: e.threshold for e in net.edges} if net.mode == "credit" else {},
            "control_capacities": ({e.name: e.control_capacity for e in net.edges}
                                   if net.mode == "credit" else {}),
            "output_buffers": {e.name: e.output_buffer for e in net.edges},
            "index_width": self.index_width,
        }

    def summary_lines(self) -> list[str]:
        net = self.network
        if net.mode == "credit":
            proto = "credit (000, live credit)" if net.live_credit else "credit (000's receiver: no live credit)"
        else:
            proto = f"inband {net.dummy_algorithm} (002)"
        if not net.filtering:
            proto += ", no filtering"
        lines = [
            f"network {net.name}: {len(net.nodes)} nodes, {len(net.edges)} edges, {proto}",
            "potential deadlock: " + ("yes (undirected cycle, 002 Thm. 2.2)" if self.potential_deadlock
                                      else "no (no undirected cycle)"),
        ]
        kind = "heartbeat" if net.mode == "credit" else "interval"
        rows = [("edge", "from", "to", "|q|", kind, "T", "|q'|", "|q|_o")]
        for e in net.edges:
            cred = net.mode == "credit"
            rows.append((e.name, e.src, e.dst, str(e.capacity), "inf" if e.interval is None else str(e.interval),
                         str(e.threshold) if cred else "-", str(e.control_capacity) if cred else "-",
                         str(e.output_buffer)))
        widths = [max(len(r[i]) for r in rows) for i in range(len(rows[0]))]
        lines += ["  " + "  ".join(c.ljust(w) for c, w in zip(r, widths)).rstrip() for r in rows]
        iw = self.index_width
        mark = iw.get("watermark")
        if mark is not None:
            lines.append(f"index width {iw['bits']}: index watermark {mark['window']} at {mark['bits']} bits inside (sinks lag "
                         f"a stopped source by <= {mark['drain_bound']}, needs {mark['bits_needed']} bits; channels on a path "
                         f"hold <= {mark['lead']} tokens, {mark['lead_bits']} bits): serial "
                         "comparison " + ("proved for endless streams" if iw["serial_comparison_proved"]
                                          else "NOT proved"))
        elif iw.get("serial_comparison_proved"):
            lines.append(f"index width {iw['bits']}: index spread <= {iw['spread_bound']} needs "
                         f"{iw['bits_for_spread']} bits: serial comparison proved")
        else:
            lines.append(f"index width {iw['bits']}: {iw['max_computations_without_wrap']} computations "
                         "per run without wrap-around (spread not bounded by the spec)")
        if self.deadlock_free:
            lines.append("verdict: deadlock-free")
        else:
            lines.append(f"verdict: UNSAFE ({len(self.violations)} violation(s))")
            lines += [f"  [{v.kind}] {v.detail}" for v in self.violations]
        return lines


def check(network, *, cycles: CycleStructure | None = None) -> CheckReport:
    """Resolve ``"auto"`` and analyse deadlock safety (``sfdf check``).

    The network's :class:`~sfdf.gen.analysis.cycles.CycleStructure` (``cycles``, derived here unless the
    caller has it) serves resolution and the safety check alike: resolving keeps the topology.
    """
    from . import resolve

    cycles = cycle_structure(network, cycles)
    resolved = resolve(network, cycles=cycles)
    width = index_width_report(resolved, {e.name: e.interval for e in resolved.edges})
    return CheckReport(
        network=resolved,
        potential_deadlock=cycles.potential_deadlock,
        violations=(*violations(resolved, cycles=cycles), *_index_width_violations(width)),
        index_width=width,
    )


def _index_width_violations(width: dict) -> list[Violation]:
    """An index width too narrow for the watermark's drain bound would hold the sources for good; one
    too narrow for an in-band spread bound would let the joins mis-order indices."""
    mark = width.get("watermark")
    if mark is None:
        needed = width.get("bits_for_spread")
        if needed is None or needed <= width["bits"]:
            return []
        return [Violation("index_width", (), f"index_width = {width['bits']} is too narrow: indices alive at a "
                          f"node may span {width['spread_bound']}, which needs {needed} bits for serial "
                          f"comparison; set index_width = {needed} or more (docs/semantics.md, \"What "
                          "`sfdf check` proves\")")]
    if mark["bits_needed"] <= width["bits"]:
        return []
    return [Violation("index_width", (), f"index_width = {width['bits']} is too narrow for the index "
                      f"watermark: the sinks may lag a stopped source by {mark['drain_bound']} indices, "
                      f"which needs 2^(w-1) >= {mark['drain_bound'] + 3}; set index_width = "
                      f"{mark['bits_needed']} or more (docs/semantics.md, \"Index watermark\")")]

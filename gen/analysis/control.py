"""Credit thresholds, control-channel sizing and the index-width argument.

- Threshold ``T`` (000 Alg. 2) must satisfy ``0 <= T < |q|`` (000 Thm. 3.2, case 1). ``auto`` leaves room
  for credit in flight: a credit sent after ``T + 1`` tokens reaches the receiver ``CREDIT_LATENCY``
  cycles later, during which the sender keeps writing, so ``T + 1 + CREDIT_LATENCY <= |q|`` keeps the
  data channel from stalling at one token per cycle.
- Control channels (000 Sec. 4.3): with at most ``m`` user messages per data token, at most ``|q|``
  credit messages (each covers a token) and, thanks to dummy coalescing, at most one dummy between
  two other messages, a control channel holds at most ``2 (m + 1) |q|`` messages while its data channel
  is not full; one more slot and the data channel always fills first, as Thm. 4.2 assumes. With live
  credit (``sfdf.hdl.counter``) there are no credit messages: while the data channel holds ``d < |q|``
  tokens, the control channel holds what was pushed in the ``d + 1`` gaps around them, at most ``m``
  user messages and one (coalesced) dummy each, so ``(m + 1) |q| + 1`` slots suffice (the hardware and
  the reference model keep the dummy in a heartbeat register beside the FIFO, so it needs fewer still).
  Unbounded ``m`` needs heartbeat 0 on the node's out-edges (000 Thm. 4.5).
- Index width: indices are compared by serial-number arithmetic. Without wrap-around, ``w`` bits carry
  ``2^w - 1`` computations per source. For endless streams, serial comparison is exact while every two
  indices compared at a node are less than ``2^(w-1)`` apart. In inband mode with finite intervals that
  spread is bounded by back-pressure: a channel of ``|q|`` slots spans at most ``(|q| + 1) [q]`` indices
  (one visible token per ``[q]`` indices, 002 Alg. 5), so the spread at a node is at most the largest
  sum of those spans over a directed path into it. Credit-mode dummies coalesce, so a sender whose
  edge carries only dummies runs ahead of its receiver without bound; with live credit the hardware
  bounds the spread by the *index watermark* (:func:`watermark`): a source does not start index ``i``
  while some sink's last computation is at or below ``i - W``, ``W = 2^(k-1) - 1``, so every index
  alive at a node lies within ``W`` of its last computation. The watermark cannot deadlock when the
  sinks, with the sources stopped, always get within ``W - 2`` of them (docs/semantics.md, "Index
  watermark").
"""

from __future__ import annotations

import math

__all__ = [
    "CREDIT_LATENCY",
    "WATERMARK_LEAD_BITS",
    "WATERMARK_MARGIN_BITS",
    "auto_threshold",
    "index_bits_inside",
    "index_spread_bound",
    "index_width_report",
    "joins",
    "required_control_capacity",
    "watermark",
    "watermark_drain_bound",
    "watermark_lead",
]

#: Cycles between a sender issuing credit and the receiver being able to use it (hardware contract).
CREDIT_LATENCY = 2


def auto_threshold(capacity: int) -> int:
    """``T = max(0, |q| - 1 - CREDIT_LATENCY)``."""
    return max(0, capacity - 1 - CREDIT_LATENCY)


def required_control_capacity(capacity: int, m: int | None, live_credit: bool = True) -> int:
    """Smallest ``|q'|`` with which the data channel fills first: ``(m + 1) |q| + 1`` with live credit,
    ``2 (m + 1) |q| + 1`` with 000's credit messages.

    For unbounded ``m`` the out-edges run heartbeat 0 (000 Thm. 4.5), under which one credit or dummy
    follows every computation; the same size with ``m = 1`` is then a sensible default.
    """
    per_token = (1 if m is None else m) + 1
    return (per_token if live_credit else 2 * per_token) * capacity + 1


def index_spread_bound(network, intervals) -> int | None:
    """Largest index spread at any node, or None when the spec does not bound it (see module doc)."""
    if network.mode == "credit" or len(network.sources) > 1:
        return None  # coalesced dummies, or independent sources: no bound from the spec
    span = {}
    for e in network.edges:
        if intervals[e.name] is None:
            return None
        span[e.name] = (e.capacity + 1) * intervals[e.name]
    best: dict[str, int] = {}
    for v in network.topological_order():
        best[v] = max((best[e.src] + span[e.name] for e in network.in_edges(v)), default=0)
    return max(best.values(), default=0)


def joins(network) -> tuple[str, ...]:
    """Nodes with two or more in-edges: where indices are compared with each other."""
    return tuple(n.name for n in network.nodes if len(network.in_edges(n.name)) >= 2)


#: Bits the hardware's indices carry beyond the least the drain bound needs: the window is then four
#: times the drain bound, room for channels of sparse tokens under back-pressure before a source waits.
WATERMARK_MARGIN_BITS = 2


def watermark_drain_bound(network, intervals) -> int | None:
    """How far below the sources' index the sinks may stay once the sources stop (live credit).

    After a sender's computation at ``c`` its last token or dummy on an edge is at ``c - [e]`` or later
    (000 Alg. 4). With the sources stopped and the sinks drained by the environment, the sink whose
    last computation is the least waits on an empty input, whose sender has computed within ``[e]``
    above it; that sender waits on an input in turn, or is blocked on a full channel into a node that
    waits on another input, and so on to a source: a chain without repeats (a repeat would be a
    deadlock cycle, which 000 Thm. 3.1 excludes) that climbs each edge at most once. The sum of
    ``[e]`` over the edges bounds it; None when an edge has no heartbeat.
    """
    if any(intervals[e.name] is None for e in network.edges):
        return None
    return sum(intervals[e.name] for e in network.edges)


#: Bits beyond the least whose window holds :func:`watermark_lead`: the window is then at least twice the
#: tokens the channels along any path hold, so a source leads the sinks by a full set of channels of tokens
#: at half sparsity or denser before the watermark, not back-pressure, holds it.
WATERMARK_LEAD_BITS = 1


def watermark_lead(network) -> int:
    """The most data tokens the channels along one source-to-sink path hold: the sum of the capacities
    on the heaviest path. Without filtering, a source that leads a sink by that many indices has filled
    the channels between them, and back-pressure holds it anyway; a window below it would hold the
    source first and cost throughput (heartbeat 0 on every edge makes the drain bound 0, and the window
    would be 15 however large the channels)."""
    best: dict[str, int] = {}
    for v in network.topological_order():
        best[v] = max((best[e.src] + e.capacity for e in network.in_edges(v)), default=0)
    return max(best.values(), default=0)


def watermark(network, intervals) -> dict | None:
    """The index watermark of a live-credit network, or None where it has none.

    Every node's last computation is at or above its descendant sinks' (a node computes an index only
    after its sender did), so the sinks' least position, the watermark, is below every index alive in
    the network. A source starts index ``i`` only while ``i - watermark <= W`` with ``W = 2^(k-1) - 1``
    (the hardware compares with a registered, older copy, one index sooner), so every index alive at a
    node lies within ``W`` above its last computation: serial comparison and distances at ``k`` bits are
    exact forever, and the hardware carries ``k``-bit indices inside, rebuilding the ``w``-bit index at
    the sinks and for the kernels from exact distances.

    ``drain_bound`` (:func:`watermark_drain_bound`): the watermark never holds a source for good iff
    ``drain_bound + 3 <= 2^(k-1)``; ``bits_needed`` is the least such ``k`` (correctness). ``lead``
    (:func:`watermark_lead`): ``lead_bits`` is the least ``k`` whose window holds it (throughput).
    ``bits``: the larger of ``bits_needed +`` :data:`WATERMARK_MARGIN_BITS` and ``lead_bits +``
    :data:`WATERMARK_LEAD_BITS`, at most ``index_width``. None (no watermark): in-band mode (its spread is
    bounded by back-pressure), 000's receiver without live credit, or an edge without heartbeat.
    """
    if network.mode != "credit" or not network.live_credit:
        return None
    drain = watermark_drain_bound(network, intervals)
    if drain is None:
        return None
    needed = 1 + math.ceil(math.log2(drain + 3))
    lead = watermark_lead(network)
    lead_bits = 1 + math.ceil(math.log2(lead + 1))
    bits = min(network.index_width, max(needed + WATERMARK_MARGIN_BITS, lead_bits + WATERMARK_LEAD_BITS))
    return {"bits": bits, "window": 2 ** (bits - 1) - 1, "drain_bound": drain, "bits_needed": needed,
            "lead": lead, "lead_bits": lead_bits}


def index_bits_inside(network, intervals) -> int:
    """Bits of the indices the hardware carries between its nodes (channels, offers, joins, senders).

    With the index watermark its ``bits``; in-band with a spread bound from back-pressure
    (:func:`index_spread_bound`), the bits that bound needs; else the spec's ``index_width``. Every
    index alive at a node lies within that many bits above the node's last computation, so the sinks
    rebuild the spec's index from the exact distances (docs/hardware.md, "Narrow indices inside").
    """
    return _bits_inside(network, intervals, watermark(network, intervals))


def _bits_inside(network, intervals, mark) -> int:
    """:func:`index_bits_inside` with the network's :func:`watermark` ``mark`` already at hand."""
    if mark is not None:
        return mark["bits"]
    spread = index_spread_bound(network, intervals) if network.mode == "inband" else None
    return network.index_width if spread is None else min(network.index_width, _bits_for_spread(spread))


def _bits_for_spread(spread: int) -> int:
    """Bits whose serial comparison orders indices up to ``spread`` apart."""
    return max(2, math.ceil(math.log2(spread + 1)) + 1)


def index_width_report(network, intervals) -> dict:
    """Facts about ``index_width``: run length without wrap, spread bound, bits it needs, and the
    watermark (:func:`watermark`) where the hardware has one."""
    w = network.index_width
    mark = watermark(network, intervals)
    if mark is not None:
        spread, needed = mark["window"], mark["bits_needed"]
    elif network.mode == "credit" and not joins(network):
        spread, needed = 0, 2  # no index is compared with another (a run's sink indices wrap, as tuser does)
    else:
        spread = index_spread_bound(network, intervals)
        needed = None if spread is None else _bits_for_spread(spread)
    return {
        "bits": w,
        "max_computations_without_wrap": 2**w - 1,
        "spread_bound": spread,
        "bits_for_spread": needed,
        "serial_comparison_proved": needed is not None and needed <= w,
        "watermark": mark,
        "bits_inside": _bits_inside(network, intervals, mark),
    }

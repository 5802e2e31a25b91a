"""000's credit batches in the throughput analysis (``live_credit = false``, 000's receiver as printed).

000's receiver (Alg. 1) takes a data token only against a credit, and the sender (Alg. 2, 4) sends the
credit for a batch of tokens with the batch's last: after ``T + 1`` tokens, or after ``[e] + 1`` where the
heartbeat is smaller (:class:`CreditBatch`). In the timed event graph of :mod:`.throughput` the token
place ``W_u -> C_v`` of such an edge then refers not to the same token but to its batch's last:
``C_v(j) >= W_u(last(j)) + hop + offer``. That is no longer a marked graph (the offset varies along the
batch), so:

* :func:`batch_rate` is one edge's rate alone, in closed form (one batch unrolled);
* :func:`schedule_rate` is the whole network's, exactly: the earliest schedule of the event graph with
  those places, computed token by token until it repeats (a max-plus system is eventually periodic);
* a token waits at most ``T`` tokens for its batch's last, so the event graph with ``-T`` tokens on each
  batched token place (:func:`sfdf.gen.analysis.throughput.event_graph`'s ``batch_waits``) is a marked
  graph whose rate the hardware reaches or exceeds: what capacities are sized on.

Measured on Verilator: tests/cosim/test_throughput_bound.py.
"""

from __future__ import annotations

import math
from collections.abc import Mapping
from dataclasses import dataclass
from fractions import Fraction

__all__ = ["CreditBatch", "batch_rate", "credit_batches", "schedule_rate", "schedules_to_size"]

#: Stage firings :func:`schedule_rate` computes at most before it gives up on finding the period.
SCHEDULE_BUDGET = 500_000
#: Stage firings the sizing may spend lowering capacities on the schedule (:func:`schedules_to_size`).
SIZING_BUDGET = 20_000_000


@dataclass(frozen=True)
class CreditBatch:
    """An edge of 000's receiver as printed (``live_credit = false``), whose tokens wait in batches of
    ``T + 1`` for the credit message sent with each batch's last (:func:`batch_rate`).

    Members
    -------
    edge, src, dst : str
    threshold, capacity : int
        ``T`` and ``|q|``. ``T`` is the batch the sender's credits actually close: 000 Alg. 2's threshold,
        or the heartbeat ``[e]`` where smaller (Alg. 4 sends the credit once ``i - LastRecvIdx > [e]``,
        which with a token on every computation is the ``[e] + 1``-th since the last).
    loop : int
        Cycles from a sender's commit to its seeing the room the token left: ``hop``, the receiving node's
        ``offer`` and ``release`` (:class:`~.throughput.StageTiming`).
    """

    edge: str
    src: str
    dst: str
    threshold: int
    capacity: int
    loop: int

    @property
    def streaming_threshold(self) -> int:
        """The largest ``T`` at which the batches alone allow one token per cycle: ``|q| - loop``."""
        return self.capacity - self.loop

    @property
    def token_place(self) -> tuple[str, str]:
        """The event graph's place ``W_u -> C_v`` whose tokens wait for their batch's last."""
        return f"W:{self.src}", f"C:{self.dst}"


def batch_rate(capacity: int, threshold: int, loop: int) -> Fraction:
    """The tokens per cycle one edge of 000's batched credits allows alone, with ``|q| = capacity``,
    ``T = threshold`` and ``loop`` cycles from a commit to the room it frees (:class:`CreditBatch`).

    The batch's first token is taken ``hop + offer`` cycles after its last is committed, and its room is
    back ``release`` cycles later: the commit ``|q|`` tokens after a batch's first waits ``loop`` cycles
    after the batch's last, ``W(b + |q| - T) >= W(b) + loop``, beside one commit per cycle, ``W(j + 1) >=
    W(j) + 1``. Unrolled over one batch this is a timed marked graph of ``T + 1`` commits whose only cycle
    through the batch's constraint runs from a batch's last (position ``T``) to position ``p = |q| mod
    (T + 1)``, ``c = |q| div (T + 1)`` batches later, and on to that batch's last: ``c (T + 1)`` tokens
    over ``loop + T - p`` cycles. So ``T <= |q| - loop`` streams (:func:`.control.auto_threshold`'s rule
    with ``loop = CREDIT_LATENCY + 1``), and ``T = 0`` is the room's own ``|q| / loop``. Checked against
    a commit-by-commit schedule (tests/test_gen_analysis_throughput.py).
    """
    batches, p = divmod(capacity, threshold + 1)
    return min(Fraction(1), Fraction((threshold + 1) * batches, loop + threshold - p))


def credit_batches(network, timing, capacities: Mapping[str, int] | None = None) -> list[CreditBatch]:
    """The edges of ``network`` (resolved: :func:`sfdf.gen.analysis.resolve`) whose tokens wait for
    batched credits (000's receiver as printed, ``live_credit = false``; none with live credit or
    in-band), on the cycles of ``timing`` (:class:`~.throughput.StageTiming`), ``capacities`` overriding
    ``|q|``."""
    if network.mode != "credit" or network.live_credit:
        return []
    capacities = capacities or {}
    batches = []
    for e in network.edges:
        if not isinstance(e.threshold, int) or not (e.interval is None or isinstance(e.interval, int)):
            raise ValueError(f"edge {e.name}: the credit batches need a resolved threshold and heartbeat")
        threshold = e.threshold if e.interval is None else min(e.threshold, e.interval)
        batches.append(CreditBatch(e.name, e.src, e.dst, threshold, capacities.get(e.name, e.capacity),
                                   timing.hop + timing.offer.get(e.dst, 0) + timing.release))
    return batches


def schedule_rate(places, batches: list[CreditBatch], budget: int | None = None) -> Fraction | None:
    """The steady rate of the earliest schedule of the event graph ``places``
    (:func:`.throughput.event_graph`) in which the place that carries a batched edge's tokens refers to
    its batch's last token (module docstring): stage ``x`` fires token ``j`` at ``x(j) = max over places
    a -> x of a(j') + delay``, ``j' = j - tokens``, or for a batched place the last of ``j``'s batch.

    A max-plus system is eventually periodic: a connected part's rate is ``P / D`` once each of its
    stages fires token ``j + P`` exactly ``D`` cycles after token ``j`` over the second half of the tokens
    computed (``P`` a multiple of every batch's size), and the network's is its slowest part's. 0 if the
    waits run in a cycle: a token waits for a batch whose last waits for room the token holds (000 Fig.
    3's deadlock, here with no filtering; ``sfdf check``'s heartbeats rule it out). None if no period
    shows within ``budget`` firings (:data:`SCHEDULE_BUDGET`).
    """
    budget = SCHEDULE_BUDGET if budget is None else budget
    size = {b.edge: b.threshold + 1 for b in batches}
    into: dict[str, list[tuple[str, int, int, int]]] = {}
    for p in places:
        into.setdefault(p.dst, []).append((p.src, p.tokens, p.delay, size.get(p.carries, 0)))
    stages = sorted({p.src for p in places} | {p.dst for p in places})
    times: dict[str, list] = {x: [] for x in stages}
    base = math.lcm(*size.values()) if size else 1
    tokens = _first_tokens(base)
    while tokens * len(stages) <= budget:
        try:
            for j in range(tokens):
                for x in stages:
                    _fire(into, times, x, j)
        except _WaitCycle:
            return Fraction(0)
        rates = [_period(times, part, tokens, base) for part in _parts(places)]
        if None not in rates:
            return min(rates)
        tokens *= 2
    return None


def _first_tokens(base: int) -> int:
    """Tokens :func:`schedule_rate` computes first (doubled until the second half shows a period, which
    may be at most a quarter of them)."""
    return max(64, 8 * base)


def schedules_to_size(places, batches: list[CreditBatch], edges: int) -> bool:
    """Whether lowering ``edges`` capacities on the schedule fits :data:`SIZING_BUDGET`: a bisection of
    about 8 schedules per edge, each at least its first tokens' firings (``places`` the event graph)."""
    stages = len({p.src for p in places} | {p.dst for p in places})
    base = math.lcm(*(b.threshold + 1 for b in batches)) if batches else 1
    return edges * 8 * stages * _first_tokens(base) <= SIZING_BUDGET


def _parts(places) -> list[list[str]]:
    """The stages of each connected part of the event graph (a network's components run apart)."""
    parent: dict[str, str] = {}

    def root(x):
        while parent.setdefault(x, x) != x:
            parent[x] = parent[parent[x]]
            x = parent[x]
        return x

    for p in places:
        parent[root(p.src)] = root(p.dst)
    parts: dict[str, list[str]] = {}
    for x in sorted(parent):
        parts.setdefault(root(x), []).append(x)
    return list(parts.values())


class _WaitCycle(Exception):
    """The schedule's waits run in a cycle."""


def _fire(into, times, x, j):
    """Stage ``x``'s earliest firing of token ``j`` (and of whatever it waits for), into ``times``."""
    stack, waiting = [(x, j)], {(x, j)}
    while stack:
        y, k = stack[-1]
        column = times[y]
        if k < len(column) and column[k] is not None:
            waiting.discard(stack.pop())
            continue
        best, missing = 0, None
        for src, held, delay, batch in into.get(y, ()):
            i = k // batch * batch + batch - 1 if batch else k - held
            if i < 0:
                continue
            before = times[src]
            if i < len(before) and before[i] is not None:
                best = max(best, before[i] + delay)
            else:
                missing = (src, i)
                break
        if missing is None:
            column.extend([None] * (k + 1 - len(column)))
            column[k] = best
            waiting.discard(stack.pop())
        elif missing in waiting:
            raise _WaitCycle
        else:
            stack.append(missing)
            waiting.add(missing)


def _period(times, stages, tokens, base) -> Fraction | None:
    """``P / D`` for the least ``P`` (a multiple of ``base``) at which every stage's firings over the second
    half of ``tokens`` repeat ``D`` cycles later, or None."""
    first, half = times[stages[0]], tokens // 2
    for period in range(base, half // 2 + 1, base):
        step = first[half + period] - first[half]
        if step > 0 and all(times[x][k + period] - times[x][k] == step
                            for x in stages for k in range(half, tokens - period)):
            return Fraction(period, step)
    return None

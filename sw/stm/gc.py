"""The GC conditions of 001: minKV (Thm. 4.0) and minO (Thm. 5.0, with the erratum), and reclamation.

* ``minV`` = the least ``VT`` of all threads; ``minK`` = the least keep time ``KT`` of all i_conns;
  ``minKV = min(minK, minV)``: every item below it is garbage (Thm. 4.0). O(threads + i_conns), since the
  KTs are kept incrementally (001 Sec. 6; :class:`sfdf.sw.stm.model.IConn`).
* ``minO`` (Thm. 5.0): with ``minV <= minK``, ``minV``; otherwise the least timestamp ``>= minK`` that is
  present and not *fully consumed* (consumed on every i_conn of its channel) in some channel, capped at
  ``minV``. O(threads + i_conns + items between minK and minV x i_conns per channel), as Sec. 6 says.

Erratum (seeds' README, 5): Thm. 5.0's then-branch prints ``minO = minK``. With ``minV < minK`` that is
too high: a thread at ``VT = minV`` may still put an item at ``minV``, and a child it creates may attach
and get it. ``minO = minV`` there (:data:`PRINTED_MIN_O` keeps the printed rule for the test that shows
it unsafe).

Reclamation (:func:`collect`) removes every item below the bound and raises each channel's floor, so a
collected timestamp can be neither put nor got again (001 Sec. 3.3: it stays conceptually present);
without the model's audit it also forgets the connections' state below the bound, so memory stays flat.
"""

from __future__ import annotations

from dataclasses import dataclass

from .model import INF, SpaceTimeMemory

__all__ = ["PRINTED_MIN_O", "Bounds", "as_min_kv", "as_min_o", "bounds", "collect", "fully_consumed", "min_kv",
           "min_o"]

#: Thm. 5.0 as printed (then-branch ``minO = minK``): unsafe, kept for the test that shows it.
PRINTED_MIN_O = "printed"


@dataclass(frozen=True)
class Bounds:
    min_v: float
    min_k: float
    min_kv: float
    min_o: float


def _min_v(stm: SpaceTimeMemory) -> float:
    return min((t.vt for t in stm.threads.values()), default=INF)


def _min_k(stm: SpaceTimeMemory) -> float:
    return min((ic.kt for ic in stm.iconns.values()), default=INF)


def min_kv(stm: SpaceTimeMemory) -> float:
    """Thm. 4.0: ``min(minK, minV)``."""
    return min(_min_k(stm), _min_v(stm))


def fully_consumed(channel, ts) -> bool:
    """Thm. 5.0's *fully consumed*: ``ts`` is CONSUMED on every i_conn of ``channel``."""
    return all(ic.state(ts) == "CONSUMED" for ic in channel.iconns)


def min_o(stm: SpaceTimeMemory, rule: str = "fixed") -> float:
    """Thm. 5.0 with the erratum (``rule="printed"``: as printed, unsafe)."""
    v, k = _min_v(stm), _min_k(stm)
    if v <= k:
        return k if rule == PRINTED_MIN_O else v
    best = v
    for channel in stm.channels.values():
        for ts in channel.items:
            if k <= ts < best and not fully_consumed(channel, ts):
                best = ts
    return best


def as_min_kv(stm: SpaceTimeMemory, space: int) -> float:
    """001 Sec. 7.1's ``ASminKV``: the least VT of the threads on ``space`` and KT of their i_conns."""
    threads = [t for t in stm.threads.values() if t.space == space]
    return min([*(t.vt for t in threads), *(ic.kt for t in threads for ic in t.iconns)], default=INF)


def as_min_o(stm: SpaceTimeMemory, space: int, over_vis: bool = True) -> float:
    """001 Sec. 7.2's ``ASminO``: the least of the threads on ``space`` and of the items present and not
    fully consumed in its channels (below minK every item is fully consumed, so the least over all spaces
    is :func:`min_o`). The threads count at their VIS (the erratum of README 9), or at their VT as 001
    prints it (``over_vis=False``, unsafe: :mod:`sfdf.sw.stm.distributed`'s ``"paper"`` protocol)."""
    values = [t.vis() if over_vis else t.vt for t in stm.threads.values() if t.space == space]
    for c in stm.channels.values():
        if c.space == space:
            values += [ts for ts in c.items if not fully_consumed(c, ts)]
    return min(values, default=INF)


def bounds(stm: SpaceTimeMemory) -> Bounds:
    return Bounds(_min_v(stm), _min_k(stm), min_kv(stm), min_o(stm))


def collect(stm: SpaceTimeMemory, bound: float, channels=None) -> dict[str, list[int]]:
    """Reclaim every item below ``bound`` in ``channels`` (names; default all); return the timestamps
    reclaimed per channel."""
    garbage = {}
    for name in stm.channels if channels is None else channels:
        channel = stm.channels[name]
        below = sorted(ts for ts in channel.items if ts < bound)
        for ts in below:
            del channel.items[ts]
        channel.floor = max(channel.floor, bound)
        if channel.collected is not None:
            channel.collected.update(below)
        else:  # no audit: forget the connections' state below the bound too (it reads as CONSUMED)
            for ic in channel.iconns:
                ic.consumed = {ts for ts in ic.consumed if ts >= channel.floor}
        garbage[name] = below
    return garbage

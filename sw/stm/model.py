"""Space-time memory: 001's computational model (Nikhil and Ramachandran, "Garbage Collection of
Timestamped Data in Stampede", Sec. 3).

Threads with a virtual time ``VT`` (an integer >= 0 or ``INF``) communicate timestamped items through
channels. A thread reads a channel through an input connection (*i_conn*) and writes it through an
output connection (*o_conn*). A timestamp is *absent* in a channel until a ``put`` makes it *present*
(once: a present or collected timestamp cannot be put again). Per i_conn it moves monotonically
ABSENT -> UNSEEN -> OPEN -> CONSUMED: present items are UNSEEN, ``get`` opens one, ``consume`` consumes
an OPEN one, ``consume_until(ts)`` consumes everything ``<= ts`` whatever its state.

Visibility (Sec. 3.2.1), with ``VIS(t) = min(VT(t), timestamps OPEN on t's i_conns)``:

* V1 a thread may ``get`` any UNSEEN item of its i_conns, whatever its VT;
* V2 ``put`` only at ``ts >= VIS(t)``;
* V3 ``set_vt(vt)`` only to ``vt >= VIS(t)``;
* V4 a child created by ``t`` starts at ``vt >= VIS(t)``;
* V5 a new i_conn starts with an implicit ``consume_until(VIS(t) - 1)``.

A violation is a :class:`VisibilityError` naming the rule, the thread, the connection and the timestamp;
any other misuse (an unknown name, a duplicate put, a consume of what is not OPEN) a :class:`STMError`.
The keep time ``KT(ic)`` (Sec. 4: the least timestamp not CONSUMED on ``ic``) is kept incrementally, as
001 Sec. 6 does, so minKV costs O(threads + i_conns) (:mod:`sfdf.sw.stm.gc`).
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field

__all__ = ["ABSENT", "CONSUMED", "INF", "OPEN", "UNSEEN", "Channel", "IConn", "OConn", "STMError", "SpaceTimeMemory",
           "Thread", "UnsafeCollection", "VisibilityError"]

INF = math.inf
ABSENT, UNSEEN, OPEN, CONSUMED = "ABSENT", "UNSEEN", "OPEN", "CONSUMED"


class STMError(ValueError):
    """A misuse of the model that no visibility rule covers (one line)."""


class UnsafeCollection(STMError):
    """A get or put reached a timestamp the collector reclaimed: the GC was unsafe."""


class VisibilityError(STMError):
    """A visibility rule of 001 Sec. 3.2.1 refused an operation."""

    def __init__(self, rule: str, thread: str, conn: str | None, ts, why: str):
        self.rule, self.thread, self.conn, self.ts, self.why = rule, thread, conn, ts, why
        where = f", connection {conn}" if conn else ""
        super().__init__(f"{rule}: thread {thread}{where}, timestamp {_show(ts)}: {why}")

    def __reduce__(self):  # it travels between address spaces (sw/stm/process.py)
        return type(self), (self.rule, self.thread, self.conn, self.ts, self.why)


def _show(ts) -> str:
    return "inf" if ts == INF else str(ts)


@dataclass
class Channel:
    """A channel: present items by timestamp, and the bound below which the collector reclaimed them."""

    name: str
    space: int = 0
    items: dict[int, object] = field(default_factory=dict)
    floor: float = 0  # the collector's bound: no put or get can reach below it (if the GC is safe)
    iconns: list[IConn] = field(default_factory=list)
    collected: set | None = field(default_factory=set)  # reclaimed timestamps (audit only; None: not kept)

    def present(self, ts) -> bool:
        return ts in self.items or (self.collected is not None and ts in self.collected)


@dataclass
class IConn:
    """An input connection: the per-connection view of its channel (KT kept incrementally)."""

    name: str
    thread: Thread
    channel: Channel
    kt: float = 0  # keep time: every timestamp below is CONSUMED
    consumed: set = field(default_factory=set)  # CONSUMED timestamps above kt
    opened: set = field(default_factory=set)  # OPEN timestamps
    v5: float = 0  # VIS of its thread when attached: V5 consumed everything below

    def state(self, ts) -> str:
        if ts < self.kt or ts in self.consumed or (self.channel.collected is None and ts < self.channel.floor):
            return CONSUMED  # without the audit, below the collector's bound is as good as consumed
        if ts in self.opened:
            return OPEN
        return UNSEEN if self.channel.present(ts) else ABSENT

    def consume_until(self, ts) -> None:
        self.kt = max(self.kt, ts + 1)
        self.opened = {x for x in self.opened if x >= self.kt}
        self.consumed = {x for x in self.consumed if x >= self.kt}
        self._advance()

    def consume(self, ts) -> None:
        self.opened.discard(ts)
        self.consumed.add(ts)
        self._advance()

    def _advance(self) -> None:
        while self.kt in self.consumed:
            self.consumed.discard(self.kt)
            self.kt += 1


@dataclass
class OConn:
    name: str
    thread: Thread
    channel: Channel


@dataclass
class Thread:
    name: str
    vt: float
    space: int = 0
    parent: str | None = None
    iconns: list[IConn] = field(default_factory=list)
    oconns: list[OConn] = field(default_factory=list)

    def vis(self) -> float:
        """``VIS(t)``: the least of ``VT(t)`` and the timestamps OPEN on its i_conns (001 Sec. 3.2.1)."""
        return min([self.vt, *(ts for ic in self.iconns for ts in ic.opened)])


class SpaceTimeMemory:
    """The threads, channels and connections of one system, and 001's operations on them.

    Names are unique per kind. ``space`` places a thread or channel in an address space (the distributed
    algorithm, :mod:`sfdf.sw.stm.distributed`); the operations here do not depend on it.

    ``audit`` (the default) remembers every collected timestamp, so that a get or put reaching one is
    reported as an :class:`UnsafeCollection` (tests and traces). Without it the memory held stays flat
    under sparse production (``bench/stm.py``): a collected timestamp is forgotten, and everything below
    the collector's bound reads as CONSUMED.
    """

    def __init__(self, audit: bool = True):
        self.audit = audit
        self.threads: dict[str, Thread] = {}
        self.channels: dict[str, Channel] = {}
        self.iconns: dict[str, IConn] = {}
        self.oconns: dict[str, OConn] = {}

    def clone(self) -> SpaceTimeMemory:
        """An independent copy (the oracle's search branches on it)."""
        other = SpaceTimeMemory(self.audit)
        for c in self.channels.values():
            other.channels[c.name] = Channel(c.name, c.space, dict(c.items), c.floor,
                                             collected=None if c.collected is None else set(c.collected))
        for t in self.threads.values():
            other.threads[t.name] = Thread(t.name, t.vt, t.space, t.parent)
        for ic in self.iconns.values():
            copy = IConn(ic.name, other.threads[ic.thread.name], other.channels[ic.channel.name], ic.kt,
                         set(ic.consumed), set(ic.opened), ic.v5)
            copy.thread.iconns.append(copy)
            copy.channel.iconns.append(copy)
            other.iconns[ic.name] = copy
        for oc in self.oconns.values():
            copy = OConn(oc.name, other.threads[oc.thread.name], other.channels[oc.channel.name])
            copy.thread.oconns.append(copy)
            other.oconns[oc.name] = copy
        return other

    # -- lookups -------------------------------------------------------------------------------------
    def _get(self, table: dict, kind: str, name: str):
        if name not in table:
            raise STMError(f"unknown {kind} {name!r}")
        return table[name]

    def _fresh(self, table: dict, kind: str, name: str) -> None:
        if name in table:
            raise STMError(f"{kind} {name!r} exists already")

    # -- creation --------------------------------------------------------------------------------------
    def channel(self, name: str, space: int = 0) -> Channel:
        self._fresh(self.channels, "channel", name)
        self.channels[name] = Channel(name, space, collected=set() if self.audit else None)
        return self.channels[name]

    def thread(self, name: str, vt, parent: str | None = None, space: int | None = None) -> Thread:
        """A root thread (``parent`` None) at any ``vt``, or ``thread_create`` by ``parent`` (V4)."""
        self._fresh(self.threads, "thread", name)
        _check_time(vt, "vt")
        if parent is not None:
            creator = self._get(self.threads, "thread", parent)
            if vt < creator.vis():
                raise VisibilityError("V4", parent, None, vt, f"a child starts at VT >= VIS({parent}) = "
                                      f"{_show(creator.vis())}")
            space = creator.space if space is None else space
        self.threads[name] = Thread(name, vt, space or 0, parent)
        return self.threads[name]

    def attach(self, thread: str, channel: str, conn: str) -> IConn:
        """A new i_conn, with V5's implicit ``consume_until(VIS(t) - 1)``."""
        t = self._get(self.threads, "thread", thread)
        c = self._get(self.channels, "channel", channel)
        self._fresh(self.iconns, "connection", conn)
        ic = IConn(conn, t, c)
        vis = t.vis()
        if vis > 0:
            ic.consume_until(vis - 1)  # V5
            ic.v5 = vis
        t.iconns.append(ic)
        c.iconns.append(ic)
        self.iconns[conn] = ic
        return ic

    def oconn(self, thread: str, channel: str, conn: str) -> OConn:
        t = self._get(self.threads, "thread", thread)
        c = self._get(self.channels, "channel", channel)
        self._fresh(self.oconns, "connection", conn)
        oc = OConn(conn, t, c)
        t.oconns.append(oc)
        self.oconns[conn] = oc
        return oc

    # -- operations ------------------------------------------------------------------------------------
    def put(self, conn: str, ts: int, value=None) -> None:
        oc = self._get(self.oconns, "output connection", conn)
        _check_time(ts, "ts", finite=True)
        t = oc.thread
        if ts < t.vis():
            raise VisibilityError("V2", t.name, conn, ts, f"put only at ts >= VIS({t.name}) = {_show(t.vis())}")
        if oc.channel.present(ts):
            raise STMError(f"put on {conn}: timestamp {ts} is already present in channel {oc.channel.name}")
        if ts < oc.channel.floor:
            raise UnsafeCollection(f"put on {conn}: timestamp {ts} is below the collected bound {_show(oc.channel.floor)} of "
                           f"channel {oc.channel.name} although thread {t.name} may put it (an unsafe garbage "
                           "collection)")
        oc.channel.items[ts] = value

    def get(self, conn: str, ts: int | str | None = None):
        """Open an UNSEEN item (V1): timestamp ``ts``, the lowest UNSEEN (None) or the latest (``"latest"``).
        Returns ``(ts, value)``."""
        ic = self._get(self.iconns, "input connection", conn)
        if ts is None or ts == "latest":
            unseen = [x for x in ic.channel.items if ic.state(x) == UNSEEN]
            if not unseen:
                raise STMError(f"get on {conn}: no UNSEEN item in channel {ic.channel.name}")
            ts = min(unseen) if ts is None else max(unseen)
        _check_time(ts, "ts", finite=True)
        state = ic.state(ts)
        if state == CONSUMED and ts < ic.v5:
            raise VisibilityError("V5", ic.thread.name, conn, ts, f"attached at VIS = {_show(ic.v5)}, so nothing "
                                  "below it can be got on this connection")
        if state != UNSEEN:
            raise VisibilityError("V1", ic.thread.name, conn, ts, f"get only an UNSEEN item (it is {state})")
        if ts not in ic.channel.items:
            raise UnsafeCollection(f"get on {conn}: timestamp {ts} was collected although thread {ic.thread.name} could "
                           "still get it (an unsafe garbage collection)")
        ic.opened.add(ts)
        return ts, ic.channel.items[ts]

    def consume(self, conn: str, ts: int) -> None:
        ic = self._get(self.iconns, "input connection", conn)
        if ic.state(ts) != OPEN:
            raise STMError(f"consume on {conn}: timestamp {ts} is {ic.state(ts)}, not OPEN (skip with consume_until)")
        ic.consume(ts)

    def consume_until(self, conn: str, ts: int) -> None:
        ic = self._get(self.iconns, "input connection", conn)
        _check_time(ts, "ts")
        ic.consume_until(ts)

    def set_vt(self, thread: str, vt) -> None:
        t = self._get(self.threads, "thread", thread)
        _check_time(vt, "vt")
        if vt < t.vis():
            raise VisibilityError("V3", thread, None, vt, f"set_vt only to vt >= VIS({thread}) = {_show(t.vis())}")
        t.vt = vt


def _check_time(value, what: str, finite: bool = False) -> None:
    ok = (isinstance(value, int) and not isinstance(value, bool) and value >= 0) or (value == INF and not finite)
    if not ok:
        raise STMError(f"{what} must be an integer >= 0{'' if finite else ' or inf'}, not {value!r}")

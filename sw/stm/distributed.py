"""001 Sec. 7: the distributed, concurrent computation of minKV and minO over N address spaces, with the
flag/acknowledgement protocol for remote thread creation, remote put and remote attach.

Each address space ``j`` holds its threads and channels (``space`` in :mod:`.model`) and two arrays,
``M_j`` for minKV and ``O_j`` for minO, its conservative snapshots of every space's local bound:

* ``ASminKV(j)`` = the least VT of the threads on ``j`` and KT of their i_conns (Sec. 7.1);
* ``ASminO(j)`` = the least of the VTs of the threads on ``j`` and of the timestamps present and not
  fully consumed in the channels on ``j`` (Sec. 7.2; with the erratum of :mod:`.gc`, minO is exactly
  the least of these over all spaces, since below minK everything is fully consumed).

Its daemon (:meth:`Cluster.daemon`) sets ``M_j[j]``, ``O_j[j]``, sends both arrays to every other space,
and collects the items of its own channels below ``min(O_j)``. On receipt from ``i`` it believes ``i``'s
own entry, ignores ``i``'s estimate of ``j`` and takes the minimum for the others (Sec. 7.1).

The bounds fall in three places, which 001 protects with flags: a thread on ``i`` creating a thread on
``k`` at VT ``v`` (``ASminKV(k)`` and ``ASminO(k)`` may fall to ``v``), putting into a channel on ``k`` at
``ts`` (``ASminO(k)`` may fall to ``ts``), attaching to a channel on ``k`` (``ASminO(k)`` may fall to the
thread's VIS). The initiator increments ``flag[k]``, lowers its estimates of ``k``, sends the request and
waits for the acknowledgement, discarding ``k``'s arrays meanwhile: messages between two spaces arrive
in order, so any array ``k`` sends after the ack includes the change. ``flags=False`` runs the algorithm
without the protocol, which 001 Fig. 4 shows unsafe.

:class:`Cluster` is the algorithm as a deterministic state machine over per-pair FIFO links; a harness
decides which event happens next (a mutator operation, a daemon round, a message delivery), so tests
replay Fig. 4 and run thousands of adversarial schedules.
"""

from __future__ import annotations

from collections import deque
from dataclasses import dataclass, field

from .gc import as_min_kv, as_min_o, collect
from .model import INF, SpaceTimeMemory, STMError, UnsafeCollection

__all__ = ["FIXED", "NONE", "PAPER", "PROTOCOLS", "Cluster", "Space"]

FIXED, PAPER, NONE = "fixed", "paper", "none"
PROTOCOLS = (FIXED, PAPER, NONE)


@dataclass
class Space:
    """One address space's collector state."""

    index: int
    m: list[float]  # M_j: estimates of every space's ASminKV
    o: list[float]  # O_j: estimates of every space's ASminO
    flag: list[int]
    pending: dict[int, tuple] = field(default_factory=dict)  # request id -> (kind, target, args)

    def approx_kv(self) -> float:
        return min(self.m)

    def approx_o(self) -> float:
        return min(self.o)


class Cluster:
    """N address spaces over one :class:`SpaceTimeMemory` (the truth a test compares with).

    Parameters
    ----------
    spaces : int
    protocol : {"fixed", "paper", "none"}
        ``"paper"``: 001 Sec. 7 as printed (flags on remote create, put and attach; ``ASminO`` over VTs);
        ``"fixed"``: with the erratum below (``ASminO`` over VIS, and the flag protocol on remote gets too);
        ``"none"``: no flags at all (001 Fig. 4's unsafe collection).
    initial_vt : int
        The M arrays' initial value (001: "usually 0").
    """

    def __init__(self, spaces: int, *, protocol: str = FIXED, initial_vt: int = 0):
        if protocol not in PROTOCOLS:
            raise ValueError(f"protocol must be one of {', '.join(PROTOCOLS)}, not {protocol!r}")
        self.stm = SpaceTimeMemory()
        self.variant = protocol
        self.flags = protocol != NONE
        self.spaces = [Space(j, [initial_vt] * spaces, [initial_vt] * spaces, [0] * spaces) for j in range(spaces)]
        self.links: dict[tuple[int, int], deque] = {(i, j): deque() for i in range(spaces) for j in range(spaces)
                                                     if i != j}
        self.blocked: set[str] = set()  # threads waiting for a remote acknowledgement
        self.failed: list[tuple] = []  # remote operations refused by their target, with the reason
        self._ids = 0

    # -- local bounds -----------------------------------------------------------------------------------
    def as_min_kv(self, j: int) -> float:
        return as_min_kv(self.stm, j)

    def as_min_o(self, j: int) -> float:
        """``ASminO(j)``: over the VIS of the threads on ``j`` (the erratum), or their VT as 001 prints it."""
        return as_min_o(self.stm, j, over_vis=self.variant == FIXED)

    # -- the mutator ---------------------------------------------------------------------------------------
    def _remote(self, thread: str, target: int, kind: str, args: tuple, kv: float | None, o: float) -> None:
        """A request from ``thread``'s space to ``target`` (Sec. 7.1's protocol when ``flags``)."""
        here = self.spaces[self.stm.threads[thread].space]
        if self.flags:
            here.flag[target] += 1
            if kv is not None:
                here.m[target] = min(here.m[target], kv)
            here.o[target] = min(here.o[target], o)
        self._ids += 1
        here.pending[self._ids] = (kind, target, args)
        self.blocked.add(thread)
        self.links[(here.index, target)].append(("request", self._ids, kind, args))

    def create(self, parent: str, name: str, vt, space: int) -> None:
        """``thread_create`` by ``parent`` of ``name`` on ``space`` (V4 checked now; remote: by request)."""
        t = self.stm.threads[parent]
        if space == t.space:
            self.stm.thread(name, vt, parent=parent, space=space)
            return
        if vt < t.vis():
            self.stm.thread(name, vt, parent=parent, space=space)  # raises V4
        self._remote(parent, space, "create", (parent, name, vt, space), vt, vt)

    def put(self, conn: str, ts: int) -> None:
        oc = self.stm.oconns[conn]
        if oc.channel.space == oc.thread.space:
            self.stm.put(conn, ts)
            return
        if ts < oc.thread.vis():
            self.stm.put(conn, ts)  # raises V2
        self._remote(oc.thread.name, oc.channel.space, "put", (conn, ts), None, ts)

    def get(self, conn: str, ts: int) -> None:
        """``get`` on an i_conn; of a remote channel, by request: the channel's space lowers its estimate of
        the getter's space to ``ts`` (the getter's VIS falls to it) and discards that space's arrays until
        the getter acknowledges the response (the flag protocol, run from the serving side)."""
        ic = self.stm.iconns[conn]
        if ic.channel.space == ic.thread.space:
            self.stm.get(conn, ts)
            return
        here = self.spaces[ic.thread.space]
        self._ids += 1
        here.pending[self._ids] = ("get", ic.channel.space, (ic.thread.name, conn, ts))
        self.blocked.add(ic.thread.name)
        self.links[(here.index, ic.channel.space)].append(("request", self._ids, "get", (conn, ts)))

    def attach(self, thread: str, channel: str, conn: str) -> None:
        t, c = self.stm.threads[thread], self.stm.channels[channel]
        if c.space == t.space:
            self.stm.attach(thread, channel, conn)
            return
        self._remote(thread, c.space, "attach", (thread, channel, conn), None, t.vis())

    # -- the collector and the links -------------------------------------------------------------------------
    def daemon(self, j: int) -> dict[str, list[int]]:
        """One round of space ``j``'s daemon: its own entries, its arrays to every other space, and the
        collection of its channels below ``min(O_j)``."""
        s = self.spaces[j]
        s.m[j], s.o[j] = self.as_min_kv(j), self.as_min_o(j)
        for k in range(len(self.spaces)):
            if k != j:
                self.links[(j, k)].append(("arrays", list(s.m), list(s.o)))
        bound = max(s.approx_kv(), s.approx_o())
        return collect(self.stm, bound, [n for n, c in self.stm.channels.items() if c.space == j])

    def deliver(self, i: int, j: int) -> None:
        """The oldest message from ``i`` to ``j``."""
        message = self.links[(i, j)].popleft()
        s = self.spaces[j]
        if message[0] == "arrays":
            if self.flags and s.flag[i] > 0:
                return  # Sec. 7.1: discarded while a request to i is unacknowledged
            _, m, o = message
            for mine, theirs in ((s.m, m), (s.o, o)):
                mine[i] = theirs[i]  # believe his knowledge of himself
                for k in range(len(mine)):
                    if k not in (i, j):
                        mine[k] = min(mine[k], theirs[k])  # unify our estimates of others
        elif message[0] == "request":
            _, rid, kind, args = message
            try:
                if kind == "create":
                    parent, name, vt, space = args
                    self.stm.thread(name, vt, space=space)
                    self.stm.threads[name].parent = parent
                elif kind == "put":
                    self.stm.put(*args)
                elif kind == "attach":
                    self.stm.attach(*args)
                else:  # get: the getter's VIS falls to ts; hold our estimate of its space there until it acks
                    self.stm.get(*args)
                    if self.variant == FIXED:
                        s.o[i] = min(s.o[i], args[1])
                        s.flag[i] += 1
            except UnsafeCollection:
                raise
            except STMError as exc:  # the remote operation fails (a put raced another at the same timestamp)
                self.failed.append((kind, args, str(exc)))
            self.links[(j, i)].append(("ack", rid))
        elif message[0] == "got":  # the getter received the response: its later arrays include its VIS
            s.flag[i] -= 1
        else:  # ack
            kind, target, args = s.pending.pop(message[1])
            if kind == "get":
                if self.variant == FIXED:
                    self.links[(j, i)].append(("got",))
            elif self.flags:
                s.flag[target] -= 1
            self.blocked.discard(args[0] if kind in ("create", "attach", "get")
                                 else self.stm.oconns[args[0]].thread.name)

    # -- what the tests compare with ---------------------------------------------------------------------------
    def true_bounds(self) -> tuple[float, float]:
        """The exact (minKV, minO) of the whole system, counting the requests in flight at what they will
        add (a thread at its VT, an item at its timestamp, an i_conn at its thread's VIS)."""
        kv = min([self.as_min_kv(j) for j in range(len(self.spaces))], default=INF)
        o = min([as_min_o(self.stm, j) for j in range(len(self.spaces))], default=INF)
        for s in self.spaces:
            for kind, _, args in s.pending.values():
                if kind == "create":
                    kv, o = min(kv, args[2]), min(o, args[2])
                elif kind == "put":
                    o = min(o, args[1])
                else:
                    o = min(o, self.stm.threads[args[0]].vis())
        return kv, o


"""One address space of 001 Sec. 7, as its own state machine: what a process holds.

:class:`sfdf.sw.stm.distributed.Cluster` keeps the whole system in one model (the truth the harness
compares with). An :class:`AddressSpace` holds only its own threads and channels, and talks to the
others through messages, so the same code runs in one process under the deterministic harness
(:class:`Links`) and in separate OS processes (:mod:`.process`):

* its channels, with the authoritative per-connection state of every i_conn on them (a remote reader is
  a *ghost* thread here, never counted in this space's bounds);
* its threads, with a *shadow* of each i_conn they hold on a remote channel (the KT and the OPEN
  timestamps, which its ``ASminKV`` and the threads' VIS need), kept by the responses;
* the collector: the arrays ``M`` and ``O``, the flags, the daemon, with the fixed protocol of
  :mod:`.distributed` (``ASminO`` over VIS; remote create, put, attach and get flagged).

A remote operation blocks its thread until the response; ``consume`` and ``consume_until`` on a remote
i_conn only raise bounds, so they are sent without waiting. ``outbox`` collects ``(destination,
message)``; the transport delivers them in order per pair and calls :meth:`handle`.
"""

from __future__ import annotations

from collections import deque

from .gc import as_min_kv, as_min_o, collect
from .model import INF, Channel, IConn, SpaceTimeMemory, STMError, Thread, UnsafeCollection

__all__ = ["AddressSpace", "Links"]


class AddressSpace:
    """Address space ``index`` of ``spaces``; ``directory`` maps every channel to its space."""

    def __init__(self, index: int, spaces: int, directory: dict[str, int], initial_vt: int = 0):
        self.index, self.spaces, self.directory = index, spaces, directory
        self.stm = SpaceTimeMemory()
        for name, where in directory.items():
            if where == index:
                self.stm.channel(name, index)
        self.m = [initial_vt] * spaces
        self.o = [initial_vt] * spaces
        self.flag = [0] * spaces
        self.outbox: list[tuple[int, tuple]] = []
        self.pending: dict[int, tuple] = {}
        self.blocked: dict[str, object] = {}  # thread -> None while waiting; its result when answered
        self.results: dict[str, object] = {}
        self._ids = 0
        self._o_dirty = False  # a served request may have lowered ASminO since it was last computed

    # -- placement ----------------------------------------------------------------------------------------
    def local(self, channel: str) -> bool:
        return self.directory[channel] == self.index

    def _stub(self, channel: str) -> Channel:
        """A remote channel's stand-in here: it holds no items, only this space's shadows."""
        if channel not in self.stm.channels:
            self.stm.channels[channel] = Channel(channel, self.directory[channel], collected=None)
        return self.stm.channels[channel]

    def _ghost(self, name: str, space: int) -> Thread:
        if name not in self.stm.threads:
            self.stm.threads[name] = Thread(name, INF, space)
        return self.stm.threads[name]

    def _send(self, to: int, message: tuple) -> None:
        self.outbox.append((to, message))

    def _request(self, thread: str, to: int, kind: str, args: tuple, o: float | None = None,
                 kv: float | None = None) -> None:
        if o is not None:  # 001 Sec. 7.1's protocol: lower our estimate of the target until its ack
            self.flag[to] += 1
            self.o[to] = min(self.o[to], o)
            if kv is not None:
                self.m[to] = min(self.m[to], kv)
        self._ids += 1
        self.pending[self._ids] = (kind, to, thread, args, o is not None)
        self.blocked[thread] = None
        self._send(to, ("request", self._ids, kind, args))

    # -- the mutator (operations of this space's threads) --------------------------------------------------
    def thread(self, name: str, vt, parent: str | None = None, space: int | None = None) -> None:
        space = self.index if space is None else space
        if space == self.index:
            self.stm.thread(name, vt, parent=parent, space=space)
            return
        t = self.stm.threads[parent]
        if vt < t.vis():
            self.stm.thread(name, vt, parent=parent)  # raises V4 with its message
        self._request(parent, space, "create", (name, vt, parent), o=vt, kv=vt)

    def oconn(self, thread: str, channel: str, conn: str) -> None:
        if not self.local(channel):
            self._stub(channel)
        self.stm.oconn(thread, channel, conn)

    def attach(self, thread: str, channel: str, conn: str) -> None:
        if self.local(channel):
            self.stm.attach(thread, channel, conn)
            return
        vis = self.stm.threads[thread].vis()
        self._request(thread, self.directory[channel], "attach", (thread, channel, conn, vis), o=vis)

    def put(self, conn: str, ts: int, value=None) -> None:
        oc = self.stm.oconns[conn]
        if self.local(oc.channel.name):
            self.stm.put(conn, ts, value)
            return
        if ts < oc.thread.vis():
            self.stm.put(conn, ts)  # raises V2 with its message
        self._request(oc.thread.name, oc.channel.space, "put", (oc.channel.name, ts, value), o=ts)

    def get(self, conn: str, ts=None):
        ic = self.stm.iconns[conn]
        if self.local(ic.channel.name):
            return self.stm.get(conn, ts)
        self._request(ic.thread.name, ic.channel.space, "get", (conn, ts))
        return None

    def consume(self, conn: str, ts: int) -> None:
        ic = self.stm.iconns[conn]
        self.stm.consume(conn, ts)  # the shadow (or the channel's own state, here)
        if not self.local(ic.channel.name):
            self._send(ic.channel.space, ("consume", conn, ts))

    def consume_until(self, conn: str, ts: int) -> None:
        ic = self.stm.iconns[conn]
        self.stm.consume_until(conn, ts)
        if not self.local(ic.channel.name):
            self._send(ic.channel.space, ("consume_until", conn, ts))

    def set_vt(self, thread: str, vt) -> None:
        self.stm.set_vt(thread, vt)

    # -- the collector ----------------------------------------------------------------------------------------
    def as_min_kv(self) -> float:
        return as_min_kv(self.stm, self.index)

    def as_min_o(self) -> float:
        return as_min_o(self.stm, self.index)

    def daemon(self, min_o: bool = True) -> dict[str, list[int]]:
        """One round: our own entries, our arrays to every other space, our channels collected.

        ``min_o=False`` is a cheap round (001 Sec. 6: run minKV often, minO less often): it keeps our last
        ``ASminO``, which is still a lower bound because ``ASminO`` only rises here, unless a request served
        since then may have lowered it (a remote put, attach or get: ``_o_dirty``), when it is recomputed
        anyway."""
        j = self.index
        self.m[j] = self.as_min_kv()
        if min_o or self._o_dirty:
            self.o[j], self._o_dirty = self.as_min_o(), False
        for k in range(self.spaces):
            if k != j:
                self._send(k, ("arrays", list(self.m), list(self.o)))
        bound = max(min(self.m), min(self.o))
        return collect(self.stm, bound, [n for n, c in self.stm.channels.items() if c.space == j])

    # -- messages -----------------------------------------------------------------------------------------------
    def handle(self, source: int, message: tuple) -> None:
        kind = message[0]
        if kind == "arrays":
            if self.flag[source] > 0:
                return  # a request to `source` is unacknowledged: its arrays may predate it
            _, m, o = message
            for mine, theirs in ((self.m, m), (self.o, o)):
                mine[source] = theirs[source]
                for k in range(self.spaces):
                    if k not in (source, self.index):
                        mine[k] = min(mine[k], theirs[k])
        elif kind == "request":
            self._serve(source, *message[1:])
        elif kind == "response":
            self._answered(source, message[1], message[2])
        elif kind == "got":
            self.flag[source] -= 1
        elif kind == "consume":
            self.stm.iconns[message[1]].consume(message[2])
        elif kind == "consume_until":
            self.stm.iconns[message[1]].consume_until(message[2])

    def _serve(self, source: int, rid: int, kind: str, args: tuple) -> None:
        answer: object = None
        self._o_dirty = True
        try:
            if kind == "create":
                name, vt, parent = args
                self.stm.thread(name, vt, space=self.index)
                self.stm.threads[name].parent = parent
            elif kind == "attach":
                thread, channel, conn, vis = args
                ghost = self._ghost(thread, source)
                ic = IConn(conn, ghost, self.stm.channels[channel])
                if vis > 0:
                    ic.consume_until(vis - 1)  # V5, at the VIS the thread had when it asked
                    ic.v5 = vis
                ghost.iconns.append(ic)
                ic.channel.iconns.append(ic)
                self.stm.iconns[conn] = ic
                answer = ic.kt
            elif kind == "put":
                channel, ts, value = args
                c = self.stm.channels[channel]
                if c.present(ts):
                    raise STMError(f"put: timestamp {ts} is already present in channel {channel}")
                if ts < c.floor:
                    raise UnsafeCollection(f"put: timestamp {ts} is below the collected bound of channel {channel}")
                c.items[ts] = value
            else:  # get: the getter's VIS falls to ts; hold our estimate of its space there until it says "got"
                answer = self.stm.get(*args)
                self.o[source] = min(self.o[source], answer[0])
                self.flag[source] += 1
        except UnsafeCollection:
            raise
        except STMError as exc:
            answer = exc
        self._send(source, ("response", rid, answer))

    def _answered(self, source: int, rid: int, answer) -> None:
        kind, _, thread, args, flagged = self.pending.pop(rid)
        if flagged:
            self.flag[source] -= 1
        if kind == "attach" and not isinstance(answer, Exception):
            _, channel, conn, _ = args
            ic = IConn(conn, self.stm.threads[thread], self._stub(channel), kt=answer)
            ic.thread.iconns.append(ic)
            self.stm.iconns[conn] = ic
        elif kind == "get" and not isinstance(answer, Exception):
            self.stm.iconns[args[0]].opened.add(answer[0])
            self._send(source, ("got",))
        del self.blocked[thread]
        self.results[thread] = answer


class Links:
    """Address spaces joined by in-order per-pair queues, delivered one message at a time by whoever
    drives them (the deterministic harness)."""

    def __init__(self, spaces: list[AddressSpace]):
        self.spaces = spaces
        self.queues = {(i, j): deque() for i in range(len(spaces)) for j in range(len(spaces)) if i != j}

    def flush_outboxes(self) -> None:
        for space in self.spaces:
            for to, message in space.outbox:
                self.queues[(space.index, to)].append(message)
            space.outbox.clear()

    def deliver(self, i: int, j: int) -> None:
        self.spaces[j].handle(i, self.queues[(i, j)].popleft())
        self.flush_outboxes()

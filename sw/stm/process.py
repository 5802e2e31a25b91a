"""Address spaces as OS processes (001 Sec. 7-8): each process holds one :class:`sfdf.sw.stm.space.AddressSpace`,
its threads and channels, and a GC daemon; the spaces talk over ``multiprocessing`` pipes, one duplex pipe
per pair, so messages between two spaces arrive in order and asynchronously, as 001 assumes.

A process runs its application threads cooperatively: each is a generator that yields operations
(``("put", conn, ts, value)``, ``("get", conn, ts)``, ``("consume", conn, ts)``, ``("set_vt", thread, vt)``,
``("attach", thread, channel, conn)``, ``("oconn", thread, channel, conn)``) and receives their results. A
``get`` of an item not yet present, or a ``put`` into a full channel, is retried until it succeeds, as
Stampede's blocking variants would wait; threads reach remote channels transparently (the address space
sends the request and the thread waits for the response). The daemon runs every ``period`` seconds,
minKV every round and minO every ``o_every``-th (001 Sec. 6); ``refcount=True`` replaces it by collection at the moment an item is consumed on every connection of
its channel (001 Sec. 8's comparison).

:func:`run` starts the processes, waits until every application thread has finished, stops them, and
returns each space's results and statistics.
"""

from __future__ import annotations

import multiprocessing
import time
from multiprocessing.connection import wait

from .gc import fully_consumed
from .model import STMError
from .space import AddressSpace

__all__ = ["run"]


class _Space(AddressSpace):
    """An address space with channel capacities and, optionally, reference-counted collection."""

    def __init__(self, index, spaces, directory, capacities, refcount):
        super().__init__(index, spaces, directory)
        self.capacities, self.refcount = capacities, refcount
        self.collected = 0

    def full(self, channel: str) -> bool:
        return len(self.stm.channels[channel].items) >= self.capacities.get(channel, 1 << 30)

    def put(self, conn, ts, value=None):
        oc = self.stm.oconns[conn]
        if self.local(oc.channel.name) and self.full(oc.channel.name):
            raise STMError(f"channel {oc.channel.name} is full")
        super().put(conn, ts, value)

    def _serve(self, source, rid, kind, args):
        if kind == "put" and self.full(args[0]):
            self._send(source, ("response", rid, STMError(f"channel {args[0]} is full")))
            return
        super()._serve(source, rid, kind, args)

    def handle(self, source, message):
        super().handle(source, message)
        if self.refcount and message[0] in ("consume", "consume_until"):
            self._reclaim(self.stm.iconns[message[1]].channel.name)

    def consume(self, conn, ts):
        super().consume(conn, ts)
        if self.refcount and self.local(self.stm.iconns[conn].channel.name):
            self._reclaim(self.stm.iconns[conn].channel.name)

    def _reclaim(self, channel: str) -> None:
        """Reference counting: drop every item consumed on every connection of its channel."""
        c = self.stm.channels[channel]
        done = [ts for ts in c.items if c.iconns and fully_consumed(c, ts)]
        for ts in done:
            del c.items[ts]
        self.collected += len(done)


def _space_main(index, spaces, directory, capacities, conns, control, program, period, refcount, o_every):
    node = _Space(index, spaces, directory, capacities, refcount)
    threads = {name: generator for name, generator in program(node)}
    started = {name: time.perf_counter() for name in threads}
    elapsed: dict[str, float] = {}
    waiting: dict[str, tuple] = {}  # thread -> the operation it retries or waits on
    sent: dict[str, object] = {}
    last_daemon, rounds = time.perf_counter(), 0
    done_sent = stop = False
    peers = {conn: j for j, conn in conns.items()}

    def flush():
        for to, message in node.outbox:
            conns[to].send(message)
        node.outbox.clear()

    def step(name, value):
        try:
            op = threads[name].send(value)
        except StopIteration:
            del threads[name]
            elapsed[name] = time.perf_counter() - started[name]
            return
        waiting[name] = op

    for name in list(threads):
        step(name, None)
    while not stop:
        for conn in wait([*peers, control], timeout=0 if waiting else period):
            if conn is control:
                stop = True
                continue
            while conn.poll():
                node.handle(peers[conn], conn.recv())
        for name, op in list(waiting.items()):
            if name in node.blocked:
                continue
            if name in node.results:  # a remote operation answered
                answer = node.results.pop(name)
                if isinstance(answer, STMError):  # absent or full there: ask again
                    sent.pop(name, None)
                else:
                    del waiting[name]
                    sent.pop(name, None)
                    step(name, answer)
                    continue
            if name in sent:
                continue
            kind, *args = op
            try:
                result = getattr(node, kind)(*args)
            except STMError:
                continue  # not present yet, or full: retry next round
            if name in node.blocked:
                sent[name] = op
            else:
                del waiting[name]
                step(name, result)
        if not refcount and time.perf_counter() - last_daemon >= period:
            rounds += 1
            node.collected += sum(len(ts) for ts in node.daemon(min_o=rounds % o_every == 0).values())
            last_daemon = time.perf_counter()
        flush()
        if not threads and not done_sent:
            control.send(("done", index, elapsed))
            done_sent = True
    control.send(("collected", index, node.collected))


def run(spaces: int, directory: dict[str, int], programs, *, capacities=None, period: float = 0.005,
        o_every: int = 4, refcount: bool = False, timeout: float = 120.0) -> tuple[dict[str, float], dict[int, int]]:
    """Run ``programs[j](node)`` (a function returning ``[(thread name, generator)]``) in address space
    ``j``'s process; return each application thread's run time (seconds) and the items each space
    collected."""
    ctx = multiprocessing.get_context("spawn")
    pipes = {(i, j): ctx.Pipe() for i in range(spaces) for j in range(i + 1, spaces)}
    controls = [ctx.Pipe() for _ in range(spaces)]
    processes = []
    for j in range(spaces):
        conns = {}
        for (a, b), (x, y) in pipes.items():
            if a == j:
                conns[b] = x
            elif b == j:
                conns[a] = y
        p = ctx.Process(target=_space_main, args=(j, spaces, directory, capacities or {}, conns, controls[j][1],
                                                  programs[j], period, refcount, o_every), daemon=True)
        p.start()
        processes.append(p)
    finished, times, collected = set(), {}, {}
    deadline = time.perf_counter() + timeout
    try:
        while len(finished) < spaces:
            ready = wait([c for c, _ in controls], timeout=max(0.0, deadline - time.perf_counter()))
            if not ready:
                raise TimeoutError(f"the address spaces did not finish within {timeout} s")
            for conn in ready:
                _, index, elapsed = conn.recv()
                finished.add(index)
                times.update(elapsed)
    finally:
        for c, _ in controls:
            c.send(("stop",))
    for c, _ in controls:
        if c.poll(10):
            _, index, count = c.recv()
            collected[index] = count
    for p in processes:
        p.join(timeout=10)
        if p.is_alive():
            p.terminate()
    return times, collected

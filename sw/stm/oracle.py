"""An exact oracle for small states: which present items can any future sequence of operations still get?

The search tries every sequence of up to ``depth`` operations from the current state (001 Sec. 3's
operations on the existing threads, channels and connections, within the visibility rules): ``get`` of
every UNSEEN item of every i_conn, ``attach`` of every thread to every channel, ``set_vt`` to the lowest
VT allowed (``VIS(t)``), ``thread_create`` at ``VIS(t)``, ``consume`` of every OPEN item, and ``put`` at
``VIS(t)`` on every o_conn. It records every present item that some sequence gets. A GC condition is
safe on the state when nothing it would collect is in that set.

Depth 3 reaches every present item any longer sequence can: a thread's VIS falls only by a ``get`` of
an UNSEEN item of an i_conn it already has (V1; a new i_conn sees nothing below VIS, V5, and a child
starts at VIS or above, V4), after which one ``attach`` and one ``get`` reach anything present at or
above it; ``consume``, ``consume_until``, ``put`` and raising VT only take possibilities away.
Sequences are memoised on the state, so small states (a few threads, channels and timestamps) take
milliseconds.
"""

from __future__ import annotations

from .model import OPEN, UNSEEN, SpaceTimeMemory, STMError

__all__ = ["open_items", "reachable_gets"]


def _key(stm: SpaceTimeMemory):
    threads = tuple(sorted((t.name, t.vt) for t in stm.threads.values()))
    conns = tuple(sorted((ic.name, ic.thread.name, ic.channel.name, ic.kt, tuple(sorted(ic.consumed)),
                          tuple(sorted(ic.opened))) for ic in stm.iconns.values()))
    items = tuple(sorted((c.name, tuple(sorted(c.items)), c.floor) for c in stm.channels.values()))
    return threads, conns, items


def _moves(stm: SpaceTimeMemory):
    """(description, function of a copy) for every operation tried."""
    for t in list(stm.threads.values()):
        vis = t.vis()
        for ic in t.iconns:
            for ts in sorted(ic.channel.items):
                if ic.state(ts) == UNSEEN:
                    yield ("get", ic.channel.name, ts), lambda s, c=ic.name, x=ts: s.get(c, x)
            for ts in sorted(ic.opened):
                yield ("consume", ic.name, ts), lambda s, c=ic.name, x=ts: s.consume(c, x)
        for c in stm.channels:
            yield ("attach", t.name, c), lambda s, n=t.name, c=c: s.attach(n, c, f"oracle{len(s.iconns)}")
        if vis != t.vt:
            yield ("set_vt", t.name, vis), lambda s, n=t.name, v=vis: s.set_vt(n, v)
        yield ("thread", t.name, vis), lambda s, n=t.name, v=vis: s.thread(f"oracle{len(s.threads)}", v, parent=n)
        if vis != float("inf"):
            for oc in t.oconns:
                yield ("put", oc.name, vis), lambda s, c=oc.name, x=int(vis): s.put(c, x)


def reachable_gets(stm: SpaceTimeMemory, depth: int = 3) -> set[tuple[str, int]]:
    """``{(channel, ts)}``: items present now that some sequence of at most ``depth`` operations gets."""
    present = {(c.name, ts) for c in stm.channels.values() for ts in c.items}
    memo: dict = {}

    def search(state: SpaceTimeMemory, left: int) -> frozenset:
        key = (_key(state), left)
        if key in memo:
            return memo[key]
        found: set = set()
        for move, apply in _moves(state):
            if left == 1 and move[0] != "get":
                continue  # the last move: only a get can add to what is found
            after = state.clone()
            try:
                apply(after)
            except STMError:
                continue
            if move[0] == "get" and (move[1], move[2]) in present:
                found.add((move[1], move[2]))
            if left > 1:
                found |= search(after, left - 1)
        memo[key] = frozenset(found)
        return memo[key]

    return set(search(stm, depth)) if depth else set()


def open_items(stm: SpaceTimeMemory) -> set[tuple[str, int]]:
    """Items OPEN on some i_conn (already got: a GC must keep them too, their thread may still read them)."""
    return {(ic.channel.name, ts) for ic in stm.iconns.values() for ts in ic.opened if ic.state(ts) == OPEN}

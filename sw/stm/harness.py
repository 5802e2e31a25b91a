"""A deterministic, adversarial harness for the distributed collector (:mod:`.distributed`, and the
per-process :class:`sfdf.sw.stm.space.AddressSpace`: :func:`random_spaces_schedule`).

:func:`random_schedule` builds ``spaces`` address spaces, each with a thread and a channel, and then, for
``steps`` events chosen by a seeded generator, runs a mutator operation of a free thread (thread creation
here or remote, set_vt, attach, put, get, consume, each within the visibility rules), a daemon round
of some space, or the delivery of the oldest message of some link (so messages between two spaces keep
their order, and everything else is arbitrarily delayed). After every event it checks the collector's
safety: each space's bound (its own entry fresh, as its daemon computes it before collecting) is at most
the true minKV and minO of the whole system (requests in flight included); and a get or put that
reaches a collected timestamp raises :class:`sfdf.sw.stm.model.UnsafeCollection`.
"""

from __future__ import annotations

import random
from dataclasses import dataclass

from .distributed import FIXED, Cluster
from .gc import as_min_o
from .model import INF, STMError, UnsafeCollection

__all__ = ["Unsafe", "random_schedule", "random_spaces_schedule"]

HORIZON = 60  # timestamps and VTs stay below it (+ a few), so that states keep meeting


@dataclass(frozen=True)
class Unsafe:
    """The first unsafe moment of a schedule: its step and what was wrong."""

    step: int
    space: int | None
    detail: str


def random_schedule(seed: int, spaces: int = 2, protocol: str = FIXED, steps: int = 200) -> Unsafe | None:
    """One adversarial schedule; None if the collector stayed safe throughout."""
    rng = random.Random(seed)
    cluster = Cluster(spaces, protocol=protocol)
    stm = cluster.stm
    for j in range(spaces):
        stm.channel(f"c{j}", j)
        stm.thread(f"t{j}", 0, space=j)
    names = iter(range(10**9))
    for step in range(steps):
        roll = rng.random()
        try:
            if roll < 0.25:
                cluster.daemon(rng.randrange(spaces))
            elif roll < 0.55:
                busy = [link for link, queue in cluster.links.items() if queue]
                if busy:
                    cluster.deliver(*rng.choice(busy))
            else:
                _mutate(cluster, rng, names)
        except UnsafeCollection as exc:
            return Unsafe(step, None, str(exc))
        kv, o = cluster.true_bounds()
        for s in cluster.spaces:
            if unsafe := _above(step, s.index, cluster.as_min_kv(s.index), cluster.as_min_o(s.index), s.m, s.o,
                                kv, o):
                return unsafe
    return None


def _above(step: int, own: int, fresh_kv, fresh_o, m, o, true_kv, true_o) -> Unsafe | None:
    """Space ``own``'s bounds as its daemon computes them before collecting (its own entries fresh, the
    others from its arrays ``m``, ``o``), if either passes the true one."""
    approx_kv = min([fresh_kv, *(x for k, x in enumerate(m) if k != own)])
    approx_o = min([fresh_o, *(x for k, x in enumerate(o) if k != own)])
    if approx_kv > true_kv or approx_o > true_o:
        return Unsafe(step, own, f"space {own} bounds minKV {approx_kv}, minO {approx_o} above the true "
                      f"{true_kv}, {true_o}")
    return None


def _mutate(cluster: Cluster, rng: random.Random, names) -> None:
    stm = cluster.stm
    free = [t for t in stm.threads.values() if t.name not in cluster.blocked]
    if not free:
        return
    t = rng.choice(free)
    vis = t.vis() if t.vis() != INF else HORIZON
    spaces = len(cluster.spaces)
    op = rng.randrange(7)
    try:
        if op == 0 and len(stm.threads) < 6:
            cluster.create(t.name, f"x{next(names)}", vis, rng.randrange(spaces))
        elif op == 1:
            stm.set_vt(t.name, vis + rng.randrange(4))
        elif op == 2 and len(t.iconns) < 3:
            cluster.attach(t.name, f"c{rng.randrange(spaces)}", f"i{next(names)}")
        elif op == 3:
            oc = f"o{next(names)}"
            stm.oconn(t.name, f"c{rng.randrange(spaces)}", oc)
            ts = vis + rng.randrange(3)
            if not stm.oconns[oc].channel.present(ts):
                cluster.put(oc, ts)
        elif op in (4, 5):
            for ic in t.iconns:
                unseen = [ts for ts in range(HORIZON + 8) if ic.state(ts) == "UNSEEN"]
                if unseen:
                    cluster.get(ic.name, rng.choice(unseen))
                    break
        else:
            for ic in t.iconns:
                if ic.opened:
                    stm.consume(ic.name, min(ic.opened))
                    break
    except UnsafeCollection:
        raise
    except STMError:  # refused by a visibility rule: the thread does something else next time
        pass


def random_spaces_schedule(seed: int, spaces: int = 2, steps: int = 200, space_class=None) -> Unsafe | None:
    """:func:`random_schedule` over separate :class:`sfdf.sw.stm.space.AddressSpace` objects (``space_class``,
    a subclass for a broken variant), each holding only its threads and channels; the truth is assembled
    from all of them."""
    from .space import AddressSpace, Links

    rng = random.Random(seed)
    directory = {f"c{j}": j for j in range(spaces)}
    nodes = [(space_class or AddressSpace)(j, spaces, directory) for j in range(spaces)]
    links = Links(nodes)
    for j, node in enumerate(nodes):
        node.thread(f"t{j}", 0)
    names = iter(range(10**9))
    for step in range(steps):
        roll = rng.random()
        try:
            if roll < 0.25:  # minKV every round, minO one round in three
                nodes[rng.randrange(spaces)].daemon(min_o=rng.random() < 1 / 3)
                links.flush_outboxes()
            elif roll < 0.55:
                busy = [link for link, queue in links.queues.items() if queue]
                if busy:
                    links.deliver(*rng.choice(busy))
            else:
                _mutate_space(nodes, rng, names)
                links.flush_outboxes()
        except UnsafeCollection as exc:
            return Unsafe(step, None, str(exc))
        kv, o = _truth(nodes)
        for node in nodes:
            if unsafe := _above(step, node.index, node.as_min_kv(), node.as_min_o(), node.m, node.o, kv, o):
                return unsafe
    return None


def _truth(nodes) -> tuple[float, float]:
    """minKV and minO of the whole system, requests in flight counted at what they will add."""
    kv = min(node.as_min_kv() for node in nodes)
    o = min(as_min_o(node.stm, node.index) for node in nodes)
    for node in nodes:
        for kind, _, thread, args, _ in node.pending.values():
            if kind == "create":
                kv, o = min(kv, args[1]), min(o, args[1])
            elif kind == "put":
                o = min(o, args[1])
            elif kind == "attach":
                o = min(o, args[3])
    return kv, o


def _mutate_space(nodes, rng: random.Random, names) -> None:
    free = [(node, t) for node in nodes for t in node.stm.threads.values()
            if t.space == node.index and t.name not in node.blocked]
    if not free:
        return
    node, t = rng.choice(free)
    vis = t.vis() if t.vis() != INF else HORIZON
    spaces = len(nodes)
    op = rng.randrange(9)  # consume weighs more here, so bounds rise and the daemons collect
    try:
        if op == 0 and sum(len(n.stm.threads) for n in nodes) < 8:
            node.thread(f"x{next(names)}", vis, parent=t.name, space=rng.randrange(spaces))
        elif op == 1:
            node.set_vt(t.name, vis + rng.randrange(6))
        elif op == 2 and len(t.iconns) < 3:
            node.attach(t.name, f"c{rng.randrange(spaces)}", f"i{next(names)}")
        elif op == 3:
            oc = f"o{next(names)}"
            node.oconn(t.name, f"c{rng.randrange(spaces)}", oc)
            node.put(oc, vis + rng.randrange(3))
        elif op in (4, 5):
            for ic in t.iconns:
                if node.local(ic.channel.name):
                    unseen = [ts for ts in range(HORIZON + 8) if ic.state(ts) == "UNSEEN"]
                    if unseen:
                        node.get(ic.name, rng.choice(unseen))
                        break
                else:  # a remote channel: ask for the lowest UNSEEN item, if any
                    node.get(ic.name, None)
                    break
        else:
            for ic in t.iconns:
                if ic.opened:
                    node.consume(ic.name, min(ic.opened))
                    break
    except UnsafeCollection:
        raise
    except STMError:
        pass

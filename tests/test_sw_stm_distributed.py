"""001 Sec. 7: the distributed collector over address spaces, under a deterministic adversarial harness."""

from __future__ import annotations

import pytest

from sfdf.sw.stm.distributed import FIXED, NONE, PAPER, Cluster
from sfdf.sw.stm.harness import random_schedule, random_spaces_schedule
from sfdf.sw.stm.model import UnsafeCollection
from sfdf.sw.stm.space import AddressSpace, Links


def sync(cluster: Cluster) -> None:
    """Every daemon runs and every message is delivered, twice: the arrays agree."""
    for _ in range(2):
        for j in range(len(cluster.spaces)):
            cluster.daemon(j)
        for link, queue in cluster.links.items():
            while queue:
                cluster.deliver(*link)


def fig4(protocol: str):
    """001 Fig. 4: a (AS 1) at VT 5 with items 5, 6, 7 in its channel c; b (AS 2) at VT 10; a creates n on
    AS 2 at VT 5; AS 2's arrays sent before that arrive after it; a moves to VT 8; AS 1's daemon runs;
    then n attaches to c and gets 6."""
    cluster = Cluster(2, protocol=protocol)
    stm = cluster.stm
    stm.channel("c", 0)
    stm.thread("a", 5, space=0)
    stm.oconn("a", "c", "o")
    for ts in (5, 6, 7):
        stm.put("o", ts)
    stm.thread("b", 10, space=1)
    sync(cluster)
    assert cluster.spaces[0].m == [5, 10] and cluster.spaces[1].m == [5, 10]
    cluster.create("a", "n", 5, space=1)  # the request travels to AS 2
    cluster.daemon(1)  # AS 2's arrays, still without n (M2[2] = 10), are sent before the request lands
    cluster.deliver(0, 1)  # AS 2 creates n (VT 5) and acknowledges
    cluster.deliver(1, 0)  # the stale arrays reach AS 1
    cluster.deliver(1, 0)  # the acknowledgement
    stm.set_vt("a", 8)
    collected = cluster.daemon(0)
    cluster.attach("n", "c", "i")
    cluster.deliver(1, 0)
    cluster.deliver(0, 1)
    cluster.get("i", 6)
    cluster.deliver(1, 0)
    return cluster, collected


def test_fig4_without_the_flags_collects_what_a_new_thread_then_gets():
    with pytest.raises(UnsafeCollection, match="timestamp 6 was collected"):
        fig4(NONE)


@pytest.mark.parametrize("protocol", [PAPER, FIXED])
def test_fig4_with_the_flags_keeps_it(protocol):
    cluster, collected = fig4(protocol)
    assert collected == {"c": []}  # M1[2] was lowered to 5 and the stale M2 discarded
    assert cluster.stm.iconns["i"].state(6) == "OPEN"


def sec72(protocol: str):
    """Erratum in 001 Sec. 7.2 (ASminO over VTs is not monotone under *local* operations). t0 (AS 0, VT 4)
    reads channel c1 (AS 1: items 2 and 3, nothing else holds them). It gets 3 from c1, so VIS(t0) = 3,
    creates a local child x at VT 3 (V4), and consumes everything on c1 up to 3: ASminO(1) jumps to 10 while
    ASminO(0), over VTs, fell from 4 to 3 unannounced. AS 1 still believes 4 and collects 3; x attaches
    to c1 and gets it."""
    cluster = Cluster(2, protocol=protocol)
    stm = cluster.stm
    stm.channel("c1", 1)
    stm.thread("t1", 2, space=1)
    stm.oconn("t1", "c1", "o")
    stm.put("o", 2)
    stm.put("o", 3)
    stm.set_vt("t1", 10)
    stm.thread("t0", 0, space=0)
    cluster.attach("t0", "c1", "i")
    sync(cluster)
    stm.set_vt("t0", 4)
    sync(cluster)
    assert cluster.spaces[1].o == [4, 2]
    cluster.get("i", 3)
    cluster.deliver(0, 1)  # the get lands on AS 1
    cluster.deliver(1, 0)  # the response (and, fixed, AS 0's "got")
    stm.thread("x", 3, parent="t0", space=0)
    stm.consume_until("i", 3)
    collected = cluster.daemon(1)
    cluster.attach("x", "c1", "j")
    for link, queue in cluster.links.items():
        while queue:
            cluster.deliver(*link)
    cluster.get("j", 3)
    for link, queue in cluster.links.items():
        while queue:
            cluster.deliver(*link)
    return cluster, collected


def test_sec72_as_printed_collects_what_a_local_child_then_gets():
    with pytest.raises(UnsafeCollection, match="timestamp 3 was collected"):
        sec72(PAPER)


def test_sec72_fixed_asmino_over_vis_and_flagged_gets_keep_it():
    cluster, collected = sec72(FIXED)
    assert collected == {"c1": [2]}
    assert cluster.stm.iconns["j"].state(3) == "OPEN"


@pytest.mark.parametrize("spaces", [2, 3])
def test_random_adversarial_schedules_never_unsafe(spaces):
    """Thousands of schedules (events 200 each, messages delayed arbitrarily, per-pair order kept): with
    the fixed protocol no space's bound ever passes the true minKV or minO, and no get finds a collected
    item."""
    unsafe = [(seed, u) for seed in range(1000) if (u := random_schedule(seed, spaces, FIXED))]
    assert not unsafe, unsafe[:3]


def test_random_schedules_find_the_unsafe_variants():
    """The same harness catches 001 as printed (Sec. 7.2) and the algorithm without flags (Fig. 4)."""
    assert any(random_schedule(seed, 2, NONE) for seed in range(300))
    assert any(random_schedule(seed, 2, PAPER) for seed in range(1500))


# -- the per-process address spaces (sw/stm/space.py) --------------------------------------------------------

class UnflaggedSpace(AddressSpace):
    """An address space whose remote requests neither lower its estimates nor raise a flag (Fig. 4's bug)."""

    def _request(self, thread, to, kind, args, o=None, kv=None):
        super()._request(thread, to, kind, args)


@pytest.mark.parametrize("spaces", [2, 3])
def test_address_spaces_stay_safe_under_adversarial_schedules(spaces):
    """Separate address spaces, each with only its threads, channels, ghosts of remote readers and shadows
    of its threads' remote connections: 1,000 adversarial schedules each, never unsafe."""
    unsafe = [(seed, u) for seed in range(1000) if (u := random_spaces_schedule(seed, spaces))]
    assert not unsafe, unsafe[:3]


def test_the_address_space_harness_catches_missing_flags():
    assert any(random_spaces_schedule(seed, 2, space_class=UnflaggedSpace) for seed in range(400))


def drain(links: Links) -> None:
    while any(links.queues.values()):
        for link, queue in links.queues.items():
            if queue:
                links.deliver(*link)


def fig4_spaces(space_class):
    """001 Fig. 4 on two address spaces: AS 2's arrays sent before n's creation reach AS 1 before the
    response; AS 1 moves a to 8 and collects; n attaches to c and gets 6."""
    directory = {"c": 0}
    a1, a2 = space_class(0, 2, directory), AddressSpace(1, 2, directory)
    links = Links([a1, a2])
    a1.thread("a", 5)
    a1.oconn("a", "c", "o")
    for ts in (5, 6, 7):
        a1.put("o", ts)
    a2.thread("b", 10)
    for _ in range(2):
        a1.daemon()
        a2.daemon()
        links.flush_outboxes()
        drain(links)
    assert a1.m == [5, 10]
    a1.thread("n", 5, parent="a", space=1)
    a2.daemon()  # stale arrays (M2[2] = 10) queued before the request lands
    links.flush_outboxes()
    links.deliver(0, 1)  # AS 2 creates n, responds
    links.deliver(1, 0)  # the stale arrays: discarded, the flag is up
    links.deliver(1, 0)  # the response
    a1.set_vt("a", 8)
    collected = a1.daemon()
    links.flush_outboxes()
    a2.attach("n", "c", "i")
    links.flush_outboxes()
    drain(links)
    a2.get("i", 6)
    links.flush_outboxes()
    drain(links)
    return a1, a2, collected


def test_fig4_on_address_spaces():
    """With the flags AS 2's stale arrays are discarded: AS 1 keeps 5-7 and the new thread gets 6."""
    a1, a2, collected = fig4_spaces(AddressSpace)
    assert collected == {"c": []} and a1.m[1] == 5
    assert a2.results["n"][0] == 6 and a2.stm.iconns["i"].opened == {6}


def test_fig4_on_address_spaces_without_flags_is_unsafe():
    with pytest.raises(UnsafeCollection, match="timestamp 6 was collected"):
        fig4_spaces(UnflaggedSpace)

"""Address spaces as OS processes (001 Sec. 7-8): the ping-pong across two spawned processes, with the
distributed collector and with reference counting. Channels hold at most 100 items, so finishing 250
rounds needs at least 150 items of each channel reclaimed on the way: a run that completes shows the
collector both live and (a get of a collected item would crash its space) safe."""

from __future__ import annotations

import pytest

from sfdf.sw.stm.pingpong import PLACEMENTS, programs
from sfdf.sw.stm.process import run

ROUNDS, CAPACITY = 250, 100


@pytest.mark.parametrize("placement", list(PLACEMENTS))
@pytest.mark.parametrize("refcount", [False, True], ids=["distributed-gc", "refcount"])
def test_pingpong_across_processes(placement, refcount):
    directory, progs = programs(placement, ROUNDS, 64)
    times, collected = run(2, directory, progs, capacities={"d": CAPACITY, "e": CAPACITY}, refcount=refcount,
                           timeout=300)
    assert set(times) == {"D", "E"}  # both threads finished every round
    assert 2 * (ROUNDS - CAPACITY) <= sum(collected.values()) <= 2 * ROUNDS
    if refcount:
        assert sum(collected.values()) == 2 * ROUNDS  # every item, as soon as it was consumed

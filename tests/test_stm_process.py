"""Address spaces as OS processes (001 Sec. 7-8): the ping-pong across two spawned processes, with the
distributed collector and with reference counting, every round completed and garbage reclaimed."""

from __future__ import annotations

import pytest

from sfdf.sw.stm.pingpong import PLACEMENTS, programs
from sfdf.sw.stm.process import run


@pytest.mark.parametrize("placement", list(PLACEMENTS))
def test_pingpong_across_processes(placement):
    rounds = 120
    directory, progs = programs(placement, rounds, 64)
    times, collected = run(2, directory, progs, capacities={"d": 100, "e": 100}, timeout=120)
    assert set(times) == {"D", "E"}  # both threads ran every round (a get of a collected item would crash one)
    assert sum(collected.values()) > rounds  # the daemons reclaimed most of both channels' items
    times, collected = run(2, directory, progs, capacities={"d": 100, "e": 100}, refcount=True, timeout=120)
    assert sum(collected.values()) == 2 * rounds  # reference counting: every item, once consumed

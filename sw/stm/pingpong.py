"""001 Sec. 8's ping-pong: a driver thread puts items into channel ``d``; an echo thread gets and consumes
each and puts a reply into channel ``e``, which the driver gets and consumes. Both advance their VT past
each round, so the collector can reclaim both channels' items.

:data:`PLACEMENTS` are the three placements of the two threads and two channels over two address spaces
that ``bench/stm.py`` times (001 Fig. 6 reports three configurations). The program functions are
top-level, so :func:`sfdf.sw.stm.process.run` can start them in spawned processes.
"""

from __future__ import annotations

from functools import partial

__all__ = ["PLACEMENTS", "programs"]

#: name -> (space of the driver, of the echo, of channel d, of channel e)
PLACEMENTS = {
    "threads apart, each channel with its reader": (0, 1, 1, 0),
    "threads apart, both channels with the driver": (0, 1, 0, 0),
    "threads together, channels in the other space": (0, 0, 1, 1),
}


def _driver(node, rounds: int, size: int):
    payload = bytes(size)
    yield ("oconn", "D", "d", "D_d")
    yield ("attach", "D", "e", "D_e")
    for n in range(rounds):
        yield ("put", "D_d", n, payload)
        yield ("get", "D_e", n)
        yield ("consume", "D_e", n)
        yield ("set_vt", "D", n + 1)


def _echo(node, rounds: int, size: int):
    payload = bytes(size)
    yield ("attach", "E", "d", "E_d")
    yield ("oconn", "E", "e", "E_e")
    for n in range(rounds):
        yield ("get", "E_d", n)
        yield ("consume", "E_d", n)
        yield ("put", "E_e", n, payload)
        yield ("set_vt", "E", n + 1)


def _space_program(node, roles, rounds, size):
    """The threads of one space: create them at VT 0, and hand out their generators."""
    made = []
    for name, body in roles:
        node.thread(name, 0)
        made.append((name, body(node, rounds, size)))
    return made


def programs(placement: str, rounds: int, size: int):
    """``(directory, [program of space 0, program of space 1])`` for ``placement``."""
    driver, echo, d, e = PLACEMENTS[placement]
    roles = {0: [], 1: []}
    roles[driver].append(("D", _driver))
    roles[echo].append(("E", _echo))
    return {"d": d, "e": e}, [partial(_space_program, roles=roles[j], rounds=rounds, size=size) for j in (0, 1)]

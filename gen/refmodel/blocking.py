"""The waits-for relation at a deadlock, its blocking cycle, and the state of every channel.

002 Def. 2 / 000 Def. 1: ``u`` blocks ``v`` (``u -| v``) when ``v`` waits for input from ``u`` (an
empty data channel, ``RCB = 0`` with an empty control channel, or a head token hidden in ``u``'s
output buffer, 003 Sec. 2) or ``v`` waits to push into a full data or control channel read by ``u``.
A blocked node waits on exactly one edge, so the relation is a function; at a deadlock every
unfinished node is blocked by another unfinished one, and following it from any of them ends in a
cycle: the blocking cycle of the Deadlock Theorem (002 Thm. 2.1). Along it, in the blockwise
direction (002 Def. 4), blockwise channels are empty and counterblockwise ones full.
"""

from __future__ import annotations

from .node import SENDER_WAITS
from .watermark import WAIT_WATERMARK

__all__ = ["blocking_cycle", "channel_states"]


def _blocker(node):
    if node.reason == WAIT_WATERMARK:  # a held source waits on the sink furthest behind
        return node.watermark.lowest()
    link = node.waiting
    return link.dst if node.reason in SENDER_WAITS else link.src


def blocking_cycle(nodes) -> list[tuple]:
    """A blocking cycle in blockwise order, starting at its earliest edge in spec order.

    Parameters
    ----------
    nodes : list of NodeSim
        In topological order; the walk starts at the first unfinished one.

    Returns
    -------
    list of (Link, str)
        Each edge with its role, ``"blockwise"`` (the receiver waits: nothing visible) or
        ``"counterblockwise"`` (the sender waits: full). Empty when every node finished.
    """
    start = next((n for n in nodes if not n.finished), None)
    if start is None:
        return []
    seen: dict[int, int] = {}
    walk = []  # walk[j]: what node j waits on; node j + 1 blocks node j
    node = start
    while node.rank not in seen:
        seen[node.rank] = len(walk)
        role = "counterblockwise" if node.reason in SENDER_WAITS else "blockwise"
        walk.append((node.waiting, role))
        node = _blocker(node)
    cycle = walk[seen[node.rank]:]
    cycle.reverse()  # waits-for runs counterblockwise
    cycle = [step for step in cycle if step[0] is not None]  # the watermark is no edge
    first = min(range(len(cycle)), key=lambda j: cycle[j][0].position)
    return cycle[first:] + cycle[:first]


def channel_states(links, nodes, cycle) -> dict[str, dict]:
    """Every edge's channel levels, protocol variables and, on the blocking cycle, its role.

    Parameters
    ----------
    links : list of Link
        In spec order.
    nodes : list of NodeSim
        To say which node waits on which edge.
    cycle : list of (Link, str)
        As returned by :func:`blocking_cycle`.

    Returns
    -------
    dict of str to dict
        Per edge: ``src``, ``dst``, ``data`` (tokens held), ``hidden``, ``capacity``, ``full``,
        ``empty`` (nothing visible), ``control``, ``control_capacity``, ``control_full``,
        ``control_empty`` (None in inband mode), ``scb``, ``rcb``, ``borrowed`` (live credit's tokens
        taken before their credit; None in inband mode), ``role``
        (``"blockwise"``, ``"counterblockwise"`` or None off the cycle) and ``waiting``
        (``"<node>: <reason>"`` for each node blocked on the edge).
    """
    waiting: dict[str, list[str]] = {}
    for n in nodes:
        if not n.finished and n.waiting is not None:
            waiting.setdefault(n.waiting.name, []).append(f"{n.name}: {n.reason}")
    roles = {link.name: role for link, role in cycle}
    states = {}
    for link in links:
        q, ctl = link.data, link.control
        credit = ctl is not None
        states[link.name] = {
            "src": link.src.name,
            "dst": link.dst.name,
            "data": q.level,
            "hidden": q.hidden,
            "capacity": q.capacity,
            "full": q.full,
            "empty": q.visible == 0,
            "control": ctl.level if credit else None,
            "control_capacity": ctl.capacity if credit else None,
            "control_full": ctl.full if credit else None,
            "control_empty": ctl.level == 0 if credit else None,
            "scb": link.scb if credit else None,
            "rcb": link.rcb if credit else None,
            "borrowed": link.borrowed if credit else None,
            "role": roles.get(link.name),
            "waiting": waiting.get(link.name, []),
        }
    return states

"""Schedulers: which of the nodes that may proceed performs the next action.

Nodes are identified by their rank in the topological order. A scheduler keeps the set of nodes
that may proceed (the simulator removes a node when it blocks and adds it back when the other end
of its edge changes); it is empty exactly when the network is finished or deadlocked.

- ``round_robin``: one action per node in turn, in topological order.
- ``random``: a node drawn uniformly (seeded).
- ``adversarial``: the most upstream node first, so producers run ahead and fill channels before
  consumers drain them; it also takes spontaneous output-buffer flushes, which 003 Sec. 2 allows at
  any time and which 003 Fig. 2 needs to deadlock (seeded).
"""

from __future__ import annotations

import random

__all__ = [
    "ADVERSARIAL_FLUSH_PROBABILITY",
    "SCHEDULERS",
    "Adversarial",
    "RandomOrder",
    "RoundRobin",
    "make_scheduler",
]

#: Chance that the adversarial scheduler flushes an output buffer after a data token enters it.
ADVERSARIAL_FLUSH_PROBABILITY = 0.25


class _ReadyMask:
    """The nodes that may proceed as a bit mask (bit ``k`` for node ``k``)."""

    __slots__ = ("mask",)
    #: ``(edge, hidden, index) -> bool``: spontaneous flushes this scheduler takes (None: none).
    flush_oracle = None

    def __init__(self, nodes: int, seed: int):
        self.mask = 0

    def add(self, k: int) -> None:
        self.mask |= 1 << k

    def discard(self, k: int) -> None:
        self.mask &= ~(1 << k)


class RoundRobin(_ReadyMask):
    """One action per node in turn (topological order); ``seed`` is unused."""

    __slots__ = ("cursor",)

    def __init__(self, nodes: int, seed: int):
        super().__init__(nodes, seed)
        self.cursor = 0

    def pick(self) -> int:
        """The next node at or after the cursor, wrapping; -1 if none may proceed."""
        mask = self.mask
        if not mask:
            return -1
        upper = mask >> self.cursor
        if upper:
            k = self.cursor + (upper & -upper).bit_length() - 1
        else:
            k = (mask & -mask).bit_length() - 1
        self.cursor = k + 1
        return k


class RandomOrder:
    """A node drawn uniformly among those that may proceed."""

    __slots__ = ("items", "random", "where")
    flush_oracle = None

    def __init__(self, nodes: int, seed: int):
        self.items: list[int] = []
        self.where = [-1] * nodes
        self.random = random.Random(seed).random

    def add(self, k: int) -> None:
        if self.where[k] < 0:
            self.where[k] = len(self.items)
            self.items.append(k)

    def discard(self, k: int) -> None:
        where = self.where
        p = where[k]
        if p >= 0:
            last = self.items.pop()
            if last != k:
                self.items[p] = last
                where[last] = p
            where[k] = -1

    def pick(self) -> int:
        items = self.items
        if not items:
            return -1
        return items[int(self.random() * len(items))]


class Adversarial(_ReadyMask):
    """The most upstream node that may proceed; spontaneous flushes drawn with the seed."""

    __slots__ = ("rng",)

    def __init__(self, nodes: int, seed: int):
        super().__init__(nodes, seed)
        self.rng = random.Random(seed)

    def pick(self) -> int:
        mask = self.mask
        return (mask & -mask).bit_length() - 1 if mask else -1

    def flush_oracle(self, edge: str, hidden: int, index: int) -> bool:
        """Flush after a data token entered an output buffer, with :data:`ADVERSARIAL_FLUSH_PROBABILITY`."""
        return self.rng.random() < ADVERSARIAL_FLUSH_PROBABILITY


#: Scheduler name -> class.
SCHEDULERS = {"round_robin": RoundRobin, "random": RandomOrder, "adversarial": Adversarial}


def make_scheduler(name: str, nodes: int, seed: int):
    """The scheduler called ``name`` for ``nodes`` nodes."""
    try:
        cls = SCHEDULERS[name]
    except KeyError:
        raise ValueError(f"Scheduler must be one of {', '.join(SCHEDULERS)}, not {name!r}") from None
    return cls(nodes, seed)

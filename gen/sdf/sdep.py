"""SDEP in constant time per query from two tabulated steady states (004 Sec. "Calculating SDEP", Eq. 3, 4).

004 Thm. 1 gives ``SDEP_{Y<-X}(n) = |pullSchedule(X, n) ^ Y|``: exact, but a query for ``n`` costs a pull
schedule of ``n`` firings (:func:`sfdf.gen.sdf.rates.sdep`). Past the initialization, the pull
schedule of ``X`` repeats with the steady state ``S``: each ``|S ^ X|`` more firings of ``X`` take
``|S ^ Y|`` more of every ancestor ``Y`` (the repetition vector restricted to them), so 004 tabulates
``|I ^ X| + 2 |S ^ X|`` firings once and answers every later query by Eq. 3 and 4:

    SDEP(n) = |pullSchedule(X, n) ^ Y|                 if n <= |I ^ X| + 2 |S ^ X|
    SDEP(n) = q(n) |S ^ Y| + SDEP(n - q(n) |S ^ X|)    otherwise
    q(n)    = floor((n - |I ^ X|) / |S ^ X|) - 1

``|I ^ X|`` is the initialization's firings of ``X`` (004: prework and the buffers peeking filters need).
Here it is found, not assumed: the least ``i`` at which the firing counts of ``X``'s ancestors after
``i + |S ^ X|`` firings of ``X`` are those after ``i`` plus one steady state. The pull schedule is a
function of the items on the edges and the nodes' phases, which the counts fix, so from there it
repeats forever and Eq. 3 is exact (the extra steady state of 004's table is then margin, kept as
printed). One table per ``X`` serves ``SDEP_{Y<-X}`` for every ``Y`` (004: "the pull schedule for X
can be reused ... to any other actor").
"""

from __future__ import annotations

import networkx as nx

from .rates import SDFError, pull_counts, repetitions

__all__ = ["SDEPTable"]


class SDEPTable:
    """``SDEP_{Y<-X}`` for one downstream actor ``X`` and every ``Y``, by 004 Eq. 3, 4.

    Parameters
    ----------
    network : sfdf.gen.model.Network
        A consistent SDF network (:func:`sfdf.gen.sdf.rates.repetitions`).
    downstream : str
        ``X``.
    limit : int
        Most firings of ``X`` to try before giving up on finding the initialization (an
        :class:`SDFError`; a consistent, live network repeats within a few steady states).

    Attributes
    ----------
    init : int
        ``|I ^ X|``.
    period : int
        ``|S ^ X|``: the repetitions of ``X``.
    """

    def __init__(self, network, downstream: str, *, limit: int = 1 << 20):
        reps = repetitions(network)
        graph = nx.MultiDiGraph((e.src, e.dst) for e in network.edges)
        graph.add_nodes_from(reps)
        self.downstream = downstream
        self.ancestors = nx.ancestors(graph, downstream) - {downstream}
        self.steady = {y: reps[y] for y in self.ancestors}
        self.period = reps[downstream]
        firings = pull_counts(network, downstream)
        rows = [dict.fromkeys(self.ancestors, 0)]  # rows[n]: every ancestor's firings for n firings of X
        while True:
            counts = next(firings)
            rows.append({y: counts[y] for y in self.ancestors})
            n = len(rows) - 1
            i = n - self.period
            if i >= 0 and all(rows[n][y] == rows[i][y] + self.steady[y] for y in self.ancestors):
                self.init = i
                break
            if n > limit:
                raise SDFError(f"its pull schedule does not repeat within {limit} firings", "report it as a bug",
                               ("node", downstream, None))
        while len(rows) <= self.init + 2 * self.period:  # 004 Eq. 3's base case: |I ^ X| + 2 |S ^ X|
            counts = next(firings)
            rows.append({y: counts[y] for y in self.ancestors})
        self.rows = rows

    def __call__(self, upstream: str, n: int) -> int:
        """``SDEP_{upstream<-X}(n)``, ``n >= 0``; 0 where no directed path runs from ``upstream`` to ``X``."""
        if n < 0:
            raise ValueError(f"SDEP is defined for n >= 0, not {n}")
        if upstream not in self.ancestors:
            return 0
        if n < len(self.rows):
            return self.rows[n][upstream]
        q = (n - self.init) // self.period - 1  # 004 Eq. 4
        return q * self.steady[upstream] + self.rows[n - q * self.period][upstream]

    def series(self, upstream: str, count: int) -> list[int]:
        """``[SDEP(1), ..., SDEP(count)]``."""
        return [self(upstream, n) for n in range(1, count + 1)]

"""Large feasible hidden amounts by linear programming over node potentials.

000 Sec. 4.2 asks for heartbeat intervals ``[e]`` inside the polyhedron of constraints (3), (4), (5)
and leaves "how to efficiently find the highest-throughput set" open (Sec. 7); the printed method
enumerates cycles. Here: integer amounts ``h`` are feasible (the mirror graph, forward ``|q|``, mirror
``-h``, has no non-positive cycle) exactly when potentials exist with

    h(e) + d <= pi(v) - pi(u) <= |q| - d      for every edge u -> v,  d = 1 / (k + 1)

for ``k`` vertices (a simple cycle of integer weight >= 1 keeps weight > 0 after subtracting ``d``
from each of its <= k arcs, and conversely potentials make every cycle weigh at least ``j d > 0``).
Maximising ``sum h`` is then a difference-constraint LP, the dual of a min-cost flow: scaled by
``k + 1`` every bound is an integer and the constraint matrix is totally unimodular, so HiGHS returns
an integral vertex. Each amount is the floor of its scaled value; a Bellman-Ford check certifies the
result. The same LP, with each amount capped by the current output buffer, repairs output buffers
(003 Sec. 4.2, "shrink the corresponding output buffers").
"""

from __future__ import annotations

from collections.abc import Mapping

import numpy as np
from scipy.optimize import linprog
from scipy.sparse import coo_matrix

from .mirror import find_nonpositive_cycle, mirror_arcs, offer_potentials

__all__ = ["heartbeat_intervals", "max_hidden_amounts"]


def max_hidden_amounts(network, upper: Mapping[str, int], edges, fixed: Mapping[str, int] | None = None
                       ) -> dict[str, int] | None:
    """Integer amounts ``0 <= h(e) <= upper[e]`` on ``edges``, large in total, with no non-positive
    mirror cycle.

    Parameters
    ----------
    network : gen.model.Network
    upper : Mapping[str, int]
        Cap per edge (``|q| - 1`` for heartbeats, 000 (5)).
    edges : collection of str
        The edges whose amounts are chosen; only these enter the mirror graph (pass the edges that
        lie on undirected cycles: the others are free to take their cap).
    fixed : Mapping[str, int], optional
        Amounts the user set: kept as they are.

    Returns
    -------
    dict or None
        None when the fixed amounts leave no feasible choice.
    """
    fixed = fixed or {}
    chosen = set(edges)
    edges = [e for e in network.edges if e.name in chosen]
    if not edges:
        return {}
    vertices = sorted({e.src for e in edges} | {e.dst for e in edges})
    vid = {v: i for i, v in enumerate(vertices)}
    k, m = len(vertices), len(edges)
    scale = k + 1
    u = np.array([vid[e.src] for e in edges])
    v = np.array([vid[e.dst] for e in edges])
    cap = np.array([e.capacity for e in edges], dtype=float)
    lo = np.array([fixed.get(e.name, 0) for e in edges], dtype=float)
    hi = np.array([fixed.get(e.name, upper[e.name]) for e in edges], dtype=float)
    # variables: potentials Pi (k, free; Pi[0] = 0) then scaled amounts X (m)
    # rows 0..m-1:  Pi(v) - Pi(u) <= scale |q| - 1;  rows m..2m-1:  X_e - Pi(v) + Pi(u) <= -1
    r = np.arange(m)
    ones = np.ones(m)
    a_ub = coo_matrix(
        (np.concatenate([ones, -ones, -ones, ones, ones]),
         (np.concatenate([r, r, m + r, m + r, m + r]), np.concatenate([v, u, v, u, k + r]))),
        shape=(2 * m, k + m),
    ).tocsr()
    b_ub = np.concatenate([scale * cap - 1, -ones])
    lower = np.concatenate([np.full(k, -np.inf), scale * lo])
    upper_b = np.concatenate([np.full(k, np.inf), scale * hi])
    lower[0] = upper_b[0] = 0.0
    res = linprog(np.concatenate([np.zeros(k), -ones]), A_ub=a_ub, b_ub=b_ub,
                  bounds=np.stack([lower, upper_b], axis=1), method="highs-ds",
                  options={"simplex_dual_edge_weight_strategy": "dantzig"})
    if res.status == 2:
        return None  # infeasible: only possible through fixed amounts (0 everywhere is feasible)
    if res.status != 0:  # pragma: no cover
        raise RuntimeError(f"heartbeat LP failed: {res.message}")
    x = np.floor(res.x[k:] / scale + 1e-9)
    amounts = {e.name: int(h) for e, h in zip(edges, x)}
    # The LP's own potentials certify the floored amounts when every margin is positive (then each
    # cycle weighs more than 0, hence at least 1); otherwise fall back to Bellman-Ford.
    tension = res.x[v] - res.x[u]
    if np.all(tension - scale * x > 1e-6) and np.all(scale * cap - tension > 1e-6):
        offer_potentials(dict(zip(vertices, res.x[:k])))  # lets the safety check skip Bellman-Ford
        return amounts
    return _certify(network, amounts, edges, fixed)


def _certify(network, amounts: dict[str, int], edges, fixed) -> dict[str, int]:
    """Lower amounts on any non-positive mirror cycle left by rounding until none is left."""
    names = [e.name for e in edges]
    while True:
        cycle = find_nonpositive_cycle(mirror_arcs(network, amounts, names))
        if cycle is None:
            return amounts
        worst = max((a for a in cycle if a.mirror and a.edge not in fixed), key=lambda a: amounts[a.edge])
        amounts[worst.edge] -= 1


def heartbeat_intervals(network, on_cycles, fixed: Mapping[str, int] | None = None) -> dict[str, int]:
    """Heartbeat intervals for credit mode (000 Sec. 4.2, constraints (3), (4), (5)).

    Edges on no undirected cycle get ``|q| - 1`` (constraint (5) alone); the others come from the
    potential LP of :func:`max_hidden_amounts`. A node that declares unbounded control messages
    forces heartbeat 0 on its out-edges (000 Thm. 4.5). ``fixed`` intervals (set by the user) stay;
    if they leave nothing feasible the free ones drop to 0, the safest choice, and the check reports.
    """
    fixed = dict(fixed or {})
    forced = {e.name for e in network.edges if network.node_by_name[e.src].control_messages is None}
    upper = {e.name: (0 if e.name in forced else e.capacity - 1) for e in network.edges}
    result = dict(upper)
    result.update(fixed)
    chosen = max_hidden_amounts(network, upper, set(on_cycles), fixed)
    if chosen is None:
        chosen = {name: 0 for name in on_cycles if name not in fixed}
    result.update(chosen)
    return result

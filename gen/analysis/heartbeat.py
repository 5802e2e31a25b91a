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

from .mirror import find_nonpositive_cycle, mirror_arcs

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
    edges = [e for e in network.edges if e.name in set(edges)]
    if not edges:
        return {}
    vertices = sorted({e.src for e in edges} | {e.dst for e in edges})
    vid = {v: i for i, v in enumerate(vertices)}
    k, m = len(vertices), len(edges)
    scale = k + 1
    # variables: potentials Pi (k, free) then scaled amounts X (m, 0 <= X <= scale * upper)
    rows, cols, vals, rhs = [], [], [], []
    for j, e in enumerate(edges):
        u, v = vid[e.src], vid[e.dst]
        r = 2 * j  # Pi(v) - Pi(u) <= scale |q| - 1
        rows += [r, r]
        cols += [v, u]
        vals += [1.0, -1.0]
        rhs.append(scale * e.capacity - 1)
        r += 1  # X_e - Pi(v) + Pi(u) <= -1
        rows += [r, r, r]
        cols += [k + j, v, u]
        vals += [1.0, -1.0, 1.0]
        rhs.append(-1)
    a_ub = coo_matrix((vals, (rows, cols)), shape=(2 * m, k + m)).tocsr()
    cost = np.concatenate([np.zeros(k), -np.ones(m)])
    bounds = [(None, None)] * k + [
        (scale * fixed[e.name],) * 2 if e.name in fixed else (0, scale * upper[e.name]) for e in edges
    ]
    bounds[0] = (0, 0)  # potentials are defined up to a constant
    res = linprog(cost, A_ub=a_ub, b_ub=np.array(rhs, dtype=float), bounds=bounds, method="highs")
    if res.status == 2:
        return None  # infeasible: only possible through fixed amounts (0 everywhere is feasible)
    if res.status != 0:  # pragma: no cover
        raise RuntimeError(f"heartbeat LP failed: {res.message}")
    amounts = {e.name: int(np.floor(res.x[k + j] / scale + 1e-9)) for j, e in enumerate(edges)}
    return _certify(network, amounts, edges, fixed)


def _certify(network, amounts: dict[str, int], edges, fixed) -> dict[str, int]:
    """Lower amounts on any non-positive mirror cycle left by rounding until none is left."""
    names = [e.name for e in edges]
    while True:
        cycle = find_nonpositive_cycle(mirror_arcs(network, amounts, names))
        if cycle is None:
            return amounts
        worst = max((a for a in cycle if a.mirror and a.edge not in fixed), key=lambda a: amounts[a.edge])
        amounts[worst.edge] -= 1  # pragma: no cover - the LP vertex is integral


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

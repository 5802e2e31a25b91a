"""The random-DAG regression's networks: credit-mode random DAGs with undirected cycles, the hardware's
corner cases drawn at random.

``tests/cosim/test_network.py`` runs a few seeds in ``make test``; ``bench/cosim.py`` sweeps many. Each seed
gives one network (:func:`sfdf.gen.randomnet.random_dag`: 3-7 nodes, 4-10 edges, capacities 1-8, no isolated
node, some edge on an undirected cycle) with ``random_filter`` kernels whose filter rates and LFSR seeds lie
at their bounds too (never / always filter, one step inside each; seeds 0 and 2^32 - 1), initiation intervals
1 or 2, indices of 8, 16 or 32 bits, and one seed in four with 000's receiver as printed
(``live_credit = false``).
"""

from __future__ import annotations

import random
from dataclasses import replace

from sfdf.gen.analysis.cycles import edges_on_cycles
from sfdf.gen.model import Network
from sfdf.gen.randomnet import random_dag

__all__ = ["RATES", "random_credit_network", "single_stage"]

#: Filter rates: 0 and 1, one step inside each (thresholds 1 and 65535 of the 16-bit LFSR), and between.
RATES = (0.0, 1 / 65536, 0.3, 0.7, 0.95, 65535 / 65536, 1.0)


def random_credit_network(seed: int) -> Network:
    """The network of ``seed`` (module docstring), named ``rand<seed>``."""
    rng = random.Random(seed)
    while True:
        net = random_dag(rng, rng.randint(3, 7), rng.randint(4, 10), capacities=(1, 8), name=f"rand{seed}")
        if edges_on_cycles(net) and set(net.sources).isdisjoint(net.sinks):  # no isolated node
            break
    nodes = tuple(replace(n, kernel="random_filter", ii=rng.choice([1, 1, 2]),
                          params={"rate": rng.choice(RATES),
                                  "seed": rng.choice([0, 1, rng.randrange(1 << 16), (1 << 32) - 1])})
                  for n in net.nodes)
    return replace(net, nodes=nodes, mode="credit", index_width=rng.choice([8, 16, 32]), live_credit=seed % 4 != 3)


def single_stage(network: Network) -> Network:
    """``network`` with ``pipelined = false`` on every node that can be single-stage (one input and one
    output, ``ii = 1``, live credit: :meth:`sfdf.gen.model.Network.single_stage_problem`)."""
    return replace(network, nodes=tuple(replace(n, pipelined=network.single_stage_problem(n.name) is not None)
                                        for n in network.nodes))

"""The cycles the generated hardware takes, for the throughput bound of :mod:`sfdf.gen.analysis.throughput`.

Each figure is the hardware's own, from the modules that build it:

* a token pushed at cycle ``t`` is offered by its channel at ``t + 1`` (:class:`~sfdf.hdl.channels.DataChannel`:
  ``valid`` is a register) and, where the receiving node has an offer register
  (:class:`~sfdf.hdl.offer.OfferRegister`, :func:`~sfdf.hdl.offer.offer_slots`: every node where the
  platform is pipelined, a join of two or more inputs elsewhere, none where the spec says
  ``registered_offers = false``), held there for the decide stage at ``t + 2``;
* the room a consumption frees is seen by the writer a cycle later (``ready`` is a register; a token an
  offer register holds counts until the join releases it);
* a decided computation waits a cycle in the decided queue, plus its kernel's latency
  (:class:`~sfdf.hdl.decided.DecidedQueue`, :data:`~sfdf.hdl.node.DECIDED` slots plus the latency);
* a single-stage node (``pipelined = false``, :class:`~sfdf.hdl.single_stage.SingleStageNode`, or ``"auto"``
  where :func:`single_stage` chooses it) has neither an offer register nor a decided queue: it sends in the
  cycle it decides.
"""

from __future__ import annotations

from sfdf.gen.analysis.throughput import (
    StageTiming,
    network_rate,
    single_stage_nodes,
    throughput_bound,
    throughput_summary,
)
from sfdf.gen.model import AUTO

from .kernels import node_latency
from .node import DECIDED
from .offer import offer_slots
from .traits import PlatformTraits

__all__ = ["hardware_rate", "single_stage", "stage_timing"]

#: Cycles from a push to the channel's ``valid``, and from a release to the writer's ``ready``.
CHANNEL_CYCLES = 1
RELEASE_CYCLES = 1
#: Cycles a node's offer register adds between its channel and its decide stage.
OFFER_CYCLES = 1


def stage_timing(network, platform=None) -> StageTiming:
    """The :class:`~sfdf.gen.analysis.throughput.StageTiming` of ``network``'s hardware on ``platform``
    (None: the generic Verilog of ``sfdf generate`` and the cosim, pipelined like ECP5's), its single-stage
    nodes :func:`single_stage`'s (elaboration takes them from :func:`sfdf.hdl.plan.plan`, which calls this
    once)."""
    traits = PlatformTraits.of(platform)
    timing = _timing(network, traits, frozenset(n.name for n in network.nodes if n.pipelined is False))
    auto = {n.name for n in network.nodes if n.pipelined == AUTO and network.single_stage_problem(n.name) is None}
    while network.edges and auto - timing.single:
        faster = single_stage_nodes(network, timing, throughput_bound(network, timing), allowed=auto)
        if faster is None:
            break
        timing = _timing(network, traits, timing.single | set(faster["nodes"]))
    return timing


def single_stage(network, platform=None) -> frozenset:
    """The nodes built single-stage on ``platform``: ``pipelined = false``, and the ``"auto"`` ones (the
    default) that can be (:meth:`~sfdf.gen.model.Network.single_stage_problem`) where that raises the rate
    of a reconvergent path, decided on the platform's cycles: while a channel's room binds the rate, the
    auto nodes on the binding cycle become single-stage if that raises it
    (:func:`~sfdf.gen.analysis.throughput.single_stage_nodes`, one cycle per hop through each instead of
    three; docs/hardware.md, "The single-stage node"). ``resolved`` networks only (concrete capacities)."""
    return stage_timing(network, platform).single


def hardware_rate(network, platform=None) -> dict | None:
    """``sfdf check``'s throughput: :func:`~sfdf.gen.analysis.throughput.throughput_summary` on the platform's
    cycles, with ``auto_single_stage``: the nodes ``"auto"`` made single-stage and the rate with them
    pipelined (None where it made none)."""
    timing = stage_timing(network, platform)
    summary = throughput_summary(network, timing)
    if summary is None:
        return None
    auto = sorted(v for v in timing.single if network.node_by_name[v].pipelined == AUTO)
    summary["auto_single_stage"] = None
    if auto:
        pipelined = _timing(network, PlatformTraits.of(platform), timing.single - set(auto))
        rate, _ = network_rate(network, pipelined)
        summary["auto_single_stage"] = {"nodes": auto, "pipelined_tokens_per_cycle": float(rate),
                                        "pipelined_exact": str(rate)}
    return summary


def _timing(network, traits: PlatformTraits, single: frozenset) -> StageTiming:
    inputs = {n.name: len(network.in_edges(n.name)) for n in network.nodes}
    offer = {n.name: OFFER_CYCLES for n in network.nodes
             if inputs[n.name] and n.name not in single
             and offer_slots(inputs[n.name], traits, n.registered_offers)}
    return StageTiming(hop=CHANNEL_CYCLES, release=RELEASE_CYCLES, decided=DECIDED,
                       latency={n.name: node_latency(n, traits.pipelined) for n in network.nodes}, offer=offer,
                       single=frozenset(single))

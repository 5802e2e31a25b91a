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
* a single-stage node (``pipelined = false``, :class:`~sfdf.hdl.single_stage.SingleStageNode`) has neither
  an offer register nor a decided queue: it sends in the cycle it decides.
"""

from __future__ import annotations

from sfdf.gen.analysis.throughput import StageTiming

from .dsp import pipelined
from .kernels import kernel_latency
from .node import DECIDED
from .offer import offer_slots

__all__ = ["stage_timing"]

#: Cycles from a push to the channel's ``valid``, and from a release to the writer's ``ready``.
CHANNEL_CYCLES = 1
RELEASE_CYCLES = 1
#: Cycles a node's offer register adds between its channel and its decide stage.
OFFER_CYCLES = 1


def stage_timing(network, platform=None) -> StageTiming:
    """The :class:`~sfdf.gen.analysis.throughput.StageTiming` of ``network``'s hardware on ``platform``
    (None: the generic Verilog of ``sfdf generate`` and the cosim, pipelined like ECP5's)."""
    deep = pipelined(platform)
    latency = {kernel: kernel_latency(kernel) if deep else 0 for kernel in {n.kernel for n in network.nodes}}
    inputs = {n.name: len(network.in_edges(n.name)) for n in network.nodes}
    single = frozenset(n.name for n in network.nodes if not n.pipelined)
    offer = {n.name: OFFER_CYCLES for n in network.nodes
             if inputs[n.name] and n.name not in single and offer_slots(inputs[n.name], platform, n.registered_offers)}
    return StageTiming(hop=CHANNEL_CYCLES, release=RELEASE_CYCLES, decided=DECIDED,
                       latency={n.name: latency[n.kernel] for n in network.nodes}, offer=offer, single=single)

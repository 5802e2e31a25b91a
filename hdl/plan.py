"""The elaboration plan: everything elaboration decides, resolved once from the network and the platform.

:func:`plan` takes a resolved network and the platform it is elaborated for and returns a
:class:`NetworkPlan`: the platform's traits (:class:`sfdf.hdl.traits.PlatformTraits`), the nodes built
single-stage (the throughput analysis's choice, :func:`sfdf.hdl.timing.stage_timing`, the one ``sfdf check``
reports, made once here), the edges whose data channel's head carries the heartbeat's index, the index
watermark and the index bits inside, and each node's and edge's settings (:class:`NodePlan`,
:class:`EdgePlan`). :class:`sfdf.hdl.top.NetworkTop` builds from it, each node
(:class:`sfdf.hdl.node.SFDFNode`, :class:`sfdf.hdl.single_stage.SingleStageNode`) from its
:class:`NodePlan` and each edge component from its :class:`EdgePlan`, and none of them decides these again;
the manifest records the decisions (:func:`sfdf.hdl.manifest.build_manifest`).
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass

from sfdf.gen.analysis.control import index_bits_inside, watermark
from sfdf.gen.analysis.cycles import biconnected_edge_components
from sfdf.gen.analysis.throughput import StageTiming
from sfdf.gen.contract import KernelPorts, kernel_features, kernel_ports, may_filter
from sfdf.gen.kernels import MESSAGE_WIDTH, result_width, word_width

from .channels import head_reloads_while_empty
from .join import LOOKAHEAD_MAX
from .kernels import node_latency
from .links import edge_link
from .offer import SLOTS, offer_slots
from .timing import stage_timing
from .traits import PlatformTraits

__all__ = ["EdgePlan", "NetworkPlan", "NodePlan", "heartbeat_in_head_edges", "plan"]


@dataclass(frozen=True)
class EdgePlan:
    """One edge as elaboration builds it.

    Members
    -------
    edge : gen.model.Edge
        The resolved edge (capacities, threshold, interval, output buffer, width).
    mode : {"credit", "inband"}
    live_credit : bool
        The network's (credit mode).
    index_width, payload_width : int
        Index bits inside the network; user message bits.
    heartbeat_in_head : bool
        The data channel's head carries the heartbeat's index while empty (:func:`heartbeat_in_head_edges`).
    flush : bool
        Verification only: the in-band output buffer's spontaneous flush is a port (``flush_<edge>``).
    propagate_mask : int
        In-band: bit ``k`` set where the sender's input ``k`` is in this edge's biconnected component
        (Propagation confines dummies to one, 002 Sec. 3.2); 0 in credit mode and on a source's edges.
    release : int
        In-band: tokens the receiver holds in its offer register until it releases them (the channel's
        ``release``: :data:`sfdf.hdl.offer.SLOTS` where the platform is pipelined, else 0); a credit edge's
        channels always count :data:`~sfdf.hdl.offer.SLOTS`.
    """

    edge: object
    mode: str
    live_credit: bool
    index_width: int
    payload_width: int
    heartbeat_in_head: bool
    flush: bool
    propagate_mask: int
    release: int

    @property
    def name(self) -> str:
        return self.edge.name

    def link(self, sender: bool = True):
        """The edge's link (:func:`sfdf.hdl.links.edge_link`), as its sender holds it (``sender``: with the
        ``flush`` member of :attr:`flush`) or its receiver."""
        return edge_link(self.edge, mode=self.mode, index_width=self.index_width, payload_width=self.payload_width,
                         flush=self.flush and sender, live_credit=self.live_credit,
                         heartbeat_in_head=self.heartbeat_in_head)


@dataclass(frozen=True)
class NodePlan:
    """One node as elaboration builds it.

    Members
    -------
    name : str
    kernel : str or None
    params : Mapping
        The kernel's spec name and parameters (:func:`sfdf.hdl.kernels.make_kernel`).
    ii : int
        Cycles per data computation (a null computation takes one).
    inputs, outputs : tuple of EdgePlan
        The node's edges, in spec order.
    word_width, out_width : int
        A source's input word bits; the kernel's output bits (a sink's beats).
    mode : {"credit", "inband"}
    algorithm : {"naive", "propagation", "nonpropagation"}
        In-band dummy algorithm.
    live_credit : bool
    index_width : int
        Index bits inside the network (the watermark's, :mod:`sfdf.hdl.watermark`).
    full_width : int
        The spec's ``index_width``: the kernels' widths, and a sink's beats, whose index it rebuilds from
        the exact distances between its computations.
    data_width, payload_width : int
        The network's payload width (``random_filter`` wraps at it); user message bits.
    traits : PlatformTraits
        The platform's: the kernels' pipeline stages (:attr:`~sfdf.hdl.traits.PlatformTraits.pipelined`).
    single_stage : bool
        Built as a :class:`sfdf.hdl.single_stage.SingleStageNode` (``pipelined = false``, or ``"auto"`` where
        the throughput analysis chose it: :func:`sfdf.hdl.timing.stage_timing`).
    offer_slots : int
        Offers each input's offer register holds (:func:`sfdf.hdl.offer.offer_slots`; 0: none, a
        single-stage node's).
    position : bool
        A sink in a network with an index watermark: it reports its last computation.
    window : int or None
        A source in a network with an index watermark: ``W`` (:mod:`sfdf.hdl.watermark`).
    ports : sfdf.gen.contract.KernelPorts
        The kernel's ports (docs/kernels.md).
    features : Mapping
        The contract's optional features the kernel takes (:func:`sfdf.gen.contract.kernel_features`).
    latency : int
        Cycles from a computation to its results (:func:`sfdf.hdl.kernels.node_latency`).
    may_filter : bool
        The kernel may filter (:func:`sfdf.gen.contract.may_filter`); a user kernel that promised not to is
        checked in simulation.
    source : str
        The spec file, for errors about the user's kernel.
    """

    name: str
    kernel: str | None
    params: Mapping
    ii: int
    inputs: tuple[EdgePlan, ...]
    outputs: tuple[EdgePlan, ...]
    word_width: int
    out_width: int
    mode: str
    algorithm: str
    live_credit: bool
    index_width: int
    full_width: int
    data_width: int
    payload_width: int
    traits: PlatformTraits
    single_stage: bool
    offer_slots: int
    position: bool
    window: int | None
    ports: KernelPorts
    features: Mapping
    latency: int
    may_filter: bool
    source: str


@dataclass(frozen=True)
class NetworkPlan:
    """What elaboration decides for a network on a platform (:func:`plan`).

    Members
    -------
    traits : PlatformTraits
    timing : gen.analysis.throughput.StageTiming
        The hardware's cycles, its single-stage nodes included (:func:`sfdf.hdl.timing.stage_timing`).
    index_width : int
        Index bits inside the network (:func:`sfdf.gen.analysis.control.index_bits_inside`).
    watermark : bool
        The network has an index watermark (:func:`sfdf.gen.analysis.control.watermark`).
    window : int or None
        Its window ``W``: a source starts index ``i`` only while ``i - watermark <= W``.
    flush_ports : bool
        Verification only: a ``flush_<edge>`` port per in-band output buffer.
    nodes, edges : Mapping of NodePlan, EdgePlan
        By name, in the network's order.
    """

    traits: PlatformTraits
    timing: StageTiming
    index_width: int
    watermark: bool
    window: int | None
    flush_ports: bool
    nodes: Mapping[str, NodePlan]
    edges: Mapping[str, EdgePlan]

    @property
    def single_stage(self) -> frozenset:
        """The nodes built single-stage."""
        return self.timing.single

    @property
    def flush_edges(self) -> list[str]:
        """The edges whose output buffer's flush is a port, in the network's order."""
        return [name for name, e in self.edges.items() if e.flush]


def heartbeat_in_head_edges(network, traits: PlatformTraits, single=frozenset()) -> frozenset:
    """Edges whose data channel's head carries the heartbeat's index while empty (live credit,
    :class:`sfdf.hdl.counter.CounterSender`'s ``heartbeat_in_head``) on a platform of ``traits``: every input
    of a node whose join orders its next heads a cycle ahead (registered offers, not turned off by the spec,
    2 to :data:`~sfdf.hdl.join.LOOKAHEAD_MAX` inputs) and the input of a single-stage node (``single``;
    :class:`sfdf.hdl.single_stage.SingleStageNode`: its receiver's ``due`` is then a register), when each of
    those inputs' data channels reloads its head register with the write data in every cycle it is empty
    (:func:`sfdf.hdl.channels.head_reloads_while_empty`), and so does its control channel (whose next
    head's ``quiet`` the receiver's ``due`` reads a cycle ahead)."""
    if network.mode != "credit" or not network.live_credit or not traits.pipelined:
        return frozenset()
    edges = set()
    for node in network.nodes:
        ins = network.in_edges(node.name)
        if node.name not in single and not (node.registered_offers and 1 < len(ins) <= LOOKAHEAD_MAX):
            continue
        if all(head_reloads_while_empty(e.capacity, traits) and head_reloads_while_empty(e.control_capacity, traits)
               for e in ins):
            edges.update(e.name for e in ins)
    return frozenset(edges)


def plan(network, platform=None, *, flush_ports: bool = False) -> NetworkPlan:
    """The :class:`NetworkPlan` of the resolved ``network`` on ``platform`` (an Amaranth platform,
    :class:`sfdf.hdl.dsp.FamilyOnly`, :class:`~sfdf.hdl.traits.PlatformTraits`, or None: generic Verilog).
    ``flush_ports``: verification only, a flush port per in-band output buffer (:class:`EdgePlan`'s ``flush``)."""
    traits = PlatformTraits.of(platform)
    timing = stage_timing(network, traits)  # the only call: pipelined = false, and "auto" where it raises the rate
    single = timing.single
    early = heartbeat_in_head_edges(network, traits, single)
    intervals = {e.name: e.interval for e in network.edges}
    mark = watermark(network, intervals)
    inner = index_bits_inside(network, intervals)  # every live index within 2^(k-1) of its node's
    components = biconnected_edge_components(network) if network.mode == "inband" else {}
    iw = network.index_width
    edges = {}
    for e in network.edges:
        ins = network.in_edges(e.src)
        mask = sum((components.get(f.name) == components.get(e.name)) << k for k, f in enumerate(ins))
        edges[e.name] = EdgePlan(
            edge=e, mode=network.mode, live_credit=network.live_credit, index_width=inner, payload_width=MESSAGE_WIDTH,
            heartbeat_in_head=e.name in early,
            flush=flush_ports and network.mode == "inband" and e.output_buffer > 1,
            propagate_mask=mask if network.mode == "inband" else 0,
            release=SLOTS if traits.pipelined or network.mode == "credit" else 0)
    nodes = {}
    for node in network.nodes:
        ins, outs = network.in_edges(node.name), network.out_edges(node.name)
        is_single = node.name in single
        nodes[node.name] = NodePlan(
            name=node.name, kernel=node.kernel, params=dict(node.params), ii=node.ii,
            inputs=tuple(edges[e.name] for e in ins), outputs=tuple(edges[e.name] for e in outs),
            word_width=word_width(network, node.name), out_width=result_width(network, node.name),
            mode=network.mode, algorithm=network.dummy_algorithm, live_credit=network.live_credit,
            index_width=inner, full_width=iw, data_width=network.data_width, payload_width=MESSAGE_WIDTH,
            traits=traits, single_stage=is_single,
            offer_slots=0 if is_single else offer_slots(len(ins), traits, node.registered_offers),
            position=bool(mark) and node.name in network.sinks,
            window=mark["window"] if mark and not ins else None,
            ports=kernel_ports(network, node.name), features=kernel_features(node),
            latency=node_latency(node, traits.pipelined), may_filter=may_filter(node), source=network.source)
    return NetworkPlan(traits=traits, timing=timing, index_width=inner, watermark=bool(mark),
                       window=mark["window"] if mark else None, flush_ports=flush_ports, nodes=nodes, edges=edges)

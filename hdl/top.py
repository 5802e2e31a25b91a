"""The generated top of a network: one ``SFDFNode`` per node (a ``SingleStageNode`` where the spec says
``pipelined = false``, or ``"auto"`` chooses it), channels per edge, AXI4-Stream ports, all as the network's
elaboration plan says (:func:`sfdf.hdl.plan.plan`).

Ports (docs/architecture.md): a source ``u`` reads ``s_axis_u`` (``tdata`` = word, ``tlast`` = end of frame,
``tuser[0]`` = end of stream); a sink ``x`` writes ``m_axis_x`` (``tdata`` = payload or message,
``tuser`` = ``{kind, index}`` with the index in the low bits, ``tlast`` on message and EOS beats).
In credit mode each edge (:class:`sfdf.hdl.links.CreditEdge`) is a :class:`sfdf.hdl.channels.DataChannel` of
exactly ``|q|`` tokens, a :class:`sfdf.hdl.channels.ControlChannel` of ``|q'|`` messages and the sender's
heartbeat register; in-band (:class:`sfdf.hdl.links.InbandEdge`) it is one ``DataChannel`` of ``|q|`` tokens
(output buffer included) and the sender's flush count. Nodes and edges meet in per-edge links
(:mod:`sfdf.hdl.links`), each joined with one ``wiring.connect``.
"""

from amaranth.hdl import Cat, Module
from amaranth.lib import wiring
from amaranth.lib.wiring import In, Out

from .links import CreditEdge, InbandEdge
from .manifest import BeatKind, contract_promises, port_members
from .node import SFDFNode
from .plan import plan as network_plan
from .single_stage import SingleStageNode
from .traits import PlatformTraits
from .watermark import Watermark

__all__ = ["NetworkTop"]


class NetworkTop(wiring.Component):
    """All of a resolved ``gen.model.Network`` in hardware.

    Parameters
    ----------
    network : gen.model.Network
        Resolved and checked.
    flush_ports : bool
        Verification only: a ``flush_<edge>`` input per in-band output buffer (without ``plan``).
    plan : sfdf.hdl.plan.NetworkPlan, optional
        The network's elaboration plan on the platform it is elaborated for (default: planned here for
        generic Verilog, with ``flush_ports``). Elaborated for a platform of other traits, the top is
        planned again for it.

    Members
    -------
    <source> : In(AxisSignature(word_width, 1))
        Becomes ``s_axis_<source>_*`` in Verilog (:func:`sfdf.gen.kernels.word_width`).
    <sink> : Out(AxisSignature(result_width, index_width + 2))
        Becomes ``m_axis_<sink>_*`` (:func:`sfdf.gen.kernels.result_width`;
        :func:`sfdf.hdl.manifest.port_members`).
    flush_<edge> : In(1)
        Only with flush ports (verification): a spontaneous flush of the in-band edge's output
        buffer (003 Fig. 2 needs one); one per edge in :attr:`flush_edges`.
    contract_violation : Out(len(promises))
        Where user kernels declare ``may_filter = false`` or take messages (:func:`sfdf.hdl.manifest.contract_promises`,
        the bits in that order): bit ``k`` rises for good when node ``promises[k]``'s kernel broke its promise
        (filtered; a message's result where its computation emitted; docs/kernels.md); the cosim and the fast
        device stop there and name the node.

    Submodules: ``node_<node>`` (:class:`sfdf.hdl.node.SFDFNode`), ``watermark`` (live credit with
    heartbeats everywhere: :class:`sfdf.hdl.watermark.Watermark`, whose least sink position holds the
    sources, so nodes and channels carry indices of the watermark's ``bits`` inside and the sinks
    rebuild the ``index_width``-bit index) and ``edge_<edge>``
    (:class:`sfdf.hdl.links.CreditEdge` with channels ``q`` and ``qc``, or :class:`sfdf.hdl.links.InbandEdge`
    with ``q``).
    """

    def __init__(self, network, flush_ports=False, *, plan=None):
        if plan is not None and flush_ports and not plan.flush_ports:
            raise ValueError("Flush ports are the plan's: plan the network with flush_ports=True")
        self.network = network
        self.plan = plan if plan is not None else network_plan(network, flush_ports=flush_ports)
        self.flush_edges = self.plan.flush_edges
        members = port_members(network)
        self.promises = contract_promises(network)
        if self.promises:  # sticky, one bit per node whose kernel promised never to filter
            members["contract_violation"] = Out(len(self.promises))
        for name in self.flush_edges:
            if f"flush_{name}" in members:
                raise ValueError(f"Node name flush_{name} collides with the flush port of edge {name}")
            members[f"flush_{name}"] = In(1)
        super().__init__(members)

    def elaborate(self, platform):
        m = Module()
        net = self.network
        plan = self.plan
        if PlatformTraits.of(platform) != plan.traits:  # planned for other traits than the platform's
            plan = network_plan(net, platform, flush_ports=plan.flush_ports)
        nodes = {}
        for name, node in plan.nodes.items():
            kind = SingleStageNode if node.single_stage else SFDFNode
            nodes[name] = m.submodules[f"node_{name}"] = kind(node)
        for name, e in plan.edges.items():
            link = e.link()
            edge = InbandEdge(link, e.release) if net.mode == "inband" else CreditEdge(link)
            m.submodules[f"edge_{name}"] = edge
            wiring.connect(m, nodes[e.edge.src].outputs[net.out_edges(e.edge.src).index(e.edge)], edge.i_link)
            wiring.connect(m, edge.o_link, nodes[e.edge.dst].inputs[net.in_edges(e.edge.dst).index(e.edge)])
            if e.flush:
                m.d.comb += edge.flush.eq(getattr(self, f"flush_{name}"))  # a port named after the edge
        if plan.watermark:  # the index watermark (hdl.watermark): the sinks' least position holds the sources
            low = m.submodules.watermark = Watermark(sinks=len(net.sinks), index_width=plan.index_width)
            m.d.comb += [low.i_positions[k].eq(nodes[v].o_position) for k, v in enumerate(net.sinks)]
            m.d.comb += [nodes[s].i_watermark.eq(low.o_low) for s in net.sources]
        for k, name in enumerate(self.promises):
            m.d.comb += self.contract_violation[k].eq(nodes[name].o_violation)
        for s in net.sources:
            axis, word = getattr(self, s), nodes[s].i_word
            m.d.comb += [
                word.valid.eq(axis.tvalid),
                axis.tready.eq(word.ready),
                word.payload.data.eq(axis.tdata),
                word.payload.last.eq(axis.tlast),
                word.payload.eos.eq(axis.tuser[0]),
            ]
        for s in net.sinks:
            axis, beat = getattr(self, s), nodes[s].o_beat
            m.d.comb += [
                axis.tvalid.eq(beat.valid),
                beat.ready.eq(axis.tready),
                axis.tdata.eq(beat.payload.data),
                axis.tuser.eq(Cat(beat.payload.index, beat.payload.kind)),  # manifest.sink_tuser_fields
                axis.tlast.eq(beat.payload.kind != BeatKind.DATA),
            ]
        return m

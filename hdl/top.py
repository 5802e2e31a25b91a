"""The generated top of a network: one ``SFDFNode`` per node (a ``SingleStageNode`` where the spec says
``pipelined = false``, or ``"auto"`` chooses it: :func:`sfdf.hdl.timing.single_stage`), channels per edge,
AXI4-Stream ports.

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

from sfdf.gen.analysis.control import index_bits_inside, watermark
from sfdf.gen.analysis.cycles import biconnected_edge_components
from sfdf.gen.kernels import MESSAGE_WIDTH, input_shift, result_width, word_width

from .axis import AxisSignature
from .links import CreditEdge, InbandEdge, edge_link
from .manifest import BeatKind
from .node import SFDFNode, heartbeat_in_head_edges
from .single_stage import SingleStageNode
from .timing import single_stage
from .watermark import Watermark

__all__ = ["NetworkTop"]


class NetworkTop(wiring.Component):
    """All of a resolved ``gen.model.Network`` in hardware.

    Members
    -------
    <source> : In(AxisSignature(word_width, 1))
        Becomes ``s_axis_<source>_*`` in Verilog (:func:`sfdf.gen.kernels.word_width`).
    <sink> : Out(AxisSignature(result_width, index_width + 2))
        Becomes ``m_axis_<sink>_*`` (:func:`sfdf.gen.kernels.result_width`).
    flush_<edge> : In(1)
        Only with ``flush_ports`` (verification): a spontaneous flush of the in-band edge's output
        buffer (003 Fig. 2 needs one); one per edge in :attr:`flush_edges`.

    Submodules: ``node_<node>`` (:class:`sfdf.hdl.node.SFDFNode`), ``watermark`` (live credit with
    heartbeats everywhere: :class:`sfdf.hdl.watermark.Watermark`, whose least sink position holds the
    sources, so nodes and channels carry indices of the watermark's ``bits`` inside and the sinks
    rebuild the ``index_width``-bit index) and ``edge_<edge>``
    (:class:`sfdf.hdl.links.CreditEdge` with channels ``q`` and ``qc``, or :class:`sfdf.hdl.links.InbandEdge`
    with ``q``).
    """

    def __init__(self, network, flush_ports=False):
        self.network = network
        self.flush_edges = [e.name for e in network.edges if flush_ports and network.mode == "inband"
                            and e.output_buffer > 1]
        members = {s: In(AxisSignature(word_width(network, s), 1)) for s in network.sources}
        members.update({s: Out(AxisSignature(result_width(network, s), network.index_width + 2))
                        for s in network.sinks})
        for name in self.flush_edges:
            if f"flush_{name}" in members:
                raise ValueError(f"Node name flush_{name} collides with the flush port of edge {name}")
            members[f"flush_{name}"] = In(1)
        super().__init__(members)

    def elaborate(self, platform):
        m = Module()
        net = self.network
        iw = net.index_width
        nodes = {}
        components = biconnected_edge_components(net) if net.mode == "inband" else None
        kernels = {node.name: node.kernel for node in net.nodes}
        intervals = {e.name: e.interval for e in net.edges}
        mark = watermark(net, intervals)
        inner = index_bits_inside(net, intervals)  # every live index within 2^(k-1) of its node's
        single = single_stage(net, platform)  # pipelined = false, and "auto" where a path runs faster so
        early_heads = heartbeat_in_head_edges(net, platform, single)
        for node in net.nodes:
            ins = net.in_edges(node.name)
            if node.name in single:  # one input, one output (the spec checks it)
                nodes[node.name] = m.submodules[f"node_{node.name}"] = SingleStageNode(
                    in_edge=ins[0], out_edge=net.out_edges(node.name)[0], kernel=node.kernel, params=node.params,
                    shift=input_shift(node.kernel, kernels[ins[0].src], iw), index_width=inner, full_width=iw,
                    data_width=net.data_width, payload_width=MESSAGE_WIDTH, heartbeat_in_head=early_heads)
                continue
            nodes[node.name] = m.submodules[f"node_{node.name}"] = SFDFNode(
                position=bool(mark) and node.name in net.sinks, window=mark["window"] if mark and not ins else None,
                in_edges=ins, out_edges=net.out_edges(node.name), kernel=node.kernel, params=node.params,
                shifts=[input_shift(node.kernel, kernels[e.src], iw) for e in ins],
                word_width=word_width(net, node.name), out_width=result_width(net, node.name), ii=node.ii,
                index_width=inner, full_width=iw, data_width=net.data_width, payload_width=MESSAGE_WIDTH, mode=net.mode,
                algorithm=net.dummy_algorithm, components=components, flushable=bool(self.flush_edges),
                live_credit=net.live_credit, heartbeat_in_head=early_heads,
                registered_offers=node.registered_offers)
        edge_kind = InbandEdge if net.mode == "inband" else CreditEdge
        for e in net.edges:
            flush = e.name in self.flush_edges
            edge = m.submodules[f"edge_{e.name}"] = edge_kind(
                edge_link(e, mode=net.mode, index_width=inner, payload_width=MESSAGE_WIDTH, flush=flush,
                          live_credit=net.live_credit, heartbeat_in_head=e.name in early_heads))
            wiring.connect(m, nodes[e.src].outputs[net.out_edges(e.src).index(e)], edge.i_link)
            wiring.connect(m, edge.o_link, nodes[e.dst].inputs[net.in_edges(e.dst).index(e)])
            if flush:
                m.d.comb += edge.flush.eq(getattr(self, f"flush_{e.name}"))  # a port named after the edge
        if mark:  # the index watermark (hdl.watermark): the sinks' least position holds the sources
            low = m.submodules.watermark = Watermark(sinks=len(net.sinks), index_width=inner)
            m.d.comb += [low.i_positions[k].eq(nodes[v].o_position) for k, v in enumerate(net.sinks)]
            m.d.comb += [nodes[s].i_watermark.eq(low.o_low) for s in net.sources]
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

"""The generated top of a network: one ``SFDFNode`` per node, channels per edge, AXI4-Stream ports.

Ports (docs/architecture.md): a source ``u`` reads ``s_axis_u`` (``tdata`` = word, ``tlast`` = end of frame,
``tuser[0]`` = end of stream); a sink ``x`` writes ``m_axis_x`` (``tdata`` = payload or message,
``tuser`` = ``{kind, index}`` with the index in the low bits, ``tlast`` on message and EOS beats).
In credit mode each edge is a :class:`sfdf.hdl.channels.DataChannel` of exactly ``|q|`` tokens, a
:class:`sfdf.hdl.channels.ControlChannel` of ``|q'|`` messages and the sender's heartbeat register; in-band it
is one ``DataChannel`` of ``|q|`` tokens (output buffer included) and the sender's flush count.
"""

from amaranth.hdl import Cat, Module
from amaranth.lib import wiring
from amaranth.lib.wiring import In, Out

from sfdf.gen.analysis.cycles import biconnected_edge_components
from sfdf.gen.kernels import MESSAGE_WIDTH, input_shift, result_width, word_width

from .axis import AxisSignature
from .channels import ControlChannel, DataChannel
from .manifest import BeatKind
from .node import SFDFNode
from .tokens import control_layout, data_layout, inband_token_layout

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
        iw, dw = net.index_width, net.data_width
        nodes = {}
        components = biconnected_edge_components(net) if net.mode == "inband" else None
        kernels = {node.name: node.kernel for node in net.nodes}
        for node in net.nodes:
            ins = net.in_edges(node.name)
            nodes[node.name] = m.submodules[f"node_{node.name}"] = SFDFNode(
                in_edges=ins, out_edges=net.out_edges(node.name), kernel=node.kernel, params=node.params,
                shifts=[input_shift(node.kernel, kernels[e.src], iw) for e in ins],
                word_width=word_width(net, node.name), out_width=result_width(net, node.name), ii=node.ii,
                index_width=iw, data_width=dw, payload_width=MESSAGE_WIDTH, mode=net.mode,
                algorithm=net.dummy_algorithm, components=components, flushable=bool(self.flush_edges))
        for e in net.edges:
            src, dst = nodes[e.src], nodes[e.dst]
            j = net.out_edges(e.src).index(e)
            k = net.in_edges(e.dst).index(e)
            if net.mode == "inband":
                q = m.submodules[f"q_{e.name}"] = DataChannel(inband_token_layout(iw, e.width, MESSAGE_WIDTH),
                                                                  e.capacity)
                wiring.connect(m, getattr(src, f"out{j}_token"), q.i_stream)
                wiring.connect(m, q.o_stream, getattr(dst, f"in{k}_token"))
                m.d.comb += getattr(dst, f"in{k}_flushed").eq(getattr(src, f"out{j}_flushed"))
                if e.name in self.flush_edges:
                    m.d.comb += getattr(src, f"out{j}_flush").eq(getattr(self, f"flush_{e.name}"))
                continue
            dq = m.submodules[f"q_{e.name}"] = DataChannel(data_layout(iw, e.width), e.capacity)
            cq = m.submodules[f"qc_{e.name}"] = ControlChannel(control_layout(e.capacity, iw, MESSAGE_WIDTH),
                                                               e.control_capacity)
            wiring.connect(m, getattr(src, f"out{j}_data"), dq.i_stream)
            wiring.connect(m, dq.o_stream, getattr(dst, f"in{k}_data"))
            wiring.connect(m, getattr(src, f"out{j}_ctrl"), cq.i_stream)
            wiring.connect(m, cq.o_stream, getattr(dst, f"in{k}_ctrl"))
            m.d.comb += [
                getattr(dst, f"in{k}_hb").eq(getattr(src, f"out{j}_hb")),
                getattr(src, f"out{j}_hb_clear").eq(getattr(dst, f"in{k}_hb_clear")),
            ]
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

"""The generated top of an SDF network (004): :class:`~sfdf.hdl.sdf_network.SDFNetwork` behind AXI4-Stream
ports with docs/architecture.md's names, as ``sfdf generate`` writes it.

Ports (docs/teleport.md, "In hardware"): a source ``u`` reads ``s_axis_u``, one beat per firing: the node
starts a firing in the cycle its beat is taken (``tready`` is the start, which needs ``tvalid`` and
the rule of :class:`~sfdf.hdl.sdf_node.SDFNode`; ``tdata`` is the firing's word, which a stream kernel
such as the radio's ``antenna`` reads and the SDF test kernel does not). A sink ``x`` writes ``m_axis_x``, one beat per firing: ``tdata`` the firing's ``v``,
``tuser`` = ``{kind, index}`` as an SFDF sink's (:func:`sfdf.hdl.manifest.sink_tuser_fields`: ``kind``
always ``DATA``, ``index`` the firing, counted from 1, modulo ``2^index_width``). No ``tlast``: an SDF
stream has no frames. Per route ``r`` of a teleport message, plain outputs ``msg<r>_sent``, ``_sent_n``,
``_sent_target``, ``_handled`` and ``_handled_target`` (:data:`MESSAGE_OUTPUTS`; what the cosim reads
the messages from; a board's top leaves them unconnected).
"""

from __future__ import annotations

from amaranth import Cat, Const, Module, Signal
from amaranth.lib import wiring
from amaranth.lib.wiring import In, Out

from .axis import AxisSignature
from .manifest import BeatKind, sink_tuser_fields
from .sdf_message import COUNT
from .sdf_network import SDFNetwork

__all__ = ["MESSAGE_OUTPUTS", "SDF_WORD", "SDFTop", "sdf_port_members"]

#: Bits of an SDF item and of a port's ``tdata`` (docs/semantics.md: the SDF test kernel's values are 32-bit).
SDF_WORD = 32


def sdf_port_members(network) -> dict:
    """The AXI4-Stream members of an SDF network's top: ``In(AxisSignature(32))`` per source,
    ``Out(AxisSignature(32, index_width + 2))`` per sink, neither with ``tlast``."""
    tuser = sum(f.width for f in sink_tuser_fields(network.index_width))
    members = {s: In(AxisSignature(SDF_WORD, 0, tlast=False)) for s in network.sources}
    members.update({s: Out(AxisSignature(SDF_WORD, tuser, tlast=False)) for s in network.sinks})
    return members


#: Each route's message outputs (:class:`~sfdf.hdl.sdf_network.SDFNetwork`), ``msg<r>_<suffix>``.
MESSAGE_OUTPUTS = {"sent": 1, "sent_n": COUNT, "sent_target": COUNT, "handled": 1, "handled_target": COUNT}


class SDFTop(wiring.Component):
    """All of an SDF ``gen.model.Network`` in hardware, its sources and sinks AXI4-Stream ports.

    Submodule ``network``: the :class:`~sfdf.hdl.sdf_network.SDFNetwork`, whose channels are ``edge_<edge>``
    (:class:`~sfdf.hdl.sdf_channel.SDFChannel`, ``level`` their items) and nodes ``node_<node>``.
    """

    def __init__(self, network):
        self.network = network
        self.core = SDFNetwork(network)
        members = sdf_port_members(network)
        for r, _ in enumerate(self.core.routes):
            members |= {f"msg{r}_{suffix}": Out(width) for suffix, width in MESSAGE_OUTPUTS.items()}
        super().__init__(members)

    def elaborate(self, platform):
        m = Module()
        net = self.network
        core = m.submodules.network = self.core
        for r, _ in enumerate(core.routes):
            m.d.comb += [getattr(self, f"msg{r}_{suffix}").eq(getattr(core, f"msg{r}_{suffix}")) for suffix in MESSAGE_OUTPUTS]
        for s in net.sources:
            axis = getattr(self, s)
            m.d.comb += [getattr(core, f"{s}_allow").eq(axis.tvalid), getattr(core, f"{s}_word").eq(axis.tdata),
                         axis.tready.eq(getattr(core, f"{s}_start"))]
        for x in net.sinks:
            axis = getattr(self, x)
            firing = Signal(net.index_width, init=1, name=f"{x}_firing")
            valid, ready = getattr(core, f"{x}_valid"), getattr(core, f"{x}_ready")
            m.d.comb += [axis.tvalid.eq(valid), ready.eq(axis.tready), axis.tdata.eq(getattr(core, f"{x}_value")),
                         axis.tuser.eq(Cat(firing, Const(BeatKind.DATA.value, BeatKind.as_shape().width)))]
            with m.If(valid & axis.tready):
                m.d.sync += firing.eq(firing + 1)
        return m

"""An SDF network in hardware (004; first cut, without teleport messages): an :class:`SDFChannel` per
edge of its capacity, initial items and largest peek and pop, and an :class:`SDFNode` per node running the
SDF test kernel.

Ports: per source ``<node>_allow`` (the node may start its next firing) and ``<node>_start`` (it did), per sink ``<node>_valid``,
``<node>_value`` and ``<node>_ready`` (one ``v`` per firing), per node ``<node>_fired`` (a firing ended).
"""

from __future__ import annotations

from amaranth import Module
from amaranth.lib import wiring
from amaranth.lib.wiring import In, Out

from sfdf.gen.sdf.rates import edge_rates, phases

from .sdf_channel import SDFChannel
from .sdf_node import SDFNode

__all__ = ["SDFNetwork"]


class SDFNetwork(wiring.Component):
    def __init__(self, network):
        self.network = network
        self.count = phases(network)
        self.rates = {e.name: edge_rates(e, self.count) for e in network.edges}
        members = {}
        for n in network.nodes:
            members[f"{n.name}_fired"] = Out(1)
            if not network.in_edges(n.name):
                members |= {f"{n.name}_allow": In(1), f"{n.name}_start": Out(1)}
            if not network.out_edges(n.name):
                members |= {f"{n.name}_valid": Out(1), f"{n.name}_value": Out(32), f"{n.name}_ready": In(1)}
        super().__init__(members)

    def elaborate(self, platform):
        m = Module()
        net = self.network
        channels = {}
        for e in net.edges:
            _, pop, peek = self.rates[e.name]
            channels[e.name] = m.submodules[f"edge_{e.name}"] = SDFChannel(
                32, e.capacity, e.initial, window=max(max(peek), 1), max_pop=max(max(pop), 1))
        for n in net.nodes:
            ins, outs = net.in_edges(n.name), net.out_edges(n.name)
            node = m.submodules[f"node_{n.name}"] = SDFNode(
                self.count[n.name], [(e.capacity, self.rates[e.name][2], self.rates[e.name][1]) for e in ins],
                [(e.capacity, self.rates[e.name][0]) for e in outs])
            for j, e in enumerate(ins):
                chan = channels[e.name]
                m.d.comb += [getattr(node, f"i{j}_level").eq(chan.o_level), chan.r_offset.eq(getattr(node, f"i{j}_offset")),
                             getattr(node, f"i{j}_data").eq(chan.r_data), chan.r_pop.eq(getattr(node, f"i{j}_pop"))]
            for j, e in enumerate(outs):
                chan = channels[e.name]
                m.d.comb += [getattr(node, f"o{j}_room").eq(chan.o_room), chan.w_valid.eq(getattr(node, f"o{j}_valid")),
                             chan.w_data.eq(getattr(node, f"o{j}_data"))]
            m.d.comb += getattr(self, f"{n.name}_fired").eq(node.o_fired)
            if not ins:
                m.d.comb += [node.i_allow.eq(getattr(self, f"{n.name}_allow")), getattr(self, f"{n.name}_start").eq(node.o_start)]
            if not outs:
                m.d.comb += [getattr(self, f"{n.name}_valid").eq(node.o_valid),
                             getattr(self, f"{n.name}_value").eq(node.o_value), node.o_ready.eq(getattr(self, f"{n.name}_ready"))]
        return m

"""An SDF network in hardware (004): an :class:`SDFChannel` per edge of its capacity, initial items and
largest peek and pop, per node an :class:`SDFNode` running the SDF test kernel or an
:class:`~sfdf.hdl.sdf_stream.SDFStreamNode` running its stream kernel (the radio's), and per route of a
teleport message a :class:`~sfdf.hdl.sdf_message.MessageTarget` at its sender and a
:class:`~sfdf.hdl.sdf_message.MessageQueue` at its receiver (:mod:`sfdf.gen.sdf.credits`: the targets, the
receiver's credit, the queue's depth). A test-kernel sender sends at a firing's start, with the firing's
number as the payload, and waits for room should its queue be full; a stream sender at its decision,
with its kernel's payload, and never waits: its queue holds the most entries
:func:`~sfdf.gen.sdf.credits.queue_depths` proves any execution needs, which counts every started firing
as sending.

Ports: per source ``<node>_allow`` (the node may start its next firing), ``<node>_word`` (the word of that
firing, which a stream kernel reads) and ``<node>_start`` (it did), per sink ``<node>_valid``,
``<node>_value`` and ``<node>_ready`` (one ``v`` per firing), per node ``<node>_fired`` (a firing ended);
per route ``r`` (in :attr:`routes` order) ``msg<r>_sent``, ``msg<r>_sent_n`` and ``msg<r>_sent_target`` (a
message left its sender at firing ``n``, acting from the receiver's firing ``target`` on) and
``msg<r>_handled``, ``msg<r>_handled_target`` (the receiver handled the messages of that target).
"""

from __future__ import annotations

from amaranth import Cat, Module
from amaranth.lib import wiring
from amaranth.lib.wiring import In, Out

from sfdf.gen.sdf.credits import queue_depths, target_table
from sfdf.gen.sdf.kernels import STREAM_KERNELS
from sfdf.gen.sdf.messages import UPSTREAM, Deliveries
from sfdf.gen.sdf.rates import edge_rates, phases

from .sdf_channel import SDFChannel
from .sdf_message import COUNT, MessageQueue, MessageTarget
from .sdf_node import SDFNode
from .sdf_stream import SDFStreamNode

__all__ = ["SDFNetwork"]


class SDFNetwork(wiring.Component):
    """``depths``: each route's queue depth instead of :func:`~sfdf.gen.sdf.credits.queue_depths`'s
    (verification: deeper queues that never hold a sender show how many entries the bound must cover).
    Elaborated, :attr:`queues` holds each route's :class:`~sfdf.hdl.sdf_message.MessageQueue`."""

    def __init__(self, network, depths: dict | None = None):
        self.network = network
        self.stream = {n.name for n in network.nodes if (n.kernel or "sdf_test") in STREAM_KERNELS}
        self.count = phases(network)
        self.rates = {e.name: edge_rates(e, self.count) for e in network.edges}
        self.deliveries = Deliveries(network)
        self.routes = self.deliveries.routes
        if depths is None:
            depths = queue_depths(network, self.deliveries) if self.routes else {}
        self.depths = depths
        self.queues: dict = {}
        members = {}
        for n in network.nodes:
            members[f"{n.name}_fired"] = Out(1)
            if not network.in_edges(n.name):
                members |= {f"{n.name}_allow": In(1), f"{n.name}_word": In(32), f"{n.name}_start": Out(1)}
            if not network.out_edges(n.name):
                members |= {f"{n.name}_valid": Out(1), f"{n.name}_value": Out(32), f"{n.name}_ready": In(1)}
        for r, _ in enumerate(self.routes):
            members |= {f"msg{r}_sent": Out(1), f"msg{r}_sent_n": Out(COUNT), f"msg{r}_sent_target": Out(COUNT),
                        f"msg{r}_handled": Out(1), f"msg{r}_handled_target": Out(COUNT)}
        super().__init__(members)

    def elaborate(self, platform):
        m = Module()
        net = self.network
        channels = {}
        for e in net.edges:
            _, pop, peek = self.rates[e.name]
            channels[e.name] = m.submodules[f"edge_{e.name}"] = SDFChannel(
                32, e.capacity, e.initial, window=max(max(peek), 1), max_pop=max(max(pop), 1))
        incoming = {n.name: [r for r in self.routes if r.receiver == n.name] for n in net.nodes}
        senders = {r.sender for r in self.routes}
        nodes = {}
        for n in net.nodes:
            ins, outs = net.in_edges(n.name), net.out_edges(n.name)
            if n.name in self.stream:
                node = SDFStreamNode(n.kernel, n.params, self.count[n.name], [(e.capacity, self.rates[e.name][1]) for e in ins],
                                     [(e.capacity, self.rates[e.name][0]) for e in outs],
                                     receives=len(incoming[n.name]), sends=n.name in senders)
                if not ins:
                    m.d.comb += node.i_word.eq(getattr(self, f"{n.name}_word"))
            else:
                node = SDFNode(self.count[n.name], [(e.capacity, self.rates[e.name][2], self.rates[e.name][1]) for e in ins],
                               [(e.capacity, self.rates[e.name][0]) for e in outs],
                               receives=len(incoming[n.name]), sends=n.name in senders,
                               send=n.params.get("send", 1.0), seed=n.params.get("seed", 1))
            nodes[n.name] = m.submodules[f"node_{n.name}"] = node
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
        rooms = {s: [] for s in senders if s not in self.stream}
        for r, route in enumerate(self.routes):
            sender, receiver = nodes[route.sender], nodes[route.receiver]
            table = target_table(self.deliveries, route)
            target = m.submodules[f"target{r}"] = MessageTarget(table)
            queue = self.queues[route] = m.submodules[f"queue{r}"] = MessageQueue(
                self.depths[route], route.direction == UPSTREAM, table.first[0])
            j = incoming[route.receiver].index(route)
            stream = route.sender in self.stream  # sends at its decision, its kernel's payload
            step = sender.o_decide if stream else sender.o_start
            m.d.comb += [
                target.i_start.eq(step), target.i_send.eq(sender.o_send),
                queue.i_valid.eq(target.o_valid), queue.i_n.eq(sender.o_payload if stream else target.o_n),
                queue.i_target.eq(target.o_target),
                queue.i_next.eq(receiver.o_next), queue.i_limit.eq(target.o_target), queue.i_start.eq(receiver.o_start),
                queue.i_following.eq(target.o_following), queue.i_sender_start.eq(step),
                getattr(receiver, f"q{j}_credit").eq(queue.o_credit),
                getattr(receiver, f"q{j}_handled").eq(queue.o_handled), getattr(receiver, f"q{j}_sum").eq(queue.o_sum),
                getattr(self, f"msg{r}_sent").eq(target.o_valid), getattr(self, f"msg{r}_sent_n").eq(target.o_n),
                getattr(self, f"msg{r}_sent_target").eq(target.o_target),
                getattr(self, f"msg{r}_handled").eq(queue.o_handled),
                getattr(self, f"msg{r}_handled_target").eq(queue.o_handled_target),
            ]
            if not stream:
                rooms[route.sender].append(queue.o_room)
        for s, room in rooms.items():
            m.d.comb += nodes[s].i_room.eq(Cat(*room).all())
        return m

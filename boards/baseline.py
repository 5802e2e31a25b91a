"""The no-control baseline: a network's topology, FIFOs and kernels with nothing of sfdf's protocols.

What a user would otherwise build (bench/fpga.py compares Fmax and size with it): every edge a
:class:`sfdf.hdl.channels.DataChannel` of ``|q|`` payloads (no computation index), every node firing when all
its inputs hold a token and all its outputs have room, the same kernel as :class:`sfdf.hdl.top.NetworkTop`
fed by a local computation counter (a pipelined kernel's results wait in the same queue as an sfdf
node's, :class:`sfdf.hdl.decided.DecidedQueue`, until the outputs take them). No credits, heartbeats, dummies, join or control messages: when a
node filters, such a network can deadlock (000 Fig. 3) or join tokens of different computations, which
is the problem sfdf solves; as hardware it is the floor sfdf's control logic is measured against.
"""

from amaranth import Cat, Module, Signal
from amaranth.lib import data, wiring

from sfdf.gen.contract import kernel_features, kernel_ports
from sfdf.hdl.channels import DataChannel
from sfdf.hdl.decided import DecidedQueue
from sfdf.hdl.kernels import make_kernel
from sfdf.hdl.manifest import port_members
from sfdf.hdl.traits import PlatformTraits

__all__ = ["PlainNetworkTop"]


class PlainNetworkTop(wiring.Component):
    """``network``'s topology without control (module docstring), with :class:`sfdf.hdl.top.NetworkTop`'s ports.

    Members
    -------
    <source> : In(AxisSignature(word_width, 1))
    <sink> : Out(AxisSignature(result_width, index_width + 2))
        ``tuser`` carries the sink's computation counter (kind 0); ``tlast`` is 0.
    """

    def __init__(self, network):
        self.network = network
        super().__init__(port_members(network))

    def elaborate(self, platform):
        m = Module()
        net = self.network
        iw = net.index_width
        deep = PlatformTraits.of(platform).pipelined
        fifos = {e.name: DataChannel(e.width, e.capacity) for e in net.edges}
        for name, fifo in fifos.items():
            m.submodules[f"q_{name}"] = fifo
        for node in net.nodes:
            ins, outs = net.in_edges(node.name), net.out_edges(node.name)
            kernel = m.submodules[f"kernel_{node.name}"] = make_kernel(
                node.kernel, node.params, ports=kernel_ports(net, node.name), features=kernel_features(node),
                pipelined=deep)
            count = Signal(iw)
            fire = Signal(name=f"fire_{node.name}")
            if ins:
                heads = [fifos[e.name].o_stream for e in ins]
                valid = Cat(h.valid for h in heads).all()
                words, last = [h.payload for h in heads], 0
                m.d.comb += [h.ready.eq(fire) for h in heads]
            else:
                word = getattr(self, node.name)
                valid, words, last = word.tvalid, [word.tdata], word.tlast
                m.d.comb += word.tready.eq(fire)
            for beat, value in zip(kernel.inputs, words, strict=True):  # every input present, at every firing
                fields = {"present": 1, "data": value, "index": count + 1, "last": last}
                m.d.comb += [beat.valid.eq(fire), *(beat.payload[f].eq(fields[f]) for f, _ in beat.payload.shape())]
            # what the outputs send: the kernel's answer now, or, from a pipelined kernel, the oldest
            # computation its queue holds (hdl.decided: the same queue as an sfdf node's)
            shared = kernel.shared_data()
            emit, result, index, sending = kernel.emit_early, shared, count + 1, valid
            if kernel.latency:
                queue = m.submodules[f"decided_{node.name}"] = DecidedQueue(
                    data.StructLayout({"emit": len(kernel.emit_early), "index": iw}), data_width=len(shared),
                    latency=kernel.latency)
                record, head = queue.i_record, queue.o_comp
                m.d.comb += [record.valid.eq(valid), record.payload.emit.eq(kernel.emit_early),
                             record.payload.index.eq(count + 1), queue.i_data.eq(shared)]
                emit, result, index, sending = head.payload.emit, head.payload.data, head.payload.index, head.valid
            if outs:
                ready = Cat(fifos[e.name].i_stream.ready for e in outs).all()
                for j, e in enumerate(outs):
                    tail = fifos[e.name].i_stream
                    m.d.comb += [tail.valid.eq(sending & ready & emit[j]), tail.payload.eq(result[:e.width])]
            else:
                beat = getattr(self, node.name)
                ready = beat.tready
                m.d.comb += [beat.tvalid.eq(sending & emit[0]), beat.tdata.eq(result), beat.tuser.eq(index)]
            if kernel.latency:  # fires when the queue has room; the queue's head waits for the outputs
                m.d.comb += head.ready.eq(ready)
            m.d.comb += fire.eq(valid & (record.ready if kernel.latency else ready))
            with m.If(fire):
                m.d.sync += count.eq(count + 1)
        return m

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

from sfdf.gen.kernels import input_shift, word_width
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
        kernels = {node.name: node.kernel for node in net.nodes}
        deep = PlatformTraits.of(platform).pipelined
        fifos = {e.name: DataChannel(e.width, e.capacity) for e in net.edges}
        for name, fifo in fifos.items():
            m.submodules[f"q_{name}"] = fifo
        for node in net.nodes:
            ins, outs = net.in_edges(node.name), net.out_edges(node.name)
            shifts = [input_shift(node.kernel, kernels[e.src], iw) for e in ins]
            in_width = max((e.width + s for e, s in zip(ins, shifts)), default=word_width(net, node.name))
            kernel = m.submodules[f"kernel_{node.name}"] = make_kernel(
                node.kernel, node.params, inputs=max(1, len(ins)), outputs=max(1, len(outs)), in_width=in_width,
                data_width=net.data_width, index_width=iw, pipelined=deep)
            count = Signal(iw)
            fire = Signal(name=f"fire_{node.name}")
            if ins:
                heads = [fifos[e.name].o_stream for e in ins]
                valid = Cat(h.valid for h in heads).all()
                for k, (head, shift) in enumerate(zip(heads, shifts)):
                    m.d.comb += [kernel.i_payloads[k].eq(head.payload << shift), head.ready.eq(fire)]
                m.d.comb += kernel.i_mask.eq((1 << len(ins)) - 1)
            else:
                word = getattr(self, node.name)
                valid = word.tvalid
                m.d.comb += [kernel.i_payloads[0].eq(word.tdata), kernel.i_mask.eq(1), kernel.i_last.eq(word.tlast),
                             word.tready.eq(fire)]
            # what the outputs send: the kernel's answer now, or, from a pipelined kernel, the oldest
            # computation its queue holds (hdl.decided: the same queue as an sfdf node's)
            emit, result, index, sending = kernel.o_emit, kernel.o_data, count + 1, valid
            if kernel.latency:
                queue = m.submodules[f"decided_{node.name}"] = DecidedQueue(
                    data.StructLayout({"emit": len(kernel.o_emit), "index": iw}), data_width=len(kernel.o_data),
                    latency=kernel.latency)
                record, head = queue.i_record, queue.o_comp
                m.d.comb += [record.valid.eq(valid), record.payload.emit.eq(kernel.o_emit),
                             record.payload.index.eq(count + 1), queue.i_data.eq(kernel.o_data)]
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
            m.d.comb += [fire.eq(valid & (record.ready if kernel.latency else ready)),
                         kernel.i_offset.eq(1), kernel.i_step.eq(fire)]
            with m.If(fire):
                m.d.sync += count.eq(count + 1)
        return m

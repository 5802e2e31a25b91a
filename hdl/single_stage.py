"""The single-stage node: decide and send in one cycle, a hop of one cycle (``pipelined = false``, or
``"auto"`` where :func:`sfdf.hdl.timing.single_stage` chooses it).

The pipelined node (:class:`sfdf.hdl.node.SFDFNode`, docs/hardware.md) spends three cycles per hop: its
input channel's register, the offer register and the decided stage. On a reconvergent path that costs
rate, since a short branch must hold a token for every cycle of the long one. A node of one input and
one output (a chain link, the branch of a residual block) needs no join to order its heads, so here it
is 000's atomic node (000 Alg. 3, 4 with live credit, :mod:`sfdf.hdl.counter`): the receiver's offer
goes to the kernel and the sender in the cycle the channel shows it, and the computation commits when
the output can take it. A token pushed at cycle ``t`` is consumed downstream at ``t + 1``. It holds no
token between stages (it has one), so tokens are released as they are popped, and the analysis of 000
and 002 applies as printed.

What keeps the one cycle short is 000 Alg. 4's interval test, ``i - LastRecvIdx > [e]``: the sender
takes it for each of the receiver's three candidate indices, each a register, and chooses after
(:class:`sfdf.hdl.counter.CounterSender`'s ``candidates``; docs/hardware.md, "The single-stage node", for
why the distance is exact modulo ``2^w`` under the index watermark).
"""

from amaranth.hdl import Module, Signal
from amaranth.lib import wiring
from amaranth.lib.wiring import In, Out

from .counter import CounterReceiver, CounterSender
from .dsp import pipelined
from .kernels import make_kernel
from .links import LinksSignature, connect_credit_receiver, connect_credit_sender, edge_link

__all__ = ["SingleStageNode"]


class SingleStageNode(wiring.Component):
    """A node of one input and one output that decides and sends in one cycle (module docstring).

    Parameters
    ----------
    in_edge, out_edge : gen.model.Edge
        Resolved edges (live credit: concrete intervals and control capacities).
    kernel : str or None
    params : Mapping
        The kernel (latency 0 on the platform: :func:`sfdf.hdl.kernels.kernel_latency`).
    shift : int
        Where the kernel places the input's payload (:func:`sfdf.gen.kernels.input_shift`).
    index_width, data_width, payload_width : int
        As :class:`sfdf.hdl.node.SFDFNode`.
    full_width : int or None
        The kernels' index width (the spec's).
    heartbeat_in_head : set of str
        As :class:`sfdf.hdl.node.SFDFNode` (:func:`sfdf.hdl.node.heartbeat_in_head_edges`): on the input edge
        the receiver's ``due`` is a register, computed a cycle ahead from the channels' next state.

    Members
    -------
    inputs : In(LinksSignature), outputs : Out(LinksSignature)
        One link each, as :class:`sfdf.hdl.node.SFDFNode`'s.
    """

    def __init__(self, *, in_edge, out_edge, index_width, data_width, payload_width, kernel=None, params=None,
                 shift=0, full_width=None, heartbeat_in_head=frozenset()):
        self.in_edge, self.out_edge = in_edge, out_edge
        self.in_head = in_edge.name in heartbeat_in_head
        self.kernel, self.params, self.shift = kernel, dict(params or {}), shift
        self.iw, self.dw, self.pw, self.fw = index_width, data_width, payload_width, full_width or index_width
        self.out_head = out_edge.name in heartbeat_in_head
        link = {"mode": "credit", "index_width": index_width, "payload_width": payload_width, "live_credit": True}
        super().__init__({
            "inputs": In(LinksSignature([edge_link(in_edge, **link, heartbeat_in_head=self.in_head)])),
            "outputs": Out(LinksSignature([edge_link(out_edge, **link, heartbeat_in_head=self.out_head)])),
        })

    def elaborate(self, platform):
        m = Module()
        e_in, e_out = self.in_edge, self.out_edge
        link_in, link_out = self.inputs[0], self.outputs[0]
        rx = m.submodules.rx0 = CounterReceiver(capacity=e_in.capacity, control_capacity=e_in.control_capacity,
                                               index_width=self.iw, data_width=e_in.width, payload_width=self.pw,
                                               heartbeat_in_head=self.in_head)
        # with the heartbeat in the head, ``due`` a register, computed a cycle ahead from the channels' next state
        data_pop, ctrl_pop = connect_credit_receiver(m, link_in, rx, ahead=self.in_head)
        tested = e_out.interval is not None
        tx = m.submodules.tx0 = CounterSender(
            capacity=e_out.capacity, control_capacity=e_out.control_capacity, heartbeat=e_out.interval,
            index_width=self.iw, data_width=e_out.width, payload_width=self.pw,
            heartbeat_in_head=self.out_head, candidates=tested)
        connect_credit_sender(m, tx, link_out)
        kernel = m.submodules.kernel = make_kernel(
            self.kernel, self.params, inputs=1, outputs=1, in_width=e_in.width + self.shift, data_width=self.dw,
            index_width=self.fw, pipelined=pipelined(platform), ahead=True)
        if kernel.latency:
            raise ValueError(f"A single-stage node needs a kernel of latency 0, not {self.kernel!r} "
                             f"(latency {kernel.latency})")
        head, comp = rx.o_head, tx.i_comp.payload
        prev = Signal(self.iw)  # the last computation's index (0 before the first)
        done = Signal()  # EOS went out
        consume = Signal()
        emit = head.is_data & kernel.o_emit[0]
        m.d.comb += [
            # nothing is held: a token or message is released as it is popped
            link_in.release.data.eq(data_pop), link_in.release.ctrl.eq(ctrl_pop),
            kernel.i_payloads[0].eq(head.data[:e_in.width] << self.shift),
            kernel.i_mask.eq(head.is_data),
            kernel.i_offset.eq(head.index - prev),
            kernel.i_last.eq(0),
            comp.index.eq(head.index),
            comp.emit.eq(emit),
            comp.data.eq(kernel.o_data),
            comp.msg_valid.eq(head.is_msg),
            comp.msg.eq(head.msg),
            comp.eos.eq(head.eos),
            tx.i_comp.valid.eq(head.valid & ~done),
            consume.eq(tx.i_comp.valid & tx.i_comp.ready),
            rx.i_consume.eq(consume),
            kernel.i_step.eq(consume & ~head.eos),
        ]
        with m.If(consume & ~head.eos):
            m.d.sync += prev.eq(head.index)
        with m.If(consume & head.eos):
            m.d.sync += done.eq(1)
        if tested:  # 000 Alg. 4 for each candidate from registers, the choice after (module docstring)
            m.d.comb += [tx.i_indices.eq(rx.o_indices), tx.i_early.eq(rx.o_early), tx.i_choice.eq(rx.o_choice)]
        return m

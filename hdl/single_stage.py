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
from .kernels import plan_kernel
from .links import LinksSignature, connect_credit_receiver, connect_credit_sender

__all__ = ["SingleStageNode"]


class SingleStageNode(wiring.Component):
    """A node of one input and one output that decides and sends in one cycle (module docstring).

    Parameters
    ----------
    plan : sfdf.hdl.plan.NodePlan
        A single-stage node's part of the elaboration plan (live credit: concrete intervals and control
        capacities; its kernel of latency 0 on the platform, :func:`sfdf.hdl.kernels.kernel_latency`). Where
        its input edge's data head carries the heartbeat's index (the plan's ``heartbeat_in_head``) the
        receiver's ``due`` is a register, computed a cycle ahead from the channels' next state.

    Members
    -------
    inputs : In(LinksSignature), outputs : Out(LinksSignature)
        One link each, as :class:`sfdf.hdl.node.SFDFNode`'s.
    """

    def __init__(self, plan):
        if not plan.single_stage:
            raise ValueError(f"Node {plan.name!r} is not planned single-stage: build an SFDFNode")
        self.plan = plan
        (into,), (out,) = plan.inputs, plan.outputs  # one input, one output (the spec checks it)
        self.in_edge, self.out_edge = into.edge, out.edge
        self.in_head, self.out_head = into.heartbeat_in_head, out.heartbeat_in_head
        self.kernel, self.params = plan.kernel, dict(plan.params)
        self.iw, self.dw, self.pw = plan.index_width, plan.data_width, plan.payload_width
        self.fw = plan.full_width or plan.index_width
        super().__init__({
            "inputs": In(LinksSignature([into.link(sender=False)])),
            "outputs": Out(LinksSignature([out.link()])),
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
        kernel = m.submodules.kernel = plan_kernel(self.plan, ahead=True)
        if kernel.latency:
            raise ValueError(f"A single-stage node needs a kernel of latency 0, not {self.kernel!r} "
                             f"(latency {kernel.latency})")
        head, comp = rx.o_head, tx.i_comp.payload
        done = Signal()  # EOS went out
        consume = Signal()
        emit = head.is_data & kernel.emit_early[0]
        (beat,), (out,) = kernel.inputs, kernel.outputs
        m.d.comb += [
            # nothing is held: a token or message is released as it is popped
            link_in.release.data.eq(data_pop), link_in.release.ctrl.eq(ctrl_pop),
            beat.payload.present.eq(head.is_data),
            beat.payload.data.eq(head.data[:e_in.width]),
            comp.index.eq(head.index),
            comp.emit.eq(emit),
            comp.data.eq(out.payload.data),
            comp.msg_valid.eq(head.is_msg),
            comp.msg.eq(head.msg),
            comp.eos.eq(head.eos),
            tx.i_comp.valid.eq(head.valid & ~done),
            consume.eq(tx.i_comp.valid & tx.i_comp.ready),
            rx.i_consume.eq(consume),
            beat.valid.eq(consume & ~head.eos & head.is_data),  # the kernel steps on data computations
        ]
        with m.If(consume & head.eos):
            m.d.sync += done.eq(1)
        if tested:  # 000 Alg. 4 for each candidate from registers, the choice after (module docstring)
            m.d.comb += [tx.i_indices.eq(rx.o_indices), tx.i_early.eq(rx.o_early), tx.i_choice.eq(rx.o_choice)]
        return m

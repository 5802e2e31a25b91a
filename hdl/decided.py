"""Decided computations: the queue between a node's decide and emit stages, with the kernel's result lane.

A node decides a computation (its inputs consumed, its kernel stepped) and emits it later, when every
output can take it (docs/hardware.md, "The pipelined node"). The queue holds the decided computations'
records in order. A kernel of latency ``L`` (:mod:`sfdf.hdl.kernels`: a pipelined multiply or adder)
delivers a computation's data ``L`` cycles after the cycle the computation was decided in, into a
*result lane* beside the records; a computation leaves when both its record and its data are there.
The queue holds ``depth + L`` computations, so ``L`` cycles of kernel latency never throttle a stream
of one computation per cycle. A computation in the queue or in the kernel's pipeline has consumed its
inputs and sent nothing: it is one of the node's decided computations, which the reference model's
``depth`` counts (``simulate(..., depth=depth + L)``).
"""

from amaranth.hdl import Cat, Module, Signal
from amaranth.lib import data, stream, wiring
from amaranth.lib.wiring import In, Out

from .channels import DataChannel

__all__ = ["DecidedQueue"]


class DecidedQueue(wiring.Component):
    """The decided computations of one node.

    Parameters
    ----------
    record : StructLayout
        What the decide stage knows of a computation when it decides it (no ``data``).
    data_width : int
        The kernel's result bits.
    latency : int
        Cycles from the decision to the kernel's result (``0``: the result comes with the record).
    depth : int
        Computations held with a latency of 0.

    Members
    -------
    i_record : In(stream.Signature(record))
        A decided computation; ``ready`` is a register (the queue has room).
    i_data : In(data_width)
        The kernel's result, ``latency`` cycles after its computation's record was taken.
    o_comp : Out(stream.Signature(record + data))
        The oldest computation whose data has arrived.
    """

    def __init__(self, record, *, data_width, latency=0, depth=2):
        if latency < 0 or depth < 1:
            raise ValueError(f"Latency must be >= 0 and depth >= 1, not {latency} and {depth}")
        self.record, self.data_width, self.latency, self.depth = record, data_width, latency, depth
        # the record's fields, then data: a computation's bits are its record's followed by its data
        self.comp = data.StructLayout({**{name: field.shape for name, field in record}, "data": data_width})
        super().__init__({
            "i_record": In(stream.Signature(record)),
            "i_data": In(data_width),
            "o_comp": Out(stream.Signature(self.comp)),
        })

    def elaborate(self, platform):
        m = Module()
        capacity = self.depth + self.latency
        out = self.o_comp
        if self.latency == 0:
            m.submodules.queue = queue = DataChannel(self.comp, capacity)
            wiring.connect(m, queue.o_stream, wiring.flipped(out))
            m.d.comb += [
                queue.i_stream.valid.eq(self.i_record.valid),
                self.i_record.ready.eq(queue.i_stream.ready),
                queue.i_stream.payload.eq(Cat(self.i_record.payload, self.i_data)),
            ]
            return m
        m.submodules.records = records = DataChannel(self.record, capacity)
        m.submodules.results = results = DataChannel(self.data_width, capacity)
        wiring.connect(m, wiring.flipped(self.i_record), records.i_stream)
        # the record transfers, delayed to the cycle their data leave the kernel; a result always finds
        # room: the lane holds no more results than the records hold records
        taken = Signal(self.latency)
        m.d.sync += taken.eq(Cat(self.i_record.valid & self.i_record.ready, taken[:-1]))
        both = records.o_stream.valid & results.o_stream.valid
        m.d.comb += [
            results.i_stream.valid.eq(taken[-1]),
            results.i_stream.payload.eq(self.i_data),
            out.valid.eq(both),
            records.o_stream.ready.eq(both & out.ready),
            results.o_stream.ready.eq(both & out.ready),
            out.payload.eq(Cat(records.o_stream.payload, results.o_stream.payload)),
        ]
        return m

"""Decided computations: the queue between a node's decide and emit stages, with the kernel's results.

A node decides a computation (its inputs consumed, its kernel stepped) and emits it later, when every
output can take it (docs/hardware.md, "The pipelined node"). The queue holds the decided computations'
records in order. A kernel of latency ``L`` (:mod:`sfdf.hdl.kernels`: a pipelined multiply or adder)
delivers a computation's data ``L`` cycles after the cycle the computation was decided in, into the
record's slot (a ring of register slots; with ``L = 0`` record and data go together into a
:class:`~sfdf.hdl.channels.DataChannel`); a computation leaves when both its record and its data are there.
The queue holds ``depth + L`` computations, so ``L`` cycles of kernel latency never throttle a stream
of one computation per cycle. A computation in the queue or in the kernel's pipeline has consumed its
inputs and sent nothing: it is one of the node's decided computations, which the reference model's
``depth`` counts (``simulate(..., depth=depth + L)``).
"""

from amaranth.hdl import Cat, Module, Mux, Shape, Signal, Value
from amaranth.lib import data, stream, wiring
from amaranth.lib.wiring import In, Out

from .channels import DataChannel
from .select import pick

__all__ = ["DecidedQueue"]


class DecidedQueue(wiring.Component):
    """The decided computations of one node.

    Parameters
    ----------
    record : StructLayout
        What the decide stage knows of a computation when it decides it (no ``data``).
    data_width : int
        The kernel's result bits (0: none, no ``i_data`` and no ``data`` field).
    latency : int
        Cycles from the decision to the kernel's result (``0``: the result comes with the record).
    depth : int
        Computations held with a latency of 0.
    registered : sequence of str
        Record fields ``o_comp`` gives from registers of their own, not through the multiplexer over the
        slots that a latency of 1 or more uses (the fields the emit stage's commit and the senders'
        interval tests read). With a latency of 0 every field comes from the channel's head register.
    staged : bool
        With a latency of 1 or more: the record goes into its slot a cycle after it is taken, from a
        register that loads ``i_record.payload`` in every cycle, so the decide stage's logic ends at
        that one register (for a join that compares its heads in the decide cycle); ignored with a
        latency of 0.
    ahead : sequence of str
        Fields of ``registered`` (any record field with a latency of 0) whose next cycle's values ``o_next``
        gives, for a reader that registers something derived from them (an in-band sender's interval
        test, :class:`sfdf.hdl.gap.GapCounter`).

    Members
    -------
    i_record : In(stream.Signature(record))
        A decided computation; ``ready`` is a register (the queue has room).
    i_data : In(data_width)
        The kernel's result, ``latency`` cycles after its computation's record was taken.
    o_comp : Out(stream.Signature(record + data))
        The oldest computation whose data has arrived.
    o_next : Out(StructLayout of the ``ahead`` fields)
        What those fields of ``o_comp.payload`` are in the next cycle (when ``o_comp.valid`` will be set).
    """

    def __init__(self, record, *, data_width, latency=0, depth=2, registered=(), staged=False, ahead=()):
        if latency < 0 or depth < 1:
            raise ValueError(f"Latency must be >= 0 and depth >= 1, not {latency} and {depth}")
        self.record, self.data_width, self.latency, self.depth = record, data_width, latency, depth
        self.registered = tuple(registered)
        self.ahead = tuple(ahead)
        if latency and not set(self.ahead) <= set(self.registered):
            raise ValueError(f"Fields ahead must be registered, not {sorted(set(self.ahead) - set(self.registered))}")
        self.staged = bool(staged) and latency > 0
        # the record's fields, then data: a computation's bits are its record's followed by its data
        # (no data field where the results come another way: a user kernel's, queued per output)
        self.comp = data.StructLayout({**{name: field.shape for name, field in record},
                                       **({"data": data_width} if data_width else {})})
        super().__init__({
            "i_record": In(stream.Signature(record)),
            **({"i_data": In(data_width)} if data_width else {}),
            "o_comp": Out(stream.Signature(self.comp)),
            **({"o_next": Out(data.StructLayout({name: record[name].shape for name in self.ahead}))}
               if self.ahead else {}),
        })

    def elaborate(self, platform):
        m = Module()
        capacity = self.depth + self.latency
        out = self.o_comp
        if self.latency == 0:
            m.submodules.queue = queue = DataChannel(self.comp, capacity, ahead=self.ahead or None)
            wiring.connect(m, queue.o_stream, wiring.flipped(out))
            m.d.comb += [Value.cast(self.o_next[name]).eq(queue.o_ahead[name]) for name in self.ahead]
            m.d.comb += [
                queue.i_stream.valid.eq(self.i_record.valid),
                self.i_record.ready.eq(queue.i_stream.ready),
                queue.i_stream.payload.eq(Cat(self.i_record.payload, self.i_data if self.data_width else [])),
            ]
            return m
        # ``capacity`` slots of registers in a ring: a record goes into the slot at ``put`` and its data,
        # ``latency`` cycles later, into the same slot (its number travels beside the kernel's pipeline);
        # the oldest slot, at ``get``, leaves once its data are in. Taking the oldest moves ``get`` and a
        # few flags only: no register of the computation's width waits for the emit stage's commit
        # (a sink's beat or a node's all-or-nothing emission), which sees the slots through a
        # multiplexer chosen by ``get``, a register.
        width = Value.cast(self.i_record.payload).shape().width
        records = [Signal(width, name=f"record{k}", reset_less=True) for k in range(capacity)]
        results = [Signal(self.data_width, name=f"result{k}", reset_less=True) for k in range(capacity)]
        arrived = Signal(capacity)  # a slot's data are in
        put, get = Signal(range(capacity)), Signal(range(capacity))
        count = Signal(range(capacity + 1))
        full, valid = Signal(), Signal()
        take = self.i_record.valid & ~full
        pop = valid & out.ready
        m.d.comb += [
            self.i_record.ready.eq(~full),
            out.valid.eq(valid),
            out.payload.eq(Cat(pick(get, records), pick(get, results))),
        ]
        with m.If(take):
            m.d.sync += put.eq(_next(put, capacity))
        # the record goes into the slot at ``put`` when it is taken; or, ``staged``, a cycle later from a
        # register that loads the decide stage's record in every cycle, so the join's choice reaches one
        # register with no slot's enable after it, and the slots' enables are registers (``taken``,
        # ``slots``). The slot was reserved at the take (``put`` moved); its data come no earlier
        if not self.staged:
            for k, record in enumerate(records):
                with m.If(take & (put == k)):
                    m.d.sync += record.eq(self.i_record.payload)
        slots = [Signal(range(capacity), name=f"slot{k}") for k in range(self.latency)]
        taken = Signal(self.latency)
        m.d.sync += [taken.eq(Cat(take, taken[:-1])), slots[0].eq(put)]
        m.d.sync += [slots[k].eq(slots[k - 1]) for k in range(1, self.latency)]
        staged = None
        if self.staged:
            staged = Signal(width, name="staged", reset_less=True)
            m.d.sync += staged.eq(self.i_record.payload)
            for k, record in enumerate(records):
                with m.If(taken[0] & (slots[0] == k)):
                    m.d.sync += record.eq(staged)
        landing = Signal(capacity)  # the slot whose data come this cycle
        with m.If(taken[-1]):
            m.d.comb += landing.eq(1 << slots[-1])
        for k, result in enumerate(results):
            with m.If(landing[k]):
                m.d.sync += result.eq(self.i_data)
        leaving = Signal(capacity)
        with m.If(pop):
            m.d.comb += leaving.eq(1 << get)
        ahead = _next(get, capacity)
        there = arrived | landing
        m.d.sync += [arrived.eq(there & ~leaving), get.eq(Mux(pop, ahead, get))]
        # ``valid`` (the oldest slot's data are in) next is chosen by the pop between two tests that only
        # registers feed: of the slot after ``get`` (``an``: its data are in, ``ln``: they land this cycle)
        # and of ``get``'s own (``valid``, ``lg``). The slot two ahead differs from ``get`` (capacity >= 3),
        # and the slot whose data land next cycle is known a cycle ahead (the kernel's pipeline, or the take
        # with a latency of 1), so the three flags are kept so too: the pop reaches one LUT before ``valid``
        next_taken, next_slot = (taken[-2], slots[-2]) if self.latency >= 2 else (take, put)
        after = _next(ahead, capacity)
        an, ln, lg = Signal(), Signal(), Signal()
        m.d.sync += [
            valid.eq(Mux(pop, an | ln, valid | lg)),
            an.eq(Mux(pop, pick(after, list(there)), an | ln)),
            ln.eq(next_taken & Mux(pop, next_slot == after, next_slot == ahead)),
            lg.eq(next_taken & Mux(pop, next_slot == ahead, next_slot == get)),
        ]
        # the fields the emit stage's commit reads (``registered``) come from registers, a copy of the
        # oldest slot's a cycle late: a slot's record is in at least a cycle before its data. Staged, it
        # is in with its data at a latency of 1, so a slot written this cycle is copied from ``staged``;
        # whether that is the slot after ``get`` or ``get``'s own is known from registers, and the pop
        # only chooses between the two
        writing = [taken[0] & (slots[0] == slot) for slot in (ahead, get)] if staged is not None else None
        for name in self.registered:
            field = self.record[name]
            bits = Shape.cast(field.shape).width
            rows = [record[field.offset:field.offset + bits] for record in records]
            from_ahead, from_get = pick(ahead, rows), pick(get, rows)
            if writing is not None:
                new = staged[field.offset:field.offset + bits]
                from_ahead, from_get = Mux(writing[0], new, from_ahead), Mux(writing[1], new, from_get)
            following = Mux(pop, from_ahead, from_get)  # the field's value in the next cycle
            copy = Signal(bits, name=f"head_{name}")
            m.d.sync += copy.eq(following)
            m.d.comb += Value.cast(out.payload[name]).eq(copy)
            if name in self.ahead:
                m.d.comb += Value.cast(self.o_next[name]).eq(following)
        with m.If(take & ~pop):
            m.d.sync += [count.eq(count + 1), full.eq(count == capacity - 1)]
        with m.Elif(pop & ~take):
            m.d.sync += [count.eq(count - 1), full.eq(0)]
        return m


def _next(pointer, size):
    """``pointer + 1`` modulo ``size``."""
    return Mux(pointer == size - 1, 0, pointer + 1)

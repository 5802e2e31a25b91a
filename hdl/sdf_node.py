"""An SDF node running the SDF test kernel (004 networks in hardware; first cut: one firing at a time).

A firing of phase ``k`` starts when every input channel holds the phase's ``peek`` items and every output
channel has room for its ``push`` items (the rule ``sfdf check`` proves live, :mod:`sfdf.gen.sdf.liveness`;
a source also needs ``i_allow``). It then reads the ``peek`` items of every input, one per cycle on all
inputs at once through the channels' window (:class:`sfdf.hdl.sdf_channel.SDFChannel`, a registered read),
pops the phase's ``pop`` items, computes ``v = acc + f + (sum of the items read)`` mod 2^32 for its
firing ``f`` (from 1; ``acc`` is 0 until teleport messages add to it), and writes ``v, v + 1, ...`` on every output, ``push`` of them, one per cycle on
all outputs at once: :class:`sfdf.gen.goldens.SDFTest`, bit for bit. A sink hands ``v`` out on ``o_value``
(valid/ready). Teleport messages are not carried yet.

Cycles per firing, from the cycle the start condition holds: 1 to start, ``max(1, peeks) + 1`` to read (the
channel's read latency; none at a source), 1 to compute and ``max(1, pushes)`` to write (a sink: until its
``v`` is taken). Full rate, one item per cycle per channel with reads and writes overlapped, is the next
step.
"""

from __future__ import annotations

from amaranth import Array, Cat, Const, Module, Mux, Signal
from amaranth.lib import wiring
from amaranth.lib.wiring import In, Out

__all__ = ["SDFNode"]


class SDFNode(wiring.Component):
    """``inputs``: per input edge ``(capacity, peeks per phase, pops per phase)``; ``outputs``: per output
    edge ``(capacity, pushes per phase)``; ``phases`` their common length."""

    def __init__(self, phases: int, inputs: list[tuple[int, tuple, tuple]], outputs: list[tuple[int, tuple]]):
        self.phases, self.inputs, self.outputs = phases, inputs, outputs
        members = {"o_fired": Out(1)}
        for j, (capacity, peeks, pops) in enumerate(inputs):
            members |= {f"i{j}_level": In(range(capacity + 1)), f"i{j}_offset": Out(range(max(max(peeks), 1))),
                        f"i{j}_data": In(32), f"i{j}_pop": Out(range(max(max(pops), 1) + 1))}
        for j, (capacity, _) in enumerate(outputs):
            members |= {f"o{j}_room": In(range(capacity + 1)), f"o{j}_valid": Out(1), f"o{j}_data": Out(32)}
        if not inputs:
            members["i_allow"] = In(1)
        if not outputs:
            members |= {"o_valid": Out(1), "o_value": Out(32), "o_ready": In(1)}
        super().__init__(members)

    def elaborate(self, platform):
        m = Module()
        count = self.phases
        phase = Signal(range(count))
        fired = Signal(32)
        total = Signal(32)
        value = Signal(32)
        step = Signal(range(max([1] + [p for _, peeks, _ in self.inputs for p in peeks]
                                + [p for _, pushes in self.outputs for p in pushes]) + 2))

        def table(values):
            return Array(Const(v, range(max(values) + 1)) for v in values)[phase]

        reads = table([max([1] + [peeks[k] for _, peeks, _ in self.inputs]) for k in range(count)])
        writes = table([max([1] + [pushes[k] for _, pushes in self.outputs]) for k in range(count)])
        ready = Signal()
        conditions = [getattr(self, f"i{j}_level") >= table(peeks) for j, (_, peeks, _) in enumerate(self.inputs)]
        conditions += [getattr(self, f"o{j}_room") >= table(pushes) for j, (_, pushes) in enumerate(self.outputs)]
        if not self.inputs:
            conditions.append(self.i_allow)
        m.d.comb += ready.eq(Cat(*conditions).all())
        with m.FSM():
            with m.State("IDLE"), m.If(ready):
                m.d.sync += [total.eq(0), step.eq(0)]
                m.next = "READ" if self.inputs else "COMPUTE"
            if self.inputs:
                self._read(m, table, reads, step, total)
            with m.State("COMPUTE"):
                m.d.sync += [value.eq(fired + 1 + total), step.eq(0)]
                m.next = "WRITE"
            with m.State("WRITE"):
                for j, (_, pushes) in enumerate(self.outputs):
                    m.d.comb += [getattr(self, f"o{j}_valid").eq(step < table(pushes)),
                                 getattr(self, f"o{j}_data").eq(value + step)]
                done = Signal()
                if self.outputs:
                    m.d.comb += done.eq(step + 1 >= writes)
                    m.d.sync += step.eq(step + 1)
                else:
                    m.d.comb += [self.o_valid.eq(1), self.o_value.eq(value), done.eq(self.o_ready)]
                with m.If(done):
                    m.d.comb += self.o_fired.eq(1)
                    m.d.sync += [fired.eq(fired + 1), phase.eq(Mux(phase == count - 1, 0, phase + 1))]
                    m.next = "IDLE"
        return m

    def _read(self, m, table, reads, step, total):
        """The read state: cycle ``s`` asks every input for its item ``s`` and adds item ``s - 1`` of each
        input that peeks it; the phase's pops go with the last."""
        with m.State("READ"):
            for j, (_, peeks, _) in enumerate(self.inputs):
                m.d.comb += getattr(self, f"i{j}_offset").eq(step)
            adds = [Mux((step != 0) & (step - 1 < table(peeks)), getattr(self, f"i{j}_data"), 0)
                    for j, (_, peeks, _) in enumerate(self.inputs)]
            m.d.sync += [total.eq(total + sum(adds[1:], adds[0])), step.eq(step + 1)]
            with m.If(step == reads):
                for j, (_, _, pops) in enumerate(self.inputs):
                    m.d.comb += getattr(self, f"i{j}_pop").eq(table(pops))
                m.next = "COMPUTE"

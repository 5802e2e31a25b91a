"""Test kernels of the contract (docs/kernels.md) that exercise the node's handshake.

``Stall``: ``o = (i * K) mod 2^W`` (or, with two inputs ``a`` and ``b``, ``a + b``), filtered when the input
is absent or the result is divisible by ``DROP``; ``INPUTS``: its input members, comma-separated; it refuses input beats and holds output beats at random
(a 16-bit LFSR), with a two-stage pipeline: latency 2 when nothing stalls. ``Liar``: passes its input on,
but filters every multiple of 5 although its node declares ``may_filter = false``; its golden never filters.
"""

from amaranth.hdl import Cat, Module, Mux, Signal
from amaranth.lib import data, stream, wiring
from amaranth.lib.wiring import In, Out


def _lfsr(m, name):
    state = Signal(16, init=0xACE1, name=name)
    m.d.sync += state.eq(Cat(state[1:], state[0] ^ state[2] ^ state[3] ^ state[5]))
    return state


class Stall(wiring.Component):
    def __init__(self, K=3, W=16, DROP=0, INPUTS="i"):
        self.k, self.w, self.drop, self.inputs = K, W, DROP, tuple(INPUTS.split(","))
        members = {name: In(stream.Signature(data.StructLayout({"present": 1, "data": W}))) for name in self.inputs}
        members["o"] = Out(stream.Signature(data.StructLayout({"emit": 1, "data": W})))
        super().__init__(members)

    def elaborate(self, platform):
        m = Module()
        noise = _lfsr(m, "noise")
        beats = [getattr(self, name) for name in self.inputs]
        valid1, present1, value1 = Signal(), Signal(), Signal(self.w)
        advance = (~self.o.valid | self.o.ready) & ~noise[0]  # stalls at random
        all_valid = Cat(*(b.valid for b in beats)).all()
        take = advance & all_valid & ~noise[1]
        for b in beats:
            m.d.comb += b.ready.eq(take)
        if len(beats) == 1:
            value = (beats[0].payload.data * self.k)[:self.w]
        else:
            value = sum(Mux(b.payload.present, b.payload.data, 0) for b in beats)[:self.w]
        present = Cat(*(b.payload.present for b in beats)).any()
        with m.If(self.o.valid & self.o.ready):
            m.d.sync += self.o.valid.eq(0)
        with m.If(advance):
            m.d.sync += [valid1.eq(take), present1.eq(present), value1.eq(value)]
            with m.If(valid1):
                keep = present1 & (value1 % self.drop != 0) if self.drop else present1
                m.d.sync += [self.o.valid.eq(1), self.o.payload.emit.eq(keep), self.o.payload.data.eq(value1)]
        return m


class StallGolden:
    def __init__(self, K=3, W=16, DROP=0, INPUTS="i"):
        self.k, self.mask, self.drop, self.inputs = K, (1 << W) - 1, DROP, tuple(INPUTS.split(","))

    def step(self, inputs):
        if len(self.inputs) == 1:
            value = (inputs["i"] * self.k) & self.mask
        else:
            value = sum(v for v in inputs.values() if v is not None) & self.mask
        return {"o": None if self.drop and value % self.drop == 0 else value}


class WrongGolden(StallGolden):
    """Off by one on every 7th value: the cosim must stop at the first such token."""

    def step(self, inputs):
        out = super().step(inputs)
        return {"o": out["o"] ^ 1} if out["o"] is not None and out["o"] % 7 == 3 else out


class Liar(wiring.Component):
    def __init__(self, W=16):
        super().__init__({
            "i": In(stream.Signature(data.StructLayout({"present": 1, "data": W}))),
            "o": Out(stream.Signature(data.StructLayout({"emit": 1, "data": W}))),
        })

    def elaborate(self, platform):
        m = Module()
        m.d.comb += [self.o.valid.eq(self.i.valid), self.i.ready.eq(self.o.ready),
                     self.o.payload.data.eq(self.i.payload.data),
                     self.o.payload.emit.eq(self.i.payload.data % 5 != 0)]
        return m


class HonestGolden:
    def __init__(self, W=16):
        pass

    def step(self, inputs):
        return {"o": inputs["i"]}


class Raises:
    def __init__(self, **params):
        pass

    def step(self, inputs):
        if inputs["i"] % 3 == 0:
            raise ZeroDivisionError("a golden's own bug")
        return {"o": inputs["i"]}

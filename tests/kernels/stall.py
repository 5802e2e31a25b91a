"""Test kernels of the contract (docs/kernels.md) that exercise the node's handshake.

``Stall``: ``o = (i * K) mod 2^W`` (or, with two inputs ``a`` and ``b``, ``a + b``), filtered when the input
is absent or the result is divisible by ``DROP``; ``INPUTS``: its input members, comma-separated; it refuses input beats and holds output beats at random
(a 16-bit LFSR), with a two-stage pipeline: latency 2 when nothing stalls. With ``MSG = 1`` it takes the node's
control messages as beats (``messages = true``) and answers each with the count of tokens it filtered since
the last, as a result only where its last data beat filtered (``LIE = 1``: always, which breaks the
contract where that computation emitted). ``Liar``: passes its input on,
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
    def __init__(self, K=3, W=16, DROP=0, INPUTS="i", OUTPUTS="o", MSG=0, LIE=0):
        self.k, self.w, self.drop, self.inputs = K, W, DROP, tuple(INPUTS.split(","))
        self.outputs, self.msg, self.lie = tuple(OUTPUTS.split(",")), MSG, LIE
        extra_in, extra_out = ({"msg": 1, "mdata": 16}, {"msg": 1}) if MSG else ({}, {})
        members = {name: In(stream.Signature(data.StructLayout({"present": 1, "data": W, **extra_in})))
                   for name in self.inputs}
        for name in self.outputs:
            members[name] = Out(stream.Signature(data.StructLayout({"emit": 1, "data": W, **extra_out})))
        super().__init__(members)

    def elaborate(self, platform):
        m = Module()
        noise = _lfsr(m, "noise")
        beats = [getattr(self, name) for name in self.inputs]
        outs = [getattr(self, name) for name in self.outputs]
        valid1, present1, value1 = Signal(), Signal(), Signal(self.w)
        advance = Cat(*(~o.valid | o.ready for o in outs)).all() & ~noise[0]  # stalls at random
        all_valid = Cat(*(b.valid for b in beats)).all()
        take = advance & all_valid & ~noise[1]
        for b in beats:
            m.d.comb += b.ready.eq(take)
        if len(beats) == 1:
            value = (beats[0].payload.data * self.k)[:self.w]
        else:
            value = sum(Mux(b.payload.present, b.payload.data, 0) for b in beats)[:self.w]
        present = Cat(*(b.payload.present for b in beats)).any()
        for o in outs:
            with m.If(o.valid & o.ready):
                m.d.sync += o.valid.eq(0)
        keep = present1 & (value1 % self.drop != 0) if self.drop else present1

        def send(**fields):
            return [o.valid.eq(1) for o in outs] + [o.payload[f].eq(v) for o in outs for f, v in fields.items()]

        if not self.msg:
            with m.If(advance):
                m.d.sync += [valid1.eq(take), present1.eq(present), value1.eq(value)]
                with m.If(valid1):
                    m.d.sync += send(emit=keep, data=value1)
            return m
        msg1, count, last_emit = Signal(), Signal(self.w), Signal()
        with m.If(advance):
            m.d.sync += [valid1.eq(take), present1.eq(present), value1.eq(value), msg1.eq(beats[0].payload.msg)]
            with m.If(valid1 & msg1):  # a message: answered with the count, a result where the last beat filtered
                m.d.sync += [*send(msg=1, data=count, emit=1 if self.lie else ~last_emit), count.eq(0)]
            with m.Elif(valid1):
                m.d.sync += [*send(msg=0, emit=keep, data=value1), last_emit.eq(keep)]
                with m.If(~keep):
                    m.d.sync += count.eq(count + 1)
        return m


class StallGolden:
    def __init__(self, K=3, W=16, DROP=0, INPUTS="i", OUTPUTS="o", MSG=0, LIE=0):
        self.k, self.mask, self.drop, self.inputs = K, (1 << W) - 1, DROP, tuple(INPUTS.split(","))
        self.keys = tuple(name if name == "o" else name[2:] for name in OUTPUTS.split(","))
        self.lie, self.count, self.last_emit = LIE, 0, False

    def step(self, inputs):
        if len(self.inputs) == 1:
            value = (inputs["i"] * self.k) & self.mask
        else:
            value = sum(v for v in inputs.values() if v is not None) & self.mask
        out = None if self.drop and value % self.drop == 0 else value
        self.last_emit = out is not None
        if out is None:
            self.count = (self.count + 1) & self.mask
        return dict.fromkeys(self.keys, out)

    def message(self, payload):
        count, self.count = self.count, 0
        return dict.fromkeys(self.keys, count if self.lie or not self.last_emit else None)


class HonestAnswers(StallGolden):
    """``StallGolden`` answering as ``LIE = 0`` whatever ``LIE`` says: the kernel lies, its golden does not."""

    def __init__(self, **params):
        super().__init__(**{**params, "LIE": 0})


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

"""Image moments of a camera frame (docs/kernels.md): the Amaranth kernel of the hillas network.

A frame is 8 x 8 pixels, one word per pixel in row order; the kernel gets the zero-suppressed pixels
``{last, amplitude}`` (9 bits) with their computation index (``index = true``), from which it knows
each pixel's place: ``p = index - (index of the previous frame's last word) - 1``, ``x = p mod 8``,
``y = p div 8 mod 8``. It sums ``S = sum a``, ``Sx = sum a*x`` and ``Sy = sum a*y`` over the frame's
pixels and emits ``{Sy, Sx, S}`` (48 bits) at the word marked last; every other computation is filtered.
Three register stages (``latency = 3``): the pixel's place (a subtraction of indices), its two products,
then the sums; all advance when the output is free, so a stalled output holds the pipeline.
"""

from amaranth.hdl import Cat, Module, Mux, Signal
from amaranth.lib import data, stream, wiring
from amaranth.lib.wiring import In, Out

#: Bits of S, Sx and Sy: exact for 64 pixels of 8 bits at places 0..7.
S_BITS, SX_BITS = 14, 17


class Moments(wiring.Component):
    def __init__(self, INDEX_WIDTH=32):
        self.index_width = INDEX_WIDTH
        super().__init__({
            "i": In(stream.Signature(data.StructLayout({"present": 1, "data": 9, "index": INDEX_WIDTH}))),
            "o": Out(stream.Signature(data.StructLayout({"emit": 1, "data": S_BITS + 2 * SX_BITS}))),
        })

    def elaborate(self, platform):
        m = Module()
        advance = ~self.o.valid | self.o.ready
        m.d.comb += self.i.ready.eq(advance)
        beat = self.i.payload
        amplitude, last = beat.data[:8], beat.data[8]
        previous = Signal(self.index_width)  # the index of the previous frame's last word
        # stage 0: the pixel, its flags and its place in the frame
        valid0, last0, present0, a0, place0 = Signal(), Signal(), Signal(), Signal(8), Signal(6)
        # stage 1: the pixel's products and flags
        valid1, last1, present1 = Signal(), Signal(), Signal()
        a1, ax1, ay1 = Signal(8), Signal(11), Signal(11)
        # stage 2: the running sums and the result
        s, sx, sy = Signal(S_BITS), Signal(SX_BITS), Signal(SX_BITS)
        weight = Mux(present1, a1, 0)
        s_next, sx_next, sy_next = ((s + weight)[:S_BITS], (sx + Mux(present1, ax1, 0))[:SX_BITS],
                                    (sy + Mux(present1, ay1, 0))[:SX_BITS])
        with m.If(advance):
            m.d.sync += [
                valid0.eq(self.i.valid), last0.eq(last & beat.present), present0.eq(beat.present),
                a0.eq(amplitude), place0.eq((beat.index - previous - 1)[:6]),
                valid1.eq(valid0), last1.eq(last0), present1.eq(present0),
                a1.eq(a0), ax1.eq(a0 * place0[:3]), ay1.eq(a0 * place0[3:6]),
                self.o.valid.eq(valid1),
            ]
            with m.If(self.i.valid & beat.present & last):
                m.d.sync += previous.eq(beat.index)
            with m.If(valid1):
                m.d.sync += [
                    self.o.payload.emit.eq(last1),
                    self.o.payload.data.eq(Cat(s_next, sx_next, sy_next)),
                    s.eq(Mux(last1, 0, s_next)), sx.eq(Mux(last1, 0, sx_next)), sy.eq(Mux(last1, 0, sy_next)),
                ]
        return m

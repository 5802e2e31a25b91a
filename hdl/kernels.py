"""Kernels in hardware: ``RandomFilter``, bit-exact with :mod:`gen.refmodel.kernels` (docs/semantics.md).

A kernel sees one computation at a time: the payloads present at the index (``i_mask`` says which) and
answers with a payload and an emit bit per output. ``i_step`` commits a *data* computation (at least
one payload present): only then do the per-output LFSRs advance, as in the model.
"""

from amaranth.hdl import Const, Module, Mux, Signal
from amaranth.lib import data, wiring
from amaranth.lib.wiring import In, Out

from gen.refmodel.kernels import LFSR_MASK, lfsr_seed

__all__ = ["RandomFilter", "filter_threshold"]


def filter_threshold(rate: float) -> int:
    """The integer threshold of docs/semantics.md: filter iff ``(s >> 16) < round(rate * 65536)``."""
    if not 0.0 <= rate <= 1.0:
        raise ValueError(f"Filter rate must be in [0, 1], not {rate!r}")
    return round(rate * 65536)


def _lfsr_step(state):
    """One right-shift Galois step of x^32 + x^22 + x^2 + x + 1, as an expression."""
    return (state >> 1) ^ Mux(state[0], LFSR_MASK, 0)


class RandomFilter(wiring.Component):
    """The ``random_filter`` kernel: wrapping sum of the payloads present, one LFSR filter per output.

    Parameters
    ----------
    inputs : int
        Payloads per computation (a source has one: its input word).
    outputs : int
        Out-edges in spec order; a sink has the single ``m_axis`` output.
    data_width : int
    seed : int
    rate : float

    Members
    -------
    i_payloads : In(ArrayLayout(data_width, inputs))
    i_mask : In(inputs)
        Which payloads are present.
    i_step : In(1)
        The computation commits this cycle (it steps the LFSRs when a payload is present).
    o_data : Out(data_width)
        The wrapping sum of the present payloads.
    o_emit : Out(outputs)
        Output ``j`` gets ``o_data`` (combinational, from the stepped LFSR states).
    """

    def __init__(self, *, inputs, outputs, data_width, seed, rate):
        if inputs < 1 or outputs < 1:
            raise ValueError(f"A kernel needs at least one input and one output, not {inputs} and {outputs}")
        self.inputs, self.outputs, self.data_width = inputs, outputs, data_width
        self.seeds = [lfsr_seed(seed, j) for j in range(outputs)]
        self.threshold = filter_threshold(rate)
        super().__init__({
            "i_payloads": In(data.ArrayLayout(data_width, inputs)),
            "i_mask": In(inputs),
            "i_step": In(1),
            "o_data": Out(data_width),
            "o_emit": Out(outputs),
        })

    def elaborate(self, platform):
        m = Module()
        total = Const(0, self.data_width)
        for k in range(self.inputs):
            total = (total + (self.i_payloads[k] & self.i_mask[k].replicate(self.data_width)))[:self.data_width]
        m.d.comb += self.o_data.eq(total)
        data_computation = self.i_mask.any()
        for j, seed in enumerate(self.seeds):
            state = Signal(32, init=seed, name=f"lfsr{j}")
            stepped = Signal(32, name=f"lfsr{j}_next")
            m.d.comb += stepped.eq(_lfsr_step(state))
            if self.threshold == 0:  # rate 0 never filters, rate 1 always does
                m.d.comb += self.o_emit[j].eq(1)
            elif self.threshold < 1 << 16:
                m.d.comb += self.o_emit[j].eq(stepped[16:] >= self.threshold)
            with m.If(self.i_step & data_computation):
                m.d.sync += state.eq(stepped)
        return m

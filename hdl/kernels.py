"""Kernels in hardware, bit-exact with :mod:`sfdf.gen.refmodel.kernels` (docs/semantics.md).

A kernel sees one computation at a time: the payloads present at the index (``i_mask`` says which),
each already placed by :func:`sfdf.gen.kernels.input_shift`, its distance from the node's previous
computation ``i_offset`` (exact; from index 0 before the first: the sum of the offsets is the index,
which the network may carry in fewer bits, :mod:`sfdf.hdl.watermark`) and, at a source,
``i_last`` (the word ends a frame). It answers combinationally with an emit bit per output and
optionally a control message to send after the computation (``o_msg_valid``, ``o_msg``), and with the
payload ``o_data`` ``latency`` cycles later (a kernel's attribute: the variance kernels register
their multiply or their inputs, so that the decide stage does not wait for a multiplier and a wide
adder; :class:`sfdf.hdl.decided.DecidedQueue` holds the computation until its data arrive). A pipelined
kernel's stages run every cycle: its result ``latency`` cycles after any cycle is that cycle's
computation's, stepped or not.
``i_step`` commits the computation; state (LFSRs, accumulators) advances only on a *data*
computation (at least one payload present), as in the model. Every kernel has the members of
:func:`kernel_signature`; :func:`make_kernel` builds one by its spec name.

Messages: a source's kernel turns the word marked last (``tlast``) into the frame's boundary, the
message ``frame number mod 2^16`` (:func:`frame_ends`; docs/architecture.md). Interior nodes forward the messages
that reach them (the node's barrier, docs/hardware.md) and their kernels originate none: a message born
inside the network would reach a join on one input only, and the join's barrier forwards a message
when its copies meet, which needs every message to start at the sources, which all frame together.
"""

from amaranth.hdl import Cat, Const, Module, Mux, Signal
from amaranth.lib import data, wiring
from amaranth.lib.wiring import In, Out

from sfdf.gen.contract import UserKernel
from sfdf.gen.kernels import (
    LFSR_MASK,
    MESSAGE_WIDTH,
    PIXEL_BITS,
    filter_threshold,
    kernel_defaults,
    kernel_output_width,
    kernel_params,
    lfsr_seed,
    lfsr_step,
    variance_fields,
)

from .dsp import RegisteredMultiplier

__all__ = ["RandomFilter", "VarianceJoin", "VarianceSource", "VarianceSum", "frame_ends", "kernel_latency",
           "kernel_signature", "make_kernel", "node_latency"]

#: Parameter defaults, from the kernel library (one home: :func:`sfdf.gen.kernels.kernel_defaults`).
_FILTER, _SOURCE = kernel_defaults("random_filter"), kernel_defaults("variance_source")


def kernel_signature(inputs: int, outputs: int, in_width: int, out_width: int, index_width: int) -> dict:
    """The members every kernel has (see the module docstring)."""
    if inputs < 1 or outputs < 1:
        raise ValueError(f"A kernel needs at least one input and one output, not {inputs} and {outputs}")
    return {
        "i_payloads": In(data.ArrayLayout(in_width, inputs)),
        "i_mask": In(inputs),
        "i_offset": In(index_width),
        "i_last": In(1),
        "i_step": In(1),
        "o_data": Out(out_width),
        "o_emit": Out(outputs),
        "o_msg_valid": Out(1),
        "o_msg": Out(MESSAGE_WIDTH),
    }


def frame_ends(m: Module, kernel) -> None:
    """A source kernel's messages: after a word marked last, the frame end carrying the frame number
    (from 0, modulo ``2^16``). At an interior node ``i_last`` is 0 and this is constant logic."""
    frames = Signal(MESSAGE_WIDTH)
    m.d.comb += [kernel.o_msg_valid.eq(kernel.i_last), kernel.o_msg.eq(frames)]
    with m.If(kernel.i_step & kernel.i_last):
        m.d.sync += frames.eq(frames + 1)


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
    in_width, data_width, index_width : int
        Input payload bits; the sum wraps at ``data_width`` bits (``o_data``).
    seed : int
    rate : float
    ahead : bool
        ``o_emit`` from registers: each filter's decision for the next data computation is kept from the
        cycle the LFSR steps to it (the state two steps on), so no comparison follows the state (for a
        node that decides and sends in one cycle, :class:`sfdf.hdl.single_stage.SingleStageNode`).

    Members
    -------
    As :func:`kernel_signature`: ``o_data`` is the wrapping sum of the present payloads; output ``j``
    gets it iff ``o_emit[j]`` (combinational, from the stepped LFSR states; with ``ahead`` a register
    equal to it).
    """

    latency = 0

    def __init__(self, *, inputs, outputs, data_width, seed=_FILTER["seed"], rate=_FILTER["rate"], in_width=None,
                 index_width=32, ahead=False):
        self.inputs, self.outputs, self.data_width, self.ahead = inputs, outputs, data_width, ahead
        self.seeds = [lfsr_seed(seed, j) for j in range(outputs)]
        self.threshold = filter_threshold(rate)
        super().__init__(kernel_signature(inputs, outputs, in_width or data_width, data_width, index_width))

    def elaborate(self, platform):
        m = Module()
        total = Const(0, self.data_width)
        for k in range(self.inputs):
            present = self.i_payloads[k][:self.data_width] & self.i_mask[k].replicate(self.data_width)
            total = (total + present)[:self.data_width]
        m.d.comb += self.o_data.eq(total)
        frame_ends(m, self)
        data_computation = self.i_mask.any()
        for j, seed in enumerate(self.seeds):
            state = Signal(32, init=seed, name=f"lfsr{j}")
            stepped = Signal(32, name=f"lfsr{j}_next")
            m.d.comb += stepped.eq(_lfsr_step(state))
            if self.threshold == 0:  # rate 0 never filters, rate 1 always does
                m.d.comb += self.o_emit[j].eq(1)
            elif self.threshold < 1 << 16 and self.ahead:  # the decision for the state after the next step
                emit = Signal(init=lfsr_step(seed) >> 16 >= self.threshold, name=f"emit{j}")
                m.d.comb += self.o_emit[j].eq(emit)
                with m.If(self.i_step & data_computation):
                    m.d.sync += emit.eq(_lfsr_step(stepped)[16:] >= self.threshold)
            elif self.threshold < 1 << 16:
                m.d.comb += self.o_emit[j].eq(stepped[16:] >= self.threshold)
            with m.If(self.i_step & data_computation):
                m.d.sync += state.eq(stepped)
        return m


class VarianceSource(wiring.Component):
    """``variance_source`` (000 Fig. 1): ``last << 16 | pixel``, sent on every output unless a zero not last.

    Parameters
    ----------
    outputs : int
    index_width : int
    filter_zeros : int
        0 sends zeros too (the no-filtering baseline).

    Members
    -------
    As :func:`kernel_signature` with one 16-bit input and 17-bit ``o_data``.
    """

    latency = 0

    def __init__(self, *, outputs, index_width=32, filter_zeros=_SOURCE["filter_zeros"]):
        self.outputs, self.filter_zeros = outputs, filter_zeros
        super().__init__(kernel_signature(1, outputs, PIXEL_BITS, PIXEL_BITS + 1, index_width))

    def elaborate(self, platform):
        m = Module()
        pixel = self.i_payloads[0]
        m.d.comb += [
            self.o_data.eq(Cat(pixel, self.i_last)),
            self.o_emit.eq((self.i_last | pixel.any() | (not self.filter_zeros)).replicate(self.outputs)),
        ]
        frame_ends(m, self)
        return m


class VarianceSum(wiring.Component):
    """``variance_mean`` (``squares=False``) or ``variance_mean_sq``: a frame's sum of pixels or squares.

    One adder (and, for squares, one 16x16 multiplier) into an accumulator of the result's width
    (:func:`sfdf.gen.kernels.kernel_output_width`): ``o_data = acc + term(pixel)``, emitted on every output
    at the word marked last (bit 16), after which the accumulator clears. The sum of pixels has two
    stages (``latency = 1``): the term is registered, then added. The sum of squares has three
    (``latency = 2``): the multiplier registers its operands and its product
    (:class:`sfdf.hdl.dsp.RegisteredMultiplier`, on ECP5 inside the DSP block), then the product is added,
    so neither the multiply nor the accumulator's adder shares a cycle with routing to the other.

    Parameters
    ----------
    squares : bool
    outputs, index_width : int
    pipelined : bool
        ``False``: one stage (``latency = 0``), the term added in the computation's cycle.
    """

    #: Cycles from a computation to its result: the sum of pixels, the sum of squares.
    LATENCY = (1, RegisteredMultiplier.latency)

    def __init__(self, *, squares, outputs, index_width=32, pipelined=True):
        self.squares, self.outputs = squares, outputs
        self.latency = self.LATENCY[bool(squares)] if pipelined else 0
        width = kernel_output_width("variance_mean_sq" if squares else "variance_mean", index_width)
        super().__init__(kernel_signature(1, outputs, PIXEL_BITS + 1, width, index_width))

    def elaborate(self, platform):
        m = Module()
        width = len(self.o_data)
        pixel = self.i_payloads[0][:PIXEL_BITS]
        last = self.i_payloads[0][PIXEL_BITS]
        acc = Signal(width)
        if not self.latency:  # unpipelined: the term is added in the cycle of its computation
            term = pixel * pixel if self.squares else pixel
        elif self.squares:
            m.submodules.square = square = RegisteredMultiplier(PIXEL_BITS, PIXEL_BITS)
            m.d.comb += [square.i_a.eq(pixel), square.i_b.eq(pixel)]
            term = square.o_product
        else:
            term = Signal(width)
            m.d.sync += term.eq(pixel)
        # the step and the frame's end travel beside the term, ``latency`` cycles
        stepped, cleared = self.i_step & self.i_mask[0], last
        for k in range(self.latency):
            stepped_k, cleared_k = Signal(name=f"stepped{k}"), Signal(name=f"cleared{k}")
            m.d.sync += [stepped_k.eq(stepped), cleared_k.eq(cleared)]
            stepped, cleared = stepped_k, cleared_k
        m.d.comb += [
            self.o_data.eq((acc + term)[:width]),  # the last stage: the computation of ``latency`` cycles ago
            self.o_emit.eq(last.replicate(self.outputs)),
        ]
        with m.If(stepped):
            m.d.sync += acc.eq(Mux(cleared, 0, self.o_data))
        return m


class VarianceJoin(wiring.Component):
    """``variance_join``: ``n | sum | sum_sq`` (:func:`sfdf.gen.kernels.variance_fields`).

    The node places ``sum`` above ``sum_sq`` (:func:`sfdf.gen.kernels.input_shift`), in bits of their own,
    so the sum of its inputs is their OR (no carry chain across the fields), and the kernel puts ``n``
    on top: the distance from the previous result's index (indices count words,
    so ``n`` counts every pixel, zeros included), the sum of the offsets of the computations since.
    Two stages (``latency = 1``): the payloads, the mask, the offset and whether the computation stepped
    (with data) are registered, then masked and added; the running sum ``since`` advances in the second stage,
    from registers, so the commit drives no clock enable here (it stays off the node's decide path).

    Parameters
    ----------
    outputs, index_width : int
    pipelined : bool
        ``False``: both stages in one cycle (``latency = 0``).
    """

    def __init__(self, *, outputs, index_width=32, pipelined=True):
        self.latency = int(pipelined)
        self.outputs = outputs
        self.fields = variance_fields(index_width)
        n_lsb = self.fields["n"][0]
        super().__init__(kernel_signature(2, outputs, n_lsb, n_lsb + index_width, index_width))

    def elaborate(self, platform):
        m = Module()
        n_lsb = self.fields["n"][0]
        since = Signal.like(self.i_offset)  # indices from the previous result to the last computation
        offset, stepped, result = Signal.like(self.i_offset), Signal(), Signal()
        # stage 1 (registers when pipelined, wires when not): the payloads and the mask apart, so the decide
        # stage's mask drives two flip-flops, not the reset of every payload bit's; stage 2 masks them
        stage1 = m.d.sync if self.latency else m.d.comb
        payload = [Signal(n_lsb, name=f"payload{k}") for k in range(2)]
        mask = Signal(2)
        stage1 += [*(payload[k].eq(self.i_payloads[k][:n_lsb]) for k in range(2)), mask.eq(self.i_mask),
                   offset.eq(self.i_offset), stepped.eq(self.i_step), result.eq(self.i_step & self.i_mask.any())]
        present = [payload[k] & mask[k].replicate(n_lsb) for k in range(2)]
        n = (since + offset)[:len(since)]
        m.d.comb += [
            self.o_data.eq(Cat(present[0] | present[1], n)),  # stage 2: disjoint fields, so OR is their sum
            self.o_emit.eq(Const(-1, self.outputs)),
        ]
        with m.If(stepped):
            m.d.sync += since.eq(Mux(result, 0, n))
        return m


#: Cycles the register that offers a user kernel its input beats adds (:meth:`sfdf.hdl.node.SFDFNode._kernel_beats`):
#: the node decides a computation, then offers it, and the beats hold until the kernel takes them.
KERNEL_INPUT_CYCLES = 1


def node_latency(node, pipelined: bool = True) -> int:
    """Cycles from a computation to its results for node ``node``'s kernel: a user kernel's ``latency``
    (docs/kernels.md) plus the node's register that holds its input beats (:data:`KERNEL_INPUT_CYCLES`), a
    built-in's :func:`kernel_latency` where the platform is ``pipelined`` (else 0)."""
    if isinstance(node.kernel, UserKernel):
        return node.latency + KERNEL_INPUT_CYCLES
    return kernel_latency(node.kernel) if pipelined else 0


def kernel_latency(name) -> int:
    """Cycles from a computation to its data for the hardware kernel named ``name`` (module docstring):
    that of the kernel :func:`make_kernel` builds, pipelined (a kernel's latency depends on its name, not on
    widths; unpipelined it is 0)."""
    kernel = make_kernel(name, {}, inputs=1, outputs=1, in_width=PIXEL_BITS + 1, data_width=PIXEL_BITS,
                         index_width=32)
    kernel._MustUse__silence = True  # made to be asked, not elaborated: no UnusedElaboratable warning
    return kernel.latency


def make_kernel(name, params, *, inputs, outputs, in_width, data_width, index_width, pipelined=True, ahead=False):
    """The hardware kernel named ``name`` in a spec (``None``: ``random_filter`` with rate 0, docs/architecture.md).

    ``in_width``: bits of each placed input payload; ``data_width``: the network's payload width, which
    ``random_filter`` wraps at (the variance kernels fix their own widths); ``pipelined``: the variance
    kernels' pipeline stages (:attr:`sfdf.hdl.traits.PlatformTraits.pipelined`; without them their latency
    is 0); ``ahead``: ``random_filter``'s decisions from registers (:class:`RandomFilter`).
    """
    params = kernel_params(name, params)
    if name in (None, "random_filter"):
        return RandomFilter(inputs=inputs, outputs=outputs, data_width=data_width, in_width=in_width,
                            index_width=index_width, seed=params["seed"], rate=params["rate"], ahead=ahead)
    if name == "variance_source":
        return VarianceSource(outputs=outputs, index_width=index_width, filter_zeros=params["filter_zeros"])
    if name in ("variance_mean", "variance_mean_sq"):
        return VarianceSum(squares=name == "variance_mean_sq", outputs=outputs, index_width=index_width,
                           pipelined=pipelined)
    if name == "variance_join":
        return VarianceJoin(outputs=outputs, index_width=index_width, pipelined=pipelined)
    raise ValueError(f"Kernel {name!r} has no hardware")

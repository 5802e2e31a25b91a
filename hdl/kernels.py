"""The built-in kernels in hardware, bit-exact with their goldens (:mod:`sfdf.gen.goldens`, docs/semantics.md).

Each is a kernel like a user's (docs/kernels.md): a ``wiring.Component`` with the contract's members (one
``stream.Signature`` per input, ``{present, data}`` plus ``index`` or a source's ``last`` where it takes
them, and one per output, ``{emit, data}``; :func:`sfdf.hdl.contract.contract_members`), built from the
node's ports (:class:`sfdf.gen.contract.KernelPorts`). They also make the declarations of a kernel of fixed
timing (:class:`StaticKernel`): ``static`` (its inputs are always ready, each computation's output beats
come exactly ``latency`` cycles after its input beats, whatever ``o_ready``), ``emit_early`` (the emit bits
of the computation being offered, combinationally: a node decides with them, docs/hardware.md) and one data
value for every output (its low bits on each). The node then keeps no queue of results: it decides a
computation and runs the kernel in one cycle, and the data lands in the computation's slot of its decided
queue ``latency`` cycles later (:class:`sfdf.hdl.decided.DecidedQueue`); a pipelined kernel's stages run
every cycle, its result ``latency`` cycles after any cycle being that cycle's computation's.
State (LFSRs, accumulators) advances only on a computation's beats, which come for *data* computations
only (at least one input present), as in the model. :func:`make_kernel` builds a built-in by its spec name
(:data:`BUILTIN_HARDWARE`), for the node's ports.

The node sends a source's frame ends (the frame number mod ``2^16`` after each word marked last,
docs/architecture.md); interior nodes forward the messages that reach them (the node's barrier,
docs/hardware.md): a message born inside the network would reach a join on one input only, and the join's
barrier forwards a message when its copies meet, which needs every message to start at the sources.
"""

from amaranth.hdl import Cat, Const, Module, Mux, Signal
from amaranth.lib import wiring
from amaranth.lib.wiring import In, Out

from sfdf.gen.contract import UserKernel
from sfdf.gen.kernels import (
    LFSR_MASK,
    PIXEL_BITS,
    filter_threshold,
    kernel_defaults,
    kernel_params,
    lfsr_seed,
    lfsr_step,
    variance_fields,
)

from .contract import contract_members
from .dsp import RegisteredMultiplier

__all__ = ["BUILTIN_HARDWARE", "KERNEL_INPUT_CYCLES", "RandomFilter", "StaticKernel", "VarianceJoin",
           "VarianceSource", "VarianceSum", "kernel_latency", "lfsr_step_value", "make_kernel", "node_latency", "plan_kernel"]

#: Parameter defaults, from the kernel library (one home: :func:`sfdf.gen.kernels.kernel_defaults`).
_FILTER, _SOURCE = kernel_defaults("random_filter"), kernel_defaults("variance_source")


def lfsr_step_value(state):
    """One right-shift Galois step of x^32 + x^22 + x^2 + x + 1, as an expression."""
    return (state >> 1) ^ Mux(state[0], LFSR_MASK, 0)


class StaticKernel(wiring.Component):
    """A kernel of fixed timing (module docstring): the contract's members for ``ports`` and ``features``, plus
    ``emit_early``, ``Out(outputs)``. Subclasses drive ``emit_early`` and each output's ``emit`` and ``data``;
    this drives every input's ``ready`` (always 1) and each output's ``valid`` (the computation's, ``latency``
    cycles late)."""

    static = True
    latency = 0
    #: Its latency where the platform is pipelined (:func:`kernel_latency`).
    PIPELINED_LATENCY = 0

    def __init__(self, ports, features):
        self.ports = ports
        members = contract_members(ports, features)
        members["emit_early"] = Out(len(ports.outputs))
        super().__init__(members)
        self.inputs = [getattr(self, name) for name, m in self.signature.members.items()
                       if m.flow == In and name != "emit_early"]
        self.outputs = [getattr(self, name) for name, m in self.signature.members.items()
                        if m.flow == Out and name != "emit_early"]

    @property
    def data_width(self) -> int:
        """Bits of the one data value every output carries the low bits of (zero-extended where wider)."""
        return max(width for _, width in self.ports.outputs)

    def shared_data(self):
        """The one data value, as the widest output carries it: what a node stores once for every output."""
        widest = max(self.outputs, key=lambda o: len(o.payload.data))
        return widest.payload.data[:self.data_width]

    def _ports(self, m, valid):
        """Inputs always ready; every output valid with ``valid`` (the computation's, ``latency`` cycles late)
        and carrying the low bits of ``self.value``."""
        for beat in self.inputs:
            m.d.comb += beat.ready.eq(1)
        for beat in self.outputs:
            m.d.comb += [beat.valid.eq(valid), beat.payload.data.eq(self.value)]

    def elaborate(self, platform):
        raise NotImplementedError


class RandomFilter(StaticKernel):
    """The ``random_filter`` kernel: wrapping sum of the inputs present, one LFSR filter per output.

    Parameters
    ----------
    ports, features
        The node's (:class:`StaticKernel`); the sum wraps at ``ports.data_width`` bits.
    seed : int
    rate : float
    ahead : bool
        ``emit_early`` from registers: each filter's decision for the next data computation is kept from the
        cycle the LFSR steps to it (the state two steps on), so no comparison follows the state (for a
        node that decides and sends in one cycle, :class:`sfdf.hdl.single_stage.SingleStageNode`).

    Members
    -------
    As :class:`StaticKernel`, latency 0: every output carries the wrapping sum of the present inputs' data; output
    ``j`` emits iff its LFSR, stepped, says so (``emit_early[j]``, combinational from the states; with ``ahead`` a
    register equal to it).
    """

    def __init__(self, *, ports, features, seed=_FILTER["seed"], rate=_FILTER["rate"], ahead=False, **_):
        self.ahead, self.sum_width = ahead, ports.data_width
        self.seeds = [lfsr_seed(seed, j) for j in range(len(ports.outputs))]
        self.threshold = filter_threshold(rate)
        super().__init__(ports, features)

    @property
    def data_width(self) -> int:
        return self.sum_width

    def elaborate(self, platform):
        m = Module()
        width = self.sum_width
        total = Const(0, width)
        for beat in self.inputs:
            present = beat.payload.data[:width] & beat.payload.present.replicate(min(width, len(beat.payload.data)))
            total = (total + present)[:width]
        self.value = total
        step = self.inputs[0].valid  # a computation's beats come on every input at once
        self._ports(m, step)
        for j, seed in enumerate(self.seeds):
            state = Signal(32, init=seed, name=f"lfsr{j}")
            stepped = Signal(32, name=f"lfsr{j}_next")
            m.d.comb += stepped.eq(lfsr_step_value(state))
            if self.threshold == 0:  # rate 0 never filters, rate 1 always does
                m.d.comb += self.emit_early[j].eq(1)
            elif self.threshold < 1 << 16 and self.ahead:  # the decision for the state after the next step
                emit = Signal(init=lfsr_step(seed) >> 16 >= self.threshold, name=f"emit{j}")
                m.d.comb += self.emit_early[j].eq(emit)
                with m.If(step):
                    m.d.sync += emit.eq(lfsr_step_value(stepped)[16:] >= self.threshold)
            elif self.threshold < 1 << 16:
                m.d.comb += self.emit_early[j].eq(stepped[16:] >= self.threshold)
            m.d.comb += self.outputs[j].payload.emit.eq(self.emit_early[j])
            with m.If(step):
                m.d.sync += state.eq(stepped)
        return m


class VarianceSource(StaticKernel):
    """``variance_source`` (000 Fig. 1): ``last << 16 | pixel`` on every output unless a zero not last.

    Parameters
    ----------
    ports, features
        One 16-bit input with ``last`` (the source's word and its ``tlast``); 17-bit outputs.
    filter_zeros : int
        0 sends zeros too (the no-filtering baseline).
    """

    def __init__(self, *, ports, features, filter_zeros=_SOURCE["filter_zeros"], **_):
        self.filter_zeros = filter_zeros
        super().__init__(ports, features)

    def elaborate(self, platform):
        m = Module()
        beat = self.inputs[0]
        pixel, last = beat.payload.data, beat.payload.last
        self.value = Cat(pixel, last)
        self._ports(m, beat.valid)
        emit = last | pixel.any() | (not self.filter_zeros)
        m.d.comb += self.emit_early.eq(emit.replicate(len(self.outputs)))
        m.d.comb += [o.payload.emit.eq(emit) for o in self.outputs]
        return m


class VarianceSum(StaticKernel):
    """``variance_mean`` (``squares=False``) or ``variance_mean_sq``: a frame's sum of pixels or squares.

    One adder (and, for squares, one 16x16 multiplier) into an accumulator of the result's width (the
    output's): ``data = acc + term(pixel)``, emitted on every output at the word marked last (bit 16 of its
    input), after which the accumulator clears. The sum of pixels has two stages (``latency = 1``): the term
    is registered, then added. The sum of squares has three (``latency = 2``): the multiplier registers its
    operands and its product (:class:`sfdf.hdl.dsp.RegisteredMultiplier`, on ECP5 inside the DSP block), then
    the product is added, so neither the multiply nor the accumulator's adder shares a cycle with routing to
    the other. ``emit_early`` is the word's mark, known when it is offered.

    Parameters
    ----------
    squares : bool
    ports, features
    pipelined : bool
        ``False``: one stage (``latency = 0``), the term added in the computation's cycle.
    """

    #: Cycles from a computation to its result: the sum of pixels, the sum of squares.
    LATENCY = (1, RegisteredMultiplier.latency)

    def __init__(self, *, squares, ports, features, pipelined=True, **_):
        self.squares = squares
        self.latency = self.LATENCY[bool(squares)] if pipelined else 0
        super().__init__(ports, features)

    def elaborate(self, platform):
        m = Module()
        beat = self.inputs[0]
        width = self.data_width
        pixel = beat.payload.data[:PIXEL_BITS]
        last = beat.payload.data[PIXEL_BITS]
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
        stepped, cleared = beat.valid & beat.payload.present, last
        for k in range(self.latency):
            stepped_k, cleared_k = Signal(name=f"stepped{k}"), Signal(name=f"cleared{k}")
            m.d.sync += [stepped_k.eq(stepped), cleared_k.eq(cleared)]
            stepped, cleared = stepped_k, cleared_k
        self.value = (acc + term)[:width]  # the last stage: the computation of ``latency`` cycles ago
        self._ports(m, stepped)
        m.d.comb += self.emit_early.eq(last.replicate(len(self.outputs)))
        m.d.comb += [o.payload.emit.eq(cleared) for o in self.outputs]
        with m.If(stepped):
            m.d.sync += acc.eq(Mux(cleared, 0, self.value))
        return m


class VarianceJoin(StaticKernel):
    """``variance_join``: ``n | sum | sum_sq`` (:func:`sfdf.gen.kernels.variance_fields`).

    Its two inputs are told apart by their widths, which the sending kernels fix (``sum``: ``16 + w`` bits,
    ``sum_sq``: ``32 + w``); they are placed in bits of their own, so their sum is their concatenation, and
    the kernel puts ``n`` on top: the distance from the previous result's index (``index``, indices count
    words, so ``n`` counts every pixel, zeros included). Two stages (``latency = 1``): the data, the present
    bits, the index and whether the computation came are registered, then masked and concatenated; the
    previous result's index advances in the second stage, from registers, so the commit drives no clock
    enable here (it stays off the node's decide path).

    Parameters
    ----------
    ports, features
        Two inputs, ``index``.
    pipelined : bool
        ``False``: both stages in one cycle (``latency = 0``).
    """

    PIPELINED_LATENCY = 1

    def __init__(self, *, ports, features, pipelined=True, **_):
        self.latency = self.PIPELINED_LATENCY if pipelined else 0
        self.fields = variance_fields(ports.index_width)
        widths = [width for _, width in ports.inputs]
        self.order = [widths.index(self.fields[f][1]) for f in ("sum_sq", "sum")]
        super().__init__(ports, features)

    def elaborate(self, platform):
        m = Module()
        iw = self.ports.index_width
        previous = Signal(iw)  # the previous result's index
        index, result = Signal(iw), Signal()
        # stage 1 (registers when pipelined, wires when not): the data and the present bits apart, so the
        # decide stage's present bits drive two flip-flops, not the reset of every data bit's; stage 2 masks them
        stage1 = m.d.sync if self.latency else m.d.comb
        data = [Signal.like(self.inputs[k].payload.data, name=f"payload{k}") for k in self.order]
        present = Signal(2)
        stage1 += [*(d.eq(self.inputs[k].payload.data) for d, k in zip(data, self.order)),
                   present.eq(Cat(*(self.inputs[k].payload.present for k in self.order))),
                   index.eq(self.inputs[0].payload.index), result.eq(self.inputs[0].valid)]
        n = (index - previous)[:iw]
        masked = [d & present[k].replicate(len(d)) for k, d in enumerate(data)]
        self.value = Cat(masked[0], masked[1], n)  # sum_sq, sum, n: their bits of their own
        self._ports(m, result)
        m.d.comb += self.emit_early.eq(Const(-1, len(self.outputs)))
        m.d.comb += [o.payload.emit.eq(1) for o in self.outputs]
        with m.If(result):
            m.d.sync += previous.eq(index)
        return m


#: The built-in kernels' hardware by spec name: the class and its fixed arguments.
BUILTIN_HARDWARE = {
    "random_filter": (RandomFilter, {}),
    "variance_source": (VarianceSource, {}),
    "variance_mean": (VarianceSum, {"squares": False}),
    "variance_mean_sq": (VarianceSum, {"squares": True}),
    "variance_join": (VarianceJoin, {}),
}

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
    """Cycles from a computation to its data for the built-in kernel named ``name``, pipelined (a built-in's
    latency depends on its kind, not on widths; unpipelined it is 0)."""
    cls, fixed = BUILTIN_HARDWARE[name or "random_filter"]
    return cls.LATENCY[fixed["squares"]] if cls is VarianceSum else cls.PIPELINED_LATENCY


def make_kernel(name, params, *, ports, features, pipelined=True, ahead=False):
    """The hardware of the built-in kernel ``name`` (``None``: ``random_filter`` with rate 0, docs/architecture.md)
    with ``params`` for a node's ``ports`` and ``features`` (:func:`sfdf.gen.contract.kernel_ports`,
    :func:`~sfdf.gen.contract.kernel_features`); ``pipelined``: the platform's
    (:attr:`sfdf.hdl.traits.PlatformTraits.pipelined`; without it a variance kernel's latency is 0); ``ahead``:
    ``random_filter``'s decisions from registers (:class:`RandomFilter`)."""
    cls, fixed = BUILTIN_HARDWARE[name or "random_filter"]
    return cls(**fixed, **kernel_params(name, params), ports=ports, features=features, pipelined=pipelined,
               ahead=ahead)


def plan_kernel(plan, *, ahead=False):
    """The built-in kernel of node plan ``plan`` (:class:`sfdf.hdl.plan.NodePlan`), as :func:`make_kernel` makes it."""
    return make_kernel(plan.kernel, plan.params, ports=plan.ports, features=plan.features,
                       pipelined=plan.traits.pipelined, ahead=ahead)

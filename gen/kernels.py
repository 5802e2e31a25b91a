"""The built-in kernels: every fact about each in one descriptor (:data:`BUILTIN`; README, "A tour of the spec").

A built-in is a kernel like a user's (docs/kernels.md): the spec parser validates its ``params`` and resolves
payload widths from its descriptor, the contract (:mod:`sfdf.gen.contract`) asks it whether it may filter and
which features it takes, its golden (:mod:`sfdf.gen.goldens`) runs in the reference model and its hardware
(:mod:`sfdf.hdl.kernels`) in the node; the manifest describes its result fields. No layer asks for a kernel
by name. ``random_filter``'s LFSR and threshold are here too, shared by the golden and the hardware.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field

__all__ = [
    "BUILTIN",
    "KERNELS",
    "LFSR_MASK",
    "MESSAGE_WIDTH",
    "PIXEL_BITS",
    "SDF_KERNELS",
    "Builtin",
    "KernelParam",
    "builtin",
    "filter_threshold",
    "kernel_defaults",
    "kernel_input_width",
    "kernel_output_width",
    "kernel_param_table",
    "kernel_params",
    "lfsr_seed",
    "lfsr_step",
    "result_width",
    "variance_fields",
    "word_width",
]


@dataclass(frozen=True)
class KernelParam:
    """One kernel parameter: its type, default and inclusive range.

    Members
    -------
    kind : type
        ``int`` or ``float`` (a TOML integer is accepted for a float; a boolean never is).
    default : int or float
        Value when the spec leaves it out.
    low, high : int or float or None
        Inclusive bounds; ``None`` is unbounded.
    fix : str
        What the parameter means, for error messages.
    """

    kind: type
    default: int | float
    low: int | float | None
    high: int | float | None
    fix: str


def kernel_defaults(kernel: str | None) -> dict:
    """The default parameters of ``kernel`` (``None`` is ``random_filter``): the one home of every default."""
    return {name: p.default for name, p in kernel_param_table(kernel or "random_filter").items()}


def kernel_param_table(kernel: str | None) -> dict[str, KernelParam]:
    """The parameters of the built-in ``kernel``, of SFDF networks (:data:`KERNELS`) or of SDF ones
    (:data:`SDF_KERNELS`); empty for any other name."""
    return SDF_KERNELS.get(kernel) or KERNELS.get(kernel, {})


def kernel_params(kernel: str | None, params) -> dict:
    """``params`` of ``kernel`` completed with the defaults of :data:`KERNELS` (``None`` is ``random_filter``)."""
    return {**kernel_defaults(kernel), **dict(params)}


# -- random_filter's deterministic filtering, identical in the model and the hardware (docs/semantics.md) --
#: Galois feedback mask of x^32 + x^22 + x^2 + x + 1.
LFSR_MASK = 0x80200003
_MASK32 = 0xFFFFFFFF


def lfsr_seed(seed: int, output: int) -> int:
    """Initial LFSR state of output ``output``: ``(seed * 0x9E3779B1 + (j + 1) * 0x85EBCA77) mod 2^32``, or 1."""
    return (seed * 0x9E3779B1 + (output + 1) * 0x85EBCA77) & _MASK32 or 1


def lfsr_step(state: int) -> int:
    """One right-shift Galois step: ``lsb = s & 1; s >>= 1; if lsb: s ^= 0x80200003``."""
    return (state >> 1) ^ LFSR_MASK if state & 1 else state >> 1


def filter_threshold(rate: float) -> int:
    """The integer threshold of a filtering ``rate``: an output filters iff ``(s >> 16) < round(rate * 65536)``."""
    if not 0.0 <= rate <= 1.0:
        raise ValueError(f"Filter rate must be in [0, 1], not {rate!r}")
    return round(rate * 65536)


#: Bits of a user message's payload: a source's frame ends carry the frame number mod ``2^16``.
MESSAGE_WIDTH = 16

# -- payload widths the variance kernels fix (000 Fig. 1) -----------------------------------------------
#: Bits of a pixel: the variance source's input word (docs/architecture.md: unsigned 16-bit pixels).
PIXEL_BITS = 16


def variance_fields(index_width: int) -> dict[str, tuple[int, int]]:
    """``{field: (lsb, width)}`` of the variance join's result, exact for frames below ``2^index_width`` pixels.

    ``n < 2^w`` needs ``w = index_width`` bits, ``sum < 2^(16+w)`` and ``sum_sq < 2^(32+w)``: with the
    default 32-bit index, ``sum_sq`` in bits 0..63, ``sum`` in 64..111 and ``n`` in 112..143.
    """
    sq, s = 2 * PIXEL_BITS + index_width, PIXEL_BITS + index_width
    return {"sum_sq": (0, sq), "sum": (sq, s), "n": (sq + s, index_width)}


# -- the built-in kernels --------------------------------------------------------------------------------

def _never(params) -> None:
    return None


def _random_filter_filters(params):
    if params.get("rate", 0.0) > 0:
        return ("params.rate", f"random_filter with rate {params['rate']:g} filters tokens", "set rate = 0")
    return None


def _source_filters(params):
    if params.get("filter_zeros", 1):
        return ("params.filter_zeros", "variance_source with filter_zeros = 1 filters zero pixels",
                "set filter_zeros = 0")
    return None


def _sum_filters(name):
    def filters(params):
        return ("kernel", f"{name} emits once per frame (it filters every other word)", None)
    return filters


def _any_inputs(widths, index_width) -> None:
    return None


def _source_only(widths, index_width):
    if widths:
        return "reads pixels from its AXI4-Stream port, so it must be a source", "remove its in-edges"
    return None


def _one_marked_pixel(widths, index_width):
    if list(widths) != [PIXEL_BITS + 1]:
        return ((f"needs one {PIXEL_BITS + 1}-bit input of marked pixels (from a variance_source), not "
                 f"{_widths_text(widths)}"), "connect it as in examples/variance.toml")
    return None


def _sum_and_squares(widths, index_width):
    fields = variance_fields(index_width)
    wanted = sorted((fields["sum"][1], fields["sum_sq"][1]))
    if sorted(widths) != wanted:
        return ((f"needs a {wanted[0]}-bit sum and a {wanted[1]}-bit sum_sq input (from a variance_mean and a "
                 f"variance_mean_sq), not {_widths_text(widths)}"), "connect it as in examples/variance.toml")
    return None


def _widths_text(widths) -> str:
    return "no input" if not widths else " and ".join(f"{w}" for w in widths) + " bits"


@dataclass(frozen=True)
class Builtin:
    """A built-in kernel: a kernel like a user's (docs/kernels.md), shipped with sfdf.

    Members
    -------
    params : dict of str to KernelParam
        Its parameters.
    golden : str
        ``"module:Class"`` of its golden (:mod:`sfdf.gen.goldens`).
    filters : callable
        ``params -> (field, problem, fix)`` saying why it may filter (``fix`` None where no parameter
        stops it), or None if it never does (its ``may_filter`` follows from its params).
    index, last : bool
        The contract's features it takes (``i_index``; a source's ``i_last``).
    staged : bool
        Its hardware has pipeline stages where the platform is pipelined (latency above 0,
        :func:`sfdf.hdl.kernels.kernel_latency`), so a single-stage node cannot run it.
    input_width : int or None
        A source's word (its ``s_axis`` ``tdata``) when the kernel fixes it, else the spec's ``data_width``.
    output_width : callable or None
        ``index_width -> bits`` of every payload it emits, when it fixes them, else the spec's widths decide.
    inputs : callable
        ``(in-edge widths, index_width) -> (problem, fix)`` when the kernel cannot take those inputs, else None.
    result_fields : callable or None
        ``index_width -> {field: (lsb, width)}`` of its payload at a sink (the manifest's port fields).
    word_field : str
        The name of a source's word in the manifest's port fields.
    facts : callable
        ``(params, outputs) -> dict``: what the manifest records of a node running it (``random_filter``: its
        integer threshold and each output's LFSR seed, computed here once).
    """

    params: dict[str, KernelParam]
    golden: str
    filters: Callable = field(default=_never)
    index: bool = False
    last: bool = False
    staged: bool = False
    input_width: int | None = None
    output_width: Callable | None = None
    inputs: Callable = field(default=_any_inputs)
    result_fields: Callable | None = None
    word_field: str = "data"
    facts: Callable = field(default=lambda params, outputs: {})


#: The built-in kernels by name.
BUILTIN: dict[str, Builtin] = {
    "random_filter": Builtin({
        "rate": KernelParam(float, 0.0, 0.0, 1.0, "use the probability that each output filters a token"),
        "seed": KernelParam(int, 1, 0, (1 << 32) - 1, "use a 32-bit LFSR seed"),
    }, "sfdf.gen.goldens:RandomFilter", _random_filter_filters, facts=lambda params, outputs: {
        "filter_threshold": filter_threshold(params["rate"]),
        "lfsr_seeds": [lfsr_seed(params["seed"], j) for j in range(outputs)]}),
    "variance_source": Builtin({
        "filter_zeros": KernelParam(int, 1, 0, 1, "use 1 to filter zero pixels (000 Fig. 1) or 0 to send every "
                                    "pixel (the no-filtering baseline)"),
    }, "sfdf.gen.goldens:VarianceSource", _source_filters, last=True, input_width=PIXEL_BITS,
        output_width=lambda w: PIXEL_BITS + 1, inputs=_source_only, word_field="pixel"),
    "variance_mean": Builtin({}, "sfdf.gen.goldens:VarianceMean", _sum_filters("variance_mean"), staged=True,
                             output_width=lambda w: variance_fields(w)["sum"][1], inputs=_one_marked_pixel),
    "variance_mean_sq": Builtin({}, "sfdf.gen.goldens:VarianceMeanSq", _sum_filters("variance_mean_sq"), staged=True,
                                output_width=lambda w: variance_fields(w)["sum_sq"][1], inputs=_one_marked_pixel),
    "variance_join": Builtin({}, "sfdf.gen.goldens:VarianceJoin", index=True, staged=True,
                             output_width=lambda w: sum(width for _, width in variance_fields(w).values()),
                             inputs=_sum_and_squares, result_fields=variance_fields),
}

#: The kernel library's parameters: kernel name -> parameter name -> :class:`KernelParam`.
KERNELS: dict[str, dict[str, KernelParam]] = {name: builtin.params for name, builtin in BUILTIN.items()}

#: The kernels of SDF networks (004), with their parameters (goldens and rates: :mod:`sfdf.gen.sdf.kernels`):
#: ``sdf_test``, the SDF test kernel an SDF node runs by default (docs/semantics.md, "SDF networks"), whose
#: firing sends the node's teleport messages with probability ``send``, decided by an LFSR seeded by
#: ``seed``; the frequency-hopping radio's ``forward``, ``antenna`` (its default input seeded by ``seed``),
#: ``rf_to_if``, ``magnitude`` and ``detector`` (a hop: a magnitude in ``[low, high)``; quiet for ``holdoff``
#: firings after reporting one).
_WORD = (1 << 32) - 1
SDF_KERNELS: dict[str, dict[str, KernelParam]] = {
    "sdf_test": {
        "send": KernelParam(float, 1.0, 0.0, 1.0, "use the probability that a firing sends its node's messages"),
        "seed": KernelParam(int, 1, 0, _WORD, "use a 32-bit LFSR seed"),
    },
    "forward": {},
    "antenna": {"seed": KernelParam(int, 1, 0, _WORD, "use the seed of the default hopping input")},
    "rf_to_if": {},
    "magnitude": {},
    "detector": {
        "low": KernelParam(int, 0, 0, _WORD, "use the least magnitude of the detector's band (a 32-bit word)"),
        "high": KernelParam(int, 0, 0, _WORD, "use the magnitude just above the detector's band (a 32-bit word)"),
        "holdoff": KernelParam(int, 0, 0, 1 << 16, "use the firings a retune takes to land (0 to 65536)"),
    },
}


def builtin(kernel) -> Builtin | None:
    """The descriptor of ``kernel`` (``None`` is ``random_filter``), or None for a user's kernel."""
    return BUILTIN.get(kernel or "random_filter") if isinstance(kernel, str | None) else None


def kernel_output_width(kernel, index_width: int) -> int | None:
    """Bits of every payload ``kernel`` emits, or ``None`` when the spec's widths decide (a user's kernel, or a
    built-in that fixes none)."""
    found = builtin(kernel)
    return found.output_width(index_width) if found and found.output_width else None


def kernel_input_width(kernel) -> int | None:
    """Bits of a source kernel's input word (its ``s_axis`` ``tdata``), or ``None`` for the spec's ``data_width``."""
    found = builtin(kernel)
    return found.input_width if found else None


def at_index_width(network, index_width: int):
    """``network`` with ``index_width``-bit indices, and the edges out of kernels whose widths follow the index
    width (the variance kernels') as wide as those kernels then send, as the spec would resolve them."""
    from dataclasses import replace

    kernels = {n.name: n.kernel for n in network.nodes}
    return replace(network, index_width=index_width).with_edges(
        replace(e, width=kernel_output_width(kernels[e.src], index_width) or e.width) for e in network.edges)


def word_width(network, name: str) -> int:
    """``tdata`` bits of source ``name``'s port: its kernel's input word, or the network's ``data_width``."""
    return kernel_input_width(network.node_by_name[name].kernel) or network.data_width


def result_width(network, name: str) -> int:
    """Bits of node ``name``'s kernel output (a sink's ``tdata``), fixed by the kernel or ``data_width``."""
    return kernel_output_width(network.node_by_name[name].kernel, network.index_width) or network.data_width

"""The kernel library: every kernel a spec may name, with its parameters (README, "A tour of the spec").

The spec parser validates ``params`` against this table and resolves payload widths with the functions
below; the reference model (:mod:`sfdf.gen.refmodel.kernels`) and the hardware (:mod:`sfdf.hdl.kernels`) implement
the kernels named here, and the manifest describes their result fields.
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
    "REQUIRED_INPUTS",
    "STAGED_KERNELS",
    "VARIANCE_KERNELS",
    "Builtin",
    "KernelParam",
    "filter_threshold",
    "input_shift",
    "kernel_defaults",
    "kernel_input_width",
    "kernel_output_width",
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
    """

    params: dict[str, KernelParam]
    golden: str
    filters: Callable = field(default=_never)
    index: bool = False
    last: bool = False


#: The built-in kernels by name.
BUILTIN: dict[str, Builtin] = {
    "random_filter": Builtin({
        "rate": KernelParam(float, 0.0, 0.0, 1.0, "use the probability that each output filters a token"),
        "seed": KernelParam(int, 1, 0, (1 << 32) - 1, "use a 32-bit LFSR seed"),
    }, "sfdf.gen.goldens:RandomFilter", _random_filter_filters),
    "variance_source": Builtin({
        "filter_zeros": KernelParam(int, 1, 0, 1, "use 1 to filter zero pixels (000 Fig. 1) or 0 to send every "
                                    "pixel (the no-filtering baseline)"),
    }, "sfdf.gen.goldens:VarianceSource", _source_filters, last=True),
    "variance_mean": Builtin({}, "sfdf.gen.goldens:VarianceMean", _sum_filters("variance_mean")),
    "variance_mean_sq": Builtin({}, "sfdf.gen.goldens:VarianceMeanSq", _sum_filters("variance_mean_sq")),
    "variance_join": Builtin({}, "sfdf.gen.goldens:VarianceJoin", index=True),
}

#: The kernel library's parameters: kernel name -> parameter name -> :class:`KernelParam`.
KERNELS: dict[str, dict[str, KernelParam]] = {name: builtin.params for name, builtin in BUILTIN.items()}


def kernel_defaults(kernel: str | None) -> dict:
    """The default parameters of ``kernel`` (``None`` is ``random_filter``): the one home of every default."""
    return {name: p.default for name, p in KERNELS.get(kernel or "random_filter", {}).items()}


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
#: The variance kernels: each fixes the width of its outputs; no parameter changes them.
VARIANCE_KERNELS = ("variance_source", "variance_mean", "variance_mean_sq", "variance_join")
#: Kernels whose hardware has stages where the platform is pipelined (latency above 0,
#: :func:`sfdf.hdl.kernels.kernel_latency`): a single-stage node (``pipelined = false``) cannot run them.
STAGED_KERNELS = ("variance_mean", "variance_mean_sq", "variance_join")


def variance_fields(index_width: int) -> dict[str, tuple[int, int]]:
    """``{field: (lsb, width)}`` of the variance join's result, exact for frames below ``2^index_width`` pixels.

    ``n < 2^w`` needs ``w = index_width`` bits, ``sum < 2^(16+w)`` and ``sum_sq < 2^(32+w)``: with the
    default 32-bit index, ``sum_sq`` in bits 0..63, ``sum`` in 64..111 and ``n`` in 112..143.
    """
    sq, s = 2 * PIXEL_BITS + index_width, PIXEL_BITS + index_width
    return {"sum_sq": (0, sq), "sum": (sq, s), "n": (sq + s, index_width)}


def kernel_output_width(kernel: str | None, index_width: int) -> int | None:
    """Bits of every payload ``kernel`` emits, or ``None`` when the spec's widths decide.

    ``variance_source``: the pixel and a frame's-last flag above it; ``variance_mean``/``_mean_sq``:
    the frame's ``sum``/``sum_sq``; ``variance_join``: the whole result (:func:`variance_fields`).
    """
    fields = variance_fields(index_width)
    widths = {
        "variance_source": PIXEL_BITS + 1,
        "variance_mean": fields["sum"][1],
        "variance_mean_sq": fields["sum_sq"][1],
        "variance_join": sum(width for _, width in fields.values()),
    }
    return widths.get(kernel)


def kernel_input_width(kernel: str | None) -> int | None:
    """Bits of a source kernel's input word (its ``s_axis`` ``tdata``), or ``None`` for the spec's ``data_width``."""
    return PIXEL_BITS if kernel == "variance_source" else None


def input_shift(kernel: str | None, src_kernel: str | None, index_width: int) -> int:
    """Where the payload from a ``src_kernel`` node lands in ``kernel``'s input (added to the others).

    The variance join places ``sum`` above ``sum_sq`` (:func:`variance_fields`), so its kernel is the
    plain sum of its inputs, as ``random_filter``'s; everything else adds payloads unshifted.
    """
    if kernel == "variance_join" and src_kernel == "variance_mean":
        return variance_fields(index_width)["sum"][0]
    return 0


def word_width(network, name: str) -> int:
    """``tdata`` bits of source ``name``'s port: its kernel's input word, or the network's ``data_width``."""
    return kernel_input_width(network.node_by_name[name].kernel) or network.data_width


def result_width(network, name: str) -> int:
    """Bits of node ``name``'s kernel output (a sink's ``tdata``), fixed by the kernel or ``data_width``."""
    return kernel_output_width(network.node_by_name[name].kernel, network.index_width) or network.data_width


#: Kernels that need particular predecessors: kernel -> (in-edge source kernels, as a sorted tuple).
REQUIRED_INPUTS: dict[str, tuple[str, ...]] = {
    "variance_mean": ("variance_source",),
    "variance_mean_sq": ("variance_source",),
    "variance_join": ("variance_mean", "variance_mean_sq"),
}

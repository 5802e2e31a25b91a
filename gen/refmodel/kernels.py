"""Node kernels for the reference model: what a data computation emits and which messages it forwards.

Every layer implements ``random_filter`` bit-exactly (docs/semantics.md): the payload is the wrapping
sum of the payloads present, and each output filters by its own 32-bit Galois LFSR. A kernel is
built by :func:`make_kernel` from the :data:`KERNELS` registry; new kernels register a factory there.
The variance kernels (000 Fig. 1) fix their own payload widths (:mod:`sfdf.gen.kernels`).

The kernel interface (duck-typed, kept minimal for speed):

- ``compute(index, payload, last) -> (payload, emits)``: called on *data* computations only (null
  computations step no LFSR) with the sum of the payloads present, each placed by
  :func:`sfdf.gen.kernels.input_shift`; ``emits[j]`` says whether output ``j`` (out-edges in spec order, or the single
  ``m_axis`` of a sink) gets a data token. ``last`` says the word ends a frame: a source computation
  after which the source sends a frame end (always False elsewhere).
- ``control(port, message) -> list``: a user control message delivered on input ``port``; returns the
  messages to send on every output after the current computation.
- ``finish() -> list``: messages still owed at EOS.
"""

from __future__ import annotations

from collections.abc import Callable

from sfdf.gen.kernels import (
    PIXEL_BITS,
    filter_threshold,
    kernel_defaults,
    kernel_output_width,
    kernel_params,
    lfsr_seed,
    lfsr_step,
    variance_fields,
)

__all__ = [
    "KERNELS",
    "RandomFilter",
    "VarianceJoin",
    "VarianceMean",
    "VarianceMeanSq",
    "VarianceSource",
    "make_kernel",
    "unpack_variance",
]

#: Parameter defaults, from the kernel library (one home: :func:`sfdf.gen.kernels.kernel_defaults`).
_FILTER, _SOURCE = kernel_defaults("random_filter"), kernel_defaults("variance_source")


class _ControlBarrier:
    """Forward a user message once it has arrived on every input (a join aligns control).

    With one input this forwards every message at once (the rule of docs/semantics.md). With
    several, forwarding the copy of a message that arrives first would put it ahead of data of the
    same frame still travelling on a slower branch (precise ordering, 000 Thm. 3.1, only holds per
    edge); waiting for the last copy keeps it after all such data and before any later index, and
    sends it once. Copies are matched by value. In-band, the copies a source's message makes at a
    fork ride on the same index down every path, so they are delivered in one computation and the
    last of them releases the message there; in credit mode they arrive whenever their control
    channels are read.
    """

    __slots__ = ("inputs", "waiting")

    def __init__(self, inputs: int):
        self.inputs = inputs
        self.waiting: dict = {}

    def control(self, port: int, message) -> list:
        if self.inputs <= 1:
            return [message]
        seen = self.waiting.get(message, 0) + 1
        if seen < self.inputs:
            self.waiting[message] = seen
            return []
        del self.waiting[message]
        return [message]

    def finish(self) -> list:
        """Messages some input never delivered (sources with different frames): owed before EOS."""
        owed = list(self.waiting)
        self.waiting.clear()
        return owed


class RandomFilter(_ControlBarrier):
    """``random_filter``: sum the payloads; each output filters iff ``(s >> 16) < round(rate * 65536)``.

    Parameters
    ----------
    inputs, outputs : int
        Input edges; outputs (out-edges, or 1 for a sink's ``m_axis``).
    data_width : int
        Payload bits: the sum wraps modulo ``2^data_width``.
    rate : float
        Filtering probability in ``[0, 1]``; 0 never filters, 1 always does.
    seed : int
        LFSR seed.
    """

    __slots__ = ("mask", "states", "threshold")

    def __init__(self, inputs: int, outputs: int, data_width: int, index_width: int = 32,
                 rate: float = _FILTER["rate"], seed: int = _FILTER["seed"]):
        super().__init__(inputs)
        self.mask = (1 << data_width) - 1
        self.threshold = filter_threshold(rate)
        self.states = [lfsr_seed(seed, j) for j in range(outputs)]

    def compute(self, index: int, payload: int, last: bool) -> tuple[int, list[bool]]:
        threshold = self.threshold
        if not threshold:  # the LFSR state is unobservable when nothing can filter
            return payload & self.mask, [True] * len(self.states)
        states = self.states
        emits = []
        for j, s in enumerate(states):
            s = states[j] = lfsr_step(s)
            emits.append((s >> 16) >= threshold)
        return payload & self.mask, emits


def unpack_variance(result: int, index_width: int) -> tuple[int, int, int]:
    """``(n, sum, sum_sq)`` of a ``variance_join`` result (layout: :func:`sfdf.gen.kernels.variance_fields`)."""
    return tuple((result >> lsb) & ((1 << width) - 1)
                 for lsb, width in (variance_fields(index_width)[f] for f in ("n", "sum", "sum_sq")))


class VarianceSource(RandomFilter):
    """``variance_source`` (000 Sec. 1, Fig. 1): filter zero pixels on every output, except a frame's last.

    Emits ``last << 16 | pixel`` (17 bits, :func:`sfdf.gen.kernels.kernel_output_width`). The last word of
    each frame is always sent, so every frame puts one data token on each output that says "last" and
    the frame end riding after it keeps one control message per data token (000 Sec. 4.3). A kernel
    after a join learns of a frame end only after computing the frame's last index (credit: before
    the next computation; in-band: after it), too late to emit there, so the mark rides on the data.
    Without frames every zero word is filtered. Words must be unsigned 16-bit pixels (else
    ``ValueError``: the hardware port has 16 bits). ``filter_zeros = 0`` sends every pixel: the
    no-filtering baseline of the 000 Fig. 4 experiment.
    """

    __slots__ = ("keep_zeros",)

    def __init__(self, inputs: int, outputs: int, data_width: int, index_width: int = 32,
                 filter_zeros: int = _SOURCE["filter_zeros"]):
        super().__init__(inputs, outputs, PIXEL_BITS + 1)
        self.keep_zeros = not filter_zeros

    def compute(self, index: int, payload: int, last: bool) -> tuple[int, list[bool]]:
        if not 0 <= payload < 1 << PIXEL_BITS:
            raise ValueError(f"variance_source words must be unsigned {PIXEL_BITS}-bit pixels, not {payload}")
        return payload | last << PIXEL_BITS, [last or payload != 0 or self.keep_zeros] * len(self.states)


class _VarianceSum(_ControlBarrier):
    """Accumulate ``term(pixel)`` over a frame; at the word marked last emit the total and restart.

    The total is exact for frames below ``2^index_width`` pixels: its width
    (:func:`sfdf.gen.kernels.kernel_output_width`) has room for that many maximal terms. Every other word
    is filtered.
    """

    __slots__ = ("acc", "mask", "outputs")
    name = ""

    def __init__(self, inputs: int, outputs: int, data_width: int, index_width: int = 32):
        super().__init__(inputs)
        if inputs != 1:
            raise ValueError(f"{self.name} needs one input, not {inputs}")
        self.outputs = outputs
        self.mask = (1 << kernel_output_width(self.name, index_width)) - 1
        self.acc = 0

    def compute(self, index: int, payload: int, last: bool) -> tuple[int, list[bool]]:
        acc = (self.acc + self.term(payload & ((1 << PIXEL_BITS) - 1))) & self.mask
        if not payload >> PIXEL_BITS:  # not the frame's last word
            self.acc = acc
            return 0, [False] * self.outputs
        self.acc = 0
        return acc, [True] * self.outputs


class VarianceMean(_VarianceSum):
    """``variance_mean``: the frame's ``sum`` of pixels (``16 + index_width`` bits)."""

    __slots__ = ()
    name = "variance_mean"

    @staticmethod
    def term(pixel: int) -> int:
        return pixel


class VarianceMeanSq(_VarianceSum):
    """``variance_mean_sq``: the frame's ``sum_sq`` of squared pixels (``32 + index_width`` bits)."""

    __slots__ = ()
    name = "variance_mean_sq"

    @staticmethod
    def term(pixel: int) -> int:
        return pixel * pixel


class VarianceJoin(_ControlBarrier):
    """``variance_join``: ``{n, sum, sum_sq}`` per frame (:func:`sfdf.gen.kernels.variance_fields`).

    ``variance_mean`` and ``variance_mean_sq`` both emit exactly at each frame's last index, and the
    node adds its inputs placed by :func:`sfdf.gen.kernels.input_shift`, so ``payload`` is already
    ``sum << lsb | sum_sq``. ``n`` counts every pixel, zeros included: it is the distance from the
    previous frame's last index (indices count words, 000 Sec. 2), ``n = i - previous mod 2^w``.
    Frame ends are forwarded once both copies arrived (the barrier), so the sink writes each frame's
    result, then its end.
    """

    __slots__ = ("index_mask", "n_lsb", "outputs", "previous")

    def __init__(self, inputs: int, outputs: int, data_width: int, index_width: int = 32):
        super().__init__(inputs)
        if inputs != 2:
            raise ValueError(f"variance_join needs two inputs, not {inputs}")
        self.outputs = outputs
        self.n_lsb = variance_fields(index_width)["n"][0]
        self.index_mask = (1 << index_width) - 1
        self.previous = 0

    def compute(self, index: int, payload: int, last: bool) -> tuple[int, list[bool]]:
        n = (index - self.previous) & self.index_mask
        self.previous = index
        return payload | n << self.n_lsb, [True] * self.outputs


#: Kernel name -> factory ``(inputs, outputs, data_width, **params) -> kernel``.
KERNELS: dict[str, Callable] = {
    "random_filter": RandomFilter,
    "variance_source": VarianceSource,
    "variance_mean": VarianceMean,
    "variance_mean_sq": VarianceMeanSq,
    "variance_join": VarianceJoin,
}


def make_kernel(name: str | None, params, inputs: int, outputs: int, data_width: int, index_width: int = 32):
    """The kernel of a node; ``None`` is ``random_filter`` with rate 0 (docs/architecture.md).

    Parameters
    ----------
    name : str or None
        Kernel name from :data:`KERNELS`.
    params : Mapping
        Kernel parameters (``rate``, ``seed`` for ``random_filter``).
    inputs, outputs : int
        Input edges; outputs (1 for a sink).
    data_width, index_width : int
        Payload bits (of the kernels that do not fix their own); index bits.
    """
    if name is None:
        return RandomFilter(inputs, outputs, data_width, index_width)
    try:
        factory = KERNELS[name]
    except KeyError:
        raise ValueError(f"Kernel must be one of {', '.join(sorted(KERNELS))}, not {name!r}") from None
    try:
        return factory(inputs, outputs, data_width, index_width, **kernel_params(name, params))
    except TypeError as exc:
        raise ValueError(f"Bad parameters {dict(params)!r} for kernel {name!r}: {exc}") from None

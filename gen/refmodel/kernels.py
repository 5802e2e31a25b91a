"""Node kernels for the reference model: what a data computation emits and which messages it forwards.

Every layer implements ``random_filter`` bit-exactly (docs/semantics.md): the payload is the wrapping
sum of the payloads present, and each output filters by its own 32-bit Galois LFSR. A kernel is
built by :func:`make_kernel` from the :data:`KERNELS` registry; new kernels register a factory there.
The variance kernels (000 Fig. 1) work at ``data_width`` 64; their bit layout is in :class:`VarianceSource`.

The kernel interface (duck-typed, kept minimal for speed):

- ``compute(payload, last) -> (payload, emits)``: called on *data* computations only (null computations
  step no LFSR); ``emits[j]`` says whether output ``j`` (out-edges in spec order, or the single
  ``m_axis`` of a sink) gets a data token. ``last`` says the word ends a frame: a source computation
  after which the source sends a frame end (always False elsewhere).
- ``control(port, message) -> list``: a user control message delivered on input ``port``; returns the
  messages to send on every output after the current computation.
- ``finish() -> list``: messages still owed at EOS.
"""

from __future__ import annotations

from collections.abc import Callable

__all__ = [
    "KERNELS",
    "LFSR_MASK",
    "VARIANCE_WIDTH",
    "RandomFilter",
    "VarianceJoin",
    "VarianceMean",
    "VarianceMeanSq",
    "VarianceSource",
    "lfsr_seed",
    "lfsr_step",
    "make_kernel",
    "unpack_variance",
]

#: Galois feedback mask of x^32 + x^22 + x^2 + x + 1 (docs/semantics.md).
LFSR_MASK = 0x80200003
_MASK32 = 0xFFFFFFFF


def lfsr_seed(seed: int, output: int) -> int:
    """Initial LFSR state of output ``output``: ``(seed * 0x9E3779B1 + (j + 1) * 0x85EBCA77) mod 2^32``, or 1."""
    return (seed * 0x9E3779B1 + (output + 1) * 0x85EBCA77) & _MASK32 or 1


def lfsr_step(state: int) -> int:
    """One right-shift Galois step: ``lsb = s & 1; s >>= 1; if lsb: s ^= 0x80200003``."""
    return (state >> 1) ^ LFSR_MASK if state & 1 else state >> 1


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

    def __init__(self, inputs: int, outputs: int, data_width: int, rate: float = 0.0, seed: int = 1):
        super().__init__(inputs)
        if not 0.0 <= rate <= 1.0:
            raise ValueError(f"random_filter rate must be in [0, 1], not {rate!r}")
        self.mask = (1 << data_width) - 1
        self.threshold = round(rate * 65536)
        self.states = [lfsr_seed(seed, j) for j in range(outputs)]

    def compute(self, payload: int, last: bool) -> tuple[int, list[bool]]:
        threshold = self.threshold
        if not threshold:  # the LFSR state is unobservable when nothing can filter
            return payload & self.mask, [True] * len(self.states)
        states = self.states
        emits = []
        for j, s in enumerate(states):
            s = states[j] = lfsr_step(s)
            emits.append((s >> 16) >= threshold)
        return payload & self.mask, emits


#: Payload bits of the variance network's result layout; the variance kernels use it at this width only.
VARIANCE_WIDTH = 64
#: Field positions and widths of the 64-bit variance layout (see :class:`VarianceSource`).
PIXEL_BITS = 16
N_SHIFT, N_BITS = 48, 14
SUM_SHIFT, SUM_BITS = 28, 20
SUM_SQ_BITS = 28
SUM_OVERFLOW_BIT = 63
SUM_SQ_OVERFLOW_BIT = 62


def unpack_variance(result: int) -> tuple[int, int, int, bool, bool]:
    """``(n, sum, sum_sq, sum_overflow, sum_sq_overflow)`` of a 64-bit ``variance_join`` result.

    The three numbers are exact iff both overflow flags are clear (else they are the low field bits).
    """
    return ((result >> N_SHIFT) & ((1 << N_BITS) - 1), (result >> SUM_SHIFT) & ((1 << SUM_BITS) - 1),
            result & ((1 << SUM_SQ_BITS) - 1), bool(result >> SUM_OVERFLOW_BIT & 1),
            bool(result >> SUM_SQ_OVERFLOW_BIT & 1))


class VarianceSource(RandomFilter):
    """``variance_source`` (000 Sec. 1, Fig. 1): filter zero words on every output, except a frame's last.

    The last word of each frame is always sent, so every frame puts at least one data token on each
    output and the frame end riding after it keeps one control message per data token (000 Sec. 4.3,
    docs/semantics.md). Without frames it filters every zero word.

    At ``data_width`` 64 (:data:`VARIANCE_WIDTH`, the variance network) the frame's last word also
    carries ``n``, the frame's word count (zeros included), which the source counts itself. The
    frame end message stays ``(FRAME_END, k)``: a non-source kernel learns of a frame end only after
    the computation of the frame's last index (credit: before the next computation; in-band: after
    computing it), too late to emit there, so the count and the "last" mark ride on the data token.
    The 64-bit layout of every variance payload (bit 63 is the most significant)::

        63       62        61..48       47..28       27..0
        OVF_SUM  OVF_SQ    n mod 2^14   sum (20)     sum_sq (28)     join result (sink m_axis)
        OVF_SUM  0         n mod 2^14   sum (20)     0               variance_mean out, last word
        0        OVF_SQ    0            0            sum_sq (28)     variance_mean_sq out, last word
        OVF_N    0         n mod 2^14   0            0 .. pixel      variance_source out, last word
        0        0         0            0            0 .. pixel      variance_source out, other words

    The pixel is bits 15..0 (words must be below 2^16, else ``ValueError``). ``OVF_N = n >= 2^14``;
    bits 63..48 of a source word are non-zero iff it is its frame's last (``n >= 1``). Narrower
    widths keep the plain zero filter (payload = word mod 2^data_width, no count).
    """

    __slots__ = ("count", "marks")

    def __init__(self, inputs: int, outputs: int, data_width: int):
        super().__init__(inputs, outputs, data_width)
        self.marks = data_width == VARIANCE_WIDTH
        self.count = 0

    def compute(self, payload: int, last: bool) -> tuple[int, list[bool]]:
        payload &= self.mask
        emit = last or payload != 0
        if self.marks:
            if payload >> PIXEL_BITS:
                raise ValueError(f"variance_source words must be unsigned {PIXEL_BITS}-bit pixels, not {payload}")
            self.count = n = self.count + 1
            if last:
                self.count = 0
                payload |= (n >> N_BITS != 0) << SUM_OVERFLOW_BIT | (n & ((1 << N_BITS) - 1)) << N_SHIFT
        return payload, [emit] * len(self.states)


class _VarianceSum(_ControlBarrier):
    """Accumulate ``f(pixel)`` of every data token; emit only at a frame's last word (64-bit layout).

    ``acc`` keeps the low ``bits`` bits of the sum and ``overflow`` is sticky once a carry leaves them
    (a ``bits``-bit adder with a carry-out latch). Both clear after the frame's result.
    """

    __slots__ = ("acc", "overflow")
    bits = 0

    def __init__(self, inputs: int, outputs: int, data_width: int):
        super().__init__(inputs)
        if data_width != VARIANCE_WIDTH:
            raise ValueError(f"{self.name} needs data_width {VARIANCE_WIDTH} (its result layout), not {data_width}")
        if inputs != 1 or outputs != 1:
            raise ValueError(f"{self.name} needs one input and one output, not {inputs} and {outputs}")
        self.acc = 0
        self.overflow = 0

    def compute(self, payload: int, last: bool) -> tuple[int, list[bool]]:
        pixel = payload & ((1 << PIXEL_BITS) - 1)
        acc = self.acc + self.term(pixel)
        self.overflow |= acc >> self.bits != 0
        self.acc = acc & ((1 << self.bits) - 1)
        mark = payload >> N_SHIFT  # OVF_N and n: non-zero iff the frame's last word
        if not mark:
            return 0, [False]
        result = self.result(mark)
        self.acc = self.overflow = 0
        return result, [True]


class VarianceMean(_VarianceSum):
    """``variance_mean``: ``sum`` of the pixels; at a frame's last word emit ``{OVF_SUM, n, sum}``.

    Output (see :class:`VarianceSource`): ``(OVF_N | OVF_SUM) << 63 | (n mod 2^14) << 48 | sum << 28``
    with ``sum`` the pixels' sum mod 2^20 and ``OVF_SUM = sum >= 2^20``; every other word is filtered.
    """

    __slots__ = ()
    name = "variance_mean"
    bits = SUM_BITS

    @staticmethod
    def term(pixel: int) -> int:
        return pixel

    def result(self, mark: int) -> int:
        return (mark << N_SHIFT) | self.overflow << SUM_OVERFLOW_BIT | self.acc << SUM_SHIFT


class VarianceMeanSq(_VarianceSum):
    """``variance_mean_sq``: ``sum_sq`` of the squared pixels; at a frame's last word emit ``{OVF_SQ, sum_sq}``.

    Output (see :class:`VarianceSource`): ``OVF_SQ << 62 | sum_sq`` with ``sum_sq`` the sum of
    ``pixel * pixel`` mod 2^28 and ``OVF_SQ = sum_sq >= 2^28``; it carries no ``n`` (the mean's does),
    so the join's sum of both is their bitwise OR. Every other word is filtered.
    """

    __slots__ = ()
    name = "variance_mean_sq"
    bits = SUM_SQ_BITS

    @staticmethod
    def term(pixel: int) -> int:
        return pixel * pixel

    def result(self, mark: int) -> int:
        return self.overflow << SUM_SQ_OVERFLOW_BIT | self.acc


class VarianceJoin(RandomFilter):
    """``variance_join``: write the sum of the payloads present, ``{OVF_SUM, OVF_SQ, n, sum, sum_sq}``.

    ``variance_mean`` and ``variance_mean_sq`` see the same data tokens and both emit exactly at each
    frame's last index, so the join gets both there and nothing elsewhere; their fields are disjoint,
    so the wrapping sum the node forms is their bitwise OR: the result (layout in
    :class:`VarianceSource`, decoded by :func:`unpack_variance`). Frame ends are forwarded once
    after both copies arrived (the barrier), so the sink writes each frame's result, then its end.
    """

    __slots__ = ()

    def __init__(self, inputs: int, outputs: int, data_width: int):
        if data_width != VARIANCE_WIDTH:
            raise ValueError(f"variance_join needs data_width {VARIANCE_WIDTH} (its result layout), not {data_width}")
        super().__init__(inputs, outputs, data_width)


#: Kernel name -> factory ``(inputs, outputs, data_width, **params) -> kernel``.
KERNELS: dict[str, Callable] = {
    "random_filter": RandomFilter,
    "variance_source": VarianceSource,
    "variance_mean": VarianceMean,
    "variance_mean_sq": VarianceMeanSq,
    "variance_join": VarianceJoin,
}


def make_kernel(name: str | None, params, inputs: int, outputs: int, data_width: int):
    """The kernel of a node; ``None`` is ``random_filter`` with rate 0 (DESIGN.md).

    Parameters
    ----------
    name : str or None
        Kernel name from :data:`KERNELS`.
    params : Mapping
        Kernel parameters (``rate``, ``seed`` for ``random_filter``).
    inputs, outputs : int
        Input edges; outputs (1 for a sink).
    data_width : int
        Payload bits.
    """
    if name is None:
        return RandomFilter(inputs, outputs, data_width)
    try:
        factory = KERNELS[name]
    except KeyError:
        raise ValueError(f"Kernel must be one of {', '.join(sorted(KERNELS))}, not {name!r}") from None
    try:
        return factory(inputs, outputs, data_width, **dict(params))
    except TypeError as exc:
        raise ValueError(f"Bad parameters {dict(params)!r} for kernel {name!r}: {exc}") from None

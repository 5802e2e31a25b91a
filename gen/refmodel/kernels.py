"""Node kernels for the reference model: what a data computation emits and which messages it forwards.

Every layer implements ``random_filter`` bit-exactly (docs/semantics.md): the payload is the wrapping
sum of the payloads present, and each output filters by its own 32-bit Galois LFSR. A kernel is
built by :func:`make_kernel` from the :data:`KERNELS` registry; new kernels register a factory there.

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
    "RandomFilter",
    "VarianceSource",
    "lfsr_seed",
    "lfsr_step",
    "make_kernel",
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


class VarianceSource(RandomFilter):
    """``variance_source`` (000 Sec. 1, Fig. 1): filter zero words on every output, except a frame's last.

    The last word of each frame is always sent, so every frame puts at least one data token on each
    output and the frame end riding after it keeps one control message per data token (000 Sec. 4.3,
    docs/semantics.md). Without frames it filters every zero word.
    """

    __slots__ = ()

    def __init__(self, inputs: int, outputs: int, data_width: int):
        super().__init__(inputs, outputs, data_width)

    def compute(self, payload: int, last: bool) -> tuple[int, list[bool]]:
        payload &= self.mask
        return payload, [last or payload != 0] * len(self.states)


def _pass_through(inputs: int, outputs: int, data_width: int) -> RandomFilter:
    """A placeholder for kernels not modelled yet: ``random_filter`` with rate 0."""
    return RandomFilter(inputs, outputs, data_width)


#: Kernel name -> factory ``(inputs, outputs, data_width, **params) -> kernel``.
KERNELS: dict[str, Callable] = {
    "random_filter": RandomFilter,
    "variance_source": VarianceSource,
    "variance_mean": _pass_through,
    "variance_mean_sq": _pass_through,
    "variance_join": _pass_through,
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

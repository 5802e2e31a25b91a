"""The built-in kernels' goldens (docs/kernels.md): Python classes under the same contract as a user's.

``Golden(**params, ports=...).step(inputs) -> outputs``: dicts keyed by port (:class:`sfdf.gen.contract.KernelPorts`),
``None`` for an absent input or a filtered output, values within their ports' widths. The hardware
(:mod:`sfdf.hdl.kernels`) is bit-exact with them (docs/semantics.md).

- ``random_filter``: the wrapping sum of the present inputs (at ``data_width`` bits); each output filters
  by its own 32-bit Galois LFSR, stepped once per computation.
- ``variance_source`` (000 Fig. 1): ``last << 16 | pixel``, filtered on every output when the pixel is zero,
  except a frame's last word (``last``), which is always sent so that every frame puts one data token
  on each output that says "last" (000 Sec. 4.3): a kernel after a join learns of a frame end only after
  computing the frame's last index, too late to emit there, so the mark rides on the data.
- ``variance_mean``/``variance_mean_sq``: the frame's sum of pixels (squares), emitted at the word marked
  last, every other word filtered.
- ``variance_join``: ``n | sum | sum_sq`` (:func:`sfdf.gen.kernels.variance_fields`), ``n`` the distance
  from the previous result's index (indices count words, so ``n`` counts every pixel, zeros included).
"""

from __future__ import annotations

from sfdf.gen.kernels import (
    PIXEL_BITS,
    filter_threshold,
    kernel_defaults,
    kernel_output_width,
    lfsr_seed,
    lfsr_step,
    variance_fields,
)

__all__ = ["RandomFilter", "SDFTest", "VarianceJoin", "VarianceMean", "VarianceMeanSq", "VarianceSource",
           "unpack_variance"]

_FILTER, _SOURCE = kernel_defaults("random_filter"), kernel_defaults("variance_source")


def _masks(ports) -> list[tuple[str, int]]:
    return [(name, (1 << width) - 1) for name, width in ports.outputs]


class RandomFilter:
    """``random_filter``: sum the present inputs; output ``j`` filters iff ``(s_j >> 16) < round(rate * 65536)``
    for its LFSR state ``s_j`` stepped at each computation (:func:`sfdf.gen.kernels.lfsr_step`, seeded by
    :func:`sfdf.gen.kernels.lfsr_seed`)."""

    __slots__ = ("mask", "outputs", "states", "threshold")

    def __init__(self, *, ports, rate: float = _FILTER["rate"], seed: int = _FILTER["seed"]):
        self.mask = (1 << ports.data_width) - 1
        self.outputs = _masks(ports)
        self.threshold = filter_threshold(rate)
        self.states = [lfsr_seed(seed, j) for j in range(len(self.outputs))]

    def step(self, inputs: dict) -> dict:
        total = 0
        for value in inputs.values():
            if value is not None:
                total += value
        total &= self.mask
        threshold = self.threshold
        if not threshold:  # the LFSR state is unobservable when nothing can filter
            return {name: total & mask for name, mask in self.outputs}
        states = self.states
        result = {}
        for j, (name, mask) in enumerate(self.outputs):
            s = states[j] = lfsr_step(states[j])
            result[name] = total & mask if (s >> 16) >= threshold else None
        return result


class VarianceSource:
    """``variance_source``: ``last << 16 | pixel`` on every output unless the pixel is zero and not last.
    Words must be unsigned 16-bit pixels (else ``ValueError``: the hardware port has 16 bits).
    ``filter_zeros = 0`` sends every pixel (the no-filtering baseline of 000 Fig. 4)."""

    __slots__ = ("keep_zeros", "outputs")

    def __init__(self, *, ports, filter_zeros: int = _SOURCE["filter_zeros"]):
        self.keep_zeros = not filter_zeros
        self.outputs = ports.output_names

    def step(self, inputs: dict, last: bool) -> dict:
        pixel = inputs["i"]
        if not 0 <= pixel < 1 << PIXEL_BITS:
            raise ValueError(f"variance_source words must be unsigned {PIXEL_BITS}-bit pixels, not {pixel}")
        value = pixel | last << PIXEL_BITS if last or pixel or self.keep_zeros else None
        return dict.fromkeys(self.outputs, value)


class _VarianceSum:
    """Accumulate ``term(pixel)`` over a frame; at the word marked last emit the total and restart. The
    total is exact for frames below ``2^index_width`` pixels (its width has room for that many terms)."""

    __slots__ = ("acc", "mask", "outputs")
    name = ""

    def __init__(self, *, ports):
        if len(ports.inputs) != 1:
            raise ValueError(f"{self.name} needs one input, not {len(ports.inputs)}")
        self.outputs = ports.output_names
        self.mask = (1 << kernel_output_width(self.name, ports.index_width)) - 1
        self.acc = 0

    def step(self, inputs: dict) -> dict:
        word = inputs["i"]
        acc = (self.acc + self.term(word & ((1 << PIXEL_BITS) - 1))) & self.mask
        if not word >> PIXEL_BITS:  # not the frame's last word
            self.acc = acc
            return dict.fromkeys(self.outputs)
        self.acc = 0
        return dict.fromkeys(self.outputs, acc)


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


class VarianceJoin:
    """``variance_join``: ``n | sum | sum_sq`` per frame. Its inputs are told apart by their widths, which
    the sending kernels fix: ``sum`` has ``16 + index_width`` bits, ``sum_sq`` ``32 + index_width``."""

    __slots__ = ("index_mask", "keys", "n_lsb", "outputs", "previous", "sum_lsb")

    def __init__(self, *, ports):
        fields = variance_fields(ports.index_width)
        widths = {width: name for name, width in ports.inputs}
        wanted = (fields["sum"][1], fields["sum_sq"][1])
        if len(ports.inputs) != 2 or set(widths) != set(wanted):
            raise ValueError(f"variance_join needs a {wanted[0]}-bit sum and a {wanted[1]}-bit sum_sq input, not "
                             f"{', '.join(f'{name} ({width} bits)' for name, width in ports.inputs)}")
        self.keys = (widths[wanted[0]], widths[wanted[1]])
        self.sum_lsb, self.n_lsb = fields["sum"][0], fields["n"][0]
        self.index_mask = (1 << ports.index_width) - 1
        self.outputs = ports.output_names
        self.previous = 0

    def step(self, inputs: dict, index: int) -> dict:
        n = (index - self.previous) & self.index_mask
        self.previous = index
        total, squares = (inputs[key] or 0 for key in self.keys)
        return dict.fromkeys(self.outputs, squares | total << self.sum_lsb | n << self.n_lsb)


class SDFTest:
    """The SDF test kernel (004; docs/semantics.md, "SDF networks"), the default golden of an SDF network's
    nodes (the protocol of :mod:`sfdf.gen.sdf.kernels`): one firing is ``fire(windows, firing, pushes)``,
    ``windows`` each input edge's ``peek`` items in spec order (the ``pop`` it consumes first); its value
    ``v = acc + firing + sum(windows)`` mod ``2^32`` (:meth:`step`; a source: ``v = acc + firing``, its word
    unread) is pushed as ``v, v + 1, ...`` on each output, as many as the phase pushes. ``message(n)`` is a
    teleport message's handler: it adds the payload, the sender's firing number ``n``, to ``acc``, so every
    output after it shows where it landed. ``send()``, called once per firing, is that payload when the
    firing sends the node's messages, else None: with probability ``send``, iff ``(s >> 16) < round(send *
    65536)`` for the LFSR state ``s`` stepped at each firing (:func:`sfdf.gen.kernels.lfsr_step`, seeded by
    :func:`sfdf.gen.kernels.lfsr_seed` with ``seed``), so ``send = 1`` sends at every firing."""

    __slots__ = ("acc", "firing", "state", "threshold")
    MASK = (1 << 32) - 1
    READS_WORD = False  # a source's windows are empty

    def __init__(self, *, send: float = 1.0, seed: int = 1):
        self.acc = self.firing = 0
        self.threshold = filter_threshold(send)
        self.state = lfsr_seed(seed, 0)

    def send(self) -> int | None:
        self.state = lfsr_step(self.state)
        return self.firing if (self.state >> 16) < self.threshold else None

    def step(self, windows, firing: int) -> int:
        value = self.acc + firing
        for window in windows:
            value += sum(window)
        return value & self.MASK

    def fire(self, windows, firing: int, pushes) -> list[list[int]]:
        self.firing = firing
        value = self.step(windows, firing)
        return [[(value + j) & self.MASK for j in range(push)] for push in pushes]

    def message(self, n: int) -> None:
        self.acc = (self.acc + n) & self.MASK


def unpack_variance(result: int, index_width: int) -> tuple[int, int, int]:
    """``(n, sum, sum_sq)`` of a ``variance_join`` result (layout: :func:`sfdf.gen.kernels.variance_fields`)."""
    return tuple((result >> lsb) & ((1 << width) - 1)
                 for lsb, width in (variance_fields(index_width)[f] for f in ("n", "sum", "sum_sq")))

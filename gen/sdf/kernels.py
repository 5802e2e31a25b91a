"""The kernels of SDF networks (004) in the model: their goldens, the rates each needs, and the words a
source is fed by default.

A golden fires ``fire(windows, firing, pushes) -> outputs``: ``windows`` the ``peek`` items at the head of
each input edge in spec order (a source's one window is ``[word]``, the host's word for that firing, when
its class's ``READS_WORD``; else a source has none),
``firing`` counted from 1, ``pushes`` the items the phase pushes on each output edge in spec order (a
sink's one output is ``[1]``: the value it hands out); it returns the items of each output. ``send()``,
called once after each firing of a message sender, is the payload of the message that firing sends, or
None; ``message(payload)`` is a handler: the payloads of the messages a receiver handles at one point
add up (the hardware merges a point's messages by adding them), so their order never matters.

Kernels (``kernel = "<name>"`` on an SDF node; docs/semantics.md, "SDF networks"):

* ``sdf_test``: the SDF test kernel (:class:`sfdf.gen.goldens.SDFTest`), the default;
* ``forward``: the items popped, inputs in spec order, leave in order over the outputs, each taking its push
  (a splitter, a joiner, the radio's stand-in FFT; a source forwards its word, a sink its item);
* ``antenna``: ``forward`` on a source whose default words are :class:`HopSignal`'s (the radio's input);
* ``rf_to_if``: 004's mixer, :class:`RFtoIF`; ``magnitude``: :class:`Magnitude`; ``detector``:
  :class:`Detector`, which sends (or pushes on its second output) a retune when it sees a hop.

The frequency-hopping radio (004, Sec. "Case Study"; examples/fhr.toml) is these kernels on a signal whose
carrier hops: :class:`RFtoIF` leaves the carrier's offset from its tuning, the detectors each watch one
band of offsets and report a hop in it, and the retune (a teleport message, or an item on the feedback loop
of examples/fhr_feedback.toml) moves the tuning by the offset, after which the magnitudes the sink hands
out drop back to zero: each hop shows in the output for exactly the frames between it and the firing its
retune lands at.
"""

from __future__ import annotations

import random
from collections.abc import Sequence

from ..goldens import SDFTest
from .rates import SDFError, edge_rates, phases

__all__ = ["GOLDENS", "REPORTING", "SENDERS", "STREAM_KERNELS", "Antenna", "Detector", "Forward", "HopSignal", "Magnitude", "RFtoIF", "check_kernels",
           "golden", "read_order", "send_spacing", "source_words", "stimulus", "stream_writes"]

MASK = (1 << 32) - 1


def _signed(x: int) -> int:
    return x - (1 << 32) if x & (1 << 31) else x


class Forward:
    """``forward``: the firing's popped items, inputs in spec order, out over the outputs in spec order, each
    output taking as many as its phase pushes (the kernel's rule: a phase pops what it pushes)."""

    READS_WORD = True

    def fire(self, windows: Sequence[Sequence[int]], firing: int, pushes: Sequence[int]) -> list[list[int]]:
        items = [x for window in windows for x in window]
        out, at = [], 0
        for push in pushes:
            out.append(items[at:at + push])
            at += push
        return out

    def send(self) -> None:
        return None

    def message(self, payload: int) -> None:
        pass


class Antenna(Forward):
    """``antenna``: a source's ``forward``; its ``seed`` seeds the default input (:class:`HopSignal`)."""

    def __init__(self, seed: int = 1):
        self.seed = seed


class RFtoIF(Forward):
    """004's RFtoIF, the mixer: the first input carries complex samples as item pairs (real part at odd
    firings, imaginary at even), and the real part leaves as its offset from the tuning, ``x - tune`` mod
    2^32; the imaginary part passes. A retune adds its payload to ``tune``: a teleport message's, or the items
    any other input pops (the feedback loop's, taken at the start of the firing that pops them)."""

    def __init__(self):
        self.tune = 0

    def fire(self, windows, firing, pushes):
        for window in windows[1:]:
            self.tune = (self.tune + sum(window)) & MASK
        (x,) = windows[0]
        return [[(x - self.tune) & MASK if firing % 2 else x] for _ in pushes]

    def message(self, payload: int) -> None:
        self.tune = (self.tune + payload) & MASK


class Magnitude(Forward):
    """004's Mag: each pair ``(re, im)`` of its window (32-bit signed) becomes ``|re| + |im|``, the magnitude
    an FPGA radio takes without a multiplier."""

    def fire(self, windows, firing, pushes):
        (window,) = windows
        values = [(abs(_signed(re)) + abs(_signed(im))) & MASK for re, im in zip(window[::2], window[1::2], strict=True)]
        return [values]


class Detector(Forward):
    """004's detector: forwards its magnitudes to its first output and sees a hop in a firing where one of
    them lies in its band ``[low, high)``; it then reports that magnitude (the carrier's offset, the retune
    that brings it back): as its message's payload when it sends messages, and as the item it pushes on its
    second output when it has one (0 when it sees none). After a report it stays quiet for ``holdoff``
    firings, the frames its retune takes to land, so one hop is reported once."""

    def __init__(self, low: int, high: int, holdoff: int = 0):
        self.low, self.high, self.holdoff = low, high, holdoff
        self.quiet_until = 0
        self.hop = None

    def fire(self, windows, firing, pushes):
        (window,) = windows
        self.hop = None
        if firing > self.quiet_until:
            self.hop = next((x for x in window if self.low <= x < self.high), None)
            if self.hop is not None:
                self.quiet_until = firing + self.holdoff
        return [list(window)] + [[self.hop or 0] for _ in pushes[1:]]

    def send(self) -> int | None:
        return self.hop


class HopSignal:
    """The radio's default input: complex samples as word pairs (real part the carrier, imaginary 0), the
    carrier 0 for the first frame of ``frame`` words, then moved up by an offset in ``offsets`` and held for
    a dwell of ``dwell`` frames, again and again (random in the ranges, seeded by ``seed``): a hop at once and
    then every few frames, each in one detector's band of examples/fhr.toml."""

    def __init__(self, seed: int = 1, frame: int = 512, dwell: tuple[int, int] = (8, 16),
                 offsets: tuple[int, int] = (256, 1280)):
        self.rng, self.frame, self.dwell, self.offsets = random.Random(seed), frame, dwell, offsets
        self.carriers: list[int] = []

    def word(self, firing: int) -> int:
        """The word of the source's ``firing`` (from 1)."""
        frame = (firing - 1) // self.frame
        while len(self.carriers) <= frame:
            if not self.carriers:
                self.carriers.append(0)
                continue
            carrier = (self.carriers[-1] + self.rng.randrange(*self.offsets)) & MASK
            self.carriers += [carrier] * self.rng.randint(*self.dwell)
        return self.carriers[frame] if firing % 2 else 0

    def words(self, count: int) -> list[int]:
        return [self.word(f) for f in range(1, count + 1)]


def source_words(node, count: int, seed: int = 1) -> list[int]:
    """The words a source is fed when none are given (the model's default, the cosim's stimulus, the fast
    device's in the tests): :class:`HopSignal`'s for an ``antenna`` (seeded by its ``seed`` param), else 32-bit
    words seeded by ``seed`` and the node's name (the SDF test kernel does not read them)."""
    if node.kernel == "antenna":
        return HopSignal(node.params.get("seed", 1)).words(count)
    rng = random.Random(f"{seed}:{node.name}")
    return [rng.getrandbits(32) for _ in range(count)]


def stimulus(network, count: int, seed: int = 1) -> dict[str, list[int]]:
    """:func:`source_words` of every source of ``network``, by name."""
    return {n.name: source_words(n, count, seed) for n in network.nodes if n.name in network.sources}


#: Each SDF kernel's golden class.
GOLDENS = {"sdf_test": SDFTest, "forward": Forward, "antenna": Antenna, "rf_to_if": RFtoIF,
           "magnitude": Magnitude, "detector": Detector}
#: The kernels whose firings may send a teleport message.
SENDERS = ("sdf_test", "detector")


def send_spacing(node) -> int:
    """The fewest firings from one message the node sends to the next: a detector's ``holdoff + 1`` (it stays
    quiet that long after a report), else 1 (the SDF test kernel may send at every firing)."""
    return node.params.get("holdoff", 0) + 1 if node.kernel == "detector" else 1


def golden(node):
    """A fresh golden for ``node`` (a ``gen.model.Node`` of an SDF network)."""
    return GOLDENS[node.kernel or "sdf_test"](**node.params)


def check_kernels(network) -> None:
    """:class:`SDFError` for the first node whose kernel its rates or its messages do not suit (the module
    docstring says what each kernel needs)."""
    count = phases(network)
    senders = {m.sender for m in network.messages}
    for node in network.nodes:
        kernel = node.kernel or "sdf_test"
        where = ("node", node.name, "kernel")
        if node.name in senders and kernel not in SENDERS:
            raise SDFError(f"{kernel} never sends, yet the node sends a [[message]]",
                           f"use a kernel that sends ({', '.join(SENDERS)}) or remove the message", where)
        if kernel == "sdf_test":
            continue
        ins = [edge_rates(e, count) for e in network.in_edges(node.name)]
        outs = [edge_rates(e, count)[0] for e in network.out_edges(node.name)]
        pops = [sum(r[1][k] for r in ins) if ins else 1 for k in range(count[node.name])]
        pushes = [sum(p[k] for p in outs) if outs else 1 for k in range(count[node.name])]
        if any(p != r[2][k] for r in ins for k, p in enumerate(r[1])):
            raise SDFError(f"{kernel} reads only what it pops, yet an input peeks more", "remove peek", where)
        if kernel in ("forward", "antenna") and pops != pushes:
            k = next(k for k, (a, b) in enumerate(zip(pops, pushes, strict=True)) if a != b)
            raise SDFError(f"{kernel} pushes what it pops, yet phase {k + 1} pops {pops[k]} and pushes {pushes[k]}",
                           "make each phase's pushes add up to its pops", where)
        if kernel == "antenna" and ins:
            raise SDFError("antenna is a source's kernel, yet the node has inputs", 'use kernel = "forward"', where)
        first = ins[0][1] if ins else None
        if kernel == "rf_to_if" and (not ins or set(first) != {1} or not outs or any(set(p) != {1} for p in outs)):
            raise SDFError("rf_to_if pops 1 sample on its first input and pushes 1 on each output",
                           "give its first input pop 1 and its outputs push 1", where)
        if kernel == "magnitude" and (len(ins) != 1 or len(outs) != 1
                                      or any(r != 2 * p for r, p in zip(first, outs[0], strict=True))):
            raise SDFError("magnitude has one input and one output and pops 2 items (re, im) per item it pushes",
                           "give it pop = 2 * push", where)
        if kernel == "detector" and (len(ins) != 1 or not 1 <= len(outs) <= 2 or outs[0] != first
                                     or (len(outs) == 2 and set(outs[1]) != {1})):
            raise SDFError("detector has one input, forwards what it pops to its first output and pushes 1 on "
                           "a second output if it has one", "make its first output push what its input pops", where)


#: The kernels a stream node runs in hardware (:class:`sfdf.hdl.sdf_stream.SDFStreamNode`); ``sdf_test``
#: runs on :class:`sfdf.hdl.sdf_node.SDFNode`.
STREAM_KERNELS = ("forward", "antenna", "rf_to_if", "magnitude", "detector")


def read_order(kernel: str, inputs: int) -> list[int]:
    """The order a stream node reads its inputs in, each input's popped items in turn: spec order, but
    ``rf_to_if`` reads its retunes (every input after the first) before its sample."""
    return list(range(1, inputs)) + [0] if kernel == "rf_to_if" else list(range(inputs))


def stream_writes(kernel: str, pops: Sequence[int], pushes: Sequence[int]) -> list[list[int]]:
    """The outputs a stream node writes at each step of a firing of a phase that pops ``pops`` (per input,
    spec order; a source's one word counts as a pop) and pushes ``pushes`` (per output; a sink's value counts
    as a push): step ``s`` reads the ``s``-th item in :func:`read_order` and, a cycle later, writes one
    item on each output listed for it (the firing reads ``max(1, sum(pops))`` steps). A kernel in
    :data:`REPORTING` has one entry more: its report, a cycle after the last item landed (a detector's
    hop stage registers each item's band comparison first), with which the firing ends."""
    steps = max(1, sum(pops))
    writes: list[list[int]] = [[] for _ in range(steps)]
    if kernel in ("forward", "antenna"):
        at = 0
        for j, push in enumerate(pushes):
            for s in range(at, at + push):
                writes[s].append(j)
            at += push
    elif kernel == "rf_to_if":
        writes[-1] = list(range(len(pushes)))
    elif kernel == "magnitude":
        for s in range(1, steps, 2):
            writes[s].append(0)
    elif kernel == "detector":
        for s in range(steps):
            writes[s].append(0)
        writes.append(list(range(1, len(pushes))))
    else:
        raise ValueError(f"{kernel} is not a stream kernel")
    return writes


#: Stream kernels whose firing ends with a report a cycle after its last item lands (:func:`stream_writes`).
REPORTING = ("detector",)

"""Proof that a channel is an exact-capacity FIFO: :class:`sfdf.hdl.channels.DataChannel` and
:class:`~sfdf.hdl.channels.ControlChannel` refine :class:`sfdf.cosim.formal.fifo.ModelFifo`.

What is proved (:class:`ChannelHarness`), in every reachable state, for every input sequence (the
writer's ``valid`` and payload and the reader's ``ready`` are ``AnySeq``: no assumption at all, not even
AXI-stream valid stability, and a synchronous reset at any cycle):

* ``level <= capacity`` (the channel never holds more than ``|q|`` tokens: the capacity the deadlock
  analysis assumes, 002 Thm. 2.2, 000 (3)-(5));
* ``i_stream.ready == (level != capacity)`` and ``o_stream.valid == (level != 0)``; with ``release``
  (a token read counts against the capacity until released, hdl/offer.py) ``level + held`` is the
  count of room, for a reader that holds at most one token (an assumption: it reads again only while
  releasing);
* ``level`` is the number of tokens written and not read (equal to the model's, which counts them);
* FIFO order, unchanged: whenever ``o_stream.valid``, ``o_stream.payload`` is the oldest token written
  and not yet read (the model's head). With the count this is the shadow-FIFO form of "token ``n`` out
  is token ``n`` in": the model runs in lock step on the same inputs.

The properties read the channel's members only. k-induction also needs the channel's internal state
tied to the model's (an unreachable state with a corrupted row would otherwise survive any number of
cycles in which the reader stalls); :func:`channel_view` supplies that strengthening from the elaborated
channel's internal registers, one case per storage scheme of ``hdl/channels.py``. When the storage
changes, only :func:`channel_view` needs to follow; it refuses a channel it does not recognise.
"""

from __future__ import annotations

import contextlib
from dataclasses import dataclass, field

from amaranth.asserts import AnySeq
from amaranth.hdl import Array, Assert, Assume, Elaboratable, Module, Mux, Shape, Signal, Value
from amaranth.lib import data
from amaranth.lib.memory import Memory

from sfdf.hdl import channels as _channels

from .fifo import ModelFifo
from .sby import FormalError

__all__ = ["ChannelHarness", "ChannelView", "attach_channel", "block_storage", "channel_view", "driven_signals"]


@dataclass
class ChannelView:
    """A channel's tokens as values of its internal state, and the invariants of that state.

    ``entries[k]`` is the ``k``-th oldest token whenever ``k < level``; ``invariants`` are
    ``(value, message)`` pairs that hold in every reachable state.
    """

    scheme: str
    entries: list = field(default_factory=list)
    invariants: list = field(default_factory=list)


#: The module constant of hdl/channels.py above which a channel keeps its tokens in block RAM (the name has
#: changed with the storage schemes; the first one present is used).
_STORAGE_LIMITS = ("_LUTRAM_MAX_ROWS", "_DISTRIBUTED_MAX")


@contextlib.contextmanager
def block_storage():
    """While active, channels elaborated from capacity 3 up use the block-RAM storage scheme, which
    otherwise starts at a capacity too large for a quick proof: its logic is the same at every capacity
    (pointers, two output registers, a read in flight), so a small one exercises all of it."""
    name = next((name for name in _STORAGE_LIMITS if hasattr(_channels, name)), None)
    if name is None:
        raise FormalError("hdl/channels.py has none of " + ", ".join(_STORAGE_LIMITS)
                          + "; update block_storage in cosim/formal/channel.py")
    saved = getattr(_channels, name)
    setattr(_channels, name, 1)
    try:
        yield
    finally:
        setattr(_channels, name, saved)


def driven_signals(module: Module) -> dict[str, Signal]:
    """The signals ``module`` (an elaborated :class:`~amaranth.hdl.Module`, not yet turned into a fragment)
    drives, by name (the harness reads internal registers through these; a name driven twice is left
    out)."""
    names: dict[str, Signal] = {}
    twice = set()
    for signal in module._driving:  # amaranth 0.5: the signals the module's statements assign
        if signal.name in names:
            twice.add(signal.name)
        names[signal.name] = signal
    return {name: signal for name, signal in names.items() if name not in twice}


def _row_values(m: Module, storage: Memory, depth: int):
    """Every row of ``storage`` as a value (one combinational read port each, driven by the harness)."""
    values = []
    for row in range(depth):
        port = storage.read_port(domain="comb")
        m.d.comb += port.addr.eq(row)
        values.append(port.data)
    return Array(values)


def channel_view(m: Module, dut, dut_module: Module) -> ChannelView:
    """The tokens of ``dut`` (a ``DataChannel`` whose :meth:`elaborate` returned ``dut_module``) and the
    invariants of its storage; read ports and logic the view needs are added to ``m`` (the harness).

    Raises
    ------
    FormalError
        The channel's storage is not a scheme this function knows.
    """
    capacity = dut.capacity
    width = Shape.cast(dut.payload_shape).width
    level = dut.level
    names = driven_signals(dut_module)
    o_payload = Value.cast(dut.o_stream.payload)
    storage = dut_module._named_submodules.get("storage", (None,))[0]
    if width == 0:
        return ChannelView("count only")

    def need(*wanted):
        missing = [name for name in wanted if name not in names]
        if missing:
            raise FormalError(f"DataChannel(capacity={capacity}) has no internal signal {', '.join(missing)}: "
                              "its storage changed; update channel_view in cosim/formal/channel.py")
        return [names[name] for name in wanted]

    invariants = []
    if "from_byp" in names:  # block RAM whose output register is the head, beside a bypass register
        none, produce, consume = need("none", "produce", "consume")
        depth = storage.depth
        stored = Signal(range(depth))  # the rows' tokens, behind the head
        m.d.comb += stored.eq(produce - consume)
        rows = _row_values(m, storage, depth)
        entries = [o_payload] + [rows[(consume + k - 1)[:len(consume)]] for k in range(1, capacity)]
        held = Mux(level == 0, 0, level - 1)
        invariants += [
            (stored == held[:len(stored)], "the pointers span level - 1 rows"),
            (none == (stored == 0), "none == (stored == 0)"),
        ]
        return ChannelView("block head", entries, invariants)
    if "none" in names:  # block RAM behind two output registers
        none, pending, two, out0, out1, produce, consume, rdata = need(
            "none", "pending", "two", "out0", "out1", "produce", "consume", "storage_r_data")
        depth = storage.depth
        out = Signal(range(3))  # output registers holding tokens: two flags
        m.d.comb += out.eq(Mux(two, 2, dut.o_stream.valid))
        stored = Signal(range(depth))  # the rows' tokens not yet read out
        m.d.comb += stored.eq(produce - consume)
        rows = _row_values(m, storage, depth)
        # rdata: the register after the combinational read port (last cycle's read, registered_read_memory)
        entries = []
        for k in range(capacity):
            from_rows = rows[(consume + k - out - pending)[:len(consume)]]
            entry = Mux(pending & (out == k), rdata, from_rows)
            if k < 2:
                entry = Mux(out > k, (out0, out1)[k], entry)
            entries.append(entry)
        invariants += [
            (out + pending + stored == level, "registers + read in flight + rows == level"),
            (out <= 2, "at most two output registers hold tokens"),
            (out + pending <= 2, "a read is issued only into a free register"),
            ((level == 0) | (out != 0), "the head register holds a token whenever the channel does"),
            (dut.o_stream.valid == (level != 0), "valid == (level != 0)"),
            (~two | dut.o_stream.valid, "two implies valid"),
            (none == (stored == 0), "none == (stored == 0)"),
            ((stored == 0) | (out + pending == 2), "rows are read while a register is free"),
        ]
        return ChannelView("block", entries, invariants)
    if "head" in names and capacity == 1:
        return ChannelView("register", [o_payload], invariants)
    if "head" in names:  # a head register in front of LUT-RAM rows (or one row register)
        (many,) = need("many")
        invariants.append((many == (level >= 2), "many == (level >= 2)"))
        if "row" in names:
            return ChannelView("head + row", [o_payload, names["row"]], invariants)
        produce, consume = need("produce", "consume")
        depth = storage.depth
        rows = _row_values(m, storage, depth)
        entries = [o_payload] + [rows[(consume + k - 1)[:len(consume)]] for k in range(1, capacity)]
        held = Mux(level == 0, 0, level - 1)
        invariants.append(((produce - consume)[:len(consume)] == held[:len(consume)],
                           "the pointers span level - 1 rows"))
        return ChannelView("head + rows", entries, invariants)
    raise FormalError(f"DataChannel(capacity={capacity}): unknown storage (internal signals "
                      f"{', '.join(sorted(names)) or 'none'}); update channel_view in cosim/formal/channel.py")


def attach_channel(m: Module, fifo, name: str) -> list:
    """Add ``fifo`` (a :class:`ModelFifo`, or a ``DataChannel`` / ``ControlChannel`` elaborated here) to
    ``m`` as submodule ``name`` and return its entries, oldest first, as values of its payload shape
    (``entries[k]`` is a token when ``k < fifo.level``). For a real channel the invariants of
    :func:`channel_view` are asserted too: an edge proof over its entries is inductive only with them.
    """
    if isinstance(fifo, ModelFifo):
        m.submodules[name] = fifo
        return list(fifo.entries)
    fifo._MustUse__silence = True  # elaborated by hand, never through Fragment.get
    module = fifo.elaborate(None)
    m.submodules[name] = module
    view = channel_view(m, fifo, module)
    capacity = fifo.capacity
    m.d.comb += [
        Assert(fifo.level <= capacity, f"{name}: level <= capacity"),
        Assert(fifo.i_stream.ready == (fifo.level != capacity), f"{name}: i_stream.ready == (level != capacity)"),
        Assert(fifo.o_stream.valid == (fifo.level != 0), f"{name}: o_stream.valid == (level != 0)"),
    ]
    for value, message in view.invariants:
        m.d.comb += Assert(value, f"{name} invariant ({view.scheme}): {message}")
    shape = fifo.payload_shape
    if isinstance(shape, data.Layout):
        return [data.View(shape, Value.cast(entry)) for entry in view.entries]
    return [Value.cast(entry) for entry in view.entries]


class ChannelHarness(Elaboratable):
    """``dut`` (a ``DataChannel``) beside a :class:`ModelFifo` of the same capacity, both driven by the same
    ``AnySeq`` inputs; asserts the properties of the module docstring.

    Parameters
    ----------
    dut : DataChannel
        Unelaborated; the harness elaborates it itself to reach its registers.
    strengthen : bool
        Add the internal invariants of :func:`channel_view` (without them the proof is not inductive).
    platform : optional
        What ``dut`` is elaborated for (e.g. ``sfdf.hdl.dsp.FamilyOnly("ice40")``, whose block-RAM
        channels keep their head in the RAM's output register); default the proof's own.
    """

    def __init__(self, dut, *, strengthen=True, platform=None):
        self.dut, self.strengthen, self.platform = dut, strengthen, platform
        dut._MustUse__silence = True  # elaborated by hand in elaborate(), never through Fragment.get
        self.model = ModelFifo(dut.payload_shape, dut.capacity)

    def elaborate(self, platform):
        m = Module()
        dut, model = self.dut, self.model
        dut_module = dut.elaborate(self.platform if self.platform is not None else platform)
        m.submodules.dut = dut_module
        m.submodules.model = model
        width = Shape.cast(dut.payload_shape).width
        valid, ready = AnySeq(1), AnySeq(1)
        payload = AnySeq(width) if width else 0
        for fifo in (dut, model):
            m.d.comb += fifo.o_stream.ready.eq(ready)
            if width:
                m.d.comb += Value.cast(fifo.i_stream.payload).eq(payload)

        # the model writes when the channel does: with release, it has room for the held token too
        m.d.comb += [dut.i_stream.valid.eq(valid), model.i_stream.valid.eq(valid & dut.i_stream.ready)]
        capacity = dut.capacity
        occupied = dut.level
        if dut.release:  # a token read counts until released; the reader holds at most `release`
            shadow = Signal(range(dut.release + 1))
            read = dut.o_stream.valid & dut.o_stream.ready
            if dut.release == 1:
                release = AnySeq(1)
                released = release & (shadow != 0)
            else:  # a count: at most what is held and read this cycle
                release = released = AnySeq(len(dut.i_release))
                m.d.comb += Assume(released <= shadow + read)
            m.d.comb += [dut.i_release.eq(release), Assume(~read | (shadow - released < dut.release)),
                         Assert(dut.held == shadow, "held: tokens read and not released")]
            m.d.sync += shadow.eq(shadow + read - released)
            occupied = dut.level + dut.held
        m.d.comb += [
            Assert(occupied <= capacity, "level <= capacity"),
            Assert(dut.i_stream.ready == (occupied != capacity), "i_stream.ready == (level != capacity)"),
            Assert(dut.o_stream.valid == (dut.level != 0), "o_stream.valid == (level != 0)"),
            Assert(dut.level == model.level, "level counts the tokens written and not read"),
        ]
        if width:
            with m.If(dut.o_stream.valid):
                m.d.comb += Assert(Value.cast(dut.o_stream.payload) == Value.cast(model.entries[0]),
                                   "FIFO order: the head is the oldest token not read, unchanged")
        if self.strengthen and dut.release > 1:  # the room is counted in a register of its own
            m.d.comb += Assert(driven_signals(dut_module)["occupied"] == occupied,
                               "invariant: occupied = level + held")
        if self.strengthen:
            view = channel_view(m, dut, dut_module)
            for value, message in view.invariants:
                m.d.comb += Assert(value, f"invariant ({view.scheme}): {message}")
            for k, entry in enumerate(view.entries):
                with m.If(k < dut.level):
                    m.d.comb += Assert(entry == Value.cast(model.entries[k]),
                                       f"invariant ({view.scheme}): token {k} equals the model's")
        return m

"""The channel contract as a transparent model: an exact-capacity FIFO whose entries the proofs can see.

:class:`ModelFifo` has the members of :class:`sfdf.hdl.channels.DataChannel` and behaves as the
deadlock analysis assumes a channel of capacity ``|q|`` does (002 Thm. 2.2, 000 (3)-(5)), cycle for
cycle: ``i_stream.ready`` is ``level != capacity``, ``o_stream.valid`` is ``level != 0``, ``level``
counts the transfers and the head is the oldest token not yet read, unchanged. Its storage is a
shift register, ``entries[0]`` the head, so an invariant about the tokens in a channel is a formula
over ``entries[k]`` for ``k < level``.

Two uses:

* :mod:`sfdf.cosim.formal.channel` proves that ``DataChannel`` (and ``ControlChannel``) refines it: for
  every input sequence their outputs are equal in every cycle;
* the edge proofs (:mod:`sfdf.cosim.formal.credit_edge`, :mod:`sfdf.cosim.formal.inband_edge`) may put
  it in place of the channels (``channels="model"``). That is sound by the refinement: both are
  Moore machines with equal outputs for equal inputs, so the rest of the edge sees the same signals.
  Their invariants then need no knowledge of how a channel stores its tokens.
"""

from __future__ import annotations

from amaranth.hdl import Module, Signal, Value
from amaranth.lib import stream, wiring
from amaranth.lib.wiring import In, Out

__all__ = ["ModelFifo"]


class ModelFifo(wiring.Component):
    """Exact-capacity first-word-fall-through FIFO with visible entries.

    Parameters
    ----------
    payload_shape : shape-like
    capacity : int

    Attributes
    ----------
    entries : list of Signal (or View)
        ``capacity`` slots, oldest first; ``entries[k]`` holds a token when ``k < level``.
    """

    def __init__(self, payload_shape, capacity):
        self.payload_shape, self.capacity = payload_shape, capacity
        super().__init__({
            "i_stream": In(stream.Signature(payload_shape)),
            "o_stream": Out(stream.Signature(payload_shape)),
            "level": Out(range(capacity + 1)),
        })
        self.entries = [Signal(payload_shape, name=f"entry{k}", reset_less=True) for k in range(capacity)]

    def elaborate(self, platform):
        m = Module()
        capacity = self.capacity
        do_write = self.i_stream.valid & self.i_stream.ready
        do_read = self.o_stream.valid & self.o_stream.ready
        m.d.comb += [
            self.i_stream.ready.eq(self.level != capacity),
            self.o_stream.valid.eq(self.level != 0),
            Value.cast(self.o_stream.payload).eq(Value.cast(self.entries[0])),
        ]
        m.d.sync += self.level.eq(self.level + do_write - do_read)
        slot = Signal(range(capacity + 1))  # where a write lands, after this cycle's read
        m.d.comb += slot.eq(self.level - do_read)
        for k, entry in enumerate(self.entries):
            with m.If(do_write & (slot == k)):
                m.d.sync += Value.cast(entry).eq(Value.cast(self.i_stream.payload))
            with m.Elif(do_read & (k + 1 < capacity)):
                m.d.sync += Value.cast(entry).eq(Value.cast(self.entries[min(k + 1, capacity - 1)]))
        return m

"""An SDF node whose kernel streams its items (004 networks in hardware): the frequency-hopping radio's
kernels of :mod:`sfdf.gen.sdf.kernels` (``forward``, ``antenna``, ``rf_to_if``, ``magnitude``, ``detector``),
bit for bit their goldens, one item per cycle in and out.

A firing of phase ``k`` *starts* on :class:`sfdf.hdl.sdf_node.SDFNode`'s rule (every input holds the phase's
items, every output has room for its pushes besides what earlier firings claimed, the receiver's credits,
a source's ``i_allow``). Then two stages:

* **read**: ``max(1, pops)`` steps, one a cycle, from the cycle after the start, step ``s`` asking for the
  ``s``-th item in :func:`~sfdf.gen.sdf.kernels.read_order` (each input's popped items in turn) through the
  channel's window; the last step pops every input's items, and the next firing may start in its cycle.
  A source's one step is its AXI4-Stream word, taken at the start (``i_word``);
* **land**: a cycle behind, the item read goes through the kernel, which writes at most one item on each
  output, on the steps :func:`~sfdf.gen.sdf.kernels.stream_writes` lists (a forwarded item goes straight
  on, a magnitude at each pair's second item, a mixed sample at the firing's last step). Output room was
  claimed at the start, so a write never waits; a firing ends (``o_fired``) with its last item landed;
* a detector's **hop stage**, a cycle behind the land stage, on each item's band comparison registered as
  it landed: its report, and the firing's end, come a cycle after the last item (so no band comparison
  sits on the path from a channel's memory into a queue or a channel).

A sink's value goes into a four-entry queue before ``o_value``/``o_ready`` (its room claimed at the start,
as an output's), so an always-ready sink never holds the node back. A receiver (``rf_to_if``) takes its
messages as :class:`~sfdf.hdl.sdf_node.SDFNode` does: what its queues hand over (``q<j>_sum``, the payloads)
is added to ``acc``, whose value at a firing's start rides with the firing; the mixer's tuning is that plus
the retune items it has landed. A sender (``detector``) decides with its report: ``o_decide``
then, with ``o_send`` (it saw a hop) and ``o_payload`` (the report); its message's target steps with the
decisions (:class:`~sfdf.hdl.sdf_message.MessageTarget`), so a receiver's credit never passes a firing a
message not yet decided may target. It cannot wait at its decision for room in a queue, and needs not:
:func:`sfdf.gen.sdf.credits.queue_depths` counts every started firing as sending.
"""

from __future__ import annotations

from amaranth import Array, Cat, Const, Module, Mux, Signal
from amaranth.lib import wiring
from amaranth.lib.wiring import In, Out

from sfdf.gen.sdf.kernels import STREAM_KERNELS, read_order

from .sdf_message import COUNT

__all__ = ["SINK_QUEUE", "SDFStreamNode"]

#: Entries of a sink's value queue: an always-ready sink holds the level at 1 with 2 firings claimed.
SINK_QUEUE = 4


def _signed_abs(m: Module, x) -> Signal:
    out = Signal(32)
    m.d.comb += out.eq(Mux(x[31], -x, x))
    return out


class SDFStreamNode(wiring.Component):
    """``kernel`` (one of :data:`~sfdf.gen.sdf.kernels.STREAM_KERNELS`) with its ``params``; ``inputs``: per
    input edge ``(capacity, pops per phase)``; ``outputs``: per output edge ``(capacity, pushes per
    phase)``; ``phases`` their common length; ``receives``: the routes it receives messages on; ``sends``: it
    sends messages (a detector). Ports as :class:`sfdf.hdl.sdf_node.SDFNode`'s, with a source's ``i_word``
    and a sender's ``o_decide``, ``o_send``, ``o_payload`` (module docstring)."""

    def __init__(self, kernel: str, params: dict, phases: int, inputs: list[tuple[int, tuple]],
                 outputs: list[tuple[int, tuple]], receives: int = 0, sends: bool = False, count_width: int = COUNT):
        if kernel not in STREAM_KERNELS:
            raise ValueError(f"{kernel} is not a stream kernel")
        self.kernel, self.params, self.phases = kernel, dict(params), phases
        self.inputs, self.outputs, self.receives, self.sends = inputs, outputs, receives, sends
        self.count_width = count_width
        members = {"o_fired": Out(1), "o_start": Out(1), "o_next": Out(count_width)}
        for j in range(receives):
            members |= {f"q{j}_credit": In(1), f"q{j}_handled": In(1), f"q{j}_sum": In(count_width)}
        if sends:
            members |= {"o_decide": Out(1), "o_send": Out(1), "o_payload": Out(count_width)}
        for j, (capacity, pops) in enumerate(inputs):
            members |= {f"i{j}_level": In(range(capacity + 1)), f"i{j}_offset": Out(range(max(max(pops), 1))),
                        f"i{j}_data": In(32), f"i{j}_pop": Out(range(max(max(pops), 1) + 1))}
        for j, (capacity, _) in enumerate(outputs):
            members |= {f"o{j}_room": In(range(capacity + 1)), f"o{j}_valid": Out(1), f"o{j}_data": Out(32)}
        if not inputs:
            members |= {"i_allow": In(1), "i_word": In(32)}
        if not outputs:
            members |= {"o_valid": Out(1), "o_value": Out(32), "o_ready": In(1)}
        super().__init__(members)

    def elaborate(self, platform):
        m = Module()
        count, kernel = self.phases, self.kernel
        pops = [p for _, p in self.inputs]
        order = read_order(kernel, len(self.inputs))
        end = len(order)  # the read position of a step that reads no item (a source's word, an empty phase)
        # a sink's value queue is its one output, pushing 1 a firing
        pushes = [p for _, p in self.outputs] or [(1,) * count]

        def table(values, phase):
            return Array(Const(v, range(max(values) + 1)) for v in values)[phase]

        def advance(phase):
            return phase.eq(Mux(phase == count - 1, 0, phase + 1))

        def first_nonzero(lists, k, start=0):
            return next((p for p in range(start, len(lists)) if lists[p][k] > 0), len(lists))

        # -- read stage -----------------------------------------------------------------------------------
        start, next_phase = Signal(), Signal(range(count))
        r_busy, r_phase, r_first = Signal(), Signal(range(count)), Signal()
        r_pos, r_off = Signal(range(end + 1)), Signal(range(max([1] + [max(p) for p in pops])))
        ordered = [pops[j] for j in order]
        firsts = [first_nonzero(ordered, k) for k in range(count)]
        afters = [[first_nonzero(ordered, k, p + 1) for k in range(count)] for p in range(end)]
        here = Array([table(ordered[p], r_phase) for p in range(end)] + [Const(0)])[r_pos]
        after = Array([table(afters[p], r_phase) for p in range(end)] + [Const(end)])[r_pos]
        input_done = Signal()
        r_last = Signal()
        m.d.comb += [input_done.eq(r_off == here - 1),
                     r_last.eq(r_busy & ((r_pos == end) | (input_done & (after == end))))]
        with m.If(start):
            m.d.sync += [r_busy.eq(1), r_first.eq(1), r_phase.eq(next_phase), r_off.eq(0),
                         r_pos.eq(table(firsts, next_phase)), advance(next_phase)]
        with m.Elif(r_last):
            m.d.sync += [r_busy.eq(0), r_first.eq(0)]
        with m.Elif(r_busy):
            m.d.sync += r_first.eq(0)
            with m.If(input_done):
                m.d.sync += [r_pos.eq(after), r_off.eq(0)]
            with m.Else():
                m.d.sync += r_off.eq(r_off + 1)
        for j, _ in enumerate(self.inputs):
            m.d.comb += getattr(self, f"i{j}_offset").eq(r_off)
            with m.If(r_last):
                m.d.comb += getattr(self, f"i{j}_pop").eq(table(pops[j], r_phase))
        r_word = Signal(32)
        if not self.inputs:
            with m.If(start):
                m.d.sync += r_word.eq(self.i_word)

        # -- land stage: the item read a cycle ago --------------------------------------------------------
        d_valid, d_last, d_first, d_phase = Signal(), Signal(), Signal(), Signal(range(count))
        d_input, d_off, d_empty, d_word = Signal(range(max(len(self.inputs), 1))), Signal.like(r_off), Signal(), Signal(32)
        reading = Array([Const(j, d_input.shape()) for j in order] + [Const(0, d_input.shape())])[r_pos]
        m.d.sync += [d_valid.eq(r_busy), d_last.eq(r_last), d_first.eq(r_busy & r_first), d_input.eq(reading),
                     d_off.eq(r_off), d_empty.eq((r_pos == end) & (len(self.inputs) > 0)), d_word.eq(r_word)]
        with m.If(r_busy):
            m.d.sync += d_phase.eq(r_phase)
        item = Signal(32)
        if self.inputs:
            m.d.comb += item.eq(Array(getattr(self, f"i{j}_data") for j in range(len(self.inputs)))[d_input])
        else:
            m.d.comb += item.eq(d_word)
        landing = Signal()
        m.d.comb += landing.eq(d_valid & ~d_empty)
        landed = Signal(self.count_width)  # firings landed: the landing firing is landed + 1
        firing = Signal(self.count_width)
        m.d.comb += firing.eq(landed + 1)
        ended = Signal()
        m.d.comb += ended.eq(d_valid & d_last)
        with m.If(ended):
            m.d.sync += landed.eq(firing)

        # -- messages received: their payloads, summed, ride with the firing from its start ----------------
        f_next = Signal(self.count_width, init=1)
        acc, r_acc, d_acc = Signal(32), Signal(32), Signal(32)
        conditions = [getattr(self, f"q{j}_credit") for j in range(self.receives)]
        handled = [Mux(getattr(self, f"q{j}_handled"), getattr(self, f"q{j}_sum"), 0) for j in range(self.receives)]
        acc_now = Signal(32)
        m.d.comb += acc_now.eq(acc + sum(handled, Const(0, 32)))
        m.d.sync += [acc.eq(acc_now), d_acc.eq(r_acc)]
        with m.If(start):
            m.d.sync += [f_next.eq(f_next + 1), r_acc.eq(acc_now)]

        # -- the kernel: what each output is written ------------------------------------------------------
        writes = [Signal(name=f"write{j}") for j in range(len(pushes))]
        data = [Signal(32, name=f"wdata{j}") for j in range(len(pushes))]
        end = self._kernel(m, item, landing, d_first, ended, d_input, d_off, d_phase, firing, d_acc,
                           writes, data, pushes, table)
        m.d.comb += self.o_fired.eq(end)

        # -- outputs: room claimed at the start, given back as written ------------------------------------
        owed = [Signal(range(max(capacity, SINK_QUEUE) + 1), name=f"owed{j}")
                for j, capacity in enumerate([c for c, _ in self.outputs] or [SINK_QUEUE])]
        rooms = [getattr(self, f"o{j}_room") for j in range(len(self.outputs))]
        if not self.outputs:
            queue = Array(Signal(32, name=f"value{i}") for i in range(SINK_QUEUE))
            level = Signal(range(SINK_QUEUE + 1))
            take = Signal()
            m.d.comb += [self.o_valid.eq(level != 0), self.o_value.eq(queue[0]), take.eq(self.o_valid & self.o_ready)]
            kept = Signal(range(SINK_QUEUE + 1))
            m.d.comb += kept.eq(level - take)
            with m.If(take):
                m.d.sync += [queue[i].eq(queue[i + 1]) for i in range(SINK_QUEUE - 1)]
            with m.If(writes[0]):
                m.d.sync += queue[kept].eq(data[0])
            m.d.sync += level.eq(kept + writes[0])
            rooms = [SINK_QUEUE - level]
        for j, _ in enumerate(self.outputs):
            m.d.comb += [getattr(self, f"o{j}_valid").eq(writes[j]), getattr(self, f"o{j}_data").eq(data[j])]
        for j, push in enumerate(pushes):
            m.d.sync += owed[j].eq(owed[j] + Mux(start, table(push, next_phase), 0) - writes[j])
            conditions.append(rooms[j] - owed[j] >= table(push, next_phase))
        conditions += [getattr(self, f"i{j}_level") - Mux(r_last, table(pops[j], r_phase), 0) >= table(pops[j], next_phase)
                       for j in range(len(self.inputs))]
        conditions.append(~r_busy | r_last)
        if not self.inputs:
            conditions.append(self.i_allow)
        m.d.comb += [start.eq(Cat(*conditions).all()), self.o_start.eq(start), self.o_next.eq(f_next)]
        return m

    def _kernel(self, m, item, landing, first, last, source, offset, phase, firing, acc, writes, data, pushes, table):
        """The kernel's datapath in the land stage (:class:`sfdf.gen.sdf.kernels.Forward` and the others);
        returns the cycle its firing ends in (its last item's landing, a detector's report)."""
        kernel = self.kernel
        if kernel in ("forward", "antenna"):  # the item goes to the output whose share of the firing it is in
            outs = len(pushes)
            firsts = [next((j for j in range(outs) if pushes[j][k] > 0), outs) for k in range(self.phases)]
            nexts = [[next((q for q in range(j + 1, outs) if pushes[q][k] > 0), outs) for k in range(self.phases)]
                     for j in range(outs)]
            w_pos, w_cnt = Signal(range(outs + 1)), Signal(range(max(max(p) for p in pushes) + 1))
            pos, cnt = Signal.like(w_pos), Signal.like(w_cnt)
            m.d.comb += [pos.eq(Mux(first, table(firsts, phase), w_pos)), cnt.eq(Mux(first, 0, w_cnt))]
            share = Array([table(pushes[j], phase) for j in range(outs)] + [Const(0)])[pos]
            following = Array([table(nexts[j], phase) for j in range(outs)] + [Const(outs)])[pos]
            with m.If(landing):
                with m.If(cnt == share - 1):
                    m.d.sync += [w_pos.eq(following), w_cnt.eq(0)]
                with m.Else():
                    m.d.sync += [w_pos.eq(pos), w_cnt.eq(cnt + 1)]
            for j in range(outs):
                m.d.comb += [writes[j].eq(landing & (pos == j)), data[j].eq(item)]
        elif kernel == "rf_to_if":  # retunes first, then the sample: its real part mixed down
            loop = Signal(32)
            sample = Signal()
            m.d.comb += sample.eq(landing & (source == 0))
            with m.If(landing & (source != 0)):
                m.d.sync += loop.eq(loop + item)
            mixed = Signal(32)
            m.d.comb += mixed.eq(Mux(firing[0], item - acc - loop, item))
            for j in range(len(pushes)):
                m.d.comb += [writes[j].eq(sample), data[j].eq(mixed)]
        elif kernel == "magnitude":  # |re| + |im|, written with the pair's second item
            re = Signal(32)
            with m.If(landing & ~offset[0]):
                m.d.sync += re.eq(_signed_abs(m, item))
            m.d.comb += [writes[0].eq(landing & offset[0]), data[0].eq(re + _signed_abs(m, item))]
        else:
            return self._detector(m, item, landing, first, last, writes, data, pushes)
        return last

    def _detector(self, m, item, landing, first, last, writes, data, pushes):
        """Forwards each item at once; a hop stage a cycle behind, on the item's band comparison registered as
        it landed, finds the firing's first magnitude in the band and reports it a cycle after the last item
        (the second output's item, the message's payload). ``hold``: firings still to stay quiet."""
        low, high, holdoff = (self.params.get(k, 0) for k in ("low", "high", "holdoff"))
        m.d.comb += [writes[0].eq(landing), data[0].eq(item)]
        h_valid, h_first, h_last, h_band, h_item = Signal(), Signal(), Signal(), Signal(), Signal(32)
        m.d.sync += [h_valid.eq(landing), h_first.eq(first), h_last.eq(last), h_band.eq((item >= low) & (item < high)),
                     h_item.eq(item)]
        hold = Signal(range(holdoff + 1))
        found, value = Signal(), Signal(32)
        was, found_now, value_now = Signal(), Signal(), Signal(32)
        m.d.comb += [was.eq(~h_first & found), found_now.eq(was | (h_valid & h_band & (hold == 0))),
                     value_now.eq(Mux(was, value, h_item))]
        with m.If(h_valid):
            m.d.sync += [found.eq(found_now), value.eq(value_now)]
        for j in range(1, len(pushes)):
            m.d.comb += [writes[j].eq(h_last), data[j].eq(Mux(found_now, value_now, 0))]
        with m.If(h_last):
            m.d.sync += hold.eq(Mux(found_now, holdoff, Mux(hold == 0, 0, hold - 1)))
        if self.sends:
            m.d.comb += [self.o_decide.eq(h_last), self.o_send.eq(found_now), self.o_payload.eq(value_now)]
        return h_last

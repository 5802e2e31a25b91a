"""An SDF node running the SDF test kernel at full rate, with its teleport messages (004 networks in hardware).

A firing of phase ``k`` *starts* when every input channel holds the phase's ``peek`` items and every output
channel has room for its ``push`` items besides the room the node's earlier firings have claimed and not
yet filled (the rule ``sfdf check`` proves live, :mod:`sfdf.gen.sdf.liveness`; a source also needs
``i_allow``, and tells of each start on ``o_start``). A started firing needs nothing more from outside (its items are there, its room is claimed),
so it always completes: the hardware is a self-timed execution of the model's rule, whose liveness does
not depend on the order of firings.

Three stages, each busy with one firing, so a firing reads while the one before writes:

* **read**: from the cycle after the start, ``P = max(1, peeks)`` cycles, the cycle ``s`` asking every
  input for its item ``s`` through the channel's window (:class:`sfdf.hdl.sdf_channel.SDFChannel`, a
  registered read); the last of them pops the phase's ``pop`` items, and the next firing may start in that
  cycle (its reads begin the cycle after, on the new head);
* **land**: a cycle behind, each item read is added to the firing's sum while the node's peek of that input
  in that phase reaches it; with the last, the firing's ``v = f + (sum of its items)`` mod 2^32 (``f`` the
  firing, from 1) goes to the write stage, or when it is busy into a two-entry skid (at most two firings
  are between their start and the write stage, so it never overflows);
* **write**: ``U = max(1, pushes)`` cycles writing ``v, v + 1, ...`` on every output, ``push`` of them,
  one per cycle on all outputs at once; a sink hands ``v`` out on ``o_value`` (valid/ready) instead.

That is :class:`sfdf.gen.goldens.SDFTest` bit for bit. In steady state a node starts a firing every
``max(P, U)`` cycles (one item per cycle per channel), and an item written in cycle ``t`` is counted in
the channel's level at ``t + 1``, when the receiver may start on it: its reads begin at ``t + 2``, the
first value it writes from it at ``t + 4``.

Teleport messages (:mod:`sfdf.hdl.sdf_message`): a receiver starts firing ``f`` only with every route's
credit ``q<j>_credit`` (``f`` below the sender's next target); what its queues hand over in a cycle (``q<j>_handled``, ``q<j>_sum``)
is added to the kernel's accumulator ``acc``, whose value at a firing's start (the messages handled in
that cycle included) rides with the firing to the land stage, so ``v = acc + f + sum``. A sender steps its
LFSR at each start and raises ``o_send`` for the firing about to start when it sends; such a firing also
waits for ``i_room``. ``o_next`` is the next firing, ``o_start`` its start.
"""

from __future__ import annotations

from amaranth import Array, Cat, Const, Module, Mux, Signal
from amaranth.lib import wiring
from amaranth.lib.wiring import In, Out

from sfdf.gen.kernels import filter_threshold, lfsr_seed

from .kernels import lfsr_step_value
from .sdf_message import COUNT

__all__ = ["SDFNode"]


class SDFNode(wiring.Component):
    """``inputs``: per input edge ``(capacity, peeks per phase, pops per phase)``; ``outputs``: per output
    edge ``(capacity, pushes per phase)``; ``phases`` their common length. ``receives``: the routes the node
    receives messages on (per route its credit ``q<j>_credit`` and what its queue hands over,
    :class:`sfdf.hdl.sdf_message.MessageQueue`). ``sends``: the node sends messages, at a firing iff its
    LFSR (seeded ``seed``) says so with probability ``send`` (:class:`sfdf.gen.goldens.SDFTest`).
    ``count_width``: bits of the firing counter and of the messages' sums (narrower in a formal proof)."""

    def __init__(self, phases: int, inputs: list[tuple[int, tuple, tuple]], outputs: list[tuple[int, tuple]],
                 receives: int = 0, sends: bool = False, send: float = 1.0, seed: int = 1, count_width: int = COUNT):
        self.phases, self.inputs, self.outputs = phases, inputs, outputs
        self.receives, self.sends, self.send, self.seed = receives, sends, send, seed
        self.count_width = count_width
        members = {"o_fired": Out(1), "o_start": Out(1), "o_next": Out(count_width)}
        for j in range(receives):
            members |= {f"q{j}_credit": In(1), f"q{j}_handled": In(1), f"q{j}_sum": In(count_width)}
        if sends:  # the next start sends; every queue it sends to has room
            members |= {"o_send": Out(1), "i_room": In(1)}
        for j, (capacity, peeks, pops) in enumerate(inputs):
            members |= {f"i{j}_level": In(range(capacity + 1)), f"i{j}_offset": Out(range(max(max(peeks), 1))),
                        f"i{j}_data": In(32), f"i{j}_pop": Out(range(max(max(pops), 1) + 1))}
        for j, (capacity, _) in enumerate(outputs):
            members |= {f"o{j}_room": In(range(capacity + 1)), f"o{j}_valid": Out(1), f"o{j}_data": Out(32)}
        if not inputs:  # a source starts a firing only when allowed
            members |= {"i_allow": In(1)}
        if not outputs:
            members |= {"o_valid": Out(1), "o_value": Out(32), "o_ready": In(1)}
        super().__init__(members)

    def elaborate(self, platform):
        m = Module()
        count = self.phases
        peeks = [p for _, p, _ in self.inputs]
        pops = [p for _, _, p in self.inputs]
        pushes = [p for _, p in self.outputs]
        reads = [max([1] + [p[k] for p in peeks]) for k in range(count)]
        writes = [max([1] + [p[k] for p in pushes]) for k in range(count)]

        def table(values, phase):
            return Array(Const(v, range(max(values) + 1)) for v in values)[phase]

        def advance(phase):
            return phase.eq(Mux(phase == count - 1, 0, phase + 1))

        # read stage: the phase of the next firing to start, and the firing being read
        start, next_phase = Signal(), Signal(range(count))
        r_busy, r_phase, r_step = Signal(), Signal(range(count)), Signal(range(max(reads)))
        r_last = Signal()
        m.d.comb += r_last.eq(r_busy & (r_step == table(reads, r_phase) - 1))
        # land stage: the item read a cycle ago, its firing's sum so far and the firings landed
        d_valid, d_step, d_last, d_phase = Signal(), Signal(range(max(reads))), Signal(), Signal(range(count))
        total, landed = Signal(32), Signal(32)
        # firings started and not yet taken by the write stage (at most 2), and the skid between
        inflight = Signal(range(3))
        skid = Array(Signal(32, name=f"skid{i}") for i in range(2))
        skid_count = Signal(range(3))
        # write stage
        w_busy, w_phase, w_step, w_value = Signal(), Signal(range(count)), Signal(range(max(writes))), Signal(32)
        w_done = Signal()

        # the start rule, on the levels as they will be after this cycle's pops and the room not yet claimed
        owed = [Signal(range(capacity + 1), name=f"owed{j}") for j, (capacity, _) in enumerate(self.outputs)]
        taking = Signal()
        conditions = [getattr(self, f"i{j}_level") - Mux(r_last, table(pops[j], r_phase), 0) >= table(peeks[j], next_phase)
                      for j in range(len(self.inputs))]
        conditions += [getattr(self, f"o{j}_room") - owed[j] >= table(pushes[j], next_phase) for j in range(len(self.outputs))]
        if not self.inputs:
            conditions.append(self.i_allow)
        conditions += [~r_busy | r_last, inflight - taking <= 1]

        # teleport messages: the next firing, its credit on every route it receives on, what is handled now
        f_next, acc, r_acc, d_acc = Signal(self.count_width, init=1), Signal(32), Signal(32), Signal(32)
        conditions += [getattr(self, f"q{j}_credit") for j in range(self.receives)]
        handled = [Mux(getattr(self, f"q{j}_handled"), getattr(self, f"q{j}_sum"), 0) for j in range(self.receives)]
        acc_now = Signal(32)
        m.d.comb += acc_now.eq(acc + sum(handled, Const(0, 32)))
        m.d.sync += [acc.eq(acc_now), d_acc.eq(r_acc)]
        if self.sends:  # the LFSR stepped at each start; a firing that sends waits for room in the queues
            state = Signal(32, init=lfsr_seed(self.seed, 0))
            stepped = Signal(32)
            m.d.comb += [stepped.eq(lfsr_step_value(state)),
                         self.o_send.eq(stepped[16:] < filter_threshold(self.send))]
            conditions.append(~self.o_send | self.i_room)
            with m.If(start):
                m.d.sync += state.eq(stepped)
        m.d.comb += [start.eq(Cat(*conditions).all()), self.o_start.eq(start), self.o_next.eq(f_next)]
        with m.If(start):
            m.d.sync += [f_next.eq(f_next + 1), r_acc.eq(acc_now)]

        with m.If(start):
            m.d.sync += [r_busy.eq(1), r_phase.eq(next_phase), r_step.eq(0), advance(next_phase)]
        with m.Elif(r_last):
            m.d.sync += r_busy.eq(0)
        with m.Elif(r_busy):
            m.d.sync += r_step.eq(r_step + 1)
        for j, _ in enumerate(self.inputs):  # offsets past an input's peek read items the land stage masks
            m.d.comb += getattr(self, f"i{j}_offset").eq(r_step)
            with m.If(r_last):
                m.d.comb += getattr(self, f"i{j}_pop").eq(table(pops[j], r_phase))
        m.d.sync += [d_valid.eq(r_busy), d_step.eq(r_step), d_last.eq(r_last)]

        adds = [Mux(d_step < table(peeks[j], d_phase), getattr(self, f"i{j}_data"), 0) for j in range(len(self.inputs))]
        summed = Signal(32)
        m.d.comb += summed.eq(total + sum(adds, Const(0, 32)))
        value = Signal(32)
        m.d.comb += value.eq(landed + 1 + summed + d_acc)
        landing = Signal()
        m.d.comb += landing.eq(d_valid & d_last)
        with m.If(landing):
            m.d.sync += [total.eq(0), landed.eq(landed + 1), advance(d_phase)]
        with m.Elif(d_valid):
            m.d.sync += total.eq(summed)

        # the write stage takes the skid's head, or the landing value when the skid is empty
        free = Signal()
        m.d.comb += [free.eq(~w_busy | w_done), taking.eq(free & ((skid_count != 0) | landing))]
        with m.If(taking):
            m.d.sync += [w_busy.eq(1), w_step.eq(0), w_value.eq(Mux(skid_count != 0, skid[0], value))]
        with m.Elif(w_done):
            m.d.sync += w_busy.eq(0)
        with m.Elif(w_busy):
            m.d.sync += w_step.eq(w_step + 1)
        stays = Signal(range(3))  # skid entries left after this cycle's take, before this cycle's landing
        m.d.comb += stays.eq(skid_count - (taking & (skid_count != 0)))
        with m.If(taking & (skid_count != 0)):
            m.d.sync += skid[0].eq(skid[1])
        with m.If(landing & ~(taking & (skid_count == 0))):
            m.d.sync += skid[stays].eq(value)
        m.d.sync += [skid_count.eq(stays + (landing & ~(taking & (skid_count == 0)))),
                     inflight.eq(inflight + start - taking)]

        for j, _ in enumerate(self.outputs):
            write = Signal(name=f"write{j}")
            m.d.comb += [write.eq(w_busy & (w_step < table(pushes[j], w_phase))),
                         getattr(self, f"o{j}_valid").eq(write), getattr(self, f"o{j}_data").eq(w_value + w_step)]
            m.d.sync += owed[j].eq(owed[j] + Mux(start, table(pushes[j], next_phase), 0) - write)
        if self.outputs:
            m.d.comb += w_done.eq(w_busy & (w_step == table(writes, w_phase) - 1))
        else:
            m.d.comb += [self.o_valid.eq(w_busy), self.o_value.eq(w_value), w_done.eq(w_busy & self.o_ready)]
        with m.If(w_done):
            m.d.comb += self.o_fired.eq(1)
            m.d.sync += advance(w_phase)
        return m

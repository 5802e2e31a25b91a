"""One SFDF node: receivers, join, kernel, senders (000 Alg. 3, 4 in credit mode; 002 Alg. 2, 5 in-band).

Two stages (docs/hardware.md, "The pipelined node"): the decide stage takes one computation per cycle
from the inputs' heads once the initiation interval ``ii`` of the last *data* computation has passed
(``ii`` models the kernel's cost; a null computation, dummies only, costs one cycle) and runs the
kernel; the emit stage sends the oldest decided computation when every output can take it
(all-or-nothing emission). A source takes one word per
computation (index = words so far, from 1); its kernel turns ``last`` into a frame end (payload: the
frame number, from 0) sent after that word, and ``eos`` ends its stream. A sink writes one beat per
data token, per user message (the payload in ``data``) and one at EOS (:class:`~sfdf.hdl.manifest.BeatKind`).
"""

from amaranth.hdl import Assert, Cat, Const, Module, Mux, Signal
from amaranth.lib import data, stream, wiring
from amaranth.lib.wiring import In, Out

from sfdf.gen.contract import UserKernel
from sfdf.gen.kernels import MESSAGE_WIDTH

from .channels import DataChannel
from .contract import VIOLATION, make_user_kernel
from .counter import CounterReceiver, CounterSender
from .credit import CreditReceiver, CreditSender
from .decided import DecidedQueue
from .gap import delta_width
from .inband import InbandReceiver, InbandSender
from .join import SFDFJoin
from .kernels import node_latency, plan_kernel
from .links import LinksSignature, connect_credit_receiver, connect_credit_sender
from .manifest import BeatKind
from .offer import SLOTS, OfferRegister
from .tokens import CTRL_CREDIT

__all__ = ["DECIDED", "SFDFNode", "beat_layout", "decided_depth", "word_layout"]

#: Decided computations between a node's two stages: the decide stage's room is a register (the
#: channel's ``ready``), and two entries keep one computation per cycle flowing through it; a pipelined
#: kernel adds its latency (:func:`decided_depth`, the ``depth`` of :func:`sfdf.gen.refmodel.simulate`
#: the hardware needs; docs/hardware.md).
DECIDED = 2

#: A credit input's next offer, as the join orders it a cycle ahead (``SFDFJoin(lookahead=4)``): four
#: candidates, the receiver's early two (``o_indices[0]``, ``[1]``: with live credit the heartbeat's index
#: and the data head's), the offer register's spare and the receiver's late one (``o_indices[2]``), named
#: by the code ``Cat(o_early, spare.valid, late)``: a valid spare wins, then the late choice
NEXT_TABLE = (0, 1, 2, 2, 3, 3, 3, 3)

#: The same with the heartbeat's index in the data head (:func:`sfdf.hdl.plan.heartbeat_in_head_edges`): three
#: candidates, the data head's, the spare's and the late one, named by ``Cat(spare.valid, late)``
EARLY_HEAD_TABLE = (0, 1, 2, 1)

#: An in-band input's next offer: the receiver's (the channel's head register) or the offer register's
#: spare, named by ``spare.valid``
INBAND_TABLE = (0, 1)


def decided_depth(network) -> int:
    """The most decided computations a node of ``network`` holds: :data:`DECIDED` plus its kernel's
    latency (:class:`sfdf.hdl.decided.DecidedQueue`), the ``depth`` at which the reference model's nodes
    hold at least as many as the hardware's."""
    return DECIDED + max((node_latency(node) for node in network.nodes), default=0)


def word_layout(data_width: int) -> data.StructLayout:
    """A source's input word."""
    return data.StructLayout({"data": data_width, "last": 1, "eos": 1})


def beat_layout(index_width: int, data_width: int) -> data.StructLayout:
    """A sink's output beat."""
    return data.StructLayout({"data": data_width, "index": index_width, "kind": BeatKind})


def _frame_number(m, step):
    """A source's frame number (from 0, modulo ``2^16``), counting the words marked last as ``step`` takes them:
    the payload of the frame end the node sends after such a word (docs/architecture.md)."""
    frames = Signal(MESSAGE_WIDTH, name="frames")
    with m.If(step):
        m.d.sync += frames.eq(frames + 1)
    return frames


def _offer(to, head):
    """Assignments of one head (:func:`sfdf.hdl.tokens.head_layout`) to another of other widths, field by
    field: the fields ``to`` has (a join's heads have no in-band ``dummy`` flag)."""
    return [getattr(to, f).eq(getattr(head, f)) for f, _ in to.shape()]


class SFDFNode(wiring.Component):
    """A node of a credit-mode or in-band network.

    Parameters
    ----------
    plan : sfdf.hdl.plan.NodePlan
        The node's part of the elaboration plan: its edges (resolved, with the settings the plan chose for
        each), kernel, widths, mode and offer registers. Not a single-stage node's
        (:class:`sfdf.hdl.single_stage.SingleStageNode`).

    Members
    -------
    inputs : In(LinksSignature)
        The input edges' links in spec order: ``inputs[k]`` is ``In(link)`` of input edge ``k``
        (:func:`sfdf.hdl.links.edge_link`: a :class:`~sfdf.hdl.links.CreditLinkSignature` or an
        :class:`~sfdf.hdl.links.InbandLinkSignature`); empty on a source.
    outputs : Out(LinksSignature)
        The output edges' links: ``outputs[j]`` is ``Out(link)`` of output edge ``j``; empty on a sink.
        One member per edge, each with the edge's own widths and capacities, so one
        ``wiring.connect`` joins a node to an edge component (:class:`sfdf.hdl.links.LinksSignature`
        says why this is not an array member).
    i_word : In(stream.Signature(word_layout))
        A source's words.
    o_beat : Out(stream.Signature(beat_layout))
        A sink's beats.
    o_position : Out(index_width)
        With the plan's ``position``: the sink's last computation index.
    i_watermark : In(index_width)
        With the plan's ``window``: the least position of the sinks, registered (never above the true one).
    """

    def __init__(self, plan):
        if plan.single_stage:
            raise ValueError(f"Node {plan.name!r} is planned single-stage: build a SingleStageNode")
        if plan.ii < 1:
            raise ValueError(f"Initiation interval must be a positive integer, not {plan.ii!r}")
        if plan.mode not in ("credit", "inband"):
            raise ValueError(f"Mode must be 'credit' or 'inband', not {plan.mode!r}")
        self.plan = plan
        self.in_edges, self.out_edges = [e.edge for e in plan.inputs], [e.edge for e in plan.outputs]
        self.kernel, self.params, self.ii = plan.kernel, dict(plan.params), plan.ii
        self.iw, self.dw, self.pw = plan.index_width, plan.data_width, plan.payload_width
        self.fw = plan.full_width or plan.index_width
        self._rebuilds = not self.out_edges and self.fw != self.iw  # a sink with narrow indices inside
        self.word_width = plan.word_width or plan.data_width
        self.out_width = plan.out_width or plan.data_width
        self.mode, self.algorithm, self.live_credit = plan.mode, plan.algorithm, plan.live_credit
        self.position, self.window = plan.position, plan.window
        self._user = isinstance(plan.kernel, UserKernel)
        members = {
            "inputs": In(LinksSignature([e.link(sender=False) for e in plan.inputs])),
            "outputs": Out(LinksSignature([e.link() for e in plan.outputs])),
        }
        if self.position:
            members["o_position"] = Out(self.iw)
        if self.window is not None:
            members["i_watermark"] = In(self.iw)
        if not self.in_edges:
            members["i_word"] = In(stream.Signature(word_layout(self.word_width)))
        if not self.out_edges:
            members["o_beat"] = Out(stream.Signature(beat_layout(self.fw, self.out_width)))
        self._answers = self._user and bool(plan.features.get("messages"))  # the kernel takes messages as beats
        if self._user and (not plan.may_filter or self._answers):
            members["o_violation"] = Out(1)
        super().__init__(members)

    def _inputs(self, m):
        """Receivers and join: ``(want_word, want_eos, index, offset, payloads, mask, msg_valid, msg, last,
        commit)``; ``offset`` is the distance from the previous computation's index.

        The join works at the widest input; each payload is then cut to its edge's width.
        """
        n = len(self.in_edges)
        width = max(e.width for e in self.in_edges)
        # the offers are registers (two slots where the platform is pipelined, one for a join of two or
        # more inputs elsewhere, hdl.offer.offer_slots), and with two slots so is every
        # candidate for the next one (the spare slot, the receiver's channel heads and heartbeat), so the
        # join orders them a cycle ahead
        self._early_head = all(e.heartbeat_in_head for e in self.plan.inputs)
        table = INBAND_TABLE if self.mode == "inband" else EARLY_HEAD_TABLE if self._early_head else NEXT_TABLE
        # a one-input join keeps its offset a cycle ahead in in-band mode (hdl.join, ``_offset_ahead``)
        lookahead = max(table) + 1 if self._offer_slots == SLOTS and (n > 1 or self.mode == "inband") else 0
        join = m.submodules.join = SFDFJoin(inputs=n, index_width=self.iw, data_width=width,
                                            payload_width=self.pw, lookahead=lookahead, table=table)
        self._join = join
        if n > 1 and not join.lookahead:  # the join compares its heads in the decide cycle
            self._staged = True
        for k, (e, link) in enumerate(zip(self.in_edges, self.inputs, strict=True)):
            if self.mode == "inband":
                rx = m.submodules[f"rx{k}"] = InbandReceiver(capacity=e.capacity, index_width=self.iw,
                                                             data_width=e.width, payload_width=self.pw,
                                                             buffered=e.output_buffer > 1)
                wiring.connect(m, wiring.flipped(link.token), rx.i_token)
                if rx.buffered:
                    m.d.comb += rx.i_flushed.eq(link.flushed)
                self._dummy_heads.append(self._inband_offer(m, k, e, rx, link, join).dummy & join.o_at[k])
            else:
                self._credit_input(m, k, e, link, join)
        msg = Signal(self.pw)
        for k in reversed(range(n)):  # the first input delivering a message gives its payload
            with m.If(join.o_msg_mask[k]):
                m.d.comb += msg.eq(join.o_msgs[k])
        payloads = [join.o_payloads[k][:e.width] for k, e in enumerate(self.in_edges)]
        if self.position:
            m.d.comb += self.o_position.eq(join.o_current)
        return join.o_ready, join.o_eos, join.o_index, join.o_offset, payloads, join.o_mask, \
            join.o_msg_mask.any(), msg, Const(0), join.i_commit

    def _offer_register(self, m, k, e, rx, join, popped_data, popped_ctrl):
        """The register that holds input ``k``'s offers for the join (:class:`sfdf.hdl.offer.OfferRegister`;
        docs/hardware.md, "Registered offers"), between receiver ``rx`` and the join; the caller wires
        its release and the join's next candidates."""
        offer = m.submodules[f"offer{k}"] = OfferRegister(index_width=self.iw, data_width=e.width,
                                                          payload_width=self.pw, dummy=self.mode == "inband",
                                                          slots=self._offer_slots)
        m.d.comb += [
            *_offer(offer.i_head, rx.o_head),
            rx.i_consume.eq(offer.o_take),
            offer.i_popped.data.eq(popped_data),
            offer.i_popped.ctrl.eq(popped_ctrl),
            *_offer(join.i_heads[k], offer.o_head),
            offer.i_consume.eq(join.o_consume[k]),
        ]
        return offer

    def _inband_offer(self, m, k, e, rx, link, join):
        """In-band input ``k``'s offer to the join: its offer register's (where the node has one, as in credit
        mode; with two slots the join orders the next heads a cycle ahead, :data:`INBAND_TABLE`), or the
        receiver's straight, each token released as it is popped. Returns the join's head."""
        popped = link.token.valid & link.token.ready
        if not self._offer_slots:
            m.d.comb += [*_offer(join.i_heads[k], rx.o_head), rx.i_consume.eq(join.o_consume[k]),
                         link.release.eq(popped)]
            return rx.o_head
        offer = self._offer_register(m, k, e, rx, join, popped, 0)
        m.d.comb += link.release.eq(offer.o_release.data)
        if join.lookahead:
            spare = offer.o_spare
            m.d.comb += [join.i_next[k][0].eq(rx.o_head.index), join.i_next[k][1].eq(spare.index),
                         join.i_next_sel[k].eq(spare.valid)]
        return offer.o_head

    def _credit_input(self, m, k, e, link, join):
        """Credit input ``k``: its receiver, and the register that holds its offer for the join
        (:class:`sfdf.hdl.offer.OfferRegister`; docs/hardware.md, "Registered offers"), or, without one,
        the receiver's offer straight to the join, each token released as it is popped."""
        widths = {"capacity": e.capacity, "control_capacity": e.control_capacity, "index_width": self.iw,
                  "data_width": e.width, "payload_width": self.pw}
        if self.live_credit:
            rx = m.submodules[f"rx{k}"] = CounterReceiver(**widths, heartbeat_in_head=self._early_head)
        else:
            rx = m.submodules[f"rx{k}"] = CreditReceiver(**widths)
        # with the heartbeat in the data head: the data channel's copy of its head's index, the next state
        data_pop, ctrl_pop = connect_credit_receiver(m, link, rx, ahead=self.live_credit and self._early_head)
        if not self._offer_slots:
            m.d.comb += [
                *_offer(join.i_heads[k], rx.o_head),
                rx.i_consume.eq(join.o_consume[k]),
                link.release.data.eq(data_pop),
                link.release.ctrl.eq(ctrl_pop),
            ]
            return
        # a credit message (000's receiver only) is absorbed, never held
        absorbed = ctrl_pop & (link.ctrl.payload.kind == CTRL_CREDIT) if not self.live_credit else Const(0)
        offer = self._offer_register(m, k, e, rx, join, data_pop, ctrl_pop & ~absorbed)
        if join.lookahead:
            # the next offer: the spare if it holds one, else the receiver's. Every candidate is a register
            # (NEXT_TABLE); the code's low bits are registers too (the receiver's early choice, the spare's
            # valid) and its high bit the receiver's late choice (a gate after registers with the heartbeat
            # in the data head, two without), last in the join's multiplexer
            spare = offer.o_spare
            late = ~spare.valid & rx.o_choice
            if self._early_head:  # the heartbeat's index is the data head's (EARLY_HEAD_TABLE)
                candidates, code = [rx.o_join_index, spare.index, rx.o_indices[2]], Cat(spare.valid, late)
            else:
                candidates = [rx.o_indices[0], rx.o_indices[1], spare.index, rx.o_indices[2]]
                code = Cat(rx.o_early, spare.valid, late)
            m.d.comb += [join.i_next[k][c].eq(index) for c, index in enumerate(candidates)]
            m.d.comb += join.i_next_sel[k].eq(code)
        m.d.comb += [
            link.release.data.eq(offer.o_release.data),
            link.release.ctrl.eq(offer.o_release.ctrl + absorbed),  # both may come in one cycle
        ]

    def _source(self, m):
        """A source's words as computations: index = words so far, EOS. Its kernel turns ``last`` into
        the frame end (:func:`sfdf.hdl.kernels.frame_ends`): the message is the kernel's, wired by the caller."""
        word = self.i_word
        count = Signal(self.iw)
        eos_pending = Signal()
        commit = Signal()
        with m.If(commit & ~eos_pending):
            m.d.comb += word.ready.eq(1)
            m.d.sync += count.eq(count + 1)
            with m.If(word.payload.eos):
                m.d.sync += eos_pending.eq(1)
        allowed = Const(1)
        if self.window is not None:
            # the index watermark (hdl.watermark): index count + 1 may start now; next cycle's is at most
            # count + 2, allowed iff within the window of the watermark, which only grows meanwhile
            allowed = Signal(init=1)
            m.d.sync += allowed.eq((count + 2 - self.i_watermark)[:self.iw] <= self.window)
        return (word.valid & ~eos_pending & allowed, eos_pending, count + 1, Const(1), [word.payload.data], 1,
                None, None, word.payload.last, commit)

    def _decision_layout(self) -> data.StructLayout:
        """What the decide stage hands the emit stage for one computation (see :meth:`elaborate`)."""
        fields = {"index": self.iw, "delta": self._delta_width, "emit": max(1, len(self.out_edges)),
                  "msg_valid": 1, "msg": self.pw, "eos": 1}
        if self._rebuilds:
            fields["step"] = self.iw  # a sink rebuilds its beats' full index from the exact distances
        if self._user:
            fields["kernel"] = 1  # a data computation: its results come from the kernel's output queues
        if self._answers:
            fields["answer"] = 1  # a message the kernel answers, after the computation's results
        if self._propagates:
            fields["dummy_in"] = len(self._dummy_heads)
        return data.StructLayout(fields)

    def _registered_fields(self) -> tuple:
        """The record fields the emit stage reads from registers of their own (:class:`~sfdf.hdl.decided.DecidedQueue`'s
        ``registered``): what the commit and the senders' interval tests read; ``delta`` only where an
        output has an interval to test (a sink, or a node whose outputs have no heartbeat, never reads it)."""
        tested = any(e.interval is not None for e in self.out_edges)
        return ("emit", "msg_valid", "eos") + (("delta",) if tested else ())

    def elaborate(self, platform):
        """Two stages joined by :data:`DECIDED` decided computations, plus the kernel's latency
        (docs/hardware.md, "The pipelined node"): the *decide* stage chooses a computation from the
        inputs' heads, consumes them and runs the kernel; the *emit* stage hands the oldest decided
        computation to every output at once."""
        m = Module()
        self._offer_slots = self.plan.offer_slots
        self._dummy_heads = []  # Propagation: inputs whose head at the chosen index carries a dummy flag
        self._join = None  # a source has none
        # the decide stage hands its record to one register (the decided queue's ``staged``) unless its
        # heads are registered offers, ordered a cycle ahead or alone (:meth:`_inputs` stages a wider join)
        self._staged = not self._offer_slots
        inputs = self._inputs if self.in_edges else self._source
        want_word, want_eos, index, offset, payloads, mask, msg_valid, msg, last, input_commit = inputs(m)
        # Propagation (002 Alg. 2): the inputs' dummy flags travel with the decided computation
        self._propagates = bool(self._dummy_heads) and self.algorithm == "propagation"
        # the step from the previous computation, saturated for the senders' interval counters (hdl.gap)
        self._delta_width = delta_width(e.interval for e in self.out_edges)
        delta = Signal(self._delta_width)
        top = (1 << self._delta_width) - 1
        m.d.comb += delta.eq(Mux(offset[self._delta_width:].any(), top, offset[:self._delta_width]))
        if self._user:  # the user's kernel (docs/kernels.md): its beats, its results queued per output
            kernel = m.submodules.kernel = make_user_kernel(self.plan, self.plan.source)
            latency = 0
        else:  # a kernel of fixed timing (hdl.kernels.StaticKernel): decided and run in one cycle
            kernel = m.submodules.kernel = plan_kernel(self.plan)
            latency = kernel.latency
        if msg_valid is None:  # a source: the node turns a word marked last into its frame end
            msg_valid, msg = last, _frame_number(m, last & input_commit)

        # -- decide: one computation per cycle while the emit stage has room for it
        # in-band senders test their intervals a cycle ahead, from the next head's ``delta`` (hdl.gap)
        registered = self._registered_fields()
        shared = None if self._user else kernel.shared_data()
        decided = m.submodules.decided = DecidedQueue(self._decision_layout(),
                                                      data_width=0 if self._user else len(shared),
                                                      latency=latency, depth=DECIDED + self.plan.latency * self._user,
                                                      registered=registered, staged=self._staged,
                                                      ahead=("delta",) if self.mode == "inband" and "delta" in registered
                                                      else ())
        done = Signal()
        cooldown = Signal(range(self.ii)) if self.ii > 1 else Const(0)
        word_go = Signal()
        eos_go = Signal()
        data_comp = Signal()
        issue = Signal()
        m.d.comb += [
            word_go.eq(want_word & ~done & (cooldown == 0)),
            eos_go.eq(want_eos & ~want_word & ~done),
            data_comp.eq(Const(mask).any() if isinstance(mask, int) else mask.any()),
            issue.eq(decided.i_record.valid & decided.i_record.ready),
            input_commit.eq(issue & word_go),
        ]
        record = decided.i_record.payload
        # what every input beat of a computation carries (docs/kernels.md); the index at the spec's width
        kernel_index = self._full_index(m, index, issue) if self.plan.features.get("index") else index
        beats = [{"present": mask if isinstance(mask, int) else mask[k], "data": p, "index": kernel_index,
                  "last": last} for k, p in enumerate(payloads)]
        if self._user:
            answer = Signal()  # the computation forwards a message, which a kernel taking messages answers
            m.d.comb += answer.eq(msg_valid & ~eos_go if self._answers else 0)
            accepted, owed = self._kernel_beats(m, kernel, beats, issue & word_go, data_comp, answer, msg)
            m.d.comb += [
                decided.i_record.valid.eq(~owed & (word_go & (accepted | ~(data_comp | answer)) | eos_go)),
                record.kernel.eq(data_comp & ~eos_go),
            ]
            if self._answers:
                m.d.comb += record.answer.eq(answer)
        else:  # the computation's beats are taken as it is decided; its emit bits come at once
            self._static_beats(m, kernel, beats, issue & word_go & data_comp)
            m.d.comb += [
                decided.i_record.valid.eq(word_go | eos_go),
                decided.i_data.eq(shared),  # with the record, or ``latency`` cycles after it
                record.emit.eq(kernel.emit_early & data_comp.replicate(len(record.emit))
                               & ~eos_go.replicate(len(record.emit))),
            ]
        m.d.comb += [
            record.index.eq(index),
            record.delta.eq(delta),
            *([record.step.eq(offset)] if self._rebuilds else []),
            record.msg_valid.eq(msg_valid & ~eos_go),
            record.msg.eq(msg),
            record.eos.eq(eos_go),
        ]
        if self._propagates:
            m.d.comb += record.dummy_in.eq(Cat(*self._dummy_heads))
        with m.If(issue & eos_go):
            m.d.sync += done.eq(1)
        if self.ii > 1:
            with m.If(issue & word_go & data_comp):
                m.d.sync += cooldown.eq(self.ii - 1)
            with m.Elif(cooldown != 0):
                m.d.sync += cooldown.eq(cooldown - 1)

        # -- emit: the oldest decided computation, to every output at once (all or nothing)
        head = decided.o_comp.payload
        outputs_ready = Signal(init=1)
        commit = Signal()
        if self._user:  # a data computation also waits for its results
            there, emits, values = self._kernel_results(m, kernel, head, commit)
            m.d.comb += [
                decided.o_comp.ready.eq(outputs_ready & there),
                commit.eq(decided.o_comp.valid & outputs_ready & there),
            ]
        else:
            emits = [head.emit[j] for j in range(len(head.emit))]
            values = [head.data] * len(emits)
            m.d.comb += [
                decided.o_comp.ready.eq(outputs_ready),
                commit.eq(decided.o_comp.valid & outputs_ready),
            ]
        self._dummy_in = head.dummy_in if self._propagates else []
        if self.out_edges:
            readies = []
            for j, e in enumerate(self.out_edges):
                tx = self._sender(m, j, e)
                if self.mode == "inband" and e.interval is not None:
                    m.d.comb += tx.i_delta_next.eq(decided.o_next.delta)
                m.d.comb += [
                    tx.i_comp.payload.index.eq(head.index),
                    tx.i_comp.payload.delta.eq(head.delta),
                    tx.i_comp.payload.emit.eq(emits[j]),
                    tx.i_comp.payload.data.eq(values[j]),
                    tx.i_comp.payload.msg_valid.eq(head.msg_valid),
                    tx.i_comp.payload.msg.eq(head.msg),
                    tx.i_comp.payload.eos.eq(head.eos),
                    tx.i_comp.valid.eq(commit),
                ]
                readies.append(tx.i_comp.ready)
            m.d.comb += outputs_ready.eq(Cat(*readies).all())
        else:
            valid = decided.o_comp.valid & there if self._user else decided.o_comp.valid
            index = head.index
            if self._rebuilds:  # the full index: the last computation's plus the exact distance
                full, index = Signal(self.fw), Signal(self.fw)
                m.d.comb += index.eq(full + head.step)
                with m.If(valid & outputs_ready):
                    m.d.sync += full.eq(index)
            self._sink(m, valid & ~head.eos, valid & head.eos, index, emits[0], values[0],
                       head.msg_valid, head.msg, outputs_ready)
        return m

    def _kernel_beats(self, m, kernel, beats, issue, data_comp, answer, msg):
        """The user kernel's input beats (docs/kernels.md): a decided data computation loads one register per
        input member with its fields (``beats``), which offers its beat until the kernel takes it (valid and
        payload hold; valid never waits on ready). A kernel taking messages then gets the message the
        computation forwards (``answer``, payload ``msg``) as a beat of its own on every member (``msg = 1``,
        every ``present`` 0, the computation's other fields kept): at once after a null computation, else
        *owed* until the computation's beats are taken, and no computation is decided meanwhile (a data
        computation with a message takes the kernel's inputs two cycles). Returns ``(accepted, owed)``:
        whether every member's register is free for the next beat (empty, or its beat taken this cycle),
        and whether a message beat is owed; ``issue``: a computation is decided."""
        members = [name for name, member in kernel.signature.members.items() if member.flow == In]
        free = []
        for name in members:
            beat = getattr(kernel, name)
            free.append(~beat.valid | beat.ready)
        accepted = Signal()
        m.d.comb += accepted.eq(Cat(*free).all())
        owed = Signal(name="msg_owed")
        if self._answers:
            owed_msg, load_msg = Signal(self.pw, name="msg_owed_payload"), Signal()
            m.d.comb += load_msg.eq(issue & ~data_comp & answer | owed & accepted)
            with m.If(issue & data_comp & answer):
                m.d.sync += [owed.eq(1), owed_msg.eq(msg)]
            with m.Elif(owed & accepted):
                m.d.sync += owed.eq(0)
        for name, fields in zip(members, beats, strict=True):
            beat = getattr(kernel, name)
            taken = beat.valid & beat.ready
            with m.If(issue & data_comp):
                m.d.sync += beat.valid.eq(1)
                m.d.sync += [beat.payload[f].eq(fields.get(f, 0)) for f, _ in beat.payload.shape()]
            if self._answers:
                with m.Elif(load_msg):
                    m.d.sync += [beat.valid.eq(1), beat.payload.present.eq(0), beat.payload.msg.eq(1),
                                 beat.payload.mdata.eq(Mux(owed, owed_msg, msg))]
                    with m.If(~owed):  # after a null computation: its fields (the index it follows)
                        m.d.sync += [beat.payload[f].eq(fields[f]) for f, _ in beat.payload.shape()
                                     if f in fields and f != "present"]
            with m.Elif(taken):
                m.d.sync += beat.valid.eq(0)
        return accepted, owed

    def _static_beats(self, m, kernel, beats, step):
        """A kernel of fixed timing's input beats (their fields ``beats``), with the decided data computation
        (``step``), which its inputs, always ready, take at once."""
        for beat, fields in zip(kernel.inputs, beats, strict=True):
            m.d.comb += beat.valid.eq(step)
            m.d.comb += [beat.payload[f].eq(fields[f]) for f, _ in beat.payload.shape()]

    def _full_index(self, m, index, issue):
        """The computation's index at the spec's ``index_width`` (``i_index``): the join's where the network
        carries indices that wide, else rebuilt (``issue``: a computation is decided this cycle). Inside,
        consecutive computations are less than ``2^(bits - 1)`` apart (the index watermark), so the low bits
        are the inside index and the high bits the last decided computation's, plus one where the low bits
        wrapped (fell below the last's). As the built-in kernels' first stages, every register here loads in
        every cycle, from what the decide stage offers and whether it was decided: the state (the last
        decided computation's low bits, its high bits and their successor) is brought up to date from those
        registers in the next cycle, so neither the join's choice nor the commit drives a clock enable; each
        head's low bits are compared beside the choice, which then only picks the chosen head's answer and
        the high bits."""
        if self.fw == self.iw:
            return index
        top = self.fw - self.iw
        offered, decided, wrapped_q = Signal(self.iw, name="index_offered"), Signal(name="index_decided"), Signal()
        low, high, high1 = Signal(self.iw, name="index_low"), Signal(top, name="index_high"), \
            Signal(top, name="index_high1", init=1)
        moved = decided & wrapped_q  # the computation decided last cycle wrapped the low bits
        low_now = Mux(decided, offered, low)
        high_now, high1_now = Mux(moved, high1, high), Mux(moved, high1 + 1, high1)
        wrapped, current = Signal(name="index_wrapped"), Signal(self.fw, name="kernel_index")
        join = self._join
        if join is not None:  # each head compared beside the join's choice, the chosen one's answer taken after it
            heads = [join.i_heads[k] for k in range(len(self.in_edges))]
            m.d.comb += wrapped.eq(Cat(*(join.o_at[k] & (h.index < low_now) for k, h in enumerate(heads))).any())
        else:
            m.d.comb += wrapped.eq(index < low_now)
        m.d.comb += current.eq(Cat(index, Mux(wrapped, high1_now, high_now)))
        m.d.sync += [offered.eq(index), decided.eq(issue), wrapped_q.eq(wrapped),
                     low.eq(low_now), high.eq(high_now), high1.eq(high1_now)]
        return current

    def _kernel_results(self, m, kernel, head, commit):
        """The user kernel's output beats, each queued per output until its computation is emitted; returns
        ``(there, emits, values)``: the head computation's results are in (or it needs none), and per output
        whether it emits and what. A kernel that promised ``may_filter = false`` and does not emit trips an
        assertion in simulation and sets ``o_violation`` for good (docs/kernels.md)."""
        outputs = [name for name, member in kernel.signature.members.items() if member.flow == Out]
        capacity = DECIDED + self.plan.latency
        queues, answers, emits, values = [], [], [], []
        for name in outputs:
            beat = getattr(kernel, name)
            result_layout = data.StructLayout({"emit": 1, "data": len(beat.payload.data)})
            queue = m.submodules[f"results_{name}"] = DataChannel(result_layout, capacity)
            result = queue.o_stream
            m.d.comb += [queue.i_stream.payload.emit.eq(beat.payload.emit), queue.i_stream.payload.data.eq(beat.payload.data),
                         result.ready.eq(commit & head.kernel)]
            queues.append(result)
            emit, value = head.kernel & result.payload.emit, result.payload.data
            if self._answers:  # a message's answer waits in a queue of its own, read after the computation's result
                aq = m.submodules[f"answers_{name}"] = DataChannel(result_layout, capacity)
                reply = aq.o_stream
                m.d.comb += [aq.i_stream.payload.emit.eq(beat.payload.emit), aq.i_stream.payload.data.eq(beat.payload.data),
                             # the kernel's beat is taken when both queues have room, into the one its msg names
                             beat.ready.eq(queue.i_stream.ready & aq.i_stream.ready),
                             queue.i_stream.valid.eq(beat.valid & beat.ready & ~beat.payload.msg),
                             aq.i_stream.valid.eq(beat.valid & beat.ready & beat.payload.msg),
                             reply.ready.eq(commit & head.answer)]
                answers.append(reply)
                rides = head.answer & reply.payload.emit
                with m.If(commit & emit & rides):
                    m.d.sync += Assert(0, f'{VIOLATION}node "{self.plan.name}": its kernel answered a message with a '
                                       f"result on {name}, where the computation it follows emitted (docs/kernels.md)\n")
                    m.d.sync += self.o_violation.eq(1)
                emit, value = emit | rides, Mux(rides, reply.payload.data, value)
            else:
                m.d.comb += [queue.i_stream.valid.eq(beat.valid), beat.ready.eq(queue.i_stream.ready)]
            emits.append(emit)
            values.append(value)
            if not self.plan.may_filter:
                with m.If(commit & head.kernel):
                    m.d.sync += Assert(result.payload.emit,
                                       f'{VIOLATION}node "{self.plan.name}": its kernel filtered on {name}, but '
                                       "declares may_filter = false (docs/kernels.md)\n")
                    with m.If(~result.payload.emit):
                        m.d.sync += self.o_violation.eq(1)  # sticky: the top's contract_violation bit
        there = Signal()
        results_in = Cat(*(q.valid for q in queues)).all()
        if answers:
            m.d.comb += there.eq((~head.kernel | results_in) & (~head.answer | Cat(*(a.valid for a in answers)).all()))
        else:
            m.d.comb += there.eq(~head.kernel | results_in)
        return there, emits, values

    def _sender(self, m, j, e):
        """The sender of output edge ``j``, wired to its link (the computation request is the caller's)."""
        link = self.outputs[j]
        if self.mode == "inband":
            inputs = max(1, len(self.in_edges))
            tx = m.submodules[f"tx{j}"] = InbandSender(
                capacity=e.capacity, output_buffer=e.output_buffer, interval=e.interval, algorithm=self.algorithm,
                index_width=self.iw, data_width=e.width, payload_width=self.pw, inputs=inputs,
                propagate_mask=self.plan.outputs[j].propagate_mask, flushable=self.plan.outputs[j].flush,
                delta_width=self._delta_width)
            if tx.flushable:
                m.d.comb += tx.i_flush.eq(link.flush)
            wiring.connect(m, tx.o_token, wiring.flipped(link.token))
            if e.output_buffer > 1:
                m.d.comb += link.flushed.eq(tx.o_flushed)
            for k, flag in enumerate(self._dummy_in):
                m.d.comb += tx.i_dummy_in[k].eq(flag)
            return tx
        widths = {"index_width": self.iw, "data_width": e.width, "payload_width": self.pw, "delta_width": self._delta_width}
        if self.live_credit:
            tx = m.submodules[f"tx{j}"] = CounterSender(
                capacity=e.capacity, control_capacity=e.control_capacity, heartbeat=e.interval, **widths,
                heartbeat_in_head=self.plan.outputs[j].heartbeat_in_head)
        else:
            tx = m.submodules[f"tx{j}"] = CreditSender(
                capacity=e.capacity, control_capacity=e.control_capacity, threshold=e.threshold,
                heartbeat=e.interval, **widths)
        connect_credit_sender(m, tx, link)
        return tx

    def _sink(self, m, word_go, eos_go, index, emit, value, msg_valid, msg, outputs_ready):
        """Beats of a sink: the data beat first, then the message beat (two cycles), or the EOS beat."""
        beat = self.o_beat
        data_sent = Signal()  # the data beat of this computation went out; its message beat is next
        need_data = emit & ~data_sent
        m.d.comb += beat.payload.index.eq(index)
        with m.If(eos_go):
            m.d.comb += [beat.valid.eq(1), beat.payload.kind.eq(BeatKind.EOS), outputs_ready.eq(beat.ready)]
        with m.Elif(word_go & need_data):
            m.d.comb += [beat.valid.eq(1), beat.payload.kind.eq(BeatKind.DATA), beat.payload.data.eq(value),
                         outputs_ready.eq(beat.ready & ~msg_valid)]
            with m.If(beat.ready & msg_valid):
                m.d.sync += data_sent.eq(1)
        with m.Elif(word_go & msg_valid):
            m.d.comb += [beat.valid.eq(1), beat.payload.kind.eq(BeatKind.MESSAGE), beat.payload.data.eq(msg),
                         outputs_ready.eq(beat.ready)]
            with m.If(beat.ready):
                m.d.sync += data_sent.eq(0)
        with m.Else():
            m.d.comb += outputs_ready.eq(1)  # a null computation at a sink writes nothing

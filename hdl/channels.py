"""Exact-capacity channels: the data channel ``q`` and the control channel ``q'`` of 000 Fig. 2."""

from amaranth import Module, Mux, Shape, Signal, Value
from amaranth.lib import data, stream, wiring
from amaranth.lib.memory import Memory
from amaranth.lib.wiring import In, Out

from .traits import PlatformTraits

__all__ = ["ControlChannel", "DataChannel", "ahead_layout", "head_reloads_while_empty", "lutram_rows",
           "registered_read_memory"]

#: Channels needing up to this many rows behind their head register keep them in LUT RAM read
#: combinationally; longer ones in a block-RAM-friendly memory with a synchronous read port (a 64-row
#: LUT RAM holds a control channel of 000's size ``4 |q| + 1`` for ``|q| = 16``).
_LUTRAM_MAX_ROWS = 64
#: The same where the family has no LUT RAM (rows would be flip-flops and multiplexers): a few rows at most.
_NO_LUTRAM_MAX_ROWS = 4


def registered_read_memory(m, name, width, depth, enable=None):
    """A memory ``m.submodules[name]`` with a write port and a read whose data arrive one cycle after its
    address: ``(w_port, r_port, r_data)``, ``r_data`` the register after ``r_port``'s combinational data,
    loaded in every cycle, or with ``enable`` (a value) only in the cycles it is set (the block RAM's
    read enable: its output register then holds the last read).

    For a caller that never reads a row in the cycle it is written. What such a collision returns then
    does not matter, and the memory's ``no_rw_check`` attribute says so to Yosys, which applies it to a
    read port it builds from an asynchronous port and the register after it (``memory_dff``): with a
    synchronous port written as one, Yosys' iCE40 mapping emulates read-first with a register of the
    write's data and address and a multiplexer.
    """
    m.submodules[name] = storage = Memory(shape=width, depth=depth, init=[], attrs={"no_rw_check": 1})
    r_port = storage.read_port(domain="comb")
    r_data = Signal(width, name=f"{name}_r_data", reset_less=True)
    with m.If(1 if enable is None else enable):
        m.d.sync += r_data.eq(r_port.data)
    return storage.write_port(), r_port, r_data


def ahead_layout(payload_shape, fields) -> data.StructLayout:
    """A channel's next ``valid`` and head ``fields`` (:class:`DataChannel`'s ``o_ahead``)."""
    layout = data.Layout.cast(payload_shape)
    return data.StructLayout({"valid": 1, **{name: layout[name].shape for name in fields}})


def lutram_rows(traits: PlatformTraits) -> int:
    """The most rows a channel keeps in LUT RAM on a platform of ``traits``."""
    return _LUTRAM_MAX_ROWS if traits.lutram else _NO_LUTRAM_MAX_ROWS


def head_reloads_while_empty(capacity, traits: PlatformTraits) -> bool:
    """Whether a channel's head register takes the write data in every cycle the channel is empty, a
    push or not (a head in front of LUT RAM rows or of one row register, :meth:`DataChannel._buffered_storage`),
    so that a writer can keep a value there while it pushes nothing (:mod:`sfdf.hdl.counter`'s
    ``heartbeat_in_head``) on a platform of ``traits``."""
    return 2 <= capacity and capacity - 1 <= lutram_rows(traits)


class DataChannel(wiring.Component):
    """First-word-fall-through FIFO that holds exactly ``capacity`` tokens.

    The deadlock analysis (002 Thm. 2.2, 000 (3)-(5)) assumes a channel of capacity ``|q|`` accepts a
    token whenever it holds fewer than ``|q|`` and never holds more; this channel is that, cycle for
    cycle:

    * ``i_stream.ready`` is exactly ``level < capacity``, a register: no combinational path runs from
      the reader to the writer, so channels cut the timing paths between nodes (docs/fpga.md). A full
      channel takes its next token in the cycle after a read: one token per cycle from capacity 2 up,
      every other cycle at capacity 1.
    * ``o_stream.valid`` is exactly ``level != 0``: a token written into an empty channel is offered
      on the next cycle (latency 1), and a reader that is always ready sees one token per cycle.
    * With ``release``, a token the reader has taken still counts against the capacity until the
      reader releases it: a node holds its inputs' offers in registers
      (:class:`sfdf.hdl.offer.OfferRegister`, up to two per input), and a token there is still in ``q``
      for the analysis. ``i_stream.ready`` is then exactly ``level + held < capacity``.

    ``amaranth.lib.fifo.SyncFIFOBuffered(depth=capacity)`` also bounds the count by ``capacity``, but
    it blocks writes while its memory is full even when the output register is being read, accepts
    only every other cycle at depth 1, and at depth 2 refuses writes while holding one token, so it
    is neither exact nor bubble-free.

    Storage: the receiver always sees flip-flops, never a RAM's read path. Capacity 1 is one register;
    up to :func:`lutram_rows` ``+ 1`` a head register in front of ``capacity - 1`` rows of LUT RAM
    read combinationally (one register at capacity 2); larger capacities a memory behind a
    synchronous read port, which Yosys maps to block RAM, and two output registers, the first of
    which is the head. ``level``, ``ready`` and ``valid`` are registers whose next values are chosen
    by the transfer from comparisons of the present count, so no carry chain follows a handshake.

    Parameters
    ----------
    payload_shape : shape-like
        Shape of a token (for example a :class:`~amaranth.lib.data.StructLayout`).
    capacity : int
        ``|q| >= 1``: the most tokens the channel ever holds.
    release : bool or int
        Add ``i_release`` and ``held``: a token read is held until released; an integer ``N`` lets the
        reader hold up to ``N`` (``True`` is 1).
    copy : str or None
        A field of the payload's layout (a channel whose head reloads while empty,
        :func:`head_reloads_while_empty`): ``o_copy`` is a second register of the head's field, loaded with
        it, for a reader far from the first (a join's comparators, docs/hardware.md, "The join's copy of
        the index"). It has a reset, which the head has not, so Yosys keeps it a register of its own.
    ahead : tuple of str, or None
        Fields of the payload's layout (a channel whose head reloads while empty): ``o_ahead`` is what
        ``o_stream.valid`` and these head fields will be in the next cycle, for a reader that keeps a
        register of something it derives from them (a live-credit receiver's ``due``,
        docs/hardware.md, "Live credit").

    Members
    -------
    i_stream : ``In(stream.Signature(payload_shape))``
        Tokens from the sender.
    o_stream : ``Out(stream.Signature(payload_shape))``
        Tokens to the receiver, oldest first.
    level : ``Out(range(capacity + 1))``
        Number of tokens held and not read (registered).
    held : ``Out(range(N + 1))``
        With ``release``: tokens read and not yet released (registered). The reader reads only while
        it holds fewer than ``N`` after the cycle's release.
    i_release : ``In(1)``, or ``In(range(N + 1))`` for ``N > 1``
        With ``release``: the reader lets go of its oldest held token (ignored when none is held);
        for ``N > 1`` of that many, at most the tokens held and read this cycle (a token read and
        released at once never takes room: a credit-mode receiver absorbs credit messages so).
    o_copy : ``Out(field shape)``
        With ``copy``: the head's field ``copy``, from a register of its own (equal to
        ``o_stream.payload.<copy>`` in every cycle but the one after a reset, when the channel is empty).
    o_ahead : ``Out(ahead_layout(payload_shape, ahead))``
        With ``ahead``: next cycle's ``valid`` and head fields (a head field's value matters only when
        ``valid`` will be set).
    """

    def __init__(self, payload_shape, capacity, *, release=False, copy=None, ahead=None):
        if not isinstance(capacity, int) or isinstance(capacity, bool) or capacity < 1:
            raise TypeError(f"Channel capacity must be a positive integer, not {capacity!r}")
        self._payload_shape = payload_shape
        self._capacity = capacity
        self._release = int(release)
        if self._release < 0:
            raise TypeError(f"Channel release must be a boolean or a non-negative integer, not {release!r}")
        members = {
            "i_stream": In(stream.Signature(payload_shape)),
            "o_stream": Out(stream.Signature(payload_shape)),
            "level": Out(range(capacity + 1)),
        }
        if self._release:
            members.update(held=Out(range(self._release + 1)),
                           i_release=In(1 if self._release == 1 else range(self._release + 1)))
        self._copy = None
        if copy is not None:
            if capacity < 2:
                raise ValueError(f"A channel's copy of a head field needs a capacity of 2 or more, not {capacity}")
            self._copy = data.Layout.cast(payload_shape)[copy]
            members["o_copy"] = Out(self._copy.shape)
        self._ahead = None if ahead is None else tuple(ahead)
        if self._ahead is not None:
            if capacity < 2:
                raise ValueError(f"A channel's next head (ahead) needs a capacity of 2 or more, not {capacity}")
            members["o_ahead"] = Out(ahead_layout(payload_shape, self._ahead))
        super().__init__(members)

    @property
    def release(self):
        """How many read tokens the reader may hold (0: none, no ``release``)."""
        return self._release

    @property
    def payload_shape(self):
        return self._payload_shape

    @property
    def capacity(self):
        return self._capacity

    def elaborate(self, platform):
        m = Module()
        i_payload = Value.cast(self.i_stream.payload)
        o_payload = Value.cast(self.o_stream.payload)
        capacity = self._capacity
        do_write = self.i_stream.valid & self.i_stream.ready
        do_read = self.o_stream.valid & self.o_stream.ready

        # the count and the flags derived from it are registers, so ready and valid leave the channel
        # straight from flip-flops; each flag's next value is chosen by the transfer from comparisons
        # of the present count, which do not wait for the transfer (no carry chain after it)
        full, valid, many = Signal(), Signal(), Signal()  # level (+ held) == capacity, level != 0, >= 2
        m.d.comb += self.i_stream.ready.eq(~full)
        if self._release == 1:  # a token read leaves the channel's count of room only when released
            release = self.i_release & self.held
            m.d.sync += self.held.eq(self.held & ~release | do_read)
            last_room = Mux(self.held, self.level == capacity - 2 if capacity >= 2 else 0, self.level == capacity - 1)
        elif self._release:  # the same, counting what is held and what occupies the room in registers
            occupied = Signal(range(capacity + 1))
            m.d.sync += [self.held.eq(self.held + do_read - self.i_release),
                         occupied.eq(occupied + do_write - self.i_release)]
            last_room = occupied == capacity - 1
            release = self.i_release != 0
            with m.If(do_write & (self.i_release >= 2)):  # two or more out, one in: room again
                m.d.sync += full.eq(0)
        else:
            release, last_room = do_read, self.level == capacity - 1
        with m.If(do_write & ~release):
            m.d.sync += full.eq(last_room)
        with m.Elif(release & ~do_write):
            m.d.sync += full.eq(0)
        with m.If(do_write & ~do_read):
            m.d.sync += [self.level.eq(self.level + 1), valid.eq(1), many.eq(self.level != 0)]
        with m.Elif(do_read & ~do_write):
            m.d.sync += [self.level.eq(self.level - 1), valid.eq(self.level != 1), many.eq(self.level >= 3)]

        width = Shape.cast(self._payload_shape).width
        traits = PlatformTraits.of(platform)
        lutram = head_reloads_while_empty(capacity, traits)  # capacity 1 is taken first below
        if (self._copy is not None or self._ahead is not None) and not lutram:
            raise ValueError("A channel's copy of a head field or its next head needs a head that reloads while empty "
                             "(LUT RAM rows behind it, sfdf.hdl.channels.head_reloads_while_empty)")
        m.d.comb += self.o_stream.valid.eq(valid)
        if self._ahead is not None:  # valid's next value, as the Ifs above choose it
            m.d.comb += self.o_ahead.valid.eq(do_write | Mux(do_read, self.level != 1, valid))
        if width == 0:
            return m  # tokens without payload: the count is the whole state
        if capacity == 1:
            head = Signal(width, reset_less=True)
            with m.If(do_write):
                m.d.sync += head.eq(i_payload)
            m.d.comb += o_payload.eq(head)
        elif lutram:
            self._buffered_storage(m, width, i_payload, o_payload, do_write, do_read, valid, many)
        elif traits.pipelined:
            self._block_storage(m, width, i_payload, o_payload, do_write, do_read, valid)
        else:
            self._block_head_storage(m, width, i_payload, o_payload, do_write, do_read, valid)
        return m

    def _buffered_storage(self, m, width, i_payload, o_payload, do_write, do_read, valid, many):
        """A head register in front of ``capacity - 1`` rows of LUT RAM read combinationally.

        The head holds the oldest token whenever the channel holds one, so the rows hold
        ``level - 1``: the head is reloaded from the oldest row when it is read and a row is used
        (``many``), or from the input when none is (a write into a channel that is empty, or emptied
        by this read, is offered on the next cycle). Rows are rounded up to a power of two so that
        the pointers are plain counters; ``level`` alone bounds the channel at ``capacity``.
        """
        rows = 1 << (self._capacity - 2).bit_length()
        head = Signal(width, reset_less=True)
        load = ~valid | do_read  # the head is free after this cycle
        # ``many`` implies ``valid``, which the LUT mapper cannot know: with ``load & many`` the rows'
        # read pointer waited for a function of both (chain-credit's critical path, a receiver's pop ->
        # the pointer's enable, 4 LUTs); the rows move on the reader's ``ready`` alone
        from_rows = many & self.o_stream.ready
        bypass = load & ~many & do_write
        # the RAM writes the first free row whenever the channel has room, a transfer or not: only a
        # push keeps it (``produce`` moves), so the write enable is the ``ready`` register, off the
        # sender's handshake (the commit of a node with several outputs)
        oldest = self._rows(m, rows, width, i_payload, self.i_stream.ready, do_write & ~bypass, from_rows)
        m.d.comb += o_payload.eq(head)
        # the head loads whenever it is free, from the rows if they hold a token, else from the input
        # (kept only if pushed: a free head with neither is empty next cycle, its contents unread). So
        # its enable is one gate after the reader's handshake and its multiplexer is chosen by a
        # register: the writer's handshake reaches neither
        loaded = Mux(many, oldest, i_payload)
        with m.If(load):
            m.d.sync += head.eq(loaded)
        if self._copy is not None:  # a second register of one field, loaded with the head
            field = self._copy
            copy = Signal(field.shape, name="copy")  # with a reset: not merged with the head's bits
            with m.If(load):
                m.d.sync += copy.eq(loaded[field.offset:field.offset + field.width])
            m.d.comb += self.o_copy.eq(copy)
        if self._ahead is not None:  # the head's next value
            layout = data.Layout.cast(self._payload_shape)
            for name in self._ahead:
                field = layout[name]
                m.d.comb += Value.cast(self.o_ahead[name]).eq(
                    Mux(load, loaded, head)[field.offset:field.offset + field.width])

    @staticmethod
    def _rows(m, rows, width, i_payload, room, push, pop):
        """``rows`` rows of LUT RAM in FIFO order: the value is the oldest, ``pop`` takes it, ``push``
        keeps the row last written. Every cycle with ``room`` writes ``i_payload`` into the first
        free row, kept or not: a row becomes visible only by a push, which writes it in the same cycle,
        and while the channel has room the first free row holds no token (the rows hold ``level - 1``
        of at most ``capacity - 1 <= rows``). A single row is a register, loaded so too."""
        if rows == 1:
            row = Signal(width, reset_less=True)
            with m.If(room):
                m.d.sync += row.eq(i_payload)
            return row
        m.submodules.storage = storage = Memory(shape=width, depth=rows, init=[])
        w_port = storage.write_port()
        r_port = storage.read_port(domain="comb")
        produce = Signal(range(rows))
        consume = Signal(range(rows))
        m.d.comb += [
            w_port.addr.eq(produce),
            w_port.data.eq(i_payload),
            w_port.en.eq(room),
            r_port.addr.eq(consume),
        ]
        with m.If(push):
            m.d.sync += produce.eq(produce + 1)
        with m.If(pop):
            m.d.sync += consume.eq(consume + 1)
        return r_port.data

    def _block_storage(self, m, width, i_payload, o_payload, do_write, do_read, valid):
        """Block RAM behind two output registers, so that the head the receiver sees is a flip-flop.

        The memory (:func:`registered_read_memory`: its data arrive one cycle after the read) holds the tokens
        not yet moved out; ``out`` registers (0-2) hold the oldest ones, ``o_payload`` being the first.
        A read is issued while a register will be free for its data, so a streaming reader is never
        starved; a write goes straight into the registers (latency one cycle) when the memory holds
        nothing older. ``level`` alone bounds the channel at ``capacity``; the memory is rounded up to
        a power of two rows so its pointers are plain counters.

        How many registers hold tokens is two flags, registers: ``valid`` (``level != 0``: a register never
        idles while the memory holds tokens) and ``two``; the rows' count is the pointers'
        difference, and ``none`` (no row holds a token) a register. Each output register loads the
        arrival (the read's data if one is in flight, else the write's) or the second register's token,
        so the reader's pop meets each payload bit in one LUT (docs/fpga.md).
        """
        depth = 1 << (self._capacity - 1).bit_length()
        # a read never meets a write to its row: it reads only rows written in earlier cycles
        w_port, r_port, r_data = registered_read_memory(m, "storage", width, depth)
        produce = Signal(range(depth))
        consume = Signal(range(depth))
        # the rows hold ``produce - consume`` tokens not yet read out (fewer than ``depth``: while any is
        # stored both output registers hold one), and ``none`` is whether that is 0
        none = Signal(init=1)
        pending = Signal()  # a read issued last cycle: its data are on r_data
        two = Signal()  # both output registers hold tokens (valid too)
        # with reset: as reset_less registers, yosys 0.70's synth_ecp5 gave one bit of random20's baseline
        # two drivers (nextpnr: "multiply driven"); they are reset like every other register here
        regs = [Signal(width, name=f"out{k}") for k in range(2)]

        pop = do_read
        # the data of last cycle's read go to the first free register, a write into an empty memory
        # to the next one: two tokens may arrive in one cycle, so a register never idles while the
        # memory holds tokens. With ``out`` registers holding tokens (``two`` ? 2 : ``valid``), ``out == 2``
        # implies no read in flight (out + pending <= 2)
        room = pop | ~two & ~(valid & pending)  # out - pop + pending < 2
        bypass = do_write & none & room
        issue = ~none & room
        keep = do_write & ~bypass  # the write stays in the memory
        m.d.comb += [
            # the memory writes the first free row whenever the channel has room, a transfer or not: only
            # ``keep`` moves ``produce``, and that row holds no token and is not read before a later write
            # (a read is issued only while a row holds one, so ``consume != produce``)
            w_port.addr.eq(produce),
            w_port.data.eq(i_payload),
            w_port.en.eq(self.i_stream.ready),
            r_port.addr.eq(consume),  # read every cycle: the data matter only the cycle after an issue
            o_payload.eq(regs[0]),
        ]
        following = Signal.like(consume)
        m.d.comb += following.eq(consume + 1)
        with m.If(keep):
            m.d.sync += produce.eq(produce + 1)
        with m.If(issue):
            m.d.sync += consume.eq(following)
        with m.If(keep & ~issue):
            m.d.sync += none.eq(0)
        with m.Elif(issue & ~keep):
            m.d.sync += none.eq(produce == following)  # the read takes the last row
        m.d.sync += [
            pending.eq(issue),
            # out - pop + pending + bypass == 2, by cases of out (out == 2 implies no read in flight)
            two.eq(Mux(two, ~pop | bypass, Mux(valid & ~pop, pending | bypass, pending & bypass))),
        ]
        # each register's candidates: the read's data if one is in flight, else the write's (a bypass,
        # or nothing: a register that takes no token is free, whatever it holds)
        arriving = Mux(pending, r_data, i_payload)
        with m.If(pop | ~valid):  # the head is free: the second register's token, else the arrival
            m.d.sync += regs[0].eq(Mux(pop & two, regs[1], arriving))
        with m.If(pop | ~two):  # the second is free: after a lone head stays, the arrival, else the write
            m.d.sync += regs[1].eq(Mux(valid & ~two & ~pop, arriving, i_payload))

    def _block_head_storage(self, m, width, i_payload, o_payload, do_write, do_read, valid):
        """Block RAM whose own output register is the head, beside one bypass register: the scheme where
        the platform is not pipelined (:attr:`sfdf.hdl.traits.PlatformTraits.pipelined`, iCE40), which lacks
        logic cells, not clock (docs/fpga.md, "Round of one-slot offers").

        The rows hold the tokens behind the head: ``level - 1`` of them, or none. A read is issued, with
        the RAM's read enable, in each cycle the head is free (popped, or empty) while a row holds a token,
        so its data are the head in the next cycle; a write into a free head while no row holds one goes to
        the bypass register ``byp`` instead, and ``from_byp`` (a register) says which of the two the head is.
        Cycle for cycle the channel of :meth:`_block_storage` (``valid`` and ``level`` are the same
        registers) without its two output registers and their 3-input multiplexers per bit. The memory is
        rounded up to a power of two rows.
        """
        depth = 1 << (self._capacity - 1).bit_length()
        free = do_read | ~valid  # the head takes a token this cycle if one comes
        none = Signal(init=1)  # no row holds a token: a register, ``produce == consume``
        read = free & ~none
        # a read never meets a write to its row: it reads only rows written in earlier cycles
        w_port, r_port, r_data = registered_read_memory(m, "storage", width, depth, enable=read)
        produce = Signal(range(depth))
        consume = Signal(range(depth))
        from_byp = Signal()
        byp = Signal(width, reset_less=True)
        bypass = free & none & do_write
        keep = do_write & ~bypass  # the write stays in the rows
        following = Signal.like(consume)
        m.d.comb += [
            # as in _block_storage: the first free row is written whenever the channel has room; only
            # ``keep`` moves ``produce``, and that row is not read before a later write
            w_port.addr.eq(produce),
            w_port.data.eq(i_payload),
            w_port.en.eq(self.i_stream.ready),
            r_port.addr.eq(consume),
            o_payload.eq(Mux(from_byp, byp, r_data)),
            following.eq(consume + 1),
        ]
        with m.If(read):
            m.d.sync += [consume.eq(following), from_byp.eq(0)]
        with m.Elif(bypass):
            m.d.sync += [byp.eq(i_payload), from_byp.eq(1)]
        with m.If(keep):
            m.d.sync += produce.eq(produce + 1)
        with m.If(keep & ~read):
            m.d.sync += none.eq(0)
        with m.Elif(read & ~keep):
            m.d.sync += none.eq(produce == following)  # the read takes the last row


class ControlChannel(DataChannel):
    """The control channel ``q'`` of an edge in credit mode (000 Fig. 2): credits, dummies, user
    messages and EOS, in order, with exactly ``capacity`` (``|q'|``) slots.

    Same hardware as :class:`DataChannel`; a separate name for the manifest and the netlist.

    Parameters
    ----------
    payload_shape : shape-like
        Shape of a control message.
    capacity : int
        ``|q'| >= 1``.

    Members
    -------
    i_stream : ``In(stream.Signature(payload_shape))``
        Messages from the sender.
    o_stream : ``Out(stream.Signature(payload_shape))``
        Messages to the receiver, oldest first.
    level : ``Out(range(capacity + 1))``
        Number of messages held.
    """

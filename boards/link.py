"""The host link's packet engines: frame packets in (CRC-checked, store and forward), beats packets out.

Both speak the packets of :mod:`sfdf.boards.packets` exactly, as :mod:`sfdf.sw.device.codec` does on the host.

:class:`FrameParser` writes a frame's words into its source's :class:`CommitFIFO` as they arrive and
*commits* them only when the CRC matches: a damaged or truncated packet is rolled back and never reaches
the network (the host learns it from the acknowledgement, see :class:`BeatSerializer`). A frame therefore
has to fit the source's buffer; the host keeps at most that many words of each source unanswered
(:mod:`sfdf.sw.device.uart`), because a UART has no back-pressure. :class:`BeatSerializer` sends every sink beat
as a beats packet of one beat; an empty beats packet for sink 0 (count 0) after every reset is the
host's sign that the board is up and its frame numbering restarts at 0, and one per frame packet says
whether it was taken.
"""

from amaranth import Array, Cat, ClockSignal, Const, Instance, Module, Mux, Signal
from amaranth.lib import crc, stream, wiring
from amaranth.lib.wiring import In, Out

from sfdf.hdl.axis import AxisSignature
from sfdf.hdl.channels import registered_read_memory
from sfdf.hdl.traits import PlatformTraits

from . import packets
from .packets import VERSION, Status

__all__ = ["BeatSerializer", "CommitFIFO", "FrameParser", "SkidBuffer", "crc32_processor"]

#: Bytes after the magic of a frame packet's header: version, flags, port, frame id (8), count (4).
FRAME_HEADER = packets.FRAME_HEADER.size - len(packets.FRAME_MAGIC)
#: Bytes of a beats packet's header, magic included.
BEATS_HEADER = packets.BEATS_HEADER.size
(_S, _F), (_, _B) = packets.FRAME_MAGIC, packets.BEATS_MAGIC


def crc32_processor():
    """zlib's CRC-32 (ISO-HDLC), one byte per cycle (:class:`amaranth.lib.crc.Processor`)."""
    return crc.catalog.CRC32_ISO_HDLC(data_width=8).create()


def _bytes(bits: int) -> int:
    return (bits + 7) // 8


#: ECP5 DP16KD port width at each depth it has (both ports one width: 18 Kbit, the x18 mode's 1 Kbit of
#: parity bits included), and how far the row address sits up the 14 address pins (TN1264, "DP16KD").
_DP16KD_WIDTH = {16384: 1, 8192: 2, 4096: 4, 2048: 9, 1024: 18}
_DP16KD_SHIFT = {1: 0, 2: 1, 4: 2, 9: 3, 18: 4}


def _ram_slices(width: int, per: int):
    """``(low, high)`` bit ranges of a ``width``-bit word, ``per`` bits to a block RAM."""
    return [(low, min(low + per, width)) for low in range(0, width, per)]


class CommitFIFO(wiring.Component):
    """A block-RAM FIFO whose written words become readable only when committed; a rollback forgets them.

    ``o_stream`` is registered: its payload is the block RAM's output register where the FPGA has one, so
    the RAM's clock-to-out ends inside the RAM and the word leaves it soon after the clock.
    On ECP5 (the traits' ``family == "ecp5"``) with ``depth`` 1024 to 16384, each slice of the word is a
    DP16KD instance with ``REGMODE_B = "OUTREG"``, one per port width at that depth. Otherwise the memory is
    memories Yosys maps, one per block RAM's width at this depth so Yosys never stacks two RAMs by depth
    behind a multiplexer, and flip-flops straight after their data pins. Either way no logic sits between
    the RAM and the register, and a word is readable the cycle after its commit, at one word per cycle.

    Parameters
    ----------
    width : int
        Bits of a word.
    depth : int
        Words it holds (a power of two).

    Members
    -------
    w_data : In(width)
    w_en : In(1)
        Write ``w_data`` (ignored while ``w_full``).
    w_full : Out(1)
        No room: every row holds a word that is committed and unread or written and uncommitted.
    commit, rollback : In(1)
        Make every word written so far readable / forget the uncommitted ones. Not in a cycle with
        ``w_en``.
    o_stream : Out(stream.Signature(width))
        Committed words, oldest first.
    """

    def __init__(self, width: int, depth: int):
        if not isinstance(depth, int) or depth < 2 or depth & (depth - 1):
            raise ValueError(f"Commit FIFO depth must be a power of two >= 2, not {depth!r}")
        self.width, self.depth = width, depth
        super().__init__({
            "w_data": In(width), "w_en": In(1), "w_full": Out(1), "commit": In(1), "rollback": In(1),
            "o_stream": Out(stream.Signature(width)),
        })

    def elaborate(self, platform):
        m = Module()
        bits = self.depth.bit_length() - 1
        written, committed, read = Signal(bits + 1), Signal(bits + 1), Signal(bits + 1)
        m.d.comb += self.w_full.eq((written - read)[bits])
        write = self.w_en & ~self.w_full
        with m.If(self.rollback):
            m.d.sync += written.eq(committed)
        with m.Elif(write):
            m.d.sync += written.eq(written + 1)
        with m.If(self.commit):
            m.d.sync += committed.eq(written)

        # The RAM always reads the row the head will be at next cycle; a committed row was written at
        # least one cycle before it became readable, so the RAM's data is current. ``ready`` (the row
        # ``read`` is committed) and ``read + 1`` are registers, so the address is one multiplexer after
        # the output register's handshake: no comparator or carry chain before the RAM. The output
        # register (``load``) takes the RAM's word whenever it is empty or its word is taken.
        load = self.o_stream.ready | ~self.o_stream.valid
        ready = Signal()
        take = ready & load
        following, read1 = Signal.like(read), Signal.like(read, init=1)
        m.d.comb += following.eq(Mux(take, read1, read))
        # whether the next row is committed, compared for both outcomes of the take, which selects last;
        # pipelined (:attr:`sfdf.hdl.traits.PlatformTraits.pipelined`), for both outcomes of the commit
        # too, so the parser's verdict reaches ``ready`` through one multiplexer, not a comparator (it
        # limited the ULX3S board top). The pointers are compared by XOR, not ``!=``: Yosys's alumacc
        # folds a ``!=`` into ``w_full``'s subtractor of the same operands, whose carry chain then led to
        # ``ready``
        traits = PlatformTraits.of(platform)
        if traits.pipelined:
            next_ready = Mux(self.commit, Mux(take, (read1 ^ written).any(), (read ^ written).any()),
                             Mux(take, (read1 ^ committed).any(), (read ^ committed).any()))
        else:
            readable = Mux(self.commit, written, committed)
            next_ready = Mux(take, read1 != readable, read != readable)
        m.d.sync += [read.eq(following), ready.eq(next_ready)]
        with m.If(take):  # read1 stays read + 1
            m.d.sync += read1.eq(read1 + 1)
        with m.If(load):
            m.d.sync += self.o_stream.valid.eq(ready)
        if traits.family == "ecp5" and self.depth in _DP16KD_WIDTH:
            self._dp16kd(m, written[:bits], write, following[:bits], load)
        else:
            self._memories(m, written[:bits], write, following[:bits], load)
        return m

    def _memories(self, m, w_addr, write, r_addr, load):
        payload = Signal(self.width, reset_less=True)
        m.d.comb += self.o_stream.payload.eq(payload)
        per = max(1, min(36, 18432 // self.depth))  # an ECP5 block RAM's widest port at this depth
        for k, (low, high) in enumerate(_ram_slices(self.width, per)):
            w_port, r_port, r_data = registered_read_memory(m, f"storage{k}", high - low, self.depth)
            m.d.comb += [w_port.addr.eq(w_addr), w_port.data.eq(self.w_data[low:high]), w_port.en.eq(write),
                         r_port.addr.eq(r_addr)]
            with m.If(load):
                m.d.sync += payload[low:high].eq(r_data)

    def _dp16kd(self, m, w_addr, write, r_addr, load):
        per = _DP16KD_WIDTH[self.depth]
        shift = _DP16KD_SHIFT[per]
        # x18 ports take the two lowest address pins as byte enables: both bytes written
        pad = Const(0b11 if per == 18 else 0, shift)
        ada, adb = Cat(pad, w_addr), Cat(Const(0, shift), r_addr)
        for k, (low, high) in enumerate(_ram_slices(self.width, per)):
            dia, dob = Signal(18, name=f"dia{k}"), Signal(18, name=f"dob{k}")
            m.d.comb += [dia.eq(self.w_data[low:high]), self.o_stream.payload[low:high].eq(dob[:high - low])]
            ports = {"i_CLKA": ClockSignal(), "i_CEA": 1, "i_OCEA": 1, "i_WEA": write, "i_RSTA": 0,
                     "i_CLKB": ClockSignal(), "i_CEB": 1, "i_OCEB": load, "i_WEB": 0, "i_RSTB": 0}
            for pin in range(3):
                ports[f"i_CSA{pin}"] = ports[f"i_CSB{pin}"] = 0
            for pin in range(14):
                ports[f"i_ADA{pin}"], ports[f"i_ADB{pin}"] = ada[pin], adb[pin]
            for pin in range(18):
                ports[f"i_DIA{pin}"], ports[f"i_DIB{pin}"], ports[f"o_DOB{pin}"] = dia[pin], 0, dob[pin]
            m.submodules[f"storage{k}"] = Instance(
                "DP16KD", p_DATA_WIDTH_A=per, p_DATA_WIDTH_B=per, p_REGMODE_A="NOREG", p_REGMODE_B="OUTREG",
                p_RESETMODE="SYNC", p_ASYNC_RESET_RELEASE="SYNC", p_CSDECODE_A="0b000", p_CSDECODE_B="0b000",
                p_WRITEMODE_A="NORMAL", p_WRITEMODE_B="NORMAL", p_GSR="AUTO", **ports)


class _StreamStage(wiring.Component):
    """A register stage between two streams of ``shape``.

    Members
    -------
    i_stream : In(stream.Signature(shape))
    o_stream : Out(stream.Signature(shape))
    """

    def __init__(self, shape):
        super().__init__({"i_stream": In(stream.Signature(shape)), "o_stream": Out(stream.Signature(shape))})


class SkidBuffer(_StreamStage):
    """A two-register stream stage: ``o_stream`` is registered, and so is ``i_stream.ready``.

    It cuts every combinational path between its two sides (the network's ``tready`` never reaches
    the link's block RAM address), at full throughput.
    """

    def elaborate(self, platform):
        m = Module()
        spare = Signal.like(self.i_stream.payload)
        spare_valid = Signal()
        # the payload registers load whenever they are free, whatever i_stream.valid says: only the
        # valid bits depend on it, so the sender's valid logic drives two flip-flops, not every
        # payload bit's clock enable
        m.d.comb += self.i_stream.ready.eq(~spare_valid)
        with m.If(~spare_valid):
            m.d.sync += spare.eq(self.i_stream.payload)
        with m.If(self.o_stream.ready | ~self.o_stream.valid):
            m.d.sync += [self.o_stream.payload.eq(Mux(spare_valid, spare, self.i_stream.payload)),
                         self.o_stream.valid.eq(spare_valid | self.i_stream.valid), spare_valid.eq(0)]
        with m.Elif(self.i_stream.valid & ~spare_valid):
            m.d.sync += spare_valid.eq(1)
        return m


class FrameParser(wiring.Component):
    """Frame packets (bytes) into one :class:`CommitFIFO` per source port (module docstring).

    Each FIFO word is ``Cat(tdata, tlast, eos)``: ``tlast`` on a frame's last word, ``eos`` on the last
    word of a packet flagged end of stream. A header with another version, a port that does not exist or
    a count of 0 or more than the port's buffer drops the packet at once; a CRC mismatch, or a frame that
    finds no room, drops it at its end. Either way the parser then hunts for the next ``"SF"``.

    Parameters
    ----------
    widths : sequence of int
        ``tdata`` bits of each source port, in manifest order.
    depth : int
        Words each source buffers (a power of two).

    Members
    -------
    i_byte : In(stream.Signature(8, always_ready=True))
        Bytes from the UART, at least 3 cycles apart (a UART character takes at least 40).
    o_source<i> : Out(stream.Signature(widths[i] + 2))
        Committed words of source ``i``.
    o_committed, o_dropped : Out(1)
        One-cycle pulses per frame committed / packet dropped.
    """

    def __init__(self, widths, depth: int):
        self.widths, self.depth = list(widths), depth
        members = {"i_byte": In(stream.Signature(8, always_ready=True)), "o_committed": Out(1), "o_dropped": Out(1)}
        members.update({f"o_source{i}": Out(stream.Signature(w + 2)) for i, w in enumerate(self.widths)})
        super().__init__(members)

    def elaborate(self, platform):
        m = Module()
        sources = len(self.widths)
        fifos = []
        for i, width in enumerate(self.widths):
            fifo = m.submodules[f"buffer{i}"] = CommitFIFO(width + 2, self.depth)
            wiring.connect(m, fifo.o_stream, wiring.flipped(getattr(self, f"o_source{i}")))
            fifos.append(fifo)
        m.submodules.crc = checker = crc32_processor()

        got = self.i_byte.valid
        byte = self.i_byte.payload
        # pipelined (:attr:`sfdf.hdl.traits.PlatformTraits.pipelined`), the CRC folds each byte a cycle
        # after the parser takes it, from registers (the byte, its valid and the restart the parser chose):
        # neither the UART's byte compares nor the state reach the CRC's XOR trees, and ``FOLD`` waits for
        # the last byte (bytes come a character apart). On iCE40 it folds the byte as it comes (no cells
        # to spare)
        restart = Signal()
        fold = PlatformTraits.of(platform).pipelined
        m.d["sync" if fold else "comb"] += [checker.data.eq(byte), checker.valid.eq(got), checker.start.eq(restart)]

        position = Signal(range(FRAME_HEADER))
        version, flags, port = Signal(8), Signal(8), Signal(range(max(sources, 2)))
        port_byte = Signal(8)
        count = Signal(32)
        left = Signal(range(self.depth + 1))              # words still to come
        word_bytes = Array(Const(_bytes(w), 8) for w in self.widths)
        in_word = Signal(range(max(_bytes(w) for w in self.widths) + 1))
        word = Signal(8 * max(_bytes(w) for w in self.widths))
        write = Signal()                                  # the word completed last cycle goes in now
        overflow = Signal()
        last_word = Signal()
        passed = Signal()                                 # the packet's CRC matched and it found room
        deciding = Signal()                               # commit or roll back the packet now
        good = Signal()                                   # the header passed its checks

        # ``w_full`` a cycle late: words are written at least a UART character apart, and reads only
        # make room, so the register is current at every write (and the FIFO's subtractor stays off
        # the parser's paths)
        full = Array(Signal(name=f"full{i}") for i in range(sources))
        m.d.sync += [full[i].eq(f.w_full) for i, f in enumerate(fifos)]
        with m.If(write):
            with m.If(full[port]):
                m.d.sync += overflow.eq(1)
            for i, fifo in enumerate(fifos):
                m.d.comb += [fifo.w_en.eq(port == i),
                             fifo.w_data.eq(Cat(word[:self.widths[i]], last_word, last_word & flags[0]))]
        m.d.sync += write.eq(0)

        # the word's last byte and the packet's last word, compared a cycle after their counters move
        # (bytes come at least 3 cycles apart, and the counters are set two cycles before ``WORDS``), so
        # neither comparator sits between a counter and the state
        word_end, final_word = Signal(), Signal()
        m.d.sync += [word_end.eq(in_word == word_bytes[port] - 1), final_word.eq(left == 1)]
        with m.FSM():
            with m.State("HUNT"), m.If(got & (byte == _S)):
                m.d.comb += restart.eq(1)
                m.next = "MAGIC"
            with m.State("MAGIC"), m.If(got):
                m.d.sync += position.eq(0)
                with m.If(byte == _F):
                    m.next = "HEADER"
                with m.Elif(byte == _S):
                    m.d.comb += restart.eq(1)
                with m.Else():
                    m.next = "HUNT"
            with m.State("HEADER"), m.If(got):
                m.d.sync += position.eq(position + 1)
                with m.Switch(position):
                    with m.Case(0):
                        m.d.sync += version.eq(byte)
                    with m.Case(1):
                        m.d.sync += flags.eq(byte)
                    with m.Case(2):
                        m.d.sync += [port_byte.eq(byte), port.eq(byte)]
                    with m.Case(11, 12, 13, 14):
                        m.d.sync += count.eq(Cat(count[8:], byte))
                with m.If(position == FRAME_HEADER - 1):
                    m.next = "VET"
            # the header's checks a cycle after its last byte, from registers, into a register that the
            # next cycle acts on (a byte takes a character): neither the UART's byte nor the count's
            # comparators reach the state or the drop pulse
            with m.State("VET"):
                m.d.sync += [good.eq((version == VERSION) & (port_byte < sources) & (count != 0) &
                                     (count <= self.depth)),
                             left.eq(count), in_word.eq(0), overflow.eq(0)]
                m.next = "ADMIT"
            with m.State("ADMIT"):
                with m.If(good):
                    m.next = "WORDS"
                with m.Else():
                    m.d.comb += self.o_dropped.eq(1)
                    m.next = "HUNT"
            with m.State("WORDS"), m.If(got):
                with m.Switch(in_word):
                    for k in range(len(word) // 8):
                        with m.Case(k):
                            m.d.sync += word[8 * k:8 * k + 8].eq(byte)
                m.d.sync += in_word.eq(in_word + 1)
                with m.If(word_end):
                    m.d.sync += [in_word.eq(0), left.eq(left - 1), write.eq(1), last_word.eq(final_word)]
                    with m.If(final_word):
                        m.d.sync += position.eq(0)
                        m.next = "CRC"
            with m.State("CRC"), m.If(got):
                m.d.sync += position.eq(position + 1)
                with m.If(position == 3):
                    m.next = "FOLD" if fold else "CHECK"
            if fold:
                with m.State("FOLD"):  # the CRC's last byte enters the CRC register
                    m.next = "CHECK"
            with m.State("CHECK"):  # the CRC register holds the residue of the whole packet now
                m.d.sync += [passed.eq(checker.match_detected & ~overflow), deciding.eq(1)]
                m.next = "HUNT"
        # the verdict a cycle after the check, from registers, while the parser already hunts (the next
        # packet's first word is a header later)
        with m.If(deciding):
            for i, fifo in enumerate(fifos):
                m.d.comb += [fifo.commit.eq(passed & (port == i)), fifo.rollback.eq(~passed & (port == i))]
            m.d.comb += [self.o_committed.eq(passed), self.o_dropped.eq(~passed)]
            m.d.sync += deciding.eq(0)
        return m


class BeatSerializer(wiring.Component):
    """Sink beats into beats packets of one beat each; status packets: a hello after reset and an
    acknowledgement per frame packet.

    A beat is ``tdata`` (``ceil(w / 8)`` bytes), ``tuser`` (``ceil(u / 8)`` bytes) and a ``tlast`` byte,
    little-endian, as :meth:`sfdf.sw.device.codec.Codec.pack_beat_values` writes it. Sinks take turns.

    A status packet is an empty beats packet for sink 0 whose byte 3 (0 in :mod:`sfdf.sw.device.codec`, which
    ignores it) says what happened: :attr:`Status.HELLO`, :attr:`Status.COMMITTED` (a frame packet was
    taken) or :attr:`Status.DROPPED` (one was not). Acknowledgements go before beats, in packet order, so
    the host knows exactly which frame a drop concerns (:mod:`sfdf.sw.device.uart`).

    Parameters
    ----------
    sinks : sequence of (int, int)
        ``(tdata_width, tuser_width)`` of each sink port, in manifest order.
    hold : bool
        Read a beat's bytes from the sink, which holds it (AXI-Stream: ``tdata`` stays while ``tvalid``
        waits for ``tready``) until its packet is sent, ``tready`` then: no copy of the packet in a shift
        register, a byte multiplexer between the sink's registers and the UART instead (iCE40: about 450
        fewer logic cells on the variance network's 144-bit beats).

    Members
    -------
    i_sink<j> : In(AxisSignature(tdata_width, tuser_width))
        Beats of sink ``j`` (``tready`` in the cycle after the serializer captures it, or with ``hold`` in
        the cycle its packet's last byte goes).
    i_ack : In(stream.Signature(1))
        One per frame packet: 1 committed, 0 dropped (``ready`` in the cycle after the serializer loads
        its status, or with ``hold`` in the cycle it does).
    o_byte : Out(stream.Signature(8))
        To the UART.
    """

    def __init__(self, sinks, *, hold=False):
        self.sinks = [tuple(s) for s in sinks]
        self.hold = hold
        super().__init__({"o_byte": Out(stream.Signature(8)), "i_ack": In(stream.Signature(1)),
                          **{f"i_sink{j}": In(AxisSignature(d, u)) for j, (d, u) in enumerate(self.sinks)}})

    def body_bytes(self, j: int) -> int:
        """Bytes of one beat of sink ``j``."""
        d, u = self.sinks[j]
        return _bytes(d) + _bytes(u) + 1

    def _packets(self):
        """Each sink's beats packet: its bytes before the CRC, lowest first."""
        return [Cat(_header(Const(0, 8), j, 1), sink.tdata, Const(0, 8 * _bytes(d) - d), sink.tuser,
                    Const(0, 8 * _bytes(u) - u), sink.tlast, Const(0, 7))
                for j, ((d, u), sink) in enumerate(zip(self.sinks, (getattr(self, f"i_sink{j}")
                                                                    for j in range(len(self.sinks))), strict=True))]

    def elaborate(self, platform):
        m = Module()
        count = len(self.sinks)
        # The packet's bytes before its CRC wait in one shift register, loaded whole when the packet
        # starts: the byte on the line is that register's low byte or a byte of the CRC register, so no
        # comparator or multiplexer sits between a register and the UART or the CRC (the board top's
        # path to the network's clock; docs/fpga.md). With ``hold`` the byte is chosen from the packet
        # by its position instead: the sink's beat, or a status header from ``held_status``.
        body_bytes = max(self.body_bytes(j) for j in range(count))
        left = Signal(range(BEATS_HEADER + body_bytes + 1))  # bytes before the CRC still to send
        in_crc = Signal()                                      # sending the CRC's bytes
        crc_at = Signal(2)                                     # which of them
        hello = Signal(init=1)
        turn = Signal(range(max(count, 2)))
        m.submodules.crc = generator = crc32_processor()
        beats = self._packets()
        if self.hold:
            pos = Signal.like(left)                   # the byte going now, before the CRC
            held_status = Signal(8)
            status_packet = Signal()                  # a hello or an acknowledgement, not a beat
            sel = Signal(range(max(count, 2)))        # the sink whose beat is going
            packets = [Cat(p, Const(0, 8 * (BEATS_HEADER + body_bytes) - len(p))) for p in beats]
            packet = Mux(status_packet, Cat(_header(held_status, 0, 0), Const(0, 8 * body_bytes)),
                         Array(packets)[sel])
            byte = packet.word_select(pos, 8)
        else:
            shift = Signal(8 * (BEATS_HEADER + body_bytes))
            byte = shift[:8]

        crc_byte = Array(generator.crc[8 * k:8 * k + 8] for k in range(4))
        sending = Signal()
        sent = self.o_byte.valid & self.o_byte.ready
        offer = sending
        if self.hold:
            # the chosen byte is registered before the UART and the CRC take it (the byte multiplexer and
            # the CRC's XORs in one cycle limited the iCE40 board top, docs/fpga.md); it is offered once
            # the register holds the byte at ``pos``: not in the cycle after ``pos`` or the packet moves
            # (a cycle per byte, against the UART's ten bit times)
            chosen, fresh = Signal(8), Signal()
            m.d.sync += [chosen.eq(byte), fresh.eq(1)]
            byte, offer = chosen, sending & fresh
        m.d.comb += [
            self.o_byte.valid.eq(offer),
            self.o_byte.payload.eq(Mux(in_crc, crc_byte[crc_at], byte)),
            generator.data.eq(byte),
            generator.valid.eq(sent & ~in_crc),
        ]
        with m.If(sent & ~in_crc):
            m.d.sync += [pos.eq(pos + 1), fresh.eq(0)] if self.hold else [shift.eq(shift >> 8)]
            m.d.sync += [left.eq(left - 1), in_crc.eq(left == 1), crc_at.eq(0)]
        with m.If(sent & in_crc):
            m.d.sync += crc_at.eq(crc_at + 1)
            with m.If(crc_at == 3):
                m.d.sync += [sending.eq(0), in_crc.eq(0)]
                if self.hold:  # the held beat is taken once its packet is out
                    for j in range(count):
                        with m.If(~status_packet & (sel == j)):
                            m.d.comb += getattr(self, f"i_sink{j}").tready.eq(1)

        # While idle the shift register (with ``hold``: what chooses the bytes) and the count load the
        # packet that would go next (a hello, an acknowledgement, or the beat of the sink whose turn it
        # is) whether or not it goes: only ``sending`` says so. Their load enable is then ``~sending`` (and
        # nothing being taken), registers, and no sink's ``tvalid`` fans out to the packet's flip-flops.
        status = Mux(self.i_ack.payload, Const(Status.COMMITTED, 8), Const(Status.DROPPED, 8))
        idle = ~sending
        sinks = [getattr(self, f"i_sink{j}") for j in range(count)]
        ack_valid, offered = self.i_ack.valid, [sink.tvalid for sink in sinks]
        if not self.hold:
            # The choice of the next packet reads its own registers only, so none of the acknowledgement
            # FIFO's, the sinks' or the UART's logic lies before it (it limited the ULX3S board top,
            # docs/fpga.md "The board top's own paths"):
            # - registered copies of the acknowledgements' and the sinks' ``valid``, a cycle old. A
            #   ``valid`` stays high until its transfer (a FIFO's, and AXI-Stream's rule), and every
            #   transfer starts a packet, which keeps the serializer busy for more than a cycle: the copy
            #   it reads when it next chooses was made after the transfer. A copy is only ever late;
            # - an acknowledgement or a sink's beat is loaded in one cycle and taken in the next, its
            #   ``ready`` a flip-flop (``taking``: one bit per sink, then the acknowledgements').
            taking, valid_copy, ack_copy = Signal(count + 1), Signal(count), Signal()
            m.d.sync += [valid_copy.eq(Cat(*offered)), ack_copy.eq(ack_valid)]
            ack_valid, offered = ack_copy, list(valid_copy)
            m.d.comb += [sink.tready.eq(taking[j]) for j, sink in enumerate(sinks)]
            m.d.comb += self.i_ack.ready.eq(taking[count])
            with m.If(taking.any()):
                m.d.sync += [taking.eq(0), sending.eq(1)]
            idle = ~sending & ~taking.any()
        with m.If(idle):
            m.d.comb += generator.start.eq(1)
            if self.hold:
                m.d.sync += [pos.eq(0), fresh.eq(0)]
            with m.If(hello):
                hello_status = Const(Status.HELLO, 8)
                m.d.sync += ([held_status.eq(hello_status), status_packet.eq(1)] if self.hold
                             else [shift.eq(_header(hello_status, 0, 0))])
                m.d.sync += [left.eq(BEATS_HEADER), hello.eq(0), sending.eq(1)]
            with m.Elif(ack_valid):
                if self.hold:
                    m.d.comb += self.i_ack.ready.eq(1)
                m.d.sync += ([held_status.eq(status), status_packet.eq(1)] if self.hold
                             else [shift.eq(_header(status, 0, 0))])
                m.d.sync += [left.eq(BEATS_HEADER), sending.eq(1) if self.hold else taking[count].eq(1)]
            with m.Else():
                m.d.sync += [status_packet.eq(0), sel.eq(turn)] if self.hold else [shift.eq(Array(beats)[turn])]
                m.d.sync += left.eq(Array(Const(BEATS_HEADER + self.body_bytes(j)) for j in range(count))[turn])
                for j in range(count):
                    with m.If(turn == j), m.If(offered[j]):
                        m.d.sync += sending.eq(1) if self.hold else taking[j].eq(1)
                m.d.sync += turn.eq(Mux(turn == count - 1, 0, turn + 1))
        return m


def _header(status, port, beats):
    """A beats packet's header bytes (:mod:`sfdf.sw.device.codec`)."""
    return Cat(Const(_S, 8), Const(_B, 8), Const(VERSION, 8), status, Const(port, 8), Const(beats, 32))

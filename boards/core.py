"""The board's logic around a network, without the board: UART host link, buffers, watchdog, LEDs.

:class:`BoardCore` is what :mod:`sfdf.boards.top` puts between the board's pins and clock, and what the UART
cosimulation (tests/cosim/test_board_uart.py) runs on Verilator: ``rx``/``tx`` carry :mod:`sfdf.sw.device.codec`'s
packets (:mod:`sfdf.boards.link`), a UART break resets the network and the link, and 8 LEDs show the state.

LEDs (``leds`` bit: meaning; boards with fewer LEDs combine them, see each board file):

    0  receiving (a byte in the last ~50 ms)        4  a packet was dropped (bad header, CRC or no room)
    1  sending                                      5  deadlock: frames pending, no beat for ``watchdog_s``
    2  frames in the network                        6  alive (blinks at ~1 Hz)
    3  UART framing error                           7  the clock is locked (set by the board top)

Bits 3-5 stay on until the next reset (a break from the host, or power).
"""

from amaranth import (
    Cat,
    ClockDomain,
    ClockSignal,
    Const,
    DomainRenamer,
    Module,
    ResetInserter,
    ResetSignal,
    Signal,
)
from amaranth.lib import wiring
from amaranth.lib.fifo import SyncFIFOBuffered
from amaranth.lib.wiring import In, Out

from sfdf.hdl.axis import axis_ports
from sfdf.hdl.manifest import BeatKind, sink_tuser_fields
from sfdf.hdl.traits import PlatformTraits

from .link import BeatSerializer, FrameParser, SkidBuffer
from .uart import UARTReceiver, UARTTransmitter, uart_divisor

__all__ = ["DEFAULT_BAUD", "DEFAULT_BUFFER_WORDS", "LED_MEANINGS", "BoardCore"]

#: The host link's default rate: exact for FTDI's FT231X (ULX3S) and FT2232H (iCEBreaker), and a whole number
#: of cycles per bit at both boards' oscillators (25 and 12 MHz) and at every multiple of 1 MHz.
DEFAULT_BAUD = 1_000_000
#: Words each source buffers by default: the longest frame the board takes.
DEFAULT_BUFFER_WORDS = 2048
#: What each LED bit shows (module docstring).
LED_MEANINGS = ("receiving", "sending", "frames in the network", "UART framing error", "packet dropped",
                "deadlock", "alive", "clock locked")
#: Cycles of an activity LED's pulse, as a fraction of a second.
_ACTIVITY_S = 0.05
#: Cycles the network reset is held after a break.
_RESET_CYCLES = 16
#: Acknowledgements waiting for the UART: they go before beats, and a packet takes longer to arrive
#: (22 bytes at least) than its acknowledgement to leave (13), so a few suffice.
_ACKS = 8


def _pow2_at_least(value: float) -> int:
    return 1 << max(1, int(value - 1).bit_length())


class BoardCore(wiring.Component):
    """A network behind a UART host link (module docstring).

    Parameters
    ----------
    network : wiring.Component
        The network's top (:class:`sfdf.hdl.top.NetworkTop`, or a baseline with the same ports): AXI4-Stream
        members, sources ``In``, sinks ``Out``, sinks' ``tuser`` = ``{kind, index}`` (kind above
        ``index_width`` bits).
    index_width : int
        Bits of the sinks' index in ``tuser``.
    clk_hz : float
        Frequency of ``sync``.
    baud : int
        UART rate (within 2% of an integer divisor of ``clk_hz``).
    buffer_words : int
        Words each source buffers: the longest frame the board takes (a power of two).
    watchdog_s : float
        Seconds without a source or sink beat, while frames are in the network, that mean deadlock.

    Members
    -------
    rx : In(1)
    tx : Out(1)
    leds : Out(8)
        See the module docstring; bit 7 is left low.
    """

    rx: In(1, init=1)
    tx: Out(1, init=1)
    leds: Out(8)

    def __init__(self, network, *, index_width: int, clk_hz: float, baud: int = DEFAULT_BAUD,
                 buffer_words: int = DEFAULT_BUFFER_WORDS, watchdog_s: float = 0.5):
        if not isinstance(buffer_words, int) or buffer_words < 2 or buffer_words & (buffer_words - 1):
            raise ValueError(f"Buffer words must be a power of two >= 2, not {buffer_words!r}")
        self.network = network
        self.index_width = index_width
        self.clk_hz = clk_hz
        self.baud = baud
        self.divisor = uart_divisor(clk_hz, baud)
        self.buffer_words = buffer_words
        self.watchdog_cycles = _pow2_at_least(watchdog_s * clk_hz)
        ports = axis_ports(network)
        self.sources = [p for p in ports if p.direction == "in"]
        self.sinks = [p for p in ports if p.direction == "out"]
        if not self.sources or not self.sinks:
            raise ValueError(f"A board network needs a source and a sink port, not {[p.name for p in ports]}")
        super().__init__()

    def elaborate(self, platform):
        m = Module()
        m.submodules.uart_rx = receiver = UARTReceiver(self.divisor)
        m.d.comb += receiver.rx.eq(self.rx)

        # A break resets everything but the UART: the receiver is what sees breaks, and the transmitter
        # finishes the character it is sending (cut short, the host's receiver would take the hello's
        # start bit for a data or stop bit and lose the framing of the hello and after).
        host_reset = Signal()
        hold = Signal(range(_RESET_CYCLES + 1))
        with m.If(receiver.o_break):
            m.d.sync += hold.eq(_RESET_CYCLES)
        with m.Elif(hold != 0):
            m.d.sync += hold.eq(hold - 1)
        breaking = (hold > 1) | receiver.o_break
        # registered: the reset that fans out to every block starts at a flip-flop
        m.d.sync += host_reset.eq(breaking)
        # the skid buffers and the serializer's copy of each beat buy clock; an iCE40 lacks cells instead
        registered = PlatformTraits.of(platform).pipelined
        if not registered:  # iCE40: the host's reset inserted into the blocks' own domain
            reset = ResetInserter(host_reset)
        else:
            # Every block but the UART runs in ``core``: the same clock, and one flip-flop for its reset,
            # the domain's and the host's together. Joined by a gate instead, the two resets reached
            # every flip-flop's reset input through it (docs/fpga.md).
            core_reset = Signal(init=1, reset_less=True)
            m.d.sync += core_reset.eq(ResetSignal() | breaking)
            m.domains.core = ClockDomain("core", local=True)
            m.d.comb += [ClockSignal("core").eq(ClockSignal()), ResetSignal("core").eq(core_reset)]
            reset = DomainRenamer("core")

        parser = FrameParser([p.tdata_width for p in self.sources], self.buffer_words)
        m.submodules.parser = parser = reset(parser)
        m.submodules.network = reset(self.network)
        m.submodules.serializer = serializer = reset(BeatSerializer([(p.tdata_width, p.tuser_width)
                                                                     for p in self.sinks], hold=not registered))
        m.submodules.uart_tx = transmitter = UARTTransmitter(self.divisor)
        m.d.comb += [parser.i_byte.valid.eq(receiver.o_byte.valid), parser.i_byte.payload.eq(receiver.o_byte.payload),
                     self.tx.eq(transmitter.tx)]
        if registered:
            # a skid buffer cuts the UART's handshake off the serializer's packet register and CRC (the
            # transmitter sits near its pin)
            m.submodules.byte_skid = byte_skid = reset(SkidBuffer(8))
            wiring.connect(m, serializer.o_byte, byte_skid.i_stream)
            wiring.connect(m, byte_skid.o_stream, transmitter.i_byte)
        else:
            wiring.connect(m, serializer.o_byte, transmitter.i_byte)
        m.submodules.acks = acks = reset(SyncFIFOBuffered(width=1, depth=_ACKS))
        m.d.sync += [acks.w_en.eq(parser.o_committed | parser.o_dropped), acks.w_data.eq(parser.o_committed)]
        wiring.connect(m, acks.r_stream, serializer.i_ack)

        inner = self.network
        beats = []
        for i, port in enumerate(self.sources):
            word = getattr(parser, f"o_source{i}")
            if registered:
                # the commit FIFO's registered word into a skid buffer, whose registered ready keeps the
                # network's tready off the RAM's address
                stage = m.submodules[f"skid{i}"] = reset(SkidBuffer(port.tdata_width + 2))
                wiring.connect(m, word, stage.i_stream)
                word = stage.o_stream
            axis = getattr(inner, port.member)
            m.d.comb += [axis.tvalid.eq(word.valid), word.ready.eq(axis.tready), axis.tdata.eq(word.payload[:port.tdata_width])]
            if port.tlast:  # an SDF network's source (004) has neither: a beat is a firing
                m.d.comb += axis.tlast.eq(word.payload[port.tdata_width])
            if port.tuser_width:
                m.d.comb += axis.tuser.eq(word.payload[port.tdata_width + 1])
            beats.append(axis.tvalid & axis.tready)
        for j, port in enumerate(self.sinks):
            axis, to_uart = getattr(inner, port.member), getattr(serializer, f"i_sink{j}")
            d, u = port.tdata_width, port.tuser_width
            valid, ready = axis.tvalid, axis.tready
            payload = Cat(axis.tdata, axis.tuser, axis.tlast if port.tlast else Const(0, 1))
            if registered:
                # a skid buffer cuts the serializer's load off the network's paths
                stage = m.submodules[f"sink_skid{j}"] = reset(SkidBuffer(d + u + 1))
                m.d.comb += [stage.i_stream.valid.eq(valid), ready.eq(stage.i_stream.ready),
                             stage.i_stream.payload.eq(payload)]
                valid, payload, ready = stage.o_stream.valid, stage.o_stream.payload, stage.o_stream.ready
            m.d.comb += [
                to_uart.tvalid.eq(valid), ready.eq(to_uart.tready),
                to_uart.tdata.eq(payload[:d]), to_uart.tuser.eq(payload[d:d + u]), to_uart.tlast.eq(payload[d + u]),
            ]
            beats.append(axis.tvalid & axis.tready)

        # Frames in the network: frame ends taken at source 0 and not yet delivered at sink 0. The
        # watchdog looks at registered copies of the handshakes (a cycle late), so none of its logic
        # sits on the network's paths.
        src0, sink0 = getattr(inner, self.sources[0].member), getattr(inner, self.sinks[0].member)
        frame_in, frame_out, moved = Signal(), Signal(), Signal()
        kind_field = next(f for f in sink_tuser_fields(self.index_width) if f.name == "kind")
        kind = sink0.tuser[kind_field.lsb:kind_field.lsb + kind_field.width]
        m.d.sync += [frame_in.eq(src0.tvalid & src0.tready & (src0.tlast if self.sources[0].tlast else 0)),
                     frame_out.eq(sink0.tvalid & sink0.tready & (kind == BeatKind.MESSAGE)), moved.eq(Cat(*beats).any())]
        frames_in, frames_out = Signal(16), Signal(16)
        with m.If(frame_in):
            m.d.sync += frames_in.eq(frames_in + 1)
        with m.If(frame_out):
            m.d.sync += frames_out.eq(frames_out + 1)
        buffered = Signal()  # a word offered to the network (the link's stages hold the frame's first words)
        m.d.sync += buffered.eq(Cat(getattr(inner, p.member).tvalid for p in self.sources).any())
        pending = Signal()  # registered: the counters' 16-bit compare stays off the watchdog's reset
        m.d.sync += pending.eq((frames_in != frames_out) | buffered)

        quiet = Signal(range(self.watchdog_cycles + 1))
        deadlock = Signal()
        with m.If(moved | ~pending):
            m.d.sync += quiet.eq(0)
        with m.Elif(quiet != self.watchdog_cycles):
            m.d.sync += quiet.eq(quiet + 1)
        with m.Else():
            m.d.sync += deadlock.eq(1)

        framing, dropped = Signal(), Signal()
        with m.If(receiver.o_framing_error & ~receiver.o_break):
            m.d.sync += framing.eq(1)
        with m.If(parser.o_dropped):
            m.d.sync += dropped.eq(1)
        with m.If(host_reset):
            m.d.sync += [framing.eq(0), dropped.eq(0), deadlock.eq(0), quiet.eq(0), frames_in.eq(0),
                         frames_out.eq(0)]

        activity = _pow2_at_least(_ACTIVITY_S * self.clk_hz)
        receiving = self._stretch(m, receiver.o_byte.valid, activity, "rx")
        sending = self._stretch(m, transmitter.i_byte.valid & transmitter.i_byte.ready, activity, "tx")
        alive = Signal(range(_pow2_at_least(self.clk_hz / 2)))
        m.d.sync += alive.eq(alive + 1)
        m.d.comb += self.leds.eq(Cat(receiving, sending, pending, framing, dropped, deadlock,
                                     alive[-1], 0))
        return m

    @staticmethod
    def _stretch(m, pulse, cycles: int, name: str):
        """High for ``cycles`` after the last ``pulse``."""
        timer = Signal(range(cycles), name=f"{name}_activity")
        with m.If(pulse):
            m.d.sync += timer.eq(cycles - 1)
        with m.Elif(timer != 0):
            m.d.sync += timer.eq(timer - 1)
        return timer != 0

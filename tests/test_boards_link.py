# amaranth: UnusedElaboratable=no
"""sfdf.boards.uart and boards.link in the Amaranth simulator: the bytes are sw.codec's, both ways."""

import random
import zlib

import pytest
from amaranth import Fragment, Module
from amaranth.lib import wiring
from amaranth.sim import Simulator

from sfdf.boards.link import (
    BeatSerializer,
    CommitFIFO,
    FrameParser,
    SkidBuffer,
)
from sfdf.boards.packets import Status
from sfdf.boards.uart import UARTReceiver, UARTTransmitter, uart_divisor
from sfdf.hdl.dsp import FamilyOnly
from sfdf.hdl.manifest import sink_tuser_fields
from sfdf.sw.device.codec import Codec, read_packet

pytestmark = pytest.mark.board


def manifest(sources=(16,), sinks=((144, 34),)):
    """A manifest with the given source ``tdata`` widths and sink ``(tdata, tuser)`` widths."""
    ports = [{"name": f"s_axis_s{i}", "node": f"s{i}", "direction": "in", "tdata_width": w, "tuser_width": 1,
              "fields": [{"name": "data", "lsb": 0, "width": w}],
              "tuser_fields": [{"name": "eos", "lsb": 0, "width": 1}]} for i, w in enumerate(sources)]
    ports += [{"name": f"m_axis_k{j}", "node": f"k{j}", "direction": "out", "tdata_width": d, "tuser_width": u,
               "fields": [{"name": "data", "lsb": 0, "width": d}], "tuser_fields": [f.to_json() for f in sink_tuser_fields(u - 2)]}
              for j, (d, u) in enumerate(sinks)]
    return {"name": "t", "index_width": sinks[0][1] - 2, "payload_width": 16,
            "beat_kinds": {"data": 0, "message": 1, "eos": 2}, "ports": ports}


def collector(stream, into, count=None):
    """A testbench appending every payload ``stream`` transfers to ``into`` (until it holds ``count``)."""
    async def collect(ctx):
        async for _, _, valid, ready, payload in ctx.tick().sample(stream.valid, stream.ready, stream.payload):
            if valid and ready:
                into.append(payload)
            if count is not None and len(into) == count:
                break
    return collect


def run(dut, *benches, deadline=200_000):
    sim = Simulator(dut)
    sim.add_clock(1e-6)
    for bench in benches:
        sim.add_testbench(bench)
    sim.run_until(deadline * 1e-6)


# --- UART --------------------------------------------------------------------------------------

def test_divisor_is_checked():
    assert uart_divisor(150e6, 3_000_000) == 50
    assert uart_divisor(100e6, 3_000_000) == 33
    with pytest.raises(ValueError, match=r"needs a clock of at least 12 MHz \(4 cycles per bit\), not 8 MHz"):
        uart_divisor(8e6, 3_000_000)
    with pytest.raises(ValueError, match=r"is 4.2% off \(divisor 5\)"):
        uart_divisor(12.5e6, 2_400_000)


class _Loop(wiring.Component):
    def __init__(self, divisor):
        self.divisor = divisor
        super().__init__({})

    def elaborate(self, platform):
        m = Module()
        m.submodules.tx = self.tx = UARTTransmitter(self.divisor)
        m.submodules.rx = self.rx = UARTReceiver(self.divisor)
        m.d.comb += self.rx.rx.eq(self.tx.tx)
        return m


@pytest.mark.parametrize("divisor", [4, 5, 13])
def test_uart_loopback_back_to_back(divisor):
    loop = _Loop(divisor)
    data = [0x00, 0xFF, 0x55, 0xAA, 0x53, 0x01, 0x80] + random.Random(divisor).choices(range(256), k=24)
    got = []

    async def send(ctx):
        for byte in data:
            ctx.set(loop.tx.i_byte.payload, byte)
            ctx.set(loop.tx.i_byte.valid, 1)
            await ctx.tick().until(loop.tx.i_byte.ready)
        ctx.set(loop.tx.i_byte.valid, 0)

    async def receive(ctx):
        async for _, _, valid, payload, error in ctx.tick().sample(loop.rx.o_byte.valid, loop.rx.o_byte.payload,
                                                                    loop.rx.o_framing_error):
            assert not error
            if valid:
                got.append(payload)
            if len(got) == len(data):
                break

    run(loop, send, receive, deadline=11 * divisor * (len(data) + 4))
    assert got == data


def test_break_is_one_pulse_and_not_a_byte():
    rx = UARTReceiver(4)
    events = []

    async def line(ctx):
        ctx.set(rx.rx, 1)
        await ctx.tick().repeat(10)
        ctx.set(rx.rx, 0)              # a break: low for 30 bit times
        await ctx.tick().repeat(120)
        ctx.set(rx.rx, 1)
        await ctx.tick().repeat(10)
        for bit in [0, 1, 0, 1, 0, 0, 1, 0, 1, 1]:  # then 0xa5, LSB first
            ctx.set(rx.rx, bit)
            await ctx.tick().repeat(4)

    async def watch(ctx):
        async for _, _, valid, payload, brk in ctx.tick().sample(rx.o_byte.valid, rx.o_byte.payload, rx.o_break):
            if valid:
                events.append(("byte", payload))
            if brk:
                events.append(("break",))

    run(rx, line, watch, deadline=400)
    assert events == [("break",), ("byte", 0xA5)]


# --- FIFO and skid buffer ----------------------------------------------------------------------

def test_commit_fifo_reads_only_committed_words_and_rolls_back():
    fifo = CommitFIFO(8, 8)
    got = []

    async def writer(ctx):
        async def write(words):
            for word in words:
                ctx.set(fifo.w_data, word)
                ctx.set(fifo.w_en, 1)
                await ctx.tick()
            ctx.set(fifo.w_en, 0)
        await write([1, 2, 3])
        await ctx.tick().repeat(3)
        assert not ctx.get(fifo.o_stream.valid)       # written, not committed
        ctx.set(fifo.commit, 1)
        await ctx.tick()
        ctx.set(fifo.commit, 0)
        await write([9, 9])
        ctx.set(fifo.rollback, 1)
        await ctx.tick()
        ctx.set(fifo.rollback, 0)
        await write([4, 5, 6, 7, 8])                  # 3 read or not: 8 rows hold 3 + 5
        ctx.set(fifo.commit, 1)
        await ctx.tick()
        ctx.set(fifo.commit, 0)

    async def reader(ctx):
        ctx.set(fifo.o_stream.ready, 1)
        async for _, _, valid, payload in ctx.tick().sample(fifo.o_stream.valid, fifo.o_stream.payload):
            if valid:
                got.append(payload)
            if len(got) == 8:
                break

    run(fifo, writer, reader, deadline=100)
    assert got == [1, 2, 3, 4, 5, 6, 7, 8]


def test_commit_fifo_full():
    fifo = CommitFIFO(4, 4)

    async def bench(ctx):
        for word in range(4):
            assert not ctx.get(fifo.w_full)
            ctx.set(fifo.w_data, word)
            ctx.set(fifo.w_en, 1)
            await ctx.tick()
        assert ctx.get(fifo.w_full)
        ctx.set(fifo.w_en, 0)
        ctx.set(fifo.rollback, 1)
        await ctx.tick()
        assert not ctx.get(fifo.w_full)

    run(fifo, bench, deadline=20)


@pytest.mark.parametrize("family", [None, "ice40"])
def test_commit_fifo_random_commits_rollbacks_and_back_pressure(family):
    """Frames written, committed or rolled back at random while the reader stalls at random: exactly the
    committed words come out, in order; on every family (pipelined, ``ready`` compares for both outcomes
    of the commit too)."""
    fifo = CommitFIFO(8, 16)
    rng = random.Random(7)
    frames = [[rng.randrange(256) for _ in range(rng.randint(1, 6))] for _ in range(60)]
    kept = [rng.random() < 0.7 for _ in frames]
    expected = [word for frame, keep in zip(frames, kept, strict=True) if keep for word in frame]
    got = []

    async def writer(ctx):
        for frame, keep in zip(frames, kept, strict=True):
            for word in frame:
                while ctx.get(fifo.w_full):
                    await ctx.tick()
                ctx.set(fifo.w_data, word)
                ctx.set(fifo.w_en, 1)
                await ctx.tick()
                ctx.set(fifo.w_en, 0)
                for _ in range(rng.randint(0, 2)):
                    await ctx.tick()
            ctx.set(fifo.commit if keep else fifo.rollback, 1)
            await ctx.tick()
            ctx.set(fifo.commit if keep else fifo.rollback, 0)

    async def reader(ctx):
        while len(got) < len(expected):
            ready = rng.random() < 0.5
            ctx.set(fifo.o_stream.ready, ready)
            await ctx.tick()

    run(Fragment.get(fifo, FamilyOnly(family)) if family else fifo, writer, reader,
        collector(fifo.o_stream, got, len(expected)), deadline=5000)
    assert got == expected


@pytest.mark.parametrize("family", [None, "ice40"])
def test_commit_fifo_streams_a_committed_frame_at_one_word_per_cycle(family):
    """Committed words leave on consecutive cycles, the first the cycle after the commit."""
    fifo = CommitFIFO(8, 16)
    cycles = []

    async def bench(ctx):
        ctx.set(fifo.o_stream.ready, 1)
        for word in range(1, 13):
            ctx.set(fifo.w_data, word)
            ctx.set(fifo.w_en, 1)
            await ctx.tick()
        ctx.set(fifo.w_en, 0)
        ctx.set(fifo.commit, 1)
        await ctx.tick()
        ctx.set(fifo.commit, 0)
        for cycle in range(20):
            if ctx.get(fifo.o_stream.valid):
                cycles.append((cycle, ctx.get(fifo.o_stream.payload)))
            await ctx.tick()

    run(Fragment.get(fifo, FamilyOnly(family)) if family else fifo, bench, deadline=100)
    assert cycles == [(1 + k, k + 1) for k in range(12)]


def test_skid_buffer_keeps_order_under_back_pressure():
    skid = SkidBuffer(8)
    rng = random.Random(3)
    data = list(range(1, 100))
    got = []

    async def source(ctx):
        for word in data:
            ctx.set(skid.i_stream.payload, word)
            ctx.set(skid.i_stream.valid, 1)
            await ctx.tick().until(skid.i_stream.ready)
            ctx.set(skid.i_stream.valid, 0)
            if rng.random() < 0.3:
                await ctx.tick()

    async def sink(ctx):
        while len(got) < len(data):
            ready = rng.random() < 0.6
            ctx.set(skid.o_stream.ready, ready)
            await ctx.tick()
            if ready and ctx.get(skid.o_stream.valid):
                pass
        ctx.set(skid.o_stream.ready, 0)

    run(skid, source, sink, collector(skid.o_stream, got, len(data)), deadline=2000)
    assert got == data


# --- frame parser ------------------------------------------------------------------------------

def check_parser(stream: bytes, expected: list[list[tuple[int, int, int]]], widths=(16,), depth=16,
                 committed=None, dropped=None, gap=3, family=None):
    """Bytes in one per ``gap`` cycles; each source's words out as ``(tdata, tlast, eos)``; ``family``: the
    parser elaborated for that FPGA family (iCE40: unpipelined, the CRC folding each byte as it comes)."""
    parser = FrameParser(list(widths), depth)
    got = [[] for _ in widths]
    counts = {"committed": 0, "dropped": 0}

    async def feed(ctx):
        for byte in stream:
            ctx.set(parser.i_byte.payload, byte)
            ctx.set(parser.i_byte.valid, 1)
            await ctx.tick()
            ctx.set(parser.i_byte.valid, 0)
            await ctx.tick().repeat(gap - 1)

    async def drain(ctx):
        for i in range(len(widths)):
            ctx.set(getattr(parser, f"o_source{i}").ready, 1)
        signals = [getattr(parser, f"o_source{i}") for i in range(len(widths))]
        async for _, _, *values in ctx.tick().sample(parser.o_committed, parser.o_dropped,
                                                     *(s.valid for s in signals), *(s.payload for s in signals)):
            counts["committed"] += values[0]
            counts["dropped"] += values[1]
            for i, w in enumerate(widths):
                if values[2 + i]:
                    word = values[2 + len(widths) + i]
                    got[i].append((word & ((1 << w) - 1), (word >> w) & 1, word >> (w + 1)))

    run(Fragment.get(parser, FamilyOnly(family)) if family else parser, feed, drain,
        deadline=gap * len(stream) + 50)
    assert got == expected
    if committed is not None:
        assert counts["committed"] == committed
    if dropped is not None:
        assert counts["dropped"] == dropped


def words(values, eos=False):
    return [(v, int(n == len(values) - 1), int(eos and n == len(values) - 1)) for n, v in enumerate(values)]


@pytest.mark.parametrize("family", [None, "ice40"])
def test_parser_takes_codec_frames(family):
    codec = Codec(manifest())
    stream = codec.pack_frame(7, [1, 2, 65535]) + codec.pack_frame(-8, [0]) + codec.pack_frame(9, [5, 6],
                                                                                                end_of_stream=True)
    check_parser(stream, [words([1, 2, 65535]) + words([0]) + words([5, 6], eos=True)], committed=3, dropped=0,
                 family=family)


def test_parser_routes_ports_of_any_width():
    codec = Codec(manifest(sources=(3, 40)))
    stream = codec.pack_frame(1, [5, 7], "s0") + codec.pack_frame(1, [2**40 - 1, 2**33], "s1") + \
        codec.pack_frame(2, [1], "s0")
    check_parser(stream, [words([5, 7]) + words([1]), words([2**40 - 1, 2**33])], widths=(3, 40), committed=3)


@pytest.mark.parametrize("family", [None, "ice40"])
def test_parser_drops_a_damaged_packet_and_resynchronises(family):
    codec = Codec(manifest())
    good, bad = codec.pack_frame(1, [10, 11]), bytearray(codec.pack_frame(2, [20, 21, 22]))
    bad[20] ^= 0x10                                     # a pixel bit flipped: the CRC no longer matches
    stream = b"xSS" + good + bytes(bad) + b"S\x00F" + codec.pack_frame(3, [30])
    check_parser(stream, [words([10, 11]) + words([30])], committed=2, dropped=1, family=family)


@pytest.mark.parametrize("offset, value, why", [(2, 2, "version"), (4, 1, "port"), (13, 0, "count 0"),
                                                 (13, 17, "count above the buffer")])
def test_parser_drops_a_bad_header(offset, value, why):
    codec = Codec(manifest())
    packet = bytearray(codec.pack_frame(1, [10]))
    packet[offset] = value
    packet[-4:] = zlib.crc32(bytes(packet[:-4])).to_bytes(4, "little")  # a valid CRC: the header is the problem
    check_parser(bytes(packet) + codec.pack_frame(2, [20]), [words([20])], committed=1, dropped=1)


def test_parser_drops_a_frame_that_finds_no_room():
    codec = Codec(manifest())
    # 16 words of room and nothing read: 10 fit, the next 10 do not and are dropped, 6 fit again
    parser_stream = codec.pack_frame(1, list(range(10))) + codec.pack_frame(2, list(range(10))) + \
        codec.pack_frame(3, list(range(6)))
    parser = FrameParser([16], 16)
    counts = {"committed": 0, "dropped": 0}

    async def feed(ctx):
        for byte in parser_stream:
            ctx.set(parser.i_byte.payload, byte)
            ctx.set(parser.i_byte.valid, 1)
            await ctx.tick()
            ctx.set(parser.i_byte.valid, 0)
            await ctx.tick().repeat(2)              # a byte per 3 cycles (FrameParser's i_byte)
        await ctx.tick().repeat(4)
        words_out = []
        ctx.set(parser.o_source0.ready, 1)
        while ctx.get(parser.o_source0.valid):
            words_out.append(ctx.get(parser.o_source0.payload) & 0xFFFF)
            await ctx.tick()
        assert words_out == list(range(10)) + list(range(6))

    async def count(ctx):
        async for _, _, c, d in ctx.tick().sample(parser.o_committed, parser.o_dropped):
            counts["committed"] += c
            counts["dropped"] += d

    run(parser, feed, count, deadline=3 * len(parser_stream) + 100)
    assert counts == {"committed": 2, "dropped": 1}


# --- beat serializer ---------------------------------------------------------------------------

def check_serializer(sinks, beats, pause=0.0, seed=1, hold=False):
    """``beats``: ``(sink, tdata, tuser, tlast)`` offered in order per sink; the bytes must parse with
    sw.codec into a hello and the beats, each sink's in order."""
    codec = Codec(manifest(sinks=sinks))
    ser = BeatSerializer(sinks, hold=hold)
    received = bytearray()
    rng = random.Random(seed)
    per_sink = [[b for b in beats if b[0] == j] for j in range(len(sinks))]

    def offer(j):
        async def bench(ctx):
            port = getattr(ser, f"i_sink{j}")
            for _, tdata, tuser, tlast in per_sink[j]:
                ctx.set(port.tdata, tdata)
                ctx.set(port.tuser, tuser)
                ctx.set(port.tlast, tlast)
                ctx.set(port.tvalid, 1)
                await ctx.tick().until(port.tready)
                ctx.set(port.tvalid, 0)
        return bench

    async def uart(ctx):
        while True:
            ready = rng.random() >= pause
            ctx.set(ser.o_byte.ready, ready)
            await ctx.tick()

    run(ser, *(offer(j) for j in range(len(sinks))), uart, collector(ser.o_byte, received),
        deadline=60 * (len(beats) + 1) * 40)
    packets, at = [], 0
    while at < len(received):
        packet, used = read_packet(received, codec, at)
        assert packet is not None, f"incomplete packet at byte {at} of {len(received)}"
        packets.append(packet)
        at += used
    assert packets[0] == []                              # the hello: an empty beats packet
    assert len(received[:13]) == 13 and received[4] == 0  # for sink 0
    got = [[] for _ in sinks]
    for packet in packets[1:]:
        (beat,) = packet
        j = [p.node for p in codec.sinks].index(beat.sink)
        got[j].append((beat.tdata, beat.tlast))
    for j in range(len(sinks)):
        assert got[j] == [(b[1], bool(b[3])) for b in per_sink[j]]
    return packets


HOLD = pytest.mark.parametrize("hold", [False, True], ids=["copied", "held"])


@HOLD
def test_serializer_beats_parse_with_the_codec(hold):
    rng = random.Random(5)
    beats = [(0, rng.getrandbits(144), rng.getrandbits(32) | (k % 3 << 32), k % 2) for k in range(6)]
    packets = check_serializer([(144, 34)], beats, hold=hold)
    decoded = [p[0] for p in packets[1:]]
    assert [(b.tdata, b.index, b.kind) for b in decoded] == [(t, u & (2**32 - 1), ["data", "message", "eos"][u >> 32])
                                                              for _, t, u, _ in beats]


@HOLD
def test_serializer_takes_turns_between_sinks_under_back_pressure(hold):
    rng = random.Random(6)
    beats = [(k % 2, rng.getrandbits(8 if k % 2 else 33), rng.getrandbits(10), 0) for k in range(10)]
    check_serializer([(33, 12), (8, 12)], beats, pause=0.4, hold=hold)


@HOLD
def test_serializer_acknowledges_frame_packets_before_beats(hold):
    codec = Codec(manifest(sinks=[(8, 10)]))
    ser = BeatSerializer([(8, 10)], hold=hold)
    received = bytearray()

    async def bench(ctx):
        port = ser.i_sink0
        ctx.set(port.tdata, 0x5A)
        ctx.set(port.tvalid, 1)
        ctx.set(ser.i_ack.valid, 1)
        for ack in (1, 0):
            ctx.set(ser.i_ack.payload, ack)
            await ctx.tick().until(ser.i_ack.ready)
        ctx.set(ser.i_ack.valid, 0)
        await ctx.tick().until(port.tready)
        ctx.set(port.tvalid, 0)

    async def collect(ctx):
        ctx.set(ser.o_byte.ready, 1)
        async for _, _, valid, payload in ctx.tick().sample(ser.o_byte.valid, ser.o_byte.payload):
            if valid:
                received.append(payload)

    run(ser, bench, collect, deadline=400)
    statuses, at = [], 0
    while at < len(received):
        packet, used = read_packet(received, codec, at)
        statuses.append((received[at + 3], [b.tdata for b in packet]))
        at += used
    assert statuses == [(Status.HELLO, []), (Status.COMMITTED, []), (Status.DROPPED, []), (0, [0x5A])]


class _StuckNetwork(wiring.Component):
    """A network that never takes a word: what a deadlock looks like from the board core."""

    def __init__(self):
        from sfdf.hdl.axis import AxisSignature

        super().__init__({"u": wiring.In(AxisSignature(16, 1)), "x": wiring.Out(AxisSignature(8, 34))})

    def elaborate(self, platform):
        return Module()


def test_watchdog_lights_the_deadlock_led_and_a_break_clears_it():
    from sfdf.boards.core import BoardCore

    core = BoardCore(_StuckNetwork(), index_width=32, clk_hz=400, baud=100, buffer_words=16, watchdog_s=0.5)
    codec = Codec(manifest(sinks=((8, 34),)))
    leds = []

    async def host(ctx):
        async def send(byte, low=False):
            bits = [0] * 10 if low else [0] + [byte >> k & 1 for k in range(8)] + [1]
            for bit in bits:
                ctx.set(core.rx, bit)
                await ctx.tick().repeat(4)
            ctx.set(core.rx, 1)
        await ctx.tick().repeat(20)
        for byte in codec.pack_frame(1, [1, 2, 3]):
            await send(byte)
        await ctx.tick().repeat(300)
        leds.append(ctx.get(core.leds))
        await send(0, low=True)                  # a break: the board resets, the LED goes out
        await ctx.tick().repeat(40)
        leds.append(ctx.get(core.leds))

    run(core, host, deadline=3000)
    assert core.watchdog_cycles == 256
    assert leds[0] >> 5 & 1 and leds[0] >> 2 & 1, f"{leds[0]:08b}"   # deadlock, frames in the network
    assert not leds[1] >> 5 & 1 and not leds[1] >> 2 & 1, f"{leds[1]:08b}"

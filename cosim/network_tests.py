"""cocotb bench of a generated network: sources fed from the stimulus, every sink beat scoreboarded
against the reference model token by token, a deadlock watchdog on every channel's level.

The ports are driven by cocotbext-axi's ``AxiStreamSource`` and ``AxiStreamSink`` (``byte_lanes=1``: one
word per beat, whatever the width), bound by name from the manifest's ``ports``. They sample the handshake
at the rising edge and act after it, so a beat moves exactly when ``tvalid`` and ``tready`` were both high
before that edge: the beats move on the same cycles as with the drivers of cosim/axis.py before (every
sink beat and channel push of the 20 ``CASES`` of tests/cosim/test_throughput_bound.py, and the deadlock
reports of fig3_deadlock and ob_fig2 --flush without pauses, measured equal). Pause generators differ: the library
draws one item per cycle on a source (the old source drew one per beat it could present), so with pauses
a seed gives another back-pressure pattern of the same odds (examples/variance.toml at seed 1, pause 0.3:
296 cycles, 293 before; fig3_deadlock's deadlock at cycle 267, 264 before, the same levels). A sink
delivers a frame at the edge of its ``tlast`` beat, not half a cycle before, so the closing
``cosim: N cycles`` counts that edge (variance without pauses: 213, 212 before).

Run by :func:`sfdf.cosim.network.run_network` through :func:`sfdf.cosim.runner.build_and_run`; the environment
variable ``SFDF_COSIM_CONFIG`` names the JSON file with the manifest, the stimulus and the expected
sink logs.
"""

from __future__ import annotations

import json
import logging
import os
import random
from pathlib import Path

import cocotb
from cocotb.clock import Clock
from cocotb.triggers import ClockCycles, ReadOnly, RisingEdge
from cocotbext.axi import AxiStreamBus, AxiStreamFrame, AxiStreamSink, AxiStreamSource

from sfdf.cosim.scoreboard import Scoreboard, Token, frame_beats
from sfdf.cosim.watchdog import DeadlockError, DeadlockWatchdog, HandshakeCounter
from sfdf.hdl.manifest import BeatKind, read_manifest


def _pauses(rng: random.Random, busy: float):
    while True:
        yield int(rng.random() < busy)


def _occupancy(channel) -> int:
    """Tokens in a channel as the analysis counts them: its ``level`` plus those its reader holds."""
    return int(channel.level.value) + (int(channel.held.value) if hasattr(channel, "held") else 0)


def bind(dut, port, clock, reset):
    """A cocotbext-axi source (``in``) or sink (``out``) on the manifest port ``port``
    (:class:`sfdf.hdl.manifest.Port`), one word per beat.

    Raises
    ------
    AttributeError
        The top lacks a signal the port has (``tdata``, ``tvalid``, ``tready``, ``tuser`` when it is
        wider than 0, ``tlast`` when the port has it): cocotbext-axi would drive without it.
    """
    # the driver's logger (cocotb.<top>.<port>): its per-frame INFO lines would fill sim.log
    logging.getLogger(f"cocotb.{dut._name}.{port.name}").setLevel(logging.WARNING)
    bus = AxiStreamBus.from_prefix(dut, port.name)
    wanted = ["tdata", "tvalid", "tready"] + ["tuser"] * bool(port.tuser_width) + ["tlast"] * port.tlast
    missing = [f"{port.name}_{signal}" for signal in wanted if getattr(bus, signal, None) is None]
    if missing:
        raise AttributeError(f"{dut._name} has no {', '.join(missing)} (manifest port {port.name})")
    driver = AxiStreamSource if port.direction == "in" else AxiStreamSink
    return driver(bus, clock, reset, byte_lanes=1)


def expected_tokens(events, index_width: int) -> list[Token]:
    """The model's sink log as scoreboard tokens: data (index, payload), frame ends (payload, tlast).

    The model counts indices without bound; ``tuser`` carries them modulo ``2^index_width``.
    """
    mask = (1 << index_width) - 1
    tokens = []
    for event in events:
        if event[0] == "data":
            tokens.append(Token(event[1] & mask, event[2], False))
        else:
            tokens.append(Token(None, event[1][1], True))
    return tokens


class NetworkBench:
    """Sources, sinks, scoreboard and watchdog around a generated top (names from the manifest)."""

    def __init__(self, dut, config):
        self.dut, self.config = dut, config
        manifest = config["manifest"]
        self.index_width = manifest["index_width"]
        codes = read_manifest(manifest)
        self.data_kind, self.message_kind, self.eos_kind = (codes.code(kind) for kind in BeatKind)
        rng = random.Random(config["seed"])
        busy = config["pause"]
        self.ports = {port.node: port for port in (*codes.sources, *codes.sinks)}
        self.sources = {port.node: bind(dut, port, dut.clk, dut.rst) for port in codes.sources}
        self.sinks = {port.node: bind(dut, port, dut.clk, dut.rst) for port in codes.sinks}
        self.beats = HandshakeCounter(dut.clk, {node: driver.bus for node, driver in
                                                (*self.sources.items(), *self.sinks.items())})
        if busy:
            for driver in [*self.sources.values(), *self.sinks.values()]:
                driver.set_pause_generator(_pauses(rng, busy))
        self.scoreboard = Scoreboard()
        self.finished: set[str] = set()
        credit = manifest["mode"] == "credit"  # in-band edges have no control channel
        # sfdf.hdl.top: edge e is the submodule edge_<e>, its data channel q and control channel qc
        edges = {name: getattr(dut.core, f"edge_{name}") for name in manifest["edges"]}
        self.channels = {name: (edge.q, edge.qc if credit else None) for name, edge in edges.items()}
        self.watchdog = DeadlockWatchdog(dut.clk, self.levels, config["watchdog_cycles"],
                                         busy=lambda: len(self.finished) < len(self.sinks),
                                         progress=config.get("progress_file"))

    def levels(self) -> dict[str, int]:
        """Every channel's level (data, control) and the beats through each port. A channel's level
        counts the tokens its receiver holds in an offer register (hdl/offer.py; a channel built with
        ``release`` has ``held``): they are in the channel for the analysis until the join consumes them."""
        levels = {f"{port} beats in": self.beats[port] for port in self.sources}
        for name, (data, control) in self.channels.items():
            levels[f"{name} data"] = _occupancy(data)
            if control is not None:
                levels[f"{name} control"] = _occupancy(control)
        levels.update({f"{port} beats out": self.beats[port] for port in self.sinks})
        return levels

    async def start(self) -> None:
        cocotb.start_soon(Clock(self.dut.clk, 10, unit="ns").start())
        self.dut.rst.value = 1
        for port in self.config["manifest"].get("flush_ports", {}).values():
            getattr(self.dut, port).value = 0
        await ClockCycles(self.dut.clk, 3)
        self.dut.rst.value = 0
        for edge, index in self.config.get("flush_after", {}).items():
            cocotb.start_soon(self.flush_after(edge, index))

    async def flush_after(self, edge: str, index: int) -> None:
        """Pulse ``flush_<edge>`` in the cycle after the sender pushed ``index`` (003 Fig. 2's adversary).

        The port flushes the tokens pushed before its cycle (:class:`sfdf.hdl.inband.InbandSender`), so this
        is the model's flush oracle firing right after that push.
        """
        channel, _ = self.channels[edge]
        port = getattr(self.dut, self.config["manifest"]["flush_ports"][edge])
        mask = (1 << self.config["manifest"]["index_bits_inside"]) - 1  # the token's index: its lowest field
        while True:
            await RisingEdge(self.dut.clk)
            await ReadOnly()
            pushed = int(channel.i_stream__valid.value) and int(channel.i_stream__ready.value)
            if pushed and int(channel.i_stream__payload.value) & mask == index:
                break
        await RisingEdge(self.dut.clk)
        port.value = 1
        await RisingEdge(self.dut.clk)
        port.value = 0

    def feed(self) -> None:
        """Every source's frames; the ``eos`` field of ``tuser`` marks the stream's last word."""
        for node, frames in self.config["inputs"].items():
            eos = self.ports[node].tuser_field("eos")
            for n, frame in enumerate(frames):
                last_frame = n == len(frames) - 1
                tuser = [int(last_frame and k == len(frame) - 1) << eos.lsb for k in range(len(frame))]
                self.sources[node].send_nowait(AxiStreamFrame(list(frame), tuser=tuser))

    async def collect(self, node: str) -> None:
        """Check ``node``'s beats until its EOS beat: ``tuser``'s ``kind`` and ``index`` fields (the manifest's
        ``tuser_fields``), a message as a frame end."""
        sink, port = self.sinks[node], self.ports[node]
        kind_field, index_field = port.tuser_field("kind"), port.tuser_field("index")
        while True:
            for tdata, tuser, tlast in frame_beats(await sink.recv(compact=False), port.tlast):
                kind, index = kind_field.get(tuser), index_field.get(tuser)
                if kind == self.eos_kind:
                    self.finished.add(node)
                    return
                if kind == self.message_kind:
                    self.scoreboard.check(node, Token(index, tdata, True))
                else:
                    self.scoreboard.check(node, Token(index, tdata, bool(tlast)))


@cocotb.test()
async def network_matches_model(dut) -> None:
    """Every sink's beats equal the reference model's log; EOS reaches every sink; no deadlock."""
    config = json.loads(Path(os.environ["SFDF_COSIM_CONFIG"]).read_text(encoding="utf-8"))
    bench = NetworkBench(dut, config)
    for node, events in config["expected"].items():
        bench.scoreboard.expect(node, expected_tokens(events, bench.index_width))
    await bench.start()
    bench.watchdog.start()  # a deadlock fails the test with every channel's level
    bench.feed()
    for task in [cocotb.start_soon(bench.collect(node)) for node in bench.sinks]:
        await task
    bench.watchdog.stop()
    bench.scoreboard.finish()
    cocotb.log.info("cosim: %d cycles, %s", bench.watchdog.cycles, bench.levels())


__all__ = ["DeadlockError", "NetworkBench", "bind", "expected_tokens", "network_matches_model"]

"""cocotb bench of a generated network: sources fed from the stimulus, every sink beat scoreboarded
against the reference model token by token, a deadlock watchdog on every channel's level.

Run by :func:`sfdf.cosim.network.run_network` through :func:`sfdf.cosim.runner.build_and_run`; the environment
variable ``SFDF_COSIM_CONFIG`` names the JSON file with the manifest, the stimulus and the expected
sink logs.
"""

from __future__ import annotations

import json
import os
import random
from pathlib import Path

import cocotb
from cocotb.clock import Clock
from cocotb.triggers import ClockCycles, ReadOnly, RisingEdge

from sfdf.cosim.axis import AxisBus, AxisSink, AxisSource
from sfdf.cosim.scoreboard import Scoreboard, Token
from sfdf.cosim.watchdog import DeadlockError, DeadlockWatchdog
from sfdf.hdl.manifest import BeatKind, read_manifest


def _pauses(rng: random.Random, busy: float):
    while True:
        yield int(rng.random() < busy)


def _occupancy(channel) -> int:
    """Tokens in a channel as the analysis counts them: its ``level`` plus those its reader holds."""
    return int(channel.level.value) + (int(channel.held.value) if hasattr(channel, "held") else 0)


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
        self.sources, self.sinks = {}, {}
        for port in manifest["ports"]:
            bus = AxisBus.from_prefix(dut, port["name"])
            if port["direction"] == "in":
                self.sources[port["node"]] = AxisSource(bus, dut.clk, dut.rst)
            else:
                self.sinks[port["node"]] = AxisSink(bus, dut.clk, dut.rst)
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
                                         busy=lambda: len(self.finished) < len(self.sinks))

    def levels(self) -> dict[str, int]:
        """Every channel's level (data, control) and the beats through each port. A channel's level
        counts the tokens its receiver holds in an offer register (hdl/offer.py; a channel built with
        ``release`` has ``held``): they are in the channel for the analysis until the join consumes them."""
        levels = {f"{port} beats in": s.count for port, s in self.sources.items()}
        for name, (data, control) in self.channels.items():
            levels[f"{name} data"] = _occupancy(data)
            if control is not None:
                levels[f"{name} control"] = _occupancy(control)
        levels.update({f"{port} beats out": s.count for port, s in self.sinks.items()})
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
        """Every source's frames; ``tuser[0]`` marks the stream's last word (end of stream)."""
        for node, frames in self.config["inputs"].items():
            for n, frame in enumerate(frames):
                last_frame = n == len(frames) - 1
                self.sources[node].send_nowait(frame, [int(last_frame and k == len(frame) - 1)
                                                       for k in range(len(frame))])

    async def collect(self, node: str) -> None:
        mask = (1 << self.index_width) - 1
        sink = self.sinks[node]
        while True:
            beat = await sink.recv()
            kind, index = beat.tuser >> self.index_width, beat.tuser & mask
            if kind == self.eos_kind:
                self.finished.add(node)
                return
            if kind == self.message_kind:
                self.scoreboard.check(node, Token(index, beat.tdata, True))
            else:
                self.scoreboard.check(node, Token(index, beat.tdata, bool(beat.tlast)))


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


__all__ = ["DeadlockError", "NetworkBench", "expected_tokens", "network_matches_model"]

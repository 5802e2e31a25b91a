"""cocotb bench of a generated SDF network (004): each source offered its firings' beats, every sink's
values scoreboarded against the SDF model firing by firing (``tdata`` the value, ``tuser``'s ``index`` the
firing), random pauses on both sides, a deadlock watchdog on every channel's level and every port; every
teleport message as the RTL handled it (:class:`MessageMonitor`), and those it sent and did not handle,
against the model's deliveries and pending messages. The cycle each sink firing was taken in and the
messages go to ``cycles_file``.

Run by :func:`sfdf.cosim.sdf.run_sdf_network`; ``SFDF_COSIM_CONFIG`` names the JSON file with the manifest,
the source words and the expected sink values.
"""

from __future__ import annotations

import json
import os
import random
from pathlib import Path

import cocotb
from cocotb.clock import Clock
from cocotb.simtime import get_sim_time
from cocotb.triggers import ClockCycles, ReadOnly, RisingEdge
from cocotbext.axi import AxiStreamFrame

from sfdf.cosim.network_tests import bind
from sfdf.cosim.scoreboard import Scoreboard, Token, frame_beats
from sfdf.cosim.watchdog import DeadlockWatchdog, HandshakeCounter
from sfdf.hdl.manifest import read_manifest


def _pauses(rng: random.Random, busy: float):
    while True:
        yield int(rng.random() < busy)


def _order(d: dict) -> tuple:
    return d["message"], d["to"], d["sent"]


class MessageMonitor:
    """The top's message outputs, read every cycle: each route's sent messages ``(n, target)`` and, when
    its queue hands over a target, those messages as handled at that firing (``before`` it downstream,
    ``after`` the one before it upstream; :class:`sfdf.hdl.sdf_message.MessageQueue`)."""

    def __init__(self, dut, routes: list[dict]):
        self.dut, self.routes = dut, routes
        self.sent: list[list[tuple[int, int]]] = [[] for _ in routes]
        self.done: list[dict] = []

    def port(self, r: int, suffix: str) -> int:
        return int(getattr(self.dut, self.routes[r]["ports"][suffix]).value)

    async def watch(self) -> None:
        while True:
            await RisingEdge(self.dut.clk)
            await ReadOnly()  # the outputs of the cycle that has just begun
            if int(self.dut.rst.value):  # the next edge resets: nothing this cycle shows happens
                continue
            for r, route in enumerate(self.routes):
                if self.port(r, "handled"):
                    target = self.port(r, "handled_target")
                    firing = target if route["side"] == "before" else target - 1
                    for n, t in self.sent[r]:
                        if t == target:
                            self.done.append(self.entry(r, n, firing))
                    self.sent[r] = [(n, t) for n, t in self.sent[r] if t != target]
                if self.port(r, "sent"):
                    self.sent[r].append((self.port(r, "sent_n"), self.port(r, "sent_target")))

    def entry(self, r: int, n: int, firing: int) -> dict:
        route = self.routes[r]
        return {"message": route["message"], "from": route["from"], "to": route["to"], "sent": n, "handled": firing,
                "side": route["side"]}

    def handled(self) -> list[dict]:
        return sorted(self.done, key=_order)

    def pending(self) -> list[dict]:
        """Messages sent and not handled, each at the firing it is due (what ``sfdf simulate`` reports)."""
        return sorted((self.entry(r, n, t if self.routes[r]["side"] == "before" else t - 1)
                       for r, sent in enumerate(self.sent) for n, t in sent), key=_order)


@cocotb.test()
async def sdf_network_matches_model(dut) -> None:
    """Every sink's values are the model's, at the firings the model gives them, every source beat is taken
    (else the watchdog reports the deadlock); then nothing more comes."""
    config = json.loads(Path(os.environ["SFDF_COSIM_CONFIG"]).read_text(encoding="utf-8"))
    manifest = read_manifest(config["manifest"])
    mask = (1 << manifest.index_width) - 1
    sources = {p.node: bind(dut, p, dut.clk, dut.rst) for p in manifest.sources}
    sinks = {p.node: (bind(dut, p, dut.clk, dut.rst), p) for p in manifest.sinks}
    rng = random.Random(config["seed"])
    if config["pause"]:
        for driver in [*sources.values(), *(sink for sink, _ in sinks.values())]:
            driver.set_pause_generator(_pauses(rng, config["pause"]))
    beats = HandshakeCounter(dut.clk, {node: driver.bus for node, driver in sources.items()}
                             | {node: sink.bus for node, (sink, _) in sinks.items()})
    # sfdf.hdl.sdf_top: the network is the submodule network, edge e its channel edge_<e>
    channels = {name: getattr(dut.core.network, f"edge_{name}") for name in manifest.json["edges"]}

    def levels() -> dict[str, int]:
        return ({f"{n} beats": beats[n] for n in (*sources, *sinks)}
                | {f"{name} items": int(c.level.value) for name, c in channels.items()})

    scoreboard = Scoreboard()
    for node, values in config["expected"].items():
        scoreboard.expect(node, [Token(f & mask, v, None) for f, v in enumerate(values, 1)])
    done: set[str] = set()

    def busy() -> bool:  # a source still has beats to give, or a sink values to take
        return len(done) < len(sinks) or any(beats[n] < len(config["words"][n]) for n in sources)

    watchdog = DeadlockWatchdog(dut.clk, levels, config["watchdog_cycles"], busy=busy,
                                progress=config.get("progress_file"))
    messages = MessageMonitor(dut, manifest.json["messages"])
    cocotb.start_soon(Clock(dut.clk, 10, unit="ns").start())
    dut.rst.value = 1
    cocotb.start_soon(messages.watch())  # from the first cycle out of reset: a node with initial items fires in it
    await ClockCycles(dut.clk, 3)
    dut.rst.value = 0
    watchdog.start()
    for node, words in config["words"].items():
        if words:
            sources[node].send_nowait(AxiStreamFrame(words))

    ended = {node: [] for node in sinks}  # the clock cycle (from reset's end) each sink firing was taken in
    began = get_sim_time("step")
    await RisingEdge(dut.clk)
    period = get_sim_time("step") - began

    async def collect(node: str) -> None:
        sink, port = sinks[node]
        index = port.tuser_field("index")
        for _ in config["expected"][node]:
            frame = await sink.recv(compact=False)
            ended[node].append((frame.sim_time_end - began) // period)
            for tdata, tuser, _last in frame_beats(frame, False):
                scoreboard.check(node, Token(index.get(tuser), tdata, None))
        done.add(node)

    for task in [cocotb.start_soon(collect(node)) for node in sinks]:
        await task
    while busy():  # every source beat taken (a deadlock stops the test here, with the levels)
        await RisingEdge(dut.clk)
    watchdog.stop()
    await ClockCycles(dut.clk, config["watchdog_cycles"])  # long enough for one more firing to end anywhere
    for node, (sink, port) in sinks.items():  # beyond the model's: recorded, and finish() fails
        while not sink.empty():
            for tdata, tuser, _last in frame_beats(sink.recv_nowait(compact=False), False):
                scoreboard.check(node, Token(port.tuser_field("index").get(tuser), tdata, None))
    scoreboard.finish()
    handled, pending = messages.handled(), messages.pending()
    if config.get("cycles_file"):
        Path(config["cycles_file"]).write_text(json.dumps({"cycles": ended, "messages": handled, "pending": pending}))
    for what, got in (("deliveries", handled), ("pending", pending)):
        want = sorted(config[what], key=_order)
        wrong = next(((a, b) for a, b in zip(want, got, strict=False) if a != b), None)
        assert got == want, (f"RTL message {what} differ from the model's: {len(got)} against {len(want)}"
                             + (f"; first: RTL {wrong[1]}, model {wrong[0]}" if wrong else ""))
    cocotb.log.info("cosim: %d cycles, %s", watchdog.cycles, levels())


__all__ = ["MessageMonitor", "sdf_network_matches_model"]

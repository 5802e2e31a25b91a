"""The simulated device in this process: a :class:`~sfdf.sw.device.link.Link` over :class:`sfdf.sw.sim.fastsim.FastSim`.

Frame packets (:mod:`sfdf.sw.device.codec`) go in as whole frames per source, one harness call each; a step
runs the harness until enough frame ends reached every sink, and hands back every sink's beats as one
beats packet with the cycle of each beat, and the cycle at which each source took each frame's last
word (the harness records both). :class:`sfdf.sw.device.process.ProcessLink` serves one of these in a child
process, so that a crash of the model cannot take the caller down.
"""

from __future__ import annotations

import numpy as np

from sfdf.sw.sim.fastsim import FastSim

from .codec import Codec, read_packet
from .link import StepResult

__all__ = ["RESET_CYCLES", "SimLink"]

#: Cycles with reset high when a simulated device starts.
RESET_CYCLES = 4


class SimLink:
    """The simulated device in this process: frame packets in, beats packets out (:mod:`sfdf.sw.device.codec`).

    Parameters
    ----------
    sim : FastSim
        The harness, out of reset; the link closes it.
    codec : Codec
        Of the same manifest.
    """

    def __init__(self, sim: FastSim, codec: Codec):
        self.sim = sim
        self.codec = codec
        self._reported = [0] * len(codec.sources)
        self.pid: int | None = None

    def push(self, packets: bytes) -> None:
        """Queue every frame packet of ``packets``; one harness call per source port.

        Raises
        ------
        ValueError
            The bytes are not whole frame packets (nothing is queued).
        """
        words: list[list[bytes]] = [[] for _ in self.codec.sources]
        flags: list[list[np.ndarray]] = [[] for _ in self.codec.sources]
        at = 0
        while at < len(packets):
            packet, used = read_packet(packets, self.codec, at)
            if packet is None or isinstance(packet, list):
                raise ValueError(f"push: bytes {at}..{len(packets)} are not a whole frame packet")
            last = np.zeros(packet.count, dtype=np.uint8)
            last[-1] = 1 | (2 if packet.end_of_stream else 0)  # tlast, tuser[0]
            words[packet.port.number].append(packet.words)
            flags[packet.port.number].append(last)
            at += used
        for number, (data, marks) in enumerate(zip(words, flags, strict=True)):
            if data:
                self.sim.push_bytes(number, b"".join(data), np.concatenate(marks).tobytes())

    def step(self, max_cycles: int, frames: int) -> StepResult:
        """Run until ``frames`` frame ends reached every sink, or ``max_cycles`` (:meth:`sfdf.sw.device.link.Link.step`)."""
        run = self.sim.run(max_cycles, until_messages=frames)
        packets, beat_cycles = [], []
        for port in self.codec.sinks:
            raw = np.frombuffer(self.sim.read_bytes(port.number), dtype=np.uint8).reshape(-1, port.beat_bytes + 8)
            packets.append(self.codec.pack_beats(port.number, raw[:, :port.beat_bytes].tobytes()))
            beat_cycles.append(np.ascontiguousarray(raw[:, port.beat_bytes:]).view("<u8").ravel().tolist())
        counters = self.sim.counters()
        frame_ends = []
        for i, port in enumerate(self.codec.sources):
            done = counters[port.node]["frames"]
            frame_ends.append([self.sim.frame_end_cycle(i, k) for k in range(self._reported[i], done)])
            self._reported[i] = done
        return StepResult(cycles=run.cycles, reason=run.reason, now=counters["cycles"], packets=packets,
                          beat_cycles=beat_cycles, frame_ends=frame_ends,
                          last_accept=max(counters[p.node]["last_accept"] for p in self.codec.sources))

    def set_pause(self, port: str, probability: float, seed: int, *, sink: bool) -> None:
        """Back-pressure at sink ``port`` or idle cycles at source ``port`` (:meth:`FastSim.set_pause`)."""
        self.sim.set_pause(port, probability, seed, sink=sink)

    def close(self) -> None:
        self.sim.close()

"""A device session of an SDF network (004): firings in, every sink's values out, over the same
:class:`~sfdf.sw.device.link.Link` as :class:`sfdf.sw.device.session.Device`.

An SDF network has no frames: a source beat is one firing (its word, which the SDF test kernel does not
read), a sink beat one firing's value, ``tuser``'s ``index`` the firing (docs/teleport.md, "In hardware").
:meth:`SDFDevice.fire` queues firings of the sources; :meth:`SDFDevice.run` runs the device until every
queued firing has been taken and nothing has moved for the network's quiet bound (twice its longest
firing, as the cosim's watchdog: then the self-timed execution has stopped where the model's run with
the same capacities stops), and returns each sink's new values. A sink beat whose firing is not the
next one raises :class:`~sfdf.sw.device.results.ProtocolError`; firings still not taken after
``timeout_cycles`` raise :class:`~sfdf.sw.device.results.FrameTimeout` (the capacities deadlock), with
the values that came before in its ``values``. :attr:`SDFDevice.cycles` keeps the cycle each value came
out at (throughput, bench/fhr.py).

    with open_device("out/fhr.json") as device:     # an SDF manifest gives an SDFDevice
        device.fire({"antenna": words})             # or device.fire(5120): the antenna's hopping input
        values = device.run()                       # {"out": [...]}
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence

from sfdf.gen.model import Node
from sfdf.gen.sdf.kernels import source_words
from sfdf.hdl.sdf_manifest import quiet_cycles

from .codec import Codec
from .link import Link, LinkDown
from .results import DeviceDied, DeviceError, FrameTimeout, ProtocolError

__all__ = ["SDFDevice"]

#: Cycles a step runs the device for.
_STEP = 4096


class SDFDevice:
    """An SDF network behind ``link`` (module docstring); a context manager that closes the link."""

    def __init__(self, codec: Codec, link: Link, manifest: Mapping, timeout_cycles: int):
        self.codec, self.link, self.timeout_cycles = codec, link, timeout_cycles
        self.quiet = quiet_cycles(manifest)
        mask = (1 << manifest["index_width"]) - 1
        self._mask = mask
        self._batches = 0                    # firing batches queued (one packet per source each)
        self._taken = [0] * len(codec.sources)  # batches each source has taken whole
        self._fired = {p.node: 0 for p in codec.sinks}  # sink firings seen
        self.cycles: dict[str, list[int]] = {p.node: [] for p in codec.sinks}  # the cycle of each value, every run
        self._now = 0
        self._nodes = manifest["nodes"]
        self._queued = {p.node: 0 for p in codec.sources}  # firings queued per source

    def __enter__(self):
        return self

    def __exit__(self, *exc) -> None:
        self.close()

    def fire(self, words: Mapping[str, Sequence[int]] | Sequence[int] | int) -> None:
        """Queue firings: ``{source: words}``, one word per firing, for every source (or the words of the
        only source); or ``N``: the next ``N`` words of every source's default stimulus
        (:func:`sfdf.gen.sdf.kernels.source_words`: the radio's antenna hops), as the cosim feeds them."""
        if isinstance(words, int):
            words = {p.node: self._default(p.node, words) for p in self.codec.sources}
        by_source = words if isinstance(words, Mapping) else {None: words}
        if len(by_source) != len(self.codec.sources) or any(len(w) == 0 for w in by_source.values()):
            raise DeviceError(f"{self.codec.name}: give at least one firing's word for each source "
                              f"({', '.join(p.node for p in self.codec.sources)})")
        packets = b"".join(self.codec.pack_frame(self._batches, list(w), source) for source, w in by_source.items())
        try:
            self.link.push(packets)
        except LinkDown as exc:
            raise DeviceDied(f"{self.codec.name}: the device is gone ({exc})") from None
        self._batches += 1
        for source, w in by_source.items():
            self._queued[source or self.codec.sources[0].node] += len(w)

    def _default(self, source: str, count: int) -> list[int]:
        spec = self._nodes[source]
        node = Node(source, kernel=spec["kernel"], params=spec["params"])
        return source_words(node, self._queued[source] + count)[self._queued[source]:]

    def run(self, timeout_cycles: int | None = None) -> dict[str, list[int]]:
        """Run until the queued firings are taken and the network has stopped; each sink's new values."""
        budget = self.timeout_cycles if timeout_cycles is None else timeout_cycles
        values = {p.node: [] for p in self.codec.sinks}
        start, last_move = self._now, self._now
        while True:
            try:
                step = self.link.step(_STEP, 0)
            except LinkDown as exc:
                raise DeviceDied(f"{self.codec.name}: the device is gone ({exc})") from None
            self._now = step.now
            for n, ends in enumerate(step.frame_ends):
                self._taken[n] += len(ends)
            if step.last_accept:
                last_move = max(last_move, step.last_accept)
            for port, packet, cycles in zip(self.codec.sinks, step.packets, step.beat_cycles, strict=True):
                self.cycles[port.node].extend(cycles)
                for beat in self.codec.unpack_beats(packet):
                    self._fired[port.node] += 1
                    if beat.index != self._fired[port.node] & self._mask:
                        raise ProtocolError(f"{self.codec.name}: sink {port.node} sent firing {beat.index}, expected "
                                            f"{self._fired[port.node] & self._mask}")
                    values[port.node].append(beat.tdata)
                if cycles:
                    last_move = max(last_move, cycles[-1])
            taken = all(t == self._batches for t in self._taken)
            if taken and self._now - last_move >= self.quiet:
                return values
            if self._now - start > budget:
                error = FrameTimeout(f"{self.codec.name}: firings not taken within {budget} cycles (the capacities "
                                     "deadlock: sfdf check names the edge)")
                error.values = values  # what came before: nothing is lost
                raise error

    def close(self) -> None:
        self.link.close()

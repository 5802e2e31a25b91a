"""The manifest of an SDF network's hardware (004): the SFDF manifest's contract (:mod:`sfdf.hdl.manifest`:
ports, beat kinds, nodes, edges; read by :func:`sfdf.hdl.manifest.read_manifest`) with ``mode = "sdf"``,
each edge's rates per phase and initial items, each node's phases and repetitions, and the messages.

Keys (docs/architecture.md, "The manifest"): ``edges.<e>`` = ``{from, to, capacity, initial, push, pop,
peek, width}`` (``push``/``pop``/``peek`` one entry per phase of the sender or receiver),
``nodes.<n>`` = ``{kernel, params, phases, repetitions, inputs, outputs}``, ``messages`` = one entry per
route (a ``[[message]]``'s receiver, in order; the top's ``msg<r>_*`` outputs): ``{message, from, to,
direction, side, latency: [min, max], queue_depth, targets: {first, period, step}, ports}``
(:mod:`sfdf.gen.sdf.credits`: the receiver's firing each sender firing's message acts from, and the
depth of the receiver's queue); ``longest_firing``: the most cycles a firing's read and write stages take.
"""

from __future__ import annotations

import json
import os
from pathlib import Path

from sfdf.gen.sdf.credits import target_table
from sfdf.gen.sdf.messages import DOWNSTREAM
from sfdf.gen.sdf.pipeline import longest_firing
from sfdf.gen.sdf.rates import edge_rates, phases, repetitions

from .axis import axis_ports
from .manifest import BeatKind, Field, sink_tuser_fields
from .sdf_top import MESSAGE_OUTPUTS, SDF_WORD

__all__ = ["build_sdf_manifest", "quiet_cycles", "write_sdf_manifest"]


def build_sdf_manifest(network, top) -> dict:
    """The manifest of ``top`` (a :class:`~sfdf.hdl.sdf_top.SDFTop`) for the SDF ``network``."""
    count, reps = phases(network), repetitions(network)
    kernels = {n.name: n.kernel or "sdf_test" for n in network.nodes}  # docs/semantics.md, "SDF networks"
    ports = []
    for port in axis_ports(top):
        tuser = [] if port.direction == "in" else sink_tuser_fields(network.index_width)
        ports.append({
            "name": port.name, "node": port.member, "kernel": kernels[port.member], "direction": port.direction,
            "tdata_width": port.tdata_width, "tuser_width": port.tuser_width, "tlast": port.tlast,
            "fields": [Field("word" if port.direction == "in" else "v", 0, port.tdata_width).to_json()],
            "tuser_fields": [f.to_json() for f in tuser],
        })
    nodes = {n.name: {"kernel": kernels[n.name], "params": dict(n.params), "phases": count[n.name],
                      "repetitions": reps[n.name], "inputs": [e.name for e in network.in_edges(n.name)],
                      "outputs": [e.name for e in network.out_edges(n.name)]} for n in network.nodes}
    edges = {}
    for e in network.edges:
        push, pop, peek = edge_rates(e, count)
        edges[e.name] = {"from": e.src, "to": e.dst, "capacity": e.capacity, "initial": e.initial,
                         "push": list(push), "pop": list(pop), "peek": list(peek), "width": SDF_WORD}
    core = top.core
    messages = []
    for r, route in enumerate(core.routes):
        table = target_table(core.deliveries, route)
        messages.append({
            "message": route.message, "from": route.sender, "to": route.receiver, "direction": route.direction,
            "side": "before" if route.direction == DOWNSTREAM else "after", "latency": list(route.latency),
            "queue_depth": core.depths[route],
            "targets": {"first": list(table.first), "period": table.period, "step": table.step},
            "ports": {suffix: f"msg{r}_{suffix}" for suffix in MESSAGE_OUTPUTS},
        })
    return {
        "name": network.name, "top": network.name, "clock": "clk", "reset": "rst", "mode": "sdf",
        "index_width": network.index_width, "data_width": SDF_WORD, "longest_firing": longest_firing(network),
        "beat_kinds": {kind.name.lower(): kind.value for kind in BeatKind},
        "ports": ports, "nodes": nodes, "edges": edges, "messages": messages, "kernel_sources": [],
    }


def write_sdf_manifest(path: str | os.PathLike, network, top) -> Path:
    """Write :func:`build_sdf_manifest` to ``path``; returns it."""
    path = Path(path)
    path.write_text(json.dumps(build_sdf_manifest(network, top), indent=2) + "\n")
    return path


def quiet_cycles(manifest) -> int:
    """Cycles without a sink beat, once every firing offered is taken, after which the network has stopped
    (the fast device's quiet bound; the cosim's watchdog adds the drivers' pauses): twice the manifest's
    ``longest_firing`` and a margin."""
    return 64 + 2 * manifest["longest_firing"]

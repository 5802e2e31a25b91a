"""The manifest: the contract between the generated hardware and everything downstream, written and read here.

``<name>.json`` beside ``<name>.v`` lists what cosim, sw and boards need and must never re-derive: the
AXI4-Stream ports with their ``tdata``/``tuser`` widths and fields, the beat kinds a sink writes, and
every capacity, threshold, interval and kernel constant the hardware was built with. Keys may be added,
never renamed (docs/architecture.md, "The manifest").

:func:`build_manifest` writes it from a :class:`~sfdf.hdl.top.NetworkTop`; :func:`read_manifest`
reads it back as a :class:`Manifest` whose :class:`Port` objects every reader shares.
"""

from __future__ import annotations

import json
import os
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path

from amaranth.lib import enum
from amaranth.lib.wiring import In, Out

from sfdf.gen.contract import UserKernel
from sfdf.gen.kernels import (
    BUILTIN,
    MESSAGE_WIDTH,
    builtin,
    kernel_params,
    result_width,
    word_width,
)

from .axis import AxisSignature, axis_ports
from .channels import lutram_rows
from .kernels import KERNEL_INPUT_CYCLES

__all__ = [
    "BeatKind", "Field", "Manifest", "ManifestError", "Port", "build_manifest", "port_members",
    "read_manifest", "sink_tuser_fields", "write_manifest",
]


class BeatKind(enum.IntEnum, shape=2):
    """What a sink beat carries: ``tuser``'s ``kind`` field (:func:`sink_tuser_fields`).

    ``DATA``: a data token, ``tdata`` its payload; ``MESSAGE``: a user control message (a frame end,
    ``tdata`` the frame number mod ``2^payload_width``); ``EOS``: the end of the stream.
    """

    DATA = 0
    MESSAGE = 1
    EOS = 2


class ManifestError(ValueError):
    """A manifest that lacks a key or has one of the wrong type; the message names it."""


@dataclass(frozen=True)
class Field:
    """Bits ``[lsb, lsb + width)`` of a value, named (a manifest ``fields`` or ``tuser_fields`` entry)."""

    name: str
    lsb: int
    width: int

    def get(self, value: int) -> int:
        """This field of ``value``."""
        return (value >> self.lsb) & ((1 << self.width) - 1)

    def to_json(self) -> dict:
        return {"name": self.name, "lsb": self.lsb, "width": self.width}


@dataclass(frozen=True)
class Port:
    """An AXI4-Stream port of the manifest (``ports`` entry); ``number``: its position among its direction."""

    name: str
    node: str
    kernel: str
    direction: str
    number: int
    tdata_width: int
    tuser_width: int
    tlast: bool
    fields: tuple[Field, ...]
    tuser_fields: tuple[Field, ...]

    @property
    def tdata_bytes(self) -> int:
        return (self.tdata_width + 7) // 8

    @property
    def variance_result(self) -> bool:
        """The port's data is a variance result (fields ``n``, ``sum``, ``sum_sq``; 000 Fig. 1), which the host
        checks against numpy instead of the reference model."""
        return {f.name for f in self.fields} == {"n", "sum", "sum_sq"}

    @property
    def tuser_bytes(self) -> int:
        return (self.tuser_width + 7) // 8

    @property
    def beat_bytes(self) -> int:
        """One beat in a beats packet: tdata, tuser, tlast byte."""
        return self.tdata_bytes + self.tuser_bytes + 1

    def tuser_field(self, name: str) -> Field:
        for f in self.tuser_fields:
            if f.name == name:
                return f
        raise KeyError(f"port {self.name} has no tuser field {name!r}")


@dataclass(frozen=True)
class Manifest:
    """A manifest as read (:func:`read_manifest`).

    Members
    -------
    json : Mapping
        The whole object, for the keys not given a member here (``nodes``, ``edges``, ``mode``, ...).
    name, top : str
        The network and its Verilog module.
    index_width, payload_width : int
        Bits of a computation index and of a user message's payload.
    kinds : Mapping[int, BeatKind]
        The beat kinds by their ``tuser`` code, as this manifest lists them.
    sources, sinks : tuple of Port
        The ``in`` and ``out`` ports, in manifest order.
    """

    json: Mapping
    name: str
    top: str
    index_width: int
    payload_width: int
    kinds: Mapping[int, BeatKind]
    sources: tuple[Port, ...]
    sinks: tuple[Port, ...]

    @classmethod
    def from_json(cls, data: Mapping) -> Manifest:
        """The manifest of the JSON object ``data``.

        Raises
        ------
        ManifestError
            A key is missing or names no beat kind.
        """
        try:
            kinds = {int(code): BeatKind[kind.upper()] for kind, code in data["beat_kinds"].items()}
            ports = {"in": [], "out": []}
            for entry in data["ports"]:
                group = ports[entry["direction"]]
                group.append(Port(
                    entry["name"], entry["node"], entry.get("kernel", "random_filter"), entry["direction"],
                    len(group), entry["tdata_width"], entry["tuser_width"], bool(entry.get("tlast", True)),
                    tuple(Field(f["name"], f["lsb"], f["width"]) for f in entry.get("fields", ())),
                    tuple(Field(f["name"], f["lsb"], f["width"]) for f in entry.get("tuser_fields", ()))))
            return cls(data, data["name"], data.get("top", data["name"]), data["index_width"],
                       data.get("payload_width", 16), kinds, tuple(ports["in"]), tuple(ports["out"]))
        except KeyError as error:
            raise ManifestError(f"manifest {data.get('name', '?')!r}: no {error} key or beat kind") from None

    def code(self, kind: BeatKind) -> int:
        """The ``tuser`` code of ``kind`` in this manifest."""
        return next(code for code, k in self.kinds.items() if k is kind)


def read_manifest(source: Manifest | Mapping | str | os.PathLike) -> Manifest:
    """A :class:`Manifest` from a path to ``<name>.json``, its JSON object, or a manifest already read."""
    if isinstance(source, Manifest):
        return source
    if not isinstance(source, Mapping):
        source = json.loads(Path(source).read_text())
    return Manifest.from_json(source)


def sink_tuser_fields(index_width: int) -> list[Field]:
    """A sink's ``tuser`` as :class:`~sfdf.hdl.top.NetworkTop` drives it: the index low, the :class:`BeatKind` above."""
    return [Field("index", 0, index_width), Field("kind", index_width, BeatKind.as_shape().width)]


def port_members(network) -> dict:
    """The AXI4-Stream members of a network's top (:class:`~sfdf.hdl.top.NetworkTop`, and the baseline
    with its ports): ``In(AxisSignature(word_width, 1))`` per source (``tuser`` = ``eos``) and
    ``Out(AxisSignature(result_width, ...))`` per sink with the ``tuser`` of :func:`sink_tuser_fields`
    (:func:`sfdf.gen.kernels.word_width`, :func:`sfdf.gen.kernels.result_width`)."""
    tuser = sum(f.width for f in sink_tuser_fields(network.index_width))
    members = {s: In(AxisSignature(word_width(network, s), 1)) for s in network.sources}
    members.update({s: Out(AxisSignature(result_width(network, s), tuser)) for s in network.sinks})
    return members


def build_manifest(network, top) -> dict:
    """The manifest of ``top`` (a :class:`~sfdf.hdl.top.NetworkTop`) for the resolved ``network``, with what
    its elaboration plan decided (``top.plan``, :class:`sfdf.hdl.plan.NetworkPlan`)."""
    plan = top.plan
    iw = network.index_width
    ports = []
    for port in axis_ports(top):
        kernel = kernel_name(network.node_by_name[port.member].kernel)
        tuser = [Field("eos", 0, 1)] if port.direction == "in" else sink_tuser_fields(iw)
        found = builtin(network.node_by_name[port.member].kernel)
        if port.direction == "out" and found and found.result_fields:
            fields = [Field(name, lsb, width) for name, (lsb, width) in
                      sorted(found.result_fields(iw).items(), key=lambda item: -item[1][0])]
        else:
            fields = [Field(found.word_field if found and port.direction == "in" else "data", 0, port.tdata_width)]
        ports.append({
            "name": port.name, "node": port.member, "kernel": kernel,
            "direction": port.direction, "tdata_width": port.tdata_width, "tuser_width": port.tuser_width,
            "tlast": port.tlast, "fields": [f.to_json() for f in fields], "tuser_fields": [f.to_json() for f in tuser],
        })
    nodes = {}
    for node in network.nodes:
        outputs = len(network.out_edges(node.name)) or 1
        found = builtin(node.kernel)
        nodes[node.name] = {
            "kernel": kernel_name(node.kernel), "params": dict(node.params), "ii": node.ii,
            "contract": _contract(plan.nodes[node.name]),
            "inputs": [e.name for e in network.in_edges(node.name)],
            "outputs": [e.name for e in network.out_edges(node.name)] or ["m_axis"],
            **(found.facts(kernel_params(node.kernel, node.params), outputs) if found else {}),
            "single_stage": plan.nodes[node.name].single_stage,
            "offer_slots": plan.nodes[node.name].offer_slots,
        }
    edges = {e.name: {"from": e.src, "to": e.dst, "capacity": e.capacity, "control_capacity": e.control_capacity,
                      "threshold": e.threshold, "interval": e.interval, "output_buffer": e.output_buffer,
                      "width": e.width, "heartbeat_in_head": plan.edges[e.name].heartbeat_in_head}
             for e in network.edges}
    credit = {"live_credit": network.live_credit} if network.mode == "credit" else {}
    return {
        "name": network.name, "top": network.name, "clock": "clk", "reset": "rst", "mode": network.mode,
        **credit, "index_width": iw, "data_width": network.data_width, "payload_width": MESSAGE_WIDTH,
        "index_bits_inside": plan.index_width, "watermark_window": plan.window,
        "platform": {**plan.traits.to_json(), "lutram_max_rows": lutram_rows(plan.traits)},
        "beat_kinds": {kind.name.lower(): kind.value for kind in BeatKind},
        "ports": ports, "nodes": nodes, "edges": edges,
        "flush_ports": {e: f"flush_{e}" for e in plan.flush_edges},
        "kernel_sources": kernel_sources(network),
        "contract_violation": contract_promises(network),
    }


def contract_promises(network) -> list[str]:
    """The nodes whose user kernels promise ``may_filter = false`` or take messages as beats (one token per
    index per output, a message's result included), in node order: the bits of the top's
    ``contract_violation`` output (:class:`sfdf.hdl.top.NetworkTop`)."""
    return [node.name for node in network.nodes
            if isinstance(node.kernel, UserKernel) and (node.may_filter is False or node.messages)]


def kernel_name(kernel) -> str:
    """A kernel as the manifest names it: a built-in's name, ``verilog:<module>`` or ``amaranth:<module>:<Class>``."""
    if isinstance(kernel, UserKernel):
        return f"{kernel.language}:{kernel.module}"
    return kernel or "random_filter"


def kernel_sources(network) -> list[str]:
    """The Verilog files of the network's user kernels, by the names ``sfdf generate`` copies them under, beside
    the generated Verilog (one per file, in node order)."""
    files = []
    for node in network.nodes:
        if isinstance(node.kernel, UserKernel) and node.kernel.file and Path(node.kernel.file).name not in files:
            files.append(Path(node.kernel.file).name)
    return files


def _contract(node) -> dict:
    """How node plan ``node`` runs its kernel (docs/kernels.md): what it is, its golden, timing and ports."""
    kernel = node.kernel
    user = isinstance(kernel, UserKernel)
    entry = {
        "kind": kernel.language if user else "builtin",
        "module": kernel.module if user else kernel_name(kernel),
        "golden": kernel.golden if user else BUILTIN[kernel_name(kernel)].golden,
        # the kernel's own cycles; the node's adds the register that offers a user kernel its beats
        "latency": node.latency - KERNEL_INPUT_CYCLES * user, "node_latency": node.latency,
        "may_filter": node.may_filter, "features": dict(node.features),
        "inputs": [[name, width] for name, width in node.ports.inputs],
        "outputs": [[name, width] for name, width in node.ports.outputs],
    }
    if user:
        entry["folder"] = kernel.folder
        if kernel.file:
            entry["file"] = Path(kernel.file).name
    return entry


def write_manifest(path: str | os.PathLike, network, top) -> Path:
    """Write :func:`build_manifest` to ``path``; returns it."""
    path = Path(path)
    path.write_text(json.dumps(build_manifest(network, top), indent=2) + "\n")
    return path

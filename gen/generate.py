"""``sfdf generate``: a resolved, checked network -> ``<name>.v`` and its manifest ``<name>.json``.

The manifest is the contract with everything downstream (DESIGN.md): port names, widths, the packing
of ``tdata``/``tuser``, and every capacity, threshold, interval and kernel constant the hardware was
built with. cosim and sw read it; they never re-derive hardware facts.
"""

from __future__ import annotations

import json
from pathlib import Path

from .analysis import check
from .errors import UserError
from .kernels import variance_fields

__all__ = ["UnsafeNetwork", "build_manifest", "generate"]


class UnsafeNetwork(Exception):
    """The analysis found violations; ``report`` says which."""

    def __init__(self, report):
        super().__init__(f"network {report.network.name!r} is not deadlock-free")
        self.report = report


def _check_ports(network) -> None:
    for node in network.nodes:
        if len(network.nodes) > 1 and not network.in_edges(node.name) and not network.out_edges(node.name):
            raise UserError(network.source, f'node "{node.name}"', "has no edges, so it would be both a source "
                            "and a sink port", "connect it or remove it")


def build_manifest(network, top) -> dict:
    """The manifest of ``top`` (an :class:`hdl.top.NetworkTop`) for the resolved ``network``."""
    from sfdf.gen.refmodel.kernels import lfsr_seed
    from sfdf.hdl.axis import axis_ports
    from sfdf.hdl.kernels import filter_threshold
    from sfdf.hdl.top import PAYLOAD_WIDTH, sink_tuser_fields

    iw, dw = network.index_width, network.data_width
    ports = []
    for port in axis_ports(top):
        kernel = network.node_by_name[port.member].kernel
        if port.direction == "in":
            tuser = [{"name": "eos", "lsb": 0, "width": 1}]
        else:
            tuser = sink_tuser_fields(iw)
        if kernel == "variance_join":
            fields = [{"name": name, "lsb": lsb, "width": width} for name, (lsb, width) in
                      sorted(variance_fields(iw).items(), key=lambda item: -item[1][0])]
        else:
            fields = [{"name": "pixel" if kernel == "variance_source" else "data", "lsb": 0,
                       "width": port.tdata_width}]
        ports.append({
            "name": port.name, "node": port.member, "kernel": kernel or "random_filter",
            "direction": port.direction, "tdata_width": port.tdata_width, "tuser_width": port.tuser_width,
            "tlast": port.tlast, "fields": fields, "tuser_fields": tuser,
        })
    nodes = {}
    for node in network.nodes:
        outputs = len(network.out_edges(node.name)) or 1
        rate = node.params.get("rate", 0.0)
        nodes[node.name] = {
            "kernel": node.kernel or "random_filter", "params": dict(node.params), "ii": node.ii,
            "inputs": [e.name for e in network.in_edges(node.name)],
            "outputs": [e.name for e in network.out_edges(node.name)] or ["m_axis"],
            "filter_threshold": filter_threshold(rate),
            "lfsr_seeds": [lfsr_seed(node.params.get("seed", 1), j) for j in range(outputs)],
        }
    edges = {e.name: {"from": e.src, "to": e.dst, "capacity": e.capacity, "control_capacity": e.control_capacity,
                      "threshold": e.threshold, "interval": e.interval, "output_buffer": e.output_buffer,
                      "width": e.width} for e in network.edges}
    return {
        "name": network.name, "top": network.name, "clock": "clk", "reset": "rst", "mode": network.mode,
        "index_width": iw, "data_width": dw, "payload_width": PAYLOAD_WIDTH,
        "beat_kinds": {"data": 0, "message": 1, "eos": 2},
        "ports": ports, "nodes": nodes, "edges": edges,
        "flush_ports": {e: f"flush_{e}" for e in top.flush_edges},
    }


def generate(network, outdir, allow_unsafe: bool = False, report=None,
             flush_ports: bool = False) -> tuple[Path, Path]:
    """Write ``<outdir>/<name>.v`` and ``<outdir>/<name>.json``; refuse an unsafe network.

    ``report``: the :func:`gen.analysis.check` report of ``network`` when the caller has it already.
    ``flush_ports``: verification only, a ``flush_<edge>`` input per in-band output buffer
    (:class:`hdl.top.NetworkTop`), listed in the manifest's ``flush_ports``.

    Raises
    ------
    UnsafeNetwork
        The analysis found violations and ``allow_unsafe`` is false.
    UserError
        A node with no edges (it would be both a source and a sink port).
    """
    from sfdf.hdl.axis import axis_verilog
    from sfdf.hdl.top import NetworkTop

    report = report or check(network)
    if not report.deadlock_free and not allow_unsafe:
        raise UnsafeNetwork(report)
    resolved = report.network
    _check_ports(resolved)
    top = NetworkTop(resolved, flush_ports=flush_ports)
    verilog = axis_verilog(top, name=resolved.name, emit_src=False)
    out = Path(outdir)
    out.mkdir(parents=True, exist_ok=True)
    v_path, j_path = out / f"{resolved.name}.v", out / f"{resolved.name}.json"
    v_path.write_text(verilog)
    j_path.write_text(json.dumps(build_manifest(resolved, top), indent=2) + "\n")
    return v_path, j_path

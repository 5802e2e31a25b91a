"""``sfdf generate``: a resolved, checked network -> ``<name>.v`` and its manifest ``<name>.json``.

The last step of the pipeline before cosim, sw and boards: the analysis resolves and checks the
network, :class:`~sfdf.hdl.top.NetworkTop` elaborates it, and this module writes the Verilog with
AXI4-Stream port names beside the manifest (:mod:`sfdf.hdl.manifest`), the contract downstream.
"""

from __future__ import annotations

import shutil
from pathlib import Path

from sfdf.gen.analysis import check
from sfdf.gen.contract import UserKernel
from sfdf.gen.errors import UserError

from .axis import axis_verilog
from .contract import check_user_kernels
from .lint import verilator_config
from .manifest import write_manifest
from .plan import plan
from .sdf_manifest import write_sdf_manifest
from .sdf_top import SDFTop
from .top import NetworkTop

__all__ = ["UnsafeNetwork", "generate"]


class UnsafeNetwork(Exception):
    """The analysis found violations; ``report`` says which."""

    def __init__(self, report):
        super().__init__(f"network {report.network.name!r} is not deadlock-free")
        self.report = report


def _check_ports(network) -> None:
    for node in network.nodes:
        if not network.in_edges(node.name) and not network.out_edges(node.name):
            raise UserError(network.source, f'node "{node.name}"', "has no edges, so it would be both a source "
                            "and a sink port", "connect it or remove it")


def generate(network, outdir, allow_unsafe: bool = False, report=None,
             flush_ports: bool = False, platform=None) -> tuple[Path, Path]:
    """Write ``<outdir>/<name>.v``, its manifest ``<name>.json`` and its Verilator lint configuration
    ``<name>.vlt`` (:mod:`sfdf.hdl.lint`); refuse an unsafe network.

    ``report``: the :func:`sfdf.gen.analysis.check` report of ``network`` when the caller has it already.
    ``flush_ports``: verification only, a ``flush_<edge>`` input per in-band output buffer
    (:class:`~sfdf.hdl.top.NetworkTop`), listed in the manifest's ``flush_ports``.
    ``platform``: elaborate for a board's family (:class:`sfdf.hdl.dsp.FamilyOnly`; ``None``: generic,
    pipelined Verilog), as ``sfdf build`` does (an iCE40's nodes are unpipelined,
    :class:`sfdf.hdl.traits.PlatformTraits`); the network is planned for it once (:func:`sfdf.hdl.plan.plan`)
    and the manifest records the plan.

    An SDF network (004) becomes :class:`~sfdf.hdl.sdf_top.SDFTop` and the manifest of
    :mod:`sfdf.hdl.sdf_manifest`, refused when its bounded channels deadlock (:mod:`sfdf.gen.sdf.liveness`).

    Raises
    ------
    UnsafeNetwork
        The analysis found violations (an SDF network: it deadlocks) and ``allow_unsafe`` is false.
    UserError
        A node with no edges (it would be both a source and a sink port).
    """
    if network.is_sdf:
        return _generate_sdf(network, Path(outdir), allow_unsafe, platform)
    report = report or check(network)
    if not report.deadlock_free and not allow_unsafe:
        raise UnsafeNetwork(report)
    resolved = report.network
    _check_ports(resolved)
    planned = plan(resolved, platform, flush_ports=flush_ports)
    check_user_kernels(planned)
    for node in resolved.nodes:  # its copy beside the network's Verilog must not overwrite it
        if isinstance(node.kernel, UserKernel) and node.kernel.file and Path(node.kernel.file).name == f"{resolved.name}.v":
            raise UserError(resolved.source, f'node "{node.name}".kernel.verilog', f"{Path(node.kernel.file).name} is "
                            "the name of the network's own Verilog, which generate writes beside it",
                            "rename the kernel's file (or the network)")
    top = NetworkTop(resolved, plan=planned)
    verilog = axis_verilog(top, name=resolved.name, emit_src=False, platform=platform)
    out = Path(outdir)
    out.mkdir(parents=True, exist_ok=True)
    v_path, j_path = out / f"{resolved.name}.v", out / f"{resolved.name}.json"
    v_path.write_text(verilog)
    for node in resolved.nodes:  # a Verilog kernel's file goes beside, so that the folder builds on its own
        if isinstance(node.kernel, UserKernel) and node.kernel.file:
            shutil.copyfile(node.kernel.file, out / Path(node.kernel.file).name)
    (out / f"{resolved.name}.vlt").write_text(verilator_config(v_path.name))
    write_manifest(j_path, resolved, top)
    return v_path, j_path


class _SDFRefusal:
    """Why an SDF network is not generated, as :class:`UnsafeNetwork` reports it (``network``, ``summary_lines``)."""

    def __init__(self, network, line: str):
        self.network, self.line = network, line

    def summary_lines(self) -> list[str]:
        return [self.line]


def _generate_sdf(network, out: Path, allow_unsafe: bool, platform) -> tuple[Path, Path]:
    """:func:`generate` of an SDF network (004): a channel holds at least what one firing needs, the
    messages' latencies have a schedule (004's constrained scheduling, as ``sfdf schedule``) and the
    bounded channels are live with the receivers' message credits (:mod:`sfdf.gen.sdf.liveness`)."""
    from sfdf.gen.sdf.liveness import bounded_execution, firing_capacity
    from sfdf.gen.sdf.schedule import Unsatisfiable, constrained_schedule

    for e in network.edges:
        if e.capacity < (least := firing_capacity(network, e)):
            raise UserError(network.source, f'edge "{e.name}" capacity', f"is {e.capacity}, below the {least} items "
                            "one firing needs (its initial items, largest push and largest peek)",
                            f"make it at least {least}")
    if not allow_unsafe:
        try:
            constrained_schedule(network)
        except Unsatisfiable as exc:
            raise UnsafeNetwork(_SDFRefusal(network, f"{network.name}: {exc} (sfdf schedule shows it)")) from None
        run = bounded_execution(network)
        if not run.live:
            raise UnsafeNetwork(_SDFRefusal(network, run.deadlock_line(network.name)))
    _check_ports(network)
    top = SDFTop(network)
    verilog = axis_verilog(top, name=network.name, emit_src=False, platform=platform)
    out.mkdir(parents=True, exist_ok=True)
    v_path, j_path = out / f"{network.name}.v", out / f"{network.name}.json"
    v_path.write_text(verilog)
    (out / f"{network.name}.vlt").write_text(verilator_config(v_path.name))
    write_sdf_manifest(j_path, network, top)
    return v_path, j_path

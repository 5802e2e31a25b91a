"""The kernel contract (docs/kernels.md): a node's kernel, its ports, what it promises, and its golden.

A node's ``kernel`` is a built-in name (:data:`sfdf.gen.kernels.KERNELS`) or the user's own
(:class:`UserKernel`: a Verilog module or an Amaranth component, with a Python golden). Either way the
node wraps it unchanged: one computation is one beat on every input port and one on every output
port; the node does the indices, the join, credits, dummies and control messages around it.

This module is the one home of what the layers ask of a kernel: its ports (:func:`kernel_ports`: names
and widths, as the hardware's ``i_<edge>_*``/``o_<edge>_*`` and the golden's dict keys), whether it may
filter (:func:`filter_problem`, which ``filtering = false`` refuses), the optional features it takes
(``index``, ``last``, ``messages``) and its golden (:func:`make_golden`), which the reference model,
the cosim, the fast device and the Spark job's checks call.
"""

from __future__ import annotations

import importlib
import importlib.util
import inspect
import sys
from dataclasses import dataclass
from pathlib import Path

from sfdf.gen.errors import SpecError
from sfdf.gen.kernels import BUILTIN, kernel_input_width, kernel_output_width

__all__ = ["LANGUAGES", "KernelPorts", "UserKernel", "filter_problem", "golden_files", "import_beside", "kernel_features",
           "kernel_ports", "load_golden_class", "make_golden", "may_filter"]

#: A user kernel's hardware: the spec key that names it.
LANGUAGES = ("verilog", "amaranth")


@dataclass(frozen=True)
class UserKernel:
    """A user's kernel as the spec declares it: ``kernel = { verilog = ..., module = ..., golden = ... }``
    or ``kernel = { amaranth = "package.module:Class", golden = ... }``.

    Members
    -------
    language : {"verilog", "amaranth"}
    module : str
        The Verilog module's name, or the Amaranth component's ``"package.module:Class"``.
    file : str or None
        Verilog: the source file (absolute; ``generate`` copies it beside the generated Verilog).
    golden : str
        ``"module:Class"`` of the Python golden.
    folder : str
        The spec's folder: golden modules and Amaranth packages are looked up there first.
    """

    language: str
    module: str
    file: str | None
    golden: str
    folder: str

    def __str__(self) -> str:
        return f"{self.language} kernel {self.module}"


@dataclass(frozen=True)
class KernelPorts:
    """A node's kernel ports, as the hardware names them and the golden's dicts key them.

    Members
    -------
    inputs, outputs : tuple of (str, int)
        ``(key, width)`` per port in spec order: ``"i"``/``"o"`` for a single one (always at a source's
        input and a sink's output), else the edge's name.
    edges_in, edges_out : tuple of str
        The edges behind the ports (empty at a source's input, a sink's output).
    index_width : int
        The spec's ``index_width`` (``i_index``'s bits).
    data_width : int
        The network's payload width.
    """

    inputs: tuple[tuple[str, int], ...]
    outputs: tuple[tuple[str, int], ...]
    edges_in: tuple[str, ...]
    edges_out: tuple[str, ...]
    index_width: int
    data_width: int

    @property
    def input_names(self) -> tuple[str, ...]:
        return tuple(name for name, _ in self.inputs)

    @property
    def output_names(self) -> tuple[str, ...]:
        return tuple(name for name, _ in self.outputs)


def kernel_ports(network, name: str) -> KernelPorts:
    """The ports of node ``name``'s kernel in ``network`` (module docstring)."""
    node = network.node_by_name[name]
    ins, outs = network.in_edges(name), network.out_edges(name)
    if ins:
        inputs = tuple(("i" if len(ins) == 1 else e.name, e.width) for e in ins)
    else:
        inputs = (("i", kernel_input_width(node.kernel) or network.data_width),)
    if outs:
        outputs = tuple(("o" if len(outs) == 1 else e.name, e.width) for e in outs)
    else:
        outputs = (("o", kernel_output_width(node.kernel, network.index_width) or network.data_width),)
    return KernelPorts(inputs=inputs, outputs=outputs, edges_in=tuple(e.name for e in ins),
                       edges_out=tuple(e.name for e in outs), index_width=network.index_width,
                       data_width=network.data_width)


def kernel_features(node) -> dict[str, bool]:
    """The contract's optional features node ``node``'s kernel takes: ``index`` (``i_index``, ``step(inputs,
    index)``), ``last`` (a source's ``i_last``, ``step(..., last=...)``) and ``messages`` (control messages as
    beats, ``message(payload)``): a built-in's own (:data:`sfdf.gen.kernels.BUILTIN`), else the spec's."""
    if isinstance(node.kernel, UserKernel):
        return {"index": node.index, "last": node.last, "messages": node.messages}
    builtin = BUILTIN[node.kernel or "random_filter"]
    return {"index": builtin.index, "last": builtin.last, "messages": False}


def filter_problem(node) -> tuple[str, str, str] | None:
    """Why node ``node``'s kernel may filter, as ``(field, problem, fix)`` for an error at
    ``node "<name>".<field>``; None where it never does."""
    if isinstance(node.kernel, UserKernel):
        if node.may_filter is False:
            return None
        return ("kernel", f"{node.kernel} may filter (may_filter defaults to true)",
                "declare may_filter = false if it emits on every output at every computation")
    return BUILTIN[node.kernel or "random_filter"].filters(node.params)  # a built-in's follows from its params


def may_filter(node) -> bool:
    """Whether node ``node``'s kernel may filter a token (:func:`filter_problem`)."""
    return filter_problem(node) is not None


# -- goldens ------------------------------------------------------------------------------------------------

def golden_files(network) -> list[Path]:
    """The modules (or packages) beside the spec that the network's user kernels' goldens name: what a copy of
    the spec elsewhere needs beside it (``sfdf build`` copies them into its folder, the Spark job ships them)."""
    files = []
    for node in network.nodes:
        if isinstance(node.kernel, UserKernel):
            top = node.kernel.golden.partition(":")[0].split(".")[0]
            for path in (Path(node.kernel.folder, f"{top}.py"), Path(node.kernel.folder, top)):
                if path.exists() and path not in files:
                    files.append(path)
    return files


def import_beside(module: str, folder: str):
    """Import ``module``, looking in ``folder`` (the spec's) first."""
    path = Path(folder, *module.split(".")).with_suffix(".py")
    key = f"sfdf_golden.{abs(hash(str(path.resolve())))}.{module}"
    if key in sys.modules:
        return sys.modules[key]
    if path.is_file():
        spec = importlib.util.spec_from_file_location(key, path)
        loaded = importlib.util.module_from_spec(spec)
        sys.modules[key] = loaded
        try:
            spec.loader.exec_module(loaded)
        except BaseException:
            del sys.modules[key]
            raise
        return loaded
    if folder not in sys.path:  # a package beside the spec
        sys.path.insert(0, folder)
    return importlib.import_module(module)


def load_golden_class(kernel: UserKernel, network_file: str, node_name: str) -> type:
    """The golden class ``kernel.golden`` names, imported from the spec's folder first.

    Raises
    ------
    SpecError
        ``node "<name>".kernel.golden``: the module or class cannot be found or fails to import.
    """
    module, _, attribute = kernel.golden.partition(":")
    field = f'node "{node_name}".kernel.golden'
    try:
        loaded = import_beside(module, kernel.folder)
    except Exception as exc:  # noqa: BLE001 (a golden that fails to import is the user's to fix, in one line)
        raise SpecError(network_file, field, f"cannot import {module} ({type(exc).__name__}: {exc})",
                        f"put {module.replace('.', '/')}.py beside the spec or on PYTHONPATH") from None
    golden = getattr(loaded, attribute, None)
    if not inspect.isclass(golden):
        raise SpecError(network_file, field, f"{module} has no class {attribute}",
                        f'name the golden class as "{module}:<Class>"')
    return golden


def make_golden(golden_class: type, params, ports: KernelPorts, network_file: str, node_name: str):
    """``golden_class(**params)``, with ``ports=`` (:class:`KernelPorts`) too where its constructor takes it.

    Raises
    ------
    SpecError
        ``node "<name>".params``: the constructor refused the parameters.
    """
    keywords = dict(params)
    try:
        signature = inspect.signature(golden_class)
    except (TypeError, ValueError):
        signature = None
    if signature is not None and "ports" in signature.parameters:
        keywords["ports"] = ports
    try:
        return golden_class(**keywords)
    except Exception as exc:  # noqa: BLE001 (the user's constructor: named, in one line)
        raise SpecError(network_file, f'node "{node_name}".params',
                        f"the golden {golden_class.__name__}({', '.join(map(str, params))}) raised "
                        f"{type(exc).__name__}: {exc}", "give the parameters its constructor takes") from None

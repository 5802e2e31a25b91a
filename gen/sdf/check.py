"""The SDF rules of a spec (004) that need the analysis: phase lists that agree, ``peek >= pop``, a
repetition vector, no starving cycle, messages along a directed path with a deliverable latency, and
kernels whose rates suit them (:func:`sfdf.gen.sdf.kernels.check_kernels`).

:mod:`sfdf.gen.spec` parses an SDF network's keys and refuses kernels in it; these rules run on the
parsed network (:func:`check_sdf_spec`), and each :class:`sfdf.gen.sdf.rates.SDFError` becomes a
one-line :class:`sfdf.gen.errors.SpecError` at the table and key it names, with the line.
"""

from __future__ import annotations

from dataclasses import replace

from sfdf.gen.errors import SpecError
from sfdf.gen.spec import item_label
from sfdf.gen.speclines import SpecLines

from .kernels import check_kernels
from .messages import routes
from .rates import SDFError, edge_rates, phases, repetitions
from .schedule import constrained_schedule

__all__ = ["check_sdf", "check_sdf_spec"]


def check_sdf(network) -> None:
    """:class:`SDFError` for the first SDF rule ``network`` breaks (see the module docstring)."""
    count = phases(network)
    for e in network.edges:
        _, pops, peeks = edge_rates(e, count)
        short = [k for k, (a, b) in enumerate(zip(peeks, pops, strict=True)) if a < b]
        if short:
            k = short[0]
            raise SDFError(f"peeks {peeks[k]} but pops {pops[k]} in phase {k + 1}", "make peek >= pop",
                           ("edge", e.name, "peek"))
    repetitions(network)
    routes(network)
    check_kernels(network)
    constrained_schedule(replace(network, messages=()))  # live: a steady state completes from the initial items


def check_sdf_spec(network, text: str) -> None:
    """:func:`check_sdf` on a network parsed from spec ``text`` (its ``source`` names the file), the error
    as a :class:`SpecError` at its line."""
    try:
        check_sdf(network)
    except SDFError as exc:
        raise _spec_error(exc, network, text) from None


def _spec_error(exc: SDFError, network, text: str) -> SpecError:
    lines = SpecLines(text)
    kind, name, key = exc.where or ("network", None, None)
    path = (key,) if key else ()
    if kind in ("edge", "node"):
        items = network.edges if kind == "edge" else network.nodes
        index = next(i for i, item in enumerate(items) if item.name == name)
        explicit = kind == "node" or lines.key_line(kind, index, "name") is not None  # an edge's name is optional
        label = item_label(kind, index, {"name": name} if explicit else {})
        line = lines.find(kind, index, path)
    elif kind == "message":
        label, line = f"message[{name}]", lines.find("message", name, path)
    else:
        label, line = "network", None
    return SpecError(network.source, f"{label}.{key}" if key else label, exc.problem, exc.fix, line)

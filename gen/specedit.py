"""A spec's edge settings rewritten in its own text, every other line and comment kept (``sfdf check --sized``).

The analysis proposes values (the capacities that let the generated hardware reach the nodes' rate,
:func:`sfdf.gen.analysis.throughput.full_rate_sizing`); this module writes them into the user's TOML. A
key written on its own line of an ``[[edge]]`` table has its value replaced (a comment after it stays);
a key that is not written is added on the line after the edge's ``capacity``. The result is parsed again
and must be the same network with exactly those values changed, so a layout this cannot rewrite (an edge
in an inline table, a key split over lines) is refused in one line, never written wrong.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from dataclasses import replace

from .errors import UserError
from .model import AUTO
from .spec import parse_spec
from .speclines import SpecLines

__all__ = ["sizing_values", "with_edge_values"]

#: ``key = value  # comment`` on one line: the key (bare or quoted), the value, the rest.
_ASSIGNMENT = r"""^(\s*["']?{key}["']?\s*=\s*)([^\s#]+)(.*)$"""


def sizing_values(written, resolved, sizing: Mapping[str, int]) -> dict[str, dict[str, int | None]]:
    """The edge values that make a spec reach a sizing: ``sizing``'s capacities (edge -> ``|q|``, from
    :func:`sfdf.gen.analysis.throughput.full_rate_sizing` of ``resolved``, the ``written`` network with its
    ``auto`` values resolved). With 000's credit messages the batches' rate depends on ``T`` and the
    heartbeats, which ``auto`` would recompute from the new capacities, so every ``auto`` one is written as
    ``resolved`` has it."""
    values = {name: {"capacity": q} for name, q in sizing.items()}
    if values and written.mode == "credit" and not written.live_credit:
        for edge, e in zip(written.edges, resolved.edges, strict=True):
            pinned = {key: getattr(e, key) for key in ("threshold", "interval") if getattr(edge, key) == AUTO}
            values.setdefault(e.name, {}).update(pinned)
    return values


def with_edge_values(text: str, source: str, values: Mapping[str, Mapping[str, int]]) -> str:
    """``text`` (a valid spec, read from ``source``) with ``values[edge][key]`` set on each named edge
    (integers; None is an interval of ``"inf"``).

    Raises
    ------
    UserError
        Naming ``source`` and the edge, where the text cannot be rewritten so that it parses to exactly
        the network asked for.
    """
    network = parse_spec(text, source)
    lines = text.splitlines(keepends=True)
    where = SpecLines(text)
    index = {e.name: k for k, e in enumerate(network.edges)}
    inserts: dict[int, list[str]] = {}  # line number -> lines to add after it
    for name, keys in values.items():
        k = index[name]
        for key, value in keys.items():
            number = where.key_line("edge", k, key)
            if number is not None:
                match = re.match(_ASSIGNMENT.format(key=re.escape(key)), lines[number - 1].rstrip("\r\n"))
                if match is None:
                    raise _cannot(source, name, key, number, _toml(value))
                ending = lines[number - 1][len(lines[number - 1].rstrip("\r\n")):]
                lines[number - 1] = f"{match.group(1)}{_toml(value)}{match.group(3)}{ending}"
                continue
            anchor = where.key_line("edge", k, "capacity")
            if anchor is None:
                raise _cannot(source, name, key, where.find("edge", k), _toml(value))
            indent = re.match(r"\s*", lines[anchor - 1]).group(0)
            inserts.setdefault(anchor, []).append(f"{indent}{key} = {_toml(value)}\n")
    for number in sorted(inserts, reverse=True):
        if not lines[number - 1].endswith("\n"):
            lines[number - 1] += "\n"
        lines[number:number] = inserts[number]
    written = "".join(lines)
    expected = network.with_edges(replace(e, **values.get(e.name, {})) for e in network.edges)
    try:
        parsed = parse_spec(written, source)
    except UserError:
        parsed = None
    if parsed != expected:
        settings = "; ".join(f'edge "{name}": ' + ", ".join(f"{key} = {_toml(value)}" for key, value in keys.items())
                             for name, keys in values.items())
        raise UserError(source, "edge", "cannot be rewritten in place (sfdf rewrites keys on their own lines of "
                        "[[edge]] tables)", f"set them by hand: {settings}")
    return written


def _toml(value) -> str:
    """A value as the spec writes it: an integer, or ``"inf"`` for an interval of None."""
    return '"inf"' if value is None else str(value)


def _cannot(source: str, edge: str, key: str, line: int | None, value) -> UserError:
    return UserError(source, f'edge "{edge}".{key}',
                     "cannot be rewritten in place (sfdf rewrites a key on its own line of an [[edge]] table)",
                     f"write {key} = {value} there by hand, or write the edge as an [[edge]] table", line)

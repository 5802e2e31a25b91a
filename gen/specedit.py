"""A spec's edge and node settings rewritten in its own text, every other line and comment kept (``sfdf check --sized``).

The analysis proposes values (the capacities that let the generated hardware reach the nodes' rate,
:func:`sfdf.gen.analysis.throughput.full_rate_sizing`); this module writes them into the user's TOML. A
key written on its own line of an ``[[edge]]`` or ``[[node]]`` table has its value replaced (a comment after
it stays); a key that is not written is added on the line after the edge's ``capacity`` or the node's
``kernel`` (its ``name`` if it has none). The result is parsed again and must be the same network with
exactly those values changed (a node's ``params`` added to those it has), so a layout this cannot rewrite
(an edge in an inline table, a key split over lines) is refused in one line, never written wrong.
"""

from __future__ import annotations

import json
import re
from collections.abc import Mapping
from dataclasses import replace

from .errors import UserError
from .model import AUTO
from .spec import parse_spec
from .speclines import SpecLines

__all__ = ["sizing_values", "with_edge_values", "with_values"]

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
    (integers; None is an interval of ``"inf"``): :func:`with_values` on edges alone."""
    return with_values(text, source, edges=values)


#: Where a key a table does not write yet goes: after the first of these keys the table has.
_ANCHORS = {"edge": ("capacity",), "node": ("kernel", "name")}


def with_values(text: str, source: str, *, edges: Mapping[str, Mapping[str, object]] | None = None,
                nodes: Mapping[str, Mapping[str, object]] | None = None) -> str:
    """``text`` (a valid spec, read from ``source``) with ``edges[edge][key]`` and ``nodes[node][key]`` set
    (integers, floats, strings, booleans, tables such as a node's ``params``; None is an interval of
    ``"inf"``).

    Raises
    ------
    UserError
        Naming ``source`` and the item, where the text cannot be rewritten so that it parses to exactly
        the network asked for.
    """
    network = parse_spec(text, source)
    lines = text.splitlines(keepends=True)
    where = SpecLines(text)
    inserts: dict[int, list[str]] = {}  # line number -> lines to add after it
    for kind, items, values in (("edge", network.edges, edges or {}), ("node", network.nodes, nodes or {})):
        index = {item.name: k for k, item in enumerate(items)}
        for name, keys in values.items():
            k = index[name]
            for key, value in keys.items():
                number = where.key_line(kind, k, key)
                if number is not None:
                    match = re.match(_ASSIGNMENT.format(key=re.escape(key)), lines[number - 1].rstrip("\r\n"))
                    if match is None or (isinstance(value, Mapping) and not match.group(2).startswith("{")):
                        raise _cannot(source, kind, name, key, number, _toml(value))
                    ending = lines[number - 1][len(lines[number - 1].rstrip("\r\n")):]
                    rest = "" if isinstance(value, Mapping) else match.group(3)  # an inline table's rest is its own
                    lines[number - 1] = f"{match.group(1)}{_toml(value)}{rest}{ending}"
                    continue
                anchor = next((n for a in _ANCHORS[kind] if (n := where.key_line(kind, k, a)) is not None), None)
                if anchor is None:
                    raise _cannot(source, kind, name, key, where.find(kind, k), _toml(value))
                indent = re.match(r"\s*", lines[anchor - 1]).group(0)
                inserts.setdefault(anchor, []).append(f"{indent}{key} = {_toml(value)}\n")
    for number in sorted(inserts, reverse=True):
        if not lines[number - 1].endswith("\n"):
            lines[number - 1] += "\n"
        lines[number:number] = inserts[number]
    written = "".join(lines)
    node_values = nodes or {}

    def node(n):
        given = dict(node_values.get(n.name, {}))
        if "params" in given:
            given["params"] = {**n.params, **given["params"]}
        return replace(n, **given)

    expected = replace(network.with_edges(replace(e, **(edges or {}).get(e.name, {})) for e in network.edges),
                       nodes=tuple(node(n) for n in network.nodes))
    try:
        parsed = parse_spec(written, source)
    except UserError:
        parsed = None
    if parsed != expected:
        settings = "; ".join(f'{kind} "{name}": ' + ", ".join(f"{key} = {_toml(value)}" for key, value in keys.items())
                             for kind, values in (("edge", edges or {}), ("node", node_values))
                             for name, keys in values.items())
        tables = " and ".join(f"[[{kind}]]" for kind, values in (("edge", edges), ("node", nodes)) if values)
        raise UserError(source, "edge" if edges else "node", "cannot be rewritten in place (sfdf rewrites keys "
                        f"on their own lines of {tables} tables)", f"set them by hand: {settings}")
    return written


def _toml(value) -> str:
    """A value as the spec writes it: ``"inf"`` for an interval of None, an inline table for a mapping."""
    if value is None:
        return '"inf"'
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, str):
        return json.dumps(value)
    if isinstance(value, Mapping):
        return "{ " + ", ".join(f"{key} = {_toml(item)}" for key, item in value.items()) + " }" if value else "{}"
    return repr(value) if isinstance(value, float) else str(value)


def _cannot(source: str, kind: str, name: str, key: str, line: int | None, value) -> UserError:
    table = f"{'an' if kind == 'edge' else 'a'} [[{kind}]] table"
    return UserError(source, f'{kind} "{name}".{key}',
                     f"cannot be rewritten in place (sfdf rewrites a key on its own line of {table})",
                     f"write {key} = {value} there by hand, or write the {kind} as {table}", line)

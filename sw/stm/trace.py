"""``sfdf gc TRACE``: run a JSON Lines trace of space-time memory operations (001) and report the GC bounds.

One operation a line (docs/stm.md): ``channel``, ``thread`` (``vt``; optional ``parent``,
V4), ``attach``, ``oconn``, ``put``, ``get``, ``consume``, ``consume_until``, ``set_vt``, and ``gc`` (the
collector runs now at minO, as 001's daemon would). A VT may be ``"inf"``; ``"space": k`` places a thread
or channel in an address space. A malformed line or a refused operation is a one-line
:class:`sfdf.gen.errors.InputError` naming the line, the operation and the rule.
"""

from __future__ import annotations

import json

from sfdf.gen.errors import InputError

from .gc import bounds, collect
from .model import INF, SpaceTimeMemory, STMError, VisibilityError

__all__ = ["OPERATIONS", "run_trace"]

#: Each operation's required and optional fields.
OPERATIONS = {
    "channel": (("channel",), ("space",)),
    "thread": (("thread", "vt"), ("parent", "space")),
    "attach": (("thread", "channel", "conn"), ()),
    "oconn": (("thread", "channel", "conn"), ()),
    "put": (("conn", "ts"), ("value",)),
    "get": (("conn",), ("ts",)),
    "consume": (("conn", "ts"), ()),
    "consume_until": (("conn", "ts"), ()),
    "set_vt": (("thread", "vt"), ()),
    "gc": ((), ()),
}
_FIX = "see docs/stm.md for the operations and their fields"


def _time(value):
    return INF if value == "inf" else value


def run_trace(text: str, source: str = "<trace>") -> dict:
    """Run the trace; return ``{"minV", "minK", "minKV", "minO", "garbage": {channel: [ts, ...]}}`` with the
    bounds after the last line and every timestamp collected (by ``gc`` lines and at the end, at minO)."""
    stm = SpaceTimeMemory()
    garbage: dict[str, list[int]] = {}
    for number, line in enumerate(text.splitlines(), 1):
        if not line.strip():
            continue
        op = _parse(line, number, source)
        try:
            _apply(stm, op, garbage)
        except VisibilityError as exc:
            raise InputError(source, op["op"], str(exc), "keep the operation within the thread's visibility "
                             "(001 Sec. 3.2.1)", number) from None
        except STMError as exc:
            raise InputError(source, op["op"], str(exc), _FIX, number) from None
    b = bounds(stm)
    for name, ts in collect(stm, b.min_o).items():
        garbage.setdefault(name, []).extend(ts)
    show = lambda v: "inf" if v == INF else v
    return {"minV": show(b.min_v), "minK": show(b.min_k), "minKV": show(b.min_kv), "minO": show(b.min_o),
            "garbage": {name: sorted(set(ts)) for name, ts in garbage.items()}}


def _parse(line: str, number: int, source: str) -> dict:
    try:
        op = json.loads(line)
    except json.JSONDecodeError as exc:
        raise InputError(source, "JSON", f"not JSON ({exc.msg})", "write one JSON object a line", number) from None
    if not isinstance(op, dict) or op.get("op") not in OPERATIONS:
        shown = json.dumps(op.get("op") if isinstance(op, dict) else op)
        raise InputError(source, "op", f"unknown operation {shown}", "use one of: " + ", ".join(OPERATIONS), number)
    required, optional = OPERATIONS[op["op"]]
    for key in required:
        if key not in op:
            raise InputError(source, op["op"], f"missing {key}", _FIX, number)
    for key in op:
        if key != "op" and key not in required + optional:
            raise InputError(source, op["op"], f"unknown field {key}", _FIX, number)
    return op


def _apply(stm: SpaceTimeMemory, op: dict, garbage: dict) -> None:
    kind = op["op"]
    if kind == "channel":
        stm.channel(op["channel"], op.get("space", 0))
    elif kind == "thread":
        stm.thread(op["thread"], _time(op["vt"]), parent=op.get("parent"), space=op.get("space"))
    elif kind == "attach":
        stm.attach(op["thread"], op["channel"], op["conn"])
    elif kind == "oconn":
        stm.oconn(op["thread"], op["channel"], op["conn"])
    elif kind == "put":
        stm.put(op["conn"], op["ts"], op.get("value"))
    elif kind == "get":
        stm.get(op["conn"], op.get("ts"))
    elif kind == "consume":
        stm.consume(op["conn"], op["ts"])
    elif kind == "consume_until":
        stm.consume_until(op["conn"], op["ts"])
    elif kind == "set_vt":
        stm.set_vt(op["thread"], _time(op["vt"]))
    else:  # gc
        for name, ts in collect(stm, bounds(stm).min_o).items():
            garbage.setdefault(name, []).extend(ts)

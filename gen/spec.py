"""Parse and validate a TOML topology spec into a :class:`sfdf.gen.model.Network` (README, "A tour of the spec").

Every mistake is a one-line :class:`sfdf.gen.errors.SpecError` naming the file, the field, the line when
it can be found, and the fix. Checks, in order: TOML syntax; ``[network]``; each ``[[node]]``; each
``[[edge]]`` (keys, types, ranges, node names, self-loops, duplicate names); each ``[[message]]``; then
directed cycles, or, in an SDF network (004: rates, initial items or messages), nodes without kernels.
The SDF rules that need the analysis (phase lists, peek >= pop, a repetition vector, no starving cycle,
messages along a path) are :func:`sfdf.gen.sdf.check.check_sdf_spec`'s, which the CLI runs.
"""

from __future__ import annotations

import difflib
import importlib.util
import json
import re
import tomllib
from datetime import date, datetime, time
from pathlib import Path

import networkx as nx

from sfdf.gen.contract import LANGUAGES, UserKernel, filter_problem
from sfdf.gen.errors import SpecError
from sfdf.gen.kernels import (
    KERNELS,
    SDF_KERNELS,
    KernelParam,
    builtin,
    kernel_defaults,
    kernel_output_width,
    kernel_param_table,
)
from sfdf.gen.keywords import VERILOG_KEYWORDS
from sfdf.gen.model import AUTO, DUMMY_ALGORITHMS, MODES, Edge, Message, Network, Node
from sfdf.gen.speclines import SpecLines

__all__ = ["item_label", "load_spec", "parse_spec"]


_NETWORK_KEYS = ("name", "mode", "dummy_algorithm", "filtering", "live_credit", "data_width", "index_width")
_NODE_KEYS = ("name", "kernel", "params", "ii", "control_messages", "registered_offers", "pipelined", "latency",
              "may_filter", "index", "last", "messages")
#: Node keys that describe a user's kernel (docs/kernels.md); a built-in's are its own.
_USER_KERNEL_KEYS = ("latency", "may_filter", "index", "last", "messages")
_KERNEL_TABLE_KEYS = ("verilog", "amaranth", "module", "golden")
_PYTHON_NAME = re.compile(r"[A-Za-z_][A-Za-z0-9_]*(\.[A-Za-z_][A-Za-z0-9_]*)*\Z")
_EDGE_KEYS = ("name", "from", "to", "capacity", "control_capacity", "output_buffer", "interval",
              "threshold", "width", "push", "pop", "peek", "initial")
_MESSAGE_KEYS = ("from", "to", "latency")
_TOP_KEYS = ("network", "node", "edge", "message")
_EDGE_DEFAULTS = {"threshold": AUTO, "control_capacity": AUTO, "output_buffer": 0}
_IDENTIFIER = re.compile(r"[A-Za-z_][A-Za-z0-9_]*\Z")
_IDENTIFIER_FIX = "use letters, digits and underscores, not starting with a digit"
#: Longest name: names become Verilog identifiers, port names and file names (``generate``, ``build``).
MAX_NAME = 64
#: Most tokens in one data or control channel: 2^16 words of 64 bits is 4 Mbit, more block RAM than the
#: largest ECP5 has; channels are exact-capacity FIFOs in the generated hardware.
MAX_CAPACITY = 1 << 16
#: Largest finite heartbeat or dummy interval: an index distance, compared serially at up to 64 bits.
MAX_INTERVAL = 1 << 32
#: Largest initiation interval and per-token message bound.
MAX_II = MAX_MESSAGES = 1 << 16
#: Most cycles a user kernel may take from input beat to output beat (the node's decided queue holds
#: that many computations more).
MAX_KERNEL_LATENCY = 1 << 10
#: Largest SDF rate (items per firing), phase count and message latency (firings).
MAX_RATE = MAX_PHASES = 1 << 16
MAX_LATENCY = 1 << 32


class _Bad(Exception):
    """A field's value is wrong: ``problem`` and ``fix``, before the file and field are known."""

    def __init__(self, problem: str, fix: str):
        super().__init__(problem)
        self.problem, self.fix = problem, fix


# -- values -------------------------------------------------------------------------------------------

def _show(value) -> str:
    """``value`` as the user wrote it in TOML."""
    if isinstance(value, bool):
        return f"{str(value).lower()} (a boolean)"
    if isinstance(value, str):
        return json.dumps(value)
    if isinstance(value, dict):
        return "a table"
    if isinstance(value, list):
        return "an array"
    if isinstance(value, (datetime, date, time)):
        return f"{value.isoformat()} (a date or time)"
    return repr(value)


def _suggest(given: str, allowed, quote: bool = False) -> str:
    """A fix listing ``allowed``, led by the closest match to ``given`` when there is one."""
    show = (lambda s: json.dumps(s)) if quote else str
    close = difflib.get_close_matches(given, list(allowed), n=1)
    hint = f"did you mean {show(close[0])}? " if close else ""
    return f"{hint}use one of: {', '.join(show(a) for a in allowed)}"


def _is_int(value) -> bool:
    return isinstance(value, int) and not isinstance(value, bool)


def _range_text(low, high) -> str:
    return f">= {low}" if high is None else f"in {low}..{high}"


def _integer(value, low: int, high: int | None, fix: str, words: tuple[str, ...] = ()) -> int | str:
    """An int in ``low..high`` (``high`` None: unbounded) or one of the string ``words``."""
    if (isinstance(value, str) and value in words) or (
        _is_int(value) and value >= low and (high is None or value <= high)
    ):
        return value
    alternatives = "".join(f", {json.dumps(w)}" for w in words[:-1])
    if words:
        alternatives += f" or {json.dumps(words[-1])}"
    raise _Bad(f"must be an integer {_range_text(low, high)}{alternatives}, not {_show(value)}", fix)


def _choice(value, choices: tuple[str, ...], noun: str) -> str:
    fix = "use " + ", ".join(json.dumps(c) for c in choices[:-1]) + f" or {json.dumps(choices[-1])}"
    if not isinstance(value, str):
        raise _Bad(f"must be a string, not {_show(value)}", fix)
    if value not in choices:
        raise _Bad(f"unknown {noun} {_show(value)}", fix)
    return value


def _identifier(value) -> str:
    if not isinstance(value, str):
        raise _Bad(f"must be a string, not {_show(value)}", _IDENTIFIER_FIX)
    if not _IDENTIFIER.match(value):
        raise _Bad(f"{_show(value[:MAX_NAME])} is not an identifier", _IDENTIFIER_FIX)
    if len(value) > MAX_NAME:
        raise _Bad(f"is {len(value)} characters long", f"use at most {MAX_NAME} (names become Verilog identifiers "
                   "and file names)")
    return value


def _module_name(value) -> str:
    """A network's name: an identifier, and not a Verilog reserved word (it names the top module)."""
    name = _identifier(value)
    if name.lower() in VERILOG_KEYWORDS:  # some tools fold case
        raise _Bad(f"{_show(name)} is a Verilog keyword, and the network's name is its top module's",
                   f'rename it, for example name = "{name}_net"')
    return name


def item_label(kind: str, index: int, table: dict) -> str:
    """How an error names a node or edge: ``node "u"`` if it has a valid name, else ``node[2]``."""
    name = table.get("name")
    if isinstance(name, str) and _IDENTIFIER.match(name):
        return f'{kind} "{name}"'
    return f"{kind}[{index}]"


# -- lines --------------------------------------------------------------------------------------------

# -- the parser ---------------------------------------------------------------------------------------

class _Parser:
    def __init__(self, text: str, source: str):
        self.text, self.source = text, source
        self.lines = SpecLines(text)

    def error(self, field: str, problem: str, fix: str, line: int | None) -> SpecError:
        return SpecError(self.source, field, problem, fix, line)

    def field(self, table: str, index: int | None, label: str, key: tuple[str, ...], parse):
        """``parse()``; a :class:`_Bad` becomes a :class:`SpecError` at ``label.key``."""
        try:
            return parse()
        except _Bad as bad:
            field = ".".join((label, *key)) if key else label
            raise self.error(field, bad.problem, bad.fix, self.lines.find(table, index, key)) from None

    def check_keys(self, table: str, index: int | None, label: str, data: dict, allowed) -> None:
        for key in data:
            if key not in allowed:
                self.field(table, index, label, (key,), lambda k=key: _raise("unknown key", _suggest(k, allowed)))

    def require(self, table: str, index: int | None, label: str, data: dict, key: str, hint: str):
        if key not in data:
            raise self.error(f"{label}.{key}", "missing", f"add {key} = {hint}", self.lines.find(table, index))
        return data[key]

    # -- tables ---------------------------------------------------------------------------------------
    def parse(self) -> Network:
        try:
            doc = tomllib.loads(self.text)
        except tomllib.TOMLDecodeError as exc:
            raise self._syntax_error(exc) from None
        for key in doc:
            if key not in _TOP_KEYS:
                raise self.error(key, "unknown key", _suggest(key, _TOP_KEYS), self.lines.top(key))
        network = self.network(doc)
        nodes = self.nodes(doc.get("node"))
        edges = self.edges(doc.get("edge"), network, nodes)
        messages = self.messages(doc.get("message"), nodes)
        net = Network(nodes=tuple(nodes.values()), edges=tuple(edges), messages=tuple(messages),
                      source=self.source, **network)
        self.check_connected(net, doc.get("node"))
        if net.is_sdf:
            self.check_sdf(net, doc.get("node"))
        else:
            self.check_not_sdf_kernels(net, doc.get("node"))
            self.check_acyclic(net, doc.get("edge"))
        self.check_kernel_inputs(net, doc.get("node"))
        self.check_filtering(net, doc.get("node"))
        self.check_last(net, doc.get("node"))
        self.check_kernel_modules(net, doc.get("node"))
        self.check_offers(net, doc.get("node"))
        self.check_single_stage(net, doc.get("node"))
        return net

    def _syntax_error(self, exc: tomllib.TOMLDecodeError) -> SpecError:
        message = str(exc)
        match = re.search(r"\s*\(at line (\d+), column (\d+)\)$", message)
        line = int(match.group(1)) if match else None
        if match:
            message = f"{message[: match.start()]} at column {match.group(2)}"
        if message.endswith(" (at end of document)"):
            message = message.replace(" (at end of document)", " at the end of the file")
            line = max(1, len(self.lines.lines))
        return self.error("TOML", f"invalid syntax: {message}", "fix the TOML syntax (see toml.io)", line)

    def network(self, doc: dict) -> dict:
        if "network" not in doc:
            raise self.error("network", "missing table", 'add a [network] table with name = "<identifier>"', None)
        data = doc["network"]
        if not isinstance(data, dict):
            raise self.error("network", f"must be a table, not {_show(data)}",
                             'write it as a [network] table', self.lines.top("network"))
        self.check_keys("network", None, "network", data, _NETWORK_KEYS)
        name = self.require("network", None, "network", data, "name", '"<identifier>"')

        def get(key, parse, default):
            return self.field("network", None, "network", (key,), lambda: parse(data[key])) if key in data else default

        mode = get("mode", lambda v: _choice(v, MODES, "mode"), "credit")
        if "live_credit" in data and mode != "credit":
            self.field("network", None, "network", ("live_credit",), lambda: _raise(
                "applies to credit mode only", 'remove live_credit, or set mode = "credit"'))
        algorithm = get("dummy_algorithm", lambda v: _choice(v, DUMMY_ALGORITHMS, "dummy algorithm"), "nonpropagation")
        if algorithm != "nonpropagation" and mode == "credit":  # the default may stay (README's tour lists every key)
            self.field("network", None, "network", ("dummy_algorithm",), lambda: _raise(
                "applies to in-band mode only (credit mode sends heartbeats, 000)",
                'remove dummy_algorithm, or set mode = "inband"'))
        return {
            "name": get("name", _module_name, name),
            "mode": mode,
            "dummy_algorithm": algorithm,
            "filtering": get("filtering", _boolean("use true (nodes may filter) or false (no node ever filters)"),
                             True),
            "live_credit": get("live_credit", _boolean(
                "use true (take uncredited tokens at once) or false (000's receiver: only against credit)"), True),
            "data_width": get("data_width", lambda v: _integer(v, 1, 64, "use a payload width of 1 to 64 bits"),
                              32),
            "index_width": get("index_width",
                               lambda v: _integer(v, 2, 64, "use an index width of 2 to 64 bits"), 32),
        }

    def tables(self, kind: str, data) -> list[dict]:
        fix = f"write each {kind} as a [[{kind}]] table"
        if not isinstance(data, list):
            raise self.error(kind, f"must be an array of tables, not {_show(data)}", fix, self.lines.top(kind))
        for index, table in enumerate(data):
            if not isinstance(table, dict):
                raise self.error(f"{kind}[{index}]", f"must be a table, not {_show(table)}", fix,
                                 self.lines.top(kind))
        return data

    def nodes(self, data) -> dict[str, Node]:
        if data is None or data == []:
            raise self.error("node", "the network has no nodes", "add a [[node]] table for each node", None)
        nodes: dict[str, Node] = {}
        first: dict[str, int] = {}
        for index, table in enumerate(self.tables("node", data)):
            label = item_label("node", index, table)
            self.check_keys("node", index, label, table, _NODE_KEYS)
            raw = self.require("node", index, label, table, "name", '"<identifier>"')
            name = self.field("node", index, label, ("name",), lambda r=raw: _identifier(r))
            if name in first:
                raise self.error(f"node[{index}].name", f"duplicate name {_show(name)} (also node[{first[name]}])",
                                 "give every node a unique name", self.lines.find("node", index, ("name",)))
            first[name] = index
            nodes[name] = self.node(index, label, table)
        return nodes

    def node(self, index: int, label: str, table: dict) -> Node:
        def get(key, parse, default):
            return self.field("node", index, label, (key,), lambda: parse(table[key])) if key in table else default

        kernel = self.kernel(index, label, table) if "kernel" in table else None
        params = self.params(index, label, kernel, table)
        user = self.user_kernel_fields(index, label, kernel, table)
        ii = get("ii", lambda v: _integer(v, 1, MAX_II, "use the cycles per computation"), 1)
        control = get("control_messages", lambda v: _integer(
            v, 0, MAX_MESSAGES, 'use the most user control messages per data token, or "unbounded"',
            ("unbounded",)), 0)
        registered = get("registered_offers", _boolean(
            "use true (offers from registers: a cycle per hop, for the clock) or false (a cycle less per hop "
            "into this node, at a slower clock)"), True)
        staged = get("pipelined", _boolean(
            'use "auto" (single-stage where a reconvergent path runs faster so), true (two stages: three cycles '
            "per hop, for the clock) or false (one input and one output: decide and send in one cycle, a hop of "
            "one cycle at a slower clock)", (AUTO,)), AUTO)
        return Node(name=table["name"], kernel=kernel, params=params, ii=ii,
                    control_messages=None if control == "unbounded" else control, registered_offers=registered,
                    pipelined=staged, **user)

    def kernel(self, index: int, label: str, table: dict) -> str | UserKernel:
        """A node's ``kernel``: a built-in's name, or a table naming the user's own (docs/kernels.md)."""
        value = table["kernel"]
        if not isinstance(value, dict):
            return self.field("node", index, label, ("kernel",), lambda: _choice_kernel(value))

        def get(key, parse):
            return self.field("node", index, label, ("kernel", key), lambda: parse(value[key]))

        for key in value:
            if key not in _KERNEL_TABLE_KEYS:
                get(key, lambda v, k=key: _raise("unknown key", _suggest(k, _KERNEL_TABLE_KEYS)))
        languages = [key for key in LANGUAGES if key in value]
        if len(languages) != 1:
            problem = "names both a Verilog and an Amaranth kernel" if languages else "names no hardware"
            self.field("node", index, label, ("kernel",), lambda: _raise(problem, 'give verilog = "<file>.v" with '
                       'module = "<module>", or amaranth = "<package.module>:<Class>", and golden = "<module>:<Class>"'))
        language = languages[0]
        folder = self.folder
        if "golden" not in value:
            self.field("node", index, label, ("kernel",), lambda: _raise(
                "has no golden", 'add golden = "<module>:<Class>", the Python model of the kernel (docs/kernels.md)'))
        golden = get("golden", lambda v: _golden(v, folder))
        if language == "verilog":
            file = get("verilog", lambda v: _verilog_file(v, folder))
            if "module" not in value:
                self.field("node", index, label, ("kernel",), lambda: _raise(
                    "names no Verilog module", 'add module = "<name of the module in the file>"'))
            module = get("module", _identifier)
        else:
            if "module" in value:
                get("module", lambda v: _raise("names a Verilog module; an Amaranth kernel is named by amaranth",
                                               "remove module"))
            module = get("amaranth", lambda v: _python_target(v, "the Amaranth component"))
            file = None
        return UserKernel(language=language, module=module, file=file, golden=golden, folder=folder)

    @property
    def folder(self) -> str:
        """The spec's folder, where a user kernel's files are found first (the working folder for a spec in memory)."""
        path = Path(self.source)
        return str(path.resolve().parent if self.source != "<memory>" and path.name else Path.cwd())

    def user_kernel_fields(self, index: int, label: str, kernel, table: dict) -> dict:
        """``latency``, ``may_filter``, ``index``, ``last``, ``messages``: a user kernel's (a built-in's are its own)."""
        def get(key, parse, default):
            return self.field("node", index, label, (key,), lambda: parse(table[key])) if key in table else default

        if not isinstance(kernel, UserKernel):
            for key in _USER_KERNEL_KEYS:
                if key in table:
                    get(key, lambda v, k=key: _raise(
                        f"describes a user kernel, and {_show(kernel or 'random_filter')} is built in (its {k} is "
                        "its own)", f"remove {k}"), None)
            return {}
        fields = {
            "latency": get("latency", lambda v: _integer(
                v, 0, MAX_KERNEL_LATENCY, "use the kernel's cycles from input beat to output beat when nothing "
                "stalls"), 1),
            "may_filter": get("may_filter", _boolean(
                "use true (the kernel may filter) or false (it emits on every output at every computation)"), True),
            "index": get("index", _boolean("use true to give the kernel each computation's index (i_index)"), False),
            "last": get("last", _boolean("use true to give a source's kernel each word's tlast (i_last)"), False),
            "messages": get("messages", _boolean(
                "use true to give the kernel the node's control messages as beats (i_msg, i_mdata), or false"), False),
        }
        return fields

    def params(self, index: int, label: str, kernel, table: dict) -> dict:
        if isinstance(kernel, UserKernel):
            return self.user_params(index, label, table)
        if "params" not in table:
            return kernel_defaults(kernel) if kernel is not None else {}  # no kernel named, no parameters
        given = table["params"]

        def check(key, problem, fix):
            self.field("node", index, label, key, lambda: _raise(problem, fix))

        if not isinstance(given, dict):
            check(("params",), f"must be a table, not {_show(given)}", "write params = { name = value, ... }")
        if kernel is None and given:
            check(("params",), "parameters need a kernel", 'add kernel = "random_filter" or remove params')
        allowed = kernel_param_table(kernel)
        params = kernel_defaults(kernel) if allowed else {}
        for key, value in given.items():
            if key not in allowed:
                fix = _suggest(key, allowed) if allowed else "this kernel takes no parameters: remove it"
                check(("params", key), f"unknown parameter of kernel {_show(kernel)}", fix)
            params[key] = self.field("node", index, label, ("params", key),
                                     lambda k=key, v=value: _kernel_param(allowed[k], v))
        return params

    def user_params(self, index: int, label: str, table: dict) -> dict:
        """A user kernel's ``params``: Verilog parameters by name, keyword arguments of the Amaranth kernel and
        the golden; integers, numbers, booleans or strings."""
        given = table.get("params", {})
        if not isinstance(given, dict):
            self.field("node", index, label, ("params",), lambda: _raise(
                f"must be a table, not {_show(given)}", "write params = { NAME = value, ... }"))
        for key, value in given.items():
            self.field("node", index, label, ("params", key), lambda k=key, v=value: _user_param(k, v))
        return dict(given)

    def edges(self, data, network: dict, nodes: dict[str, Node]) -> list[Edge]:
        tables = [] if data is None else self.tables("edge", data)
        explicit: dict[str, int] = {}
        fields = []
        for index, table in enumerate(tables):
            label = item_label("edge", index, table)
            self.check_keys("edge", index, label, table, _EDGE_KEYS)
            if "name" in table:
                name = self.field("edge", index, label, ("name",), lambda t=table: _identifier(t["name"]))
                if name in explicit:
                    raise self.error(f"edge[{index}].name", f"duplicate name {_show(name)} (also edge[{explicit[name]}])",
                                     "give every edge a unique name", self.lines.find("edge", index, ("name",)))
                explicit[name] = index
            fields.append(self.edge(index, label, table, network, nodes))
        return [Edge(name=name, **f) for name, f in zip(_edge_names(tables, fields, explicit), fields)]

    def edge(self, index: int, label: str, table: dict, network: dict, nodes: dict[str, Node]) -> dict:
        def get(key, parse, default):
            return self.field("edge", index, label, (key,), lambda: parse(table[key])) if key in table else default

        ends = {}
        for key in ("from", "to"):
            self.require("edge", index, label, table, key, '"<node name>"')
            ends[key] = get(key, lambda v: _node_name(v, nodes), None)
        if ends["from"] == ends["to"]:
            self.field("edge", index, label, ("to",), lambda: _raise(
                f"self-loop {ends['from']} -> {ends['to']}", "connect two different nodes (a network is acyclic)"))
        self.require("edge", index, label, table, "capacity", "<tokens>, at least 1")
        capacity = get("capacity", lambda v: _integer(v, 1, MAX_CAPACITY, "use a data channel capacity in tokens"),
                       None)
        output_buffer = get("output_buffer", lambda v: _at_most(
            _integer(v, 0, None, "use 0 for no output buffer"), capacity,
            "exceeds capacity", f"use 0..{capacity} (the output buffer is part of the channel)"), 0)
        threshold = get("threshold", lambda v: _at_most(
            _integer(v, 0, None, 'use "auto" to let sfdf choose', (AUTO,)), capacity - 1,
            "is not below capacity", f'use 0..{capacity - 1} or "auto"', capacity), AUTO)
        interval = get("interval", lambda v: _integer(
            v, 0, MAX_INTERVAL, 'use "auto" to let sfdf choose, or "inf" for none', (AUTO, "inf")), AUTO)
        kernel = nodes[ends["from"]].kernel
        fixed = kernel_output_width(kernel, network["index_width"])
        initial = get("initial", lambda v: _at_most(_integer(v, 0, None, "use the items on the edge at reset"),
                                                    capacity, "exceeds capacity",
                                                    f"use 0..{capacity} (initial items sit in the channel)"), 0)
        fields = {
            "src": ends["from"],
            "dst": ends["to"],
            "capacity": capacity,
            "control_capacity": get("control_capacity", lambda v: _integer(
                v, 1, MAX_CAPACITY, 'use "auto" to let sfdf size the control channel', (AUTO,)), AUTO),
            "output_buffer": output_buffer,
            "interval": None if interval == "inf" else interval,
            "threshold": threshold,
            "width": get("width", lambda v: _kernel_width(
                _integer(v, 1, 64, "use a payload width of 1 to 64 bits"), kernel, fixed),
                fixed or network["data_width"]),
            "push": get("push", _rates("items the sender pushes per firing"), 1),
            "pop": get("pop", _rates("items the receiver pops per firing"), 1),
            "peek": get("peek", _rates("items the receiver must see to fire (>= pop)"), None),
            "initial": initial,
        }
        self.inapplicable(index, label, table, network)
        return fields

    def inapplicable(self, index: int, label: str, table: dict, network: dict) -> None:
        """Refuse an edge setting that the network's mode would ignore (nothing is silently dropped); its
        default (``"auto"``, an output buffer of 0) may stay, so one spec can list every key."""
        def refuse(key, problem, fix):
            if table.get(key, _EDGE_DEFAULTS[key]) != _EDGE_DEFAULTS[key]:
                self.field("edge", index, label, (key,), lambda: _raise(problem, fix))

        if network["mode"] != "credit":
            for key in ("threshold", "control_capacity"):
                refuse(key, "applies to credit mode only", f'remove {key}, or set mode = "credit" in [network]')
            return
        refuse("output_buffer", "applies to in-band mode only (credit-mode senders have no output buffer in "
               "hardware)", 'remove output_buffer, or set mode = "inband" in [network]')
        if network["live_credit"]:
            refuse("threshold", "has no effect with live credit (it sends no credit messages, docs/semantics.md)",
                   "remove threshold, or set live_credit = false in [network]")

    def check_connected(self, net: Network, tables) -> None:
        """Every node has an edge: a lone node would be a source and a sink port at once, which no command can
        generate, so every command refuses it alike (the check, the model and the hardware accept the same
        specs); a network of one node is that lone node."""
        touched = {e.src for e in net.edges} | {e.dst for e in net.edges}
        for index, node in enumerate(net.nodes):
            if node.name not in touched:
                fix = ("a network needs a source and a sink joined by channels: add a second [[node]] and an "
                       "[[edge]] to it" if len(net.nodes) == 1 else "connect it with an [[edge]] or remove it")
                raise self.error(item_label("node", index, {"name": node.name}), "has no edges", fix,
                                 self.lines.find("node", index, ("name",)))

    def messages(self, data, nodes: dict[str, Node]) -> list[Message]:
        """``[[message]]`` tables (004): ``from``, ``to`` (a node or a portal's list), ``latency``."""
        result = []
        for index, table in enumerate([] if data is None else self.tables("message", data)):
            label = f"message[{index}]"
            self.check_keys("message", index, label, table, _MESSAGE_KEYS)

            def get(key, parse, t=table, i=index, lab=label):
                return self.field("message", i, lab, (key,), lambda: parse(t[key]))

            self.require("message", index, label, table, "from", '"<node name>"')
            self.require("message", index, label, table, "to", '"<node name>" or a list of them')
            sender = get("from", lambda v: _node_name(v, nodes))
            receivers = get("to", lambda v: _receivers(v, nodes))
            latency = get("latency", _latency) if "latency" in table else (0, 0)
            result.append(Message(sender=sender, receivers=receivers, latency=latency))
        return result

    def check_sdf(self, net: Network, node_tables) -> None:
        """An SDF network's (004) nodes run SDF kernels (``sdf_test``, the default, or the radio's). Cycles are
        allowed (the schedule proves them live: :func:`sfdf.gen.sdf.check.check_sdf_spec`)."""
        for index, node in enumerate(net.nodes):
            if node.kernel is not None and node.kernel not in SDF_KERNELS:
                raise self.error(f"{item_label('node', index, node_tables[index])}.kernel",
                                 "an SDF network (rates, initial items or messages, 004) runs SDF kernels "
                                 "(docs/semantics.md, \"SDF networks\")",
                                 f"write one of {', '.join(SDF_KERNELS)} or remove kernel",
                                 self.lines.find("node", index, ("kernel",)))

    def check_not_sdf_kernels(self, net: Network, node_tables) -> None:
        """The SDF kernels run in SDF networks only."""
        for index, node in enumerate(net.nodes):
            if node.kernel in SDF_KERNELS:
                raise self.error(f"{item_label('node', index, node_tables[index])}.kernel",
                                 f"{node.kernel} runs in SDF networks only (rates, initial items or messages, 004)",
                                 'use a kernel of this network\'s kind, e.g. "random_filter"',
                                 self.lines.find("node", index, ("kernel",)))

    def check_acyclic(self, net: Network, tables) -> None:
        graph = net.graph()
        try:
            cycle = nx.find_cycle(graph)
        except nx.NetworkXNoCycle:
            return
        path = " -> ".join([cycle[0][0], *(dst for _, dst, _ in cycle)])
        last = cycle[-1][2]
        index = next(i for i, e in enumerate(net.edges) if e.name == last)
        label = item_label("edge", index, tables[index])
        raise self.error(label, f"directed cycle {path}",
                         "remove or reverse an edge on the cycle (a network is acyclic; an SDF feedback loop "
                         "carries initial items, 004)", self.lines.find("edge", index))

    def check_offers(self, net: Network, tables) -> None:
        """``registered_offers = false`` on a node without inputs would be ignored: refused, as every setting
        that has no effect is."""
        for index, node in enumerate(net.nodes):
            if not node.registered_offers and not net.in_edges(node.name):
                raise self.error(f"{item_label('node', index, tables[index])}.registered_offers",
                                 "a node without inputs has no offers to register", "remove registered_offers",
                                 self.lines.find("node", index, ("registered_offers",)))

    def check_single_stage(self, net: Network, tables) -> None:
        """``pipelined = false`` only where the single-stage node can be built (:meth:`Network.single_stage_problem`),
        and without ``registered_offers``, which it has none of (``"auto"`` builds one only where it can)."""
        for index, node in enumerate(net.nodes):
            if node.pipelined is not False:
                continue
            problem = net.single_stage_problem(node.name)
            if problem is None and "registered_offers" in tables[index]:
                problem = "a single-stage node has no offer registers to set", "remove registered_offers"
            if problem is not None:
                raise self.error(f"{item_label('node', index, tables[index])}.pipelined", *problem,
                                 self.lines.find("node", index, ("pipelined",)))

    def check_filtering(self, net: Network, tables) -> None:
        """``filtering = false`` promises that no node ever filters (002 Thm. 3.1 then rules out deadlock): a
        node whose kernel may filter breaks it (:func:`sfdf.gen.contract.filter_problem`), so it is refused."""
        if net.filtering:
            return
        for index, node in enumerate(net.nodes):
            problem = filter_problem(node)
            if problem is None:
                continue
            field, what, fix = problem
            label = item_label("node", index, tables[index])
            keys = tuple(field.split("."))
            line = self.lines.find("node", index, keys) or self.lines.find("node", index, (keys[0],))
            raise self.error(f"{label}.{field}", f"{what}, but [network] filtering = false promises that no "
                             "node ever filters", f"{fix + ', or ' if fix else ''}set filtering = true in [network]",
                             line)

    def check_kernel_modules(self, net: Network, tables) -> None:
        """Verilog kernels share the generated design's name space: a module is not the network's (its top
        module), one name is one file, and the files ``generate`` copies side by side have distinct names."""
        modules: dict[str, tuple[str, int]] = {}
        names: dict[str, tuple[str, int]] = {}
        for index, node in enumerate(net.nodes):
            kernel = node.kernel
            if not isinstance(kernel, UserKernel) or kernel.language != "verilog":
                continue
            label = f"{item_label('node', index, tables[index])}.kernel.module"
            line = self.lines.find("node", index, ("kernel",))
            if kernel.module.lower() in (net.name.lower(), *VERILOG_KEYWORDS):
                what = "the network's name, which names the generated top module" \
                    if kernel.module.lower() == net.name.lower() else "a Verilog keyword"
                raise self.error(label, f"{_show(kernel.module)} is {what}", "rename the module (or the network)", line)
            seen = modules.setdefault(kernel.module, (kernel.file, index))
            if seen[0] != kernel.file:
                raise self.error(label, f"{_show(kernel.module)} is also the module of node[{seen[1]}] from another "
                                 "file", "give different modules different names", line)
            base = Path(kernel.file).name
            other = names.setdefault(base, (kernel.file, index))
            if other[0] != kernel.file:
                raise self.error(f"{item_label('node', index, tables[index])}.kernel.verilog",
                                 f"{base} is also the name of node[{other[1]}]'s file, from another folder, and "
                                 "generate copies both beside the network's Verilog", "rename one of the files",
                                 line)

    def check_last(self, net: Network, tables) -> None:
        """``last = true`` gives a source's kernel its words' ``tlast``: elsewhere there is none to give."""
        for index, node in enumerate(net.nodes):
            if node.last and net.in_edges(node.name):
                raise self.error(f"{item_label('node', index, tables[index])}.last",
                                 "applies to a source only (its words' tlast)", "remove last",
                                 self.lines.find("node", index, ("last",)))

    def check_kernel_inputs(self, net: Network, tables) -> None:
        """A built-in kernel that reads its inputs' layouts (the variance network) gets inputs of the widths it
        reads (:attr:`sfdf.gen.kernels.Builtin.inputs`); a user's kernel is checked against its edges when it is
        built (docs/kernels.md)."""
        for index, node in enumerate(net.nodes):
            found = builtin(node.kernel)
            if found is None:
                continue
            problem = found.inputs([e.width for e in net.in_edges(node.name)], net.index_width)
            if problem is None:
                continue
            label = item_label("node", index, tables[index])
            raise self.error(f"{label}.kernel", f"{node.kernel} {problem[0]}", problem[1],
                             self.lines.find("node", index, ("kernel",)))


# -- small helpers --------------------------------------------------------------------------------------

def _raise(problem: str, fix: str):
    raise _Bad(problem, fix)


def _boolean(fix: str, words: tuple[str, ...] = ()):
    """A parser of ``true``/``false`` (and of ``words``, strings taken as they are); ``fix`` says what each
    means."""
    def parse(value):
        if value in words and isinstance(value, str):
            return value
        if not isinstance(value, bool):
            either = "true or false" if not words else ", ".join(f'"{w}"' for w in words) + ", true or false"
            raise _Bad(f"must be {either}, not {_show(value)}", fix)
        return value
    return parse


def _choice_kernel(value) -> str:
    if not isinstance(value, str):
        raise _Bad(f"must be a string, not {_show(value)}", _suggest("", KERNELS, quote=True))
    if value not in KERNELS and value not in SDF_KERNELS:  # an SDF network's kernel (sdf_test) is said there
        raise _Bad(f"unknown kernel {_show(value)}", _suggest(value, KERNELS, quote=True))
    return value


def _user_param(key: str, value):
    if not _IDENTIFIER.match(key):
        raise _Bad(f"{_show(key)} is not an identifier", "name parameters as the kernel's Verilog parameters or "
                   "keyword arguments")
    if not isinstance(value, bool | int | float | str):
        raise _Bad(f"must be an integer, a number, a boolean or a string, not {_show(value)}",
                   "give a value the kernel's parameter takes")
    return value


def _python_target(value, what: str) -> str:
    """``"package.module:Class"``."""
    fix = f'name {what} as "<package.module>:<Class>"'
    if not isinstance(value, str):
        raise _Bad(f"must be a string, not {_show(value)}", fix)
    module, colon, attribute = value.partition(":")
    if not colon or not _PYTHON_NAME.match(module) or not _IDENTIFIER.match(attribute):
        raise _Bad(f"{_show(value)} is not a module and a class", fix)
    return value


def _golden(value, folder: str) -> str:
    """A golden's ``"module:Class"``, whose module is beside the spec or importable."""
    target = _python_target(value, "the golden")
    module = target.partition(":")[0]
    if not Path(folder, *module.split(".")).with_suffix(".py").is_file() and not _importable(module, folder):
        raise _Bad(f"finds no module {module} beside the spec ({folder}) or on the Python path",
                   f"put {module.replace('.', '/')}.py beside the spec, or name an importable module")
    return target


def _importable(module: str, folder: str) -> bool:
    """``module`` is a package beside the spec, or found on the Python path (its parents are imported)."""
    if Path(folder, module.split(".")[0]).is_dir():
        return True
    try:
        return importlib.util.find_spec(module) is not None
    except (ImportError, ValueError):
        return False


def _verilog_file(value, folder: str) -> str:
    """A Verilog kernel's file, relative to the spec's folder, which must exist: its absolute path."""
    if not isinstance(value, str) or not value:
        raise _Bad(f"must be a file name, not {_show(value)}", 'give the Verilog file, e.g. verilog = "kernels/thr.v"')
    path = Path(folder, value)
    if not path.is_file():
        raise _Bad(f"{_show(value)} is not a file (looked in {folder})", "give the Verilog file's path relative to "
                   "the spec's folder")
    return str(path.resolve())


def _kernel_param(param: KernelParam, value) -> int | float:
    ok = _is_int(value) or (param.kind is float and isinstance(value, float))
    if ok and (param.low is None or value >= param.low) and (param.high is None or value <= param.high):
        return param.kind(value)
    if param.kind is int:
        raise _Bad(f"must be an integer {_range_text(param.low, param.high)}, not {_show(value)}", param.fix)
    raise _Bad(f"must be a number in [{param.low:g}, {param.high:g}], not {_show(value)}", param.fix)


def _node_name(value, nodes: dict[str, Node]) -> str:
    if not isinstance(value, str):
        raise _Bad(f"must be a node name, not {_show(value)}", _suggest("", nodes))
    if value not in nodes:
        raise _Bad(f"unknown node {_show(value)}", _suggest(value, nodes))
    return value


def _at_most(value, limit, problem: str, fix: str, shown=None):
    """``value`` unless it is an int above ``limit``: then ``<value> <problem> <shown or limit>``."""
    if _is_int(value) and limit is not None and value > limit:
        raise _Bad(f"{value} {problem} {limit if shown is None else shown}", fix)
    return value


def _rates(fix: str):
    """A parser of an SDF rate: an integer, or a list with one per phase (004)."""
    def parse(value):
        if isinstance(value, list):
            if not 1 <= len(value) <= MAX_PHASES:
                raise _Bad(f"lists {len(value)} phases", f"give 1..{MAX_PHASES} entries, one per phase")
            return tuple(_integer(v, 0, MAX_RATE, f"{fix}, per phase") for v in value)
        return _integer(value, 0, MAX_RATE, f"{fix}, or a list with one per phase")
    return parse


def _receivers(value, nodes: dict[str, Node]) -> tuple[str, ...]:
    """A message's ``to``: a node, or a non-empty list of distinct nodes (a portal)."""
    names = value if isinstance(value, list) else [value]
    if not names:
        raise _Bad("is an empty list", "name at least one receiver")
    result = tuple(_node_name(v, nodes) for v in names)
    if len(set(result)) < len(result):
        raise _Bad("lists a node twice", "name each receiver once")
    return result


def _latency(value) -> tuple[int, int]:
    """``k`` or ``[min, max]`` firings."""
    fix = f"use an integer in -{MAX_LATENCY}..{MAX_LATENCY}, or [min, max]"
    if isinstance(value, list):
        if len(value) != 2:
            raise _Bad(f"lists {len(value)} values", "use [min, max]")
        low, high = (_integer(v, -MAX_LATENCY, MAX_LATENCY, fix) for v in value)
        if low > high:
            raise _Bad(f"[{low}, {high}] has min above max", "write [min, max]")
        return low, high
    k = _integer(value, -MAX_LATENCY, MAX_LATENCY, fix)
    return k, k


def _kernel_width(value, kernel, fixed):
    """An edge's explicit ``width``: free, unless the sending kernel fixes its payload width."""
    if fixed is not None and value != fixed:
        raise _Bad(f"{kernel} sends {fixed}-bit payloads, not {value}", f"remove width or set it to {fixed}")
    return value


def _edge_names(tables: list[dict], fields: list[dict], explicit: dict[str, int]) -> list[str]:
    """Explicit names, else ``<from>_<to>``, ``<from>_<to>_2``, ... skipping names already taken."""
    taken = set(explicit)
    names = []
    for table, f in zip(tables, fields):
        if "name" in table:
            names.append(table["name"])
            continue
        base = f"{f['src']}_{f['dst']}"
        name, k = base, 1
        while name in taken:
            k += 1
            name = f"{base}_{k}"
        taken.add(name)
        names.append(name)
    return names


# -- entry points -----------------------------------------------------------------------------------------

def parse_spec(text: str, source: str = "<memory>") -> Network:
    """Parse and validate spec ``text``.

    Parameters
    ----------
    text : str
        TOML in the format of README ("A tour of the spec").
    source : str
        File name used in error messages and stored as ``Network.source``.

    Returns
    -------
    Network
        The validated network; ``"auto"`` values stay symbolic, ``"inf"`` intervals are ``None``,
        kernel parameters are completed with their defaults.

    Raises
    ------
    SpecError
        For the first mistake found, in one line with file, field, line and fix.
    """
    # A UTF-8 byte-order mark (some Windows editors write one) is not TOML, and says nothing: dropped.
    return _Parser(text.removeprefix("\ufeff"), source).parse()


def load_spec(path) -> Network:
    """Read and validate the spec file at ``path`` (see :func:`parse_spec`).

    Raises
    ------
    FileNotFoundError, OSError
        When the file cannot be read.
    SpecError
        When it is not valid UTF-8 or not a valid spec.
    """
    raw = Path(path).read_bytes()
    try:
        text = raw.decode("utf-8")
    except UnicodeDecodeError as exc:
        raise SpecError(str(path), "TOML", f"not UTF-8 text (byte {exc.start})", "save the file as UTF-8") from None
    return parse_spec(text, str(path))

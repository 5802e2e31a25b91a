"""The validated, immutable network model: nodes, edges, and the multigraph they form.

A network is a directed acyclic multigraph (002 Sec. 1; 000 Sec. 2.1). Every edge carries a data
channel of exact capacity ``|q|`` and, in credit mode, a control channel of capacity ``|q'|``
(000 Fig. 2). Values the user may leave to the tool (``"auto"``) stay symbolic here; the analysis
resolves them (:func:`sfdf.gen.analysis.resolve`). An infinite interval is ``None`` (``null`` in JSON).

This module knows nothing of TOML: :mod:`sfdf.gen.spec` parses and validates files into these classes.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field, replace
from functools import cached_property
from types import MappingProxyType
from typing import Literal

import networkx as nx

from sfdf.gen.kernels import builtin

__all__ = [
    "AUTO",
    "DUMMY_ALGORITHMS",
    "INTERVAL_ALGORITHMS",
    "MODES",
    "Auto",
    "Edge",
    "Interval",
    "Message",
    "Network",
    "Node",
]

AUTO: Literal["auto"] = "auto"
Auto = Literal["auto"]
#: A dummy or heartbeat interval: a non-negative integer, ``None`` for infinite, or ``"auto"``.
Interval = int | None | Auto

MODES = ("credit", "inband")
DUMMY_ALGORITHMS = ("naive", "propagation", "nonpropagation")
#: What ``sfdf intervals --algorithm`` takes: 002's three, the potential bound and 000's heartbeats
#: (:func:`sfdf.gen.analysis.intervals`).
INTERVAL_ALGORITHMS = (*DUMMY_ALGORITHMS, "potential", "heartbeat")


def _frozen(mapping: Mapping | None) -> Mapping:
    return MappingProxyType(dict(mapping or {}))


@dataclass(frozen=True)
class Node:
    """A compute node (002 Alg. 1).

    Members
    -------
    name : str
        Unique identifier.
    kernel : str, sfdf.gen.contract.UserKernel or None
        A built-in kernel's name (:data:`sfdf.gen.kernels.BUILTIN`; ``None`` means ``random_filter`` with
        rate 0), or the user's own (docs/kernels.md).
    params : Mapping
        Kernel parameters (read-only).
    ii : int
        Initiation interval: cycles per computation.
    control_messages : int or None
        ``m``: most user control messages the node sends per data token on each output edge
        (000 Sec. 4.3); ``None`` means unbounded, which forces heartbeat 0 on its out-edges.
    registered_offers : bool
        Hardware only: the node reads its inputs' offers from registers where the platform gives them
        (:func:`sfdf.hdl.offer.offer_slots`), a cycle per hop for the clock; ``False``: the receivers offer
        to the join straight, a cycle less per hop into the node at a slower clock (docs/hardware.md,
        "Latency, and how to size a reconvergent path").
    pipelined : bool or "auto"
        Hardware only: the node's two stages (docs/hardware.md, "The pipelined node"); ``False`` on a node
        of one input and one output (live credit, ``ii = 1``, a kernel without stages): it decides and
        sends in one cycle, a hop of one cycle where the pipelined node's is three, at a slower clock
        (docs/hardware.md, "The single-stage node"); ``"auto"``: single-stage where it can be and a
        reconvergent path then runs faster (:func:`sfdf.hdl.timing.single_stage`), else pipelined.
    latency : int or None
        A user kernel's cycles from input beat to output beat when nothing stalls (``None``: a built-in's own).
    may_filter : bool or None
        A user kernel's promise (``False``: it emits on every output at every computation); ``None``: a
        built-in's, which follows from its params (:func:`sfdf.gen.contract.may_filter`).
    index, last, messages : bool
        The user kernel's optional features (docs/kernels.md): ``i_index``; a source's ``i_last``; control
        messages as beats.
    """

    name: str
    kernel: str | None = None
    params: Mapping = field(default_factory=lambda: _frozen({}))
    ii: int = 1
    control_messages: int | None = 0
    registered_offers: bool = True
    pipelined: bool | Auto = AUTO
    latency: int | None = None
    may_filter: bool | None = None
    index: bool = False
    last: bool = False
    messages: bool = False

    def __post_init__(self):
        object.__setattr__(self, "params", _frozen(self.params))


@dataclass(frozen=True)
class Edge:
    """An edge: the data channel ``q`` and its control channel ``q'`` (000 Fig. 2).

    Members
    -------
    name : str
        Unique identifier (default ``<src>_<dst>``, then ``_2``, ``_3`` for parallel edges).
    src, dst : str
        Sending and receiving node.
    capacity : int
        ``|q| >= 1``: the data channel holds exactly this many tokens, output buffer included (003 Sec. 2).
    control_capacity : int or "auto"
        ``|q'|`` (credit mode).
    output_buffer : int
        ``|q|_o``: sender-side tokens invisible to the receiver until flushed (003); 0 is none.
    interval : int, None or "auto"
        Heartbeat ``[e]`` (credit mode, 000 Alg. 4) or dummy interval ``[q]`` (inband, 002 Alg. 2, 5);
        ``None`` is infinite.
    threshold : int or "auto"
        Credit threshold ``T``, ``0 <= T < |q|`` (000 Alg. 2).
    width : int
        Payload bits.
    push, pop : int or tuple of int
        SDF rates (004): items the sender produces / the receiver consumes per firing; a tuple has one
        entry per phase of that end's node (cyclo-static: ``(1, 0)`` is half a round-robin splitter).
    peek : int, tuple of int or None
        Items the receiver must see to fire (``>= pop``); ``None`` is ``pop``.
    initial : int
        Items on the edge at reset (delays).
    """

    name: str
    src: str
    dst: str
    capacity: int
    control_capacity: int | Auto = AUTO
    output_buffer: int = 0
    interval: Interval = AUTO
    threshold: int | Auto = AUTO
    width: int = 32
    push: int | tuple[int, ...] = 1
    pop: int | tuple[int, ...] = 1
    peek: int | tuple[int, ...] | None = None
    initial: int = 0


@dataclass(frozen=True)
class Message:
    """A teleport message (004 Sec. "Semantics of Messaging"): sent by ``sender`` at each of its firings
    (as 004's constraints assume), delivered to every node of the portal ``receivers`` at the firing
    that ``latency`` names through SDEP (:mod:`sfdf.gen.sdf.messages`).

    Members
    -------
    sender : str
    receivers : tuple of str
        One or several (a portal).
    latency : tuple of int
        ``(min, max)``; a single latency ``k`` is ``(k, k)``.
    """

    sender: str
    receivers: tuple[str, ...]
    latency: tuple[int, int] = (0, 0)

    def __post_init__(self):
        object.__setattr__(self, "receivers", tuple(self.receivers))
        object.__setattr__(self, "latency", tuple(self.latency))


@dataclass(frozen=True)
class Network:
    """A validated network: the topology and every channel parameter.

    Members
    -------
    name : str
        Identifier; names the Verilog top and the manifest.
    mode : {"credit", "inband"}
        Control channels with credits (000) or dummies in-band on the data channel (002).
    dummy_algorithm : {"naive", "propagation", "nonpropagation"}
        Inband only: how ``"auto"`` intervals are computed.
    filtering : bool
        ``False`` promises that no node ever filters.
    live_credit : bool
        Credit mode: a receiver with no credit and no control message in flight takes the tokens the
        sender has pushed since its last control message at once, against the sender's ``SCB``
        (docs/hardware.md, "Live credit"); ``False`` is 000's receiver as printed, which takes a token
        only against a credit message (000 Fig. 3 then deadlocks on credit batching alone).
    data_width, index_width : int
        Default payload bits; computation index bits.
    nodes, edges : tuple
        In spec order.
    messages : tuple of Message
        Teleport messages (004), in spec order.
    source : str
        The spec file this came from (for error messages), or ``"<memory>"``.
    """

    name: str
    nodes: tuple[Node, ...]
    edges: tuple[Edge, ...]
    mode: str = "credit"
    dummy_algorithm: str = "nonpropagation"
    filtering: bool = True
    live_credit: bool = True
    data_width: int = 32
    index_width: int = 32
    source: str = "<memory>"
    messages: tuple[Message, ...] = ()

    def __post_init__(self):
        object.__setattr__(self, "nodes", tuple(self.nodes))
        object.__setattr__(self, "edges", tuple(self.edges))
        object.__setattr__(self, "messages", tuple(self.messages))

    @cached_property
    def is_sdf(self) -> bool:
        """A synchronous dataflow network (004): some rate other than 1, initial items or a teleport
        message. It runs in the SDF analysis and model (``sfdf schedule``, ``sdep``, ``simulate``), not
        in the SFDF analysis and hardware, whose nodes compute once per index."""
        return bool(self.messages) or any(
            (e.push, e.pop, e.initial) != (1, 1, 0) or e.peek not in (None, 1, e.pop) for e in self.edges)

    # -- lookup (cached: the model is immutable) -------------------------------------------------
    @cached_property
    def node_by_name(self) -> Mapping[str, Node]:
        return MappingProxyType({n.name: n for n in self.nodes})

    @cached_property
    def edge_by_name(self) -> Mapping[str, Edge]:
        return MappingProxyType({e.name: e for e in self.edges})

    @cached_property
    def _adjacency(self) -> tuple[dict, dict]:
        ins: dict[str, list[Edge]] = {n.name: [] for n in self.nodes}
        outs: dict[str, list[Edge]] = {n.name: [] for n in self.nodes}
        for e in self.edges:
            outs[e.src].append(e)
            ins[e.dst].append(e)
        return ({k: tuple(v) for k, v in ins.items()}, {k: tuple(v) for k, v in outs.items()})

    def in_edges(self, node: str) -> tuple[Edge, ...]:
        """Edges into ``node``, in spec order."""
        return self._adjacency[0][node]

    def out_edges(self, node: str) -> tuple[Edge, ...]:
        """Edges out of ``node``, in spec order."""
        return self._adjacency[1][node]

    @cached_property
    def sources(self) -> tuple[str, ...]:
        """Nodes with no incoming edge: they read ``s_axis_<node>``."""
        return tuple(n.name for n in self.nodes if not self.in_edges(n.name))

    @cached_property
    def sinks(self) -> tuple[str, ...]:
        """Nodes with no outgoing edge: they write ``m_axis_<node>``."""
        return tuple(n.name for n in self.nodes if not self.out_edges(n.name))

    def single_stage_problem(self, node: str) -> tuple[str, str] | None:
        """Why node ``node`` cannot be single-stage (``pipelined = false``, docs/hardware.md, "The single-stage
        node"), and the fix; None where it can: live credit, one input and one output, ``ii = 1``, a kernel
        without pipeline stages."""
        n = self.node_by_name[node]
        ins, outs = len(self.in_edges(node)), len(self.out_edges(node))
        if self.mode != "credit" or not self.live_credit:
            return "a single-stage node speaks live credit only", 'remove pipelined, or set mode = "credit" with live credit'
        if ins != 1 or outs != 1:
            return f"a single-stage node has one input and one output, not {ins} and {outs}", "remove pipelined"
        if n.ii != 1:
            return f"a single-stage node computes every cycle, not every {n.ii}", "remove pipelined, or ii"
        if not isinstance(n.kernel, str | None):
            return "a single-stage node runs the built-in kernels only (a kernel's handshake needs two stages)", \
                "remove pipelined"
        if builtin(n.kernel).staged:
            return f"kernel {n.kernel} has pipeline stages, which a single-stage node has not", "remove pipelined"
        return None

    def topological_order(self) -> tuple[str, ...]:
        """Node names in a deterministic topological order (spec order breaks ties)."""
        rank = {n.name: i for i, n in enumerate(self.nodes)}
        return tuple(nx.lexicographical_topological_sort(self.graph(), key=rank.__getitem__))

    # -- graphs ---------------------------------------------------------------------------------
    def graph(self) -> nx.MultiDiGraph:
        """The network as a ``MultiDiGraph``; edge keys are edge names, attributes the ``Edge``.

        Node attribute ``node`` holds the :class:`Node`; edge attributes ``edge`` (the
        :class:`Edge`) and ``capacity``.
        """
        g = nx.MultiDiGraph(name=self.name)
        for n in self.nodes:
            g.add_node(n.name, node=n)
        for e in self.edges:
            g.add_edge(e.src, e.dst, key=e.name, edge=e, capacity=e.capacity)
        return g

    def with_edges(self, edges) -> Network:
        """A copy with ``edges`` (an iterable of :class:`Edge`) in place of the current ones."""
        return replace(self, edges=tuple(edges))

    def with_intervals(self, intervals: Mapping[str, int | None]) -> Network:
        """A copy whose edges take the given intervals (edges not named keep theirs)."""
        return self.with_edges(
            replace(e, interval=intervals[e.name]) if e.name in intervals else e for e in self.edges
        )

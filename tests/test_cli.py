"""sfdf.cli: the ``sfdf`` commands, their exit codes, JSON shapes and one-line user errors.

The first part replaces ``gen.analysis`` and ``gen.refmodel`` by fakes to pin what the CLI itself
does; the ``real`` part runs the real modules on the shipped examples (skipped until they exist).
"""

import json
import subprocess
import sys
import types
from dataclasses import replace
from pathlib import Path

import pytest

from sfdf.cli import main, read_frames
from sfdf.gen.errors import InputError
from sfdf.hdl import timing  # noqa: F401  (the real hardware cycles, imported before the fake analysis below)

SFDF = Path(sys.executable).parent / "sfdf"
CHECK_KEYS = {"network", "potential_deadlock", "deadlock_free", "violations", "intervals"}
SIMULATE_KEYS = {"deadlocked", "computations", "data_tokens", "dummies", "credits", "control_messages",
                 "blocking_cycle"}
UNSAFE = {"fig3_deadlock", "ob_fig2"}


TWO_SOURCES = """\
[network]
name = "two"
data_width = 8

[[node]]
name = "a"

[[node]]
name = "b"

[[node]]
name = "j"

[[edge]]
from = "a"
to = "j"
capacity = 2

[[edge]]
from = "b"
to = "j"
capacity = 2
interval = "inf"
"""


# -- fakes ----------------------------------------------------------------------------------------------

class FakeReport:
    def __init__(self, network, cycles=None):
        self.network = network
        self.deadlock_free = network.name not in UNSAFE

    def to_json(self):
        return {"network": self.network.name, "potential_deadlock": True, "deadlock_free": self.deadlock_free,
                "violations": [] if self.deadlock_free else [{"kind": "k", "edges": ["uw"], "detail": "d"}],
                "intervals": {e.name: None for e in self.network.edges}, "extra": 1}

    def summary_lines(self):
        return [f"network {self.network.name}", "verdict: " + ("safe" if self.deadlock_free else "UNSAFE")]


class FakeResult:
    def __init__(self, network, computations):
        self.deadlocked = network.name in UNSAFE
        self.computations = computations

    def to_json(self):
        return {"deadlocked": self.deadlocked, "computations": self.computations, "data_tokens": 5, "dummies": 0,
                "credits": 0, "control_messages": 0, "blocking_cycle": ["u", "v"] if self.deadlocked else []}

    def summary_lines(self):
        return ["deadlocked" if self.deadlocked else "completed"]


@pytest.fixture
def calls(monkeypatch):
    """Install fake ``gen.analysis`` and ``gen.refmodel``; returns the arguments they were called with."""
    calls = {}
    analysis = types.ModuleType("sfdf.gen.analysis")
    analysis.check = FakeReport
    analysis.cycle_structure = lambda net: None
    analysis.repair_output_buffers = lambda net, cycles=None: calls.setdefault("repair", {"uw": 1} if net.name in UNSAFE else {})

    def intervals(net, algorithm):
        calls["algorithm"] = algorithm
        return {e.name: (None if i == 0 else i + 1) for i, e in enumerate(net.edges)}

    def simulate(network, **kwargs):
        calls["simulate"] = kwargs
        return FakeResult(network, kwargs["computations"])

    analysis.intervals = intervals
    monkeypatch.setattr("sfdf.hdl.timing.hardware_rate", lambda net, platform=None: calls.get("throughput"))
    refmodel = types.ModuleType("sfdf.gen.refmodel")
    refmodel.simulate = simulate
    monkeypatch.setitem(sys.modules, "sfdf.gen.analysis", analysis)
    monkeypatch.setitem(sys.modules, "sfdf.gen.refmodel", refmodel)
    return calls


def run(capsys, *argv):
    """``main(argv)``: (exit status, stdout, stderr)."""
    status = main([str(a) for a in argv])
    out, err = capsys.readouterr()
    return status, out, err


def check_user_error(capsys, argv, message):
    """A user mistake: exit 2, exactly ``sfdf: error: <message>`` on stderr, nothing on stdout."""
    status, out, err = run(capsys, *argv)
    assert (status, out, err) == (2, "", f"sfdf: error: {message}\n")


# -- check ----------------------------------------------------------------------------------------------

def test_check_safe(calls, capsys, examples):
    assert run(capsys, "check", examples / "variance.toml") == (0, "network variance\nverdict: safe\n", "")


def test_check_unsafe(calls, capsys, examples):
    assert run(capsys, "check", examples / "ob_fig2.toml")[:2] == (1, "network ob_fig2\nverdict: UNSAFE\n")


def test_check_json(calls, capsys, examples):
    status, out, _ = run(capsys, "check", examples / "fig3_deadlock.toml", "--json")
    data = json.loads(out)
    assert status == 1 and CHECK_KEYS <= set(data) and "repair" not in data and data["extra"] == 1


def test_check_repair_json(calls, capsys, examples):
    status, out, _ = run(capsys, "check", examples / "ob_fig2.toml", "--json", "--repair")
    assert (status, json.loads(out)["repair"]) == (1, {"uw": 1})


def test_check_repair_table(calls, capsys, examples):
    assert run(capsys, "check", examples / "ob_fig2.toml", "--repair")[1].splitlines()[2:] == [
        "repair (output buffers that make the network safe):",
        "  edge  capacity  output_buffer  repaired",
        "  uw          16              8         1",
    ]


def test_check_repair_nothing(calls, capsys, examples):
    assert run(capsys, "check", examples / "ob_fig2_safe.toml", "--repair")[:2] == (
        0, "network ob_fig2_safe\nverdict: safe\nrepair: no output buffer needs to change\n")


def test_check_throughput_lines(calls, capsys, examples):
    calls["throughput"] = {"describe": "0.500 tokens per cycle: the room of uw (8 tokens) against 16 cycles",
                           "full_rate": 1.0, "full_rate_sizing": {"uw": 17},
                           "unregistered_offers": {"nodes": ["w", "x"], "tokens_per_cycle": 0.75, "exact": "3/4"},
                           "single_stage": {"nodes": ["w"], "tokens_per_cycle": 0.875, "exact": "7/8"}}
    assert run(capsys, "check", examples / "ob_fig2.toml")[1].splitlines()[2:] == [
        ('throughput (the generated hardware with no filtering, docs/hardware.md "Latency, and how to size a '
         'reconvergent path"): 0.500 tokens per cycle: the room of uw (8 tokens) against 16 cycles'),
        "capacities for the 1.000 tokens per cycle the nodes allow:",
        "  edge  capacity  sized",
        "  uw          16     17",
        ("or without offer registers on w, x (registered_offers = false: a cycle less per hop into each, at a "
         "slower clock): 0.750 tokens per cycle"),
        ("or single-stage w (pipelined = false: one cycle per hop through each, at a slower clock): 0.875 tokens "
         "per cycle"),
    ]


# -- intervals ------------------------------------------------------------------------------------------

@pytest.mark.parametrize("algorithm", ["naive", "propagation", "nonpropagation", "heartbeat"])
def test_intervals_json(calls, capsys, examples, algorithm):
    status, out, _ = run(capsys, "intervals", examples / "diamond.toml", "--algorithm", algorithm, "--json")
    assert (status, calls["algorithm"]) == (0, algorithm)
    assert json.loads(out) == {"algorithm": algorithm, "intervals": {"uv": None, "vx": 2, "uw": 3, "wx": 4}}


def test_intervals_table(calls, capsys, examples):
    assert run(capsys, "intervals", examples / "diamond.toml", "--algorithm", "naive") == (0, """\
diamond: naive intervals (inf: no dummies or heartbeats needed)
  edge  from  to  capacity  interval
  uv    u     v          4       inf
  vx    v     x          4         2
  uw    u     w         16         3
  wx    w     x         16         4
""", "")


def test_intervals_needs_algorithm(calls, capsys, examples):
    status, _, err = run(capsys, "intervals", examples / "diamond.toml")
    assert status == 2 and err.endswith("sfdf intervals: error: the following arguments are required: --algorithm\n")


def test_intervals_unknown_algorithm(calls, capsys, examples):
    status, _, err = run(capsys, "intervals", examples / "diamond.toml", "--algorithm", "fast")
    assert status == 2 and "argument --algorithm: invalid choice: 'fast'" in err


# -- simulate -------------------------------------------------------------------------------------------

def test_simulate_defaults(calls, capsys, examples):
    assert run(capsys, "simulate", examples / "variance.toml") == (0, "completed\n", "")
    assert calls["simulate"] == {"computations": 1000, "inputs": None, "seed": 1, "scheduler": "random"}


def test_simulate_options(calls, capsys, examples):
    run(capsys, "simulate", examples / "diamond.toml", "--computations", 7, "--seed", 9, "--scheduler", "adversarial")
    assert calls["simulate"] == {"computations": 7, "inputs": None, "seed": 9, "scheduler": "adversarial"}


def test_simulate_deadlock(calls, capsys, examples):
    assert run(capsys, "simulate", examples / "fig3_deadlock.toml") == (1, "deadlocked\n", "")


def test_simulate_json(calls, capsys, examples):
    status, out, _ = run(capsys, "simulate", examples / "fig3_deadlock.toml", "--json")
    assert status == 1 and set(json.loads(out)) == SIMULATE_KEYS


def test_simulate_input_feeds_every_source(calls, capsys, write_file):
    spec = write_file("two.toml", TWO_SOURCES)
    frames = write_file("frames.txt", "1 2 3\n\n# a comment\n4\t255\n")
    assert run(capsys, "simulate", spec, "--input", frames)[0] == 0
    assert calls["simulate"] == {"computations": 5, "inputs": {"a": [[1, 2, 3], [4, 255]], "b": [[1, 2, 3], [4, 255]]},
                                 "seed": 1, "scheduler": "random"}


def test_simulate_input_with_computations(calls, capsys, write_file):
    spec = write_file("two.toml", TWO_SOURCES)
    run(capsys, "simulate", spec, "--input", write_file("f.txt", "1 2\n"), "--computations", 1)
    assert calls["simulate"]["computations"] == 1


def test_simulate_negative_computations(calls, capsys, examples):
    status, _, err = run(capsys, "simulate", examples / "variance.toml", "--computations", -1)
    assert status == 2 and "argument --computations: must be an integer in 0..1,000,000, not '-1'" in err


def test_simulate_unknown_scheduler(calls, capsys, examples):
    assert run(capsys, "simulate", examples / "variance.toml", "--scheduler", "fifo")[0] == 2


# -- input frames ---------------------------------------------------------------------------------------

def check_frames(write_file, text, message, width=8):
    path = write_file("frames.txt", text)
    with pytest.raises(InputError) as info:
        read_frames(path, width)
    assert str(info.value) == message.format(path=path)


FRAMES_FIX = "write unsigned decimal integers separated by spaces, one frame per line"


def test_frames_not_a_number(write_file):
    check_frames(write_file, "1 2\n3 x\n", f'{{path}}:2: word 2: "x" is not an unsigned integer; {FRAMES_FIX}')


def test_frames_negative(write_file):
    check_frames(write_file, "-1\n", f'{{path}}:1: word 1: "-1" is not an unsigned integer; {FRAMES_FIX}')


def test_frames_float(write_file):
    check_frames(write_file, "\n1.5\n", f'{{path}}:2: word 1: "1.5" is not an unsigned integer; {FRAMES_FIX}')


def test_frames_too_wide(write_file):
    check_frames(write_file, "255 256\n", "{path}:1: word 2: 256 does not fit in 8 bits; "
                 "use words below 2**8 (the source port's width)")


def test_frames_empty(write_file):
    check_frames(write_file, "\n# nothing\n", f"{{path}}: --input: no frames; {FRAMES_FIX}")


def test_frames_ok(write_file):
    assert read_frames(write_file("f.txt", " 0  4294967295 \n7\n"), 32) == [[0, 4294967295], [7]]


def test_simulate_bad_input(calls, capsys, write_file):
    spec, frames = write_file("two.toml", TWO_SOURCES), write_file("frames.txt", "1 2\n3 4 x\n")
    check_user_error(capsys, ["simulate", spec, "--input", frames],
                     f'{frames}:2: word 3: "x" is not an unsigned integer; {FRAMES_FIX}')


def test_simulate_missing_input(calls, capsys, write_file, tmp_path):
    spec = write_file("two.toml", TWO_SOURCES)
    check_user_error(capsys, ["simulate", spec, "--input", tmp_path / "none.txt"],
                     f"{tmp_path / 'none.txt'}: --input: cannot read: No such file or directory; check the path")


# -- user mistakes --------------------------------------------------------------------------------------

@pytest.mark.parametrize("argv", [["check"], ["intervals", "--algorithm", "naive"], ["simulate"]])
def test_invalid_spec(calls, capsys, write_file, argv):
    spec = write_file("bad.toml", '[network]\nname = "n"\n[[node]]\nname = "u"\nii = 0\n')
    check_user_error(capsys, [argv[0], spec, *argv[1:]],
                     f'{spec}:5: node "u".ii: must be an integer in 1..65536, not 0; use the cycles per computation')


def test_missing_spec(calls, capsys, tmp_path):
    path = tmp_path / "none.toml"
    check_user_error(capsys, ["check", path], f"{path}: SPEC: cannot read: No such file or directory; check the path")


def test_spec_is_a_directory(calls, capsys, tmp_path):
    check_user_error(capsys, ["check", tmp_path], f"{tmp_path}: SPEC: cannot read: Is a directory; check the path")


def test_spec_not_utf8(calls, capsys, tmp_path):
    path = tmp_path / "bin.toml"
    path.write_bytes(b"\xff")
    check_user_error(capsys, ["check", path], f"{path}: SPEC: not UTF-8 text (byte 0); save the file as UTF-8")


def test_bad_toml_has_no_traceback(calls, capsys, write_file):
    status, out, err = run(capsys, "check", write_file("bad.toml", "[network\n"))
    assert (status, out) == (2, "") and "Traceback" not in err
    assert err.count("\n") == 1 and err.startswith("sfdf: error: ")


@pytest.mark.board
def test_build_without_tools_writes_the_files(capsys, examples, tmp_path):
    status, out, _ = run(capsys, "build", examples / "variance.toml", "--board", "icebreaker", "--no-build", "--json",
                         "-o", tmp_path)
    assert status == 0, out
    result = json.loads(out)
    assert {"board": "icebreaker", "built": False, "clock_mhz": 12.0, "baud": 1_000_000}.items() <= result.items()
    for name in ("variance.v", "variance.json", "variance.core", "variance.board.json", "icebreaker/top.il",
                 "icebreaker/build_top.sh"):
        assert (tmp_path / name).is_file(), name
    assert "name: sfdf:networks:variance:" in (tmp_path / "variance.core").read_text()
    assert json.loads((tmp_path / "variance.board.json").read_text())["buffer_words"] == 256
    assert (result["throughput"]["exact"], result["throughput"]["full_rate_sizing"]) == ("1", {})
    assert "--router" not in (tmp_path / "icebreaker" / "build_top.sh").read_text()  # nextpnr's default
    assert result["router"] == "router1"


@pytest.mark.board
def test_build_router_goes_to_nextpnr(capsys, examples, tmp_path):
    status, out, _ = run(capsys, "build", examples / "variance.toml", "--board", "ulx3s-85f", "--no-build",
                         "--router", "router2", "--json", "-o", tmp_path)
    assert status == 0, out
    (line,) = [line for line in (tmp_path / "ulx3s-85f" / "build_top.sh").read_text().splitlines()
               if line.startswith('"$NEXTPNR_')]
    assert "--router router2" in line
    assert json.loads(out)["router"] == "router2"  # the result says which router placed it


@pytest.mark.board
@pytest.mark.parametrize("argv, message", [
    (["--board", "ulx3s-99f"], ("--board: 'ulx3s-99f' is not a board; use one of ulx3s-85f, ulx3s-45f, ulx3s-25f, "
                                "ulx3s-12f, icebreaker")),
    (["--board", "ulx3s-85f", "--clock", "900"], "--clock: ECP5 PLL: 900 MHz is outside its output range (3.125-400 MHz)"),
    (["--board", "icebreaker", "--clock", "12", "--baud", "4000000"],
     "--baud: UART at 4000000 baud needs a clock of at least 16 MHz (4 cycles per bit), not 12 MHz"),
    (["--board", "ulx3s-85f", "--buffer-words", "1000"], "--buffer-words: 1000 is not a power of two >= 2"),
])
def test_build_user_mistakes_are_one_line(capsys, examples, argv, message):
    status, _, err = run(capsys, "build", examples / "variance.toml", *argv, "--no-build")
    assert status == 2 and err.count("\n") == 1 and err.startswith("sfdf: error: ") and message in err, err


@pytest.mark.board
def test_build_refuses_an_unsafe_network(capsys, examples, tmp_path):
    status, _, err = run(capsys, "build", examples / "fig3_deadlock.toml", "--board", "ulx3s-85f", "--no-build",
                         "-o", tmp_path)
    assert status == 1 and "refusing to build an unsafe network" in err
    assert not any(tmp_path.iterdir())


def test_no_command(capsys):
    status, _, err = run(capsys)
    assert status == 2 and "the following arguments are required: COMMAND" in err


def test_help(capsys):
    status, out, _ = run(capsys, "--help")
    assert status == 0 and "check" in out and "intervals" in out and "simulate" in out


def test_console_script_user_error(tmp_path):
    spec = tmp_path / "bad.toml"
    spec.write_text('[network]\nname = "n"\n[[node]]\nname = "u"\n[[edge]]\nfrom = "u"\nto = "u"\ncapacity = 1\n')
    proc = subprocess.run([SFDF, "check", spec], capture_output=True, text=True, check=False)
    assert (proc.returncode, proc.stdout) == (2, "")
    assert proc.stderr == (f"sfdf: error: {spec}:7: edge[0].to: self-loop u -> u; "
                           "connect two different nodes (a network is acyclic)\n")


# -- real analysis and reference model --------------------------------------------------------------------

EXPECTED_CHECK = {"variance": 0, "fig3_deadlock": 1, "diamond": 0, "blast": 0, "ob_fig2": 1, "ob_fig2_safe": 0}


@pytest.mark.parametrize("name", sorted(EXPECTED_CHECK))
def test_real_check_examples(capsys, examples, name):
    status, out, err = run(capsys, "check", examples / f"{name}.toml", "--json")
    data = json.loads(out)
    assert (status, err, data["network"], data["deadlock_free"]) == (EXPECTED_CHECK[name], "", name, status == 0)
    assert CHECK_KEYS <= set(data) and bool(data["violations"]) == (status == 1)


def test_real_check_human(capsys, examples):
    status, out, _ = run(capsys, "check", examples / "ob_fig2.toml", "--repair")
    assert status == 1 and "repair (output buffers that make the network safe):" in out


def test_real_repair_makes_ob_fig2_safe(capsys, examples):
    from sfdf.gen.analysis import check
    from sfdf.gen.spec import load_spec

    network = load_spec(examples / "ob_fig2.toml")
    repair = json.loads(run(capsys, "check", examples / "ob_fig2.toml", "--json", "--repair")[1])["repair"]
    fixed = network.with_edges(replace(e, output_buffer=repair.get(e.name, e.output_buffer)) for e in network.edges)
    assert repair and check(fixed).deadlock_free


@pytest.mark.parametrize("algorithm", ["naive", "propagation", "nonpropagation", "heartbeat"])
def test_real_intervals(capsys, examples, algorithm):
    status, out, _ = run(capsys, "intervals", examples / "blast.toml", "--algorithm", algorithm, "--json")
    data = json.loads(out)
    assert status == 0 and data["algorithm"] == algorithm
    assert len(data["intervals"]) == 12 and "hit_merge_ungapped_ext_2" in data["intervals"]


def test_real_console_script(examples):
    proc = subprocess.run([SFDF, "check", examples / "fig3_deadlock.toml", "--json"], capture_output=True, text=True,
                          check=False)
    assert (proc.returncode, json.loads(proc.stdout)["deadlock_free"]) == (1, False)


def test_real_simulate_variance(capsys, examples):
    status, out, _ = run(capsys, "simulate", examples / "variance.toml", "--computations", 200, "--json")
    data = json.loads(out)
    assert (status, data["deadlocked"]) == (0, False) and SIMULATE_KEYS <= set(data)


def test_real_simulate_fig3_deadlocks(capsys, examples):
    status, out, _ = run(capsys, "simulate", examples / "fig3_deadlock.toml", "--computations", 2000, "--json")
    data = json.loads(out)
    assert (status, data["deadlocked"]) == (1, True) and data["blocking_cycle"]


def test_real_simulate_input(capsys, examples, write_file):
    frames = write_file("frames.txt", "1 2 3 0 5\n6 0 0 9\n")
    status, out, _ = run(capsys, "simulate", examples / "diamond.toml", "--input", frames, "--json")
    assert status == 0 and not json.loads(out)["deadlocked"]


def test_real_simulate_human(capsys, examples):
    status, out, _ = run(capsys, "simulate", examples / "diamond.toml", "--computations", 100)
    assert status == 0 and out.strip()


@pytest.mark.parametrize(("name", "status"), [("ob_fig2", 1), ("ob_fig2_safe", 0)])
def test_real_simulate_ob_fig2_adversarial(capsys, examples, name, status):
    assert run(capsys, "simulate", examples / f"{name}.toml", "--scheduler", "adversarial", "--computations", 500)[0] == status


def test_cosim_flush_needs_an_inband_output_buffer(capsys, examples):
    spec = examples / "variance.toml"
    check_user_error(capsys, ["cosim", spec, "--flush", "uv:4"],
                     f"{spec}: --flush uv: names no in-band edge with an output buffer of 2 or more; name such an "
                     "edge (a spontaneous flush only affects an output buffer, 003)")
    status, _, err = run(capsys, "cosim", spec, "--flush", "uv")
    assert status == 2 and "must be EDGE:INDEX, such as uw:4, not 'uv'" in err


def test_simulate_input_words_fit_the_variance_source_port(capsys, examples, write_file):
    path = write_file("wide.txt", "1 2 70000\n")
    check_user_error(capsys, ["simulate", examples / "variance.toml", "--input", path],
                     f"{path}:1: word 3: 70000 does not fit in 16 bits; use words below 2**16 (the source port's "
                     "width)")


def _fake_build(fmax, fits=True):
    def build(network, board, outdir, **kwargs):
        result = {"board": board.name, "device": board.device, "network": network.name, "mode": network.mode,
                  "clock_mhz": kwargs["clock_hz"] / 1e6, "baud": kwargs["baud"], "built": True,
                  "directory": str(outdir)}
        if not fits:
            return {**result, "fits": False, "error": "ICESTORM_LC 9000/5280 170%", "fmax_mhz": 0.0, "luts": 0,
                    "ffs": 0, "brams": 0, "timing_met": False}
        return {**result, "fits": True, "fmax_mhz": fmax, "luts": 6000, "ffs": 2400, "brams": 10,
                "timing_met": fmax >= kwargs["clock_hz"] / 1e6, "utilisation": {"TRELLIS_COMB": [6000, 83640]},
                "critical_path": [{"from": "a.Q", "to": "b.D", "net": "n", "delay_ns": 1.0}],
                "critical_path_through": [], "bitstream": "top.bit", "report": "top.report.json"}
    return build


@pytest.mark.board
@pytest.mark.parametrize("fmax, fits, status, text", [
    (27.2, True, 0, "Fmax 27.2 MHz (meets 25 MHz); 6000 LUT4, 2400 FF, 10 block RAM; TRELLIS_COMB 6000/83640"),
    (20.0, True, 1, "critical path: a.Q -> b.D (1 steps; slowest nets: n 1.00 ns)"),
    (0.0, False, 1, "variance does not fit LFE5U-85F: ICESTORM_LC 9000/5280 170%"),
])
def test_build_reports_fmax_and_exit_status(capsys, examples, monkeypatch, fmax, fits, status, text):
    import sfdf.boards.build

    monkeypatch.setattr(sfdf.boards.build, "build", _fake_build(fmax, fits))
    got, out, err = run(capsys, "build", examples / "variance.toml", "--board", "ulx3s-85f")
    assert got == status and text in out, out
    assert "building variance for ulx3s-85f (LFE5U-85F) at 25 MHz" in err
    if fits:
        assert ("throughput with no filtering: 1.000 tokens per cycle: u's initiation interval (1), no channel limits "
                "it, 25.0 Mtokens/s at 25 MHz") in out
    got, out, _ = run(capsys, "build", examples / "variance.toml", "--board", "ulx3s-85f", "--json")
    result = json.loads(out)
    assert got == status and {"board", "fmax_mhz", "luts", "ffs", "brams"} <= result.keys()


@pytest.mark.board
@pytest.mark.parametrize("board, line", [
    ("ulx3s-85f", ("capacities for 1.000 tokens per cycle: a_e 27 (sfdf check {spec} --sized OUT writes them into "
                   "a copy of the spec)")),
    # iCE40's single-input nodes have no offer registers: two cycles per hop into them, so 19 is enough there
    ("icebreaker", ("capacities for 1.000 tokens per cycle: a_e 19 (sfdf check {spec} --sized OUT writes the "
                    "generic Verilog's, a_e 27: enough here too)")),
])
def test_build_names_the_capacities_for_full_rate(capsys, examples, monkeypatch, board, line):
    import sfdf.boards.build

    monkeypatch.setattr(sfdf.boards.build, "build", _fake_build(27.2))
    spec = examples / "residual_pipelined.toml"
    out = run(capsys, "build", spec, "--board", board)[1].splitlines()
    assert out[-2] == line.format(spec=spec)


def test_readme_cli_table_lists_every_flag():
    """README's CLI table names every option ``--help`` shows (one of its spellings), command by command."""
    import argparse

    from sfdf.cli import _parser

    rows = [line for line in (Path(__file__).parents[1] / "README.md").read_text().splitlines()
            if line.startswith("| `sfdf ")]
    commands = next(a for a in _parser()._actions if isinstance(a, argparse._SubParsersAction)).choices
    for name, sub in commands.items():
        (row,) = [line for line in rows if line.startswith(f"| `sfdf {name} ")]
        for action in sub._actions:
            spellings = [s for s in action.option_strings if s not in ("-h", "--help")]
            assert not spellings or any(f"{s} " in row or f"{s}]" in row or f"{s}`" in row for s in spellings), \
                (name, spellings)


def test_the_cli_tables_are_their_sources():
    """The choices the CLI offers are the ones the analysis and the reference model take, no more, no less."""
    from sfdf import cli
    from sfdf.gen.analysis import ALGORITHMS, intervals
    from sfdf.gen.refmodel.scheduler import SCHEDULERS

    assert sorted(cli.SCHEDULERS) == sorted(SCHEDULERS)
    assert cli.INTERVAL_ALGORITHMS is ALGORITHMS
    with pytest.raises(ValueError, match="Algorithm must be one of"):
        intervals(None, "no-such-algorithm")

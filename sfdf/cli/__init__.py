"""The ``sfdf`` command line (README, "The CLI"): ``check``, ``intervals``, ``simulate``, ``generate``,
``cosim``, ``spark``, ``build``, for SDF networks (004) ``schedule`` and ``sdep``, and for space-time memory (001)
``gc``.

Exit status: 0 safe / completed, 1 unsafe / deadlocked, 2 for any user mistake (an invalid spec,
a missing file, a malformed ``--input`` file, a bad option, an output folder that is a file or cannot be
written), reported as one line ``sfdf: error: ...`` on stderr without a traceback; 141 when the reader of
the output goes away (``| head``), as a process stopped by SIGPIPE. The CLI sits on top of every layer and nothing
imports it (docs/architecture.md).
"""

from __future__ import annotations

import argparse
import os
import sys

from sfdf.gen.errors import UserError
from sfdf.gen.model import INTERVAL_ALGORITHMS
from sfdf.hdl.buildcache import BOARDSIM_DIR, COSIM_DIR

from . import commands as run
from .commands import DEFAULT_COMPUTATIONS, DEFAULT_COSIM
from .inputs import WORD, read_frames

__all__ = ["main", "read_frames"]

#: The reference model's schedulers (gen.refmodel.scheduler.SCHEDULERS, which loads the model: the CLI starts
#: without it; tests/test_cli.py ties the two).
SCHEDULERS = ("random", "round_robin", "adversarial")
_ROUTERS = ("router1", "router2")  # nextpnr's


def _flush(text: str) -> tuple[str, int]:
    edge, _, index = text.partition(":")
    if not edge or not WORD.match(index):
        raise argparse.ArgumentTypeError(f"must be EDGE:INDEX, such as uw:4, not {text!r}")
    return edge, int(index)


def _integer(low: int, high: int, why: str = ""):
    """An argparse type: an integer in ``low..high`` written in digits (no sign), else the error with the
    range and ``why`` it has that bound. Every count has a bound, so whatever is accepted runs in bounded
    memory (the reference model keeps each output it compares)."""
    def parse(text: str) -> int:
        if not WORD.match(text) or not low <= int(text) <= high:
            raise argparse.ArgumentTypeError(f"must be an integer in {low:,}..{high:,}, not {text!r}"
                                             + (f" ({why})" if why else ""))
        return int(text)

    return parse


#: The bounds of the count flags (README, "The CLI").
MAX_COMPUTATIONS = 10**6  # the model keeps every output token: about 1 GB at this many words per source
MAX_COSIM_WORDS = 10**5  # cocotb simulates a few thousand cycles per second
MAX_SEED = 2**32 - 1
_computations = _integer(0, MAX_COMPUTATIONS, "the model keeps every output to compare")
_seed = _integer(0, MAX_SEED, "a 32-bit seed")
_count = _integer(1, 10**6, "every value is printed")
_steady_states = _integer(1, 10**4, "each repeats the whole schedule")
_partitions = _integer(1, 10**4, "one device each")
_cycles = _integer(1, 2**48, "cycles a frame may take")
_baud = _integer(300, 12_000_000, "a UART needs at least 2 clock cycles per bit")
_words = _integer(2, 2**20, "the board's block RAM holds the frame")
_frames = _integer(1, 10**6, "frames sent and checked")
_bytes = _integer(1, 2**40, "a byte of the link")
_frame_words = _integer(1, 2**16, "words per frame")
_cosim_words = _integer(0, MAX_COSIM_WORDS, "cocotb simulates a few thousand cycles per second")
_placer_seed = _integer(0, 2**31 - 1, "nextpnr's seed")


def _float_in(text: str, accept, wanted: str) -> float:
    """``text`` as a float that ``accept`` takes (NaN never does), else argparse's error naming ``wanted``."""
    try:
        value = float(text)
    except ValueError:
        value = None
    if value is None or not accept(value):
        raise argparse.ArgumentTypeError(f"must be {wanted}, not {text!r}")
    return value


def _conf(text: str) -> tuple[str, str]:
    key, equals, value = text.partition("=")
    if not equals or not key.strip():
        raise argparse.ArgumentTypeError(f"{text!r} is not KEY=VALUE (such as spark.executor.resource.fpga.amount=2)")
    return key.strip(), value


def _probability(text: str) -> float:
    return _float_in(text, lambda v: 0.0 <= v <= 1.0, "a probability in [0, 1]")


def _megahertz(text: str) -> float | str:
    if text == "max":  # the board's Fmax probe target (sfdf build: the design's own Fmax)
        return text
    return _float_in(text, lambda v: 0.0 < v <= 1000.0, "a clock in MHz in (0, 1000], such as 48, or max")


def _version() -> str:
    """The installed distribution's version (pyproject.toml), or "unknown" where sfdf runs uninstalled."""
    from importlib.metadata import PackageNotFoundError, version

    try:
        return version("sfdf")
    except PackageNotFoundError:
        return "unknown"


def _parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="sfdf", description="Deadlock-free streaming hardware for filtering dataflow networks.")
    parser.add_argument("--version", action="version", version=f"sfdf {_version()}")
    commands = parser.add_subparsers(dest="command", required=True, metavar="COMMAND")

    check = commands.add_parser("check", help="validate a spec and analyse its deadlock safety",
                                description="Exit status: 0 safe, 1 unsafe, 2 invalid.")
    check.add_argument("spec", metavar="SPEC", help="topology spec (TOML)")
    check.add_argument("--json", action="store_true", help="print the report as JSON")
    check.add_argument("--repair", action="store_true",
                       help="also propose output buffer sizes that make the network safe (003)")
    check.add_argument("--sized", metavar="OUT",
                       help="write SPEC to OUT with the capacities for the rate the nodes allow (with 000's credit "
                            "messages, also every auto T and heartbeat as sized), and check it")
    check.set_defaults(run=run.check)

    intervals = commands.add_parser("intervals", help="compute dummy or heartbeat intervals",
                                    description="Exit status: 0, or 2 for an invalid spec.")
    intervals.add_argument("spec", metavar="SPEC", help="topology spec (TOML)")
    intervals.add_argument("--algorithm", required=True, choices=INTERVAL_ALGORITHMS,
                           help="naive, propagation, nonpropagation (002), potential (in-band auto: the LP) or heartbeat (000)")
    intervals.add_argument("--json", action="store_true", help="print the intervals as JSON")
    intervals.set_defaults(run=run.intervals)

    simulate = commands.add_parser("simulate", help="run the reference model",
                                   description="Exit status: 0 completed, 1 deadlocked (or, for an SDF network, its "
                                               "messages unsatisfiable), 2 invalid.")
    simulate.add_argument("spec", metavar="SPEC", help="topology spec (TOML)")
    simulate.add_argument("--computations", type=_computations, metavar="N",
                          help=f"computations per source (default {DEFAULT_COMPUTATIONS}, "
                               "or the number of words in --input)")
    simulate.add_argument("--input", metavar="FILE",
                          help="frames for every source: one per line, whitespace-separated unsigned integers")
    simulate.add_argument("--seed", type=_seed, default=1, metavar="S", help="scheduler seed (default 1)")
    simulate.add_argument("--scheduler", choices=SCHEDULERS, default="random",
                          help="order in which ready nodes fire (default random)")
    simulate.add_argument("--steady-states", type=_steady_states, metavar="K",
                          help="SDF networks (004): run the initialization and K steady states (default 2)")
    simulate.add_argument("--json", action="store_true", help="print the result as JSON")
    simulate.set_defaults(run=run.simulate)

    schedule = commands.add_parser("schedule", help="SDF networks (004): repetitions, constrained schedule, buffers, "
                                   "message constraints", description="Exit status: 0 satisfiable within the "
                                   "capacities, 1 unsatisfiable, 2 invalid.")
    schedule.add_argument("spec", metavar="SPEC", help="topology spec (TOML)")
    schedule.add_argument("--json", action="store_true", help="print the schedule as JSON")
    schedule.set_defaults(run=run.schedule)

    sdep = commands.add_parser("sdep", help="the stream dependence function SDEP_A<-B(1..N) (004)",
                               description="Exit status: 0, or 2 for an invalid spec or node.")
    sdep.add_argument("spec", metavar="SPEC", help="topology spec (TOML)")
    sdep.add_argument("--upstream", required=True, metavar="A", help="the actor whose firings are counted")
    sdep.add_argument("--downstream", required=True, metavar="B", help="the actor that fires 1..N times")
    sdep.add_argument("--count", required=True, type=_count, metavar="N", help="how many values")
    sdep.add_argument("--json", action="store_true", help="print the values as JSON")
    sdep.set_defaults(run=run.sdep)

    generate = commands.add_parser("generate", help="write the Verilog top and its manifest",
                                   description="Exit status: 0 written, 1 unsafe, 2 invalid.")
    generate.add_argument("spec", metavar="SPEC", help="topology spec (TOML)")
    generate.add_argument("-o", "--output", required=True, metavar="DIR", help="output directory")
    generate.add_argument("--allow-unsafe", action="store_true",
                          help="generate even when the analysis finds a possible deadlock")
    generate.set_defaults(run=run.generate)

    cosim = commands.add_parser("cosim", help="cocotb on Verilator against the reference model",
                                description="Exit status: 0 pass, 1 mismatch or deadlock, 2 invalid.")
    cosim.add_argument("spec", metavar="SPEC", help="topology spec (TOML)")
    cosim.add_argument("--computations", type=_cosim_words, metavar="N",
                       help=f"words per source, or for an SDF network firings of each source (default {DEFAULT_COSIM})")
    cosim.add_argument("--seed", type=_seed, default=1, metavar="S", help="stimulus and pause seed (default 1)")
    cosim.add_argument("--pause", type=_probability, default=0.3, metavar="P",
                       help="probability that a driver idles or back-pressures in a cycle (default 0.3)")
    cosim.add_argument("--no-backpressure", action="store_true", help="drivers never pause")
    cosim.add_argument("--frame-max", type=_frame_words, default=8, metavar="N",
                       help="longest input frame in words (default 8; frame ends carry credits)")
    cosim.add_argument("--flush", type=_flush, action="append", default=[], metavar="EDGE:INDEX",
                       help="in-band: flush EDGE's output buffer right after it carries INDEX (003 Fig. 2's "
                            "adversary; a verification-only port)")
    cosim.add_argument("--waves", action="store_true", help="record waveforms (FST, or VCD without liblz4-dev)")
    cosim.add_argument("--build-dir", default=COSIM_DIR, metavar="DIR", help=f"build cache (default {COSIM_DIR})")
    cosim.add_argument("--json", action="store_true", help="print the result as JSON")
    cosim.set_defaults(run=run.cosim)

    spark = commands.add_parser("spark", help="the PySpark job: frames through the simulated device or boards, every "
                                "result checked", description="Exit status: 0 every frame checked or quarantined, 1 a "
                                "mismatch or a frame twice in the results, 2 invalid input.")
    spark.add_argument("--input", required=True, metavar="PATH",
                       help="Parquet frames (a folder of files, or one file): frame_id long, pixels array<int>")
    spark.add_argument("--output", required=True, metavar="DIR", help="results/, summary.json, summary.png")
    spark.add_argument("--spec", metavar="SPEC", help="topology spec (default: examples/variance.toml)")
    spark.add_argument("--stream", action="store_true", help="Structured Streaming over the input folder")
    spark.add_argument("--checkpoint", metavar="DIR", help="streaming checkpoint (default OUTPUT/checkpoint)")
    spark.add_argument("--master", default="local[*,4]", metavar="URL",
                       help="Spark master (default local[*,4]: all cores, 4 attempts per task)")
    spark.add_argument("--partitions", type=_partitions, metavar="N",
                       help="spread the frames over N partitions, one device each (default: Spark's split of the input files)")
    spark.add_argument("--timeout-cycles", type=_cycles, metavar="N",
                       help="cycles a frame may take (default 1000000 simulated, or two seconds of a board's clock, thirty of a simulated board's)")
    spark.add_argument("--device", default="sim", metavar="DEVICE",
                       help="sim (default), serial:PORT[,PORT...] (boards, one per task) or resource:fpga (Spark's "
                            "resource scheduling); boards need --board-dir")
    spark.add_argument("--board-dir", metavar="DIR", help="the folder sfdf build -o DIR wrote for the boards")
    spark.add_argument("--conf", type=_conf, action="append", default=[], metavar="KEY=VALUE",
                       help="a Spark setting for the session (repeatable)")
    spark.add_argument("--json", action="store_true", help="print the summary as JSON")
    spark.set_defaults(run=run.spark)

    board = commands.add_parser("build", help="bitstream, Fmax and utilisation for a board (Yosys and nextpnr from "
                                "YoWASP)", description="Exit status: 0 built and the clock met, 1 unsafe, does not "
                                "fit, misses the clock or a tool failed, 2 invalid.")
    board.add_argument("spec", metavar="SPEC", help="topology spec (TOML)")
    board.add_argument("--board", required=True, metavar="B",
                       help="ulx3s-85f, ulx3s-45f, ulx3s-25f, ulx3s-12f or icebreaker")
    board.add_argument("-o", "--output", metavar="DIR", help="output directory (default build/boards/<name>-<board>)")
    board.add_argument("--clock", type=_megahertz, metavar="MHZ",
                       help="design clock, made by the board's PLL (default: the board's, docs/fpga.md); max: place "
                            "for the board's probe target (ECP5 250 MHz, iCE40 80 MHz) and report the design's own "
                            "Fmax, as docs/results.md's figures are measured")
    board.add_argument("--baud", type=_baud, default=1_000_000, metavar="N", help="UART rate (default 1000000)")
    board.add_argument("--buffer-words", type=_words, metavar="N",
                       help="words buffered per source: the longest frame (default: the board's)")
    board.add_argument("--seed", type=_placer_seed, default=1, metavar="S", help="nextpnr placer seed (default 1)")
    board.add_argument("--router", choices=_ROUTERS, metavar="R",
                       help="nextpnr's router, router1 (its default) or router2: minutes instead of up to half an "
                            "hour on a large network, at a slower clock (docs/fpga.md)")
    board.add_argument("--report", metavar="FILE", help="also write nextpnr's JSON report there")
    board.add_argument("--program", action="store_true", help="program the board (openFPGALoader or iceprog)")
    board.add_argument("--no-build", action="store_true",
                       help="write the Verilog, manifest, core file and build tree; run no tool")
    board.add_argument("--json", action="store_true", help="print the result as JSON")
    board.set_defaults(run=run.build)

    boardsim = commands.add_parser(
        "board-sim", help="the board sfdf build -o DIR made, simulated (Verilator), behind a pseudo-terminal",
        description="With --pty: print the pty's device path on the first line of standard output and serve the "
                    "simulated board there until interrupted (open it as serial:PATH). Without: send --frames "
                    "random frames through it in this process and check them. Exit status: 0, 1 a wrong result, "
                    "2 invalid.")
    boardsim.add_argument("dir", metavar="DIR", help="a folder sfdf build -o DIR wrote (--no-build is enough)")
    boardsim.add_argument("--pty", action="store_true", help="serve the board on a pseudo-terminal")
    boardsim.add_argument("--netlist", action="store_true",
                          help="simulate the board core as Yosys synthesizes it for the board (synth_ecp5 -nodsp / "
                               "synth_ice40) with Yosys's cell models, instead of the RTL")
    boardsim.add_argument("--frames", type=_frames, default=20, metavar="N",
                          help="without --pty: frames to send and check (default 20)")
    boardsim.add_argument("--build-dir", default=BOARDSIM_DIR, metavar="DIR",
                          help=f"build cache (default {BOARDSIM_DIR})")
    boardsim.add_argument("--corrupt-byte", type=_bytes, metavar="N",
                          help="testing: flip a bit of the N-th byte from the host (line noise)")
    boardsim.add_argument("--die-after-bytes", type=_bytes, metavar="N",
                          help="testing: end abruptly once N bytes from the host arrived (power lost)")
    boardsim.set_defaults(run=run.board_sim)

    gc = commands.add_parser("gc", help="space-time memory (001): run a JSON Lines trace, print minV, minK, minKV, minO "
                             "and what is collected", description="Exit status: 0, or 2 for an invalid trace or a "
                             "visibility violation.")
    gc.add_argument("trace", metavar="TRACE", help="JSON Lines: one operation a line (docs/stm.md)")
    gc.add_argument("--json", action="store_true", help="print the bounds and the garbage as JSON")
    gc.set_defaults(run=run.gc)
    return parser


def main(argv: list[str] | None = None) -> int:
    """Run ``sfdf`` with ``argv`` (default ``sys.argv[1:]``) and return the exit status.

    Parameters
    ----------
    argv : list of str, optional
        Command-line arguments without the program name.

    Returns
    -------
    int
        0 safe / completed, 1 unsafe / deadlocked, 2 user mistake.
    """
    try:
        args = _parser().parse_args(argv)
    except SystemExit as exc:  # --help (0) or a usage error (2, already printed by argparse)
        return exc.code if isinstance(exc.code, int) else 0
    try:
        return args.run(args)
    except UserError as exc:
        print(f"sfdf: error: {exc}", file=sys.stderr)
        return 2
    except BrokenPipeError:  # the reader went away (``sfdf check --json | head``): stop quietly, as SIGPIPE would
        os.dup2(os.open(os.devnull, os.O_WRONLY), sys.stdout.fileno())
        return 141
    except OSError as exc:  # a file or folder the user named could not be read or written
        where = f"{exc.filename}: " if exc.filename else ""
        print(f"sfdf: error: {where}{exc.strerror or exc}; check the path and its permissions", file=sys.stderr)
        return 2

"""The ``sfdf`` command line (DESIGN.md, "CLI"): ``check``, ``intervals``, ``simulate``, ``generate``, ``cosim``,
``spark`` and ``build``.

Exit status: 0 safe / completed, 1 unsafe / deadlocked, 2 for any user mistake (an invalid spec,
a missing file, a malformed ``--input`` file, a bad option), reported as one line
``sfdf: error: ...`` on stderr without a traceback.
"""

from __future__ import annotations

import argparse
import json
import re
import sys
from pathlib import Path

from sfdf.gen.errors import InputError, UserError
from sfdf.gen.kernels import word_width

__all__ = ["main", "read_frames"]

_ALGORITHMS = ("naive", "propagation", "nonpropagation", "heartbeat")
_SCHEDULERS = ("random", "round_robin", "adversarial")
_DEFAULT_COSIM = 200
_DEFAULT_COMPUTATIONS = 1000
_WORD = re.compile(r"[0-9]+\Z")
_FRAMES_FIX = "write unsigned decimal integers separated by spaces, one frame per line"


# -- input ------------------------------------------------------------------------------------------

def _read_text(path: str, argument: str) -> str:
    try:
        return Path(path).read_text(encoding="utf-8")
    except UnicodeDecodeError as exc:
        raise InputError(path, argument, f"not UTF-8 text (byte {exc.start})", "save the file as UTF-8") from None
    except OSError as exc:
        raise InputError(path, argument, f"cannot read: {exc.strerror}", "check the path") from None


def _load(path: str):
    from sfdf.gen.spec import parse_spec

    return parse_spec(_read_text(path, "SPEC"), path)


def read_frames(path: str, width: int) -> list[list[int]]:
    """Read an input frame file: one frame per line, whitespace-separated unsigned integers.

    Blank lines and lines starting with ``#`` are skipped.

    Parameters
    ----------
    path : str
        The file.
    width : int
        Bits per word (the sources' port width): every word must be below ``2**width``.

    Returns
    -------
    list of list of int
        The frames in file order, each of at least one word.

    Raises
    ------
    InputError
        For an unreadable file, a word that is not an unsigned integer or does not fit, or no frames.
    """
    frames = []
    for number, line in enumerate(_read_text(path, "--input").splitlines(), 1):
        words = line.split()
        if not words or words[0].startswith("#"):
            continue
        for position, word in enumerate(words, 1):
            if not _WORD.match(word):
                raise InputError(path, f"word {position}", f"{json.dumps(word)} is not an unsigned integer",
                                 _FRAMES_FIX, number)
            if int(word) >> width:
                raise InputError(path, f"word {position}", f"{word} does not fit in {width} bits",
                                 f"use words below 2**{width} (the source port's width)", number)
        frames.append([int(word) for word in words])
    if not frames:
        raise InputError(path, "--input", "no frames", _FRAMES_FIX)
    return frames


# -- output -----------------------------------------------------------------------------------------

def _table(headers: list[str], rows: list[list]) -> list[str]:
    """Aligned plain-text table: numbers right-aligned, text left-aligned."""
    cells = [[str(c) for c in headers]] + [["inf" if c is None else str(c) for c in row] for row in rows]
    widths = [max(len(row[i]) for row in cells) for i in range(len(headers))]
    numeric = [bool(rows) and all(isinstance(row[i], int) or row[i] is None for row in rows)
               for i in range(len(headers))]
    lines = []
    for row in cells:
        parts = [c.rjust(w) if numeric[i] else c.ljust(w) for i, (c, w) in enumerate(zip(row, widths))]
        lines.append("  " + "  ".join(parts).rstrip())
    return lines


def _print_json(data) -> None:
    print(json.dumps(data, indent=2))


# -- commands ---------------------------------------------------------------------------------------

def _check(args) -> int:
    from sfdf.gen.analysis import check, repair_output_buffers

    network = _load(args.spec)
    report = check(network)
    repair = repair_output_buffers(network) if args.repair else None
    if args.json:
        data = report.to_json()
        if repair is not None:
            data["repair"] = repair
        _print_json(data)
    else:
        print("\n".join(report.summary_lines()))
        if repair is not None:
            print(*_repair_lines(network, repair), sep="\n")
    return 0 if report.deadlock_free else 1


def _repair_lines(network, repair: dict[str, int]) -> list[str]:
    if not repair:
        return ["repair: no output buffer needs to change"]
    edges = network.edge_by_name
    rows = [[name, edges[name].capacity, edges[name].output_buffer, size] for name, size in repair.items()]
    return ["repair (output buffers that make the network safe):",
            *_table(["edge", "capacity", "output_buffer", "repaired"], rows)]


def _intervals(args) -> int:
    from sfdf.gen.analysis import intervals

    network = _load(args.spec)
    result = intervals(network, args.algorithm)
    if args.json:
        _print_json({"algorithm": args.algorithm, "intervals": dict(result)})
        return 0
    rows = [[e.name, e.src, e.dst, e.capacity, result.get(e.name)] for e in network.edges]
    print(f"{network.name}: {args.algorithm} intervals (inf: no dummies or heartbeats needed)")
    print("\n".join(_table(["edge", "from", "to", "capacity", "interval"], rows)))
    return 0


def _simulate(args) -> int:
    from sfdf.gen.refmodel import simulate

    network = _load(args.spec)
    inputs = None
    computations = args.computations
    if args.input is not None:
        frames = read_frames(args.input, min(word_width(network, s) for s in network.sources))
        inputs = {source: frames for source in network.sources}
        if computations is None:
            computations = sum(len(frame) for frame in frames)
    if computations is None:
        computations = _DEFAULT_COMPUTATIONS
    result = simulate(network, computations=computations, inputs=inputs, seed=args.seed,
                      scheduler=args.scheduler)
    if args.json:
        _print_json(result.to_json())
    else:
        print("\n".join(result.summary_lines()))
    return 1 if result.to_json()["deadlocked"] else 0


# -- parser -----------------------------------------------------------------------------------------

def _generate(args) -> int:
    from sfdf.hdl.generate import UnsafeNetwork, generate

    network = _load(args.spec)
    try:
        v_path, j_path = generate(network, args.output, allow_unsafe=args.allow_unsafe)
    except UnsafeNetwork as exc:
        print("\n".join(exc.report.summary_lines()), file=sys.stderr)
        print("sfdf: refusing to generate an unsafe network (pass --allow-unsafe to watch it deadlock)",
              file=sys.stderr)
        return 1
    print(f"wrote {v_path} and {j_path}")
    return 0


def _cosim(args) -> int:
    from sfdf.cosim.network import run_network
    from sfdf.gen.analysis import check

    network = _load(args.spec)
    flush_after = dict(args.flush)
    for edge in flush_after:
        e = network.edge_by_name.get(edge)
        if e is None or network.mode != "inband" or e.output_buffer < 2:
            raise UserError(args.spec, f"--flush {edge}", "names no in-band edge with an output buffer of 2 or "
                            "more", "name such an edge (a spontaneous flush only affects an output buffer, 003)")
    report = check(network)
    if not report.deadlock_free:
        print(f"sfdf: warning: {network.name} is not deadlock-free ({len(report.violations)} violation(s)); "
              "simulating anyway so the deadlock can be watched", file=sys.stderr)
    run = run_network(network, report=report, computations=args.computations or _DEFAULT_COSIM, seed=args.seed,
                      pause=0.0 if args.no_backpressure else args.pause, waves=args.waves,
                      build_dir=args.build_dir, max_frame=args.frame_max, flush_after=flush_after)
    results = run.results
    print(f"{network.name}: model {'DEADLOCKED on ' + ' -> '.join(run.blocking_cycle) if run.model_deadlocked else 'completed'}"
          f"; RTL {'passed' if results.passed else 'FAILED'} ({results.summary(0).splitlines()[0]})")
    for name in results.failed:
        message = results.tests[name].message or ""
        print(("RTL deadlock: " if "deadlock" in message else "RTL mismatch: ") + message)
    if results.waves:
        print(f"waves: {results.waves}")
    return 0 if results.passed else 1


def _spark(args) -> int:
    from sfdf.sw.spark import DEFAULT_SPEC, run_job

    spec = args.spec or str(DEFAULT_SPEC)
    _load(spec)  # a bad spec is a one-line error before Spark starts
    summary = run_job(spec, args.input, args.output, master=args.master, stream=args.stream,
                      checkpoint=args.checkpoint, partitions=args.partitions, timeout_cycles=args.timeout_cycles)
    if args.json:
        print(json.dumps(summary, indent=2))
    else:
        print(f"spark ({summary['mode']}, {summary['master']}): {summary['frames']} frames, {summary['checked']} "
              f"checked, {summary['mismatches']} mismatches, {summary['quarantined']} quarantined (bad input), "
              f"{summary['duplicates']} duplicates")
        print(f"{summary['frames_per_s']} frames/s over {summary['wall_s']} s; "
              f"{summary['cycles_per_frame_mean']:.1f} simulated cycles per frame (mean)")
        print(f"results: {Path(args.output) / 'results'}; summary: {Path(args.output) / 'summary.json'}, "
              f"{Path(args.output) / 'summary.png'}")
    return 0 if summary["mismatches"] == 0 and summary["duplicates"] == 0 else 1


def _build(args) -> int:
    from sfdf.boards import BOARDS
    from sfdf.boards.build import BuildFailed, ToolchainMissing, build, critical_path_summary
    from sfdf.boards.pll import ecp5_pll, ice40_pll
    from sfdf.boards.uart import uart_divisor
    from sfdf.gen.analysis import check

    board = BOARDS.get(args.board)
    if board is None:
        raise UserError(args.spec, "--board", f"{args.board!r} is not a board", f"use one of {', '.join(BOARDS)}")
    network = _load(args.spec)
    clock_hz = board.clock_hz if args.clock is None else args.clock * 1e6
    if clock_hz != board.oscillator_hz:
        try:
            clock_hz = (ecp5_pll if board.family == "ecp5" else ice40_pll)(board.oscillator_hz, clock_hz).f_out
        except ValueError as error:
            raise UserError(args.spec, "--clock", str(error), "choose another frequency") from None
    try:
        uart_divisor(clock_hz, args.baud)
    except ValueError as error:
        raise UserError(args.spec, "--baud", str(error), "choose another --baud or --clock") from None
    words = args.buffer_words or board.buffer_words
    if words < 2 or words & (words - 1):
        raise UserError(args.spec, "--buffer-words", f"{words} is not a power of two >= 2", "use 256, 1024, 2048, ...")
    report = check(network)
    if not report.deadlock_free:
        print("\n".join(report.summary_lines()), file=sys.stderr)
        print("sfdf: refusing to build an unsafe network", file=sys.stderr)
        return 1
    outdir = args.output or f"build/boards/{report.network.name}-{board.name}"
    if not args.no_build:
        print(f"sfdf: building {report.network.name} for {board.name} ({board.device}) at {clock_hz / 1e6:g} MHz: "
              "yosys, nextpnr, packer (minutes)...", file=sys.stderr)
    try:
        result = build(report.network, board, outdir, clock_hz=clock_hz, baud=args.baud, buffer_words=words,
                       do_build=not args.no_build, program=args.program, seed=args.seed, report=args.report)
    except (ToolchainMissing, BuildFailed) as error:
        print(f"sfdf: error: {error}", file=sys.stderr)
        return 1
    path = result.pop("critical_path", [])
    if path:
        result["critical_path_summary"] = critical_path_summary(path)
    ok = not result["built"] or (result["fits"] and result["timing_met"] and result.get("programmed", True))
    if args.json:
        _print_json(result)
        return 0 if ok else 1
    if not result["built"]:
        print(f"wrote {outdir}: {report.network.name}.v, .json, .core, .board.json and the {board.name} build tree "
              f"(no tool run)")
        return 0
    if not result["fits"]:
        print(f"{report.network.name} does not fit {board.device}: {result['error']}")
        return 1
    used = result["utilisation"]
    print(f"{report.network.name} on {board.name} ({board.device}): Fmax {result['fmax_mhz']:.1f} MHz "
          f"({'meets' if result['timing_met'] else 'MISSES'} {result['clock_mhz']:g} MHz); {result['luts']} LUT4, "
          f"{result['ffs']} FF, {result['brams']} block RAM"
          + "".join(f"; {cell} {u}/{a}" for cell, (u, a) in used.items() if u and cell not in ("TRELLIS_IO", "SB_IO")))
    if not result["timing_met"]:
        print(f"critical path: {result['critical_path_summary']}")
    print(f"bitstream: {result['bitstream']}; nextpnr report: {args.report or result['report']}")
    if "programmed" in result:
        print("programmed" if result["programmed"] else f"programming failed: {result['program_error']}")
    return 0 if ok else 1


def _flush(text: str) -> tuple[str, int]:
    edge, _, index = text.partition(":")
    if not edge or not _WORD.match(index):
        raise argparse.ArgumentTypeError(f"must be EDGE:INDEX, such as uw:4, not {text!r}")
    return edge, int(index)


def _count(text: str) -> int:
    if not _WORD.match(text):
        raise argparse.ArgumentTypeError(f"must be an integer >= 0, not {text!r}")
    return int(text)


def _parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="sfdf", description="Deadlock-free streaming hardware for filtering dataflow networks.")
    commands = parser.add_subparsers(dest="command", required=True, metavar="COMMAND")

    check = commands.add_parser("check", help="validate a spec and analyse its deadlock safety",
                                description="Exit status: 0 safe, 1 unsafe, 2 invalid.")
    check.add_argument("spec", metavar="SPEC", help="topology spec (TOML)")
    check.add_argument("--json", action="store_true", help="print the report as JSON")
    check.add_argument("--repair", action="store_true",
                       help="also propose output buffer sizes that make the network safe (003)")
    check.set_defaults(run=_check)

    intervals = commands.add_parser("intervals", help="compute dummy or heartbeat intervals",
                                    description="Exit status: 0, or 2 for an invalid spec.")
    intervals.add_argument("spec", metavar="SPEC", help="topology spec (TOML)")
    intervals.add_argument("--algorithm", required=True, choices=_ALGORITHMS,
                           help="naive, propagation, nonpropagation (002) or heartbeat (000)")
    intervals.add_argument("--json", action="store_true", help="print the intervals as JSON")
    intervals.set_defaults(run=_intervals)

    simulate = commands.add_parser("simulate", help="run the reference model",
                                   description="Exit status: 0 completed, 1 deadlocked, 2 invalid.")
    simulate.add_argument("spec", metavar="SPEC", help="topology spec (TOML)")
    simulate.add_argument("--computations", type=_count, metavar="N",
                          help=f"computations per source (default {_DEFAULT_COMPUTATIONS}, "
                               "or the number of words in --input)")
    simulate.add_argument("--input", metavar="FILE",
                          help="frames for every source: one per line, whitespace-separated unsigned integers")
    simulate.add_argument("--seed", type=int, default=1, metavar="S", help="scheduler seed (default 1)")
    simulate.add_argument("--scheduler", choices=_SCHEDULERS, default="random",
                          help="order in which ready nodes fire (default random)")
    simulate.add_argument("--json", action="store_true", help="print the result as JSON")
    simulate.set_defaults(run=_simulate)

    generate = commands.add_parser("generate", help="write the Verilog top and its manifest",
                                   description="Exit status: 0 written, 1 unsafe, 2 invalid.")
    generate.add_argument("spec", metavar="SPEC", help="topology spec (TOML)")
    generate.add_argument("-o", "--output", required=True, metavar="DIR", help="output directory")
    generate.add_argument("--allow-unsafe", action="store_true",
                          help="generate even when the analysis finds a possible deadlock")
    generate.set_defaults(run=_generate)

    cosim = commands.add_parser("cosim", help="cocotb on Verilator against the reference model",
                                description="Exit status: 0 pass, 1 mismatch or deadlock, 2 invalid.")
    cosim.add_argument("spec", metavar="SPEC", help="topology spec (TOML)")
    cosim.add_argument("--computations", type=_count, metavar="N",
                       help=f"words per source (default {_DEFAULT_COSIM})")
    cosim.add_argument("--seed", type=int, default=1, metavar="S", help="stimulus and pause seed (default 1)")
    cosim.add_argument("--pause", type=float, default=0.3, metavar="P",
                       help="probability that a driver idles or back-pressures in a cycle (default 0.3)")
    cosim.add_argument("--no-backpressure", action="store_true", help="drivers never pause")
    cosim.add_argument("--frame-max", type=_count, default=8, metavar="N",
                       help="longest input frame in words (default 8; frame ends carry credits)")
    cosim.add_argument("--flush", type=_flush, action="append", default=[], metavar="EDGE:INDEX",
                       help="in-band: flush EDGE's output buffer right after it carries INDEX (003 Fig. 2's "
                            "adversary; a verification-only port)")
    cosim.add_argument("--waves", action="store_true", help="record waveforms (FST, or VCD without liblz4-dev)")
    cosim.add_argument("--build-dir", default="build/cosim", metavar="DIR", help="build cache (default build/cosim)")
    cosim.set_defaults(run=_cosim)

    spark = commands.add_parser("spark", help="the PySpark job: frames through the simulated device, every result "
                                "checked", description="Exit status: 0 all outputs checked, 1 mismatch, 2 invalid "
                                "input.")
    spark.add_argument("--input", required=True, metavar="DIR", help="Parquet frames: frame_id long, pixels array<int>")
    spark.add_argument("--output", required=True, metavar="DIR", help="results/, summary.json, summary.png")
    spark.add_argument("--spec", metavar="SPEC", help="topology spec (default: examples/variance.toml)")
    spark.add_argument("--stream", action="store_true", help="Structured Streaming over the input folder")
    spark.add_argument("--checkpoint", metavar="DIR", help="streaming checkpoint (default OUTPUT/checkpoint)")
    spark.add_argument("--master", default="local[*,4]", metavar="URL",
                       help="Spark master (default local[*,4]: all cores, 4 attempts per task)")
    spark.add_argument("--partitions", type=_count, metavar="N",
                       help="spread the frames over N partitions, one device each (default: Spark's split of the input files)")
    spark.add_argument("--timeout-cycles", type=_count, default=1_000_000, metavar="N",
                       help="simulated cycles a frame may take (default 1000000)")
    spark.add_argument("--json", action="store_true", help="print the summary as JSON")
    spark.set_defaults(run=_spark)

    board = commands.add_parser("build", help="bitstream, Fmax and utilisation for a board (Yosys and nextpnr from "
                                "YoWASP)", description="Exit status: 0 built and the clock met, 1 unsafe, does not "
                                "fit, misses the clock or a tool failed, 2 invalid.")
    board.add_argument("spec", metavar="SPEC", help="topology spec (TOML)")
    board.add_argument("--board", required=True, metavar="B",
                       help="ulx3s-85f, ulx3s-45f, ulx3s-25f, ulx3s-12f or icebreaker")
    board.add_argument("-o", "--output", metavar="DIR", help="output directory (default build/boards/<name>-<board>)")
    board.add_argument("--clock", type=float, metavar="MHZ",
                       help="design clock, made by the board's PLL (default: the board's, docs/fpga.md)")
    board.add_argument("--baud", type=_count, default=1_000_000, metavar="N", help="UART rate (default 1000000)")
    board.add_argument("--buffer-words", type=_count, metavar="N",
                       help="words buffered per source: the longest frame (default: the board's)")
    board.add_argument("--seed", type=int, default=1, metavar="S", help="nextpnr placer seed (default 1)")
    board.add_argument("--report", metavar="FILE", help="also write nextpnr's JSON report there")
    board.add_argument("--program", action="store_true", help="program the board (openFPGALoader or iceprog)")
    board.add_argument("--no-build", action="store_true",
                       help="write the Verilog, manifest, core file and build tree; run no tool")
    board.add_argument("--json", action="store_true", help="print the result as JSON")
    board.set_defaults(run=_build)
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

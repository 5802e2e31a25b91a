"""The ``sfdf`` commands: each takes the parsed arguments and returns the exit status.

Each layer is imported by the command that needs it, so ``sfdf check`` starts without loading
cocotb or Spark (it reads the hardware's cycles from :mod:`sfdf.hdl.timing` for the throughput bound).
"""

from __future__ import annotations

import json
import math
import sys
import tempfile
from pathlib import Path

from sfdf.gen.errors import InputError, UserError
from sfdf.gen.kernels import word_width
from sfdf.gen.spec import parse_spec

from .inputs import load_spec_file as _load
from .inputs import output_file, output_folder, read_frames, read_text, separate_folders
from .progress import Progress, file_counter

__all__ = ["DEFAULT_COMPUTATIONS", "DEFAULT_COSIM", "build", "check", "cosim", "gc", "generate", "intervals",
           "schedule", "sdep", "simulate", "spark"]

DEFAULT_COSIM = 200
DEFAULT_COMPUTATIONS = 1000


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


def _load_sfdf(spec: str):
    """A spec for the SFDF analysis, model and hardware: an SDF network (004) is refused in one line."""
    network = _load(spec)
    if network.is_sdf:
        raise UserError(spec, "network", "is an SDF network (rates, initial items or [[message]], 004), which this "
                        "command does not take", "run sfdf check, sfdf schedule, sfdf sdep, sfdf simulate, sfdf generate or sfdf cosim on it "
                        "(docs/teleport.md)")
    return network


# -- commands ---------------------------------------------------------------------------------------

def check(args) -> int:
    from sfdf.gen.analysis import check, cycle_structure, repair_output_buffers
    from sfdf.hdl.timing import hardware_rate

    network = _load(args.spec)
    if network.is_sdf:
        return _check_sdf(args, network)
    if args.sized:
        _check_sized_path(args.sized, args.spec)
        output_file(args.sized, "--sized")
    cycles = cycle_structure(network)  # one derivation for the check and the repair
    report = check(network, cycles=cycles)
    repair = repair_output_buffers(network, cycles=cycles) if args.repair else None
    # the generated hardware's rate with no filtering, on the cycles it takes (generic Verilog and ECP5)
    rate = hardware_rate(report.network)
    sized = _write_sized(args.sized, args.spec, network, report, rate) if args.sized else None
    if args.json:
        data = report.to_json()
        if rate is not None:
            data["throughput"] = rate
        if repair is not None:
            data["repair"] = repair
        if sized is not None:
            data["sized"] = sized
        _print_json(data)
    else:
        print("\n".join(report.summary_lines()))
        if rate is not None:
            print(*_throughput_lines(report.network, rate, report.deadlock_free), sep="\n")
        if repair is not None:
            print(*_repair_lines(network, repair), sep="\n")
        if sized is not None:
            print(_sized_line(network, sized))
    return 0 if report.deadlock_free else 1


def _check_sdf(args, network) -> int:
    """``sfdf check`` of an SDF network (004): its bounded channels live in self-timed execution, each edge's
    least live capacity, or at a deadlock where every node waits and the capacity that frees it
    (:mod:`sfdf.gen.sdf.liveness`)."""
    from sfdf.gen.sdf.liveness import bounded_execution, capacity_fix, least_capacity
    from sfdf.gen.sdf.messages import Deliveries
    from sfdf.gen.sdf.rates import repetitions

    if args.repair:
        raise UserError(args.spec, "--repair", "does not apply to an SDF network (004), which has no output buffers",
                        "use --sized OUT for the capacities that reach full rate")
    if args.sized:
        _check_sized_path(args.sized, args.spec)
        output_file(args.sized, "--sized")
    deliveries = Deliveries(network) if network.messages else None  # the SDEP tables, for every search
    run = bounded_execution(network, deliveries=deliveries)
    least = {e.name: least_capacity(network, e.name, deliveries=deliveries) for e in network.edges} if run.live else {}
    fix = None if run.live else capacity_fix(network, run.stalls, deliveries)
    waits = "; ".join(s.describe() for s in run.stalls)
    if run.live:
        violations = []
    elif fix is not None:
        violations = [{"kind": "capacity", "edges": [fix[0]], "detail": f"{waits}: capacity "
                       f"{network.edge_by_name[fix[0]].capacity} -> {fix[1]} makes it live (the least)"}]
    else:
        violations = [{"kind": "deadlock", "edges": sorted({s.edge for s in run.stalls if s.waits != "message"}),
                       "detail": f"{waits}: no one capacity frees it"}]
    rate = _sdf_rate(network, least) if run.live else None
    sized = _write_sdf_sized(args.sized, args.spec, rate) if args.sized else None
    if args.json:
        data = {"network": network.name, "potential_deadlock": not run.live, "deadlock_free": run.live,
                "violations": violations, "intervals": dict.fromkeys(e.name for e in network.edges),
                "sdf": {"repetitions": repetitions(network), "least_capacities": least,
                        "stalls": [vars(s) for s in run.stalls],
                        "fix": {"edge": fix[0], "capacity": fix[1]} if fix else None, "throughput": rate}}
        if sized is not None:
            data["sized"] = sized
        _print_json(data)
        return 0 if run.live else 1
    if run.live:
        print(f"{network.name}: SDF, deadlock-free with these capacities (self-timed, bounded channels)")
        held = "" if args.sized else " (--sized OUT writes them)"
        print(f"throughput (the generated hardware, every source allowed and every sink ready, docs/teleport.md "
              f"\"Bounded channels\"): {_per_cycle(rate['iterations_per_cycle'])}; the nodes allow "
              f"{_per_cycle(rate['full_rate'])}, with the capacities under \"full rate\"{held}"
              + ("" if rate["least"] else " (enough, not the least)"))
        rows = [[e.name, e.src, e.dst, e.capacity, least[e.name], rate["full_rate_sizing"][e.name]] for e in network.edges]
        print("\n".join(_table(["edge", "from", "to", "capacity", "least live", "full rate"], rows)))
        if sized is not None:
            grown = ", ".join(f"{name} {network.edge_by_name[name].capacity} -> {c}" for name, c in sized["edges"].items()
                              if c != network.edge_by_name[name].capacity) or "unchanged"
            print(f"sized spec: wrote {sized['path']} (capacities {grown}): "
                  + (f"deadlock-free, {_per_cycle(sized['iterations_per_cycle'])}" if sized["deadlock_free"]
                     else "NOT deadlock-free (run sfdf check on it)"))
        return 0
    if sized is not None:
        print(f"sized spec: {sized['path']} not written: {sized['reason']}")
    print(f"{network.name}: SDF, deadlocks with these capacities after {run.firings} firings: {waits}")
    if fix is not None:
        print(f"  edge {fix[0]}: capacity {network.edge_by_name[fix[0]].capacity} -> {fix[1]} makes it live "
              "(the least, the other capacities as they are)")
    else:
        print("  no one capacity frees it" + (" (a message it waits for is due before the sender can send it)"
                                              if any(s.waits == "message" for s in run.stalls) else ""))
    return 1


def _per_cycle(value: dict) -> str:
    return f"{value['value']:.6g} iterations per cycle ({value['cycles']:.6g} cycles an iteration)" \
        if value["value"] else "0 iterations per cycle (it stops)"


def _rate_json(rate) -> dict:
    """An iterations-per-cycle Fraction as JSON: the value, its exact ratio and cycles per iteration."""
    return {"value": float(rate), "exact": f"{rate.numerator}/{rate.denominator}",
            "cycles": float(1 / rate) if rate else None}


def _sdf_rate(network, least: dict[str, int]) -> dict:
    """The generated SDF hardware's throughput with the spec's capacities, the rate its nodes allow and the
    capacities that reach it, none below the least live (:mod:`sfdf.gen.sdf.pipeline`, message credits included)."""
    from sfdf.gen.sdf.pipeline import full_rate_capacities, hardware_throughput

    full = full_rate_capacities(network)
    return {"iterations_per_cycle": _rate_json(hardware_throughput(network).iterations_per_cycle),
            "full_rate": _rate_json(full.iterations_per_cycle), "least": full.least,
            "full_rate_sizing": {name: max(c, least[name]) for name, c in full.capacities.items()}}


def _write_sdf_sized(out: str, spec: str, rate: dict | None) -> dict:
    """``sfdf check --sized OUT`` of an SDF network: the spec with the full-rate capacities, checked again."""
    from sfdf.gen.sdf.liveness import bounded_execution
    from sfdf.gen.sdf.pipeline import hardware_throughput
    from sfdf.gen.specedit import with_edge_values

    if rate is None:
        return {"path": out, "written": False, "reason": "not deadlock-free: nothing to size"}
    values = {name: {"capacity": c} for name, c in rate["full_rate_sizing"].items()}
    text = with_edge_values(read_text(spec, "SPEC"), spec, values)
    _write_spec(out, text)
    again = parse_spec(text, out)
    live = bounded_execution(again).live
    return {"path": out, "written": True, "edges": rate["full_rate_sizing"], "deadlock_free": live,
            "iterations_per_cycle": _rate_json(hardware_throughput(again).iterations_per_cycle) if live else None}


def _write_spec(out: str, text: str) -> None:
    """The sized spec's text to ``--sized OUT``, a one-line error when it cannot be written."""
    try:
        Path(out).write_text(text, encoding="utf-8")
    except OSError as exc:
        raise InputError(out, "--sized", f"cannot write: {exc.strerror}", "choose a writable file") from None


def _check_sized_path(out: str, spec: str) -> None:
    """``--sized OUT`` names a file sfdf may write, and not the spec itself (a one-line error before any work)."""
    path, source = Path(out), Path(spec)
    if path.is_dir():
        raise InputError(out, "--sized", "is a folder", "name the file to write the sized spec to")
    if path.exists() and source.exists() and path.samefile(source):
        raise InputError(out, "--sized", "is the spec itself", "name another file: the spec is kept as written")


def _write_sized(out: str, spec: str, network, report, rate: dict | None) -> dict:
    """``sfdf check --sized OUT``: the spec with :func:`sfdf.gen.specedit.sizing_values` written to ``out`` and checked again
    (``written``: False when the network has nothing to size or is not deadlock-free)."""
    from sfdf.gen.analysis import check
    from sfdf.gen.specedit import sizing_values, with_edge_values
    from sfdf.hdl.timing import hardware_rate

    if rate is None or not report.deadlock_free:
        return {"path": out, "written": False,
                "reason": "no edges" if rate is None else "not deadlock-free: nothing to size"}
    values = sizing_values(network, report.network, rate["full_rate_sizing"])
    text = with_edge_values(read_text(spec, "SPEC"), spec, values)
    _write_spec(out, text)
    again = check(parse_spec(text, out))
    after = hardware_rate(again.network) if again.deadlock_free else None
    return {"path": out, "written": True, "edges": values, "deadlock_free": again.deadlock_free,
            "tokens_per_cycle": after["tokens_per_cycle"] if after else None,
            "exact": after["exact"] if after else None}


def _sized_line(network, sized: dict) -> str:
    if not sized["written"]:
        return f"sized spec: {sized['path']} not written: {sized['reason']}"
    edges = network.edge_by_name
    grown = [f"{name} capacity {edges[name].capacity} -> {keys['capacity']}"
             for name, keys in sized["edges"].items() if "capacity" in keys]
    pinned = sum(1 for keys in sized["edges"].values() if set(keys) - {"capacity"})
    changes = ", ".join(grown) or "unchanged: no capacity limits the rate"
    if pinned:
        changes += f"; every auto T and heartbeat written as sized, on {pinned} edges"
    verdict = (f"deadlock-free, {sized['tokens_per_cycle']:.3f} tokens per cycle" if sized["deadlock_free"]
               else "NOT deadlock-free (run sfdf check on it)")
    return f"sized spec: wrote {sized['path']} ({changes}): {verdict}"


def _throughput_lines(network, rate: dict, sizable: bool = True) -> list[str]:
    """``rate``'s lines; ``sizable``: the network is deadlock-free, so ``--sized`` would write the sizing."""
    lines = [("throughput (the generated hardware with no filtering, docs/hardware.md \"Latency, and how to "
              f"size a reconvergent path\"): {rate['describe']}")]
    edges = network.edge_by_name
    if rate["full_rate_sizing"]:
        held = " (--sized OUT writes them)" if sizable else ""
        if network.mode == "credit" and not network.live_credit:  # 000's batches: sized at T and [e] as resolved
            least = "" if rate.get("full_rate_sizing_least", True) else \
                "; enough, not the least: too many schedules to lower them on"
            writes = "--sized OUT writes them all, " if sizable else ""
            held = f" with T and the heartbeats above ({writes}as auto ones would follow the capacities{least})"
        lines += [f"capacities for the {rate['full_rate']:.3f} tokens per cycle the nodes allow{held}:",
                  *_table(["edge", "capacity", "sized"],
                          [[name, edges[name].capacity, q] for name, q in rate["full_rate_sizing"].items()])]
    if rate["unregistered_offers"]:
        faster = rate["unregistered_offers"]
        lines.append(f"or without offer registers on {', '.join(faster['nodes'])} (registered_offers = false: a "
                     f"cycle less per hop into each, at a slower clock): {faster['tokens_per_cycle']:.3f} tokens per cycle")
    if rate.get("auto_single_stage"):
        auto = rate["auto_single_stage"]
        lines.append(f'single-stage (pipelined = "auto"): {", ".join(auto["nodes"])}, one cycle per hop through each '
                     f"at a slower clock where they limit it; pipelined they give "
                     f"{auto['pipelined_tokens_per_cycle']:.3f} tokens per cycle (pipelined = true keeps them so)")
    if rate["single_stage"]:
        faster = rate["single_stage"]
        lines.append(f"or single-stage {', '.join(faster['nodes'])} (pipelined = false: one cycle per hop through "
                     f"each, at a slower clock): {faster['tokens_per_cycle']:.3f} tokens per cycle")
    return lines


def _repair_lines(network, repair: dict[str, int]) -> list[str]:
    if not repair:
        return ["repair: no output buffer needs to change"]
    edges = network.edge_by_name
    rows = [[name, edges[name].capacity, edges[name].output_buffer, size] for name, size in repair.items()]
    return ["repair (output buffers that make the network safe):",
            *_table(["edge", "capacity", "output_buffer", "repaired"], rows)]


def intervals(args) -> int:
    from sfdf.gen.analysis import intervals

    network = _load_sfdf(args.spec)
    result = intervals(network, args.algorithm)
    if args.json:
        _print_json({"algorithm": args.algorithm, "intervals": dict(result)})
        return 0
    rows = [[e.name, e.src, e.dst, e.capacity, result.get(e.name)] for e in network.edges]
    print(f"{network.name}: {args.algorithm} intervals (inf: no dummies or heartbeats needed)")
    print("\n".join(_table(["edge", "from", "to", "capacity", "interval"], rows)))
    return 0


def simulate(args) -> int:
    from sfdf.gen.refmodel import simulate

    network = _load(args.spec)
    if network.is_sdf:
        return _simulate_sdf(args, network)
    if args.steady_states is not None:
        raise UserError(args.spec, "--steady-states", "applies to SDF networks (004) only",
                        "use --computations N for this network")
    inputs = None
    computations = args.computations
    if args.input is not None:
        frames = read_frames(args.input, min(word_width(network, s) for s in network.sources))
        inputs = {source: frames for source in network.sources}
        if computations is None:
            computations = sum(len(frame) for frame in frames)
    if computations is None:
        computations = DEFAULT_COMPUTATIONS
    result = simulate(network, computations=computations, inputs=inputs, seed=args.seed,
                      scheduler=args.scheduler)
    if args.json:
        _print_json(result.to_json())
    else:
        print("\n".join(result.summary_lines()))
    return 1 if result.to_json()["deadlocked"] else 0


_SDF_SCHEDULES = {"random": "random", "round_robin": "constrained", "adversarial": "eager"}


def _simulate_sdf(args, network) -> int:
    """An SDF network in the SDF model (004): every message with the firing it was delivered at."""
    from sfdf.gen.sdf.model import run_sdf
    from sfdf.gen.sdf.schedule import Unsatisfiable

    if args.input is not None:
        raise UserError(args.spec, "--input", "does not apply to an SDF network (004), whose nodes run the SDF "
                        "test kernel", "use --computations N (firings of each source) or --steady-states K")
    if args.computations is not None and args.steady_states is not None:
        raise UserError(args.spec, "--computations", "cannot be given with --steady-states (both say how long to run)",
                        "give one of them")
    if args.computations is not None and all(network.in_edges(n.name) for n in network.nodes):
        raise UserError(args.spec, "--computations", "counts firings of the sources, and this SDF network has none "
                        "(every node has an input)", "use --steady-states K")
    states = 2 if args.steady_states is None else args.steady_states
    try:
        run = run_sdf(network, steady_states=states, schedule=_SDF_SCHEDULES[args.scheduler], seed=args.seed,
                      source_firings=args.computations)
    except Unsatisfiable as exc:
        print(f"{network.name}: {exc}")
        return 1
    deliveries, pending = run.deliveries_json(), run.deliveries_json(pending=True)
    length = {"steady_states": states} if args.computations is None else {"source_firings": args.computations}
    if args.json:
        produced = sum(len(v) for v in run.outputs.values())
        _print_json({"deadlocked": False, "computations": len(run.firings), "data_tokens": produced, "dummies": 0,
                     "credits": 0, "control_messages": len(deliveries), "blocking_cycle": [], **length,
                     "outputs": run.outputs, "deliveries": deliveries, "pending": pending})
        return 0
    span = f"{states} steady states" if args.computations is None else f"{args.computations} firings of each source"
    print(f"{network.name}: SDF, {len(run.firings)} firings ({span}, {args.scheduler} order), "
          f"{len(deliveries)} message deliver{'y' if len(deliveries) == 1 else 'ies'}"
          + (f", {len(pending)} pending" if pending else ""))
    for sink, values in run.outputs.items():
        shown = " ".join(str(v) for v in values[:8]) + (" ..." if len(values) > 8 else "")
        print(f"  sink {sink}: {len(values)} values: {shown}")
    for d in deliveries:
        print(f"  message[{d['message']}] {d['from']} -> {d['to']}: sent at {d['from']}'s firing {d['sent']}, handled "
              f"{d['side']} {d['to']}'s firing {d['handled']}")
    for d in pending:
        print(f"  message[{d['message']}] {d['from']} -> {d['to']}: sent at {d['from']}'s firing {d['sent']}, pending "
              f"(due {d['side']} {d['to']}'s firing {d['handled']}, which the run did not reach)")
    return 0


def schedule(args) -> int:
    from sfdf.gen.sdf.messages import routes
    from sfdf.gen.sdf.schedule import Unsatisfiable, constrained_schedule

    network = _load(args.spec)
    messages = [{"message": r.message, "from": r.sender, "to": r.receiver, "direction": r.direction,
                 "latency": list(r.latency)} for r in routes(network)]
    try:
        plan = constrained_schedule(network)
    except Unsatisfiable as exc:
        from sfdf.gen.sdf.rates import repetitions

        if args.json:
            _print_json({"repetitions": repetitions(network), "messages": messages, "satisfiable": False,
                         "fits": False, "unsatisfiable": {"reason": exc.problem, "path": [a for a, _ in exc.path]}})
        else:
            print(f"{network.name}: {exc.problem}")
        return 1
    over = [{"edge": e, "needed": need, "capacity": cap} for e, need, cap in plan.over]
    if args.json:
        _print_json({"repetitions": plan.repetitions, "initialization": plan.initialization, "steady": plan.steady,
                     "buffers": plan.buffers, "messages": messages, "satisfiable": True, "fits": plan.fits,
                     "over": over})
        return 0 if plan.fits else 1
    print(f"{network.name}: repetitions " + ", ".join(f"{n} {r}" for n, r in plan.repetitions.items()))
    print(f"  initialization ({len(plan.initialization)} firings): {_runs(plan.initialization)}")
    print(f"  steady state ({len(plan.steady)} firings): {_runs(plan.steady)}")
    rows = [[e.name, e.src, e.dst, e.capacity, plan.buffers[e.name]] for e in network.edges]
    print("\n".join(_table(["edge", "from", "to", "capacity", "needed"], rows)))
    for m in messages:
        low, high = m["latency"]
        print(f"  message[{m['message']}] {m['from']} -> {m['to']}: {m['direction']}, latency "
              f"{low if low == high else [low, high]}: met by this schedule")
    for o in over:
        print(f"  edge {o['edge']} needs {o['needed']} items, capacity {o['capacity']}: unsatisfiable with the "
              "given capacities")
    return 0 if plan.fits else 1


def _runs(firings: list[str], longest: int = 8) -> str:
    """A schedule in runs of repeated blocks: ``A A B`` as ``A*2 B``, ``a b a b`` as ``(a b)*2``."""
    if not firings:
        return "(none)"
    parts, i = [], 0
    while i < len(firings):
        best = (1, 1)  # (block length, repeats) covering the most firings
        for size in range(1, longest + 1):
            block, repeats = firings[i:i + size], 1
            while firings[i + repeats * size:i + (repeats + 1) * size] == block and len(block) == size:
                repeats += 1
            if repeats > 1 and size * repeats > best[0] * best[1]:
                best = (size, repeats)
        size, repeats = best
        text = " ".join(firings[i:i + size])
        parts.append(text if repeats == 1 else (f"{text}*{repeats}" if size == 1 else f"({text})*{repeats}"))
        i += size * repeats
    return " ".join(parts)


def sdep(args) -> int:
    from sfdf.gen.sdf.sdep import SDEPTable

    network = _load(args.spec)
    for flag, name in (("--upstream", args.upstream), ("--downstream", args.downstream)):
        if name not in network.node_by_name:
            raise UserError(args.spec, flag, f"names no node ({name!r})",
                            "use one of: " + ", ".join(network.node_by_name))
    table = SDEPTable(network, args.downstream)
    values = [table(args.upstream, n) for n in range(1, args.count + 1)]
    if args.json:
        _print_json({"upstream": args.upstream, "downstream": args.downstream, "sdep": values})
        return 0
    print(f"SDEP_{args.upstream}<-{args.downstream}(n): the fewest firings of {args.upstream} that let "
          f"{args.downstream} fire n times (004)")
    print("\n".join(_table(["n", "sdep"], [[n, v] for n, v in enumerate(values, 1)])))
    return 0


def gc(args) -> int:
    from sfdf.sw.stm.trace import run_trace

    from .inputs import read_text

    result = run_trace(read_text(args.trace, "TRACE"), args.trace)
    if args.json:
        _print_json(result)
        return 0
    print(f"minV {result['minV']}, minK {result['minK']}, minKV {result['minKV']}, minO {result['minO']}")
    for channel, timestamps in result["garbage"].items():
        print(f"  {channel}: collected {' '.join(map(str, timestamps)) if timestamps else '(nothing)'}")
    return 0


def generate(args) -> int:
    from sfdf.gen.analysis import check
    from sfdf.hdl.generate import UnsafeNetwork, generate

    network = _load(args.spec)
    output_folder(args.output, "-o")
    # once: generate takes it, and --allow-unsafe's warning reads it (an SDF network's liveness is generate's)
    report = None if network.is_sdf else check(network)
    try:
        v_path, j_path = generate(network, args.output, allow_unsafe=args.allow_unsafe, report=report)
    except UnsafeNetwork as exc:
        print("\n".join(exc.report.summary_lines()), file=sys.stderr)
        print("sfdf: refusing to generate an unsafe network (pass --allow-unsafe to watch it deadlock)",
              file=sys.stderr)
        return 1
    if report is not None and not report.deadlock_free:
        print(f"sfdf: warning: {network.name} is not deadlock-free ({len(report.violations)} violation(s), "
              f"sfdf check {args.spec} shows them); generated anyway (--allow-unsafe)", file=sys.stderr)
    print(f"wrote {v_path} and {j_path}")
    return 0


def cosim(args) -> int:
    from sfdf.cosim.network import run_network
    from sfdf.gen.analysis import check

    network = _load(args.spec)
    if network.is_sdf:
        return _cosim_sdf(args, network)
    flush_after = dict(args.flush)
    for edge in flush_after:
        e = network.edge_by_name.get(edge)
        if e is None or network.mode != "inband" or e.output_buffer < 2:
            raise UserError(args.spec, f"--flush {edge}", "names no in-band edge with an output buffer of 2 or "
                            "more", "name such an edge (a spontaneous flush only affects an output buffer, 003)")
    output_folder(args.build_dir, "--build-dir")
    report = check(network)
    if not report.deadlock_free:
        print(f"sfdf: warning: {network.name} is not deadlock-free ({len(report.violations)} violation(s)); "
              "simulating anyway so the deadlock can be watched", file=sys.stderr)
    with tempfile.TemporaryDirectory(prefix="sfdf-cosim-") as scratch, Progress.for_args(args) as progress:
        cycles = Path(scratch) / "cycles"
        progress.count(file_counter(cycles), "cycles")  # shown once the simulation writes it
        run = run_network(network, report=report, computations=args.computations or DEFAULT_COSIM, seed=args.seed,
                          pause=0.0 if args.no_backpressure else args.pause, waves=args.waves,
                          build_dir=args.build_dir, max_frame=args.frame_max, flush_after=flush_after,
                          progress=progress, progress_file=cycles)
    results = run.results
    if args.json:
        _print_json({"passed": results.passed, "model_deadlocked": run.model_deadlocked,
                     "blocking_cycle": list(run.blocking_cycle), "violations": list(results.violations),
                     "failures": [results.tests[name].message or "" for name in results.failed]})
        return 0 if results.passed else 1
    print(f"{network.name}: model {'DEADLOCKED on ' + ' -> '.join(run.blocking_cycle) if run.model_deadlocked else 'completed'}"
          f"; RTL {'passed' if results.passed else 'FAILED'} ({results.summary(0).splitlines()[0]})")
    for violation in results.violations:
        print(f"RTL contract violation: {violation}")
    for name in results.failed if not results.violations else ():
        message = results.tests[name].message or ""
        print(("RTL deadlock: " if "deadlock" in message else "RTL mismatch: ") + message)
    if results.waves:
        print(f"waves: {results.waves}")
    return 0 if results.passed else 1


def _cosim_sdf(args, network) -> int:
    """``sfdf cosim`` of an SDF network (004): ``--computations`` firings of each source in RTL and in the
    model with the same capacities (:mod:`sfdf.cosim.sdf`)."""
    from sfdf.cosim.sdf import default_firings, run_sdf_network
    from sfdf.gen.sdf.liveness import bounded_execution

    if args.flush:
        raise UserError(args.spec, "--flush", "does not apply to an SDF network (004), which has no output buffers",
                        "leave it out")
    if not network.sources:
        raise UserError(args.spec, "network", "has no source (every SDF node has an input), so no count of source "
                        "firings ends a cosimulation", "give it a node without inputs (sfdf simulate runs it by "
                        "--steady-states)")
    output_folder(args.build_dir, "--build-dir")
    live = bounded_execution(network)
    if not live.live:
        print(f"sfdf: warning: {live.deadlock_line(network.name)}; simulating anyway so the deadlock can be watched",
              file=sys.stderr)
    with tempfile.TemporaryDirectory(prefix="sfdf-cosim-") as scratch, Progress.for_args(args) as progress:
        cycles = Path(scratch) / "cycles"
        progress.count(file_counter(cycles), "cycles")
        computations = args.computations or default_firings(network, DEFAULT_COSIM)
        run = run_sdf_network(network, computations=computations, seed=args.seed,
                              pause=0.0 if args.no_backpressure else args.pause, waves=args.waves,
                              build_dir=args.build_dir, progress=progress, progress_file=cycles)
    results = run.results
    failures = [results.tests[name].message or "" for name in results.failed]
    if args.json:
        _print_json({"passed": results.passed, "model_deadlocked": run.model_deadlocked,
                     "outputs": {s: len(v) for s, v in run.expected.items()}, "messages": run.messages,
                     "pending": run.pending, "failures": failures})
        return 0 if results.passed else 1
    counts = ", ".join(f"{s} {len(v)}" for s, v in run.expected.items()) + " sink firings"
    if network.messages and results.passed:
        counts += (f"; {len(run.messages)} message{'' if len(run.messages) == 1 else 's'} handled at the model's "
                   f"firings, {len(run.pending)} pending")
    print(f"{network.name}: SDF, model {'DEADLOCKED before the sources fired ' + str(computations) + ' times' if run.model_deadlocked else 'completed'}"
          f"; RTL {'passed' if results.passed else 'FAILED'} ({counts}; {results.summary(0).splitlines()[0]})")
    for message in failures:
        print(("RTL deadlock: " if "deadlock" in message else "RTL mismatch: ") + message)
    if results.waves:
        print(f"waves: {results.waves}")
    return 0 if results.passed else 1


def spark(args) -> int:
    from sfdf.sw.spark.config import DEFAULT_SPEC, check_master
    from sfdf.sw.spark.runs import run_job
    from sfdf.sw.spark.storage import is_uri, join

    spec = args.spec or str(DEFAULT_SPEC)
    _load_sfdf(spec)  # a bad spec, master or output is a one-line error before Spark starts
    check_master(args.master)
    if not is_uri(args.output):
        if not is_uri(args.input):
            separate_folders(args.input, args.output)
        output_folder(args.output, "--output")
    if args.checkpoint and not is_uri(args.checkpoint):
        output_folder(args.checkpoint, "--checkpoint")
    summary = run_job(spec, args.input, args.output, master=args.master, stream=args.stream,
                      checkpoint=args.checkpoint, partitions=args.partitions, timeout_cycles=args.timeout_cycles,
                      device=args.device, board_dir=args.board_dir, conf=dict(args.conf))
    if args.json:
        print(json.dumps(summary, indent=2))
    else:
        print(f"spark ({summary['mode']}, {summary['master']}, {summary['device']}): {summary['frames']} frames, {summary['checked']} "
              f"checked, {summary['mismatches']} mismatches, {summary['quarantined']} quarantined (bad input), "
              f"{summary['duplicates']} duplicates")
        print(f"{summary['frames_per_s']} frames/s over {summary['wall_s']} s; "
              f"{summary['cycles_per_frame_mean']:.1f} {'board' if summary['device'] != 'sim' else 'simulated'} "
              "cycles per frame (mean)")
        print(f"results: {join(args.output, 'results')}; summary: {join(args.output, 'summary.json')}, "
              f"{join(args.output, 'summary.png')}")
    return 0 if summary["mismatches"] == 0 and summary["duplicates"] == 0 else 1


def board_sim(args) -> int:
    import signal

    import numpy as np

    from sfdf.sw.sim.boardsim import PtyBoard, SimTransport, board_dir, simulated_board

    board = board_dir(args.dir)
    output_folder(args.build_dir, "--build-dir")
    from sfdf.hdl.manifest import read_manifest

    manifest = read_manifest(board.manifest)
    if not args.pty:  # what the frames are checked with: a folder that cannot be checked fails before the build
        if len(manifest.sources) != 1:
            raise UserError(args.dir, "DIR", f"holds a network of {len(manifest.sources)} sources, and board-sim "
                            "sends frames to one", "use sfdf spark --device serial:PORT with board-sim --pty")
        checker = _board_model(board, args.dir)
    progress = Progress(sys.stderr.isatty())
    with progress:
        sim = simulated_board(board, netlist=args.netlist, build_dir=args.build_dir, progress=progress)
    what = (f"{board.facts['network']} on {board.facts['board']}, {'netlist' if args.netlist else 'RTL'}, "
            f"{board.divisor} cycles per UART bit")
    if args.pty:
        bridge = PtyBoard(sim, corrupt_byte=args.corrupt_byte, die_after_bytes=args.die_after_bytes)
        stopping = []
        for number in (signal.SIGTERM, signal.SIGINT, signal.SIGHUP):
            signal.signal(number, lambda *_: stopping.append(True))
        print(bridge.path, flush=True)
        print(f"sfdf board-sim: {what} on {bridge.path}; open_device({str(board.manifest)!r}, "
              f"backend='serial:{bridge.path}')", file=sys.stderr, flush=True)
        try:
            bridge.serve(lambda: bool(stopping))
        finally:
            bridge.close()
        return 0
    from sfdf.sw.device.uart import open_board
    from sfdf.sw.spark.checks import variance_check

    source, sinks = manifest.sources[0], manifest.sinks
    rng = np.random.default_rng(1)
    frames = [(k, rng.integers(0, 1 << min(source.tdata_width, 16), int(rng.integers(1, 65)))
               * (rng.random() < 0.7)) for k in range(args.frames)]
    variance = len(sinks) == 1 and sinks[0].variance_result
    wrong = 0
    results = []
    with Progress(sys.stderr.isatty()) as progress, \
            open_board(board.manifest, "", transport=SimTransport(sim)) as device:
        progress(f"simulating the board: {len(frames)} frames over its UART")
        progress.count(lambda: len(results), "frames")
        for result in device.stream(iter(frames)):
            results.append(result)  # noqa: PERF402 (counted while it grows)
    expected = checker.expected([pixels for _, pixels in frames])
    for result in results:
        problem = checker.problem(checker.observed(result), expected[result.frame_id])
        if problem is None and variance:
            problem = variance_check(frames[result.frame_id][1], result.fields)[1]
        wrong += problem is not None
        if problem:
            print(f"frame {result.frame_id}: {problem}")
    checked = "checked against the reference model" + (" and numpy" if variance else "")
    print(f"board-sim ({what}): {len(results)} frames answered, {checked}, {wrong} wrong")
    return 1 if wrong or len(results) != len(frames) else 0


def _board_model(board, directory: str):
    """The reference model's checker of the network ``sfdf build`` copied into ``directory`` (its spec)."""
    from sfdf.gen.analysis import check
    from sfdf.sw.spark.checks import ModelChecker

    spec = board.facts.get("spec")
    if spec is None:
        raise UserError(directory, "DIR", "holds no copy of its spec (built before board-sim checked every network)",
                        "run sfdf build again into this folder")
    return ModelChecker(check(_load_sfdf(str(Path(directory) / spec))).network)


def _board_sizing_line(spec: str, network, rate: dict, family: str) -> str:
    """The capacities for full rate on a board's family, and what ``sfdf check --sized`` would write: the
    generic Verilog's sizing (ECP5's cycles), which on another family may differ (iCE40's single-input nodes
    have no offer registers), so it says whether that reaches the full rate there too."""
    from fractions import Fraction

    from sfdf.gen.analysis.throughput import full_rate_sizing, network_rate
    from sfdf.hdl.dsp import FamilyOnly
    from sfdf.hdl.timing import stage_timing

    sized = rate["full_rate_sizing"]
    line = f"capacities for {rate['full_rate']:.3f} tokens per cycle: " + ", ".join(f"{e} {q}" for e, q in sized.items())
    generic = full_rate_sizing(network, stage_timing(network))
    if generic == sized:
        return f"{line} (sfdf check {spec} --sized OUT writes them into a copy of the spec)"
    capacities = {e.name: generic.get(e.name, e.capacity) for e in network.edges}
    enough = network_rate(network, stage_timing(network, FamilyOnly(family)), capacities)[0] >= \
        Fraction(rate["full_rate_exact"])
    written = ", ".join(f"{e} {q}" for e, q in generic.items()) or "none"
    return (f"{line} (sfdf check {spec} --sized OUT writes the generic Verilog's, {written}: "
            f"{'enough here too' if enough else 'not enough here: set these by hand'})")


class _SDFReport:
    """What ``sfdf build`` needs of an SDF network's check (004): ``deadlock_free``, ``network``, ``summary_lines``."""

    def __init__(self, network, run):
        self.network, self.deadlock_free = network, run.live
        self.lines = [] if run.live else [run.deadlock_line(network.name)]

    def summary_lines(self) -> list[str]:
        return self.lines


def _sdf_report(network) -> _SDFReport:
    from sfdf.gen.sdf.liveness import bounded_execution

    return _SDFReport(network, bounded_execution(network))


def build(args) -> int:
    from sfdf.boards.build import BuildFailed, ToolchainMissing, build, critical_path_summary
    from sfdf.boards.settings import build_settings
    from sfdf.gen.analysis import check
    from sfdf.hdl.dsp import FamilyOnly
    from sfdf.hdl.timing import hardware_rate

    settings = build_settings(args.spec, args.board, args.clock, args.baud, args.buffer_words)
    board, clock_hz = settings.board, settings.clock_hz
    network = _load(args.spec)
    report = _sdf_report(network) if network.is_sdf else check(network)
    if not report.deadlock_free:
        print("\n".join(report.summary_lines()), file=sys.stderr)
        print("sfdf: refusing to build an unsafe network", file=sys.stderr)
        return 1
    if args.program and args.no_build:
        raise UserError(args.spec, "--program", "needs a bitstream, and --no-build builds none", "drop --no-build or --program")
    if args.report:
        output_file(args.report, "--report")  # before the build: minutes to half an hour on ECP5
    outdir = args.output or f"build/boards/{report.network.name}-{board.name}"
    output_folder(outdir, "-o")
    if not args.no_build:
        print(f"sfdf: building {report.network.name} for {board.name} ({board.device}) at {clock_hz / 1e6:g} MHz: "
              "yosys, nextpnr, packer (minutes)...", file=sys.stderr)
    try:
        with Progress.for_args(args) as progress:
            result = build(report.network, board, outdir, clock_hz=clock_hz, baud=args.baud,
                           buffer_words=settings.buffer_words, do_build=not args.no_build, program=args.program,
                           seed=args.seed, report=args.report, router=args.router,
                           spec_text=read_text(args.spec, "SPEC"), progress=progress)
    except (ToolchainMissing, BuildFailed) as error:
        print(f"sfdf: error: {error}", file=sys.stderr)
        return 1
    path = result.pop("critical_path", [])
    if path:
        result["critical_path_summary"] = critical_path_summary(path)
    # the rate the board's hardware allows with no filtering (its family's cycles: iCE40 has no offer registers)
    result["throughput"] = None if network.is_sdf else hardware_rate(report.network, FamilyOnly(board.family))
    if network.is_sdf:  # every source allowed, every sink ready: gen/sdf/pipeline.py, message credits included
        from sfdf.gen.sdf.pipeline import hardware_throughput

        result["sdf_throughput"] = _rate_json(hardware_throughput(network).iterations_per_cycle)
    probe = args.clock == "max"  # placed for the probe target to measure Fmax: missing it is the point
    ok = not result["built"] or (result["fits"] and (result["timing_met"] or probe) and result.get("programmed", True))
    if args.json:
        _print_json(result)
        return 0 if ok else 1
    if not result["built"]:
        print(f"wrote {outdir}: {report.network.name}.v, .json, .core, .board.json, .board.v and the {board.name} build tree "
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
    if probe:
        print(f"placed for the {result['clock_mhz']:g} MHz probe target, so {result['fmax_mhz']:.1f} MHz is the design's own "
              f"Fmax (as docs/results.md measures it); for a bitstream that meets its clock build with "
              f"--clock {math.floor(result['fmax_mhz'])} or less")
    if not result["timing_met"]:
        print(f"critical path: {result['critical_path_summary']}")
    if network.is_sdf:
        print(f"throughput (every source allowed, every sink ready): {_per_cycle(result['sdf_throughput'])}")
    rate = result["throughput"]
    if rate is not None:
        print(f"throughput with no filtering: {rate['describe']}, {rate['tokens_per_cycle'] * result['clock_mhz']:.1f} "
              f"Mtokens/s at {result['clock_mhz']:g} MHz (docs/hardware.md, \"Latency, and how to size a reconvergent path\")")
        if rate["full_rate_sizing"]:
            print(_board_sizing_line(args.spec, report.network, rate, board.family))
    print(f"bitstream: {result['bitstream']}; nextpnr report: {args.report or result['report']}")
    if "programmed" in result:
        print("programmed" if result["programmed"] else f"programming failed: {result['program_error']}")
    return 0 if ok else 1

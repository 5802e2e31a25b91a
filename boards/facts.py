"""``<name>.board.json``: what the host needs to talk to a board ``sfdf build`` made, written and read here.

:func:`sfdf.boards.build.build` writes it beside the manifest (``DIR/<name>.json``); the board device
(:mod:`sfdf.sw.device.uart`) reads it back from the manifest's path. The facts are a JSON object:

* ``board``, ``device``: the board's name (``sfdf build --board``) and its FPGA;
* ``network``, ``manifest``: the network's name and its manifest's file name;
* ``clk_hz``, ``baud``: the design clock and the UART rate;
* ``buffer_words``: words each source buffers (the longest frame the board takes);
* ``sources``: each source node's ``tdata`` width;
* ``bitstream``: the bitstream, relative to ``DIR``;
* ``family`` (``ecp5`` or ``ice40``), ``core`` and ``core_top``: the board core's Verilog file and module
  (``sfdf board-sim`` simulates it, as RTL or as Yosys synthesizes it for ``family``);
* ``spec``: the spec the network was built from, copied into ``DIR`` (``sfdf board-sim`` checks the board's
  answers against the reference model on it); absent when the build had no spec file.
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from pathlib import Path

__all__ = ["board_facts_path", "read_board_facts", "write_board_facts"]


def board_facts_path(directory: Path, name: str) -> Path:
    """Where the facts of network ``name`` built into ``directory`` live."""
    return directory / f"{name}.board.json"


def write_board_facts(directory: Path, name: str, facts: Mapping) -> Path:
    """Write ``facts`` (module docstring) as ``directory/<name>.board.json``; returns its path."""
    path = board_facts_path(directory, name)
    path.write_text(json.dumps(facts, indent=2) + "\n")
    return path


def read_board_facts(manifest_path: Path) -> dict:
    """``<name>.board.json`` beside the manifest ``manifest_path`` (``sfdf build`` writes both).

    Raises
    ------
    FileNotFoundError
        No such file: the manifest was not written by ``sfdf build``.
    """
    facts = json.loads(manifest_path.read_text())
    path = board_facts_path(manifest_path.parent, facts["name"])
    if not path.is_file():
        raise FileNotFoundError(f"{path} does not exist: a board device needs the files sfdf build -o DIR "
                                "writes (DIR/<name>.json and DIR/<name>.board.json)")
    return json.loads(path.read_text())

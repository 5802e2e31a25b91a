"""The command outputs README.md and docs/ show, made by running each command.

A block between the markers

    <!-- $ COMMAND: bench/outputs.py writes between these markers -->
    <!-- end of $ COMMAND -->

is the fenced output of ``COMMAND`` run by the shell from the repository's root with the venv's ``sfdf``
first on ``PATH`` (stdout and stderr as a terminal shows them, the exit status when not 0); several
``$ ``-commands joined by `` && `` in one marker run in turn, each with its output. This script writes
every block again; tests/test_docs_outputs.py fails when one drifts from what its command prints now
(:data:`VARYING` masks what changes from run to run: a build folder's hash, a wall time).

    .venv/bin/python bench/outputs.py [--check]
"""

from __future__ import annotations

import argparse
import os
import re
import subprocess
import sys
from pathlib import Path

from results import ROOT, markers, splice

#: The documents with command blocks.
DOCUMENTS = [ROOT / "README.md", *sorted((ROOT / "docs").glob("*.md"))]
#: A marker's opening comment; group 1 is the command line.
OPENING = re.compile(r"<!-- \$ (.+?): bench/outputs\.py writes between these markers -->")
#: What differs from one run to the next, and what stands for it when outputs are compared.
VARYING = [(re.compile(r"log \S+sim\.log"), "log <sim.log>"),
           (re.compile(r"\b\d+(\.\d+)? (frames/s|s)\b"), r"<n> \2")]


def commands(text: str) -> list[str]:
    """The command lines of every block of ``text``, in order."""
    return OPENING.findall(text)


def run(command: str) -> str:
    """``command``'s block: ``$ command``, then what it printed, and its exit status when not 0, per part of
    a `` && `` chain (every part runs, whatever the one before returned)."""
    # as a user's shell runs it: not inside pytest (whose variables make cocotb's runner raise, not print)
    env = {k: v for k, v in os.environ.items() if not k.startswith("PYTEST") and k != "COLUMNS"}
    env["PATH"] = f"{Path(sys.executable).parent}{os.pathsep}{os.environ['PATH']}"
    (ROOT / "build").mkdir(exist_ok=True)  # the scratch folder commands write to, there in a clean clone too
    lines = []
    for part in command.split(" && $ "):
        done = subprocess.run(part, shell=True, cwd=ROOT, env=env, stdout=subprocess.PIPE, stderr=subprocess.STDOUT,
                              text=True, timeout=900, check=False)
        lines.append(f"$ {part}")
        lines += done.stdout.rstrip("\n").splitlines()
        if done.returncode:
            lines.append(f"(exit {done.returncode})")
    return "```\n" + "\n".join(lines) + "\n```"


def masked(block: str) -> str:
    for pattern, stand_in in VARYING:
        block = pattern.sub(stand_in, block)
    return block


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--check", action="store_true", help="only say which blocks differ (exit 1 if any)")
    args = parser.parse_args(argv)
    stale = 0
    for document in DOCUMENTS:
        for command in commands(document.read_text()):
            block = run(command)
            begin, end = markers("outputs", f"$ {command}")
            text = document.read_text()
            now = text[text.index(begin) + len(begin):text.index(end)].strip("\n")
            if masked(now) != masked(block):
                stale += 1
                print(f"{document.relative_to(ROOT)}: $ {command}: {'differs' if args.check else 'written'}")
                if not args.check:
                    splice(document, begin, end, block)
    return 1 if args.check and stale else 0


if __name__ == "__main__":
    sys.exit(main())

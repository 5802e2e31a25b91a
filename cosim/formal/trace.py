"""Read a SymbiYosys counterexample (VCD) as a table: one row per cycle, the signals asked for."""

from __future__ import annotations

import re
from pathlib import Path

__all__ = ["format_trace", "read_trace"]


def read_trace(path: Path) -> tuple[list[str], list[dict[str, int | None]]]:
    """All signals of a VCD (``scope.name``) and their values at each clock cycle (rising edge of
    ``clk``: SymbiYosys writes one step per 10 time units, values settled before the edge)."""
    ids: dict[str, list[str]] = {}
    scope: list[str] = []
    values: dict[str, int | None] = {}
    steps: list[dict[str, int | None]] = []
    time = None
    body = False
    for line in Path(path).read_text().splitlines():
        words = line.split()
        if not words:
            continue
        if not body:
            if words[0] == "$scope":
                scope.append(words[2])
            elif words[0] == "$upscope":
                scope.pop()
            elif words[0] == "$var":
                name = ".".join(scope[1:] + [words[4]])
                ids.setdefault(words[3], []).append(name)
            elif words[0] == "$enddefinitions":
                body = True
            continue
        if words[0].startswith("#"):
            if time is not None:
                steps.append(dict(values))
            time = int(words[0][1:])
            continue
        if words[0].startswith("b"):
            raw, ident = words[0][1:], words[1]
        elif words[0][0] in "01xz" and len(words) == 1:
            raw, ident = words[0][0], words[0][1:]
        else:
            continue
        value = None if re.search("[xz]", raw) else int(raw, 2)
        for name in ids.get(ident, ()):
            values[name] = value
    if time is not None:
        steps.append(dict(values))
    names = sorted({name for group in ids.values() for name in group})
    # SymbiYosys dumps each step at times 10 n (clock low) and 10 n + 5 (high): keep one per step
    return names, steps[::2] if len(steps) > 1 else steps


def format_trace(path: Path, patterns: list[str]) -> str:
    """The cycles of ``path`` as text, one column per signal whose name matches one of ``patterns``."""
    names, steps = read_trace(path)
    chosen = [name for name in names if any(re.search(p, name) for p in patterns)]
    width = {name: max(len(name), 3) for name in chosen}
    lines = ["cycle " + " ".join(name.rjust(width[name]) for name in chosen)]
    for cycle, step in enumerate(steps):
        cells = []
        for name in chosen:
            value = step.get(name)
            cells.append(("x" if value is None else str(value)).rjust(width[name]))
        lines.append(f"{cycle:5d} " + " ".join(cells))
    return "\n".join(lines)

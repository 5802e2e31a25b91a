"""docs/results.md from the benches' JSON, so no figure is typed twice.

Each bench keeps the figures of its last full run in ``docs/<bench>.json`` (committed), and every table or
figure line of docs/results.md between that bench's markers is made from that file alone::

    <!-- <section>: bench/<bench>.py writes between these markers -->
    ...
    <!-- end of <section> -->

A bench defines ``sections(data) -> {section: markdown}``; a full run calls :func:`publish` (the JSON, the
sections, the plots copied to docs/img), and ``--tables`` calls :func:`republish` (the sections again from
the committed JSON, nothing run). tests/test_bench_results.py checks every section against its JSON.
"""

from __future__ import annotations

import json
import shutil
from collections.abc import Callable, Iterable, Sequence
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
DOCS = ROOT / "docs"
RESULTS = DOCS / "results.md"
OUT = ROOT / "bench" / "out"


def markers(bench: str, section: str) -> tuple[str, str]:
    """The comments that open and close ``section`` of ``bench`` in a document."""
    return (f"<!-- {section}: bench/{bench}.py writes between these markers -->", f"<!-- end of {section} -->")


def splice(path: Path, begin: str, end: str, body: str) -> None:
    """Replace the text between ``begin`` and ``end`` in ``path`` (appended when the markers are missing)."""
    text = path.read_text() if path.is_file() else ""
    block = f"{begin}\n{body}\n{end}"
    if begin in text and end in text:
        text = text[:text.index(begin)] + block + text[text.index(end) + len(end):]
    else:
        text += "\n" + block + "\n"
    path.write_text(text)


def between(text: str, begin: str, end: str) -> str | None:
    """The text between ``begin`` and ``end`` (without the newlines next to them), or None."""
    if begin not in text or end not in text:
        return None
    return text[text.index(begin) + len(begin):text.index(end)].strip("\n")


def data_path(bench: str) -> Path:
    """``docs/<bench>.json``: the committed figures of ``bench``'s last full run."""
    return DOCS / f"{bench}.json"


def load(bench: str) -> dict:
    return json.loads(data_path(bench).read_text())


def publish(bench: str, data: dict, sections: Callable[[dict], dict[str, str]], images: Iterable[str] = (),
            doc: Path = RESULTS) -> None:
    """After a full run: ``data`` to docs/<bench>.json, its sections into ``doc``, ``images`` (names in
    bench/out) copied to docs/img."""
    data_path(bench).write_text(json.dumps(data, indent=1) + "\n")
    write_sections(bench, sections(data), doc)
    for name in images:
        shutil.copyfile(OUT / name, DOCS / "img" / name)
    print(f"wrote {data_path(bench).relative_to(ROOT)} and its tables in {doc.relative_to(ROOT)}")


def republish(bench: str, sections: Callable[[dict], dict[str, str]], doc: Path = RESULTS) -> dict[str, str]:
    """``--tables``: the sections again from docs/<bench>.json; returns them."""
    made = sections(load(bench))
    write_sections(bench, made, doc)
    return made


def write_sections(bench: str, made: dict[str, str], doc: Path = RESULTS) -> None:
    for section, body in made.items():
        splice(doc, *markers(bench, section), body)


def table(header: Sequence[str], rows: Iterable[Sequence], right: str = "") -> str:
    """A markdown table; ``right``: one character per column, ``r`` for a right-aligned (numeric) one."""
    right = right.ljust(len(header), "l")
    lines = ["| " + " | ".join(header) + " |",
             "|" + "|".join("---:" if r == "r" else "---" for r in right) + "|"]
    lines += ["| " + " | ".join(str(c) for c in row) + " |" for row in rows]
    return "\n".join(lines)


def tables_flag(parser) -> None:
    """The ``--tables`` option every publishing bench has."""
    parser.add_argument("--tables", action="store_true",
                        help="write docs/results.md's sections from the committed docs/<bench>.json, run nothing")


def tables_only(args, bench: str, sections: Callable[[dict], dict[str, str]]) -> bool:
    """With ``--tables``: :func:`republish` and print the sections; True when so (the bench then stops)."""
    if args.tables:
        print("\n\n".join(republish(bench, sections).values()))
    return args.tables

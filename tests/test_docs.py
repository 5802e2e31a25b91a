"""The docs document the design and today's results: short enough to read, no lab journal (no commit
names), and every relative link points at a file that ships."""

import re
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
DOCS = [ROOT / "README.md", *sorted((ROOT / "docs").rglob("*.md"))]

#: A git object name as a doc would cite it: 7-40 lowercase hex digits standing alone, with at least one
#: digit and one letter a-f, so that neither a word ("defaced", "added") nor a number ("1000000") counts.
#: Hex constants (``0x1f``), identifiers glued to a name (``port$1238``, ``acc_62``), and anything inside a
#: longer word are not names either, hence the boundaries on both sides.
COMMIT = re.compile(r"(?<![0-9A-Za-z_$.#/-])(?=[0-9a-f]*[0-9])(?=[0-9a-f]*[a-f])[0-9a-f]{7,40}(?![0-9A-Za-z_$])")
#: Markdown links and images, ``[text](target)``, without a scheme (http:, mailto:) or an anchor alone.
LINK = re.compile(r"!?\[[^\]]*\]\(([^)\s]+)\)")


def _rel(path: Path) -> str:
    return str(path.relative_to(ROOT))


def test_the_readme_is_a_front_door():
    assert len((ROOT / "README.md").read_text().splitlines()) <= 350


def test_docs_fpga_md_is_the_design_the_method_and_the_results():
    assert len((ROOT / "docs" / "fpga.md").read_text().splitlines()) <= 500


@pytest.mark.parametrize("path", DOCS, ids=_rel)
def test_no_doc_names_a_commit(path):
    found = [(n, m.group()) for n, line in enumerate(path.read_text().splitlines(), 1) for m in COMMIT.finditer(line)]
    assert not found, f"{_rel(path)}: commit names (git history keeps them, the docs do not): {found[:10]}"


def test_the_commit_pattern_tells_names_from_words_and_numbers():
    for name in ("c8b5d94", "da36912", "0e01115", "2ca2402e38b1", "ab12cd34ef56ab12cd34ef56ab12cd34ef56ab12"):
        assert COMMIT.search(f"rebuilt at {name}, seed for seed"), name
    for text in ("defaced added facade", "1000000 cycles", "0x1f2e3d4c", "port$1238$31_CCU2C", "acc_62d1f00",
                 "fmax_1a2b3c4d", "top.seed2.report.json", "#1a2b3c4"):
        assert not COMMIT.search(text), text


@pytest.mark.parametrize("path", DOCS, ids=_rel)
def test_every_relative_link_points_at_a_file(path):
    text = re.sub(r"```.*?```", "", path.read_text(), flags=re.DOTALL)
    broken = []
    for target in LINK.findall(text):
        if re.match(r"[a-z][a-z0-9+.-]*:", target) or target.startswith("#"):
            continue
        if not (path.parent / target.split("#")[0]).exists():
            broken.append(target)
    assert not broken, f"{_rel(path)}: links to missing files: {broken}"

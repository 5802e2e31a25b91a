"""Every command output README.md and docs/ show is what the command prints now (bench/outputs.py writes
them; run it after a change that moves one)."""

import pytest

from benches import load_bench

OUTPUTS = load_bench("outputs")
BLOCKS = [(document, command) for document in OUTPUTS.DOCUMENTS for command in OUTPUTS.commands(document.read_text())]


def test_the_readme_shows_outputs():
    assert sum(document.name == "README.md" for document, _ in BLOCKS) >= 4


@pytest.mark.parametrize(("document", "command"), BLOCKS, ids=[f"{d.name}: {c[:60]}" for d, c in BLOCKS])
def test_a_shown_output_is_what_the_command_prints(document, command):
    begin, end = OUTPUTS.markers("outputs", f"$ {command}")
    text = document.read_text()
    shown = text[text.index(begin) + len(begin):text.index(end)].strip("\n")
    assert OUTPUTS.masked(shown) == OUTPUTS.masked(OUTPUTS.run(command)), \
        f"{document.name}: $ {command} prints otherwise now: .venv/bin/python bench/outputs.py"


def test_every_file_a_shown_command_names_ships():
    import re
    import subprocess

    shipped = set(subprocess.run(["git", "ls-files"], cwd=OUTPUTS.ROOT, capture_output=True, text=True,
                                 check=True).stdout.split())
    for _, command in BLOCKS:
        for name in re.findall(r"\b(?:examples|docs)/\S+", command):
            assert name in shipped, f"{command}: {name} is not in the repository"

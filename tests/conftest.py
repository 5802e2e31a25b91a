"""Shared fixtures: the shipped examples and a writer for throw-away spec files."""

from pathlib import Path

import pytest

EXAMPLES = Path(__file__).resolve().parent.parent / "examples"


def pytest_collection_modifyitems(items):
    """Tests marked ``heavy`` (minutes each) first, so the workers share them and none is left
    running one alone at the end of ``make test``."""
    items.sort(key=lambda item: item.get_closest_marker("heavy") is None)


@pytest.fixture
def examples() -> Path:
    """The ``examples/`` directory of the repository."""
    return EXAMPLES


@pytest.fixture
def write_file(tmp_path):
    """``write_file(name, text) -> str``: write ``text`` to ``tmp_path / name`` and return its path."""

    def write(name: str, text: str) -> str:
        path = tmp_path / name
        path.write_text(text, encoding="utf-8")
        return str(path)

    return write

"""Shared fixtures: the shipped examples and a writer for throw-away spec files."""

from pathlib import Path

import pytest

EXAMPLES = Path(__file__).resolve().parent.parent / "examples"


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


#: Modules whose tests take minutes each (simulated boards with Spark, the netlist, the wheel, the UART
#: cosim): run first, so two pytest-xdist workers never end the suite with one of them alone.
LONG_MODULES = ("test_boardsim.py", "test_spark.py", "test_packaging.py", "test_board_uart.py")


def pytest_collection_modifyitems(items):
    """The long modules first, then the cosim lane, then the rest, each in collection order (a module's tests
    stay together, so its module-scoped fixtures are made once)."""
    def rank(item):
        if item.path.name in LONG_MODULES:
            return 0
        return 1 if item.get_closest_marker("cosim") else 2

    items.sort(key=rank)

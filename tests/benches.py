"""The bench scripts (bench/*.py) loaded as modules, for the tests that check their parts."""

import importlib.util
import sys
from pathlib import Path

BENCH = Path(__file__).resolve().parents[1] / "bench"
if str(BENCH) not in sys.path:  # the scripts import bench/results.py as ``results``, as when run
    sys.path.insert(0, str(BENCH))


def load_bench(name: str):
    """bench/<name>.py as a module (a fresh one per call)."""
    spec = importlib.util.spec_from_file_location(f"bench_{name}", BENCH / f"{name}.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module

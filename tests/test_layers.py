"""The layer contracts (docs/architecture.md) hold, and a deliberate back-edge breaks them."""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
import tomllib
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[1]
LINT = Path(sys.executable).with_name("lint-imports")


def _lint(cwd: Path, pythonpath: Path | None = None) -> subprocess.CompletedProcess:
    env = {k: v for k, v in os.environ.items() if k != "PYTHONPATH"}
    if pythonpath:
        env["PYTHONPATH"] = str(pythonpath)
    return subprocess.run([str(LINT), "--no-logo", "--no-cache", str(REPO / "pyproject.toml")], cwd=cwd, env=env,
                          capture_output=True, text=True, timeout=300, check=False)


CONTRACTS = [c["name"] for c in tomllib.loads((REPO / "pyproject.toml").read_text())["tool"]["importlinter"][
    "contracts"]]


def test_the_layers_hold():
    run = _lint(REPO)
    assert run.returncode == 0, run.stdout + run.stderr
    assert f"Contracts: {len(CONTRACTS)} kept, 0 broken." in run.stdout


def _copy(tmp_path: Path) -> Path:
    """The installed layout (sfdf.gen is gen/, ...) copied under ``tmp_path``."""
    for package, folder in tomllib.loads((REPO / "pyproject.toml").read_text())["tool"]["setuptools"][
            "package-dir"].items():
        shutil.copytree(REPO / folder, tmp_path / package.replace(".", "/"),
                        ignore=shutil.ignore_patterns("__pycache__"))
    return tmp_path


# (the module given a back-edge, what it imports, the contracts it breaks: their names' first words)
BACK_EDGES = [
    # indirectly too: every wing that imports the model would then reach the CLI, and through it cosim
    ("gen/model.py", "sfdf.cli", ("Layers:", "Inside gen:", "The host never")),
    ("sw/sim/fastsim.py", "sfdf.cosim.watchdog", ("Layers:", "The host never")),
    ("sw/device/codec.py", "sfdf.sw.spark.storage", ("Layers:",)),
    ("boards/packets.py", "sfdf.sw.device.codec", ("Layers:",)),
    ("sw/stm/model.py", "sfdf.sw.device.results", ("Space-time memory",)),
    ("gen/analysis/cycles.py", "sfdf.gen.sdf.rates", ("Inside gen:",)),
]


@pytest.mark.parametrize("module, target, broken", BACK_EDGES, ids=[m for m, _, _ in BACK_EDGES])
def test_a_back_edge_breaks_them(tmp_path, module, target, broken):
    tree = _copy(tmp_path)
    path = tree / "sfdf" / module
    path.write_text(path.read_text() + f"\nimport {target}  # a back-edge\n")
    run = _lint(tree, pythonpath=tree)
    assert run.returncode == 1, run.stdout + run.stderr
    names = [name for name in CONTRACTS if any(name.startswith(word) for word in broken)]
    assert len(names) == len(broken), (names, broken)
    kept = len(CONTRACTS) - len(broken)
    assert f"Contracts: {kept} kept, {len(broken)} broken." in run.stdout, run.stdout
    source = "sfdf." + module.removesuffix(".py").replace("/", ".")
    assert f"{source} -> {target}" in run.stdout, run.stdout

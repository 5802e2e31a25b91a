"""The layer contracts (docs/architecture.md) hold, and a deliberate back-edge breaks them."""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
import tomllib
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
LINT = Path(sys.executable).with_name("lint-imports")


def _lint(cwd: Path, pythonpath: Path | None = None) -> subprocess.CompletedProcess:
    env = {k: v for k, v in os.environ.items() if k != "PYTHONPATH"}
    if pythonpath:
        env["PYTHONPATH"] = str(pythonpath)
    return subprocess.run([str(LINT), "--no-logo", "--no-cache", str(REPO / "pyproject.toml")], cwd=cwd, env=env,
                          capture_output=True, text=True, timeout=300, check=False)


def test_the_layers_hold():
    run = _lint(REPO)
    assert run.returncode == 0, run.stdout + run.stderr
    assert "Contracts: 2 kept, 0 broken." in run.stdout


def test_a_back_edge_breaks_them(tmp_path):
    # The installed layout (sfdf.gen is gen/, ...) copied, with the analysis's model importing the CLI.
    for package, folder in tomllib.loads((REPO / "pyproject.toml").read_text())["tool"]["setuptools"][
            "package-dir"].items():
        shutil.copytree(REPO / folder, tmp_path / package.replace(".", "/"),
                        ignore=shutil.ignore_patterns("__pycache__"))
    model = tmp_path / "sfdf" / "gen" / "model.py"
    model.write_text(model.read_text() + "\nfrom sfdf.cli import main  # a back-edge: the model uses the CLI\n")
    run = _lint(tmp_path, pythonpath=tmp_path)
    assert run.returncode == 1, run.stdout + run.stderr
    assert "BROKEN" in run.stdout and "Contracts: 0 kept, 2 broken." in run.stdout
    assert "sfdf.gen.model -> sfdf.cli" in run.stdout, run.stdout

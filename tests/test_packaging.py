"""sfdf as a package: every folder is mapped under the ``sfdf`` namespace, and the wheel, installed into
a fresh venv outside the repository, runs ``sfdf check``, ``generate``, ``cosim`` and the default ``spark``.
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
import sysconfig
import tomllib
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[1]
SETUPTOOLS = tomllib.loads((REPO / "pyproject.toml").read_text())["tool"]["setuptools"]


def test_every_python_folder_is_a_listed_package():
    folders = {}
    for name, folder in SETUPTOOLS["package-dir"].items():
        for init in (REPO / folder).rglob("__init__.py"):
            sub = init.parent.relative_to(REPO / folder)
            folders[".".join([name, *sub.parts])] = init.parent
    data_only = [name for name in SETUPTOOLS["packages"] if name not in folders]
    assert sorted(folders) == sorted(set(SETUPTOOLS["packages"]) - set(data_only))
    # a folder of data files is listed (setuptools warns about one that is not) with the files it ships
    assert all(name in SETUPTOOLS["package-data"] for name in data_only), data_only


def _sources(dest: Path) -> Path:
    """The files a clean checkout has (tracked, or new and not ignored), copied to ``dest``."""
    listed = subprocess.run(["git", "ls-files", "-z", "--cached", "--others", "--exclude-standard"], cwd=REPO,
                            capture_output=True, check=True).stdout.decode().split("\0")
    for name in filter(None, listed):
        if (REPO / name).is_file():
            (dest / name).parent.mkdir(parents=True, exist_ok=True)
            shutil.copy2(REPO / name, dest / name)
    return dest


@pytest.fixture(scope="module")
def venv(tmp_path_factory) -> Path:
    """A fresh venv with sfdf from its wheel; the dependencies come from the test's own environment."""
    root = tmp_path_factory.mktemp("wheel")
    src = _sources(root / "src")
    built = subprocess.run([sys.executable, "-m", "pip", "wheel", "-q", "--no-deps", "-w",
                            str(root / "dist"), str(src)], check=True, capture_output=True, text=True)
    # the build itself says nothing (make install's output is errors only): no setuptools warning
    assert "Warning" not in built.stderr and "would be ignored" not in built.stderr, built.stderr[-3000:]
    (wheel,) = (root / "dist").glob("sfdf-*.whl")
    env = root / "venv"
    subprocess.run([sys.executable, "-m", "venv", "--without-pip", str(env)], check=True)
    site = Path(subprocess.run([env / "bin" / "python", "-c", "import sysconfig; print(sysconfig.get_path('purelib'))"],
                               capture_output=True, text=True, check=True).stdout.strip())
    # The dependencies (not sfdf) from this environment: a .pth line adds a folder, not its .pth files, so
    # the editable sfdf of the development venv stays out.
    (site / "_sfdf_dependencies.pth").write_text(sysconfig.get_path("purelib") + "\n")
    subprocess.run([sys.executable, "-m", "pip", "--python", str(env / "bin" / "python"), "install", "-q",
                    "--no-deps", "--no-index", str(wheel)], check=True, capture_output=True)
    return env


def _sfdf(venv: Path, cwd: Path, *args: str, timeout: float = 600) -> subprocess.CompletedProcess:
    environ = {k: v for k, v in os.environ.items() if k not in ("PYTHONPATH", "VIRTUAL_ENV")}
    environ["PATH"] = f"{venv / 'bin'}{os.pathsep}{environ['PATH']}"
    return subprocess.run([str(venv / "bin" / "sfdf"), *args], cwd=cwd, env=environ, capture_output=True, text=True,
                          timeout=timeout, check=False)


@pytest.mark.wheel
def test_the_wheel_runs_the_cli_from_any_directory(venv, tmp_path):
    where = subprocess.run([venv / "bin" / "python", "-c", "import sfdf.gen, sfdf.examples; print(sfdf.gen.__file__)"],
                           cwd=tmp_path, capture_output=True, text=True, check=True).stdout
    assert where.startswith(str(venv)), where
    spec = tmp_path / "variance.toml"
    shutil.copy(REPO / "examples" / "variance.toml", spec)

    check = _sfdf(venv, tmp_path, "check", "variance.toml", "--json")
    assert check.returncode == 0, check.stderr
    assert json.loads(check.stdout)["deadlock_free"] is True

    generate = _sfdf(venv, tmp_path, "generate", "variance.toml", "-o", "rtl")
    assert generate.returncode == 0, generate.stderr
    assert (tmp_path / "rtl" / "variance.v").is_file() and (tmp_path / "rtl" / "variance.json").is_file()

    bad = _sfdf(venv, tmp_path, "check", "missing.toml")
    assert bad.returncode == 2 and bad.stderr.startswith("sfdf: error: missing.toml") and "Traceback" not in bad.stderr

    # The build caches of this checkout, so the wheel's run reuses what the suite compiled already.
    (tmp_path / "build").symlink_to(REPO / "build", target_is_directory=True)
    (REPO / "build").mkdir(exist_ok=True)
    cosim = _sfdf(venv, tmp_path, "cosim", "variance.toml", "--computations", "40")
    assert cosim.returncode == 0, cosim.stdout + cosim.stderr
    assert "RTL passed" in cosim.stdout

    frames = subprocess.run([venv / "bin" / "python", "-m", "sfdf.sw.datasets", "veritas", "frames", "--frames", "40"],
                            cwd=tmp_path, capture_output=True, text=True, check=False)
    assert frames.returncode == 0, frames.stderr
    spark = _sfdf(venv, tmp_path, "spark", "--input", "frames", "--output", "out", "--json")
    assert spark.returncode == 0, spark.stdout + spark.stderr
    summary = json.loads(spark.stdout)
    assert (summary["frames"], summary["checked"], summary["mismatches"]) == (40, 40, 0)

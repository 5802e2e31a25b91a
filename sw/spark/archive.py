"""The archive shipped to the executors: the spec checked and generated, and its fast harness built once on
the driver (or, for boards, the manifest and board facts of ``sfdf build -o DIR``)."""

from __future__ import annotations

import hashlib
import json
import tarfile
from dataclasses import replace
from pathlib import Path

from sfdf.gen.contract import UserKernel, golden_files
from sfdf.gen.errors import UserError
from sfdf.hdl.buildcache import FASTSIM_DIR
from sfdf.hdl.manifest import read_manifest

from .boards import DeviceChoice
from .config import SIM, Job

__all__ = ["GOLDENS", "prepare", "shipped_network"]


def prepare(spec, work_dir, build_dir=None, timeout_cycles: int | None = None, kill_after: int | None = None,
            device: DeviceChoice = SIM, board_dir=None) -> Job:
    """Check and generate ``spec`` into ``work_dir`` and build its fast harness once, on the driver, into
    the cache ``build_dir`` (default ``build/fastsim``; builds are keyed by content, so runs share them).

    With a board ``device``, nothing is built: the archive holds ``board_dir``'s manifest and board facts,
    and the manifest must be the one the spec generates (the boards run this network, no other).

    Raises
    ------
    UserError
        The spec is unsafe or has other than one source (the Parquet has one pixel column), or the boards
        were built from another network.
    """
    from sfdf.gen.analysis import check
    from sfdf.gen.spec import load_spec
    from sfdf.hdl.buildcache import BuildCache
    from sfdf.hdl.generate import generate
    from sfdf.sw.sim.build import build

    network = load_spec(spec)
    if len(network.sources) != 1:
        raise UserError(str(spec), "node", f"{len(network.sources)} sources ({', '.join(network.sources)})",
                        "the Spark job feeds one source from the pixels column: use a spec with one source")
    report = check(network)
    if not report.deadlock_free:
        raise UserError(str(spec), "network", "is not deadlock-free (sfdf check says why)",
                        "fix the spec until sfdf check passes; the job runs safe networks only")
    v_path, j_path = generate(network, Path(work_dir) / "rtl", report=report)
    manifest = json.loads(j_path.read_text())
    if device.board:
        files = _board_files(spec, manifest, board_dir)
        key = hashlib.sha256(b"".join(path.read_bytes() for path in files)).hexdigest()[:16]
        harness = Path(work_dir) / f"sfdf-board-{key}.tar.gz"
        with tarfile.open(harness, "w:gz") as archive:
            for path in files:
                archive.add(path, f"rtl/{path.name}")
    else:
        library = build(v_path, manifest, Path(build_dir or FASTSIM_DIR))
        harness = Path(work_dir) / f"sfdf-harness-{library.parent.name}.tar.gz"
        with tarfile.open(harness, "w:gz") as archive:  # what an executor needs, nothing of the build's objects
            for path in (v_path, j_path, *(v_path.with_name(name) for name in manifest["kernel_sources"])):
                archive.add(path, f"rtl/{path.name}")
            for path in golden_files(report.network):
                archive.add(path, f"{GOLDENS}/{path.name}")
            for path in sorted(library.parent.iterdir()):
                if path.is_file() and path.name != BuildCache.LOCK:
                    archive.add(path, f"fastsim/{library.parent.name}/{path.name}")
    ports = read_manifest(manifest)
    (source,), sinks = ports.sources, ports.sinks
    return Job(str(harness.resolve()), f"rtl/{j_path.name}", report.network,
               len(sinks) == 1 and sinks[0].variance_result, source.tdata_width,
               timeout_cycles, kill_after, device)


#: Where the archive keeps the user kernels' goldens (the modules beside the spec), for the model's checks.
GOLDENS = "goldens"


def shipped_network(network, root: Path):
    """``network`` with its user kernels' goldens looked up in the unpacked archive ``root`` (where
    :func:`prepare` put them), so the model's checks run on any executor."""
    folder = root / GOLDENS
    if not folder.is_dir():
        return network
    nodes = tuple(replace(n, kernel=replace(n.kernel, folder=str(folder))) if isinstance(n.kernel, UserKernel) else n
                  for n in network.nodes)
    return replace(network, nodes=nodes)


def _board_files(spec, manifest: dict, board_dir) -> list[Path]:
    """The manifest and board facts in ``board_dir`` (``sfdf build -o DIR``), which must hold ``manifest``."""
    if board_dir is None:
        raise UserError(str(spec), "--board-dir", "is missing: a board device needs the folder sfdf build wrote",
                        "give --board-dir DIR (sfdf build SPEC --board B -o DIR)")
    from sfdf.boards.facts import board_facts_path

    folder = Path(board_dir)
    built, facts = folder / f"{manifest['name']}.json", board_facts_path(folder, manifest["name"])
    if not (built.is_file() and facts.is_file()):
        raise UserError(str(folder), "--board-dir", f"holds no {built.name} and {facts.name} of network "
                        f"{manifest['name']!r}", "give the folder sfdf build -o DIR wrote for this spec")
    if json.loads(built.read_text()) != manifest:
        raise UserError(str(folder), "--board-dir", f"was built from another version of {manifest['name']!r} "
                        f"(its {built.name} differs from what {Path(spec).name} generates)",
                        "rebuild the boards from this spec, or give the spec they were built from")
    return [built, facts]


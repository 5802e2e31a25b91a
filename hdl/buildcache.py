"""The build cache of compiled Verilator models: content-keyed folders, a lock each, a stamp, LRU pruning.

Two parts of sfdf compile Verilator models that take seconds to minutes to build and depend only on
their inputs: the cocotb benches of :mod:`sfdf.cosim.runner` (``build/cosim``) and the simulated device
of :mod:`sfdf.sw.sim` (``build/fastsim``, ``build/boardsim``). Each build lives in a folder of a :class:`BuildCache` named
after its key, a hash of everything that changes the build (the caller computes it), so building the
same design again is a lookup. A build folder is

- *built* under an exclusive lock (:meth:`BuildCache.lock`, ``fcntl.flock`` on ``<folder>/.lock``): two
  processes building the same design take turns, and the second finds the first's build;
- *finished* once its stamp ``.built`` exists (:meth:`BuildCache.finish`); a folder without one is a
  build under way or one that failed: never reused, never counted, never pruned;
- *used*: :meth:`BuildCache.reuse` touches the stamp, whose modification time is the folder's last use;
- *held* (:meth:`BuildCache.hold`): a shared lock kept while this process lives, for a build that a
  process loads (the fast harness's library), so that no other process prunes it meanwhile.

After a new build the cache is pruned (:meth:`BuildCache.prune`): beyond ``SFDF_COSIM_CACHE_GB`` GiB
(default :data:`CACHE_GB`) of finished builds the least recently used go, never the folder just built
nor one that any process has locked (building it, running a bench in it or holding it). Locks belong to
processes, not threads.
"""

from __future__ import annotations

import contextlib
import fcntl
import logging
import os
import shutil
import stat
import time
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import IO

__all__ = ["BOARDSIM_DIR", "CACHE_GB", "COSIM_DIR", "FASTSIM_DIR", "INTERMEDIATES", "BuildCache"]

log = logging.getLogger(__name__)

#: The default cache folders: the cocotb benches', the fast harness's and the simulated boards'.
COSIM_DIR, FASTSIM_DIR, BOARDSIM_DIR = "build/cosim", "build/fastsim", "build/boardsim"

#: The cache keeps at most this many GiB of finished builds (``SFDF_COSIM_CACHE_GB`` overrides), dropping
#: the least recently used: every change of the generated Verilog makes new folders, which would
#: otherwise fill the disk (a finished cocotb build of a generated network is some 2 to 10 MB).
CACHE_GB = 4

#: What a finished build no longer needs, deleted by :meth:`BuildCache.finish`: a simulator runs from its
#: executable or shared library alone, and Verilator's precompiled headers (two of 70 MB for a generated
#: network), objects and archives were some 140 of a cocotb build's 147 MB. A later build of the same
#: design is a new folder, so nothing incremental is lost.
INTERMEDIATES = ("*.gch", "*.o", "*.a")

#: The folders this process holds (:meth:`BuildCache.hold`) and their open, shared-locked lock files.
_HELD: dict[Path, IO] = {}


class BuildCache:
    """Finished builds in content-keyed folders under ``root``, pruned to a byte budget (module docstring).

    A build that a process loads and keeps (the fast harness, a simulated board) is one call,
    :meth:`held_build`; by hand, build in a folder like this::

        cache = BuildCache("build/fastsim")
        folder = cache.folder(key)
        with cache.lock(folder):
            built = not cache.reuse(folder, "libfastsim.so")
            if built:
                cache.start(folder)
                ...  # write the build into folder
                cache.finish(folder)
        if built:
            cache.prune(keep=folder)

    Parameters
    ----------
    root : path
        The cache's folder; created by the first :meth:`lock`.
    limit_gb : float or None
        The budget of finished builds in GiB; ``None``: ``SFDF_COSIM_CACHE_GB`` when set, else
        :data:`CACHE_GB` (read at each :meth:`prune`).

    Members
    -------
    root : Path
        ``root``, absolute.
    """

    #: Written in a build folder once its build is complete; its modification time is the last use.
    STAMP = ".built"
    #: The folder's lock file (``flock``).
    LOCK = ".lock"

    def __init__(self, root: str | os.PathLike, limit_gb: float | None = None):
        self.root = Path(root).resolve()
        self.limit_gb = limit_gb

    @property
    def limit(self) -> float:
        """The budget of finished builds, in bytes."""
        if self.limit_gb is not None:
            return self.limit_gb * 2**30
        return float(os.environ.get("SFDF_COSIM_CACHE_GB", CACHE_GB)) * 2**30

    def folder(self, key: str) -> Path:
        """The build folder of ``key`` (it may not exist yet)."""
        return self.root / key

    def reuse(self, folder: Path, *products: str) -> bool:
        """Whether ``folder`` holds a finished build with every one of ``products`` (paths in it); if so
        its stamp is touched, marking the use. Call it holding the folder (:meth:`lock`, :meth:`hold`)."""
        stamp = folder / self.STAMP
        if not (stamp.is_file() and all((folder / product).is_file() for product in products)):
            return False
        try:
            stamp.touch(exist_ok=True)
        except FileNotFoundError:  # pruned since (only when the caller holds no lock)
            return False
        return True

    @contextlib.contextmanager
    def lock(self, folder: Path) -> Iterator[Path]:
        """Lock ``folder`` (created if need be) for this process alone: to build in it, or to use it when
        uses must not overlap (a cocotb run writes into it). This process's :meth:`hold` of the folder
        ends first (it would wait on itself); another process's makes this wait."""
        self.release(folder)
        handle = _flock(folder / self.LOCK, fcntl.LOCK_EX, mkdir=True)
        try:
            yield folder
        finally:
            handle.close()

    def start(self, folder: Path) -> None:
        """Before building in a locked ``folder``: its stamp goes, so a build cut short is never reused."""
        (folder / self.STAMP).unlink(missing_ok=True)

    def finish(self, folder: Path, note: str = "") -> None:
        """After building in a locked ``folder``: the compiler's intermediates go (:data:`INTERMEDIATES`),
        then the stamp says it is finished (``note``: what, how long)."""
        for pattern in INTERMEDIATES:
            for path in folder.rglob(pattern):
                path.unlink(missing_ok=True)
        (folder / self.STAMP).write_text(f"{note}\n")

    def held_build(self, key: str, product: str, make: Callable[[Path], None], what: str = "build") -> Path:
        """The folder of ``key`` with a finished build holding ``product``, held while this process lives
        (:meth:`hold`): reused when finished, else built by ``make(folder)`` in the locked folder (a process
        building it meanwhile is waited for, and its build reused), then the cache pruned. ``what`` names
        the build in the log."""
        folder = self.folder(key)
        while not (self.hold(folder) and self.reuse(folder, product)):
            with self.lock(folder):
                built = not self.reuse(folder, product)
                if built:
                    self.start(folder)
                    start = time.monotonic()
                    make(folder)
                    self.finish(folder, f"{time.monotonic() - start:.1f} s")
                    log.info("%s built in %.1f s in %s", what, time.monotonic() - start, folder)
            if built:
                self.prune(keep=folder)
        return folder

    def hold(self, folder: Path) -> bool:
        """Keep a shared lock on ``folder`` while this process lives (or until :meth:`release`), so no
        process prunes it; ``False`` when the folder does not exist. Waits while another process has it
        locked (:meth:`lock`): a build of it under way."""
        if folder in _HELD:
            return True
        handle = _flock(folder / self.LOCK, fcntl.LOCK_SH)
        if handle is None:
            return False
        _HELD[folder] = handle
        return True

    def release(self, folder: Path) -> None:
        """End this process's :meth:`hold` of ``folder``, if any."""
        handle = _HELD.pop(folder, None)
        if handle is not None:
            handle.close()

    def prune(self, keep: Path | None = None, limit: float | None = None) -> list[Path]:
        """Delete the least recently used finished builds beyond ``limit`` bytes (default :attr:`limit`);
        never ``keep`` (counted, though), a folder some process has locked or holds, or one used since
        this call listed it.

        Returns
        -------
        list of Path
            The folders deleted, least recently used first.
        """
        limit = self.limit if limit is None else limit
        keep = None if keep is None else Path(keep).resolve()
        uses = {f: use for f in (self.root.iterdir() if self.root.is_dir() else ())
                if f != keep and (use := self._last_use(f)) is not None}
        folders = sorted(uses, key=uses.get)
        sizes = {f: _size(f) for f in folders}
        total = sum(sizes.values()) + (_size(keep) if keep is not None and keep.is_dir() else 0)
        dropped = []
        for folder in folders:
            if total <= limit:
                break
            handle = _flock(folder / self.LOCK, fcntl.LOCK_EX | fcntl.LOCK_NB)
            if handle is None:
                continue  # in use, or gone
            with handle:
                if self._last_use(folder) != uses[folder]:
                    continue  # used or rebuilt since listed
                (folder / self.STAMP).unlink()
                shutil.rmtree(folder, ignore_errors=True)
            total -= sizes[folder]
            dropped.append(folder)
            log.info("dropped the least recently used build %s (cache limit %.0f GiB)", folder.name,
                     limit / 2**30)
        return dropped

    def _last_use(self, folder: Path) -> int | None:
        try:
            return (folder / self.STAMP).stat().st_mtime_ns
        except (FileNotFoundError, NotADirectoryError):
            return None  # unfinished, or not a build folder (such as .ccache)


def _flock(path: Path, operation: int, mkdir: bool = False) -> IO | None:
    """The lock file ``path`` opened and locked with ``operation`` (``fcntl.flock``); ``None`` when its
    folder does not exist (unless ``mkdir``) or, with ``LOCK_NB``, when another lock is in the way. A
    lock got on a file deleted meanwhile (its folder pruned while this waited) is taken again."""
    while True:
        if mkdir:
            path.parent.mkdir(parents=True, exist_ok=True)
        try:
            handle = open(path, "a")  # noqa: SIM115 (returned locked; the caller closes it)
        except (FileNotFoundError, NotADirectoryError):
            return None
        try:
            fcntl.flock(handle, operation)
            ours, now = os.fstat(handle.fileno()), os.stat(path)
            if (ours.st_dev, ours.st_ino) == (now.st_dev, now.st_ino):
                return handle
        except BlockingIOError:
            handle.close()
            return None
        except FileNotFoundError:
            pass
        handle.close()


def _size(folder: Path) -> int:
    """Bytes of the regular files under ``folder`` (links not followed); files vanishing meanwhile count 0."""
    total = 0
    for top, _, files in os.walk(folder):
        for name in files:
            with contextlib.suppress(OSError):
                status = os.lstat(os.path.join(top, name))
                total += status.st_size if stat.S_ISREG(status.st_mode) else 0
    return total

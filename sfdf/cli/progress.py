"""What a long command shows while it works: its phase, and a count with a rate, on a terminal only.

``sfdf cosim``, ``board-sim`` and ``build`` run steps of seconds to half an hour (Verilator builds, Yosys,
nextpnr, simulation). On a terminal, :class:`Progress` prints each phase as a line on stderr and keeps a
status line under it (elapsed seconds, and a count with its rate where the step has one), rewritten in
place as Spark's own bars are; with ``--json`` or when stderr is not a terminal it prints nothing, so
scripts and logs see only the result. The layers below report through a callable (``progress(phase)``)
and never print themselves.
"""

from __future__ import annotations

import sys
import threading
import time
from collections.abc import Callable
from pathlib import Path
from typing import Self

__all__ = ["Progress", "file_counter"]


class Progress:
    """Phases and a live status line on ``stream`` (stderr) when ``enabled``.

    Call the object with a phase's name to start it (the previous one ends); :meth:`count` sets where the
    count comes from (shown while it says more than 0); :meth:`close` ends the last phase. A context manager.
    """

    def __init__(self, enabled: bool, stream=None, interval: float = 0.5):
        self.enabled, self.stream, self.interval = enabled, stream or sys.stderr, interval
        self._phase, self._started, self._counter, self._unit = None, 0.0, None, ""
        self._lock, self._stop = threading.Lock(), threading.Event()
        self._thread = None

    @classmethod
    def for_args(cls, args) -> Progress:
        """On when stderr is a terminal and the command does not print JSON."""
        return cls(sys.stderr.isatty() and not getattr(args, "json", False))

    def __call__(self, phase: str) -> None:
        if not self.enabled:
            return
        with self._lock:
            self._draw()  # the ending phase's last count, however short it was
            self._clear()
            self._phase, self._started = phase, time.monotonic()
            self.stream.write(f"sfdf: {phase}...\n")
            self.stream.flush()
        if self._thread is None:
            self._thread = threading.Thread(target=self._tick, daemon=True)
            self._thread.start()

    def count(self, counter: Callable[[], int | None], unit: str) -> None:
        """The current phase counts ``unit``s: ``counter()`` says how many so far (None: not yet known)."""
        with self._lock:
            self._counter, self._unit = counter, unit

    def close(self) -> None:
        self._stop.set()
        if self._thread is not None:
            self._thread.join()
        with self._lock:
            self._draw()
            self._clear()

    def __enter__(self) -> Self:
        return self

    def __exit__(self, *_) -> None:
        self.close()

    def _clear(self) -> None:
        if self._phase is not None:
            self.stream.write("\r\x1b[K")
            self.stream.flush()

    def _tick(self) -> None:
        while not self._stop.wait(self.interval):
            with self._lock:
                self._draw()

    def _draw(self) -> None:
        """The status line: the phase's elapsed seconds, and its count with the rate once there is one."""
        if self._phase is None:
            return
        elapsed = time.monotonic() - self._started
        line = f"  {elapsed:5.0f} s"
        done = self._counter() if self._counter else None
        if done:
            line += f", {done:,} {self._unit} ({done / max(elapsed, 1e-9):,.0f}/s)"
        self.stream.write(f"\r\x1b[K{line}")
        self.stream.flush()


def file_counter(path: Path) -> Callable[[], int | None]:
    """A counter read from ``path``, where another process writes its count (None until it has)."""
    def read() -> int | None:
        try:
            return int(path.read_text() or 0)
        except (OSError, ValueError):
            return None

    return read

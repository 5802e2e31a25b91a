"""Stop a simulation whose tokens stopped moving, and show where they are (the channel levels).

The watchdog knows nothing about the design: the caller gives it a reader that returns named values
(handshake counters, channel levels, credit counters...). When none of them changes for
``bound_cycles`` cycles while work remains, the design is deadlocked (002 Definition 3: no node is
live but tokens remain); the watchdog fails with the values as a table, where the blocking cycle
shows as full (counterblockwise) and empty (blockwise) channels.
"""

from __future__ import annotations

import logging
from collections.abc import Callable, Mapping
from pathlib import Path
from typing import Any

import cocotb
from cocotb.simtime import get_sim_time
from cocotb.task import Task
from cocotb.triggers import ClockCycles, RisingEdge

__all__ = ["DeadlockError", "DeadlockWatchdog", "HandshakeCounter", "format_levels"]


#: Cycles between two writes of the progress file.
PROGRESS_CYCLES = 1000


class DeadlockError(AssertionError):
    """No token moved for the watchdog's bound.

    Members
    -------
    cycles : int
        Clock cycles the watchdog had run when it stopped.
    stalled : int
        Cycles without movement (at least the bound).
    levels : dict
        The last values of the probes, by name.
    """

    def __init__(self, message: str, cycles: int, stalled: int, levels: dict[str, Any]):
        super().__init__(message)
        self.cycles = cycles
        self.stalled = stalled
        self.levels = levels


class DeadlockWatchdog:
    """Fail when the probed values stay the same for ``bound_cycles`` cycles while work remains.

    Parameters
    ----------
    clock : cocotb handle
        The design's clock.
    probes : callable
        ``probes() -> Mapping[str, value]``: named, hashable values that change whenever a token
        moves (handshake counters, channel levels). Read once per ``period`` cycles.
    bound_cycles : int
        Cycles without change that mean deadlock. Choose it above the longest legitimate stall
        (pause generators, initiation intervals).
    busy : callable or None
        ``busy() -> bool``: work remains. While it returns false the design may rest; ``None`` means
        always busy.
    period : int
        Cycles between two reads of ``probes``. Above 1, include monotonic counters in the probes:
        a level can leave and come back between two reads.
    name : str
        Logger and message prefix.
    progress : path or None
        A file the count of cycles is written to every :data:`PROGRESS_CYCLES` (``sfdf cosim`` shows it
        on a terminal, :mod:`sfdf.cli.progress`).

    Members
    -------
    cycles : int
        Cycles observed so far.
    """

    def __init__(self, clock, probes: Callable[[], Mapping[str, Any]], bound_cycles: int, *,
                 busy: Callable[[], bool] | None = None, period: int = 1, name: str = "watchdog",
                 progress: str | None = None):
        if not isinstance(bound_cycles, int) or bound_cycles < 1:
            raise ValueError(f"Watchdog bound must be a positive number of cycles, not {bound_cycles!r}")
        if not isinstance(period, int) or not 1 <= period <= bound_cycles:
            raise ValueError(f"Watchdog period must be an integer from 1 to the bound {bound_cycles}, "
                             f"not {period!r}")
        self.clock = clock
        self.probes = probes
        self.bound_cycles = bound_cycles
        self.busy = busy
        self.period = period
        self.name = name
        self.log = logging.getLogger(f"cocotb.{name}")
        self.cycles = 0
        self.progress = progress
        self._task: Task | None = None

    def start(self) -> Task:
        """Run :meth:`run` in the background: a deadlock then fails the running test."""
        self._task = cocotb.start_soon(self.run())
        return self._task

    def stop(self) -> None:
        """Stop the background task of :meth:`start`."""
        if self._task is not None:
            self._task.cancel()
            self._task = None

    async def run(self) -> None:
        """Watch until a deadlock, then raise it; never returns otherwise.

        Raises
        ------
        DeadlockError
            ``"<name>: deadlock after N cycles without token movement ..."`` and the table of the
            probes' values.
        """
        levels = dict(self.probes())
        snapshot = tuple(levels.items())
        stalled = 0
        while True:
            await ClockCycles(self.clock, self.period)
            self.cycles += self.period
            if self.progress and self.cycles % PROGRESS_CYCLES < self.period:
                Path(self.progress).write_text(str(self.cycles))
            levels = dict(self.probes())
            current = tuple(levels.items())
            if current != snapshot or (self.busy is not None and not self.busy()):
                snapshot, stalled = current, 0
                continue
            stalled += self.period
            if stalled >= self.bound_cycles:
                message = (f"{self.name}: deadlock after {stalled} cycles without token movement "
                           f"(cycle {self.cycles}, {get_sim_time('ns'):g} ns); levels:\n"
                           + format_levels(levels))
                self.log.error("%s", message)
                raise DeadlockError(message, self.cycles, stalled, levels)


class HandshakeCounter:
    """Beats through AXI4-Stream buses, a probe for :class:`DeadlockWatchdog` (cocotbext-axi's drivers count
    frames, not beats).

    At each rising edge a bus whose ``tvalid`` and ``tready`` are both high moves a beat; they are read at
    the edge as cocotbext-axi's drivers read them (Verilator evaluates the edge after cocotb's callbacks, so
    these are the values before it).

    Parameters
    ----------
    clock : cocotb handle
    buses : mapping
        Name -> bus (anything with ``tvalid`` and ``tready`` handles, e.g. ``AxiStreamBus``).

    Members
    -------
    counts : dict
        Name -> beats so far.
    """

    def __init__(self, clock, buses: Mapping[str, Any]):
        self.clock = clock
        self._buses = [(name, bus.tvalid, bus.tready) for name, bus in buses.items()]
        self.counts = dict.fromkeys(buses, 0)
        self._task = cocotb.start_soon(self._run())

    def __getitem__(self, name: str) -> int:
        return self.counts[name]

    async def _run(self) -> None:
        edge = RisingEdge(self.clock)
        counts = self.counts
        while True:
            await edge
            for name, tvalid, tready in self._buses:
                if tvalid.value and tready.value:
                    counts[name] += 1


def format_levels(levels: Mapping[str, Any]) -> str:
    """A two-column table, one ``name  value`` line per probe, names aligned."""
    width = max((len(str(name)) for name in levels), default=0)
    return "\n".join(f"  {name!s:<{width}}  {value}" for name, value in levels.items())

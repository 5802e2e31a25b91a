"""The coincidence stage: many sources' outputs in timestamped channels, events emitted and state
collected exactly (001 over issue 58's telescope array; docs/host.md, "Coincidences").

Each source is a producer thread with its own channel (001 Sec. 3). A source puts its outputs at their
timestamps (``frame_id``, shared by every source) and its virtual time is its *progress*: after a frame
at ``t`` it sets ``VT = t + 1`` (its frames come in timestamp order, each timestamp once), a progress row
at ``p`` sets ``VT = p`` ("nothing more from me below ``p``"), so a filtered frame, which puts nothing,
still moves the source past its timestamp. V2 then says no source can put below the least VT of the
sources, the stage's *bound*: every timestamp below it is final. :meth:`CoincidenceStage.step` gets every
item below the bound, emits an event at each timestamp where at least ``k`` sources put, consumes
everything below the bound on its i_conns (``consume_until``, which passes absent timestamps too), sets
its own VT to the bound and reclaims at minKV (Thm. 4.0), which is then the bound itself unless a
monitor still holds items: exactly the items no reader can still get, and nothing else.

A monitor (:meth:`CoincidenceStage.monitor`) is a child of the stage thread attaching mid-run: it starts
at the stage's VIS (V4) and V5 hides every timestamp below; what it has not consumed stays in the
channels. A source first seen mid-run is a child of the stage too: it starts at the bound, so its frames
below are late (V2 refuses them; the Spark job quarantines them first). The memory runs without the
model's audit, so what it holds is what is pending (:attr:`CoincidenceStage.held`), however long the run.
"""

from __future__ import annotations

from dataclasses import dataclass

from .gc import collect, min_kv
from .model import INF, SpaceTimeMemory

__all__ = ["FILTERED", "OUTPUT", "PROGRESS", "STAGE", "CoincidenceStage", "Event", "Monitor", "feed"]

#: The stage thread's name (sources are ``source:NAME``, their channels ``out:NAME``).
STAGE = "coincidence"


@dataclass(frozen=True)
class Event:
    """A timestamp at which at least ``k`` sources produced, the sources sorted, their outputs by source."""

    frame_id: int
    sources: tuple[str, ...]
    outputs: dict


class CoincidenceStage:
    """The stage over a :class:`~sfdf.sw.stm.model.SpaceTimeMemory` (module docstring).

    Parameters
    ----------
    k : int
        Least number of sources producing at a timestamp for an event (VERITAS's array trigger: 2 of 4).
    sources : iterable of str
        Sources known from the start (at VT 0); others join when first seen (:meth:`join`).
    """

    def __init__(self, k: int, sources=()):
        if k < 1:
            raise ValueError(f"k must be >= 1, not {k}")
        self.k = k
        self.stm = SpaceTimeMemory(audit=False)
        self.stm.thread(STAGE, 0)
        self.bound = 0
        self.events = 0
        self.held = 0
        self.state_peak = 0
        self.collected = 0
        self._monitors = 0
        self._threads: dict = {}  # source -> its producer thread
        for name in sources:
            self.join(name, 0)

    # -- sources -------------------------------------------------------------------------------------
    @property
    def sources(self) -> list[str]:
        return list(self._threads)

    def vt(self, source: str) -> float:
        """The source's progress (its VT); a source not seen yet would start at the bound."""
        thread = self._threads.get(source)
        return self.bound if thread is None else thread.vt

    def join(self, source: str, vt=None) -> None:
        """Add ``source``: a root thread at ``vt`` (from the start), or a child of the stage (V4: at its VIS)."""
        if source in self._threads:
            return
        name = f"source:{source}"
        if vt is None:
            self._threads[source] = self.stm.thread(name, self.stm.threads[STAGE].vis(), parent=STAGE)
        else:
            self._threads[source] = self.stm.thread(name, vt)
        self.stm.channel(f"out:{source}")
        self.stm.oconn(name, f"out:{source}", f"put:{source}")
        self.stm.attach(STAGE, f"out:{source}", f"in:{source}")

    def put(self, source: str, ts: int, value=None) -> None:
        """An output of ``source`` at ``ts`` (V2 refuses ``ts`` below its progress); its VT moves past ``ts``."""
        self.join(source)
        self.stm.put(f"put:{source}", ts, value)
        self.held += 1
        self.state_peak = max(self.state_peak, self.held)
        self.advance(source, ts + 1)

    def advance(self, source: str, vt) -> None:
        """Progress of ``source``: nothing more below ``vt`` (a frame filtered at ``vt - 1``, a progress
        row at ``vt``, ``INF`` at its end); an older progress says nothing new."""
        self.join(source)
        thread = self._threads[source]
        if vt > thread.vt:
            self.stm.set_vt(thread.name, vt)

    def close(self) -> list[Event]:
        """Every source at its end (``VT = INF``): every pending timestamp is final."""
        for source in self.sources:
            self.advance(source, INF)
        return self.step(at_end=True)

    # -- the stage -------------------------------------------------------------------------------------
    def step(self, at_end: bool = False) -> list[Event]:
        """Emit the events below the bound, consume below it, reclaim at minKV (module docstring)."""
        bound = min((thread.vt for thread in self._threads.values()), default=self.bound)
        events = []
        if bound > self.bound:
            at: dict[int, dict] = {}
            for source in self.sources:
                conn = f"in:{source}"
                ic = self.stm.iconns[conn]
                for ts in [ts for ts in ic.channel.items if ic.kt <= ts < bound]:
                    at.setdefault(ts, {})[source] = self.stm.get(conn, ts)[1]
            for ts in sorted(at):
                if len(at[ts]) >= self.k:
                    events.append(Event(ts, tuple(sorted(at[ts])), dict(sorted(at[ts].items()))))
            last = bound - 1 if bound != INF else max(at, default=self.bound)
            for source in self.sources:
                self.stm.consume_until(f"in:{source}", last)
            self.stm.set_vt(STAGE, bound)
            self.bound = bound
            self.events += len(events)
        self.reclaim(at_end)
        return events

    def reclaim(self, at_end: bool = False) -> int:
        """Reclaim every item below minKV; count it as ``collected`` unless at the end of the run."""
        bound = min_kv(self.stm)
        garbage = collect(self.stm, bound) if bound > 0 else {}
        freed = sum(map(len, garbage.values()))
        self.held -= freed
        if not at_end:
            self.collected += freed
        return freed

    def monitor(self, name: str | None = None) -> Monitor:
        """A reader attaching now (module docstring)."""
        self._monitors += 1
        return Monitor(self, name or f"monitor{self._monitors}")

    # -- state across micro-batches ---------------------------------------------------------------------
    def snapshot(self) -> dict:
        """What a later micro-batch needs to go on (JSON-able; monitors are not kept)."""
        pending = [[s, ts, value] for s in self.sources
                   for ts, value in self.stm.channels[f"out:{s}"].items.items()]
        return {"k": self.k, "bound": _time(self.bound),
                "vt": {s: _time(self.vt(s)) for s in self.sources}, "pending": pending,
                "events": self.events, "state_peak": self.state_peak, "collected": self.collected}

    @classmethod
    def restore(cls, state: dict) -> CoincidenceStage:
        stage = cls(state["k"])
        bound = _untime(state["bound"])
        stage.stm.threads[STAGE].vt = stage.bound = bound
        for source, vt in state["vt"].items():
            stage.join(source, bound)
            ic = stage.stm.iconns[f"in:{source}"]
            ic.kt = bound
            channel = stage.stm.channels[f"out:{source}"]
            channel.floor = bound
            for s, ts, value in state["pending"]:
                if s == source:
                    channel.items[ts] = value
            stage._threads[source].vt = _untime(vt)
        stage.held = len(state["pending"])
        stage.events, stage.state_peak, stage.collected = state["events"], state["state_peak"], state["collected"]
        return stage


class Monitor:
    """A reader of every source's channel attached mid-run: it starts at the stage's VIS (V4), V5 hides
    what is below, and then it holds only what it has not read (its VT is ``INF``: it puts nothing)."""

    def __init__(self, stage: CoincidenceStage, name: str):
        self.stage, self.name = stage, name
        stm = stage.stm
        stm.thread(name, stm.threads[STAGE].vis(), parent=STAGE)
        self.start = stm.threads[name].vt
        for source in stage.sources:
            stm.attach(name, f"out:{source}", f"{name}:{source}")
        stm.set_vt(name, INF)

    def read(self) -> list[tuple[str, int, object]]:
        """Get and consume every item present and UNSEEN on its connections, then pass the final absent
        timestamps (below the stage's bound) too, so its keep times move on."""
        stm, got = self.stage.stm, []
        for source in self.stage.sources:
            conn = f"{self.name}:{source}"
            if conn not in stm.iconns:
                continue
            ic = stm.iconns[conn]
            for ts in [ts for ts in ic.channel.items if ic.state(ts) == "UNSEEN"]:
                got.append((source, ts, stm.get(conn, ts)[1]))
                stm.consume(conn, ts)
            last = self.stage.bound - 1 if self.stage.bound != INF else max(ic.channel.items, default=0)
            if last >= 0:
                stm.consume_until(conn, last)
        return got


def _time(value):
    return None if value == INF else value


def _untime(value):
    return INF if value is None else value


#: A row's kinds for :func:`feed`: an output to put, a frame that produced nothing, a progress row.
OUTPUT, FILTERED, PROGRESS = "output", "filtered", "progress"


def feed(stage: CoincidenceStage, rows, every: int = 256):
    """Feed ``(source, ts, kind, value)`` rows in arrival order (``kind`` :data:`OUTPUT`: put ``value`` at
    ``ts``; :data:`FILTERED`: a frame at ``ts`` that produced nothing; :data:`PROGRESS`: nothing more below
    ``ts``), stepping the stage every ``every`` rows (as a micro-batch would) and after the last; yield the
    events as they become final."""
    n = 0
    for n, (source, ts, kind, value) in enumerate(rows, 1):
        if kind == OUTPUT:
            stage.put(source, ts, value)
        else:
            stage.advance(source, ts + 1 if kind == FILTERED else ts)
        if n % every == 0:
            yield from stage.step()
    if n % every:
        yield from stage.step()

"""The outcome of a reference-model run: counters, sink outputs, and the blocking cycle of a deadlock."""

from __future__ import annotations

from dataclasses import dataclass, field

__all__ = ["SimResult"]

#: Keys of ``sfdf simulate --json`` fixed by docs/architecture.md (keys may be added, never renamed).
JSON_KEYS = ("deadlocked", "computations", "data_tokens", "dummies", "credits", "control_messages",
             "blocking_cycle")


@dataclass
class SimResult:
    """What :func:`~sfdf.gen.refmodel.simulate` observed. Equal seeds give equal results.

    Members
    -------
    network, mode, scheduler : str
        What ran, and how.
    seed : int
        Seeds the source words and the scheduler.
    deadlocked : bool
        No action was enabled before every node finished (a blocking cycle exists, 002 Thm. 2.1).
    steps : int
        Actions performed.
    computations : int
        Computations over all nodes, null computations included.
    data_tokens : int
        Data tokens sent on edges.
    dummies : int
        Standalone dummy tokens (inband, those forced to carry user messages included) or dummy
        messages (credit) entering a channel; a dummy coalesced into the dummy at a control
        channel's tail is counted in ``per_edge`` as ``coalesced``.
    dummy_flags : int
        Dummies riding on data tokens (Propagation, 002 Alg. 2).
    credits : int
        Credit messages: control messages carrying credits that are not user messages.
    control_messages : int
        User control messages sent, all edges (in-band they ride on tokens and take no slot).
    per_edge : dict of str to dict of str to int
        The counters above (and ``coalesced``, ``flushes``) per edge.
    blocking_cycle : list of str
        Edge names in blockwise order (002 Def. 4); empty unless deadlocked.
    channel_states : dict of str to dict
        Final state of every edge (see :func:`.blocking.channel_states`).
    blocked : dict of str to str
        At a deadlock, what each unfinished node waits on.
    outputs : dict of str to list
        Each sink's log, in processing order: ``("data", index, payload)`` and ``("control", message)``.
    index_spread : int or None
        Credit mode: the largest difference between the indices a join compared at one computation.
    watermark : int or None
        The index watermark's window ``W`` that held the sources (None: none).
    """

    network: str
    mode: str
    scheduler: str
    seed: int
    deadlocked: bool
    steps: int
    computations: int
    data_tokens: int
    dummies: int
    dummy_flags: int
    credits: int
    control_messages: int
    per_edge: dict[str, dict[str, int]]
    blocking_cycle: list[str]
    channel_states: dict[str, dict]
    blocked: dict[str, str] = field(default_factory=dict)
    outputs: dict[str, list] = field(default_factory=dict)
    index_spread: int | None = None
    watermark: int | None = None

    def to_json(self) -> dict:
        """The ``sfdf simulate --json`` object: the docs/architecture.md keys, then extras (no sink logs)."""
        out = {key: getattr(self, key) for key in JSON_KEYS}
        out.update(
            network=self.network,
            mode=self.mode,
            scheduler=self.scheduler,
            seed=self.seed,
            steps=self.steps,
            dummy_flags=self.dummy_flags,
            per_edge=self.per_edge,
            blocked=self.blocked,
            channel_states={name: dict(state) for name, state in self.channel_states.items()},
            sink_events={sink: len(log) for sink, log in self.outputs.items()},
        )
        return out

    def summary_lines(self) -> list[str]:
        """A readable report; for a deadlock, every channel of the blocking cycle with its state."""
        verdict = f"DEADLOCKED after {self.steps} actions" if self.deadlocked else (
            f"completed in {self.steps} actions")
        lines = [
            f"{self.network} ({self.mode} mode, {self.scheduler} scheduler, seed {self.seed}): {verdict}",
            (f"  computations {self.computations}, data tokens {self.data_tokens}, dummies {self.dummies}, "
             f"dummy flags {self.dummy_flags}, credits {self.credits}, "
             f"control messages {self.control_messages}"),
        ]
        for sink, log in self.outputs.items():
            data = sum(1 for event in log if event[0] == "data")
            lines.append(f"  sink {sink}: {data} data, {len(log) - data} control")
        if not self.deadlocked:
            return lines
        lines.append("  blocking cycle (blockwise order): " + " -> ".join(self.blocking_cycle))
        for name in self.blocking_cycle:
            lines.append("    " + _describe(name, self.channel_states[name]))
        return lines


def _describe(name: str, state: dict) -> str:
    text = (f"{name} ({state['src']} -> {state['dst']}), {state['role']}: "
            f"data {state['data']}/{state['capacity']} ({state['hidden']} hidden)")
    if state["control"] is not None:
        text += (f", control {state['control']}/{state['control_capacity']}, "
                 f"SCB {state['scb']}, RCB {state['rcb']}")
    if state["waiting"]:
        text += "; " + "; ".join(state["waiting"])
    return text

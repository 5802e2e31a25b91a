"""The public entry of the reference model: run a network until it finishes or deadlocks."""

from __future__ import annotations

import random
from collections.abc import Callable, Mapping, Sequence
from typing import TYPE_CHECKING

from ..analysis.control import watermark
from ..model import AUTO
from .blocking import blocking_cycle, channel_states
from .credit import CreditNode
from .inband import InbandNode, PropagationNode
from .kernels import make_kernel
from .link import COUNTERS, Link
from .result import SimResult
from .scheduler import make_scheduler
from .watermark import Watermark

if TYPE_CHECKING:
    from ..analysis.cycles import CycleStructure

__all__ = ["FRAME_END", "random_words", "simulate"]

#: Kind of the user control message a source sends after the last word of each input frame:
#: ``(FRAME_END, k)`` for frame ``k = 0, 1, ...``.
FRAME_END = "frame_end"


def simulate(network, computations: int = 1000, inputs: Mapping[str, Sequence[Sequence[int]]] | None = None,
             seed: int = 1, scheduler: str = "random",
             filter_oracle: Callable[[str, str, int], bool | None] | None = None,
             flush_oracle: Callable[[str, int, int], bool] | None = None,
             max_steps: int | None = None, frame_length: int | None = None, *,
             cycles: CycleStructure | None = None, depth: int = 1, watermark: bool = True) -> SimResult:
    """Run ``network`` with the semantics of docs/semantics.md until it finishes or deadlocks.

    Parameters
    ----------
    network : Network
        Any network; ``"auto"`` values are resolved by :func:`sfdf.gen.analysis.resolve`.
    computations : int
        Computations of each source without ``inputs``: seeded random 16-bit words, then EOS.
    inputs : mapping of str to list of list of int, optional
        Frames per source; a source listed here reads its frames' words (``computations`` is
        ignored for it) and sends ``(FRAME_END, k)`` after the last word of frame ``k``.
    seed : int
        Seeds the random words (per source) and the scheduler.
    scheduler : {"random", "round_robin", "adversarial"}
        See :mod:`.scheduler`.
    filter_oracle : callable, optional
        ``(node, output, index) -> bool | None``: overrides the kernel's decision for that output
        (True emits, False filters, None keeps the kernel's); ``output`` is an edge name, or
        ``"m_axis"`` at a sink. See :func:`.adversary.adversarial_filter_history`.
    flush_oracle : callable, optional
        ``(edge, hidden, index) -> bool``: asked after a data token with ``index`` enters an output
        buffer that then holds ``hidden`` tokens; True flushes it (003 Sec. 2 allows it any time).
        Replaces the adversarial scheduler's own flushes.
    max_steps : int, optional
        Stop with ``RuntimeError`` after this many actions (a guard; a run always terminates).
    frame_length : int, optional
        For random words: a frame ends every ``frame_length`` words and after the last word.
    cycles : gen.analysis.cycles.CycleStructure, optional
        The network's cycle structure, when the caller has it: resolution and Propagation's
        biconnected components (002 Sec. 3.2) read it (derived here when needed and not given).
    depth : int
        Computations every node may hold decided and not yet wholly emitted (:class:`.node.NodeSim`):
        1 is the atomic node of the papers, more the pipelined hardware node (docs/hardware.md).
    watermark : bool
        Credit mode: hold the sources by the index watermark where the hardware has one
        (:mod:`.watermark`); False only measures the spread the joins compare (``index_spread``).

    Returns
    -------
    SimResult

    Raises
    ------
    ValueError
        Bad arguments, an unknown kernel, or an ``"auto"`` that resolution left.
    RuntimeError
        ``max_steps`` exceeded.
    """
    if cycles is not None or (network.mode == "inband" and network.dummy_algorithm == "propagation"):
        from ..analysis.cycles import cycle_structure  # scipy-heavy: imported only when needed

        cycles = cycle_structure(network, cycles)  # resolution and a Propagation run read it
    network = _concrete(network, cycles)
    if not isinstance(computations, int) or computations < 0:
        raise ValueError(f"Computations must be a non-negative integer, not {computations!r}")
    if frame_length is not None and (not isinstance(frame_length, int) or frame_length < 1):
        raise ValueError(f"Frame length must be a positive integer, not {frame_length!r}")
    sources = _source_streams(network, computations, inputs or {}, seed, frame_length)
    sched = make_scheduler(scheduler, len(network.nodes), seed)
    if not isinstance(depth, int) or depth < 1:
        raise ValueError(f"Depth must be a positive integer, not {depth!r}")
    links, nodes = _build(network, sources, sched, filter_oracle, flush_oracle or sched.flush_oracle, cycles,
                          depth)
    mark = _watermark(network, nodes, watermark)
    steps = _run(network.name, nodes, sched, max_steps)
    _confirm_blocked(nodes)
    cycle = blocking_cycle(nodes)
    per_edge = {link.name: {c: getattr(link, c) for c in COUNTERS} for link in links}
    total = {c: sum(counts[c] for counts in per_edge.values()) for c in COUNTERS}
    return SimResult(
        network=network.name,
        mode=network.mode,
        scheduler=scheduler,
        seed=seed,
        deadlocked=bool(cycle),
        steps=steps,
        computations=sum(n.computations for n in nodes),
        data_tokens=total["data_tokens"],
        dummies=total["dummies"],
        dummy_flags=total["dummy_flags"],
        credits=total["credits"],
        control_messages=total["control_messages"],
        per_edge=per_edge,
        blocking_cycle=[link.name for link, _ in cycle],
        channel_states=channel_states(links, nodes, cycle),
        blocked={n.name: f"waits on {n.waiting.name if n.waiting else 'the sinks'}: {n.reason}"
                 for n in nodes if not n.finished},
        outputs={n.name: n.log for n in nodes if n.log is not None},
        index_spread=mark.spread if mark is not None else None,
        watermark=mark.window if mark is not None else None,
    )


def _watermark(network, nodes, hold: bool) -> Watermark | None:
    """Credit mode: the run's :class:`.watermark.Watermark`, holding the sources iff ``hold`` and the
    hardware has one (:func:`sfdf.gen.analysis.control.watermark`)."""
    if network.mode != "credit":
        return None
    found = watermark(network, {e.name: e.interval for e in network.edges}) if hold else None
    mark = Watermark(found["window"] if found else None)
    for node in nodes:
        if not node.inputs and not node.outputs:
            continue  # an isolated node compares nothing (and the hardware refuses it)
        if not node.outputs:
            mark.sinks.append(node)
        elif not node.inputs:
            mark.sources.append(node)
        node.watermark = mark
    return mark


def random_words(seed: int, source: str, count: int) -> list[int]:
    """The 16-bit words source ``source`` reads in a run with ``seed`` and no ``inputs`` for it.

    Drivers that feed the same run to hardware (cosim) use this to reproduce the stimulus.
    """
    rng = random.Random(f"{seed}:{source}")
    return [rng.getrandbits(16) for _ in range(count)]


def _concrete(network, cycles):
    """``network`` with every ``"auto"`` the protocol needs resolved (docs/semantics.md)."""
    fields = ("interval", "threshold", "control_capacity") if network.mode == "credit" else ("interval",)
    if network.mode not in ("credit", "inband"):
        raise ValueError(f"Network mode must be 'credit' or 'inband', not {network.mode!r}")
    if any(getattr(e, f) == AUTO for e in network.edges for f in fields):
        from ..analysis import resolve  # scipy-heavy: imported only when needed

        network = resolve(network, cycles=cycles)
    left = [f"{e.name}.{f}" for e in network.edges for f in fields if getattr(e, f) == AUTO]
    if left:
        raise ValueError(f"Network {network.name!r} must have concrete values, but 'auto' survived "
                         f"resolution in: {', '.join(left)}")
    return network


def _source_streams(network, computations, inputs, seed, frame_length) -> dict[str, tuple[list, dict]]:
    """Per source: its words, and index -> the tuple of messages sent after that computation."""
    unknown = sorted(set(inputs) - set(network.sources))
    if unknown:
        raise ValueError(f"Inputs must name sources of {network.name!r} "
                         f"({', '.join(network.sources)}), not {', '.join(unknown)}")
    streams = {}
    for name in network.sources:
        words: list[int] = []
        ends: dict[int, tuple] = {}
        if name in inputs:
            for k, frame in enumerate(inputs[name]):
                if not frame or not all(isinstance(w, int) and w >= 0 for w in frame):
                    raise ValueError(f"Frame {k} of source {name!r} must be a non-empty list of "
                                     f"non-negative ints, not {frame!r}")
                words.extend(frame)
                ends[len(words)] = ((FRAME_END, k),)
        else:
            words = random_words(seed, name, computations)
            if frame_length is not None and words:
                ends = {i: ((FRAME_END, k),)
                        for k, i in enumerate([*range(frame_length, len(words), frame_length), len(words)])}
        streams[name] = (words, ends)
    return streams


def _build(network, sources, sched, filter_oracle, flush_oracle, cycles, depth) -> tuple[list[Link], list]:
    """The links (spec order) and nodes (topological order) of a run."""
    credit = network.mode == "credit"
    propagation = not credit and network.dummy_algorithm == "propagation"
    links = [Link(e, p, credit, not credit and not propagation, live_credit=credit and network.live_credit)
             for p, e in enumerate(network.edges)]
    if propagation:
        components = cycles.components
        for link in links:
            link.bicomp = components[link.name]
    if flush_oracle is not None:
        for link in links:
            if link.data.output_buffer > 1:
                link.flush_oracle = flush_oracle
    cls = CreditNode if credit else PropagationNode if propagation else InbandNode
    options = {"live_credit": network.live_credit} if credit else {}
    nodes = []
    for rank, name in enumerate(network.topological_order()):
        ins = [link for link, e in zip(links, network.edges) if e.dst == name]
        outs = [link for link, e in zip(links, network.edges) if e.src == name]
        words, ends = sources.get(name, (None, None))
        node = cls(name, rank, ins, outs,
                   make_kernel(network, name),
                   words=words, frame_ends=ends, log=None if outs else [], filter_oracle=filter_oracle,
                   depth=depth, **options)
        node.ready = sched.add
        for link in ins:
            link.dst = node
        for link in outs:
            link.src = node
        nodes.append(node)
    return links, nodes


def _run(name: str, nodes: list, sched, max_steps: int | None) -> int:
    """Perform actions until none is enabled; return how many were performed."""
    for node in nodes:
        sched.add(node.rank)
    pick, discard = sched.pick, sched.discard
    limit = -1 if max_steps is None else max_steps
    steps = 0
    while True:
        k = pick()
        if k < 0:
            return steps
        node = nodes[k]
        if node.step():
            if steps == limit:
                raise RuntimeError(f"Simulation of {name!r} needs more than max_steps={max_steps} actions")
            steps += 1
            if node.finished:
                discard(k)
        else:
            discard(k)


def _confirm_blocked(nodes: list) -> None:
    """Retry every unfinished node: each must block again, now saying why in the final state.

    A receiver that blocked on an empty channel which has since received hidden tokens was rightly
    not woken (nothing became visible); the retry records the current reason. Progress here would
    mean a missed wake-up, a simulator bug.
    """
    for node in nodes:
        if not node.finished and node.step():
            raise RuntimeError(f"Internal error: node {node.name!r} could proceed at a deadlock")

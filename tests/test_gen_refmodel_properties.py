"""Properties of the reference model over random networks, histories and schedules.

The oracle for sink data is a channel-free evaluation (:func:`synchronous_outputs`): SFDF
computations are determinate, so whatever the schedule, a run that completes must deliver exactly
the data this index-by-index evaluation yields (002 Sec. 1).
"""

from contextlib import contextmanager
from dataclasses import replace
from itertools import accumulate, islice
from unittest import mock

from graphs import dags
from hypothesis import given, settings
from hypothesis import strategies as st

from sfdf.gen.analysis.cycles import has_potential_deadlock, undirected_cycles
from sfdf.gen.model import Edge, Network, Node
from sfdf.gen.refmodel import FRAME_END, adversarial_filter_history, random_words, simulate
from sfdf.gen.refmodel.adversary import cycle_marks
from sfdf.gen.refmodel.channels import DataChannel
from sfdf.gen.refmodel.kernels import make_kernel

SETTINGS = settings(max_examples=80, deadline=None)
SCHEDULERS = ("random", "round_robin", "adversarial")
RATES = (0.0, 0.0, 0.25, 0.5, 0.9, 1.0)
ALGORITHMS = ("naive", "propagation", "nonpropagation")


# -- oracles --------------------------------------------------------------------------------------
def synchronous_outputs(network, inputs, framed=True):
    """Each sink's data events by evaluating index by index, nodes in topological order.

    ``framed``: the sources send a frame end after each frame's last word (``inputs`` given to the
    run), which a ``variance_source`` always sends; else the run read random words with no frames.
    """
    ins = {n.name: [e for e in network.edges if e.dst == n.name] for n in network.nodes}
    outs = {n.name: [e for e in network.edges if e.src == n.name] for n in network.nodes}
    kernels = {n.name: make_kernel(network, n.name) for n in network.nodes}
    words = {name: [w for frame in frames for w in frame] for name, frames in inputs.items()}
    lasts = {name: set(accumulate(map(len, frames))) if framed else set() for name, frames in inputs.items()}
    logs = {name: [] for name in network.sinks}
    for i in range(1, max(map(len, words.values()), default=0) + 1):
        carried: dict[str, int] = {}
        for name in network.topological_order():
            last = False
            if name in words:
                values = [words[name][i - 1] if i <= len(words[name]) else None]
                last = i in lasts[name]
            else:
                values = [carried.get(e.name) for e in ins[name]]
            if all(v is None for v in values):
                continue  # a null computation emits nothing and steps no LFSR
            results, emits = kernels[name].compute(i, values, last)
            for e, value, emit in zip(outs[name], results, emits):
                if emit:
                    carried[e.name] = value
            if name in logs and emits[0]:
                logs[name].append(("data", i, results[0]))
    return logs


def data_only(outputs):
    return {sink: [e for e in log if e[0] == "data"] for sink, log in outputs.items()}


def check_precise_order(log, frame_of):
    """000 Thm. 3.1 end to end: data of frame k lies between frame_end k - 1 and frame_end k.

    Returns the frame ends seen, each once and in order.
    """
    closed = 0
    for event in log:
        if event[0] == "data":
            assert frame_of[event[1]] == closed, (event, closed)
        else:
            assert event[1] == (FRAME_END, closed), (event, closed)
            closed += 1
    return closed


def frames_of(frames):
    """Index -> frame number for a source reading ``frames``."""
    frame_of = {}
    for k, frame in enumerate(frames):
        for _ in frame:
            frame_of[len(frame_of) + 1] = k
    return frame_of


@contextmanager
def one_token_per_index():
    """Fail a run that pushes a token whose index is not above the channel's last one.

    In-band, user messages ride on tokens (docs/semantics.md): every channel then carries at most
    one token per index, the premise of the interval theorems (002 Thm. 3.2, 3.3).
    """
    push, push_flush = DataChannel.push, DataChannel.push_flush

    def check(original):
        def pushed(self, token):
            assert token[1] > self.last_index, (token, self.last_index)
            return original(self, token)
        return pushed

    with mock.patch.object(DataChannel, "push", check(push)), \
            mock.patch.object(DataChannel, "push_flush", check(push_flush)):
        yield


# -- strategies -----------------------------------------------------------------------------------
frame_words = st.one_of(
    st.integers(1, 20).map(lambda n: [0] * n),
    st.lists(st.one_of(st.just(0), st.integers(0, 65535)), min_size=1, max_size=20),
)

SHAPES = {
    "chain": ("ab", "bc", "cd"),
    "diamond": ("uv", "uw", "vx", "wx"),
    "diamond_tail": ("uv", "uw", "vx", "wx", "xy"),
    "double_diamond": ("uv", "uw", "vx", "wx", "xa", "xb", "ay", "by"),
    "parallel": ("uv", "uv2", "vx"),
}


def with_kernels(draw, network, source_kernels=("random_filter",)):
    """Every node a random_filter with a drawn rate and seed (sources may draw another kernel)."""
    nodes = []
    for n in network.nodes:
        kernel = draw(st.sampled_from(source_kernels)) if n.name in network.sources else "random_filter"
        params = {"rate": draw(st.sampled_from(RATES)), "seed": draw(st.integers(0, 99))} \
            if kernel == "random_filter" else {}
        nodes.append(Node(n.name, kernel, params))
    return replace(network, nodes=tuple(nodes))


@st.composite
def framed_networks(draw):
    """Chains, diamonds and parallel edges with drawn capacities and filters; resolved intervals; frames.

    Credit mode: control channels are large, since 000 Sec. 4.3's sizing assumes a bound on user
    messages per data token and a random_filter source that filters a whole frame sends its frame
    end with no data at all. In-band any of the three dummy algorithms: messages take no slot.
    """
    names = SHAPES[draw(st.sampled_from(sorted(SHAPES)))]
    mode = draw(st.sampled_from(["credit", "inband"]))
    edges = []
    for name in names:
        capacity = draw(st.integers(1, 6))
        edges.append(Edge(name, name[0], name[1], capacity, control_capacity=1000,
                          threshold=draw(st.integers(0, capacity - 1))))
    nodes = tuple(Node(n) for n in dict.fromkeys(c for e in edges for c in (e.src, e.dst)))
    network = Network("shape", nodes, tuple(edges), mode=mode, dummy_algorithm=draw(st.sampled_from(ALGORITHMS)))
    network = with_kernels(draw, network, ("random_filter", "variance_source"))
    frames = draw(st.lists(frame_words, min_size=1, max_size=6))
    return network, {s: frames for s in network.sources}


@st.composite
def filtering_dags(draw, modes=("credit", "inband")):
    network = with_kernels(draw, draw(dags(max_nodes=6, max_edges=8)))
    return replace(network, mode=draw(st.sampled_from(modes)), dummy_algorithm=draw(st.sampled_from(ALGORITHMS)))


def random_frames(draw, network, most=40):
    """One drawn word sequence, cut into frames of a drawn length, for every source."""
    words = draw(st.lists(st.integers(0, 65535), min_size=1, max_size=most))
    length = draw(st.integers(1, len(words)))
    return {s: [words[k:k + length] for k in range(0, len(words), length)] for s in network.sources}


def random_words_of(network, seed, count):
    """The inputs a run without ``inputs`` reads, as a single frame per source (for the oracle)."""
    return {s: [random_words(seed, s, count)] for s in network.sources}


def check_frames(network, inputs, result):
    """No deadlock; each sink gets its data as computed and every frame end once, precisely ordered."""
    assert not result.deadlocked, result.summary_lines()
    frames = next(iter(inputs.values()))  # every source reads the same frames
    frame_of = frames_of(frames)
    for log in result.outputs.values():
        assert check_precise_order(log, frame_of) == len(frames)
    assert data_only(result.outputs) == synchronous_outputs(network, inputs)


# -- properties -----------------------------------------------------------------------------------
@SETTINGS
@given(framed_networks(), st.sampled_from(SCHEDULERS), st.integers(0, 9))
def test_frame_ends_are_precisely_ordered(case, scheduler, seed):
    network, inputs = case
    with one_token_per_index():
        check_frames(network, inputs, simulate(network, inputs=inputs, seed=seed, scheduler=scheduler))


@SETTINGS
@given(dags(max_nodes=6, max_edges=9), st.data())
def test_naive_never_deadlocks(network, data):
    # 002 Thm. 3.1 (Filtering Theorem): with a token per computation on every channel, output
    # buffers included (Naive flushes every computation), nothing blocks for good; user messages
    # ride on those tokens.
    network = with_kernels(data.draw, network)
    edges = [replace(e, output_buffer=data.draw(st.integers(0, e.capacity))) for e in network.edges]
    network = replace(network, edges=tuple(edges), mode="inband", dummy_algorithm="naive")
    inputs = random_frames(data.draw, network)
    result = simulate(network, inputs=inputs, scheduler=data.draw(st.sampled_from(SCHEDULERS)),
                      seed=data.draw(st.integers(0, 9)))
    check_frames(network, inputs, result)


@SETTINGS
@given(filtering_dags(), st.data())
def test_resolved_intervals_never_deadlock(network, data):
    # 000 Thm. 4.2 (credit, heartbeats), 002 Thm. 3.2 / 3.3 (propagation, non-propagation). In-band
    # with frames: their ends ride on tokens, so the intervals hold unchanged. Credit mode without:
    # resolved control capacities assume the nodes' declared m = 0 user messages per data token.
    scheduler, seed = data.draw(st.sampled_from(SCHEDULERS)), data.draw(st.integers(0, 9))
    if network.mode == "inband":
        inputs = random_frames(data.draw, network, most=60)
        check_frames(network, inputs, simulate(network, inputs=inputs, scheduler=scheduler, seed=seed))
        return
    count = data.draw(st.integers(1, 60))
    result = simulate(network, computations=count, scheduler=scheduler, seed=seed)
    assert not result.deadlocked, result.summary_lines()
    expected = synchronous_outputs(network, random_words_of(network, seed, count), framed=False)
    assert data_only(result.outputs) == expected


@SETTINGS
@given(filtering_dags(modes=("inband",)), st.data())
def test_inband_channels_carry_one_token_per_index(network, data):
    # Messages on every index (frames of one word) and heavy filtering: a forced carrier dummy never
    # comes on top of an interval dummy or a data token, and no message takes a slot of its own.
    network = replace(network, nodes=tuple(replace(n, params={**n.params, "rate": 0.9}) for n in network.nodes))
    words = data.draw(st.lists(st.integers(0, 65535), min_size=1, max_size=40))
    inputs = {s: [[w] for w in words] for s in network.sources}
    with one_token_per_index():
        result = simulate(network, inputs=inputs, scheduler=data.draw(st.sampled_from(SCHEDULERS)),
                          seed=data.draw(st.integers(0, 9)))
    check_frames(network, inputs, result)
    for counts in result.per_edge.values():
        assert counts["data_tokens"] + counts["dummies"] <= len(words)


@settings(max_examples=40, deadline=None)
@given(filtering_dags(), st.data())
def test_outputs_do_not_depend_on_the_schedule(network, data):
    # Data and frame ends alike; resolved intervals, large control channels in credit mode (as above).
    if network.mode == "credit":
        network = replace(network, edges=tuple(replace(e, control_capacity=1000) for e in network.edges))
    inputs = random_frames(data.draw, network, most=25)
    runs = [simulate(network, inputs=inputs, scheduler=s, seed=data.draw(st.integers(0, 9))) for s in SCHEDULERS]
    assert not runs[0].deadlocked
    assert runs[0].outputs == runs[1].outputs == runs[2].outputs


@SETTINGS
@given(dags(max_nodes=6, max_edges=8).filter(has_potential_deadlock), st.data())
def test_every_undirected_cycle_can_deadlock(network, data):
    # 002 Thm. 2.2: the proof's filtering history, with no dummies at all, blocks the cycle.
    mode = data.draw(st.sampled_from(["inband", "credit"]))
    edges = tuple(replace(e, interval=None, threshold=e.capacity - 1, control_capacity=4 * e.capacity + 1)
                  for e in network.edges)
    network = replace(network, edges=edges, mode=mode)
    cycle = data.draw(st.sampled_from(list(islice(undirected_cycles(network), 12))))
    forward = data.draw(st.booleans())
    marks, _, _ = cycle_marks(network, cycle, forward)
    result = simulate(network, computations=max(marks.values()) + 2, seed=data.draw(st.integers(0, 9)),
                      filter_oracle=adversarial_filter_history(network, cycle, forward),
                      scheduler=data.draw(st.sampled_from(SCHEDULERS)))
    assert result.deadlocked
    check_blocking_cycle(network, result)


def check_blocking_cycle(network, result):
    """The reported cycle is a closed undirected walk: full channels fill, the others starve."""
    states = result.channel_states
    walk = []
    for name in result.blocking_cycle:
        e = network.edge_by_name[name]
        role = states[name]["role"]
        # blockwise: the sender blocks the receiver, the walk goes src -> dst; else dst -> src
        walk.append((e.src, e.dst) if role == "blockwise" else (e.dst, e.src))
        if role == "counterblockwise":
            full = states[name]["full"] or states[name]["control_full"]
            assert full and states[name]["waiting"] == [f"{e.src}: " + states[name]["waiting"][0].split(": ", 1)[1]]
        else:
            assert any(w.startswith(f"{e.dst}: ") for w in states[name]["waiting"])
    assert all(walk[k][1] == walk[(k + 1) % len(walk)][0] for k in range(len(walk)))

"""The reference model against hand-computed facts: channels, the LFSR, protocol counts, paper figures."""

from dataclasses import replace

import pytest
from graphs import ports

import sfdf.gen.analysis
from sfdf.gen.goldens import RandomFilter, VarianceSource
from sfdf.gen.kernels import lfsr_seed, lfsr_step
from sfdf.gen.model import Edge, Network, Node
from sfdf.gen.refmodel import FRAME_END, SimResult, adversarial_filter_history, simulate
from sfdf.gen.refmodel.adversary import cycle_marks
from sfdf.gen.refmodel.channels import MSG_DUMMY, MSG_USER, ControlChannel, DataChannel

SCHEDULERS = ("random", "round_robin", "adversarial")


# -- building networks ----------------------------------------------------------------------------
def edge(name, capacity=8, **kw):
    """Edge ``name`` from node ``name[0]`` to node ``name[1]``; infinite interval, ``T = |q| - 1``."""
    kw.setdefault("interval", None)
    kw.setdefault("threshold", capacity - 1)
    kw.setdefault("control_capacity", 4 * capacity + 1)
    return Edge(name, name[0], name[1], capacity, **kw)


def node(name, rate=0.0, seed=1, kernel="random_filter"):
    return Node(name, kernel, {"rate": rate, "seed": seed} if kernel == "random_filter" else {})


def net(edges, nodes=(), mode="credit", **kw):
    """Nodes given (``Node`` or name) first, then the remaining endpoints in order of appearance."""
    given = {n.name if isinstance(n, Node) else n: n for n in nodes}
    for e in edges:
        for name in (e.src, e.dst):
            given.setdefault(name, name)
    return Network("t", tuple(n if isinstance(n, Node) else node(n) for n in given.values()), tuple(edges),
                   mode=mode, **kw)


def fig3(interval=None, w_rate=0.75, live_credit=False):
    """000 Fig. 3: the diamond, capacities 32, T = 31; w filters; 000's receiver unless ``live_credit``."""
    return net([edge(n, 32, threshold=31, interval=interval) for n in ("uv", "uw", "vx", "wx")],
               nodes=["u", "v", node("w", w_rate, seed=3), "x"], live_credit=live_credit)


def fig2(output_buffer=8):
    """003 Fig. 2: |uv| = |vx| = 4, |uw| = |wx| = 16 with output buffers; inband, no filtering."""
    edges = [edge("uv", 4), edge("vx", 4), edge("uw", 16, output_buffer=output_buffer),
             edge("wx", 16, output_buffer=output_buffer)]
    return net(edges, mode="inband", filtering=False)


DIAMOND_CYCLE = (("uv", True), ("vx", True), ("wx", False), ("uw", False))


def data_events(result, sink):
    return [e for e in result.outputs[sink] if e[0] == "data"]


# -- channels -------------------------------------------------------------------------------------
def test_data_channel_capacity_is_exact():
    q = DataChannel(3)
    for i in (1, 2, 3):
        assert not q.full
        q.push((0, i, i))
    assert q.full and q.level == 3 and q.visible == 3


def test_output_buffer_hides_tokens_until_flushed():
    q = DataChannel(6, output_buffer=3)
    assert q.push((0, 1, 0)) and q.push((0, 2, 0))
    assert (q.level, q.visible, q.hidden) == (2, 0, 2)
    assert not q.push((0, 3, 0))  # the third fills the output buffer: forced flush
    assert (q.visible, q.hidden) == (3, 0)
    q.push((0, 4, 0))
    assert q.flush() and not q.flush()
    assert (q.visible, q.last_index) == (4, 4)


def test_output_buffer_of_one_is_none():
    q = DataChannel(2, output_buffer=1)
    assert not q.push((0, 1, 0))
    assert q.visible == 1


def test_control_channel_coalesces_dummies_even_when_full():
    c = ControlChannel(2)
    assert c.push_dummy(3) == 1
    assert c.push_dummy(5) == 2  # replaces the tail: dummy(5) says more
    assert list(c.queue) == [[MSG_DUMMY, 0, 5]]
    c.queue.append([MSG_USER, 0, "m"])
    assert c.full
    assert c.push_dummy(6) == 0  # the tail is not a dummy: blocks
    c.queue.pop()
    c.queue.append([MSG_DUMMY, 0, 6])
    assert c.push_dummy(9) == 2 and c.level == 2


@pytest.mark.parametrize("make, message", [
    (lambda: DataChannel(0), "Channel capacity must be a positive integer, not 0"),
    (lambda: DataChannel(2, 3), "Output buffer must be an integer in [0, 2], not 3"),
    (lambda: ControlChannel(0), "Control channel capacity must be a positive integer, not 0"),
])
def test_channel_parameters_are_checked(make, message):
    with pytest.raises(ValueError) as info:
        make()
    assert str(info.value) == message


# -- kernels --------------------------------------------------------------------------------------
# By hand from docs/semantics.md: s0 = (1 * 0x9E3779B1 + 1 * 0x85EBCA77) mod 2^32 = 0x24234428, then
# shift right, xor 0x80200003 when the bit shifted out is 1.
SEED1_OUTPUT0 = [0x24234428, 0x1211A214, 0x0908D10A, 0x04846885, 0x82623441,
                 0xC1111A23, 0xE0A88D12, 0x70544689, 0xB80A2347]


def test_lfsr_first_states_for_seed_1():
    states = [lfsr_seed(1, 0)]
    for _ in range(8):
        states.append(lfsr_step(states[-1]))
    assert states == SEED1_OUTPUT0


def test_lfsr_seed_of_second_output():
    assert lfsr_seed(1, 1) == 0xAA0F0E9F  # 0x9E3779B1 + 2 * 0x85EBCA77 mod 2^32


def test_lfsr_zero_seed_state_becomes_one():
    seed = (-0x85EBCA77 * pow(0x9E3779B1, -1, 1 << 32)) % (1 << 32)
    assert lfsr_seed(seed, 0) == 1


def test_random_filter_decisions_follow_the_lfsr():
    kernel = RandomFilter(ports=ports(), rate=0.5, seed=1)
    decisions = [kernel.step({"i": 0})["o"] is not None for _ in range(8)]
    assert decisions == [(s >> 16) >= 32768 for s in SEED1_OUTPUT0[1:]]
    assert decisions == [False, False, False, True, True, True, False, True]


@pytest.mark.parametrize("rate, emits", [(0.0, True), (1.0, False)])
def test_random_filter_rate_extremes(rate, emits):
    kernel = RandomFilter(ports=ports(outputs=3), rate=rate, seed=7)
    assert all(kernel.step({"i": 5}) == dict.fromkeys("abc", 5 if emits else None) for _ in range(1000))


def test_random_filter_sum_wraps_at_data_width():
    assert RandomFilter(ports=ports(inputs=2, width=8)).step({"a": 200, "b": 100}) == {"o": 44}
    assert RandomFilter(ports=ports(inputs=2, width=8)).step({"a": None, "b": 100}) == {"o": 100}


def test_variance_source_filters_zero_words_but_not_a_frames_last():
    kernel = VarianceSource(ports=ports(outputs=2, width=17))
    assert kernel.step({"i": 0}, last=False) == {"a": None, "b": None}
    assert kernel.step({"i": 7}, last=False) == {"a": 7, "b": 7}
    assert kernel.step({"i": 0}, last=True) == {"a": 1 << 16, "b": 1 << 16}  # still sent, marked last


@pytest.mark.parametrize("mode", ["credit", "inband"])
def test_variance_source_sends_each_frames_last_word(mode):
    # An all-zero frame still sends its last word; zeros elsewhere are filtered.
    network = net([edge("ab"), edge("ac")], nodes=[node("a", kernel="variance_source")], mode=mode)
    result = simulate(network, inputs={"a": [[0, 0, 0], [0, 5, 0, 0], [3], [0, 7]]})
    last = 1 << 16  # the frame's-last mark above the pixel
    expected = [("data", 3, last), ("control", (FRAME_END, 0)), ("data", 5, 5), ("data", 7, last),
                ("control", (FRAME_END, 1)), ("data", 8, last | 3), ("control", (FRAME_END, 2)),
                ("data", 10, last | 7), ("control", (FRAME_END, 3))]
    assert result.outputs["b"] == result.outputs["c"] == expected
    assert result.dummies == 0 and result.data_tokens == 10


def test_variance_source_without_frames_filters_every_zero():
    # Seed 186's source reads a zero as word 1398: the last word, but with no frame it is filtered;
    # with frames (frame_length) it ends the last frame and is sent.
    network = net([edge("ab")], nodes=[node("a", kernel="variance_source")])
    result = simulate(network, computations=1398, seed=186)
    assert [e[1] for e in result.outputs["b"]] == list(range(1, 1398))
    framed = simulate(network, computations=1398, seed=186, frame_length=1000)
    assert data_events(framed, "b")[-1] == ("data", 1398, 1 << 16)  # marked last


@pytest.mark.parametrize("rate, expected", [(0.0, 20), (1.0, 0)])
def test_filtering_node_in_a_pipeline(rate, expected):
    result = simulate(net([edge("ab"), edge("bc")], nodes=["a", node("b", rate)]), computations=20)
    assert not result.deadlocked
    assert len(data_events(result, "c")) == expected


# -- pipelines and joins --------------------------------------------------------------------------
@pytest.mark.parametrize("mode", ["credit", "inband"])
@pytest.mark.parametrize("scheduler", SCHEDULERS)
def test_pipeline_delivers_every_index_with_its_word(mode, scheduler):
    frames = [[5, 0, 65535], [9]]
    result = simulate(net([edge("ab", 2)], mode=mode), inputs={"a": frames}, scheduler=scheduler)
    assert not result.deadlocked
    assert result.outputs["b"] == [("data", 1, 5), ("data", 2, 0), ("data", 3, 65535),
                                   ("control", (FRAME_END, 0)), ("data", 4, 9), ("control", (FRAME_END, 1))]
    assert result.computations == 8 and result.data_tokens == 4 and result.control_messages == 2


@pytest.mark.parametrize("scheduler", SCHEDULERS)
def test_diamond_join_sums_both_branches(scheduler):
    result = simulate(replace(fig3(interval=3), data_width=16), computations=300, scheduler=scheduler, seed=4)
    assert not result.deadlocked
    # u's words (seeded by seed and source name), and w's decisions replayed on its own LFSR
    words = [e[2] for e in simulate(net([edge("ux")]), computations=300, seed=4).outputs["x"]]
    w = RandomFilter(ports=ports(width=16), rate=0.75, seed=3)
    expected = [("data", i, (word + (w.step({"i": word})["o"] or 0)) & 0xFFFF)
                for i, word in enumerate(words, 1)]
    assert data_events(result, "x") == expected


def test_source_words_are_seeded_per_source():
    a = simulate(net([edge("ab")]), computations=50, seed=1).outputs["b"]
    b = simulate(net([edge("ab")]), computations=50, seed=2).outputs["b"]
    assert [e[1] for e in a] == list(range(1, 51)) and a != b
    assert all(0 <= e[2] < 1 << 16 for e in a)


def test_frame_length_ends_frames_and_the_last_partial_frame():
    result = simulate(net([edge("ab")]), computations=7, frame_length=3)
    controls = [i for i, e in enumerate(result.outputs["b"]) if e[0] == "control"]
    assert controls == [3, 7, 9]  # after words 3, 6 and 7
    assert [result.outputs["b"][i][1] for i in controls] == [(FRAME_END, k) for k in range(3)]


def test_join_forwards_a_frame_end_once_after_its_last_copy():
    edges = [edge("ax"), edge("bx")]
    result = simulate(net(edges), inputs={"a": [[1, 2], [3]], "b": [[5, 6, 7]]})
    assert result.outputs["x"] == [("data", 1, 6), ("data", 2, 8), ("data", 3, 10),
                                   ("control", (FRAME_END, 0)), ("control", (FRAME_END, 1))]


# -- credit protocol counts (000 Alg. 2, 4) ------------------------------------------------------
@pytest.mark.parametrize("n, threshold, credits", [(20, 3, 5), (22, 3, 6), (5, 0, 5), (9, 8, 1)])
def test_credit_messages_follow_the_threshold(n, threshold, credits):
    # 000's sender: SCB > T after every T + 1 tokens; EOS flushes the rest.
    result = simulate(net([edge("ab", 16, threshold=threshold)], live_credit=False), computations=n)
    assert result.per_edge["ab"]["credits"] == credits and result.credits == credits


@pytest.mark.parametrize("threshold", [0, 3, 15])
def test_live_credit_sends_no_credit_messages(threshold):
    # Live credit: tokens are credited by the counters (hdl.counter); EOS carries the last credits.
    result = simulate(net([edge("ab", 16, threshold=threshold)]), computations=40)
    assert result.per_edge["ab"]["credits"] == 0 and result.per_edge["ab"]["data_tokens"] == 40
    assert [e[1] for e in result.outputs["b"] if e[0] == "data"] == list(range(1, 41))


@pytest.mark.parametrize("n, interval", [(40, 3), (41, 0), (7, 7)])
def test_heartbeat_dummies_when_everything_is_filtered(n, interval):
    # No data: a dummy whenever i - LastRecvIdx > [e], i.e. at every multiple of [e] + 1.
    result = simulate(net([edge("ab", 4, interval=interval), edge("bc", 4, interval=interval)],
                          nodes=["a", node("b", 1.0)]), computations=n)
    counts = result.per_edge["bc"]
    assert counts["dummies"] + counts["coalesced"] == n // (interval + 1)
    assert counts["data_tokens"] == 0 and not result.deadlocked


def test_filtered_index_after_a_jump_sends_credit_then_dummy():
    # Erratum of 000 Alg. 4: v computes 1 (sent) and then 10 (filtered) with SCB = 1; the credit
    # sets LastRecvIdx = LastSentIdx = 1, still 9 > [e] = 2 behind, so a dummy(10) must follow.
    # The printed `while ... OR i - LastRecvIdx > [e]` loop would send credit messages forever. (The frame
    # ends after word 11, so no frame end arrives with computation 10 to carry the credit instead.)
    network = net([edge("sv", 4, threshold=0), edge("vx", 4, threshold=3, interval=2)], live_credit=False)

    def oracle(name, output, index):
        return index in (1, 10) if output == "sv" else (index == 1 if output == "vx" else None)

    result = simulate(network, inputs={"s": [list(range(1, 12))]}, filter_oracle=oracle)
    assert not result.deadlocked
    assert result.per_edge["vx"]["credits"] == 1
    # dummy(10), then dummy(11) after the frame end (a user message leaves LastRecvIdx at LastSentIdx = 1)
    assert result.per_edge["vx"]["dummies"] + result.per_edge["vx"]["coalesced"] == 2
    assert data_events(result, "x") == [("data", 1, 1)]
    # s: 11 words; v: 1, 10, and 11 (the frame end alone); x: 1, 10 (the dummy), 11 (the frame end), and the
    # dummy(11) behind it as a null computation of its own
    assert result.computations == 11 + 3 + 4


# -- inband protocol counts (002 Alg. 2, 5) -----------------------------------------------------
@pytest.mark.parametrize("n, interval", [(30, 3), (31, 1), (5, 6)])
def test_nonpropagation_dummy_every_interval(n, interval):
    result = simulate(net([edge("ab", 4), edge("bc", 4, interval=interval)], nodes=["a", node("b", 1.0)],
                          mode="inband"), computations=n)
    assert result.per_edge["bc"]["dummies"] == n // interval
    assert result.per_edge["ab"]["dummies"] == 0


def test_nonpropagation_counts_only_visible_data():
    # Output buffer 4, interval 2, nothing filtered: data is hidden, so every second index the
    # rule flushes (no dummy needed: the data token with index i is made visible).
    result = simulate(net([edge("ab", 8, output_buffer=4, interval=2)], mode="inband"), computations=20)
    assert result.per_edge["ab"]["flushes"] == 10 and result.dummies == 0


@pytest.mark.parametrize("n, dummies", [(4, 0), (5, 1), (8, 2)])
def test_nonpropagation_counts_spontaneously_flushed_data(n, dummies):
    # Indices 1, 2 pass and are flushed at once (LastOutputIndex = 2), the rest is filtered:
    # dummies at 5 and 8 (i - 2 >= 3, then i - 5 >= 3), none at 3.
    network = net([edge("ab", 8, output_buffer=4, interval=3)], mode="inband")
    result = simulate(network, computations=n, filter_oracle=lambda node, out, i: i <= 2,
                      flush_oracle=lambda edge, hidden, index: True)
    assert result.per_edge["ab"]["dummies"] == dummies and result.per_edge["ab"]["flushes"] == 2


def test_propagation_flags_stay_in_their_biconnected_component():
    edges = [edge("uv", 4, interval=2), edge("uw", 4), edge("vx", 4), edge("wx", 4), edge("xy", 4)]
    result = simulate(net(edges, mode="inband", dummy_algorithm="propagation"), computations=20)
    flags = {name: counts["dummy_flags"] for name, counts in result.per_edge.items()}
    assert flags == {"uv": 10, "uw": 0, "vx": 10, "wx": 0, "xy": 0}  # xy is a bridge
    assert result.dummies == 0 and result.data_tokens == 100


def test_propagation_standalone_dummy_for_filtered_index():
    edges = [edge("uv", 4, interval=3), edge("vx", 4), edge("uw", 4), edge("wx", 4)]
    result = simulate(net(edges, nodes=["u", node("v", 1.0)], mode="inband", dummy_algorithm="propagation"),
                      computations=12)
    assert result.per_edge["uv"]["dummy_flags"] == 4
    assert result.per_edge["vx"]["dummies"] == 4  # v filters, the flag goes on alone
    assert result.per_edge["wx"]["dummy_flags"] == 0


# -- in-band user messages ride on the token of their index ------------------------------------
@pytest.mark.parametrize("scheduler", SCHEDULERS)
def test_inband_messages_ride_on_their_index_on_every_output(scheduler):
    network = net([edge("uv", 1, interval=1), edge("uv2", 1, interval=1)], mode="inband")
    result = simulate(network, inputs={"u": [[1], [2, 3]]}, scheduler=scheduler)
    assert result.outputs["v"] == [("data", 1, 2), ("control", (FRAME_END, 0)), ("data", 2, 4),
                                   ("data", 3, 6), ("control", (FRAME_END, 1))]
    assert result.per_edge["uv"]["control_messages"] == result.per_edge["uv2"]["control_messages"] == 2
    assert result.data_tokens == 6 and result.dummies == 0  # no slot of their own


@pytest.mark.parametrize("algorithm", ["naive", "propagation", "nonpropagation"])
@pytest.mark.parametrize("scheduler", SCHEDULERS)
def test_inband_join_forwards_copies_of_one_index_once(algorithm, scheduler):
    # u -> x and u -> v -> x: both copies of a frame end reach x with the same index, are delivered
    # in that computation and forwarded once, after the frame's data.
    network = net([edge("vx", 1), edge("ux", 1), edge("uv", 1)], nodes=["u", "v", "x"], mode="inband",
                  dummy_algorithm=algorithm)
    network = network.with_intervals(sfdf.gen.analysis.intervals(network, algorithm))
    result = simulate(network, inputs={"u": [[0], [1, 2], [3]]}, scheduler=scheduler)
    assert result.outputs["x"] == [("data", 1, 0), ("control", (FRAME_END, 0)), ("data", 2, 2), ("data", 3, 4),
                                   ("control", (FRAME_END, 1)), ("data", 4, 6), ("control", (FRAME_END, 2))]


@pytest.mark.parametrize("algorithm, interval, dummies", [
    ("nonpropagation", 3, 3), ("propagation", 3, 3), ("naive", 1, 6)])
def test_inband_filtered_index_forces_a_dummy_to_carry_its_message(algorithm, interval, dummies):
    # a filters everything. Frame ends after 2, 4, 6 ride on forced dummies, each of which makes its
    # index visible (Non-Propagation) or is a dummy like any other (Propagation): with interval 3 no
    # interval dummy is due in between (else one more at index 3); Naive sends one dummy per index.
    network = net([edge("ab", 2, interval=interval)], mode="inband", dummy_algorithm=algorithm)
    result = simulate(network, inputs={"a": [[1, 2], [3, 4], [5, 6]]}, filter_oracle=lambda *_: False)
    counts = result.per_edge["ab"]
    assert counts["dummies"] == dummies and counts["data_tokens"] == 0
    assert counts["control_messages"] == 3
    assert result.outputs["b"] == [("control", (FRAME_END, k)) for k in range(3)]


def test_inband_message_flushes_the_output_buffer():
    # Output buffer 4, no interval: a and b's words stay hidden until the token carrying a frame end.
    network = net([edge("ab", 8, output_buffer=4)], mode="inband")
    result = simulate(network, inputs={"a": [[1, 2], [3, 4, 5]]}, flush_oracle=lambda *_: False)
    assert result.per_edge["ab"]["flushes"] == 2 and result.dummies == 0


def test_propagation_forced_dummy_propagates():
    # One biconnected component (u, v, x, y). u filters ux; the dummy forced at index 2 to carry
    # the frame end reaches x, which schedules a dummy flag on xy (002 Alg. 2), riding on v's data.
    edges = [edge("uv", 2), edge("ux", 2), edge("vx", 2), edge("vy", 2), edge("xy", 2)]
    network = net(edges, mode="inband", dummy_algorithm="propagation")

    def oracle(name, output, index):
        return output != "ux"

    result = simulate(network, inputs={"u": [[1, 2]]}, filter_oracle=oracle)
    assert result.per_edge["ux"]["dummies"] == 1 and result.per_edge["xy"]["dummy_flags"] == 1
    assert result.per_edge["vx"]["dummy_flags"] == 0 and result.dummies == 1
    assert result.outputs["y"] == [("data", 1, 2), ("data", 2, 4), ("control", (FRAME_END, 0))]


@pytest.mark.parametrize("scheduler", SCHEDULERS)
def test_inband_messages_take_no_slot_so_capacity_based_intervals_hold(scheduler):
    # Before messages rode on tokens this deadlocked: Non-Propagation gives [uv2] = |uv| = 2; u sent
    # index 1 on uv only, then its frame end as a token of its own: uv = [1, frame end] was full, so
    # u could not send EOS on uv while v needed index 1 on uv2. Now the frame end rides on index 1.
    network = net([edge("uv", 2), edge("uv2", 1), edge("vx", 1)], mode="inband")
    network = network.with_intervals(sfdf.gen.analysis.intervals(network, "nonpropagation"))
    assert network.edge_by_name["uv2"].interval == 2

    def oracle(name, output, index):
        return output != "uv2"

    result = simulate(network, inputs={"u": [[7]]}, filter_oracle=oracle, scheduler=scheduler)
    assert not result.deadlocked
    assert result.outputs["x"] == [("data", 1, 7), ("control", (FRAME_END, 0))]
    assert result.per_edge["uv2"]["dummies"] == 1  # the dummy forced to carry the frame end


@pytest.mark.parametrize("scheduler", SCHEDULERS)
def test_inband_messages_owed_at_eos_ride_on_it(scheduler):
    # Sources with different frames: x holds b's second frame end (a never sends one) until EOS.
    network = net([edge("ax", 1), edge("bx", 1), edge("xy", 1)], mode="inband", dummy_algorithm="naive")
    network = network.with_intervals(sfdf.gen.analysis.intervals(network, "naive"))
    result = simulate(network, inputs={"a": [[1, 2]], "b": [[5], [6, 7]]}, scheduler=scheduler)
    assert result.outputs["y"] == [("data", 1, 6), ("data", 2, 8), ("control", (FRAME_END, 0)),
                                   ("data", 3, 7), ("control", (FRAME_END, 1))]
    assert result.per_edge["xy"]["control_messages"] == 2 and result.per_edge["xy"]["dummies"] == 0


# -- paper figures --------------------------------------------------------------------------------
def check_fig3_deadlock(result):
    assert result.deadlocked
    assert sorted(result.blocking_cycle) == ["uv", "uw", "vx", "wx"]
    roles = {e: result.channel_states[e]["role"] for e in result.blocking_cycle}
    assert roles == {"uv": "counterblockwise", "vx": "counterblockwise", "uw": "blockwise", "wx": "blockwise"}
    for full in ("uv", "vx"):
        state = result.channel_states[full]
        assert state["data"] == state["capacity"] == 32 and state["full"]
    for empty in ("uw", "wx"):  # the receiver has no credit and nothing on the control channel
        state = result.channel_states[empty]
        assert state["rcb"] == 0 and state["control_empty"] and state["scb"] <= 31
    assert result.outputs["x"] == []


@pytest.mark.parametrize("scheduler", SCHEDULERS)
def test_fig3_deadlocks_when_w_filters_46_of_64(scheduler):
    kept = set(range(1, 65, 4)) | {2, 6}  # 18 of the first 64 pass w

    def oracle(name, output, index):
        return index in kept if output == "wx" else None

    check_fig3_deadlock(simulate(fig3(), computations=1000, filter_oracle=oracle, scheduler=scheduler))


@pytest.mark.parametrize("scheduler", SCHEDULERS)
def test_fig3_deadlocks_with_rate_three_quarters(scheduler):
    check_fig3_deadlock(simulate(fig3(), computations=1000, scheduler=scheduler))


@pytest.mark.parametrize("scheduler", SCHEDULERS)
def test_fig3_completes_with_live_credit(scheduler):
    """Live credit takes wx's uncredited tokens at once: no credit-batching deadlock, the same outputs."""
    result = simulate(fig3(live_credit=True), computations=1000, scheduler=scheduler)
    assert not result.deadlocked
    assert data_events(result, "x") == data_events(simulate(fig3(interval=31), computations=1000), "x")
    assert result.per_edge["wx"]["credits"] == 0  # credited by counter: no credit messages at all


@pytest.mark.parametrize("scheduler", SCHEDULERS)
def test_live_credit_still_deadlocks_when_w_filters_every_input_after_64(scheduler):
    """002's filtering deadlock remains: with no heartbeat nothing tells x that w filtered."""
    kept = set(range(1, 65, 4)) | {2, 6}

    def oracle(name, output, index):
        return index in kept if output == "wx" else None

    result = simulate(fig3(live_credit=True), computations=1000, filter_oracle=oracle, scheduler=scheduler)
    assert result.deadlocked and sorted(result.blocking_cycle) == ["uv", "uw", "vx", "wx"]
    for full in ("uv", "vx"):
        assert result.channel_states[full]["full"]
    for empty in ("uw", "wx"):  # every uncredited token was taken: nothing is held back
        state = result.channel_states[empty]
        assert state["data"] == 0 and state["control_empty"] and state["scb"] == state["borrowed"]
    assert [i for _, i, _ in data_events(result, "x")] == list(range(1, 62))  # up to the first index wx lacks


@pytest.mark.parametrize("scheduler", SCHEDULERS)
def test_fig3_completes_with_heartbeats(scheduler):
    # 000 (3)-(5): [e] = 31 on every edge, 31 + 31 < 32 + 32 and 31 < 32.
    result = simulate(fig3(interval=31), computations=1000, scheduler=scheduler)
    assert not result.deadlocked and result.blocking_cycle == []
    assert len(data_events(result, "x")) == 1000


def fig2_flush(name, hidden, index):
    return name == "uw" and index == 4  # u flushes uw after its 4th token (a "control event")


@pytest.mark.parametrize("scheduler", SCHEDULERS)
def test_fig2_output_buffers_deadlock(scheduler):
    result = simulate(fig2(), computations=100, flush_oracle=fig2_flush, scheduler=scheduler)
    assert result.deadlocked
    states = result.channel_states
    assert {e: states[e]["role"] for e in result.blocking_cycle} == {
        "uv": "counterblockwise", "vx": "counterblockwise", "uw": "blockwise", "wx": "blockwise"}
    assert states["uv"]["data"] == states["vx"]["data"] == 4  # full: exactly |q|
    assert states["wx"]["hidden"] == states["wx"]["data"] == 4  # x sees nothing
    assert states["uw"]["hidden"] == states["uw"]["data"] == 5
    assert states["wx"]["waiting"] == ["x: head token hidden in the output buffer"]


@pytest.mark.parametrize("scheduler", SCHEDULERS)
def test_fig2_without_output_buffers_completes(scheduler):
    result = simulate(fig2(output_buffer=0), computations=100, flush_oracle=fig2_flush, scheduler=scheduler)
    assert not result.deadlocked and len(data_events(result, "x")) == 100


def test_fig2_without_the_early_flush_completes():
    assert not simulate(fig2(), computations=100, scheduler="round_robin").deadlocked


# -- 002 Thm. 2.2: the adversarial history ------------------------------------------------------
def test_marks_of_the_diamond_by_hand():
    network = net([edge("uv", 3), edge("uw", 5), edge("vx", 7), edge("wx", 11)])
    nodes, edges, blockwise = cycle_marks(network, DIAMOND_CYCLE)
    assert blockwise == {"uv", "vx"}
    assert edges == {"vx": 0, "wx": 12, "uv": 0, "uw": 12 + 5 + 1}
    assert nodes == {"x": 0, "v": 0, "w": 12, "u": 18}
    _, edges, blockwise = cycle_marks(network, DIAMOND_CYCLE, blockwise_forward=False)
    assert blockwise == {"uw", "wx"} and edges == {"vx": 8, "wx": 0, "uv": 8 + 4, "uw": 0}


def test_history_filters_blockwise_channels_after_their_mark():
    network = net([edge("uv", 3), edge("uw", 5), edge("vx", 7), edge("wx", 11)])
    oracle = adversarial_filter_history(network, DIAMOND_CYCLE, blockwise_forward=False)
    assert [oracle("u", "uw", i) for i in (1, 2)] == [False, False]  # M_uw = 0
    assert [oracle("w", "wx", i) for i in (1, 2)] == [False, False]
    assert all(oracle("u", "uv", i) and oracle("v", "vx", i) for i in range(1, 100))
    assert oracle("x", "m_axis", 5)


def test_history_rejects_foreign_edges():
    with pytest.raises(ValueError, match="unknown: zz"):
        adversarial_filter_history(fig3(), (("uv", True), ("zz", False)))


PARALLEL = (("uv", True), ("uv2", False))


@pytest.mark.parametrize("mode", ["inband", "credit"])
@pytest.mark.parametrize("cycle, edges", [
    (DIAMOND_CYCLE, ["uv", "uw", "vx", "wx"]),
    (PARALLEL, ["uv", "uv2"]),
])
@pytest.mark.parametrize("blockwise_forward", [True, False])
@pytest.mark.parametrize("scheduler", SCHEDULERS)
def test_adversarial_history_deadlocks_the_cycle(mode, cycle, edges, blockwise_forward, scheduler):
    network = net([edge(name, 3 + k) for k, name in enumerate(edges)], mode=mode)
    oracle = adversarial_filter_history(network, cycle, blockwise_forward)
    result = simulate(network, computations=200, filter_oracle=oracle, scheduler=scheduler)
    assert result.deadlocked
    assert sorted(result.blocking_cycle) == sorted(edges)
    for name, forward in cycle:
        state = result.channel_states[name]
        if forward == blockwise_forward:  # the receiver sees nothing it may consume
            assert state["role"] == "blockwise" and state["waiting"]
            assert state["empty"] or (state["rcb"] == 0 and state["control_empty"])
        else:
            assert state["role"] == "counterblockwise" and state["data"] == state["capacity"]


# -- determinism, guards and reports --------------------------------------------------------------
@pytest.mark.parametrize("scheduler", SCHEDULERS)
def test_same_seed_same_result(scheduler):
    network = net([edge("uv", 3, interval=2), edge("uw", 2, output_buffer=2, interval=1), edge("vx", 2),
                   edge("wx", 3)], nodes=["u", node("v", 0.3), node("w", 0.6, 9)], mode="inband")
    runs = [simulate(network, computations=300, seed=11, scheduler=scheduler, frame_length=7) for _ in range(2)]
    assert runs[0] == runs[1]
    assert runs[0] != simulate(network, computations=300, seed=12, scheduler=scheduler, frame_length=7)


def test_max_steps_guard():
    steps = simulate(net([edge("ab")]), computations=30).steps
    assert simulate(net([edge("ab")]), computations=30, max_steps=steps).steps == steps
    with pytest.raises(RuntimeError) as info:
        simulate(net([edge("ab")]), computations=30, max_steps=steps - 1)
    assert str(info.value) == f"Simulation of 't' needs more than max_steps={steps - 1} actions"


def test_auto_values_are_resolved():
    network = net([Edge("uv", "u", "v", 4), Edge("uw", "u", "w", 4), Edge("vx", "v", "x", 4),
                   Edge("wx", "w", "x", 4)], nodes=["u", "v", node("w", 0.9)])
    result = simulate(network, computations=500)
    assert not result.deadlocked and result.credits == 0  # live credit (the default): no credit messages
    result = simulate(replace(network, live_credit=False), computations=500)
    assert not result.deadlocked and result.credits > 0


def test_auto_surviving_resolution_is_an_error(monkeypatch):
    monkeypatch.setattr(sfdf.gen.analysis, "resolve", lambda network, cycles=None: network)
    with pytest.raises(ValueError) as info:
        simulate(net([Edge("ab", "a", "b", 4, interval=3, threshold=2)]))
    assert str(info.value) == "Network 't' must have concrete values, but 'auto' survived resolution in: ab.control_capacity"


@pytest.mark.parametrize("kwargs, message", [
    ({"inputs": {"b": [[1]]}}, "Inputs must name sources of 't' (a), not b"),
    ({"inputs": {"a": [[1], []]}}, "Frame 1 of source 'a' must be a non-empty list of non-negative ints, not []"),
    ({"scheduler": "fifo"}, "Scheduler must be one of round_robin, random, adversarial, not 'fifo'"),
    ({"computations": -1}, "Computations must be a non-negative integer, not -1"),
    ({"frame_length": 0}, "Frame length must be a positive integer, not 0"),
])
def test_bad_arguments(kwargs, message):
    with pytest.raises(ValueError) as info:
        simulate(net([edge("ab")]), **kwargs)
    assert str(info.value) == message


def test_json_has_the_design_keys_and_the_summary_shows_the_cycle():
    result = simulate(fig3(), computations=1000)
    assert isinstance(result, SimResult)
    out = result.to_json()
    assert list(out)[:7] == ["deadlocked", "computations", "data_tokens", "dummies", "credits",
                             "control_messages", "blocking_cycle"]
    assert out["deadlocked"] is True and out["blocking_cycle"] == result.blocking_cycle
    lines = result.summary_lines()
    assert "DEADLOCKED" in lines[0]
    assert lines[-5] == "  blocking cycle (blockwise order): " + " -> ".join(result.blocking_cycle)
    assert lines[-4].startswith("    uv (u -> v), counterblockwise: data 32/32 (0 hidden), control ")
    assert lines[-4].endswith("; u: data channel full")
    assert "completed" in simulate(fig3(interval=31), computations=10).summary_lines()[0]

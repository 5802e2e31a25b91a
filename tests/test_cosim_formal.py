# amaranth: UnusedElaboratable=no
"""Formal proofs of the protocol invariants (sfdf.cosim.formal; docs/hardware.md, "Formal proofs").

Small configurations, a few seconds each with SymbiYosys k-induction on Yices 2; bench/formal.py runs
larger ones. Every proof must PASS, and every deliberately broken variant must make the same proof FAIL
with a counterexample trace from the initial state: a proof that could not fail would show nothing.
"""

from __future__ import annotations

import pytest

from sfdf.cosim.formal import mutants
from sfdf.cosim.formal.channel import ChannelHarness, block_storage
from sfdf.cosim.formal.counter_edge import CounterEdgeHarness
from sfdf.cosim.formal.credit_edge import CreditEdgeHarness
from sfdf.cosim.formal.inband_edge import InbandEdgeHarness
from sfdf.cosim.formal.join import JoinHarness
from sfdf.cosim.formal.message_credit import MessageCreditHarness
from sfdf.cosim.formal.sby import prove
from sfdf.cosim.formal.trace import read_trace
from sfdf.gen.sdf.credits import TargetTable
from sfdf.hdl.channels import ControlChannel, DataChannel
from sfdf.hdl.dsp import FamilyOnly
from sfdf.hdl.node import INBAND_TABLE, NEXT_TABLE
from sfdf.hdl.tokens import control_layout


@pytest.fixture
def build(tmp_path):
    return tmp_path / "formal"


def _passes(harness, build, name, depth):
    result = prove(harness, name=name, depth=depth, build_root=build, timeout=300)
    assert result.status == "PASS", result.summary()
    return result


def _fails(harness, build, name, depth, violated):
    """The proof FAILs in its base case (a trace from the initial state) and names ``violated``."""
    result = prove(harness, name=name, depth=depth, build_root=build, timeout=300)
    assert result.status == "FAIL", result.summary()
    assert result.trace is not None and result.trace.exists(), result.summary()
    assert result.trace.name == "trace.vcd"  # the base case's, not the induction step's
    names, steps = read_trace(result.trace)
    assert steps and any(name.endswith("clk") for name in names)
    assert any(violated in message for message in result.failed), result.summary()
    return result


# channels ------------------------------------------------------------------------------------------------

@pytest.mark.parametrize("capacity", [1, 2, 3, 5])
def test_data_channel_is_an_exact_fifo(build, capacity):
    _passes(ChannelHarness(DataChannel(2, capacity)), build, f"channel{capacity}", depth=3)


@pytest.mark.parametrize("capacity", [1, 2, 3])
def test_released_channel_is_an_exact_fifo(build, capacity):
    """The credit edges' channels: a token read still takes room until its offer register releases it."""
    _passes(ChannelHarness(DataChannel(2, capacity, release=True)), build, f"release{capacity}", depth=3)


@pytest.mark.parametrize("capacity", [1, 2, 3, 4])
def test_channel_released_two_at_a_time_is_an_exact_fifo(build, capacity):
    """The credit edges' channels behind a two-slot offer register: up to two read tokens take room."""
    _passes(ChannelHarness(DataChannel(2, capacity, release=2)), build, f"release2-{capacity}", depth=3)


def test_block_ram_channel_is_an_exact_fifo(build):
    with block_storage():  # the block-RAM scheme at a small capacity (by default past 65)
        _passes(ChannelHarness(DataChannel(2, 5)), build, "block5", depth=3)


def test_block_ram_channel_blind_to_the_pop_fails(build):
    with block_storage():
        _fails(ChannelHarness(mutants.PopBlindBlockChannel(2, 5)), build, "block5_blind", depth=8,
               violated="token 1 equals the model's")


def test_block_ram_head_channel_is_an_exact_fifo(build):
    """iCE40's block-RAM channel: the RAM's output register is the head, beside a bypass register."""
    _passes(ChannelHarness(DataChannel(2, 6), platform=FamilyOnly("ice40")), build, "blockhead6", depth=3)


def test_block_ram_head_channel_blind_to_the_pop_fails(build):
    _fails(ChannelHarness(mutants.PopBlindBlockHeadChannel(2, 6), platform=FamilyOnly("ice40")), build,
           "blockhead6_blind", depth=8, violated="FIFO order")


def test_control_channel_is_an_exact_fifo(build):
    _passes(ChannelHarness(ControlChannel(control_layout(2, 3, 1), 3)), build, "control", depth=3)


def test_channel_proof_needs_its_strengthening(build):
    """Without the internal invariants the FIFO order is true but not inductive: UNKNOWN, not FAIL."""
    result = prove(ChannelHarness(DataChannel(2, 3), strengthen=False), name="weak", depth=3, build_root=build)
    assert result.status == "UNKNOWN", result.summary()
    assert result.trace is not None and result.trace.name == "trace_induct.vcd"


def test_greedy_channel_fails(build):
    _fails(ChannelHarness(mutants.GreedyChannel(2, 2)), build, "greedy", depth=5,
           violated="i_stream.ready == (level != capacity)")


def test_forgetting_the_held_token_fails(build):
    _fails(ChannelHarness(mutants.ForgetfulReleaseChannel(2, 2)), build, "forgetful_release", depth=5,
           violated="i_stream.ready == (level != capacity)")


def test_corrupting_channel_fails(build):
    _fails(ChannelHarness(mutants.CorruptWhenFullChannel(2, 2), strengthen=False), build, "corrupt", depth=5,
           violated="FIFO order")


# credit edge -----------------------------------------------------------------------------------------------

@pytest.mark.parametrize("config", [
    {"capacity": 2, "control_capacity": 3, "threshold": 0, "heartbeat": 1},
    {"capacity": 2, "control_capacity": 3, "threshold": 1, "heartbeat": 2},
    {"capacity": 2, "control_capacity": 3, "threshold": 1, "heartbeat": None},
    {"capacity": 2, "control_capacity": 3, "threshold": 1, "heartbeat": 1, "channels": "rtl"},
], ids=["T0-e1", "T1-e2", "T1-no-heartbeat", "T1-e1-rtl-channels"])
def test_credit_edge(build, config):
    """000's edge as printed (live_credit = false): credit messages batched by T."""
    _passes(CreditEdgeHarness(index_width=4, **config), build, "credit", depth=2)


@pytest.mark.parametrize("config", [
    {"capacity": 2, "control_capacity": 2, "heartbeat": 1},
    {"capacity": 1, "control_capacity": 1, "heartbeat": 0},
    {"capacity": 3, "control_capacity": 2, "heartbeat": 2},
    {"capacity": 2, "control_capacity": 2, "heartbeat": None},
    {"capacity": 2, "control_capacity": 2, "heartbeat": 1, "channels": "rtl"},
    {"capacity": 2, "control_capacity": 2, "heartbeat": 1, "channels": "rtl", "heartbeat_in_head": True},
    {"capacity": 3, "control_capacity": 2, "heartbeat": 0, "channels": "rtl", "heartbeat_in_head": True},
    {"capacity": 2, "control_capacity": 2, "heartbeat": 1, "candidates": True},
    {"capacity": 3, "control_capacity": 2, "heartbeat": 2, "channels": "rtl", "heartbeat_in_head": True,
     "candidates": True},
], ids=["q2-e1", "q1-e0", "q3-e2", "q2-no-heartbeat", "q2-e1-rtl-channels", "q2-e1-heartbeat-in-head",
        "q3-e0-heartbeat-in-head", "q2-e1-candidates", "q3-e2-heartbeat-in-head-candidates"])
def test_live_credit_edge(build, config):
    """The default credit edge: credits by counter (hdl.counter), stamps exact, offers in commit order;
    also with the heartbeat's index carried in the empty data channel's head (into a lookahead join), and
    with the single-stage node's sender, 000 Alg. 4 tested per candidate index (``candidates``)."""
    _passes(CounterEdgeHarness(index_width=4, **config), build, "counter", depth=2)


def test_token_overtaking_a_message_fails(build):
    _fails(CounterEdgeHarness(receiver=mutants.EarlyTokenReceiver, strengthen=False), build, "early", depth=6,
           violated="due iff the head message's stamp equals the pops")


def test_due_ahead_from_this_cycles_data_channel_fails(build):
    """The receiver's ``due`` a cycle ahead must read whether the data channel will be empty: read from
    this cycle's, a message pushed with its token into empty channels is offered before the token."""
    _fails(CounterEdgeHarness(channels="rtl", heartbeat_in_head=True, receiver=mutants.StaleAheadReceiver,
                              strengthen=False), build, "stale-ahead", depth=6,
           violated="due iff the head message's stamp equals the pops")


def test_message_with_a_token_taken_as_due_fails(build):
    """A message's stamp counts the tokens before its own (hdl.stamps): after a token pop, a receiver that
    takes a message sent with the next token as due offers it alone, before the token it goes with."""
    _fails(CounterEdgeHarness(capacity=3, control_capacity=2, heartbeat=2, receiver=mutants.RiderDueReceiver,
                              strengthen=False), build, "rider-due", depth=6,
           violated="due iff the head message's stamp equals the pops")


def test_dummy_one_computation_early_fails(build):
    """The proof checks 000 Alg. 4's interval test itself: a sender that writes its dummy once
    ``i - LastRecvIdx`` reaches ``[e]`` (not past it) fails it."""
    _fails(CounterEdgeHarness(capacity=2, control_capacity=2, heartbeat=2, sender=mutants.EarlyDummySender,
                              strengthen=False), build, "early-dummy", depth=6,
           violated="a dummy iff i - LastRecvIdx > [e] (000 Alg. 4)")


def test_candidate_test_of_the_wrong_candidate_fails(build):
    """The single-stage node's sender must test the candidate the receiver chose: one that always tests
    the data head's index writes its dummies at the wrong computations."""
    _fails(CounterEdgeHarness(capacity=2, control_capacity=2, heartbeat=1, candidates=True,
                              sender=mutants.HeadOnlyCandidateSender, strengthen=False), build, "head-only", depth=6,
           violated="a dummy iff i - LastRecvIdx > [e] (000 Alg. 4)")


def test_dummy_kept_after_a_later_push_fails(build):
    """The sender keeps its dummy when it pushes a later token: once the channels are empty the receiver
    offers the dummy after the later token, an older index than one it already offered."""
    _fails(CounterEdgeHarness(sender=mutants.StickyHeartbeatSender, strengthen=False), build, "sticky", depth=6,
           violated="no offer older than an earlier offer")


def test_heartbeat_head_before_the_commit_fails(build):
    """The heartbeat's index rides in the empty data channel's head: taken before the commit, the head
    offers the index of a computation that did not happen, newer than a token still to come."""
    _fails(CounterEdgeHarness(channels="rtl", heartbeat_in_head=True, sender=mutants.UncommittedHeartbeatHeadSender,
                              strengthen=False), build, "uncommitted-head", depth=6,
           violated="no offer older than an earlier offer")


def test_join_copy_from_the_write_data_fails(build):
    """The data channel's copy of its head's index for the join also taking the index of every token
    written: once a token waits behind the head, the join would order the head by another index."""
    _fails(CounterEdgeHarness(channels="rtl", capacity=3, heartbeat_in_head=True,
                              data_channel=mutants.WriteDataCopyChannel, strengthen=False),
           build, "write-data-copy", depth=8, violated="the join's copy is the index of the data head or heartbeat offered")


def test_uncounted_credit_fails(build):
    _fails(CreditEdgeHarness(threshold=1, heartbeat=2, sender=mutants.UncountedCreditSender, strengthen=False),
           build, "uncounted", depth=6, violated="000 Thm. 3.2")


def test_dummy_overtaking_a_token_fails(build):
    """The receiver offers the dummy's index while tokens of lower index wait uncredited in q."""
    _fails(CreditEdgeHarness(threshold=1, heartbeat=1, sender=mutants.DummyOvertakesSender, strengthen=False),
           build, "overtakes", depth=6, violated="an offered heartbeat is below every token in q")


def test_receiver_popping_without_credit_fails(build):
    _fails(CreditEdgeHarness(receiver=mutants.EagerCreditReceiver), build, "eager", depth=6,
           violated="a data token is popped only when consumed as offered")


def test_broken_sender_fails_the_full_proof(build):
    """The proof itself (invariants included) fails too, not only the bare properties."""
    _fails(CreditEdgeHarness(threshold=1, heartbeat=2, sender=mutants.UncountedCreditSender), build, "full",
           depth=6, violated="")


# in-band edge ----------------------------------------------------------------------------------------------

@pytest.mark.parametrize("config", [
    {"capacity": 2, "output_buffer": 0, "interval": 2, "algorithm": "nonpropagation"},
    {"capacity": 3, "output_buffer": 3, "interval": 2, "algorithm": "nonpropagation"},
    {"capacity": 3, "output_buffer": 2, "interval": 1, "algorithm": "naive"},
    {"capacity": 3, "output_buffer": 3, "interval": 2, "algorithm": "propagation"},
    {"capacity": 3, "output_buffer": 3, "interval": 2, "algorithm": "nonpropagation", "channels": "rtl"},
], ids=["np-ob0", "np-ob3", "naive-ob2", "prop-ob3", "np-ob3-rtl-channel"])
def test_inband_edge(build, config):
    _passes(InbandEdgeHarness(index_width=4, **config), build, "inband", depth=3)


def test_stale_interval_test_fails(build):
    _fails(InbandEdgeHarness(capacity=2, interval=2, sender=mutants.StaleIntervalInbandSender), build, "stale",
           depth=4, violated="the interval test's register")


def test_receiver_offering_hidden_tokens_fails(build):
    _fails(InbandEdgeHarness(capacity=2, output_buffer=2, receiver=mutants.PeekingInbandReceiver), build,
           "peek", depth=6, violated="the receiver never offers a hidden token")


# join --------------------------------------------------------------------------------------------------------

@pytest.mark.parametrize("inputs", [1, 2, 3, 4])
def test_join_consumes_only_the_least_offered(build, inputs):
    _passes(JoinHarness(inputs=inputs, index_width=4), build, f"join{inputs}", depth=2)


@pytest.mark.parametrize(("inputs", "table"), [(2, NEXT_TABLE), (3, NEXT_TABLE), (4, NEXT_TABLE),
                                                (1, INBAND_TABLE), (2, INBAND_TABLE), (3, INBAND_TABLE)])
def test_registered_order_join_consumes_only_the_least_offered(build, inputs, table):
    """Heads held in offer registers, their pairwise order computed a cycle ahead from the candidates for
    the next heads, named by codes as the node names them: credit (hdl.node: the receiver's two early index
    sources, the spare slot, the receiver's late one; each input's next index picked first) and in-band
    (the receiver's head or the spare; every pair of candidates compared up to three inputs; one input
    keeps its offset in a register, computed a cycle ahead: ``o_offset = o_index - current``)."""
    _passes(JoinHarness(inputs=inputs, index_width=4, lookahead=max(table) + 1, table=table), build,
            f"lookahead{inputs}_{max(table) + 1}", depth=2)


@pytest.mark.parametrize("inputs", [2, 4])
def test_join_with_a_late_order_fails(build, inputs):
    """Two inputs order every pair of candidates; four pick each input's next index first (hdl.join,
    ``_narrowed_order``): the proof fails on either when an offer arriving in an empty slot is not ordered."""
    _fails(JoinHarness(inputs=inputs, join=mutants.LateOrderJoin, lookahead=2), build, f"late_order{inputs}",
           depth=3, violated="the registered order")


def test_one_input_join_with_a_stale_offset_fails(build):
    _fails(JoinHarness(inputs=1, join=mutants.StayingOffsetJoin, lookahead=2, table=INBAND_TABLE), build,
           "staying_offset", depth=3, violated="o_offset = o_index - current")


def test_join_consuming_while_not_ready_fails(build):
    _fails(JoinHarness(inputs=2, join=mutants.UnreadyJoin), build, "unready", depth=3,
           violated="consume only when committing while ready")


# teleport messages (004) ---------------------------------------------------------------------------------

#: 004's example's two routes (examples/teleport.toml): A -> E downstream, E -> B upstream
DOWN, UP = TargetTable((1, 1, 1, 4, 5, 5), 6, 4), TargetTable((3, 3, 4, 4), 4, 3)


@pytest.mark.parametrize(("table", "upstream"), [(DOWN, False), (UP, True)], ids=["downstream", "upstream"])
def test_no_receiver_passes_a_firing_a_pending_message_targets(build, table, upstream):
    """The receiver's credit (hdl/sdf_message.py): every queued or sent message targets a firing not started,
    none is lost, each is handled at its firing (downstream with its start, upstream once the credit passes)."""
    _passes(MessageCreditHarness(table, 3, upstream), build, f"message_{'up' if upstream else 'down'}", depth=4)


def test_a_credit_one_firing_too_generous_fails(build):
    _fails(MessageCreditHarness(DOWN, 3, False, queue=mutants.GenerousCreditQueue), build, "generous_credit",
           depth=4, violated="a message sent targets a firing the receiver has not started")

"""Formal proofs on larger configurations than ``make test`` runs (tests/test_cosim_formal.py has the fast ones).

Each row is one SymbiYosys run (k-induction, ``smtbmc`` on Yices 2; :mod:`sfdf.cosim.formal`): the
component and configuration, the property set, the depth ``k``, the verdict and the time. The broken
variants of :mod:`sfdf.cosim.formal.mutants` are expected to FAIL, everything else to PASS; a row that
does not come out as expected is marked, and the script exits 1. One solver process at a time.

Prints a table; a run of every case writes docs/formal.json and the table into docs/results.md
(bench/results.py; ``--tables`` writes it again from the JSON).

    .venv/bin/python bench/formal.py [--only SUBSTRING] [--timeout SECONDS] [--tables]
"""

from __future__ import annotations

import argparse
import contextlib
import sys
from pathlib import Path

from sfdf.cosim.formal import mutants
from sfdf.cosim.formal.channel import ChannelHarness, block_storage
from sfdf.cosim.formal.counter_edge import CounterEdgeHarness
from sfdf.cosim.formal.credit_edge import CreditEdgeHarness
from sfdf.cosim.formal.inband_edge import InbandEdgeHarness
from sfdf.cosim.formal.join import JoinHarness
from sfdf.cosim.formal.message_credit import MessageCreditHarness
from sfdf.cosim.formal.sby import FormalError, prove
from sfdf.gen.sdf.credits import TargetTable
from sfdf.hdl.channels import ControlChannel, DataChannel
from sfdf.hdl.dsp import FamilyOnly
from sfdf.hdl.join import PICK_FIRST_CANDIDATES
from sfdf.hdl.tokens import control_layout

from results import publish, tables_flag, tables_only

ROOT = Path(__file__).resolve().parents[1]

CHANNEL = "channel: bound, ready/valid, count, FIFO order"
CREDIT = "credit edge (000 as printed): no overflow, SCB/RCB, Thm. 3.2, heartbeat order, pops only offered"
COUNTER = "live-credit edge: no overflow, stamps within q, commit order, heartbeat order, pops only offered"
INBAND = "in-band edge: no overflow, no hidden offer, flushed <= |q| ahead, order"
JOIN = "join: consumes only offered heads at the least index"
MESSAGE = "teleport route (004): no receiver passes a pending message's firing, none lost, handled at its firing"
#: 004's example's two routes (examples/teleport.toml): A -> E downstream, E -> B upstream
DOWN, UP = TargetTable((1, 1, 1, 4, 5, 5), 6, 4), TargetTable((3, 3, 4, 4), 4, 3)


def _cases():
    """(name, configuration, property set, depth, expected, harness factory)."""
    cases = []
    for width, capacity in [(4, 4), (4, 8), (8, 8), (4, 17)]:  # 17: 16 LUT-RAM rows (33: over 5 min)
        cases.append((f"channel-w{width}-c{capacity}", f"DataChannel width {width}, |q| = {capacity}", CHANNEL, 3,
                      "PASS", lambda w=width, c=capacity: ChannelHarness(DataChannel(w, c))))
    for width, capacity in [(4, 8), (2, 16)]:  # block RAM (by default past lutram_rows() + 1)
        config = f"DataChannel width {width}, |q| = {capacity}, block-RAM storage"
        cases.append((f"channel-block-w{width}-c{capacity}", config, CHANNEL, 2, "PASS",
                      lambda w=width, c=capacity: ChannelHarness(DataChannel(w, c))))
    for width, capacity in [(4, 8), (2, 16)]:  # iCE40's block RAM, its output register the head
        config = f"DataChannel width {width}, |q| = {capacity}, iCE40 block-RAM storage (the RAM's register the head)"
        cases.append((f"channel-blockhead-w{width}-c{capacity}", config, CHANNEL, 3, "PASS",
                      lambda w=width, c=capacity: ChannelHarness(DataChannel(w, c), platform=FamilyOnly("ice40"))))
    cases.append(("control-channel-c9", "ControlChannel |q| = 2, |q'| = 9 (auto for m = 1), w = 4",
                  CHANNEL, 3, "PASS", lambda: ChannelHarness(ControlChannel(control_layout(2, 4, 1), 9))))
    credit = [
        {"capacity": 3, "control_capacity": 4, "threshold": 1, "heartbeat": 2, "index_width": 5},
        {"capacity": 3, "control_capacity": 7, "threshold": 0, "heartbeat": 3, "index_width": 6},
        {"capacity": 4, "control_capacity": 5, "threshold": 1, "heartbeat": 2, "index_width": 5},
        {"capacity": 3, "control_capacity": 4, "threshold": 2, "heartbeat": 3, "index_width": 5, "channels": "rtl"},
        {"capacity": 2, "control_capacity": 3, "threshold": 1, "heartbeat": None, "index_width": 6, "channels": "rtl"},
    ]
    for kw in credit:
        name = "credit-" + "-".join(f"{k[:3]}{v}" for k, v in kw.items())
        cases.append((name, ", ".join(f"{k}={v}" for k, v in kw.items()), CREDIT, 2, "PASS",
                      lambda kw=kw: CreditEdgeHarness(**kw)))
    counter = [
        {"capacity": 4, "control_capacity": 5, "heartbeat": 3, "index_width": 5},
        {"capacity": 7, "control_capacity": 3, "heartbeat": 2, "index_width": 6},
        {"capacity": 3, "control_capacity": 4, "heartbeat": 2, "index_width": 5, "channels": "rtl"},
        {"capacity": 2, "control_capacity": 3, "heartbeat": None, "index_width": 6, "channels": "rtl"},
        # the single-stage node's sender: 000 Alg. 4 per candidate index (hdl.single_stage)
        {"capacity": 4, "control_capacity": 3, "heartbeat": 3, "index_width": 5, "candidates": True},
    ]
    for kw in counter:
        name = "counter-" + "-".join(f"{k[:3]}{v}" for k, v in kw.items())
        cases.append((name, ", ".join(f"{k}={v}" for k, v in kw.items()), COUNTER, 2, "PASS",
                      lambda kw=kw: CounterEdgeHarness(**kw)))
    inband = [
        {"capacity": 4, "output_buffer": 0, "interval": 3, "algorithm": "nonpropagation", "index_width": 6},
        {"capacity": 4, "output_buffer": 4, "interval": 3, "algorithm": "nonpropagation", "index_width": 6},
        {"capacity": 4, "output_buffer": 3, "interval": 2, "algorithm": "propagation", "index_width": 6},
        {"capacity": 5, "output_buffer": 5, "interval": 1, "algorithm": "naive", "index_width": 6, "channels": "rtl"},
    ]
    for kw in inband:
        name = "inband-" + "-".join(f"{k[:3]}{v}" for k, v in kw.items())
        cases.append((name, ", ".join(f"{k}={v}" for k, v in kw.items()), INBAND, 3, "PASS",
                      lambda kw=kw: InbandEdgeHarness(**kw)))
    for inputs, width in [(3, 8), (4, 8), (6, 6)]:
        cases.append((f"join-n{inputs}-w{width}", f"SFDFJoin inputs {inputs}, w = {width}", JOIN, 2, "PASS",
                      lambda n=inputs, w=width: JoinHarness(inputs=n, index_width=w)))
    # the order of the next heads kept in registers: credit joins (3 candidates) pick each input's next index
    # first, in-band joins (2) compare every pair of candidates (hdl.join.PICK_FIRST_CANDIDATES)
    for inputs, width, candidates in [(2, 8, 3), (3, 6, 3), (2, 8, 2), (3, 6, 2)]:
        form = "next index picked first" if candidates >= PICK_FIRST_CANDIDATES else "every pair"
        cases.append((f"join-order-n{inputs}-w{width}-c{candidates}",
                      f"SFDFJoin inputs {inputs}, w = {width}, registered order ({candidates} candidates, {form})",
                      JOIN, 2, "PASS",
                      lambda n=inputs, w=width, c=candidates: JoinHarness(inputs=n, index_width=w, lookahead=c)))
    # an in-band one-input join: no order, its offset in a register computed a cycle ahead
    cases.append(("join-offset-n1-w8", "SFDFJoin inputs 1, w = 8, offset register (2 candidates)", JOIN, 2, "PASS",
                  lambda: JoinHarness(inputs=1, index_width=8, lookahead=2)))
    for width, depth in [(8, 3), (6, 5)]:
        for name, table, upstream in [("down", DOWN, False), ("up", UP, True)]:
            cases.append((f"message-{name}-w{width}-d{depth}", (f"MessageTarget + MessageQueue, {name}stream, "
                          f"depth {depth}, w = {width}"), MESSAGE, 4, "PASS",
                          lambda t=table, u=upstream, w=width, d=depth: MessageCreditHarness(t, d, u, width=w)))
    broken = [
        ("broken-greedy-channel", "GreedyChannel |q| = 4 (ready ignores the capacity)", CHANNEL, 6,
         lambda: ChannelHarness(mutants.GreedyChannel(4, 4))),
        ("broken-corrupt-channel", "CorruptWhenFullChannel |q| = 4 (flips a bit when full)", CHANNEL, 6,
         lambda: ChannelHarness(mutants.CorruptWhenFullChannel(4, 4), strengthen=False)),
        ("broken-block-pop-blind", ("PopBlindBlockChannel |q| = 8, block-RAM storage (a register chooses without "
                                    "the pop)"), CHANNEL, 8, lambda: ChannelHarness(mutants.PopBlindBlockChannel(4, 8))),
        ("broken-blockhead-pop-blind", ("PopBlindBlockHeadChannel |q| = 8, iCE40 block-RAM storage (the head "
                                        "reads the next row only while empty)"), CHANNEL, 8,
         lambda: ChannelHarness(mutants.PopBlindBlockHeadChannel(4, 8), platform=FamilyOnly("ice40"))),
        ("broken-uncounted-credit", "UncountedCreditSender |q| = 3, T = 1 (credits SCB, not SCB')", CREDIT, 8,
         lambda: CreditEdgeHarness(capacity=3, control_capacity=4, threshold=1, heartbeat=2,
                                   sender=mutants.UncountedCreditSender)),
        ("broken-dummy-overtakes", "DummyOvertakesSender |q| = 3, T = 1 (no credit flush before a dummy)",
         CREDIT, 8, lambda: CreditEdgeHarness(capacity=3, control_capacity=4, threshold=1, heartbeat=2,
                                              sender=mutants.DummyOvertakesSender)),
        ("broken-eager-receiver", "EagerCreditReceiver |q| = 3 (pops without credit)", CREDIT, 8,
         lambda: CreditEdgeHarness(capacity=3, control_capacity=4, threshold=1, heartbeat=2,
                                   receiver=mutants.EagerCreditReceiver)),
        ("broken-early-token", "EarlyTokenReceiver |q| = 3 (a token overtakes a due message)", COUNTER, 8,
         lambda: CounterEdgeHarness(capacity=3, control_capacity=3, heartbeat=2, receiver=mutants.EarlyTokenReceiver)),
        ("broken-rider-due", "RiderDueReceiver |q| = 3 (a message sent with the next token taken as due)", COUNTER,
         8, lambda: CounterEdgeHarness(capacity=3, control_capacity=3, heartbeat=2, receiver=mutants.RiderDueReceiver)),
        ("broken-early-dummy", "EarlyDummySender |q| = 3, [e] = 2 (a dummy once i - LastRecvIdx reaches [e])", COUNTER, 8,
         lambda: CounterEdgeHarness(capacity=3, control_capacity=3, heartbeat=2, sender=mutants.EarlyDummySender)),
        ("broken-sticky-heartbeat", "StickyHeartbeatSender |q| = 3 (a dummy kept after a later push)", COUNTER, 8,
         lambda: CounterEdgeHarness(capacity=3, control_capacity=3, heartbeat=2, sender=mutants.StickyHeartbeatSender)),
        ("broken-head-only-candidate", ("HeadOnlyCandidateSender |q| = 3, [e] = 2 (the data head's test, whatever "
                                        "was chosen)"), COUNTER, 8,
         lambda: CounterEdgeHarness(capacity=3, control_capacity=3, heartbeat=2, candidates=True,
                                    sender=mutants.HeadOnlyCandidateSender)),
        ("broken-peeking-receiver", "PeekingInbandReceiver |q| = 4, |q|_o = 4 (offers hidden tokens)", INBAND, 8,
         lambda: InbandEdgeHarness(capacity=4, output_buffer=4, receiver=mutants.PeekingInbandReceiver)),
        ("broken-stale-interval", "StaleIntervalInbandSender |q| = 4, [q] = 3 (tests with the step before)",
         INBAND, 8, lambda: InbandEdgeHarness(capacity=4, interval=3, sender=mutants.StaleIntervalInbandSender)),
        ("broken-staying-offset", "StayingOffsetJoin inputs 1 (a consumed head's successor from the old current)",
         JOIN, 3, lambda: JoinHarness(inputs=1, join=mutants.StayingOffsetJoin, lookahead=2)),
        ("broken-unready-join", "UnreadyJoin inputs 3 (consumes while not ready)", JOIN, 3,
         lambda: JoinHarness(inputs=3, join=mutants.UnreadyJoin)),
        ("broken-late-order", "LateOrderJoin inputs 2 (order not renewed for a head filling an empty slot)", JOIN, 3,
         lambda: JoinHarness(inputs=2, join=mutants.LateOrderJoin, lookahead=3)),
        ("broken-generous-credit", "GenerousCreditQueue downstream, depth 3 (credit one firing too generous)",
         MESSAGE, 4, lambda: MessageCreditHarness(DOWN, 3, False, queue=mutants.GenerousCreditQueue)),
    ]
    cases += [(name, config, props, depth, "FAIL", make) for name, config, props, depth, make in broken]
    return cases


def doc_table(rows: list[dict]) -> str:
    """docs/results.md's table of the proofs: one row per case, a broken variant's FAIL marked as expected."""
    lines = ["| configuration | properties | k | result | seconds |", "|---|---|---:|---|---:|"]
    for r in rows:
        result = r["result"] + (" (expected)" if r["expected"] == "FAIL" and r["result"] == "FAIL" else "")
        if r["result"] != r["expected"]:
            result += f" (expected {r['expected']})"
        config = r["configuration"].replace("|", "\\|")
        lines.append(f"| {config} | {r['properties'].split(':')[0]} | {r['depth']} | {result} | {r['seconds']:.1f} |")
    return "\n".join(lines)


def sections(data: dict) -> dict[str, str]:
    return {"formal table": doc_table(data["proofs"])}


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--only", default="", help="run the cases whose name contains this")
    parser.add_argument("--timeout", type=float, default=1800.0, help="seconds per proof (default 1800)")
    tables_flag(parser)
    args = parser.parse_args(argv)
    if tables_only(args, "formal", sections):
        return 0
    rows = []
    unexpected = 0
    header = f"{'case':<58} {'properties':<16} {'k':>2} {'result':<8} {'seconds':>8}"
    print(header)
    print("-" * len(header))
    for name, config, props, depth, expected, make in _cases():
        if args.only not in name:
            continue
        try:
            with block_storage() if "-block-" in name else contextlib.nullcontext():
                result = prove(make(), name=f"bench-{name}", depth=depth, timeout=args.timeout)
            status, seconds, failed = result.status, result.seconds, list(result.failed)
            trace = str(result.trace.relative_to(ROOT)) if result.trace else None
        except FormalError as error:
            status, seconds, failed, trace = "TIMEOUT" if "did not finish" in str(error) else "ERROR", \
                args.timeout, [str(error)], None
        mark = "" if status == expected else "  <- unexpected"
        unexpected += bool(mark)
        print(f"{name:<58} {props.split(':')[0]:<16} {depth:>2} {status:<8} {seconds:8.1f}{mark}", flush=True)
        rows.append({"case": name, "configuration": config, "properties": props, "depth": depth,
                     "expected": expected, "result": status, "seconds": round(seconds, 2),
                     "violated": failed, "trace": trace})
    if not args.only:
        publish("formal", {"engine": "smtbmc yices (k-induction)", "timeout_s": args.timeout, "proofs": rows},
                sections)
    return 1 if unexpected else 0


if __name__ == "__main__":
    sys.exit(main())

"""Space-time memory (001): the visibility rules, minKV and minO (with the erratum) against an exact oracle
and against random valid traces that keep running after every collection."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from sfdf.cli import main
from sfdf.sw.stm.gc import PRINTED_MIN_O, bounds, collect, min_kv, min_o
from sfdf.sw.stm.model import CONSUMED, INF, OPEN, UNSEEN, SpaceTimeMemory, STMError, VisibilityError
from sfdf.sw.stm.oracle import open_items, reachable_gets


def producer_reader():
    """A producer p (VT 0) putting on channel c, a reader r attached to it."""
    stm = SpaceTimeMemory()
    stm.channel("c")
    stm.thread("p", 0)
    stm.oconn("p", "c", "o")
    stm.thread("r", 0)
    stm.attach("r", "c", "i")
    return stm


# -- the model and V1-V5 ----------------------------------------------------------------------------------

def test_states_move_absent_unseen_open_consumed():
    stm = producer_reader()
    ic = stm.iconns["i"]
    assert ic.state(4) == "ABSENT"
    stm.put("o", 4)
    assert ic.state(4) == UNSEEN
    assert stm.get("i", 4)[0] == 4 and ic.state(4) == OPEN
    stm.consume("i", 4)
    assert ic.state(4) == CONSUMED and ic.kt == 0  # 0..3 are not consumed: KT stays
    stm.consume_until("i", 2)
    assert ic.kt == 3
    stm.put("o", 3)
    stm.get("i", 3)
    stm.consume("i", 3)
    assert ic.kt == 5  # 3 and 4 consumed: KT advances past both
    with pytest.raises(STMError, match="already present"):
        stm.put("o", 4)
    stm.put("o", 7)
    stm.put("o", 6)
    assert stm.get("i")[0] == 6 and stm.get("i", "latest")[0] == 7


def test_v1_get_only_an_unseen_item():
    stm = producer_reader()
    stm.set_vt("r", 9)  # V1: VT does not limit gets
    stm.put("o", 2)
    stm.get("i", 2)
    with pytest.raises(VisibilityError, match=r"^V1: thread r, connection i, timestamp 2: get only an UNSEEN item"):
        stm.get("i", 2)
    with pytest.raises(VisibilityError, match=r"V1: .* \(it is ABSENT\)"):
        stm.get("i", 3)


def test_v2_no_put_in_the_past():
    stm = producer_reader()
    stm.set_vt("p", 5)
    with pytest.raises(VisibilityError, match=r"^V2: thread p, connection o, timestamp 4: put only at ts >= VIS\(p\) = 5"):
        stm.put("o", 4)
    stm.put("o", 5)


def test_v3_vt_moves_only_within_visibility():
    stm = producer_reader()
    stm.set_vt("r", 8)
    stm.put("o", 3)
    stm.get("i", 3)  # VIS(r) = 3 now
    stm.set_vt("r", 4)  # VT may fall, down to VIS
    with pytest.raises(VisibilityError, match=r"^V3: thread r, timestamp 2: set_vt only to vt >= VIS\(r\) = 3"):
        stm.set_vt("r", 2)


def test_v4_children_start_at_or_after_the_parents_visibility():
    stm = producer_reader()
    stm.set_vt("p", 6)
    with pytest.raises(VisibilityError, match=r"^V4: thread p, timestamp 5: a child starts at VT >= VIS\(p\) = 6"):
        stm.thread("child", 5, parent="p")
    assert stm.thread("child", 6, parent="p").vt == 6


def test_v5_a_new_connection_sees_nothing_below_visibility():
    stm = producer_reader()
    for ts in (1, 4):
        stm.put("o", ts)
    stm.set_vt("r", 3)
    stm.attach("r", "c", "late")
    with pytest.raises(VisibilityError, match=r"^V5: thread r, connection late, timestamp 1: attached at VIS = 3"):
        stm.get("late", 1)
    assert stm.get("late", 4)[0] == 4
    assert stm.get("i", 1)[0] == 1  # the old connection still sees it (V1)


# -- the GC conditions --------------------------------------------------------------------------------------

def fig3():
    """001 Fig. 3: timestamps 0-1 and 3-5 consumed on ic, 2 ABSENT, 6 UNSEEN; every thread past 6."""
    stm = producer_reader()
    for ts in (0, 1, 3, 4, 5, 6):
        stm.put("o", ts)
    for ts in (0, 1, 3, 4, 5):
        stm.get("i", ts)
        stm.consume("i", ts)
    stm.set_vt("p", 7)
    stm.set_vt("r", 6)
    return stm


def test_001_fig3_absent_2_holds_minkv_while_mino_reaches_6():
    stm = fig3()
    b = bounds(stm)
    assert (b.min_v, b.min_k, b.min_kv, b.min_o) == (6, 2, 2, 6)
    assert collect(stm, b.min_kv) == {"c": [0, 1]}
    assert collect(stm, b.min_o) == {"c": [3, 4, 5]}
    assert not reachable_gets(fig3()) & {("c", ts) for ts in range(6)}  # the oracle agrees: all garbage
    with pytest.raises(VisibilityError, match="V2"):
        stm.put("o", 2)  # and none of it can come back


def test_the_printed_thm_5_0_collects_an_item_a_thread_can_still_get():
    """Erratum (seeds' README, 5): minV <= minK, printed minO = minK. t at VT 2 has put an item at 5; no
    i_conn exists, so minK = inf, and the printed rule collects everything; t then attaches and gets 5."""
    def state():
        stm = SpaceTimeMemory()
        stm.channel("c")
        stm.thread("t", 2)
        stm.oconn("t", "c", "o")
        stm.put("o", 5)
        return stm

    printed = state()
    assert min_o(printed, rule=PRINTED_MIN_O) == INF
    assert ("c", 5) in reachable_gets(printed)  # the oracle: 5 can still be got
    collect(printed, min_o(printed, rule=PRINTED_MIN_O))
    printed.attach("t", "c", "i")
    with pytest.raises(STMError, match="unsafe garbage collection"):
        printed.get("i", 5)
    fixed = state()
    assert min_o(fixed) == 2
    collect(fixed, min_o(fixed))
    fixed.attach("t", "c", "i")
    assert fixed.get("i", 5)[0] == 5


# -- random valid traces against the oracle ------------------------------------------------------------------

MAX_TS = 7


def candidates(stm: SpaceTimeMemory) -> list[tuple]:
    """Every operation the rules allow now, over small timestamps (gets include collected timestamps that
    look UNSEEN: an unsafe collection would then show as an error)."""
    ops: list[tuple] = [("gc",)]
    if len(stm.threads) < 3:
        ops += [("thread", t.name, v) for t in stm.threads.values() for v in (t.vis(), t.vis() + 1)
                if v <= MAX_TS or v == INF]
    for t in stm.threads.values():
        vis = t.vis()
        ops += [("set_vt", t.name, v) for v in (vis, vis + 1, vis + 3, INF) if v <= MAX_TS + 3 or v == INF]
        if len(t.iconns) < 2:
            ops += [("attach", t.name, c) for c in stm.channels]
        for oc in t.oconns:
            ops += [("put", oc.name, ts) for ts in range(MAX_TS + 1) if ts >= vis and not oc.channel.present(ts)]
    for ic in stm.iconns.values():
        for ts in range(MAX_TS + 1):
            state = ic.state(ts)
            if state == UNSEEN:
                ops.append(("get", ic.name, ts))
            elif state == OPEN:
                ops.append(("consume", ic.name, ts))
        ops += [("consume_until", ic.name, ts) for ts in (ic.kt, ic.kt + 2) if ts <= MAX_TS]
    return ops


def apply(stm: SpaceTimeMemory, op: tuple) -> None:
    kind, *args = op
    if kind == "gc":
        collect(stm, min_o(stm))
    elif kind == "thread":
        stm.thread(f"t{len(stm.threads)}", args[1], parent=args[0])
    elif kind == "attach":
        stm.attach(args[0], args[1], f"i{len(stm.iconns)}")
    else:
        getattr(stm, kind)(*args)


def start() -> SpaceTimeMemory:
    stm = SpaceTimeMemory()
    for c in ("c", "d"):
        stm.channel(c)
    stm.thread("t0", 0)
    stm.oconn("t0", "c", "o0")
    stm.oconn("t0", "d", "o1")
    stm.thread("t1", 0)
    stm.attach("t1", "c", "i0")
    return stm


@settings(max_examples=400, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(st.data())
def test_random_traces_never_collect_what_can_still_be_got(data):
    """Random valid traces with the collector at minO in between (a get of a collected item would raise):
    minKV <= minO, and nothing below minO is OPEN or reachable by any future sequence (the oracle)."""
    stm = start()
    for _ in range(data.draw(st.integers(5, 30))):
        apply(stm, data.draw(st.sampled_from(candidates(stm))))
    kv, o = min_kv(stm), min_o(stm)
    assert kv <= o
    needed = reachable_gets(stm) | open_items(stm)
    below = {(c.name, ts) for c in stm.channels.values() for ts in c.items if ts < o}
    assert not needed & below, (needed & below, kv, o)


# -- sfdf gc ------------------------------------------------------------------------------------------------

#: 001 Fig. 3 as a trace: examples/fig3.jsonl (docs/stm.md runs it).
FIG3 = [json.loads(line) for line in (Path(__file__).resolve().parents[1] / "examples" / "fig3.jsonl").read_text().splitlines()]


def trace(tmp_path, ops, extra=""):
    path = tmp_path / "t.jsonl"
    path.write_text("\n".join(json.dumps(op) for op in ops) + "\n" + extra)
    return path


def test_sfdf_gc_reports_the_bounds_and_the_garbage(tmp_path, capsys):
    assert main(["gc", str(trace(tmp_path, FIG3)), "--json"]) == 0
    result = json.loads(capsys.readouterr().out)
    assert result == {"minV": 6, "minK": 2, "minKV": 2, "minO": 6, "garbage": {"c": [0, 1, 3, 4, 5]}}
    ops = [*FIG3, {"op": "set_vt", "thread": "r", "vt": "inf"}]
    assert main(["gc", str(trace(tmp_path, ops)), "--json"]) == 0
    assert json.loads(capsys.readouterr().out)["minV"] == "inf"


@pytest.mark.parametrize("line, words", [
    ('{"op": "put", "conn": "o", "ts": 1}', "t.jsonl:24: put: V2: thread p, connection o, timestamp 1"),
    ('{"op": "thread", "thread": "q", "vt": 2, "parent": "r"}', "t.jsonl:24: thread: V4: thread r"),
    ('{"op": "set_vt", "thread": "r", "vt": 1}', "t.jsonl:24: set_vt: V3: thread r"),
    ('{"op": "get", "conn": "i", "ts": 0}', "t.jsonl:24: get: V1: thread r, connection i, timestamp 0"),
    ('{"op": "consume", "conn": "i", "ts": 6}', "t.jsonl:24: consume: consume on i: timestamp 6 is UNSEEN, not OPEN"),
    ('{"op": "fork", "thread": "x"}', "t.jsonl:24: op: unknown operation \"fork\""),
    ('{"op": "put", "conn": "o"}', "t.jsonl:24: put: missing ts"),
    ('{"op": "put", "conn": "o", "ts": 9, "when": 1}', "t.jsonl:24: put: unknown field when"),
    ("not json", "t.jsonl:24: JSON: not JSON"),
    ('{"op": "put", "conn": "zz", "ts": 9}', "unknown output connection 'zz'"),
])
def test_sfdf_gc_refuses_a_bad_line_in_one_line(tmp_path, capsys, line, words):
    assert main(["gc", str(trace(tmp_path, FIG3, line))]) == 2
    err = capsys.readouterr().err
    assert len(err.strip().splitlines()) == 1 and words in err and "Traceback" not in err, err

"""The coincidence stage (sw/stm/coincidence.py): 001's channels and bounds over many skewed sources give
exactly the true events, hold exactly what is pending, and stay flat over a long stream."""

import tracemalloc

import pytest

from sfdf.sw.datasets import array_arrivals, array_frames, telescope_array
from sfdf.sw.stm.coincidence import FILTERED, OUTPUT, PROGRESS, CoincidenceStage, feed
from sfdf.sw.stm.gc import min_kv, min_o
from sfdf.sw.stm.model import INF, VisibilityError

ARRAY = ["T1", "T2", "T3", "T4"]  # known from the start: a source first seen mid-run starts at the bound


def _rows(data, answered=None):
    for s, t, pixels in data.rows:
        if pixels is None:
            yield s, t, PROGRESS, None
        elif answered is None or answered(pixels):
            yield s, t, OUTPUT, int(pixels.sum())
        else:
            yield s, t, FILTERED, None


def _run(stage, rows):
    yield from feed(stage, rows)
    yield from stage.close()


@pytest.mark.parametrize("seed", [1, 2, 3])
@pytest.mark.parametrize("k", [1, 2, 4])
def test_events_are_exactly_the_true_coincidences_each_once(seed, k):
    data = telescope_array(1500, seed=seed)
    stage = CoincidenceStage(k, ARRAY)
    events = {}
    for n, row in enumerate(_rows(data)):
        for e in feed(stage, [row], every=1):
            assert e.frame_id not in events and len(e.sources) >= k
            events[e.frame_id] = list(e.sources)
        if n % 50 == 0:  # reclaimed at minKV, which is minO here: no reader holds anything open
            assert min_kv(stage.stm) == min_o(stage.stm) == stage.bound
    for e in stage.close():
        events[e.frame_id] = list(e.sources)
    assert events == data.coincidences(k)
    outputs = sum(p is not None for _, _, p in data.rows)
    # every camera closes its run with a progress row, so all of it is reclaimed before the end
    assert stage.held == 0 and stage.collected == outputs and stage.events == len(events)


def test_a_filtering_network_leaves_absent_timestamps_which_pass_without_waiting():
    data = telescope_array(1500, seed=5)

    def bright(p):
        return int((p > 1000).sum()) >= 8

    stage = CoincidenceStage(2, ARRAY)
    events = {e.frame_id: list(e.sources) for e in _run(stage, _rows(data, bright))}
    assert events == data.coincidences(2, answered=bright) and events
    assert stage.collected > 0


def test_what_is_held_is_what_is_truly_pending():
    """After each step the stage holds exactly the outputs at timestamps some source may still reach."""
    data = telescope_array(2000, seed=7)
    stage = CoincidenceStage(2, ARRAY)
    put = []
    for row in _rows(data):
        list(feed(stage, [row], every=1))
        if row[2] == OUTPUT:
            put.append(row[:2])
        pending = [(s, t) for s, t in put if t >= min(stage.vt(x) for x in stage.sources)]
        assert stage.held == len(pending)


def test_a_silent_source_that_sends_progress_stalls_nothing():
    stage = CoincidenceStage(2, ["A", "B", "Q"])
    for t in range(0, 1000, 2):
        stage.put("A", t, t)
        stage.put("B", t, t)
        if t % 100 == 0:
            stage.advance("Q", t + 1)  # Q has nothing to say but says so
        stage.step()
    assert stage.events == 451 and stage.held <= 2 * 50  # final up to Q's last progress (901): held since then
    silent = CoincidenceStage(2, ["A", "B", "Q"])
    for t in range(0, 1000, 2):
        silent.put("A", t, t)
        silent.put("B", t, t)
        silent.step()
    assert silent.events == 0 and silent.held == 1000  # without progress nothing is final: all of it is held
    assert len(silent.close()) == 500


def test_a_late_put_is_refused_and_a_source_seen_mid_run_starts_at_the_bound():
    stage = CoincidenceStage(1, ["A"])
    stage.put("A", 10, "x")
    stage.advance("A", 20)
    stage.step()
    with pytest.raises(VisibilityError, match="V2"):
        stage.put("A", 15, "late")
    stage.join("B")  # a child of the stage (V4): below the bound every event is final already
    assert stage.vt("B") == 20
    with pytest.raises(VisibilityError, match="V2"):
        stage.put("B", 19, "late")
    stage.put("B", 20, "y")
    assert [e.frame_id for e in stage.close()] == [20]


def test_a_monitor_attached_mid_run_sees_nothing_older_than_its_visibility_and_holds_what_it_has_not_read():
    data = telescope_array(1200, seed=3)
    stage = CoincidenceStage(2, ARRAY)
    rows = list(_rows(data))
    list(feed(stage, rows[:600]))
    monitor = stage.monitor()
    assert monitor.start == stage.bound > 0
    old = next(t for s, t, kind, _ in rows[:600] if kind == OUTPUT and t < monitor.start)
    with pytest.raises(VisibilityError, match="V5"):
        stage.stm.get(f"{monitor.name}:{rows[0][0]}", old)
    seen = monitor.read()
    held = stage.held
    list(feed(stage, rows[600:900]))
    assert stage.held > held  # the monitor has not read: what it may still get stays
    seen += monitor.read()
    stage.step()
    assert stage.held <= sum(1 for s, t, kind, _ in rows[:900] if kind == OUTPUT and t >= stage.bound)
    list(feed(stage, rows[900:]))
    stage.close()
    seen += monitor.read()
    assert all(t >= monitor.start for _, t, _ in seen)
    expected = [(s, t) for s, t, kind, _ in rows if kind == OUTPUT and t >= monitor.start]
    assert sorted((s, t) for s, t, _ in seen) == sorted(expected)


def test_a_snapshot_restored_goes_on_as_if_never_stopped():
    data = telescope_array(1500, seed=9)
    rows = list(_rows(data))
    straight = CoincidenceStage(2, ARRAY)
    events = [e.frame_id for e in _run(straight, rows)]
    first = CoincidenceStage(2, ARRAY)  # stopped at a micro-batch boundary (feed steps every 256 rows)
    resumed = [e.frame_id for e in feed(first, rows[:768])]
    state = first.snapshot()
    assert state["pending"] and first.held == len(state["pending"])
    second = CoincidenceStage.restore(state)
    resumed += [e.frame_id for e in _run(second, rows[768:])]
    assert resumed == events
    assert (second.state_peak, second.collected) == (straight.state_peak, straight.collected)
    with pytest.raises(VisibilityError, match="V2"):
        CoincidenceStage.restore(state).put("T1", 0, "x")


def test_a_million_events_in_flat_memory():
    """The fast path over >= 10^6 events: exact against the true list, and what stays allocated over the
    last stretch (tracemalloc) does not grow with the events."""
    count = 2_100_000
    config = {"showers": 0.5, "seen": 0.8}
    stage = CoincidenceStage(2, ARRAY)
    rows = ((s, t, OUTPUT if kind else PROGRESS, t) for s, t, kind in array_arrivals(count, **config))
    truth = ((t, tuple(sorted(v))) for t, v in array_frames(count, **config) if len(v) >= 2)
    marks = {}
    for n, e in enumerate(_run(stage, rows), 1):
        assert (e.frame_id, e.sources) == next(truth)
        if n == 800_000:
            tracemalloc.start()
        elif n in (850_000, 1_000_000):
            marks[n] = tracemalloc.get_traced_memory()[0]
    tracemalloc.stop()
    assert next(truth, None) is None and stage.events >= 1_000_000
    assert marks[1_000_000] - marks[850_000] < 256 * 1024  # 150,000 events later: no growth per event
    assert stage.state_peak < 5000 and stage.bound == INF

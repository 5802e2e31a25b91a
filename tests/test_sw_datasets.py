"""sfdf.sw.datasets: the sparse frames the benchmarks and tests draw, the shipped and VERITAS-like sets, and
an array of telescopes delivering skewed, in its own order each, with progress rows and its true coincidences."""

from __future__ import annotations

import random

import numpy as np
import pytest

from sfdf.sw.datasets import digits, sparse_frames, veritas


@pytest.mark.parametrize("zeros", [0.0, 0.3, 0.9, 1.0])
def test_sparse_frames_have_the_sparsity_asked_for(zeros):
    frames = sparse_frames(200, zeros, 256, seed=4)
    pixels = np.concatenate([np.asarray(f) for f in frames])
    assert len(frames) == 200 and {len(f) for f in frames} == {256}
    assert abs(np.mean(pixels == 0) - zeros) < 0.01
    assert pixels.max() < 1 << 16 and (zeros == 1.0 or pixels.max() > 0)


def test_sparse_frame_lengths_span_the_range():
    lengths = [len(f) for f in sparse_frames(2000, 0.5, (1, 24), seed=1)]
    assert min(lengths) == 1 and max(lengths) == 24


def test_sparse_frames_are_the_seeds_draws():
    """Same seed, same frames; a Random is drawn from in order (length, then each pixel: zero or a value)."""
    assert sparse_frames(5, 0.5, (1, 9), seed="a") == sparse_frames(5, 0.5, (1, 9), seed=random.Random("a"))
    rng = random.Random(7)
    size = rng.randint(1, 9)
    first = [0 if rng.random() < 0.5 else rng.randrange(1, 1 << 12) for _ in range(size)]
    assert sparse_frames(1, 0.5, (1, 9), seed=7, bits=12) == [first]


def test_the_shipped_and_drawn_sets():
    table = digits()
    assert len(table) == 1797 and table[0][0] == 0 and all(len(p) == 64 and p.max() <= 16 for _, p in table)
    frames = veritas(50, seed=2)
    assert [k for k, _ in frames] == list(range(50))
    assert all(len(p) == 32 * 32 and p.max() < 1 << 16 for _, p in frames)
    assert 0.3 < np.mean([np.mean(p == 0) for _, p in frames]) < 1.0


def test_a_telescope_array_delivers_each_source_in_order_skewed_with_its_promises_kept():
    from sfdf.sw.datasets import telescope_array

    data = telescope_array(3000, seed=4)
    again = telescope_array(3000, seed=4)  # seeded: the same rows
    assert [(s, t) for s, t, _ in again.rows] == [(s, t) for s, t, _ in data.rows] and again.frames == data.frames
    sources = sorted({s for s, _, _ in data.rows})
    assert sources == ["T1", "T2", "T3", "T4"]
    promised = dict.fromkeys(sources, -1)
    last = dict.fromkeys(sources, -1)
    newest, worst = -1, 0
    for s, t, pixels in data.rows:
        assert t >= last[s]  # each camera in its timestamp order
        last[s] = t
        if pixels is None:
            promised[s] = t  # nothing more from s below t
        else:
            assert t >= promised[s] and len(pixels) == 32 * 32
        newest, worst = max(newest, t), max(worst, newest - t)
    assert worst > 200  # a source lags behind the others by more than its own lag: a silence and its burst
    assert all(sum(p is None for s2, _, p in data.rows if s2 == s) >= 3000 // 64 - 1 for s in sources)


def test_the_true_coincidences_are_the_timestamps_k_sources_answered():
    from sfdf.sw.datasets import telescope_array

    data = telescope_array(1500, seed=5)
    seen = {}
    for s, t, pixels in data.rows:
        if pixels is not None:
            seen.setdefault(t, []).append(s)
    for k in (1, 2, 3, 4):
        assert data.coincidences(k) == {t: sorted(v) for t, v in sorted(seen.items()) if len(v) >= k}
    bright = data.coincidences(2, answered=lambda p: int((p > 1000).sum()) >= 8)  # a camera trigger
    assert set(bright) < set(data.coincidences(2)) and bright


def test_array_rows_round_trip_through_parquet_with_their_source(tmp_path):
    import pyarrow.parquet as pq

    from sfdf.sw.datasets import telescope_array, write_rows

    rows = telescope_array(400, seed=6).rows
    paths = write_rows(rows, tmp_path, rows_per_file=100)
    table = pq.read_table(paths[0]).to_pylist() + [r for p in paths[1:] for r in pq.read_table(p).to_pylist()]
    assert [(r["source"], r["frame_id"]) for r in table] == [(s, t) for s, t, _ in rows]
    assert all((r["pixels"] is None) == (p is None) for r, (_, _, p) in zip(table, rows, strict=True))

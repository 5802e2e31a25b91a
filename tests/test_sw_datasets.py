"""sfdf.sw.datasets: the sparse frames the benchmarks and tests draw, and the shipped and VERITAS-like sets."""

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

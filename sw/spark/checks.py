"""What the Spark job does with each frame besides sending it: validate it, then check the device's answer.

Validation (docs/architecture.md: unsigned pixels of the source port's width, any frame length >= 1): a bad frame
gets a reason naming the first problem and is quarantined (a result row with ``ok = false``); it never
reaches the device. Checking: the variance network's ``n, sum, sum_sq`` must equal numpy's exactly and its
variance (``sum_sq/n - (sum/n)^2``, population) must match ``np.var``; any other spec's sink beats must
equal the reference model's (:func:`sfdf.gen.refmodel.simulate`) run on the same frames in the same order,
since a device's state (its LFSRs) carries over from frame to frame.
"""

from __future__ import annotations

import json
from collections.abc import Sequence

import numpy as np

__all__ = ["ModelChecker", "batch_frames", "frame_problem", "variance_check"]


def batch_frames(batch):
    """``(frame_id, pixels, nulls)`` per row of an Arrow batch of ``frame_id, pixels``, without a Python
    loop over pixels: ``pixels`` is a view into the batch's values (``None`` for a null list) and
    ``nulls`` says whether some pixel of it is null."""
    lists = batch.column("pixels")
    offsets = lists.offsets.to_numpy()
    flat = lists.values
    null_pixels = flat.is_null().to_numpy(zero_copy_only=False) if flat.null_count else None
    values = (flat.fill_null(0) if flat.null_count else flat).to_numpy(zero_copy_only=False)  # stays integer
    valid = lists.is_valid().to_numpy(zero_copy_only=False)
    for k, frame_id in enumerate(batch.column("frame_id").to_pylist()):
        if not valid[k]:
            yield frame_id, None, False
            continue
        a, b = offsets[k], offsets[k + 1]
        yield frame_id, values[a:b], bool(null_pixels is not None and null_pixels[a:b].any())


def frame_problem(frame_id, pixels: np.ndarray | None, nulls: bool, bits: int) -> str | None:
    """Why the frame cannot be sent (``None``: it can); arguments as :func:`batch_frames` yields them."""
    if frame_id is None:
        return "frame_id is null"
    if pixels is None:
        return "pixels is null"
    if len(pixels) == 0:
        return "empty frame: a frame needs at least one pixel"
    if nulls:
        return "some pixel is null"
    negative = np.flatnonzero(pixels < 0)
    if negative.size:
        return f"pixel {negative[0]} is negative ({pixels[negative[0]]})"
    wide = np.flatnonzero(pixels >= 1 << bits)
    if wide.size:
        return f"pixel {wide[0]} is {pixels[wide[0]]}, wider than the {bits}-bit source port"
    return None


def variance_check(pixels: np.ndarray, fields) -> tuple[float, str | None]:
    """``(variance, problem)`` of the device's ``n, sum, sum_sq`` against numpy on ``pixels``."""
    values = np.asarray(pixels, dtype=np.uint64)
    n, total, squares = fields["n"], fields["sum"], fields["sum_sq"]
    variance = squares / n - (total / n) ** 2
    expected = (values.size, int(values.sum()), int((values * values).sum()))
    if (n, total, squares) != expected:
        return variance, (f"mismatch: device n, sum, sum_sq = {n}, {total}, {squares}; "
                          f"numpy {expected[0]}, {expected[1]}, {expected[2]}")
    reference = float(np.var(values.astype(np.float64)))
    if not np.isclose(variance, reference, rtol=1e-9, atol=1e-6 * max(1.0, reference)):
        return variance, f"mismatch: variance {variance!r}, numpy {reference!r}"
    return variance, None


class ModelChecker:
    """Any spec: the device's sink beats per frame against the reference model on the same frames.

    Parameters
    ----------
    network : gen.model.Network
        The resolved network the device was generated from (one source).
    """

    def __init__(self, network):
        self.network = network
        self.mask = (1 << network.index_width) - 1

    def expected(self, frames: Sequence[np.ndarray]) -> list[dict[str, list[list[int]]]]:
        """Per frame, per sink, the ``[index mod 2^w, payload]`` of its data tokens (model order)."""
        from sfdf.gen.refmodel import simulate

        (source,) = self.network.sources
        result = simulate(self.network, inputs={source: [np.asarray(f).tolist() for f in frames]})
        if result.deadlocked:
            raise RuntimeError(f"the reference model deadlocked on {self.network.name}: {result.blocking_cycle}")
        per_frame = [{sink: [] for sink in self.network.sinks} for _ in frames]
        for sink, log in result.outputs.items():
            frame = 0
            for event in log:
                if event[0] == "data":
                    per_frame[frame][sink].append([event[1] & self.mask, event[2]])
                else:
                    frame += 1
        return per_frame

    def observed(self, result) -> dict[str, list[list[int]]]:
        """A :class:`sfdf.sw.device.FrameResult`'s data beats in the same shape as :meth:`expected`."""
        return {sink: [[beat.index, beat.tdata] for beat in result.beats.get(sink, ())]
                for sink in self.network.sinks}

    @staticmethod
    def problem(observed, expected) -> str | None:
        if observed == expected:
            return None
        return f"mismatch: device {json.dumps(observed)[:200]}, model {json.dumps(expected)[:200]}"

"""Input frames for the Spark job: real 8x8 digits and VERITAS-like 32x32 sparse frames, as Parquet.

The Parquet layout is docs/architecture.md's: ``frame_id: long, pixels: array<int>`` (unsigned 16-bit pixels, any
frame length >= 1). :func:`digits` reads the 1,797 images that ship in ``data/digits`` (UCI, via
scikit-learn; see its README). :func:`veritas` draws frames like those of 000's experiment (Sec. 5:
simulated VERITAS camera images): an imaging atmospheric Cherenkov telescope sees a faint elliptical
shower image (a 2-D Gaussian, Hillas' parametrisation) on night-sky noise, and image cleaning zeroes
every pixel below a threshold, so most pixels are zero. :func:`sparse_frames` draws frames with a given
sparsity and nothing else (the benchmarks' and tests' input where only the zeros matter).
:func:`telescope_array` draws an array of such telescopes (VERITAS has four) watching the same showers:
rows ``(source, frame_id, pixels)`` in the order a skewed array delivers them, with progress rows and the
true list of coincidences (issue 58's multi-source input; :func:`write_rows` writes them with the
``source`` column).

    python -m sfdf.sw.datasets digits OUT_DIR
    python -m sfdf.sw.datasets veritas OUT_DIR [--frames 1000] [--seed 1]
    python -m sfdf.sw.datasets array OUT_DIR [--frames 1000] [--telescopes 4] [--seed 1]
"""

from __future__ import annotations

import argparse
import gzip
import random
from dataclasses import dataclass, field
from importlib.resources import files
from pathlib import Path

import numpy as np

__all__ = ["DIGITS", "NOISE", "SHOWER", "ArrayData", "array_arrivals", "array_frames", "digits", "sparse_frames", "telescope_array", "veritas", "write_frames", "write_rows"]

#: The shipped digits file (64 pixels in 0..16, then the label, per line).
DIGITS = Path(str(files("sfdf.data") / "digits" / "digits.csv.gz"))


def digits(path: Path = DIGITS) -> list[tuple[int, np.ndarray]]:
    """The 8x8 digits as ``(frame_id, 64 pixels)``, ids 0..1796 in file order (the label is dropped)."""
    with gzip.open(path, "rt") as f:
        table = np.loadtxt(f, delimiter=",", dtype=np.int64)
    return [(k, row[:64].copy()) for k, row in enumerate(table)]


def veritas(count: int, seed: int = 1, side: int = 32) -> list[tuple[int, np.ndarray]]:
    """``count`` VERITAS-like ``side x side`` frames (16-bit pixels), ids 0..count-1.

    Each frame: a shower ellipse (random centre, length 1.5-6 pixels, width 0.5-2, angle, brightness
    up to about 40,000 counts) plus Poisson night-sky background of 5-60 counts, cleaned at a
    threshold of 3-6 standard deviations of the background, so sparsity ranges from about half to
    nearly all pixels zero; a few frames have no shower at all (an all-zero frame still has a result).
    """
    rng = np.random.default_rng(seed)
    return [(frame_id, _camera_frame(rng, side)) for frame_id in range(count)]


def _camera_frame(rng, side: int, shower: bool | None = None) -> np.ndarray:
    """One cleaned camera image (:func:`veritas`); ``shower`` None: a shower with probability 0.95."""
    y, x = np.mgrid[0:side, 0:side].astype(float)
    sky = rng.uniform(5, 60)
    image = rng.poisson(sky, (side, side)).astype(float)
    if shower if shower is not None else rng.random() > 0.05:
        cx, cy = rng.uniform(4, side - 4, 2)
        length, width = rng.uniform(1.5, 6), rng.uniform(0.5, 2)
        angle = rng.uniform(0, np.pi)
        u = (x - cx) * np.cos(angle) + (y - cy) * np.sin(angle)
        v = -(x - cx) * np.sin(angle) + (y - cy) * np.cos(angle)
        image += 10 ** rng.uniform(2, 4.6) * np.exp(-0.5 * ((u / length) ** 2 + (v / width) ** 2))
    threshold = sky + rng.uniform(3, 6) * np.sqrt(sky)
    cleaned = np.where(image >= threshold, image - sky, 0.0)
    return np.clip(np.rint(cleaned), 0, 65535).astype(np.int64).ravel()


@dataclass
class ArrayData:
    """What :func:`telescope_array` drew: ``rows`` in delivery order, each ``(source, frame_id, pixels)``
    (``pixels`` None for a progress row: nothing more from that source below ``frame_id``), and
    ``frames``, each timestamp's sources that recorded a frame there."""

    rows: list[tuple[str, int, np.ndarray | None]]
    frames: dict[int, set[str]] = field(default_factory=dict)

    def coincidences(self, k: int, answered=None) -> dict[int, list[str]]:
        """Each timestamp at which at least ``k`` sources produced an output, with those sources sorted:
        with ``answered(pixels) -> bool`` (a network that filters) only their frames it answers count."""
        pixels = {(s, t): p for s, t, p in self.rows if p is not None}
        events = {}
        for t, sources in self.frames.items():
            got = sorted(s for s in sources if answered is None or answered(pixels[s, t]))
            if len(got) >= k:
                events[t] = got
        return dict(sorted(events.items()))


def telescope_array(count: int, telescopes: int = 4, *, showers: float = 0.3, seen: float = 0.7,
                    noise: float = 0.02, lag: int = 200, silence: float = 0.002, progress: int = 64,
                    seed: int = 1, side: int = 32) -> ArrayData:
    """An array of ``telescopes`` cameras (sources ``T1``, ``T2``, ...) over timestamps ``0..count-1``:
    :func:`array_arrivals`' rows with a :func:`veritas` frame each (a shower image where the camera saw
    one, else night-sky noise), and the true frames per timestamp (:func:`array_frames`). Seeded by
    ``seed``: the same arguments give the same rows."""
    rng = np.random.default_rng([seed, 0])
    rows = [(s, t, None if kind is None else _camera_frame(rng, side, shower=kind == SHOWER))
            for s, t, kind in array_arrivals(count, telescopes, showers=showers, seen=seen, noise=noise, lag=lag,
                                             silence=silence, progress=progress, seed=seed)]
    frames = {t: set(sources) for t, sources in array_frames(count, telescopes, showers=showers, seen=seen,
                                                             noise=noise, seed=seed)}
    return ArrayData(rows=rows, frames=frames)


#: :func:`array_arrivals`' kinds of frame (a progress row has kind None).
SHOWER, NOISE = "shower", "noise"


def array_frames(count: int, telescopes: int = 4, *, showers: float = 0.3, seen: float = 0.7,
                 noise: float = 0.02, seed: int = 1, chunk: int = 4096):
    """Lazily, in timestamp order, ``(t, {source: kind})`` for each timestamp where some camera recorded
    a frame: a shower comes with probability ``showers`` and each camera records it with probability
    ``seen`` (kind :data:`SHOWER`); any other camera records a noise frame with probability ``noise``."""
    rng = np.random.default_rng([seed, 1])
    names = [f"T{k + 1}" for k in range(telescopes)]
    for start in range(0, count, chunk):
        n = min(chunk, count - start)
        shower = rng.random(n) < showers
        sees = shower[:, None] & (rng.random((n, telescopes)) < seen)
        noisy = ~sees & (rng.random((n, telescopes)) < noise)
        for k in np.flatnonzero((sees | noisy).any(axis=1)):
            yield start + int(k), {names[j]: SHOWER if sees[k, j] else NOISE
                                   for j in range(telescopes) if sees[k, j] or noisy[k, j]}


def array_arrivals(count: int, telescopes: int = 4, *, showers: float = 0.3, seen: float = 0.7,
                   noise: float = 0.02, lag: int = 200, silence: float = 0.002, progress: int = 64,
                   seed: int = 1):
    """Lazily, in the order a skewed array delivers them, ``(source, t, kind)``: the frames of
    :func:`array_frames` (kind :data:`SHOWER` or :data:`NOISE`) and progress rows (kind None: nothing
    more from that source below ``t``), one every ``progress`` timestamps and one at ``count`` after a
    camera's last frame (its run is over).

    Each camera's rows come in its timestamp order; the cameras are skewed against each other: each runs
    behind the array's clock by its own lag (up to ``lag`` timestamps), and at each timestamp goes silent
    with probability ``silence`` for ``lag`` to ``4 lag`` timestamps, after which its held rows come in a
    burst. What is in flight is bounded by the skew, so a stream of any length takes flat memory.
    """
    import heapq

    names = [f"T{k + 1}" for k in range(telescopes)]
    delivery = [np.random.default_rng([seed, 2, k]) for k in range(telescopes)]
    behind = [int(r.integers(0, lag + 1)) for r in delivery]
    held_until, last, previous, serial = [-1] * telescopes, [-1] * telescopes, [-1] * telescopes, [0] * telescopes
    flight: list = []

    def send(j: int, t: int, kind) -> None:
        r = delivery[j]
        if r.random() < silence * (t - previous[j]):  # a stretch starts with probability silence a timestamp
            held_until[j] = t + behind[j] + int(r.integers(lag, 4 * lag + 1))
        previous[j] = t
        last[j] = max(last[j], t + behind[j], held_until[j])  # a camera's rows keep its order
        serial[j] += 1
        heapq.heappush(flight, (last[j], j, serial[j], t, kind))

    frames = array_frames(count, telescopes, showers=showers, seen=seen, noise=noise, seed=seed)
    upcoming = next(frames, None)
    for t in range(count):
        for j in range(telescopes):
            if t and t % progress == 0:
                send(j, t, None)
            if upcoming is not None and upcoming[0] == t and names[j] in upcoming[1]:
                send(j, t, upcoming[1][names[j]])
        if upcoming is not None and upcoming[0] == t:
            upcoming = next(frames, None)
        while flight and flight[0][0] <= t:
            _, j, _, ts, kind = heapq.heappop(flight)
            yield names[j], ts, kind
    for j in range(telescopes):
        send(j, count, None)
    while flight:
        _, j, _, ts, kind = heapq.heappop(flight)
        yield names[j], ts, kind


def sparse_frames(count: int, zeros: float, length: int | tuple[int, int] = 1024,
                  seed: int | str | random.Random = 0, bits: int = 16) -> list[list[int]]:
    """``count`` frames of ``bits``-bit pixels, each pixel zero with probability ``zeros`` and otherwise
    uniform in ``1 .. 2**bits - 1``.

    ``length`` is every frame's pixel count, or ``(least, most)`` for a count drawn per frame, uniform in
    that range. ``seed`` seeds a :class:`random.Random`, or is one (drawn from in order: a frame's length,
    then its pixels), so the same seed gives the same frames.
    """
    rng = seed if isinstance(seed, random.Random) else random.Random(seed)
    frames = []
    for _ in range(count):
        size = length if isinstance(length, int) else rng.randint(*length)
        frames.append([0 if rng.random() < zeros else rng.randrange(1, 1 << bits) for _ in range(size)])
    return frames


def write_frames(frames, out_dir, rows_per_file: int = 500) -> list[Path]:
    """Write ``(frame_id, pixels)`` pairs as Parquet files of ``rows_per_file`` rows into ``out_dir``."""
    import pyarrow as pa
    import pyarrow.parquet as pq

    out = Path(out_dir)
    out.mkdir(parents=True, exist_ok=True)
    schema = pa.schema([("frame_id", pa.int64()), ("pixels", pa.list_(pa.int32()))])
    paths = []
    for start in range(0, len(frames), rows_per_file):
        chunk = frames[start:start + rows_per_file]
        table = pa.table({"frame_id": [f for f, _ in chunk], "pixels": [np.asarray(p).tolist() for _, p in chunk]},
                         schema=schema)
        path = out / f"part-{start // rows_per_file:05d}.parquet"
        pq.write_table(table, path)
        paths.append(path)
    return paths


def write_rows(rows, out_dir, rows_per_file: int = 500) -> list[Path]:
    """Write ``(source, frame_id, pixels)`` rows (``pixels`` None: a progress row) as Parquet files of
    ``rows_per_file`` rows into ``out_dir``, in their order: ``source: string, frame_id: long, pixels:
    array<int>`` (null for progress)."""
    import pyarrow as pa
    import pyarrow.parquet as pq

    out = Path(out_dir)
    out.mkdir(parents=True, exist_ok=True)
    schema = pa.schema([("source", pa.string()), ("frame_id", pa.int64()), ("pixels", pa.list_(pa.int32()))])
    paths = []
    for start in range(0, len(rows), rows_per_file):
        chunk = rows[start:start + rows_per_file]
        table = pa.table({"source": [s for s, _, _ in chunk], "frame_id": [t for _, t, _ in chunk],
                          "pixels": [None if p is None else np.asarray(p).tolist() for _, _, p in chunk]},
                         schema=schema)
        path = out / f"part-{start // rows_per_file:05d}.parquet"
        pq.write_table(table, path)
        paths.append(path)
    return paths


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(prog="python -m sfdf.sw.datasets", description=__doc__.splitlines()[0])
    ap.add_argument("kind", choices=["digits", "veritas", "array"])
    ap.add_argument("out_dir")
    ap.add_argument("--frames", type=int, default=1000, help="VERITAS-like frames, or the array's timestamps (default 1000)")
    ap.add_argument("--telescopes", type=int, default=4, help="the array's cameras (default 4)")
    ap.add_argument("--seed", type=int, default=1)
    args = ap.parse_args(argv)
    if args.kind == "array":
        data = telescope_array(args.frames, args.telescopes, seed=args.seed)
        paths = write_rows(data.rows, args.out_dir)
        print(f"wrote {len(data.rows)} rows of {args.telescopes} cameras over {args.frames} timestamps "
              f"({len(data.coincidences(2))} with 2 or more cameras) to {len(paths)} file(s) in {args.out_dir}")
        return 0
    frames = digits() if args.kind == "digits" else veritas(args.frames, args.seed)
    paths = write_frames(frames, args.out_dir)
    zeros = np.mean([np.mean(p == 0) for _, p in frames])
    print(f"wrote {len(frames)} {args.kind} frames ({zeros:.0%} zero pixels) to {len(paths)} file(s) in {args.out_dir}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())

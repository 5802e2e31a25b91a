"""The partition executor: one device per partition, every frame of it sent in order, one checked result
row per frame (``mapInArrow``)."""

from __future__ import annotations

import json
import os
import signal
from pathlib import Path

import numpy as np

from .boards import RESOURCE, claim
from .checks import ModelChecker, batch_frames, frame_problem, variance_check
from .config import Job

__all__ = ["open_device_of", "process_partition"]


def open_device_of(job: Job):
    """The device of ``job``, on an executor: from the shipped archive (:class:`sfdf.sw.spark.config.Job`)."""
    from pyspark import SparkFiles

    from sfdf.sw.device import open_device

    root = Path(SparkFiles.get(job.shipped))
    manifest = root / job.manifest
    if not job.device.board:
        return open_device(manifest, build_dir=root / "fastsim", timeout_cycles=job.timeout_cycles)

    def board(port: str):
        return open_device(manifest, backend=f"serial:{port}", timeout_cycles=job.timeout_cycles)

    from pyspark import TaskContext

    from sfdf.sw.device.results import DeviceError

    context = TaskContext.get()
    if job.device.kind == "serial":
        return claim(board, job.device.ports, first=context.partitionId() if context else 0)
    given = context.resources().get(RESOURCE) if context else None
    if given is None or not given.addresses:
        raise DeviceError(f"the task was given no {RESOURCE} resource: workers need "
                          f"spark.worker.resource.{RESOURCE}.amount and its discoveryScript, the job "
                          f"spark.executor.resource.{RESOURCE}.amount (docs/host.md, \"Boards\")")
    assigned = given.addresses[0]
    try:
        return board(assigned)
    except DeviceError:
        # A board that died stays among the worker's addresses until the worker restarts: the task then
        # claims another of this host's boards (the discovery script's list), locked as serial: ones are.
        from .discover import board_ports

        others = tuple(port for port in board_ports() if port != assigned)
        if not others:
            raise
        return claim(board, others)


def process_partition(job: Job, batches):
    """``mapInArrow`` body: Arrow batches of ``frame_id, pixels`` in, result batches out (module docstring)."""
    import pyarrow as pa

    types = {"long": pa.int64(), "double": pa.float64(), "boolean": pa.bool_(), "string": pa.string()}
    schema = pa.schema([(name, types[kind]) for name, kind in job.columns])
    kill_at = job.kill_after if job.kill_after is not None and _first_attempt_of_partition_zero() else None
    checker = None if job.variance else ModelChecker(_network_of(job))
    device = None
    sent = 0
    held: list[dict] = []  # non-variance rows wait for the model run over the whole partition
    held_frames: list[np.ndarray] = []
    try:
        for batch in batches:
            rows, good = [], []
            for frame_id, pixels, nulls in batch_frames(batch):
                problem = frame_problem(frame_id, pixels, nulls, job.pixel_bits)
                if problem:
                    rows.append(_row(job, frame_id, None if nulls else pixels, error=f"bad input: {problem}"))
                else:
                    good.append((frame_id, pixels))
            if good:
                if device is None:
                    device = open_device_of(job)
                    before = device.cycles
                pixels_of = dict(enumerate(p for _, p in good))

                def frames(good=good, pid=device.link.pid):
                    nonlocal sent
                    for item in good:
                        yield item
                        sent += 1
                        if sent == kill_at and pid:  # testing: the device process dies mid-partition
                            os.kill(pid, signal.SIGKILL)

                for k, result in enumerate(device.stream(frames())):
                    cycles, before = result.cycle - before, result.cycle
                    row = _row(job, result.frame_id, pixels_of[k], cycles=cycles)
                    if job.variance:
                        fields = result.fields
                        row["variance"], row["error"] = variance_check(pixels_of[k], fields)
                        row.update(n=fields["n"], sum=fields["sum"], sum_sq=fields["sum_sq"], ok=row["error"] is None)
                        rows.append(row)
                    else:
                        row["outputs"] = checker.observed(result)
                        held.append(row)
                        held_frames.append(pixels_of[k])
            if rows:
                yield pa.RecordBatch.from_pylist(rows, schema=schema)
        if held:
            for row, expected in zip(held, checker.expected(held_frames), strict=True):
                row["error"] = checker.problem(row["outputs"], expected)
                row["ok"] = row["error"] is None
                row["outputs"] = json.dumps(row["outputs"])
            yield pa.RecordBatch.from_pylist(held, schema=schema)
    finally:
        if device is not None:
            device.close()


def _network_of(job: Job):
    """The job's network, its user kernels' goldens imported from the shipped archive where it holds them."""
    from pyspark import SparkFiles

    from .archive import shipped_network

    return shipped_network(job.network, Path(SparkFiles.get(job.shipped)))


def _row(job: Job, frame_id, pixels, *, error=None, cycles=None) -> dict:
    row = dict.fromkeys(name for name, _ in job.columns)
    zeros = float(np.mean(np.asarray(pixels) == 0)) if pixels is not None and len(pixels) else None
    row.update(frame_id=frame_id, ok=False, error=error, cycles=cycles, zeros=zeros)
    return row


def _first_attempt_of_partition_zero() -> bool:
    from pyspark import TaskContext

    ctx = TaskContext.get()
    return ctx is not None and ctx.partitionId() == 0 and ctx.attemptNumber() == 0


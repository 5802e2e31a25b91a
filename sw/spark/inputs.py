"""The job's input: the Parquet files checked before anything runs, the frames read from them, and
duplicated frame ids split off."""

from __future__ import annotations

from functools import reduce
from pathlib import Path

from sfdf.gen.errors import UserError

from .config import Job

__all__ = ["check_input", "duplicates", "frames", "read_frames"]


def check_input(location, spark=None) -> tuple[dict[str, str], list[tuple[str, str]], bool]:
    """The usable Parquet files at ``location`` (docs/architecture.md's columns; :func:`sfdf.sw.spark.storage.parquet_inputs`)
    with their pixels' element type, the skipped ones with why, and whether it is a folder; a one-line
    :class:`UserError` when nothing is there or no file is usable: nothing would run."""
    from .storage import parquet_inputs

    try:
        good, skipped, folder = parquet_inputs(location, spark)
    except FileNotFoundError:
        raise UserError(str(location), "--input", "does not exist",
                        "give a Parquet file or a folder of them (python -m sfdf.sw.datasets digits DIR writes one)") from None
    if not good:
        why = f" (skipped {len(skipped)}: {Path(skipped[0][0]).name} {skipped[0][1]})" if skipped else ""
        raise UserError(str(location), "--input", f"holds no usable Parquet files{why}",
                        "give Parquet files with frame_id: long, pixels: array<int> "
                        "(python -m sfdf.sw.datasets digits DIR writes one)")
    return good, skipped, folder


def duplicates(job: Job, df):
    """Split off the frames whose ``frame_id`` the input holds more than once (the documented rule: such a
    frame is not run at all, since which copy is meant is unknown; it gets one quarantined row saying how
    many times it appears). Returns ``(the rest, their quarantine rows)``; the count is one aggregation
    over the ids, the rest keeps its partitioning (a broadcast anti-join)."""
    from pyspark.sql import functions as F

    repeated = df.groupBy("frame_id").count().where(F.col("count") > 1)
    known = {"frame_id": F.col("frame_id"), "ok": F.lit(False),
             "error": F.concat(F.lit("bad input: frame_id given "), F.col("count").cast("string"),
                               F.lit(" times in the input"))}
    rows = repeated.select(*[known.get(name, F.lit(None).cast(kind)).alias(name) for name, kind in job.columns])
    return df.join(F.broadcast(repeated.select("frame_id")), "frame_id", "left_anti"), rows


def read_frames(spark, files: dict[str, str]):
    """The frames of ``files`` (path -> pixels' element type, :func:`check_input`); files whose pixels have
    different integer types (int32 beside int64) are read apart and their pixels widened to long, which
    Spark's one-schema read of them all cannot do."""
    from pyspark.sql import functions as F

    kinds: dict[str, list[str]] = {}
    for path, kind in files.items():
        kinds.setdefault(kind, []).append(path)
    if len(kinds) == 1:
        return frames(spark.read.parquet(*files))
    parts = [frames(spark.read.parquet(*paths)).withColumn("pixels", F.col("pixels").cast("array<bigint>"))
             for paths in kinds.values()]
    return reduce(lambda a, b: a.unionByName(b), parts)


def frames(df):
    """The two columns, ``frame_id`` as long; pixels stay as stored (a cast would copy every array)."""
    from pyspark.sql import functions as F

    return df.select(F.col("frame_id").cast("long"), F.col("pixels"))


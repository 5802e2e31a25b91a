"""The job's batch and stream runs (:func:`run_job`: ``sfdf spark``; the package docstring says what it does)."""

from __future__ import annotations

import atexit
import json
import shutil
import sys
import tempfile
import time
from pathlib import Path

from sfdf.gen.errors import UserError

from . import storage
from .archive import prepare
from .boards import parse_device
from .config import DEFAULT_MASTER, Job, resource_conf, ship, spark_session
from .executor import process_partition
from .inputs import check_input, duplicates, frames, read_frames
from .report import summarise

__all__ = ["result_rows", "run_job"]


def run_job(spec, input_dir, output_dir, *, master: str = DEFAULT_MASTER, stream: bool = False,
            checkpoint=None, partitions: int | None = None, timeout_cycles: int | None = None,
            build_dir=None, kill_after: int | None = None, spark=None, device: str = "sim",
            board_dir=None, conf: dict[str, str] | None = None) -> dict:
    """Run the job (module docstring); return the summary that is also written to ``OUTPUT/summary.json``.

    ``partitions``: how many partitions (devices) the frames are spread over, round robin (default:
    Spark's split of the input files, which needs no shuffle). ``spark``: an existing session (tests);
    else one on ``master`` with ``conf`` added. ``device``, ``board_dir``: :mod:`sfdf.sw.spark.boards`.
    """
    choice = parse_device(device)
    if board_dir is not None and not choice.board:
        raise UserError(str(board_dir), "--board-dir", "is for boards, and --device is sim",
                        "add --device serial:PORT[,PORT...] or resource:fpga, or drop --board-dir")
    remote = storage.is_uri(input_dir)
    inputs = None if remote else check_input(input_dir)  # a local input is checked before anything starts
    if not storage.is_uri(output_dir):
        Path(output_dir).mkdir(parents=True, exist_ok=True)
    started = time.perf_counter()
    work = Path(tempfile.mkdtemp(prefix="sfdf-job-"))  # the driver's own: the generated design, its archive
    try:
        job = prepare(spec, work, build_dir, timeout_cycles, kill_after, choice, board_dir)
    except BaseException:  # a bad spec or board: nothing was shipped, so nothing needs the folder
        shutil.rmtree(work, ignore_errors=True)
        raise
    prepared = time.perf_counter()
    own = spark is None
    spark = spark or spark_session(master, conf={**resource_conf(choice), **(conf or {})})
    try:
        files, skipped, folder = inputs or check_input(input_dir, spark)
        if stream and not folder:
            raise UserError(str(input_dir), "--input", "is a file, and --stream watches a folder",
                            "give the folder the files arrive in, or drop --stream")
        for path, why in skipped:
            print(f"sfdf: warning: skipping {path}: {why}", file=sys.stderr)
        ship(spark, job)
        session_s = time.perf_counter() - prepared
        results = storage.join(output_dir, "results")
        begin = time.perf_counter()
        if stream:
            batches = _run_stream(spark, job, input_dir, files, results,
                                  checkpoint or storage.join(output_dir, "checkpoint"), partitions)
        else:
            result_rows(job, read_frames(spark, files), partitions, spark).write.mode("overwrite").parquet(results)
            batches = None
        wall = time.perf_counter() - begin
        summary = summarise(spark, job, results, wall, work / "summary.png")
        storage.put(work / "summary.png", storage.join(output_dir, "summary.png"), spark)
        summary.update({"skipped_files": [f"{path}: {why}" for path, why in skipped], "spec": str(spec),
                        "mode": "stream" if stream else "batch", "master": master, "batches": batches,
                        "device": device,
                        "prepare_s": round(prepared - started, 3), "session_s": round(session_s, 3)})
        (work / "summary.json").write_text(json.dumps(summary, indent=2) + "\n")
        storage.put(work / "summary.json", storage.join(output_dir, "summary.json"), spark)
    finally:
        if own:
            spark.stop()
            shutil.rmtree(work, ignore_errors=True)
        else:  # a shared session may still serve the archive to executors it starts later
            atexit.register(shutil.rmtree, work, ignore_errors=True)
    return summary


def result_rows(job: Job, df, partitions, spark):
    df, repeated = duplicates(job, df)
    if partitions:  # else Spark's split of the input files (no shuffle), one device per split
        df = df.repartition(partitions)
    schema = ", ".join(f"{name} {kind}" for name, kind in job.columns)
    return df.mapInArrow(lambda batches: process_partition(job, batches), schema).unionByName(repeated)


def _run_stream(spark, job, input_dir, files, results: str, checkpoint, partitions) -> int:
    # the folder is watched: files that are not Parquet are filtered by name, damaged ones skipped
    spark.conf.set("spark.sql.files.ignoreCorruptFiles", "true")
    schema = frames(spark.read.parquet(*files)).schema
    seen = []

    def write_batch(df, batch_id):
        result_rows(job, df, partitions, spark).write.mode("overwrite").parquet(f"{results}/batch={batch_id}")
        seen.append(batch_id)

    source = frames(spark.readStream.schema(schema).option("maxFilesPerTrigger", 1)
                     .option("pathGlobFilter", "*.parquet").parquet(str(input_dir)))
    query = (source.writeStream.foreachBatch(write_batch).option("checkpointLocation", str(checkpoint))
             .trigger(availableNow=True).start())
    query.awaitTermination()
    return len(seen)


"""``sfdf spark`` on a Spark standalone cluster started on this machine, against ``local[2]``, and with a
worker killed mid-job.

The cluster: a master and two workers started from the pyspark package (``spark-class
org.apache.spark.deploy.master.Master`` / ``...worker.Worker``), one core each, each worker in its own
work folder and its own process group; executors open the device from the archive the job ships
(:class:`sfdf.sw.spark.config.Job`), never from the driver's folders. Three jobs over the same VERITAS-like
frames: ``local[2]``, the cluster, and the cluster with one worker's process group (worker, executor,
Python workers) killed with SIGKILL once the job's first tasks have finished: Spark re-runs the lost
tasks on the other worker, and the results hold every frame exactly once (checked against numpy by
the job, and counted here). Writes docs/cluster.json and its table in docs/results.md (bench/results.py).

    .venv/bin/python bench/cluster.py [--frames 8000] [--tables]
"""

from __future__ import annotations

import argparse
import os
import sys
import tempfile
import threading
import time
from pathlib import Path

import pyarrow.parquet as pq

from sfdf.sw.spark.standalone import Cluster

from results import publish, table, tables_flag, tables_only

ROOT = Path(__file__).resolve().parents[1]
SPEC = str(ROOT / "examples" / "variance.toml")


def job(spark, master: str, data: Path, out: Path, label: str) -> dict:
    from sfdf.sw.spark.runs import run_job

    start = time.perf_counter()
    summary = run_job(SPEC, data, out, master=master, spark=spark)
    table = pq.read_table(out / "results", columns=["frame_id", "ok"]).to_pandas()
    row = {"run": label, "master": master, "frames": summary["frames"], "checked": summary["checked"],
           "mismatches": summary["mismatches"], "rows": len(table), "distinct": int(table["frame_id"].nunique()),
           "frames_per_s": summary["frames_per_s"], "job_s": round(time.perf_counter() - start, 2)}
    print(f"{label:<28} {row['frames']} frames, {row['checked']} checked, {row['rows']} rows "
          f"({row['distinct']} distinct), {row['frames_per_s']} frames/s")
    return row


def kill_when_tasks_done(spark, cluster: Cluster, done: threading.Event, record: dict) -> None:
    """Kill worker 0 as soon as the job has finished a task and still has some to run."""
    tracker = spark.sparkContext.statusTracker()
    while not done.is_set():
        for stage in tracker.getActiveStageIds():
            info = tracker.getStageInfo(stage)
            if info and info.numCompletedTasks >= 1 and info.numCompletedTasks < info.numTasks:
                cluster.kill_worker(0)
                record.update(killed_after_tasks=info.numCompletedTasks, of_tasks=info.numTasks)
                return
        time.sleep(0.05)


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--frames", type=int, default=8000)
    tables_flag(ap)
    args = ap.parse_args(argv)
    if tables_only(args, "cluster", sections):
        return 0
    from sfdf.sw.datasets import veritas, write_frames
    from sfdf.sw.spark.config import spark_session

    os.environ["SPARK_LOCAL_IP"] = "127.0.0.1"  # the driver, like the cluster, on this machine's loopback
    rows = []
    with tempfile.TemporaryDirectory(prefix="sfdf-cluster-") as tmp:
        tmp = Path(tmp)
        data = tmp / "in"
        write_frames(veritas(args.frames, seed=11), data, rows_per_file=250)
        spark = spark_session("local[2]")
        try:
            job(spark, "local[2]", data, tmp / "warm-local", "local[2] warm-up")
            rows.append(job(spark, "local[2]", data, tmp / "out-local", "local[2]"))
        finally:
            spark.stop()
        with Cluster(tmp / "cluster") as cluster:
            spark = spark_session(cluster.url)
            try:
                job(spark, cluster.url, data, tmp / "warm-cluster", "cluster warm-up")
                rows.append(job(spark, cluster.url, data, tmp / "out-cluster", "cluster, 2 workers"))
                done, record = threading.Event(), {}
                killer = threading.Thread(target=kill_when_tasks_done, args=(spark, cluster, done, record))
                killer.start()
                try:
                    rows.append({**job(spark, cluster.url, data, tmp / "out-kill", "cluster, worker 0 killed"),
                                 **record})
                finally:
                    done.set()
                    killer.join()
            finally:
                spark.stop()
    for row in rows:
        assert row["rows"] == row["distinct"] == row["frames"] == row["checked"] == args.frames, row
    ratio = rows[1]["frames_per_s"] / rows[0]["frames_per_s"]
    print(f"cluster / local[2]: {ratio:.2f}; the killed worker's tasks were re-run: every frame exactly once")
    publish("cluster", {"frames": args.frames, "runs": rows, "cluster_over_local": round(ratio, 3)}, sections)
    return 0


def sections(data: dict) -> dict[str, str]:
    """docs/results.md's cluster table (bench/results.py)."""
    rows = [[r["run"], f"{r['frames']:,}", f"{r['checked']:,}", f"{r['rows']:,} ({r['distinct']:,} distinct)",
             f"{r['frames_per_s']:,.0f}"] for r in data["runs"]]
    return {"cluster table": f"{data['frames']:,} VERITAS-like frames per job:\n\n" + table(
        ["job", "frames", "checked", "result rows", "frames/s"], rows, "lrrrr")}


if __name__ == "__main__":
    sys.exit(main())

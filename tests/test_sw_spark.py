"""The Spark job (sw/spark/) on the real simulated device: batch and stream, bad input, replay, a killed device.

Every result row is re-checked here against numpy from the input, independently of the job's own check.
One Spark session (local[2,4]: two cores, four attempts per task) serves the module.
"""

from __future__ import annotations

import shutil

import numpy as np
import pyarrow as pa
import pyarrow.parquet as pq
import pytest

from sfdf.gen.errors import UserError
from sfdf.sw.datasets import digits, veritas, write_frames
from sfdf.sw.spark.config import spark_session
from sfdf.sw.spark.inputs import check_input
from sfdf.sw.spark.runs import run_job

pytestmark = pytest.mark.spark


@pytest.fixture(scope="module")
def spark():
    session = spark_session("local[2,4]")
    yield session
    session.stop()


@pytest.fixture(scope="module")
def frames():
    """300 real digits and 100 VERITAS-like frames (ids 10000+), a few all zero."""
    return digits()[:300] + [(10_000 + k, p) for k, p in veritas(100, seed=3)]


def results_of(out):
    table = pq.read_table(out / "results").to_pandas()
    return table.sort_values("frame_id").reset_index(drop=True)


def check_against_numpy(table, frames):
    by_id = dict(frames)
    assert sorted(table["frame_id"]) == sorted(by_id)  # each frame exactly once
    for row in table.itertuples():
        pixels = np.asarray(by_id[row.frame_id], dtype=np.uint64)
        assert (row.n, row.sum, row.sum_sq) == (pixels.size, int(pixels.sum()), int((pixels * pixels).sum()))
        assert row.variance == pytest.approx(np.var(pixels.astype(float)), rel=1e-9, abs=1e-9)
        assert row.ok and row.error is None and row.cycles > 0


def test_batch_checks_every_frame(spark, frames, tmp_path):
    write_frames(frames, tmp_path / "in", rows_per_file=150)
    summary = run_job("examples/variance.toml", tmp_path / "in", tmp_path / "out", spark=spark, partitions=3)
    assert (summary["frames"], summary["checked"], summary["mismatches"], summary["duplicates"]) == (400, 400, 0, 0)
    check_against_numpy(results_of(tmp_path / "out"), frames)
    assert (tmp_path / "out" / "summary.png").stat().st_size > 10_000
    assert summary["cycles_per_frame_median"] >= 64


def test_bad_frames_are_quarantined_with_reasons(spark, frames, tmp_path):
    bad = {9001: [1, -2, 3], 9002: [70_000], 9003: [], 9004: None, 9005: [1, None]}
    good = frames[:40]
    table = pa.table({"frame_id": [f for f, _ in good] + list(bad),
                      "pixels": [p.tolist() for _, p in good] + list(bad.values())},
                     schema=pa.schema([("frame_id", pa.int64()), ("pixels", pa.list_(pa.int64()))]))
    (tmp_path / "in").mkdir()
    pq.write_table(table, tmp_path / "in" / "mixed.parquet")
    summary = run_job("examples/variance.toml", tmp_path / "in", tmp_path / "out", spark=spark)
    assert (summary["frames"], summary["checked"], summary["quarantined"], summary["mismatches"]) == (45, 40, 5, 0)
    result = results_of(tmp_path / "out")
    reasons = dict(zip(result["frame_id"], result["error"], strict=True))
    assert reasons[9001] == "bad input: pixel 1 is negative (-2)"
    assert reasons[9002] == "bad input: pixel 0 is 70000, wider than the 16-bit source port"
    assert reasons[9003] == "bad input: empty frame: a frame needs at least one pixel"
    assert reasons[9004] == "bad input: pixels is null"
    assert reasons[9005] == "bad input: some pixel is null"
    check_against_numpy(result[result["ok"]], [f for f in frames[:40]])


def test_wrong_schema_is_a_clear_error(tmp_path):
    (tmp_path / "in").mkdir()
    pq.write_table(pa.table({"id": [1], "pixels": [[1, 2]]}), tmp_path / "in" / "x.parquet")
    with pytest.raises(UserError, match=r"in: --input: holds no usable Parquet files \(skipped 1: x.parquet has "
                                         r"columns id: int64, pixels: list<element: int64>, not frame_id: long, "
                                         r"pixels: array<int>\); give Parquet files"):
        check_input(tmp_path / "in")
    with pytest.raises(UserError, match=r"none: --input: does not exist"):
        check_input(tmp_path / "none")


def test_stray_files_are_skipped_and_duplicates_quarantined(spark, frames, tmp_path, capsys):
    """A stray text file, a damaged Parquet file and one with other columns are reported and skipped;
    a frame_id given twice (same pixels or not) is not run: one quarantined row says so (README, "Host
    side"); the good frames are all checked, exactly once."""
    good = frames[:60]
    write_frames(good, tmp_path / "in", rows_per_file=30)
    (tmp_path / "in" / "notes.txt").write_text("not a frame\n")
    (tmp_path / "in" / "broken.parquet").write_bytes(b"PAR1" + bytes(100))
    pq.write_table(pa.table({"id": [1]}), tmp_path / "in" / "other.parquet")
    (tmp_path / "in" / ".hidden").write_text("ignored like Spark does")
    twice = {good[0][0]: good[0][1].tolist(), good[1][0]: [1, 2, 3]}  # the same pixels, and other pixels
    pq.write_table(pa.table({"frame_id": list(twice), "pixels": list(twice.values())},
                            schema=pa.schema([("frame_id", pa.int64()), ("pixels", pa.list_(pa.int64()))])),
                   tmp_path / "in" / "again.parquet")
    summary = run_job("examples/variance.toml", tmp_path / "in", tmp_path / "out", spark=spark)
    assert len(summary["skipped_files"]) == 3
    assert {line.split(":")[0].rsplit("/", 1)[-1] for line in summary["skipped_files"]} == {
        "notes.txt", "broken.parquet", "other.parquet"}
    assert (summary["frames"], summary["checked"], summary["quarantined"], summary["mismatches"],
            summary["duplicates"]) == (60, 58, 2, 0, 0)
    result = results_of(tmp_path / "out")
    reasons = dict(zip(result["frame_id"], result["error"], strict=True))
    assert reasons[good[0][0]] == reasons[good[1][0]] == "bad input: frame_id given 2 times in the input"
    check_against_numpy(result[result["ok"]], good[2:])
    assert capsys.readouterr().err.count("sfdf: warning: skipping") == 3


def test_one_parquet_file_is_an_input(spark, frames, tmp_path):
    write_frames(frames[:20], tmp_path / "in", rows_per_file=20)
    (only,) = sorted((tmp_path / "in").glob("*.parquet"))
    summary = run_job("examples/variance.toml", only, tmp_path / "out", spark=spark)
    assert (summary["frames"], summary["checked"]) == (20, 20)
    with pytest.raises(UserError, match="--stream watches a folder"):
        run_job("examples/variance.toml", only, tmp_path / "out2", spark=spark, stream=True)


def test_stream_is_idempotent_under_replay(spark, frames, tmp_path):
    write_frames(frames, tmp_path / "in", rows_per_file=100)  # 4 files: 4 micro-batches
    out = tmp_path / "out"
    summary = run_job("examples/variance.toml", tmp_path / "in", out, stream=True, spark=spark)
    assert (summary["batches"], summary["frames"], summary["checked"], summary["duplicates"]) == (4, 400, 400, 0)
    # Forget that the last micro-batch was committed: the restarted query replays it.
    commits = sorted((p for p in (out / "checkpoint" / "commits").iterdir() if p.name.isdigit()),
                     key=lambda p: int(p.name))
    commits[-1].unlink()
    (commits[-1].parent / f".{commits[-1].name}.crc").unlink(missing_ok=True)
    replayed = run_job("examples/variance.toml", tmp_path / "in", out, stream=True, spark=spark)
    assert replayed["batches"] == 1 and (replayed["frames"], replayed["duplicates"]) == (400, 0)
    check_against_numpy(results_of(out), frames)


def test_a_killed_device_is_retried_and_nothing_doubles(spark, frames, tmp_path):
    write_frames(frames, tmp_path / "in", rows_per_file=400)
    tracker = spark.sparkContext.statusTracker()
    before = set(tracker.getJobIdsForGroup())
    summary = run_job("examples/variance.toml", tmp_path / "in", tmp_path / "out", spark=spark, partitions=2,
                      kill_after=50)
    failed = sum(tracker.getStageInfo(s).numFailedTasks for j in set(tracker.getJobIdsForGroup()) - before
                 for s in tracker.getJobInfo(j).stageIds if tracker.getStageInfo(s))
    assert failed >= 1  # the first attempt of partition 0 lost its device
    assert (summary["frames"], summary["checked"], summary["duplicates"]) == (400, 400, 0)
    check_against_numpy(results_of(tmp_path / "out"), frames)


def test_other_specs_are_checked_against_the_model(spark, tmp_path):
    """A network of user kernels (examples/kernels/hillas.toml: Verilog, Amaranth, and their goldens), each
    frame's results against the goldens' reference model."""
    words = [(k, np.random.default_rng(k).integers(0, 1 << 9, 1 + k % 70)) for k in range(60)]
    write_frames(words, tmp_path / "in")
    summary = run_job("examples/kernels/hillas.toml", tmp_path / "in", tmp_path / "out", spark=spark, partitions=2)
    assert (summary["frames"], summary["checked"], summary["mismatches"]) == (60, 60, 0)
    shutil.rmtree(tmp_path / "out")


@pytest.mark.heavy
def test_executors_open_the_shipped_harness_only(spark, frames, tmp_path):
    """A cluster's executors see neither the driver's build folder nor its work folder: the job ships the
    manifest, Verilog and built harness as one archive (SparkContext.addArchive). With both folders
    deleted after packing, every frame is still run and checked, and nothing is rebuilt."""
    import shutil

    from sfdf.sw.spark.archive import prepare
    from sfdf.sw.spark.config import ship
    from sfdf.sw.spark.inputs import read_frames
    from sfdf.sw.spark.runs import result_rows

    write_frames(frames[:40], tmp_path / "in", rows_per_file=20)
    job = prepare("examples/variance.toml", tmp_path / "work", tmp_path / "fastsim")
    shutil.rmtree(tmp_path / "fastsim")
    shutil.rmtree(tmp_path / "work" / "rtl")
    ship(spark, job)
    rows = result_rows(job, read_frames(spark, check_input(tmp_path / "in")[0]), 2, spark).toPandas()
    assert len(rows) == 40 and rows["ok"].all()
    assert not (tmp_path / "fastsim").exists()  # no executor rebuilt it where the driver had it


def test_input_and_output_as_hadoop_uris(spark, frames, tmp_path):
    """``file:`` URIs go through Hadoop's file system (as hdfs:// or s3a:// would): the files are listed and
    checked by Spark, a stray file is skipped, and summary.json and summary.png are stored by Hadoop."""
    import json

    write_frames(frames[:30], tmp_path / "in", rows_per_file=15)
    (tmp_path / "in" / "notes.txt").write_text("stray")
    summary = run_job("examples/variance.toml", f"file://{tmp_path / 'in'}", f"file://{tmp_path / 'out'}",
                      spark=spark)
    assert (summary["frames"], summary["checked"], len(summary["skipped_files"])) == (30, 30, 1)
    assert json.loads((tmp_path / "out" / "summary.json").read_text())["checked"] == 30
    assert (tmp_path / "out" / "summary.png").stat().st_size > 10_000
    check_against_numpy(results_of(tmp_path / "out"), frames[:30])

"""``sfdf spark``: stream input frames from Spark through the device and check every output (docs/architecture.md).

Input: Parquet ``frame_id: long, pixels: array<int>`` in a directory or one file, a local path or a Hadoop
URI (``file:/``, ``hdfs://``, ``s3a://``: read and written only through Spark and Hadoop's file system,
:mod:`sfdf.sw.storage`). Each Spark partition opens one device (:func:`sfdf.sw.device.open_device`: by
default the fast simulated device, the driver building the harness once and executors loading the cached
build; or a board, ``device = serial:PORT,...`` or ``resource:fpga`` with the folder ``sfdf build -o DIR``
wrote, one board per task: :mod:`sfdf.sw.boards`) and sends its frames in order through
:meth:`sfdf.sw.device.Device.stream`, inside ``mapInArrow`` so frames travel as Arrow batches, never row by
row through the JVM. Every frame gets exactly one result row: a bad frame is quarantined with its reason
(``ok = false``, :mod:`sfdf.sw.checks`), a good one is checked (the variance network against numpy, any other spec against the reference model).
Output: Parquet under ``OUTPUT/results`` (the variance network's columns ``frame_id, n, sum, sum_sq,
variance, ok`` plus ``error, cycles, zeros``), ``OUTPUT/summary.json`` and ``OUTPUT/summary.png``.

Batch mode writes the results through Spark's commit protocol, so a task that dies (a killed device)
and is retried leaves exactly one copy of each frame; the master defaults to ``local[*,4]``
(``local[*]`` with four attempts per task, as a cluster would retry). ``--stream`` reads the input
directory with Structured Streaming (``trigger(availableNow=True)``: every file there now, then stop),
with a checkpoint, and writes each micro-batch with ``foreachBatch`` into ``results/batch=<id>`` in
overwrite mode: a replayed batch rewrites its own directory, so it changes nothing.
"""

from __future__ import annotations

import atexit
import hashlib
import json
import os
import shutil
import signal
import sys
import tarfile
import tempfile
import time
from dataclasses import dataclass
from functools import reduce
from importlib.resources import files
from pathlib import Path

import numpy as np

from sfdf.gen.errors import UserError

from .boards import RESOURCE, DeviceChoice, claim, parse_device
from .checks import ModelChecker, batch_frames, frame_problem, variance_check

#: The default device: the fast simulated one.
SIM = DeviceChoice("sim")

__all__ = ["DEFAULT_MASTER", "DEFAULT_SPEC", "Job", "prepare", "run_job", "spark_session"]

#: The shipped main job: 000 Fig. 1, package data of :mod:`sfdf.examples`.
DEFAULT_SPEC = Path(str(files("sfdf.examples") / "variance.toml"))
#: ``local[*]`` with up to 4 attempts per task (local mode retries nothing unless told).
DEFAULT_MASTER = "local[*,4]"
#: Frames per Arrow batch handed to a partition.
BATCH_ROWS = 256

VARIANCE_COLUMNS = [("frame_id", "long"), ("n", "long"), ("sum", "long"), ("sum_sq", "long"),
                    ("variance", "double"), ("ok", "boolean"), ("error", "string"), ("cycles", "long"),
                    ("zeros", "double")]
GENERIC_COLUMNS = [("frame_id", "long"), ("outputs", "string"), ("ok", "boolean"), ("error", "string"),
                   ("cycles", "long"), ("zeros", "double")]


@dataclass(frozen=True)
class Job:
    """What every partition needs (pickled to the executors).

    Members
    -------
    harness : str
        The archive :func:`prepare` packed on the driver (the manifest, its Verilog and the built fast
        harness); :func:`run_job` ships it with ``SparkContext.addArchive`` under :attr:`shipped`, so an
        executor on another machine, which sees neither the driver's build folder nor its /tmp, opens the
        device from its own unpacked copy and never rebuilds.
    manifest : str
        The manifest's path inside the archive.
    network : gen.model.Network
        The resolved network (the model checks non-variance specs against it).
    variance : bool
        The sink is a ``variance_join``: check against numpy.
    pixel_bits : int
        The source port's ``tdata`` width.
    timeout_cycles : int or None
        Cycle budget of one frame on the device (``None``: the device's default, 1,000,000 simulated cycles
        or two seconds of a board's clock, thirty of a simulated board's).
    kill_after : int or None
        Testing only: the first attempt of partition 0 kills its simulated device after sending this many
        frames.
    device : DeviceChoice
        Which device a partition opens (:mod:`sfdf.sw.boards`); for a board the archive holds the manifest
        and ``<name>.board.json`` of its ``sfdf build`` folder instead of a harness.
    """

    harness: str
    manifest: str
    network: object
    variance: bool
    pixel_bits: int
    timeout_cycles: int | None = None
    kill_after: int | None = None
    device: DeviceChoice = SIM

    @property
    def shipped(self) -> str:
        """The archive's name among the job's files (unique per design: one session runs many)."""
        return Path(self.harness).name.removesuffix(".tar.gz")

    def open(self):
        """The device, on an executor: from the shipped archive (:class:`Job`)."""
        from pyspark import SparkFiles

        from sfdf.sw.device import open_device

        root = Path(SparkFiles.get(self.shipped))
        manifest = root / self.manifest
        if not self.device.board:
            return open_device(manifest, build_dir=root / "fastsim", timeout_cycles=self.timeout_cycles)

        def board(port: str):
            return open_device(manifest, backend=f"serial:{port}", timeout_cycles=self.timeout_cycles)

        from pyspark import TaskContext

        from .results import DeviceError

        context = TaskContext.get()
        if self.device.kind == "serial":
            return claim(board, self.device.ports, first=context.partitionId() if context else 0)
        given = context.resources().get(RESOURCE) if context else None
        if given is None or not given.addresses:
            raise DeviceError(f"the task was given no {RESOURCE} resource: workers need "
                              f"spark.worker.resource.{RESOURCE}.amount and its discoveryScript, the job "
                              f"spark.executor.resource.{RESOURCE}.amount (README, \"Boards\")")
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

    @property
    def columns(self) -> list[tuple[str, str]]:
        return VARIANCE_COLUMNS if self.variance else GENERIC_COLUMNS


def prepare(spec, work_dir, build_dir=None, timeout_cycles: int | None = None, kill_after: int | None = None,
            device: DeviceChoice = SIM, board_dir=None) -> Job:
    """Check and generate ``spec`` into ``work_dir`` and build its fast harness once, on the driver, into
    the cache ``build_dir`` (default ``build/fastsim``; builds are keyed by content, so runs share them).

    With a board ``device``, nothing is built: the archive holds ``board_dir``'s manifest and board facts,
    and the manifest must be the one the spec generates (the boards run this network, no other).

    Raises
    ------
    UserError
        The spec is unsafe or has other than one source (the Parquet has one pixel column), or the boards
        were built from another network.
    """
    from sfdf.cosim.cache import BuildCache
    from sfdf.cosim.fastbuild import build
    from sfdf.gen.analysis import check
    from sfdf.gen.spec import load_spec
    from sfdf.hdl.generate import generate

    network = load_spec(spec)
    if len(network.sources) != 1:
        raise UserError(str(spec), "node", f"{len(network.sources)} sources ({', '.join(network.sources)})",
                        "the Spark job feeds one source from the pixels column: use a spec with one source")
    report = check(network)
    if not report.deadlock_free:
        raise UserError(str(spec), "network", "is not deadlock-free (sfdf check says why)",
                        "fix the spec until sfdf check passes; the job runs safe networks only")
    v_path, j_path = generate(network, Path(work_dir) / "rtl", report=report)
    manifest = json.loads(j_path.read_text())
    if device.board:
        files = _board_files(spec, manifest, board_dir)
        key = hashlib.sha256(b"".join(path.read_bytes() for path in files)).hexdigest()[:16]
        harness = Path(work_dir) / f"sfdf-board-{key}.tar.gz"
        with tarfile.open(harness, "w:gz") as archive:
            for path in files:
                archive.add(path, f"rtl/{path.name}")
    else:
        library = build(v_path, manifest, Path(build_dir or "build/fastsim"))
        harness = Path(work_dir) / f"sfdf-harness-{library.parent.name}.tar.gz"
        with tarfile.open(harness, "w:gz") as archive:  # what an executor needs, nothing of the build's objects
            for path in (v_path, j_path):
                archive.add(path, f"rtl/{path.name}")
            for path in sorted(library.parent.iterdir()):
                if path.is_file() and path.name != BuildCache.LOCK:
                    archive.add(path, f"fastsim/{library.parent.name}/{path.name}")
    (source,) = [p for p in manifest["ports"] if p["direction"] == "in"]
    sinks = [p for p in manifest["ports"] if p["direction"] == "out"]
    return Job(str(harness.resolve()), f"rtl/{j_path.name}", report.network,
               len(sinks) == 1 and sinks[0]["kernel"] == "variance_join", source["tdata_width"],
               timeout_cycles, kill_after, device)


def _board_files(spec, manifest: dict, board_dir) -> list[Path]:
    """The manifest and board facts in ``board_dir`` (``sfdf build -o DIR``), which must hold ``manifest``."""
    if board_dir is None:
        raise UserError(str(spec), "--board-dir", "is missing: a board device needs the folder sfdf build wrote",
                        "give --board-dir DIR (sfdf build SPEC --board B -o DIR)")
    from sfdf.boards.facts import board_facts_path

    folder = Path(board_dir)
    built, facts = folder / f"{manifest['name']}.json", board_facts_path(folder, manifest["name"])
    if not (built.is_file() and facts.is_file()):
        raise UserError(str(folder), "--board-dir", f"holds no {built.name} and {facts.name} of network "
                        f"{manifest['name']!r}", "give the folder sfdf build -o DIR wrote for this spec")
    if json.loads(built.read_text()) != manifest:
        raise UserError(str(folder), "--board-dir", f"was built from another version of {manifest['name']!r} "
                        f"(its {built.name} differs from what {Path(spec).name} generates)",
                        "rebuild the boards from this spec, or give the spec they were built from")
    return [built, facts]


# -- executors ----------------------------------------------------------------------------------------------

def process_partition(job: Job, batches):
    """``mapInArrow`` body: Arrow batches of ``frame_id, pixels`` in, result batches out (module docstring)."""
    import pyarrow as pa

    types = {"long": pa.int64(), "double": pa.float64(), "boolean": pa.bool_(), "string": pa.string()}
    schema = pa.schema([(name, types[kind]) for name, kind in job.columns])
    kill_at = job.kill_after if job.kill_after is not None and _first_attempt_of_partition_zero() else None
    checker = None if job.variance else ModelChecker(job.network)
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
                    device = job.open()
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


def _row(job: Job, frame_id, pixels, *, error=None, cycles=None) -> dict:
    row = dict.fromkeys(name for name, _ in job.columns)
    zeros = float(np.mean(np.asarray(pixels) == 0)) if pixels is not None and len(pixels) else None
    row.update(frame_id=frame_id, ok=False, error=error, cycles=cycles, zeros=zeros)
    return row


def _first_attempt_of_partition_zero() -> bool:
    from pyspark import TaskContext

    ctx = TaskContext.get()
    return ctx is not None and ctx.partitionId() == 0 and ctx.attemptNumber() == 0


# -- the driver -----------------------------------------------------------------------------------------------

def _resource_conf(choice: DeviceChoice) -> dict[str, str]:
    """``resource:fpga``: one board per task, one per executor unless the user's ``conf`` says otherwise."""
    if choice.kind != "resource":
        return {}
    return {f"spark.task.resource.{RESOURCE}.amount": "1", f"spark.executor.resource.{RESOURCE}.amount": "1"}


def spark_session(master: str = DEFAULT_MASTER, app: str = "sfdf", conf: dict[str, str] | None = None):
    """A session whose Python workers run this interpreter; Arrow on; Spark's console progress bar on;
    ``conf`` added to the builder."""
    os.environ["PYSPARK_PYTHON"] = sys.executable
    os.environ["PYSPARK_DRIVER_PYTHON"] = sys.executable
    if master.startswith("local"):
        os.environ.setdefault("SPARK_LOCAL_IP", "127.0.0.1")  # no guessing which interface to bind
    from pyspark.sql import SparkSession

    builder = (SparkSession.builder.master(master).appName(app)
             .config("spark.ui.enabled", "false")
             .config("spark.ui.showConsoleProgress", "true")
             .config("spark.sql.execution.arrow.maxRecordsPerBatch", str(BATCH_ROWS))
             .config("spark.sql.shuffle.partitions", "8")
             .config("spark.driver.memory", "2g")
             .config("spark.pyspark.python", sys.executable))  # a cluster's executors too
    for key, value in (conf or {}).items():
        builder = builder.config(key, value)
    spark = builder.getOrCreate()
    spark.sparkContext.setLogLevel("ERROR")
    # Input splits: two per core, so cores stay busy while unequal splits finish (no shuffle needed).
    spark.conf.set("spark.sql.files.minPartitionNum", str(2 * spark.sparkContext.defaultParallelism))
    return spark


def ship(spark, job: Job) -> None:
    """Add the job's archive to the session (once per design: Spark refuses a name twice, and the
    content behind a name is the build key's)."""
    context = spark.sparkContext
    if not any(Path(entry.split("#")[0]).name == Path(job.harness).name for entry in context.listArchives):
        context.addArchive(f"{job.harness}#{job.shipped}")


def check_input(location, spark=None) -> tuple[dict[str, str], list[tuple[str, str]], bool]:
    """The usable Parquet files at ``location`` (docs/architecture.md's columns; :func:`sfdf.sw.storage.parquet_inputs`)
    with their pixels' element type, the skipped ones with why, and whether it is a folder; a one-line
    :class:`UserError` when nothing is there or no file is usable: nothing would run."""
    from .storage import parquet_inputs

    try:
        good, skipped, folder = parquet_inputs(location, spark)
    except FileNotFoundError:
        raise UserError(str(location), "--input", "does not exist",
                        "give a Parquet file or a folder of them (python -m sw.datasets digits DIR writes one)") from None
    if not good:
        why = f" (skipped {len(skipped)}: {Path(skipped[0][0]).name} {skipped[0][1]})" if skipped else ""
        raise UserError(str(location), "--input", f"holds no usable Parquet files{why}",
                        "give Parquet files with frame_id: long, pixels: array<int> "
                        "(python -m sw.datasets digits DIR writes one)")
    return good, skipped, folder


def _duplicates(job: Job, df):
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


def run_job(spec, input_dir, output_dir, *, master: str = DEFAULT_MASTER, stream: bool = False,
            checkpoint=None, partitions: int | None = None, timeout_cycles: int | None = None,
            build_dir=None, kill_after: int | None = None, spark=None, device: str = "sim",
            board_dir=None, conf: dict[str, str] | None = None) -> dict:
    """Run the job (module docstring); return the summary that is also written to ``OUTPUT/summary.json``.

    ``partitions``: how many partitions (devices) the frames are spread over, round robin (default:
    Spark's split of the input files, which needs no shuffle). ``spark``: an existing session (tests);
    else one on ``master`` with ``conf`` added. ``device``, ``board_dir``: :mod:`sfdf.sw.boards`.
    """
    from . import storage

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
    spark = spark or spark_session(master, conf={**_resource_conf(choice), **(conf or {})})
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
            _results(job, _read_frames(spark, files), partitions, spark).write.mode("overwrite").parquet(results)
            batches = None
        wall = time.perf_counter() - begin
        summary = _summarise(spark, job, results, wall, work / "summary.png")
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


def _read_frames(spark, files: dict[str, str]):
    """The frames of ``files`` (path -> pixels' element type, :func:`check_input`); files whose pixels have
    different integer types (int32 beside int64) are read apart and their pixels widened to long, which
    Spark's one-schema read of them all cannot do."""
    from pyspark.sql import functions as F

    kinds: dict[str, list[str]] = {}
    for path, kind in files.items():
        kinds.setdefault(kind, []).append(path)
    if len(kinds) == 1:
        return _frames(spark.read.parquet(*files))
    parts = [_frames(spark.read.parquet(*paths)).withColumn("pixels", F.col("pixels").cast("array<bigint>"))
             for paths in kinds.values()]
    return reduce(lambda a, b: a.unionByName(b), parts)


def _frames(df):
    """The two columns, ``frame_id`` as long; pixels stay as stored (a cast would copy every array)."""
    from pyspark.sql import functions as F

    return df.select(F.col("frame_id").cast("long"), F.col("pixels"))


def _results(job: Job, df, partitions, spark):
    df, repeated = _duplicates(job, df)
    if partitions:  # else Spark's split of the input files (no shuffle), one device per split
        df = df.repartition(partitions)
    schema = ", ".join(f"{name} {kind}" for name, kind in job.columns)
    return df.mapInArrow(lambda batches: process_partition(job, batches), schema).unionByName(repeated)


def _run_stream(spark, job, input_dir, files, results: str, checkpoint, partitions) -> int:
    # the folder is watched: files that are not Parquet are filtered by name, damaged ones skipped
    spark.conf.set("spark.sql.files.ignoreCorruptFiles", "true")
    schema = _frames(spark.read.parquet(*files)).schema
    seen = []

    def write_batch(df, batch_id):
        _results(job, df, partitions, spark).write.mode("overwrite").parquet(f"{results}/batch={batch_id}")
        seen.append(batch_id)

    source = _frames(spark.readStream.schema(schema).option("maxFilesPerTrigger", 1)
                     .option("pathGlobFilter", "*.parquet").parquet(str(input_dir)))
    query = (source.writeStream.foreachBatch(write_batch).option("checkpointLocation", str(checkpoint))
             .trigger(availableNow=True).start())
    query.awaitTermination()
    return len(seen)


def _summarise(spark, job: Job, results: str, wall: float, png: Path) -> dict:
    from pyspark.sql import functions as F

    df = spark.read.parquet(results)
    row = df.agg(
        F.count("*").alias("frames"),
        F.countDistinct("frame_id").alias("distinct"),
        F.sum(F.col("ok").cast("int")).alias("checked"),
        F.sum(F.col("error").startswith("bad input").cast("int")).alias("quarantined"),
        F.sum((~F.col("ok") & ~F.col("error").startswith("bad input")).cast("int")).alias("mismatches"),
        F.mean("cycles").alias("cycles_mean"),
        F.percentile_approx("cycles", 0.5).alias("cycles_median"),
    ).first()
    frames = row["frames"]
    columns = ["zeros", "cycles"] + (["variance"] if job.variance else [])
    sample = df.where(F.col("ok")).select(*columns).limit(20000).toPandas()
    plot(sample, png, job.variance)
    return {
        "frames": frames, "duplicates": frames - row["distinct"], "checked": row["checked"] or 0,
        "quarantined": row["quarantined"] or 0, "mismatches": row["mismatches"] or 0,
        "frames_per_s": round(frames / wall, 1) if wall else None, "wall_s": round(wall, 3),
        "cycles_per_frame_mean": row["cycles_mean"], "cycles_per_frame_median": row["cycles_median"],
    }


def plot(sample, path: Path, variance: bool) -> None:
    """Variance and simulated cycles per frame against sparsity (zero pixels), from checked rows."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    panels = 2 if variance else 1
    fig, axes = plt.subplots(1, panels, figsize=(5 * panels, 3.6), squeeze=False)
    zeros = 100 * sample["zeros"]
    if variance:
        axes[0][0].scatter(zeros, sample["variance"], s=4, alpha=0.5)
        axes[0][0].set_yscale("symlog")
        axes[0][0].set_xlabel("zero pixels (%)")
        axes[0][0].set_ylabel("variance (device, checked)")
    ax = axes[0][-1]
    ax.scatter(zeros, sample["cycles"], s=4, alpha=0.5, color="C1")
    ax.set_xlabel("zero pixels (%)")
    ax.set_ylabel("simulated cycles per frame")
    fig.suptitle(f"sfdf spark: {len(sample)} checked frames")
    fig.tight_layout()
    fig.savefig(path, dpi=110)
    plt.close(fig)

"""The Spark job's configuration: its defaults, the :class:`Job` every partition gets, and the session."""

from __future__ import annotations

import os
import re
import sys
from dataclasses import dataclass
from importlib.resources import files
from pathlib import Path

from sfdf.gen.errors import UserError

from .boards import RESOURCE, DeviceChoice

__all__ = ["BATCH_ROWS", "DEFAULT_MASTER", "DEFAULT_SPEC", "GENERIC_COLUMNS", "SIM", "VARIANCE_COLUMNS", "Job",
           "check_master", "resource_conf", "ship", "spark_session"]

#: The default device: the fast simulated one.
SIM = DeviceChoice("sim")

#: The shipped main job: 000 Fig. 1, package data of :mod:`sfdf.examples`.
DEFAULT_SPEC = Path(str(files("sfdf.examples") / "variance.toml"))

#: ``local[*]`` with up to 4 attempts per task (local mode retries nothing unless told).
DEFAULT_MASTER = "local[*,4]"

#: The master URLs Spark 4 takes (its "Master URLs" table): local, local[N|*], local[N|*,F], local-cluster[...],
#: spark://HOST:PORT[,HOST:PORT...], yarn, k8s://URL.
MASTER = re.compile(r"local(\[(\*|[1-9][0-9]*)(,[1-9][0-9]*)?\])?|local-cluster\[[0-9]+, *[0-9]+, *[0-9]+\]"
                    r"|spark://[^\s/,:]+(:[0-9]+)?(,[^\s/,:]+(:[0-9]+)?)*|yarn|k8s://\S+")


def check_master(master: str) -> str:
    """``master`` if Spark takes it, else a one-line :class:`UserError` (before the JVM starts, whose own
    error is a Java stack)."""
    if not MASTER.fullmatch(master):
        raise UserError(master, "--master", "is not a Spark master URL",
                        "use local[*], local[N], local[N,RETRIES], spark://HOST:PORT, yarn or k8s://https://HOST:PORT")
    return master


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
        Which device a partition opens (:mod:`sfdf.sw.spark.boards`, :func:`sfdf.sw.spark.executor.open_device_of`); for a board the archive holds the manifest
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

    @property
    def columns(self) -> list[tuple[str, str]]:
        return VARIANCE_COLUMNS if self.variance else GENERIC_COLUMNS


def resource_conf(choice: DeviceChoice) -> dict[str, str]:
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


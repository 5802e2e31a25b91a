"""The Spark wing, ``sfdf spark``: stream input frames from Spark through the device and check every output (docs/architecture.md).

Input: Parquet ``frame_id: long, pixels: array<int>`` in a directory or one file, a local path or a Hadoop
URI (``file:/``, ``hdfs://``, ``s3a://``: read and written only through Spark and Hadoop's file system,
:mod:`sfdf.sw.spark.storage`). Each Spark partition opens one device (:func:`sfdf.sw.device.open_device`: by
default the fast simulated device, the driver building the harness once and executors loading the cached
build; or a board, ``device = serial:PORT,...`` or ``resource:fpga`` with the folder ``sfdf build -o DIR``
wrote, one board per task: :mod:`sfdf.sw.spark.boards`) and sends its frames in order through
:meth:`sfdf.sw.device.Device.stream`, inside ``mapInArrow`` so frames travel as Arrow batches, never row by
row through the JVM. Every frame gets exactly one result row: a bad frame is quarantined with its reason
(``ok = false``, :mod:`sfdf.sw.spark.checks`), a good one is checked (the variance network against numpy, any other spec against the reference model).
Output: Parquet under ``OUTPUT/results`` (the variance network's columns ``frame_id, n, sum, sum_sq,
variance, ok`` plus ``error, cycles, zeros``), ``OUTPUT/summary.json`` and ``OUTPUT/summary.png``.

Batch mode writes the results through Spark's commit protocol, so a task that dies (a killed device)
and is retried leaves exactly one copy of each frame; the master defaults to ``local[*,4]``
(``local[*]`` with four attempts per task, as a cluster would retry). ``--stream`` reads the input
directory with Structured Streaming (``trigger(availableNow=True)``: every file there now, then stop),
with a checkpoint, and writes each micro-batch with ``foreachBatch`` into ``results/batch=<id>`` in
overwrite mode: a replayed batch rewrites its own directory, so it changes nothing.

Modules, one job each: :mod:`~sfdf.sw.spark.config` (defaults, the :class:`~sfdf.sw.spark.config.Job`, the
session), :mod:`~sfdf.sw.spark.archive` (what is shipped to executors), :mod:`~sfdf.sw.spark.executor` (the
partition executor), :mod:`~sfdf.sw.spark.inputs` (input checks and reads), :mod:`~sfdf.sw.spark.checks`
(each output checked), :mod:`~sfdf.sw.spark.runs` (batch and stream runs), :mod:`~sfdf.sw.spark.report`
(summary and plot), :mod:`~sfdf.sw.spark.storage`, :mod:`~sfdf.sw.spark.boards` and
:mod:`~sfdf.sw.spark.discover` (which board a task opens), :mod:`~sfdf.sw.spark.standalone` (a standalone
cluster on this machine).
"""

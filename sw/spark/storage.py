"""Where the Spark job reads and writes: a local path or a Hadoop URI (``file:/``, ``hdfs://``, ``s3a://``).

A local path is read with pyarrow and written with Python's file calls; a URI only through Spark and the
Hadoop ``FileSystem`` of the session (the driver never opens it as a local file), so the job's input and
output may live on storage only the cluster sees. The one place of this choice: :mod:`sfdf.sw.spark`
asks :func:`parquet_inputs` for the files to read and :func:`put` to store a file it made locally.
"""

from __future__ import annotations

import shutil
from pathlib import Path, PurePosixPath

__all__ = ["is_uri", "join", "parquet_inputs", "put"]


def is_uri(location) -> bool:
    """A Hadoop URI (a scheme and a colon, such as ``file:/data`` or ``hdfs://nn/data``), not a local path."""
    text = str(location)
    scheme, colon, _ = text.partition(":")
    return bool(colon) and len(scheme) > 1 and scheme.isalnum()


def join(location, name: str) -> str:
    """``location/name`` for either kind."""
    return f"{str(location).rstrip('/')}/{name}" if is_uri(location) else str(Path(location) / name)


def _hidden(parts) -> bool:
    return any(part.startswith((".", "_")) for part in parts)


def _pixel_type(schema) -> str | None:
    """``pixels``' element type if the file has docs/architecture.md's columns, else None."""
    import pyarrow as pa

    names = {f.name: f.type for f in schema}
    pixels = names.get("pixels")
    if ("frame_id" not in names or not pa.types.is_integer(names["frame_id"]) or pixels is None
            or not (pa.types.is_list(pixels) or pa.types.is_large_list(pixels))
            or not pa.types.is_integer(pixels.value_type)):
        return None
    return str(pixels.value_type)


def _columns(schema) -> str:
    return ", ".join(f"{f.name}: {f.type}" for f in schema)


def parquet_inputs(location, spark=None) -> tuple[dict[str, str], list[tuple[str, str]], bool]:
    """The usable Parquet files at ``location`` (a folder, searched recursively, or one file) with the
    element type of their pixels; the files skipped with why; whether ``location`` is a folder.

    Hidden files (``.``, ``_``: Spark's own) are left alone. A URI needs ``spark`` (its Hadoop
    configuration lists the files; Spark reads each footer). Raises ``FileNotFoundError`` when nothing is
    at ``location``.
    """
    if is_uri(location):
        return _hadoop_inputs(str(location), spark)
    import pyarrow as pa
    import pyarrow.parquet as pq

    given = Path(location)
    if given.is_file():
        candidates = [given]
    elif given.is_dir():
        candidates = sorted(p for p in given.rglob("*") if p.is_file() and not _hidden(p.relative_to(given).parts))
    else:
        raise FileNotFoundError(str(location))
    good, skipped = {}, []
    for path in candidates:
        try:
            schema = pq.read_schema(path)
        except (OSError, pa.ArrowException) as exc:
            skipped.append((str(path), f"not a readable Parquet file ({str(exc).splitlines()[0][:120]})"))
            continue
        kind = _pixel_type(schema)
        if kind is None:
            skipped.append((str(path), f"has columns {_columns(schema)}, not frame_id: long, pixels: array<int>"))
        else:
            good[str(path)] = kind
    return good, skipped, given.is_dir()


def _filesystem(spark, uri: str):
    jvm = spark.sparkContext._jvm
    path = jvm.org.apache.hadoop.fs.Path(uri)
    return path.getFileSystem(spark.sparkContext._jsc.hadoopConfiguration()), path, jvm


def _hadoop_inputs(uri: str, spark) -> tuple[dict[str, str], list[tuple[str, str]], bool]:
    import pyarrow as pa

    fs, root, _ = _filesystem(spark, uri)
    if not fs.exists(root):
        raise FileNotFoundError(uri)
    folder = fs.getFileStatus(root).isDirectory()
    candidates = []
    if folder:
        listing = fs.listFiles(root, True)
        base = PurePosixPath(root.toUri().getPath())
        while listing.hasNext():
            path = listing.next().getPath()
            if not _hidden(PurePosixPath(path.toUri().getPath()).relative_to(base).parts):
                candidates.append(path.toString())
    else:
        candidates = [root.toString()]
    good, skipped = {}, []
    for path in sorted(candidates):
        try:  # the footer only: Spark infers the schema of one file
            fields = spark.read.parquet(path).schema
        except Exception as exc:  # noqa: BLE001 (Spark raises its own Java-backed errors)
            skipped.append((path, f"not a readable Parquet file ({str(exc).splitlines()[0][:120]})"))
            continue
        schema = pa.schema([pa.field(f.name, _arrow_type(f.dataType)) for f in fields])
        kind = _pixel_type(schema)
        if kind is None:
            skipped.append((path, f"has columns {_columns(schema)}, not frame_id: long, pixels: array<int>"))
        else:
            good[path] = kind
    return good, skipped, folder


def _arrow_type(kind):
    """The Arrow type of a Spark type, for the columns check (integers and arrays of them matter)."""
    import pyarrow as pa
    from pyspark.sql import types as T

    if isinstance(kind, T.ArrayType):
        return pa.list_(_arrow_type(kind.elementType))
    return {T.LongType: pa.int64(), T.IntegerType: pa.int32(), T.ShortType: pa.int16(),
            T.ByteType: pa.int8()}.get(type(kind), pa.string())


def put(local: Path, location, spark=None) -> None:
    """Store the local file ``local`` at ``location``: a copy for a local path, Hadoop's
    ``copyFromLocalFile`` for a URI."""
    if not is_uri(location):
        Path(location).parent.mkdir(parents=True, exist_ok=True)
        shutil.copyfile(local, location)
        return
    fs, target, jvm = _filesystem(spark, str(location))
    fs.mkdirs(target.getParent())
    fs.copyFromLocalFile(False, True, jvm.org.apache.hadoop.fs.Path(str(local.resolve())), target)

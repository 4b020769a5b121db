"""The export's fast path: Parquet written by the executors themselves, one Spark task per
slice, each decoding its slice into Arrow and writing it with pyarrow. Rows never cross
into the JVM, which on a small machine is what limits an export through Spark's own
writer (bench/spark.py measures both).

The output is what `df.write.partitionBy("topic", "partition").parquet(out)` writes:
Hive-style directories topic=T/partition=P, the other columns in the files, snappy
compression, Spark's types (timestamps as UTC microseconds), a _SUCCESS file. It is
committed as a whole: tasks write into a staging directory beside out (on the same file
system), files of failed or repeated task attempts are removed, and only then does the
staging directory become out, by rename (overwrite: the old out is renamed away first,
and deleted after). A job that fails leaves out as it was. Needs out to be a path every
executor and the driver see (a local path, or a shared mount on a cluster); URLs such as
hdfs:// or s3a:// go through Spark's writer instead (jobs.export decides).
"""

from __future__ import annotations

import functools
import os
import shutil
import time
import uuid
from pathlib import Path

import pyarrow as pa
import pyarrow.parquet as pq

from .meter import measured
from .options import Options
from .read import records
from .scan import PipelineError, SegmentSlice

#: What jobs.export accepts as Spark's SaveMode, and what it does when out exists.
MODES = ("errorifexists", "overwrite", "append", "ignore")


def write_slice(s: SegmentSlice, *, staging: str, opts: Options,
                meter: str | None = None) -> tuple[str | None, int]:  # fmt: skip
    """Decode one slice and write it as one Parquet file under staging; returns its path
    relative to staging (None when the slice has no rows) and its rows. What it fetches
    from an object store goes to the accumulator `meter` (meter.py)."""
    if not Path(staging).is_dir():  # made by the driver: an executor elsewhere cannot see it
        raise PipelineError(f"the executors cannot write {staging}: the output must be on storage "
                            "the driver and every executor share")  # fmt: skip
    rel = Path(f"topic={s.topic}", f"partition={s.partition}",
               f"part-{s.base_offset:020d}-{s.start:012d}-{uuid.uuid4().hex[:12]}.snappy.parquet")  # fmt: skip
    path = Path(staging) / rel
    writer, rows, schema = None, 0, None
    try:
        with measured(meter):
            for batch in records(s, opts):
                if batch.num_rows == 0:
                    continue
                if schema is None:  # the columns but topic and partition (the directories)
                    schema = pa.schema([f for f in batch.schema if f.name not in _DIRS])
                batch = pa.RecordBatch.from_arrays(
                    [batch.column(f.name) for f in schema], schema=schema
                )
                if writer is None:  # never the staging directory itself: see _discard
                    path.parent.parent.mkdir(exist_ok=True)
                    path.parent.mkdir(exist_ok=True)
                    writer = pq.ParquetWriter(path, batch.schema, compression="snappy")
                writer.write_batch(batch)
                rows += batch.num_rows
    finally:
        if writer is not None:
            writer.close()
    return (str(rel) if writer is not None else None), rows


_DIRS = ("topic", "partition")


def export(spark, slices: list[SegmentSlice], out: Path, *, opts: Options, mode: str,
           meter: str | None = None) -> int | None:  # fmt: skip
    """Write the slices' records to out; returns how many (None: mode ignore, out exists)."""
    if mode not in MODES:
        raise PipelineError(f"mode: one of {', '.join(MODES)}, got {mode!r}")
    out = Path(os.path.abspath(out))  # tasks run in working directories of their own
    exists = out.exists() and (not out.is_dir() or any(out.iterdir()))
    if exists and mode == "errorifexists":
        raise PipelineError(f"{out}: already exists (overwrite it, or append to it)")
    if exists and mode == "ignore":
        return None
    job = uuid.uuid4().hex[:12]
    staging = out.parent / f".{out.name}.kafkacodec-{job}"
    staging.mkdir(parents=True)
    try:
        task = functools.partial(write_slice, staging=str(staging), opts=opts, meter=meter)
        written = spark.sparkContext.parallelize(slices, max(1, min(len(slices), 100_000))).map(
            task
        )
        results = written.collect() if slices else []
        _check_written(staging, results)
        keep = {rel for rel, _ in results if rel is not None}
        for f in staging.rglob("*.parquet"):  # attempts Spark gave up on, or ran twice
            if str(f.relative_to(staging)) not in keep:
                f.unlink()
        _commit(staging, out, append=exists and mode == "append", job=job)
    finally:
        _discard(staging)
    return sum(rows for _, rows in results)


def _discard(staging: Path) -> None:
    """Remove what is left of a job's staging directory (nothing, once it became out).

    When a job fails, Spark may still be running its other tasks. They never make the
    staging directory (write_slice makes only the directories under it), and it is renamed
    away before it is removed, so no task can write into it again by its name; a directory
    a task made at that very moment is removed on the next pass."""
    trash = staging.with_name(staging.name + "-failed")
    try:
        staging.rename(trash)
    except FileNotFoundError:
        return
    for _ in range(100):
        shutil.rmtree(trash, ignore_errors=True)
        if not trash.exists():
            return
        time.sleep(0.05)


def _check_written(staging: Path, results) -> None:
    """Every file a task reported is in staging, with the rows it reported; otherwise the job
    fails (and its staging directory goes): a commit never publishes less than was read."""
    wrong = []
    for rel, rows in results:
        if rel is None:
            continue
        f = staging / rel
        if not f.is_file():
            wrong.append(f"{rel}: missing")
        elif (n := pq.read_metadata(f).num_rows) != rows:
            wrong.append(f"{rel}: {n} rows, the task wrote {rows}")
    if wrong:
        raise PipelineError(f"{len(wrong)} files the tasks wrote are not in {staging} as reported "
                            f"({'; '.join(wrong[:5])}): the output must be on storage the driver "
                            "and every executor share; nothing was written")  # fmt: skip


def _commit(staging: Path, out: Path, *, append: bool, job: str) -> None:
    (staging / "_SUCCESS").touch()
    if append:
        for f in sorted(staging.rglob("*.parquet")):
            target = out / f.relative_to(staging)
            target.parent.mkdir(parents=True, exist_ok=True)
            f.rename(target)
        (out / "_SUCCESS").touch()
        return
    old = None
    if out.exists():
        old = out.parent / f".{out.name}.kafkacodec-{job}-old"
        out.rename(old)
    staging.rename(out)
    if old is not None:
        shutil.rmtree(old) if old.is_dir() else old.unlink()

"""Benchmark of the Spark export: `kafkacodec spark export` (the kafkacodec data source to
Parquet, partitioned by topic and partition) against a naive baseline in the same run:
Spark's binaryFile source reading the .log files, and kafka-python decoding them in
mapInArrow (Arrow batches, not one pickled row per record), to the same Parquet layout
and the same eight columns of Spark's kafka source.

    python -m bench.spark [--mb 200] [--partitions 4] [--repeat 3] [--master local[2]]

Four jobs: `kafkacodec` is the export as the command runs it (each executor decodes its
slices and writes Parquet with pyarrow); `via-writer` is the kafkacodec data source into
Spark's own Parquet writer (what export does for other formats and URLs); `noop` is the
data source read whole into Spark's no-op sink (the source alone); `baseline` is the naive
job above.

The log.dirs has --partitions topic-partitions of v2 batches (100 records of 10-byte keys
and 100-byte values, one header), each partition in one codec (none, lz4, zstd, gzip in
turn), in 64 MB segments. Each repetition runs every job, alternating the order;
the table shows medians of records/s (wall time of the job, from the DataFrame to the
written Parquet) and the ratio. JSON goes to bench/results/spark.json.
"""

from __future__ import annotations

import argparse
import os
import shutil
import statistics
import sys
import tempfile
import time
from pathlib import Path

import kafkacodec as kc
from bench import save
from kafkacodec.log import PartitionWriter

from .__main__ import RECORDS_PER_BATCH, _records

ROOT = Path(__file__).resolve().parents[1]
CODECS = ("none", "lz4", "zstd", "gzip")
SPARK_KAFKA_SCHEMA = (
    "key binary, value binary, topic string, partition int, offset long, timestamp timestamp, "
    "timestampType int, headers array<struct<key:string,value:binary>>"
)


def write_logdirs(root: Path, mb: float, partitions: int) -> int:
    """About mb MB of batches over `partitions` partition directories; returns records."""
    recs = _records(2)
    one = len(kc.build_batch(recs, base_offset=0))
    per_partition = max(1, round(mb * 1e6 / one / partitions))
    total = 0
    for p in range(partitions):
        codec = CODECS[p % len(CODECS)]
        with PartitionWriter(root / f"bench-{p}", segment_bytes=64 << 20, fsync=False) as w:
            for b in range(per_partition):
                w.append(kc.build_batch(recs, base_offset=b * RECORDS_PER_BATCH, compression=codec))
        total += per_partition * RECORDS_PER_BATCH
    return total


def _kafka_python_decode(batches):
    """mapInArrow: binaryFile rows (path, content) in, Spark kafka columns out."""
    import pyarrow as pa
    from kafka.record.memory_records import MemoryRecords

    for arrow in batches:
        for path, content in zip(
            arrow.column("path").to_pylist(), arrow.column("content").to_pylist()
        ):
            name = path.rstrip("/").split("/")[-2]
            topic, _, partition = name.rpartition("-")
            cols = {
                k: [] for k in ("key", "value", "offset", "timestamp", "timestampType", "headers")
            }
            records = MemoryRecords(content)
            while (batch := records.next_batch()) is not None:
                ts_type = batch.timestamp_type
                for r in batch:
                    cols["key"].append(r.key)
                    cols["value"].append(r.value)
                    cols["offset"].append(r.offset)
                    cols["timestamp"].append(r.timestamp * 1000)
                    cols["timestampType"].append(ts_type)
                    cols["headers"].append([{"key": k, "value": v} for k, v in r.headers])
            n = len(cols["offset"])
            yield pa.RecordBatch.from_pydict({
                "key": pa.array(cols["key"], pa.binary()),
                "value": pa.array(cols["value"], pa.binary()),
                "topic": pa.array([topic] * n, pa.string()),
                "partition": pa.array([int(partition)] * n, pa.int32()),
                "offset": pa.array(cols["offset"], pa.int64()),
                "timestamp": pa.array(cols["timestamp"], pa.timestamp("us", tz="UTC")),
                "timestampType": pa.array(cols["timestampType"], pa.int32()),
                "headers": pa.array(cols["headers"], pa.list_(pa.struct([("key", pa.string()), ("value", pa.binary())]))),
            })  # fmt: skip


def baseline(spark, root: Path, out: Path) -> None:
    df = (
        spark.read.format("binaryFile").option("pathGlobFilter", "*.log")
        .option("recursiveFileLookup", "true").load(str(root))
        .select("path", "content").mapInArrow(_kafka_python_decode, SPARK_KAFKA_SCHEMA)
    )  # fmt: skip
    df.write.mode("overwrite").partitionBy("topic", "partition").parquet(str(out))


def ours(spark, root: Path, out: Path) -> None:
    """`kafkacodec spark export`: Parquet written by the executors with pyarrow."""
    from kafkacodec.pipeline import jobs

    jobs.export(spark, [root], str(out), mode="overwrite")


def ours_through_spark(spark, root: Path, out: Path) -> None:
    """The kafkacodec data source into Spark's own Parquet writer (what export does for
    other formats and for URLs)."""
    from kafkacodec.pipeline import jobs

    jobs.export(spark, [root], str(out), mode="overwrite", direct=False)


def ours_into_noop(spark, root: Path, out: Path) -> None:
    """The kafkacodec data source read whole into Spark's no-op sink: the source's own
    speed (decoding, Arrow into Spark's rows), with no writer behind it."""
    spark.read.format("kafkacodec").load(str(root)).write.format("noop").mode("overwrite").save()


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(prog="python -m bench.spark", description=__doc__.split("\n\n")[0])
    ap.add_argument("--mb", type=float, default=200)
    ap.add_argument("--partitions", type=int, default=4)
    ap.add_argument("--repeat", type=int, default=3)
    ap.add_argument("--master", default="local[2]")
    ap.add_argument("--no-baseline", action="store_true", help="only kafkacodec (a quick look)")
    args = ap.parse_args(argv)

    from kafkacodec.pipeline import jobs

    os.environ.setdefault("PYSPARK_PYTHON", sys.executable)
    tmp = Path(tempfile.mkdtemp(prefix="kafkacodec-bench-spark-"))
    try:
        root = tmp / "kafka"
        n = write_logdirs(root, args.mb, args.partitions)
        size = sum(f.stat().st_size for f in root.rglob("*.log"))
        spark = jobs.session(args.master)
        runners = {"kafkacodec": ours, "via-writer": ours_through_spark, "noop": ours_into_noop}
        if not args.no_baseline:
            runners["baseline"] = baseline
        times: dict[str, list[float]] = {name: [] for name in runners}
        try:
            for name, fn in runners.items():  # warm-up: JVM, workers, page cache
                fn(spark, root, tmp / f"warm-{name}")
            for i in range(args.repeat):
                order = list(runners.items())
                for name, fn in order if i % 2 == 0 else order[::-1]:
                    t = time.perf_counter()
                    fn(spark, root, tmp / name)
                    times[name].append(time.perf_counter() - t)
            counts = {name: spark.read.parquet(str(tmp / name)).count()
                      for name in runners if name != "noop"}  # fmt: skip
        finally:
            spark.stop()
        for name, count in counts.items():
            if count != n:
                raise SystemExit(f"{name} wrote {count} records, expected {n}")
        result = {"master": args.master, "records": n, "log_bytes": size, "partitions": args.partitions,
                  "codecs": [CODECS[p % len(CODECS)] for p in range(args.partitions)],
                  "cpus": os.cpu_count(), "figures": {}}  # fmt: skip
        print(f"export of {n:,} records ({size / 1e6:.0f} MB of .log, {args.partitions} partitions, "
              f"codecs {', '.join(result['codecs'])}) to Parquet on {args.master}:")  # fmt: skip
        for name, ts in times.items():
            med = statistics.median(ts)
            result["figures"][name] = {"seconds": ts, "median_s": med, "records_per_s": n / med}
            print(f"  {name:<11} {n / med / 1e6:6.2f}M rec/s  {size / med / 1e6:7.1f} MB/s  "
                  f"(median of {len(ts)}: {med:.2f} s)")  # fmt: skip
        if "baseline" in times:
            base = result["figures"]["baseline"]["records_per_s"]
            result["ratios"] = {k: f["records_per_s"] / base for k, f in result["figures"].items()}
            print(f"  x baseline (binaryFile + kafka-python): kafkacodec "
                  f"{result['ratios']['kafkacodec']:.1f}x, via Spark's writer "
                  f"{result['ratios']['via-writer']:.1f}x")  # fmt: skip
        save("spark", result)
    finally:
        shutil.rmtree(tmp, ignore_errors=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())

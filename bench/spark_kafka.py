"""Spark's own Kafka source against the kafkacodec source, on the same topic and the same
cores, as a user measures them (issue 38): a Kafka broker of the harness (tests/kafka_broker.py,
`make harness`) serves a topic; `format("kafka")` reads it from the broker and
`format("kafkacodec")` reads the broker's log.dirs, for the same four queries: `count()`, a
write to Spark's `noop` sink, a Parquet write, and `groupBy("key").count()`. The kafkacodec
format decodes on the JVM (jvm/, `make jar`); `kafkacodec_python`, the same format read in
Python workers alone, is timed too. Then `kafkacodec spark export` of the same log.dirs
(Parquet written by the executors).

    python -m bench.spark_kafka [--records 2000000] [--partitions 2] [--repeat 3] [--master local[2]]

The topic has --partitions partitions of uncompressed v2 batches (100 records of 10-byte
keys, 1,000 distinct, and 100-byte values, one header), written by kafkacodec's
PartitionWriter and brought to the broker as an operator brings files (Broker.transplant:
the broker recovers them on start, so it serves what it checked). Each repetition runs
every query through both sources, alternating which goes first; the table shows the
median records/s of each (wall time from the DataFrame to the query's end) and the ratio.
JSON goes to bench/results/spark_kafka.json.
"""

from __future__ import annotations

import argparse
import os
import random
import shutil
import statistics
import sys
import tempfile
import time
from pathlib import Path

import kafkacodec as kc
from bench import save
from kafkacodec.log import PartitionWriter

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "tests"))  # the broker harness of the Kafka tests

from kafka_broker import Broker, spark_kafka_jars  # noqa: E402

RECORDS_PER_BATCH = 100
VERSION = "4.4.0"
QUERIES = ("count", "noop", "parquet", "groupBy key")
SOURCES = ("kafka", "kafkacodec", "kafkacodec_python")


def write_partitions(root: Path, records: int, partitions: int) -> int:
    """records records over `partitions` partition directories (bench-N), uncompressed."""
    rnd = random.Random(7)
    per = records // partitions // RECORDS_PER_BATCH
    headers = (("trace", b"0123456789abcdef"),)
    base_ts = 1_700_000_000_000
    for p in range(partitions):
        with PartitionWriter(root / f"bench-{p}", segment_bytes=256 << 20, fsync=False) as w:
            for b in range(per):
                recs = [kc.Record(None, base_ts + b, b"key-%06d" % rnd.randrange(1000),
                                  rnd.randbytes(50).hex().encode(), headers)
                        for _ in range(RECORDS_PER_BATCH)]  # fmt: skip
                w.append(kc.build_batch(recs, base_offset=b * RECORDS_PER_BATCH))
    return per * RECORDS_PER_BATCH * partitions


def run_query(spark, query: str, df, out: Path) -> None:
    if query == "count":
        df.count()
    elif query == "noop":
        df.write.format("noop").mode("overwrite").save()
    elif query == "parquet":
        df.write.mode("overwrite").parquet(str(out))
    else:
        df.groupBy("key").count().collect()


def main(argv=None) -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--records", type=int, default=2_000_000)
    ap.add_argument("--partitions", type=int, default=2)
    ap.add_argument("--repeat", type=int, default=3)
    ap.add_argument("--master", default="local[2]")
    args = ap.parse_args(argv)

    from kafkacodec.pipeline import jobs

    work = Path(tempfile.mkdtemp(prefix="bench-spark-kafka-"))
    try:
        n = write_partitions(work / "src", args.records, args.partitions)
        build = work / "build"
        build.mkdir()
        broker = Broker(VERSION, work / "broker", num_partitions=str(args.partitions))
        broker.start()
        broker.create_topic(build, "bench", args.partitions)
        broker.stop()
        for p in range(args.partitions):
            broker.transplant(f"bench-{p}", work / "src" / f"bench-{p}")
        broker.start(timeout=600)
        log_bytes = sum(f.stat().st_size for f in broker.log_dir.glob("bench-*/*.log"))
        os.environ["PYSPARK_PYTHON"] = sys.executable
        # Spark's Kafka source on the driver's classpath (local mode: the executors' too), so
        # that spark.jars stays jobs.session()'s, which ships the JVM reader
        os.environ.setdefault("PYSPARK_SUBMIT_ARGS", "--conf spark.driver.extraClassPath="
                              f"{':'.join(spark_kafka_jars())} pyspark-shell")  # fmt: skip
        if not jobs.JAR.is_file():
            raise SystemExit(f"{jobs.JAR}: the JVM reader is not built (make jar)")
        spark = jobs.session(args.master, conf={"spark.sql.shuffle.partitions": "2"})

        def frame(source: str):
            if source == "kafka":
                return (spark.read.format("kafka").option("kafka.bootstrap.servers", broker.bootstrap)
                        .option("subscribe", "bench").load())  # fmt: skip
            return spark.read.format(source).option("subscribe", "bench").load(str(broker.log_dir))

        assert "JVM reader" in frame("kafkacodec")._jdf.queryExecution().executedPlan().toString()
        assert all(frame(s).count() == n for s in SOURCES)  # and warm them up
        times: dict[tuple[str, str], list[float]] = {}
        for rep in range(args.repeat):
            for query in QUERIES:
                for source in SOURCES[rep % 3:] + SOURCES[:rep % 3]:
                    t0 = time.perf_counter()
                    run_query(spark, query, frame(source), work / f"out-{source}")
                    times.setdefault((query, source), []).append(time.perf_counter() - t0)
        export = []
        for _ in range(args.repeat):
            out = work / "export"
            shutil.rmtree(out, ignore_errors=True)
            t0 = time.perf_counter()
            jobs.export(spark, [broker.log_dir], str(out), subscribe="bench")
            export.append(time.perf_counter() - t0)
        spark.stop()
        broker.stop()

        rows = []
        print(f"{n:,} records, {log_bytes / 1e6:.0f} MB of .log, {args.partitions} partitions, "
              f"{args.master}, medians of {args.repeat}")  # fmt: skip
        print(f"{'query':<14}{'Spark kafka source':>20}{'kafkacodec':>14}{'ratio':>8}"
              f"{'kafkacodec_python':>20}{'ratio':>8}")  # fmt: skip
        for query in QUERIES:
            k, o, p = (statistics.median(times[(query, s)]) for s in SOURCES)
            rows.append({"query": query, "kafka_records_per_s": n / k, "kafkacodec_records_per_s": n / o,
                         "ratio": k / o, "kafkacodec_python_records_per_s": n / p, "python_ratio": k / p,
                         **{f"{s}_s": times[(query, s)] for s in SOURCES}})  # fmt: skip
            print(f"{query:<14}{n / k / 1e6:>17.2f}M/s{n / o / 1e6:>11.2f}M/s{k / o:>7.2f}x"
                  f"{n / p / 1e6:>17.2f}M/s{k / p:>7.2f}x")  # fmt: skip
        e = statistics.median(export)
        print(f"{'spark export':<14}{'':>20}{n / e / 1e6:>11.2f}M/s")
        result = {"records": n, "log_bytes": log_bytes, "partitions": args.partitions, "master": args.master,
                  "repeat": args.repeat, "kafka_version": VERSION, "queries": rows,
                  "export_records_per_s": n / e, "export_s": export}  # fmt: skip
        print(f"-> {save('spark_kafka', result)}")
    finally:
        shutil.rmtree(work, ignore_errors=True)


if __name__ == "__main__":
    main()

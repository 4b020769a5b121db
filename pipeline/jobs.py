"""Spark jobs over Kafka log directories: export (to Parquet, partitioned by topic and
partition) and stats (per topic-partition). They run on an embedded local Spark by default
(local[*]) or on the cluster a master URL names."""

from __future__ import annotations

import json
import os
import sys

from .source import register

#: What a record's control key says (FORMATS.md): bytes 2-3 are the type.
ABORT, COMMIT = 0, 1


def session(master: str | None = None, app: str = "kafkacodec"):
    """A SparkSession with the kafkacodec formats registered. Without a master: local[*],
    UI off, bound to the loopback interface. Python workers run this interpreter."""
    from pyspark.sql import SparkSession

    os.environ.setdefault("PYSPARK_PYTHON", sys.executable)
    builder = SparkSession.builder.appName(app)
    if master is None:
        builder = (
            builder.master("local[*]").config("spark.ui.enabled", "false")
            .config("spark.ui.showConsoleProgress", "false")
            .config("spark.driver.host", "127.0.0.1").config("spark.driver.bindAddress", "127.0.0.1")
        )  # fmt: skip
    else:
        builder = builder.master(master)
    spark = builder.getOrCreate()
    spark.sparkContext.setLogLevel("ERROR")
    register(spark)
    return spark


def _reader(spark, fmt: str, paths, options: dict):
    reader = spark.read.format(fmt)
    for key, value in options.items():
        if value is not None:
            reader = reader.option(key, str(value).lower() if isinstance(value, bool) else value)
    if len(paths) == 1:
        return reader.load(paths[0])
    return reader.option("paths", json.dumps([str(p) for p in paths])).load()


def export(
    spark, paths, out: str, *, fmt: str = "parquet", mode: str = "errorifexists", **options
) -> int:
    """Write every record under paths to out (Parquet by default), partitioned by topic and
    partition; return how many records were written."""
    df = _reader(spark, "kafkacodec", [str(p) for p in paths], options)
    df.write.format(fmt).mode(mode).partitionBy("topic", "partition").save(str(out))
    return spark.read.format(fmt).load(str(out)).count()


def stats(spark, paths, **options) -> list[dict]:
    """Per topic-partition: records, batches, bytes, codecs, the timestamp range, producers,
    and the transactions committed and aborted (from the control records)."""
    from pyspark.sql import functions as F

    paths = [str(p) for p in paths]
    opts = {k: v for k, v in options.items() if k != "include_control"}
    records = _reader(spark, "kafkacodec", paths, {**opts, "include_control": True})
    batches = _reader(spark, "kafkacodec_batches", paths, {**opts, "include_control": True})
    control_type = F.conv(F.hex(F.substring("key", 3, 2)), 16, 10).cast("int")
    per_record = records.groupBy("topic", "partition").agg(
        F.sum(F.when(~F.col("is_control"), 1).otherwise(0)).alias("records"),
        F.min(F.when(~F.col("is_control"), F.col("offset"))).alias("first_offset"),
        F.max(F.when(~F.col("is_control"), F.col("offset"))).alias("last_offset"),
        F.min(F.when(~F.col("is_control"), F.col("timestamp"))).alias("min_timestamp"),
        F.max(F.when(~F.col("is_control"), F.col("timestamp"))).alias("max_timestamp"),
        F.countDistinct(F.when(F.col("producer_id") >= 0, F.col("producer_id"))).alias("producers"),
        F.sum(F.when(F.col("is_control") & (control_type == COMMIT), 1).otherwise(0)).alias(
            "committed"
        ),
        F.sum(F.when(F.col("is_control") & (control_type == ABORT), 1).otherwise(0)).alias(
            "aborted"
        ),
    )
    per_batch = batches.groupBy("topic", "partition").agg(
        F.count(F.lit(1)).alias("batches"),
        F.sum("size").alias("bytes"),
        F.sort_array(F.collect_set("compression")).alias("codecs"),
        F.sort_array(F.collect_set("magic")).alias("magics"),
    )
    joined = per_batch.join(per_record, ["topic", "partition"], "left").orderBy(
        "topic", "partition"
    )
    out = []
    for row in joined.collect():
        d = row.asDict()
        for key in ("min_timestamp", "max_timestamp"):
            if d[key] is not None:
                d[key] = d[key].isoformat()
        d["records"] = d["records"] or 0
        out.append(d)
    return out

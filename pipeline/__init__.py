"""kafkacodec on Spark: PySpark data sources over Kafka log directories, and jobs.

    from kafkacodec.pipeline import register
    register(spark)
    df = spark.read.format("kafkacodec").load("/var/lib/kafka")       # one row per record
    batches = spark.read.format("kafkacodec_batches").load("/var/lib/kafka")
    problems = spark.read.format("kafkacodec_problems").load("/var/lib/kafka")
    stream = spark.readStream.format("kafkacodec").load("/var/lib/kafka")

The jobs (kafkacodec spark export | stats | verify) are in jobs.py. Needs pyspark 4.2 (the
`pipeline` extra). The data sources are imported on first use, so that the command line
defines `kafkacodec spark` (cli.py) without pyspark.
"""

from __future__ import annotations

import importlib
from pathlib import Path

#: The JVM reader of the kafkacodec format (jvm/, built by `make jar`): with it on Spark's
#: classpath, spark.read.format("kafkacodec") decodes on the JVM (source.py says how).
JAR = Path(__file__).resolve().parent / "jars" / "kafkacodec-spark.jar"

__all__ = ["RecordsDataSource", "BatchesDataSource", "ProblemsDataSource", "register"]


def __getattr__(name: str):
    if name in __all__:
        value = getattr(importlib.import_module(".source", __name__), name)
        globals()[name] = value
        return value
    raise AttributeError(f"module 'kafkacodec.pipeline' has no attribute {name!r}")

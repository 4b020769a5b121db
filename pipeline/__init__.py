"""kafkacodec on Spark: a PySpark data source over Kafka log directories.

    from kafkacodec.pipeline import register
    register(spark)
    df = spark.read.format("kafkacodec").load("/var/lib/kafka")       # one row per record
    batches = spark.read.format("kafkacodec_batches").load("/var/lib/kafka")

Needs pyspark 4 (the `pipeline` extra).
"""

from .source import BatchesDataSource, RecordsDataSource, register

__all__ = ["RecordsDataSource", "BatchesDataSource", "register"]

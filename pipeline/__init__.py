"""kafkacodec on Spark: PySpark data sources over Kafka log directories, and jobs.

    from kafkacodec.pipeline import register
    register(spark)
    df = spark.read.format("kafkacodec").load("/var/lib/kafka")       # one row per record
    batches = spark.read.format("kafkacodec_batches").load("/var/lib/kafka")
    problems = spark.read.format("kafkacodec_problems").load("/var/lib/kafka")
    stream = spark.readStream.format("kafkacodec").load("/var/lib/kafka")

The jobs (kafkacodec spark export | stats | verify) are in jobs.py. Needs pyspark 4 (the
`pipeline` extra).
"""

from .source import BatchesDataSource, ProblemsDataSource, RecordsDataSource, register

__all__ = ["RecordsDataSource", "BatchesDataSource", "ProblemsDataSource", "register"]

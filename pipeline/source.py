"""The PySpark data sources: `kafkacodec` (one row per record), `kafkacodec_batches` (one
row per batch, headers only), `kafkacodec_problems` (one row per problem found) and
`kafkacodec_offsets` (one row per offset commit of __consumer_offsets, decoded: offsets.py).

The reading is done by plain functions (segment_slices, records, batches, problems; the
slices and their decoding are in scan.py) behind the readers' partitions() and read(), so
that it is tested without a SparkSession; Spark only calls them. One input partition per
segment, or per split of a segment above split_size; rows cross into Spark as Arrow record
batches.

With kafkacodec's jar on Spark's classpath (jvm/, jobs.session() puts it there), Spark
takes the JVM source of the name `kafkacodec` before this one: it plans through planner.py
(record_slices, the same functions) and decodes on the JVM, handing this reader what it
does not read itself (streams; slices with damage or moved by a broker). This records
format is then registered as `kafkacodec_python` alone.

The records format takes Spark's own kafka source's options, with their names and
meanings (request.py): assign, subscribe, subscribePattern, startingOffsets / endingOffsets
(earliest, latest, or JSON per partition with -2 and -1), startingTimestamp /
endingTimestamp, startingOffsetsByTimestamp / endingOffsetsByTimestamp,
startingOffsetsByTimestampStrategy, includeHeaders, failOnDataLoss, minPartitions,
maxRecordsPerPartition, kafka.isolation.level; and as a stream (stream.py)
maxOffsetsPerTrigger, minOffsetsPerTrigger, maxTriggerDelay. A broker connection's options
(kafka.bootstrap.servers, ...) are accepted and named as ignored; an unknown option is an
error. The batches, problems and offsets formats take which partitions (assign, subscribe,
subscribePattern, partitions) and isolation.

kafkacodec's own options (all formats):
  verify_crc      true (default) / false
  include_control false (default): control batches (transaction markers) are left out
  on_corrupt      fail (default): a damaged segment stops the job, naming file and byte;
                  skip: what cannot be read is left out (a batch that does not decode, or
                  the rest of a segment after damage that stops the walk), with a warning;
                  report: the same, silently; the kafkacodec_problems format (same
                  options) lists what was left out, and the jobs write it as a second output
  split_size      128m (default): segments above it are read as several input partitions,
                  cut at batch boundaries found through the .index; 0: never cut
  storage.KEY     an option of the object store load() names (s3://, gs://, abfs://,
                  hdfs://), e.g. storage.region, storage.endpoint_override,
                  storage.access_key, storage.retries (storage/objects.py); without them
                  the AWS environment variables and the SDK's credential chain apply, on
                  the driver and on each executor; storage.encryption_key[.ID] names the
                  RSA private key (a PEM file on every executor) of encrypted tiered segments
  tiered          a tiered-storage root (an Aiven bucket prefix, or a LocalTieredStorage
                  directory) whose remote segments join the local partitions load() names,
                  read as Kafka serves them (remote below the local log start). load() also
                  takes a tiered-storage root or partition directly
  partitions          comma-separated partition numbers (default: all)
  starting_offset     the first offset read, in every partition (inclusive)
  ending_offset       the offset where reading stops, in every partition (exclusive)
  starting_timestamp  only records with a timestamp at or after it (ms since the epoch;
                      magic 0 records, which have none, are left out): a filter, where
                      Spark's startingTimestamp says where reading starts
  topics, isolation   Spark's subscribe and kafka.isolation.level, by their earlier names

What is read is answered from the listing, the segment names, the .index and the
.timeindex, so that what cannot match is never read.

Spark's own filters are not pushed down: PySpark keeps the read plan of the first query
that pushed filters on a DataFrame and reuses it for later queries on that DataFrame that
push none (`df.where(...).count()` then `df.count()` would count the filtered rows), so a
reader cannot keep pushed state per query. The options above belong to the DataFrame.
"""

from __future__ import annotations

from pyspark.sql.datasource import DataSource, DataSourceReader

from .meter import OPTION as METER
from .meter import measured
from .offsets import OFFSETS_SCHEMA, offset_commits
from .options import Options, input_paths, partitions_of
from .read import (
    BATCHES_SCHEMA,
    RECORDS_SCHEMA,
    batches,
    problems,
    record_slices,
    records,
    records_schema,
)
from .request import Request
from .scan import PROBLEMS_SCHEMA, Bounds, SegmentSlice, plan
from .stream import RecordsStreamReader


def _slices(read):
    """A reader's read(): Spark calls it with a placeholder when partitions() found none.
    What a slice fetches from an object store goes to the job's FetchMeter, if it has one."""

    def wrapped(self, partition):
        if isinstance(partition, SegmentSlice):
            with measured(self.meter):
                yield from read(partition, self.opts)

    return wrapped


class _Reader(DataSourceReader):
    split = True

    def __init__(self, options: dict):
        self.request = Request.parse(options)
        self.opts = Options.parse(options)
        self.paths = input_paths(options)
        self.meter = options.get(METER)

    def wanted(self):
        return [p for p in partitions_of(self.paths, opts=self.opts) if self.request.wants(p)]

    def partitions(self):
        """A slice per segment (or split of one) of the partitions the options take: a
        batch is a batch, only which partitions narrows it."""
        return plan(self.wanted(), Bounds(), read_committed=self.opts.read_committed,
                    split_size=self.opts.split_size if self.split else None)  # fmt: skip


class RecordsReader(_Reader):
    read = _slices(records)

    def partitions(self):
        return record_slices(self.paths, self.opts, self.request)


class BatchesReader(_Reader):
    read = _slices(batches)


class OffsetsReader(_Reader):
    read = _slices(offset_commits)

    def wanted(self):
        return [p for p in super().wanted() if p.topic == "__consumer_offsets"]


class ProblemsReader(_Reader):
    split = False  # whole segments: damage is reported once, with the rest it stops
    read = _slices(problems)


class _Format(DataSource):
    """A kafkacodec format: its name, its schema and its reader."""

    FORMAT: str
    SCHEMA: str
    READER: type[_Reader]

    @classmethod
    def name(cls):
        return cls.FORMAT

    def schema(self):
        return self.SCHEMA

    def reader(self, schema):
        return self.READER(self.options)


class RecordsDataSource(_Format):
    """spark.read.format("kafkacodec").load(path): one row per record; also a stream
    (spark.readStream, see stream.py)."""

    FORMAT, SCHEMA, READER = "kafkacodec", RECORDS_SCHEMA, RecordsReader

    def schema(self):
        opts = Options.parse(self.options)
        return records_schema(opts.include_headers, opts.include_metadata)

    def streamReader(self, schema):
        return RecordsStreamReader(self.options)


class BatchesDataSource(_Format):
    """spark.read.format("kafkacodec_batches").load(path): one row per batch, read from
    batch headers only (no record is decoded or decompressed)."""

    FORMAT, SCHEMA, READER = "kafkacodec_batches", BATCHES_SCHEMA, BatchesReader


class ProblemsDataSource(_Format):
    """spark.read.format("kafkacodec_problems").load(path): one row per problem found by
    reading every record (what on_corrupt=skip and report leave out, with where and why)."""

    FORMAT, SCHEMA, READER = "kafkacodec_problems", PROBLEMS_SCHEMA, ProblemsReader


class OffsetsDataSource(_Format):
    """spark.read.format("kafkacodec_offsets").load(path): one row per offset commit of
    __consumer_offsets (group, topic, partition, committed offset, leader epoch, metadata,
    commit timestamp, tombstone flag, ...), decoded with the codecs generated from Kafka's
    message specs."""

    FORMAT, SCHEMA, READER = "kafkacodec_offsets", OFFSETS_SCHEMA, OffsetsReader


class PythonRecordsDataSource(RecordsDataSource):
    """The records format read in Python workers alone, by name: what `kafkacodec` is
    without the JVM reader, and what the JVM reader hands streams to."""

    FORMAT = "kafkacodec_python"


FORMATS = (RecordsDataSource, BatchesDataSource, ProblemsDataSource, OffsetsDataSource)


def register(spark) -> None:
    """Register the kafkacodec formats with a SparkSession. With the JVM reader on Spark's
    classpath (jvm/: the format `kafkacodec` there, which Spark takes before a Python data
    source of the name and does not let one register), the Python records format is
    registered as kafkacodec_python only, which the JVM reader hands its streams to."""
    from pyspark.errors import AnalysisException

    spark.dataSource.register(PythonRecordsDataSource)
    for fmt in FORMATS:
        try:
            spark.dataSource.register(fmt)
        except AnalysisException as err:
            if fmt is not RecordsDataSource or "DATA_SOURCE_ALREADY_EXISTS" not in str(err):
                raise

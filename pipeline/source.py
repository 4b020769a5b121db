"""The `kafkacodec` and `kafkacodec_batches` PySpark data sources.

The reading is done by plain functions (segment_slices, records, batches) behind the
readers' partitions() and read(), so that it is tested without a SparkSession; Spark only
calls them. One input partition per
segment; rows cross into Spark as Arrow record batches.

Options (all formats):
  verify_crc      true (default) / false
  include_control false (default): control batches (transaction markers) are left out
  isolation       read_uncommitted (default) / read_committed: records of aborted
                  transactions are dropped, as a broker's read-committed fetch drops them
  on_corrupt      fail (default): a damaged segment stops the job, naming file and byte;
                  skip: the rest of a damaged segment is left out (a warning says where)
"""

from __future__ import annotations

import json
import warnings
from dataclasses import dataclass, replace
from pathlib import Path

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc
from kafkacodec import columnar
from kafkacodec.errors import KafkacodecError, LogError
from kafkacodec.log.partition import AbortFilter, LogDirs, Partition, open_log
from pyspark.sql.datasource import DataSource, DataSourceReader, InputPartition

#: Spark's own `kafka` source columns first (same names and types), then batch metadata.
RECORDS_SCHEMA = (
    "key binary, value binary, topic string, partition int, offset long, timestamp timestamp, "
    "timestampType int, headers array<struct<key:string,value:binary>>, "
    "base_offset long, magic byte, compression string, producer_id long, producer_epoch short, "
    "base_sequence int, is_transactional boolean, is_control boolean, "
    "partition_leader_epoch int, segment string, position long"
)
BATCHES_SCHEMA = (
    "topic string, partition int, segment string, position long, size int, magic byte, "
    "base_offset long, last_offset long, num_records int, partition_leader_epoch int, "
    "crc long, attributes short, compression string, timestampType int, "
    "base_timestamp timestamp, max_timestamp timestamp, producer_id long, producer_epoch short, "
    "base_sequence int, is_transactional boolean, is_control boolean"
)

_TRUE = {"true", "1", "yes"}
_FALSE = {"false", "0", "no"}


class PipelineError(KafkacodecError):
    """A path or an option the data source cannot use."""


class SegmentSlice(InputPartition):
    """One input partition: a segment of a topic-partition directory (picklable)."""

    def __init__(self, directory: str, topic, partition, base_offset: int, aborted=()):
        super().__init__((directory, base_offset))
        self.directory = directory
        self.topic = topic
        self.partition = partition
        self.base_offset = base_offset
        #: read_committed: the partition's aborted transactions, (producer, first, last).
        self.aborted = tuple(aborted)

    def __repr__(self):
        return f"SegmentSlice({self.directory!r}, {self.base_offset})"


@dataclass(frozen=True)
class Options:
    verify_crc: bool = True
    include_control: bool = False
    read_committed: bool = False
    on_corrupt: str = "fail"

    @classmethod
    def parse(cls, options: dict) -> Options:
        def flag(name, default):
            raw = str(options.get(name, default)).strip().lower()
            if raw in _TRUE:
                return True
            if raw in _FALSE:
                return False
            raise PipelineError(f"option {name}: expected true or false, got {options[name]!r}")

        isolation = str(options.get("isolation", "read_uncommitted")).lower()
        if isolation not in ("read_uncommitted", "read_committed"):
            raise PipelineError(
                f"option isolation: read_uncommitted or read_committed, got {isolation!r}"
            )
        on_corrupt = str(options.get("on_corrupt", "fail")).lower()
        if on_corrupt not in ("fail", "skip"):
            raise PipelineError(f"option on_corrupt: fail or skip, got {on_corrupt!r}")
        return cls(flag("verify_crc", True), flag("include_control", False),
                   isolation == "read_committed", on_corrupt)  # fmt: skip


def input_paths(options: dict) -> list[Path]:
    """The paths given to load(): one (option path) or several (option paths, a JSON list)."""
    raw = []
    if options.get("paths"):
        value = options["paths"]
        try:
            raw = json.loads(value) if value.lstrip().startswith("[") else value.split(",")
        except json.JSONDecodeError:
            raise PipelineError(f"option paths: not a JSON list: {value!r}") from None
    elif options.get("path"):
        raw = [options["path"]]
    if not raw:
        raise PipelineError("no path: use load(path), a partition directory or a log.dirs")
    return [Path(p) for p in raw]


def partitions_of(paths: list[Path]) -> list[Partition]:
    out: list[Partition] = []
    for path in paths:
        try:
            log = open_log(path)
        except LogError as err:
            raise PipelineError(f"{path}: {err}") from None
        found = log.partitions if isinstance(log, LogDirs) else [log]
        if not any(p.segments for p in found):
            raise PipelineError(f"{path}: no Kafka data (no .log segments in it or below it)")
        out.extend(found)
    return out


def segment_slices(paths: list[Path], opts: Options) -> list[SegmentSlice]:
    slices = []
    for p in partitions_of(paths):
        aborted = ()
        if opts.read_committed:
            aborted = AbortFilter(p).ranges()
        for seg in p.segments:
            slices.append(SegmentSlice(str(p.path), p.topic, p.partition, seg.base_offset, aborted))
    return slices


def _segment(s: SegmentSlice):
    from kafkacodec.log.segment import Segment

    return Segment(s.directory, s.base_offset)


def _walk(s: SegmentSlice, opts: Options):
    """The segment's bytes and the walk of its batches, up to any damage (which raises,
    or with on_corrupt=skip, ends the walk there with a warning)."""
    seg = _segment(s)
    data = seg.data
    walk = columnar.walk_batches(
        data, verify_crc=opts.verify_crc, source=str(seg.path), end=seg.size
    )
    if walk.error is not None:
        if opts.on_corrupt == "fail":
            raise walk.error
        warnings.warn(
            f"{seg.path}: skipped from byte {walk.position} on: {walk.error}", stacklevel=2
        )
    return seg, data, walk


def _aborted_mask(table: pa.Table, aborted) -> np.ndarray:
    """Rows of aborted transactions (transactional, not control, in an aborted range)."""
    drop = np.zeros(table.num_rows, dtype=bool)
    if not aborted or table.num_rows == 0:
        return drop
    pid = table["producer_id"].to_numpy()
    base = table["base_offset"].to_numpy(zero_copy_only=False)
    txn = table["is_transactional"].to_numpy(zero_copy_only=False)
    control = table["is_control"].to_numpy(zero_copy_only=False)
    for producer, first, last in aborted:
        drop |= (pid == producer) & (base >= first) & (base <= last)
    return drop & txn & ~control


_TS = pa.timestamp("us", tz="UTC")


def _timestamps(ms, ts_type) -> pa.Array:
    """Milliseconds since the epoch as Spark timestamps (UTC microseconds); null where
    there is no timestamp type (magic 0)."""
    us = pc.multiply(ms, pa.scalar(1000, pa.int64())).cast(_TS)
    return pc.if_else(pc.not_equal(ts_type, -1), us, pa.scalar(None, _TS))


def _kept(table: pa.Table, s: SegmentSlice, opts: Options) -> pa.Table:
    """table without control rows (unless include_control) and, with read_committed,
    without aborted transactions; in one chunk."""
    keep = np.ones(table.num_rows, dtype=bool)
    if not opts.include_control:
        keep &= ~table["is_control"].to_numpy(zero_copy_only=False)
    if opts.read_committed:
        keep &= ~_aborted_mask(table, s.aborted)
    if not keep.all():
        table = table.filter(pa.array(keep))
    return table.combine_chunks()


def _rows(columns: dict):
    """Spark's rows: Arrow record batches of at most 64k rows."""
    yield from pa.table(columns).to_batches(max_chunksize=1 << 16)


def _where(s: SegmentSlice, seg, n: int) -> dict:
    """The topic, partition and segment columns (one value per segment)."""
    return {
        "topic": pa.array([s.topic] * n, pa.string()),
        "partition": pa.array([s.partition] * n, pa.int32()),
        "segment": pa.array([seg.path.name] * n, pa.string()),
    }


def records(s: SegmentSlice, opts: Options):
    """The records of one segment as Arrow record batches in RECORDS_SCHEMA's order."""
    seg, data, walk = _walk(s, opts)
    t = _kept(columnar.records_table(data, walk), s, opts)
    where = _where(s, seg, t.num_rows)
    ts_type = t["timestamp_type"].cast(pa.int32())
    yield from _rows({
        "key": t["key"], "value": t["value"], "topic": where["topic"],
        "partition": where["partition"], "offset": t["offset"],
        "timestamp": _timestamps(t["timestamp"], ts_type), "timestampType": ts_type,
        "headers": t["headers"],
        **{name: t[name] for name in (
            "base_offset", "magic", "compression", "producer_id", "producer_epoch",
            "base_sequence", "is_transactional", "is_control", "partition_leader_epoch")},
        "segment": where["segment"], "position": t["position"],
    })  # fmt: skip


def batches(s: SegmentSlice, opts: Options):
    """The batches of one segment (headers only) as Arrow record batches (BATCHES_SCHEMA).
    Isolation does not apply: a batch of an aborted transaction is still a batch."""
    seg, _data, walk = _walk(s, opts)
    t = _kept(columnar.batch_table(walk.entries), s, replace(opts, read_committed=False))
    ts_type = t["timestamp_type"].cast(pa.int32())
    yield from _rows({
        **_where(s, seg, t.num_rows),
        **{name: t[name] for name in (
            "position", "size", "magic", "base_offset", "last_offset", "num_records",
            "partition_leader_epoch", "crc", "attributes", "compression")},
        "timestampType": ts_type,
        "base_timestamp": _timestamps(t["base_timestamp"], ts_type),
        "max_timestamp": _timestamps(t["max_timestamp"], ts_type),
        **{name: t[name] for name in (
            "producer_id", "producer_epoch", "base_sequence", "is_transactional", "is_control")},
    })  # fmt: skip


class _Reader(DataSourceReader):
    def __init__(self, options: dict):
        self.opts = Options.parse(options)
        self.paths = input_paths(options)

    def partitions(self):
        return segment_slices(self.paths, self.opts)


class RecordsReader(_Reader):
    def read(self, partition: SegmentSlice):
        yield from records(partition, self.opts)


class RecordsDataSource(DataSource):
    """spark.read.format("kafkacodec").load(path): one row per record."""

    @classmethod
    def name(cls):
        return "kafkacodec"

    def schema(self):
        return RECORDS_SCHEMA

    def reader(self, schema):
        return RecordsReader(self.options)


class BatchesReader(_Reader):
    def read(self, partition: SegmentSlice):
        yield from batches(partition, self.opts)


class BatchesDataSource(DataSource):
    """spark.read.format("kafkacodec_batches").load(path): one row per batch, read from
    batch headers only (no record is decoded or decompressed)."""

    @classmethod
    def name(cls):
        return "kafkacodec_batches"

    def schema(self):
        return BATCHES_SCHEMA

    def reader(self, schema):
        return BatchesReader(self.options)


def register(spark) -> None:
    """Register the kafkacodec formats with a SparkSession."""
    spark.dataSource.register(RecordsDataSource)
    spark.dataSource.register(BatchesDataSource)

"""The PySpark data sources: `kafkacodec` (one row per record), `kafkacodec_batches` (one
row per batch, headers only) and `kafkacodec_problems` (one row per problem found).

The reading is done by plain functions (segment_slices, records, batches, problems; the
slices and their decoding are in scan.py) behind the readers' partitions() and read(), so
that it is tested without a SparkSession; Spark only calls them. One input partition per
segment, or per split of a segment above split_size; rows cross into Spark as Arrow record
batches.

Options (all formats):
  verify_crc      true (default) / false
  include_control false (default): control batches (transaction markers) are left out
  isolation       read_uncommitted (default) / read_committed: records of aborted
                  transactions are dropped, as a broker's read-committed fetch drops them
  on_corrupt      fail (default): a damaged segment stops the job, naming file and byte;
                  skip: what cannot be read is left out (a batch that does not decode, or
                  the rest of a segment after damage that stops the walk), with a warning;
                  report: the same, silently; the kafkacodec_problems format (same
                  options) lists what was left out, and the jobs write it as a second output
  split_size      128m (default): segments above it are read as several input partitions,
                  cut at batch boundaries found through the .index; 0: never cut

What to read (the records and batches formats; each exact, and answered from the listing,
the segment names, the .index and the .timeindex, so that what cannot match is never read):
  topics              comma-separated topic names (default: all)
  partitions          comma-separated partition numbers (default: all)
  starting_offset     the first offset read (inclusive)
  ending_offset       the offset where reading stops (exclusive, as in Spark's kafka source)
  starting_timestamp  only records with a timestamp at or after it (ms since the epoch;
                      magic 0 records, which have none, are left out)

Spark's own filters are not pushed down: PySpark keeps the read plan of the first query
that pushed filters on a DataFrame and reuses it for later queries on that DataFrame that
push none (`df.where(...).count()` then `df.count()` would count the filtered rows), so a
reader cannot keep pushed state per query. The options above belong to the DataFrame.
"""

from __future__ import annotations

import json
import os
import warnings
from dataclasses import dataclass, replace
from pathlib import Path

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc
from pyspark.sql.datasource import DataSource, DataSourceReader

from kafkacodec import units
from kafkacodec.log.partition import LogDirs, Partition, open_log
from kafkacodec.records import columnar
from kafkacodec.runtime.errors import LogError

from .scan import (
    PROBLEMS_ARROW,
    PROBLEMS_SCHEMA,
    Bounds,
    PipelineError,
    SegmentSlice,
    SliceScan,
    chunks,
    plan,
    scan,
)

DEFAULT_SPLIT_SIZE = 128 << 20

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


def parse_size(name: str, raw) -> int:
    """A byte size option: 1048576, 64k, 128m, 1g."""
    try:
        return units.parse_size(raw)
    except ValueError as err:
        raise PipelineError(f"option {name}: {err}") from None


def flag(options: dict, name: str, default: bool) -> bool:
    raw = str(options.get(name, default)).strip().lower()
    if raw in _TRUE:
        return True
    if raw in _FALSE:
        return False
    raise PipelineError(f"option {name}: expected true or false, got {options[name]!r}")


@dataclass(frozen=True)
class Options:
    verify_crc: bool = True
    include_control: bool = False
    read_committed: bool = False
    on_corrupt: str = "fail"
    split_size: int = DEFAULT_SPLIT_SIZE

    @classmethod
    def parse(cls, options: dict) -> Options:
        isolation = str(options.get("isolation", "read_uncommitted")).lower()
        if isolation not in ("read_uncommitted", "read_committed"):
            raise PipelineError(
                f"option isolation: read_uncommitted or read_committed, got {isolation!r}"
            )
        on_corrupt = str(options.get("on_corrupt", "fail")).lower()
        if on_corrupt not in ("fail", "skip", "report"):
            raise PipelineError(f"option on_corrupt: fail, skip or report, got {on_corrupt!r}")
        split = parse_size("split_size", options.get("split_size", DEFAULT_SPLIT_SIZE))
        return cls(flag(options, "verify_crc", True), flag(options, "include_control", False),
                   isolation == "read_committed", on_corrupt, split)  # fmt: skip


def _ints(name: str, raw: str) -> list[int]:
    try:
        return [int(v) for v in str(raw).split(",") if v.strip()]
    except ValueError:
        raise PipelineError(
            f"option {name}: expected numbers separated by commas, got {raw!r}"
        ) from None


def _int(options: dict, name: str) -> int | None:
    if options.get(name) in (None, ""):
        return None
    (value,) = _ints(name, options[name]) or [None]
    return value


def bounds_of(options: dict) -> Bounds:
    """What the options topics, partitions, starting_offset, ending_offset and
    starting_timestamp let through (module docstring)."""
    topics = options.get("topics")
    parts = options.get("partitions")
    ending = _int(options, "ending_offset")
    return Bounds(
        topics=None if topics in (None, "") else frozenset(t.strip() for t in topics.split(",") if t.strip()),
        partitions=None if parts in (None, "") else frozenset(_ints("partitions", parts)),
        first=_int(options, "starting_offset"), last=None if ending is None else ending - 1,
        since=_int(options, "starting_timestamp"),
    )  # fmt: skip


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
    return [resolve(p) for p in raw]


def resolve(path) -> Path:
    """A path as every process of a job must name it: absolute, resolved where the driver
    runs (executors run in directories of their own), a file:// URL as its path."""
    text = str(path)
    if text.startswith("file://"):
        text = text[len("file://") :]
    elif "://" in text:
        raise PipelineError(
            f"{text}: only local or mounted paths are read (no {text.split(':')[0]} URL)"
        )
    return Path(os.path.abspath(text))


def partitions_of(paths: list[Path], *, empty_ok: bool = False) -> list[Partition]:
    """The partition directories at or below paths. A path with no Kafka data is an error
    unless empty_ok (a stream waits for data to arrive)."""
    out: list[Partition] = []
    for path in paths:
        try:
            log = open_log(path)
        except LogError as err:
            raise PipelineError(f"{path}: {err}") from None
        found = log.partitions if isinstance(log, LogDirs) else [log]
        if not empty_ok and not any(p.segments for p in found):
            raise PipelineError(f"{path}: no Kafka data (no .log segments in it or below it)")
        out.extend(found)
    return out


def segment_slices(paths: list[Path], opts: Options, bounds: Bounds | None = None,
                   *, split: bool = True) -> list[SegmentSlice]:  # fmt: skip
    """The input partitions of a read: a slice per segment (or per split of one) that can
    hold rows within bounds."""
    return plan(partitions_of(paths), bounds or Bounds(), read_committed=opts.read_committed,
                split_size=opts.split_size if split else None)  # fmt: skip


def _scanned(s: SegmentSlice, opts: Options, *, decode: bool = True) -> SliceScan:
    """A slice read whole (batch headers); its problems handled by _problems."""
    sc = scan(s, verify_crc=opts.verify_crc, decode=decode)
    _problems(sc.problems, s, opts)
    return sc


def _problems(found: list, s: SegmentSlice, opts: Options) -> None:
    """Problems met reading a slice: raised (on_corrupt=fail), warned (skip), or left to the
    kafkacodec_problems format (report)."""
    if not found:
        return
    if opts.on_corrupt == "fail":
        raise found[0].error
    if opts.on_corrupt == "skip":
        for p in found:
            warnings.warn(f"{s.directory}/{s.base_offset:020d}.log: skipped {p.skipped_bytes} bytes "
                          f"from byte {p.position}: {p.error}", stacklevel=2)  # fmt: skip


def _aborted_mask(table: pa.Table, aborted) -> np.ndarray:
    """Rows of aborted transactions (transactional, not control, in an aborted range)."""
    drop = np.zeros(table.num_rows, dtype=bool)
    if not aborted or table.num_rows == 0:
        return drop
    pid = table["producer_id"].to_numpy()
    base = table["base_offset"].to_numpy(zero_copy_only=False)
    txn = table["is_transactional"].to_numpy(zero_copy_only=False)
    control = table["is_control"].to_numpy(zero_copy_only=False)
    candidates = txn & ~control
    if not candidates.any():
        return drop
    lo, hi = int(base[candidates].min()), int(base[candidates].max())
    present = set(np.unique(pid[candidates]).tolist())
    for producer, first, last in aborted:
        if producer in present and first <= hi and last >= lo:
            drop |= (pid == producer) & (base >= first) & (base <= last)
    return drop & candidates


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


def _where(s: SegmentSlice, n: int) -> dict:
    """The topic, partition and segment columns (one value per slice)."""
    return {
        "topic": pa.repeat(pa.scalar(s.topic, pa.string()), n),
        "partition": pa.repeat(pa.scalar(s.partition, pa.int32()), n),
        "segment": pa.repeat(pa.scalar(f"{s.base_offset:020d}.log", pa.string()), n),
    }


def records(s: SegmentSlice, opts: Options):
    """The records of one slice as Arrow record batches in RECORDS_SCHEMA's order, decoded
    a chunk of the log at a time (scan.chunks): memory is bounded whatever the slice."""
    for table, found in chunks(s, verify_crc=opts.verify_crc):
        _problems(found, s, opts)
        t = _kept(table, s, opts)
        if s.since is not None:  # starting_timestamp is exact: Spark does not check it again
            t = t.filter(pc.and_(pc.not_equal(t["timestamp_type"], -1),
                                 pc.greater_equal(t["timestamp"], s.since)))  # fmt: skip
        if t.num_rows:
            yield from _record_rows(t, s)


def _record_rows(t: pa.Table, s: SegmentSlice):
    where = _where(s, t.num_rows)
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
    """The batches of one slice (headers only) as Arrow record batches (BATCHES_SCHEMA).
    Isolation does not apply: a batch of an aborted transaction is still a batch."""
    sc = _scanned(s, opts, decode=False)
    t = _kept(columnar.batch_table(sc.entries), s, replace(opts, read_committed=False))
    ts_type = t["timestamp_type"].cast(pa.int32())
    yield from _rows({
        **_where(s, t.num_rows),
        **{name: t[name] for name in (
            "position", "size", "magic", "base_offset", "last_offset", "num_records",
            "partition_leader_epoch", "crc", "attributes", "compression")},
        "timestampType": ts_type,
        "base_timestamp": _timestamps(t["base_timestamp"], ts_type),
        "max_timestamp": _timestamps(t["max_timestamp"], ts_type),
        **{name: t[name] for name in (
            "producer_id", "producer_epoch", "base_sequence", "is_transactional", "is_control")},
    })  # fmt: skip


def problems(s: SegmentSlice, opts: Options):
    """The problems of one whole segment as rows (PROBLEMS_SCHEMA): every batch that cannot
    be read or decoded, the rest of the segment after damage that stops the walk, and a
    partial batch at its end (what a crash half-way through a write leaves)."""
    sc = scan(s, verify_crc=opts.verify_crc)
    found = sc.problems + ([sc.tail] if sc.tail else [])
    if found:
        rows = [p.row(s, sc.segment.path.name) for p in found]
        yield pa.RecordBatch.from_pylist(rows, schema=PROBLEMS_ARROW)


def _slices(read):
    """A reader's read(): Spark calls it with a placeholder when partitions() found none."""

    def wrapped(self, partition):
        if isinstance(partition, SegmentSlice):
            yield from read(partition, self.opts)

    return wrapped


class _Reader(DataSourceReader):
    offsets = False  # whether offset and timestamp options apply (the records format)
    split = True

    def __init__(self, options: dict):
        self.opts = Options.parse(options)
        self.paths = input_paths(options)
        bounds = bounds_of(options)
        if not self.offsets:  # a batch is a batch: only topics and partitions narrow it
            bounds = Bounds(topics=bounds.topics, partitions=bounds.partitions)
        self.bounds = bounds

    def partitions(self):
        return segment_slices(self.paths, self.opts, self.bounds, split=self.split)


class RecordsReader(_Reader):
    offsets = True
    read = _slices(records)


class BatchesReader(_Reader):
    read = _slices(batches)


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

    def streamReader(self, schema):
        from .stream import RecordsStreamReader

        return RecordsStreamReader(self.options)


class BatchesDataSource(_Format):
    """spark.read.format("kafkacodec_batches").load(path): one row per batch, read from
    batch headers only (no record is decoded or decompressed)."""

    FORMAT, SCHEMA, READER = "kafkacodec_batches", BATCHES_SCHEMA, BatchesReader


class ProblemsDataSource(_Format):
    """spark.read.format("kafkacodec_problems").load(path): one row per problem found by
    reading every record (what on_corrupt=skip and report leave out, with where and why)."""

    FORMAT, SCHEMA, READER = "kafkacodec_problems", PROBLEMS_SCHEMA, ProblemsReader


FORMATS = (RecordsDataSource, BatchesDataSource, ProblemsDataSource)


def register(spark) -> None:
    """Register the kafkacodec formats with a SparkSession."""
    for fmt in FORMATS:
        spark.dataSource.register(fmt)

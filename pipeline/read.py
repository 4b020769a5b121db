"""The reading behind the data sources, as plain functions tested without a SparkSession:
the slices of a read, and the rows of one slice (records, batches, problems) as Arrow
record batches in the formats' schemas."""

from __future__ import annotations

import warnings
from dataclasses import replace
from pathlib import Path

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc

from kafkacodec.log.partition import AbortFilter, Partition
from kafkacodec.records import columnar
from kafkacodec.runtime.errors import MissingSegmentError

from .options import Options, partitions_of
from .request import Ends, Request, divided
from .scan import (
    ATTEMPTS,
    PROBLEMS_ARROW,
    Bounds,
    PipelineError,
    Replaced,
    SegmentSlice,
    chunks,
    current,
    partition_slices,
    plan,
    scan,
)

#: Spark's own `kafka` source columns first (same names and types; headers only with
#: includeHeaders, as there: KafkaRecordToRowConverter.kafkaSchema), then batch metadata.
_SPARK = "key binary, value binary, topic string, partition int, offset long, timestamp timestamp, timestampType int"
_HEADERS = "headers array<struct<key:string,value:binary>>"
_METADATA = (
    "base_offset long, magic byte, compression string, producer_id long, producer_epoch short, "
    "base_sequence int, is_transactional boolean, is_control boolean, "
    "partition_leader_epoch int, segment string, position long"
)
RECORDS_SCHEMA = f"{_SPARK}, {_HEADERS}, {_METADATA}"


def records_schema(include_headers: bool, include_metadata: bool) -> str:
    """The records format's schema: Spark's kafka source's, with the headers column only
    when includeHeaders, then the batch metadata only when include_metadata."""
    return ", ".join([_SPARK] + [_HEADERS] * include_headers + [_METADATA] * include_metadata)


BATCHES_SCHEMA = (
    "topic string, partition int, segment string, position long, size int, magic byte, "
    "base_offset long, last_offset long, num_records int, partition_leader_epoch int, "
    "crc long, attributes short, compression string, timestampType int, "
    "base_timestamp timestamp, max_timestamp timestamp, producer_id long, producer_epoch short, "
    "base_sequence int, is_transactional boolean, is_control boolean"
)


def segment_slices(paths: list[Path], opts: Options, bounds: Bounds | None = None,
                   *, split: bool = True) -> list[SegmentSlice]:  # fmt: skip
    """The input partitions of a read: a slice per segment (or per split of one) that can
    hold rows within bounds."""
    return plan(partitions_of(paths, opts=opts), bounds or Bounds(),
                read_committed=opts.read_committed, split_size=opts.split_size if split else None)  # fmt: skip


def record_slices(paths: list[Path], opts: Options, request: Request) -> list[SegmentSlice]:
    """The input partitions of a records read: each partition's offsets resolved from
    Spark's options (Request.range_of: where it starts and where it ends when the read
    starts, whatever is appended while it runs), cut as Spark cuts them for minPartitions
    and maxRecordsPerPartition, then into slices of at most split_size bytes. A segment the
    broker deletes while this plans is planned again from the partition as it is then."""
    held = partitions_of(paths, opts=opts)
    request.check_topics(held, paths)
    wanted = [p for p in held if request.wants(p)]
    request.assigned(wanted)
    fail = opts.on_corrupt == "fail"
    ranges = [r for p in wanted for r in _again(p, opts, lambda q: [request.range_of(q, on_corrupt_fail=fail)])]
    aborted: dict[tuple[str, int], list] = {}
    slices = []
    for r in divided(ranges, request.min_partitions, request.max_records_per_partition):

        def plan_range(q: Partition, r=r) -> list[SegmentSlice]:
            # q: r's partition, or the same listed again after retention deleted a segment
            start = r.start if q is r.partition else request.available(q, r.start, Ends(q, opts.read_committed, fail))
            if start >= r.end:
                return []
            if opts.read_committed and r.key not in aborted:
                aborted[r.key] = AbortFilter(q).ranges()
            bounds = Bounds(first=start, last=r.end - 1, since=request.since)
            return partition_slices(q, bounds, aborted.get(r.key, ()), opts.split_size or None)

        slices += _again(r.partition, opts, plan_range)
    return slices


def _again(p: Partition, opts: Options, plan_partition):
    """plan_partition(p), and again with the partition listed anew while a segment it
    listed is deleted by the broker as it reads (MissingSegmentError)."""
    for attempt in range(ATTEMPTS):
        try:
            return plan_partition(p)
        except MissingSegmentError:
            if attempt == ATTEMPTS - 1:
                raise
            found = partitions_of([p.path], opts=opts, empty_ok=True)
            if not found:
                raise
            p = found[0]
    raise AssertionError("unreachable")


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


def where_now(read):
    """A slice reader that reads the slice where its rows are now (scan.current: the broker
    may have deleted or replaced its segment since planning), a renamed one again."""

    def reader(s: SegmentSlice, opts: Options, depth: int = 0):
        for piece in current(s, fail_on_data_loss=opts.fail_on_data_loss):
            try:
                yield from read(piece, opts)
            except Replaced as moved:  # renamed or deleted as it was opened, before any row
                if depth >= ATTEMPTS:
                    raise PipelineError(f"{moved}: the broker kept replacing the segment while "
                                        "it was read; read again") from None  # fmt: skip
                yield from reader(piece, opts, depth + 1)

    reader.__doc__ = read.__doc__
    return reader


@where_now
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
            yield from _record_rows(t, s, opts.include_headers, opts.include_metadata)


def _record_rows(t: pa.Table, s: SegmentSlice, include_headers: bool, include_metadata: bool):
    where = _where(s, t.num_rows)
    ts_type = t["timestamp_type"].cast(pa.int32())
    yield from _rows({
        "key": t["key"], "value": t["value"], "topic": where["topic"],
        "partition": where["partition"], "offset": t["offset"],
        "timestamp": _timestamps(t["timestamp"], ts_type), "timestampType": ts_type,
        **({"headers": _spark_headers(t["headers"])} if include_headers else {}),
        **({name: t[name] for name in (
            "base_offset", "magic", "compression", "producer_id", "producer_epoch",
            "base_sequence", "is_transactional", "is_control", "partition_leader_epoch")}
           if include_metadata else {}),
        **({"segment": where["segment"], "position": t["position"]} if include_metadata else {}),
    })  # fmt: skip


def _spark_headers(headers: pa.ChunkedArray) -> pa.ChunkedArray:
    """Headers as Spark's kafka source gives them: null for a record with none
    (KafkaRecordToRowConverter.toInternalRowWithHeaders), not an empty list."""
    out = []
    for chunk in headers.chunks:
        none = pc.equal(pc.list_value_length(chunk), 0)
        if pc.any(none).as_py():
            offsets = chunk.offsets  # of this chunk's slice of its values
            first, last = offsets[0].as_py(), offsets[-1].as_py()
            chunk = pa.ListArray.from_arrays(pc.subtract(offsets, pa.scalar(first, offsets.type)),
                                             chunk.values.slice(first, last - first),
                                             type=chunk.type, mask=none)  # fmt: skip
        out.append(chunk)
    return pa.chunked_array(out, headers.type)


@where_now
def batches(s: SegmentSlice, opts: Options):
    """The batches of one slice (headers only) as Arrow record batches (BATCHES_SCHEMA).
    Isolation does not apply: a batch of an aborted transaction is still a batch."""
    sc = scan(s, verify_crc=opts.verify_crc)
    _problems(sc.problems, s, opts)
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


@where_now
def problems(s: SegmentSlice, opts: Options):
    """The problems of one whole segment as rows (PROBLEMS_SCHEMA): every batch that cannot
    be read or decoded, the rest of the segment after damage that stops the walk, and a
    partial batch at its end (what a crash half-way through a write leaves)."""
    segment = f"{s.base_offset:020d}.log"
    for _table, found in chunks(s, verify_crc=opts.verify_crc, tail=True):
        if found:
            rows = [p.row(s, segment) for p in found]
            yield pa.RecordBatch.from_pylist(rows, schema=PROBLEMS_ARROW)

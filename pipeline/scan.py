"""What a scan reads and how: the slices of a query (which segments, which byte ranges of
them), and the decoding of one slice with its problems.

Planning (driver side) answers the read's options with the directory listing (topic,
partition), the segment names (offsets), the .index (byte ranges for offsets) and the
.timeindex (where timestamps reach a lower bound), and cuts segments above the split size
at batch boundaries the .index names. An index entry is used only after the log is seen to
agree with it (a batch starts at an offset entry's position and fits its offset; the batch
a time entry names has its timestamp); otherwise the slice starts or ends where it would
without the index, so that a stale or damaged index costs speed, never rows. Like Kafka,
a time index entry that holds is trusted to be the largest timestamp up to its batch.

Reading (executor side) walks the slice's batch headers, leaves out batches that cannot
hold a wanted row, and decodes the rest into Arrow columns. A batch that cannot be
decoded, and the rest of a segment after damage that stops the walk, are problems: raised
(on_corrupt=fail) or returned with the rows of the batches around them (skip, report).
"""

from __future__ import annotations

import copy
import os
import warnings
from collections.abc import Sequence
from dataclasses import dataclass, replace

import numpy as np
import pyarrow as pa
from pyspark.sql.datasource import InputPartition

from kafkacodec.generated.kafka_record_batch import KafkaRecordBatch
from kafkacodec.log.check import check_segment
from kafkacodec.log.partition import AbortFilter, Partition, open_transactions
from kafkacodec.log.segment import Segment
from kafkacodec.records import columnar
from kafkacodec.records.batches import bit_field
from kafkacodec.runtime.errors import (
    DecodeError,
    KafkacodecError,
    MissingSegmentError,
    TruncatedError,
)
from kafkacodec.storage import StoragePath, as_path, is_remote

#: One row per problem (the kafkacodec_problems format, and a report run's second output),
#: as Spark declares it and as Arrow carries it.
PROBLEMS_SCHEMA = (
    "topic string, partition int, segment string, position long, error string, "
    "message string, skipped_bytes long"
)
PROBLEMS_ARROW = pa.schema([
    ("topic", pa.string()), ("partition", pa.int32()), ("segment", pa.string()),
    ("position", pa.int64()), ("error", pa.string()), ("message", pa.string()),
    ("skipped_bytes", pa.int64()),
])  # fmt: skip


class PipelineError(KafkacodecError):
    """A path or an option the data source cannot use, or a job that cannot run."""


@dataclass(frozen=True)
class Bounds:
    """The rows a read wants of a partition (which partitions, the subscription says:
    request.py): offsets in [first, last] (None: unbounded), and timestamps >= since (ms;
    None: any)."""

    first: int | None = None
    last: int | None = None
    since: int | None = None

    @property
    def empty(self) -> bool:
        return self.first is not None and self.last is not None and self.first > self.last


class SegmentSlice(InputPartition):
    """One input partition: bytes [start, end) of a segment (end None: to its end), the
    offsets [first, last] and the lower timestamp bound wanted from them, and with
    read_committed the partition's aborted transactions as (producer, first, last). The
    directory is a local path or an object store's (an ObjectPath carries its store's
    options to the executors)."""

    def __init__(self, directory: StoragePath, topic, partition, base_offset: int, *, start: int = 0,
                 end: int | None = None, first: int | None = None, last: int | None = None,
                 since: int | None = None, aborted=(), segment: Segment | None = None):  # fmt: skip
        super().__init__((directory, base_offset, start))
        self.directory = directory
        #: A segment that directory and base offset do not name alone (a tiered one).
        self.segment = segment
        self.topic = topic
        self.partition = partition
        self.base_offset = base_offset
        self.start = start
        self.end = end
        self.first = first
        self.last = last
        self.since = since
        self.aborted = tuple(aborted)
        #: The .log as planned (st_dev, st_ino) of a local segment, and the offsets its
        #: bytes [start, end) held then (None where not known): a broker that replaces the
        #: file meanwhile (its log cleaner) or deletes it (retention) is seen by the reader
        #: (current), which then reads the same offsets from where they are now.
        self.identity: tuple[int, int] | None = None
        self.extent: tuple[int | None, int | None] = (None, None)
        #: Read from the planned file under the name Kafka gives a segment it deletes
        #: (.log.deleted, kept file.delete.delay.ms), with the same bytes.
        self.deleted = False

    def __repr__(self):
        return f"SegmentSlice({self.directory!r}, {self.base_offset}, {self.start}, {self.end})"

    def open_segment(self) -> Segment:
        """The slice's segment, opened where the slice is read (nothing of what another
        reader opened is shared)."""
        if self.segment is None:
            seg = Segment(self.directory, self.base_offset)
            if self.deleted:
                seg.path = seg.path.with_name(seg.path.name + DELETED)
            return seg
        fn, args = self.segment.__reduce__()[:2]
        return fn(*args)


# ----------------------------------------------------------------------------- planning


def plan(partitions: list[Partition], bounds: Bounds, *, split_size: int | None,
         read_committed: bool, below_lso: bool = False) -> list[SegmentSlice]:  # fmt: skip
    """The slices of every segment that can hold a row within bounds; segments above
    split_size (bytes; None: never) are cut at indexed batch boundaries. As a consumer
    fetches: from the partition's log start offset (its log-start-offset-checkpoint's, which
    DeleteRecords and retention move inside a segment), and with read_committed up to the
    last stable offset (the first offset of a transaction with no marker yet), unless the
    caller's bounds already end below it (below_lso: a stream's micro-batch, whose end
    latestOffset found)."""
    slices = []
    for p in partitions:
        if bounds.empty:
            break
        mine = bounds
        if p.segments:
            start = p.kafka_log_start_offset()
            if start > p.base_offsets[0] and (mine.first is None or mine.first < start):
                mine = replace(mine, first=start)
        aborted: Sequence[tuple[int, int, int]] = ()
        if read_committed:
            txns = AbortFilter(p)
            aborted, stable = txns.ranges(), None if below_lso else txns.stable_end()
            if stable is not None and (mine.last is None or mine.last >= stable):
                mine = replace(mine, last=stable - 1)
        slices += partition_slices(p, mine, aborted, split_size)
    return slices


def complete_end(
    p: Partition,
    *,
    read_committed: bool = False,
    on_corrupt_fail: bool = True,
    start: int | None = None,
) -> int:
    """The offset after a partition's last complete batch, now (a batch the broker is still
    writing is left out); with read_committed the last stable offset, when a transaction
    from start (default: the log start offset) on has no marker yet. This is where a read
    that began now ends (Spark's latest), whatever the broker appends while it runs."""
    if not p.segments:
        return 0
    seg = p.segments[-1]
    # from the last .index entry when it names a batch of the log (Segment.entry_holds,
    # as planning checks entries), else from the segment's start
    last = seg.offset_index.last_entry()
    begin = last.position if last.position and seg.entry_holds(last) else 0
    walk = columnar.walk_batches(
        seg.data, verify_crc=False, source=str(seg.path), start=begin, end=seg.size, file=True
    )
    if walk.error is not None and on_corrupt_fail:
        raise walk.error
    e = walk.entries
    if not len(e) and walk.position > 0:  # no batch where the index points: walk it all
        e = columnar.walk_batches(seg.data, verify_crc=False, end=seg.size, file=True).entries
    # After the last batch; an empty segment (just rolled) ends at its base offset.
    end = int(e["base_offset"][-1] + e["last_offset_delta"][-1]) + 1 if len(e) else seg.base_offset
    if read_committed:
        begin_at = p.kafka_log_start_offset() if start is None else start
        end = min(end, min(open_transactions(p, begin_at, end).values(), default=end))
    return end


def partition_slices(p: Partition, bounds: Bounds, aborted: Sequence[tuple[int, int, int]],
                      split_size: int | None) -> list[SegmentSlice]:  # fmt: skip
    slices = []
    if not bounds.empty:
        segs = p.segments
        for i, seg in enumerate(segs):
            following = segs[i + 1].base_offset if i + 1 < len(segs) else None
            if bounds.last is not None and seg.base_offset > bounds.last:
                break
            if bounds.first is not None and following is not None and following <= bounds.first:
                continue
            if bounds.since is not None and _largest_timestamp(seg, following) < bounds.since:
                continue
            # The aborted transactions that can reach into this segment's offsets.
            here = [a for a in aborted
                    if a[2] >= seg.base_offset and (following is None or a[1] < following)]  # fmt: skip
            # a view that reads the segment below a later one's start (tiered storage)
            last = bounds.last if seg.upper is None else min(
                seg.upper - 1, seg.upper - 1 if bounds.last is None else bounds.last)  # fmt: skip
            own = seg if type(seg) is not Segment else None
            # the identity of the file whose bytes are planned (its open mapping's: the
            # segment may have been opened before this, and renamed since, by the broker)
            identity = seg.blob.identity if own is None else None
            for start, end in byte_ranges(seg, replace(bounds, last=last), split_size):
                s = SegmentSlice(
                    p.path, p.topic, p.partition, seg.base_offset, start=start, end=end,
                    first=bounds.first, last=last, since=bounds.since, aborted=here, segment=own,
                )  # fmt: skip
                if identity is not None:
                    s.identity, s.extent = identity, _extent(seg, start, end, following)
                slices.append(s)
            seg.close()
    return slices


#: The suffix Kafka gives a segment's files it deletes (LogFileUtils.DELETED_FILE_SUFFIX):
#: renamed, then removed file.delete.delay.ms later.
DELETED = ".deleted"


def _identity(path) -> tuple[int, int] | None:
    try:
        st = os.stat(path)
    except OSError:
        return None
    return (st.st_dev, st.st_ino)


def _first_at(seg: Segment, position: int) -> int | None:
    """The first offset of the batch at position (a v2 batch's base offset; a legacy
    wrapper names only its last): None where not known."""
    if position == 0:
        return seg.base_offset
    try:
        b = next(seg.batches(position), None)
    except DecodeError:
        return None
    return b.base_offset if b is not None and b.magic >= 2 else None


def _extent(seg: Segment, start: int, end: int, following: int | None) -> tuple[int | None, int | None]:
    """The offsets the bytes [start, end) of a segment hold: (first, last), last None for
    the end of the log; (None, None) where the batches at the cuts do not say (legacy
    wrappers name only their last offset)."""
    first = _first_at(seg, start)
    if end >= seg.size:
        last = None if following is None else following - 1
    else:
        after = _first_at(seg, end)
        if after is None:
            return (None, None)
        last = after - 1
    return (None, None) if first is None else (first, last)


#: How many times a reader or a plan starts again when the broker changes segments under it.
ATTEMPTS = 5


def current(s: SegmentSlice, *, fail_on_data_loss: bool = True, depth: int = 0) -> list[SegmentSlice]:
    """Where a slice's rows are now, read on an executor: the slice itself while its .log
    is the file planned; the same file renamed .log.deleted (a broker deleting the segment,
    by retention or after its log cleaner replaced it, keeps it so file.delete.delay.ms);
    else the slice's offsets planned anew in the partition's segments as they are now (a
    consumer would fetch them there: compaction keeps offsets). Offsets retention removed
    meanwhile are data loss: an error, or with failOnDataLoss=false a warning."""
    if s.identity is None:
        return [s]
    seg_path = as_path(s.directory) / f"{s.base_offset:020d}.log"
    if _identity(seg_path) == s.identity:
        return [s]
    if _identity(f"{seg_path}{DELETED}") == s.identity:
        moved = copy.copy(s)
        moved.deleted = True
        return [moved]
    first, last = s.extent
    where = seg_path
    if first is None or depth >= ATTEMPTS:
        raise PipelineError(f"{where}: the broker replaced the segment while it was read; where its "
                            "offsets are now is not known: read again")  # fmt: skip
    first = first if s.first is None else max(first, s.first)
    last = min((v for v in (last, s.last) if v is not None), default=None)
    p = Partition(s.directory)
    start = p.kafka_log_start_offset() if p.segments else None
    if start is None or first < start:
        lost = f"{where}: offsets from {first} were deleted by the broker while the read ran"
        if fail_on_data_loss:
            raise PipelineError(f"{lost} (option failOnDataLoss=false goes on without them)")
        warnings.warn(lost, stacklevel=2)
        if start is None:
            return []
        first = start
    if last is not None and first > last:
        return []
    try:
        again = partition_slices(p, Bounds(first=first, last=last, since=s.since), s.aborted, None)
    except MissingSegmentError:  # deleted as this listed it: list again
        return current(s, fail_on_data_loss=fail_on_data_loss, depth=depth + 1)
    return [piece for a in again for piece in current(a, fail_on_data_loss=fail_on_data_loss, depth=depth + 1)]


def _time_entry_holds(seg: Segment, entry) -> bool:
    """Whether a time index entry (timestamp, offset) names a batch of the log holding
    that offset whose largest timestamp is the entry's."""
    start = seg.offset_index.lookup(entry.offset).position
    try:
        for b in seg.batches(start):
            if b.last_offset >= entry.offset:
                first = b.base_offset if b.magic >= 2 else b.last_offset
                return first <= entry.offset and b.max_timestamp == entry.timestamp
    except DecodeError:
        pass
    return False


def _largest_timestamp(seg: Segment, following: int | None) -> int:
    """The largest batch timestamp of a segment: from its time index's last entry and a
    walk of what follows it, once that entry is seen to hold; else from a walk of every
    batch header."""
    last = seg.time_index.last_entry()
    if last.timestamp < 0 or _time_entry_holds(seg, last):
        return seg.max_timestamp_so_far(immutable=following is not None).timestamp
    walk = columnar.walk_batches(seg.data, verify_crc=False, source=str(seg.path), end=seg.size,
                                 file=True)  # fmt: skip
    e = walk.entries
    return int(e["max_timestamp"].max()) if len(e) else -1


def _indexed(seg: Segment, i: int) -> int | None:
    """The position of offset index entry i, if it is there and trusted."""
    idx = seg.offset_index
    if not 0 <= i < len(idx):
        return None
    e = idx.entry(i)
    return e.position if seg.entry_holds(e) else None


def byte_ranges(seg: Segment, bounds: Bounds, split_size: int | None) -> list[tuple[int, int]]:
    """The byte ranges of a segment to read for bounds, each at most about split_size."""
    idx = seg.offset_index
    start, end = 0, seg.size
    if idx.usable:
        if bounds.first is not None and bounds.first > seg.base_offset:
            # Batches before an entry with offset <= first hold only smaller offsets.
            start = _indexed(seg, idx.floor(bounds.first)) or 0
        if bounds.since is not None:
            # Batches before the one a time index entry names have smaller timestamps.
            t = seg.time_index.lookup(bounds.since)
            if t.timestamp >= 0 and _time_entry_holds(seg, t):
                start = max(start, _indexed(seg, idx.floor(t.offset)) or 0)
        if bounds.last is not None:
            # The entry after the first one past `last` starts after that one's append.
            end = _indexed(seg, idx.floor(bounds.last) + 2) or end
    if start >= end:
        return []
    cuts = [start]
    while split_size and end - cuts[-1] > split_size and idx.usable:
        j = max(idx.floor_position(cuts[-1] + split_size), 0)
        while j < len(idx) and idx.entry(j).position <= cuts[-1]:
            j += 1
        cut = None
        while j < len(idx) and (cut := _indexed(seg, j)) is None:
            j += 1
        if cut is None or cut >= end:
            break
        cuts.append(cut)
    return list(zip(cuts, cuts[1:] + [end]))


# ------------------------------------------------------------------------------ reading


@dataclass
class Problem:
    """Damage found in a slice: where, the error, and how many bytes were left out."""

    position: int
    error: DecodeError
    skipped_bytes: int

    def row(self, s: SegmentSlice, segment: str) -> dict:
        values = (s.topic, s.partition, segment, self.position, type(self.error).__name__,
                  str(self.error), self.skipped_bytes)  # fmt: skip
        return dict(zip(PROBLEMS_ARROW.names, values))


@dataclass
class SliceScan:
    """A slice's batch headers walked: its segment, the headers of its wanted batches
    (columnar.ENTRY), the damage that stopped the walk, if any, and the partial batch at
    the end of the segment."""

    segment: Segment
    entries: np.ndarray
    problems: list[Problem]
    remaining: int  # bytes of a partial batch at the end of the segment (a crashed write)
    end: int  # where the walk was bounded: the slice's end, or the segment's

    @property
    def tail(self) -> Problem | None:
        """The partial batch at the end of the segment, as a problem (what a crash
        half-way through a write leaves; readers stop before it, a check reports it)."""
        if not self.remaining:
            return None
        at = self.segment.size - self.remaining
        err = TruncatedError(f"{self.remaining} bytes after the last complete batch", at)
        return Problem(at, err.with_source(str(self.segment.path)), self.remaining)


def _wanted(e: np.ndarray, s: SegmentSlice) -> np.ndarray:
    """Batches that can hold a record within the slice's offsets and timestamp bound.
    A legacy wrapper's offset is its last inner one; its inner timestamps are not known
    from the wrapper, so it is kept for timestamps (magic 0 has none: never kept)."""
    keep = np.ones(len(e), dtype=bool)
    magic, v2 = e["magic"], e["magic"] >= 2
    last = e["base_offset"] + e["last_offset_delta"]
    if s.first is not None:
        keep &= last >= s.first
    if s.last is not None:
        keep &= ~v2 | (e["base_offset"] <= s.last)
    if s.since is not None:
        wrapper = ~v2 & (bit_field(KafkaRecordBatch, "compression", e["attributes"]) != 0)
        keep &= (magic > 0) & (wrapper | (e["max_timestamp"] >= s.since))
    return keep


_PIECES = 64  # after a failure, a run is retried in this many pieces, down to single batches


def _decode(data, entries: np.ndarray, max_inflated, source: str):
    """Records of entries; a batch that fails to decode is left out and returned as a
    problem (its error naming source). The whole run is tried first; only a run that
    fails is retried, in pieces, down to the batch that fails."""
    try:
        walk = columnar.Walk(entries, 0, 0, None)
        return [columnar.records_table(data, walk, max_inflated=max_inflated)], []
    except DecodeError as err:
        if len(entries) == 1:
            problem = Problem(int(entries["position"][0]), err.with_source(source),
                              int(entries["len_batch"][0]) + 12)  # fmt: skip
            return [], [problem]
    tables, problems = [], []
    width = -(-len(entries) // _PIECES)
    for i in range(0, len(entries), width):
        t, p = _decode(data, entries[i : i + width], max_inflated, source)
        tables += t
        problems += p
    return tables, problems


class Replaced(Exception):
    """The broker renamed a slice's file while the reader opened it (current() says where
    its rows are now)."""


def scan(s: SegmentSlice, *, verify_crc: bool) -> SliceScan:
    """Walk one slice's batch headers (no record is decoded)."""
    reachable(s.directory)
    seg = s.open_segment()
    try:
        end = seg.size if s.end is None else min(s.end, seg.size)
    except MissingSegmentError:
        if s.identity is None:
            raise
        raise Replaced(str(seg.path)) from None  # deleted since current() saw it
    if s.identity is not None and seg.blob.identity != s.identity:
        seg.close()  # opened as the name moved to another file: which one is not known
        raise Replaced(str(seg.path))
    # a remote segment: only the slice's bytes are fetched (large ranges, in parallel)
    walk = columnar.walk_batches(seg.window(s.start, end), verify_crc=verify_crc,
                                 source=str(seg.path), start=s.start, end=end, file=True)  # fmt: skip
    problems = []
    if walk.error is not None:
        problems.append(Problem(walk.position, walk.error, end - walk.position))
    remaining = walk.remaining if walk.error is None and end == seg.size else 0
    return SliceScan(seg, walk.entries[_wanted(walk.entries, s)], problems, remaining, end)


#: Log bytes decoded at a time by a read (chunks): what bounds a task's memory, whatever the
#: split size (a 128 MB slice decoded whole took 1.7 GB in its Python worker).
CHUNK_BYTES = 4 << 20


def chunks(
    s: SegmentSlice,
    *,
    verify_crc: bool,
    max_inflated: int | None = None,
    chunk_bytes: int = CHUNK_BYTES,
    tail: bool = False,
):
    """The records of one slice as (table, problems) a chunk at a time: the wanted batches
    are decoded `chunk_bytes` of log at a time, and the pages of the segment's mapping that
    a chunk read are given back once it is decoded, so that a task holds a few chunks, not
    its slice. The walk's own problem (damage that stops it) comes last, and with tail the
    partial batch at the end of the segment after it (SliceScan.tail)."""
    sc = scan(s, verify_crc=verify_crc)
    seg, entries = sc.segment, sc.entries
    data, blob = seg.window(s.start, sc.end), seg.blob
    blob.release(s.start, sc.end)  # the walk read every header: its pages are not needed now
    sizes = entries["len_batch"].astype(np.int64) + 12
    cut = np.searchsorted(
        np.cumsum(sizes), np.arange(chunk_bytes, int(sizes.sum()) + 1, chunk_bytes)
    )
    done = s.start
    for part in np.split(entries, np.unique(cut[cut < len(entries)] + 1)) if len(entries) else []:
        tables, problems = _decode(data, part, max_inflated, str(seg.path))
        table = pa.concat_tables(tables) if tables else columnar.SCHEMA.empty_table()
        if s.first is not None or s.last is not None:
            table = _offsets_within(table, s.first, s.last)
        stop = int(part["position"][-1] + part["len_batch"][-1] + 12)
        blob.release(done, stop)
        done = stop
        yield table, problems
    last = sc.problems + ([sc.tail] if tail and sc.tail else [])
    if last:
        yield columnar.SCHEMA.empty_table(), last


def reachable(directory: StoragePath) -> None:
    """On an executor: the partition directory the driver planned must be there (an
    object store's is not asked: a missing object is named when it is read)."""
    d = as_path(directory)
    if not is_remote(d) and not d.is_dir():
        raise PipelineError(f"the executors cannot read {directory}: log.dirs must be on storage "
                            "every executor can reach (the driver sees it there)")  # fmt: skip


def _offsets_within(table: pa.Table, first, last) -> pa.Table:
    offsets = table["offset"].to_numpy()
    keep = np.ones(len(offsets), dtype=bool)
    if first is not None:
        keep &= offsets >= first
    if last is not None:
        keep &= offsets <= last
    return table if keep.all() else table.filter(pa.array(keep))


def check(s: SegmentSlice, *, verify_crc: bool = True) -> dict:
    """Everything `kafkacodec verify` checks for one whole segment, with the same code
    (kafkacodec.log.check): every CRC, every record decoded, every bad region, the indexes
    against the log. Returns counts and problems (strings naming file and byte)."""
    reachable(s.directory)
    seg = s.open_segment()
    try:
        c = check_segment(seg, verify_crc=verify_crc)
    finally:
        seg.close()
    return {
        "topic": s.topic, "partition": s.partition, "segment": seg.path.name,
        "bytes": c.size, "batches": c.batches, "records": c.records, "control_records": c.control_records,
        "problems": [str(r) for r in c.regions] + c.problems.lines(),
    }  # fmt: skip

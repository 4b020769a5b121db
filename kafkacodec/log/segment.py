"""One log segment: its .log file (mmap, read lazily) and its three index files.

The search methods follow Kafka's LogSegment exactly (FORMATS.md 4.4): an index lookup
gives a start position, then a short shallow walk over batch headers finds the answer.
"""

from __future__ import annotations

import bisect
import logging
import re
from collections.abc import Iterable, Iterator
from functools import cached_property
from itertools import accumulate, takewhile
from pathlib import Path
from typing import TYPE_CHECKING, Any, NamedTuple, TypeVar

from ..records.batches import LOG_OVERHEAD, BatchIterator, BytesLike, LegacyBatch, RecordBatch
from ..runtime.errors import DecodeError, MissingSegmentError, NotASegmentError
from ..storage import Blob, StoragePath, as_path, open_blob
from ..storage.fsio import PageDropper
from .index import (
    BULK_ENTRIES,
    BULK_OFFSETS,
    OffsetIndex,
    OffsetPosition,
    Problems,
    TimeIndex,
    TimestampOffset,
    TxnIndex,
    TxnSearchResult,
)

if TYPE_CHECKING:
    import pyarrow as pa
    from typing_extensions import Self

Batch = RecordBatch | LegacyBatch
_I = TypeVar("_I", OffsetIndex, TimeIndex, TxnIndex)

__all__ = [
    "Segment",
    "LogOffsetPosition",
    "TimestampAndOffset",
    "segment_name",
    "parse_segment_name",
    "WindowedBatches",
]

log = logging.getLogger("kafkacodec.log")
#: The first byte that is not zero (where a preallocated or zero-filled stretch ends).
NONZERO = re.compile(rb"[^\x00]")


class LogOffsetPosition(NamedTuple):
    """A batch found by offset: its last offset, its position and size in the .log."""

    offset: int
    position: int
    size: int


class TimestampAndOffset(NamedTuple):
    """An answer to a timestamp search; leader_epoch is None when the batch has none."""

    timestamp: int
    offset: int
    leader_epoch: int | None


def segment_name(base_offset: int, suffix: str = ".log") -> str:
    return f"{base_offset:020d}{suffix}"


def parse_segment_name(name: str) -> tuple[int, str] | None:
    """(base offset, suffix) for a file named like Kafka's segment files (20 ASCII digits,
    a dot, a suffix), else None."""
    stem, dot, suffix = name.partition(".")
    if len(stem) == 20 and stem.isascii() and stem.isdigit() and dot:
        return int(stem), "." + suffix
    return None


def sniff(data: BytesLike, path: StoragePath | str, size: int | None = None) -> None:
    """Raise NotASegmentError unless `data` (the first `size` bytes of `path`) starts like a
    file of Kafka batches: empty, or a first entry with a plausible size and a known magic.
    A torn first batch (a crash during the first append) still passes."""
    n = len(data) if size is None else size
    if n == 0:
        return
    if n < 17:
        raise NotASegmentError(
            path, f"{n} bytes are too few for a batch header; not a Kafka segment"
        )
    head = bytes(data[:17])
    declared = int.from_bytes(head[8:12], "big", signed=True)
    if declared < 14 or (declared + 12 > n and declared > (1 << 30)):
        raise NotASegmentError(
            path, f"first entry declares {declared} bytes; not a Kafka segment", 8
        )
    if head[16] not in (0, 1, 2):
        raise NotASegmentError(path, f"first entry has magic {head[16]}; not a Kafka segment", 16)


def walk_entry(batch: Batch, position: int | None = None) -> tuple[int, int, int, int]:
    """A batch as Segment.index_problems reads the log: (position, base offset, last offset,
    max timestamp). A legacy wrapper's base offset needs its inner messages; when they do
    not decompress, its own offset stands in (recovery checks a wrapper's CRC only, as
    Kafka does; the records' problem is reported where records are read)."""
    try:
        base = batch.base_offset
    except DecodeError:
        base = batch.last_offset
    pos = batch.position if position is None else position
    return (pos, base, batch.last_offset, batch.max_timestamp)


def _epoch(e: int) -> int | None:
    return None if e < 0 else e


class Segment:
    """A segment of a partition, named by its base offset, in a local directory or an
    object store (storage.as_path). Creating one reads nothing; the .log is opened on
    first read (a local one mapped whole, a remote one fetched a range at a time as walks
    reach it), each index on first use."""

    def __init__(self, directory: StoragePath | str, base_offset: int) -> None:
        self.dir = as_path(directory)
        self.base_offset = base_offset
        self.path = self.dir / segment_name(base_offset)
        self._blob: Blob | None = None
        #: The first offset this segment is not read for, in a view where a later segment
        #: holds the offsets from there on (tiered storage: a remote segment that reaches
        #: past the local log start); None: every offset of the segment is read.
        self.upper: int | None = None
        self._max_ts: tuple[int, TimestampOffset] | None = None
        #: Whether the file is named by its base offset (see standalone).
        self.named = True
        #: Said when an index could not be used and a walk replaced it.
        self.notes: list[str] = []
        #: (position, bytes) of an incomplete batch where a read (reads) stopped: a write
        #: cut short, or damage (Kafka's reads stop there too; its recovery truncates it).
        self.unread_tail: tuple[int, int] | None = None

    # Its index files' paths, made when first asked for: listing a log.dirs makes a Segment
    # per .log, most of them never looked into (a cluster's replicas not read, above all).
    @cached_property
    def index_path(self) -> StoragePath:
        return self.dir / segment_name(self.base_offset, ".index")

    @cached_property
    def timeindex_path(self) -> StoragePath:
        return self.dir / segment_name(self.base_offset, ".timeindex")

    @cached_property
    def txnindex_path(self) -> StoragePath:
        return self.dir / segment_name(self.base_offset, ".txnindex")

    def __repr__(self) -> str:
        return f"Segment({str(self.path)!r})"

    def __reduce__(self) -> tuple:
        # what names it, not what was opened (a Spark slice carries a segment to executors)
        return (_segment, (type(self), self._spec(), self.named, self.path, self.upper))

    def _spec(self) -> tuple:
        return (self.dir, self.base_offset)

    @classmethod
    def standalone(cls, path: StoragePath | str) -> Segment:
        """A file of batches not named like a segment (a capture, a test vector): read as
        one from base offset 0, without index files."""
        path = as_path(path)
        seg = cls(path.parent, 0)
        seg.path = path
        seg.named = False
        return seg

    @property
    def size(self) -> int:
        """The .log's size when it was opened (a segment being appended to is read as far
        as it was then: every walk of one Segment sees the same bytes)."""
        return self.blob.size

    # -- files
    @property
    def blob(self) -> Blob:
        """The .log's bytes (storage.Blob), opened on first use."""
        if self._blob is None:
            try:
                self._blob = self._open_blob()
            except FileNotFoundError:
                raise MissingSegmentError(self.path, "segment file is missing") from None
        return self._blob

    def _open_blob(self) -> Blob:
        return open_blob(self.path)

    @property
    def remote(self) -> bool:
        """Whether reading the segment costs fetches (an object store)."""
        return self.blob.remote

    @property
    def data(self) -> BytesLike:
        """All of the .log's bytes (an mmap; b"" for an empty file). A remote segment is
        fetched whole for it (into a spool on disk, not memory): walks from a position
        (batches, columns) fetch only what they reach."""
        return self.blob.whole()

    def window(self, start: int, end: int | None = None) -> BytesLike:
        """A buffer in which the bytes [start, end) of the .log (end: its end) are present
        at their positions: a local file's map, or a remote one's spool once fetched."""
        return self.blob.ensure(start, self.size if end is None else end)

    @cached_property
    def offset_index(self) -> OffsetIndex:
        return self._checked(self._open_index(OffsetIndex, self.index_path))

    @cached_property
    def time_index(self) -> TimeIndex:
        return self._checked(self._open_index(TimeIndex, self.timeindex_path))

    @cached_property
    def txn_index(self) -> TxnIndex:
        return self._checked(self._open_index(TxnIndex, self.txnindex_path))

    def _open_index(self, cls: type[_I], path: StoragePath | str) -> _I:
        return cls(path, self.base_offset)

    def _checked(self, index: _I) -> _I:
        if index.exists and index.problems:
            note = f"{index.path}: {'; '.join(index.problems)}; using a walk of the log instead"
            self.notes.append(note)
            log.warning(note)
        elif not index.exists and index.KIND != "transaction index":
            note = f"{index.path}: missing; using a walk of the log instead"
            self.notes.append(note)
            log.info(note)
        return index

    def close(self) -> None:
        """Unmap the segment's .log and its indexes (they map again on use)."""
        if self._blob is not None:
            self._blob.close()
            self._blob = None
        for name in ("offset_index", "time_index", "txn_index"):
            idx = self.__dict__.pop(name, None)
            if idx is not None:
                idx.close()

    def __enter__(self) -> Self:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    # -- walking
    def batches(self, position: int = 0, *, verify_crc: bool = False,
                end: int | None = None) -> BatchIterator | WindowedBatches:  # fmt: skip
        """Shallow iteration over the batches from a byte position (Kafka's batchesFrom),
        to `end` (default: the end of the file). A remote segment is fetched a window at
        a time as the walk reaches it (WindowedBatches). Every byte is judged: a zero tail
        is damage here, as it is to Kafka's recovery (see reads for searches)."""
        stop = self.size if end is None else min(end, self.size)
        blob = self.blob
        if blob.remote:
            return WindowedBatches(blob, position, stop, verify_crc=verify_crc,
                                   source=str(self.path))  # fmt: skip
        return BatchIterator(blob.whole(), verify_crc=verify_crc, source=str(self.path),
                             start=position, end=stop, file=True)  # fmt: skip

    def reads(self, position: int = 0, *, verify_crc: bool = False) -> Iterator[Batch]:
        """The batches a running broker reads from a byte position: as batches(), but the
        log ends where the rest of the file is zeros (preallocated space, log.preallocate:
        Kafka's FileRecords of a live segment ends at the bytes written, and a clean
        shutdown trims the rest; only recovery reads the zeros, and truncates them). Used by
        the searches and reads, never by checks or recovery."""
        it = self.batches(position, verify_crc=verify_crc)
        while True:
            try:
                batch = next(it)
            except StopIteration:
                if it.remaining and not self.zeros_from(it.position):
                    self.unread_tail = (it.position, it.remaining)
                return
            except DecodeError:
                if self.zeros_from(it.position):
                    return
                raise
            yield batch

    def zeros_from(self, position: int) -> bool:
        """Whether the file holds only zero bytes from position to its end (a local file's
        preallocated tail; a remote segment never has one)."""
        if self.blob.remote or position >= self.size:
            return False
        return NONZERO.search(self.blob.whole(), position) is None

    def pages(self, start: int = 0) -> PageDropper:
        """What a long walk from `start` tells where it is, so that the pages it passed
        leave memory (storage.Blob.release)."""
        return PageDropper(self.blob, start)

    def columns(self, position: int = 0, *, verify_crc: bool = True,
                max_inflated: int | None = None) -> Iterator[pa.RecordBatch]:  # fmt: skip
        """The records from a byte position as Arrow record batches (columnar.SCHEMA), a
        chunk of the file at a time, with the pages read let go behind the walk: memory
        stays that of one chunk whatever the size of the segment. Needs the columnar extra."""
        from ..records.columnar import iter_columns  # numpy and pyarrow: the columnar extra

        data = self.window(position)
        yield from iter_columns(data, verify_crc=verify_crc, source=str(self.path),
                                start=position, end=self.size, max_inflated=max_inflated,
                                passed=self.pages(position).passed, file=True)  # fmt: skip

    def sniff(self) -> None:
        """Raise NotASegmentError unless the file starts like a Kafka segment."""
        sniff(self.window(0, 17), self.path, self.size)

    def entry_holds(self, entry: OffsetPosition) -> bool:
        """Whether an offset index entry (offset, position) agrees with the log: a batch
        starts at the position and ends at or before the entry's offset (an entry names the
        last offset of an append that starts at its position)."""
        if not 0 <= entry.position < self.size:
            return False
        try:
            batch = next(self.reads(entry.position), None)
        except DecodeError:
            return False
        return batch is not None and batch.last_offset <= entry.offset

    def start_position(self, offset: int) -> int:
        """Where a walk looking for `offset` starts: the offset index's answer (Kafka's
        lookup), once the log agrees with it (a batch starts at that position and ends at or
        before the entry's offset); else 0, and a note says the index was not trusted."""
        entry = self.offset_index.lookup(offset)
        if entry.position == 0:
            return 0
        if not self.entry_holds(entry):
            note = (f"{self.index_path}: entry ({entry.offset}, {entry.position}) does not match "
                    "the log; scanning the log from its start instead")  # fmt: skip
            if note not in self.notes:
                self.notes.append(note)
                log.warning(note)
            return 0
        return entry.position

    # -- Kafka's LogSegment searches
    def translate_offset(self, offset: int, starting_position: int = 0) -> LogOffsetPosition | None:
        """The first batch at or after the indexed position whose last offset >= offset."""
        start = max(self.start_position(offset), starting_position)
        for batch in self.reads(start):
            if batch.last_offset >= offset:
                return LogOffsetPosition(batch.last_offset, batch.position, batch.size)
        return None

    def find_offset_by_timestamp(
        self, timestamp: int, starting_offset: int | None = None
    ) -> TimestampAndOffset | None:
        """Kafka's LogSegment.findOffsetByTimestamp: the first record with a timestamp >=
        timestamp and an offset >= starting_offset."""
        if starting_offset is None:
            starting_offset = self.base_offset
        found = self.time_index.lookup(timestamp)
        position = self.start_position(max(found.offset, starting_offset))
        for batch in self.reads(position):
            if batch.max_timestamp >= timestamp:
                for r in batch.iter_records():
                    if r.timestamp >= timestamp and r.offset >= starting_offset:
                        return TimestampAndOffset(
                            r.timestamp, r.offset, _epoch(batch.partition_leader_epoch)
                        )
        return None

    def read_next_offset(self) -> int:
        """The offset after the last batch (Kafka's readNextOffset), walking only the tail
        after the last offset index entry."""
        last = None
        start = self.start_position(self.offset_index.last_entry().offset)
        pages = self.pages(start)  # a long walk when the index is missing
        for batch in self.reads(start):
            last = batch
            pages.passed(batch.position)
        return self.base_offset if last is None else last.last_offset + 1

    def max_timestamp_so_far(self, *, immutable: bool = False) -> TimestampOffset:
        """The largest batch max timestamp in the segment and the last offset of the first
        batch holding it; (-1, base offset) when empty. Starts from the time index's last
        entry and walks only what follows it; remembered until the file's size changes
        (immutable: the caller knows it cannot, as for every segment but the last)."""
        cached = self._max_ts
        if cached is not None and immutable:
            return cached[1]
        size = self.size
        if cached is not None and cached[0] == size:
            return cached[1]
        best = self._max_timestamp_walk()
        self._max_ts = (size, best)
        return best

    def largest_timestamp(self, *, immutable: bool = False) -> tuple[int, bool]:
        """Kafka's LogSegment.largestTimestamp, which UnifiedLog.fetchOffsetByTimestamp
        picks a segment by: the largest timestamp the segment holds (max_timestamp_so_far),
        else (a segment holding none: empty, emptied by the log cleaner, or only timestamps
        of -1) its .log file's last-modified time in milliseconds, as java.io.File's
        lastModified gives it; and whether it is that time."""
        found = self.max_timestamp_so_far(immutable=immutable).timestamp
        if found >= 0:
            return found, False
        return self.last_modified(), True

    def last_modified(self) -> int:
        """The .log file's last-modified time in milliseconds (truncated, as File.lastModified):
        the filesystem's, or an object store's (the object's upload time, not the broker's
        file's). MissingSegmentError where the storage gives none."""
        try:
            if isinstance(self.path, Path):
                return self.path.stat().st_mtime_ns // 1_000_000
            mtime = self.path.info().mtime_ns
        except FileNotFoundError:
            raise MissingSegmentError(self.path, "segment file is missing") from None
        if mtime is None:
            raise MissingSegmentError(self.path, "the storage gives no modification time of the segment, "
                                      "which Kafka takes as the largest timestamp of a segment holding none")  # fmt: skip
        return mtime // 1_000_000

    def _max_timestamp_walk(self) -> TimestampOffset:
        best = self.time_index.last_entry()
        start = self.start_position(best.offset) if best.timestamp >= 0 else 0
        for batch in self.reads(start):
            if batch.max_timestamp > best.timestamp:
                best = TimestampOffset(batch.max_timestamp, batch.last_offset)
        return best

    def collect_aborted_txns(self, fetch_offset: int, upper_bound_offset: int) -> TxnSearchResult:
        """Kafka's LogSegment.collectAbortedTxns: the aborted transactions of this segment's
        transaction index that overlap [fetch_offset, upper_bound_offset)."""
        return self.txn_index.collect_aborted_txns(fetch_offset, upper_bound_offset)

    # -- checking the indexes against the log
    def index_problems(self, walk: list[tuple[int, int, int, int]], *, live: bool = False,
                       aborts: set[tuple[int, int]] | None = None,
                       only: str | None = None) -> Problems:  # fmt: skip
        """Where the indexes disagree with the log. `walk` is the log's readable batches as
        (position, base offset, last offset, max timestamp), in file order; `aborts` the
        (producer id, offset) of its ABORT markers (None: the transaction index is given
        Kafka's sanity check only); `only` one index's suffix (".index", ".timeindex",
        ".txnindex") to check alone. `live`: the log is being appended to, so entries past
        what was read (written after it was mapped) are not judged.

        The rules hold for every index a broker writes, leaders' and followers' alike: an
        offset index entry points at a batch boundary and names the last offset of a batch
        at or after it (one append may hold several batches); a time index entry names a
        batch (its last offset, or any offset in it, as before Kafka 3) whose timestamp is
        the largest of the segment up to that batch; a transaction index entry's last offset
        is an ABORT marker of its producer (Kafka indexes an aborted transaction in the
        segment its marker is appended to: UnifiedLog.append, LogSegment.updateTxnIndex).
        Kafka's own sanity checks come first."""
        oi, ti = self.offset_index, self.time_index
        size = self.size
        read_to = walk[-1][2] if walk else self.base_offset - 1
        problems = Problems(limit=1000)
        checks = {".index": (oi, lambda: oi.check(None if live else size)), ".timeindex": (ti, ti.check)}
        for suffix, (index, check) in checks.items():
            if only in (None, suffix):
                found_by_check = check()
                problems.extend(f"{index.path}: {p}" for p in found_by_check)
                problems.total += found_by_check.unlisted
        if only in (None, ".txnindex"):
            problems.extend(self._txn_index_problems(aborts, read_to if live else None))
        if only not in (None, ".index"):
            oi = None  # type: ignore[assignment]
        if only not in (None, ".timeindex"):
            ti = None  # type: ignore[assignment]
        found = {idx.path: Problems() for idx in (oi, ti) if idx is not None}
        bulk = _BulkWalk.of(walk, oi, ti)
        # the walk's last offsets (increasing: bisect finds a batch by offset), and the
        # largest timestamp up to each batch
        lasts: Any = bulk.last if bulk is not None else [w[2] for w in walk]
        running: Any = bulk.running if bulk is not None else list(accumulate((w[3] for w in walk), max, initial=-1))[1:]
        if oi is not None and oi.usable:
            flagged = None if bulk is None else bulk.offset_entries(oi, size if live else None, read_to if live else None)
            if flagged is None:
                by_position = {w[0]: i for i, w in enumerate(walk)}
                kept = takewhile(lambda e: not (live and (e[1] >= size or e[0] > read_to)), oi.pairs())
                entries: Iterable = ((n, offset, position, by_position.get(position), bisect.bisect_left(lasts, offset))
                                     for n, (offset, position) in enumerate(kept))  # fmt: skip
            else:
                entries = flagged
            for n, offset, position, k, j in entries:
                line = _offset_entry_problem(oi.path, n, offset, position, k, j, lasts)
                if line:
                    found[oi.path].append(line)
        if ti is not None and ti.usable:
            tflagged = None if bulk is None else bulk.time_entries(ti, read_to if live else None)
            if tflagged is None:
                kept = takewhile(lambda e: not (live and e[1] > read_to), ti.pairs())
                entries = ((n, timestamp, offset, bisect.bisect_left(lasts, offset))
                           for n, (timestamp, offset) in enumerate(kept))  # fmt: skip
            else:
                entries = tflagged
            for n, timestamp, offset, j in entries:
                line = _time_entry_problem(ti.path, n, timestamp, offset, j, walk, running)
                if line:
                    found[ti.path].append(line)
        for lines in found.values():
            problems.extend(lines)
        return problems

    def _txn_index_problems(self, aborts: set[tuple[int, int]] | None,
                            read_to: int | None) -> list[str]:  # fmt: skip
        """Kafka's sanity check of the .txnindex, then (with aborts) each entry against the
        ABORT markers of the log; entries past read_to (a live log) are not judged."""
        xi = self.txn_index
        out = [f"{xi.path}: {p}" for p in xi.check()]
        if aborts is None or not xi.usable:
            return out
        for n, e in enumerate(xi):
            if read_to is not None and e.last_offset > read_to:
                break
            if (e.producer_id, e.last_offset) not in aborts:
                out.append(f"{xi.path}: entry {n}: offset {e.last_offset} is not an ABORT marker "
                           f"of producer {e.producer_id} in the log")  # fmt: skip
            elif not e.first_offset <= e.last_offset:
                out.append(f"{xi.path}: entry {n}: first offset {e.first_offset} is after its "
                           f"last offset {e.last_offset}")  # fmt: skip
        return out


def _offset_entry_problem(path: Any, n: int, offset: int, position: int, k: int | None, j: int,
                          lasts: Any) -> str | None:  # fmt: skip
    """What is wrong with offset index entry n, (offset, position): k is the batch of the
    walk at that position (None: no batch starts there), j the first batch whose last
    offset is at or after offset."""
    if k is None:
        return f"{path}: entry {n}: position {position} is not a batch boundary"
    if j == len(lasts) or lasts[j] != offset or j < k:
        return (f"{path}: entry {n}: offset {offset} is not the last offset of a batch "
                f"at or after position {position}")  # fmt: skip
    return None


def _time_entry_problem(path: Any, n: int, timestamp: int, offset: int, j: int, walk: list,
                        running: Any) -> str | None:  # fmt: skip
    """What is wrong with time index entry n, (timestamp, offset): j is the first batch of
    the walk whose last offset is at or after offset, running the largest timestamp up to
    each batch."""
    if j == len(walk) or walk[j][1] > offset:
        return f"{path}: entry {n}: offset {offset} is in no batch of the log"
    if running[j] != timestamp or walk[j][3] != timestamp:
        return (f"{path}: entry {n}: timestamp {timestamp} is not the largest timestamp "
                f"up to its batch at position {walk[j][0]} ({running[j]})")  # fmt: skip
    return None


class _BulkWalk:
    """The walk as NumPy arrays, to compare a large index with it at once: only the
    entries flagged are then judged one by one (_offset_entry_problem, _time_entry_problem),
    as the loop judges every entry. Used where the loop's bisect is a binary search of an
    increasing list (the walk's last offsets), which np.searchsorted is too."""

    def __init__(self, walk: list, np: Any) -> None:
        self.np = np
        cols = np.array(walk, dtype=np.int64).reshape(-1, 4)
        self.position, self.base, self.last, self.max_timestamp = cols.T
        self.running = np.maximum.accumulate(np.maximum(self.max_timestamp, -1))

    @classmethod
    def of(cls, walk: list, oi: OffsetIndex | None, ti: TimeIndex | None) -> _BulkWalk | None:
        """The bulk walk, when an index to check is large and the walk fits the rules."""
        sizes = [len(i) for i in (oi, ti) if i is not None and i.usable]
        if not walk or max(sizes, default=0) < BULK_ENTRIES:
            return None
        import numpy as np

        try:
            bulk = cls(walk, np)
        except OverflowError:  # offsets past int64: the loop's Python integers
            return None
        if (np.diff(bulk.last) < 0).any():
            return None
        return bulk

    def _cut(self, stop: Any) -> int:
        np = self.np
        return int(np.argmax(stop)) if stop.any() else len(stop)

    def offset_entries(self, oi: OffsetIndex, size: int | None,
                       read_to: int | None) -> list[tuple[int, int, int, int | None, int]] | None:  # fmt: skip
        """(n, offset, position, batch at position or None, batch of offset) of the offset
        index entries that can be wrong, in order; None when the index is not read at once."""
        cols = oi.columns()
        if cols is None or abs(oi.base_offset) >= BULK_OFFSETS:
            return None
        np = self.np
        offsets, positions = oi.base_offset + cols[0], cols[1]
        if size is not None:  # a live log: entries past what was read are not judged
            n = self._cut((positions >= size) | (offsets > read_to))
            offsets, positions = offsets[:n], positions[:n]
        k = np.searchsorted(self.position, positions)
        at = np.minimum(k, len(self.position) - 1)
        boundary = (k < len(self.position)) & (self.position[at] == positions)
        j = np.searchsorted(self.last, offsets)
        jj = np.minimum(j, len(self.last) - 1)
        wrong = ~boundary | (j == len(self.last)) | (self.last[jj] != offsets) | (j < k)
        return [(n, int(offsets[n]), int(positions[n]), int(k[n]) if boundary[n] else None, int(j[n]))
                for n in np.flatnonzero(wrong).tolist()]  # fmt: skip

    def time_entries(self, ti: TimeIndex, read_to: int | None) -> list[tuple[int, int, int, int]] | None:
        """(n, timestamp, offset, batch of offset) of the time index entries that can be
        wrong, in order; None when the index is not read at once."""
        cols = ti.columns()
        if cols is None or abs(ti.base_offset) >= BULK_OFFSETS:
            return None
        np = self.np
        timestamps, offsets = cols[0], ti.base_offset + cols[1]
        if read_to is not None:
            n = self._cut(offsets > read_to)
            timestamps, offsets = timestamps[:n], offsets[:n]
        running = self.running
        j = np.searchsorted(self.last, offsets)
        jj = np.minimum(j, len(self.last) - 1)
        wrong = (j == len(self.last)) | (self.base[jj] > offsets) | (running[jj] != timestamps) \
            | (self.max_timestamp[jj] != timestamps)
        return [(n, int(timestamps[n]), int(offsets[n]), int(j[n])) for n in np.flatnonzero(wrong).tolist()]


def _segment(cls: type[Segment], spec: tuple, named: bool, path: StoragePath,
             upper: int | None) -> Segment:  # fmt: skip
    seg = cls(*spec)
    if not named:
        seg.path, seg.named = path, False
    seg.upper = upper
    return seg


class WindowedBatches:
    """BatchIterator's walk over a remote segment, fetching a window at a time: the first
    one small (a lookup reads a few kilobytes past an index entry), each next one twice
    as large up to MAX_WINDOW (a scan reads in large sequential ranges). A batch that
    crosses a window's end is fetched whole with the next window. Positions, errors and
    `position` / `remaining` after the end are those of a BatchIterator over the whole file.
    """

    FIRST_WINDOW = 64 << 10
    MAX_WINDOW = 16 << 20
    #: From this window size on a walk is taken for a scan and reads ahead.
    SCAN_WINDOW = 1 << 20
    #: What a walk may read of an entry before it knows the entry fits (a v2 header).
    HEADER = 61

    def __init__(self, blob: Blob, start: int, end: int, *, verify_crc: bool,
                 source: str) -> None:  # fmt: skip
        self.blob = blob
        self.end = end
        self.verify_crc = verify_crc
        self.source = source
        self.batches = 0
        self._window = self.FIRST_WINDOW
        self._opened_at = start
        self._it = self._open(start)

    def _open(self, pos: int, *, to_end: bool = False) -> BatchIterator:
        """An iterator over the next window, from pos: at least the batch that starts
        there (its size is read first), at most to the end."""
        self._opened_at = pos
        stop = self.end if to_end else min(self.end, pos + self._window)
        if stop < self.end and stop - pos >= LOG_OVERHEAD:
            head = self.blob.ensure(pos, pos + LOG_OVERHEAD)
            declared = int.from_bytes(head[pos + 8 : pos + LOG_OVERHEAD], "big", signed=True)
            need = pos + LOG_OVERHEAD + max(declared, 0)
            if need > self.end:
                # It cannot fit in the file: the walk ends (or fails) on its header, as it
                # does over the whole file. Its first bytes are fetched for that judgement.
                buf = self.blob.ensure(pos, min(self.end, pos + self.HEADER))
                return BatchIterator(buf, verify_crc=self.verify_crc, source=self.source,
                                     start=pos, end=self.end, file=True)  # fmt: skip
            stop = max(stop, need)
        self._window = min(self._window * 2, self.MAX_WINDOW)
        buf = self.blob.ensure(pos, stop)
        if self._window >= self.SCAN_WINDOW and stop < self.end:
            # a scan, by now (a lookup ends within its first windows): the next window is
            # fetched while this one is read
            self.blob.prefetch(stop, min(self.end, stop + self._window))
        return BatchIterator(buf, verify_crc=self.verify_crc, source=self.source, start=pos,
                             end=stop, file=True)  # fmt: skip

    def __iter__(self) -> WindowedBatches:
        return self

    def __next__(self) -> RecordBatch | LegacyBatch:
        while True:
            it = self._it
            try:
                batch = next(it)
            except StopIteration:
                if it.end >= self.end:
                    raise
                # A batch crosses the window's end: the next window holds it whole (to the
                # end of the file if a window made no progress, which no valid file does).
                self._it = self._open(it.position, to_end=it.position == self._opened_at)
                continue
            self.batches += 1
            return batch

    @property
    def position(self) -> int:
        return self._it.position

    @property
    def remaining(self) -> int:
        return self.end - self._it.position

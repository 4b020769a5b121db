"""A segment's index files, read through mmap and decoded with the generated codecs.

OffsetIndex (.index), TimeIndex (.timeindex) and TxnIndex (.txnindex) answer Kafka's
lookups with Kafka's rules (FORMATS.md 4.1-4.4): a binary search that touches O(log n)
entries. A preallocated zero-filled tail (an active or crashed segment) ends the entries as
Kafka's rules say. An index that fails the sanity check is never trusted: its `problems`
say why, and lookups answer as an empty index does, so callers fall back to a walk.
"""

from __future__ import annotations

import functools
import itertools
from collections.abc import Callable, Iterable, Iterator
from typing import TYPE_CHECKING, Any, ClassVar, NamedTuple

from kafkacodec.generated import kafka_offset_index as _oi
from kafkacodec.generated import kafka_time_index as _ti
from kafkacodec.generated import kafka_txn_index as _xi

from ..runtime._prim import Generated
from ..runtime.errors import DecodeError, LogError
from ..runtime.search import last_at_or_below
from ..storage import StoragePath, as_path, fsio, is_remote
from ..storage import map_file as map_file
from ..storage.fsio import unmap

if TYPE_CHECKING:
    from typing_extensions import Self

__all__ = [
    "OffsetIndex", "TimeIndex", "TxnIndex", "OffsetPosition", "TimestampOffset", "AbortedTxn",
    "TxnSearchResult", "map_file", "encode_offset_entries", "encode_time_entries", "encode_txn_entries",
]  # fmt: skip


class OffsetPosition(NamedTuple):
    offset: int
    position: int


class TimestampOffset(NamedTuple):
    timestamp: int
    offset: int


class AbortedTxn(NamedTuple):
    producer_id: int
    first_offset: int
    last_offset: int
    last_stable_offset: int


class TxnSearchResult(NamedTuple):
    aborted: list
    is_complete: bool


#: Problem lines kept per index file; beyond it they are counted, not kept (a 10-million-entry
#: broken index must not cost gigabytes of messages).
PROBLEM_LIMIT = 100


class Problems:
    """Problem lines: the first `limit` kept, every one counted, so that a summary's count
    is true however many there are."""

    def __init__(self, limit: int = PROBLEM_LIMIT):
        self.limit = limit
        self.kept: list[str] = []
        self.total = 0

    def add(self, line: str) -> None:
        self.total += 1
        if len(self.kept) < self.limit:
            self.kept.append(line)

    append = add

    def extend(self, lines: Iterable[str]) -> None:
        if isinstance(lines, Problems):
            for line in lines.kept:
                self.add(line)
            self.total += lines.unlisted
            return
        for line in lines:
            self.add(line)

    @property
    def unlisted(self) -> int:
        return self.total - len(self.kept)

    def __bool__(self) -> bool:
        return self.total > 0

    def __len__(self) -> int:
        return self.total

    def __iter__(self) -> Iterator[str]:
        return iter(self.kept)

    def lines(self) -> list[str]:
        """The kept lines, and one that counts the rest."""
        more = self.unlisted
        return self.kept + ([f"... and {more} more problems"] if more else [])


#: Indexes of at least this many entries are checked in NumPy (_Index.columns): its import
#: (about 65 ms, when nothing else needed it) costs more than the loop saves below it.
BULK_ENTRIES = 4096
#: Offsets this far from the int64 limits are checked by the loops (Python's integers): a
#: corrupt offset plus a delta could wrap in NumPy.
BULK_OFFSETS = 1 << 62
#: NumPy's code for each struct code of the generated entries' STRUCT.
_NUMPY_CODES = {"b": "i1", "B": "u1", "h": "i2", "H": "u2", "i": "i4", "I": "u4", "q": "i8", "Q": "u8"}


def _pair(first: Any, second: Any, i: int) -> tuple[int, int]:
    """Entry i of two columns, as pairs() gives it."""
    return int(first[i]), int(second[i])


class _Named(str):
    """The name of an index that is not a file of its own (a range of a tiered segment's
    `indexes` object), with the `name` messages print."""

    @property
    def name(self) -> str:
        return self.rpartition("/")[2]


class _Index:
    ENTRY: ClassVar[type[Generated]]  # the generated entry class
    PAIR: ClassVar[type[tuple]]  # what entry() and pairs() give an entry as (not the txnindex)
    SIZE = 0
    KIND = ""

    def __init__(self, path: StoragePath | str, base_offset: int, *,
                 data: Any = map_file) -> None:
        """The index file at path; or, given `data`, those bytes (None: no such index), or
        what a callable returns (a tiered segment's index, read from its object), named
        `path` in messages."""
        self.path: Any = _Named(path) if isinstance(path, str) and data is not map_file else as_path(path)
        self.base_offset = base_offset
        self.problems: list[str] = []
        tail = None
        try:
            if data is map_file and not is_remote(self.path):
                try:
                    tail = fsio.GrowingTail(self.path)
                except FileNotFoundError:
                    self._buf, self.file_size = None, 0
                else:
                    self._buf, self.file_size = b"", tail.size
            elif data is map_file:
                self._buf, self.file_size = map_file(self.path)
            else:
                raw = data() if callable(data) else data
                self._buf, self.file_size = raw, (0 if raw is None else len(raw))
        except LogError as err:  # a link, a FIFO, unreadable: never trusted, never followed
            self._buf, self.file_size = b"", 0
            self.problems.append(err.message)
            self.exists = True
        else:
            self.exists = self._buf is not None
        if self._buf is None:
            self._buf = b""
        raw = self.file_size // self.SIZE
        #: Kafka's sanity check of the file's size (None: a whole number of entries).
        self.size_problem = None
        if self.file_size % self.SIZE:
            self.size_problem = (f"Index file {self.path.name} is corrupt, found {self.file_size} "
                                 f"bytes which is neither positive nor a multiple of {self.SIZE}")  # fmt: skip
            self.problems.append(self.size_problem)
        if tail is not None:
            # A broker trims the preallocated tail of the index it rolls (trimToValidSize):
            # the entries are found with pread and only they are mapped (fsio.GrowingTail).
            zero = bytes(self.SIZE)
            self._count = self._entries_before_zero_tail(raw, lambda i: tail.pread(self.SIZE, i * self.SIZE) == zero)
            self._buf = tail.map_prefix(self._count * self.SIZE)
            self._mapped = len(self._buf) // self.SIZE
        else:
            self._mapped = raw
            self._count = self._entries_before_zero_tail(raw, self._is_zero)
        self.preallocated = raw - self._count  # zero-filled entries past the last one
        self.problems += self._sanity(self._count)

    # -- entries
    def _bytes(self, i: int) -> tuple[Any, int]:
        """(buffer, start) of entry i: the mapped entries, or past them the file read now."""
        if i < self._mapped:
            return self._buf, i * self.SIZE
        tail = fsio.GrowingTail(self.path)
        try:
            return tail.pread(self.SIZE, i * self.SIZE), 0
        finally:
            tail.close()

    def _read(self, i: int) -> Any:
        buf, at = self._bytes(i)
        try:
            return self.ENTRY.parse(buf, at, at + self.SIZE)[0]
        except DecodeError as err:
            raise err.with_source(str(self.path)) from None

    def _is_zero(self, i: int) -> bool:
        buf, at = self._bytes(i)
        return buf[at : at + self.SIZE] == bytes(self.SIZE)

    def _entries_before_zero_tail(self, raw: int, is_zero: Callable[[int], bool]) -> int:
        """Entries before the first all-zero one after entry 0 (FORMATS.md 4.1): valid
        entries increase, so "is zero" is monotone from entry 1 and a binary search finds it."""
        if raw <= 1 or not is_zero(raw - 1):
            return raw
        lo, hi = 1, raw - 1  # the first zero entry lies in [lo, hi]
        while lo < hi:
            mid = (lo + hi) // 2
            if is_zero(mid):
                hi = mid
            else:
                lo = mid + 1
        return lo

    def fields(self, count: int | None = None) -> list[tuple]:
        """The first `count` entries' stored fields (default: every entry) as tuples (the
        generated entry's FIELDS, raw: an offset relative to the base), read at once where
        the entry is one struct (ENTRY.STRUCT); what iterating the index gives, in bulk."""
        count = self._count if count is None else count
        whole = getattr(self.ENTRY, "STRUCT", None)
        if whole is not None and count <= self._mapped:
            try:
                buf: Any = self._buf  # (bytes, a map or a mapped prefix: a buffer, checked here)
                with memoryview(buf) as view, view[: count * self.SIZE] as part:
                    return list(whole.iter_unpack(part))
            except TypeError:  # a buffer that is not one (a remote file's reader): one at a time
                pass
        entries = (self._read(i) for i in range(count))
        return [tuple(getattr(e, f) for f in self.ENTRY.FIELDS) for e in entries]

    def columns(self, count: int | None = None) -> tuple | None:
        """The first `count` entries' stored fields (default: every entry) as NumPy int64
        arrays, one per field of fields()' tuples, read at once from the mapping; None where
        they cannot be (an entry that is not one struct, entries past the mapping, a buffer
        that is not one): fields() reads those."""
        count = self._count if count is None else count
        whole = getattr(self.ENTRY, "STRUCT", None)
        if whole is None or count > self._mapped:
            return None
        import numpy as np

        order, codes = whole.format[0], whole.format[1:]
        dtype = np.dtype([(f"f{i}", order + _NUMPY_CODES[c]) for i, c in enumerate(codes)])
        try:
            rows = np.frombuffer(self._buf, dtype, count)  # type: ignore[arg-type]
        except (TypeError, ValueError):
            return None
        return tuple(rows[name].astype(np.int64) for name in dtype.names or ())

    def __len__(self) -> int:
        return self._count

    def __iter__(self) -> Iterator[Any]:
        for i in range(self._count):
            yield self.entry(i)

    def entry(self, i: int) -> Any:
        raise NotImplementedError

    def pairs(self, count: int | None = None) -> list:
        raise NotImplementedError

    def _judged(self, problems: Problems, limit: int | None, columns: tuple | None = None,
                flagged: list[int] | None = None) -> Problems:  # fmt: skip
        """problems, with each entry's as _entry_problems finds them (limit: the log's size
        or end offset): of the flagged entries, read from columns (the pairs as NumPy
        arrays), where a comparison of the whole index flagged them; else of every entry."""
        if columns is not None and flagged is not None:
            first, second = columns
            for i in flagged:
                prev = _pair(first, second, i - 1) if i else None
                problems.extend(self._entry_problems(i, *_pair(first, second, i), prev, limit))  # type: ignore[attr-defined]
            return problems
        before = None
        for i, pair in enumerate(self.pairs()):
            problems.extend(self._entry_problems(i, *pair, before, limit))  # type: ignore[attr-defined]
            before = pair
        return problems

    def dump_entries(self) -> Iterator[Any]:
        """The entries kafka-dump-log prints: every whole entry of the file in order, up to
        the first one after entry 0 whose offset is the base offset (the zero-filled tail
        of a preallocated or crashed index)."""
        n = self._count + self.preallocated
        if self.KIND == "transaction index":
            entries: Iterable[Any] = (self.entry(i) for i in range(n))
        else:  # the mapped ones read at once, each as its entry() gives it; past the mapping
            # (a preallocated tail, 10 MB of zeros in an active segment's index) one at a
            # time, so that the first zero entry ends the reading
            bulk = min(n, self._mapped)
            head = map(functools.partial(tuple.__new__, self.PAIR), self.pairs(bulk))
            entries = itertools.chain(head, (self.entry(i) for i in range(bulk, n)))
        for i, e in enumerate(entries):
            if i and self.KIND != "transaction index" and e.offset == self.base_offset:
                return
            yield e

    @property
    def usable(self) -> bool:
        """Whether lookups may trust this index (present and passing the sanity check)."""
        return self.exists and not self.problems

    def _sanity(self, count: int) -> list[str]:
        """Kafka's sanityCheck of an index holding `count` entries."""
        return []

    def file_sanity(self) -> list[str]:
        """Kafka's sanityCheck as kafka-dump-log runs it (--index-sanity-check): the index
        opened read-only, so every whole entry of the file counts, a zero-filled tail too
        (a broker's own index of its active segment counts what it wrote; see problems)."""
        size = [] if self.size_problem is None else [self.size_problem]
        return size + self._sanity(self.file_size // self.SIZE) if self.exists else size

    def close(self) -> None:
        unmap(self._buf)
        self._buf = b""

    def __enter__(self) -> Self:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    def _search(self, key: Callable[[int], int], target: int) -> int:
        """Index of the last entry whose key is <= target, or -1 (O(log n) entries read)."""
        return last_at_or_below(key, self._count, target)


class OffsetIndex(_Index):
    """The .index file: (offset, position) entries, sparse, increasing."""

    ENTRY = _oi.Entry
    PAIR = OffsetPosition
    SIZE = 8
    KIND = "offset index"

    def entry(self, i: int) -> OffsetPosition:
        """Entry i as (offset, position), its offset absolute."""
        e = self._read(i)
        return OffsetPosition(self.base_offset + e.relative_offset, e.position)

    def _sanity(self, count: int) -> list[str]:
        if count and self.entry(count - 1).offset < self.base_offset:
            return [
                f"Corrupt index found, index file ({self.path.name}) has non-zero size but the last "
                f"offset is {self.entry(count - 1).offset} which is less than the base offset "
                f"{self.base_offset}"
            ]
        return []

    def check(self, log_size: int | None = None) -> Problems:
        """Kafka's sanity check plus a full one: offsets and positions strictly increasing,
        positions inside the log. Returns the problems (empty when sound). A large index is
        compared in NumPy (only the entries it flags are looked at one by one)."""
        problems = Problems()
        problems.extend(self.problems)
        base = self.base_offset
        cols = self.columns() if self._count >= BULK_ENTRIES and abs(base) < BULK_OFFSETS else None
        if cols is not None:
            import numpy as np

            offsets, positions = base + cols[0], cols[1]
            flagged = offsets < base
            flagged[1:] |= (offsets[1:] <= offsets[:-1]) | (positions[1:] <= positions[:-1])
            if log_size is not None:
                flagged |= positions >= log_size
            return self._judged(problems, log_size, (offsets, positions), np.flatnonzero(flagged).tolist())
        return self._judged(problems, log_size)

    def _entry_problems(self, i: int, offset: int, position: int, prev: tuple[int, int] | None,
                        log_size: int | None) -> list[str]:  # fmt: skip
        """What is wrong with entry i, (offset, position), after the entry prev."""
        out = []
        if offset < self.base_offset:
            out.append(f"entry {i}: offset {offset} is below the base offset {self.base_offset}")
        if prev is not None and (offset <= prev[0] or position <= prev[1]):
            out.append(f"entry {i}: ({offset}, {position}) does not increase after {prev}")
        if log_size is not None and position >= log_size:
            out.append(f"entry {i}: position {position} is past the end of the log ({log_size} bytes)")
        return out

    def pairs(self, count: int | None = None) -> list[tuple[int, int]]:
        """The first `count` entries (default: every entry) as (offset, position), read at once."""
        base = self.base_offset
        return [(base + relative, position) for relative, position in self.fields(count)]

    def lookup(self, target: int) -> OffsetPosition:
        """Kafka's OffsetIndex.lookup: the entry with the largest offset <= target, else
        (base offset, 0). An unusable index answers (base offset, 0)."""
        if not self.usable:
            return OffsetPosition(self.base_offset, 0)
        rel = target - self.base_offset
        i = self._search(lambda k: self._read(k).relative_offset, rel)
        return self.entry(i) if i >= 0 else OffsetPosition(self.base_offset, 0)

    def last_entry(self) -> OffsetPosition:
        """Kafka's OffsetIndex.lastEntry: the last entry, or (base offset, 0) when there is none
        or the index is unusable."""
        if not self.usable or not self._count:
            return OffsetPosition(self.base_offset, 0)
        return self.entry(self._count - 1)

    def floor(self, target: int) -> int:
        """The number of the entry with the largest offset <= target; -1 when there is
        none or the index is unusable."""
        if not self.usable:
            return -1
        return self._search(lambda k: self._read(k).relative_offset, target - self.base_offset)

    def floor_position(self, position: int) -> int:
        """The number of the entry with the largest position <= position; -1 when there
        is none or the index is unusable."""
        if not self.usable:
            return -1
        return self._search(lambda k: self._read(k).position, position)


class TimeIndex(_Index):
    """The .timeindex file: (timestamp, offset) entries, timestamps strictly increasing."""

    ENTRY = _ti.Entry
    PAIR = TimestampOffset
    SIZE = 12
    KIND = "time index"

    def entry(self, i: int) -> TimestampOffset:
        """Entry i as (timestamp, offset), its offset absolute."""
        e = self._read(i)
        return TimestampOffset(e.timestamp, self.base_offset + e.relative_offset)

    def _sanity(self, count: int) -> list[str]:
        if not count:
            return []
        first, last, out = self.entry(0), self.entry(count - 1), []
        if last.timestamp < first.timestamp:
            out.append(
                f"Corrupt time index found, time index file ({self.path.name}) has non-zero size but "
                f"the last timestamp is {last.timestamp} which is less than the first timestamp "
                f"{first.timestamp}"
            )
        if last.offset < self.base_offset:
            out.append(
                f"Corrupt time index found, time index file ({self.path.name}) has non-zero size but "
                f"the last offset is {last.offset} which is less than the first offset {self.base_offset}"
            )
        return out

    def check(self, log_end_offset: int | None = None) -> Problems:
        """Kafka's sanity check plus a full one: timestamps strictly increasing, offsets
        not decreasing, below the log end offset. A large index is compared in NumPy."""
        problems = Problems()
        problems.extend(self.problems)
        base = self.base_offset
        cols = self.columns() if self._count >= BULK_ENTRIES and abs(base) < BULK_OFFSETS else None
        if cols is not None:
            import numpy as np

            timestamps, offsets = cols[0], base + cols[1]
            flagged = np.zeros(len(offsets), dtype=bool)
            flagged[1:] = (timestamps[1:] <= timestamps[:-1]) | (offsets[1:] < offsets[:-1])
            if log_end_offset is not None:
                flagged |= offsets >= log_end_offset
            return self._judged(problems, log_end_offset, (timestamps, offsets), np.flatnonzero(flagged).tolist())
        return self._judged(problems, log_end_offset)

    @staticmethod
    def _entry_problems(i: int, timestamp: int, offset: int, prev: tuple[int, int] | None,
                        log_end_offset: int | None) -> list[str]:  # fmt: skip
        """What is wrong with entry i, (timestamp, offset), after the entry prev."""
        out = []
        if prev is not None and (timestamp <= prev[0] or offset < prev[1]):
            out.append(f"entry {i}: ({timestamp}, {offset}) does not increase after {prev}")
        if log_end_offset is not None and offset >= log_end_offset:
            out.append(f"entry {i}: offset {offset} is past the log end offset {log_end_offset}")
        return out

    def pairs(self, count: int | None = None) -> list[tuple[int, int]]:
        """The first `count` entries (default: every entry) as (timestamp, offset), read at once."""
        base = self.base_offset
        return [(timestamp, base + relative) for timestamp, relative in self.fields(count)]

    def lookup(self, timestamp: int) -> TimestampOffset:
        """Kafka's TimeIndex.lookup: the entry with the largest timestamp <= timestamp,
        else (-1, base offset)."""
        if not self.usable:
            return TimestampOffset(-1, self.base_offset)
        i = self._search(lambda k: self._read(k).timestamp, timestamp)
        return self.entry(i) if i >= 0 else TimestampOffset(-1, self.base_offset)

    def last_entry(self) -> TimestampOffset:
        """Kafka's TimeIndex.lastEntry: the last entry, or (-1, base offset) when there is none
        or the index is unusable."""
        if not self.usable or not self._count:
            return TimestampOffset(-1, self.base_offset)
        return self.entry(self._count - 1)


class TxnIndex(_Index):
    """The .txnindex file: one entry per aborted transaction, in the order they ended."""

    ENTRY = _xi.Entry
    SIZE = 34
    KIND = "transaction index"

    def _entries_before_zero_tail(self, raw: int, is_zero: Callable[[int], bool]) -> int:
        return raw  # never preallocated

    def entry(self, i: int) -> AbortedTxn:
        """Entry i: (producer id, first offset, last offset, last stable offset)."""
        e = self._read(i)
        return AbortedTxn(e.producer_id, e.first_offset, e.last_offset, e.last_stable_offset)

    def _sanity(self, count: int) -> list[str]:
        for i in range(count):
            try:
                e = self.entry(i)
            except DecodeError as err:
                return [f"entry {i}: {err.message}"]
            if e.last_offset < self.base_offset:
                return [
                    f"Last offset of aborted transaction {tuple(e)} in index {self.path.name} is "
                    f"less than start offset {self.base_offset}"
                ]
        return []

    def check(self) -> list[str]:
        """Kafka's sanity check of the transaction index: its problems (empty when sound)."""
        return list(self.problems)

    def collect_aborted_txns(self, fetch_offset: int, upper_bound_offset: int) -> TxnSearchResult:
        """Kafka's TransactionIndex.collectAbortedTxns: aborted transactions overlapping
        [fetch_offset, upper_bound_offset); complete when one's last stable offset reaches
        the upper bound (no later segment can hold more)."""
        out = []
        for e in self:
            if e.last_offset >= fetch_offset and e.first_offset < upper_bound_offset:
                out.append(e)
            if e.last_stable_offset >= upper_bound_offset:
                return TxnSearchResult(out, True)
        return TxnSearchResult(out, False)


# ------------------------------------------------------------------------------ writing


def encode_offset_entries(base_offset: int, entries: Iterable[tuple[int, int]]) -> bytes:
    return _oi.KafkaOffsetIndex(
        entries=[_oi.Entry(relative_offset=o - base_offset, position=p) for o, p in entries]
    ).build()


def encode_time_entries(base_offset: int, entries: Iterable[tuple[int, int]]) -> bytes:
    return _ti.KafkaTimeIndex(
        entries=[_ti.Entry(timestamp=t, relative_offset=o - base_offset) for t, o in entries]
    ).build()


def encode_txn_entries(entries: Iterable[AbortedTxn]) -> bytes:
    return _xi.KafkaTxnIndex(
        entries=[
            _xi.Entry(
                version=0, producer_id=p, first_offset=f, last_offset=lo, last_stable_offset=s
            )
            for p, f, lo, s in entries
        ]
    ).build()


class IndexBuilder:
    """The offset and time index entries of a segment whose batches are appended one at a
    time, as Kafka's LogSegment makes them (LogSegment.recover and append): before a batch
    at a position more than interval bytes past the last entry, an offset index entry (the
    batch's last offset, its position) and a time index entry (the largest timestamp so far
    and its batch's last offset, when larger than the last entry's); closing adds the final
    time index entry (TimeIndex.maybeAppend with skipFullCheck).

    An entry Kafka's indexes refuse (OffsetIndex.append: an offset not above the last one;
    TimeIndex.maybeAppend: an offset below the last entry's; both InvalidOffsetException,
    which makes LogLoader empty the segment) is not appended: `invalid` says why, and
    nothing more is appended."""

    __slots__ = ("interval", "offset_entries", "time_entries", "max_ts", "max_ts_offset", "_last_at",
                 "invalid")  # fmt: skip

    def __init__(self, base_offset: int, interval: int) -> None:
        self.interval = interval
        self.offset_entries: list[tuple[int, int]] = []
        self.time_entries: list[tuple[int, int]] = []
        self.max_ts, self.max_ts_offset = -1, base_offset
        self._last_at = 0
        self.invalid: str | None = None

    def append(self, position: int, last_offset: int, max_timestamp: int) -> None:
        if max_timestamp > self.max_ts:
            self.max_ts, self.max_ts_offset = max_timestamp, last_offset
        if position - self._last_at > self.interval and self.invalid is None:
            if self.offset_entries and last_offset <= self.offset_entries[-1][0]:
                self.invalid = (f"byte {position}: offset {last_offset} is not above the last "
                                f"offset index entry's ({self.offset_entries[-1][0]}): Kafka's "
                                "OffsetIndex.append throws InvalidOffsetException")  # fmt: skip
                return
            self.offset_entries.append((last_offset, position))
            self._time_entry()
            self._last_at = position

    def _time_entry(self) -> None:
        if self.time_entries and self.max_ts_offset < self.time_entries[-1][1]:
            self.invalid = (f"the time index entry's offset {self.max_ts_offset} is below the last "
                            f"one's ({self.time_entries[-1][1]}): Kafka's TimeIndex.maybeAppend "
                            "throws InvalidOffsetException")  # fmt: skip
            return
        last = self.time_entries[-1][0] if self.time_entries else -1
        if self.max_ts > last:
            self.time_entries.append((self.max_ts, self.max_ts_offset))

    def close(self) -> None:
        if self.invalid is None:
            self._time_entry()

"""What a broker's next start does to a partition's files: Kafka's LogLoader.load, predicted.

`kafkacodec recover`'s repair (repair.py) applies Kafka's recovery rule to every segment, as
a broker does when it has no recovery point for the partition. A broker starting on the
files does less, and what it does depends on two files of its log directory:

- `.kafka_cleanshutdown` (LogManager.loadLogs): after a clean shutdown, Kafka recovers no
  segment at all (LogLoader.recoverLog);
- `recovery-point-offset-checkpoint` (LogManager, the partition's entry; 0 when it has none
  or the file cannot be read): after an unclean shutdown, Kafka recovers only the segments
  from the one holding the recovery point on (LogSegments.values(recoveryPoint, MAX)): the
  first with invalid bytes is truncated to its valid prefix and every later one of them is
  deleted. Damage in a segment below the recovery point stays, and is served.

Whatever the shutdown, LogLoader.loadSegmentFiles recovers (truncates, never deleting later
segments) a segment whose offset index file is missing or whose transaction index names a
transaction ending before the segment (LogSegment.sanityCheck, TransactionIndex.sanityCheck);
a transaction index entry of a version above 0 fails the load. After recovery, a log whose
end falls below the log-start-offset-checkpoint loses every segment
(deleteSegmentsIfLogStartGreaterThanLogEnd).

The walk is Kafka's own (LogSegment.recover over FileLogInputStream), byte for byte, and
deliberately not kafkacodec's stricter reader: a batch is whole when at least 17 bytes
remain and its size fits, invalid when its size is below 14 (CorruptRecordException); a
magic below 2 is checked as a legacy message (CRC-32 from the magic on), any other magic
as a v2 batch (size at least 61, CRC-32C from the attributes on), so a batch whose magic
byte alone was changed to 3 or more keeps its CRC and is kept by Kafka. The offset and time
indexes are rebuilt during the walk; an entry whose offset is not above the last one
(OffsetIndex.append, TimeIndex.maybeAppend: InvalidOffsetException) makes LogLoader empty
the segment (truncateTo(baseOffset)). A batch whose offset the segment cannot hold makes
Kafka split the segment (LogSegmentOffsetOverflowException): predicted as such, not
modelled further.

Followed: org.apache.kafka.storage.internals.log.LogLoader, LogSegment, LogSegments,
TransactionIndex, OffsetIndex, TimeIndex; kafka.log.LogManager (Kafka 4.0 to 4.4).
"""

from __future__ import annotations

import struct
import zlib
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path

from ..records.batches import HEADER_UP_TO_MAGIC, LOG_OVERHEAD, MIN_MESSAGE_OVERHEAD, iter_batches
from ..runtime.crc import crc32c
from ..runtime.errors import DecodeError, LogError
from ..storage import fsio
from .index import IndexBuilder
from .partition import Partition, read_checkpoint
from .recovery import DEFAULT_INDEX_INTERVAL
from .segment import Segment

__all__ = ["CLEAN_SHUTDOWN", "RECOVERY_POINT_CHECKPOINT", "LoadPrediction", "SegmentLoad",
           "KafkaWalk", "kafka_walk", "predict_load"]  # fmt: skip

#: The file a broker writes in each log directory at a clean shutdown (CleanShutdownFileHandler).
CLEAN_SHUTDOWN = ".kafka_cleanshutdown"
#: The broker's record of each partition's recovery point, in its log directory.
RECOVERY_POINT_CHECKPOINT = "recovery-point-offset-checkpoint"

# The bytes FileLogInputStream reads: offset, size, then (v2) partition leader epoch, magic,
# CRC, attributes, last offset delta, base timestamp, max timestamp, producer id (schemas/
# kafka_record_batch.ksy; tests/log/test_loader.py checks the layout against the schema).
_V2_HEAD = struct.Struct(">qiibIhiqqq")
_V2_CRC_FROM, _V2_MIN = 21, 61
_LEGACY_CRC_FROM, _LEGACY_CRC_AT, _LEGACY_TS_AT = 16, 12, 18
_PREFIX = struct.Struct(">qi")
_U32, _I64 = struct.Struct(">I"), struct.Struct(">q")
_TXN_ENTRY = struct.Struct(">hqqqq")  # version, producer id, first, last, last stable offset
_MAX_RELATIVE = 0x7FFFFFFF


class _Frames:
    """FileLogInputStream.nextBatch over a segment's bytes, no check but the framing: (position,
    offset, size, magic) of each whole batch. A size below 14 ends it (Kafka throws
    CorruptRecordException: `corrupt` is its position); so does a batch the data does not
    hold whole. `stop` says why it ended before the end of the data, None when it did not."""

    def __init__(self, data) -> None:
        self.data = data
        self.corrupt: int | None = None
        self.stop: str | None = None

    def __iter__(self) -> Iterator[tuple[int, int, int, int]]:
        data, pos, end = self.data, 0, len(self.data)
        while pos < end - HEADER_UP_TO_MAGIC:  # FileLogInputStream.nextBatch
            offset, size = _PREFIX.unpack_from(data, pos)
            if size < MIN_MESSAGE_OVERHEAD:
                self.corrupt = pos
                self.stop = f"size {size} is below the minimum record overhead ({MIN_MESSAGE_OVERHEAD})"
                return
            if pos > end - LOG_OVERHEAD - size:
                self.stop = f"a batch of {size + LOG_OVERHEAD} bytes, only {end - pos} remain"
                return
            yield pos, offset, size, struct.unpack_from(">b", data, pos + 16)[0]
            pos += LOG_OVERHEAD + size
        if pos < end:
            self.stop = f"{end - pos} bytes are too few for a batch header"


@dataclass
class KafkaWalk:
    """LogSegment.recover over one segment's bytes: where its valid prefix ends and why."""

    valid_bytes: int
    #: The next offset after the last valid batch (readNextOffset of the truncated segment),
    #: None when no batch is valid.
    next_offset: int | None
    #: Why the walk stopped before the end of the file, or None.
    reason: str | None = None
    #: InvalidOffsetException from an index append: LogLoader empties the segment.
    invalid_offset: str | None = None
    #: LogSegmentOffsetOverflowException: LogLoader splits the segment.
    overflow: str | None = None
    #: An exception LogLoader does not catch: the load fails.
    fails: str | None = None


def kafka_walk(data, base_offset: int, index_interval_bytes: int = DEFAULT_INDEX_INTERVAL,
               ongoing: dict[int, int] | None = None) -> KafkaWalk:
    """Kafka's LogSegment.recover over `data` (a segment's bytes), without writing; a
    reason names no position when it is valid_bytes, where the walk stopped. `ongoing`
    (producer id -> first offset of its open transaction) is the producer state the walk
    starts from and updates, for the transaction index it rebuilds."""
    ongoing = {} if ongoing is None else ongoing
    last_abort: int | None = None  # TransactionIndex.append: the last aborted txn's offset
    valid, next_offset = 0, None
    indexes = IndexBuilder(base_offset, index_interval_bytes)  # Kafka's rule, and its refusals
    frames = _Frames(data)
    for pos, offset, size, magic in frames:
        stop = pos + LOG_OVERHEAD + size
        head = None
        if magic < 2:
            if zlib.crc32(data[pos + _LEGACY_CRC_FROM : stop]) != _U32.unpack_from(data, pos + _LEGACY_CRC_AT)[0]:
                return KafkaWalk(valid, next_offset, f"CRC-32 mismatch (magic {magic})")
            last = offset
            ts = _I64.unpack_from(data, pos + _LEGACY_TS_AT)[0] if magic == 1 and size >= 22 else -1
        else:
            if size + LOG_OVERHEAD < _V2_MIN:
                return KafkaWalk(valid, next_offset, f"a batch of {size + LOG_OVERHEAD} bytes, below "
                                                     f"the v2 overhead ({_V2_MIN})")  # fmt: skip
            head = _V2_HEAD.unpack_from(data, pos)
            if crc32c(data[pos + _V2_CRC_FROM : stop]) != head[4]:
                return KafkaWalk(valid, next_offset, f"CRC-32C mismatch (magic {magic})")
            last, ts = offset + head[6], head[8]
        if not 0 <= last - base_offset <= _MAX_RELATIVE:
            return KafkaWalk(valid, next_offset, overflow=(
                f"byte {pos}: offset {last} cannot be held by a segment whose base offset is "
                f"{base_offset}"))  # fmt: skip
        indexes.append(valid, last, ts)
        if indexes.invalid:
            return KafkaWalk(valid, next_offset, invalid_offset=indexes.invalid)
        valid, next_offset = stop, last + 1
        if head is not None and head[9] >= 0:  # updateProducerState, once the batch counts
            done = _producer_state(data, pos, stop, head, ongoing)
            if isinstance(done, str):
                return KafkaWalk(valid, next_offset, f"byte {pos}: {done}")
            if done is not None:
                if last_abort is not None and done <= last_abort:
                    return KafkaWalk(valid, next_offset, fails=(
                        f"byte {pos}: the aborted transaction ending at offset {done} does not end "
                        f"after the previous one's ({last_abort}): TransactionIndex.append throws "
                        "IllegalArgumentException"))  # fmt: skip
                last_abort = done
    indexes.close()  # timeIndex.maybeAppend(..., skipFullCheck)
    if indexes.invalid:
        return KafkaWalk(valid, next_offset, invalid_offset=f"closing the segment: {indexes.invalid}")
    return KafkaWalk(valid, next_offset, frames.stop)


def _producer_state(data, pos: int, stop: int, head: tuple, ongoing: dict[int, int]) -> int | str | None:
    """LogSegment.updateProducerState for a v2 batch with a producer id: the offset of the
    aborted transaction it completes (for the transaction index), None, or why Kafka's
    recovery stops at it (a transaction marker that does not decode)."""
    base, attributes, pid = head[0], head[5], head[9]
    if not attributes & 0x20:  # data: a transactional batch opens its producer's transaction
        if attributes & 0x10:
            ongoing.setdefault(pid, base)
        return None
    raw = bytearray(data[pos:stop])  # a marker: its first record says which
    raw[16] = 2  # Kafka reads any magic from 2 on as a v2 batch (DefaultRecordBatch)
    try:
        records = next(iter(iter_batches(bytes(raw), verify_crc=False))).records(verify_crc=False)
    except (DecodeError, StopIteration) as err:
        return f"a control batch whose records do not decode ({err}): InvalidRecordException"
    if not records or records[0].control is None or records[0].control.type not in (0, 1):
        return None
    if pid not in ongoing:  # ProducerAppendInfo: a marker without data completes nothing
        return None
    del ongoing[pid]
    return base if records[0].control.type == 0 else None


def _last_next_offset(data, base_offset: int) -> tuple[int, int | None]:
    """readNextOffset of a segment as Kafka reads it without recovering it: the next
    offset after the last whole batch, batches read as FileRecords reads them (no CRC), or
    the base offset; and the position of a size below 14, where that read throws
    CorruptRecordException (None when it does not)."""
    nxt = base_offset
    frames = _Frames(data)
    for pos, offset, _size, magic in frames:
        nxt = offset + 1 if magic < 2 else offset + _V2_HEAD.unpack_from(data, pos)[6] + 1
    return nxt, frames.corrupt


def _split_verdict(data, base_offset: int) -> str | None:
    """Why LocalLog.splitOverflowedSegment refuses a segment whose walk met an offset it
    cannot hold (None: it splits it): the split requires LogSegment.hasOverflow, which
    looks at the segment's last batch only."""
    nxt, corrupt = _last_next_offset(data, base_offset)
    if corrupt is not None:
        return (f"LogSegment.hasOverflow reads a size below 14 at byte {corrupt} "
                "(CorruptRecordException)")  # fmt: skip
    if nxt > base_offset and not 0 <= nxt - 1 - base_offset <= _MAX_RELATIVE:
        return None
    return ("LocalLog.splitOverflowedSegment refuses it, since its last batch's offset fits "
            "(IllegalArgumentException: Split operation is only permitted for segments with "
            "overflow)")  # fmt: skip


@dataclass
class SegmentLoad:
    """What Kafka's load does to one segment."""

    name: str
    size: int
    #: "kept" (not read), "recovered" (walked, nothing cut), "truncated", "emptied",
    #: "deleted", "split".
    action: str = "kept"
    #: Why LogLoader recovers it (missing offset index, below/at the recovery point...).
    why: str | None = None
    #: Recovered by the sanity check of LogLoader.loadSegmentFiles (whatever the shutdown).
    at_load: bool = False
    valid_bytes: int | None = None
    reason: str | None = None

    @property
    def cut_bytes(self) -> int:
        return 0 if self.valid_bytes is None else self.size - self.valid_bytes

    def to_dict(self) -> dict:
        return {"segment": self.name, "size": self.size, "action": self.action, "why": self.why,
                "valid_bytes": self.valid_bytes, "cut_bytes": self.cut_bytes, "reason": self.reason}  # fmt: skip


@dataclass
class LoadPrediction:
    """A broker's next load of a partition (LogLoader.load), from the files as they are."""

    partition: Path
    clean_shutdown: bool
    recovery_point: int
    #: Where the recovery point comes from.
    recovery_point_source: str
    log_start_checkpoint: int
    segments: list[SegmentLoad] = field(default_factory=list)
    log_end_offset: int = 0
    log_start_offset: int = 0
    #: Segments left after the load (an emptied log gets one new empty segment).
    segments_after: int = 0
    #: The load fails (the log directory goes offline): why.
    fails: str | None = None
    #: Every segment deleted because the log ends below the log start checkpoint.
    deleted_all: bool = False

    @property
    def changes(self) -> list[SegmentLoad]:
        return [s for s in self.segments if s.action in ("truncated", "emptied", "deleted", "split")]

    @property
    def recovered(self) -> list[SegmentLoad]:
        return [s for s in self.segments if s.action != "kept" and s.action != "deleted"]

    @property
    def split(self) -> bool:
        return any(s.action == "split" for s in self.segments)

    def to_dict(self) -> dict:
        return {
            "clean_shutdown": self.clean_shutdown, "recovery_point": self.recovery_point,
            "recovery_point_source": self.recovery_point_source,
            "log_start_checkpoint": self.log_start_checkpoint,
            "log_end_offset": None if self.fails or self.split else self.log_end_offset,
            "log_start_offset": self.log_start_offset, "segments_after": self.segments_after,
            "fails": self.fails, "deleted_all": self.deleted_all,
            "segments": [s.to_dict() for s in self.segments if s.action != "kept"],
        }  # fmt: skip


def _recovery_point(partition: Partition) -> tuple[int, str]:
    """The partition's recovery point as LogManager.loadLogs reads it, and where from."""
    path = partition.path.parent / RECOVERY_POINT_CHECKPOINT
    try:
        points = read_checkpoint(path)
    except LogError:
        return 0, f"0: {RECOVERY_POINT_CHECKPOINT} cannot be read (Kafka resets it to 0)"
    if not path.exists():
        return 0, f"0: the log directory has no {RECOVERY_POINT_CHECKPOINT}"
    point = None
    if partition.topic is not None and partition.partition is not None:
        point = points.get((partition.topic, partition.partition))
    if point is None:
        return 0, f"0: {RECOVERY_POINT_CHECKPOINT} has no entry for the partition"
    return point, RECOVERY_POINT_CHECKPOINT


def _log_start(partition: Partition) -> int:
    """LogManager.loadLogs: the partition's log-start-offset-checkpoint entry, else 0 (an
    unreadable checkpoint too: "resetting to the base offset of the first segment")."""
    recorded = partition.recorded_log_start_offset
    return 0 if recorded is None else recorded


def _txn_index_verdict(seg: Segment) -> tuple[str, str] | None:
    """("fail" | "recover", why) when TransactionIndex.sanityCheck at load objects. Read
    raw: Kafka takes an entry of any version up to 0 (the schema's parser only 0)."""
    raw, size = fsio.map_regular(seg.txnindex_path)
    if raw is None:
        return None
    name = Path(seg.txnindex_path).name
    try:
        for i in range(size // _TXN_ENTRY.size):
            version, _pid, _first, last, _lso = _TXN_ENTRY.unpack_from(raw, i * _TXN_ENTRY.size)
            if version > 0:
                return "fail", f"{name}: entry {i} has version {version} (KafkaException)"
            if last < seg.base_offset:
                return "recover", (f"{name}: entry {i} ends at offset {last}, before the "
                                   "segment (CorruptIndexException)")  # fmt: skip
        return None
    finally:
        fsio.unmap(raw)


def predict_load(partition: Partition, *, index_interval_bytes: int = DEFAULT_INDEX_INTERVAL,
                 clean_shutdown: bool | None = None, recovery_point: int | None = None) -> LoadPrediction:  # fmt: skip
    """What a broker's next start does to this partition's files (LogLoader.load). The
    shutdown state and recovery point are read from the log directory unless given."""
    assert isinstance(partition.path, Path)
    log_dir = partition.path.parent
    clean = (log_dir / CLEAN_SHUTDOWN).exists() if clean_shutdown is None else clean_shutdown
    if recovery_point is None:
        rp, source = _recovery_point(partition)
    else:
        rp, source = recovery_point, "given"
    p = LoadPrediction(partition.path, clean, rp, source, _log_start(partition))
    segs = list(partition.segments)
    loads = [SegmentLoad(s.path.name, s.size) for s in segs]
    p.segments = loads
    sizes = [s.size for s in segs]
    walks: dict[int, KafkaWalk] = {}
    ongoing: dict[int, int] = {}  # the producer state the recoveries rebuild, in order

    def recover(i: int, why: str, at_load: bool = False) -> KafkaWalk:
        seg = segs[i]
        with memoryview(seg.data) as whole, whole[: sizes[i]] as data:
            w = kafka_walk(data, seg.base_offset, index_interval_bytes, ongoing)
        walks[i] = w
        load = loads[i]
        if load.action == "kept":
            load.action, load.why, load.at_load = "recovered", why, at_load
        if w.fails:
            p.fails = f"{seg.path.name}: {w.fails}: the log directory fails to load"
        elif w.overflow:
            with memoryview(seg.data) as whole, whole[: sizes[i]] as data:
                refused = _split_verdict(data, seg.base_offset)
            load.action, load.reason = "split", w.overflow
            if refused:
                p.fails = (f"{seg.path.name}: {w.overflow}; {refused}: the log directory fails to "
                           "load (a broker whose only log directory it is exits)")  # fmt: skip
        elif w.invalid_offset:
            load.action, load.valid_bytes, load.reason = "emptied", 0, w.invalid_offset
            sizes[i] = 0
        elif w.valid_bytes < sizes[i]:
            load.action, load.valid_bytes, load.reason = "truncated", w.valid_bytes, w.reason
            sizes[i] = w.valid_bytes
        return w

    # LogLoader.loadSegmentFiles: the sanity check of each segment, in order
    for i, seg in enumerate(segs):
        if not Path(seg.index_path).exists():
            w = recover(i, "its offset index is missing (LogLoader.loadSegmentFiles)", at_load=True)
        else:
            verdict = _txn_index_verdict(seg)
            if verdict is None:
                continue
            if verdict[0] == "fail":
                p.fails = verdict[1]
                return p
            w = recover(i, f"{verdict[1]} (LogLoader.loadSegmentFiles)", at_load=True)
        if p.fails or w.overflow:  # split (the load starts again), or refused (p.fails)
            p.segments_after = len(segs)
            return p
        if w.invalid_offset:  # not caught there: the log fails to load
            p.fails = f"{seg.path.name}: {w.invalid_offset} while rebuilding its indexes at load"
            return p
    # LogLoader.recoverLog
    if not clean and segs:
        bases = [s.base_offset for s in segs]
        first = max((i for i, b in enumerate(bases) if b <= rp), default=0)
        for i in range(first, len(segs)):
            before = sizes[i]
            w = recover(i, f"at or past the recovery point {rp}")
            if p.fails or w.overflow:
                p.segments_after = len(segs)
                return p
            if sizes[i] < before:
                for j in range(i + 1, len(segs)):
                    loads[j].action = "deleted"
                break
    kept = [i for i, s in enumerate(loads) if s.action != "deleted"]
    if kept:
        last = kept[-1]
        seg = segs[last]
        if last in walks:
            w = walks[last]
            end = seg.base_offset if w.invalid_offset or w.next_offset is None else w.next_offset
        else:
            with memoryview(seg.data) as whole, whole[: sizes[last]] as data:
                end = _last_next_offset(data, seg.base_offset)[0]
        p.log_end_offset = end
        p.segments_after = len(kept)
        if end < p.log_start_checkpoint:
            for i in kept:
                loads[i].action = "deleted"
            p.deleted_all = True
            p.log_end_offset, p.segments_after = p.log_start_checkpoint, 1
            p.log_start_offset = p.log_start_checkpoint
        else:
            p.log_start_offset = max(p.log_start_checkpoint, segs[kept[0]].base_offset)
    else:
        p.log_end_offset = p.log_start_offset = p.log_start_checkpoint
        p.segments_after = 1
    return p

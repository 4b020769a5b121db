"""Checking a segment for `kafkacodec verify` (and the Spark verify job): every batch's
framing and CRC, every record decoded, the indexes against the log, and every bad region
rather than the first.

Recovery stops at the first invalid batch, as Kafka's does (recovery.py). A check reads on:
after an invalid batch it resynchronizes on the next byte position that holds a structurally
valid batch whose CRC matches (FORMATS.md 1 and 2: a plausible size that fits, a known magic,
the CRC over exactly the bytes it covers), and reports each unreadable stretch as a BadRegion
with its byte range and the offsets around it. `scan` does the same walk for readers that
salvage records past damage (`kafkacodec records --skip-corrupt`).
"""

from __future__ import annotations

import os
import re
import struct
import zlib
from collections.abc import Iterator
from dataclasses import dataclass, field

from ..records.batches import LOG_OVERHEAD, BatchIterator
from ..runtime.crc import crc32c
from ..runtime.errors import DecodeError, KafkacodecError, NotASegmentError
from ..storage import size_of
from .index import Problems
from .segment import NONZERO, Segment, walk_entry

__all__ = [
    "BadRegion",
    "SegmentCheck",
    "scan",
    "resync",
    "check_segment",
    "records_or_damage",
    "incomplete",
    "not_following",
    "check_index",
    "INDEX_SUFFIXES",
]

#: A segment's index files.
INDEX_SUFFIXES = (".index", ".timeindex", ".txnindex")

_HEAD = struct.Struct(">qiiB")  # offset, size, partition leader epoch / crc, magic
_U32 = struct.Struct(">I")
#: The smallest entry of each magic after the 12-byte log overhead: a legacy message's own
#: overhead (14 and 22 bytes), a v2 batch header less the log overhead (49 bytes).
_MIN_SIZE = {0: 14, 1: 22, 2: 49}
_MAGIC_AT_16 = re.compile(rb"(?s)(?=.{16}[\x00\x01\x02])")
#: Where the size field of an entry lies (after the 8-byte offset), and how long it is.
_SIZE_AT, _SIZE_LEN = 8, 4


@dataclass
class BadRegion:
    """Bytes [start, end) of a file that hold no readable batch, and why."""

    path: str
    start: int
    end: int
    reason: str
    offset_before: int | None = None  # the last offset of the readable batch before
    offset_after: int | None = None  # the base offset of the readable batch after
    tail: bool = False  # an incomplete batch at the end of the file

    @property
    def size(self) -> int:
        return self.end - self.start

    def __str__(self) -> str:
        around = []
        if self.offset_before is not None:
            around.append(f"after offset {self.offset_before}")
        if self.offset_after is not None:
            around.append(f"before offset {self.offset_after}")
        where = f" ({', '.join(around)})" if around else ""
        return (f"{self.path}: bytes {self.start}-{self.end} ({self.size} bytes) unreadable"
                f"{where}: {self.reason}")  # fmt: skip

    def to_dict(self) -> dict:
        return {"file": self.path, "start": self.start, "end": self.end, "bytes": self.size,
                "reason": self.reason, "offset_before": self.offset_before,
                "offset_after": self.offset_after, "tail": self.tail}  # fmt: skip


@dataclass
class SegmentCheck:
    """What checking one segment found."""

    path: str
    size: int
    batches: int = 0
    records: int = 0
    regions: list[BadRegion] = field(default_factory=list)
    #: Problems that are not unreadable bytes: records that do not decode inside a batch
    #: whose CRC matches, offsets out of order, index entries that disagree with the log.
    problems: Problems = field(default_factory=lambda: Problems(limit=1000))
    #: Said but not a problem (a batch still being written at the end of a live segment).
    notes: list[str] = field(default_factory=list)
    walk: list = field(default_factory=list)
    #: (producer id, offset) of every ABORT marker read (what the .txnindex must name).
    aborts: set[tuple[int, int]] = field(default_factory=set)

    @property
    def unreadable_bytes(self) -> int:
        return sum(r.size for r in self.regions)

    @property
    def clean(self) -> bool:
        return not self.regions and not self.problems


def _valid_at(view, q: int, end: int) -> bool:
    """Whether a structurally valid batch with a matching CRC starts at q."""
    if end - q < LOG_OVERHEAD + 14:
        return False
    _off, size, _x, magic = _HEAD.unpack_from(view, q)
    if magic not in _MIN_SIZE or size < _MIN_SIZE[magic] or q + LOG_OVERHEAD + size > end:
        return False
    stop = q + LOG_OVERHEAD + size
    if magic == 2:
        return crc32c(view[q + 21 : stop]) == _U32.unpack_from(view, q + 17)[0]
    return zlib.crc32(view[q + 16 : stop]) == _U32.unpack_from(view, q + 12)[0]


def resync(view, start: int, end: int, *, valid_at=_valid_at, candidates=_MAGIC_AT_16,
           size_at: int = _SIZE_AT) -> int:  # fmt: skip
    """The first position after start where a valid entry begins (valid_at), or end.
    Candidates are the positions whose magic byte is known (the `candidates` pattern); in a
    run of zeros (a preallocated or zero-filled stretch), where every position would be
    one, the search jumps to the run's end, since a valid entry's 4-byte size at `size_at`
    is never zero."""
    q = start + 1
    while q < end - size_at - _SIZE_LEN:
        m = candidates.search(view, q, end)
        if m is None:
            return end
        q = m.start()
        if view[q + size_at : q + size_at + _SIZE_LEN] == b"\0\0\0\0":
            z = NONZERO.search(view, q + size_at, end)
            if z is None:
                return end
            q = max(q + 1, z.start() - size_at - _SIZE_LEN + 1)
            continue
        if valid_at(view, q, end):
            return q
        q += 1
    return end


def scan(data, *, source: str, start: int = 0, end: int | None = None,
         verify_crc: bool = True) -> Iterator:  # fmt: skip
    """The batches of a buffer, and a BadRegion for each stretch that holds none: after
    damage the walk resynchronizes (see resync) instead of stopping."""
    view = memoryview(data)
    end = len(view) if end is None else end
    pos, last = start, None
    while pos < end:
        it = BatchIterator(view, verify_crc=verify_crc, source=source, start=pos, end=end)
        try:
            for batch in it:
                last = batch.last_offset
                yield batch
            if not it.remaining:
                return
            reason = incomplete(view, it.position, it.remaining)
            bad_at, tail = it.position, True
        except DecodeError as err:
            bad_at, reason, tail = it.position, err.message, False
        nxt = resync(view, bad_at, end)
        region = BadRegion(source, bad_at, nxt, reason, last, None, tail and nxt == end)
        if nxt < end:
            region.offset_after = _HEAD.unpack_from(view, nxt)[0]
        yield region
        pos = nxt


def records_or_damage(batch, on_damage) -> list:
    """A batch's records; when they do not decode, the error is raised, or, given an
    on_damage callback (a reader salvaging past damage), told to it and no records return."""
    try:
        return batch.records()
    except DecodeError as err:
        if on_damage is None:
            raise
        on_damage(str(err))
        return []


def incomplete(view, pos: int, remaining: int) -> str:
    """Why the bytes from pos to the end hold no whole batch."""
    if remaining < LOG_OVERHEAD:
        return f"{remaining} bytes at the end of the file are too few for a batch header"
    size = struct.unpack_from(">i", view, pos + 8)[0]
    return (f"a batch declares {size + LOG_OVERHEAD} bytes, but only {remaining} remain in "
            "the file")  # fmt: skip


def check_segment(seg: Segment, *, verify_crc: bool = True, live: bool = False,
                  decode: bool = True, indexes: bool = True) -> SegmentCheck:  # fmt: skip
    """Check one segment: every batch (and with decode, every record), every bad region,
    and (with indexes) its index files against the log. `live`: the segment may be appended to while it is read
    (its partition's last segment, with a broker holding the log directory), so that an
    incomplete batch at its end is one being written, not damage."""
    data, size = seg.data, seg.size
    out = SegmentCheck(str(seg.path), size)
    try:
        seg.sniff()
        not_kafka = None
    except NotASegmentError as err:
        not_kafka = err.message
    for item in scan(data, source=str(seg.path), end=size, verify_crc=verify_crc):
        if isinstance(item, BadRegion):
            if item.start == 0 and not_kafka:
                item.reason, item.tail = not_kafka, False
            elif item.end == size and seg.zeros_from(item.start):
                item.reason = (f"{item.size} zero bytes to the end of the file: preallocated "
                               "space (log.preallocate) that a clean shutdown trims, or zeros a "
                               "crash left; readers stop there, Kafka's recovery truncates them")  # fmt: skip
                item.tail = True  # a live broker's preallocated segment: not damage
            if item.tail and (live or _grew(seg)):
                out.notes.append(f"{item.path}: byte {item.start}: a batch being written at the end "
                                 "of a live segment; not checked")  # fmt: skip
            else:
                out.regions.append(item)
            continue
        out.batches += 1
        entry = walk_entry(item)
        _check_offsets(seg, item, entry[1], out)
        out.walk.append(entry)
        if not decode:
            continue
        try:  # a control batch's records are read (its markers); others are counted
            records = item.records() if item.is_control else None
            out.records += item.record_count() if records is None else len(records)
        except DecodeError as err:
            out.problems.append(str(err.with_source(str(seg.path))))
            continue
        if records is not None:
            out.aborts.update((item.producer_id, r.offset) for r in records
                              if r.control is not None and r.control.type == 0)  # fmt: skip
    if indexes:
        try:
            out.problems.extend(seg.index_problems(out.walk, live=live or _grew(seg),
                                                   aborts=out.aborts if decode else None))  # fmt: skip
        except KafkacodecError as err:
            out.problems.append(str(err))
    return out


def check_index(seg: Segment, suffix: str, *, live: bool = False) -> SegmentCheck:
    """Check one index file of a segment (`kafkacodec verify FILE.index`): Kafka's sanity
    check, then its entries against the segment's .log by the rules verify applies to a
    whole segment (Segment.index_problems). The .log is read, not judged: damage in it is
    a note (verify the .log to have it named). NotASegmentError when the .log is missing."""
    path = {".index": seg.index_path, ".timeindex": seg.timeindex_path,
            ".txnindex": seg.txnindex_path}[suffix]  # fmt: skip
    if not seg.path.exists():
        raise NotASegmentError(path, f"no {seg.path.name} beside it to check the index against")
    log = check_segment(seg, live=live, indexes=False)
    out = SegmentCheck(str(path), size_of(path))
    if log.regions or log.problems:
        out.notes.append(f"{seg.path}: {len(log.regions)} unreadable regions and "
                         f"{len(log.problems)} other problems in the log the index is checked "
                         f"against (`kafkacodec verify {seg.path}` names them)")  # fmt: skip
    try:
        out.problems.extend(seg.index_problems(log.walk, live=live or _grew(seg),
                                               aborts=log.aborts, only=suffix))  # fmt: skip
    except KafkacodecError as err:
        out.problems.append(str(err))
    return out


def _check_offsets(seg: Segment, batch, base: int, out: SegmentCheck) -> None:
    """Offsets a segment can hold (LogSegment.recover's ensureOffsetInRange), increasing
    from batch to batch (the base offset is outside the CRC: a flipped bit there is seen
    only here)."""
    if seg.named and not 0 <= batch.last_offset - seg.base_offset <= 0x7FFFFFFF:
        out.problems.append(
            f"{seg.path}: byte {batch.position}: last offset {batch.last_offset} cannot be held "
            f"by a segment whose base offset is {seg.base_offset} (Kafka's LogSegment.recover: "
            "LogSegmentOffsetOverflowException; a broker cannot load this segment)")  # fmt: skip
    gone_back = out.walk and not_following(base, out.walk[-1][2])
    if gone_back:
        out.problems.append(f"{seg.path}: byte {batch.position}: {gone_back}")


def not_following(base: int, last_before: int | None) -> str | None:
    """Why a batch at `base` does not follow a batch whose last offset is `last_before`
    (offsets increase from batch to batch), or None."""
    if last_before is None or base > last_before:
        return None
    return f"base offset {base} does not follow the last offset {last_before} of the batch before"


def _grew(seg: Segment) -> bool:
    if seg.remote:  # an object does not grow: a new version is a new object
        return False
    try:
        return os.stat(seg.path).st_size > seg.size
    except OSError:
        return False

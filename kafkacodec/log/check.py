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
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field

from ..records.batches import LOG_OVERHEAD, BatchIterator
from ..runtime.crc import crc32c
from ..runtime.errors import DecodeError, KafkacodecError, NotASegmentError
from ..storage import size_of
from .index import BULK_OFFSETS, Problems
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
#: How far a check reads between two reports of where it is (check_segment's progress).
PROGRESS_STEP = 1 << 20
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
    #: Every record, control records (transaction markers, KRaft's) included.
    records: int = 0
    #: The control records among them (what a consumer is never handed).
    control_records: int = 0
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
         verify_crc: bool = True, last: int | None = None) -> Iterator:  # fmt: skip
    """The batches of a buffer, and a BadRegion for each stretch that holds none: after
    damage the walk resynchronizes (see resync) instead of stopping. `last`: the last
    offset of the batch before start, when one was read there."""
    view = memoryview(data)
    end = len(view) if end is None else end
    pos = start
    while pos < end:
        it = BatchIterator(view, verify_crc=verify_crc, source=source, start=pos, end=end, file=True)
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


class _Reporter:
    """progress(position) about every PROGRESS_STEP bytes read, never backwards."""

    def __init__(self, progress: Callable[[int], None] | None) -> None:
        self.progress, self.next = progress, 0

    def __call__(self, position: int) -> None:
        if self.progress is not None and position >= self.next:
            self.next = position + PROGRESS_STEP
            self.progress(position)


def check_segment(seg: Segment, *, verify_crc: bool = True, live: bool = False,
                  decode: bool = True, indexes: bool = True,
                  progress: Callable[[int], None] | None = None) -> SegmentCheck:  # fmt: skip
    """Check one segment: every batch (and with decode, every record), every bad region,
    and (with indexes) its index files against the log. `live`: the segment may be appended to while it is read
    (its partition's last segment, with a broker holding the log directory), so that an
    incomplete batch at its end is one being written, not damage. `progress(position)`:
    told the byte position reached, about every PROGRESS_STEP bytes (a segment of a
    gigabyte of gzip takes a minute; a bar that moves once per segment says nothing)."""
    data, size = seg.data, seg.size
    report = _Reporter(progress)
    out = SegmentCheck(str(seg.path), size)
    try:
        seg.sniff()
        not_kafka = None
    except NotASegmentError as err:
        not_kafka = err.message
    start, last = _checked_in_bulk(seg, data, size, verify_crc=verify_crc, decode=decode, out=out,
                                   report=report)  # fmt: skip
    for item in scan(data, source=str(seg.path), start=start, end=size, verify_crc=verify_crc,
                     last=last):  # fmt: skip
        report(item.start if isinstance(item, BadRegion) else item.position)
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
        out.problems.extend(_offset_problems(seg, item.position, entry[1], item.last_offset,
                                             out.walk[-1][2] if out.walk else None))  # fmt: skip
        out.walk.append(entry)
        if decode:
            _count_records(seg, item, out)
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


def _count_records(seg: Segment, batch, out: SegmentCheck) -> None:
    """Count a batch's records, each judged as records() judges it, into out (a control
    batch's records are read: its ABORT markers are kept; others are counted); a batch
    whose records do not decode is a problem."""
    try:
        records = batch.records() if batch.is_control else None
        out.records += batch.record_count() if records is None else len(records)
    except DecodeError as err:
        out.problems.append(str(err.with_source(str(seg.path))))
        return
    if records is not None:
        out.control_records += len(records)
        out.aborts.update((batch.producer_id, r.offset) for r in records
                          if r.control is not None and r.control.type == 0)  # fmt: skip


def _offset_problems(seg: Segment, position: int, base: int, last: int,
                     last_before: int | None) -> list[str]:  # fmt: skip
    """Offsets a segment can hold (LogSegment.recover's ensureOffsetInRange), increasing
    from batch to batch (the base offset is outside the CRC: a flipped bit there is seen
    only here). `last_before`: the last offset of the readable batch before."""
    out = []
    if seg.named and not 0 <= last - seg.base_offset <= 0x7FFFFFFF:
        out.append(
            f"{seg.path}: byte {position}: last offset {last} cannot be held "
            f"by a segment whose base offset is {seg.base_offset} (Kafka's LogSegment.recover: "
            "LogSegmentOffsetOverflowException; a broker cannot load this segment)")  # fmt: skip
    gone_back = not_following(base, last_before)
    if gone_back:
        out.append(f"{seg.path}: byte {position}: {gone_back}")
    return out


#: Segments from this size on are checked in bulk (_checked_in_bulk): the native walk and
#: record check over the whole run of batches, with NumPy, whose import (about 65 ms) costs
#: more than the batch-at-a-time loop saves below it.
BULK_FROM = 16 << 20


def _checked_in_bulk(seg: Segment, data, size: int, *, verify_crc: bool, decode: bool,
                     out: SegmentCheck, report: _Reporter) -> tuple[int, int | None]:  # fmt: skip
    """Check the leading run of v2 batches of a segment at once, as the loop of
    check_segment checks them one at a time, into out: the native walk (framing and CRC),
    the offsets of the whole run compared in NumPy, and the records of its uncompressed
    batches checked by the native check in one call; only the batches the bulk check does
    not read (compressed, control) or flags are read one at a time, as the loop reads them.
    Returns where the loop goes on (the first entry the native walk left to it: damage, a
    legacy message, a partial batch; or the end) and the last offset before it (None when
    nothing was checked here). A small segment, or a build without the native extension,
    is left to the loop whole."""
    from ..records import walk as W

    if size < BULK_FROM or not W.NATIVE:
        return 0, None
    import numpy as np

    e, stop = W.native_run(data, 0, size, verify_crc=verify_crc)
    legacy = np.flatnonzero(e["magic"] != 2)
    if len(legacy):  # a legacy wrapper's base offset needs its inner messages: the loop's
        stop, e = int(e["position"][legacy[0]]), e[: legacy[0]]
    if not len(e) or e["base_offset"].max() >= BULK_OFFSETS or e["base_offset"].min() <= -BULK_OFFSETS:
        return 0, None  # offsets near int64's limits: the loop's Python integers (NumPy wraps)
    position, base = e["position"], e["base_offset"]
    last = base + e["last_offset_delta"]
    flagged = np.flatnonzero(base[1:] <= last[:-1]) + 1
    if seg.named:
        outside = (last < seg.base_offset) | (last > seg.base_offset + 0x7FFFFFFF)
        flagged = np.union1d(flagged, np.flatnonzero(outside))
    flags = None
    if decode:  # the uncompressed batches' records, then the compressed ones (the slow part)
        flags = W.check_run(data, e)
        W.check_compressed(data, e, flags, progress=report)
        out.records += int(e["num_records"][flags == W.CHECKED].sum(dtype=np.int64))
        flagged = np.union1d(flagged, np.flatnonzero(flags != W.CHECKED))
    view = memoryview(data)
    for i in flagged.tolist():  # in file order, each batch's problems as the loop finds them
        before = int(last[i - 1]) if i else None
        out.problems.extend(_offset_problems(seg, int(position[i]), int(base[i]), int(last[i]), before))
        if flags is not None and flags[i] != W.CHECKED:
            it = BatchIterator(view, verify_crc=False, source=str(seg.path), start=int(position[i]), end=size,
                               file=True)  # fmt: skip
            _count_records(seg, next(it), out)
    out.batches += len(e)
    out.walk.extend(zip(position.tolist(), base.tolist(), last.tolist(), e["max_timestamp"].tolist()))
    return stop, int(last[-1])


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

"""Recovery of a segment, as a broker does it after a crash (FORMATS.md 5).

`recover_segment(segment)` is the dry run of Kafka's LogSegment.recover for one segment: it
walks the batches with Kafka's validity rules (size fits, size at least the overhead, CRC),
stops at the first invalid or incomplete batch, and rebuilds the offset, time and
transaction indexes during the walk with the same interval rule. It writes nothing. Two
rules are kafkacodec's, stricter than Kafka's walk (whose exact prediction is
loader.py): a batch of unknown magic, and a batch whose base offset does not follow the
last offset before it, end the valid prefix (Kafka keeps both, outside the CRC as the magic
and the base offset are; its consumers then fail, skip or repeat records there). With
offsets increasing, no index entry is ever refused (Kafka's InvalidOffsetException, which
empties a segment: loader.py predicts it).

What a broker does with a whole partition (LogLoader: truncate the first segment with
invalid bytes, delete every later one) is in repair.py, which applies it crash-safely and
moves, never deletes.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field

from ..records.batches import RecordBatch
from ..runtime.errors import DecodeError, LogError
from .check import incomplete, not_following
from .index import AbortedTxn, IndexBuilder
from .segment import Batch, Segment, walk_entry

__all__ = ["TxnTracker", "RecoveryReport", "recover_segment", "DEFAULT_INDEX_INTERVAL"]

#: Kafka's default index.interval.bytes (a topic config; LogConfig.DEFAULT_INDEX_INTERVAL_BYTES).
DEFAULT_INDEX_INTERVAL = 4096


class TxnTracker:
    """Kafka's producer-state bookkeeping for transactions, enough to rebuild a
    .txnindex: ongoing transactions by first offset, and one AbortedTxn per ABORT marker
    with the last stable offset Kafka computes (the first offset of the earliest other
    ongoing transaction, else the marker's offset + 1)."""

    def __init__(self) -> None:
        self.ongoing: dict[int, int] = {}  # producer id -> first offset
        self.aborted: list[AbortedTxn] = []

    def update(self, batch: Batch) -> AbortedTxn | None:
        """Follow a batch as Kafka's recovery does (ProducerStateManager): a transactional batch
        opens its producer's transaction, a control batch ends it; returns the transaction an
        ABORT marker ends (what the transaction index gets), else None."""
        if batch.magic < 2 or batch.producer_id < 0 or not batch.is_transactional:
            return None
        pid = batch.producer_id
        if not batch.is_control:
            self.ongoing.setdefault(pid, batch.base_offset)
            return None
        first = self.ongoing.get(pid)
        records = batch.records()
        if not records or records[0].control is None:
            return None
        ctype = records[0].control.type
        if ctype not in (0, 1):
            return None
        marker = batch.last_offset
        if first is None:  # a marker without data: Kafka completes an empty transaction
            first = marker
        others = [f for p, f in self.ongoing.items() if p != pid]
        lso = min(others) if others else marker + 1
        self.ongoing.pop(pid, None)
        if ctype == 0:
            entry = AbortedTxn(pid, first, marker, lso)
            self.aborted.append(entry)
            return entry
        return None


@dataclass
class RecoveryReport:
    """What recovering a segment finds, and what a repair would do."""

    segment: str
    size: int
    valid_bytes: int = 0
    batches: int = 0
    records: int = 0
    last_valid_offset: int | None = None
    next_offset: int = 0
    invalid_position: int | None = None
    reason: str | None = None
    offset_index: list = field(default_factory=list)
    time_index: list = field(default_factory=list)
    txn_index: list = field(default_factory=list)
    max_timestamp: int = -1
    leader_epochs: list = field(default_factory=list)
    #: The valid batches as (position, base offset, last offset, max timestamp), for
    #: checking the segment's indexes against them (Segment.index_problems).
    walk: list = field(default_factory=list)
    #: Whether `records` is exact (a legacy wrapper that does not decompress counts as 0).
    records_exact: bool = True
    #: A batch whose offset the segment cannot hold (below its base offset, or more than
    #: 2^31-1 past it): Kafka's LogSegment.recover throws LogSegmentOffsetOverflowException
    #: there, which LogLoader answers by splitting the segment or by failing to load the
    #: log; it never truncates. Such a segment is reported and never repaired.
    offset_problem: str | None = None

    @property
    def truncated_bytes(self) -> int:
        """How many bytes a repair cuts (Kafka's recover return value)."""
        return self.size - self.valid_bytes

    @property
    def clean(self) -> bool:
        """Whether recovery keeps the whole segment: nothing to truncate, no offset the segment
        cannot hold."""
        return self.truncated_bytes == 0 and self.offset_problem is None

    def to_dict(self) -> dict:
        """The report as JSON-ready values (`recover --json`)."""
        return {
            "segment": self.segment, "size": self.size, "valid_bytes": self.valid_bytes,
            "truncated_bytes": self.truncated_bytes, "batches": self.batches,
            "records": self.records, "offset_problem": self.offset_problem,
            "last_valid_offset": self.last_valid_offset, "next_offset": self.next_offset,
            "invalid_position": self.invalid_position, "reason": self.reason,
            "offset_index": [list(e) for e in self.offset_index],
            "time_index": [list(e) for e in self.time_index],
            "txn_index": [list(e) for e in self.txn_index],
        }  # fmt: skip


def recover_segment(segment: Segment, index_interval_bytes: int = DEFAULT_INDEX_INTERVAL,
                    tracker: TxnTracker | None = None,
                    progress: Callable[[int], object] | None = None) -> RecoveryReport:  # fmt: skip
    """The dry run of LogSegment.recover: nothing is written. Pass one `tracker` to the
    segments of a partition in order, so that transactions spanning segments are known;
    `progress(n)` is told the size of each valid batch."""
    size = segment.size
    rep = RecoveryReport(str(segment.path), size, records=0, next_offset=segment.base_offset)
    tracker = tracker or TxnTracker()
    indexes = IndexBuilder(segment.base_offset, index_interval_bytes)
    valid = 0
    epoch = -1
    it = segment.batches(0, verify_crc=True)
    try:
        for batch in it:
            if not 0 <= batch.last_offset - segment.base_offset <= 0x7FFFFFFF:
                rep.offset_problem = (
                    f"byte {batch.position}: the batch's last offset {batch.last_offset} cannot be "
                    f"held by a segment whose base offset is {segment.base_offset} (Kafka's "
                    "LogSegment.recover: LogSegmentOffsetOverflowException; a broker cannot load "
                    "this segment as it is named)")  # fmt: skip
                break
            gone_back = not_following(batch.base_offset, rep.last_valid_offset)
            if gone_back:  # stricter than Kafka (the base offset is outside the CRC): verify's rule
                rep.invalid_position = valid
                rep.reason = (f"byte {valid}: {gone_back} (Kafka's recovery keeps such a batch; its "
                              "consumers skip or repeat records there)")  # fmt: skip
                break
            if progress is not None:
                progress(batch.size)
            indexes.append(valid, batch.last_offset, batch.max_timestamp)
            rep.walk.append(walk_entry(batch, valid))
            valid += batch.size
            rep.batches += 1
            _count_records(rep, batch)
            rep.last_valid_offset = batch.last_offset
            if batch.magic >= 2:
                if batch.partition_leader_epoch > epoch:
                    epoch = batch.partition_leader_epoch
                    rep.leader_epochs.append((epoch, batch.base_offset))
                tracker.update(batch)
        if it.remaining and rep.offset_problem is None and rep.invalid_position is None:
            rep.invalid_position = it.position
            rep.reason = incomplete(segment.data, it.position, it.remaining) + " (a lost tail)"
    except (DecodeError, LogError) as err:
        rep.invalid_position = valid
        rep.reason = getattr(err, "message", str(err))
    rep.valid_bytes = size if rep.offset_problem else valid  # never cut: see offset_problem
    indexes.close()  # closing the segment appends the final time index entry
    rep.next_offset = (
        segment.base_offset if rep.last_valid_offset is None else rep.last_valid_offset + 1
    )
    rep.max_timestamp = indexes.max_ts
    rep.offset_index, rep.time_index = indexes.offset_entries, indexes.time_entries
    rep.txn_index = [e for e in tracker.aborted if segment.base_offset <= e.last_offset]
    return rep


def _count_records(rep: RecoveryReport, batch: Batch) -> None:
    if isinstance(batch, RecordBatch):
        rep.records += batch.count
        return
    try:
        rep.records += batch.count_records()  # from the inner messages' heads
    except DecodeError:  # recovery checks a wrapper's CRC only, as Kafka does
        rep.records_exact = False

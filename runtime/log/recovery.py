"""Recovery of a segment, as a broker does it after a crash (FORMATS.md 5).

`recover_segment(segment)` is the dry run: it walks the batches with Kafka's validity rules
(size fits, size at least the overhead, known magic, CRC), stops at the first invalid or
incomplete batch, and rebuilds the offset, time and transaction indexes during the walk
with the rules of LogSegment.recover. It writes nothing.

`repair(report)` applies a dry run's outcome, crash-safely:

1. prepare (nothing visible changes): the bytes to cut are saved to
   `<base>.log.kafkacodec-cut-<position>`, the rebuilt indexes to `<name>.kafkacodec-new`,
   each fsynced; then a journal `<base>.kafkacodec-repair` (JSON) is written to a
   temporary name, fsynced and renamed into place: that rename is the commit point;
2. apply (idempotent): truncate the .log, rename each new index over the old one, fsync
   the directory, delete the journal.

Killed before the commit point, the old state stands (leftover temporary files are
ignored and cleaned by the next repair); after it, readers (Partition, Segment) honour the
journal, so they see the new state, and the next `repair` or `finish_pending_repairs`
completes it. The cut bytes are never lost: log prefix + backup = the original file.
"""

from __future__ import annotations

import json
import os
from dataclasses import dataclass, field
from pathlib import Path

from ..batches import LOG_OVERHEAD
from ..errors import DecodeError, LogError
from .index import AbortedTxn, encode_offset_entries, encode_time_entries, encode_txn_entries
from .segment import NEW_SUFFIX, Segment

__all__ = [
    "TxnTracker",
    "RecoveryReport",
    "recover_segment",
    "repair",
    "pending_repair",
    "finish_pending_repair",
    "epochs_past",
    "truncate_epochs",
]

DEFAULT_INDEX_INTERVAL = 4096
CUT_SUFFIX = ".kafkacodec-cut-"
_TMP = ".tmp"


class TxnTracker:
    """Kafka's producer-state bookkeeping for transactions, enough to rebuild a
    .txnindex: ongoing transactions by first offset, and one AbortedTxn per ABORT marker
    with the last stable offset Kafka computes (the first offset of the earliest other
    ongoing transaction, else the marker's offset + 1)."""

    def __init__(self):
        self.ongoing: dict[int, int] = {}  # producer id -> first offset
        self.aborted: list[AbortedTxn] = []

    def update(self, batch) -> AbortedTxn | None:
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
    records: int | None = None
    last_valid_offset: int | None = None
    next_offset: int = 0
    invalid_position: int | None = None
    reason: str | None = None
    offset_index: list = field(default_factory=list)
    time_index: list = field(default_factory=list)
    txn_index: list = field(default_factory=list)
    max_timestamp: int = -1
    leader_epochs: list = field(default_factory=list)

    @property
    def truncated_bytes(self) -> int:
        """How many bytes a repair cuts (Kafka's recover return value)."""
        return self.size - self.valid_bytes

    @property
    def clean(self) -> bool:
        return self.truncated_bytes == 0

    def to_dict(self) -> dict:
        return {
            "segment": self.segment, "size": self.size, "valid_bytes": self.valid_bytes,
            "truncated_bytes": self.truncated_bytes, "batches": self.batches,
            "last_valid_offset": self.last_valid_offset, "next_offset": self.next_offset,
            "invalid_position": self.invalid_position, "reason": self.reason,
            "offset_index": [list(e) for e in self.offset_index],
            "time_index": [list(e) for e in self.time_index],
            "txn_index": [list(e) for e in self.txn_index],
        }  # fmt: skip


def recover_segment(segment: Segment, index_interval_bytes: int = DEFAULT_INDEX_INTERVAL,
                    tracker: TxnTracker | None = None, progress=None) -> RecoveryReport:  # fmt: skip
    """The dry run of LogSegment.recover: nothing is written. Pass one `tracker` to the
    segments of a partition in order, so that transactions spanning segments are known;
    `progress(n)` is told the size of each valid batch."""
    size = segment.size
    rep = RecoveryReport(str(segment.path), size, next_offset=segment.base_offset)
    tracker = tracker or TxnTracker()
    max_ts, max_ts_offset = -1, segment.base_offset
    last_index_at = 0
    valid = 0
    epoch = -1
    it = segment.batches(0, verify_crc=True)
    try:
        for batch in it:
            if not 0 <= batch.last_offset - segment.base_offset <= 0x7FFFFFFF:
                raise LogError(segment.path, f"offset {batch.last_offset} cannot be relative to base "
                               f"offset {segment.base_offset}", batch.position)  # fmt: skip
            if progress is not None:
                progress(batch.size)
            if batch.max_timestamp > max_ts:
                max_ts, max_ts_offset = batch.max_timestamp, batch.last_offset
            if valid - last_index_at > index_interval_bytes:
                rep.offset_index.append((batch.last_offset, valid))
                _maybe_append_time(rep.time_index, max_ts, max_ts_offset)
                last_index_at = valid
            valid += batch.size
            rep.batches += 1
            rep.last_valid_offset = batch.last_offset
            if batch.magic >= 2:
                if batch.partition_leader_epoch > epoch:
                    epoch = batch.partition_leader_epoch
                    rep.leader_epochs.append((epoch, batch.base_offset))
                tracker.update(batch)
        if it.remaining:
            rep.invalid_position = it.position
            rep.reason = _incomplete(segment, it.position, it.remaining)
    except (DecodeError, LogError) as err:
        rep.invalid_position = valid
        rep.reason = getattr(err, "message", str(err))
    rep.valid_bytes = valid
    rep.next_offset = (
        segment.base_offset if rep.last_valid_offset is None else rep.last_valid_offset + 1
    )
    rep.max_timestamp = max_ts
    # Closing the segment appends the final time index entry (skipFullCheck).
    _maybe_append_time(rep.time_index, max_ts, max_ts_offset)
    rep.txn_index = [e for e in tracker.aborted if segment.base_offset <= e.last_offset]
    return rep


def _maybe_append_time(entries: list, ts: int, offset: int) -> None:
    last = entries[-1][0] if entries else -1
    if ts > last:
        entries.append((ts, offset))


def _incomplete(segment: Segment, pos: int, remaining: int) -> str:
    if remaining < LOG_OVERHEAD:
        return f"{remaining} bytes at the end are too few for a batch header (a lost tail)"
    size = int.from_bytes(bytes(segment.data[pos + 8 : pos + 12]), "big", signed=True)
    return f"batch declares {size + LOG_OVERHEAD} bytes but only {remaining} remain (a lost tail)"


# ------------------------------------------------------------------------------ repair


def _fsync_write(path: Path, data: bytes) -> None:
    tmp = path.with_name(path.name + _TMP)
    with open(tmp, "wb") as f:
        f.write(data)
        f.flush()
        os.fsync(f.fileno())
    os.replace(tmp, path)


def _fsync_dir(path: Path) -> None:
    fd = os.open(path, os.O_RDONLY)
    try:
        os.fsync(fd)
    finally:
        os.close(fd)


def repair(segment: Segment, report: RecoveryReport | None = None, *,
           index_interval_bytes: int = DEFAULT_INDEX_INTERVAL) -> RecoveryReport:  # fmt: skip
    """Apply recovery to a segment: keep the longest valid prefix, back up the rest,
    rewrite the indexes. Crash-safe (see the module docstring)."""
    finish_pending_repair(segment)
    if report is None:
        report = recover_segment(segment, index_interval_bytes)
    if report.size != segment.path.stat().st_size:
        raise LogError(segment.path, "the segment changed since the dry run; run it again")
    d = segment.dir
    for stale in d.glob(segment.path.stem + "*" + _TMP):
        stale.unlink()
    segment.close()  # unmap before truncating
    # 1. prepare
    cut = None
    if report.truncated_bytes:
        cut = segment.path.with_name(segment.path.name + CUT_SUFFIX + str(report.valid_bytes))
        with open(segment.path, "rb") as f:
            f.seek(report.valid_bytes)
            _fsync_write(cut, f.read())
    base = segment.base_offset
    new_files = {
        segment.index_path: encode_offset_entries(base, report.offset_index),
        segment.timeindex_path: encode_time_entries(base, report.time_index),
    }
    if report.txn_index or segment.txnindex_path.exists():
        new_files[segment.txnindex_path] = encode_txn_entries(report.txn_index)
    for target, data in new_files.items():
        _fsync_write(target.with_name(target.name + NEW_SUFFIX), data)
    journal = {
        "segment": segment.path.name, "original_size": report.size, "valid_bytes": report.valid_bytes,
        "backup": cut.name if cut else None, "indexes": [p.name for p in new_files],
    }  # fmt: skip
    _fsync_write(segment.journal_path, json.dumps(journal, indent=1).encode())
    _fsync_dir(d)  # commit point: the journal is durable
    # 2. apply
    finish_pending_repair(segment)
    return report


EPOCH_CHECKPOINT = "leader-epoch-checkpoint"


def epochs_past(directory, end_offset: int) -> list:
    """The leader-epoch-checkpoint entries of a partition directory that start at or after
    end_offset: what Kafka's LeaderEpochFileCache.truncateFromEnd drops once recovery has
    moved the log end back to end_offset."""
    from .partition import read_epoch_checkpoint  # partition imports this module

    return [e for e in read_epoch_checkpoint(Path(directory) / EPOCH_CHECKPOINT)
            if e.start_offset >= end_offset]  # fmt: skip


def truncate_epochs(directory, end_offset: int) -> list:
    """Drop the epochs that start at or after end_offset from the partition's
    leader-epoch-checkpoint, written atomically (a temporary file, fsynced, renamed over
    the old one, the directory fsynced): a crash leaves the old file or the new one.
    Returns the entries dropped."""
    from .partition import read_epoch_checkpoint, write_epoch_checkpoint_text

    d = Path(directory)
    path = d / EPOCH_CHECKPOINT
    entries = read_epoch_checkpoint(path)
    kept = [e for e in entries if e.start_offset < end_offset]
    if len(kept) == len(entries):
        return []
    tmp = path.with_name(path.name + _TMP)
    _fsync_write(tmp, write_epoch_checkpoint_text(kept).encode())
    os.replace(tmp, path)
    _fsync_dir(d)
    return entries[len(kept) :]


def pending_repair(segment: Segment) -> dict | None:
    """The journal of a committed but unfinished repair, or None."""
    return segment.pending_repair()


def finish_pending_repair(segment: Segment) -> bool:
    """Complete a committed repair (idempotent). Returns whether there was one."""
    journal = pending_repair(segment)
    if journal is None:
        return False
    segment.close()
    valid = journal["valid_bytes"]
    if segment.path.stat().st_size > valid:
        with open(segment.path, "r+b") as f:
            f.truncate(valid)
            f.flush()
            os.fsync(f.fileno())
    for name in journal["indexes"]:
        new = segment.dir / (name + NEW_SUFFIX)
        if new.exists():
            os.replace(new, segment.dir / name)
    _fsync_dir(segment.dir)
    segment.journal_path.unlink()
    _fsync_dir(segment.dir)
    segment.use_files()
    return True

"""Writing a partition directory as a broker does (LogSegment.append, UnifiedLog.roll).

Each `append(data)` is one broker append of one or more batches (any magic and codec):
before it, if more than index.interval.bytes were written since the last index entry,
an offset index entry (the append's last offset, its start position) and a time index
entry (the max timestamp so far and its offset, when larger than the last one) are added.
A segment rolls when the append would take it past segment_bytes (or its offsets past
int32 from the base, or its index past max_index_bytes); rolling or closing appends the
final time index entry. Aborted transactions go to the .txnindex and leader epochs to
leader-epoch-checkpoint. Index entries are appended as they are made (never preallocated),
so the files are always trimmed.
"""

from __future__ import annotations

import os
from pathlib import Path
from typing import TYPE_CHECKING, BinaryIO

from ..records.batches import iter_batches
from ..runtime.errors import DecodeError, LogError
from .index import encode_offset_entries, encode_time_entries, encode_txn_entries
from .partition import EpochEntry, read_epoch_checkpoint, write_epoch_checkpoint_text
from .recovery import TxnTracker, recover_segment
from .segment import Segment, parse_segment_name, segment_name

if TYPE_CHECKING:
    from typing_extensions import Self

__all__ = ["PartitionWriter"]


class _Active:
    def __init__(self, directory: Path, base_offset: int):
        self.base_offset = base_offset
        self.log = open(directory / segment_name(base_offset), "ab")
        self.index = open(directory / segment_name(base_offset, ".index"), "ab")
        self.timeindex = open(directory / segment_name(base_offset, ".timeindex"), "ab")
        self.txnindex_path = directory / segment_name(base_offset, ".txnindex")
        self.size = self.log.tell()
        self.index_entries = self.index.tell() // 8
        self.last_time = -1
        self.since_index = 0
        self.max_ts, self.max_ts_offset = -1, base_offset

    def files(self) -> tuple[BinaryIO, BinaryIO, BinaryIO]:
        return (self.log, self.index, self.timeindex)


class PartitionWriter:
    """Append batches to a partition directory (created if needed).

    >>> with PartitionWriter("logs/orders-0") as w:  # doctest: +SKIP
    ...     w.append(build_batch(records, base_offset=w.next_offset))
    """

    def __init__(self, path: Path | str, *, segment_bytes: int = 1 << 30, index_interval_bytes: int = 4096,
                 max_index_bytes: int = 10 << 20, fsync: bool = True, start_offset: int = 0) -> None:  # fmt: skip
        self.path = Path(path)
        self.path.mkdir(parents=True, exist_ok=True)
        self.segment_bytes = segment_bytes
        self.index_interval_bytes = index_interval_bytes
        self.max_index_bytes = max_index_bytes
        self.fsync = fsync
        self.txn = TxnTracker()
        self.epochs = read_epoch_checkpoint(self.path / "leader-epoch-checkpoint")
        self._active: _Active | None = None
        #: The log end offset. A new partition's first segment is named by start_offset
        #: (the log start offset), as a broker creates it before the first append.
        self.next_offset = start_offset
        self._reopen()

    def _reopen(self) -> None:
        """Continue an existing partition: the last segment becomes active again, with its
        index state recovered from its bytes (as a broker's recovery would)."""
        names = map(parse_segment_name, os.listdir(self.path))
        bases = sorted(parsed[0] for parsed in names if parsed and parsed[1] == ".log")
        if not bases:
            return
        for b in bases[:-1]:
            recover_segment(Segment(self.path, b), self.index_interval_bytes, self.txn)
        seg = Segment(self.path, bases[-1])
        rep = recover_segment(seg, self.index_interval_bytes, self.txn)
        last_time = seg.time_index.last_entry().timestamp
        seg.close()
        if not rep.clean:
            raise LogError(seg.path, f"cannot append after a damaged segment ({rep.reason}); "
                           "run a recovery repair first", rep.invalid_position)  # fmt: skip
        a = _Active(self.path, bases[-1])
        a.since_index = rep.valid_bytes - (rep.offset_index[-1][1] if rep.offset_index else 0)
        a.last_time = last_time
        a.max_ts, a.max_ts_offset = rep.time_index[-1] if rep.time_index else (-1, bases[-1])
        self._active = a
        self.next_offset = rep.next_offset

    # -- appending
    def append(self, data: bytes) -> int:
        """Append one broker append's worth of batches; returns the position it went to."""
        data = bytes(data)
        batches = []
        try:
            it = iter_batches(data, verify_crc=True)
            batches = list(it)
            if it.remaining:
                raise LogError(
                    self.path, f"{it.remaining} bytes after the last complete batch", it.position
                )
        except DecodeError as err:
            raise LogError(self.path, f"refusing to append invalid data: {err}") from None
        if not batches:
            return self._active.size if self._active else 0
        first, last = batches[0], batches[-1]
        first_offset = first.base_offset if first.magic >= 2 else first.records()[0].offset
        if first_offset < self.next_offset:
            raise LogError(
                self.path, f"offset {first_offset} is below the log end offset {self.next_offset}"
            )
        largest_ts, ts_offset = -1, last.last_offset
        for b in batches:
            if b.max_timestamp > largest_ts:
                largest_ts, ts_offset = b.max_timestamp, b.last_offset
        a = self._active
        if a is None:
            self._active = a = _Active(self.path, self.next_offset)
        elif self._should_roll(a, len(data), last.last_offset):
            a = self._roll(first_offset)
        position = a.size
        if largest_ts > a.max_ts:
            a.max_ts, a.max_ts_offset = largest_ts, ts_offset
        if a.since_index > self.index_interval_bytes:
            a.index.write(encode_offset_entries(a.base_offset, [(last.last_offset, position)]))
            a.index_entries += 1
            self._time_entry(a, a.max_ts, a.max_ts_offset)
            a.since_index = 0
        a.log.write(data)
        a.size += len(data)
        a.since_index += len(data)
        for b in batches:
            if b.magic >= 2 and b.partition_leader_epoch >= 0:
                if not self.epochs or b.partition_leader_epoch > self.epochs[-1][0]:
                    self.epochs.append(EpochEntry(b.partition_leader_epoch, b.base_offset))
                    self._write_epochs()
            aborted = self.txn.update(b)
            if aborted is not None:
                with open(a.txnindex_path, "ab") as f:
                    f.write(encode_txn_entries([aborted]))
        self.next_offset = last.last_offset + 1
        for file in a.files():
            file.flush()
        return position

    def _time_entry(self, a: _Active, ts: int, offset: int) -> None:
        if ts > a.last_time:
            a.timeindex.write(encode_time_entries(a.base_offset, [(ts, offset)]))
            a.last_time = ts

    def _should_roll(self, a: _Active, size: int, last_offset: int) -> bool:
        return (
            (a.size > 0 and a.size + size > self.segment_bytes)
            or (a.index_entries + 1) * 8 > self.max_index_bytes
            or last_offset - a.base_offset > 0x7FFFFFFF
        )

    def _roll(self, base_offset: int) -> _Active:
        if self._active is not None:
            self._close_active(self._active)
        self._active = _Active(self.path, base_offset)
        return self._active

    def _close_active(self, a: _Active) -> None:
        self._time_entry(a, a.max_ts, a.max_ts_offset)
        for f in a.files():
            f.flush()
            if self.fsync:
                os.fsync(f.fileno())
            f.close()
        self._active = None

    def _write_epochs(self) -> None:
        p = self.path / "leader-epoch-checkpoint"
        tmp = p.with_name(p.name + ".tmp")
        tmp.write_text(write_epoch_checkpoint_text(self.epochs))
        os.replace(tmp, p)

    def close(self) -> None:
        """Close the active segment: final time index entry, flushed and fsynced files."""
        if self._active is not None:
            self._close_active(self._active)

    def __enter__(self) -> Self:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

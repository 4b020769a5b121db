"""A log.dirs with a __consumer_offsets partition laid out by hand (OffsetCommitKey version
1, OffsetCommitValue version 3): commits, a later one winning, a tombstone, transactional
commits with a COMMIT marker, an ABORT marker and none yet; and two data partitions. What
`kafkacodec groups` is tested on (tests/internal/test_groups_metadata.py) and what the
docs' example shows (docs/internal-topics.md)."""

from __future__ import annotations

import struct
from pathlib import Path

import kafkacodec as kc

T0 = 1729814400000


def s16(text: str) -> bytes:
    raw = text.encode()
    return struct.pack(">h", len(raw)) + raw


def commit_key(group: str, topic: str, partition: int) -> bytes:
    return struct.pack(">h", 1) + s16(group) + s16(topic) + struct.pack(">i", partition)


def commit_value(offset: int, epoch: int = 3) -> bytes:
    return struct.pack(">hqi", 3, offset, epoch) + s16("") + struct.pack(">q", T0)


def write_partition(d: Path, batches: list[bytes]) -> None:
    d.mkdir(parents=True)
    (d / "00000000000000000000.log").write_bytes(b"".join(batches))


def data_partition(d: Path, count: int) -> None:
    write_partition(d, [kc.build_batch([kc.Record(None, T0 + i, None, b"x", []) for i in range(count)])])


def write_groups_log_dirs(logs: Path) -> Path:
    """The log.dirs at logs (created): __consumer_offsets-0, orders-0 (10 records) and
    orders-1 (6)."""
    c = 0

    def batch(records, **kw):
        nonlocal c
        out = kc.build_batch([kc.Record(None, T0 + c, k, v, []) for k, v in records], base_offset=c, **kw)
        c += len(records)
        return out

    def txn(producer_id: int) -> dict:
        return {"producer_id": producer_id, "producer_epoch": 0, "is_transactional": True}

    batches = [
        batch([(commit_key("billing", "orders", 0), commit_value(5))]),
        batch([(commit_key("billing", "orders", 1), commit_value(3))]),
        batch([(commit_key("billing", "orders", 0), commit_value(8))]),  # the latest wins
        batch([(commit_key("billing", "orders", 1), None)]),  # a tombstone deletes
        batch([(commit_key("txn-app", "orders", 0), commit_value(9))], **txn(77)),
        batch([(commit_key("txn-app", "orders", 1), commit_value(2))], **txn(78)),
        batch([(commit_key("other", "elsewhere", 0), commit_value(4))]),
        batch([(commit_key("txn-late", "orders", 0), commit_value(1))], **txn(79)),  # no marker: pending
    ]
    batches.append(kc.build_control_batch(True, offset=c, timestamp=T0, producer_id=77, producer_epoch=0))
    batches.append(kc.build_control_batch(False, offset=c + 1, timestamp=T0, producer_id=78, producer_epoch=0))
    write_partition(logs / "__consumer_offsets-0", batches)
    data_partition(logs / "orders-0", 10)
    data_partition(logs / "orders-1", 6)
    return logs

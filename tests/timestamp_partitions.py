"""Partitions whose first segment holds no timestamp (a segment the log cleaner emptied, or
one of magic 0 message sets), the next one records from T0 + 10 on: where Kafka's
ListOffsets by timestamp rests on the first segment's file modification time
(UnifiedLog.fetchOffsetByTimestamp, LogSegment.largestTimestamp). Written here for
tests/log/test_timestamps.py and judged by brokers in tests/kafka/test_kafka_timestamps.py."""

from __future__ import annotations

import os
from pathlib import Path

import kafkacodec as kc
from kafkacodec.log.writer import PartitionWriter

T0 = 1_700_000_000_000
FIRST = "00000000000000000000.log"


def write(d: Path, kind: str) -> Path:
    """kind "cleaned": offsets 0-9 gone, their segment empty (as the cleaner leaves it);
    "untimed": offsets 0-9 in magic 0 messages, no timestamp. Offsets 10-19 after them,
    timestamps T0 + 10 to T0 + 19, in a segment of their own."""
    if kind == "untimed":
        first = kc.build_message_set([kc.Record(None, None, b"k", f"v{i}".encode()) for i in range(10)], magic=0)
    else:
        first = kc.build_batch([kc.Record(None, T0 + i, b"k", f"v{i}".encode()) for i in range(10)])
    second = kc.build_batch([kc.Record(None, T0 + i, b"k", f"v{i}".encode()) for i in range(10, 20)], base_offset=10)
    with PartitionWriter(d, fsync=False, segment_bytes=len(first)) as w:
        w.append(first)
        w.append(second)
    assert sorted(f.name for f in d.glob("*.log")) == [FIRST, "00000000000000000010.log"]
    if kind == "cleaned":
        for suffix in (".log", ".index", ".timeindex"):
            (d / FIRST).with_suffix(suffix).write_bytes(b"")
    return d


def set_mtime(d: Path, ms: int) -> None:
    """The first segment's .log modified at ms (milliseconds since the epoch)."""
    os.utime(d / FIRST, ns=(ms * 1_000_000, ms * 1_000_000))

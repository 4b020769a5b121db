"""Kafka log directories: segments, index files, Kafka's search semantics, recovery, and a
writer. Rules: FORMATS.md sections 4 and 5.

    from kafkacodec.log import open_log
    p = open_log("/var/lib/kafka/orders-0")     # a Partition (or LogDirs for a log.dirs)
    p.list_offsets(1700000000000)               # Kafka's ListOffsets answer
    for seg, batch, record in p.read(from_offset=1200): ...
"""

from .index import AbortedTxn, OffsetIndex, OffsetPosition, TimeIndex, TimestampOffset, TxnIndex
from .partition import (
    EARLIEST,
    EARLIEST_LOCAL,
    LATEST,
    LATEST_TIERED,
    MAX_TIMESTAMP,
    ListOffsetsResult,
    LogDirs,
    Partition,
)
from .recovery import RecoveryReport, TxnTracker, recover_segment
from .repair import RepairPlan, plan_repair
from .repair import repair as repair_partition
from .segment import LogOffsetPosition, Segment, TimestampAndOffset
from .tiered import TieredLogDirs, TieredPartition, TieredSegment, open_log
from .writer import PartitionWriter

__all__ = [
    "open_log", "Partition", "LogDirs", "Segment", "PartitionWriter", "OffsetIndex", "TimeIndex",
    "TxnIndex", "OffsetPosition", "TimestampOffset", "AbortedTxn", "LogOffsetPosition",
    "TimestampAndOffset", "ListOffsetsResult", "RecoveryReport", "TxnTracker", "recover_segment",
    "RepairPlan", "plan_repair", "repair_partition", "LATEST", "EARLIEST", "MAX_TIMESTAMP",
    "EARLIEST_LOCAL", "LATEST_TIERED", "TieredPartition", "TieredSegment", "TieredLogDirs",
]  # fmt: skip

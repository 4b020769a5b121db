"""What is in tiered storage, from `__remote_log_metadata` on disk with no broker: its
records folded as Kafka's TopicBasedRemoteLogMetadataManager folds them
(RemoteLogMetadataCache): a RemoteLogSegmentMetadataRecord adds a segment (state
COPY_SEGMENT_STARTED), RemoteLogSegmentMetadataUpdateRecords move it on (COPY_SEGMENT_FINISHED:
readable; DELETE_SEGMENT_STARTED: no longer read; DELETE_SEGMENT_FINISHED: gone), and a
RemotePartitionDeleteMetadataRecord marks a partition's deletion. Records are taken in log
order within each partition of the topic (a topic-partition's events all go to one).

Checked against a tiered-storage root (storage/tiered.py), it says which committed segments
have objects missing, and which objects no committed segment names.
"""

from __future__ import annotations

import base64
from collections.abc import Iterable
from dataclasses import dataclass, field

from kafkacodec.log.partition import LogDirs, Partition
from kafkacodec.runtime.errors import DecodeError, KafkacodecError
from kafkacodec.storage import size_of

from .codecs import DEFAULT, Codecs
from .dump_format import get
from .kafka_json import uuid_text

__all__ = ["RemoteSegment", "RemoteLog", "fold_remote_log", "TOPIC", "SEGMENT_STATES",
           "remote_extent", "learn_remote_extent", "murmur2", "metadata_partition"]

TOPIC = "__remote_log_metadata"
#: RemoteLogSegmentState's ids, and RemotePartitionDeleteState's.
SEGMENT_STATES = {0: "COPY_SEGMENT_STARTED", 1: "COPY_SEGMENT_FINISHED",
                  2: "DELETE_SEGMENT_STARTED", 3: "DELETE_SEGMENT_FINISHED"}  # fmt: skip
PARTITION_STATES = {0: "DELETE_PARTITION_MARKED", 1: "DELETE_PARTITION_STARTED",
                    2: "DELETE_PARTITION_FINISHED"}  # fmt: skip
#: The one state whose segment a broker reads (RemoteLogMetadataCache.remoteLogSegmentMetadata).
READABLE = "COPY_SEGMENT_FINISHED"


@dataclass
class RemoteSegment:
    """One remote segment as the metadata describes it, in its latest state."""

    topic: str
    topic_id: str
    partition: int
    segment_id: str
    start_offset: int
    end_offset: int
    state: str
    size: int
    max_timestamp: int
    broker_id: int
    event_timestamp: int
    leader_epochs: dict[int, int]
    custom_metadata: bytes | None = None
    #: Where in __remote_log_metadata it was last changed.
    log: str = ""

    @property
    def name(self) -> str:
        """Its files' name in either layout: <20-digit start offset>-<segment id>."""
        return f"{self.start_offset:020d}-{self.segment_id}"

    def to_dict(self) -> dict:
        d = {k: v for k, v in self.__dict__.items() if k != "custom_metadata"}
        d["leader_epochs"] = {str(k): v for k, v in sorted(self.leader_epochs.items())}
        d["custom_metadata_bytes"] = None if self.custom_metadata is None else len(self.custom_metadata)
        return d


@dataclass
class RemoteLog:
    segments: dict[str, RemoteSegment] = field(default_factory=dict)  # by segment id
    partition_states: dict[tuple[str, int], str] = field(default_factory=dict)
    records: int = 0
    partitions: int = 0  # __remote_log_metadata partitions read
    problems: list[str] = field(default_factory=list)

    def listed(self, *, every: bool = False) -> list[RemoteSegment]:
        """The segments (only the readable ones unless every), by topic, partition, offset."""
        segs = [s for s in self.segments.values() if every or s.state == READABLE]
        return sorted(segs, key=lambda s: (s.topic, s.partition, s.start_offset, s.segment_id))


def _segment_id(o) -> tuple[str, str, int, str]:
    sid = get(o, "RemoteLogSegmentId")
    tp = get(sid, "TopicIdPartition")
    return get(tp, "Name"), uuid_text(get(tp, "Id")), get(tp, "Partition"), uuid_text(get(sid, "Id"))


def _fold(out: RemoteLog, m, where: str) -> None:
    o = m.obj
    if m.spec == "RemoteLogSegmentMetadataRecord":
        topic, tid, part, sid = _segment_id(o)
        out.segments[sid] = RemoteSegment(
            topic, tid, part, sid, get(o, "StartOffset"), get(o, "EndOffset"),
            SEGMENT_STATES.get(get(o, "RemoteLogSegmentState"), "UNKNOWN"),
            get(o, "SegmentSizeInBytes"), get(o, "MaxTimestampMs"), get(o, "BrokerId"),
            get(o, "EventTimestampMs"),
            {get(e, "LeaderEpoch"): get(e, "Offset") for e in get(o, "SegmentLeaderEpochs") or ()},
            get(o, "CustomMetadata"), where,
        )  # fmt: skip
    elif m.spec == "RemoteLogSegmentMetadataUpdateRecord":
        _topic, _tid, _part, sid = _segment_id(o)
        seg = out.segments.get(sid)
        if seg is None:  # Kafka's cache refuses it too (RemoteResourceNotFoundException)
            out.problems.append(f"{where}: an update of segment {sid}, which no earlier record adds")
            return
        seg.state = SEGMENT_STATES.get(get(o, "RemoteLogSegmentState"), "UNKNOWN")
        seg.event_timestamp, seg.broker_id, seg.log = get(o, "EventTimestampMs"), get(o, "BrokerId"), where
        if get(o, "CustomMetadata") is not None:
            seg.custom_metadata = get(o, "CustomMetadata")
        if seg.state == "DELETE_SEGMENT_FINISHED":
            del out.segments[sid]
    elif m.spec == "RemotePartitionDeleteMetadataRecord":
        tp = get(o, "TopicIdPartition")
        key = (get(tp, "Name"), get(tp, "Partition"))
        out.partition_states[key] = PARTITION_STATES.get(get(o, "RemotePartitionDeleteState"), "UNKNOWN")


def fold_remote_log(log_dirs: Iterable[LogDirs], codecs: Codecs = DEFAULT,
                    partitions: list | None = None) -> RemoteLog:  # fmt: skip
    """The remote segments __remote_log_metadata describes on these log dirs: in each of
    their partitions, or in `partitions` (a cluster's disks: one replica of each, chosen by
    kafkacodec.brokers)."""
    out = RemoteLog()
    log_dirs = list(log_dirs)
    for d in log_dirs:
        out.problems += d.problems
    for p in partitions if partitions is not None else [q for d in log_dirs for q in d.partitions]:
        if p.topic != TOPIC or p.state is not None:
            continue
        out.partitions += 1
        damage: list[str] = []
        for _seg, _b, r in p.read(verify_crc=True, on_damage=damage.append):
            if r.control is not None:
                continue
            out.records += 1
            where = f"{p.path.name} offset {r.offset}"
            if r.value is None:
                out.problems.append(f"{where}: a record with no value")
                continue
            try:
                _fold(out, codecs.metadata_record(TOPIC, bytes(r.value)), where)
            except (DecodeError, KafkacodecError) as err:
                out.problems.append(f"{where}: {err}")
        out.problems += [f"{p.path.name}: {d}" for d in damage]
    return out


def remote_extent(p: Partition, codecs: Codecs = DEFAULT) -> tuple[list[tuple[int, int, int]] | None, list[str]]:
    """What __remote_log_metadata, where the partition's log directory holds it, lists as
    readable remote segments of the partition (its topic and partition, and its topic id
    when partition.metadata names one): ([(start offset, end offset, max timestamp)],
    problems met reading it). None when the log directory holds no partition of it (each
    of the topic's partitions lives on some brokers only), or it cannot be read."""
    if p.topic is None or p.partition is None or p.state is not None:
        return None, []
    try:
        folded = _fold_of(p.path.parent, codecs)
    except (OSError, KafkacodecError) as err:
        return None, [f"{p.path.parent}: {TOPIC} cannot be read ({err}): where the log starts "
                      "is known from the broker's checkpoint alone"]  # fmt: skip
    if folded is None:
        return None, []
    tid = p.topic_id
    mine = [(s.start_offset, s.end_offset, s.max_timestamp) for s in folded.listed()
            if s.topic == p.topic and s.partition == p.partition and tid in (None, s.topic_id)]  # fmt: skip
    return mine, [f"{TOPIC}: {x}" for x in folded.problems]


def _int32(n: int) -> int:
    n &= 0xFFFFFFFF
    return n - (1 << 32) if n & 0x80000000 else n


def murmur2(data: bytes) -> int:
    """Kafka's Utils.murmur2 (a signed 32-bit hash), which its partitioners use."""
    m, h = 0x5BD1E995, (0x9747B28C ^ len(data)) & 0xFFFFFFFF
    n4 = len(data) // 4
    for i in range(n4):
        k = int.from_bytes(data[4 * i : 4 * i + 4], "little")
        k = (k * m) & 0xFFFFFFFF
        k ^= k >> 24
        k = (k * m) & 0xFFFFFFFF
        h = ((h * m) & 0xFFFFFFFF) ^ k
    tail = data[4 * n4 :]
    if tail:
        for i in reversed(range(len(tail))):
            h ^= tail[i] << (8 * i)
        h = (h * m) & 0xFFFFFFFF
    h ^= h >> 13
    h = (h * m) & 0xFFFFFFFF
    h ^= h >> 15
    return _int32(h)


def metadata_partition(topic_id: str, partition: int, partitions: int) -> int:
    """The __remote_log_metadata partition holding a topic partition's records, as Kafka's
    RemoteLogMetadataTopicPartitioner.metadataPartition puts them: murmur2 of the 4 bytes of
    Objects.hash(topicId's least significant bits, its most significant bits, partition),
    made positive, modulo the topic's partition count."""
    raw = base64.urlsafe_b64decode(topic_id + "==")
    most, least = (int.from_bytes(raw[i : i + 8], "big", signed=True) for i in (0, 8))

    def long_hash(v: int) -> int:  # Long.hashCode
        u = v & 0xFFFFFFFFFFFFFFFF
        return _int32(u ^ (u >> 32))

    h = 1
    for part in (long_hash(least), long_hash(most), _int32(partition)):  # Arrays.hashCode
        h = _int32(31 * h + part)
    return (murmur2((h & 0xFFFFFFFF).to_bytes(4, "big")) & 0x7FFFFFFF) % partitions


def _holds_its_metadata(p: Partition) -> bool:
    """Whether the partition's log directory holds the __remote_log_metadata partition Kafka
    puts the partition's records in (metadata_partition; the topic's partition count from
    the log directory's __cluster_metadata): then that it lists nothing of the partition
    means nothing of it was copied."""
    from .cluster import fold_cluster

    tid, log_dir = p.topic_id, p.path.parent
    if tid is None or p.partition is None or not (log_dir / "__cluster_metadata-0").is_dir():
        return False
    try:
        state = fold_cluster(log_dir)
    except (OSError, KafkacodecError):
        return False
    counts = [len(t["partitions"]) for t in state.topics.values() if t["name"] == TOPIC]
    if len(counts) != 1 or not counts[0]:
        return False
    return (log_dir / f"{TOPIC}-{metadata_partition(tid, p.partition, counts[0])}").is_dir()


def learn_remote_extent(p: Partition, codecs: Codecs = DEFAULT) -> None:
    """Tell a partition (a tiered view: its local partition's log directory) what
    remote_extent finds (Partition.remote_extent, remote_none_copied), and the problems met
    to p.problems."""
    local = getattr(p, "local", None) or p
    extent, problems = remote_extent(local, codecs)
    # Listed: what this log directory's __remote_log_metadata says of the partition. A
    # partition it says nothing of may have its records in a __remote_log_metadata partition
    # of another broker (RemoteLogMetadataTopicPartitioner spreads them): nothing listed is
    # nothing copied only when the partition Kafka puts them in is here.
    p.remote_extent = extent or []
    # asked only by a latest-tiered answer (it folds __cluster_metadata): never on the way
    p.remote_none_copied = (lambda: _holds_its_metadata(local)) if extent == [] else None
    p.problems += problems


_FOLDED: dict[tuple, RemoteLog] = {}


def _fold_of(log_dir, codecs: Codecs) -> RemoteLog | None:
    """__remote_log_metadata of a log directory folded (None: it holds none), once for as
    long as its files keep their names and sizes (a command over many partitions folds it
    once)."""
    metas = sorted((c for c in log_dir.iterdir() if c.name.startswith(f"{TOPIC}-") and c.is_dir()),
                   key=str)  # fmt: skip
    if not metas:
        return None
    files = sorted((f for m in metas for f in m.iterdir()), key=str)
    key = (str(log_dir), id(codecs), tuple((str(f), size_of(f)) for f in files))
    if key not in _FOLDED:
        dirs = LogDirs(log_dir)
        dirs.partitions = [q for q in dirs.partitions if q.topic == TOPIC]
        try:
            _FOLDED.clear()  # one log directory's at a time
            _FOLDED[key] = fold_remote_log([dirs], codecs)
        finally:
            dirs.close()
    return _FOLDED[key]


@dataclass
class LayoutCheck:
    """A tiered-storage root against the metadata: segments Kafka reads whose files are
    missing (problems), and files no readable segment names (notes: uploads in progress,
    deletions not finished, or orphans)."""

    checked: int = 0
    problems: list[str] = field(default_factory=list)
    notes: list[str] = field(default_factory=list)


def check_layout(log: RemoteLog, root, *, every: bool = False) -> LayoutCheck:
    """Each readable segment's files under root (either layout; a directory, or a
    storage.tiered.TieredRoot with Aiven's key prefix), and what else is there."""
    from kafkacodec.storage import tiered as layout

    out = LayoutCheck()
    by_partition: dict[tuple[str, int, str], list[RemoteSegment]] = {}
    for s in log.segments.values():
        by_partition.setdefault((s.topic, s.partition, s.topic_id), []).append(s)
    for (topic, part, tid), segs in sorted(by_partition.items()):
        dirs = layout.remote_partition_dir(root, topic, part, tid)
        if not dirs:
            readable = [s for s in segs if s.state == READABLE]
            if readable:
                out.problems.append(f"{topic}-{part} (topic id {tid}): {len(readable)} remote segments, "
                                    f"but no folder of theirs under {root}")  # fmt: skip
            continue
        kind, path = dirs[0]
        files = layout.segment_files(kind, path)
        found = {sid: (offset, suffixes) for (offset, sid), suffixes in files.items()}
        for s in sorted(segs, key=lambda s: s.start_offset):
            there = found.pop(s.segment_id, None)
            if s.state != READABLE:
                if there is not None:
                    out.notes.append(f"{path}: {s.name}: files of a segment in state {s.state}")
                continue
            out.checked += 1
            if there is None:
                out.problems.append(f"{path}: {s.name} (offsets {s.start_offset}-{s.end_offset}): "
                                    "no files, but Kafka reads it from remote storage")  # fmt: skip
                continue
            offset, suffixes = there
            lack = layout.missing_files(kind, suffixes)
            if offset != s.start_offset:
                out.problems.append(f"{path}: {s.segment_id}: named for offset {offset}, but the "
                                    f"metadata says it starts at {s.start_offset}")  # fmt: skip
            if lack:
                out.problems.append(f"{path}: {s.name}: no {', '.join(sorted(lack))} (Kafka reads "
                                    "this segment from remote storage)")  # fmt: skip
        for sid, (offset, suffixes) in sorted(found.items(), key=lambda kv: kv[1][0]):
            out.notes.append(f"{path}: {offset:020d}-{sid} ({', '.join(sorted(suffixes))}): no "
                             f"segment of {TOPIC} names it (an orphan)")  # fmt: skip
    return out

"""A partition in Kafka tiered storage (KIP-405), read as a partition with no broker: the
remote segments a RemoteStorageManager uploaded (storage/tiered.py: Aiven's layout in an
object store or on a disk, Kafka's LocalTieredStorage), alone or with the local segments of
a broker's log directory, in one offset-ordered view.

The view follows Kafka's UnifiedLog: a fetch below the local log start offset is served
from remote storage (RemoteLogManager), from it on from the local log. So remote segments
that start at or after the first local segment are left out (the local copy wins), and a
remote segment that reaches past the local start, or past the next remote segment's start
(two leaders' uploads whose boundaries differ), is read only below it (Segment.upper).
Where several uploads share a start offset (a retried copy whose objects remain), the one
listed first is read and the listing says so; __remote_log_metadata, when at hand, tells
which one Kafka committed (`kafkacodec remote-log` lists it).

    p = open_log("s3://tiered/prefix/orders-MWJ6FHTfRYy67jzwZdeqSQ/0")   # Aiven's layout
    p = open_log("/var/lib/kafka/orders-0", tiered="s3://tiered/prefix") # local + remote
"""

from __future__ import annotations

from collections.abc import Sequence

from ..runtime.errors import LogError, NotAPartitionError
from ..storage import StoragePath, as_path
from ..storage import tiered as layout
from ..storage.blob import Blob
from .index import OffsetIndex, TimeIndex, TxnIndex
from .partition import EpochEntry, LogDirs, Partition, read_epoch_checkpoint_text
from .partition import open_log as open_plain
from .segment import _I, Segment

__all__ = [
    "TieredSegment", "TieredPartition", "TieredLogDirs", "open_log", "open_partition", "with_remote",
    "tiered_root",
]  # fmt: skip

_KIND = {OffsetIndex: "offset", TimeIndex: "timestamp", TxnIndex: "transaction"}


class TieredSegment(Segment):
    """A remote segment: its .log fetched a range (of chunks) at a time, its indexes read
    from the layout's objects on first use."""

    def __init__(self, files: layout.RemoteSegmentFiles) -> None:
        super().__init__(files.directory, files.start_offset)
        self.files = files
        self.path = files.log if files.log is not None else files.directory / f"{files.name}.log"
        self.index_path = files.index_name("offset")  # type: ignore[assignment]
        self.timeindex_path = files.index_name("timestamp")  # type: ignore[assignment]
        self.txnindex_path = files.index_name("transaction")  # type: ignore[assignment]

    def __repr__(self) -> str:
        return f"TieredSegment({str(self.path)!r})"

    def _spec(self) -> tuple:
        return (self.files,)

    def _open_blob(self) -> Blob:
        return self.files.open_log()

    def _open_index(self, cls: type[_I], path: StoragePath | str) -> _I:
        kind = _KIND[cls]
        return cls(str(path), self.base_offset, data=lambda: self.files.index_bytes(kind))

    def leader_epochs(self) -> list[EpochEntry]:
        """The leader epochs of this segment's offsets (its leader-epoch checkpoint, or the
        manifest's copy of it)."""
        m = getattr(self.files, "manifest", None)
        if m is not None and m.leader_epochs:
            return [EpochEntry(e, o) for e, o in m.leader_epochs]
        raw = self.files.index_bytes("leaderEpoch")
        if not raw:
            return []
        try:
            return read_epoch_checkpoint_text(bytes(raw).decode("utf-8"), self.files.index_name("leaderEpoch"))
        except UnicodeDecodeError:
            raise LogError(self.files.index_name("leaderEpoch"), "not UTF-8 text") from None


class TieredPartition(Partition):
    """The segments of one partition in tiered storage, with those of a broker's log
    directory when given (`local`), as one Partition: lookups, reads and Spark slices go
    to whichever holds an offset, as the module docstring says."""

    def __init__(self, path: StoragePath, remote: Sequence[layout.RemoteSegmentFiles], *,
                 topic: str | None, partition: int | None, topic_id: str | None = None,
                 local: Partition | None = None, problems: Sequence[str] = ()) -> None:  # fmt: skip
        # The directory listing Partition.__init__ makes is the layout's here: set what
        # Partition's methods read.
        self.path = path
        self.topic, self.partition, self.state = topic, partition, None
        self.index_files, self.snapshots, self.leftovers, self.unknown = {}, [], [], []
        self.kafka07, self.repair_files, self.orphan_indexes = [], [], []
        self.problems = list(problems)
        self.mtimes_used = []
        self.metadata = {"topic_id": topic_id} if topic_id else {}
        self.local = local
        #: The tiered-storage root the remote segments were looked for under (--tiered).
        self.root: layout.TieredRoot | StoragePath | None = None
        if local is not None:
            self.problems += local.problems
            self.metadata = {**self.metadata, **local.metadata}
        local_start = local.base_offsets[0] if local is not None and local.segments else None
        chosen: dict[int, TieredSegment] = {}
        for files in remote:
            if files.start_offset in chosen:
                self.problems.append(
                    f"{path}: two remote segments start at offset {files.start_offset} "
                    f"({chosen[files.start_offset].files.segment_id}, {files.segment_id}): the "
                    "first is read (give __remote_log_metadata to read the one Kafka committed)"
                )  # fmt: skip
                continue
            if local_start is not None and files.start_offset >= local_start:
                continue  # the local copy is served from here on
            chosen[files.start_offset] = TieredSegment(files)
        remote_segs = [chosen[k] for k in sorted(chosen)]
        local_segs = list(local.segments) if local is not None else []
        for seg, nxt in zip(remote_segs, remote_segs[1:] + local_segs[:1]):
            seg.upper = nxt.base_offset
        #: The remote segments in the view, and the local ones.
        self.remote_segments: list[Segment] = list(remote_segs)
        self.segments = [*remote_segs, *local_segs]
        self.base_offsets = [s.base_offset for s in self.segments]
        self._epochs: list[EpochEntry] | None = None

    @property
    def looked_in(self) -> list[str]:
        """Where this view's segments were looked for: the log directory, and the tiered-storage
        root given."""
        return [str(self.path)] + ([f"--tiered {self.root}"] if self.root is not None else [])

    @property
    def local_segments(self) -> list[Segment]:
        """The broker's log directory's segments; with none given (remote segments read
        alone, no broker), all of them stand for the log."""
        return list(self.local.segments) if self.local is not None else self.segments

    def __repr__(self) -> str:
        return (f"TieredPartition({str(self.path)!r}, remote={len(self.remote_segments)}, "
                f"local={len(self.segments) - len(self.remote_segments)})")  # fmt: skip

    @property
    def leader_epochs(self) -> list[EpochEntry]:
        """The epochs of the remote segments below the local start, then the local log's
        (read on first use: a remote segment's cost a fetch)."""
        if self._epochs is None:
            entries: list[EpochEntry] = []
            for seg in self.remote_segments:
                assert isinstance(seg, TieredSegment)
                for e in seg.leader_epochs():
                    if seg.upper is not None and e.start_offset >= seg.upper:
                        continue
                    if not entries or e.epoch > entries[-1].epoch:
                        entries.append(e)
            if self.local is not None:
                for e in self.local.leader_epochs:
                    if not entries or e.epoch > entries[-1].epoch:
                        entries.append(e)
                    elif e.epoch == entries[-1].epoch and e.start_offset < entries[-1].start_offset:
                        entries[-1] = e
            self._epochs = entries
        return self._epochs

    @leader_epochs.setter
    def leader_epochs(self, value: list[EpochEntry]) -> None:
        self._epochs = value

    def close(self) -> None:
        """Unmap the remote segments' spools and the local partition's files."""
        super().close()
        if self.local is not None:
            self.local.close()


class TieredLogDirs(LogDirs):
    """Every partition of a tiered-storage root: an Aiven prefix (its <topic>-<topicId>
    folders), a LocalTieredStorage directory (or the directory holding its
    kafka-tiered-storage), or one Aiven topic folder."""

    def __init__(self, path: StoragePath, partitions: list[Partition], problems: list[str]) -> None:
        self.path = path
        self.partitions = sorted(partitions, key=lambda p: (p.topic or "", p.partition or 0))
        self.other: list[str] = []
        self.problems = problems

    def checkpoint(self, name: str) -> dict[tuple[str, int], int]:
        return {}


def _aiven_partition(path: StoragePath, keys, local: Partition | None = None) -> TieredPartition:
    segs, problems = layout.aiven_segments(path, keys)
    m = layout.AIVEN_TOPIC_DIR.match(path.parent.name)
    part = int(path.name) if path.name.isdigit() else None
    return TieredPartition(path, segs, topic=m["topic"] if m else None, partition=part,
                           topic_id=m["id"] if m else None, local=local, problems=problems)  # fmt: skip


def _local_tiered_partition(path: StoragePath, local: Partition | None = None) -> TieredPartition:
    segs, problems = layout.local_tiered_segments(path)
    m = layout.LOCAL_PARTITION_DIR.match(path.name)
    assert m is not None
    return TieredPartition(path, segs, topic=m["topic"], partition=int(m["partition"]),
                           topic_id=m["id"], local=local, problems=problems)  # fmt: skip


def _tiered_root(path: StoragePath, keys) -> TieredLogDirs | None:
    """The partitions of a tiered-storage root, or None when path is none."""
    children = [c for c in path.iterdir() if c.is_dir()]
    names = {c.name: c for c in children}
    if layout.LOCAL_ROOT in names:
        return _tiered_root(names[layout.LOCAL_ROOT], keys)
    parts: list[Partition] = []
    problems: list[str] = []
    local = [c for c in children if layout.LOCAL_PARTITION_DIR.match(c.name)]
    if local and all(layout.is_local_tiered_partition(c) for c in local):
        for c in local:
            parts.append(_local_tiered_partition(c))
        return TieredLogDirs(path, parts, problems)
    m = layout.AIVEN_TOPIC_DIR.match(path.name)
    if m and any(c.name.isdigit() for c in children):  # one topic's folder
        topics = [path]
    else:
        topics = [c for c in children if layout.AIVEN_TOPIC_DIR.match(c.name)]
    for t in topics:
        for c in t.iterdir():
            if c.name.isdigit() and c.is_dir():
                if layout.is_aiven_partition(c):
                    parts.append(_aiven_partition(c, keys))
    return TieredLogDirs(path, parts, problems) if parts else None


def open_tiered(path: StoragePath, keys=None) -> TieredPartition | TieredLogDirs | None:
    """A tiered-storage partition or root at path (either layout), else None."""
    if not path.is_dir():
        return None
    if layout.is_local_tiered_partition(path):
        return _local_tiered_partition(path)
    if layout.is_aiven_partition(path):
        return _aiven_partition(path, keys)
    if path.name == layout.LOCAL_ROOT or any(
        layout.AIVEN_TOPIC_DIR.match(c.name) or layout.LOCAL_PARTITION_DIR.match(c.name)
        or c.name == layout.LOCAL_ROOT for c in path.iterdir()
    ):  # fmt: skip
        return _tiered_root(path, keys)
    if layout.AIVEN_TOPIC_DIR.match(path.name):  # one topic's folder of Aiven's layout
        return _tiered_root(path, keys)
    return None


def with_remote(log: Partition | LogDirs, root: layout.TieredRoot | StoragePath,
                keys=None) -> Partition | LogDirs:  # fmt: skip
    """Local partitions joined with their remote segments under a tiered-storage root,
    found by topic, partition and topic id (partition.metadata; by name alone when the
    partition has none and one topic folder matches)."""
    if isinstance(log, LogDirs):
        log.partitions = [_joined(p, root, keys) for p in log.partitions]
        return log
    return _joined(log, root, keys)


def _joined(p: Partition, root: layout.TieredRoot | StoragePath, keys) -> Partition:
    if p.topic is None or p.partition is None or isinstance(p, TieredPartition):
        return p
    joined = _joined_view(p, root, keys)
    if isinstance(joined, TieredPartition):
        joined.root = root
    return joined


def _joined_view(p: Partition, root: layout.TieredRoot | StoragePath, keys) -> Partition:
    assert p.topic is not None and p.partition is not None  # _joined's check
    candidates = layout.remote_partition_dir(root, p.topic, p.partition, p.topic_id)
    if len(candidates) > 1:
        raise LogError(p.path, f"{len(candidates)} remote partitions under {root} match it "
                               f"({', '.join(str(c) for _k, c in candidates)}): its "
                               "partition.metadata names no topic id to tell them apart")  # fmt: skip
    if not candidates:
        # Nothing of it under the root: the local log alone. Not a problem in itself (most
        # topics of a cluster, the internal ones always, have no remote storage); offsets the
        # broker's records place below the local log are named as unreadable (unreadable()).
        return TieredPartition(p.path, [], topic=p.topic, partition=p.partition, local=p)
    kind, path = candidates[0]
    segs: Sequence[layout.RemoteSegmentFiles]
    if kind == "aiven":
        if not path.is_dir():
            return TieredPartition(p.path, [], topic=p.topic, partition=p.partition, local=p)
        segs, problems = layout.aiven_segments(path, keys)
    else:
        segs, problems = layout.local_tiered_segments(path)
    return TieredPartition(p.path, segs, topic=p.topic, partition=p.partition, local=p,
                           problems=problems)  # fmt: skip


def open_partition(path: StoragePath | str, *, keys=None, tiered: StoragePath | str | None = None,
                   options: dict | None = None) -> Partition:  # fmt: skip
    """One partition: a partition directory (Partition's checks and errors), or a
    partition of a tiered-storage layout; with `tiered`, joined with its remote segments."""
    p = as_path(path, options)
    keys = keys if keys is not None else layout.KeyRing(options or {})
    found = open_tiered(p, keys) if p.is_dir() else None
    if isinstance(found, TieredLogDirs):
        raise NotAPartitionError(p, f"a tiered-storage root of {len(found.partitions)} "
                                    "partitions: name one of them")  # fmt: skip
    part = found if found is not None else Partition(p)
    if tiered is not None:
        part = _joined(part, tiered_root(tiered, options), keys)
    return part


def tiered_root(tiered: StoragePath | str, options: dict | None = None) -> layout.TieredRoot:
    """The tiered-storage root a --tiered names (storage.tiered.tiered_root: a directory,
    or a directory and Aiven's key prefix); NotAPartitionError when it names neither."""
    path = as_path(tiered, options)
    root = layout.tiered_root(path)
    if root is None:
        raise NotAPartitionError(path, "no such directory, nor a key prefix that objects in "
                                       f"{path.parent} start with (the tiered-storage root: "
                                       "a directory, or Aiven's rsm.config.key.prefix)")  # fmt: skip
    return root




def open_log(path: StoragePath | str, *, keys=None, tiered: StoragePath | str | None = None,
             options: dict | None = None) -> Partition | LogDirs:  # fmt: skip
    """A partition directory, a log.dirs, or a tiered-storage partition or root (local or
    a URL); with `tiered`, a tiered-storage root whose remote segments join the local
    partitions. keys: a storage.tiered.KeyRing for encrypted segments (default: from the
    storage options)."""
    p = as_path(path, options)
    keys = keys if keys is not None else layout.KeyRing(options or {})
    found = open_tiered(p, keys) if p.exists() else None
    log: Partition | LogDirs = found if found is not None else open_plain(p)
    if tiered is not None:
        log = with_remote(log, tiered_root(tiered, options), keys)
    return log

"""The cluster's metadata folded from a KRaft controller's (or broker's) `__cluster_metadata`
on disk, with no broker: the latest snapshot (`<end offset>-<epoch>.checkpoint`), then the
log's records from the snapshot's end offset on, applied as Kafka's MetadataDelta applies
them (TopicsDelta, ClusterDelta, FeaturesDelta, ConfigurationsDelta):

- TopicRecord adds a topic; RemoveTopicRecord removes it and its partitions.
- PartitionRecord sets a partition; PartitionChangeRecord changes the fields it carries
  (a null ISR or replica list, leader -2 and recovery state -1 mean "unchanged"); a new
  leader bumps the leader epoch, and every change bumps the partition epoch
  (PartitionRegistration.merge).
- RegisterBrokerRecord registers a broker (fenced as it says); UnregisterBrokerRecord
  removes it; FenceBrokerRecord / UnfenceBrokerRecord and BrokerRegistrationChangeRecord
  (fenced: 1 fence, -1 unfence, 0 unchanged) change its state.
- FeatureLevelRecord sets a feature's level (0 removes it); ConfigRecord sets a config
  (a null value deletes it).
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from kafkacodec.log.segment import Segment
from kafkacodec.records.batches import BatchIterator
from kafkacodec.runtime.errors import (
    DecodeError,
    KafkacodecError,
    NotAPartitionError,
    NotASegmentError,
)
from kafkacodec.storage import StoragePath, as_path, read_whole

from .codecs import DEFAULT, Codecs
from .dump_format import get, get_many
from .kafka_json import NativeJson, uuid_text

__all__ = ["ClusterState", "fold_cluster", "METADATA_DIR", "CONFIG_RESOURCE_TYPES", "TopicConfig",
           "metadata_root",
           "index_intervals"]

METADATA_DIR = "__cluster_metadata-0"
#: ConfigResource.Type ids, as ConfigRecord's ResourceType holds them.
CONFIG_RESOURCE_TYPES = {
    2: "TOPIC",
    4: "BROKER",
    8: "BROKER_LOGGER",
    16: "CLIENT_METRICS",
    32: "GROUP",
}


@dataclass(frozen=True)
class TopicConfig:
    """A topic config's values: a topic's own, else the cluster's default (None: unset,
    Kafka's default applies). Picklable: Spark tasks take it."""

    by_topic: dict[str, str]
    default: str | None

    def __call__(self, topic: str) -> str | None:
        return self.by_topic.get(topic, self.default)


@dataclass
class ClusterState:
    topics: dict[str, dict] = field(default_factory=dict)  # by topic id
    brokers: dict[int, dict] = field(default_factory=dict)
    features: dict[str, int] = field(default_factory=dict)
    configs: dict[tuple[str, str], dict[str, str]] = field(default_factory=dict)
    snapshot: str | None = None  # the snapshot file read
    #: The snapshot's end offset: it holds the state of the offsets below it.
    snapshot_end_offset: int | None = None
    records: int = 0  # records applied, from the snapshot and the log
    snapshot_records: int = 0
    #: The metadata log's offset of the last record applied: the log's, else the last
    #: one the snapshot covers (a snapshot's own records are numbered from 0 inside it).
    last_offset: int | None = None
    problems: list[str] = field(default_factory=list)

    def unnamed_topics(self) -> list[str]:
        """The ids of topics whose partitions the metadata holds but that no TopicRecord
        names (a log that starts after the topic was created, and no snapshot before)."""
        return sorted(tid for tid, t in self.topics.items() if t["name"] is None)

    def notes(self) -> list[str]:
        return [f"topic id {tid}: no TopicRecord names it in the snapshot or the log read (its "
                "name is unknown here)" for tid in self.unnamed_topics()]  # fmt: skip

    def topic_config(self, key: str, broker_key: str) -> TopicConfig:
        """One topic config as the metadata sets it: each topic's own value (a TOPIC
        ConfigRecord of key), else the cluster-wide default (the BROKER resource "" of
        broker_key), as Kafka's LogConfig resolves a topic's config."""
        by_topic = {name: c[key] for (rtype, name), c in self.configs.items()
                    if rtype == "TOPIC" and key in c}  # fmt: skip
        return TopicConfig(by_topic, self.configs.get(("BROKER", ""), {}).get(broker_key))

    def to_dict(self) -> dict:
        return {
            "snapshot": self.snapshot, "snapshot_end_offset": self.snapshot_end_offset,
            "records": self.records, "snapshot_records": self.snapshot_records,
            "last_offset": self.last_offset,
            "brokers": [{"id": b, **v} for b, v in sorted(self.brokers.items())],
            "topics": sorted(
                ({"topic_id": tid, "name": t["name"],
                  "partitions": [{"partition": p, **v} for p, v in sorted(t["partitions"].items())]}
                 for tid, t in self.topics.items()),
                key=lambda t: (t["name"] is None, t["name"] or "", t["topic_id"]),
            ),
            "features": dict(sorted(self.features.items())),
            "configs": [{"resource_type": rt, "resource_name": rn, "configs": dict(sorted(c.items()))}
                        for (rt, rn), c in sorted(self.configs.items())],
            "problems": self.problems, "notes": self.notes(),
        }  # fmt: skip


def _topic(state: ClusterState, o) -> None:
    state.topics.setdefault(_topic_id(bytes(get(o, "TopicId"))), {"partitions": {}})["name"] = get(o, "Name")


def _remove_topic(state: ClusterState, o) -> None:
    state.topics.pop(_topic_id(bytes(get(o, "TopicId"))), None)


#: A PartitionRecord's fields, in the order _partition reads them.
_PARTITION = ("TopicId", "PartitionId", "Leader", "LeaderEpoch", "PartitionEpoch", "Replicas", "Isr",
              "AddingReplicas", "RemovingReplicas", "EligibleLeaderReplicas", "LastKnownElr",
              "Directories", "LeaderRecoveryState")  # fmt: skip


def _partition(state: ClusterState, o) -> None:
    (tid, pid, leader, leader_epoch, partition_epoch, replicas, isr, adding, removing, elr,
     last_known_elr, directories, recovery) = get_many(o, _PARTITION)  # fmt: skip
    t = state.topics.setdefault(_topic_id(bytes(tid)), {"name": None, "partitions": {}})
    t["partitions"][pid] = {
        "leader": leader, "leader_epoch": leader_epoch, "partition_epoch": partition_epoch,
        "replicas": list(replicas), "isr": list(isr), "adding_replicas": list(adding or []),
        "removing_replicas": list(removing or []),
        # KIP-966's eligible leader replicas (tagged, null: none), the replicas' log dirs
        # by directory.id (version 1+; absent: unknown), 1 when a leader elected uncleanly
        # is recovering (LeaderRecoveryState.RECOVERING)
        "elr": list(elr or []), "last_known_elr": list(last_known_elr or []),
        "directories": [_topic_id(bytes(d)) for d in directories or []],
        "leader_recovery_state": recovery,
    }  # fmt: skip


#: A PartitionChangeRecord's fields, in the order _partition_change reads them.
_CHANGE = ("TopicId", "PartitionId", "Isr", "Replicas", "AddingReplicas", "RemovingReplicas",
           "EligibleLeaderReplicas", "LastKnownElr", "Leader", "LeaderRecoveryState",
           "Directories")  # fmt: skip
_CHANGE_KEYS = ("isr", "replicas", "adding_replicas", "removing_replicas", "elr", "last_known_elr")


def _partition_change(state: ClusterState, o) -> None:
    """PartitionRegistration.merge: a null list, leader -2 (NO_LEADER_CHANGE) and a
    recovery state of -1 leave the field as it was."""
    tid, pid, *lists, leader, recovery, directories = get_many(o, _CHANGE)
    tid = bytes(tid)
    topic = state.topics.get(_topic_id(tid))
    p = topic["partitions"].get(pid) if topic else None
    if p is None:
        state.problems.append(
            f"a PartitionChangeRecord for {_topic_id(tid)}-{pid}, which no PartitionRecord created"
        )
        return
    for key, value in zip(_CHANGE_KEYS, lists):
        if value is not None:
            p[key] = list(value)
    if directories is not None:
        p["directories"] = [_topic_id(bytes(d)) for d in directories]
    if leader != -2:  # NO_LEADER_CHANGE
        p["leader"] = leader
        p["leader_epoch"] += 1
    if recovery is not None and recovery != -1:
        p["leader_recovery_state"] = recovery
    p["partition_epoch"] += 1


_topic_id = uuid_text  # (cached there: the same topics over and over)


def _register_broker(state: ClusterState, o) -> None:
    state.brokers[get(o, "BrokerId")] = {
        "epoch": get(o, "BrokerEpoch"), "rack": get(o, "Rack"),
        "fenced": bool(get(o, "Fenced")), "in_controlled_shutdown": bool(get(o, "InControlledShutdown")),
        "endpoints": [f"{get(e, 'Name')}://{get(e, 'Host')}:{get(e, 'Port')}" for e in get(o, "EndPoints")],
    }  # fmt: skip


def _unregister_broker(state: ClusterState, o) -> None:
    state.brokers.pop(get(o, "BrokerId"), None)


def _fence(fenced: bool) -> Callable[[ClusterState, object], None]:
    def apply(state: ClusterState, o) -> None:
        b = state.brokers.get(get(o, "Id"))
        if b is not None:
            b["fenced"] = fenced

    return apply


def _broker_change(state: ClusterState, o) -> None:
    b = state.brokers.get(get(o, "BrokerId"))
    if b is not None:
        fenced = get(o, "Fenced")
        if fenced in (1, -1):
            b["fenced"] = fenced == 1
        shutdown = get(o, "InControlledShutdown")
        if shutdown == 1:
            b["in_controlled_shutdown"] = True


def _feature_level(state: ClusterState, o) -> None:
    if get(o, "FeatureLevel") == 0:
        state.features.pop(get(o, "Name"), None)
    else:
        state.features[get(o, "Name")] = get(o, "FeatureLevel")


def _config(state: ClusterState, o) -> None:
    rtype = CONFIG_RESOURCE_TYPES.get(get(o, "ResourceType"), str(get(o, "ResourceType")))
    configs = state.configs.setdefault((rtype, get(o, "ResourceName")), {})
    if get(o, "Value") is None:
        configs.pop(get(o, "Name"), None)
        if not configs:  # its last config deleted: the resource has none (ConfigurationsImage)
            del state.configs[(rtype, get(o, "ResourceName"))]
    else:
        configs[get(o, "Name")] = get(o, "Value")


#: What each spec's record does to the state (the others, NoOpRecord among them, nothing).
_APPLY: dict[str, Callable[[ClusterState, object], None]] = {
    "TopicRecord": _topic, "RemoveTopicRecord": _remove_topic, "PartitionRecord": _partition,
    "PartitionChangeRecord": _partition_change, "RegisterBrokerRecord": _register_broker,
    "UnregisterBrokerRecord": _unregister_broker, "FenceBrokerRecord": _fence(True),
    "UnfenceBrokerRecord": _fence(False), "BrokerRegistrationChangeRecord": _broker_change,
    "FeatureLevelRecord": _feature_level, "ConfigRecord": _config,
}  # fmt: skip


try:  # the optional native loop; _partition_change is its reference
    from ._native import partition_changes as _partition_changes
except ImportError:  # pragma: no cover - no compiler at install time
    _partition_changes = None


def _change_readers(codecs: Codecs) -> tuple[int, dict[int, Any]] | None:
    """PartitionChangeRecord's apiKey and, by version, the native plan that reads _CHANGE
    (None: this set of codecs has no such spec)."""
    for api_key, (spec, cls) in codecs.metadata_specs("__cluster_metadata").items():
        if spec == "PartitionChangeRecord" and cls is not None:
            info = codecs.info(cls)
            readers = {v: NativeJson.reader(cls, v, _CHANGE, absent_none=True)
                       for v in range(info.lo, min(info.hi, 255) + 1)}  # fmt: skip
            return api_key, {v: plan for v, plan in readers.items() if plan is not None}
    return None


def _fold_file(state: ClusterState, path: StoragePath, data, start_offset: int, codecs: Codecs,
               snapshot: bool = False) -> None:  # fmt: skip
    """Apply the metadata records of a file of batches (a segment or a snapshot), from
    start_offset on."""
    it = BatchIterator(data, verify_crc=True, source=str(path), file=True)
    specs = codecs.metadata_specs("__cluster_metadata")
    apply = {api_key: _APPLY[spec] for api_key, (spec, _cls) in specs.items() if spec in _APPLY}
    changes = _change_readers(codecs) if _partition_changes is not None else None
    inert = frozenset(specs) - frozenset(apply)  # records that change nothing folded here
    try:
        for batch in it:
            if batch.last_offset < start_offset or batch.is_control:
                continue
            records = [r for r in batch.records() if r.offset >= start_offset and r.value is not None]
            if not records:
                continue
            state.records += len(records)
            if snapshot:
                state.snapshot_records += len(records)
            else:
                state.last_offset = records[-1].offset
            # a batch's records decoded at once, applied in order by their apiKey's rule: runs
            # of PartitionChangeRecords natively (_native_metadata.c), the rest here
            values = [bytes(r.value) for r in records]
            items = codecs.metadata_items("__cluster_metadata", values)
            i = 0
            while i < len(items):
                if changes is not None:
                    i = _partition_changes(items, i, *changes, state.topics, inert)
                    if i == len(items):
                        break
                r, item = records[i], items[i]
                i += 1
                if isinstance(item, DecodeError):
                    state.problems.append(f"{path.name} offset {r.offset}: {item}")
                    continue
                how = apply.get(item[0])
                if how is not None:
                    how(state, item[2])
    except DecodeError as err:
        state.problems.append(f"{path.name}: {err} (the rest of the file is not read)")


def metadata_root(path: Path) -> Path | None:
    """The log dir holding __cluster_metadata-0 for a log.dirs or a partition in it, if any."""
    for d in (path, path.parent):
        if (d / METADATA_DIR).is_dir():
            return d
    return None


def index_intervals(path: Path, on_problem: Callable[[str], None]) -> TopicConfig | None:
    """index.interval.bytes by topic, from the cluster's metadata where the log.dirs (or
    the partition's log.dirs) holds it: a topic's ConfigRecord, else the cluster-wide
    log.index.interval.bytes. None when it holds none, or when it cannot be read, which
    on_problem is told (Kafka's default applies then)."""
    root = metadata_root(path)
    if root is None:
        return None
    try:
        return fold_cluster(root).topic_config("index.interval.bytes", "log.index.interval.bytes")
    except KafkacodecError as err:
        on_problem(f"the cluster's metadata cannot be read ({err}): Kafka's default "
                   "index.interval.bytes is used")  # fmt: skip
        return None


def fold_cluster(directory: StoragePath | str, codecs: Codecs = DEFAULT) -> ClusterState:
    """The cluster's state from a __cluster_metadata-0 directory (or a log dir holding it),
    local or in an object store (storage.as_path)."""
    d = as_path(directory)
    if (d / METADATA_DIR).is_dir():
        d = d / METADATA_DIR
    if not d.is_dir():
        raise NotAPartitionError(d, "no such directory")
    files: list[StoragePath] = list(d.iterdir())
    snapshots = sorted(
        (p for p in files if p.suffix == ".checkpoint" and p.stem.partition("-")[0].isdigit()),
        key=lambda p: int(p.stem.partition("-")[0]),
    )
    segments = sorted((p for p in files if p.suffix == ".log" and p.stem.isdigit()),
                      key=lambda p: int(p.stem))  # fmt: skip
    if not snapshots and not segments:
        raise NotAPartitionError(d, "holds no KRaft snapshot (.checkpoint) and no log segment (.log)")
    state = ClusterState()
    start = 0
    if snapshots:
        snap = snapshots[-1]
        state.snapshot = snap.name
        data = read_whole(snap)
        if data is None:
            raise NotASegmentError(snap, "disappeared while read")
        start = int(snap.stem.partition("-")[0])  # the snapshot holds the offsets before it
        _fold_file(state, snap, data, 0, codecs, snapshot=True)
        state.snapshot_end_offset = start
        state.last_offset = start - 1 if start > 0 else None
    for path in segments:
        seg = Segment(d, int(path.stem))
        try:
            _fold_file(state, path, seg.data, start, codecs)
        finally:
            seg.close()
    return state


def text(state: ClusterState) -> list[str]:
    log_records = state.records - state.snapshot_records
    if state.snapshot is None:
        source = "the log (no snapshot)"
    else:
        source = (f"{state.snapshot} (offsets below {state.snapshot_end_offset}, "
                  f"{state.snapshot_records} records) and the log")  # fmt: skip
    last = "none" if state.last_offset is None else state.last_offset
    lines = [f"Metadata from {source}: {log_records} records from the log, last offset {last}"]
    lines.append(f"Brokers: {len(state.brokers)}")
    for bid, b in sorted(state.brokers.items()):
        lines.append(
            f"  broker {bid} epoch {b['epoch']} rack {b['rack'] or '-'} "
            f"{'fenced' if b['fenced'] else 'unfenced'}"
            f"{' in-controlled-shutdown' if b['in_controlled_shutdown'] else ''} "
            f"{' '.join(b['endpoints'])}".rstrip()
        )
    lines.append(f"Topics: {len(state.topics)}")
    for tid, t in sorted(state.topics.items(), key=lambda kv: (kv[1]["name"] is None,
                                                                kv[1]["name"] or "", kv[0])):  # fmt: skip
        name = "(name unknown: no TopicRecord read)" if t["name"] is None else t["name"]
        lines.append(f"  {name} topicId {tid} partitions {len(t['partitions'])}")
        for pid, p in sorted(t["partitions"].items()):
            lines.append(
                f"    partition {pid} leader {p['leader']} leaderEpoch {p['leader_epoch']} "
                f"replicas {','.join(map(str, p['replicas']))} isr {','.join(map(str, p['isr']))}"
            )
    lines.append(f"Features: {len(state.features)}")
    lines += [f"  {name} {level}" for name, level in sorted(state.features.items())]
    lines.append(f"Configs: {len(state.configs)}")
    for (rtype, rname), configs in sorted(state.configs.items()):
        lines.append(f"  {rtype} {rname or '(default)'}: "
                     + ", ".join(f"{k}={v}" for k, v in sorted(configs.items())))  # fmt: skip
    return lines

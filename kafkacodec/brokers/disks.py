"""Several brokers' log.dirs read as one cluster: which directory is whose (meta.properties),
which replicas each partition has on these disks, which one Kafka would serve it from if
the cluster restarted on them, and the directories that are not a live replica.

The replica served, per partition (what a consumer would read after the restart):
- with the cluster's metadata (`__cluster_metadata`, the most advanced copy among the
  disks, folded by internal.cluster): the leader it names, when that broker's replica is
  here; else the one the controller would elect as the brokers come back
  (PartitionChangeBuilder.electAnyLeader: the first of the replicas, in assignment order,
  in the ISR, or in the ELR when the ISR is empty; the last known leader when both are
  empty and ELR is enabled; the first replica here when unclean.leader.election.enable);
- without it, the replica with the latest leader epoch and, among those, the longest log
  (what a leader's epoch cache and log end say; the ISR is not on the disks);
- a partition Kafka would leave offline (no electable replica here) is read from the most
  advanced replica here, and said so.

Set apart (never read as the partition; each named): `<topic>-<n>.<id>-future` (a replica
being moved between log dirs: its current dir is read), `-delete` (a deleted topic's,
awaiting deletion), `-stray` (one Kafka found it should not host), replicas the metadata
does not assign to their broker or whose topic id is not the metadata's topic's (Kafka
marks both stray at startup, LogManager / ReplicaManager), and a second copy of one
partition in two log dirs of one broker (LogManager.loadLog refuses to start over it)."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field

from kafkacodec.internal.cluster import METADATA_DIR, ClusterState, fold_cluster
from kafkacodec.log.partition import LogDirs, Partition, read_checkpoint
from kafkacodec.runtime.errors import KafkacodecError, LogError
from kafkacodec.storage import as_path

from .epochs import EpochCache, LogEnds
from .meta import MetaProperties, read_meta_properties

__all__ = ["Disks", "LogDir", "Replica", "PartitionReplicas", "SetApart", "open_disks",
           "HIGH_WATERMARKS"]  # fmt: skip

#: Each log dir's record of its partitions' high watermarks (ReplicaManager writes it).
HIGH_WATERMARKS = "replication-offset-checkpoint"
METADATA_TOPIC = METADATA_DIR.rsplit("-", 1)[0]


@dataclass
class LogDir:
    """One log.dirs entry of one broker (or a directory of partitions with no broker
    identity: node_id None)."""

    path: str
    meta: MetaProperties | None
    log: LogDirs | None  # None: a partition directory given alone (its parent unread)
    #: "broker", or "controller" for a node none of whose log dirs here holds a partition
    #: other than the metadata log's.
    role: str = "broker"
    _hw: tuple[dict, str | None] | None = field(default=None, repr=False)

    def high_watermarks(self) -> tuple[dict[tuple[str, int], int], str | None]:
        """Its replication-offset-checkpoint (read once for all its replicas), and the
        problem reading it (None: read)."""
        if self._hw is None:
            try:
                self._hw = (read_checkpoint(as_path(self.path) / HIGH_WATERMARKS), None)
            except LogError as err:
                self._hw = ({}, str(err))
        return self._hw

    @property
    def node_id(self) -> int | None:
        return self.meta.node_id if self.meta is not None else None

    @property
    def broker(self) -> str:
        """How reports name the directory's owner."""
        return f"{self.role} {self.node_id}" if self.node_id is not None else self.path


@dataclass
class Replica:
    """One replica of a partition on these disks."""

    log_dir: LogDir
    partition: Partition
    _ends: LogEnds | None = field(default=None, repr=False)

    @property
    def node_id(self) -> int | None:
        return self.log_dir.node_id

    @property
    def broker(self) -> str:
        return self.log_dir.broker

    @property
    def path(self) -> str:
        return str(self.partition.path)

    def recorded_high_watermark(self) -> tuple[int | None, str | None]:
        """The high watermark its log dir's replication-offset-checkpoint records (None:
        none recorded), and the problem reading it (None: read)."""
        found, problem = self.log_dir.high_watermarks()
        p = self.partition
        return found.get((p.topic or "", -1 if p.partition is None else p.partition)), problem

    def ends(self) -> LogEnds:
        """Its log start and end, epoch cache and high watermark as Kafka loads them
        (LogLoader: the cache cut at the log end and start; Partition.createLog: the
        checkpointed high watermark, 0 when none, kept within [log start, log end] by
        UnifiedLog.updateHighWatermark)."""
        if self._ends is None:
            p = self.partition
            start, end = p.kafka_log_start_offset(), p.log_end_offset
            cache = EpochCache(p.leader_epochs)
            cache.truncate_from_end(end)
            cache.truncate_from_start(start)
            recorded, _problem = self.recorded_high_watermark()
            hw = min(max(recorded or 0, start), end)
            self._ends = LogEnds(start, end, cache, hw)
        return self._ends


@dataclass
class SetApart:
    """A directory not read as its partition, and why."""

    path: str
    broker: str
    kind: str  # future / delete / stray / unassigned / other-topic-id / duplicate
    why: str
    #: The partition it is a copy of (None: a directory not named as one).
    partition: tuple[str, int] | None = None

    def to_dict(self) -> dict:
        return {"path": self.path, "broker": self.broker, "kind": self.kind, "why": self.why,
                "partition": None if self.partition is None else f"{self.partition[0]}-{self.partition[1]}"}  # fmt: skip


@dataclass
class PartitionReplicas:
    """A partition's replicas on these disks and the one served."""

    topic: str
    partition: int
    replicas: list[Replica]
    #: The metadata's registration (leader, leader_epoch, replicas, isr, elr...), None
    #: when there is no metadata or it does not hold the partition.
    registration: dict | None = None
    topic_id: str | None = None
    served: Replica | None = None
    #: Why that replica, in a sentence naming Kafka's rule.
    why: str = ""
    #: Kafka would leave the partition offline on these disks (no electable replica).
    offline: bool = False
    #: The leader epoch the served replica will lead in after the restart.
    leader_epoch: int | None = None

    @property
    def name(self) -> str:
        return f"{self.topic}-{self.partition}"

    def missing(self, present: set[int]) -> list[int]:
        """The brokers the metadata assigns a replica to whose disks are not among these."""
        reg = self.registration
        return [b for b in reg["replicas"] if b not in present] if reg else []


class Disks:
    """The log.dirs of one or more brokers (of one cluster) as one input."""

    def __init__(self, log_dirs: list[LogDir], alone: list[tuple[LogDir, Partition]], *,
                 metadata: bool | None = None) -> None:  # fmt: skip
        """metadata: read the cluster's metadata (True), not (False), or only when some
        partition has several replicas here (None: one broker's disks are read as they are,
        with no metadata log to fold)."""
        self.log_dirs = log_dirs
        self.set_apart: list[SetApart] = []
        self.problems: list[str] = []
        ids = {d.meta.cluster_id for d in log_dirs if d.meta is not None and d.meta.cluster_id}
        if len(ids) > 1:
            by: dict[str, str] = {}
            for d in log_dirs:
                if d.meta is not None and d.meta.cluster_id:
                    by.setdefault(d.meta.cluster_id, d.path)
            raise KafkacodecError("log.dirs of different clusters given together: "
                                  + "; ".join(f"{p} (cluster.id {c})" for c, p in sorted(by.items()))
                                  + ": give one cluster's at a time")  # fmt: skip
        self.cluster_id = ids.pop() if ids else None
        self._check_given_once()
        self.metadata: ClusterState | None = None
        self.metadata_from: Replica | None = None
        self._by_name: dict[str, tuple[str, dict]] = {}
        found: dict[tuple[str, int], list[Replica]] = {}
        metadata_copies: list[Replica] = []
        self._filed: set[str] = set()
        for d in log_dirs:
            parts = d.log.partitions if d.log is not None else []
            for p in parts:
                self._file(d, p, found, metadata_copies)
        for d, p in alone:
            self._file(d, p, found, metadata_copies)
        serving = {r.node_id for rs in found.values() for r in rs}
        for d in [*log_dirs, *(d for d, _p in alone)]:
            if d.node_id is not None and d.node_id not in serving:
                d.role = "controller"
        self.brokers = sorted(n for n in serving if n is not None)
        self.controllers = sorted({d.node_id for d in log_dirs if d.role == "controller" and d.node_id is not None})
        self.partitions: dict[tuple[str, int], PartitionReplicas] = {}
        if metadata_copies:
            best = max(metadata_copies, key=_advance)
            if metadata or (metadata is None and any(len(v) > 1 for v in found.values())):
                self._read_metadata(best)
            self.partitions[(METADATA_TOPIC, 0)] = PartitionReplicas(
                METADATA_TOPIC, 0, metadata_copies, served=best,
                why="the most advanced copy of the metadata log: the largest end offset of its log "
                    "or latest snapshot" if len(metadata_copies) > 1 else "its only copy here")  # fmt: skip
        for key in sorted(found):
            pr = self._choose(key, found[key])
            if pr.replicas:
                self.partitions[key] = pr
        self.partitions = dict(sorted(self.partitions.items()))

    # -- which directory is which

    def _check_given_once(self) -> None:
        seen: dict[tuple, str] = {}
        for d in self.log_dirs:
            if d.meta is None or d.meta.directory_id is None:
                continue
            key = (d.node_id, d.meta.directory_id)
            if key in seen and seen[key] != d.path:
                raise KafkacodecError(f"{seen[key]} and {d.path} are one log dir (broker "
                                      f"{d.node_id}, directory.id {d.meta.directory_id}): give it once")  # fmt: skip
            seen[key] = d.path

    def _file(self, d: LogDir, p: Partition, found: dict, metadata_copies: list) -> None:
        where = str(p.path)
        if where in self._filed:  # (a log.dirs and one of its partitions both given)
            return
        self._filed.add(where)
        if p.topic is None or p.partition is None:
            found.setdefault((str(p.path), -1), []).append(Replica(d, p))
            return
        if p.state is not None:
            what = {"future": "a replica being moved to this log dir (its current dir is read)",
                    "delete": "a deleted partition awaiting deletion",
                    "stray": "a replica Kafka found this broker should not host"}[p.state]  # fmt: skip
            self.set_apart.append(SetApart(str(p.path), d.broker, p.state, what, (p.topic, p.partition)))
            return
        if p.topic == METADATA_TOPIC:
            metadata_copies.append(Replica(d, p))
            return
        found.setdefault((p.topic, p.partition), []).append(Replica(d, p))

    def _read_metadata(self, best: Replica) -> None:
        """The most advanced copy of __cluster_metadata (the largest end offset of its log
        or of its latest snapshot), folded."""
        try:
            self.metadata = fold_cluster(best.partition.path)
            self.metadata_from = best
        except KafkacodecError as err:
            self.problems.append(f"{best.path}: the cluster's metadata cannot be read ({err}); "
                                 "replicas are chosen from their own files")  # fmt: skip
        if self.metadata is not None:
            for tid, t in self.metadata.topics.items():
                if t["name"] is not None:
                    self._by_name[t["name"]] = (tid, t)

    def _registration(self, topic: str, pid: int) -> tuple[str | None, dict | None]:
        """The metadata's topic id of a topic and its registration of the partition (None,
        None: no metadata read, or no such topic)."""
        named = self._by_name.get(topic) if self.metadata is not None else None
        return (named[0], named[1]["partitions"].get(pid)) if named else (None, None)

    def _config(self, topic: str, key: str) -> str | None:
        state = self.metadata
        if state is None:
            return None
        own = state.configs.get(("TOPIC", topic), {}).get(key)
        return own if own is not None else state.configs.get(("BROKER", ""), {}).get(key)

    # -- which replica serves

    def _choose(self, key: tuple[str, int], replicas: list[Replica]) -> PartitionReplicas:
        topic, pid = key
        pr = PartitionReplicas(topic, pid, [])
        # a broker with the partition in two of its log dirs: Kafka refuses to load it
        by_broker: dict[int | None, list[Replica]] = {}
        for r in replicas:
            by_broker.setdefault(r.node_id if r.node_id is not None else id(r.log_dir), []).append(r)
        kept = []
        for copies in by_broker.values():
            if len(copies) > 1 and copies[0].node_id is not None:
                keep = self._duplicate(pr, copies)
                kept.append(keep)
            else:
                kept.extend(copies)
        pr.topic_id, registration = self._registration(topic, pid)
        if self.metadata_from is not None and pid >= 0 and pr.topic_id is None:
            # KRaft brokers delete such a replica at startup (ReplicaManager: a log whose
            # topic the metadata image does not hold is stray)
            for r in kept:
                self.set_apart.append(SetApart(r.path, r.broker, "stray",
                                               f"the cluster's metadata ({self.metadata_from.path}) holds no "
                                               f"topic {topic}: deleted while this broker was away (Kafka "
                                               "deletes the replica at startup)", key))  # fmt: skip
            return pr
        pr.registration = registration
        live = []
        for r in kept:
            tid = r.partition.topic_id
            if registration is not None and tid is not None and tid != pr.topic_id:
                self.set_apart.append(SetApart(r.path, r.broker, "other-topic-id",
                                               f"topic id {tid}, not the metadata's {pr.topic_id}: a "
                                               "deleted topic's replica (Kafka marks it stray)", key))  # fmt: skip
            elif registration is not None and r.node_id is not None and r.node_id not in registration["replicas"]:
                self.set_apart.append(SetApart(r.path, r.broker, "unassigned",
                                               f"the metadata assigns {topic}-{pid} to brokers "
                                               f"{registration['replicas']} (Kafka marks it stray)", key))  # fmt: skip
            else:
                live.append(r)
        pr.replicas = sorted(live, key=lambda r: (r.node_id is None, r.node_id or 0, r.path))
        if pr.replicas:
            self._serve(pr)
        return pr

    def _duplicate(self, pr: PartitionReplicas, copies: list[Replica]) -> Replica:
        """One broker with the partition in two log dirs (LogManager.loadLog throws
        "Duplicate log directories"): the one the metadata's directory assignment names,
        else the longest; the others set apart."""
        _tid, reg = self._registration(pr.topic, pr.partition)
        keep = None
        if reg and reg.get("directories") and copies[0].node_id in reg["replicas"]:
            want = reg["directories"][reg["replicas"].index(copies[0].node_id)]
            keep = next((c for c in copies if c.log_dir.meta and c.log_dir.meta.directory_id == want), None)
        if keep is None:
            keep = self._most_advanced(copies)
        for c in copies:
            if c is not keep:
                self.set_apart.append(SetApart(c.path, c.broker, "duplicate",
                                               f"{c.broker} holds {pr.name} in two log dirs (Kafka refuses "
                                               f"to start over it: LogManager 'Duplicate log directories'); "
                                               f"{keep.path} is read", (pr.topic, pr.partition)))  # fmt: skip
        return keep

    def _serve(self, pr: PartitionReplicas) -> None:
        here = {r.node_id: r for r in pr.replicas if r.node_id is not None}
        reg = pr.registration
        if reg is not None:
            leader = reg["leader"]
            if leader >= 0 and leader in here:
                pr.served, pr.leader_epoch = here[leader], reg["leader_epoch"]
                pr.why = f"the leader the metadata names, in epoch {reg['leader_epoch']}"
                return
            chosen, why = self._elect(pr, reg, here)
            if chosen is not None:
                pr.served, pr.leader_epoch = chosen, reg["leader_epoch"] + 1
                gone = ("its leader, broker " + str(leader) + ", has no replica here"
                        if leader >= 0 else "the metadata names no leader")  # fmt: skip
                pr.why = f"{gone}; {why}"
                return
            pr.offline = True
            best = self._most_advanced(pr.replicas)
            pr.served, pr.leader_epoch = best, None
            pr.why = (f"{why}: Kafka would leave it offline; read from the most advanced "
                      "replica here (latest leader epoch, then longest log)")  # fmt: skip
            return
        best = self._most_advanced(pr.replicas)
        pr.served = best
        latest = best.ends().epochs.latest_epoch
        pr.leader_epoch = None if latest is None else latest + 1
        pr.why = ("no metadata names its leader: the replica with the latest leader epoch "
                  "and, among those, the longest log" if len(pr.replicas) > 1 else "its only replica here")  # fmt: skip

    def _elect(self, pr: PartitionReplicas, reg: dict, here: dict) -> tuple[Replica | None, str]:
        """PartitionChangeBuilder.electAnyLeader, the brokers whose disks are here taken
        as the live ones."""
        isr, elr = reg["isr"], reg.get("elr") or []
        for b in reg["replicas"]:
            if b in here and (b in isr or (not isr and b in elr)):
                return here[b], (f"Kafka elects broker {b}, the first replica in its "
                                 f"{'ISR' if b in isr else 'ELR (the ISR is empty)'}")  # fmt: skip
        last = reg.get("last_known_elr") or []
        if self.metadata is not None and self.metadata.features.get("eligible.leader.replicas.version", 0) >= 1 \
                and not isr and not elr and len(last) == 1:  # fmt: skip
            if last[0] in here:
                return here[last[0]], f"Kafka elects its last known leader, broker {last[0]}"
            return None, f"Kafka would elect its last known leader, broker {last[0]}, whose disks are not here"
        unclean = (self._config(pr.topic, "unclean.leader.election.enable") or "false").lower() == "true"
        if unclean:
            for b in reg["replicas"]:
                if b in here:
                    return here[b], (f"no replica of its ISR is here; unclean.leader.election.enable: "
                                     f"Kafka elects broker {b}, the first replica here")  # fmt: skip
        return None, f"no replica of its ISR ({isr}) is here"

    def _most_advanced(self, replicas: list[Replica]) -> Replica:
        """The replica with the latest leader epoch, then the longest log (then the smallest
        node id); one whose end cannot be read (damage) ranks last, and is said."""
        def rank(r: Replica) -> tuple:
            try:
                e = r.ends()
            except KafkacodecError as err:
                self.problems.append(f"{r.path}: its log end cannot be read ({err}): ranked last "
                                     "among the replicas")  # fmt: skip
                return (-2, -1, -(r.node_id or 0))
            latest = e.epochs.latest_epoch
            return (-1 if latest is None else latest, e.log_end, -(r.node_id or 0))

        return max(replicas, key=rank)

    # -- for readers

    def served(self) -> list[Partition]:
        """One Partition per partition: the replica served, in (topic, partition) order."""
        return [pr.served.partition for pr in self.partitions.values() if pr.served is not None]


def _advance(r: Replica) -> tuple[int, int]:
    """How far a copy of the metadata log goes: the end offset of its log or of its latest
    snapshot (<end offset>-<epoch>.checkpoint); ties to the smallest node id."""
    snaps = [int(c.name.partition("-")[0]) for c in r.partition.path.iterdir()
             if c.name.endswith(".checkpoint") and c.name.partition("-")[0].isdigit()]  # fmt: skip
    return max([r.partition.log_end_offset, *snaps]), -(r.node_id or 0)


def _meta_of(path, problems: list[str]) -> MetaProperties | None:
    """A log dir's meta.properties; None when it has none, or one Kafka would refuse (then
    problems says why, and the directory is read as no broker's)."""
    try:
        return read_meta_properties(path)
    except LogError as err:
        problems.append(f"{err}: read as a directory of no known broker")
        return None


def open_disks(logs: Sequence[Partition | LogDirs], *, metadata: bool | None = None) -> Disks:
    """The disks of a cluster from what open_log opened: log.dirs (each with its
    meta.properties) and partition directories given alone (their log dir's
    meta.properties names their broker). KafkacodecError for log.dirs of two clusters, or
    one log dir given twice. metadata: Disks'."""
    dirs: list[LogDir] = []
    alone: list[tuple[LogDir, Partition]] = []
    problems: list[str] = []
    parents: dict[str, LogDir] = {}
    for log in logs:
        if isinstance(log, LogDirs):
            dirs.append(LogDir(str(log.path), _meta_of(log.path, problems), log))
        else:  # one LogDir per parent: its meta.properties and checkpoints read once
            parent = log.path.parent
            if str(parent) not in parents:
                parents[str(parent)] = LogDir(str(parent), _meta_of(parent, problems), None)
            alone.append((parents[str(parent)], log))
    disks = Disks(dirs, alone, metadata=metadata)
    disks.problems[:0] = problems
    return disks

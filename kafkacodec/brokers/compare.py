"""A partition's replicas compared as Kafka would reconcile them after a restart on these
disks: the served replica leads; each other replica rejoins it (epochs.rejoin) and is then
in sync, lagging (by offsets and bytes of the leader's log) or diverged (the offset Kafka
will truncate it to, and the records that cut drops: what an unclean leader election
lost). What a consumer sees right after the restart: the served replica's log from its log
start to its high watermark; the rest once the ISR's followers have fetched it."""

from __future__ import annotations

from dataclasses import dataclass, field

from kafkacodec.log.partition import Partition
from kafkacodec.runtime.errors import KafkacodecError

from .disks import METADATA_TOPIC, Disks, PartitionReplicas, Replica
from .epochs import LogEnds, rejoin

__all__ = ["ReplicaReport", "PartitionReport", "compare", "compare_all"]


@dataclass
class ReplicaReport:
    broker: str
    node_id: int | None
    path: str
    log_start: int
    log_end: int
    #: The replication-offset-checkpoint's value (None: none recorded) and the high
    #: watermark Kafka loads from it (within [log start, log end]).
    recorded_high_watermark: int | None
    high_watermark: int
    latest_epoch: int | None
    in_isr: bool | None
    #: serves / in sync / lagging / diverged / restarts (ends before the leader's start) /
    #: unreadable / not compared (the served replica cannot be read)
    status: str
    lag_offsets: int = 0
    lag_bytes: int = 0
    truncate_to: int | None = None
    restart_at: int | None = None
    dropped_records: int = 0
    dropped_bytes: int = 0
    dropped_offsets: tuple[int, int] | None = None
    steps: list[str] = field(default_factory=list)
    problems: list[str] = field(default_factory=list)

    def to_dict(self) -> dict:
        d = {k: v for k, v in self.__dict__.items()}
        d["dropped_offsets"] = list(self.dropped_offsets) if self.dropped_offsets else None
        return d


@dataclass
class PartitionReport:
    partition: str
    topic: str
    index: int
    topic_id: str | None
    served: str | None
    served_broker: str | None
    why: str
    offline: bool
    leader_epoch: int | None
    metadata: dict | None
    missing_brokers: list[int]
    #: What a consumer reads right after the restart: [log start, high watermark).
    visible: tuple[int, int] | None
    above_high_watermark: int
    replicas: list[ReplicaReport]

    def to_dict(self) -> dict:
        return {
            "partition": self.partition, "topic": self.topic, "index": self.index,
            "topic_id": self.topic_id, "served": self.served, "served_broker": self.served_broker,
            "why": self.why, "offline": self.offline, "leader_epoch": self.leader_epoch,
            "metadata": self.metadata, "missing_brokers": self.missing_brokers,
            "visible": list(self.visible) if self.visible else None,
            "above_high_watermark": self.above_high_watermark,
            "replicas": [r.to_dict() for r in self.replicas],
        }  # fmt: skip


def _bytes_from(p: Partition, offset: int) -> int:
    """Bytes of p's log from the batch holding offset to its end (0 at or past the end)."""
    found = p.fetch(offset)
    if found is None:
        return 0
    seg, at = found
    i = p.segments.index(seg)
    return seg.size - at.position + sum(s.size for s in p.segments[i + 1 :])


def _dropped(p: Partition, cut: int) -> tuple[int, int, tuple[int, int] | None]:
    """Records, bytes and (first, last) offsets of p's log from offset cut on: what a
    truncation to cut drops (LogSegment.truncateTo cuts at the batch holding it)."""
    records, span = 0, None
    for _seg, _batch, recs in p.read_batches(cut, verify_crc=False):
        for r in recs:
            records += 1
            span = (r.offset, r.offset) if span is None else (span[0], r.offset)
    return records, _bytes_from(p, cut), span


def _leader_view(pr: PartitionReplicas) -> LogEnds:
    """The served replica as it leads after makeLeader: its epoch cache with the new
    leader epoch assigned at its log end offset (Partition.makeLeader)."""
    assert pr.served is not None
    e = pr.served.ends()
    cache = e.epochs.copy()
    if pr.leader_epoch is not None:
        cache.assign(pr.leader_epoch, e.log_end)
    return LogEnds(e.log_start, e.log_end, cache, e.high_watermark)


def _report(r: Replica, pr: PartitionReplicas, leader: LogEnds | None) -> ReplicaReport:
    e = r.ends()
    recorded, problem = r.recorded_high_watermark()
    reg = pr.registration
    rep = ReplicaReport(
        r.broker, r.node_id, r.path, e.log_start, e.log_end, recorded, e.high_watermark,
        e.epochs.latest_epoch, (r.node_id in reg["isr"]) if reg and r.node_id is not None else None,
        "serves",
    )  # fmt: skip
    if problem:
        rep.problems.append(problem)
    rep.problems += r.partition.problems
    if r is pr.served:
        return rep
    if leader is None:
        rep.status = "not compared"
        rep.problems.append(f"the replica served ({pr.served.path if pr.served else 'none'}) cannot be read")
        return rep
    plan = rejoin(leader, e)
    rep.steps = plan.steps
    served = pr.served.partition  # type: ignore[union-attr]
    if plan.restart_at is not None:
        rep.status, rep.restart_at, rep.truncate_to = "restarts", plan.restart_at, e.log_start
        rep.dropped_records, rep.dropped_bytes, rep.dropped_offsets = _dropped(r.partition, e.log_start)
        rep.lag_offsets = leader.log_end - plan.restart_at
        rep.lag_bytes = _bytes_from(served, plan.restart_at)
        return rep
    end = plan.end if plan.end is not None else e.log_end
    if plan.truncate_to is not None:
        rep.status, rep.truncate_to = "diverged", plan.truncate_to
        rep.dropped_records, rep.dropped_bytes, rep.dropped_offsets = _dropped(r.partition, plan.truncate_to)
    else:
        rep.status = "in sync" if end == leader.log_end else "lagging"
    if not plan.settled:
        rep.problems.append(plan.steps[-1])
    rep.lag_offsets = max(0, leader.log_end - end)
    rep.lag_bytes = _bytes_from(served, end) if end < leader.log_end else 0
    return rep


def compare(pr: PartitionReplicas, present: set[int]) -> PartitionReport:
    """The report of one partition's replicas on these disks (a replica whose files
    cannot be read is reported so, and the others are not compared with it)."""
    try:
        leader = _leader_view(pr) if pr.served is not None else None
    except KafkacodecError:
        leader = None  # (the served replica's own report says why)
    reports = []
    for r in pr.replicas:
        try:
            reports.append(_report(r, pr, leader))
        except KafkacodecError as err:
            e = ReplicaReport(r.broker, r.node_id, r.path, -1, -1, None, -1, None, None, "unreadable")
            e.problems.append(str(err))
            reports.append(e)
    served = pr.served
    reg = pr.registration
    meta = None
    if reg is not None:
        meta = {k: reg.get(k) for k in ("leader", "leader_epoch", "replicas", "isr", "elr",
                                        "last_known_elr", "leader_recovery_state")}  # fmt: skip
    return PartitionReport(
        pr.name, pr.topic, pr.partition, pr.topic_id,
        served.path if served else None, served.broker if served else None, pr.why, pr.offline,
        pr.leader_epoch, meta, pr.missing(present),
        (leader.log_start, leader.high_watermark) if leader is not None else None,
        leader.log_end - leader.high_watermark if leader is not None else 0,
        reports,
    )  # fmt: skip


def compare_all(disks: Disks) -> list[PartitionReport]:
    """Every partition's report but the metadata log's (KRaft's quorum replicates it by
    its own rules, not the ISR's: Disks names the copy it reads)."""
    present = set(disks.brokers)
    return [compare(pr, present) for key, pr in disks.partitions.items() if key[0] != METADATA_TOPIC]

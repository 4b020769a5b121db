"""Consumer groups' committed offsets and lag, folded from `__consumer_offsets` on disk
with no broker, as kafka-consumer-groups --describe reports them.

The fold follows Kafka's group coordinator (OffsetMetadataManager, and GroupMetadataManager
before it): records in log order; the latest OffsetCommit record of a group, topic and
partition wins; a tombstone (null value) deletes it; a commit in a transactional batch is
pending until its producer's COMMIT marker, and an ABORT marker drops it.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from kafkacodec.log.partition import LogDirs, Partition, log_dirs_for
from kafkacodec.runtime.errors import DecodeError

from .codecs import DEFAULT, Codecs
from .dump_format import get

__all__ = [
    "Commit", "GroupOffsets", "fold_offsets", "describe", "read_commit", "OFFSETS_TOPIC",
    "OFFSET_COMMIT_TYPES",
]  # fmt: skip

OFFSETS_TOPIC = "__consumer_offsets"
#: The record types of OffsetCommitKey (0 and 1; 2 and on are group metadata and the
#: consumer and share groups' records).
OFFSET_COMMIT_TYPES = (0, 1)


@dataclass
class Commit:
    group: str
    topic: str
    partition: int
    offset: int
    leader_epoch: int | None
    metadata: str | None
    commit_timestamp: int
    expire_timestamp: int | None  # version 1 only
    log_offset: int  # where in __consumer_offsets the commit is


@dataclass
class GroupOffsets:
    """The committed offsets found, and what could not be read."""

    commits: dict[tuple[str, str, int], Commit] = field(default_factory=dict)
    records: int = 0  # records of __consumer_offsets read
    partitions: int = 0  # __consumer_offsets partitions read
    problems: list[str] = field(default_factory=list)
    pending: int = 0  # transactional commits with no COMMIT or ABORT marker yet


def read_commit(key_obj, value_obj, log_offset: int):
    """(group, topic, partition) and the Commit (None: a tombstone) of a decoded
    OffsetCommit record (Codecs.coordinator_pairs' key and value objects)."""
    ident = (get(key_obj, "group"), get(key_obj, "topic"), get(key_obj, "partition"))
    if value_obj is None:
        return ident, None
    epoch = get(value_obj, "leaderEpoch")
    return ident, Commit(
        *ident, offset=get(value_obj, "offset"),
        leader_epoch=None if epoch is None or epoch < 0 else epoch,
        metadata=get(value_obj, "metadata"), commit_timestamp=get(value_obj, "commitTimestamp"),
        expire_timestamp=get(value_obj, "expireTimestamp"), log_offset=log_offset,
    )  # fmt: skip


def fold_partition(p: Partition, out: GroupOffsets, codecs: Codecs = DEFAULT) -> None:
    """Fold one __consumer_offsets partition into out: each batch's records decoded in one
    call (Codecs.coordinator_pairs), then applied in log order."""
    pending: dict[int, list] = {}
    damage: list[str] = []
    batch: Any = None  # the batch the records in `records` belong to
    records: list = []

    def flush() -> None:
        if not records:
            return
        pairs = [(bytes(r.key), None if r.value is None else bytes(r.value)) for r in records]
        for r, got in zip(records, codecs.coordinator_pairs(OFFSETS_TOPIC, pairs)):
            if isinstance(got, DecodeError):
                out.problems.append(f"{p.path.name} offset {r.offset}: {got}")
                continue
            record_type, key_obj, _version, value_obj = got
            if record_type not in OFFSET_COMMIT_TYPES:
                continue
            found = read_commit(key_obj, value_obj, r.offset)
            if batch.is_transactional:
                pending.setdefault(batch.producer_id, []).append(found)
            else:
                _apply(out, *found)
        records.clear()

    for _seg, b, r in p.read(verify_crc=True, on_damage=damage.append):
        if b is not batch:
            flush()
            batch = b
        if r.control is not None:
            if r.control.type in (0, 1):  # ABORT, COMMIT
                staged = pending.pop(b.producer_id, [])
                if r.control.type == 1:
                    for ident, commit in staged:
                        _apply(out, ident, commit)
            continue
        out.records += 1
        if r.key is None:
            out.problems.append(f"{p.path.name} offset {r.offset}: a record with no key")
            continue
        records.append(r)
    flush()
    out.pending += sum(len(v) for v in pending.values())
    out.problems += [f"{p.path.name}: {d}" for d in damage]
    out.partitions += 1


def _apply(out: GroupOffsets, ident, commit: Commit | None) -> None:
    if commit is None:
        out.commits.pop(ident, None)
    else:
        out.commits[ident] = commit


def fold_offsets(log_dirs: list[LogDirs], codecs: Codecs = DEFAULT) -> GroupOffsets:
    out = GroupOffsets()
    for d in log_dirs:
        out.problems += d.problems
        for p in d.partitions:
            if p.topic == OFFSETS_TOPIC and p.state is None:
                fold_partition(p, out, codecs)
    return out


def log_end_offsets(log_dirs: list[LogDirs]) -> dict[tuple[str, int], int]:
    """The log end offset of every partition on these log dirs (the live copy: not one
    being deleted or a future replica)."""
    out: dict[tuple[str, int], int] = {}
    for d in log_dirs:
        for p in d.partitions:
            if p.state is None and p.topic is not None and p.partition is not None:
                out[(p.topic, p.partition)] = max(
                    out.get((p.topic, p.partition), 0), p.log_end_offset
                )
    return out


def describe(
    paths: Iterable[Path | str], codecs: Codecs = DEFAULT
) -> tuple[list[dict], GroupOffsets]:
    """One row per committed group, topic and partition (sorted as kafka-consumer-groups
    sorts them: by group, then topic, then partition), with the partition's log end offset
    and the lag when the partition is on these log dirs (None otherwise)."""
    dirs = [log_dirs_for(p, OFFSETS_TOPIC) for p in paths]
    try:
        folded = fold_offsets(dirs, codecs)
        leo = log_end_offsets(dirs)
    finally:
        for d in dirs:
            d.close()
    rows = []
    for (group, topic, partition), c in sorted(folded.commits.items()):
        end = leo.get((topic, partition))
        rows.append({
            "group": group, "topic": topic, "partition": partition, "current_offset": c.offset,
            "log_end_offset": end, "lag": None if end is None else end - c.offset,
            "leader_epoch": c.leader_epoch, "metadata": c.metadata,
            "commit_timestamp": c.commit_timestamp, "offsets_topic_offset": c.log_offset,
        })  # fmt: skip
    return rows, folded


def table(rows: list[dict]) -> list[str]:
    """kafka-consumer-groups --describe's columns, padded as it pads them (each as wide as
    its longest value or title, a space between): '-' where a value is unknown."""
    titles = ("GROUP", "TOPIC", "PARTITION", "CURRENT-OFFSET", "LOG-END-OFFSET", "LAG")
    keys = ("group", "topic", "partition", "current_offset", "log_end_offset", "lag")
    cells = [[("-" if r[k] is None else str(r[k])) for k in keys] for r in rows]
    widths = [max([len(t)] + [len(c[i]) for c in cells]) for i, t in enumerate(titles)]
    lines = [" ".join(t.ljust(w) for t, w in zip(titles, widths)).rstrip()]
    lines += [" ".join(c.ljust(w) for c, w in zip(row, widths)).rstrip() for row in cells]
    return lines

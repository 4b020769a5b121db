"""Consumer groups' committed offsets and lag, folded from `__consumer_offsets` on disk
with no broker, as kafka-consumer-groups --describe reports them.

The fold follows Kafka's group coordinator (OffsetMetadataManager, and GroupMetadataManager
before it): records in log order; the latest OffsetCommit record of a group, topic and
partition wins; a tombstone (null value) deletes it; a commit in a transactional batch is
pending until its producer's COMMIT marker, and an ABORT marker drops it.
"""

from __future__ import annotations

import struct
from collections.abc import Callable, Iterable, Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from kafkacodec.console import columns
from kafkacodec.log.partition import LogDirs, Partition, log_dirs_for

from .codecs import DEFAULT, Codecs
from .dump_format import get

__all__ = [
    "Commit", "GroupOffsets", "fold_offsets", "describe", "live_partitions", "read_commit", "OFFSETS_TOPIC",
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
    return ident, None if value_obj is None else _commit(ident, value_obj, log_offset)


def _commit(ident: tuple, value_obj, log_offset: int) -> Commit:
    epoch = get(value_obj, "leaderEpoch")
    group, topic, partition = ident
    return Commit(
        group, topic, partition, offset=get(value_obj, "offset"),
        leader_epoch=None if epoch is None or epoch < 0 else epoch,
        metadata=get(value_obj, "metadata"), commit_timestamp=get(value_obj, "commitTimestamp"),
        expire_timestamp=get(value_obj, "expireTimestamp"), log_offset=log_offset,
    )  # fmt: skip


#: The newest OffsetCommit record of each (group, topic, partition), nested by each:
#: latest[group][topic][partition] = its record type (int16), its offset in
#: __consumer_offsets (int64) and its value's bytes, as one bytes object (_native_fold.c says
#: why); in a transaction's staging, None for a tombstone.
Latest = dict[Any, Any]
_NEWEST = struct.Struct(">hq")


def _fold_latest(items: list, records: list, types: frozenset, attrs: tuple, target: Latest,
                 delete: bool) -> list[int]:  # fmt: skip
    """Fold a batch's decoded records into target (the reference of the native fold,
    kafkacodec/internal/_native_fold.c): in log order, a record replaces the one with the
    same key and a tombstone removes it (delete) or is staged as None. Returns the indices
    of the items that are errors."""
    errors = []
    for i, item in enumerate(items):
        if not isinstance(item, tuple):
            errors.append(i)
            continue
        record_type, key_obj, _version, value_obj = item
        if record_type not in types:
            continue
        level = target
        for a in attrs[:-1]:
            level = level.setdefault(getattr(key_obj, a), {})
        last = getattr(key_obj, attrs[-1])
        if value_obj is None and delete:
            level.pop(last, None)
        elif value_obj is None:
            level[last] = None
        else:
            level[last] = _NEWEST.pack(record_type, records[i].offset) + records[i].value
    return errors


def _leaves(nested: dict, depth: int, prefix: tuple = ()) -> Iterator[tuple[tuple, Any]]:
    """(key, value) of each leaf of `depth` levels of nested dicts, in insertion order."""
    for k, v in nested.items():
        if depth == 1:
            yield (*prefix, k), v
        else:
            yield from _leaves(v, depth - 1, (*prefix, k))


def _apply_staged(latest: Latest, staged: Latest, depth: int) -> None:
    """A committed transaction's staged records applied to latest, as fold_latest applies
    records: a value replaces, a tombstone (None) removes."""
    for key, entry in _leaves(staged, depth):
        level = latest
        for k in key[:-1]:
            level = level.setdefault(k, {})
        if entry is None:
            level.pop(key[-1], None)
        else:
            level[key[-1]] = entry


try:  # the optional native fold; _fold_latest is the reference
    from ._native import fold_latest
except ImportError:  # pragma: no cover - no compiler at install time
    fold_latest = _fold_latest


def _key_attrs(codecs: Codecs) -> tuple:
    """The OffsetCommitKey attributes of (group, topic, partition), from its spec."""
    structs = codecs.coordinator_structs(OFFSETS_TOPIC, "key")
    fields = {f["name"]: f["id"] for f in structs[OFFSET_COMMIT_TYPES[-1]].cls.MESSAGE["fields"]}
    return tuple(fields[name] for name in ("group", "topic", "partition"))


def fold_partition(p: Partition, out: GroupOffsets, latest: Latest, codecs: Codecs = DEFAULT) -> None:
    """Fold one __consumer_offsets partition into latest, a batch at a time: its records
    decoded in one call (Codecs.coordinator_pairs) and folded in log order (fold_latest); a
    transactional batch's records staged for their producer until its COMMIT marker applies
    them or its ABORT marker drops them."""
    pending: dict[int, Latest] = {}  # by producer id
    staged: dict[int, int] = {}  # OffsetCommit records staged, by producer id
    damage: list[str] = []
    types, attrs = frozenset(OFFSET_COMMIT_TYPES), _key_attrs(codecs)
    for _seg, b, records in p.read_batches(verify_crc=True, on_damage=damage.append):
        if b.is_control:
            for r in records:
                if r.control is not None and r.control.type in (0, 1):  # ABORT, COMMIT
                    staged.pop(b.producer_id, None)
                    done = pending.pop(b.producer_id, {})
                    if r.control.type == 1:
                        _apply_staged(latest, done, len(attrs))
            continue
        out.records += len(records)
        items = codecs.coordinator_pairs(OFFSETS_TOPIC, [(r.key, r.value) for r in records])
        if b.is_transactional:
            target = pending.setdefault(b.producer_id, {})
            commits = sum(1 for it in items if type(it) is tuple and it[0] in types)
            staged[b.producer_id] = staged.get(b.producer_id, 0) + commits
        else:
            target = latest
        for i in fold_latest(items, records, types, attrs, target, not b.is_transactional):
            r = records[i]
            why = "a record with no key" if r.key is None else str(items[i])
            out.problems.append(f"{p.path.name} offset {r.offset}: {why}")
    out.pending += sum(staged.values())
    out.problems += [f"{p.path.name}: {d}" for d in damage]
    out.partitions += 1


def live_partitions(log_dirs: list[LogDirs]) -> list[Partition]:
    """Every partition of these log dirs that is a live copy (not one being deleted, nor a
    future replica): one broker's, where each partition is there once."""
    return [p for d in log_dirs for p in d.partitions if p.state is None]


def fold_offsets(log_dirs: list[LogDirs], codecs: Codecs = DEFAULT,
                 partitions: list[Partition] | None = None) -> GroupOffsets:  # fmt: skip
    """The commits of the __consumer_offsets partitions among `partitions` (default:
    live_partitions of the log dirs; a cluster's disks give one replica of each, chosen by
    kafkacodec.brokers), with the log dirs' problems."""
    out = GroupOffsets()
    latest: Latest = {}
    for d in log_dirs:
        out.problems += d.problems
    for p in live_partitions(log_dirs) if partitions is None else partitions:
        if p.topic == OFFSETS_TOPIC and p.state is None:
            fold_partition(p, out, latest, codecs)
    for key, newest in _leaves(latest, len(_key_attrs(codecs))):  # decoded again: they were checked
        record_type, offset = _NEWEST.unpack_from(newest)
        value = codecs.coordinator_value(OFFSETS_TOPIC, record_type, newest[_NEWEST.size :])
        out.commits[key] = _commit(key, value.obj, offset)
    return out


def log_end_offsets(partitions: list[Partition]) -> dict[tuple[str, int], int]:
    """The log end offset of each partition (the largest, where one is there twice)."""
    out: dict[tuple[str, int], int] = {}
    for p in partitions:
        if p.state is None and p.topic is not None and p.partition is not None:
            out[(p.topic, p.partition)] = max(out.get((p.topic, p.partition), 0), p.log_end_offset)
    return out


def describe(
    paths: Iterable[Path | str], codecs: Codecs = DEFAULT,
    choose: Callable[[list[LogDirs]], list[Partition]] | None = None,
) -> tuple[list[dict], GroupOffsets]:  # fmt: skip
    """One row per committed group, topic and partition (sorted as kafka-consumer-groups
    sorts them: by group, then topic, then partition), with the partition's log end offset
    and the lag when the partition is on these log dirs (None otherwise). choose: the
    partitions to read of the log dirs (default live_partitions; the command line passes
    kafkacodec.brokers' choice of one replica each)."""
    dirs = [log_dirs_for(p, OFFSETS_TOPIC) for p in paths]
    try:
        parts = (choose or live_partitions)(dirs)
        folded = fold_offsets(dirs, codecs, parts)
        leo = log_end_offsets(parts)
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
    return columns(titles, [[("-" if r[k] is None else str(r[k])) for k in keys] for r in rows])

"""Kafka's small state files, dumped: producer-state snapshots (`<offset>.snapshot`, as
kafka-dump-log prints them), leader-epoch-checkpoint, partition.metadata, the broker's
offset checkpoints and KRaft's quorum-state. Each dump is a list of text lines and a JSON
object with the same content."""

from __future__ import annotations

import json
from pathlib import Path

from kafkacodec.runtime.crc import crc32c
from kafkacodec.runtime.errors import CorruptRecordError, KafkacodecError, LogError
from kafkacodec.storage import read_side_file

from .codecs import DEFAULT, Codecs
from .dump_format import NEWEST, SNAPSHOT_LINE_TRIMMED_SINCE, Release, get

__all__ = ["STATE_FILES", "dump_state_file", "producer_snapshot", "is_state_file"]

#: Broker checkpoint files: version 0, a count, then `topic partition offset` lines.
OFFSET_CHECKPOINTS = (
    "recovery-point-offset-checkpoint", "replication-offset-checkpoint",
    "log-start-offset-checkpoint", "cleaner-offset-checkpoint",
)  # fmt: skip
STATE_FILES = (*OFFSET_CHECKPOINTS, "leader-epoch-checkpoint", "partition.metadata", "quorum-state")
#: The largest state file read (they are a few kB; a producer snapshot holds 53 bytes per
#: producer, so this allows about 20 million producers).
MAX_STATE_FILE = 1 << 30


def is_state_file(path: Path) -> bool:
    return path.name in STATE_FILES or (path.suffix == ".snapshot" and path.stem.isdigit())


def _read(path: Path) -> bytes:
    """A state file's bytes (local or in an object store), capped at MAX_STATE_FILE."""
    data = read_side_file(path, MAX_STATE_FILE)
    if data is None:
        raise LogError(path, "cannot read: no such file")
    return data


def _java_optional_long(v: int) -> str:
    return f"OptionalLong[{v}]" if v >= 0 else "OptionalLong.empty"


def _decrement_sequence(seq: int, by: int) -> int:
    """Kafka's DefaultRecordBatch.decrementSequence: sequences wrap at Integer.MAX_VALUE."""
    return seq - by if seq >= by else 0x7FFFFFFF - (by - seq) + 1


def producer_snapshot(path: Path, data: bytes, codecs: Codecs = DEFAULT,
                      kafka: Release = NEWEST) -> tuple[list[str], dict]:  # fmt: skip
    """A producer-state snapshot: Kafka's ProducerStateManager.readSnapshot (version 1, a
    CRC-32C of the bytes after it, the entries), printed as that release's kafka-dump-log
    prints it (a space ends an entry without batch metadata before 4.3). Codecs without the
    spec (3.9's: its ProducerStateManager wrote the same bytes through a Schema of its own,
    ProducerSnapshot.json came with 4.0) read it with the shipped ones."""
    if codecs.message_class("ProducerSnapshot") is None:
        codecs = DEFAULT
    try:
        m = codecs.versioned("ProducerSnapshot", data)
    except KafkacodecError as err:
        raise LogError(path, f"not a producer snapshot: {err}") from None
    stored = get(m.obj, "Crc")
    computed = crc32c(data[6:])
    if stored != computed:
        raise CorruptRecordError(
            f"Snapshot is corrupt (CRC is no longer valid). Stored crc: {stored}. "
            f"Computed crc: {computed}", 2,
        ).with_source(str(path))  # fmt: skip
    lines, entries = [], []
    for e in get(m.obj, "ProducerEntries"):
        pid, epoch = get(e, "ProducerId"), get(e, "Epoch")
        last_seq, last_offset = get(e, "LastSequence"), get(e, "LastOffset")
        delta, ts = get(e, "OffsetDelta"), get(e, "Timestamp")
        coord, first = get(e, "CoordinatorEpoch"), get(e, "CurrentTxnFirstOffset")
        line = (
            f"producerId: {pid} producerEpoch: {epoch} coordinatorEpoch: {coord} "
            f"currentTxnFirstOffset: {_java_optional_long(first)} lastTimestamp: {ts} "
        )
        if last_offset < 0 and kafka >= SNAPSHOT_LINE_TRIMMED_SINCE:
            line = line.rstrip(" ")
        if last_offset >= 0:  # a batch's metadata (ProducerStateEntry.batchMetadata)
            line += (
                f"firstSequence: {_decrement_sequence(last_seq, delta)} lastSequence: {last_seq} "
                f"lastOffset: {last_offset} offsetDelta: {delta} timestamp: {ts}"
            )
        lines.append(line)
        entries.append({
            "producer_id": pid, "producer_epoch": epoch, "coordinator_epoch": coord,
            "current_txn_first_offset": first if first >= 0 else None, "last_timestamp": ts,
            "last_sequence": last_seq, "last_offset": last_offset, "offset_delta": delta,
        })  # fmt: skip
    return lines, {"file": path.name, "kind": "producer-snapshot", "version": m.version,
                   "crc": stored, "entries": entries}  # fmt: skip


def _text_lines(path: Path, data: bytes) -> list[str]:
    try:
        return data.decode("utf-8").splitlines()
    except UnicodeDecodeError as err:
        raise LogError(path, f"not text: byte {err.start} is not UTF-8") from None


def _int(path: Path, n: int, text: str) -> int:
    try:
        return int(text)
    except ValueError:
        raise LogError(path, f"line {n}: {text!r} is not a number") from None


def _checkpoint(path: Path, data: bytes, fields: int) -> tuple[int, list[list[str]]]:
    """version, then a count, then lines of `fields` words (Kafka's CheckpointFile)."""
    lines = _text_lines(path, data)
    if len(lines) < 2:
        raise LogError(path, "a checkpoint file has a version line and a count line")
    version = _int(path, 1, lines[0].strip())
    count = _int(path, 2, lines[1].strip())
    rows = [line.split() for line in lines[2:] if line.strip()]
    if count != len(rows):
        raise LogError(path, f"says {count} entries but has {len(rows)}")
    for n, row in enumerate(rows, start=3):
        if len(row) != fields:
            raise LogError(path, f"line {n}: {' '.join(row)!r} has {len(row)} fields, not {fields}")
    return version, rows


def dump_state_file(path: Path, codecs: Codecs = DEFAULT,
                    kafka: Release = NEWEST) -> tuple[list[str], dict]:  # fmt: skip
    """(text lines, JSON object) of one state file, in that release's kafka-dump-log text."""
    data = _read(path)
    name = path.name
    if path.suffix == ".snapshot":
        return producer_snapshot(path, data, codecs, kafka)
    if name in OFFSET_CHECKPOINTS:
        version, rows = _checkpoint(path, data, 3)
        entries = [{"topic": t, "partition": _int(path, 0, p), "offset": _int(path, 0, o)}
                   for t, p, o in rows]  # fmt: skip
        lines = [f"version: {version} entries: {len(entries)}"]
        lines += [
            f"topic: {e['topic']} partition: {e['partition']} offset: {e['offset']}"
            for e in entries
        ]
        return lines, {
            "file": name,
            "kind": "offset-checkpoint",
            "version": version,
            "entries": entries,
        }
    if name == "leader-epoch-checkpoint":
        version, rows = _checkpoint(path, data, 2)
        entries = [{"epoch": _int(path, 0, e), "start_offset": _int(path, 0, o)} for e, o in rows]
        lines = [f"version: {version} entries: {len(entries)}"]
        lines += [f"epoch: {e['epoch']} startOffset: {e['start_offset']}" for e in entries]
        return lines, {"file": name, "kind": "leader-epoch-checkpoint", "version": version,
                       "entries": entries}  # fmt: skip
    if name == "partition.metadata":
        fields = {}
        for n, line in enumerate(_text_lines(path, data), start=1):
            if line.strip():
                key, sep, value = line.partition(":")
                if not sep:
                    raise LogError(path, f"line {n}: {line!r} is not `key: value`")
                fields[key.strip()] = value.strip()
        if "version" not in fields or "topic_id" not in fields:
            raise LogError(path, "partition.metadata has a version and a topic_id")
        lines = [f"version: {fields['version']} topicId: {fields['topic_id']}"]
        return lines, {"file": name, "kind": "partition-metadata", **fields}
    if name == "quorum-state":
        try:
            doc = json.loads(data)
        except ValueError as err:
            raise LogError(path, f"not JSON: {err}") from None
        if not isinstance(doc, dict):
            raise LogError(path, "quorum-state is a JSON object")
        lines = [f"{k}: {json.dumps(v, ensure_ascii=False)}" for k, v in doc.items()]
        return lines, {"file": name, "kind": "quorum-state", "content": doc}
    raise LogError(path, "not a state file kafkacodec knows")

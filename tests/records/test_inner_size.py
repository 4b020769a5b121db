"""A wrapper's inner message that declares more bytes than Kafka reads: Kafka 4.4's
AbstractLegacyRecordBatch.DataLogInputStream refuses a size above Integer.MAX_VALUE - 8
(maxRecordBodySize, "Invalid record size: N exceeds the configured maximum record size")
before it reads the bytes; one at the bound, with the bytes not there, is a partial last
entry, dropped. Found by the fuzz run against Kafka 4.4.0 (peers.fuzz)."""

from __future__ import annotations

import struct
from pathlib import Path

import pytest
import yaml

import kafkacodec as kc
from kafkacodec.generated.kafka_legacy_message import KafkaLegacyMessage
from kafkacodec.records.batches import MAX_INNER_SIZE, Record
from kafkacodec.records.builders import build_message_set
from kafkacodec.runtime import compression as C
from kafkacodec.runtime.errors import KafkacodecError

SCHEMA = Path(__file__).resolve().parents[2] / "schemas" / "kafka_legacy_message.ksy"


def test_the_bound_is_the_schemas():
    ksy = yaml.safe_load(SCHEMA.read_text())
    assert ksy["types"]["inner_entry"]["instances"]["length"]["valid"]["max"] == MAX_INNER_SIZE


def wrapper_with_tail(magic: int, declared: int) -> bytes:
    """A gzip wrapper of one whole inner message and a last entry declaring `declared`
    bytes (12 bytes of it there)."""
    inner = build_message_set([Record(None, 1700000000000, b"k", b"v")], magic=magic)
    inner += struct.pack(">qi", 1, declared)
    msg = KafkaLegacyMessage(offset=1, magic=magic, attributes=C.GZIP,
                             timestamp=1700000000000 if magic else None, key=None,
                             inner_raw=C.compress(C.GZIP, inner, magic))  # fmt: skip
    return msg.build()


@pytest.mark.parametrize("magic", [0, 1])
def test_a_size_past_the_bound_is_refused(magic):
    data = wrapper_with_tail(magic, MAX_INNER_SIZE + 1)
    with pytest.raises(KafkacodecError, match="more than Kafka reads|must be at most"):
        for b in kc.iter_batches(data):
            list(b.records())
    with pytest.raises(KafkacodecError):
        KafkaLegacyMessage.parse(data)[0].read_inner()


@pytest.mark.parametrize("magic", [0, 1])
def test_a_size_at_the_bound_is_a_partial_last_entry(magic):
    data = wrapper_with_tail(magic, MAX_INNER_SIZE)
    records = [r for b in kc.iter_batches(data) for r in b.records()]
    assert [(r.key, r.value) for r in records] == [(b"k", b"v")]
    assert KafkaLegacyMessage.parse(data)[0].read_inner().entries[-1].partial is not None

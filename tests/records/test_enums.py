"""The generated enums: ints that know Kafka's names (the schemas' -orig-id). Compared with
a str, a member is equal to Kafka's name of it, and a str that names no member raises: code
written when `batch.compression` was Kafka's name ("gzip") either still works or fails
loudly, never answers False in silence."""

from __future__ import annotations

import importlib
import pkgutil

import pytest

import kafkacodec as kc
import kafkacodec.generated as generated
from kafkacodec.generated.kafka_control_record_key import ControlRecordType
from kafkacodec.generated.kafka_record_batch import CompressionType, TimestampType
from kafkacodec.runtime._prim import KafkaEnum


def _batch(codec: str):
    data = kc.build_batch([kc.Record(None, 1_700_000_000_000, b"k", b"v")], compression=codec)
    return next(iter(kc.iter_batches(data)))


@pytest.mark.parametrize("codec", ["none", "gzip", "snappy", "lz4", "zstd"])
def test_a_batchs_compression_is_equal_to_kafkas_name(codec):
    c = _batch(codec).compression
    assert c == codec and not (c != codec)
    assert c.kafka_name == codec
    others = {"none", "gzip", "snappy", "lz4", "zstd"} - {codec}
    assert all(c != other and not (c == other) for other in others)


@pytest.mark.parametrize("wrong", ["GZIP", "gz", "Gzip", "CreateTime", ""])
def test_a_str_that_names_no_member_raises(wrong):
    c = _batch("gzip").compression
    with pytest.raises(ValueError, match="not Kafka's name of a CompressionType"):
        c == wrong  # noqa: B015 - the comparison itself is under test
    with pytest.raises(ValueError):
        c != wrong  # noqa: B015


def test_a_member_is_still_its_int():
    c = _batch("lz4").compression
    assert c == 3 and c == CompressionType.LZ4 and int(c) == 3 and c != 4
    assert hash(c) == hash(3) and {3: "x"}[c] == "x" and {c: "y"}[3] == "y"
    assert sorted([CompressionType.ZSTD, CompressionType.NONE]) == [0, 4]


def test_kafkas_names_of_timestamp_and_control_types():
    assert TimestampType.LOG_APPEND_TIME == "LogAppendTime" and TimestampType.CREATE_TIME != "LogAppendTime"
    assert ControlRecordType.ABORT == "ABORT" and ControlRecordType.KRAFT_VOTERS.kafka_name == "KRAFT_VOTERS"
    with pytest.raises(ValueError):
        ControlRecordType.ABORT == "abort"  # noqa: B015 - Kafka's name is ABORT


def _enums():
    for info in pkgutil.iter_modules(generated.__path__):
        module = importlib.import_module(f"kafkacodec.generated.{info.name}")
        for value in vars(module).values():
            if isinstance(value, type) and issubclass(value, KafkaEnum) and value is not KafkaEnum:
                yield value


def test_every_generated_enum_names_every_member():
    enums = list(_enums())
    assert len(enums) >= 5
    for e in enums:
        assert set(e.KAFKA_NAMES) == {int(m) for m in e}, e
        assert len(set(e.KAFKA_NAMES.values())) == len(e), e
        for m in e:
            assert m == m.kafka_name

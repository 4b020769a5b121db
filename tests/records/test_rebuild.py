"""Batches rebuilt from their decoded fields: Kafka's own bytes come back byte for byte;
others come back valid and equivalent, with the first differing byte named; options
recompress and convert without changing an offset."""

import crc32c
import pytest
from conftest import KAFKA_JAVA, PEERS

import kafkacodec as kc
from kafkacodec.records import rebuild as R
from kafkacodec.records.rebuild import Rebuilder, first_difference, rebuild_region
from kafkacodec.runtime import compression as C
from kafkacodec.runtime.errors import DecodeError, EncodeError

KAFKA_FILES = sorted([*KAFKA_JAVA.glob("legacy/*.bin"), *KAFKA_JAVA.glob("v2/*.bin"),
                      *KAFKA_JAVA.glob("multi/*.bin"), *KAFKA_JAVA.glob("segments/*/*.log")])  # fmt: skip


def view(records):
    return [(r.offset, r.timestamp, r.key, r.value, r.headers) for r in records]


def all_records(data):
    return [r for b in kc.iter_batches(data) for r in b.records()]


@pytest.mark.parametrize("path", KAFKA_FILES, ids=lambda p: p.name)
def test_kafka_written_data_is_rebuilt_byte_for_byte(path):
    data = path.read_bytes()
    out = list(Rebuilder().rebuild(kc.iter_batches(data)))
    assert all(r.identical and r.difference is None for r in out)
    assert b"".join(r.data for r in out) == data


@pytest.mark.parametrize("native", [True, False])
def test_the_native_loop_and_the_generated_code_agree(monkeypatch, native):
    if not native:
        monkeypatch.setattr(R, "_native_reencode", None)
    data = (KAFKA_JAVA / "v2" / "v2_none_headers_nulls.bin").read_bytes()
    (b,) = kc.iter_batches(data)
    region = bytes(b.records_region_raw)
    assert rebuild_region(region, b.num_records) == region
    with pytest.raises(DecodeError, match="bytes follow the batch's"):
        rebuild_region(region + b"\x00", b.num_records)
    with pytest.raises(DecodeError):
        rebuild_region(region[:-1], b.num_records)


def test_a_long_varint_is_rebuilt_short_and_named():
    batch = kc.build_batch([(None, 1000, b"k", b"v", [])])
    (b,) = kc.iter_batches(batch)
    region = bytes(b.records_region_raw)
    # the key length 1 (zig-zag 2) written in two bytes: valid, not what Kafka writes
    at = region.index(b"\x02k")
    longer = region[:at] + b"\x82\x00k" + region[at + 2 :]
    longer = bytes([longer[0] + 2]) + longer[1:]  # the record's length grows by one
    odd = kc.build_batch([(None, 1000, b"k", b"v", [])])
    odd = bytearray(odd[: 61]) + longer
    odd[8:12] = (len(odd) - 12).to_bytes(4, "big")
    odd[17:21] = crc32c.crc32c(bytes(odd[21:])).to_bytes(4, "big")
    odd = bytes(odd)
    (ob,) = kc.iter_batches(odd)
    assert view(ob.records()) == view(b.records())
    (r,) = Rebuilder().rebuild([ob])
    assert not r.identical and r.data == batch
    assert r.difference == first_difference(odd, batch) == 11  # the batch length first


def test_first_difference():
    assert first_difference(b"abcdef", b"abcxef") == 3
    assert first_difference(b"abc", b"abcd") == 3
    assert first_difference(b"x" * 1000 + b"a", b"x" * 1000 + b"b") == 1000
    assert first_difference(b"a", b"b") == 0


def test_other_clients_batches_are_rebuilt_equivalent_and_named():
    data = (PEERS / "sarama" / "v2_gzipped_record.bin").read_bytes()
    (r,) = Rebuilder().rebuild(kc.iter_batches(data))
    assert not r.identical and r.difference is not None and r.difference < len(data)
    assert view(all_records(r.data)) == view(all_records(data))
    assert C.gzip_os_of(r.data[61:]) == C.GZIP_OS_JDK17  # sarama's header is not the JDK's


@pytest.mark.parametrize("codec", ["gzip", "lz4", "zstd"])
def test_the_level_that_reproduces_a_batch_is_found(codec):
    records = [(None, 1000 + i, b"k%d" % i, b"value %d " % i * 30, []) for i in range(200)]
    level = {"gzip": 1, "lz4": 3, "zstd": 7}[codec]
    data = kc.build_batch(records, compression=codec, compression_level=level)
    data += kc.build_batch(records, base_offset=200, compression=codec, compression_level=level)
    out = list(Rebuilder().rebuild(kc.iter_batches(data)))
    assert [(r.identical, r.level) for r in out] == [(True, level), (True, level)]


def test_the_jdk8_gzip_header_is_kept():
    records = [(None, 1000 + i, b"k", b"v" * 100, []) for i in range(50)]
    data = kc.build_batch(records, compression="gzip", gzip_os=C.GZIP_OS_JDK8)
    assert data[61 + 9] == 0
    (r,) = Rebuilder().rebuild(kc.iter_batches(data))
    assert r.identical
    (g,) = Rebuilder(compression="gzip").rebuild(kc.iter_batches(data))
    assert not g.identical and g.data[61 + 9] == 255  # a codec given: Kafka's current header


@pytest.mark.parametrize("options", [{"gzip_os": C.GZIP_OS_JDK8}, {"compression_level": 1},
                                     {"compression_level": 9, "gzip_os": C.GZIP_OS_JDK8}])  # fmt: skip
def test_levels_and_headers_without_the_native_builders(monkeypatch, options):
    """The generated builders (no native extension) honour the level and the JDK header as
    the native ones do."""
    from kafkacodec.records import builders

    records = [(None, 1000 + i, b"k", b"value %d " % i * 20, [("h", b"x")]) for i in range(50)]
    legacy = [kc.Record(None, r[1], r[2], r[3]) for r in records]
    native = (kc.build_batch(records, compression="gzip", **options),
              kc.build_message_set(legacy, compression="gzip", **options))  # fmt: skip
    for name in ("_native_batch", "_native_records", "_native_legacy"):
        monkeypatch.setattr(builders, name, None)
    assert (kc.build_batch(records, compression="gzip", **options),
            kc.build_message_set(legacy, compression="gzip", **options)) == native  # fmt: skip


def test_recompression_keeps_everything_but_the_codec():
    data = (KAFKA_JAVA / "segments" / "segment_interval4096" / "00000000000000001000.log").read_bytes()
    before = list(kc.iter_batches(data))
    out = list(Rebuilder(compression="zstd", level=5).rebuild(before))
    after = list(kc.iter_batches(b"".join(r.data for r in out)))
    assert len(after) == len(before)
    for a, b in zip(after, before):
        fields = ("base_offset", "last_offset", "max_timestamp", "producer_id", "base_sequence",
                  "is_transactional", "partition_leader_epoch", "timestamp_type")  # fmt: skip
        assert [getattr(a, f) for f in fields] == [getattr(b, f) for f in fields]
        assert view(a.records()) == view(b.records())
        # LogValidator: a control batch written uncompressed is not compressed
        want = C.NONE if b.is_control and b.compression == C.NONE else C.ZSTD
        assert a.compression == want


def legacy_cases():
    return sorted(KAFKA_JAVA.glob("legacy/*.bin"))


@pytest.mark.parametrize("path", legacy_cases(), ids=lambda p: p.name)
@pytest.mark.parametrize("codec", [None, "zstd", "none"])
def test_upgrade_to_magic_2_as_log_validator_converts(path, codec):
    data = path.read_bytes()
    before = list(kc.iter_batches(data))
    out = list(Rebuilder(magic=2, compression=codec, epoch_for=lambda o: 7).rebuild(before))
    after = list(kc.iter_batches(b"".join(r.data for r in out)))
    assert all(b.magic == 2 for b in after)
    old = [r for b in before for r in b.records()]
    new = [r for b in after for r in b.records()]
    assert [(r.offset, r.timestamp, r.key, r.value) for r in new] == [
        (r.offset, r.timestamp, r.key, r.value) for r in old]  # fmt: skip
    assert [r.timestamp_type for r in new] == [
        "LogAppendTime" if r.timestamp_type == "LogAppendTime" else "CreateTime" for r in old]  # fmt: skip
    for b in after:
        assert (b.producer_id, b.producer_epoch, b.base_sequence, b.is_transactional) == (-1, -1, -1, False)
        assert b.partition_leader_epoch == 7
    wrappers = [b for b in before if b.compression != C.NONE]
    # each wrapper is one batch; uncompressed runs are grouped
    assert len(after) <= len(before) and len(after) >= len(wrappers)
    assert sum(r.entries for r in out) == len(before)


def test_legacy_runs_are_bounded_and_split_by_kind():
    records = [(None, 1000 + i, b"k", b"v" * 100, []) for i in range(100)]
    data = kc.build_message_set(records, magic=1)
    out = list(Rebuilder(magic=2, batch_bytes=1000).rebuild(kc.iter_batches(data)))
    assert all(r.size <= 1000 for r in out) and sum(r.records for r in out) == 100
    mixed = data + kc.build_message_set(records, magic=1, base_offset=100,
                                        timestamp_type="LogAppendTime", log_append_time=5)  # fmt: skip
    out = list(Rebuilder(magic=2).rebuild(kc.iter_batches(mixed)))
    types = [b.timestamp_type for r in out for b in kc.iter_batches(r.data)]
    assert "CreateTime" in types and "LogAppendTime" in types


def test_bad_options_are_refused():
    with pytest.raises(EncodeError, match="unknown compression"):
        Rebuilder(compression="brotli")
    with pytest.raises(EncodeError, match="outside Kafka's range"):
        Rebuilder(compression="gzip", level=12)
    with pytest.raises(EncodeError, match="needs a codec"):
        Rebuilder(level=3)
    with pytest.raises(EncodeError, match="magic 2 only"):
        Rebuilder(magic=1)
    legacy = (KAFKA_JAVA / "legacy" / "v1_gzip_basic.bin").read_bytes()
    with pytest.raises(EncodeError, match="zstd needs message format v2"):
        list(Rebuilder(compression="zstd").rebuild(kc.iter_batches(legacy)))

"""Hypothesis round trips through the generated builders and the public API, and bad
input: every failure is a kafkacodec error naming a position, never a crash or a hang."""

import struct
import zlib

import pytest
from conftest import assert_roundtrip
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import kafkacodec as kc
from kafkacodec.generated.kafka07_message import Kafka07Message
from kafkacodec.generated.kafka_control_record_key import KafkaControlRecordKey
from kafkacodec.generated.kafka_end_txn_marker import KafkaEndTxnMarker
from kafkacodec.generated.kafka_offset_index import Entry as OffsetEntry
from kafkacodec.generated.kafka_offset_index import KafkaOffsetIndex
from kafkacodec.generated.kafka_record import Header, KafkaRecord
from kafkacodec.generated.kafka_time_index import Entry as TimeEntry
from kafkacodec.generated.kafka_time_index import KafkaTimeIndex
from kafkacodec.generated.kafka_txn_index import Entry as TxnEntry
from kafkacodec.generated.kafka_txn_index import KafkaTxnIndex
from kafkacodec.runtime.compression import DecompressionLimitError, codec_name, compress
from kafkacodec.runtime.crc import crc32c
from kafkacodec.runtime.varint import encode_varint, read_varint

i16 = st.integers(-(2**15), 2**15 - 1)
i32 = st.integers(-(2**31), 2**31 - 1)
i64 = st.integers(-(2**63), 2**63 - 1)
blob = st.one_of(st.none(), st.binary(max_size=40))
headers = st.lists(st.tuples(st.text(max_size=8), blob), max_size=3)
records = st.lists(st.builds(kc.Record, timestamp=st.integers(0, 2**41), key=blob, value=blob, headers=headers), max_size=8)
FAST = settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.too_slow])


@FAST
@given(st.builds(KafkaRecord, attributes=st.just(0), timestamp_delta=i64, offset_delta=i32, key=blob, value=blob,
                 headers=st.lists(st.builds(Header, key=st.text(max_size=6), value=blob), max_size=3)))
def test_record_roundtrip(rec):
    back = assert_roundtrip(KafkaRecord, rec)
    assert (back.key, back.value, back.timestamp_delta) == (rec.key, rec.value, rec.timestamp_delta)


@FAST
@given(st.builds(KafkaControlRecordKey, version=st.integers(0, 2**15 - 1), type=st.integers(-(2**15), 2**15 - 1)),
       st.builds(KafkaEndTxnMarker, version=st.integers(0, 2**15 - 1), coordinator_epoch=i32),
       st.builds(Kafka07Message, magic=st.just(1), attributes=st.integers(-128, 127), payload=st.binary(max_size=30)))
def test_small_types_roundtrip(key, marker, m07):
    assert_roundtrip(KafkaControlRecordKey, key)
    assert_roundtrip(KafkaEndTxnMarker, marker)
    assert_roundtrip(Kafka07Message, m07)


@FAST
@given(st.lists(st.builds(OffsetEntry, relative_offset=i32, position=i32), max_size=5),
       st.lists(st.builds(TimeEntry, timestamp=i64, relative_offset=i32), max_size=5),
       st.lists(st.builds(TxnEntry, version=st.just(0), producer_id=i64, first_offset=i64, last_offset=i64,
                          last_stable_offset=i64), max_size=5))
def test_index_files_roundtrip(o, t, x):
    assert len(assert_roundtrip(KafkaOffsetIndex, KafkaOffsetIndex(entries=o)).build()) == 8 * len(o)
    assert len(assert_roundtrip(KafkaTimeIndex, KafkaTimeIndex(entries=t)).build()) == 12 * len(t)
    assert len(assert_roundtrip(KafkaTxnIndex, KafkaTxnIndex(entries=x)).build()) == 34 * len(x)


def norm(rs, log_append=None):
    return [(r.offset, log_append if log_append is not None else r.timestamp, r.key, r.value,
             [(k, v) for k, v in r.headers]) for r in rs]


@FAST
@given(records, st.sampled_from(["none", "gzip", "snappy", "lz4", "zstd"]), st.integers(0, 2**40),
       st.booleans(), st.integers(-1, 2**31 - 1))
def test_v2_batch_roundtrip(recs, codec, base, log_append, seq):
    data = kc.build_batch(recs, base_offset=base, compression=codec, base_sequence=seq, producer_id=7,
                          producer_epoch=1, timestamp_type="LogAppendTime" if log_append else "CreateTime",
                          log_append_time=123 if log_append else None)
    if not recs and codec == "none":
        assert len(data) == 61
    (b,) = list(kc.iter_batches(data))
    assert codec_name(b.compression) == codec and b.size == len(data) and b.is_valid
    want = [kc.Record(base + i, r.timestamp, r.key, r.value, r.headers) for i, r in enumerate(recs)]
    assert norm(b.records()) == norm(want, 123 if log_append else None)


@FAST
@given(records.filter(lambda rs: all(not r.headers for r in rs)), st.sampled_from([0, 1]),
       st.sampled_from(["none", "gzip", "snappy", "lz4"]), st.integers(1, 2**40))
def test_legacy_roundtrip(recs, magic, codec, base):
    recs = [kc.Record(None, r.timestamp, r.key, r.value) for r in recs]
    data = kc.build_message_set(recs, magic=magic, compression=codec, base_offset=base)
    got = [r for b in kc.iter_batches(data) for r in b.records()]
    ts = (lambda r: r.timestamp) if magic else (lambda r: -1)
    assert [(r.offset, r.timestamp, r.key, r.value) for r in got] == [
        (base + i, ts(r), r.key, r.value) for i, r in enumerate(recs)
    ]
    # a wrapper's base offset from its inner messages' heads alone, as its first record's
    assert [b.base_offset for b in kc.iter_batches(data)] == [
        b.records()[0].offset for b in kc.iter_batches(data)
    ]
    assert [b.count_records() for b in kc.iter_batches(data)] == [
        len(b.records()) for b in kc.iter_batches(data)
    ]


def _gzip_wrapper(inner: bytes, offset: int = 0, magic: int = 1) -> bytes:
    z = compress(1, inner, magic)
    body = bytes([magic, 1]) + (struct.pack(">q", 7) if magic else b"") + struct.pack(">ii", -1, len(z)) + z
    w = struct.pack(">I", zlib.crc32(body)) + body
    return struct.pack(">qi", offset, len(w)) + w


INNER = kc.build_message_set([kc.Record(None, 1, None, b"v")] * 2, magic=1)  # offsets 0, 1


@pytest.mark.parametrize("tail", [b"\0" * 5, INNER[: len(INNER) // 2 - 2]])
def test_a_wrappers_inner_set_ends_at_a_partial_message_as_kafkas_does(tail):
    """Kafka reads a wrapper's inner messages until the data ends or holds no whole message
    (AbstractLegacyRecordBatch.DataLogInputStream.nextBatch returns null: the bytes left,
    fewer than 12 or fewer than a message's length, are dropped)."""
    batch = next(kc.iter_batches(_gzip_wrapper(INNER + tail, offset=100)))
    assert batch.base_offset == 99 and batch.count_records() == 2
    assert [r.offset for r in batch.records()] == [99, 100]


@pytest.mark.parametrize("inner, error, at", [
    (INNER + struct.pack(">qi", 2, 13) + b"\0" * 13, kc.CorruptRecordError, len(INNER) + 8),  # too small
    (_gzip_wrapper(INNER), kc.CorruptRecordError, 0),  # a wrapper inside a wrapper
])  # fmt: skip
def test_a_wrappers_base_offset_names_what_is_wrong_inside(inner, error, at):
    batch = next(kc.iter_batches(_gzip_wrapper(inner, offset=100)))
    with pytest.raises(error) as info:
        _ = batch.base_offset
    assert info.value.position == at and "decompressed inner messages of the wrapper" in str(info.value)
    with pytest.raises(error):  # records() refuses it too
        next(kc.iter_batches(_gzip_wrapper(inner, offset=100))).records()


def test_a_wrappers_offset_below_its_last_inner_offset_is_refused():
    batch = next(kc.iter_batches(_gzip_wrapper(INNER, offset=0)))
    assert batch.base_offset == 0  # offset 0: relative offsets taken as they are
    assert next(kc.iter_batches(_gzip_wrapper(INNER, offset=5))).base_offset == 4
    inner = kc.build_message_set([kc.Record(None, 1, None, b"v")] * 2, magic=1, base_offset=9)
    with pytest.raises(kc.CorruptRecordError, match="smaller than its last inner offset 10"):
        _ = next(kc.iter_batches(_gzip_wrapper(inner, offset=5))).base_offset


SAMPLE = kc.build_batch([kc.Record(None, 5, b"k", b"v" * 20, [("h", b"x")])] * 3, base_offset=10)


@pytest.mark.parametrize("cut", range(1, len(SAMPLE)))
def test_every_truncation_is_partial_or_error(cut):
    it = kc.iter_batches(SAMPLE[:cut])
    assert list(it) == [] and it.remaining == cut and it.position == 0


@pytest.mark.parametrize("pos", range(0, len(SAMPLE)))
def test_every_flipped_byte_is_caught(pos):
    data = bytearray(SAMPLE)
    data[pos] ^= 0xFF
    try:
        for b in kc.iter_batches(bytes(data)):
            b.records()
    except kc.DecodeError as err:
        assert err.position is not None and str(err)
    else:
        assert pos < 21 and pos not in range(16, 21)  # offset/epoch: outside the CRC


def test_bad_record_inside_batch_names_absolute_position():
    body = KafkaRecord(attributes=0, timestamp_delta=0, offset_delta=0, key=b"k", value=b"v", headers=[]).build()
    bad = bytearray(body)
    bad[6] = 0x7E  # value length 63: far past the end of the record
    batch = kc.build_batch([kc.Record(None, 1, b"k", b"v")])
    raw = batch[:61] + bytes(bad)
    raw = raw[:8] + struct.pack(">i", len(raw) - 12) + raw[12:]
    with pytest.raises(kc.TruncatedError) as err:
        next(kc.iter_batches(raw, verify_crc=False)).records()
    assert err.value.position >= 61 and "records of the batch at byte 0" in str(err.value)


def test_overlong_and_out_of_range_varints():
    with pytest.raises(kc.VarintError, match="longer than 5"):
        read_varint(b"\xff\xff\xff\xff\xff\x01", 0, 6, 5)
    with pytest.raises(kc.VarintError, match="out of range"):
        read_varint(b"\xff\xff\xff\xff\x7f", 0, 5, 5)
    with pytest.raises(kc.TruncatedError):
        read_varint(b"\xff\xff", 0, 2, 5)
    with pytest.raises(kc.EncodeError):
        encode_varint(2**31, 5)
    assert read_varint(encode_varint(-(2**63), 10), 0, 10, 10)[0] == -(2**63)


def test_negative_lengths_and_unknown_codec():
    # Kafka reads any negative key, value or header value length as null (DefaultRecord.readFrom
    # through Utils.readBytes; LegacyRecord through Utils.sizeDelimited); a header key is never
    # null ("Invalid negative header key size")
    rec = KafkaRecord(attributes=0, timestamp_delta=0, offset_delta=0, len_key=-2, key=None,
                      len_value=-64, value=None, headers=[Header(len_value=-7, key="h", value=None)])  # fmt: skip
    back = KafkaRecord.parse_all(rec.build())
    assert (back.key, back.value, back.headers[0].value) == (None, None, None)
    bad = KafkaRecord(attributes=0, timestamp_delta=0, offset_delta=0, key=None, value=b"",
                      headers=[Header(len_key=-2, key="", value=None)])  # fmt: skip
    with pytest.raises(kc.ValidationError, match="len_key"):
        KafkaRecord.parse_all(bad.build())
    legacy = kc.build_message_set([kc.Record(None, 1, b"k", b"v")], magic=1)
    minus_two = legacy[:26] + (-2).to_bytes(4, "big", signed=True) + legacy[31:]  # key "k" -> len -2
    minus_two = minus_two[:8] + (len(minus_two) - 12).to_bytes(4, "big") + minus_two[12:]
    (msg,) = kc.iter_batches(minus_two, verify_crc=False)
    assert (msg.records()[0].key, msg.records()[0].value) == (None, b"v")
    data = bytearray(kc.build_batch([kc.Record(None, 1, b"k", b"v")]))
    data[22] = 0x07  # codec 7
    with pytest.raises(kc.UnsupportedCodecError, match="codec 7"):
        next(kc.iter_batches(bytes(data), verify_crc=False)).records()


def test_decompression_bomb_is_bounded():
    payload = KafkaRecord(attributes=0, timestamp_delta=0, offset_delta=0, key=None, value=bytes(50_000_000), headers=[])
    data = kc.build_batch([kc.Record(None, 1, None, bytes(0))], compression="zstd")
    batch = next(kc.iter_batches(data))
    batch.records_region_raw = compress(4, payload.build())
    with pytest.raises(DecompressionLimitError):
        batch.records(max_inflated=1_000_000)


def test_nested_wrapper_is_refused():
    inner = kc.build_message_set([kc.Record(None, 1, b"k", b"v")], magic=1, compression="gzip")
    from kafkacodec.generated.kafka_legacy_message import KafkaLegacyMessage

    wrapper = KafkaLegacyMessage(offset=0, magic=1, attributes=1, timestamp=1, key=None,
                                 value=None, inner_raw=compress(1, inner, 1))
    (b,) = list(kc.iter_batches(wrapper.build()))
    with pytest.raises(kc.CorruptRecordError, match="one level"):
        b.records()


def test_unknown_magic():
    data = bytearray(kc.build_batch([kc.Record(None, 1, b"k", b"v")]))
    data[16] = 3
    with pytest.raises(kc.UnknownMagicError) as err:
        list(kc.iter_batches(bytes(data), source="x.log"))
    assert err.value.position == 16 and "x.log" in str(err.value)


@pytest.mark.parametrize("codec", [1, 2, 3, 4])
def test_every_codec_bounds_what_it_inflates(codec):
    """50 MB of zeros, refused past the bound by every codec (lz4 reads its output in
    steps, not with one buffer the size of the bound), and read whole under a larger one."""
    from kafkacodec.runtime.compression import decompress

    packed = compress(codec, bytes(50_000_000))
    with pytest.raises(DecompressionLimitError):
        decompress(codec, packed, 2, 1_000_000)
    assert decompress(codec, packed, 2, 60_000_000) == bytes(50_000_000)


def test_zstd_after_a_corrupt_frame_still_decompresses():
    """The zstd context a thread reuses is dropped after a failure, never left broken."""
    from kafkacodec.runtime.compression import decompress

    good = compress(4, b"kafka" * 1000)
    with pytest.raises(kc.CompressionError):
        decompress(4, good[:-3] + b"\xff\xff\xff")
    assert decompress(4, good) == b"kafka" * 1000


@pytest.mark.parametrize("size", [0, 1000, 60_000, 3_000_000])
@pytest.mark.parametrize("content_size", [False, True])
def test_zstd_reads_the_same_in_one_call_or_as_a_stream(size, content_size):
    """A frame (as Kafka writes it, without a content size, or with one) whose output fits
    the one-call buffer or passes it (zeros: a ratio far past it) reads the same, and is
    bounded by the limit either way."""
    import zstandard

    from kafkacodec.runtime.compression import decompress

    plain = bytes(size // 2) + b"kafka" * (size // 10)
    cctx = zstandard.ZstdCompressor(level=3)
    if content_size:  # written by compress(), not by a stream (Kafka's way)
        packed = cctx.compress(plain)
    else:
        co = cctx.compressobj()
        packed = co.compress(plain) + co.flush()
    assert zstandard.frame_content_size(packed) == (len(plain) if content_size or not plain else -1)
    assert decompress(4, packed, 2, len(plain)) == plain
    if plain:
        with pytest.raises(DecompressionLimitError):
            decompress(4, packed, 2, len(plain) - 1)


@pytest.mark.parametrize("cut", [1, 3, 4, 5, 8, 12, -1, -4])
def test_a_zstd_frame_cut_short_is_refused_and_so_is_its_batch(cut):
    """zstd-jni reads a lone frame cut short, before or after some of its content, as an
    error ("Truncated source": no frame ended since it last read input; Kafka's own classes
    judge the rule in tests/kafka/test_kafka_stream_ends.py). So no record is lost in
    silence: the batch that counts records refuses."""
    from kafkacodec.runtime.compression import decompress

    good = compress(4, b"kafka" * 1000)
    with pytest.raises(kc.CompressionError, match="cut short"):
        decompress(4, good[:cut])
    with pytest.raises(kc.CompressionError):
        decompress(4, good + b"\x00")  # bytes after the frame that start no frame
    assert decompress(4, good + good) == b"kafka" * 2000  # frames back to back
    batch = bytearray(kc.build_batch([kc.Record(None, 1, b"k", b"v" * 100)] * 5, compression="zstd"))
    cut_batch = batch[: len(batch) - (len(batch) - 61) // 2]
    struct.pack_into(">i", cut_batch, 8, len(cut_batch) - 12)
    struct.pack_into(">I", cut_batch, 17, crc32c(bytes(cut_batch[21:])))
    with pytest.raises(kc.DecodeError):
        next(kc.iter_batches(bytes(cut_batch))).records()

"""The columnar decoder against the object path (the reference): every vector, generated
runs of mixed batches, mutated input, and with the native loops switched off; the native
loops against the generated column decoder and the Python walk; the batch table against
the batch objects."""

from pathlib import Path

import pytest
from conftest import KAFKA_JAVA, batch_spec, build_run, mutate, record
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import kafkacodec as kc
from kafkacodec.generated.kafka_record import KafkaRecord
from kafkacodec.records import columnar
from kafkacodec.records.columnar import (
    TIMESTAMP_TYPE_CODES,
    decode_columns,
    scan_batches,
    walk_batches,
)
from kafkacodec.runtime import _prim
from kafkacodec.runtime import compression as C
from kafkacodec.runtime.compression import codec_name

native = pytest.mark.skipif(columnar._native_columns is None, reason="no C extension")


@pytest.fixture
def no_native(monkeypatch):
    """The generated column decoder and the Python walk alone."""
    monkeypatch.setattr(columnar, "_native_columns", None)
    monkeypatch.setattr(columnar, "NATIVE", False)


def reference(data, verify_crc, seen=None):
    """Rows from Record objects, or the error the object path raises (seen, when given, is
    told the rows before it)."""
    rows = [] if seen is None else seen
    try:
        for b in kc.iter_batches(data, verify_crc=verify_crc):
            for r in b.records():
                rows.append({
                    "offset": r.offset, "timestamp": r.timestamp,
                    "timestamp_type": TIMESTAMP_TYPE_CODES[b.timestamp_type],
                    "key": None if r.key is None else bytes(r.key),
                    "value": None if r.value is None else bytes(r.value),
                    "headers": [{"key": k.encode("utf-8", "surrogateescape").decode("utf-8", "replace"),
                                 "value": None if v is None else bytes(v)} for k, v in r.headers],
                    "base_offset": b.base_offset, "magic": b.magic, "compression": codec_name(b.compression),
                    "producer_id": b.producer_id, "producer_epoch": b.producer_epoch,
                    "base_sequence": b.base_sequence, "is_transactional": b.is_transactional,
                    "is_control": b.is_control, "partition_leader_epoch": b.partition_leader_epoch,
                    "position": b.position,
                })  # fmt: skip
    except kc.KafkacodecError as err:
        return type(err), str(err)
    return rows


def columns(data, verify_crc):
    try:
        return decode_columns(data, verify_crc=verify_crc).to_pylist()
    except kc.KafkacodecError as err:
        return type(err), str(err)


def _int64(v) -> bool:
    return -(1 << 63) <= v < 1 << 63


def agree(data, verify_crc=True):
    seen: list = []
    want = reference(data, verify_crc, seen)
    got = columns(data, verify_crc)
    if not all(_int64(r["offset"]) and _int64(r["timestamp"]) for r in seen):
        # a record past int64 before any error: its object gives the exact sum, the columns
        # refuse it (docs/corpus.md, "Kafka as the judge")
        assert got[0] is kc.CorruptRecordError and "does not fit in 64 bits" in got[1], got
        return want
    assert got == want
    return want


VECTORS = sorted(KAFKA_JAVA.rglob("*.bin"))


@pytest.mark.parametrize("path", VECTORS, ids=[p.name for p in VECTORS])
@pytest.mark.parametrize("verify_crc", [True, False])
def test_every_vector_agrees(path: Path, verify_crc):
    agree(path.read_bytes(), verify_crc)


def test_vectors_agree_without_the_native_loops(no_native):
    for path in VECTORS:
        agree(path.read_bytes(), False)
        agree(path.read_bytes(), True)


def test_segment_in_chunks_agrees(monkeypatch):
    data = (
        KAFKA_JAVA / "segments" / "segment_interval4096" / "00000000000000001000.log"
    ).read_bytes()
    monkeypatch.setattr(columnar, "_RUN_BYTES", 5000)  # many native calls, many pieces
    table = decode_columns(data)
    assert table.num_rows == 603 and len(table.to_batches()) > 5
    assert table.to_pylist() == reference(data, True)


@settings(max_examples=150, suppress_health_check=[HealthCheck.too_slow])
@given(st.lists(batch_spec, min_size=1, max_size=8))
def test_generated_runs_agree(specs):
    rows = agree(build_run(specs))
    assert isinstance(rows, list) and len(rows) == sum(
        1 if s[0] == "control" else len(s[2]) for s in specs
    )


@settings(max_examples=300, suppress_health_check=[HealthCheck.too_slow])
@given(st.lists(batch_spec, min_size=1, max_size=4), st.data())
def test_mutated_runs_agree(specs, data):
    agree(mutate(build_run(specs), data), verify_crc=data.draw(st.booleans()))


@settings(
    max_examples=60,
    suppress_health_check=[HealthCheck.too_slow, HealthCheck.function_scoped_fixture],
)
@given(st.lists(batch_spec, min_size=1, max_size=4), st.data())
def test_mutated_runs_agree_without_the_native_loops(no_native, specs, data):
    agree(mutate(build_run(specs), data), verify_crc=data.draw(st.booleans()))


# ------------------------------------------------------------- native vs generated


def python_columns(regions):
    """The generated decoder's buffers, or None where it raises (the native loop's None)."""
    cols = KafkaRecord.new_columns()
    try:
        for region, count in regions:
            if KafkaRecord.parse_columns(region, 0, len(region), count, cols) != len(region):
                return None
    except kc.DecodeError:
        return None
    return [bytes(b) for b in _prim.column_buffers(KafkaRecord.COLUMNS, cols)]


def layout(spec, prefix=""):
    """The schema's column layout in the words of _native.COLUMNS_LAYOUT."""
    out = []
    for name, kind, other, nullable in spec:
        word = f"{prefix}{name}:{kind}"
        if kind == "int":
            word += f":{other}"
        elif nullable:
            word += ":null"
        out.append(word)
        if kind == "list":
            out += layout(columnar._element_class(other).COLUMNS, f"{prefix}{name}.")
    return out


@native
def test_native_layout_is_the_schemas():
    from kafkacodec.records import _native

    assert _native.COLUMNS_LAYOUT.split() == layout(KafkaRecord.COLUMNS)
    fields = [(name, columnar.ENTRY.fields[name][0].str[1:], columnar.ENTRY.fields[name][1])
              for name in columnar.ENTRY.names]  # fmt: skip
    assert list(_native.BATCH_FIELDS) == fields
    assert _native.BATCH_ENTRY_SIZE == columnar.ENTRY.itemsize


def regions_of(data):
    out = []
    for b in kc.iter_batches(data, verify_crc=False):
        if b.magic == 2 and not b.is_control:
            out.append(
                (
                    C.decompress(b.attributes & 7, b.records_region_raw, 2),
                    b.num_records,
                )
            )
    return out


@native
@settings(max_examples=200, suppress_health_check=[HealthCheck.too_slow])
@given(st.lists(st.tuples(st.just("v2"), st.sampled_from(["none", "lz4"]),
                          st.lists(record, max_size=6), st.booleans()), min_size=1, max_size=4),
       st.data())  # fmt: skip
def test_native_columns_equal_the_generated_decoder(specs, data):
    regions = regions_of(build_run(specs))
    if data.draw(st.booleans()):  # damage one region, or its count
        k = data.draw(st.integers(0, len(regions) - 1))
        region, count = regions[k]
        if data.draw(st.booleans()) and region:
            region = mutate(bytes(region), data)
        else:
            count = max(0, count + data.draw(st.sampled_from([-1, 1, 1000])))
        regions[k] = (region, count)
    got = columnar._native_columns(regions)
    assert (None if got is None else list(got)) == python_columns(regions)


@native
@pytest.mark.parametrize("heavy", ["key", "value", "header key", "header value", "headers"])
def test_native_columns_grow_past_their_first_guess(heavy):
    """Each column starts from a guess (a share of the input) and grows: records where one
    column holds nearly all the bytes."""
    big = b"x" * 5000
    rec = {
        "key": kc.Record(None, 1, big, b"v"),
        "value": kc.Record(None, 1, b"k", big),
        "header key": kc.Record(None, 1, b"k", b"v", [("h" * 5000, b"")]),
        "header value": kc.Record(None, 1, b"k", b"v", [("h", big)]),
        "headers": kc.Record(None, 1, None, None, [("", None)] * 3000),
    }[heavy]
    regions = regions_of(kc.build_batch([rec] * 20) + kc.build_batch([rec], base_offset=20))
    got = columnar._native_columns(regions)
    assert got is not None and list(got) == python_columns(regions)


def walk_summary(w):
    return (w.entries.tolist(), w.position,
            None if w.error is None else (type(w.error), str(w.error)))  # fmt: skip


def walks_agree(data, verify_crc, monkeypatch):
    fast = walk_batches(data, verify_crc=verify_crc)
    with monkeypatch.context() as m:
        m.setattr(columnar, "NATIVE", False)
        slow = walk_batches(data, verify_crc=verify_crc)
    assert walk_summary(fast) == walk_summary(slow)
    return fast


@native
@pytest.mark.parametrize("path", VECTORS, ids=[p.name for p in VECTORS])
def test_native_walk_equals_the_python_walk_on_vectors(path, monkeypatch):
    data = path.read_bytes()
    for verify_crc in (True, False):
        walks_agree(data, verify_crc, monkeypatch)
        walks_agree(data[:-1], verify_crc, monkeypatch)  # a partial entry at the end


@native
@settings(
    max_examples=200,
    suppress_health_check=[HealthCheck.too_slow, HealthCheck.function_scoped_fixture],
)
@given(st.lists(batch_spec, min_size=1, max_size=5), st.data())
def test_native_walk_equals_the_python_walk_on_mutated_runs(monkeypatch, specs, data):
    walks_agree(mutate(build_run(specs), data), data.draw(st.booleans()), monkeypatch)


# ---------------------------------------------------------------------- batch table


def batch_rows(data, verify_crc=True):
    """BATCH_SCHEMA rows from the batch objects, or the error iter_batches raises."""
    rows = []
    try:
        for b in kc.iter_batches(data, verify_crc=verify_crc):
            wrapper = b.magic < 2 and b.attributes & 7 != 0
            rows.append({
                "position": b.position, "size": b.size, "magic": b.magic,
                "base_offset": None if wrapper else b.base_offset, "last_offset": b.last_offset,
                "num_records": None if wrapper else (b.count if b.magic >= 2 else 1),
                "partition_leader_epoch": b.partition_leader_epoch, "crc": b.crc,
                "attributes": b.attributes, "compression": codec_name(b.compression),
                "timestamp_type": TIMESTAMP_TYPE_CODES[b.timestamp_type],
                "base_timestamp": b.base_timestamp if b.magic >= 2 else b.max_timestamp,
                "max_timestamp": b.max_timestamp, "producer_id": b.producer_id,
                "producer_epoch": b.producer_epoch, "base_sequence": b.base_sequence,
                "is_transactional": b.is_transactional, "is_control": b.is_control,
            })  # fmt: skip
    except kc.KafkacodecError as err:
        return type(err), str(err)
    return rows


def scanned(data, verify_crc=True):
    try:
        return scan_batches(data, verify_crc=verify_crc).to_pylist()
    except kc.KafkacodecError as err:
        return type(err), str(err)


@pytest.mark.parametrize("path", VECTORS, ids=[p.name for p in VECTORS])
def test_batch_table_equals_the_batch_objects(path):
    data = path.read_bytes()
    assert scanned(data) == batch_rows(data)
    assert scanned(data, False) == batch_rows(data, False)


@settings(max_examples=200, suppress_health_check=[HealthCheck.too_slow])
@given(st.lists(batch_spec, min_size=1, max_size=5), st.data())
def test_batch_table_equals_the_batch_objects_on_mutated_runs(specs, data):
    raw = build_run(specs)
    assert scanned(raw) == batch_rows(raw)
    raw = mutate(raw, data)
    verify_crc = data.draw(st.booleans())
    assert scanned(raw, verify_crc) == batch_rows(raw, verify_crc)


def test_walk_stops_before_a_partial_entry():
    data = build_run([("v2", "none", [kc.Record(None, 1, b"k", b"v")], True)] * 3)
    w = walk_batches(data[:-5])
    assert (len(w.entries), w.error) == (2, None)
    assert w.remaining == len(data) // 3 - 5 and w.position == 2 * len(data) // 3


def test_an_offset_past_int64_is_a_located_error():
    recs = [kc.Record(None, 1, b"k", b"v") for _ in range(3)]
    data = kc.build_batch(recs, base_offset=2**63 - 2)
    assert [r.offset for r in next(kc.iter_batches(data)).records()][-1] == 2**63  # Python ints
    with pytest.raises(kc.CorruptRecordError, match="does not fit in 64 bits") as err:
        decode_columns(data)
    assert err.value.position == 0


def test_the_compression_bits_are_the_same_for_every_magic():
    """bit_field reads the codec of entries of every magic through the v2 schema's bits."""
    from kafkacodec.generated.kafka_legacy_message import KafkaLegacyMessage
    from kafkacodec.generated.kafka_record_batch import KafkaRecordBatch

    assert KafkaRecordBatch.BITS["compression"] == KafkaLegacyMessage.BITS["compression"]
    assert KafkaRecordBatch.BITS["compression"] == ("attributes", 0x07, 0)  # Kafka's COMPRESSION_CODEC_MASK


legacy_record = st.builds(kc.Record, timestamp=st.integers(-1, 2**40),
                          key=st.one_of(st.none(), st.binary(max_size=20)),
                          value=st.one_of(st.none(), st.binary(max_size=20)))  # fmt: skip


@settings(max_examples=300, suppress_health_check=[HealthCheck.too_slow])
@given(st.lists(st.tuples(st.lists(legacy_record, max_size=4), st.sampled_from([0, 1]),
                          st.sampled_from([0, 3, 2**40, 2**63 - 1]), st.booleans(), st.booleans(),
                          st.sampled_from([1, 2, 3])), min_size=1, max_size=4),
       st.data())  # fmt: skip
def test_runs_of_legacy_wrappers_agree(wrappers, data):
    """Wrappers read in columns as the object path reads them: relative magic 1 offsets, a
    zero wrapper offset, one below its last inner offset, LogAppendTime, empty and damaged
    inner message sets (behind valid CRCs), magic 0 messages inside magic 1 wrappers."""
    from kafkacodec.generated.kafka_legacy_message import KafkaLegacyMessage

    out = b""
    for recs, magic, offset, log_append, damage, codec in wrappers:
        inner = kc.build_message_set(recs, magic=data.draw(st.sampled_from([0, magic]))) if recs else b""
        if damage:
            inner = mutate(inner, data)
        out += KafkaLegacyMessage(
            offset=offset, magic=magic, attributes=codec | (8 if log_append and magic else 0),
            timestamp=1_700_000_000_000 if magic else None, key=None, value=None,
            inner_raw=C.compress(codec, inner, magic),
        ).build()  # fmt: skip
    agree(out, verify_crc=data.draw(st.booleans()))


@pytest.mark.parametrize("wrappers", [1, 2])
@pytest.mark.parametrize("inner_offset, wrapper_offset",
                         [(-2**63, 3), (-2**63, 2**63 - 1), (-5, 2**63 - 1), (2**62, 2**63 - 1)])  # fmt: skip
def test_a_wrapper_far_above_its_inner_offsets_reads_as_objects_read_it(inner_offset,
                                                                        wrapper_offset, wrappers):
    """A magic 1 wrapper's shift (its offset minus its last inner one) past int64: the
    absolute offsets still fit, and the columns give the object path's (a Hypothesis case
    found in CI raised a bare TypeError)."""
    from kafkacodec.generated.kafka_legacy_message import KafkaLegacyMessage

    inner = KafkaLegacyMessage(offset=inner_offset, magic=1, attributes=0, timestamp=5, key=None,
                               value=b"v").build()  # fmt: skip
    wrapper = KafkaLegacyMessage(offset=wrapper_offset, magic=1, attributes=1, timestamp=7,
                                 key=None, value=None, inner_raw=C.compress(1, inner, 1)).build()  # fmt: skip
    assert [r["offset"] for r in agree(wrapper * wrappers)] == [wrapper_offset] * wrappers


# ------------------------------------------------------------------------ streaming


@settings(max_examples=150, suppress_health_check=[HealthCheck.too_slow])
@given(st.lists(batch_spec, min_size=1, max_size=6), st.integers(1, 3000), st.data())
def test_columns_in_chunks_are_the_columns_at_once(specs, chunk, data):
    """iter_columns, whatever the chunk size (smaller than a batch too), yields the rows of
    decode_columns in order, and on damaged input raises its error after the rows before."""
    raw = build_run(specs)
    if data.draw(st.booleans()):
        raw = mutate(raw, data)
    verify = data.draw(st.booleans())
    rows, error, positions = [], None, []
    try:
        for rb in columnar.iter_columns(raw, verify_crc=verify, chunk_bytes=chunk,
                                        passed=positions.append):  # fmt: skip
            rows += rb.to_pylist()
    except kc.KafkacodecError as err:
        error = (type(err), str(err))
    assert positions == sorted(positions)
    want = columns(raw, verify)
    if isinstance(want, tuple):  # the same error, after some of the rows before it
        assert error == want
        before = reference_offsets_before(raw, verify)
        assert [r["offset"] for r in rows] == before[: len(rows)]
    else:
        assert error is None and rows == want


def reference_offsets_before(raw, verify):
    """The offsets of the object path's records up to its first error."""
    offsets = []
    try:
        for b in kc.iter_batches(raw, verify_crc=verify):
            offsets += [r.offset for r in b.records()]
    except kc.KafkacodecError:
        pass
    return offsets


def test_a_segment_streams_its_columns(tmp_path):
    from kafkacodec.log.segment import Segment

    log = KAFKA_JAVA / "segments" / "segment_interval4096" / "00000000000000001000.log"
    (tmp_path / log.name).write_bytes(log.read_bytes())
    with Segment(tmp_path, 1000) as seg:
        got = [r for rb in seg.columns() for r in rb.to_pylist()]
    assert got == decode_columns(log.read_bytes()).to_pylist()


@pytest.mark.parametrize("size", [-2**31, -100, -12, 0, 13])
@pytest.mark.parametrize("chunk", [1, 5, 12, 40])
def test_a_size_too_small_for_any_entry_is_named_by_a_chunked_walk(size, chunk):
    """An entry whose size cannot be (less than the smallest message) where a chunk ends
    before it: the chunked walk names it as the whole walk does (it looped in place when
    the size was 12 less than nothing, a Hypothesis case)."""
    import struct

    bad = bytearray(kc.build_batch([kc.Record(None, 1, b"k", b"v", [])]) * 2)
    bad[8:12] = struct.pack(">i", size)
    with pytest.raises(kc.KafkacodecError) as at_once:
        columnar.decode_columns(bytes(bad))
    with pytest.raises(kc.KafkacodecError) as chunked:
        list(columnar.iter_columns(bytes(bad), chunk_bytes=chunk))
    assert str(chunked.value) == str(at_once.value) and "record size" in str(chunked.value)


def test_the_judged_mutations_agree():
    """The mutations Kafka's classes judge (tests/kafka/test_kafka_judges_mutations.py), a
    seeded sample: the columns read each one as the objects do."""
    from peers.bytewise import Mutator

    for _name, data in Mutator(6).draw(1500):
        agree(data)
        agree(data, verify_crc=False)


def test_a_header_key_that_is_not_utf8_reads_as_java_reads_it():
    """A header key's bytes ED A0 80 (an encoded surrogate) are one U+FFFD to Java's
    decoder, which Kafka's consumer and Spark's Kafka source use, and three to Python's:
    the columns (and so the Spark format) give Java's (found by the fuzz run against
    Kafka 4.4.0's classes; java_utf8 is held to the JDK in tests/internal)."""
    key = "k\udced\udca0\udc80"  # the bytes 6B ED A0 80, kept as surrogate escapes
    data = kc.build_batch([kc.Record(None, 1, b"k", b"v", [(key, b"1")])])
    (row,) = decode_columns(data).to_pylist()
    assert row["headers"][0]["key"] == "k\ufffd"
    assert b"k\xed\xa0\x80".decode("utf-8", "replace") != "k\ufffd"  # (Python's: three)

"""The columnar decoder against the object path (the reference): every vector, generated
runs of mixed batches, mutated input, and with the native loop switched off."""

from pathlib import Path

import kafkacodec as kc
import pytest
from conftest import KAFKA_JAVA, mutate
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from kafkacodec import columnar
from kafkacodec.columnar import TIMESTAMP_TYPE_CODES, decode_columns

pytestmark = pytest.mark.skipif(columnar._native_columns is None, reason="no C extension")


def reference(data, verify_crc):
    """Rows from Record objects, or the error the object path raises."""
    rows = []
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
                    "base_offset": b.base_offset, "magic": b.magic, "compression": b.compression,
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


def agree(data, verify_crc=True):
    want = reference(data, verify_crc)
    assert columns(data, verify_crc) == want
    return want


VECTORS = sorted(KAFKA_JAVA.rglob("*.bin"))


@pytest.mark.parametrize("path", VECTORS, ids=[p.name for p in VECTORS])
@pytest.mark.parametrize("verify_crc", [True, False])
def test_every_vector_agrees(path: Path, verify_crc):
    agree(path.read_bytes(), verify_crc)


def test_vectors_agree_without_the_native_loop(monkeypatch):
    monkeypatch.setattr(columnar, "_native_columns", None)
    for path in VECTORS:
        agree(path.read_bytes(), False)


def test_segment_in_chunks_agrees(monkeypatch):
    data = (
        KAFKA_JAVA / "segments" / "segment_interval4096" / "00000000000000001000.log"
    ).read_bytes()
    monkeypatch.setattr(columnar, "_RUN_BYTES", 5000)  # many native calls, many pieces
    table = decode_columns(data)
    assert table.num_rows == 603 and len(table.to_batches()) > 5
    assert table.to_pylist() == reference(data, True)


blob = st.one_of(st.none(), st.binary(max_size=64))
key_text = st.one_of(st.text(max_size=6), st.sampled_from(["é", "ключ", "\udcff"]))
record = st.builds(kc.Record, timestamp=st.integers(0, 2**40), key=blob, value=blob,
                   headers=st.lists(st.tuples(key_text, blob), max_size=3))  # fmt: skip
batch_spec = st.tuples(
    st.sampled_from(["v2", "v2", "v2", "v1", "v0", "control"]),
    st.sampled_from(["none", "gzip", "snappy", "lz4", "zstd"]),
    st.lists(record, min_size=1, max_size=6),
    st.booleans(),
)


def build_run(specs):
    out, offset = bytearray(), 0
    for kind, codec, recs, flag in specs:
        if kind == "control":
            out += kc.build_control_batch(flag, offset=offset, timestamp=1_700_000_000_000,
                                          producer_id=7, producer_epoch=1)  # fmt: skip
            offset += 1
            continue
        if kind == "v2":
            out += kc.build_batch(recs, base_offset=offset, compression=codec, producer_id=7 if flag else -1,
                                  producer_epoch=1 if flag else -1, base_sequence=offset if flag else -1,
                                  log_append_time=1_700_000_000_000 if not flag else None,
                                  timestamp_type="CreateTime" if flag else "LogAppendTime",
                                  partition_leader_epoch=3)  # fmt: skip
        else:
            legacy = [kc.Record(None, r.timestamp, r.key, r.value) for r in recs]
            out += kc.build_message_set(legacy, magic=int(kind[1]), base_offset=offset,
                                        compression="none" if codec == "zstd" else codec)  # fmt: skip
        offset += len(recs)
    return bytes(out)


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

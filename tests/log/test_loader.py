"""A broker's next load, predicted (kafkacodec.log.loader): the rules of Kafka's LogLoader that
decide what it reads and what it changes, each on a partition built for it. Real brokers
judge the same predictions on damaged broker-written partitions in
tests/kafka/test_kafka_recovery.py (the recovery drill)."""

import json
import struct
from pathlib import Path

import pytest
from conftest import kafkacodec_cli as cli
from test_repair import flip, make_partition

import kafkacodec as kc
from kafkacodec.generated import kafka_record_batch as schema
from kafkacodec.log import Partition, PartitionWriter
from kafkacodec.log import loader as L
from kafkacodec.log import repair as R


def predict(d: Path, **kw) -> L.LoadPrediction:
    with Partition(d) as p:
        return L.predict_load(p, **kw)


def checkpoint(log_dir: Path, name: str, entries: dict) -> None:
    body = "".join(f"{t} {p} {o}\n" for (t, p), o in entries.items())
    (log_dir / name).write_text(f"0\n{len(entries)}\n{body}")


def test_the_walks_header_layout_is_the_schemas():
    fmt = schema._S0.format.lstrip(">")
    assert L._V2_HEAD.format.lstrip(">") == fmt[: len(L._V2_HEAD.format) - 1]
    fields = schema.KafkaRecordBatch.FIELDS
    sizes = {"q": 8, "i": 4, "b": 1, "I": 4, "h": 2}
    at = dict(zip(fields, [sum(sizes[c] for c in fmt[:n]) for n in range(len(fmt))], strict=False))
    # the walk reads the CRC and the producer id as _V2_HEAD's fields 4 and 9, and CRCs from
    # _V2_CRC_FROM: where the schema has the crc, producer_id and attributes
    head = L._V2_HEAD.format.lstrip(">")
    walk_at = [struct.calcsize(">" + head[:n]) for n in range(len(head))]
    assert (at["crc"], at["attributes"], at["producer_id"]) == (walk_at[4], L._V2_CRC_FROM, walk_at[9])


def test_an_undamaged_partition_loads_unchanged_whatever_the_recovery_point(tmp_path):
    d = make_partition(tmp_path / "logs" / "orders-0")
    for rp in (None, 0, 30, 100):
        p = predict(d, clean_shutdown=False, recovery_point=rp)
        assert not p.changes and not p.fails
        assert (p.log_end_offset, p.segments_after, p.log_start_offset) == (100, 4, 0)


def test_damage_below_the_recovery_point_is_not_read(tmp_path):
    d = make_partition(tmp_path / "logs" / "orders-0")
    flip(d / "00000000000000000027.log", 4 * 111 + 60)
    checkpoint(d.parent, L.RECOVERY_POINT_CHECKPOINT, {("orders", 0): 60})
    p = predict(d)
    assert (p.recovery_point, p.recovery_point_source) == (60, L.RECOVERY_POINT_CHECKPOINT)
    assert [s.name for s in p.recovered] == ["00000000000000000054.log", "00000000000000000081.log"]
    assert not p.changes and p.log_end_offset == 100
    run = cli("recover", d, ok=False)
    assert "does not read the damage at byte 444 of 00000000000000000027.log, and serves it" in run.stdout
    # no entry for the partition: every segment is recovered, as the repair does
    checkpoint(d.parent, L.RECOVERY_POINT_CHECKPOINT, {("other", 0): 60})
    p = predict(d)
    assert p.recovery_point == 0 and "no entry" in p.recovery_point_source
    assert [(s.name, s.action) for s in p.changes] == [
        ("00000000000000000027.log", "truncated"), ("00000000000000000054.log", "deleted"),
        ("00000000000000000081.log", "deleted")]  # fmt: skip
    with Partition(d) as part:
        assert p.log_end_offset == R.plan(part).log_end_offset == 31


def test_after_a_clean_shutdown_nothing_is_recovered_but_a_missing_offset_index(tmp_path):
    d = make_partition(tmp_path / "logs" / "orders-0")
    flip(d / "00000000000000000027.log", 4 * 111 + 60)
    flip(d / "00000000000000000054.log", 2 * 111 + 60)
    (d.parent / L.CLEAN_SHUTDOWN).touch()
    assert not predict(d).changes
    # LogLoader.loadSegmentFiles recovers a segment without its offset index, whatever the
    # shutdown, and truncates it without deleting what follows
    (d / "00000000000000000054.index").unlink()
    p = predict(d)
    assert [(s.name, s.action, s.valid_bytes) for s in p.changes] == [("00000000000000000054.log", "truncated", 222)]
    assert p.segments_after == 4 and p.log_end_offset == 100


def test_a_batch_whose_magic_alone_changed_is_kept_by_kafka_cut_by_the_repair(tmp_path):
    d = make_partition(tmp_path / "logs" / "orders-0")
    log = d / "00000000000000000081.log"
    data = bytearray(log.read_bytes())
    data[3 * 111 + 16] = 3  # magic 3: outside the CRC, which still matches
    log.write_bytes(bytes(data))
    p = predict(d, clean_shutdown=False, recovery_point=0)
    assert not p.changes and p.log_end_offset == 100
    with Partition(d) as part:
        plan = R.plan(part)
    assert plan.truncate is not None and plan.truncate.invalid_position == 333


def test_offsets_going_back_at_an_index_entry_empty_the_segment(tmp_path):
    d = tmp_path / "logs" / "orders-0"
    with PartitionWriter(d, segment_bytes=10**6, fsync=False) as w:
        for i in range(120):
            w.append(kc.build_batch([kc.Record(None, 1_700_000_000_000 + i, b"k", b"v" * 100)], base_offset=i))
    (d / "00000000000000000000.index").unlink()  # recovered at load too: then the load fails
    log = d / "00000000000000000000.log"
    data = bytearray(log.read_bytes())
    size = 12 + struct.unpack_from(">i", data, 8)[0]
    for i in range(80, 120):  # offsets from 80 on go back by 70 (outside the CRC): the
        struct.pack_into(">q", data, i * size, i - 70)  # next index entry's is below the last
    log.write_bytes(bytes(data))
    p = predict(d, clean_shutdown=False, recovery_point=0)
    assert p.fails and "while rebuilding its indexes at load" in p.fails
    (d / "00000000000000000000.index").write_bytes(b"")
    p = predict(d, clean_shutdown=False, recovery_point=0)
    assert [(s.action, s.valid_bytes) for s in p.changes] == [("emptied", 0)]
    assert "InvalidOffsetException" in p.changes[0].reason and p.log_end_offset == 0
    with Partition(d) as part:  # the repair, stricter, cuts where the offsets go back
        plan = R.plan(part)
    assert plan.truncate.valid_bytes == 80 * size and plan.log_end_offset == 80
    assert "does not follow the last offset 79" in plan.truncate.reason


def test_a_log_ending_below_its_log_start_loses_every_segment(tmp_path):
    d = make_partition(tmp_path / "logs" / "orders-0")
    checkpoint(d.parent, "log-start-offset-checkpoint", {("orders", 0): 500})
    p = predict(d, clean_shutdown=False, recovery_point=0)
    assert p.deleted_all and (p.log_end_offset, p.log_start_offset, p.segments_after) == (500, 500, 1)


@pytest.mark.parametrize("version", [1, 0])
def test_a_transaction_index_kafka_rejects(tmp_path, version):
    d = make_partition(tmp_path / "logs" / "orders-0")
    # an entry ending before its segment: CorruptIndexException, recovered; a version
    # above 0: KafkaException, the load fails
    entry = struct.pack(">hqqqq", version, 7, 1, 2, 3)
    (d / "00000000000000000027.txnindex").write_bytes(entry)
    p = predict(d, clean_shutdown=True)
    if version:
        assert p.fails and "version 1" in p.fails
    else:
        assert [s.name for s in p.recovered] == ["00000000000000000027.log"] and not p.changes
    said = json.loads(cli("recover", d, "--json", ok=None).stdout)["kafka_load"]
    assert said["fails"] == p.fails

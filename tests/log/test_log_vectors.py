"""kafkacodec.log against Kafka 3.8.0's own answers (tests/vectors/kafka-java/segments and
indexes): every lookup table, search, aborted-transaction list and recovery outcome."""

import json
import re
import shutil

import pytest
from conftest import KAFKA_JAVA

import kafkacodec as kc
from kafkacodec.log import (
    OffsetIndex,
    Partition,
    PartitionWriter,
    Segment,
    TimeIndex,
    TxnIndex,
    recover_segment,
    repair_partition,
)
from kafkacodec.log.index import encode_offset_entries, encode_time_entries, encode_txn_entries

SEG_DIR = KAFKA_JAVA / "segments" / "segment_interval4096"
SEG = json.loads((SEG_DIR / "segment_interval4096.json").read_text())
REC = json.loads((SEG_DIR / "recovery" / "recovery.json").read_text())
IDX_DIR = KAFKA_JAVA / "indexes"
IDX = json.loads((IDX_DIR / "standalone_indexes.json").read_text())
BASE = SEG["baseOffset"]


def t(x):
    return None if x is None else tuple(x)


@pytest.fixture(scope="module")
def seg():
    s = Segment(SEG_DIR, BASE)
    yield s
    s.close()


def test_index_entries(seg):
    assert [list(e) for e in seg.offset_index] == SEG["offsetIndexEntries"]
    assert [list(e) for e in seg.time_index] == SEG["timeIndexEntries"]
    assert [list(e) for e in seg.txn_index] == [
        [e["producerId"], e["firstOffset"], e["lastOffset"], e["lastStableOffset"]]
        for e in SEG["txnIndexEntries"]
    ]
    assert not seg.notes


def test_offset_index_lookups(seg):
    for target, offset, position in SEG["offsetIndexLookup_target_offset_position"]:
        assert seg.offset_index.lookup(target) == (offset, position), target


def test_time_index_lookups(seg):
    for target, ts, offset in SEG["timeIndexLookup_target_timestamp_offset"]:
        assert seg.time_index.lookup(target) == (ts, offset), target


def test_translate_offset(seg):
    for target, *want in SEG["translateOffset_target_batchLastOffset_position_size"]:
        got = seg.translate_offset(target)
        assert (tuple(got) if got else (None, None, None)) == tuple(want), target


@pytest.mark.parametrize("table", ["findOffsetByTimestamp_target_startingOffset_timestamp_offset_leaderEpoch",
                                   "findOffsetByTimestamp_fromMidOffset"])  # fmt: skip
def test_find_offset_by_timestamp(seg, table):
    for target, start, *want in SEG[table]:
        got = seg.find_offset_by_timestamp(target, start)
        assert (tuple(got) if got else (None, None, None)) == tuple(want), (target, start)


def test_segment_summary(seg):
    assert seg.read_next_offset() == SEG["readNextOffset"]
    assert (
        seg.max_timestamp_so_far().timestamp == SEG["maxTimestampSoFar"] == SEG["largestTimestamp"]
    )
    assert seg.size == SEG["sizeInBytes"]


def test_collect_aborted_txns(seg):
    for case in SEG["collectAbortedTxns"]:
        got = seg.collect_aborted_txns(case["fetchOffset"], case["upperBoundOffset"])
        assert [list(e) for e in got.aborted] == case["aborted"], case
        assert got.is_complete == case["isComplete"], case


def test_batches_match_kafka(seg):
    got = [
        (b.position, b.size, b.base_offset, b.last_offset, b.max_timestamp)
        for b in seg.batches(verify_crc=True)
    ]
    assert got == [
        tuple(x[i] for i in (3, 4, 0, 1, 2))
        for x in SEG["appends_baseOffset_lastOffset_maxTimestamp_position_size"]
    ]


# ------------------------------------------------------------------ standalone indexes


def test_standalone_offset_index():
    idx = OffsetIndex(IDX_DIR / "00000000000000000500.index", 500)
    assert [list(e) for e in idx] == IDX["offsetIndexAppended"]
    assert idx.file_size == IDX["offsetIndexFileLengthAfterClose"]
    for target, offset, position in IDX["offsetIndexLookup_target_offset_position"]:
        assert idx.lookup(target) == (offset, position)
    assert (
        encode_offset_entries(500, IDX["offsetIndexAppended"])
        == (IDX_DIR / "00000000000000000500.index").read_bytes()
    )


def test_standalone_time_index():
    idx = TimeIndex(IDX_DIR / "00000000000000000500.timeindex", 500)
    assert [list(e) for e in idx] == IDX["timeIndexEntries"]
    for target, ts, offset in IDX["timeIndexLookup_target_timestamp_offset"]:
        assert idx.lookup(target) == (ts, offset)
    assert (
        encode_time_entries(500, IDX["timeIndexEntries"])
        == (IDX_DIR / "00000000000000000500.timeindex").read_bytes()
    )


def test_standalone_txn_index():
    idx = TxnIndex(IDX_DIR / "00000000000000000500.txnindex", 500)
    ok = [
        r[:4]
        for r in IDX["txnIndexAppend_producerId_firstOffset_lastOffset_lastStableOffset_result"]
        if r[4] == "ok"
    ]
    assert [list(e) for e in idx] == ok
    for case in IDX["collectAbortedTxns"]:
        got = idx.collect_aborted_txns(case["fetchOffset"], case["upperBoundOffset"])
        assert [e.producer_id for e in got.aborted] == case["abortedProducerIds"]
        assert got.is_complete == case["isComplete"]
    assert encode_txn_entries(ok) == (IDX_DIR / "00000000000000000500.txnindex").read_bytes()


def test_empty_indexes(tmp_path):
    for target, offset, position in IDX["emptyOffsetIndexLookups"]:
        assert OffsetIndex(tmp_path / "missing.index", 500).lookup(target) == (offset, position)
    (tmp_path / "e.timeindex").write_bytes(b"")
    for target, ts, offset in IDX["emptyTimeIndexLookups"]:
        assert TimeIndex(tmp_path / "e.timeindex", 500).lookup(target) == (ts, offset)


def test_preallocated_zero_tail(tmp_path):
    # An active segment's index: preallocated to 4096 bytes, zero past its 5 entries.
    p = tmp_path / "00000000000000000500.index"
    p.write_bytes(
        (IDX_DIR / "00000000000000000500.index")
        .read_bytes()
        .ljust(IDX["offsetIndexFileLengthBeforeClose"], b"\0")
    )
    idx = OffsetIndex(p, 500)
    assert len(idx) == IDX["offsetIndexEntriesBeforeClose"] and idx.usable
    assert idx.lookup(10**6) == tuple(IDX["offsetIndexAppended"][-1])
    q = tmp_path / "00000000000000000500.timeindex"
    q.write_bytes((IDX_DIR / "00000000000000000500.timeindex").read_bytes() + bytes(12 * 300))
    assert [list(e) for e in TimeIndex(q, 500)] == IDX["timeIndexEntries"]


def test_inconsistent_index_falls_back_to_walk(tmp_path):
    d = tmp_path / "t-0"
    shutil.copytree(SEG_DIR, d, ignore=shutil.ignore_patterns("*.json", "*.txt", "recovery"))
    (d / "00000000000000001000.index").write_bytes(b"\x00\x00\x00\x05")  # not a multiple of 8
    (d / "00000000000000001000.timeindex").unlink()
    s = Segment(d, BASE)
    for target, *want in SEG["translateOffset_target_batchLastOffset_position_size"][::7]:
        got = s.translate_offset(target)
        assert (tuple(got) if got else (None, None, None)) == tuple(want)
    for target, start, *want in SEG["findOffsetByTimestamp_fromMidOffset"][::11]:
        got = s.find_offset_by_timestamp(target, start)
        assert (tuple(got) if got else (None, None, None)) == tuple(want)
    assert any("neither positive nor a multiple of 8" in n for n in s.notes)
    assert any("timeindex: missing" in n for n in s.notes)


# ---------------------------------------------------------------------------- recovery


@pytest.mark.parametrize("case", REC["results"], ids=lambda c: c["variant"])
def test_recovery_matches_kafka(case, tmp_path):
    d = tmp_path / "logs" / "t-0"
    d.mkdir(parents=True)
    original = (SEG_DIR / "recovery" / case["inputFile"]).read_bytes()
    (d / "00000000000000001000.log").write_bytes(original)
    s = Segment(d, BASE)
    rep = recover_segment(s)
    assert rep.size == case["inputSize"]
    assert rep.truncated_bytes == case["recoverReturnedTruncatedBytes"]
    assert rep.valid_bytes == case["sizeAfterRecover"]
    assert rep.next_offset == case["readNextOffset"]
    assert [list(e) for e in rep.offset_index] == case["offsetIndexEntries"]
    assert [list(e) for e in rep.time_index] == case["timeIndexEntries"]
    assert [list(e) for e in rep.txn_index] == case["txnIndexEntries"]
    assert (rep.reason is None) == (rep.truncated_bytes == 0)
    assert list(d.iterdir()) == [d / "00000000000000001000.log"]  # the dry run wrote nothing

    s.close()
    _plan, job = repair_partition(d, backup_root=tmp_path / "backup")
    assert (d / "00000000000000001000.log").stat().st_size == case["logFileSizeAfterClose"]
    for suffix in ("index", "timeindex"):
        after = SEG_DIR / "recovery" / f"recover_{case['variant']}.{suffix}.after"
        want = (
            after.read_bytes()
            if after.exists()
            else (SEG_DIR / f"00000000000000001000.{suffix}").read_bytes()
        )
        assert (d / f"00000000000000001000.{suffix}").read_bytes() == want, suffix
    cut = list((tmp_path / "backup").rglob("*.log.cut-at-*"))
    kept = (d / "00000000000000001000.log").read_bytes()
    assert kept + (cut[0].read_bytes() if cut else b"") == original
    assert len(cut) == (1 if rep.truncated_bytes else 0)
    assert recover_segment(Segment(d, BASE)).clean
    left = {p.name for p in d.iterdir()}  # nothing of kafkacodec's is left in the partition
    assert left <= {f"00000000000000001000.{s}" for s in ("log", "index", "timeindex", "txnindex")}
    assert (job is None) == (rep.clean and case["variant"] != "intact_rebuild_indexes")


# ------------------------------------------------------------------------------ writer


def test_writer_reproduces_kafka_segment(tmp_path):
    """The same appends (one per batch) give byte-identical .log, .index, .timeindex and
    .txnindex files."""
    d = tmp_path / "t-0"
    with PartitionWriter(d, index_interval_bytes=SEG["indexIntervalBytes"], start_offset=BASE) as w:
        data = (SEG_DIR / "00000000000000001000.log").read_bytes()
        for b in kc.iter_batches(data):
            w.append(data[b.position : b.position + b.size])
    for suffix in ("log", "index", "timeindex", "txnindex"):
        name = f"00000000000000001000.{suffix}"
        assert (d / name).read_bytes() == (SEG_DIR / name).read_bytes(), name


def test_partition_over_the_vector(tmp_path):
    d = tmp_path / "orders-3"
    shutil.copytree(SEG_DIR, d, ignore=shutil.ignore_patterns("*.json", "*.txt", "recovery"))
    p = Partition(d)
    assert (p.topic, p.partition, p.base_offsets) == ("orders", 3, [1000])
    assert p.log_end_offset == SEG["readNextOffset"]
    assert p.list_offsets(-2).offset == 1000 and p.list_offsets(-1).offset == SEG["readNextOffset"]
    checked = 0
    for target, _start, ts, offset, epoch in SEG[
        "findOffsetByTimestamp_target_startingOffset_timestamp_offset_leaderEpoch"
    ][::13]:
        if target < 0:
            continue
        got = p.list_offsets(target)
        assert ((got.timestamp, got.offset, got.leader_epoch) if got else (None, None, None)) == (
            ts,
            offset,
            epoch,
        )
        if got:
            where = p.segments[0].translate_offset(got.offset)
            assert (got.segment, got.position) == ("00000000000000001000.log", where.position)
        checked += 1
    assert checked > 50
    top = p.list_offsets(-3)
    assert top.timestamp == SEG["maxTimestampSoFar"]
    assert p.aborted_transactions(1000, 1100) == [
        tuple(x) for x in SEG["collectAbortedTxns"][0]["aborted"]
    ]


@pytest.mark.parametrize("text,entries", [
    ("", []),  # a broker's zero-length file: a replica with no epoch yet (issue 56)
    ("0\n", []), ("0\n0\n", []), ("0\n1\n5 10\n", [(5, 10)]),
    ("0\r\n2\r\n5\t10 \r\n6  20\n", [(5, 10), (6, 20)]),  # readLine's line ends, \\s+ between
])  # fmt: skip
def test_a_leader_epoch_checkpoint_is_read_as_kafka_reads_it(text, entries):
    """server-common's CheckpointFile.CheckpointReadBuffer.read with
    LeaderEpochCheckpointFile's formatter: no line, or no count line, is no entry."""
    from kafkacodec.log.partition import read_epoch_checkpoint_text

    assert [tuple(e) for e in read_epoch_checkpoint_text(text, "x")] == entries


@pytest.mark.parametrize("text,why", [
    ("1\n0\n", "unrecognised version 1"), ("0\n2\n5 10\n", "says 2 entries but has 1"),
    ("0\n1\n 5 10\n", "is not `epoch start_offset`"), ("0\n1\n5_0 10\n", "is not an int32"),
    ("0\n1\n\n", "is not `epoch start_offset`"), ("0\n1\n5 99999999999999999999\n", "is not an int64"),
])  # fmt: skip
def test_a_malformed_leader_epoch_checkpoint_is_named(text, why):
    from kafkacodec.log.partition import read_epoch_checkpoint_text
    from kafkacodec.runtime.errors import LogError

    with pytest.raises(LogError, match=re.escape(why)):
        read_epoch_checkpoint_text(text, "x")


def test_verify_finds_a_replica_with_a_zero_length_epoch_checkpoint_clean(tmp_path):
    """Kafka writes leader-epoch-checkpoint with no bytes for a replica that has no epoch
    yet (an empty __consumer_offsets partition of a healthy cluster): verify called it
    malformed and exited 1 (issue 56)."""
    from kafkacodec.cli import main

    part = tmp_path / "logs" / "__consumer_offsets-7"
    part.mkdir(parents=True)
    (part / "00000000000000000000.log").write_bytes(b"")
    (part / "00000000000000000000.index").write_bytes(b"")
    (part / "00000000000000000000.timeindex").write_bytes(b"")
    (part / "leader-epoch-checkpoint").write_bytes(b"")
    assert main(["verify", str(tmp_path / "logs"), "--quiet"]) == 0


def test_a_log_dir_named_like_a_partition_is_a_log_dir_by_its_meta_properties(tmp_path):
    """kafka-logs-2 reads as topic kafka-logs, partition 2 by its name; Kafka writes
    meta.properties in each log.dir and never in a partition (issue 56)."""
    from kafkacodec.log import LogDirs
    from kafkacodec.log.partition import open_log

    d = tmp_path / "kafka-logs-2"
    d.mkdir()
    (d / "meta.properties").write_text("version=1\nnode.id=2\n")
    assert isinstance(open_log(d), LogDirs)

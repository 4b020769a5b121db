"""`kafkacodec remote-log`: __remote_log_metadata folded as Kafka's RemoteLogMetadataCache
folds it, and checked against a tiered-storage root's files. The records are built with the
codecs generated from Kafka's specs (the codecs are checked against Kafka-written payloads
in test_vectors.py; the last test folds those payloads themselves)."""

from __future__ import annotations

import base64
import importlib
import json

from conftest import KAFKA_INTERNAL
from conftest import kafkacodec_cli as cli

import kafkacodec as kc
from kafkacodec.internal import DEFAULT
from kafkacodec.internal.remote import fold_remote_log
from kafkacodec.log import LogDirs

T0 = 1729814400000
TID = bytes(range(16))
TID_TEXT = base64.urlsafe_b64encode(TID).decode().rstrip("=")


def _classes(spec: str):
    cls = DEFAULT.top(DEFAULT.schema_of(spec))
    return cls, importlib.import_module(cls.__module__)


def _segment_id(mod, topic: str, partition: int, sid: bytes):
    tp = mod.TopicIdPartitionEntry(version=0, name=topic, id=TID, partition=partition, tagged_fields=[])
    return mod.RemoteLogSegmentIdEntry(version=0, topic_id_partition=tp, id=sid, tagged_fields=[])


def added(topic, partition, sid: bytes, start, end, size=1000, epochs=((0, 0),)) -> bytes:
    cls, mod = _classes("RemoteLogSegmentMetadataRecord")
    obj = cls(version=0, remote_log_segment_id=_segment_id(mod, topic, partition, sid),
              start_offset=start, end_offset=end, broker_id=1, max_timestamp_ms=T0 + end,
              event_timestamp_ms=T0, segment_leader_epochs=[
                  mod.SegmentLeaderEpochEntry(version=0, leader_epoch=e, offset=o, tagged_fields=[])
                  for e, o in epochs],
              segment_size_in_bytes=size, custom_metadata=None, remote_log_segment_state=0,
              tagged_fields=[])  # fmt: skip
    return bytes([1, cls.MESSAGE["apiKey"], 0]) + obj.build()


def updated(topic, partition, sid: bytes, state: int) -> bytes:
    cls, mod = _classes("RemoteLogSegmentMetadataUpdateRecord")
    obj = cls(version=0, remote_log_segment_id=_segment_id(mod, topic, partition, sid),
              broker_id=1, event_timestamp_ms=T0 + 1, custom_metadata=None,
              remote_log_segment_state=state, tagged_fields=[])  # fmt: skip
    return bytes([1, cls.MESSAGE["apiKey"], 0]) + obj.build()


def sid(n: int) -> bytes:
    return bytes([n]) * 16


def name(n: int, start: int) -> str:
    return f"{start:020d}-{base64.urlsafe_b64encode(sid(n)).decode().rstrip('=')}"


def write(logs, values: list[bytes], partition: int = 0):
    d = logs / f"__remote_log_metadata-{partition}"
    d.mkdir(parents=True)
    (d / "00000000000000000000.log").write_bytes(
        kc.build_batch([kc.Record(None, T0, None, v, []) for v in values])
    )


def history():
    return [
        added("orders", 0, sid(1), 0, 999), updated("orders", 0, sid(1), 1),  # copied
        added("orders", 0, sid(2), 1000, 1999), updated("orders", 0, sid(2), 1),
        added("orders", 0, sid(3), 2000, 2999),  # a copy that has not finished
        added("orders", 1, sid(4), 0, 499), updated("orders", 1, sid(4), 1),
        updated("orders", 1, sid(4), 2), updated("orders", 1, sid(4), 3),  # deleted
        added("orders", 1, sid(5), 500, 899, epochs=((3, 500), (4, 700))), updated("orders", 1, sid(5), 1),
    ]  # fmt: skip


def test_remote_segments_are_folded_as_kafka_folds_them(tmp_path):
    write(tmp_path / "logs", history())
    got = fold_remote_log([LogDirs(tmp_path / "logs")])
    assert got.problems == []
    assert [(s.topic, s.partition, s.start_offset, s.state) for s in got.listed()] == [
        ("orders", 0, 0, "COPY_SEGMENT_FINISHED"), ("orders", 0, 1000, "COPY_SEGMENT_FINISHED"),
        ("orders", 1, 500, "COPY_SEGMENT_FINISHED"),
    ]  # fmt: skip
    assert [s.state for s in got.listed(every=True)][2] == "COPY_SEGMENT_STARTED"
    assert got.listed()[2].leader_epochs == {3: 500, 4: 700}
    assert got.listed()[0].topic_id == TID_TEXT


def test_the_command_lists_and_checks_the_files(tmp_path):
    logs = tmp_path / "logs"
    write(logs, history())
    out = cli("remote-log", logs)
    assert out.stdout.splitlines()[0] == f"orders-0 (topic id {TID_TEXT}): 2 segments, offsets 0-1999, 2000 bytes"
    assert f"  {name(1, 0)} offsets 0-999 1000 bytes" in out.stdout
    rows = [json.loads(x) for x in cli("remote-log", logs, "--json", "--all").stdout.splitlines()]
    assert [r["state"] for r in rows] == ["COPY_SEGMENT_FINISHED"] * 2 + ["COPY_SEGMENT_STARTED",
                                                                          "COPY_SEGMENT_FINISHED"]  # fmt: skip
    # a LocalTieredStorage root: segment 1 whole, segment 2's index lost, segment 3 (a copy
    # in progress) and an orphan present, partition 1's folder gone
    root = tmp_path / "rsm" / "kafka-tiered-storage" / f"orders-0-{TID_TEXT}"
    root.mkdir(parents=True)
    for n, start, suffixes in ((1, 0, "log index timeindex snapshot leader_epoch_checkpoint"),
                               (2, 1000, "log timeindex snapshot leader_epoch_checkpoint"),
                               (3, 2000, "log"), (9, 3000, "log index")):  # fmt: skip
        for s in suffixes.split():
            (root / f"{name(n, start)}.{s}").write_bytes(b"")
    checked = cli("remote-log", logs, "--tiered", tmp_path / "rsm", ok=False)
    assert checked.returncode == 1
    err = checked.stderr
    assert f"missing: {root}: {name(2, 1000)}: no index" in err
    assert "orders-1 (topic id" in err and "no folder of theirs" in err
    assert f"note: {root}: {name(3, 2000)}: files of a segment in state COPY_SEGMENT_STARTED" in err
    assert f"{name(9, 3000)} (index, log): no segment of __remote_log_metadata names it (an orphan)" in err
    assert "checked the files of 2 segments" in err


def test_kafka_written_payloads_fold(tmp_path):
    """Every __remote_log_metadata payload Kafka's own classes wrote: the adds are listed
    with the values Kafka gave them; updates of segments no record added are named."""
    docs = [json.loads(x) for x in KAFKA_INTERNAL.read_text().splitlines()]
    docs = [d for d in docs if d["kind"] == "remote_metadata"]
    write(tmp_path / "logs", [bytes.fromhex(d["hex"]) for d in docs])
    got = fold_remote_log([LogDirs(tmp_path / "logs")])
    last_add = {}  # a later add of the same id replaces it, as in Kafka's cache
    for d in docs:
        if d["spec"] == "RemoteLogSegmentMetadataRecord":
            a = json.loads(d["json"])
            last_add[a["remoteLogSegmentId"]["id"]] = a
    by_id = {s.segment_id: s for s in got.listed(every=True)}
    for sid_text, s in by_id.items():
        a = last_add[sid_text]
        assert (s.start_offset, s.end_offset, s.topic) == (
            a["startOffset"], a["endOffset"], a["remoteLogSegmentId"]["topicIdPartition"]["name"])
    assert len(by_id) >= 1 and got.records == len(docs)
    updates = sum(d["spec"] == "RemoteLogSegmentMetadataUpdateRecord" for d in docs)
    assert sum("which no earlier record adds" in p for p in got.problems) <= updates


def test_murmur2_is_kafkas():
    """Kafka's own values for Utils.murmur2 (clients' UtilsTest.testMurmur2), which
    RemoteLogMetadataTopicPartitioner hashes with."""
    from kafkacodec.internal.remote import murmur2

    cases = {b"21": -973932308, b"foobar": -790332482, b"a-little-bit-long-string": -985981536,
             b"a-little-bit-longer-string": -1486304829, b"abc": 479470107,
             b"lkjh234lh9fiuh90y23oiuhsafujhadof229phr9h19h89h8": -58897971}  # fmt: skip
    assert {k: murmur2(k) for k in cases} == cases

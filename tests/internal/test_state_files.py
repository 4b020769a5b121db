"""Producer-state snapshots and the small state files, dumped. The snapshot bytes are laid
out by hand here from Kafka's ProducerStateManager (version 1, CRC-32C of what follows
the CRC, an int32 count, 46 bytes per producer)."""

from __future__ import annotations

import json
import struct

import crc32c
from conftest import kafkacodec_cli


def snapshot(entries) -> bytes:
    body = struct.pack(">i", len(entries)) + b"".join(struct.pack(">qhiqiqiq", *e) for e in entries)
    return struct.pack(">hI", 1, crc32c.crc32c(body)) + body


def test_producer_snapshot_as_kafka_dump_log_prints_it(tmp_path):
    # producerId, epoch, lastSequence, lastOffset, offsetDelta, timestamp, coordinatorEpoch,
    # currentTxnFirstOffset
    data = snapshot([
        (4001, 3, 41, 1200, 9, 1729814400000, 7, 1150),
        (4002, 0, 4, 1300, 9, 1729814400500, -1, -1),  # the sequence wrapped
        (4003, 1, -1, -1, 0, 1729814400900, -1, -1),  # no batch metadata
    ])  # fmt: skip
    path = tmp_path / "00000000000000001301.snapshot"
    path.write_bytes(data)
    out = kafkacodec_cli("dump", "--quiet", "--kafka-version", "4.2", path)
    assert out.stdout.splitlines() == [
        "Dumping 00000000000000001301.snapshot",
        "producerId: 4001 producerEpoch: 3 coordinatorEpoch: 7 currentTxnFirstOffset: "
        "OptionalLong[1150] lastTimestamp: 1729814400000 firstSequence: 32 lastSequence: 41 "
        "lastOffset: 1200 offsetDelta: 9 timestamp: 1729814400000",
        "producerId: 4002 producerEpoch: 0 coordinatorEpoch: -1 currentTxnFirstOffset: "
        "OptionalLong.empty lastTimestamp: 1729814400500 firstSequence: 2147483643 "
        "lastSequence: 4 lastOffset: 1300 offsetDelta: 9 timestamp: 1729814400500",
        "producerId: 4003 producerEpoch: 1 coordinatorEpoch: -1 currentTxnFirstOffset: "
        "OptionalLong.empty lastTimestamp: 1729814400900 ",
    ]
    # from 4.3 on (the tool in Java) an entry without batch metadata ends without a space
    newest = kafkacodec_cli("dump", "--quiet", path).stdout.splitlines()
    assert newest[-1].endswith("lastTimestamp: 1729814400900") and newest[:3] == out.stdout.splitlines()[:3]
    doc = json.loads(kafkacodec_cli("dump", "--quiet", "--json", path).stdout)
    assert [e["producer_id"] for e in doc["entries"]] == [4001, 4002, 4003]
    assert doc["entries"][0]["current_txn_first_offset"] == 1150


def test_a_corrupt_snapshot_is_refused_by_name(tmp_path):
    data = bytearray(snapshot([(4001, 3, 41, 1200, 9, 1729814400000, 7, 1150)]))
    data[20] ^= 1
    path = tmp_path / "00000000000000001301.snapshot"
    path.write_bytes(bytes(data))
    out = kafkacodec_cli("dump", "--quiet", path, ok=False)
    assert out.returncode == 1  # a problem found in the data
    assert "Snapshot is corrupt (CRC is no longer valid). Stored crc:" in out.stderr
    assert str(path) in out.stderr


def test_small_state_files(tmp_path):
    d = tmp_path / "orders-0"
    d.mkdir()
    (d / "leader-epoch-checkpoint").write_text("0\n2\n0 0\n3 120\n")
    (d / "partition.metadata").write_text("version: 0\ntopic_id: 3q0P5GWNSKSlVX3wO_nPlw\n")
    (tmp_path / "recovery-point-offset-checkpoint").write_text("0\n1\norders 0 130\n")
    (tmp_path / "quorum-state").write_text(
        '{"leaderId":1,"leaderEpoch":4,"votedId":-1,"data_version":1}'
    )
    out = kafkacodec_cli(
        "dump", "--quiet", d / "leader-epoch-checkpoint", d / "partition.metadata",
        tmp_path / "recovery-point-offset-checkpoint", tmp_path / "quorum-state",
    )  # fmt: skip
    assert out.stdout.splitlines() == [
        "Dumping leader-epoch-checkpoint",
        "version: 0 entries: 2",
        "epoch: 0 startOffset: 0",
        "epoch: 3 startOffset: 120",
        "Dumping partition.metadata",
        "version: 0 topicId: 3q0P5GWNSKSlVX3wO_nPlw",
        "Dumping recovery-point-offset-checkpoint",
        "version: 0 entries: 1",
        "topic: orders partition: 0 offset: 130",
        "Dumping quorum-state",
        "leaderId: 1",
        "leaderEpoch: 4",
        "votedId: -1",
        "data_version: 1",
    ]
    (d / "leader-epoch-checkpoint").write_text("0\n3\n0 0\n")
    out = kafkacodec_cli("dump", "--quiet", d / "leader-epoch-checkpoint", ok=False)
    assert out.returncode == 1 and "says 3 entries but has 1" in out.stderr

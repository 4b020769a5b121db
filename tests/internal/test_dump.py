"""`kafkacodec dump` of internal topics, as kafka-dump-log prints them with its decoder
flags: segments holding the Kafka-written payloads of tests/vectors/kafka-internal, whose
kafka-dump-log text is in the vectors (`dump`)."""

from __future__ import annotations

import json

import pytest
from conftest import KAFKA_SPECS, VECTORS_LABEL, kafkacodec_cli
from internal_vectors import ROWS, shipped_rows

import kafkacodec as kc
from kafkacodec.internal.dump_format import scala_hash_set_order

T0 = 1729814400000


def keys_by_type(module: str) -> dict[int, bytes]:
    return {
        int(r["hex"][:4], 16): bytes.fromhex(r["hex"])
        for r in ROWS
        if r["module"] == module and r["kind"] == "key"
    }


def segment(tmp_path, topic_dir: str, records: list[tuple[bytes | None, bytes | None]]):
    d = tmp_path / topic_dir
    d.mkdir()
    data = b"".join(
        kc.build_batch([kc.Record(None, T0 + i, k, v, [])], base_offset=i)
        for i, (k, v) in enumerate(records)
    )
    (d / "00000000000000000000.log").write_bytes(data)
    return d / "00000000000000000000.log"


@pytest.fixture(params=["shipped", "vectors"])
def codecs(request) -> tuple[list[dict], tuple]:
    """(vectors, dump's arguments) of each set of codecs: the shipped ones (a release's
    specs), with the vectors they read as Kafka wrote them; and those of the vectors' own
    specs (--specs), with every vector."""
    if request.param == "shipped":
        return shipped_rows(), ()
    return ROWS, ("--specs", KAFKA_SPECS / VECTORS_LABEL)


def record_lines(stdout: str) -> list[str]:
    return [line for line in stdout.splitlines() if line.startswith("| offset:")]


def test_offsets_decoder_prints_kafkas_key_and_payload(tmp_path, codecs):
    """Each group-coordinator value with a key of its record type, then a tombstone; the
    text after ` key: ` and ` payload: ` is kafka-dump-log's, from the vectors."""
    rows, specs = codecs
    keys = keys_by_type("group-coordinator")
    values = [r for r in rows if r["module"] == "group-coordinator" and r["kind"] == "value"]
    key_dump = {
        int(r["hex"][:4], 16): r["dump"]
        for r in ROWS
        if r["module"] == "group-coordinator" and r["kind"] == "key"
    }
    records = [(keys[r["recordType"]], bytes.fromhex(r["hex"])) for r in values]
    records.append((keys[2], None))  # a tombstone
    log = segment(tmp_path, "__consumer_offsets-7", records)
    for flags in (["--offsets-decoder"], ["--print-data-log"]):  # the flag, or the directory
        out = kafkacodec_cli("dump", *flags, *specs, "--quiet", log)
        lines = record_lines(out.stdout)
        assert len(lines) == len(records)
        for line, r in zip(lines, values):
            head, _, rest = line.partition(" key: ")
            key, _, payload = rest.partition(" payload: ")
            assert key == key_dump[r["recordType"]]
            assert payload == r["dump"]
        assert lines[-1].endswith(f" key: {key_dump[2]} payload: <DELETE>")
        assert "keySize: " in lines[-1] and "valueSize: -1" in lines[-1]


def test_cluster_metadata_decoder_prints_no_key(tmp_path, codecs):
    rows, specs = codecs
    rows = [r for r in rows if r["kind"] == "metadata"]
    log = segment(tmp_path, "__cluster_metadata-0", [(None, bytes.fromhex(r["hex"])) for r in rows])
    out = kafkacodec_cli("dump", "--cluster-metadata-decoder", *specs, "--quiet", log)
    lines = record_lines(out.stdout)
    assert [line.partition(" payload: ")[2] for line in lines] == [r["dump"] for r in rows]
    assert not any(" key: " in line for line in lines)


def test_share_group_state_and_transaction_log_decoders(tmp_path, codecs):
    rows, specs = codecs
    keys = keys_by_type("share-coordinator")
    txn_keys = [r for r in rows if r["spec"] == "TransactionLogKey"]
    rows = [r for r in rows if r["module"] == "share-coordinator" and r["kind"] == "value"]
    log = segment(
        tmp_path,
        "__share_group_state-3",
        [(keys[r["recordType"]], bytes.fromhex(r["hex"])) for r in rows],
    )
    # the vectors' text is kafka-dump-log's before 4.1 (a value's version under "type")
    out = kafkacodec_cli("dump", "--share-group-state-decoder", *specs, "--kafka-version", "4.0", "--quiet", log)
    assert [line.partition(" payload: ")[2] for line in record_lines(out.stdout)] == [
        r["dump"] for r in rows
    ]
    newer = kafkacodec_cli("dump", "--share-group-state-decoder", *specs, "--quiet", log)
    assert [line.partition(" payload: ")[2] for line in record_lines(newer.stdout)] == [
        r["dump"].replace('{"type":', '{"version":', 1) for r in rows
    ]

    log = segment(
        tmp_path, "__transaction_state-1", [(bytes.fromhex(r["hex"]), None) for r in txn_keys]
    )
    # the vectors' text is kafka-dump-log's before 4.1 (TransactionLog's text)
    out = kafkacodec_cli("dump", "--transaction-log-decoder", *specs, "--kafka-version", "4.0",
                         "--quiet", log)  # fmt: skip
    assert [line.partition(" key: ")[2] for line in record_lines(out.stdout)] == [
        f"{r['dump']} payload: <DELETE>" for r in txn_keys
    ]


def test_transaction_value_text(tmp_path):
    """A transaction's value as TransactionLog.formatRecordKeyAndValue prints it."""
    from kafkacodec.internal import DEFAULT

    key = DEFAULT.top("transaction_log_key")(version=0, transactional_id="app-1")
    value_cls = DEFAULT.top("transaction_log_value")
    mod = __import__("kafkacodec.generated.transaction_log_value", fromlist=["x"])
    value = value_cls(
        version=0, producer_id=4001, producer_epoch=3, transaction_timeout_ms=60000,
        transaction_status=1,
        transaction_partitions=[mod.PartitionsSchema(version=0, topic="orders", partition_ids=[0, 5])],
        transaction_last_update_timestamp_ms=T0 + 5, transaction_start_timestamp_ms=T0,
    )  # fmt: skip
    log = segment(
        tmp_path, "__transaction_state-0",
        [(b"\x00\x00" + key.build(), b"\x00\x00" + value.build())],
    )  # fmt: skip
    out = kafkacodec_cli("dump", "--transaction-log-decoder", "--kafka-version", "4.0", "--quiet", log)
    (line,) = record_lines(out.stdout)
    assert line.endswith(
        " key: transaction_metadata::transactionalId=app-1 payload: producerId:4001,"
        f"producerEpoch:3,state=Ongoing,partitions=[orders-0,orders-5],"
        f"txnLastUpdateTimestamp={T0 + 5},txnTimeoutMs=60000"
    )


def test_scala_hash_set_order():
    """Scala 2.13's mutable.HashSet order of Kafka TopicPartitions: computed by hand for
    these hashes (Java's String.hashCode of "t" is 116; TopicPartition.hashCode is
    31 * (31 + p) + 116; the bucket is the improved hash & 15)."""
    # p=0: 1077 -> bucket 5; p=1: 1108 -> 4; p=2: 1139 -> 3; p=16: 1573 -> 5 (after p=0: 1077 < 1573)
    assert scala_hash_set_order([("t", 0), ("t", 1), ("t", 2), ("t", 16), ("t", 0)]) == [
        ("t", 2), ("t", 1), ("t", 0), ("t", 16),
    ]  # fmt: skip


def test_a_bad_record_is_printed_in_place_and_the_exit_is_non_zero(tmp_path):
    keys = keys_by_type("group-coordinator")
    good = next(r for r in ROWS if r["spec"] == "OffsetCommitValue" and r["version"] == 3)
    records = [
        (keys[1], bytes.fromhex(good["hex"])),
        (keys[1], bytes.fromhex(good["hex"])[:9]),  # truncated
        (b"\x00\x63" + b"\x00" * 4, b"\x00\x00"),  # record type 99
        (keys[1], bytes.fromhex(good["hex"])),
    ]
    log = segment(tmp_path, "__consumer_offsets-0", records)
    out = kafkacodec_cli("dump", "--offsets-decoder", "--quiet", log, ok=False)
    assert out.returncode == 1
    lines = record_lines(out.stdout)
    assert len(lines) == 4
    assert lines[0].endswith(good["dump"]) and lines[3].endswith(good["dump"])
    # Kafka's words: the value ends inside a fixed-size field, whose ByteBuffer read throws a
    # BufferUnderflowException (no message: null), wrapped by CoordinatorRecordSerde
    assert lines[1].endswith(
        " key: Error at offset 1, skipping. Could not read record with version 3 from value's buffer due to: null."
    )
    assert " payload: " not in lines[1]
    assert lines[2].endswith(" key: Unknown record type 99 at offset 2, skipping.")
    assert "2 records could not be decoded" in out.stderr


def test_control_records_of_a_kraft_snapshot(tmp_path):
    """A .checkpoint (a KRaft snapshot) prints its end offset and epoch first; the
    SnapshotHeader, SnapshotFooter, KRaftVersion and KRaftVoters control records print as
    kafka-dump-log prints them, LeaderChange as its type."""
    d = tmp_path / "__cluster_metadata-0"
    d.mkdir()
    rows = [r for r in ROWS if r["kind"] == "control" and r["version"] == 0 and r["instance"] == 1]
    batches = b"".join(
        kc.build_batch(
            [kc.Record(None, T0, bytes.fromhex(r["keyHex"]), bytes.fromhex(r["hex"]), [])],
            base_offset=i,
            is_control=True,
        )  # fmt: skip
        for i, r in enumerate(rows)
    )
    snap = d / "00000000000000000109-0000000002.checkpoint"
    snap.write_bytes(batches)
    # the vectors' text is kafka-dump-log's before 4.1, which printed LeaderChange by its type
    out = kafkacodec_cli("dump", "--quiet", "--deep-iteration", "--kafka-version", "4.0", snap)
    assert out.stdout.splitlines()[1] == "Snapshot end offset: 109, epoch: 2"
    lines = record_lines(out.stdout)
    for line, r in zip(lines, rows):
        assert line.endswith(" " + r["dump"])
    newest = record_lines(kafkacodec_cli("dump", "--quiet", "--deep-iteration", snap).stdout)
    changed = [(a, b) for a, b in zip(lines, newest) if a != b]
    assert changed and all(a.endswith("controlType: LEADER_CHANGE(2)") and " LeaderChange: {" in b
                           for a, b in changed)  # fmt: skip
    docs = [
        json.loads(x)
        for x in kafkacodec_cli(
            "dump", "--quiet", "--deep-iteration", "--json", snap
        ).stdout.splitlines()
    ]
    decoded = [d["records"][0]["control"].get("decoded") for d in docs]
    assert decoded[0] == json.loads(rows[0]["dump"].partition(" ")[2])


@pytest.mark.parametrize("flag", ["--offsets-decoder", "--print-data-log"])
def test_json_carries_the_decoded_structures(tmp_path, flag):
    keys = keys_by_type("group-coordinator")
    r = next(r for r in ROWS if r["spec"] == "OffsetCommitValue" and r["version"] == 4)
    log = segment(tmp_path, "__consumer_offsets-2", [(keys[1], bytes.fromhex(r["hex"]))])
    (doc,) = [
        json.loads(x)
        for x in kafkacodec_cli("dump", flag, "--json", "--quiet", log).stdout.splitlines()
    ]
    decoded = doc["records"][0]["decoded"]
    assert decoded["payload"] == json.loads(r["dump"]) and decoded["ok"] is True


def test_a_dump_drops_the_pages_it_has_read_and_prints_the_same(tmp_path, monkeypatch):
    """A large dump lets the kernel drop the file's pages behind it (bounded memory); the
    text is the same as without dropping."""
    from pathlib import Path

    from kafkacodec import dump
    from kafkacodec.internal.dump_format import offsets_parser
    from kafkacodec.log.index import map_file
    from kafkacodec.storage import fsio

    keys = keys_by_type("group-coordinator")
    r = next(r for r in ROWS if r["spec"] == "OffsetCommitValue" and r["version"] == 3)
    log = segment(tmp_path, "__consumer_offsets-1", [(keys[1], bytes.fromhex(r["hex"]))] * 300)

    def text() -> list[str]:
        data = map_file(Path(log))[0]
        return list(dump.dump_text(Path(log), data, print_data=True, decoder=offsets_parser))

    whole = text()
    monkeypatch.setattr(fsio, "DROP_EVERY", 4096)
    assert text() == whole and len(whole) == 2 + 2 * 300

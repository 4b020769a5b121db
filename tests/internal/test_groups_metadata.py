"""`kafkacodec groups` and `kafkacodec metadata`: answers from log.dirs with no broker. The
records are laid out by hand here (OffsetCommitKey version 1, OffsetCommitValue version 3)
or built by the generated codecs, which the Kafka-written vectors check."""

from __future__ import annotations

import json

from conftest import kafkacodec_cli, metadata_value
from groups_sample import T0, write_groups_log_dirs

import kafkacodec as kc
from kafkacodec.internal import DEFAULT


def test_groups_fold_commits_tombstones_and_transactions(tmp_path):
    logs = write_groups_log_dirs(tmp_path / "data")
    out = kafkacodec_cli("groups", logs)
    assert out.stdout.splitlines() == [
        "GROUP   TOPIC     PARTITION CURRENT-OFFSET LOG-END-OFFSET LAG",
        "billing orders    0         8              10             2",
        "other   elsewhere 0         4              -              -",
        "txn-app orders    0         9              10             1",
    ]
    assert "1 transactional commit with no marker yet" in out.stderr
    rows = [
        json.loads(x)
        for x in kafkacodec_cli("groups", logs, "--json", "--group", "billing").stdout.splitlines()
    ]
    assert rows == [{
        "group": "billing", "topic": "orders", "partition": 0, "current_offset": 8,
        "log_end_offset": 10, "lag": 2, "leader_epoch": 3, "metadata": "", "commit_timestamp": T0,
        "offsets_topic_offset": 2,
    }]  # fmt: skip


def test_groups_without_consumer_offsets_cannot_answer(tmp_path):
    (tmp_path / "data").mkdir()
    out = kafkacodec_cli("groups", tmp_path / "data", ok=False)
    assert out.returncode == 2 and "no __consumer_offsets partition" in out.stderr


def test_metadata_folds_the_snapshot_then_the_log(tmp_path):
    d = tmp_path / "meta" / "__cluster_metadata-0"
    d.mkdir(parents=True)
    orders, gone = bytes(range(16)), bytes(range(1, 17))
    # An endpoint of RegisterBrokerRecord version 0 ...
    reg = __import__("kafkacodec.generated.register_broker_record", fromlist=["x"])
    endpoint = reg.BrokerEndpoint(
        version=0, name="PLAINTEXT", host="b1", port=9092, security_protocol=0, tagged_fields=[]
    )
    snapshot_records = [
        metadata_value("RegisterBrokerRecord", 0, broker_id=1, incarnation_id=bytes(16), broker_epoch=5,
                       end_points=[endpoint], features=[], rack=None, fenced=1),
        metadata_value("TopicRecord", 0, name="orders", topic_id=orders),
        metadata_value("PartitionRecord", 0, partition_id=0, topic_id=orders, replicas=[1], isr=[1],
                       removing_replicas=[], adding_replicas=[], leader=1, leader_epoch=4, partition_epoch=7),
        metadata_value("TopicRecord", 0, name="gone", topic_id=gone),
        metadata_value("FeatureLevelRecord", 0, name="metadata.version", feature_level=21),
    ]  # fmt: skip
    snap = kc.build_batch([kc.Record(None, T0, None, v, []) for v in snapshot_records])
    (d / "00000000000000000005-0000000002.checkpoint").write_bytes(snap)
    log_records = [
        metadata_value("TopicRecord", 0, name="stale", topic_id=bytes(16)),  # offset 4: in the snapshot
        metadata_value("UnfenceBrokerRecord", 0, id=1, epoch=5),
        b"",  # a PartitionChangeRecord with only its ISR tag: built below
        metadata_value("RemoveTopicRecord", 0, topic_id=gone),
        metadata_value("ConfigRecord", 0, resource_type=2, resource_name="orders", name="retention.ms", value="1000"),
    ]  # fmt: skip
    tagged = DEFAULT.top("partition_change_record").__module__
    change_mod = __import__(tagged, fromlist=["x"])
    isr = change_mod.PartitionChangeRecordTaggedField(
        version=0,
        tag=0,
        value=change_mod.PartitionChangeRecordTag0(version=0, isr=[1, 2], unread=b""),
    )
    log_records[2] = (
        bytes([1, 5, 0])
        + change_mod.PartitionChangeRecord(
            version=0, partition_id=0, topic_id=orders, tagged_fields=[isr]
        ).build()
    )
    log = kc.build_batch([kc.Record(None, T0, None, v, []) for v in log_records], base_offset=4)
    (d / "00000000000000000000.log").write_bytes(log)
    doc = json.loads(kafkacodec_cli("metadata", tmp_path / "meta", "--json").stdout)
    assert doc["snapshot"] == "00000000000000000005-0000000002.checkpoint"
    assert doc["brokers"] == [{"id": 1, "epoch": 5, "rack": None, "fenced": False,
                               "in_controlled_shutdown": False, "endpoints": ["PLAINTEXT://b1:9092"]}]  # fmt: skip
    assert [t["name"] for t in doc["topics"]] == ["orders"]
    (p,) = doc["topics"][0]["partitions"]
    assert (p["leader"], p["leader_epoch"], p["partition_epoch"], p["isr"]) == (1, 4, 8, [1, 2])
    assert doc["features"] == {"metadata.version": 21}
    assert doc["configs"] == [
        {"resource_type": "TOPIC", "resource_name": "orders", "configs": {"retention.ms": "1000"}}
    ]
    text = kafkacodec_cli("metadata", d).stdout
    assert "  orders topicId AAECAwQFBgcICQoLDA0ODw partitions 1" in text


def test_native_partition_changes_fold_as_python_does(tmp_path, monkeypatch):
    """cluster.py's fold with the native loop of PartitionChangeRecords and without it:
    the same state and problems, over changes of every shape (a list or the leader set or
    left out, a leader of -2, a tag twice, a tag of bytes, a partition or a topic no
    PartitionRecord created, a NoOpRecord and other records between them)."""
    import importlib
    import random

    from kafkacodec.internal import cluster

    change = importlib.import_module(DEFAULT.top("partition_change_record").__module__)
    orders, other = bytes(range(16)), bytes(range(2, 18))
    rnd = random.Random(5)

    def tag(number: int, version: int = 0, **fields):
        cls = getattr(change, f"PartitionChangeRecordTag{number}")
        if "tag_in_version" in cls.FIELDS:  # (a tag of some versions only: its check reads nothing)
            fields["tag_in_version"] = b""
        return change.PartitionChangeRecordTaggedField(version=version, tag=number,
                                                        value=cls(version=version, unread=b"", **fields))  # fmt: skip

    values = [metadata_value("TopicRecord", 0, name="orders", topic_id=orders)]
    values += [metadata_value("PartitionRecord", 0, partition_id=p, topic_id=orders, replicas=[1, 2], isr=[1, 2],
                              removing_replicas=[], adding_replicas=[], leader=1, leader_epoch=4, partition_epoch=7)
               for p in range(3)]  # fmt: skip
    for i in range(400):
        tags = []
        if rnd.random() < 0.6:
            tags.append(tag(0, isr=rnd.sample([1, 2, 3], rnd.randint(0, 3))))
        if rnd.random() < 0.6:
            tags.append(tag(1, leader=rnd.choice([-2, -1, 1, 2, 3])))
        if rnd.random() < 0.3:
            tags.append(tag(2, replicas=[3, 1]))
        if rnd.random() < 0.1:
            tags.append(tag(1, leader=9))  # the same tag again: the last wins
        if rnd.random() < 0.1:
            tags.append(change.PartitionChangeRecordTaggedField(version=0, tag=1, value=b"\x02"))  # bytes
        version = rnd.choice([0, 2])
        if version == 2:  # KIP-966's lists, the recovery state, JBOD's directories
            if rnd.random() < 0.5:
                tags.append(tag(6, 2, eligible_leader_replicas=rnd.sample([1, 2, 3], rnd.randint(0, 2))))
            if rnd.random() < 0.3:
                tags.append(tag(7, 2, last_known_elr=[rnd.choice([1, 2, 3])]))
            if rnd.random() < 0.2:
                tags.append(tag(5, 2, leader_recovery_state=rnd.choice([-1, 0, 1])))
            if rnd.random() < 0.1:
                tags.append(tag(8, 2, directories=[bytes([7] * 16), bytes(range(16))]))
        rnd.shuffle(tags)
        topic = other if rnd.random() < 0.05 else orders
        body = change.PartitionChangeRecord(version=version, partition_id=rnd.choice([0, 1, 2, 7]),
                                            topic_id=topic, tagged_fields=tags).build()  # fmt: skip
        values.append(bytes([1, 5, version]) + body)
        if rnd.random() < 0.1:
            values.append(metadata_value("NoOpRecord", 0))
        if rnd.random() < 0.05:
            values.append(metadata_value("FeatureLevelRecord", 0, name="metadata.version", feature_level=i))
    d = tmp_path / "__cluster_metadata-0"
    d.mkdir()
    batches = [kc.build_batch([kc.Record(None, T0, None, v, []) for v in values[i : i + 37]], base_offset=i)
               for i in range(0, len(values), 37)]  # fmt: skip
    (d / "00000000000000000000.log").write_bytes(b"".join(batches))
    applied = []

    def counted(items, start, *rest):
        stop = real(items, start, *rest)
        applied.append(stop - start)
        return stop

    real = cluster._partition_changes
    monkeypatch.setattr(cluster, "_partition_changes", counted)
    native = cluster.fold_cluster(d)
    assert sum(applied) > 200  # the native loop applied most changes, not the Python one
    monkeypatch.setattr(cluster, "_partition_changes", None)
    python = cluster.fold_cluster(d)
    assert native.to_dict() == python.to_dict()
    folded = python.to_dict()["topics"][0]["partitions"]
    assert any(p["elr"] for p in folded) and any(p["directories"] for p in folded)
    assert python.problems and python.topics  # changes of unknown partitions were reported

"""Several brokers' disks read as one cluster (kafkacodec.brokers), on disks written by
kafkacodec.sample.write_cluster_disks with the scenario's own numbers as the expectation;
the multi-broker Kafka drill (tests/cluster_drill.py, tests/kafka/test_kafka_cluster.py)
judges the same code against a real cluster. meta.properties as java.util.Properties and
Kafka's MetaProperties read it."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest
from conftest import kafkacodec_cli as cli

from kafkacodec.brokers import compare_all, java_properties, open_disks, read_meta_properties
from kafkacodec.log import open_log
from kafkacodec.runtime.errors import KafkacodecError, LogError
from kafkacodec.sample import write_cluster_disks


def disks_of(written: dict, **kw):
    dirs = [p for paths in written["log_dirs"].values() for p in paths]
    return open_disks([open_log(p) for p in dirs], **kw), dirs


def records(p) -> list[tuple]:
    return [(r.offset, r.key, r.value) for _s, _b, r in p.read()]


def test_a_clean_cluster_reads_each_partition_once_from_its_leader(tmp_path):
    w = write_cluster_disks(tmp_path, topics=(("orders", 3), ("clicks", 2)), records=200)
    disks, _ = disks_of(w)
    served = disks.served()
    names = sorted(f"{p.topic}-{p.partition}" for p in served)
    assert names == ["__cluster_metadata-0", "clicks-0", "clicks-1", "orders-0", "orders-1", "orders-2"]
    for name, want in w["partitions"].items():
        pr = disks.partitions[(name.rsplit("-", 1)[0], int(name.rsplit("-", 1)[1]))]
        assert pr.served.node_id == want["leader"] and "leader the metadata names" in pr.why
        assert len(pr.replicas) == 3
        assert records(pr.served.partition) == records(open_log(want["paths"][want["replicas"][1]]))
    for rep in compare_all(disks):
        assert sorted(r.status for r in rep.replicas) == ["in sync", "in sync", "serves"]
        assert rep.visible == (0, 200) and rep.above_high_watermark == 0


def test_a_lagging_follower_is_said_and_the_leader_read(tmp_path):
    w = write_cluster_disks(tmp_path, scenario="lagging", records=500, batch_records=10)
    disks, _ = disks_of(w)
    for rep in compare_all(disks):
        want = w["partitions"][rep.partition]
        lagging = want["replicas"][2]
        by = {r.node_id: r for r in rep.replicas}
        assert by[want["leader"]].status == "serves"
        assert by[lagging].status == "lagging" and by[lagging].in_isr is False
        assert by[lagging].lag_offsets == want["ends"][want["leader"]] - want["ends"][lagging] == 200
        served = disks.partitions[("orders", rep.index)].served.partition
        assert by[lagging].lag_bytes == sum(s.size for s in served.segments) - _bytes_below(served, 300)


def _bytes_below(p, offset: int) -> int:
    return sum(b.size for s in p.segments for b in s.batches() if b.last_offset < offset)


def test_an_unclean_election_predicts_each_truncation(tmp_path):
    w = write_cluster_disks(tmp_path, scenario="unclean", records=1000)
    disks, _ = disks_of(w)
    for rep in compare_all(disks):
        want = w["partitions"][rep.partition]
        assert rep.served_broker == f"broker {want['leader']}"
        for r in rep.replicas:
            if r.node_id in want["cut"]:
                assert r.status == "diverged" and r.truncate_to == want["cut"][r.node_id] == 300
                assert r.dropped_records == want["ends"][r.node_id] - 300
                assert r.dropped_offsets == (300, want["ends"][r.node_id] - 1)
        # a consumer after the restart reads the new leader's 420 records, up to its high watermark
        assert rep.visible == (0, 420)


def test_directories_that_are_no_live_replica_are_set_apart_and_named(tmp_path):
    w = write_cluster_disks(tmp_path, records=100, set_apart=True)
    disks, _ = disks_of(w)
    kinds = sorted(s.kind for s in disks.set_apart)
    assert kinds == ["delete", "future", "stray"]
    read = {str(p.path) for p in disks.served()}
    assert not any(s.path in read for s in disks.set_apart)
    # one broker's disks alone: the same directories set apart, its partitions read as they are
    one = open_disks([open_log(p) for p in w["log_dirs"][3]])
    assert sorted(s.kind for s in one.set_apart) == ["future"]
    assert one.metadata is None  # (no partition with two replicas: nothing to choose)


def test_a_topic_the_metadata_does_not_hold_is_stray(tmp_path):
    w = write_cluster_disks(tmp_path, records=50)
    ghost = Path(w["log_dirs"][1][0]) / "ghost-0"
    shutil.copytree(Path(w["partitions"]["orders-0"]["paths"][1]), ghost)
    (ghost / "partition.metadata").unlink()
    disks, _ = disks_of(w)
    assert ("ghost", 0) not in disks.partitions
    assert [s.kind for s in disks.set_apart if s.path == str(ghost)] == ["stray"]


def test_without_metadata_the_latest_epoch_then_the_longest_log_serves(tmp_path):
    w = write_cluster_disks(tmp_path, scenario="unclean", records=1000)
    for paths in w["log_dirs"].values():
        shutil.rmtree(Path(paths[0]) / "__cluster_metadata-0")
    disks, _ = disks_of(w)
    assert disks.metadata is None
    for rep in compare_all(disks):
        # the new leader's epoch 2 beats the old leader's longer log in epoch 0
        assert rep.served_broker == f"broker {w['partitions'][rep.partition]['leader']}"
        assert "latest leader epoch" in rep.why


def test_disks_of_two_clusters_or_one_dir_twice_are_refused(tmp_path):
    a = write_cluster_disks(tmp_path / "a", records=20, seed=1)
    b = write_cluster_disks(tmp_path / "b", records=20, seed=2)
    with pytest.raises(KafkacodecError, match="different clusters"):
        open_disks([open_log(a["log_dirs"][1][0]), open_log(b["log_dirs"][2][0])])
    twin = tmp_path / "copy-of-broker-1"
    shutil.copytree(a["log_dirs"][1][0], twin)
    with pytest.raises(KafkacodecError, match="one log dir .*give it once"):
        open_disks([open_log(a["log_dirs"][1][0]), open_log(twin)])


def test_a_broker_with_a_partition_in_two_log_dirs_reads_the_metadatas_dir(tmp_path):
    w = write_cluster_disks(tmp_path, records=60)
    a, b = w["log_dirs"][3]
    held = next(p for p in Path(a).iterdir() if p.name.startswith("orders-"))
    shutil.copytree(held, Path(b) / held.name)
    disks, _ = disks_of(w)
    (dup,) = [s for s in disks.set_apart if s.kind == "duplicate"]
    assert dup.path == str(Path(b) / held.name) and "Duplicate log directories" in dup.why


def test_java_properties_as_java_reads_them(tmp_path):
    text = ("# a comment\n! another\n  key1 = value one  \nkey2:v2\nkey3 v3\nkey\\ 4=x\\ty\n"
            "multi = a\\\n    b\\\\\nuni=\\u0041\\n\nempty\n")  # fmt: skip
    props = java_properties(text, tmp_path / "x")
    assert props == {"key1": "value one  ", "key2": "v2", "key3": "v3", "key 4": "x\ty",
                     "multi": "ab\\", "uni": "A\n", "empty": ""}  # fmt: skip


@pytest.mark.parametrize("text, problem", [
    ("version=1\ncluster.id=x\n", "node.id was not found"),
    ("version=1\nnode.id=3\n", "cluster.id was not found"),
    ("version=2\nnode.id=3\ncluster.id=x\n", "unknown meta.properties version"),
    ("version=1\nnode.id=3 \ncluster.id=x\n", "not a 32-bit integer"),  # (parseInt: no blank)
    ("version=1\nnode.id=3\ncluster.id=x\ndirectory.id=nope\n", "not a Uuid"),
])  # fmt: skip
def test_meta_properties_kafka_refuses_are_named(tmp_path, text, problem):
    (tmp_path / "meta.properties").write_text(text)
    with pytest.raises(LogError, match=problem) as err:
        read_meta_properties(tmp_path)
    assert "meta.properties" in str(err.value)


def test_meta_properties_of_a_zookeeper_broker(tmp_path):
    (tmp_path / "meta.properties").write_text("#\n#Tue Jan 02 03:04:05 UTC 2024\nbroker.id=7\nversion=0\n"
                                              "cluster.id=abc\n")  # fmt: skip
    meta = read_meta_properties(tmp_path)
    assert (meta.version, meta.node_id, meta.cluster_id, meta.directory_id) == (0, 7, "abc", None)


def test_replicas_command_text_json_and_exit_code(tmp_path):
    w = write_cluster_disks(tmp_path / "u", scenario="unclean", records=1000, set_apart=True)
    dirs = [p for paths in w["log_dirs"].values() for p in paths]
    out = cli("replicas", *dirs, ok=False)
    assert out.returncode == 1  # diverged replicas: data that Kafka will drop
    assert "Kafka truncates it to 300 when it rejoins, dropping 250 records" in out.stdout
    assert "not read as a partition:" in out.stdout and "-future" in out.stdout
    assert "3 partitions on 3 brokers (4 log dirs): 0 in sync, 0 lagging, 6 diverged" in out.stderr
    rows = [json.loads(line) for line in cli("replicas", *dirs, "--json", ok=False).stdout.splitlines()]
    parts = [r for r in rows if "partition" in r]
    assert {r["partition"] for r in parts} == {"orders-0", "orders-1", "orders-2"}
    cut = {(r["partition"], x["node_id"]): x["truncate_to"] for r in parts for x in r["replicas"]}
    for name, want in w["partitions"].items():
        for node, offset in want["cut"].items():
            assert cut[(name, node)] == offset
    assert len([r for r in rows if "set_apart" in r]) == 3
    clean = write_cluster_disks(tmp_path / "c", records=100)
    out = cli("replicas", *[p for paths in clean["log_dirs"].values() for p in paths], "--topic", "orders")
    assert "6 in sync, 0 lagging, 0 diverged" in out.stderr


def test_groups_reads_one_replica_of_each_partition(tmp_path):
    """__consumer_offsets on three brokers, one replica lagging (its log a prefix of the
    others'): `groups` answers from the replica Kafka would serve, as from that replica
    alone; a lagging copy's older commits never win."""
    from kafkacodec.sample import write_consumer_offsets

    full = write_consumer_offsets(tmp_path / "source", commits=300)
    with open_log(full) as p:
        cut = list(p.segments[0].batches())[10].position  # 10 of its 30 batches: a lagging copy
    for n in (1, 2, 3):
        d = tmp_path / f"broker-{n}" / "kafka-logs"
        shutil.copytree(full, d / full.name)
        (d / "meta.properties").write_text(f"version=1\nnode.id={n}\ncluster.id=c1\n")
        if n == 3:
            log = d / full.name / "00000000000000000000.log"
            log.write_bytes(log.read_bytes()[:cut])
    dirs = [tmp_path / f"broker-{n}" / "kafka-logs" for n in (1, 2, 3)]
    alone = cli("groups", tmp_path / "source", "--json").stdout
    together = cli("groups", *dirs, "--json").stdout
    assert together == alone and together
    lagging = cli("groups", dirs[2], "--json").stdout
    assert lagging != alone  # (the lagging copy alone holds older commits)


def test_a_damaged_replica_is_reported_not_a_crash(tmp_path):
    """A replica whose last segment is not Kafka data: without metadata it ranks last (its
    end cannot be read, said), the others are served and compared; the replicas command
    names it and exits 1, no traceback."""
    w = write_cluster_disks(tmp_path, records=100)
    for paths in w["log_dirs"].values():
        shutil.rmtree(Path(paths[0]) / "__cluster_metadata-0")
    bad = Path(w["partitions"]["orders-0"]["paths"][1])
    log = sorted(bad.glob("*.log"))[-1]
    log.write_bytes(b"\xff" * 300)
    for index in bad.glob("*index"):
        index.unlink()
    disks, dirs = disks_of(w)
    pr = disks.partitions[("orders", 0)]
    assert pr.served.node_id != 1
    assert any(str(bad) in p and "cannot be read" in p for p in disks.problems)
    out = cli("replicas", *dirs, "--topic", "orders", ok=False)
    assert out.returncode == 1 and str(bad) in out.stdout + out.stderr

"""Spark's own Kafka source judges the kafkacodec format on a cluster's disks (issue 56): a
controller and three brokers of the newest release (broker 3 with two log.dirs), topics
replicated three ways and written with acks=all (every codec, headers, null keys and
values, committed and aborted transactions), one follower stopped while writes went on
(it lags). `format("kafka")` against the live cluster and `format("kafkacodec")` over every
broker's log.dirs at once must give the same rows, row for row, in every column: each
partition read once, from its leader's replica, never once per replica."""

import json

import pytest
from kafka_broker import VERSIONS, Cluster, record

pytest.importorskip("pyspark")

pytestmark = [pytest.mark.kafka, pytest.mark.spark, pytest.mark.slow]

CODECS = ("none", "gzip", "snappy", "lz4", "zstd")
COLUMNS = ("key", "value", "topic", "partition", "offset", "timestamp", "timestampType", "headers")


def workload(first: int) -> dict:
    producers = [{"config": {"compression.type": codec, "linger.ms": "20", "batch.size": "2048", "acks": "all"},
                  "records": [record("codecs", first + 100 * n + i, partition=i % 3) for i in range(60)]}
                 for n, codec in enumerate(CODECS)]  # fmt: skip
    producers.append({"config": {"transactional.id": f"txn-{first}", "compression.type": "lz4"},
                      "transactions": [{"commit": t % 3 != 1,
                                        "records": [record("txn", first + 10 * t + i, partition=i % 2)
                                                    for i in range(10)]} for t in range(6)]})  # fmt: skip
    return {"producers": producers}


@pytest.fixture(scope="module")
def cluster(tmp_path_factory):
    root = tmp_path_factory.mktemp("kafka-cluster-spark")
    build = root / "build"
    build.mkdir()
    c = Cluster(VERSIONS[-1], root / "cluster")
    c.build = build
    with c:
        for topic, n in (("codecs", 3), ("txn", 2)):
            c.client(build, "create", c.bootstrap, topic, n, "replication.factor=3", "min.insync.replicas=2")
            c.wait_for(build, topic, lambda ps: all(len(p["isr"]) == 3 for p in ps.values()))
        c.client(build, "produce", c.bootstrap, _spec(build, workload(0)))
        c.stop(2)  # a follower (or a leader: its partitions move) stops; writes go on
        c.client(build, "produce", c.bootstrap, _spec(build, workload(10_000)))
        yield c


def _spec(build, spec):
    path = build / f"spec-{len(list(build.glob('spec-*')))}.json"
    path.write_text(json.dumps(spec))
    return path


def rows(df) -> list[tuple]:
    return sorted((tuple(r) for r in df.select(*COLUMNS).collect()), key=lambda r: (r[2], r[3], r[4]))


@pytest.mark.parametrize("isolation", ["read_uncommitted", "read_committed"])
def test_a_live_cluster_and_its_disks_give_the_same_rows(spark, cluster, isolation):
    options = {"includeHeaders": "true", "subscribe": "codecs,txn", "kafka.isolation.level": isolation}
    kafka = (spark.read.format("kafka").option("kafka.bootstrap.servers", cluster.bootstrap)
             .option("kafkaConsumer.pollTimeoutMs", "20000"))  # fmt: skip
    ours = spark.read.format("kafkacodec")
    for k, v in options.items():
        kafka, ours = kafka.option(k, v), ours.option(k, v)
    want = rows(kafka.load())
    got = rows(ours.load([str(d) for d in cluster.log_dirs()]))
    assert len(want) > 600 and got == want
    assert len({(r[2], r[3], r[4]) for r in got}) == len(got)  # each record once

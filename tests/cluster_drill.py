"""A multi-broker Kafka judges kafkacodec's reading of a cluster's disks (issue 56).

Each scenario runs a KRaft cluster (kafka_broker.Cluster: a controller and three brokers,
broker 3 with two log.dirs), makes something happen to a topic's replicas, stops the
cluster cleanly and copies every node's disks; kafkacodec reads the copy (which replica it
serves each partition from, what the others hold, where Kafka will truncate them); then
the cluster restarts on its own disks and Kafka's answers judge: the broker's own
"Truncating to offset N" lines, the records a consumer fetches, the replicas' ends.

  unclean  acks=1 writes while followers stop one after the other, the leader killed, the
           most lagging follower elected uncleanly (Admin.electLeaders UNCLEAN), more
           writes: the old leader and the other follower diverged;
  lagging  a follower stopped while writes go on: it lags, in sync again after the restart;
  moves    a replica moved between a broker's log dirs with its copy throttled (a -future
           directory on the disks), a topic deleted while a broker was down (its replica
           there is stray on the restart), a partition reassigned away from a broker.

    python cluster_drill.py --cases 50 --seed 1 --version 4.0.0 --root ../out/cluster-drill

The test suite runs a seeded subset (tests/kafka/test_kafka_cluster.py)."""

from __future__ import annotations

import argparse
import json
import random
import re
import shutil
import sys
import time
from dataclasses import dataclass, field
from pathlib import Path

from kafka_broker import VERSIONS, Cluster, HarnessError, as_consumed, record

from kafkacodec.brokers import compare_all, open_disks
from kafkacodec.log import open_log

KINDS = ("unclean", "lagging", "moves")
#: UnifiedLog.truncateTo's line, with its log ident (the partition and its log dir).
TRUNCATED = re.compile(r"\[UnifiedLog partition=(?P<partition>\S+), dir=(?P<dir>[^\]]+)\] "
                       r"Truncating to offset (?P<offset>\d+)")  # fmt: skip


@dataclass
class Case:
    kind: str
    seed: int
    version: str
    #: what kafkacodec predicted and what Kafka did, by replica ("topic-p@broker")
    predicted: dict = field(default_factory=dict)
    judged: dict = field(default_factory=dict)
    problems: list[str] = field(default_factory=list)

    @property
    def agrees(self) -> bool:
        return not self.problems and self.predicted == self.judged


def produce(cluster: Cluster, build: Path, topic: str, first: int, count: int, *, acks: str,
            codec: str = "none", partition: int = 0) -> None:  # fmt: skip
    cluster.client(build, "produce", cluster.bootstrap, _spec(build, {"producers": [{
        "config": {"acks": acks, "compression.type": codec, "linger.ms": "5", "batch.size": "4096",
                   "enable.idempotence": "false", "retries": "3"},
        "records": [record(topic, first + i, partition=partition) for i in range(count)]}]}))  # fmt: skip


def _spec(build: Path, spec: dict) -> Path:
    path = build / f"spec-{time.monotonic_ns()}.json"
    path.write_text(json.dumps(spec))
    return path


def disks_of(copy: list[Path]):
    return open_disks([open_log(p) for p in copy])


def truncations(node, since: int, partition: str) -> list[int]:
    """The offsets a broker's log says it truncated a partition's replica to since `since`."""
    return [int(m["offset"]) for m in (TRUNCATED.search(line) for line in node.log_text(since).splitlines())
            if m and m["partition"] == partition]  # fmt: skip


def run_unclean(cluster: Cluster, build: Path, case: Case, rnd: random.Random, copy_to: Path) -> None:
    """Writes with acks=1 while the followers stop one after the other, the leader killed,
    the follower that stopped first elected uncleanly, more writes; disks copied; then the
    cluster restarted (the new leader first) and the old leader and the other follower
    truncated by Kafka: each truncation compared with kafkacodec's prediction."""
    topic = f"unclean-{case.seed}"
    codec = rnd.choice(["none", "lz4", "zstd", "gzip", "snappy"])
    a = rnd.randint(20, 200)
    b = a + rnd.randint(0, 150)
    c = b + rnd.randint(1, 100)
    d = rnd.randint(0, 160)
    cluster.client(build, "create", cluster.bootstrap, topic, 1, "replication.factor=3",
                   "min.insync.replicas=1", "unclean.leader.election.enable=true")  # fmt: skip
    parts = cluster.wait_for(build, topic, lambda ps: len(ps[0]["isr"]) == 3)
    leader = parts[0]["leader"]
    followers = [r for r in parts[0]["replicas"] if r != leader]
    rnd.shuffle(followers)
    elected, other = followers
    produce(cluster, build, topic, 0, a, acks="all", codec=codec)
    cluster.stop(elected)
    produce(cluster, build, topic, a, b - a, acks="1", codec=codec)
    cluster.stop(other)
    produce(cluster, build, topic, b, c - b, acks="1", codec=codec)
    cluster.kill(leader)
    cluster.start(elected)
    cluster.client(build, "elect", cluster.bootstrap, topic, "UNCLEAN", 0)
    cluster.wait_for(build, topic, lambda ps: ps[0]["leader"] == elected)
    produce(cluster, build, topic, c, d, acks="1", codec=codec)
    cluster.stop()
    copy = cluster.copy_disks(copy_to)
    disks = disks_of(copy)
    (report,) = [r for r in compare_all(disks) if r.topic == topic]
    name = f"{topic}-0"
    if report.served_broker != f"broker {elected}":
        case.problems.append(f"served from {report.served_broker}, Kafka's leader is broker {elected}")
    for r in report.replicas:
        if r.node_id != elected:
            case.predicted[f"{name}@{r.node_id}"] = r.truncate_to
    expected_records = as_consumed(disks.partitions[(topic, 0)].served.partition)
    # the restart: the new leader first (the ISR's only member), then the others
    cluster.start(elected)
    cluster.wait_for(build, topic, lambda ps: ps[0]["leader"] == elected)
    marks = {n: cluster.brokers[n].server_log.stat().st_size for n in (leader, other)}
    cluster.start()
    cluster.wait_for(build, topic, lambda ps: len(ps[0]["isr"]) == 3, timeout=120)
    for n in (leader, other):
        cut = truncations(cluster.brokers[n], marks[n], name)
        case.judged[f"{name}@{n}"] = cut[0] if cut else None
    fetched = cluster.client_consume(build, topic)
    if fetched != expected_records:
        case.problems.append(f"{name}: a consumer fetched {len(fetched)} records after the restart, "
                             f"kafkacodec read {len(expected_records)} from the replica it serves")  # fmt: skip


RUNNERS = {"unclean": run_unclean}


def run_case(kind: str, seed: int, version: str, root: Path) -> Case:
    case = Case(kind, seed, version)
    rnd = random.Random(f"{kind}-{seed}")
    work = root / f"{version}-{kind}-{seed}"
    shutil.rmtree(work, ignore_errors=True)
    build = work / "build"
    build.mkdir(parents=True)
    cluster = Cluster(version, work / "cluster")
    try:
        cluster.start()
        RUNNERS[kind](cluster, build, case, rnd, work / "copy")
    finally:
        cluster.kill()
    return case


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--cases", type=int, default=50, help="cases per kind and release")
    ap.add_argument("--seed", type=int, default=1)
    ap.add_argument("--version", action="append", help=f"a Kafka release (default {', '.join(VERSIONS)})")
    ap.add_argument("--kind", action="append", choices=KINDS)
    ap.add_argument("--root", type=Path, default=Path("../out/cluster-drill"))
    args = ap.parse_args()
    bad = 0
    for version in args.version or VERSIONS:
        for kind in args.kind or [k for k in KINDS if k in RUNNERS]:
            for seed in range(args.seed, args.seed + args.cases):
                try:
                    case = run_case(kind, seed, version, args.root)
                except HarnessError as err:
                    print(f"{version} {kind} {seed}: harness: {err}", flush=True)
                    bad += 1
                    continue
                print(f"{version} {kind} {seed}: {'agrees' if case.agrees else 'DISAGREES'} "
                      f"predicted {case.predicted} judged {case.judged} {case.problems}", flush=True)  # fmt: skip
                bad += not case.agrees
    return 1 if bad else 0


if __name__ == "__main__":
    sys.exit(main())

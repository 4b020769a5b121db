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

from conftest import kafkacodec_cli as cli
from kafka_broker import T0, VERSIONS, Cluster, HarnessError, as_consumed, java, record

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


def copy_dirs(copy_to: Path) -> list[Path]:
    """Every log dir of a copy of the cluster's disks (copy_to/<node>/<log dir>)."""
    return sorted(d for node in Path(copy_to).iterdir() for d in node.iterdir() if d.is_dir())


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
    first, second = followers  # stopped in this order
    elected = rnd.choice(followers)
    other = second if elected == first else first
    produce(cluster, build, topic, 0, a, acks="all", codec=codec)
    cluster.stop(first)
    produce(cluster, build, topic, a, b - a, acks="1", codec=codec)
    cluster.stop(second)
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


def run_lagging(cluster: Cluster, build: Path, case: Case, rnd: random.Random, copy_to: Path) -> None:
    """A follower stopped while acks=all writes go on (min.insync.replicas 2): it lags; the
    disks copied after a clean shutdown read as the live cluster was read (each partition
    from its leader); after the restart the follower catches up with no truncation."""
    topic = f"lagging-{case.seed}"
    codec = rnd.choice(["none", "lz4", "zstd"])
    parts_n = rnd.randint(1, 3)
    cluster.client(build, "create", cluster.bootstrap, topic, parts_n, "replication.factor=3",
                   "min.insync.replicas=2")  # fmt: skip
    cluster.wait_for(build, topic, lambda ps: all(len(p["isr"]) == 3 for p in ps.values()))
    before, after = rnd.randint(10, 300), rnd.randint(1, 300)
    for p in range(parts_n):
        produce(cluster, build, topic, 1000 * p, before, acks="all", codec=codec, partition=p)
    stopped = rnd.choice(list(cluster.brokers))
    cluster.stop(stopped)
    for p in range(parts_n):
        produce(cluster, build, topic, 1000 * p + before, after, acks="all", codec=codec, partition=p)
    live = cluster.client_consume(build, topic)
    leaders = {p: v["leader"] for p, v in cluster.describe(build, topic).items()}
    group = f"g-{case.seed}"
    cluster.client(build, "commit", cluster.bootstrap, group, "classic", topic,
                   *(f"{p}={rnd.randint(0, before + after)}" for p in range(parts_n)))  # fmt: skip
    described = java(case.version, "org.apache.kafka.tools.consumer.group.ConsumerGroupCommand",
                     "--bootstrap-server", cluster.bootstrap, "--describe", "--group", group).stdout  # fmt: skip
    listed = cluster.list_offsets(build, topic, T0, T0 + 10 * (before // 2))
    cluster.stop()
    disks = disks_of(cluster.copy_disks(copy_to))
    read = []
    for rep in (r for r in compare_all(disks) if r.topic == topic):
        by = {r.node_id: r for r in rep.replicas}
        case.predicted[f"{rep.partition}@{stopped}"] = ("lagging", by[stopped].lag_offsets)
        case.judged[f"{rep.partition}@{stopped}"] = ("lagging", after)
        served = disks.partitions[(topic, rep.index)].served
        if served.node_id == stopped or served.ends().log_end != by[leaders[rep.index]].log_end:
            case.problems.append(f"{rep.partition}: served from {rep.served_broker}, which does not hold "
                                 f"what the live leader {leaders[rep.index]} held")  # fmt: skip
        read += as_consumed(disks.partitions[(topic, rep.index)].served.partition)
    key = lambda r: (r["partition"], r["offset"])  # noqa: E731
    if sorted(read, key=key) != sorted(live, key=key):
        case.problems.append(f"{topic}: kafkacodec read {len(read)} records from the disks, the live "
                             f"cluster's consumer {len(live)}, or other ones")  # fmt: skip
    # groups as kafka-consumer-groups --describe; lookup as Admin.listOffsets
    kafka = {tuple(c[:3]) + tuple(None if x == "-" else int(x) for x in c[3:6])
             for c in (line.split() for line in described.splitlines())
             if len(c) >= 6 and c[0] == group}  # fmt: skip
    kafka = {(g, t, int(p), *rest) for g, t, p, *rest in kafka}
    rows = [json.loads(line) for line in cli("groups", *copy_dirs(copy_to), "--json").stdout.splitlines()]
    got = {(r["group"], r["topic"], r["partition"], r["current_offset"], r["log_end_offset"], r["lag"])
           for r in rows if r["group"] == group}  # fmt: skip
    if got != kafka or len(got) != parts_n:
        case.problems.append(f"groups: {sorted(got)}; kafka-consumer-groups: {sorted(kafka)}")
    for p, answers in listed.items():
        for spec, ts in (("latest", -1), ("earliest", -2), ("max_timestamp", -3), (str(T0), T0),
                         (str(T0 + 10 * (before // 2)), T0 + 10 * (before // 2))):  # fmt: skip
            out = cli("lookup", *copy_dirs(copy_to), "--partition", f"{topic}-{p}", "--timestamp", ts,
                      "--json", ok=False)  # fmt: skip
            mine = json.loads(out.stdout) if out.stdout.strip() else None
            theirs = answers[spec]
            if (mine or {}).get("offset", -1) != theirs["offset"]:
                case.problems.append(f"lookup {topic}-{p} {spec}: {mine}; Admin.listOffsets {theirs}")
    marks = {n: b.server_log.stat().st_size for n, b in cluster.brokers.items()}
    cluster.start()
    cluster.wait_for(build, topic, lambda ps: all(len(p["isr"]) == 3 for p in ps.values()), timeout=120)
    for p in range(parts_n):
        cut = truncations(cluster.brokers[stopped], marks[stopped], f"{topic}-{p}")
        if cut:
            case.problems.append(f"{topic}-{p}: broker {stopped} truncated to {cut[0]}; predicted lagging only")


def run_moves(cluster: Cluster, build: Path, case: Case, rnd: random.Random, copy_to: Path) -> None:
    """Directories that are no live replica: a replica moved between broker 3's log dirs
    with its copy throttled (a -future directory), a topic deleted while a broker was down
    (its replica there stray, the others' -delete), a replica reassigned away from a broker
    that was down (unassigned). Each predicted kind, then judged by what the restarted
    brokers do with the directory (a stray or unassigned one removed, a -future one kept
    copying or swapped in); every live topic read once, as its consumer reads it."""
    suffix = case.seed
    moving, gone, moved = f"moving-{suffix}", f"gone-{suffix}", f"moved-{suffix}"
    for topic in (moving, gone, moved):
        cluster.client(build, "create", cluster.bootstrap, topic, 1, "replication.factor=3")
        cluster.wait_for(build, topic, lambda ps: len(ps[0]["isr"]) == 3)
    produce(cluster, build, moving, 0, rnd.randint(1500, 3000), acks="all", codec="none")
    # the copy between log dirs throttled (a dynamic config: Kafka's reassign tool's
    # --replica-alter-log-dirs-throttle), fetched 16 kB at a time: it takes minutes
    cluster.client(build, "broker-config", cluster.bootstrap, 3,
                   "replica.alter.log.dirs.io.max.bytes.per.second=2000")  # fmt: skip
    produce(cluster, build, gone, 0, rnd.randint(1, 50), acks="all")
    produce(cluster, build, moved, 0, rnd.randint(1, 80), acks="all")
    b3 = cluster.brokers[3]
    here = next(d for d in b3.log_dirs if (d / f"{moving}-0").is_dir())
    there = next(d for d in b3.log_dirs if d != here)
    cluster.client(build, "move-dir", cluster.bootstrap, moving, 0, 3, there)
    deadline = time.monotonic() + 30
    while not any(p.name.endswith("-future") for p in there.iterdir()):
        if time.monotonic() > deadline:
            raise HarnessError("no -future directory appeared")
        time.sleep(0.2)
    away = rnd.choice([1, 2])
    cluster.stop(away)
    cluster.client(build, "delete-topic", cluster.bootstrap, gone)
    keep = [b for b in (1, 2, 3) if b != away]
    cluster.client(build, "reassign", cluster.bootstrap, moved, "0=" + ",".join(map(str, keep)))
    cluster.wait_for(build, moved, lambda ps: sorted(ps[0]["replicas"]) == keep)
    live = {t: cluster.client_consume(build, t) for t in (moving, moved)}
    cluster.stop()
    copy = cluster.copy_disks(copy_to)
    disks = disks_of(copy)
    root = Path(copy_to)
    for s in disks.set_apart:
        name = Path(s.path).name
        topic = name.split(".")[0].rsplit("-", 1)[0]
        if topic in (moving, gone, moved):
            case.predicted[f"{topic}@{s.broker}:{s.kind}"] = "future" if s.kind == "future" else "removed"
    for t in (moving, moved):
        pr = disks.partitions.get((t, 0))
        got = as_consumed(pr.served.partition) if pr is not None else []
        if got != live[t]:
            case.problems.append(f"{t}: kafkacodec read {len(got)} records from the disks, the consumer {len(live[t])}")
    # Kafka's own verdict: what the restarted brokers do with each directory set apart
    cluster.start()
    cluster.wait_for(build, moved, lambda ps: len(ps[0]["isr"]) == 2, timeout=120)
    ours = [s for s in disks.set_apart if Path(s.path).name.split(".")[0].rsplit("-", 1)[0] in (moving, gone, moved)]
    deadline = time.monotonic() + 60  # (deleted after log.segment.delete.delay.ms, by a task)
    while True:
        for s in ours:
            topic = Path(s.path).name.split(".")[0].rsplit("-", 1)[0]
            original = _original(cluster, root, Path(s.path))
            if s.kind == "future":
                swapped = (there / f"{moving}-0").is_dir()
                verdict = "future" if original.exists() or swapped else "gone"
            else:
                verdict = "removed" if not original.exists() else "kept"
            case.judged[f"{topic}@{s.broker}:{s.kind}"] = verdict
        if "kept" not in case.judged.values() or time.monotonic() > deadline:
            break
        time.sleep(1)
    expected = {f"{moving}@broker 3:future", f"{gone}@broker {away}:stray", f"{moved}@broker {away}:unassigned"}
    missing = expected - set(case.predicted)
    if missing:
        case.problems.append(f"not set apart: {sorted(missing)}")


def _original(cluster: Cluster, copy_root: Path, copied: Path) -> Path:
    """The cluster's own directory of a directory of the copy."""
    rel = copied.relative_to(copy_root)
    node_name, dir_name = rel.parts[0], rel.parts[1]
    node = next(n for n in cluster.nodes if n.root.name == node_name)
    base = next(d for d in node.log_dirs if d.name == dir_name)
    return base.joinpath(*rel.parts[2:])


RUNNERS = {"unclean": run_unclean, "lagging": run_lagging, "moves": run_moves}
#: Broker settings each kind needs: a copy between log dirs slow enough to be caught.
SETTINGS = {"moves": {"replica_fetch_max_bytes": "16384", "log_segment_delete_delay_ms": "1000"}}


def run_case(kind: str, seed: int, version: str, root: Path) -> Case:
    case = Case(kind, seed, version)
    rnd = random.Random(f"{kind}-{seed}")
    work = root / f"{version}-{kind}-{seed}"
    shutil.rmtree(work, ignore_errors=True)
    build = work / "build"
    build.mkdir(parents=True)
    cluster = Cluster(version, work / "cluster", **SETTINGS.get(kind, {}))
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
    bad = ran = 0
    for version in args.version or VERSIONS:
        for kind in args.kind or [k for k in KINDS if k in RUNNERS]:
            for seed in range(args.seed, args.seed + args.cases):
                ran += 1
                started = time.monotonic()
                try:
                    case = run_case(kind, seed, version, args.root)
                except HarnessError as err:
                    print(f"{version} {kind} {seed}: harness: {err}", flush=True)
                    bad += 1
                    continue
                print(f"{version} {kind} {seed}: {'agrees' if case.agrees else 'DISAGREES'} "
                      f"({time.monotonic() - started:.0f} s) predicted {case.predicted} judged {case.judged} "
                      f"{case.problems}", flush=True)  # fmt: skip
                bad += not case.agrees
    print(f"{ran - bad} of {ran} cases agree", flush=True)
    return 1 if bad else 0


if __name__ == "__main__":
    sys.exit(main())

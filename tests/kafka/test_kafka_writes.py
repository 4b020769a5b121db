"""Kafka writes, kafkacodec reads (issue 37): a real broker of each release, driven by
Kafka's own Java client, then stopped cleanly; its log.dirs read by kafkacodec must give
exactly the records Kafka's consumer fetched, every field, read_uncommitted and
read_committed; answer ListOffsets as the broker answered Admin.listOffsets; and `dump`
must print what Kafka's DumpLogSegments prints for the same files, line for line, in every
mode and with each decoder flag."""

from __future__ import annotations

import json
import re
import subprocess
import time

import pytest
from conftest import kafkacodec_cli as cli
from kafka_broker import (
    DUMP_RELEASES,
    SHARE_GROUPS,
    SHELL_VERSIONS,
    T0,
    TARGETS,
    VERSIONS,
    Broker,
    as_consumed,
    b64,
    dump_main,
    java,
    libs,
    metadata_shell,
    not_known,
    record,
    same_dump,
    same_dumps,
    small_segments,
)

from kafkacodec.log import LogDirs
from kafkacodec.runtime.compression import codec_name

pytestmark = pytest.mark.kafka

CODECS = ("none", "gzip", "snappy", "lz4", "zstd")



def workload() -> dict:
    producers = []
    for n, codec in enumerate(CODECS):  # plain producers, each codec, two partitions
        producers.append({"config": {"compression.type": codec, "linger.ms": "50", "batch.size": "4096",
                                     "enable.idempotence": "false", "acks": "1"},
                          "records": [record("codecs", 100 * n + i, partition=i % 2) for i in range(60)]})  # fmt: skip
    producers.append({"config": {"enable.idempotence": "true", "acks": "all", "compression.type": "zstd",
                                 "linger.ms": "20"},
                      "records": [record("codecs", 1000 + i, partition=i % 2) for i in range(40)]})  # fmt: skip
    producers.append({"config": {"transactional.id": "txn-1", "compression.type": "lz4", "linger.ms": "10"},
                      "transactions": [{"commit": t % 2 == 0,
                                        "records": [record("txn", 10 * t + i, partition=None) for i in range(10)]}
                                       for t in range(8)]})  # fmt: skip
    producers.append({"config": {"compression.type": "gzip"},
                      "records": [record("logappend", i) for i in range(30)]})  # fmt: skip
    return {"producers": producers}


def keyed(topic: str, i: int, keys: int = 20) -> dict:
    """A record of a compacted topic: always a key (Kafka refuses null keys there); every
    seventh a key of its own, which the cleaner keeps (so the cleaned segments keep records
    between offset gaps), every 49th of those a tombstone it keeps too (the latest of its key,
    younger than delete.retention.ms); the others overwrite 20 keys, some with tombstones."""
    key = f"once-{i}" if i % 7 == 0 else f"k{i % keys}"
    value = None if i % 49 == 0 or i % 37 == 36 else f"state {i} ".encode() * (1 + i % 5)
    return {"topic": topic, "partition": 0, "timestamp": T0 + i, "key": b64(key.encode()),
            "value": b64(value), "headers": []}  # fmt: skip


def cleaned(broker: Broker, build, topic: str, produced: int, timeout: float = 90) -> list[dict]:
    """What the consumer fetches once the log cleaner has compacted the topic and settled
    (two fetches a second apart alike, fewer records than were produced)."""
    deadline, last = time.monotonic() + timeout, None
    while time.monotonic() < deadline:
        got = broker.consume(build, topic)
        if len(got) < produced and got == last:
            return got
        last = got
        time.sleep(1)
    raise AssertionError(f"the log cleaner did not compact {topic} in {timeout} s")


#: Topics beyond the workload's: compacted by the log cleaner, trimmed by DeleteRecords,
#: rolled by size and by time, a transaction left open.
MORE = ("compacted", "trimmed", "rolled", "open")


@pytest.fixture(scope="module", params=VERSIONS)
def written(request, tmp_path_factory):
    """A broker of the release, the workload written, what its consumer fetched and what
    it answered, then a clean shutdown: the log.dirs for kafkacodec."""
    version = request.param
    root = tmp_path_factory.mktemp(f"kafka-{version}")
    build = root / "build"
    build.mkdir()
    # KRaft snapshots of the metadata log soon after it changes (a .checkpoint to dump)
    broker = Broker(version, root / "broker", metadata_log_max_snapshot_interval_ms=500,
                    log_cleaner_backoff_ms=200)  # fmt: skip
    with broker:
        broker.create_topic(build, "codecs", 2)
        broker.create_topic(build, "txn", 2)
        broker.create_topic(build, "logappend", 1, message_timestamp_type="LogAppendTime")
        small = small_segments(broker, build)
        broker.create_topic(build, "compacted", 1, cleanup_policy="compact", min_cleanable_dirty_ratio="0.01",
                            segment_ms=500, **small)  # fmt: skip
        broker.create_topic(build, "trimmed", 1, **small)
        broker.create_topic(build, "rolled", 1, segment_ms=1000, **small)
        broker.create_topic(build, "open", 1)
        broker.produce(build, workload())
        broker.produce(build, {"producers": [{"config": {"linger.ms": "5", "batch.size": "2048"},
                                              "records": [keyed("compacted", i) for i in range(600)]}]})  # fmt: skip
        broker.produce(build, {"producers": [{"config": {"compression.type": "zstd", "batch.size": "2048"},
                                              "records": [record("trimmed", i) for i in range(400)]}]})  # fmt: skip
        for burst in range(3):  # a segment a burst (segment.ms), and some by size within each
            broker.produce(build, {"producers": [{"config": {"linger.ms": "5", "batch.size": "2048"},
                                                  "records": [record("rolled", 200 * burst + i) for i in range(150)]}]})  # fmt: skip
            time.sleep(1.2)
        broker.produce(build, {"producers": [
            {"config": {"transactional.id": "txn-open", "transaction.timeout.ms": "900000"},
             "transactions": [{"commit": True, "records": [record("open", i) for i in range(10)]},
                              {"commit": None, "records": [record("open", 10 + i) for i in range(10)]}]},
            {"config": {}, "records": [record("open", 20 + i) for i in range(10)]},  # after the open one
        ]})  # fmt: skip
        broker.delete_records(build, "trimmed", {0: 123})
        compacted = cleaned(broker, build, "compacted", 600)
        fetched = {(t, iso): broker.consume(build, t, iso) for t in ("codecs", "txn", "logappend", *MORE)
                   for iso in ("read_uncommitted", "read_committed")}  # fmt: skip
        assert fetched[("compacted", "read_uncommitted")] == compacted  # the cleaner had settled
        offsets = {t: broker.list_offsets(build, t, T0, T0 + 255, T0 + 10**9)
                   for t in ("codecs", "txn", "trimmed", "rolled", "compacted")}  # fmt: skip
        broker.commit(build, "billing", "classic", "codecs", {0: 17, 1: 5})
        broker.commit(build, "audit", "consumer", "txn", {0: 3})
        shared = broker.share(build, "sharing", "codecs", 40) if version in SHARE_GROUPS else None
        described = java(version, "org.apache.kafka.tools.consumer.group.ConsumerGroupCommand", "--bootstrap-server",
                         broker.bootstrap, "--describe", "--all-groups").stdout  # fmt: skip
        broker.stop()
    assert (broker.log_dir / ".kafka_cleanshutdown").exists()
    return {"version": version, "logs": broker.log_dir, "fetched": fetched, "offsets": offsets,
            "described": described, "broker": broker, "build": build, "shared": shared}  # fmt: skip


def ours(logs, topic: str, committed: bool) -> list[dict]:
    """What kafkacodec reads from the broker's files of a topic, in the consumer's shape."""
    return [o for p in LogDirs(logs).partitions if p.topic == topic
            for o in as_consumed(p, committed=committed)]  # fmt: skip


@pytest.mark.parametrize("topic", ["codecs", "txn", "logappend", *MORE])
@pytest.mark.parametrize("isolation", ["read_uncommitted", "read_committed"])
def test_kafkacodec_reads_what_the_consumer_fetched(written, topic, isolation):
    want = sorted(written["fetched"][(topic, isolation)], key=lambda o: (o["partition"], o["offset"]))
    got = ours(written["logs"], topic, isolation == "read_committed")
    assert len(want) >= 10
    assert got == want


def _partition(logs, name: str):
    (found,) = [p for p in LogDirs(logs).partitions if p.path.name == name]
    return found


def test_the_workloads_shapes_are_on_disk(written):
    """What the topics beyond the workload's are for is there: the cleaner left offset gaps
    and tombstones; DeleteRecords moved the log start inside a segment; segments rolled by
    size and by time; a transaction with no marker, after which read_committed reads nothing."""
    fetched, logs = written["fetched"], written["logs"]
    compacted = [o["offset"] for o in fetched[("compacted", "read_uncommitted")]]
    assert compacted != list(range(compacted[0], compacted[0] + len(compacted)))  # gaps
    assert any(o["value"] is None for o in fetched[("compacted", "read_uncommitted")])  # tombstones
    trimmed = _partition(logs, "trimmed-0")
    assert trimmed.known_log_start()[0] == 123 > trimmed.base_offsets[0]
    assert fetched[("trimmed", "read_uncommitted")][0]["offset"] == 123
    assert len(_partition(logs, "rolled-0").segments) >= 4
    opened = fetched[("open", "read_committed")]
    assert [o["offset"] for o in opened] == list(range(10))  # up to the open transaction's first offset
    assert len(fetched[("open", "read_uncommitted")]) == 30


def test_records_command_on_a_trimmed_and_an_open_log(written):
    """`kafkacodec records` starts at the log start offset DeleteRecords moved (saying what
    it leaves out), and with --read-committed stops at the last stable offset (saying why)."""
    logs, fetched = written["logs"], written["fetched"]
    run = cli("records", logs / "trimmed-0")
    assert [int(line.split()[1]) for line in run.stdout.splitlines()] == \
        [o["offset"] for o in fetched[("trimmed", "read_uncommitted")]]
    assert "from the log start offset 123 (the broker's log-start-offset-checkpoint)" in run.stderr
    run = cli("records", logs / "open-0", "--read-committed")
    assert [int(line.split()[1]) for line in run.stdout.splitlines()] == \
        [o["offset"] for o in fetched[("open", "read_committed")]]
    assert "stopped at the last stable offset 11: producer" in run.stderr


def test_every_codec_is_on_disk(written):
    codecs = {codec_name(b.compression) for p in LogDirs(written["logs"]).partitions
              if p.topic == "codecs" for seg in p.segments for b in seg.batches()}  # fmt: skip
    assert codecs == set(CODECS)


def test_records_command_prints_what_the_consumer_fetched(written):
    for p in (0, 1):
        lines = cli("records", written["logs"] / f"txn-{p}", "--read-committed").stdout.splitlines()
        want = [o for o in written["fetched"][("txn", "read_committed")] if o["partition"] == p]
        assert [int(line.split()[1]) for line in lines] == [o["offset"] for o in want]


def test_lookup_answers_as_the_broker_answered(written):
    for topic, answers in written["offsets"].items():
        for part, by_spec in answers.items():
            d = written["logs"] / f"{topic}-{part}"
            for spec, want in by_spec.items():
                arg = TARGETS.get(spec, spec)
                run = cli("lookup", d, "--timestamp", arg, "--json", ok=None)
                if not_known(spec, want, run):
                    continue
                got = json.loads(run.stdout)
                if want["offset"] == -1:  # Kafka: no such record
                    assert got is None and run.returncode == 1, (topic, part, spec)
                    continue
                assert (got["offset"], got["timestamp"]) == (want["offset"], want["timestamp"]), (topic, part, spec)
                assert (got["leader_epoch"] if got["leader_epoch"] is not None else -1) == want["leader_epoch"]


def test_verify_finds_the_broker_written_log_clean(written):
    out = cli("verify", written["logs"])
    assert out.stdout.rstrip().endswith(": clean")


# ------------------------------------------------------------------ dump, against Kafka's


def _files(logs, pattern: str, topics=None) -> list:
    return sorted(f for f in logs.glob(f"*/{pattern}")
                  if topics is None or f.parent.name.rsplit("-", 1)[0] in topics)  # fmt: skip


USER = ("codecs", "txn", "logappend", *MORE)


@pytest.mark.parametrize("flags", [["--deep-iteration"], ["--print-data-log"], []])
def test_dump_of_user_segments_is_kafkas(written, flags):
    same_dump(written["version"], _files(written["logs"], "*.log", USER), flags,
               flags + (["--raw-data"] if flags else []))  # fmt: skip


@pytest.fixture(params=["shipped", "release"])
def codecs(request, written) -> list:
    """dump's arguments for each set of codecs: the shipped ones (the newest release's
    specs), and the broker's own release's (--specs, generated from its jars)."""
    return [] if request.param == "shipped" else ["--specs", libs(written["version"])]


@pytest.mark.parametrize("topic,flag", [
    ("__consumer_offsets", "--offsets-decoder"), ("__transaction_state", "--transaction-log-decoder"),
    ("__cluster_metadata", "--cluster-metadata-decoder"),
])  # fmt: skip
def test_dump_with_each_decoder_is_kafkas(written, codecs, topic, flag):
    same_dump(written["version"], _files(written["logs"], "*.log", (topic,)), [flag], [flag, *codecs])


def test_dump_of_share_group_state_is_kafkas(written, codecs):
    """A share group's state (__share_group_state: ShareSnapshot and ShareUpdate records) and
    its group records (in __consumer_offsets, which the decoder test above dumps) where the
    release has share groups; none where it has not."""
    files = _files(written["logs"], "*.log", ("__share_group_state",))
    if written["version"] not in SHARE_GROUPS:
        assert not files and written["shared"] is None
        return
    assert len(written["shared"]) >= 40
    same_dump(written["version"], files, ["--share-group-state-decoder"], ["--share-group-state-decoder", *codecs])
    offsets = cli("dump", "--offsets-decoder", *codecs, *_files(written["logs"], "*.log", ("__consumer_offsets",))).stdout
    assert '"groupId":"sharing"' in offsets  # the share group's own records, dumped as Kafka does (above)


def test_dump_of_a_kraft_snapshot_is_kafkas(written, codecs):
    snaps = _files(written["logs"], "*.checkpoint", ("__cluster_metadata",))
    same_dump(written["version"], snaps, ["--cluster-metadata-decoder"], ["--cluster-metadata-decoder", *codecs])
    same_dump(written["version"], snaps, ["--deep-iteration"], ["--deep-iteration", "--raw-data", *codecs])


def test_dump_of_producer_snapshots_is_kafkas(written, codecs):
    same_dump(written["version"], _files(written["logs"], "*.snapshot"), [], codecs)


@pytest.mark.parametrize("flags", [[], ["--verify-index-only"]])
def test_dump_of_indexes_is_kafkas(written, flags):
    files = [f for s in ("*.index", "*.timeindex", "*.txnindex") for f in _files(written["logs"], s)]
    same_dump(written["version"], sorted(files), flags)


@pytest.mark.slow
@pytest.mark.parametrize("release", DUMP_RELEASES)
def test_every_release_dumps_this_brokers_files_as_kafkacodec_does(written, release, tmp_path):
    """kafka-dump-log of every release `--kafka-version` takes (not only the broker's own)
    over this broker's files, in every mode the tests above put to the broker's release:
    user segments, each decoder over its internal topic, KRaft snapshots, producer
    snapshots, indexes; `kafkacodec dump --kafka-version` of the release, with its specs,
    prints the same."""
    logs = written["logs"]
    segments = _files(logs, "*.log", USER)
    runs = [(segments, f, f + (["--raw-data"] if f else [])) for f in (["--deep-iteration"], ["--print-data-log"], [])]
    topics = {"__consumer_offsets": "--offsets-decoder", "__transaction_state": "--transaction-log-decoder",
              "__cluster_metadata": "--cluster-metadata-decoder"}  # fmt: skip
    if release >= "4.0":
        topics["__share_group_state"] = "--share-group-state-decoder"
    runs += [(files, [flag], [flag]) for topic, flag in topics.items() if (files := _files(logs, "*.log", (topic,)))]
    snaps = _files(logs, "*.checkpoint", ("__cluster_metadata",))
    runs += [(snaps, ["--cluster-metadata-decoder"], ["--cluster-metadata-decoder"]),
             (snaps, ["--deep-iteration"], ["--deep-iteration", "--raw-data"]),
             (_files(logs, "*.snapshot"), [], [])]  # fmt: skip
    indexes = sorted(f for s in ("*.index", "*.timeindex", "*.txnindex") for f in _files(logs, s))
    runs += [(indexes, [], []), (indexes, ["--verify-index-only"], ["--verify-index-only"])]
    same_dumps(release, [r for r in runs if r[0]], tmp_path)


def test_index_sanity_check_is_kafkas(written):
    """--index-sanity-check file by file: where Kafka's check throws (CorruptIndexException,
    e.g. 4.4's metadata log leaves its active segment's time index untrimmed, zeros after
    the last entry), kafkacodec says the file failed, with Kafka's reason, and exits 1."""
    files = sorted(f for s in ("*.index", "*.timeindex", "*.txnindex") for f in _files(written["logs"], s))
    ok = []
    for f in files:
        res = java(written["version"], dump_main(written["version"]), "--files", f, "--index-sanity-check",
                   check=False)  # fmt: skip
        if res.returncode == 0:
            ok.append(f)
            continue
        why = re.search(r"CorruptIndexException: (.*)", res.stderr + res.stdout)
        assert why, res.stderr[-2000:]
        mine = cli("dump", "--index-sanity-check", f, ok=None)
        assert mine.returncode == 1 and f"{f.name} failed sanity check." in mine.stdout
        assert why[1].replace(str(f), f.name) in mine.stderr
    same_dump(written["version"], ok, ["--index-sanity-check"])


def test_groups_gives_the_offsets_and_lag_kafka_consumer_groups_gave(written, codecs):
    """kafka-consumer-groups --describe --all-groups (ConsumerGroupCommand) before the
    shutdown, and `kafkacodec groups` from the files after it: the same rows (group, topic,
    partition, current offset, log end offset, lag), for a classic group and a KIP-848
    consumer group."""
    kafka = set()
    for line in written["described"].splitlines():
        cells = line.split()
        if len(cells) >= 6 and cells[0] != "GROUP" and cells[2].isdigit():
            kafka.add((cells[0], cells[1], int(cells[2]), *(None if c == "-" else int(c) for c in cells[3:6])))
    rows = [json.loads(line) for line in cli("groups", written["logs"], "--json", *codecs).stdout.splitlines()]
    got = {(r["group"], r["topic"], r["partition"], r["current_offset"], r["log_end_offset"], r["lag"]) for r in rows}
    assert {(g, t, p, c) for g, t, p, c, *_ in kafka} == \
        {("billing", "codecs", 0, 17), ("billing", "codecs", 1, 5), ("audit", "txn", 0, 3)}  # fmt: skip
    assert got == kafka


# ------------------------------------------------------------ metadata, against the shell


def _shell_tree(text: str) -> dict:
    """MetadataShell's `tree` output as nested dicts: a line ending in ':' names a node,
    the lines indented below it are its children; a leaf's values are under ''."""
    root: dict = {}
    stack: list[tuple[int, dict]] = [(-1, root)]
    for line in text.splitlines():
        if not line.strip():
            continue
        indent, body = len(line) - len(line.lstrip(" ")), line.strip()
        while stack[-1][0] >= indent:
            stack.pop()
        parent = stack[-1][1]
        if body.endswith(":"):
            node: dict = {}
            parent[body[:-1]] = node
            stack.append((indent, node))
        else:
            parent.setdefault("", []).append(body)
    return root


def _field(text: str, name: str) -> str:
    found = re.search(rf"\b{name}=(\[[^\]]*\]|Optional\[[^\]]*\]|[^,)\s]+)", text)
    assert found, (name, text)
    return found[1]


def _ints(text: str) -> list[int]:
    return [int(x) for x in re.findall(r"-?\d+", text)]


def test_metadata_agrees_with_the_metadata_shell(written, codecs):
    """Kafka's MetadataShell (`tree /image` over the metadata log, from offset 0; where the
    release published one, SHELL_VERSIONS) and the release's own image classes replaying the
    same log (the client program's metadata-image, printed as the shell prints), against
    `kafkacodec metadata` (the last snapshot and the log after it) on the same files: the
    same topics (ids, partitions, leaders, epochs, replicas, ISR), brokers (epoch, fenced,
    controlled shutdown, rack, endpoints), configs and finalized features, the
    metadata.version's level naming Kafka's MetadataVersion."""
    meta = written["logs"] / "__cluster_metadata-0"
    logs = sorted(meta.glob("*.log"))
    assert logs[0].name == f"{0:020d}.log" and len(logs) == 1  # the whole history in one file
    mine = json.loads(cli("metadata", meta, "--json", *codecs).stdout)
    broker, build = written["broker"], written["build"]
    judges = [_shell_tree(broker.client(build, "metadata-image", logs[0]).stdout)]
    if written["version"] in SHELL_VERSIONS:
        judges.append(_shell_at_the_end(written["version"], logs[0], mine["last_offset"]))
    named = broker.client(build, "metadata-version", mine["features"]["metadata.version"]).stdout.strip()
    for image in judges:
        _same_image(image, mine, named)


def _shell_at_the_end(version: str, log, last: int, tries: int = 5) -> dict:
    """MetadataShell's image of the whole log. In non-interactive mode the 4.0 shell prints
    once its loader has applied any offset (MetadataShell.waitUntilCaughtUp waits for
    lastAppliedOffset > 0), so it may print an image of the log's first batches only: an
    answer counts when its provenance is the log's last offset, and the shell is asked again
    otherwise. The 4.0 shell also hung once in that wait, for over 300 s, while the full
    suite loaded the machine: a run that has not answered in 90 s counts as one more try."""
    seen = []
    for _ in range(tries):
        try:
            image = _shell_tree(metadata_shell(version, "--snapshot", log, "tree", "/image", timeout=90))
        except subprocess.TimeoutExpired:
            seen.append("no answer in 90 s")
            continue
        provenance = image.get("provenance", {}).get("", ["?"])[0]
        if provenance.startswith(f"offset {last},"):
            return image
        seen.append(provenance)
    raise AssertionError(f"MetadataShell never printed the image at offset {last}: {seen}")


def _same_image(image: dict, mine: dict, named_version: str) -> None:

    kafka_topics = {}
    for name, node in image["topics"]["byName"].items():
        parts = {int(k): v[""][0] for k, v in node.items() if k.isdigit()}
        kafka_topics[name] = (node["id"][""][0], {
            p: (int(_field(r, "leader")), int(_field(r, "leaderEpoch")), int(_field(r, "partitionEpoch")),
                _ints(_field(r, "replicas")), _ints(_field(r, "isr"))) for p, r in parts.items()})  # fmt: skip
    assert {"codecs", "txn", "compacted", "__consumer_offsets"} <= set(kafka_topics)
    assert {t["name"]: (t["topic_id"], {p["partition"]: (p["leader"], p["leader_epoch"], p["partition_epoch"],
                                                         p["replicas"], p["isr"]) for p in t["partitions"]})
            for t in mine["topics"]} == kafka_topics  # fmt: skip

    kafka_brokers = {}
    for bid, node in image["cluster"]["brokers"].items():
        reg = node[""][0]
        rack = _field(reg, "rack")
        endpoints = [f"{m[1]}://{m[3]}:{m[4]}" for m in
                     re.finditer(r"Endpoint\(listenerName='([^']*)', securityProtocol=(\w+), host='([^']*)', port=(\d+)\)", reg)]  # fmt: skip
        kafka_brokers[int(bid)] = (int(_field(reg, "epoch")), _field(reg, "fenced") == "true",
                                   _field(reg, "inControlledShutdown") == "true",
                                   None if rack == "Optional.empty" else rack[len("Optional["):-1], endpoints)  # fmt: skip
    assert {b["id"]: (b["epoch"], b["fenced"], b["in_controlled_shutdown"], b["rack"], b["endpoints"])
            for b in mine["brokers"]} == kafka_brokers  # fmt: skip

    kafka_configs = {res: {k: v[""][0] for k, v in node.items()} for res, node in image["configs"].items()}
    # the image names a resource TYPE:name, the default one (the cluster's broker configs) TYPE
    assert {":".join(filter(None, (c["resource_type"], c["resource_name"]))): c["configs"]
            for c in mine["configs"]} == kafka_configs  # fmt: skip
    assert kafka_configs["TOPIC:compacted"]["cleanup.policy"] == "compact"

    features = image["features"]
    finalized = {k[len("finalized_"):]: int(v[""][0]) for k, v in features.items() if k.startswith("finalized_")}
    levels = dict(mine["features"])
    levels.pop("metadata.version")
    assert levels == finalized
    assert features["metadataVersion"][""][0] == f"Optional[{named_version}]"


# --------------------------------------------------------------- the Spark source


@pytest.mark.spark
@pytest.mark.parametrize("isolation", ["read_uncommitted", "read_committed"])
def test_the_spark_source_reads_what_the_consumer_fetched(written, spark, isolation):
    """spark.read.format("kafkacodec") over the broker's log.dirs: for every topic, the rows
    of the records Kafka's consumer fetched with that isolation level, every field."""
    from pyspark.sql import functions as F

    df = (spark.read.format("kafkacodec").option("isolation", isolation).option("includeHeaders", "true").option("include_metadata", "true")
          .load(str(written["logs"])))
    rows = (df.where(F.col("topic").isin(*USER))
            .select("topic", "partition", "offset", F.unix_millis("timestamp").alias("ms"), "timestampType",
                    "key", "value", "headers", "partition_leader_epoch").collect())  # fmt: skip
    got: dict[str, list] = {t: [] for t in USER}
    for r in sorted(rows, key=lambda r: (r.topic, r.partition, r.offset)):
        got[r.topic].append({"partition": r.partition, "offset": r.offset, "timestamp": r.ms,
                             "timestamp_type": ("CreateTime", "LogAppendTime")[r.timestampType],
                             "key": b64(r.key), "value": b64(r.value),
                             "headers": [[h.key, b64(h.value)] for h in r.headers or []],
                             "leader_epoch": r.partition_leader_epoch})  # fmt: skip
    for topic in USER:
        want = sorted(written["fetched"][(topic, isolation)], key=lambda o: (o["partition"], o["offset"]))
        assert got[topic] == want, topic

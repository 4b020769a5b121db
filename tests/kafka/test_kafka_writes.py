"""Kafka writes, kafkacodec reads (issue 37): a real broker of each release, driven by
Kafka's own Java client, then stopped cleanly; its log.dirs read by kafkacodec must give
exactly the records Kafka's consumer fetched, every field, read_uncommitted and
read_committed; answer ListOffsets as the broker answered Admin.listOffsets; and `dump`
must print what Kafka's DumpLogSegments prints for the same files, line for line, in every
mode and with each decoder flag."""

from __future__ import annotations

import json
import re

import pytest
from conftest import kafkacodec_cli as cli
from kafka_broker import (
    VERSIONS,
    Broker,
    as_consumed,
    b64,
    dump_log_segments,
    dump_main,
    java,
    libs,
)

from kafkacodec.log import LogDirs
from kafkacodec.runtime.compression import codec_name

pytestmark = pytest.mark.kafka

T0 = 1_700_000_000_000
CODECS = ("none", "gzip", "snappy", "lz4", "zstd")



def record(topic: str, i: int, partition: int | None = 0, ts: int | None = None) -> dict:
    """The i-th record of a topic: every fourth key null, every ninth value null, headers
    on odd ones (a null header value among them)."""
    key = None if i % 4 == 3 else f"key-{i % 17}".encode()
    value = None if i % 9 == 8 else (f"value {i} " * (1 + i % 7)).encode()
    headers = [["h", b64(f"{i}".encode())], ["empty", None]] if i % 2 else []
    return {"topic": topic, "partition": partition, "timestamp": T0 + 10 * i if ts is None else ts,
            "key": b64(key), "value": b64(value), "headers": headers}  # fmt: skip


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


@pytest.fixture(scope="module", params=VERSIONS)
def written(request, tmp_path_factory):
    """A broker of the release, the workload written, what its consumer fetched and what
    it answered, then a clean shutdown: the log.dirs for kafkacodec."""
    version = request.param
    root = tmp_path_factory.mktemp(f"kafka-{version}")
    build = root / "build"
    build.mkdir()
    # KRaft snapshots of the metadata log soon after it changes (a .checkpoint to dump)
    broker = Broker(version, root / "broker", metadata_log_max_snapshot_interval_ms=500)
    with broker:
        broker.create_topic(build, "codecs", 2)
        broker.create_topic(build, "txn", 2)
        broker.create_topic(build, "logappend", 1, message_timestamp_type="LogAppendTime")
        broker.produce(build, workload())
        fetched = {(t, iso): broker.consume(build, t, iso) for t in ("codecs", "txn", "logappend")
                   for iso in ("read_uncommitted", "read_committed")}  # fmt: skip
        offsets = {t: broker.list_offsets(build, t, T0, T0 + 255, T0 + 10**9) for t in ("codecs", "txn")}
        broker.commit(build, "billing", "classic", "codecs", {0: 17, 1: 5})
        broker.commit(build, "audit", "consumer", "txn", {0: 3})
        broker.stop()
    assert (broker.log_dir / ".kafka_cleanshutdown").exists()
    return {"version": version, "logs": broker.log_dir, "fetched": fetched, "offsets": offsets}


def ours(logs, topic: str, committed: bool) -> list[dict]:
    """What kafkacodec reads from the broker's files of a topic, in the consumer's shape."""
    return [o for p in LogDirs(logs).partitions if p.topic == topic
            for o in as_consumed(p, committed=committed)]  # fmt: skip


@pytest.mark.parametrize("topic", ["codecs", "txn", "logappend"])
@pytest.mark.parametrize("isolation", ["read_uncommitted", "read_committed"])
def test_kafkacodec_reads_what_the_consumer_fetched(written, topic, isolation):
    want = sorted(written["fetched"][(topic, isolation)], key=lambda o: (o["partition"], o["offset"]))
    got = ours(written["logs"], topic, isolation == "read_committed")
    assert len(want) > 20
    assert got == want


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
                arg = {"latest": "-1", "earliest": "-2", "max_timestamp": "-3"}.get(spec, spec)
                run = cli("lookup", d, "--timestamp", arg, "--json", ok=None)
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


def _same_dump(version: str, files: list, flags: list[str], ours_flags: list[str] | None = None) -> None:
    """DumpLogSegments and `kafkacodec dump --kafka-version` of that release over the same
    files print the same lines; where Kafka names a file by the path it was given
    (`Dumping <path>`, `<path> is empty.`, `<path> passed sanity check.`), kafkacodec names
    it by its name (a deliberate difference, README)."""
    assert files
    kafka = dump_log_segments(version, files, *flags).splitlines()
    release = ".".join(version.split(".")[:2])
    mine = cli("dump", "--kafka-version", release, *(flags if ours_flags is None else ours_flags),
               *files, ok=None)  # fmt: skip
    assert "Traceback" not in mine.stderr
    kafka = [re.sub(r"^(Dumping )?/\S*/([^/ ]+)", r"\1\2", line) for line in kafka]
    got = mine.stdout.splitlines()
    for n, (a, b) in enumerate(zip(kafka, got)):
        assert a == b, f"line {n + 1} of {flags}:\n  Kafka:      {a}\n  kafkacodec: {b}"
    assert len(got) == len(kafka), (flags, len(got), len(kafka), kafka[len(got):][:3], got[len(kafka):][:3])


def _files(logs, pattern: str, topics=None) -> list:
    return sorted(f for f in logs.glob(f"*/{pattern}")
                  if topics is None or f.parent.name.rsplit("-", 1)[0] in topics)  # fmt: skip


USER = ("codecs", "txn", "logappend")


@pytest.mark.parametrize("flags", [["--deep-iteration"], ["--print-data-log"], []])
def test_dump_of_user_segments_is_kafkas(written, flags):
    _same_dump(written["version"], _files(written["logs"], "*.log", USER), flags,
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
    _same_dump(written["version"], _files(written["logs"], "*.log", (topic,)), [flag], [flag, *codecs])


def test_dump_of_a_kraft_snapshot_is_kafkas(written, codecs):
    snaps = _files(written["logs"], "*.checkpoint", ("__cluster_metadata",))
    _same_dump(written["version"], snaps, ["--cluster-metadata-decoder"], ["--cluster-metadata-decoder", *codecs])
    _same_dump(written["version"], snaps, ["--deep-iteration"], ["--deep-iteration", "--raw-data", *codecs])


def test_dump_of_producer_snapshots_is_kafkas(written, codecs):
    _same_dump(written["version"], _files(written["logs"], "*.snapshot"), [], codecs)


@pytest.mark.parametrize("flags", [[], ["--verify-index-only"]])
def test_dump_of_indexes_is_kafkas(written, flags):
    files = [f for s in ("*.index", "*.timeindex", "*.txnindex") for f in _files(written["logs"], s)]
    _same_dump(written["version"], sorted(files), flags)


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
    _same_dump(written["version"], ok, ["--index-sanity-check"])


def test_groups_gives_the_commits(written, codecs):
    rows = [json.loads(line) for line in cli("groups", written["logs"], "--json", *codecs).stdout.splitlines()]
    got = {(r["group"], r["topic"], r["partition"]): r["current_offset"] for r in rows}
    assert got == {("billing", "codecs", 0): 17, ("billing", "codecs", 1): 5, ("audit", "txn", 0): 3}

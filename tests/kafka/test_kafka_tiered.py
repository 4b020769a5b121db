"""Kafka's tiered storage, judged by a real broker (issue 37): a broker of each release with
tiered storage enabled and Kafka's own LocalTieredStorage as its RemoteStorageManager; a
topic whose rolled segments its RemoteLogManager copied there, and whose local copies it
then deleted (local.retention.bytes) but for the last ones, which are both remote and local.
After a clean shutdown, on the broker's log.dirs and LocalTieredStorage's directory:

- kafkacodec reads, remote segments joined with the local ones (`--tiered`), exactly the
  records Kafka's consumer fetched (most of them served from remote storage), with
  read_uncommitted and read_committed (remote transaction indexes);
- `lookup` answers ListOffsets as the broker answered Admin.listOffsets: latest, earliest,
  max timestamp, earliest local, latest tiered, and timestamps in both tiers; without
  `--tiered` it gives the same answer or none (never another one);
- `remote-log` lists the segments Kafka copied (their files all there) up to the latest
  tiered offset, and `dump --remote-log-metadata-decoder` prints what DumpLogSegments prints
  for __remote_log_metadata."""

from __future__ import annotations

import json
import time

import pytest
from conftest import kafkacodec_cli as cli
from kafka_broker import (
    T0,
    TARGETS,
    VERSIONS,
    Broker,
    as_consumed,
    record,
    same_dump,
    small_segments,
)

from kafkacodec.log import LogDirs, open_log

pytestmark = pytest.mark.kafka

#: Timestamps asked: the first record's, inside the remote part, the transactions' (whose
#: markers carry the broker's clock), and past every record.
TIMES = (T0, T0 + 5_000, T0 + 9_500, T0 + 10**12)


def workload() -> dict:
    """Records of every codec (headers, null keys and values), then transactions committed
    and aborted, in segments rolled every second of record time (segment.ms)."""
    producers = [{"config": {"compression.type": codec, "linger.ms": "5", "batch.size": "4096"},
                  "records": [record("tiered", 200 * n + i) for i in range(200)]}
                 for n, codec in enumerate(("zstd", "none", "gzip", "snappy"))]  # fmt: skip
    producers.append({"config": {"transactional.id": "tiered-txn", "compression.type": "lz4", "linger.ms": "5"},
                      "transactions": [{"commit": k % 2 == 0,
                                        "records": [record("tiered", 800 + 50 * k + i) for i in range(50)]}
                                       for k in range(4)]})  # fmt: skip
    # after them, enough records for the markers (stamped with the broker's clock, 2026 and
    # on) to be deleted locally: the largest timestamp is only remote
    producers.append({"config": {"linger.ms": "5"}, "records": [record("tiered", 1000 + i) for i in range(400)]})
    return {"producers": producers}


def settled(broker: Broker, build, topic: str, timeout: float = 120) -> dict:
    """The broker's answers once its remote log manager has copied every rolled segment and
    deleted the local copies beyond local.retention.bytes: earliest local above 0, latest
    tiered at or past it, both unchanged for four seconds."""
    deadline, seen = time.monotonic() + timeout, []
    while time.monotonic() < deadline:
        time.sleep(1)
        answers = broker.list_offsets(build, topic)["0"]
        seen.append((answers["earliest_local"]["offset"], answers["latest_tiered"]["offset"]))
        local, tiered = seen[-1]
        if len(seen) >= 4 and len(set(seen[-4:])) == 1 and 0 < local <= tiered + 1:
            return answers
    raise AssertionError(f"tiered storage did not settle in {timeout} s: (earliest local, latest tiered) {seen[-5:]}")


@pytest.fixture(scope="module", params=VERSIONS)
def tiered(request, tmp_path_factory):
    version = request.param
    root = tmp_path_factory.mktemp(f"tiered-{version}")
    build = root / "build"
    build.mkdir()
    broker = Broker(version, root / "broker", tiered=True)
    with broker:
        small = small_segments(broker, build)
        broker.create_topic(build, "tiered", 1, remote_storage_enable="true", local_retention_bytes=20_000,
                            segment_ms=1000, **small)  # fmt: skip
        broker.create_topic(build, "plain", 1)  # no remote storage: nothing tiered, ever
        broker.produce(build, workload())
        broker.produce(build, {"producers": [{"config": {}, "records": [record("plain", i) for i in range(20)]}]})
        settled(broker, build, "tiered")
        fetched = {iso: broker.consume(build, "tiered", iso) for iso in ("read_uncommitted", "read_committed")}
        offsets = {t: broker.list_offsets(build, t, *TIMES)["0"] for t in ("tiered", "plain")}
        broker.stop()
    return {"version": version, "logs": broker.log_dir, "root": broker.tiered_dir, "fetched": fetched,
            "offsets": offsets}  # fmt: skip


def test_most_of_the_topic_is_only_in_tiered_storage(tiered):
    """What the module is for is on disk: local segments from an offset far above the log
    start (0), remote copies of everything below the latest tiered offset, some segments
    both remote and local; the largest timestamp (a transaction marker's) only remote, so
    that Kafka's max-timestamp answer (from the local log alone) is another record."""
    answers = tiered["offsets"]["tiered"]
    with open_log(tiered["logs"] / "tiered-0") as local:
        first_local = local.base_offsets[0]
    assert answers["earliest"]["offset"] == 0 < first_local == answers["earliest_local"]["offset"]
    assert answers["latest_tiered"]["offset"] >= first_local  # the last copies are local too
    assert list((tiered["root"] / "kafka-tiered-storage").glob("tiered-0-*/*.log"))
    with open_log(tiered["logs"] / "tiered-0", tiered=tiered["root"]) as p:
        largest = max((r.timestamp, r.offset) for _s, _b, r in p.read(0))
    assert largest[1] < first_local and largest[0] > answers["max_timestamp"]["timestamp"]


@pytest.mark.parametrize("isolation", ["read_uncommitted", "read_committed"])
def test_kafkacodec_reads_what_the_consumer_fetched_from_both_tiers(tiered, isolation):
    want = sorted(tiered["fetched"][isolation], key=lambda o: o["offset"])
    with open_log(tiered["logs"] / "tiered-0", tiered=tiered["root"]) as p:
        got = as_consumed(p, committed=isolation == "read_committed")
    assert len(want) > 900 and want[0]["offset"] == 0
    assert got == want


def test_records_command_reads_both_tiers(tiered):
    run = cli("records", tiered["logs"] / "tiered-0", "--tiered", tiered["root"], "--read-committed")
    got = [int(line.split()[1]) for line in run.stdout.splitlines() if " control=" not in line]
    assert got == [o["offset"] for o in tiered["fetched"]["read_committed"]]
    # without the tiered root, what is only remote is named, not silently left out
    local = cli("records", tiered["logs"] / "tiered-0", ok=None)
    first = int(local.stdout.split()[1])
    assert f"offsets 0-{first - 1} are in the log" in local.stderr


def _answer(run) -> tuple | None:
    got = json.loads(run.stdout) if run.stdout.strip() else None
    if got is None:
        return None
    return got["offset"], got["timestamp"], -1 if got["leader_epoch"] is None else got["leader_epoch"]


@pytest.mark.parametrize("topic", ["tiered", "plain"])
def test_lookup_answers_as_the_broker_answered(tiered, topic):
    d = tiered["logs"] / f"{topic}-0"
    for spec, want in tiered["offsets"][topic].items():
        arg = TARGETS.get(spec, spec)
        kafka = None if want["offset"] == -1 and spec != "latest_tiered" else \
            (want["offset"], want["timestamp"], want["leader_epoch"])  # fmt: skip
        joined = cli("lookup", d, "--timestamp", arg, "--json", "--tiered", tiered["root"], ok=None)
        assert _answer(joined) == kafka, (topic, spec, joined.stdout, joined.stderr)
        assert joined.returncode == (0 if kafka is not None else 1), (topic, spec, joined.stderr)
        # the broker's log directory alone: the same answer, or none and why (the answer
        # may be in offsets only tiered storage holds)
        alone = cli("lookup", d, "--timestamp", arg, "--json", ok=None)
        if alone.returncode == 1 and _answer(alone) is None and "not readable here" in alone.stderr:
            continue
        assert _answer(alone) == kafka, (topic, spec, alone.stdout, alone.stderr)


def test_remote_log_lists_what_kafka_copied(tiered):
    run = cli("remote-log", tiered["logs"], "--tiered", tiered["root"], "--json")
    segs = sorted((s for s in map(json.loads, run.stdout.splitlines()) if s["topic"] == "tiered"),
                  key=lambda s: s["start_offset"])  # fmt: skip
    assert run.returncode == 0 and segs
    assert {s["state"] for s in segs} == {"COPY_SEGMENT_FINISHED"}
    assert segs[0]["start_offset"] == 0
    for a, b in zip(segs, segs[1:]):
        assert b["start_offset"] == a["end_offset"] + 1
    assert segs[-1]["end_offset"] == tiered["offsets"]["tiered"]["latest_tiered"]["offset"]
    files = {f.name.split(".")[0] for f in (tiered["root"] / "kafka-tiered-storage").glob("tiered-0-*/*.log")}
    assert files == {f"{s['start_offset']:020d}-{s['segment_id']}" for s in segs}


def test_kafka_put_the_partitions_remote_records_where_kafkacodec_looks(tiered):
    """RemoteLogMetadataTopicPartitioner, three __remote_log_metadata partitions: the tiered
    topic's records are in the one kafkacodec's metadata_partition names (so that a log
    directory holding that one and listing nothing of a partition says nothing was copied:
    the plain topic's latest tiered offset is answered -1, as the broker answered)."""
    from kafkacodec.internal.remote import metadata_partition
    from kafkacodec.log import Partition

    tid = Partition(tiered["logs"] / "tiered-0").topic_id
    holding = {d.name for d in tiered["logs"].glob("__remote_log_metadata-*") if any(
        b"tiered" in f.read_bytes() for f in d.glob("*.log"))}  # fmt: skip
    assert holding == {f"__remote_log_metadata-{metadata_partition(tid, 0, 3)}"}
    assert len(list(tiered["logs"].glob("__remote_log_metadata-*"))) == 3


def test_dump_of_remote_log_metadata_is_kafkas(tiered):
    files = sorted((tiered["logs"]).glob("__remote_log_metadata-*/*.log"))
    same_dump(tiered["version"], files, ["--remote-log-metadata-decoder"])


def test_verify_with_the_tiered_root_is_clean(tiered):
    """Every remote and local segment checked; the topics without remote storage are no
    problem (they have nothing remote to find)."""
    run = cli("verify", tiered["logs"], "--tiered", tiered["root"])
    assert run.stdout.rstrip().endswith(": clean")
    assert {p.topic for p in LogDirs(tiered["logs"]).partitions} >= {"tiered", "plain", "__remote_log_metadata"}

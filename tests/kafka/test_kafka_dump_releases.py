"""The text of every release `dump --kafka-version` accepts is the text that release prints
(issue 54, point 2): kafka-dump-log (DumpLogSegments) of every release Maven Central serves
(every 4.x, and 3.9.x, the last 3.x: kafka_broker.DUMP_RELEASES), and `kafkacodec dump
--kafka-version` of it with its own specs (`--specs` over its jars), over the same files,
line for line, with every decoder flag: log segments of every internal topic holding every
payload Kafka's classes wrote (tests/internal_segments.py: every record spec at every
version, which an older release prints as it prints a version it does not know). The
broker-written log.dirs of the oldest and the newest release (indexes, producer snapshots,
KRaft checkpoints, user topics) are swept the same way in test_kafka_writes.py; the brokers
themselves run only there.

The same payloads damaged (internal_segments.write_damaged_topics: cut, grown, flipped, a
version another release wrote) are put to every release at one seed here; `make
dump-drill` runs many seeds (tests/dump_drill.py)."""

from __future__ import annotations

import os

import pytest
from internal_segments import write_damaged_topics, write_internal_topics
from kafka_broker import DUMP_RELEASES, dump_many, kafkacodec_dumps, same_dumps

import kafkacodec as kc
from kafkacodec.log.writer import PartitionWriter

pytestmark = [pytest.mark.kafka, pytest.mark.slow]


@pytest.fixture(scope="module")
def internal(tmp_path_factory):
    return write_internal_topics(tmp_path_factory.mktemp("internal"))


def _segments(d) -> list:
    return sorted(d.glob("*.log"))


FLAGS = {"__consumer_offsets": "--offsets-decoder", "__transaction_state": "--transaction-log-decoder",
         "__cluster_metadata": "--cluster-metadata-decoder",
         "__remote_log_metadata": "--remote-log-metadata-decoder",
         "__share_group_state": "--share-group-state-decoder"}  # fmt: skip


def _has_flag(release: str, topic: str) -> bool:
    return (
        topic != "__share_group_state" or release >= "4.0"
    )  # (`dump` has it in 3.9: the 4.0 text)


def runs(internal: dict, release: str) -> list[tuple[list, list[str], list[str]]]:
    """Every decoder flag over its topic's segments, and the segments with no decoder."""
    out = []
    for topic, flag in FLAGS.items():
        if _has_flag(release, topic):
            out.append((_segments(internal[topic]), [flag], [flag]))
    every = [f for d in internal.values() for f in _segments(d)]
    out.append((every, ["--deep-iteration"], ["--deep-iteration", "--raw-data"]))
    out.append((every, [], []))
    return out


@pytest.fixture(scope="module")
def damaged(tmp_path_factory):
    seed = int(os.environ.get("KAFKACODEC_DUMP_SEED", "1"))
    return write_damaged_topics(tmp_path_factory.mktemp("damaged"), seed)


@pytest.mark.parametrize("release", DUMP_RELEASES)
def test_each_release_prints_what_kafkacodec_prints_for_it(internal, release, tmp_path):
    same_dumps(release, runs(internal, release), tmp_path)


def damaged_runs(bulk: dict, single: list, release: str) -> list[tuple[list, list[str], list[str]]]:
    """Every decoder flag over its topic's damaged records, and each record that ends a
    dump alone (internal_segments.write_damaged_topics), also with no decoder."""
    out = []
    for topic, d in bulk.items():
        if _has_flag(release, topic) and _segments(d):
            out.append((_segments(d), [FLAGS[topic]], [FLAGS[topic]]))
    for topic, d in single:
        if _has_flag(release, topic):
            out.append((_segments(d), [FLAGS[topic]], [FLAGS[topic]]))
            out.append((_segments(d), ["--deep-iteration"], ["--deep-iteration", "--raw-data"]))
    return out


@pytest.mark.parametrize("release", DUMP_RELEASES)
def test_each_release_prints_damaged_records_as_kafkacodec_does(damaged, release, tmp_path):
    """Where a release reads a damaged payload otherwise than kafkacodec's reading (any
    version, a tagged field's lying size, a nested struct's refusal, bytes left unread) or
    dies at it (a record no parser of it catches the error of: the dump ends there, after
    the record's line so far), kafkacodec with --kafka-version of it prints the same."""
    bulk, single = damaged
    same_dumps(release, damaged_runs(bulk, single, release), tmp_path)


#: Control records whose key or end-transaction marker Kafka's classes refuse (key, value).
BAD_CONTROL = [(None, b"\0\0\0\0\0\5"), (b"\0", b"\0\0\0\0\0\5"), (b"\xff\0\0\1", b"\0\0\0\0\0\5"),
               (b"\0\0\0\1", None), (b"\0\0\0\1", b"\0"), (b"\0\0\0\0", b"\0\0\0\1"),
               (b"\0\0\0\0", b"\xff\xff\0\0\0\1"), (b"\0\0\0\0", b""), (b"\0\0\0\1", b"\0\0\0\0\0")]  # fmt: skip


@pytest.fixture(scope="module")
def bad_control(tmp_path_factory) -> list:
    root = tmp_path_factory.mktemp("control")
    logs = []
    for n, (key, value) in enumerate(BAD_CONTROL):
        d = root / f"case-{n}" / "orders-0"
        with PartitionWriter(d, fsync=False) as w:
            w.append(kc.build_batch([kc.Record(None, 0, key, value)], base_offset=0, is_control=True))
        logs.append(d / "00000000000000000000.log")
    return logs


@pytest.mark.parametrize("release", DUMP_RELEASES)
def test_each_release_dies_at_a_bad_control_record_as_kafkacodec_says(bad_control, release, tmp_path):
    """ControlRecordType.parseTypeId and EndTransactionMarker.deserialize throw, nothing in
    kafka-dump-log catches it: kafkacodec stops at the same line and names the exception
    that release throws, in its words (dump_format.control_refused)."""
    kafka = dump_many(release, [["--files", str(log), "--deep-iteration"] for log in bad_control], tmp_path)
    mine = kafkacodec_dumps([["--kafka-version", release, "--deep-iteration", log] for log in bad_control])
    for log, (text, status), got in zip(bad_control, kafka, mine):
        assert status != "ok" and got["status"] == 1, (log, status, got["stderr"])
        assert f"stops here ({status}), and so" in got["stderr"], (release, log.parent.parent.name, status, got["stderr"])
        assert got["stdout"].splitlines()[-1] == text.splitlines()[-1]

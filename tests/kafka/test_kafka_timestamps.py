"""ListOffsets by timestamp on a compacted partition, judged by a broker of each release:
a first segment that holds no timestamp (emptied by the log cleaner, or of magic 0
messages) stands for its file's modification time (LogSegment.largestTimestamp), and
UnifiedLog.fetchOffsetByTimestamp answers from the first segment that reaches the target,
and from it alone. The partitions (tests/timestamp_partitions.py) are brought to the broker
as an operator brings files (Broker.transplant), their first segment's time set on the
broker's own copy; the broker's answers must be kafkacodec's over the same files."""

from __future__ import annotations

import time

import pytest
from conftest import kafkacodec_cli as cli
from kafka_broker import VERSIONS, Broker
from timestamp_partitions import T0, set_mtime, write

from kafkacodec.log import Partition

pytestmark = pytest.mark.kafka

NOW = int(time.time() * 1000)
#: topic: (how its first segment holds no timestamp, that segment's modification time)
CASES = {"cleaned-now": ("cleaned", NOW), "cleaned-old": ("cleaned", T0 + 5),
         "untimed-now": ("untimed", NOW), "untimed-old": ("untimed", T0 + 5)}  # fmt: skip
TARGETS = (T0 + 3, T0 + 15, T0 + 19, T0 + 20)


@pytest.fixture(scope="module", params=VERSIONS)
def answered(request, tmp_path_factory):
    root = tmp_path_factory.mktemp(f"timestamps-{request.param}")
    build = root / "build"
    build.mkdir()
    broker = Broker(request.param, root / "broker")
    with broker:
        for topic in CASES:
            broker.create_topic(build, topic, 1, cleanup_policy="compact")
        broker.stop()
    for topic, (kind, _ms) in CASES.items():
        broker.transplant(f"{topic}-0", write(root / "written" / f"{topic}-0", kind))
    for topic, (_kind, ms) in CASES.items():
        set_mtime(broker.log_dir / f"{topic}-0", ms)
    with broker:
        kafka = {topic: broker.list_offsets(build, topic, *TARGETS)["0"] for topic in CASES}
        broker.stop()
    return broker, kafka


@pytest.mark.parametrize("topic", CASES)
def test_listoffsets_by_timestamp_is_the_brokers(answered, topic):
    broker, kafka = answered
    d = broker.log_dir / f"{topic}-0"
    with Partition(d) as p:
        for target in TARGETS:
            found = p.list_offsets(target)
            got = (-1, -1) if found is None else (found.offset, found.timestamp)
            want = kafka[topic][str(target)]
            assert got == (want["offset"], want["timestamp"]), (topic, target)
            assert p.mtime_note() is not None  # every answer here rests on the first segment's time
    run = cli("lookup", d, "--timestamp", T0 + 15, ok=None)
    if kafka[topic][str(T0 + 15)]["offset"] == -1:
        assert run.returncode == 1 and "Kafka answers no offset" in run.stderr
    else:
        assert run.returncode == 0 and "rests on the modification time" in run.stderr


def test_the_cases_differ_where_the_time_does(answered):
    """The judge did judge the rule: a segment modified now stops the search, one modified
    before the target does not."""
    _broker, kafka = answered
    assert kafka["cleaned-now"][str(T0 + 15)]["offset"] == -1
    assert kafka["cleaned-old"][str(T0 + 15)]["offset"] == 15
    assert kafka["untimed-now"][str(T0 + 15)]["offset"] == -1
    assert kafka["untimed-old"][str(T0 + 15)]["offset"] == 15

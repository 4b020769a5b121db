"""ListOffsets by timestamp where a segment holds no timestamp: Kafka picks the first
segment whose LogSegment.largestTimestamp reaches the target, and that is the file's
last-modified time for a segment holding none (UnifiedLog.fetchOffsetByTimestamp). Judged
by brokers in tests/kafka/test_kafka_timestamps.py."""

from __future__ import annotations

import time

import pytest
from conftest import kafkacodec_cli
from timestamp_partitions import FIRST, T0, set_mtime, write

from kafkacodec.log import Partition


@pytest.mark.parametrize("kind", ["cleaned", "untimed"])
def test_a_segment_modified_after_the_target_answers_none(tmp_path, kind):
    d = write(tmp_path / "compact-0", kind)
    now = int(time.time() * 1000)
    set_mtime(d, now)
    with Partition(d) as p:
        assert p.list_offsets(T0 + 15) is None  # Kafka stops at the first segment: nothing there
        note = p.mtime_note()
    assert f"{FIRST} (modified {now})" in note and "LogSegment.largestTimestamp" in note
    run = kafkacodec_cli("lookup", d, "--timestamp", T0 + 15, ok=None)
    assert run.returncode == 1 and not run.stdout
    assert f"Kafka answers no offset for timestamp {T0 + 15}" in run.stderr and FIRST in run.stderr
    run = kafkacodec_cli("records", d, "--from-timestamp", T0 + 15, ok=None)
    assert run.returncode == 1 and "Kafka answers no offset" in run.stderr


@pytest.mark.parametrize("kind", ["cleaned", "untimed"])
def test_a_segment_modified_before_the_target_is_passed(tmp_path, kind):
    d = write(tmp_path / "compact-0", kind)
    set_mtime(d, T0 + 5)
    with Partition(d) as p:
        found = p.list_offsets(T0 + 15)
        assert (found.offset, found.timestamp) == (15, T0 + 15)
        assert "modified" in p.mtime_note()
    run = kafkacodec_cli("lookup", d, "--timestamp", T0 + 15)
    assert run.stdout.split()[:2] and "15" in run.stdout
    assert "rests on the modification time" in run.stderr


def test_a_segment_with_timestamps_needs_no_modification_time(tmp_path):
    d = write(tmp_path / "compact-0", "timed")
    set_mtime(d, int(time.time() * 1000))
    with Partition(d) as p:
        assert p.list_offsets(T0 + 15).offset == 15 and p.list_offsets(T0 + 3).offset == 3
        assert p.mtime_note() is None

"""A multi-broker Kafka judges kafkacodec on a cluster's disks (issue 56): a seeded subset
of tests/cluster_drill.py's scenarios on the oldest and the newest 4.x release (`make
cluster-drill` runs 50 of each kind per release). Each case runs a controller and three
brokers (one with two log.dirs), makes the scenario happen, copies the disks after a clean
shutdown and compares kafkacodec's reading of the copy with what the live cluster served
and what the restarted cluster does:

- unclean: the truncation offset kafkacodec predicts for each diverged replica is the one
  the broker's own log says it truncated to ("Truncating to offset N"); the records a
  consumer fetches after the restart are the ones kafkacodec reads from the replica it
  serves;
- lagging: the follower is said to lag by the records written while it was down and is not
  truncated; the records read from the disks are the live consumer's, every field;
  `groups` is kafka-consumer-groups --describe and `lookup` is Admin.listOffsets;
- moves: a -future replica, a deleted topic's stray replica and a reassigned-away one are
  set apart and named, and the restarted brokers keep copying the first and remove the
  others; the live topics are read once, as their consumers read them."""

from __future__ import annotations

import pytest
from cluster_drill import run_case
from kafka_broker import VERSIONS

pytestmark = [pytest.mark.kafka, pytest.mark.slow]

CASES = [("unclean", 1), ("unclean", 2), ("lagging", 1), ("moves", 1)]


@pytest.mark.parametrize("version", VERSIONS)
@pytest.mark.parametrize("kind, seed", CASES)
def test_a_cluster_judges_what_kafkacodec_reads_from_its_disks(version, kind, seed, tmp_path):
    case = run_case(kind, seed, version, tmp_path)
    assert case.predicted, "nothing was predicted"
    assert not case.problems, case.problems
    assert case.predicted == case.judged

"""Kafka's leader epoch cache and a follower's truncation when it rejoins its leader
(kafkacodec.brokers.epochs), case by case as Kafka's LeaderEpochFileCache and
AbstractFetcherThread decide them. The multi-broker drill (tests/cluster_drill.py) judges
the same rules against a real cluster's truncations."""

from __future__ import annotations

from hypothesis import given, settings
from hypothesis import strategies as st

from kafkacodec.brokers.epochs import EpochCache, LogEnds, rejoin
from kafkacodec.log.partition import EpochEntry


def cache(*pairs) -> EpochCache:
    return EpochCache([EpochEntry(e, o) for e, o in pairs])


def test_end_offset_for_follows_leader_epoch_file_cache():
    c = cache((2, 6), (3, 8), (5, 15))
    leo = 20
    assert c.end_offset_for(-1, leo) == (-1, -1)  # undefined epoch
    assert c.end_offset_for(5, leo) == (5, 20)  # the latest: the log end
    assert c.end_offset_for(6, leo) == (-1, -1)  # above every epoch
    assert c.end_offset_for(1, leo) == (1, 6)  # below the first: the first's start
    assert c.end_offset_for(2, leo) == (2, 8)
    assert c.end_offset_for(4, leo) == (3, 15)  # unknown, between: the floor, the next start
    assert EpochCache().end_offset_for(0, 7) == (-1, -1)


def test_assign_keeps_epochs_and_offsets_increasing():
    c = cache((1, 0), (2, 10), (4, 30))
    c.assign(4, 35)  # the same epoch further on: nothing
    assert c.entries[-1] == EpochEntry(4, 30)
    c.assign(3, 20)  # a lower epoch: those at or above it, or starting at or after it, go
    assert c.entries == [EpochEntry(1, 0), EpochEntry(2, 10), EpochEntry(3, 20)]
    c.assign(5, 15)  # an earlier start: the entries starting at or after it go
    assert c.entries == [EpochEntry(1, 0), EpochEntry(2, 10), EpochEntry(5, 15)]
    c.assign(-1, 40)  # invalid: ignored (Kafka refuses it)
    assert c.latest_epoch == 5


def test_truncations_of_the_cache_as_the_log_loads():
    c = cache((1, 0), (2, 10), (3, 20))
    c.truncate_from_end(25)  # the latest starts below: nothing
    assert len(c.entries) == 3
    c.truncate_from_end(10)
    assert c.entries == [EpochEntry(1, 0)]
    c = cache((1, 0), (2, 10), (3, 20))
    c.truncate_from_start(15)  # the last entry at or before it kept, moved to the start
    assert c.entries == [EpochEntry(2, 15), EpochEntry(3, 20)]
    c.truncate_from_start(20)
    assert c.entries == [EpochEntry(3, 20)]


def ends(start, end, hw, *pairs) -> LogEnds:
    return LogEnds(start, end, cache(*pairs), hw)


def test_the_unclean_election_of_the_issue():
    """The old leader wrote to 550 in epoch 0, a follower had 500; the follower that had
    300 was elected (epoch 2) and wrote to 420: both others are cut to 300 (KIP-101)."""
    leader = ends(0, 420, 420, (0, 0), (2, 300), (3, 420))  # (3: its epoch after the restart)
    for end in (550, 500):
        plan = rejoin(leader, ends(0, end, 500, (0, 0)))
        assert plan.truncate_to == 300 and plan.restart_at is None and plan.settled


def test_a_lagging_follower_is_not_cut():
    leader = ends(0, 900, 900, (0, 0), (1, 400))
    plan = rejoin(leader, ends(0, 600, 600, (0, 0), (1, 400)))
    assert plan.truncate_to is None and plan.end is None
    assert "no divergence" in plan.steps[-1]


def test_a_follower_past_the_leader_in_the_same_epoch_is_cut_to_its_end():
    plan = rejoin(ends(0, 500, 500, (0, 0), (1, 500)), ends(0, 520, 500, (0, 0)))
    assert plan.truncate_to == 500


def test_a_follower_that_does_not_know_the_leaders_epoch_steps_down_twice():
    """KIP-279: the follower's epochs 1 and 3, the leader's 1 and 2. The leader answers
    epoch 3 with (2, its end); the follower knows no epoch 2: it truncates to the end of its
    epoch 1 (its next epoch's start), asks again with epoch 1 and is answered (1, 50)."""
    leader = ends(0, 200, 200, (1, 0), (2, 50), (4, 200))
    follower = ends(0, 180, 100, (1, 0), (3, 120))
    plan = rejoin(leader, follower)
    assert plan.truncate_to == 50
    assert len([s for s in plan.steps if "diverging" in s]) == 2


def test_a_follower_without_epochs_truncates_to_its_high_watermark():
    plan = rejoin(ends(0, 300, 300, (0, 0)), ends(0, 250, 180))
    assert plan.truncate_to == 180 and "high watermark" in plan.steps[0]


def test_a_follower_ending_before_the_leaders_log_start_starts_over():
    plan = rejoin(ends(1000, 1500, 1500, (3, 1000)), ends(0, 400, 400, (1, 0)))
    assert plan.restart_at == 1000


@settings(max_examples=300, deadline=None)
@given(st.lists(st.tuples(st.integers(0, 3), st.integers(1, 40)), min_size=1, max_size=8), st.data())
def test_a_follower_diverging_from_a_common_history_is_cut_where_they_part(history, data):
    """Two replicas share a prefix of (epoch, records) runs and then each writes runs of
    its own in epochs the other never saw: the follower is cut exactly where they part
    (or not at all when it holds nothing beyond the shared prefix), whatever the runs."""
    def build(runs, start_epoch=0):
        entries, offset, epoch = [], 0, start_epoch
        for step, n in runs:
            epoch += step + (0 if not entries else 1)
            entries.append((epoch, offset))
            offset += n
        return entries, offset, epoch

    shared = data.draw(st.integers(1, len(history)))
    common, split, top = build(history[:shared])
    mine = data.draw(st.lists(st.integers(1, 30), max_size=3))
    theirs = data.draw(st.lists(st.integers(1, 30), max_size=3))
    # the leader's own epochs after the split are above the follower's (it was elected later)
    f_entries, f_end = list(common), split
    epoch = top
    for n in mine:
        epoch += 1
        f_entries.append((epoch, f_end))
        f_end += n
    l_entries, l_end = list(common), split
    epoch += 1
    for n in theirs:
        l_entries.append((epoch, l_end))
        l_end += n
        epoch += 1
    l_entries.append((epoch, l_end))  # its epoch once it leads again
    plan = rejoin(ends(0, l_end, l_end, *l_entries), ends(0, f_end, f_end, *f_entries))
    if mine:
        assert plan.truncate_to == min(split, l_end)
    elif f_end > l_end:
        assert plan.truncate_to == l_end
    else:
        assert plan.truncate_to is None
    assert plan.settled

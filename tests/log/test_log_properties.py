"""Properties of kafkacodec.log on random logs written by our writer: lookups agree with
a brute-force walk, recovery keeps exactly the longest valid prefix, a repair killed at
any step leaves the old or the new state, and bad directories get named errors."""

import os

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import kafkacodec as kc
from kafkacodec.log import Partition, PartitionWriter, Segment, recover_segment, repair_partition

SETTINGS = settings(
    max_examples=40,
    deadline=None,
    suppress_health_check=[HealthCheck.too_slow, HealthCheck.function_scoped_fixture],
)

batch_spec = st.tuples(
    st.integers(1, 4),  # records
    st.integers(0, 400),  # value size
    st.lists(st.integers(0, 5000), min_size=4, max_size=4),  # timestamps (not monotone)
    st.sampled_from(
        ["none", "none", "gzip", "lz4", "legacy1", "legacy0", "txn-abort", "txn-commit"]
    ),
    st.integers(0, 3),  # offset gap before the batch
)


def write_log(path, specs, *, segment_bytes=2500, interval=300):
    """A partition written with the writer; returns the batches' (base, last) offsets."""
    offsets = []
    nxt = 0
    with PartitionWriter(
        path, segment_bytes=segment_bytes, index_interval_bytes=interval, fsync=False
    ) as w:
        for i, (n, size, stamps, kind, gap) in enumerate(specs):
            base = nxt + gap
            recs = [
                kc.Record(
                    None, 1_700_000_000_000 + stamps[j % 4], b"k%d" % j, bytes([65 + i % 26]) * size
                )
                for j in range(n)
            ]
            if kind.startswith("legacy"):
                data = kc.build_message_set(recs, magic=int(kind[-1]), base_offset=base)
            elif kind.startswith("txn"):
                data = kc.build_batch(
                    recs, base_offset=base, producer_id=77, producer_epoch=1, is_transactional=True
                )
                w.append(data)
                base += n
                data = kc.build_control_batch(kind == "txn-commit", offset=base, timestamp=recs[0].timestamp,
                                              producer_id=77, producer_epoch=1)  # fmt: skip
                n = 1
            else:
                data = kc.build_batch(
                    recs, base_offset=base, compression=kind, partition_leader_epoch=i // 5
                )
            w.append(data)
            nxt = base + n
            offsets.append((base, nxt - 1))
    return offsets


def all_batches(p):
    return [(seg, b) for seg in p.segments for b in seg.batches()]


@SETTINGS
@given(st.lists(batch_spec, min_size=1, max_size=25), st.data())
def test_lookups_agree_with_brute_force(tmp_path_factory, specs, data):
    d = tmp_path_factory.mktemp("p") / "t-0"
    write_log(d, specs)
    p = Partition(d)
    everything = all_batches(p)
    last = everything[-1][1].last_offset
    assert p.log_end_offset == last + 1
    for _ in range(10):
        target = data.draw(st.integers(-2, last + 3))
        seg = p.segment_for(target) or p.segments[0]
        got = seg.translate_offset(target)
        want = next(
            ((b.last_offset, b.position, b.size) for b in seg.batches() if b.last_offset >= target),
            None,
        )
        assert (tuple(got) if got else None) == want
        ts = data.draw(st.integers(1_699_999_999_990, 1_700_000_005_010))
        start = data.draw(st.integers(seg.base_offset, last + 1))
        got = seg.find_offset_by_timestamp(ts, start)
        want = None
        for b in seg.batches():
            if b.max_timestamp >= ts:
                want = next(
                    (
                        (r.timestamp, r.offset)
                        for r in b.records()
                        if r.timestamp >= ts and r.offset >= start
                    ),
                    None,
                )
                if want:
                    break
        assert ((got.timestamp, got.offset) if got else None) == want
        # ListOffsets: the first record of the first segment whose largest timestamp reaches ts
        got = p.list_offsets(ts)
        want = None
        for s in p.segments:
            # a segment holding no timestamp (magic 0 only) stands for its file's
            # modification time (LogSegment.largestTimestamp): today, above every ts drawn
            largest = max([b.max_timestamp for b in s.batches()] + [-1])
            if largest < 0:
                largest = s.path.stat().st_mtime_ns // 1_000_000
            if largest >= ts:
                want = next(((r.timestamp, r.offset) for b in s.batches() if b.max_timestamp >= ts
                             for r in b.records() if r.timestamp >= ts), None)  # fmt: skip
                break
        assert ((got.timestamp, got.offset) if got else None) == want
    # -3: the first record carrying the largest timestamp of the log
    stamped = [
        (r.timestamp, r.offset)
        for _, b in everything
        for r in b.records()
        if r.timestamp >= 0 and r.control is None
    ]
    top = p.list_offsets(-3)
    if stamped:
        best = max(t for t, _ in stamped)
        assert top.timestamp == best
    # read(from_offset) yields exactly the records at or after it, in order
    frm = data.draw(st.integers(0, last + 1))
    got = [r.offset for _, _, r in p.read(frm)]
    want = [r.offset for _, b in everything for r in b.records() if r.offset >= frm]
    assert got == want
    # the writer's indexes pass the check that `verify` makes against the log
    for s in p.segments:
        walk = [(b.position, b.base_offset, b.last_offset, b.max_timestamp) for b in s.batches()]
        assert list(s.index_problems(walk)) == []


@SETTINGS
@given(st.lists(batch_spec, min_size=1, max_size=12), st.data())
def test_recovery_keeps_longest_valid_prefix(tmp_path_factory, specs, data):
    d = tmp_path_factory.mktemp("p") / "logs" / "t-0"
    write_log(d, specs, segment_bytes=1 << 30)
    log = d / "00000000000000000000.log"
    original = log.read_bytes()
    ends = [b.position + b.size for b in kc.iter_batches(original)]
    if data.draw(st.booleans()):
        cut = data.draw(st.integers(0, len(original)))
        damaged = original[:cut]
        want = max([0] + [e for e in ends if e <= cut])
    else:
        damaged = original + data.draw(st.binary(min_size=1, max_size=200))
        want = len(original)
    log.write_bytes(damaged)
    for f in d.glob("*index"):
        f.unlink()
    rep = recover_segment(Segment(d, 0))
    assert rep.valid_bytes == want
    assert rep.truncated_bytes == len(damaged) - want
    repair_partition(d, backup_root=d.parent.parent / "backup")
    assert log.read_bytes() == original[:want]
    backups = list((d.parent.parent / "backup").rglob("*.log.cut-at-*"))
    assert log.read_bytes() + (backups[0].read_bytes() if backups else b"") == damaged


def snapshot(d):
    return {p.name: p.read_bytes() for p in sorted(d.iterdir()) if ".kafkacodec-" not in p.name}


def visible(d):
    """What a reader sees: batches (positions) and index entries."""
    s = Segment(d, 1000)
    try:
        out = (
            [(b.position, b.size) for b in s.batches()] if s.size else [],
            list(s.offset_index),
            list(s.time_index),
        )
    except kc.DecodeError:
        out = ("stops at damage", s.size, list(s.offset_index), list(s.time_index))
    s.close()
    return out


def test_bad_paths_are_named(tmp_path):
    with pytest.raises(kc.NotAPartitionError, match="no such directory"):
        Partition(tmp_path / "nope-0")
    (tmp_path / "notes").mkdir()
    (tmp_path / "notes" / "readme.txt").write_text("hi")
    with pytest.raises(kc.NotAPartitionError, match="notes: not a partition directory"):
        Partition(tmp_path / "notes")
    f = tmp_path / "file-0"
    f.write_text("x")
    with pytest.raises(kc.NotAPartitionError, match="not a directory"):
        Partition(f)


def test_non_kafka_segment_gets_a_located_error(tmp_path):
    d = tmp_path / "t-0"
    d.mkdir()
    (d / "00000000000000000000.log").write_bytes(
        b"this is not a kafka log file at all, just text\n" * 3
    )
    p = Partition(d)
    with pytest.raises(
        kc.NotASegmentError, match=r"00000000000000000000\.log: byte 8: first entry declares"
    ):
        p.segments[0].sniff()
    it = p.segments[0].batches()
    assert list(it) == [] and it.remaining == 141  # a walk stops, it never guesses
    rep = recover_segment(p.segments[0])
    assert rep.valid_bytes == 0 and rep.invalid_position == 0 and rep.reason


def test_listing_reports_leftovers_and_reads_no_log(tmp_path):
    d = tmp_path / "orders-7"
    d.mkdir()
    for b in (0, 100, 250):
        (d / f"{b:020d}.log").write_bytes(b"")  # empty: opening must not need content
        (d / f"{b:020d}.index").write_bytes(b"")
    (d / "00000000000000000050.log.deleted").write_bytes(b"")
    (d / "00000000000000000300.index.swap").write_bytes(b"")
    (d / "00000000000000000900.index").write_bytes(b"")
    (d / "stray.bin").write_bytes(b"")
    (d / "leader-epoch-checkpoint").write_text("0\n2\n0 0\n4 120\n")
    (d / "partition.metadata").write_text("version: 0\ntopic_id: AAAAAAAAAAAAAAAAAAAAAA\n")
    p = Partition(d)
    assert p.base_offsets == [0, 100, 250]
    assert p.leftovers == ["00000000000000000050.log.deleted", "00000000000000000300.index.swap"]
    assert p.unknown == ["stray.bin"] and p.orphan_indexes == ["00000000000000000900.index"]
    assert p.leader_epochs == [(0, 0), (4, 120)] and p.epoch_for_offset(119) == 0
    assert p.topic_id == "AAAAAAAAAAAAAAAAAAAAAA"
    assert p.segment_for(99).base_offset == 0 and p.segment_for(250).base_offset == 250
    assert all(s._blob is None for s in p.segments)
    (d / "leader-epoch-checkpoint").write_text("0\n3\n0 0\n")
    broken = Partition(d)  # reported, and the segments are still read
    assert broken.leader_epochs == [] and broken.base_offsets == [0, 100, 250]
    assert len(broken.problems) == 1 and "leader-epoch-checkpoint: malformed" in broken.problems[0]


def test_read_committed_drops_aborted(tmp_path):
    d = tmp_path / "t-0"
    specs = [
        (2, 5, [1, 2, 3, 4], "txn-abort", 0),
        (2, 5, [1, 2, 3, 4], "none", 0),
        (3, 5, [1, 2, 3, 4], "txn-commit", 0),
    ]
    write_log(d, specs)
    p = Partition(d)
    assert [r.offset for _, _, r in p.read(0)] == list(range(9))
    assert [r.offset for _, _, r in p.read(0, committed_only=True)] == [3, 4, 5, 6, 7]
    (d / "00000000000000000000.txnindex").unlink()  # the markers alone must do
    assert [r.offset for _, _, r in Partition(d).read(0, committed_only=True)] == [3, 4, 5, 6, 7]


def test_log_dirs_lists_partitions_and_checkpoints(tmp_path):
    from kafkacodec.log import LogDirs, open_log

    write_log(tmp_path / "orders-1", [(2, 10, [1, 2, 3, 4], "none", 0)])
    write_log(tmp_path / "orders-0", [(2, 10, [1, 2, 3, 4], "none", 0)])
    write_log(tmp_path / "audit-12", [(1, 10, [1, 2, 3, 4], "gzip", 0)])
    (tmp_path / "meta.properties").write_text("version=1\n")
    (tmp_path / "log-start-offset-checkpoint").write_text("0\n1\norders 1 1\n")
    (tmp_path / "notes.txt").write_text("")
    dirs = open_log(tmp_path)
    assert isinstance(dirs, LogDirs)
    assert [(p.topic, p.partition) for p in dirs.partitions] == [
        ("audit", 12),
        ("orders", 0),
        ("orders", 1),
    ]
    assert dirs.other == ["notes.txt"]
    assert (
        dirs.log_start_offset(dirs.partitions[2]) == 1
        and dirs.log_start_offset(dirs.partitions[1]) == 0
    )
    assert isinstance(open_log(tmp_path / "orders-0"), Partition)


def test_a_log_dirs_named_like_a_partition_is_a_log_dirs(tmp_path):
    """A log.dirs called broker-1 matches <topic>-<partition>, but it holds partition
    directories, which a partition directory never does."""
    from kafkacodec.log import LogDirs, Partition, open_log

    root = tmp_path / "broker-1"
    (root / "orders-0").mkdir(parents=True)
    (root / "orders-0" / "00000000000000000000.log").write_bytes(kc.build_batch([kc.Record(None, 1, b"k", b"v")]))
    assert isinstance(open_log(root), LogDirs)
    assert isinstance(open_log(root / "orders-0"), Partition)
    (tmp_path / "t-3").mkdir()  # an empty partition directory stays one
    assert isinstance(open_log(tmp_path / "t-3"), Partition)


@given(st.binary(max_size=400), st.integers(0, 1 << 40))
@settings(max_examples=150, deadline=None)
def test_an_index_read_at_once_is_its_entries_one_at_a_time(raw, base):
    """fields() and pairs() (the generated entry's STRUCT over the whole file) give what
    each entry's parse gives, for any bytes: whole entries, a torn tail, a zero-filled end."""
    from kafkacodec.log.index import OffsetIndex, TimeIndex

    for cls in (OffsetIndex, TimeIndex):
        for data in (raw, raw + bytes(3 * cls.SIZE)):
            idx = cls("x" + cls.__name__, base, data=data)
            one = [tuple(getattr(idx._read(i), f) for f in cls.ENTRY.FIELDS) for i in range(len(idx))]
            assert idx.fields() == one
            assert idx.pairs() == [tuple(e) for e in idx]
    assert OffsetIndex.ENTRY.STRUCT.size == OffsetIndex.SIZE and TimeIndex.ENTRY.STRUCT.size == TimeIndex.SIZE


def test_a_first_segment_without_timestamps_is_picked_by_its_modification_time(tmp_path):
    """CI's counterexample: magic 0 batches alone in the first segment, a v2 batch in the
    second. Kafka's UnifiedLog.fetchOffsetByTimestamp picks the first segment whose
    LogSegment.largestTimestamp reaches the target; one holding no timestamp stands for its
    file's modification time (today), so a target before every record picks the first
    segment, finds no record with a timestamp there and answers nothing, though the second
    segment holds one."""
    d = tmp_path / "t-0"
    specs = [(1, 15, [63, 1312, 1491, 122], "legacy0", 0),
             (4, 310, [111, 202, 262, 5000], "legacy0", 0),
             (3, 342, [2403, 288, 346, 1185], "legacy0", 2),
             (3, 191, [1764, 159, 329, 69], "txn-commit", 1)]  # fmt: skip
    write_log(d, specs)
    p = Partition(d)
    assert len(p.segments) == 2
    assert all(b.max_timestamp == -1 for b in p.segments[0].batches())
    assert p.list_offsets(1_699_999_999_990) is None
    assert p.segments[0].path.name in p.mtime_note()
    # its modification time moved before the target: the second segment answers
    os.utime(p.segments[0].path, ns=(0, 0))
    got = Partition(d).list_offsets(1_699_999_999_990)
    assert (got.timestamp, got.offset) == (1_700_000_001_764, 11)

"""Spark's kafka source options on log directories (kafkacodec.pipeline.request): names and
meanings as KafkaSourceProvider and KafkaOffsetReaderAdmin give them. The same options are
compared with Spark's own source on a live broker in tests/kafka/test_kafka_spark.py; here
their resolution is checked against the log layer's answers, without Spark."""

import json

import pyarrow as pa
import pytest

pytest.importorskip("pyspark")

from kafkacodec.log.partition import LogDirs  # noqa: E402
from kafkacodec.pipeline.request import Range, Request, divided  # noqa: E402
from kafkacodec.pipeline.scan import PipelineError  # noqa: E402
from kafkacodec.pipeline.source import RecordsReader  # noqa: E402
from kafkacodec.sample import write_sample_log_dirs  # noqa: E402

pytestmark = [pytest.mark.spark]


@pytest.fixture(scope="module")
def logdirs(tmp_path_factory):
    return write_sample_log_dirs(
        tmp_path_factory.mktemp("logdirs") / "kafka", batches=60, segment_bytes=16 << 10
    )


def read(logdirs, **options) -> list[tuple[str, int, int]]:
    reader = RecordsReader({"path": str(logdirs), **options})
    got = [b for s in reader.partitions() for b in reader.read(s)]
    if not got:
        return []
    t = pa.Table.from_batches(got)
    return sorted(zip(t["topic"].to_pylist(), t["partition"].to_pylist(), t["offset"].to_pylist()))


def partitions(logdirs):
    return {(p.topic, p.partition): p for p in LogDirs(logdirs).partitions}


def everything(logdirs):
    return read(logdirs)


def test_subscribe_pattern_and_assign_take_the_partitions_they_name(logdirs):
    every = everything(logdirs)
    assert read(logdirs, subscribe="orders") == [r for r in every if r[0] == "orders"]
    assert read(logdirs, topics="orders") == read(logdirs, subscribe="orders")  # the earlier name
    assert read(logdirs, subscribePattern="ord.*|cl.cks") == [r for r in every if r[0] in ("orders", "clicks")]
    # found anywhere in a name, as Spark's SubscribePatternStrategy finds it (findFirstIn)
    assert read(logdirs, subscribePattern="rders") == [r for r in every if r[0] == "orders"]
    assert read(logdirs, subscribePattern="^rders$") == []
    with pytest.raises(PipelineError, match=r"option subscribe: no partition of nosuch, other in the log "
                                            r"directories read \(.*\): as Spark's kafka source"):
        read(logdirs, subscribe="orders,nosuch,other")
    assign = json.dumps({"orders": [1], "clicks": [0]})
    assert read(logdirs, assign=assign) == [r for r in every if r[:2] in (("orders", 1), ("clicks", 0))]
    with pytest.raises(PipelineError, match="Only one of"):
        read(logdirs, subscribe="orders", assign=assign)
    with pytest.raises(PipelineError, match="no partition directory for orders-9"):
        read(logdirs, assign=json.dumps({"orders": [9]}))


def test_offsets_per_partition_as_spark_reads_them(logdirs):
    parts = partitions(logdirs)
    orders = sorted(k for k in parts if k[0] == "orders")
    every = [r for r in everything(logdirs) if r[0] == "orders"]
    (a, b) = orders
    first_b = parts[b].kafka_log_start_offset()
    start = {"orders": {str(a[1]): 10, str(b[1]): -2}}
    end = {"orders": {str(a[1]): 30, str(b[1]): -1}}
    got = read(logdirs, subscribe="orders", startingOffsets=json.dumps(start), endingOffsets=json.dumps(end))
    assert got == [r for r in every if (r[:2] == a and 10 <= r[2] < 30) or (r[:2] == b and r[2] >= first_b)]
    # JSON must name every partition read (Spark's startOffsetDoesNotMatchAssigned)
    with pytest.raises(PipelineError, match="must name every partition"):
        read(logdirs, subscribe="orders", startingOffsets=json.dumps({"orders": {str(a[1]): 10}}))
    with pytest.raises(PipelineError, match="can't be latest for batch"):
        read(logdirs, subscribe="orders", startingOffsets="latest")
    with pytest.raises(PipelineError, match="can't be earliest for batch"):
        read(logdirs, subscribe="orders", endingOffsets="earliest")
    with pytest.raises(PipelineError, match="greater than the end offset"):
        read(logdirs, assign=json.dumps({"orders": [a[1]]}),
             startingOffsets=json.dumps({"orders": {str(a[1]): 30}}),
             endingOffsets=json.dumps({"orders": {str(a[1]): 10}}))  # fmt: skip


def test_an_end_past_the_log_is_data_loss_unless_failOnDataLoss_is_false(logdirs):
    parts = partitions(logdirs)
    key = next(k for k in parts if k[0] == "orders")
    end = parts[key].log_end_offset
    spec = json.dumps({"orders": {str(key[1]): end + 100}})
    with pytest.raises(PipelineError, match="past the end of the log"):
        read(logdirs, assign=json.dumps({"orders": [key[1]]}), endingOffsets=spec)
    with pytest.warns(UserWarning, match="failOnDataLoss=false"):
        got = read(logdirs, assign=json.dumps({"orders": [key[1]]}), endingOffsets=spec, failOnDataLoss="false")
    assert got == [r for r in everything(logdirs) if r[:2] == key]


def test_timestamps_start_where_kafka_lists_them(logdirs):
    """startingTimestamp is where reading starts (Kafka's ListOffsets by timestamp, each
    partition), not a filter: later records with smaller timestamps are read too."""
    parts = partitions(logdirs)
    key = next(k for k in parts if k[0] == "orders")
    p = parts[key]
    middle = p.list_offsets(-1).offset // 2
    stamp = next(r.timestamp for _s, _b, r in p.read(middle) if r.offset >= middle)
    answer = p.list_offsets(stamp).offset
    got = read(logdirs, assign=json.dumps({"orders": [key[1]]}), startingTimestamp=str(stamp))
    assert [r[2] for r in got] == [o for t, n, o in everything(logdirs) if (t, n) == key and o >= answer]
    by = json.dumps({"orders": {str(key[1]): stamp}})
    assert read(logdirs, assign=json.dumps({"orders": [key[1]]}), startingOffsetsByTimestamp=by) == got
    ended = read(logdirs, assign=json.dumps({"orders": [key[1]]}), endingTimestamp=str(stamp))
    assert [r[2] for r in ended] == [o for t, n, o in everything(logdirs) if (t, n) == key and o < answer]
    late = str(4_102_444_800_000)  # 2100: no record
    with pytest.raises(PipelineError, match="No offset matched"):
        read(logdirs, subscribe="orders", startingTimestamp=late)
    assert read(logdirs, subscribe="orders", startingTimestamp=late, startingOffsetsByTimestampStrategy="latest") == []


def test_option_names(logdirs, caplog):
    with pytest.raises(PipelineError, match="unknown option 'startingoffset'.*`kafkacodec spark options` lists them"):
        read(logdirs, startingOffset="earliest")
    with pytest.raises(PipelineError, match="not supported"):
        read(logdirs, **{"kafka.auto.offset.reset": "earliest"})
    with pytest.raises(PipelineError, match="given twice"):
        read(logdirs, topics="orders", subscribe="orders")
    with caplog.at_level("WARNING", logger="kafkacodec.pipeline"):
        got = read(logdirs, **{"kafka.bootstrap.servers": "broker:9092", "kafkaConsumer.pollTimeoutMs": "512"})
    assert got == everything(logdirs)
    assert "kafka.bootstrap.servers" in caplog.text and "kafkaconsumer.polltimeoutms" in caplog.text
    # case-insensitive, as Spark's options are
    assert read(logdirs, SUBSCRIBE="orders") == read(logdirs, subscribe="orders")


def _ranges(sizes):
    return [Range(None, ("t", i), 100 * i, 100 * i + n) for i, n in enumerate(sizes)]


def _spans(ranges):
    return [(r.key[1], r.start - 100 * r.key[1], r.end - 100 * r.key[1]) for r in ranges]


def test_input_partitions_are_cut_as_sparks_calculator_cuts_them():
    """KafkaOffsetRangeCalculator's rules, cases as its suite (KafkaOffsetRangeCalculatorSuite)
    states them: one per partition unless asked; maxRecordsPerPartition first, then the
    large ranges in proportion for minPartitions; empty ranges dropped."""
    assert _spans(divided(_ranges([3, 0, 5]), None, None)) == [(0, 0, 3), (2, 0, 5)]
    assert _spans(divided(_ranges([4]), 2, None)) == [(0, 0, 2), (0, 2, 4)]
    assert _spans(divided(_ranges([10]), None, 4)) == [(0, 0, 3), (0, 3, 6), (0, 6, 10)]
    # 1 and 10 over minPartitions 4: the small one is left whole, the other cut in three
    assert _spans(divided(_ranges([1, 10]), 4, None)) == [(0, 0, 1), (1, 0, 3), (1, 3, 6), (1, 6, 10)]
    assert len(divided(_ranges([5, 5]), 2, None)) == 2  # already enough
    with pytest.raises(PipelineError, match="minPartitions must be positive"):
        Request.parse({"minPartitions": "0"})


# --------------------------------------------- a broker changing the files during a read


def _slices_and_rows(root, **options):
    reader = RecordsReader({"path": str(root), "split_size": "4k", **options})
    return reader, reader.partitions()


def _rows_of(reader, slices):
    got = [b for s in slices for b in reader.read(s)]
    t = pa.Table.from_batches(got)
    return sorted(zip(t["partition"].to_pylist(), t["offset"].to_pylist(), t["value"].to_pylist()))


def _replace(path):
    """Replace a file as Kafka's log cleaner does: the same name, another file (here with
    the same bytes); the old one renamed .deleted (LocalLog.replaceSegments)."""
    data = path.read_bytes()
    path.rename(path.with_name(path.name + ".deleted"))
    tmp = path.with_name(path.name + ".swap")
    tmp.write_bytes(data)
    tmp.rename(path)


def test_segments_replaced_or_deleted_after_planning(tmp_path):
    """The reader reads a slice from the file planned (kept as .log.deleted for a while),
    else its offsets from the segments as they are now; offsets retention removed meanwhile
    are data loss (an error, or a warning with failOnDataLoss=false)."""
    root = write_sample_log_dirs(tmp_path / "kafka", batches=40, segment_bytes=8 << 10)
    reader, slices = _slices_and_rows(root, subscribe="orders")
    before = _rows_of(reader, slices)
    orders = next(root.rglob("orders-0"))
    segs = sorted(orders.glob("*.log"))
    assert len(segs) >= 3
    _replace(segs[1])  # compaction swapped it in: the planned bytes are read from .deleted
    assert _rows_of(reader, slices) == before
    segs[1].with_name(segs[1].name + ".deleted").unlink()  # file.delete.delay.ms later
    assert _rows_of(reader, slices) == before  # read from the new file, by offsets
    # retention removed the first segment while the read ran (Kafka moves the log start)
    first = segs[0]
    for f in orders.glob(first.stem + ".*"):
        f.unlink()
    with pytest.raises(PipelineError, match="deleted by the broker while the read ran"):
        _rows_of(reader, slices)
    lenient = RecordsReader({"path": str(root), "split_size": "4k", "subscribe": "orders", "failOnDataLoss": "false"})
    with pytest.warns(UserWarning, match="deleted by the broker"):
        got = _rows_of(lenient, slices)
    gone = int(segs[1].stem)
    assert got == [r for r in before if r[0] != 0 or r[1] >= gone]


def test_a_segment_deleted_between_the_check_and_the_opening(tmp_path, monkeypatch):
    """The race the live-broker test found: the reader saw the planned file, then the broker
    renamed it .log.deleted before the reader opened it. The opening fails, and the slice is
    read where it is then (here: the same bytes under Kafka's .deleted name)."""
    from kafkacodec.pipeline import read as read_module

    root = write_sample_log_dirs(tmp_path / "kafka", batches=40, segment_bytes=8 << 10)
    reader, slices = _slices_and_rows(root, subscribe="orders")
    before = _rows_of(reader, slices)
    orders = next(root.rglob("orders-0"))
    victim = sorted(orders.glob("*.log"))[1]
    real, calls = read_module.current, []

    def stale_then_real(s, **kw):  # the check passes, then the broker renames the file
        calls.append(s.base_offset)
        if s.base_offset == int(victim.stem) and len(calls) and victim.exists():
            victim.rename(victim.with_name(victim.name + ".deleted"))
            return [s]
        return real(s, **kw)

    monkeypatch.setattr(read_module, "current", stale_then_real)
    assert _rows_of(reader, slices) == before
    assert calls.count(int(victim.stem)) >= 2  # checked again after the failed opening


def test_a_segment_renamed_after_it_was_opened_and_before_it_was_planned(tmp_path):
    """The race the live-broker test found next: planning opened a segment (finding where
    the read starts), the broker renamed it .log.deleted (retention), then its slices were
    cut from the open mapping. The slices name the file mapped, not the path's file at some
    other moment: the reader finds it under .deleted, where a stat of the path would have
    found nothing and left a slice that fails as a missing segment."""
    from kafkacodec.log.partition import Partition
    from kafkacodec.pipeline.options import Options
    from kafkacodec.pipeline.read import records
    from kafkacodec.pipeline.scan import Bounds, partition_slices

    root = write_sample_log_dirs(tmp_path / "kafka", batches=40, segment_bytes=8 << 10)
    orders = next(root.rglob("orders-0"))
    opts = Options.parse({})
    expected = Partition(orders)
    want = [o for s in partition_slices(expected, Bounds(), (), None) for b in records(s, opts)
            for o in b.column("offset").to_pylist()]  # fmt: skip
    p = Partition(orders)
    victim = p.segments[0]
    assert victim.size > 0  # opened, as finding the start of a read opens it
    victim.path.rename(victim.path.with_name(victim.path.name + ".deleted"))
    slices = partition_slices(p, Bounds(), (), None)
    assert all(s.identity is not None for s in slices)
    got = [o for s in slices for b in records(s, opts) for o in b.column("offset").to_pylist()]
    assert got == want and got


def test_a_segment_without_timestamps_decides_as_in_kafka(tmp_path):
    """A compacted partition whose first segment the cleaner emptied: Kafka's ListOffsets
    for a later timestamp stops at it when its file was modified after the target
    (LogSegment.largestTimestamp), so Spark's source finds no offset: an error by default
    (startingOffsetsByTimestampStrategy=error, naming the segment's modification time),
    the latest offset with `latest`; modified before the target, the next segment answers."""
    import time

    from timestamp_partitions import T0, set_mtime, write

    d = write(tmp_path / "logs" / "compact-0", "cleaned")
    set_mtime(d, int(time.time() * 1000))
    with pytest.raises(PipelineError, match="No offset matched.*modification time of 00000000000000000000.log"):
        read(tmp_path / "logs", subscribe="compact", startingTimestamp=str(T0 + 15))
    assert read(tmp_path / "logs", subscribe="compact", startingTimestamp=str(T0 + 15),
                startingOffsetsByTimestampStrategy="latest") == []  # fmt: skip
    set_mtime(d, T0 + 5)
    got = read(tmp_path / "logs", subscribe="compact", startingTimestamp=str(T0 + 15))
    assert [o for _t, _p, o in got] == list(range(15, 20))


def test_a_pattern_takes_no_internal_topic(tmp_path):
    """Spark's pattern subscription matches the topics Admin.listTopics lists: not
    __consumer_offsets, __transaction_state, __share_group_state (Topic.isInternal) nor the
    metadata log; __remote_log_metadata is listed."""
    import kafkacodec as kc
    from kafkacodec.log import PartitionWriter

    names = ("__consumer_offsets-0", "__transaction_state-0", "__cluster_metadata-0", "__remote_log_metadata-0",
             "orders-0")  # fmt: skip
    for name in names:
        with PartitionWriter(tmp_path / name, fsync=False) as w:
            w.append(kc.build_batch([kc.Record(None, 0, b"k", b"v")]))
    assert {t for t, _p, _o in read(tmp_path, subscribePattern="_|o")} == {"__remote_log_metadata", "orders"}
    assert {t for t, _p, _o in read(tmp_path, subscribe="__consumer_offsets")} == {"__consumer_offsets"}

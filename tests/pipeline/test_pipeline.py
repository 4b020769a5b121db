"""The Spark data sources (kafkacodec.pipeline). Most tests call the readers' partitions()
and read() directly; a few share one local SparkSession."""

import re
import shutil
import struct
import sys
import warnings

import pyarrow as pa
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

pytest.importorskip("pyspark")

import kafkacodec as kc  # noqa: E402
from kafkacodec.log.partition import AbortFilter, LogDirs, Partition  # noqa: E402
from kafkacodec.pipeline.scan import PipelineError  # noqa: E402
from kafkacodec.pipeline.source import BatchesReader, ProblemsReader, RecordsReader  # noqa: E402
from kafkacodec.records.columnar import walk_batches  # noqa: E402
from kafkacodec.runtime.crc import crc32c  # noqa: E402
from kafkacodec.runtime.errors import DecodeError  # noqa: E402
from kafkacodec.sample import write_sample_log_dirs  # noqa: E402
from kafkacodec.units import utc_ms  # noqa: E402

pytestmark = [pytest.mark.spark]


@pytest.fixture(scope="module")
def logdirs(tmp_path_factory):
    return write_sample_log_dirs(
        tmp_path_factory.mktemp("logdirs") / "kafka", batches=120, segment_bytes=16 << 10
    )


def read_all(reader) -> pa.Table:
    parts = reader.partitions()
    got = [b for p in parts for b in reader.read(p)]
    return pa.Table.from_batches(got) if got else pa.table({"topic": pa.array([], pa.string())})


def object_path(root, committed_only=False, include_control=False):
    """(topic, partition, offset, key, value, headers, timestamp or None) from the log layer."""
    out = []
    for p in LogDirs(root).partitions:
        for _seg, _batch, r in p.read(committed_only=committed_only):
            if r.control is not None and not include_control:
                continue
            ts = None if r.timestamp_type == "NoTimestampType" else r.timestamp
            out.append(
                (p.topic, p.partition, r.offset, r.key, r.value, [tuple(h) for h in r.headers], ts)
            )
    return sorted(out, key=lambda t: (t[0], t[1], t[2]))


def rows(table: pa.Table):
    out = []
    for d in table.to_pylist():
        ts = None if d["timestamp"] is None else int(d["timestamp"].timestamp() * 1000 + 0.5)
        assert d["headers"] != []  # no headers: null, as Spark's kafka source gives them
        headers = [(h["key"], h["value"]) for h in d["headers"] or []]
        out.append((d["topic"], d["partition"], d["offset"], d["key"], d["value"], headers, ts))
    return sorted(out, key=lambda t: (t[0], t[1], t[2]))


def test_one_input_partition_per_segment(logdirs):
    reader = RecordsReader({"includeHeaders": "true", "include_metadata": "true", "path": str(logdirs)})
    segments = sum(len(p.segments) for p in LogDirs(logdirs).partitions)
    assert len(reader.partitions()) == segments > 3


def test_records_equal_the_log_layer(logdirs):
    table = read_all(RecordsReader({"includeHeaders": "true", "include_metadata": "true", "path": str(logdirs)}))
    assert rows(table) == object_path(logdirs)
    assert not any(table["is_control"].to_pylist())


def test_read_committed_drops_aborted_transactions(logdirs):
    committed = read_all(RecordsReader({"includeHeaders": "true", "include_metadata": "true", "path": str(logdirs), "isolation": "read_committed"}))
    everything = read_all(RecordsReader({"includeHeaders": "true", "include_metadata": "true", "path": str(logdirs)}))
    assert rows(committed) == object_path(logdirs, committed_only=True)
    assert committed.num_rows < everything.num_rows  # the sample aborts transactions


def test_include_control(logdirs):
    table = read_all(RecordsReader({"includeHeaders": "true", "include_metadata": "true", "path": str(logdirs), "include_control": "true"}))
    assert any(table["is_control"].to_pylist())


def test_one_partition_directory_and_several_paths(logdirs):
    parts = LogDirs(logdirs).partitions
    one = read_all(RecordsReader({"includeHeaders": "true", "include_metadata": "true", "path": str(parts[0].path)}))
    assert set(one["topic"].to_pylist()) == {parts[0].topic}
    two = read_all(RecordsReader({"paths": f'["{parts[0].path}", "{parts[1].path}"]'}))
    assert (
        two.num_rows
        == one.num_rows + read_all(RecordsReader({"includeHeaders": "true", "include_metadata": "true", "path": str(parts[1].path)})).num_rows
    )


def test_batches_format(logdirs):
    table = read_all(BatchesReader({"path": str(logdirs), "include_control": "true"}))
    expected = sum(1 for p in LogDirs(logdirs).partitions for s in p.segments for _ in s.batches())
    assert table.num_rows == expected
    assert table.schema.field("base_timestamp").type == pa.timestamp("us", tz="UTC")


@pytest.mark.parametrize(
    "options, needle",
    [
        ({}, "no path"),
        ({"path": "/nonexistent/kafka"}, "no such"),
        ({"path": "__empty__"}, "no Kafka data"),
        ({"path": "__logdirs__", "isolation": "serializable"}, "isolation"),
        ({"path": "__logdirs__", "verify_crc": "maybe"}, "verify_crc"),
        ({"path": "__logdirs__", "on_corrupt": "ignore"}, "on_corrupt"),
        ({"path": "__logdirs__", "split_size": "lots"}, "split_size"),
        ({"path": "__logdirs__", "split_size": "-1m"}, "split_size"),
    ],
)
def test_bad_paths_and_options(logdirs, tmp_path, options, needle):
    options = dict(options)
    if options.get("path") == "__empty__":
        options["path"] = str(tmp_path)
    elif options.get("path") == "__logdirs__":
        options["path"] = str(logdirs)
    with pytest.raises(PipelineError, match=needle):
        RecordsReader(options).partitions()


def _damaged_copy(logdirs, tmp_path):
    part = next(p for p in LogDirs(logdirs).partitions if len(p.segments) > 1)
    target = tmp_path / part.path.name
    shutil.copytree(part.path, target)
    seg = Partition(target).segments[0].path
    data = bytearray(seg.read_bytes())
    entries = walk_batches(bytes(data)).entries
    at = int(entries["position"][len(entries) // 2]) + 70  # inside the middle batch's CRC
    data[at] ^= 0xFF  # (batches before the damage stay readable)
    seg.write_bytes(bytes(data))
    return target, seg


def test_on_corrupt_fail_names_file_and_position(logdirs, tmp_path):
    target, seg = _damaged_copy(logdirs, tmp_path)
    reader = RecordsReader({"includeHeaders": "true", "include_metadata": "true", "path": str(target)})
    with pytest.raises(DecodeError) as err:
        read_all(reader)
    assert str(seg) in str(err.value) and "byte" in str(err.value)


def test_on_corrupt_skip_goes_on_and_says_where(logdirs, tmp_path):
    target, seg = _damaged_copy(logdirs, tmp_path)
    reader = RecordsReader({"includeHeaders": "true", "include_metadata": "true", "path": str(target), "on_corrupt": "skip"})
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        table = read_all(reader)
    assert any(str(seg) in str(w.message) for w in caught)
    assert table.num_rows > 0


def _recrc(data: bytearray, pos: int) -> None:
    """Recompute the CRC-32C of the v2 batch at pos (after an edit inside it)."""
    size = struct.unpack_from(">i", data, pos + 8)[0] + 12
    struct.pack_into(">I", data, pos + 17, crc32c(bytes(data[pos + 21 : pos + size])))


def _undecodable_copy(logdirs, tmp_path):
    """A partition whose middle v2 batch claims 5 records more than it holds (its CRC made
    right again, so that only record decoding can find it)."""
    part = next(p for p in LogDirs(logdirs).partitions if p.topic == "orders")
    target = tmp_path / part.path.name
    shutil.copytree(part.path, target)
    seg = Partition(target).segments[0].path
    data = bytearray(seg.read_bytes())
    e = walk_batches(bytes(data)).entries
    k = len(e) // 2
    pos = int(e["position"][k])
    count = struct.unpack_from(">i", data, pos + 57)[0]
    struct.pack_into(">i", data, pos + 57, count + 5)
    _recrc(data, pos)
    seg.write_bytes(bytes(data))
    return target, seg, pos, int(e["len_batch"][k]) + 12, count


def test_skip_leaves_out_only_the_batch_that_does_not_decode(logdirs, tmp_path):
    target, seg, pos, size, count = _undecodable_copy(logdirs, tmp_path)
    with pytest.raises(DecodeError):
        read_all(RecordsReader({"includeHeaders": "true", "include_metadata": "true", "path": str(target)}))
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        table = read_all(RecordsReader({"includeHeaders": "true", "include_metadata": "true", "path": str(target), "on_corrupt": "skip"}))
    assert any(f"from byte {pos}" in str(w.message) for w in caught)
    expected = read_all(RecordsReader({"includeHeaders": "true", "include_metadata": "true", "path": str(part_of(logdirs, target.name))}))
    assert table.num_rows == expected.num_rows - count
    assert pos not in table["position"].to_pylist()
    problems = read_all(ProblemsReader({"path": str(target), "on_corrupt": "report"}))
    assert problems.to_pylist() == [{
        "topic": "orders", "partition": Partition(target).partition, "segment": seg.name,
        "position": pos, "error": "TruncatedError",
        "message": problems["message"][0].as_py(), "skipped_bytes": size,
    }]  # fmt: skip
    assert str(seg) in problems["message"][0].as_py()


def part_of(logdirs, name):
    return next(p.path for p in LogDirs(logdirs).partitions if p.path.name == name)


def test_problems_lists_damage_and_a_partial_tail(logdirs, tmp_path):
    target, seg = _damaged_copy(logdirs, tmp_path)
    last = Partition(target).segments[-1].path
    assert last != seg
    with open(last, "ab") as f:
        f.write(last.read_bytes()[:30])  # the start of a batch a crash cut short
    rows_ = read_all(ProblemsReader({"path": str(target)})).to_pylist()
    by_file = {r["segment"]: r for r in rows_}
    assert by_file[seg.name]["error"] == "ChecksumError"
    assert by_file[seg.name]["skipped_bytes"] == seg.stat().st_size - by_file[seg.name]["position"]
    assert by_file[last.name]["error"] == "TruncatedError"
    assert by_file[last.name]["skipped_bytes"] == 30
    # The same damage read with report: the rows before it, silently.
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        table = read_all(RecordsReader({"includeHeaders": "true", "include_metadata": "true", "path": str(target), "on_corrupt": "report"}))
    assert 0 < table.num_rows


# ------------------------------------------------------------- splits and pushdown


def _segments(root):
    return {str(s.path): s for p in LogDirs(root).partitions for s in p.segments}


def test_split_size_cuts_segments_at_batch_boundaries(logdirs):
    whole = RecordsReader({"includeHeaders": "true", "include_metadata": "true", "path": str(logdirs), "split_size": "0"}).partitions()
    split = RecordsReader({"includeHeaders": "true", "include_metadata": "true", "path": str(logdirs), "split_size": "8k"})
    slices = split.partitions()
    assert len(slices) > 2 * len(whole)
    by_segment = {}
    for s in slices:
        by_segment.setdefault((s.directory, s.base_offset), []).append(s)
    for (directory, base), parts in by_segment.items():
        p = Partition(directory)
        seg = next(x for x in p.segments if x.base_offset == base)
        starts = {b.position for b in seg.batches()}
        parts.sort(key=lambda s: s.start)
        assert parts[0].start == 0 and parts[-1].end == seg.size
        for a, b in zip(parts, parts[1:]):
            assert a.end == b.start and b.start in starts
    assert rows(read_all(split)) == object_path(logdirs)


def _shifted_index_copy(logdirs, tmp_path):
    """A partition whose .index positions all point one byte past a batch start (increasing,
    so they pass Kafka's sanity check: only the bytes they point at tell)."""
    part = next(p for p in LogDirs(logdirs).partitions if p.topic == "orders")
    target = tmp_path / part.path.name
    shutil.copytree(part.path, target)
    for index in target.glob("*.index"):
        raw = bytearray(index.read_bytes())
        for at in range(0, len(raw) - 7, 8):
            rel, pos = struct.unpack_from(">ii", raw, at)
            if (rel, pos) != (0, 0):
                struct.pack_into(">ii", raw, at, rel, pos + 1)
        index.write_bytes(bytes(raw))
    return target


def test_a_wrong_index_costs_speed_never_rows(logdirs, tmp_path):
    target = _shifted_index_copy(logdirs, tmp_path)
    expected = [t for t in object_path(logdirs) if t[:2] == ("orders", Partition(target).partition)]
    split = RecordsReader({"includeHeaders": "true", "include_metadata": "true", "path": str(target), "split_size": "4k"})
    assert rows(read_all(split)) == expected
    middle = expected[len(expected) // 2][2]
    reader = RecordsReader({"includeHeaders": "true", "include_metadata": "true", "path": str(target), "starting_offset": str(middle)})
    assert rows(read_all(reader)) == [t for t in expected if t[2] >= middle]


@pytest.mark.parametrize("shift", [-(10**6), 10**6])
def test_a_wrong_time_index_costs_speed_never_rows(logdirs, tmp_path, shift):
    part = next(p for p in LogDirs(logdirs).partitions if p.topic == "orders")
    target = tmp_path / part.path.name
    shutil.copytree(part.path, target)
    for index in target.glob("*.timeindex"):  # every timestamp moved: still increasing
        raw = bytearray(index.read_bytes())
        for at in range(0, len(raw) - 11, 12):
            ts, rel = struct.unpack_from(">qi", raw, at)
            struct.pack_into(">qi", raw, at, ts + shift, rel)
        index.write_bytes(bytes(raw))
    expected = [t for t in object_path(logdirs) if t[:2] == ("orders", part.partition)]
    stamps = sorted(t[6] for t in expected)
    for since in (stamps[len(stamps) // 3], stamps[-3]):
        reader = RecordsReader({"includeHeaders": "true", "include_metadata": "true", "path": str(target), "starting_timestamp": str(since)})
        assert rows(read_all(reader)) == [t for t in expected if t[6] >= since]


def _apply(expected, topic, partition, first, last, since_ms):
    out = []
    for t in expected:
        if topic is not None and t[0] != topic or partition is not None and t[1] != partition:
            continue
        if first is not None and t[2] < first or last is not None and t[2] > last:
            continue
        if since_ms is not None and (t[6] is None or t[6] < since_ms):
            continue
        out.append(t)
    return out


@settings(max_examples=40, deadline=None)
@given(data=st.data())
def test_read_options_give_exactly_the_rows_asked_for(logdirs, data):
    expected = object_path(logdirs)
    topic = data.draw(st.sampled_from([None, "orders", "clicks", "legacy-events", "absent"]))
    partition = data.draw(st.sampled_from([None, 0, 1]))
    offsets = sorted({t[2] for t in expected})
    first = data.draw(st.none() | st.sampled_from(offsets))
    last = data.draw(st.none() | st.sampled_from(offsets))
    stamps = sorted({t[6] for t in expected if t[6] is not None})
    since = data.draw(st.none() | st.sampled_from(stamps))
    options = {"includeHeaders": "true", "include_metadata": "true", "path": str(logdirs), "split_size": data.draw(st.sampled_from(["0", "6k"]))}
    for key, value in (("topics", topic), ("partitions", partition), ("starting_offset", first),
                       ("ending_offset", None if last is None else last + 1),
                       ("starting_timestamp", since)):  # fmt: skip
        if value is not None:
            options[key] = str(value)
    if topic == "absent":  # a subscribed topic the log.dirs do not hold: refused, as Spark's source does
        with pytest.raises(PipelineError, match="option subscribe: no partition of absent"):
            read_all(RecordsReader(options))
        return
    got = rows(read_all(RecordsReader(options)))
    assert got == _apply(expected, topic, partition, first, last, since)


def test_read_options_skip_what_cannot_match(logdirs):
    p = next(p for p in LogDirs(logdirs).partitions if p.topic == "orders" and p.partition == 1)
    everything = RecordsReader({"includeHeaders": "true", "include_metadata": "true", "path": str(logdirs)}).partitions()
    k = len(p.segments) // 2
    middle, following = p.segments[k], p.segments[k + 1].base_offset
    offsets = [t[2] for t in object_path(logdirs) if t[:2] == ("orders", 1)]
    inside = [o for o in offsets if middle.base_offset <= o < following - 30]
    first = inside[len(inside) // 2]
    reader = RecordsReader({"includeHeaders": "true", "include_metadata": "true", "path": str(logdirs), "topics": "orders", "partitions": "1",
                            "starting_offset": str(first), "ending_offset": str(first + 20)})  # fmt: skip
    slices = reader.partitions()
    assert len(slices) == 1 and len(everything) > 4
    (s,) = slices
    assert s.base_offset == middle.base_offset and s.start > 0 and s.end < middle.size
    table = read_all(reader)
    assert table["offset"].to_pylist() == [o for o in offsets if first <= o < first + 20]
    # A timestamp bound past every record: nothing to read at all.
    late = RecordsReader({"includeHeaders": "true", "include_metadata": "true", "path": str(logdirs), "starting_timestamp": str(7_258_118_400_000)})
    assert late.partitions() == []


# ------------------------------------------------------------------ on a local Spark


def test_spark_reads_like_its_kafka_source(spark, logdirs):
    """Spark's kafka source's columns first; headers only with includeHeaders, as there."""
    df = spark.read.format("kafkacodec").option("includeHeaders", "true").load(str(logdirs))
    kafka_columns = [
        ("key", "binary"), ("value", "binary"), ("topic", "string"), ("partition", "int"),
        ("offset", "bigint"), ("timestamp", "timestamp"), ("timestampType", "int"),
        ("headers", "array<struct<key:string,value:binary>>"),
    ]  # fmt: skip
    assert df.dtypes[:8] == kafka_columns
    plain = spark.read.format("kafkacodec").load(str(logdirs))
    assert plain.dtypes[:7] == kafka_columns[:7] and "headers" not in plain.columns
    assert plain.collect()[0].asDict().keys() == set(plain.columns)
    assert df.count() == len(object_path(logdirs))
    per_topic = {r["topic"]: r["count"] for r in df.groupBy("topic").count().collect()}
    assert sum(per_topic.values()) == df.count() and len(per_topic) > 1


def test_spark_read_options(spark, logdirs):
    mine = [t for t in object_path(logdirs) if t[:2] == ("orders", 1) and 100 <= t[2] < 900]
    late = sorted(t[6] for t in mine if t[6] is not None)[-50]
    df = (
        spark.read.format("kafkacodec").option("split_size", "6k").option("topics", "orders")
        .option("partitions", "1").option("starting_offset", 100).option("ending_offset", 900)
        .option("starting_timestamp", late).load(str(logdirs))
    )  # fmt: skip
    got = sorted(tuple(r) for r in df.select("topic", "partition", "offset").collect())
    assert got == [t[:3] for t in mine if t[6] is not None and t[6] >= late] and got
    absent = spark.read.format("kafkacodec").option("topics", "absent").load(str(logdirs))
    from pyspark.errors import PySparkException

    with pytest.raises(PySparkException, match="no partition of absent"):  # as Spark's source fails
        absent.count()


def test_spark_gives_every_query_its_own_answer(spark, logdirs):
    """PySpark keeps the read plan of a query that pushed filters and reuses it for later
    queries on the same DataFrame: count, filter, count, two filters in turn, and a cached
    DataFrame must each give the answer of a fresh read."""
    expected = object_path(logdirs)
    total = len(expected)
    high = sum(1 for t in expected if t[2] >= 1000)
    low = sum(1 for t in expected if t[2] < 100)
    df = spark.read.format("kafkacodec").load(str(logdirs))
    assert df.count() == total
    assert df.where("offset >= 1000").count() == high
    assert df.count() == total
    assert df.where("offset < 100").count() == low
    assert df.where("offset >= 1000").count() == high
    assert df.where("topic = 'orders'").count() == sum(1 for t in expected if t[0] == "orders")
    assert df.count() == total
    cached = df.cache()
    assert cached.where("offset >= 1000").count() == high
    assert cached.count() == total
    cached.unpersist()


def test_spark_batches_format(spark, logdirs):
    df = (
        spark.read.format("kafkacodec_batches").option("include_control", "true").load(str(logdirs))
    )
    assert df.count() == sum(
        1 for p in LogDirs(logdirs).partitions for s in p.segments for _ in s.batches()
    )


def test_export_writes_every_record_partitioned(spark, logdirs, tmp_path):
    from kafkacodec.pipeline import jobs

    out = tmp_path / "parquet"
    n = jobs.export(spark, [logdirs], str(out))["records"]
    assert n == len(object_path(logdirs))
    assert sorted(p.name for p in out.glob("topic=*")) == sorted(
        {f"topic={p.topic}" for p in LogDirs(logdirs).partitions}
    )
    back = spark.read.parquet(str(out))
    assert back.filter("topic = 'orders' and partition = 1").count() == sum(
        1 for t in object_path(logdirs) if t[:2] == ("orders", 1)
    )
    # an export keeps every column: the headers and the batch metadata the format leaves
    # out by default (includeHeaders, include_metadata)
    assert {"headers", "base_offset", "compression", "segment", "position"} <= set(back.columns)
    no_metadata = tmp_path / "plain"
    jobs.export(spark, [logdirs], str(no_metadata), include_metadata=False, includeHeaders=False)
    assert not {"headers", "base_offset"} & set(spark.read.parquet(str(no_metadata)).columns)


def test_direct_parquet_equals_sparks_writer(spark, logdirs, tmp_path):
    from kafkacodec.pipeline import jobs

    options = {"isolation": "read_committed", "split_size": "8k"}
    jobs.export(spark, [logdirs], str(tmp_path / "direct"), direct=True, **options)
    jobs.export(spark, [logdirs], str(tmp_path / "spark"), direct=False, **options)
    direct = spark.read.parquet(str(tmp_path / "direct"))
    through = spark.read.parquet(str(tmp_path / "spark"))
    assert direct.dtypes == through.dtypes

    def table(df):
        return sorted(repr(tuple(r)) for r in df.collect())

    assert table(direct) == table(through) and direct.count() > 1000
    assert (tmp_path / "direct" / "_SUCCESS").exists()
    assert [p.name for p in tmp_path.iterdir()] and not list(tmp_path.glob(".*"))


def test_export_modes_and_a_failed_job_leave_the_output_whole(spark, logdirs, tmp_path):
    from kafkacodec.pipeline import jobs

    out = tmp_path / "out"
    part = next(p for p in LogDirs(logdirs).partitions if p.topic == "clicks")
    n = jobs.export(spark, [part.path], str(out))["records"]
    with pytest.raises(PipelineError, match="already exists"):
        jobs.export(spark, [part.path], str(out))
    assert jobs.export(spark, [part.path], str(out), mode="ignore")["records"] == 0
    assert jobs.export(spark, [part.path], str(out), mode="append")["records"] == n
    assert spark.read.parquet(str(out)).count() == 2 * n
    before = sorted(str(p.relative_to(out)) for p in out.rglob("*"))
    damaged, _seg = _damaged_copy(logdirs, tmp_path)  # a job that fails half-way
    with pytest.raises(Exception, match="CRC"):
        jobs.export(spark, [part.path, damaged], str(out), mode="overwrite")
    assert sorted(str(p.relative_to(out)) for p in out.rglob("*")) == before
    assert not list(tmp_path.glob(".*"))  # no staging left behind
    assert jobs.export(spark, [part.path], str(out), mode="overwrite")["records"] == n
    assert spark.read.parquet(str(out)).count() == n


def test_a_task_of_a_failed_export_never_writes_its_staging_directory_again(logdirs, tmp_path,
                                                                          monkeypatch):
    """A failed job's driver removes the staging directory while Spark may still run other
    tasks: such a task must fail, not make the directory again (and leave it behind)."""
    from kafkacodec.pipeline import parquet
    from kafkacodec.pipeline.options import Options, input_paths
    from kafkacodec.pipeline.read import record_slices
    from kafkacodec.pipeline.request import Request

    part = next(p for p in LogDirs(logdirs).partitions if p.topic == "clicks")
    options = {"path": str(part.path)}
    opts = Options.parse(options)
    s = record_slices(input_paths(options), opts, Request.parse(options))[0]
    staging = tmp_path / ".out.kafkacodec-job"
    staging.mkdir()
    real = parquet.records

    def records_then_the_driver_gives_up(*a, **k):
        parquet._discard(staging)  # the driver's cleanup, between the task's start and write
        yield from real(*a, **k)

    monkeypatch.setattr(parquet, "records", records_then_the_driver_gives_up)
    with pytest.raises(OSError):
        parquet.write_slice(s, staging=str(staging), opts=opts)
    assert not list(tmp_path.iterdir())


def test_stats_per_topic_partition(spark, logdirs):
    from kafkacodec.pipeline import jobs

    got = {(r["topic"], r["partition"]): r for r in jobs.stats(spark, [logdirs])}
    for p in LogDirs(logdirs).partitions:
        r = got[(p.topic, p.partition)]
        assert r["records"] == sum(
            1 for t in object_path(logdirs) if t[:2] == (p.topic, p.partition)
        )
        walked = [b for s in p.segments for b in s.batches()]
        assert r["batches"] == len(walked)
        assert r["bytes"] == sum(s.size for s in p.segments)
        assert r["aborted"] == len(AbortFilter(p).ranges())
        markers = [b for b in walked if getattr(b, "is_control", False)]
        assert r["committed"] + r["aborted"] == len(markers)
        # data records and control records apart, and together what verify counts (issue 55)
        controls = object_path(logdirs, include_control=True)
        mine = [t for t in controls if t[:2] == (p.topic, p.partition)]
        assert r["control_records"] == len(mine) - r["records"] == len(markers)
        data = [t for t in object_path(logdirs) if t[:2] == (p.topic, p.partition)]
        assert (r["first_offset"], r["last_offset"]) == (data[0][2], data[-1][2])
        stamps = [t[6] for t in data if t[6] is not None]
        assert (r["min_timestamp"], r["max_timestamp"]) == (utc_ms(min(stamps)), utc_ms(max(stamps)))
        assert re.fullmatch(r"\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z", r["min_timestamp"])
    verified = _cli_verify(logdirs)
    stats = jobs.stats(spark, [logdirs])
    assert verified["records"] == sum(r["records"] + r["control_records"] for r in stats)
    assert verified["control_records"] == sum(r["control_records"] for r in stats) > 0


def _cli_verify(path) -> dict:
    import contextlib
    import io
    import json

    from kafkacodec.cli import main

    buf = io.StringIO()
    with contextlib.redirect_stdout(buf):
        main(["verify", "--json", "--quiet", str(path)])
    return json.loads(buf.getvalue())


def test_verify_job_agrees_with_the_command_line(spark, logdirs, tmp_path):
    from kafkacodec.pipeline import jobs

    for root in (logdirs, _damaged_copy(logdirs, tmp_path)[0]):
        got, expected = jobs.verify(spark, [root]), _cli_verify(root)
        for key in ("segments", "batches", "records", "control_records", "bytes", "clean"):
            assert got[key] == expected[key], key
        assert sorted(got["problems"]) == sorted(expected["problems"])
    assert not got["clean"] and any("ChecksumError" in p or "CRC" in p for p in got["problems"])


def test_export_report_writes_what_it_left_out(spark, logdirs, tmp_path):
    from kafkacodec.pipeline import jobs

    target, seg = _damaged_copy(logdirs, tmp_path)
    res = jobs.export(spark, [target], str(tmp_path / "out"), on_corrupt="report")
    skipped = read_all(RecordsReader({"includeHeaders": "true", "include_metadata": "true", "path": str(target), "on_corrupt": "report"}))
    assert res["records"] == skipped.num_rows and res["problems"] == 1
    (problem,) = spark.read.json(res["problems_path"]).collect()
    assert problem["segment"] == seg.name and problem["error"] == "ChecksumError"
    assert str(seg) in problem["message"]
    # The records output does not see the problems folder.
    assert spark.read.parquet(str(tmp_path / "out")).count() == skipped.num_rows


def test_stats_html_report(spark, logdirs, tmp_path):
    from html.parser import HTMLParser

    from kafkacodec.pipeline import jobs, report

    data = jobs.report_data(spark, [logdirs])
    text = report.render(data, title="sample <log>")

    class Tags(HTMLParser):
        def __init__(self):
            super().__init__()
            self.tags, self.external = [], []

        def handle_starttag(self, tag, attrs):
            self.tags.append(tag)
            self.external += [v for k, v in attrs if k in ("src", "href")]

    parsed = Tags()
    parsed.feed(text)
    assert parsed.tags.count("svg") == 3 and "script" not in parsed.tags and not parsed.external
    assert "sample &lt;log&gt;" in text
    expected = object_path(logdirs)
    timeline = data["timeline"]["series"]
    for p in LogDirs(logdirs).partitions:
        stamped = [t for t in expected if t[:2] == (p.topic, p.partition) and t[6] is not None]
        assert sum(timeline.get(f"{p.topic}-{p.partition}", [])) == len(stamped)
    batches = [b for p in LogDirs(logdirs).partitions for s in p.segments for b in s.batches()]
    assert sum(data["batch_sizes"].values()) == len(batches)
    for power, count in data["batch_sizes"].items():
        assert count == sum(1 for b in batches if 2**power <= b.size < 2 ** (power + 1))
    assert sum(c["batches"] for c in data["codecs"]) == len(batches)
    assert sum(c["bytes"] for c in data["codecs"]) == sum(b.size for b in batches)


def test_spark_cli_stats_json(logdirs):
    import json
    import subprocess

    proc = subprocess.run(
        [sys.executable, "-m", "kafkacodec", "spark", "stats", str(logdirs), "--json"],
        capture_output=True, text=True, timeout=300,
    )  # fmt: skip
    assert proc.returncode == 0, proc.stderr[-2000:]
    rows = [json.loads(line) for line in proc.stdout.splitlines()]
    assert {(r["topic"], r["partition"]) for r in rows} == {
        (p.topic, p.partition) for p in LogDirs(logdirs).partitions
    }


def test_spark_cli_names_a_damaged_file(logdirs, tmp_path):
    import subprocess

    target, seg = _damaged_copy(logdirs, tmp_path)
    proc = subprocess.run(
        [sys.executable, "-m", "kafkacodec", "spark", "export", str(target), str(tmp_path / "out")],
        capture_output=True, text=True, timeout=300,
    )  # fmt: skip
    assert proc.returncode == 1
    last = proc.stderr.strip().splitlines()[-1]
    assert last.startswith("kafkacodec spark:") and seg.name in last and "byte" in last, last


def test_spark_cli_verify_exits_1_on_damage(logdirs, tmp_path):
    import subprocess

    target, seg = _damaged_copy(logdirs, tmp_path)
    proc = subprocess.run(
        [sys.executable, "-m", "kafkacodec", "spark", "verify", str(target)],
        capture_output=True, text=True, timeout=300,
    )  # fmt: skip
    assert proc.returncode == 1, proc.stderr[-2000:]
    head, *problems = proc.stdout.splitlines()
    # the CRC, and index entries past it (counted in the singular for one)
    assert head.endswith(f"{len(problems)} problem{'' if len(problems) == 1 else 's'}")
    assert any(str(seg) in line and "byte" in line and "CRC" in line for line in problems)


def test_spark_submit_runs_the_jobs(logdirs, tmp_path):
    """spark-submit with the submit script: the session is spark-submit's (its master)."""
    import json
    import os
    import subprocess
    from pathlib import Path

    from kafkacodec.pipeline import submit

    spark_submit = Path(sys.executable).with_name("spark-submit")
    if not spark_submit.exists():
        pytest.skip("no spark-submit next to this Python")
    env = {**os.environ, "PYSPARK_PYTHON": sys.executable, "PYSPARK_DRIVER_PYTHON": sys.executable}
    proc = subprocess.run(
        [str(spark_submit), "--master", "local[2]", "--conf", "spark.ui.enabled=false",
         submit.__file__, "stats", str(logdirs), "--json"],
        capture_output=True, text=True, timeout=300, env=env,
    )  # fmt: skip
    assert proc.returncode == 0, proc.stderr[-3000:]
    rows = [json.loads(line) for line in proc.stdout.splitlines() if line.startswith("{")]
    assert sum(r["records"] for r in rows) == len(object_path(logdirs))
    printed = subprocess.run([sys.executable, "-m", "kafkacodec.pipeline.submit", "--path"],
                             capture_output=True, text=True, timeout=60)  # fmt: skip
    assert Path(printed.stdout.strip()).resolve() == Path(submit.__file__).resolve()


def offsets_dir(tmp_path):
    """A log dir with __consumer_offsets-0: commits laid out by hand (OffsetCommitKey v1,
    OffsetCommitValue v3), a group metadata record, a tombstone, an aborted transaction."""

    def s16(text):
        raw = text.encode()
        return struct.pack(">h", len(raw)) + raw

    def key(group, topic, partition):
        return struct.pack(">h", 1) + s16(group) + s16(topic) + struct.pack(">i", partition)

    def value(offset, ts):
        return struct.pack(">hqi", 3, offset, 2) + s16("m") + struct.pack(">q", ts)

    d = tmp_path / "offsets" / "__consumer_offsets-0"
    d.mkdir(parents=True)
    t0 = 1729814400000
    records = [
        (key("g1", "orders", 0), value(10, t0)),
        (struct.pack(">h", 2) + s16("g1"), b"\x00\x00"),  # group metadata: not a commit
        (key("g1", "orders", 1), value(20, t0 + 1)),
        (key("g1", "orders", 0), None),
    ]
    data = b"".join(kc.build_batch([kc.Record(None, t0 + i, k, v, [])], base_offset=i)
                    for i, (k, v) in enumerate(records))  # fmt: skip
    data += kc.build_batch([kc.Record(None, t0, key("g2", "orders", 0), value(5, t0), [])],
                           base_offset=4, producer_id=9, producer_epoch=0, is_transactional=True)  # fmt: skip
    data += kc.build_control_batch(False, offset=5, timestamp=t0, producer_id=9, producer_epoch=0)
    (d / "00000000000000000000.log").write_bytes(data)
    return tmp_path / "offsets", t0


def test_offsets_format_decodes_commits(tmp_path):
    """The kafkacodec_offsets format's rows: commits and tombstones, not group metadata;
    read_committed drops the aborted transaction's commit."""
    from kafkacodec.pipeline.source import OffsetsReader

    path, t0 = offsets_dir(tmp_path)
    rows = read_all(OffsetsReader({"path": str(path)})).to_pylist()
    got = [(r["group"], r["topic"], r["partition"], r["committed_offset"], r["tombstone"], r["offset"])
           for r in rows]  # fmt: skip
    assert got == [("g1", "orders", 0, 10, False, 0), ("g1", "orders", 1, 20, False, 2),
                   ("g1", "orders", 0, None, True, 3), ("g2", "orders", 0, 5, False, 4)]  # fmt: skip
    assert rows[0]["leader_epoch"] == 2 and rows[0]["metadata"] == "m"
    assert int(rows[1]["commit_timestamp"].timestamp() * 1000) == t0 + 1
    committed = read_all(
        OffsetsReader({"path": str(path), "isolation": "read_committed"})
    ).to_pylist()
    assert [r["group"] for r in committed] == ["g1", "g1", "g1"]


def test_spark_offsets_format(spark, tmp_path):
    path, _ = offsets_dir(tmp_path)
    df = spark.read.format("kafkacodec_offsets").load(str(path))
    assert [(r["group"], r["committed_offset"]) for r in df.orderBy("offset").collect()] == [
        ("g1", 10),
        ("g1", 20),
        ("g1", None),
        ("g2", 5),
    ]


def test_a_brokers_unused_log_dir_among_others_is_read_as_empty(logdirs, tmp_path):
    """A JBOD log.dir a broker has not used yet (meta.properties, no partition) among a
    cluster's disks made the whole read fail with "no Kafka data" (issue 56); a directory
    that is no broker's stays an error, and so does an input with no data at all."""
    import json

    unused = tmp_path / "broker-1-disk-2"
    unused.mkdir()
    (unused / "meta.properties").write_text("version=1\nnode.id=1\ncluster.id=c\ndirectory.id=d\n")
    both = {"includeHeaders": "true", "include_metadata": "true", "paths": json.dumps([str(logdirs), str(unused)])}
    assert rows(read_all(RecordsReader(both))) == object_path(logdirs)
    typo = tmp_path / "not-a-log-dir"
    typo.mkdir()
    with pytest.raises(PipelineError, match="not-a-log-dir: no Kafka data"):
        read_all(RecordsReader({**both, "paths": json.dumps([str(logdirs), str(typo)])}))
    with pytest.raises(PipelineError, match="no Kafka data"):
        read_all(RecordsReader({"path": str(unused)}))


def test_verify_notes_a_brokers_unused_log_dir(logdirs, tmp_path):
    unused = tmp_path / "disk-2"
    unused.mkdir()
    (unused / "meta.properties").write_text("version=1\nnode.id=1\ncluster.id=c\ndirectory.id=d\n")
    got = _cli_verify_paths(logdirs, unused)
    assert got["clean"] and f"{unused}: a broker's log directory that holds no partition" in got["notes"]


def _cli_verify_paths(*paths) -> dict:
    import contextlib
    import io
    import json

    from kafkacodec.cli import main

    buf = io.StringIO()
    with contextlib.redirect_stdout(buf):
        assert main(["verify", "--json", "--quiet", *map(str, paths)]) == 0
    return json.loads(buf.getvalue())

"""The Spark data sources (kafkacodec.pipeline). Most tests call the readers' partitions()
and read() directly; a few share one local SparkSession."""

import shutil
import sys
import warnings

import pyarrow as pa
import pytest

pytest.importorskip("pyspark")

from kafkacodec.columnar import walk_batches  # noqa: E402
from kafkacodec.errors import DecodeError  # noqa: E402
from kafkacodec.log.partition import AbortFilter, LogDirs, Partition  # noqa: E402
from kafkacodec.pipeline.source import (  # noqa: E402
    BatchesReader,
    PipelineError,
    RecordsReader,
)
from kafkacodec.sample import write_sample_log_dirs  # noqa: E402


@pytest.fixture(scope="module")
def logdirs(tmp_path_factory):
    return write_sample_log_dirs(tmp_path_factory.mktemp("logdirs") / "kafka", batches=120)


def read_all(reader) -> pa.Table:
    parts = reader.partitions()
    return pa.Table.from_batches([b for p in parts for b in reader.read(p)])


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
        headers = [(h["key"], h["value"]) for h in d["headers"]]
        out.append((d["topic"], d["partition"], d["offset"], d["key"], d["value"], headers, ts))
    return sorted(out, key=lambda t: (t[0], t[1], t[2]))


def test_one_input_partition_per_segment(logdirs):
    reader = RecordsReader({"path": str(logdirs)})
    segments = sum(len(p.segments) for p in LogDirs(logdirs).partitions)
    assert len(reader.partitions()) == segments > 3


def test_records_equal_the_log_layer(logdirs):
    table = read_all(RecordsReader({"path": str(logdirs)}))
    assert rows(table) == object_path(logdirs)
    assert not any(table["is_control"].to_pylist())


def test_read_committed_drops_aborted_transactions(logdirs):
    committed = read_all(RecordsReader({"path": str(logdirs), "isolation": "read_committed"}))
    everything = read_all(RecordsReader({"path": str(logdirs)}))
    assert rows(committed) == object_path(logdirs, committed_only=True)
    assert committed.num_rows < everything.num_rows  # the sample aborts transactions


def test_include_control(logdirs):
    table = read_all(RecordsReader({"path": str(logdirs), "include_control": "true"}))
    assert any(table["is_control"].to_pylist())


def test_one_partition_directory_and_several_paths(logdirs):
    parts = LogDirs(logdirs).partitions
    one = read_all(RecordsReader({"path": str(parts[0].path)}))
    assert set(one["topic"].to_pylist()) == {parts[0].topic}
    two = read_all(RecordsReader({"paths": f'["{parts[0].path}", "{parts[1].path}"]'}))
    assert (
        two.num_rows
        == one.num_rows + read_all(RecordsReader({"path": str(parts[1].path)})).num_rows
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
    part = LogDirs(logdirs).partitions[0]
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
    reader = RecordsReader({"path": str(target)})
    with pytest.raises(DecodeError) as err:
        read_all(reader)
    assert str(seg) in str(err.value) and "byte" in str(err.value)


def test_on_corrupt_skip_goes_on_and_says_where(logdirs, tmp_path):
    target, seg = _damaged_copy(logdirs, tmp_path)
    reader = RecordsReader({"path": str(target), "on_corrupt": "skip"})
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        table = read_all(reader)
    assert any(str(seg) in str(w.message) for w in caught)
    assert table.num_rows > 0


# ------------------------------------------------------------------ on a local Spark


@pytest.fixture(scope="module")
def spark():
    import os

    from pyspark.sql import SparkSession

    # Python workers must be this interpreter (the one kafkacodec is installed in).
    os.environ["PYSPARK_PYTHON"] = sys.executable
    session = (
        SparkSession.builder.master("local[2]").appName("kafkacodec-tests")
        .config("spark.ui.enabled", "false").config("spark.driver.host", "127.0.0.1")
        .config("spark.sql.shuffle.partitions", "2").getOrCreate()
    )  # fmt: skip
    from kafkacodec.pipeline import register

    register(session)
    yield session
    session.stop()


def test_spark_reads_like_its_kafka_source(spark, logdirs):
    df = spark.read.format("kafkacodec").load(str(logdirs))
    kafka_columns = [
        ("key", "binary"), ("value", "binary"), ("topic", "string"), ("partition", "int"),
        ("offset", "bigint"), ("timestamp", "timestamp"), ("timestampType", "int"),
        ("headers", "array<struct<key:string,value:binary>>"),
    ]  # fmt: skip
    assert df.dtypes[:8] == kafka_columns
    assert df.count() == len(object_path(logdirs))
    per_topic = {r["topic"]: r["count"] for r in df.groupBy("topic").count().collect()}
    assert sum(per_topic.values()) == df.count() and len(per_topic) > 1


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
    n = jobs.export(spark, [logdirs], str(out))
    assert n == len(object_path(logdirs))
    assert sorted(p.name for p in out.glob("topic=*")) == sorted(
        {f"topic={p.topic}" for p in LogDirs(logdirs).partitions}
    )
    back = spark.read.parquet(str(out))
    assert back.filter("topic = 'orders' and partition = 1").count() == sum(
        1 for t in object_path(logdirs) if t[:2] == ("orders", 1)
    )


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

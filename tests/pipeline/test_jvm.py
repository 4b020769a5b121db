"""The JVM reader of the `kafkacodec` format (jvm/, `make jar`) against the Python reader of
the same format (`kafkacodec_python`): the same rows, every column, for every option that
changes which rows or columns a read gives, on data of every magic and codec, transactions,
LogAppendTime and damage; and the same errors. The Python reader is the reference: its
rows are checked against the log layer and against Spark's own Kafka source elsewhere
(test_pipeline.py, tests/kafka/test_kafka_spark.py)."""

import json
import shutil
import struct

import pytest

pytest.importorskip("pyspark")

from kafkacodec.log.partition import LogDirs, Partition  # noqa: E402
from kafkacodec.pipeline import JAR  # noqa: E402
from kafkacodec.records.columnar import walk_batches  # noqa: E402
from kafkacodec.runtime.crc import crc32c  # noqa: E402
from kafkacodec.sample import write_sample_log_dirs  # noqa: E402

pytestmark = [
    pytest.mark.spark,
    pytest.mark.skipif(not JAR.is_file(), reason=f"the JVM reader is not built ({JAR}: make jar)"),
]


@pytest.fixture(scope="module")
def logdirs(tmp_path_factory):
    return write_sample_log_dirs(
        tmp_path_factory.mktemp("jvm") / "kafka", batches=160, segment_bytes=16 << 10
    )


def frame(spark, fmt, path, **options):
    reader = spark.read.format(fmt)
    for k, v in options.items():
        reader = reader.option(k, v)
    return reader.load(str(path))


def on_jvm(df) -> bool:
    return "JVM reader" in df._jdf.queryExecution().executedPlan().toString()


def by_python(df) -> int:
    """The slices the JVM reader handed to Python in the last query on df (its metric)."""
    leaves = df._jdf.queryExecution().executedPlan().collectLeaves()
    return sum(leaves.apply(i).metrics().apply("slicesReadByPython").value() for i in range(leaves.size()))


def collected(df) -> list[tuple]:
    rows = [tuple(r) for r in df.collect()]
    return sorted(rows, key=lambda r: tuple((x is None, repr(x)) for x in r))


def same(spark, path, *, regular=True, **options):
    """The JVM reader's rows equal the Python reader's; with regular data, all its own."""
    jvm = frame(spark, "kafkacodec", path, **options)
    assert on_jvm(jvm)
    python = frame(spark, "kafkacodec_python", path, **options)
    assert jvm.schema == python.schema
    got, expected = collected(jvm), collected(python)
    assert len(got) == len(expected)
    assert got == expected
    assert (by_python(jvm) == 0) == regular
    return got


ALL = {"includeHeaders": "true", "include_metadata": "true"}


@pytest.mark.parametrize("options", [
    {},
    ALL,
    {**ALL, "kafka.isolation.level": "read_committed"},
    {**ALL, "include_control": "true"},
    {**ALL, "verify_crc": "false"},
    {**ALL, "split_size": "4k"},
    {**ALL, "subscribe": "orders", "startingTimestamp": "1700000001000"},
    {**ALL, "starting_timestamp": "1700000000500"},
    {**ALL, "minPartitions": "7"},
    {"subscribePattern": "leg.*", **ALL},
], ids=["spark-columns", "all-columns", "read_committed", "include_control", "no-crc", "split",
        "startingTimestamp", "starting_timestamp", "minPartitions", "legacy"])  # fmt: skip
def test_the_jvm_reader_gives_the_python_readers_rows(spark, logdirs, options):
    assert same(spark, logdirs, **options)


def test_offset_ranges(spark, logdirs):
    parts = LogDirs(logdirs).partitions
    starting = {p.topic: {} for p in parts}
    ending = {p.topic: {} for p in parts}
    for p in parts:
        starting[p.topic][str(p.partition)] = 13
        ending[p.topic][str(p.partition)] = 61
    rows = same(spark, logdirs, startingOffsets=json.dumps(starting), endingOffsets=json.dumps(ending), **ALL)
    assert rows and all(13 <= r[4] < 61 for r in rows)


def _copy(logdirs, tmp_path, topic="orders"):
    part = next(p for p in LogDirs(logdirs).partitions if p.topic == topic)
    target = tmp_path / part.path.name
    shutil.copytree(part.path, target)
    seg = Partition(target).segments[0].path
    return target, seg, bytearray(seg.read_bytes())


def _recrc(data: bytearray, pos: int) -> None:
    size = struct.unpack_from(">i", data, pos + 8)[0] + 12
    struct.pack_into(">I", data, pos + 17, crc32c(bytes(data[pos + 21 : pos + size])))


def _errors(spark, path, **options):
    out = []
    for fmt in ("kafkacodec", "kafkacodec_python"):
        with pytest.raises(Exception) as err:  # noqa: PT011 - Spark wraps what the reader raised
            frame(spark, fmt, path, **options).collect()
        out.append(str(err.value))
    return out


def test_damage_fails_with_the_python_readers_error(spark, logdirs, tmp_path):
    target, seg, data = _copy(logdirs, tmp_path)
    e = walk_batches(bytes(data)).entries
    at = int(e["position"][len(e) // 2]) + 70
    data[at] ^= 0xFF
    seg.write_bytes(bytes(data))
    jvm, python = _errors(spark, target, **ALL)
    assert str(seg) in jvm and "byte" in jvm
    where = python[python.index(str(seg)):].split("\n")[0]
    assert where in jvm
    # skip: the rows around the damage, as Python gives them
    assert same(spark, target, on_corrupt="skip", regular=False, **ALL)


def test_records_that_do_not_fill_their_batch(spark, logdirs, tmp_path):
    """A batch claiming 5 records more than it holds, its CRC right: only decoding finds it."""
    target, seg, data = _copy(logdirs, tmp_path)
    e = walk_batches(bytes(data)).entries
    pos = int(e["position"][len(e) // 2 + (e["attributes"][len(e) // 2] & 7 != 0)])
    count = struct.unpack_from(">i", data, pos + 57)[0]
    struct.pack_into(">i", data, pos + 57, count + 5)
    _recrc(data, pos)
    seg.write_bytes(bytes(data))
    jvm, python = _errors(spark, target, **ALL)
    assert str(seg) in jvm
    assert same(spark, target, on_corrupt="skip", regular=False, **ALL)


def test_a_torn_tail_ends_the_log(spark, logdirs, tmp_path):
    target, seg, data = _copy(logdirs, tmp_path)
    seg.write_bytes(bytes(data[: len(data) - 10]))
    assert same(spark, target, **ALL)


def test_streams_go_to_the_python_reader(spark, logdirs, tmp_path):
    q = (spark.readStream.format("kafkacodec").option("startingOffsets", "earliest")
         .load(str(logdirs)).writeStream.format("memory").queryName("jvm_stream")
         .trigger(availableNow=True).start())  # fmt: skip
    q.awaitTermination(120)
    got = spark.sql("select count(*) from jvm_stream").collect()[0][0]
    assert got == frame(spark, "kafkacodec_python", logdirs).count()


def test_a_planner_that_dies_is_started_again(spark, logdirs):
    """The JVM's Python planner killed between queries (as SIGBUS kills a reader whose
    mapped file a broker truncates): the next query starts another and gets its answer."""
    import os
    import signal
    import subprocess

    expected = frame(spark, "kafkacodec", logdirs).count()
    jvm = spark.sparkContext._gateway.proc.pid
    found = subprocess.run(["pgrep", "-P", str(jvm), "-f", "kafkacodec.pipeline.planner"],
                           capture_output=True, text=True, check=False).stdout.split()  # fmt: skip
    assert found, "no planner process under the JVM"
    for pid in found:
        os.kill(int(pid), signal.SIGKILL)
    assert frame(spark, "kafkacodec", logdirs).count() == expected

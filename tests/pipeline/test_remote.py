"""The Spark data sources and jobs reading log directories straight from an object store:
moto's S3 server on 127.0.0.1 (the s3_server fixture). Spark's own Hadoop S3 connector is
not involved: the data source fetches the ranges itself (kafkacodec.storage)."""

from __future__ import annotations

import pyarrow as pa
import pytest
from conftest import kafkacodec_cli as cli

pytest.importorskip("pyspark")

import kafkacodec as kc  # noqa: E402
from kafkacodec.log import PartitionWriter  # noqa: E402
from kafkacodec.pipeline.scan import PipelineError  # noqa: E402
from kafkacodec.pipeline.source import BatchesReader, ProblemsReader, RecordsReader  # noqa: E402
from kafkacodec.sample import write_sample_log_dirs  # noqa: E402
from kafkacodec.storage import total_stats  # noqa: E402

pytestmark = [pytest.mark.spark]
T0 = 1_700_000_000_000


@pytest.fixture(scope="module")
def logdirs(tmp_path_factory):
    root = write_sample_log_dirs(tmp_path_factory.mktemp("remote") / "kafka", batches=120,
                                 segment_bytes=16 << 10)  # fmt: skip
    # one segment of 4 MB, indexed every 4096 bytes: cut into byte ranges by split_size
    with PartitionWriter(root / "big-0", segment_bytes=1 << 30, index_interval_bytes=4096) as w:
        for i in range(1000):
            w.append(kc.build_batch([kc.Record(None, T0 + i, b"k", bytes(800), []) for _ in range(5)],
                                    base_offset=5 * i))  # fmt: skip
    return root


@pytest.fixture(scope="module")
def url(s3_server, logdirs):
    s3_server.bucket("spark-data")
    return s3_server.upload(logdirs, "s3://spark-data/kafka")


@pytest.fixture(scope="module")
def storage(s3_server):
    """The endpoint and credentials as the data source's options (the Spark workers may
    have been started before the test's AWS environment was set)."""
    return {"storage.endpoint_override": s3_server.endpoint, "storage.access_key": "testing",
            "storage.secret_key": "testing", "storage.region": "us-east-1"}  # fmt: skip


def read_all(reader) -> pa.Table:
    got = [b for p in reader.partitions() for b in reader.read(p)]
    return pa.Table.from_batches(got)


def rows(t: pa.Table, drop=("segment",)) -> list:
    return sorted(t.drop_columns([c for c in drop if c in t.column_names]).to_pylist(),
                  key=lambda r: (r.get("topic"), r.get("partition"), r.get("offset"), r.get("position")))  # fmt: skip


@pytest.mark.parametrize("reader,options", [
    (RecordsReader, {}),
    (RecordsReader, {"isolation": "read_committed", "starting_offset": "40", "ending_offset": "900"}),
    (RecordsReader, {"starting_timestamp": str(T0 + 500), "topics": "big,orders"}),
    (BatchesReader, {}),
])  # fmt: skip
def test_readers_give_the_rows_of_the_same_bytes_on_disk(logdirs, url, storage, reader, options):
    here = read_all(reader({"path": str(logdirs), **options}))
    there = read_all(reader({"path": url, **storage, **options}))
    assert there.num_rows == here.num_rows > 0
    assert rows(there) == rows(here)


def test_damage_in_a_bucket_is_the_damage_on_disk(s3_server, logdirs, storage, tmp_path):
    data = bytearray((logdirs / "big-0" / "00000000000000000000.log").read_bytes())
    data[300_000] ^= 0xFF  # inside a batch: its CRC no longer matches
    bad = tmp_path / "bad-0"
    bad.mkdir()
    (bad / "00000000000000000000.log").write_bytes(bytes(data[: len(data) - 50]))
    s3_server.bucket("damaged")
    url = s3_server.upload(bad, "s3://damaged/bad-0")
    here = read_all(ProblemsReader({"path": str(bad)}))
    there = read_all(ProblemsReader({"path": url, **storage}))
    assert rows(there, drop=("message",)) == rows(here, drop=("message",))
    assert here.num_rows == 1  # the walk stops at the bad batch: the rest of the segment
    assert [m.replace(str(bad), url) for m in here["message"].to_pylist()] == there["message"].to_pylist()


def test_a_big_segment_is_read_as_byte_ranges_each_fetched_alone(logdirs, url, storage):
    size = (logdirs / "big-0" / "00000000000000000000.log").stat().st_size
    reader = RecordsReader({"path": f"{url}/big-0", "split_size": "512k", **storage})
    slices = reader.partitions()
    assert len(slices) >= 7
    fetched = []
    for s in slices:
        before = total_stats().bytes
        n = sum(b.num_rows for b in reader.read(s))
        fetched.append((s.start, s.end, total_stats().bytes - before, n))
    assert sum(n for *_x, n in fetched) == 5000
    for start, end, got, _n in fetched:
        span = (end or size) - start
        assert got <= span + (64 << 10), (start, end, got)  # its range (and the .index), no more


def test_storage_options_are_checked(url):
    with pytest.raises(PipelineError, match="unsupported|not a path"):
        RecordsReader({"path": "ftp://x/y"})
    bad = RecordsReader({"path": url, "storage.endpoint_override": "http://127.0.0.1:1",
                         "storage.retries": "1", "storage.connect_timeout": "1"})  # fmt: skip
    with pytest.raises(PipelineError) as err:
        bad.partitions()
    assert url in str(err.value)


def test_spark_reads_a_bucket(spark, logdirs, url, storage):
    def load(path, **more):
        r = spark.read.format("kafkacodec")
        for k, v in {**more}.items():
            r = r.option(k, v)
        return r.load(path)

    local = load(str(logdirs))
    remote = load(url, **storage)
    assert remote.count() == local.count() > 5000
    assert remote.where("topic = 'big'").count() == 5000
    assert remote.count() == local.count()  # the same DataFrame, queried again
    cols = ["topic", "partition", "offset", "key", "value"]
    assert sorted(map(tuple, remote.select(cols).collect())) == sorted(map(tuple, local.select(cols).collect()))
    batches = spark.read.format("kafkacodec_batches")
    for k, v in storage.items():
        batches = batches.option(k, v)
    assert batches.load(url).count() == spark.read.format("kafkacodec_batches").load(str(logdirs)).count()


def test_streams_refuse_an_object_store(url, storage):
    from kafkacodec.pipeline.stream import RecordsStreamReader

    with pytest.raises(PipelineError, match="do not grow"):
        RecordsStreamReader({"path": url, **storage})


def test_jobs_over_a_bucket(spark, logdirs, url, storage):
    from kafkacodec.pipeline import jobs
    from kafkacodec.pipeline.meter import FetchMeter

    here, there = jobs.verify(spark, [logdirs]), jobs.verify(spark, [url], **storage)
    assert there["clean"] and {k: there[k] for k in ("segments", "batches", "records", "bytes")} == {
        k: here[k] for k in ("segments", "batches", "records", "bytes")}  # fmt: skip
    assert here["fetched"]["requests"] == 0
    assert there["fetched"]["bytes"] >= there["bytes"]  # every .log byte, and the indexes
    meter = FetchMeter(spark)
    assert jobs.stats(spark, [url], meter=meter, **storage) == jobs.stats(spark, [logdirs])
    assert meter.as_dict()["bytes"] > 0 and meter.line().startswith("fetched ")


@pytest.mark.slow
def test_job_commands_over_a_bucket(s3_server, logdirs, url, tmp_path):
    env = s3_server.env
    text = cli("spark", "stats", url, "--html", tmp_path / "r.html", env=env).stdout.splitlines()
    assert text[-2].startswith("fetched ") and text[-1].startswith("report written")
    assert "Read from object stores" in (tmp_path / "r.html").read_text()
    exp = cli("spark", "export", url, tmp_path / "out", "--storage-option",
              f"endpoint_override={s3_server.endpoint}", env=env)  # fmt: skip
    assert "exported" in exp.stdout and "fetched" in exp.stdout
    import pyarrow.parquet as pq

    from kafkacodec.log import LogDirs

    want = sum(1 for p in LogDirs(logdirs).partitions for _s, _b, r in p.read() if r.control is None)
    assert pq.read_table(tmp_path / "out").num_rows == want


def test_spark_reads_tiered_storage(spark, s3_server, logdirs, storage, tmp_path):
    """A partition's remote segments in Aiven's layout (zstd chunks, encrypted), alone and
    joined with the broker's local segments (the `tiered` option), read by the data source."""
    from tiered_layout import Encryptor, rsa_key, uuid, write_aiven

    from kafkacodec.log import Partition

    pem, public = rsa_key(tmp_path)
    src = logdirs / "orders-0"
    segs = Partition(src).segments
    topic_id = uuid()
    s3_server.bucket("spark-tiered")
    for seg in segs[:-1]:  # every segment but the active one was uploaded
        write_aiven(lambda k, data: s3_server.put(f"s3://spark-tiered/{k}", data), "rsm/", "orders",
                    topic_id, 0, src, seg.base_offset, chunk_size=4096, compression=True,
                    encryption=Encryptor(public))  # fmt: skip
    keyed = {**storage, "storage.encryption_key": str(pem)}
    url = f"s3://spark-tiered/rsm/orders-{topic_id}/0"
    remote = read_all(RecordsReader({"path": url, **keyed}))
    here = read_all(RecordsReader({"path": str(src), "ending_offset": str(segs[-1].base_offset)}))
    assert rows(remote) == rows(here)
    # the broker kept the last two segments: remote below its log start, local from it
    local = tmp_path / "broker" / "orders-0"
    local.mkdir(parents=True)
    for f in src.iterdir():
        if f.name.split(".")[0] in (f"{segs[-2].base_offset:020d}", f"{segs[-1].base_offset:020d}"):
            (local / f.name).write_bytes(f.read_bytes())
    (local / "partition.metadata").write_text(f"version: 0\ntopic_id: {topic_id}\n")
    joined = read_all(RecordsReader({"path": str(local), "tiered": "s3://spark-tiered/rsm/", **keyed}))
    everything = read_all(RecordsReader({"path": str(src)}))
    assert rows(joined) == rows(everything)
    # on Spark: the slices of the remote segments travel to the Python workers
    df = spark.read.format("kafkacodec").option("tiered", "s3://spark-tiered/rsm/")
    for k, v in keyed.items():
        df = df.option(k, v)
    df = df.load(str(local))
    assert df.count() == everything.num_rows
    assert df.agg({"offset": "max"}).first()[0] == max(everything["offset"].to_pylist())

"""Log directories in an object store (kafkacodec.storage), against a real S3 endpoint:
moto's server on 127.0.0.1 (the s3_server fixture). Every command's output for a bucket
equals its output for the same bytes on disk; reads fetch only what they need; failures
are named with the URL and the byte range; nothing writes to a bucket."""

from __future__ import annotations

import json
import pickle
import struct

import pytest
from conftest import KAFKA_JAVA
from conftest import kafkacodec_cli as cli
from faults import CuttingProxy
from hypothesis import given
from hypothesis import strategies as st

import kafkacodec as kc
from kafkacodec.log import Partition, PartitionWriter, open_log
from kafkacodec.runtime.errors import StorageError
from kafkacodec.sample import write_sample_log_dirs
from kafkacodec.storage import as_path, objects, open_blob, total_stats
from kafkacodec.storage.blob import RangeSet, covering

SEG_DIR = KAFKA_JAVA / "segments" / "segment_interval4096"
T0 = 1_700_000_000_000


@pytest.fixture(scope="module")
def local(tmp_path_factory):
    """A log.dirs on disk: the sample's topics, Kafka 3.8's own segment with its indexes,
    a __consumer_offsets partition and a KRaft metadata log."""
    root = write_sample_log_dirs(tmp_path_factory.mktemp("s3-local") / "kafka", batches=160,
                                 segment_bytes=16 << 10)  # fmt: skip
    java = root / "java-0"
    java.mkdir()
    for p in SEG_DIR.iterdir():
        if p.suffix in (".log", ".index", ".timeindex", ".txnindex"):
            (java / p.name).write_bytes(p.read_bytes())
    offsets = root / "__consumer_offsets-0"
    offsets.mkdir()

    def s16(text):
        return struct.pack(">h", len(text)) + text.encode()

    commits = [kc.Record(None, T0 + i, struct.pack(">h", 1) + s16("billing") + s16("orders")
                         + struct.pack(">i", i % 2),
                         struct.pack(">hqi", 3, 10 + i, 0) + s16("") + struct.pack(">q", T0), [])
               for i in range(4)]  # fmt: skip
    (offsets / "00000000000000000000.log").write_bytes(kc.build_batch(commits))
    return root


@pytest.fixture(scope="module")
def bucket(s3_server, local):
    """The same log.dirs uploaded to s3://kafka-data/backup."""
    s3_server.bucket("kafka-data")
    return s3_server.upload(local, "s3://kafka-data/backup")


def same(s3_server, *args, ok=True):
    """(local output, bucket output) of one command, run on the local tree and on the bucket:
    each argument a (local, remote) pair."""
    local_args, remote_args = zip(*args)
    a = cli(*local_args, ok=ok)
    b = cli(*remote_args, env=s3_server.env, ok=ok)
    return a, b


def both(local, bucket, rel=""):
    return (str(local / rel) if rel else str(local)), (f"{bucket}/{rel}" if rel else bucket)


@pytest.mark.slow
@pytest.mark.parametrize("command", [
    ["dump", "--deep-iteration", "@orders-0/00000000000000000000.log"],
    ["dump", "--json", "--deep-iteration", "@clicks-0/00000000000000000000.log"],
    ["dump", "--print-data-log", "@legacy-events-0/00000000000000000000.log"],
    ["dump", "@java-0/00000000000000001000.index"],
    ["dump", "--verify-index-only", "@java-0/00000000000000001000.timeindex"],
    ["dump", "--max-bytes", "5000", "@java-0/00000000000000001000.log"],
    ["dump", "--offsets-decoder", "@__consumer_offsets-0/00000000000000000000.log"],
    ["dump", "@java-0"],
    ["verify", "--json", "@"],
    ["verify", "@java-0"],
    ["lookup", "@java-0", "--offset", "1300"],
    ["lookup", "@java-0", "--timestamp", "-3"],
    ["lookup", "@java-0", "--timestamp", "-1", "--json"],
    ["lookup", "@orders-0", "--timestamp", str(T0 + 2000)],
    ["records", "@orders-0", "--from-offset", "30", "--limit", "20", "--read-committed"],
    ["records", "@orders-1"],
    ["records", "@legacy-events-0", "--from-timestamp", str(T0 + 50)],
    ["records", "@java-0", "--from-offset", "1200", "--limit", "50"],
    ["groups", "@"],
], ids=lambda c: " ".join(c)[:50])  # fmt: skip
def test_a_bucket_reads_as_the_same_bytes_on_disk(s3_server, local, bucket, command):
    name, *rest = command
    args = [(name, name)]
    for x in rest:  # "@rel": a path below the log.dirs
        args.append(both(local, bucket, x[1:]) if x.startswith("@") else (x, x))
    a, b = same(s3_server, *args)
    assert a.returncode == b.returncode == 0, b.stderr
    if name == "verify" and "--json" in rest:
        da, db = json.loads(a.stdout), json.loads(b.stdout)
        assert da["clean"] and {**da, "notes": []} == {**db, "notes": []}
        return
    assert a.stdout.replace(str(local), bucket) == b.stdout
    assert b.stdout  # something was compared


@pytest.mark.slow
def test_metadata_from_a_bucket(s3_server, tmp_path):
    from kafkacodec.internal import DEFAULT

    d = tmp_path / "meta" / "__cluster_metadata-0"
    d.mkdir(parents=True)
    cls = DEFAULT.top(DEFAULT.schema_of("TopicRecord"))
    value = bytes([1, cls.MESSAGE["apiKey"], 0]) + cls(version=0, tagged_fields=[], name="orders",
                                                       topic_id=bytes(range(16))).build()  # fmt: skip
    (d / "00000000000000000000.log").write_bytes(kc.build_batch([kc.Record(None, T0, None, value, [])]))
    s3_server.bucket("meta")
    url = s3_server.upload(tmp_path / "meta", "s3://meta/m")
    a, b = same(s3_server, ("metadata", "metadata"), (str(tmp_path / "meta"), url), ("--json", "--json"))
    assert a.stdout == b.stdout and json.loads(b.stdout)["topics"][0]["name"] == "orders"


def test_verbose_says_what_was_fetched(s3_server, bucket):
    out = cli("lookup", f"{bucket}/java-0", "--offset", "1300", "--verbose", env=s3_server.env)
    line = [x for x in out.stderr.splitlines() if "fetched" in x]
    assert line and "bytes in" in line[0] and "requests from object stores" in line[0]
    quiet = cli("lookup", f"{bucket}/java-0", "--offset", "1300", env=s3_server.env)
    assert "fetched" not in quiet.stderr


def _big_partition(root, batches=2500):
    """A partition of one multi-megabyte segment, indexed every 4096 bytes as a broker does."""
    with PartitionWriter(root / "big-0", segment_bytes=1 << 30, index_interval_bytes=4096) as w:
        for i in range(batches):
            w.append(kc.build_batch([kc.Record(None, T0 + 10 * (5 * i + j), b"k%d" % j, bytes(800), [])
                                     for j in range(5)], base_offset=5 * i))  # fmt: skip
    return root / "big-0"


def _fetched(fn):
    before = total_stats()
    fn()
    after = total_stats()
    return after.bytes - before.bytes, after.requests - before.requests


def test_a_lookup_fetches_the_index_and_one_range(s3_server, tmp_path):
    part = _big_partition(tmp_path)
    size = (part / "00000000000000000000.log").stat().st_size
    assert size > 8 << 20
    s3_server.bucket("big")
    url = s3_server.upload(part, "s3://big/big-0")
    p = Partition(url)
    local = Partition(part)
    for offset in (7, 6001, 12499):
        got, _ = _fetched(lambda o=offset: p.segments[0].translate_offset(o))  # noqa: B023
        assert got < 0.05 * size, (offset, got, size)
        assert p.segments[0].translate_offset(offset) == local.segments[0].translate_offset(offset)
    got, _ = _fetched(lambda: p.list_offsets(T0 + 60_000))
    assert got < 0.05 * size
    assert p.list_offsets(T0 + 60_000) == local.list_offsets(T0 + 60_000)


def test_a_scan_reads_in_large_ranges(s3_server, tmp_path):
    part = _big_partition(tmp_path, batches=1500)
    s3_server.bucket("scan")
    url = s3_server.upload(part, "s3://scan/big-0")
    p = Partition(url)
    seen = []
    got, requests = _fetched(lambda: seen.extend(r.offset for _s, _b, r in p.read()))
    assert seen == [r.offset for _s, _b, r in Partition(part).read()]
    size = (part / "00000000000000000000.log").stat().st_size
    assert size <= got < size + 200_000  # the .log once, and its indexes
    assert requests < 20  # windows doubling from 64 KiB to 16 MiB, not a GET per batch


def test_columns_of_a_remote_segment(s3_server, local, bucket):
    pytest.importorskip("pyarrow")
    import pyarrow as pa

    remote = Partition(f"{bucket}/clicks-0").segments[0]
    here = Partition(local / "clicks-0").segments[0]
    assert pa.Table.from_batches(list(remote.columns())).equals(pa.Table.from_batches(list(here.columns())))


def test_open_log_and_options(s3_server, bucket):
    logs = open_log(bucket)
    assert sorted(p.path.name for p in logs.partitions)[:2] == ["__consumer_offsets-0", "clicks-0"]
    # the endpoint as a storage option, not from the environment
    p = as_path(f"{bucket}/java-0", {"endpoint_override": s3_server.endpoint, "retries": "2"})
    assert Partition(p).log_end_offset == Partition(f"{bucket}/java-0").log_end_offset
    again = pickle.loads(pickle.dumps(p))  # a path made on a Spark driver, on an executor
    assert again == p and again.store is p.store


def test_a_missing_object_or_bucket_is_named(s3_server, bucket):
    out = cli("lookup", f"{bucket}/nope-0", "--offset", "1", env=s3_server.env, ok=False)
    assert out.returncode == 2 and f"{bucket}/nope-0: no such directory" in out.stderr
    out = cli("dump", "s3://no-such-bucket/x/00000000000000000000.log", env=s3_server.env, ok=False)
    assert out.returncode == 2 and "s3://no-such-bucket/x/00000000000000000000.log" in out.stderr
    with pytest.raises(FileNotFoundError):
        open_blob(as_path(f"{bucket}/java-0/00000000000000009999.log"))


@pytest.mark.slow
def test_a_truncated_object_reads_as_a_truncated_file(s3_server, local, tmp_path):
    data = (local / "java-0" / "00000000000000001000.log").read_bytes()
    cut = tmp_path / "cut-0"
    cut.mkdir()
    (cut / "00000000000000001000.log").write_bytes(data[: len(data) - 100])
    s3_server.bucket("cut")
    url = s3_server.upload(cut, "s3://cut/cut-0")
    a, b = same(s3_server, ("verify", "verify"), (str(cut), url), ok=False)
    assert a.returncode == b.returncode == 1
    assert a.stdout.replace(str(cut), url) == b.stdout and "unreadable" in b.stdout


def test_an_object_cut_while_read_is_an_error_not_data(s3_server, local, monkeypatch):
    monkeypatch.setattr(objects, "BACKOFF", 0.01)
    data = (local / "java-0" / "00000000000000001000.log").read_bytes()
    s3_server.bucket("shrink")
    s3_server.put("s3://shrink/p-0/00000000000000000000.log", data)
    p = Partition("s3://shrink/p-0")  # lists the object at its full size
    s3_server.put("s3://shrink/p-0/00000000000000000000.log", data[:5000])
    with pytest.raises(StorageError) as err:
        list(p.read())
    text = str(err.value)
    assert "s3://shrink/p-0/00000000000000000000.log" in text and "bytes " in text
    assert "ended after" in text


@pytest.mark.slow
def test_access_denied_is_named(s3_server, bucket):
    import boto3

    iam = boto3.client("iam", endpoint_url=s3_server.endpoint, region_name="us-east-1")
    iam.create_user(UserName="lister")
    policy = {"Version": "2012-10-17",
              "Statement": [{"Effect": "Allow", "Action": ["s3:ListBucket"], "Resource": "*"}]}  # fmt: skip
    iam.put_user_policy(UserName="lister", PolicyName="list", PolicyDocument=json.dumps(policy))
    key = iam.create_access_key(UserName="lister")["AccessKey"]
    env = {**s3_server.env, "AWS_ACCESS_KEY_ID": key["AccessKeyId"],
           "AWS_SECRET_ACCESS_KEY": key["SecretAccessKey"]}  # fmt: skip
    s3_server.moto("reset-auth", b"0")  # from now on moto checks every request
    try:
        out = cli("records", f"{bucket}/java-0", "--limit", "1", env=env, ok=False)
        wrong = cli("records", f"{bucket}/java-0", env={**env, "AWS_ACCESS_KEY_ID": "nobody"}, ok=False)
    finally:
        s3_server.moto("reset-auth", b"inf")
    assert out.returncode == 2 and "access denied" in out.stderr and f"{bucket}/java-0" in out.stderr
    # a HEAD answers 403 with no body, whatever the reason: a refused key reads as denied
    assert wrong.returncode == 2 and ("access denied" in wrong.stderr or "refused" in wrong.stderr)


@pytest.mark.slow
def test_a_connection_cut_mid_range_is_retried(s3_server, tmp_path, monkeypatch):
    monkeypatch.setattr(objects, "BACKOFF", 0.01)
    part = _big_partition(tmp_path, batches=400)
    s3_server.bucket("flaky")
    s3_server.upload(part, "s3://flaky/big-0")
    proxy = CuttingProxy(("127.0.0.1", s3_server.port), after=100_000, cuts=3)
    try:
        p = Partition(as_path("s3://flaky/big-0", {"endpoint_override": proxy.endpoint}))
        offsets = [r.offset for _s, _b, r in p.read()]
        assert offsets == list(range(2000)) and proxy.cut == 3
        # a connection cut every time: an error naming the URL and the range, after retries
        proxy.cuts = -1
        q = Partition(as_path("s3://flaky/big-0", {"endpoint_override": proxy.endpoint, "retries": "3"}))
        with pytest.raises(StorageError) as err:
            list(q.read())
    finally:
        proxy.close()
    text = str(err.value)
    assert text.startswith("s3://flaky/big-0/00000000000000000000.log: bytes ")
    assert "after 3 attempts" in text


@pytest.mark.slow
def test_an_unreachable_endpoint_is_named(s3_server, monkeypatch):
    monkeypatch.setattr(objects, "BACKOFF", 0.01)
    p = as_path("s3://any/x-0", {"endpoint_override": "http://127.0.0.1:1", "retries": "2",
                                 "connect_timeout": "1", "request_timeout": "1"})  # fmt: skip
    with pytest.raises(StorageError) as err:
        Partition(p)
    assert "s3://any/x-0" in str(err.value) and "after 2 attempts" in str(err.value)


@pytest.mark.slow
@pytest.mark.parametrize("command", [
    ["sample", "s3://kafka-data/new"],
    ["recover", "s3://kafka-data/backup/java-0"],
    ["recover", "--repair", "s3://kafka-data/backup/java-0"],
    ["corpus", "s3://kafka-data/corpus"],
    ["export-schemas", "--lang", "python", "--out", "s3://kafka-data/x"],
])  # fmt: skip
def test_commands_that_write_refuse_urls(s3_server, bucket, command):
    before = sorted(i.path for i in s3_server.fs.get_file_info(
        __import__("pyarrow.fs", fromlist=["x"]).FileSelector("kafka-data", recursive=True)))  # fmt: skip
    out = cli(*command, env=s3_server.env, ok=False)
    assert out.returncode == 2 and "object store" in out.stderr
    after = sorted(i.path for i in s3_server.fs.get_file_info(
        __import__("pyarrow.fs", fromlist=["x"]).FileSelector("kafka-data", recursive=True)))  # fmt: skip
    assert before == after


def test_urls_are_never_local_paths():
    with pytest.raises(StorageError, match="unsupported URL scheme"):
        as_path("ftp://host/x")
    assert str(as_path("file:///var/lib/kafka")) == "/var/lib/kafka"
    with pytest.raises(StorageError, match="not a local file"):
        open(as_path("s3://b/k"))  # noqa: SIM115 - an ObjectPath has no local file


@given(st.lists(st.tuples(st.integers(0, 200), st.integers(0, 60)), max_size=12),
       st.integers(0, 250), st.integers(0, 80))  # fmt: skip
def test_range_set_is_a_set_of_bytes(spans, start, length):
    rs, have = RangeSet(), set()
    for a, n in spans:
        rs.add(a, a + n)
        have |= set(range(a, a + n))
    end = start + length
    assert {b for a, z in rs.missing(start, end) for b in range(a, z)} == set(range(start, end)) - have
    assert rs.total == len(have)
    assert all(a < b for a, b in rs.spans) and all(
        x[1] < y[0] for x, y in zip(rs.spans, rs.spans[1:])
    )


@given(st.lists(st.integers(1, 5 << 20), min_size=1, max_size=20), st.data())
def test_covering_units_start_and_end_on_bounds(sizes, data):
    bounds = [0]
    for n in sizes:
        bounds.append(bounds[-1] + n)
    start = data.draw(st.integers(0, bounds[-1] - 1))
    end = data.draw(st.integers(start + 1, bounds[-1]))
    units = covering(bounds, start, end)
    assert units[0][0] <= start and units[-1][1] >= end
    assert all(a in bounds and b in bounds for a, b in units)
    assert all(x[1] == y[0] for x, y in zip(units, units[1:]))

"""Kafka tiered storage read with no broker (kafkacodec.storage.tiered, kafkacodec.log.tiered):
segments laid out as Aiven's RemoteStorageManager uploads them (chunked, zstd-compressed,
AES-GCM-encrypted, with the older per-index objects) in moto's S3 server and on disk, and as
Kafka's LocalTieredStorage copies them. What is read back must be the segments they were
made from; a partition's remote and local segments read as one log."""

from __future__ import annotations

import json
import re
import shutil

import pytest
from conftest import kafkacodec_cli as cli
from tiered_layout import Encryptor, chunk_sizes, rsa_key, uuid, write_aiven, write_local_tiered

import kafkacodec as kc
from kafkacodec.log import Partition, PartitionWriter, TieredPartition, open_log
from kafkacodec.runtime.errors import StorageError
from kafkacodec.storage import total_stats
from kafkacodec.storage.tiered import KeyRing, decode_chunk_sizes

T0 = 1_700_000_000_000
TOPIC_ID = uuid()


def records(p) -> list:
    return [(r.offset, r.timestamp, r.key, r.value, r.headers, r.control is not None)
            for _s, _b, r in p.read()]  # fmt: skip


@pytest.fixture(scope="module")
def source(tmp_path_factory):
    """A partition of several segments: transactions (with aborts), every codec, leader
    epochs, indexed every 1024 bytes."""
    d = tmp_path_factory.mktemp("tiered-src") / "orders-0"
    with PartitionWriter(d, segment_bytes=8 << 10, index_interval_bytes=1024) as w:
        off = 0
        for i in range(120):
            codec = ("none", "gzip", "snappy", "lz4", "zstd")[i % 5]
            recs = [kc.Record(None, T0 + 10 * (off + j), b"k%d" % (off + j), b"v" * (40 + j), [("h", b"x")])
                    for j in range(6)]  # fmt: skip
            if i % 7 == 3:  # a transaction, aborted or committed
                w.append(kc.build_batch(recs, base_offset=off, compression=codec, producer_id=9,
                                        producer_epoch=0, is_transactional=True,
                                        partition_leader_epoch=i // 40))  # fmt: skip
                off += 6
                w.append(kc.build_control_batch(i % 2 == 0, offset=off, timestamp=T0 + 10 * off,
                                                producer_id=9, producer_epoch=0))  # fmt: skip
                off += 1
            else:
                w.append(kc.build_batch(recs, base_offset=off, compression=codec,
                                        partition_leader_epoch=i // 40))  # fmt: skip
                off += 6
    p = Partition(d)
    assert len(p.segments) >= 4
    return d


@pytest.fixture(scope="module")
def key(tmp_path_factory):
    return rsa_key(tmp_path_factory.mktemp("keys"))


VARIANTS = {
    "plain": dict(),
    "zstd": dict(compression=True),
    "encrypted": dict(encryption=True),
    "zstd-encrypted": dict(compression=True, encryption=True),
    "legacy": dict(encryption=True, legacy_indexes=True, key_id=None),
}
#: The variants a quick run reads (make test reads them all).
QUICK = ("zstd-encrypted", "legacy")


def segment_epochs(p: Partition, seg) -> dict[int, int]:
    """The leader epochs of a segment's offsets as the broker uploads them with it: the
    partition's entries that reach into the segment, the first from the segment's start."""
    end = seg.read_next_offset()
    out = {}
    for e in p.leader_epochs:
        if e.start_offset < end:
            out = {k: v for k, v in out.items() if v > seg.base_offset} if e.start_offset <= seg.base_offset else out
            out[e.epoch] = max(e.start_offset, seg.base_offset)
    return out


def upload(s3_server, source, prefix: str, *, public=None, key_id="key1", segments=None, **kw) -> str:
    """The partition's segments in Aiven's layout under s3://tiered/<prefix>; returns the
    partition directory's URL."""
    src = Partition(source)
    segs = src.segments if segments is None else [src.segments[i] for i in segments]
    for seg in segs:
        enc = Encryptor(public, key_id) if kw.get("encryption") else None
        write_aiven(lambda k, data: s3_server.put(f"s3://tiered/{k}", data), prefix, "orders", TOPIC_ID,
                    0, source, seg.base_offset, chunk_size=4096, compression=kw.get("compression", False),
                    encryption=enc, legacy_indexes=kw.get("legacy_indexes", False),
                    epochs=segment_epochs(src, seg), end_offset=seg.read_next_offset() - 1)  # fmt: skip
    return f"s3://tiered/{prefix}orders-{TOPIC_ID}/0"


@pytest.fixture(scope="module")
def bucket(s3_server):
    s3_server.bucket("tiered")
    return "s3://tiered"


@pytest.mark.parametrize("variant", [v if v in QUICK else pytest.param(v, marks=pytest.mark.slow)
                                     for v in VARIANTS])  # fmt: skip
def test_aiven_layout_reads_as_its_segments(s3_server, bucket, source, key, variant):
    pem, public = key
    kw = dict(VARIANTS[variant])
    url = upload(s3_server, source, f"{variant}/", public=public, key_id=kw.pop("key_id", "key1"), **kw)
    p = open_log(url, keys=KeyRing({"encryption_key": str(pem)}))
    assert isinstance(p, TieredPartition) and (p.topic, p.partition) == ("orders", 0)
    here = Partition(source)
    assert p.base_offsets == here.base_offsets
    assert records(p) == records(here)
    for offset in (0, 333, 700):
        want = here.segment_for(offset).translate_offset(offset)
        assert p.segment_for(offset).translate_offset(offset) == want
    for ts in (T0 + 2000, -1, -2, -3):  # the same answer; the segment named as it is stored
        got, want = p.list_offsets(ts), here.list_offsets(ts)
        assert got._replace(segment=None) == want._replace(segment=None)
    assert p.aborted_transactions(0, 10_000) == here.aborted_transactions(0, 10_000)
    assert records(p) != [] and p.problems == []


@pytest.mark.slow
def test_the_command_line_reads_a_tiered_partition(s3_server, bucket, source, key):
    pem, public = key
    url = upload(s3_server, source, "cli/", public=public, compression=True, encryption=True)
    opt = ["--storage-option", f"encryption_key={pem}"]
    for args in (["records", "--read-committed"], ["lookup", "--offset", "500"],
                 ["lookup", "--timestamp", str(T0 + 3000)], ["verify"]):  # fmt: skip
        a = cli(args[0], source, *args[1:])
        b = cli(args[0], url, *args[1:], *opt, env=s3_server.env)
        if args[0] == "verify":
            # the counts of what was checked are the same; the names differ
            assert a.stdout.split(":")[0].replace("1 partition", "") == b.stdout.split(":")[0].replace("1 partition", "")
            assert b.stdout.rstrip().endswith("clean")
        else:  # a remote segment is named as stored: <offset>-<segment id>.log
            assert a.stdout == re.sub(r"-[A-Za-z0-9_-]{22}\.log", ".log", b.stdout) and b.stdout
    # a segment's .log object dumps as the segment it was (its chunks transformed back)
    stored = next(i.base_name for i in s3_server.fs.get_file_info(
        __import__("pyarrow.fs", fromlist=["x"]).FileSelector(url[5:])) if i.base_name.endswith(".log"))  # fmt: skip
    local = cli("dump", "--deep-iteration", source / "00000000000000000000.log").stdout.splitlines()
    remote = cli("dump", "--deep-iteration", f"{url}/{stored}", *opt, env=s3_server.env).stdout.splitlines()
    assert remote[0] == f"Dumping {stored}" and remote[1:] == local[2:]  # (no "Log starting offset")


def test_a_lookup_fetches_the_chunks_it_needs(s3_server, bucket, tmp_path):
    d = tmp_path / "big-0"
    with PartitionWriter(d, segment_bytes=1 << 30, index_interval_bytes=4096) as w:
        for i in range(2000):
            w.append(kc.build_batch([kc.Record(None, T0 + i, b"k", bytes(range(256)) * 4, [])
                                     for _ in range(4)], base_offset=4 * i))  # fmt: skip
    size = (d / "00000000000000000000.log").stat().st_size
    write_aiven(lambda k, data: s3_server.put(f"s3://tiered/{k}", data), "big/", "big", TOPIC_ID, 0, d,
                0, chunk_size=64 << 10, compression=True)  # fmt: skip
    p = open_log(f"s3://tiered/big/big-{TOPIC_ID}/0")
    before = total_stats().bytes
    found = p.segments[0].translate_offset(5001)
    fetched = total_stats().bytes - before
    assert found == Partition(d).segments[0].translate_offset(5001)
    assert fetched < 0.05 * size, (fetched, size)


def on_disk(root, source, public, prefix: str):
    """The partition's segments as the plugin's filesystem backend writes them (the same
    objects as files, zstd and encrypted) under root/prefix; returns root."""

    def put(k, data):
        (root / k).parent.mkdir(parents=True, exist_ok=True)
        (root / k).write_bytes(data)

    for seg in Partition(source).segments:
        write_aiven(put, prefix, "orders", TOPIC_ID, 0, source, seg.base_offset, chunk_size=4096,
                    compression=True, encryption=Encryptor(public))  # fmt: skip
    return root


def test_aiven_layout_on_a_disk(tmp_path, source, key):
    """The plugin's filesystem backend: the same objects as files."""
    pem, public = key
    root = on_disk(tmp_path / "fs-backend", source, public, "pre/")
    p = open_log(root / "pre" / f"orders-{TOPIC_ID}" / "0", keys=KeyRing({"encryption_key": str(pem)}))
    assert records(p) == records(Partition(source))
    logs = open_log(root / "pre", keys=KeyRing({"encryption_key": str(pem)}))
    assert [(q.topic, q.partition) for q in logs.partitions] == [("orders", 0)]


@pytest.mark.parametrize("padded", [True, False])
def test_local_tiered_storage_reads_as_its_segments(tmp_path, source, padded):
    for seg in Partition(source).segments:
        write_local_tiered(tmp_path, "orders", TOPIC_ID, 0, source, seg.base_offset, padded=padded)
    d = tmp_path / "kafka-tiered-storage" / f"orders-0-{TOPIC_ID}"
    p = open_log(d)
    assert isinstance(p, TieredPartition) and records(p) == records(Partition(source))
    logs = open_log(tmp_path)  # the directory LocalTieredStorage was given
    assert [(q.topic, q.partition) for q in logs.partitions] == [("orders", 0)]
    out = cli("records", d, "--limit", "3")
    assert out.stdout == cli("records", source, "--limit", "3").stdout


def _entries(text: str) -> list[str]:
    """A dump's batch, record and index-entry lines (the lines that do not name a file)."""
    return [line for line in text.splitlines()
            if line.startswith(("baseOffset:", "| offset:", "offset:", "timestamp:"))]  # fmt: skip


def _source_dump(source, *flags) -> list[str]:
    names = sorted(f for s in (".log", ".index", ".timeindex", ".txnindex") for f in source.glob(f"*{s}"))
    return _entries(cli("dump", *flags, *sorted(names, key=lambda f: (f.stem, _ORDER[f.suffix]))).stdout)


_ORDER = {".log": 0, ".index": 1, ".timeindex": 2, ".txnindex": 3}


@pytest.mark.parametrize("padded", [True, False])
def test_dump_of_a_local_tiered_storage_folder(tmp_path, source, padded):
    """`dump` of a LocalTieredStorage partition folder, and of the directory it was given:
    every remote segment's batches and index entries, as dump of the segments they were
    (each index read at its segment's base offset, checked against its own .log)."""
    for seg in Partition(source).segments:
        write_local_tiered(tmp_path, "orders", TOPIC_ID, 0, source, seg.base_offset, padded=padded)
    d = tmp_path / "kafka-tiered-storage" / f"orders-0-{TOPIC_ID}"
    want = _source_dump(source, "--deep-iteration")
    assert any(line.startswith("offset:") for line in want) and any(line.startswith("| offset:") for line in want)
    out = cli("dump", "--deep-iteration", d)
    assert _entries(out.stdout) == want and not out.stderr
    whole = cli("dump", "--deep-iteration", tmp_path).stdout
    assert _entries(whole) == want and f"Dumping kafka-tiered-storage/orders-0-{TOPIC_ID}/" in whole
    assert cli("dump", "--verify-index-only", d).returncode == 0  # each index found its .log


def test_dump_of_an_aiven_partition_folder(tmp_path, source, key):
    """`dump` of a partition folder of Aiven's layout (and of its topic folder and root):
    every remote segment's .log read through its manifest, as dump of the segments."""
    pem, public = key
    root = on_disk(tmp_path / "fs-backend", source, public, "")
    want = _entries(cli("dump", "--deep-iteration", *sorted(source.glob("*.log"))).stdout)
    opt = ["--storage-option", f"encryption_key={pem}"]
    for where in (root / f"orders-{TOPIC_ID}" / "0", root / f"orders-{TOPIC_ID}", root):
        out = cli("dump", "--deep-iteration", where, *opt)
        assert _entries(out.stdout) == want and want, where
    assert f"Dumping orders-{TOPIC_ID}/0/00000000000000000000-" in out.stdout


def _local_copy(source, tmp_path, first: int):
    """A broker's log dir holding the partition's segments from index `first` on (the older
    ones deleted by local retention once they were remote)."""
    d = tmp_path / "broker" / "orders-0"
    d.mkdir(parents=True)
    segs = Partition(source).segments
    keep = {s.base_offset for s in segs[first:]}
    for f in source.iterdir():
        stem = f.name.split(".")[0]
        if (stem.isdigit() and int(stem) in keep) or f.name == "leader-epoch-checkpoint":
            shutil.copy(f, d / f.name)
    (d / "partition.metadata").write_text(f"version: 0\ntopic_id: {TOPIC_ID}\n")
    return d


def test_remote_and_local_segments_read_as_one_log(s3_server, bucket, source, tmp_path):
    n = len(Partition(source).segments)
    # remote: every segment but the last two; local: the last three (one overlaps)
    upload(s3_server, source, "joined/", segments=list(range(n - 2)))
    local = _local_copy(source, tmp_path, n - 3)
    p = open_log(local, tiered="s3://tiered/joined/")
    assert isinstance(p, TieredPartition)
    assert len(p.remote_segments) == n - 3 and len(p.segments) == n
    here = Partition(source)
    assert records(p) == records(here)
    for offset in (0, 250, here.base_offsets[-1] + 2):
        want = here.segment_for(offset).translate_offset(offset)
        assert p.segment_for(offset).translate_offset(offset) == want
    assert p.list_offsets(-2).offset == 0 and p.list_offsets(-1) == here.list_offsets(-1)
    a = cli("records", local, "--tiered", "s3://tiered/joined/", "--read-committed", env=s3_server.env)
    assert a.stdout == cli("records", source, "--read-committed").stdout


def test_a_remote_segment_past_the_local_start_is_read_below_it(tmp_path, source):
    """Two replicas cut their segments differently: a remote segment reaches past the
    first local one. Kafka serves offsets below the local log start from remote storage
    and the rest from the local log; so is the view read."""
    batches = [b for seg in Partition(source).segments for b in seg.batches()]
    other = tmp_path / "leader-a" / "orders-0"  # the replica that uploaded: larger segments
    with PartitionWriter(other, segment_bytes=20 << 10, index_interval_bytes=1024) as w:
        for b in batches:
            w.append(bytes(b._buf[b.position : b.position + b.size]))
    remote = Partition(other)
    assert len(remote.segments) >= 2
    for seg in remote.segments[:-1]:
        write_local_tiered(tmp_path / "rsm", "orders", TOPIC_ID, 0, other, seg.base_offset)
    mine = Partition(source)
    # the local log starts inside the last uploaded segment
    cut = next(s for s in mine.segments if s.base_offset > remote.segments[-2].base_offset)
    local = _local_copy(source, tmp_path, mine.segments.index(cut))
    p = open_log(local, tiered=tmp_path / "rsm")
    assert p.remote_segments[-1].upper == cut.base_offset
    assert records(p) == records(mine)


def test_chunk_sizes_codec():
    for values in ([], [213], [2**31 - 1], [0, 1000, 2, 44002, 369], [1, 2, 3, 2**31 - 1],
                   [1, 0xFFFF + 10, 0xFFFF + 20, 2**31 - 1], list(range(0, 10**7, 1000))):  # fmt: skip
        assert decode_chunk_sizes(chunk_sizes(values)) == values
    # the layout's documented bytes: count 3, base 10, 1 byte a value, 0 and 5, last 7
    assert decode_chunk_sizes(bytes.fromhex("00000003" "0000000a" "01" "00" "05" "00000007")) == [10, 15, 7]
    with pytest.raises(StorageError):
        decode_chunk_sizes(bytes.fromhex("00000003" "0000000a" "01" "00"))


def test_encrypted_segments_need_their_key(s3_server, bucket, source, key, tmp_path):
    pem, public = key
    url = upload(s3_server, source, "keys/", public=public, encryption=True, segments=[0])
    with pytest.raises(StorageError, match="give its RSA private key"):
        records(open_log(url))
    wrong, _pub = rsa_key(tmp_path, "other")
    with pytest.raises(StorageError, match="does not unwrap with the RSA key given for key1"):
        records(open_log(url, keys=KeyRing({"encryption_key.key1": str(wrong)})))
    out = cli("records", url, "--storage-option", f"encryption_key={wrong}", env=s3_server.env, ok=False)
    assert out.returncode == 2 and "a wrong key" in out.stderr and ".rsm-manifest" in out.stderr
    assert records(open_log(url, keys=KeyRing({"encryption_key.key1": str(pem)})))


def test_damage_and_mismatches_are_named(s3_server, bucket, source, key):
    pem, public = key
    keys = KeyRing({"encryption_key": str(pem)})
    url = upload(s3_server, source, "bad/", public=public, encryption=True, compression=True, segments=[0])
    stem = f"{url}/{Partition(source).segments[0].base_offset:020d}-"
    name = next(i.base_name for i in s3_server.fs.get_file_info(
        __import__("pyarrow.fs", fromlist=["x"]).FileSelector(url[5:])) if i.base_name.endswith(".log"))  # fmt: skip
    log_url = f"{url}/{name}"
    data = s3_server.fs.open_input_file(log_url[5:]).read()
    # a flipped byte in a chunk: its GCM tag no longer matches
    at = len(data) // 2
    s3_server.put(log_url, data[:at] + bytes([data[at] ^ 1]) + data[at + 1 :])
    with pytest.raises(StorageError, match=r"chunk \d+ \(stored bytes \d+-\d+\): does not decrypt") as err:
        records(open_log(url, keys=keys))
    assert log_url in str(err.value)
    # cut: the object no longer holds the chunks its manifest lists
    s3_server.put(log_url, data[:-10])
    with pytest.raises(StorageError, match="the manifest does not match its segment"):
        records(open_log(url, keys=keys))
    s3_server.put(log_url, data)
    manifest_url = log_url[: -len(".log")] + ".rsm-manifest"
    doc = json.loads(s3_server.fs.open_input_file(manifest_url[5:]).read())
    doc["chunkIndex"]["originalFileSize"] += 10  # the last chunk is said to hold 10 bytes more
    s3_server.put(manifest_url, json.dumps(doc).encode())
    with pytest.raises(StorageError, match="once transformed back, but the manifest says"):
        records(open_log(url, keys=keys))
    doc["chunkIndex"]["originalFileSize"] += 4096  # and a chunk more than it lists
    s3_server.put(manifest_url, json.dumps(doc).encode())
    with pytest.raises(StorageError, match=r"chunkIndex lists \d+ chunks, but"):
        records(open_log(url, keys=keys))
    # a segment whose manifest is gone is not read, and the listing says so
    s3_server.fs.delete_file(manifest_url[5:])
    p = open_log(url, keys=keys)
    assert p.segments == [] and "without a .rsm-manifest" in p.problems[0]
    assert stem in p.problems[0]

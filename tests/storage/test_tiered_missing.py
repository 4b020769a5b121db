"""Tiered storage when the remote data is not where the command looked (issue 36): every
command knows where the log starts (the broker's log-start-offset-checkpoint, the cluster's
__remote_log_metadata, the first remote segment), says which offsets it cannot read and
where it looked, and answers an offset there as "not readable here", never with the next
batch it can read. And Aiven's key prefix as configured (`rsm.config.key.prefix` not ending
in "/") is a root, on a filesystem and on an object store.

The remote segments are written by tests/tiered_layout.py (the plugin's rules, independent
of the reader), the metadata records by the codecs generated from Kafka's specs."""

from __future__ import annotations

import json
import shutil

import pytest
from conftest import kafkacodec_cli as cli
from tiered_layout import remote_log_metadata, uuid, write_aiven

import kafkacodec as kc
from kafkacodec.log import Partition, PartitionWriter

T0 = 1_700_000_000_000
TOPIC_ID = uuid()
PREFIX = "kafka-"  # rsm.config.key.prefix: no "/" at its end


@pytest.fixture(scope="module")
def world(tmp_path_factory):
    """source: the whole partition; remote/: its first segments as Aiven's filesystem
    backend lays them out under the key prefix `kafka-`; broker/: a log dir holding the
    last segments (the older ones deleted by local retention), its log-start-offset
    checkpoint (0) and the __remote_log_metadata that lists the remote ones."""
    root = tmp_path_factory.mktemp("tiered-missing")
    source = root / "source" / "orders-0"
    with PartitionWriter(source, segment_bytes=6 << 10, index_interval_bytes=1024) as w:
        for i in range(120):
            recs = [kc.Record(None, T0 + 10 * (6 * i + j), b"k%d" % j, bytes(range(40 + j)), [])
                    for j in range(6)]  # fmt: skip
            w.append(kc.build_batch(recs, base_offset=6 * i, compression=("none", "zstd")[i % 2]))
    segs = Partition(source).segments
    assert len(segs) >= 5
    remote, uploaded = root / "remote", []

    def put(key, data):
        (remote / key).parent.mkdir(parents=True, exist_ok=True)
        (remote / key).write_bytes(data)

    for seg in segs[:-2]:
        sid = uuid()
        end = seg.read_next_offset() - 1
        write_aiven(put, PREFIX, "orders", TOPIC_ID, 0, source, seg.base_offset, chunk_size=2048,
                    compression=True, segment_id=sid, end_offset=end)  # fmt: skip
        uploaded.append((sid, seg.base_offset, end, seg.max_timestamp_so_far().timestamp, 1000, {0: seg.base_offset}))
    local = root / "broker" / "orders-0"
    local.mkdir(parents=True)
    keep = {s.base_offset for s in segs[-3:]}  # one local segment is also remote
    for f in source.iterdir():
        stem = f.name.split(".")[0]
        if stem.isdigit() and int(stem) in keep:
            shutil.copy(f, local / f.name)
    (local / "partition.metadata").write_text(f"version: 0\ntopic_id: {TOPIC_ID}\n")
    (root / "broker" / "log-start-offset-checkpoint").write_text("0\n1\norders 0 0\n")
    meta = root / "broker" / "__remote_log_metadata-0"
    meta.mkdir()
    (meta / "00000000000000000000.log").write_bytes(kc.build_batch(
        [kc.Record(None, T0, None, v, []) for v in remote_log_metadata("orders", TOPIC_ID, 0, uploaded, T0)]))  # fmt: skip
    (root / "empty-root").mkdir()
    return {"root": root, "source": source, "local": local, "remote": remote,
            "first_local": segs[-3].base_offset, "uploaded": uploaded}  # fmt: skip


def _lines(text: str) -> list[str]:
    return text.splitlines()


# ------------------------------------------------------------- 1. missing remote data


@pytest.mark.parametrize("tiered", [None, "empty-root"])
def test_offsets_the_log_holds_but_no_segment_read_are_named(world, tiered):
    local, first = world["local"], world["first_local"]
    extra = [] if tiered is None else ["--tiered", world["root"] / tiered]
    out = cli("records", local, "--limit", 1, *extra, ok=False)
    assert out.returncode == 1
    assert out.stdout.startswith(f"offset {first} ")  # what can be read is read ...
    assert f"offsets 0-{first - 1} are in the log" in out.stderr  # ... and what cannot, said
    assert str(local) in out.stderr and (tiered is None or f"--tiered {world['root'] / tiered}" in out.stderr)
    look = cli("lookup", local, "--offset", 100, *extra, ok=False)
    assert look.returncode == 1 and not look.stdout
    assert "offset 100 is not readable here" in look.stderr and f"offsets 0-{first - 1}" in look.stderr
    at = cli("records", local, "--from-offset", 100, *extra, ok=False)
    assert at.returncode == 1 and not at.stdout and "not readable here" in at.stderr
    # an offset the local log holds reads as before, and says nothing of what is below it
    fine = cli("records", local, "--from-offset", first + 1, "--limit", 1, *extra)
    assert fine.stdout.startswith(f"offset {first + 1} ") and "are in the log" not in fine.stderr
    assert json.loads(cli("lookup", local, "--timestamp", "-2", "--json", *extra).stdout)["offset"] == 0
    v = cli("verify", local, *extra, ok=None)
    assert f"offsets 0-{first - 1} are in the log" in v.stdout
    assert v.returncode == (0 if tiered is None else 1)  # a note without --tiered, a problem with it


def test_a_timestamp_answered_only_where_the_answer_can_be(world):
    local, first = world["local"], world["first_local"]
    uploaded = world["uploaded"]
    inside = uploaded[1][3]  # the largest timestamp of the second remote segment
    out = cli("lookup", local, "--timestamp", inside, ok=False)
    assert out.returncode == 1 and "may be in offsets 0-" in out.stderr and not out.stdout
    # past every remote segment's largest timestamp (the metadata says so): answered here
    later = max(seg[3] for seg in uploaded if seg[1] < first) + 1
    here = Partition(world["source"]).list_offsets(later)
    got = json.loads(cli("lookup", local, "--timestamp", later, "--json").stdout)
    assert (got["offset"], got["timestamp"]) == (here.offset, here.timestamp)
    assert cli("lookup", local, "--timestamp", "-3", ok=None).returncode == 0  # the largest is local


def test_without_the_metadata_the_checkpoint_alone_says_where_the_log_starts(world, tmp_path):
    broker = shutil.copytree(world["local"].parent, tmp_path / "broker")
    shutil.rmtree(broker / "__remote_log_metadata-0")
    out = cli("lookup", broker / "orders-0", "--timestamp", T0 + 1_000_000, ok=False)
    assert out.returncode == 1 and "largest timestamp is not known" in out.stderr
    (broker / "log-start-offset-checkpoint").unlink()  # nothing says the log starts lower
    first = world["first_local"]
    out = cli("lookup", broker / "orders-0", "--offset", 100, ok=False)
    assert out.returncode == 1 and f"below the log start offset {first}" in out.stderr


# -------------------------------------------------------------- 2. the key prefix


def test_the_plugins_key_prefix_is_a_root(world, s3_server):
    local, remote = world["local"], world["remote"]
    whole = cli("records", world["source"]).stdout
    out = cli("records", local, "--tiered", f"{remote}/{PREFIX}")
    assert out.stdout == whole and not out.stderr
    look = json.loads(cli("lookup", local, "--offset", 100, "--tiered", f"{remote}/{PREFIX}", "--json").stdout)
    want = Partition(world["source"]).fetch(100)[1]
    assert (look["batch_last_offset"], look["position"]) == (want.offset, want.position)
    assert cli("verify", local, "--tiered", f"{remote}/{PREFIX}").returncode == 0
    listing = cli("remote-log", local.parent, "--tiered", f"{remote}/{PREFIX}")
    assert f"checked the files of {len(world['uploaded'])} segments under {remote}/{PREFIX}: all there" in listing.stderr
    # on an object store: s3://bucket/kafka- is the same prefix
    s3_server.bucket("prefixed")
    s3_server.upload(remote, "s3://prefixed")
    env = s3_server.env
    out = cli("records", local, "--tiered", f"s3://prefixed/{PREFIX}", env=env)
    assert out.stdout == whole and not out.stderr
    wrong = cli("records", local, "--tiered", "s3://prefixed/nothing-", env=env, ok=False)
    assert wrong.returncode == 2 and "rsm.config.key.prefix" in wrong.stderr
    wrong = cli("records", local, "--tiered", f"{remote}/nothing-", ok=False)
    assert wrong.returncode == 2 and "nor a key prefix" in wrong.stderr


def test_the_spark_sources_say_what_they_leave_out(world, caplog):
    """The data sources' partitions (planned on the driver) say the offsets they cannot
    read, as the command line does; the Spark jobs print it as a note."""
    pytest.importorskip("pyarrow")
    from kafkacodec.pipeline.options import partitions_of

    with caplog.at_level("WARNING", logger="kafkacodec.pipeline"):
        (p,) = partitions_of([world["local"]])
    first = world["first_local"]
    assert p.unreadable()[0][:2] == (0, first - 1)
    assert any(f"offsets 0-{first - 1} are in the log" in r.getMessage() for r in caplog.records)

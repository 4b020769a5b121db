"""`kafkacodec rewrite`: a log written anew, byte for byte where Kafka wrote it (indexes as
Kafka builds them), recompressed or converted without changing an offset, atomically, never
over its source nor into a log directory, never from a log a broker holds."""

import json
import os
import shutil
import subprocess
import sys
import time

import pytest
from conftest import KAFKA_JAVA, PEERS, Crash, crash_after, kafkacodec_cli, metadata_value

import kafkacodec as kc
from kafkacodec.log import rewrite as RW
from kafkacodec.log.partition import Partition
from kafkacodec.log.workers import usable_cpus
from kafkacodec.log.writer import PartitionWriter
from kafkacodec.runtime.compression import CODEC_IDS
from kafkacodec.runtime.errors import LogError

SEGMENT = KAFKA_JAVA / "segments" / "segment_interval4096"


def kafka_partition(tmp_path):
    part = tmp_path / "orders-0"
    part.mkdir()
    for f in SEGMENT.glob("00000000000000001000.*"):
        if not f.name.endswith(".txt"):
            shutil.copy(f, part / f.name)
    (part / "leader-epoch-checkpoint").write_text("0\n1\n3 1000\n")
    return part


def files(d):
    return {p.relative_to(d).as_posix(): p.read_bytes() for p in sorted(d.rglob("*")) if p.is_file()}


def rows(path):
    with Partition(path) as p:
        return [(r.offset, r.timestamp, r.key, r.value, r.headers) for _s, _b, r in p.read()]


def test_kafkas_segment_and_indexes_come_back_byte_for_byte(tmp_path):
    part = kafka_partition(tmp_path)
    s = RW.rewrite(part, tmp_path / "new")
    assert files(tmp_path / "new") == files(part)  # Kafka's own .index and .timeindex included
    assert (s.batches_in, s.identical, s.different, s.bytes_in) == (134, 134, 0, s.bytes_out)
    assert s.records == 603 and s.intervals == {"orders-0": 4096}
    assert not (tmp_path / f".new{RW.STAGE_SUFFIX}").exists()


def test_the_index_interval_is_the_one_given(tmp_path):
    part = kafka_partition(tmp_path)
    RW.rewrite(part, tmp_path / "new", index_interval_bytes=1024)
    index = (tmp_path / "new" / "00000000000000001000.index").read_bytes()
    assert len(index) > len((part / "00000000000000001000.index").read_bytes())
    # as Kafka's recovery rebuilds them for that interval
    from kafkacodec.log.recovery import recover_segment
    from kafkacodec.log.segment import Segment

    rep = recover_segment(Segment(part, 1000), 1024)
    assert kc.log.index.encode_offset_entries(1000, rep.offset_index) == index


def test_the_index_interval_is_the_topics_config_in_the_cluster_metadata(tmp_path):
    """index.interval.bytes: a topic's ConfigRecord, else the cluster-wide
    log.index.interval.bytes (ConfigRecord of the BROKER resource ""), else 4096."""
    root = writer_log_dirs(tmp_path)
    meta = root / "__cluster_metadata-0"
    meta.mkdir()
    configs = [metadata_value("ConfigRecord", 0, resource_type=4, resource_name="",
                              name="log.index.interval.bytes", value="2048"),
               metadata_value("ConfigRecord", 0, resource_type=2, resource_name="t",
                              name="index.interval.bytes", value="512")]  # fmt: skip
    (meta / "00000000000000000000.log").write_bytes(
        kc.build_batch([kc.Record(None, 1_700_000_000_000, None, v, []) for v in configs]))
    s = json.loads(kafkacodec_cli("rewrite", root, tmp_path / "new", "--json").stdout)
    assert s["index_interval_bytes"] == {"t-0": 512, "t-1": 512, "t-2": 512, "__cluster_metadata-0": 2048}
    from kafkacodec.log.recovery import recover_segment
    from kafkacodec.log.segment import Segment

    for log in (root / "t-1").glob("*.log"):
        index = (tmp_path / "new" / "t-1" / log.with_suffix(".index").name).read_bytes()
        want = recover_segment(Segment(log.parent, int(log.stem)), 512).offset_index
        assert kc.log.index.encode_offset_entries(int(log.stem), want) == index
    (meta / "00000000000000000000.log").unlink()  # metadata that cannot be folded: none
    out = kafkacodec_cli("rewrite", root, "--check", "--json")
    assert set(json.loads(out.stdout)["index_interval_bytes"].values()) == {4096}
    assert "the cluster's metadata cannot be read" in out.stderr and "index.interval.bytes is used" in out.stderr


def writer_log_dirs(tmp_path, legacy=False):
    """A log.dirs of three partitions written as a broker appends (all codecs, a
    transaction, legacy message sets when asked)."""
    root = tmp_path / "logs"
    root.mkdir()
    (root / "meta.properties").write_text("version=1\nnode.id=1\n")
    (root / "recovery-point-offset-checkpoint").write_text("0\n1\nt 0 42\n")
    codecs = ["none", "gzip", "snappy", "lz4", "zstd"]
    for n in range(3):
        with PartitionWriter(root / f"t-{n}", segment_bytes=8_000, fsync=False) as w:
            for i in range(40):
                records = [(None, 1_700_000_000_000 + i * 10 + j, b"k%d" % j, b"value %d %d " % (i, j) * 8, [])
                           for j in range(10)]  # fmt: skip
                codec = codecs[(i + n) % 5]
                if legacy and i % 2:
                    data = kc.build_message_set(records, magic=1 + (i % 4 == 1) * -1,
                                                compression=codec if codec != "zstd" else "gzip",
                                                base_offset=w.next_offset)  # fmt: skip
                else:
                    data = kc.build_batch(records, base_offset=w.next_offset, compression=codec,
                                          partition_leader_epoch=n)  # fmt: skip
                w.append(data)
    return root


def test_a_log_dirs_comes_back_byte_for_byte(tmp_path):
    root = writer_log_dirs(tmp_path)
    (root / ".lock").write_bytes(b"")
    out = kafkacodec_cli("rewrite", root, tmp_path / "new", "--json", "--jobs", "2")
    s = json.loads(out.stdout)
    want = files(root)
    del want[".lock"]
    assert files(tmp_path / "new") == want
    assert s["partitions"] == 3 and s["different"] == 0
    assert s["segments"] == len(list(root.glob("*/*.log")))
    assert "recovery-point-offset-checkpoint" in s["copied"]


@pytest.mark.parametrize("codec", ["zstd", "gzip", "none"])
def test_recompression_keeps_every_record_and_offset(tmp_path, codec):
    root = writer_log_dirs(tmp_path)
    out = kafkacodec_cli("rewrite", root, tmp_path / "new", "--compression", codec)
    assert "changed" in out.stdout
    for n in range(3):
        assert rows(tmp_path / "new" / f"t-{n}") == rows(root / f"t-{n}")
        with Partition(tmp_path / "new" / f"t-{n}") as p:
            assert {b.compression for _s, b, _r in p.read()} == {CODEC_IDS[codec]}
    kafkacodec_cli("verify", tmp_path / "new")  # exit 0: indexes and batches as Kafka's


def test_legacy_data_is_converted_to_magic_2(tmp_path):
    root = writer_log_dirs(tmp_path, legacy=True)
    (root / "t-0" / "leader-epoch-checkpoint").write_text("0\n1\n5 0\n")
    out = kafkacodec_cli("rewrite", root, tmp_path / "new", "--magic", "2", "--compression", "zstd")
    assert "changed" in out.stdout
    for n in range(3):
        assert [r[:4] for r in rows(tmp_path / "new" / f"t-{n}")] == [r[:4] for r in rows(root / f"t-{n}")]
        with Partition(tmp_path / "new" / f"t-{n}") as p:
            batches = [b for _s, b, _r in p.read()]
        assert {b.magic for b in batches} == {2}
    with Partition(tmp_path / "new" / "t-0") as p:
        # converted batches carry the epoch the checkpoint gives; v2 ones keep their own
        assert {b.partition_leader_epoch for _s, b, _r in p.read()} == {5, 0}
    kafkacodec_cli("verify", tmp_path / "new")


def test_check_names_a_batch_another_client_wrote(tmp_path):
    part = tmp_path / "t-0"
    part.mkdir()
    data = (PEERS / "sarama" / "v2_gzipped_record.bin").read_bytes()
    (part / "00000000000000000000.log").write_bytes(kc.build_batch([(None, 5, b"k", b"v", [])]))
    # sarama's batch, moved to offset 1 (the base offset is outside the CRC)
    (part / "00000000000000000001.log").write_bytes((1).to_bytes(8, "big") + data[8:])
    out = kafkacodec_cli("rewrite", part, "--check", ok=None)
    assert out.returncode == 1
    assert "batches identical 1, different 1" in out.stdout
    assert "00000000000000000001.log batch at byte 0 (offset 1): first differing byte at 11" in out.stdout
    assert not list(tmp_path.glob(".*"))  # a check writes nothing
    kafkacodec_cli("rewrite", part, tmp_path / "new")  # written anyway: valid, equivalent
    assert rows(tmp_path / "new") == rows(part)
    assert kafkacodec_cli("rewrite", tmp_path / "new", "--check").returncode == 0


def test_refusals(tmp_path):
    part = kafka_partition(tmp_path)
    (tmp_path / "taken").mkdir()
    for dst, why in [(tmp_path / "taken", "exists"), (part / "inner", "inside the source"),
                     (part, "exists")]:  # fmt: skip
        out = kafkacodec_cli("rewrite", part, dst, ok=None)
        assert out.returncode == 2 and why in out.stderr  # refused: nothing done
    live = tmp_path / "live"
    live.mkdir()
    (live / "meta.properties").write_text("")
    out = kafkacodec_cli("rewrite", part, live / "x-0", ok=None)
    assert "a Kafka log directory" in out.stderr and not (live / "x-0").exists()
    assert kafkacodec_cli("rewrite", part, ok=None).returncode == 2
    assert kafkacodec_cli("rewrite", part, tmp_path / "z", "--check", ok=None).returncode == 2
    out = kafkacodec_cli("rewrite", part, "s3://bucket/x", ok=None)
    assert out.returncode == 2


def test_a_log_a_broker_holds_is_refused(tmp_path):
    part = kafka_partition(tmp_path)
    lock = tmp_path / ".lock"
    code = f"import fcntl\nf = open({str(lock)!r}, 'a+')\nfcntl.lockf(f, fcntl.LOCK_EX)\nprint('locked', flush=True)\nimport time; time.sleep(60)\n"
    with subprocess.Popen([sys.executable, "-c", code], stdout=subprocess.PIPE, text=True) as holder:
        try:
            assert holder.stdout.readline().strip() == "locked"
            out = kafkacodec_cli("rewrite", part, tmp_path / "new", ok=None)
            assert out.returncode == 2 and f"process {holder.pid}" in out.stderr
            assert not (tmp_path / "new").exists()
        finally:
            holder.kill()


def test_damage_stops_the_rewrite_and_leaves_nothing(tmp_path):
    part = kafka_partition(tmp_path)
    log = part / "00000000000000001000.log"
    log.write_bytes(log.read_bytes()[:-7])
    out = kafkacodec_cli("rewrite", part, tmp_path / "new", ok=None)
    assert out.returncode == 1 and "00000000000000001000.log" in out.stderr
    assert "recover" in out.stderr
    assert not (tmp_path / "new").exists() and not list(tmp_path.glob(f".new{RW.STAGE_SUFFIX}"))


@pytest.mark.parametrize("steps", range(0, 12))
def test_a_rewrite_killed_at_any_step_is_rolled_back_by_the_next(tmp_path, monkeypatch, steps):
    root = writer_log_dirs(tmp_path)
    before = files(root)
    crash_after(monkeypatch, RW, steps)
    real_rename = os.rename

    def rename(a, b):  # the commit point is a step too
        os.fsync(os.open(os.devnull, os.O_RDONLY))
        return real_rename(a, b)

    monkeypatch.setattr(RW.os, "rename", rename)
    try:
        RW.rewrite(root, tmp_path / "new")
        finished = True
    except Crash:
        finished = False
    monkeypatch.undo()
    assert files(root) == before  # the source is never touched
    if finished:
        assert files(tmp_path / "new") == before
        return
    # killed: either nothing is there, or a whole rewrite
    assert not (tmp_path / "new").exists() or files(tmp_path / "new") == before
    if not (tmp_path / "new").exists():
        s = RW.rewrite(root, tmp_path / "new")
        assert files(tmp_path / "new") == before
        assert s.rolled_back is None or s.rolled_back.endswith(RW.STAGE_SUFFIX)


def test_a_stage_left_by_a_killed_process_is_rolled_back(tmp_path):
    part = kafka_partition(tmp_path)
    stage = tmp_path / f".new{RW.STAGE_SUFFIX}"
    stage.mkdir()
    (stage / "00000000000000001000.log").write_bytes(b"half")
    s = RW.rewrite(part, tmp_path / "new")
    assert s.rolled_back == str(stage) and not stage.exists()
    assert files(tmp_path / "new") == files(part)


def test_a_segment_file_is_rewritten_into_a_new_directory(tmp_path):
    part = kafka_partition(tmp_path)
    s = RW.rewrite(part / "00000000000000001000.log", tmp_path / "one", compression="lz4")
    assert sorted(os.listdir(tmp_path / "one")) == [
        "00000000000000001000.index", "00000000000000001000.log", "00000000000000001000.timeindex",
        "00000000000000001000.txnindex"]  # fmt: skip
    assert s.segments == 1 and s.bytes_out < s.bytes_in
    with pytest.raises(LogError, match="not a segment"):
        RW.rewrite(PEERS / "sarama" / "v2_gzipped_record.bin", tmp_path / "two")


def one_big_segment(tmp_path, legacy=False):
    """A partition of one segment of about 1.2 MB, batches of every codec."""
    part = tmp_path / "big-0"
    codecs = ["none", "gzip", "snappy", "lz4", "zstd"]
    with PartitionWriter(part, segment_bytes=1 << 30, fsync=False) as w:
        for i in range(300):
            records = [(None, 1_700_000_000_000 + i, b"k", b"value %d %d " % (i, j) * 40, [])
                       for j in range(10)]  # fmt: skip
            if legacy and i % 3 == 0:
                data = kc.build_message_set(records, magic=1, base_offset=w.next_offset)
            else:
                data = kc.build_batch(records, base_offset=w.next_offset, compression=codecs[i % 5])
            w.append(data)
    return part


@pytest.mark.slow
def test_processes_share_a_segment_and_write_the_same_bytes(tmp_path, monkeypatch):
    """A segment cut into units of work at batch boundaries, run by two worker processes:
    the same bytes as one process writes, and as the source."""
    part = one_big_segment(tmp_path)
    monkeypatch.setattr(RW, "UNIT_BYTES", 16 << 10)
    with Partition(part) as p:
        (seg,) = p.segments
        cuts = RW._cuts(seg, whole=False)
        assert len(cuts) > 10 and RW._jobs(2, [seg])[0] == min(2, usable_cpus())
        assert all(end == nxt for (_s, end), (nxt, _e) in zip(cuts, cuts[1:]))
    one = RW.rewrite(part, tmp_path / "one", jobs=1)
    two = RW.rewrite(part, tmp_path / "two", jobs=2)
    assert files(tmp_path / "one") == files(tmp_path / "two") == files(part)
    same = {"destination": None, "seconds": 0, "jobs": 0}
    assert one.to_dict() | same == two.to_dict() | same
    assert (one.jobs, two.jobs, two.identical, two.segments) == (1, 2, 300, 1)
    RW.rewrite(part, tmp_path / "lz4-1", jobs=1, compression="lz4", level=5)
    RW.rewrite(part, tmp_path / "lz4-2", jobs=2, compression="lz4", level=5)
    assert files(tmp_path / "lz4-1") == files(tmp_path / "lz4-2")
    assert rows(tmp_path / "lz4-2") == rows(part)
    kafkacodec_cli("verify", tmp_path / "lz4-2")


def test_grouping_legacy_messages_keeps_a_segment_whole(tmp_path, monkeypatch):
    """Converting uncompressed legacy messages groups them across entries: a cut between
    two would change the batches written."""
    part = one_big_segment(tmp_path, legacy=True)
    monkeypatch.setattr(RW, "UNIT_BYTES", 16 << 10)
    with Partition(part) as p:
        (seg,) = p.segments
        assert len(RW._cuts(seg, whole=kc.records.rebuild.Rebuilder(magic=2).groups_legacy)) == 1
        assert len(RW._cuts(seg, whole=kc.records.rebuild.Rebuilder().groups_legacy)) > 10


@pytest.mark.slow
def test_damage_met_by_a_worker_is_named_and_leaves_nothing(tmp_path, monkeypatch):
    part = one_big_segment(tmp_path)
    monkeypatch.setattr(RW, "UNIT_BYTES", 16 << 10)
    log = part / "00000000000000000000.log"
    with Partition(part) as p:
        (seg,) = p.segments
        at = RW._cuts(seg, whole=False)[5][0]  # the sixth unit's first batch
    data = bytearray(log.read_bytes())
    data[at + 70] ^= 0xFF  # inside its records: the CRC no longer matches
    log.write_bytes(bytes(data))
    with pytest.raises(LogError) as err:
        RW.rewrite(part, tmp_path / "new", jobs=2)
    assert err.value.path == str(log) and err.value.position == at
    assert not (tmp_path / "new").exists() and not list(tmp_path.glob(f".new{RW.STAGE_SUFFIX}"))


def test_errors_cross_process_boundaries_whole():
    import pickle

    from kafkacodec.runtime.errors import StorageError, TruncatedError

    for err in (LogError("/a/b.log", "cannot be rewritten", 17), StorageError("s3://b/k", "gone", 1, 5),
                TruncatedError("cut", 5, needed=9).within("a batch")):  # fmt: skip
        back = pickle.loads(pickle.dumps(err))
        assert type(back) is type(err) and str(back) == str(err) and vars(back) == vars(err)


@pytest.mark.slow
@pytest.mark.parametrize("units", [0, 3])
def test_a_rewrite_stopped_while_workers_run_leaves_nothing(tmp_path, monkeypatch, units):
    """Stopped while worker processes still write their units: they finish or are cancelled
    before the staging directory is removed, so nothing is left; the next run completes."""
    from conftest import Crash

    part = one_big_segment(tmp_path)
    monkeypatch.setattr(RW, "UNIT_BYTES", 16 << 10)
    real = RW.fsio.append_file
    calls = {"n": 0}

    def append_file(src, dst):
        if calls["n"] == units:
            raise Crash
        calls["n"] += 1
        return real(src, dst)

    monkeypatch.setattr(RW.fsio, "append_file", append_file)
    run_unit = RW._run_unit

    def slow_unit(unit, to_file=False):  # workers still busy when the run stops
        if to_file:
            time.sleep(0.1)
        return run_unit(unit, to_file)

    monkeypatch.setattr(RW, "_run_unit", slow_unit)
    with pytest.raises(Crash):
        RW.rewrite(part, tmp_path / "new", jobs=2)
    assert sorted(p.name for p in tmp_path.iterdir()) == ["big-0"]
    monkeypatch.setattr(RW.fsio, "append_file", real)
    RW.rewrite(part, tmp_path / "new", jobs=2)
    assert files(tmp_path / "new") == files(part)


@pytest.mark.parametrize("kernel", ["copies", "refuses", "missing"])
def test_append_file_appends_whole_files(tmp_path, monkeypatch, kernel):
    """fsio.append_file: copy_file_range, else (another filesystem, an old kernel) a copy
    through a buffer, from where the kernel stopped."""
    import errno

    from kafkacodec.storage import fsio

    src, dst = tmp_path / "unit", tmp_path / "segment"
    src.write_bytes(bytes(range(256)) * 9000)
    real = os.copy_file_range
    if kernel == "refuses":
        calls = {"n": 0}

        def partly(a, b, count):  # copies 1000 bytes, then refuses
            calls["n"] += 1
            if calls["n"] > 1:
                raise OSError(errno.EXDEV, "cross-device")
            return real(a, b, min(count, 1000))

        monkeypatch.setattr(os, "copy_file_range", partly)
    elif kernel == "missing":
        monkeypatch.delattr(os, "copy_file_range")
    with open(src, "rb") as s, open(dst, "wb") as d:
        d.write(b"head")
        assert fsio.append_file(s, d) == 256 * 9000
        d.write(b"tail")
    assert dst.read_bytes() == b"head" + src.read_bytes() + b"tail"

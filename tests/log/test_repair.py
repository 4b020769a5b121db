"""Repair and verify tell the truth and lose nothing: Kafka's recovery rule for a whole
partition (LogLoader), a backup outside the log directory, the broker's lock, a journal that
finishes after a crash at any step, every bad region, and a tool that cannot be turned
against the host it runs on."""

import json
import os
import shutil
import signal
import stat
import subprocess
import sys
from pathlib import Path

import pytest
from conftest import kafkacodec_cli as cli

import kafkacodec as kc
from kafkacodec.log import Partition, PartitionWriter
from kafkacodec.log.partition import read_epoch_checkpoint

CRASHING = Path(__file__).with_name("crashing_cli.py")
SEGMENT_BYTES = 3000  # 27 one-record batches of 111 bytes a segment


def make_partition(d: Path, n: int = 100) -> Path:
    """n one-record batches (offsets 0..n-1, leader epoch rising every 20) in segments of
    27 batches, with its leader-epoch-checkpoint; a snapshot file per segment base."""
    with PartitionWriter(d, segment_bytes=SEGMENT_BYTES, fsync=False) as w:
        for i in range(n):
            rec = kc.Record(None, 1_700_000_000_000 + i, b"k%d" % i, b"v" * 40)
            w.append(kc.build_batch([rec], base_offset=i, partition_leader_epoch=i // 20))
    for base in (27, 54, 81):
        (d / f"{base:020d}.snapshot").write_bytes(b"producer state at %d" % base)
    return d


def flip(path: Path, *positions: int) -> None:
    b = bytearray(path.read_bytes())
    for pos in positions:
        b[pos] ^= 0xFF
    path.write_bytes(bytes(b))


def files(d: Path) -> dict:
    return {p.name: p.read_bytes() for p in sorted(d.iterdir()) if p.is_file()}


def offsets(d: Path) -> list[int]:
    with Partition(d) as p:
        return [r.offset for _s, _b, r in p.read(verify_crc=False)]


def backup_dir(root: Path) -> Path:
    (manifest,) = [
        m for m in root.rglob("REPAIR.json") if json.loads(m.read_text())["status"] == "done"
    ]
    return manifest.parent


def assert_nothing_lost(original: dict, part: Path, backup: Path) -> None:
    """Every original byte is in the partition or the backup: a file kept whole, moved
    whole, truncated with its tail in `<name>.cut-at-N`, or rewritten with the old one in
    `<name>.old`."""
    now, saved = files(part), files(backup)
    for name, data in original.items():
        if now.get(name) == data or saved.get(name) == data or saved.get(name + ".old") == data:
            continue
        cuts = [k for k in saved if k.startswith(name + ".cut-at-")]
        assert len(cuts) == 1, f"{name}: neither kept, moved nor cut"
        at = int(cuts[0].rsplit("-", 1)[1])
        assert len(now[name]) == at and now[name] + saved[cuts[0]] == data, name


@pytest.fixture
def corrupt_middle(tmp_path):
    """A log.dirs with one partition of four segments (0, 27, 54, 81), the second damaged
    at its fifth batch (offset 31)."""
    d = make_partition(tmp_path / "logs" / "orders-0")
    flip(d / "00000000000000000027.log", 4 * 111 + 60)
    return d


# ------------------------------------------------------------------ 1. Kafka's rule, no hole


def test_corrupt_middle_segment_moves_every_later_segment(corrupt_middle, tmp_path):
    d = corrupt_middle
    original = files(d)
    dry = cli("recover", d, "--quiet", ok=False)
    assert dry.returncode == 1
    assert "would cut 2553 bytes from byte 444 of 00000000000000000027.log" in dry.stdout
    assert "2 later segments: 46 batches, 46 records" in dry.stdout
    assert (
        "the cut bytes hold 22 readable batches (22 records)" in dry.stdout
    )  # offsets 32..53, after the damaged 31
    for name in (
        "00000000000000000054.log",
        "00000000000000000081.log",
        "00000000000000000081.snapshot",
    ):
        assert f"    {name}: " in dry.stdout
    assert "00000000000000000027.snapshot" not in dry.stdout  # not past the new end (31)
    assert files(d) == original  # a dry run writes nothing
    plan = json.loads(cli("recover", d, "--json", "--quiet", ok=False).stdout)
    assert plan["log_end_offset"] == 31 and plan["truncate"]["last_valid_offset"] == 30

    out = cli("recover", d, "--repair", "--backup", tmp_path / "bk", "--quiet")
    backup = backup_dir(tmp_path / "bk")
    assert f"backup: {backup}" in out.stdout
    assert offsets(d) == list(range(31))  # no hole: the log ends at the last valid offset
    with Partition(d) as p:
        assert p.log_end_offset == 31 and [s.base_offset for s in p.segments] == [0, 27]
    assert [tuple(e) for e in read_epoch_checkpoint(d / "leader-epoch-checkpoint")] == [
        (0, 0),
        (1, 20),
    ]
    assert_nothing_lost(original, d, backup)
    assert cli("verify", d, "--quiet").stdout.endswith(": clean\n")
    assert "clean" in cli("recover", d, "--quiet").stdout
    assert not [p for p in d.iterdir() if ".kafkacodec-" in p.name]


def test_a_damaged_later_segment_is_counted_past_its_damage(corrupt_middle):
    """Found by the recovery drill: a later segment that is damaged too stopped the dry run
    (its batches were counted by a walk that ends at damage)."""
    log = corrupt_middle / "00000000000000000081.log"
    data = bytearray(log.read_bytes())
    data[2 * 111 + 8 : 2 * 111 + 12] = bytes(4)  # the third batch's size: 0
    log.write_bytes(bytes(data))
    dry = cli("recover", corrupt_middle, "--quiet", ok=False)
    assert dry.returncode == 1, dry.stderr
    assert f"00000000000000000081.log: {len(data)} bytes, 18 batches, 18 records" in dry.stdout


def test_the_default_backup_is_beside_the_log_dir_never_inside(corrupt_middle, tmp_path):
    logs = corrupt_middle.parent
    (logs / "meta.properties").write_text("version=1\n")
    cli("recover", corrupt_middle, "--repair", "--quiet")
    assert [p.name for p in logs.iterdir() if p.is_dir()] == ["orders-0"]
    assert backup_dir(tmp_path / "kafkacodec-backup").is_relative_to(
        tmp_path / "kafkacodec-backup" / "logs" / "orders-0"
    )


@pytest.mark.parametrize("where", ["logs/inside", "logs", "other-logdir/x"])
def test_a_backup_inside_a_log_dir_is_refused(corrupt_middle, tmp_path, where):
    (tmp_path / "other-logdir").mkdir()
    (tmp_path / "other-logdir" / "meta.properties").write_text("version=1\n")
    original = files(corrupt_middle)
    out = cli(
        "recover", corrupt_middle, "--repair", "--backup", tmp_path / where, "--quiet", ok=False
    )
    assert out.returncode == 2 and "log director" in out.stderr
    assert files(corrupt_middle) == original and not (tmp_path / "logs" / "inside").exists()


def test_a_segment_whose_offsets_its_name_cannot_hold_is_refused_by_both(tmp_path):
    """Named 500, holding offsets 0..99: Kafka's recover throws
    LogSegmentOffsetOverflowException and never truncates; verify and recover agree."""
    d = tmp_path / "logs" / "t-0"
    with PartitionWriter(d, fsync=False) as w:
        for i in range(100):
            w.append(kc.build_batch([kc.Record(None, 1, b"k", b"v")], base_offset=i))
    for f in list(d.iterdir()):
        if f.name.startswith("0000"):
            f.rename(d / f.name.replace("00000000000000000000", "00000000000000000500"))
    v = cli("verify", d, "--quiet", ok=False)
    assert v.returncode == 1 and "LogSegmentOffsetOverflowException" in v.stdout
    original = files(d)
    r = cli("recover", d, "--repair", "--backup", tmp_path / "bk", "--quiet", ok=False)
    assert r.returncode == 2 and "LogSegmentOffsetOverflowException" in r.stdout
    assert files(d) == original


# ------------------------------------------------------------------------- 2. the lock


def test_a_lock_held_by_another_process_stops_the_repair(corrupt_middle, tmp_path):
    lock = corrupt_middle.parent / ".lock"
    holder = subprocess.Popen([sys.executable, "-c", (
        "import fcntl, sys, time\n"
        f"f = open({str(lock)!r}, 'a+')\n"
        "fcntl.lockf(f, fcntl.LOCK_EX)\n"
        "print('locked', flush=True)\n"
        "time.sleep(60)\n")], stdout=subprocess.PIPE, text=True)  # fmt: skip
    try:
        assert holder.stdout.readline().strip() == "locked"
        original = files(corrupt_middle)
        out = cli("recover", corrupt_middle, "--repair", "--quiet", ok=False)
        assert out.returncode == 2
        assert (
            f"is locked by process {holder.pid}" in out.stderr and "stop the broker" in out.stderr
        )
        assert files(corrupt_middle) == original
    finally:
        holder.kill()
        holder.wait()
    cli("recover", corrupt_middle, "--repair", "--backup", tmp_path / "bk", "--quiet")
    assert offsets(corrupt_middle) == list(range(31))


def test_concurrent_repairs_end_in_one_repair(corrupt_middle, tmp_path):
    original = files(corrupt_middle)
    procs = [subprocess.Popen([str(Path(sys.executable).with_name("kafkacodec")), "recover",
                               str(corrupt_middle), "--repair", "--quiet", "--backup", str(tmp_path / "bk")],
                              stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
             for _ in range(3)]  # fmt: skip
    results = [(p.wait(60), p.stderr.read()) for p in procs]
    assert all(code in (0, 2) for code, _ in results), results
    assert all(code == 0 or "is locked by" in err for code, err in results), results
    assert offsets(corrupt_middle) == list(range(31))
    assert len(list((tmp_path / "bk").rglob("REPAIR.json"))) == 1
    assert_nothing_lost(original, corrupt_middle, backup_dir(tmp_path / "bk"))


# --------------------------------------------------------- 3. nothing to verify is not clean


@pytest.mark.parametrize(
    "case", ["empty", "no-segments", "etc", "text-file", "partition-no-segments"]
)
def test_nothing_to_verify_is_an_error(tmp_path, case):
    target = tmp_path / case
    if case == "empty":
        target.mkdir()
    elif case == "no-segments":
        target.mkdir()
        (target / "readme.txt").write_text("hello")
        (target / "sub").mkdir()
    elif case == "etc":
        target = Path("/etc")
    elif case == "text-file":
        target.write_text("not a kafka segment, only some words\n" * 4)
    else:
        target = tmp_path / "orders-0"
        target.mkdir()
    out = cli("verify", target, ok=False)
    assert out.returncode == 2, out
    assert "clean" not in out.stdout and "could not check" in out.stderr
    assert str(target) in out.stderr
    j = json.loads(cli("verify", target, "--json", ok=False).stdout)
    assert j["clean"] is False and j["unchecked"]


# ------------------------------------------------------------- 4. every bad region


def test_three_corruptions_in_one_segment_are_three_regions(tmp_path):
    d = make_partition(tmp_path / "logs" / "t-0", n=27)
    log = d / "00000000000000000000.log"
    spans = [(b.position, b.position + b.size) for b in kc.iter_batches(log.read_bytes())]
    bad = [spans[2], spans[10], spans[20]]
    flip(log, *(start + 70 for start, _ in bad))  # inside the records of batches 2, 10, 20
    out = json.loads(cli("verify", d, "--json", "--quiet", ok=False).stdout)
    assert [(r["start"], r["end"]) for r in out["bad_regions"]] == bad
    assert [(r["offset_before"], r["offset_after"]) for r in out["bad_regions"]] == [
        (1, 3), (9, 11), (19, 21)]  # fmt: skip
    assert out["batches"] == 24 and out["records"] == 24
    assert out["unreadable_bytes"] == sum(e - s for s, e in bad)
    assert all("CRC mismatch" in r["reason"] for r in out["bad_regions"])
    # records --skip-corrupt reads past them; recover still cuts at the first, as Kafka does
    read = cli("records", d, "--skip-corrupt", ok=False)  # damage read past: exit 1
    assert read.returncode == 1 and read.stderr.count("kafkacodec records: skipped: ") == 3
    recs = read.stdout.splitlines()
    assert [int(r.split()[1]) for r in recs] == [o for o in range(27) if o not in (2, 10, 20)]
    plain = cli("records", d, ok=False)
    assert plain.returncode == 1 and f"byte {bad[0][0]}" in plain.stderr
    plan = json.loads(cli("recover", d, "--json", "--quiet", ok=False).stdout)
    assert plan["truncate"]["position"] == bad[0][0]


def test_resync_skips_garbage_and_zero_runs(tmp_path):
    d = make_partition(tmp_path / "logs" / "t-0", n=10)
    log = d / "00000000000000000000.log"
    data = log.read_bytes()
    log.write_bytes(data[:330] + bytes(5000) + os.urandom(3000) + data[330:])
    out = json.loads(cli("verify", d, "--json", "--quiet", ok=False).stdout)
    assert [(r["start"], r["end"]) for r in out["bad_regions"]] == [(330, 8330)]
    assert out["batches"] == 10


def test_a_torn_tail_is_named_as_such(tmp_path):
    d = make_partition(tmp_path / "logs" / "t-0", n=5)
    log = d / "00000000000000000000.log"
    log.write_bytes(log.read_bytes()[:-30])
    out = json.loads(cli("verify", d, "--json", "--quiet", ok=False).stdout)
    (region,) = out["bad_regions"]
    assert region["tail"] and region["start"] == 440 and "only 80 remain" in region["reason"]


# ------------------------------------------------------ 5. interrupted repairs finish


@pytest.mark.slow
def test_a_repair_killed_before_every_file_system_step_finishes_on_the_next_run(
    corrupt_middle, tmp_path
):
    """The real command, killed (SIGKILL) before each rename, fsync, truncate, unlink and
    mkdir in turn; the next run must reach exactly the state of an uninterrupted repair, and
    until then verify must report the unfinished repair, never "clean"."""
    reference = tmp_path / "reference" / "logs" / "orders-0"
    shutil.copytree(corrupt_middle, reference)
    for d in (reference, corrupt_middle):
        (d / "00000000000000000000.index").unlink()  # a missing index: rebuilt too
    original = files(corrupt_middle)
    cli("recover", reference, "--repair", "--quiet", "--backup", tmp_path / "reference-bk")
    want_part = files(reference)
    want_backup = files(backup_dir(tmp_path / "reference-bk"))
    del want_backup["REPAIR.json"]
    step = 0
    while True:
        run = tmp_path / f"run{step}"
        part = run / "logs" / "orders-0"
        shutil.copytree(corrupt_middle, part)
        killed = subprocess.run([sys.executable, str(CRASHING), str(step), "recover", str(part), "--repair",
                                 "--quiet", "--backup", str(run / "bk")], capture_output=True, text=True)  # fmt: skip
        assert "Traceback" not in killed.stderr
        if killed.returncode == 0:
            break
        assert killed.returncode == -signal.SIGKILL, killed.stderr
        journal = part / ".kafkacodec-repair"
        if journal.exists():
            v = cli("verify", part, "--quiet", ok=False)
            assert v.returncode == 1 and "a repair is unfinished" in v.stdout, (step, v.stdout)
            dry = cli("recover", part, "--quiet", ok=False)
            assert dry.returncode == 1 and "a repair is unfinished" in dry.stdout
        else:  # killed before the commit point (all as it was) or after the end (all done)
            visible = {k: v for k, v in files(part).items() if ".kafkacodec-" not in k}
            assert visible in (original, want_part), f"killed at step {step}: a mix"
        cli("recover", part, "--repair", "--quiet", "--backup", run / "bk")
        assert files(part) == want_part, f"killed at step {step}"
        got_backup = files(backup_dir(run / "bk"))
        del got_backup["REPAIR.json"]
        assert got_backup == want_backup, f"killed at step {step}"
        step += 1
    assert step >= 30, step  # every step of prepare, commit and apply was a kill point


def test_a_journal_that_no_longer_matches_is_reported_never_applied(corrupt_middle, tmp_path):
    """A repair stopped after its commit point; then the broker appended to the segment the
    journal cuts. The next run must not cut the new records."""
    for step in range(200):  # the first kill point after the commit
        part = tmp_path / f"try{step}" / "logs" / "orders-0"
        shutil.copytree(corrupt_middle, part)
        crashed = subprocess.run([sys.executable, str(CRASHING), str(step), "recover", str(part),
                                  "--repair", "--quiet", "--backup", str(tmp_path / "bk")])  # fmt: skip
        assert crashed.returncode == -signal.SIGKILL
        if (part / ".kafkacodec-repair").exists():
            break
    journal = json.loads((part / ".kafkacodec-repair").read_text())
    assert [s["op"] for s in journal["steps"]][:2] == ["move", "move"]
    with open(part / "00000000000000000027.log", "ab") as f:
        f.write(kc.build_batch([kc.Record(None, 1, b"new", b"data")], base_offset=54))
    before = files(part)
    out = cli("recover", part, "--repair", "--quiet", "--backup", tmp_path / "bk", ok=False)
    assert out.returncode == 2 and "no longer match" in out.stderr and "not applied" in out.stderr
    assert files(part) == before
    assert "no longer match" in cli("recover", part, "--quiet", ok=False).stdout


def test_a_planted_journal_cannot_truncate_anything(tmp_path):
    d = make_partition(tmp_path / "logs" / "t-0", n=30)
    victim = tmp_path / "victim.txt"
    victim.write_text("precious\n" * 100)
    st = victim.stat()
    (d / "victim.log").symlink_to(victim)
    (d / ".kafkacodec-repair").write_text(json.dumps({
        "kafkacodec_repair": 1, "partition": str(d), "backup": str(tmp_path / "b"),
        "steps": [{"op": "truncate", "name": "victim.log", "dev": st.st_dev, "ino": st.st_ino,
                   "size": st.st_size, "to": 6, "backup": "x"}]}))  # fmt: skip
    out = cli("recover", d, "--repair", "--quiet", ok=False)
    assert out.returncode == 2 and "not applied" in out.stderr
    assert victim.read_text() == "precious\n" * 100


# ------------------------------------------------------------------------- 6. indexes


def test_missing_and_corrupt_indexes_are_rebuilt_as_kafka_builds_them(tmp_path):
    d = make_partition(tmp_path / "logs" / "t-0")
    want = files(d)
    (d / "00000000000000000000.index").unlink()
    (d / "00000000000000000027.timeindex").write_bytes(b"\x01" * 17)
    idx = bytearray((d / "00000000000000000054.index").read_bytes())
    idx[4:8] = (999_999).to_bytes(4, "big")  # an entry pointing past the log
    (d / "00000000000000000054.index").write_bytes(bytes(idx))
    assert cli("verify", d, "--quiet", ok=False).returncode == 1
    out = cli("recover", d, "--repair", "--quiet", "--backup", tmp_path / "bk")
    assert "rewrite 00000000000000000000.index (missing" in out.stdout
    assert files(d) == want  # byte for byte what Kafka's writer and recovery write
    assert cli("verify", d, "--quiet").returncode == 0


# ------------------------------------------------------------------ 7. errors that say where


def test_record_level_errors_name_file_position_and_base_offset(tmp_path):
    d = tmp_path / "logs" / "t-0"
    with PartitionWriter(d, fsync=False) as w:
        for i in range(3):
            w.append(kc.build_batch([kc.Record(None, 1, b"k", b"v" * 20)], base_offset=i))
    log = d / "00000000000000000000.log"
    data = bytearray(log.read_bytes())
    start = 2 * (len(data) // 3)
    data[start + 61] = 0x7F  # the second batch's record length varint: too long
    from kafkacodec.runtime.crc import crc32c

    data[start + 17 : start + 21] = crc32c(
        bytes(data[start + 21 : start + len(data) // 3])
    ).to_bytes(4, "big")
    log.write_bytes(bytes(data))
    out = cli("records", d, ok=False)
    assert out.returncode == 1
    assert (
        str(log) in out.stderr and "base offset 2" in out.stderr and f"byte {start}" in out.stderr
    )


def test_records_escapes_control_characters(tmp_path):
    d = tmp_path / "logs" / "t-0"
    with PartitionWriter(d, fsync=False) as w:
        w.append(
            kc.build_batch(
                [kc.Record(None, 1, b"\x1b[2Jkey", b"va\x07lue\n", [("h\x1b", b"\x00")])],
                base_offset=0,
            )
        )
    out = cli("records", d).stdout
    assert "\x1b" not in out and "\x07" not in out and out.count("\n") == 1
    assert "\\x1b[2Jkey" in out and "va\\x07lue\\n" in out


# --------------------------------------------------------------- 9. safe as root on a host


ROLES = ["00000000000000000027.log", "00000000000000000027.index", "00000000000000000054.log",
         "leader-epoch-checkpoint", "partition.metadata", ".kafkacodec-repair",
         "leader-epoch-checkpoint.kafkacodec-new", "leader-epoch-checkpoint.kafkacodec-tmp"]  # fmt: skip


@pytest.mark.slow  # 20 cases of a repair each; CI runs them
@pytest.mark.parametrize("role", ROLES)
@pytest.mark.parametrize("kind", ["symlink", "fifo"])
def test_links_and_fifos_in_every_file_role_are_refused(corrupt_middle, tmp_path, role, kind):
    victim = tmp_path / "victim"
    victim.write_bytes(b"precious " * 1000)
    target = corrupt_middle / role
    if target.exists():
        target.unlink()
    if kind == "symlink":
        target.symlink_to(victim)
    else:
        os.mkfifo(target)
    for args in (["verify", corrupt_middle, "--quiet"], ["recover", corrupt_middle, "--quiet"],
                 ["recover", corrupt_middle, "--repair", "--quiet", "--backup", tmp_path / "bk"],
                 ["lookup", corrupt_middle, "--offset", "30"], ["records", corrupt_middle, "--limit", "3"]):  # fmt: skip
        out = cli(*args, ok=None, timeout=60)  # a FIFO that blocked would time out here
        assert victim.read_bytes() == b"precious " * 1000
        if args[0] == "verify" and not role.endswith(("-new", "-tmp")):
            assert (
                out.returncode != 0
                and "not a regular file" in out.stdout + out.stderr
                or ("symbolic link" in out.stdout + out.stderr)
            )
    if kind == "symlink" and role.endswith(("-new", "-tmp")):
        assert not os.path.lexists(target) or target.is_symlink()


def test_rewritten_files_keep_owner_group_and_mode(corrupt_middle, tmp_path):
    os.chown(corrupt_middle.parent, 1234, 5678)  # the broker's log dir, without a .lock yet
    for f in corrupt_middle.iterdir():
        os.chown(f, 1234, 5678)
        os.chmod(f, 0o600 if "index" in f.name else 0o640)
    cli("recover", corrupt_middle, "--repair", "--quiet", "--backup", tmp_path / "bk")
    for f in corrupt_middle.iterdir():
        st = f.stat()
        assert (st.st_uid, st.st_gid) == (1234, 5678), f.name
        assert stat.S_IMODE(st.st_mode) == (0o600 if "index" in f.name else 0o640), f.name
    lock = (corrupt_middle.parent / ".lock").stat()  # made as the broker would: its owner's
    assert (lock.st_uid, lock.st_gid) == (1234, 5678)
    backup = backup_dir(tmp_path / "bk")
    assert stat.S_IMODE(backup.stat().st_mode) == 0o700
    for f in backup.iterdir():
        if ".cut-at-" in f.name or f.name.endswith(".old"):
            assert stat.S_IMODE(f.stat().st_mode) == 0o600, f.name


def test_oversized_side_files_are_refused_without_reading_them(tmp_path):
    d = make_partition(tmp_path / "logs" / "t-0", n=5)
    with open(d / "partition.metadata", "wb") as f:
        f.truncate(1 << 30)  # a sparse gigabyte
    out = cli("verify", d, "--quiet", ok=False)
    assert out.returncode == 1 and "partition.metadata" in out.stdout and "not read" in out.stdout
    assert "offset: 3" in cli("lookup", d, "--offset", 3).stdout


def test_one_broken_partition_does_not_stop_the_others(tmp_path):
    logs = tmp_path / "logs"
    make_partition(logs / "a-0", n=5)
    make_partition(logs / "b-0", n=5)
    (logs / "a-0" / "partition.metadata").write_text("garbage without a colon\n")
    out = cli("verify", logs, "--quiet", ok=False)
    assert out.returncode == 1 and "2 partitions, 2 segments" in out.stdout
    assert "a-0/partition.metadata" in out.stdout


def test_names_in_other_digits_are_not_segments(tmp_path):
    d = make_partition(tmp_path / "logs" / "t-0", n=5)
    (d / ("٠" * 20 + ".log")).write_bytes(b"x")
    (d / ("⁰" * 20 + ".log")).write_bytes(b"x")
    with Partition(d) as p:
        assert p.base_offsets == [0]
    assert cli("verify", d, "--quiet").returncode == 0


def test_control_characters_in_names_are_escaped(tmp_path):
    d = make_partition(tmp_path / "logs" / "evil\x1b[31m-0", n=3)
    flip(d / "00000000000000000000.log", 150)
    out = cli("verify", d.parent, "--quiet", ok=False)
    assert "\x1b" not in out.stdout + out.stderr and "\\x1b[31m" in out.stdout


def test_a_bad_index_never_gives_a_silent_wrong_answer(tmp_path):
    d = make_partition(tmp_path / "logs" / "t-0", n=27)
    (d / "00000000000000000000.index").write_bytes(
        (3).to_bytes(4, "big") + (50_000).to_bytes(4, "big")
    )
    out = cli("lookup", d, "--offset", 5)
    assert "offset: 5" in out.stdout and "position: 550" in out.stdout
    assert "does not match the log; scanning the log from its start" in out.stderr
    recs = cli("records", d, "--from-offset", 5, "--limit", 2).stdout.splitlines()
    assert [line.split()[1] for line in recs] == ["5", "6"]
    assert cli("lookup", d, "--timestamp", -3).returncode == 0


@pytest.mark.slow
def test_a_growing_segment_is_read_as_far_as_it_was(tmp_path):
    """A "broker" holds the log directory's lock and appends batches in two writes each
    while verify and recover run: no false problem, a batch being written is named as such,
    and no traceback."""
    d = make_partition(tmp_path / "logs" / "t-0", n=27)
    log = d / "00000000000000000081.log"
    if not log.exists():
        log = sorted(d.glob("*.log"))[-1]
    script = (
        "import fcntl, sys, time, kafkacodec as kc\n"
        f"lock = open({str(d.parent / '.lock')!r}, 'a+'); fcntl.lockf(lock, fcntl.LOCK_EX)\n"
        f"f = open({str(log)!r}, 'ab', buffering=0)\n"
        "print('ready', flush=True)\n"
        "for i in range(27, 60):\n"
        "    b = kc.build_batch([kc.Record(None, 1_700_000_000_000 + i, b'k', b'v' * 40)], base_offset=i)\n"
        "    f.write(b[:50]); time.sleep(0.05); f.write(b[50:]); time.sleep(0.02)\n"
    )
    writer = subprocess.Popen([sys.executable, "-c", script], stdout=subprocess.PIPE, text=True)
    try:
        assert writer.stdout.readline().strip() == "ready"
        while writer.poll() is None:
            r = cli("recover", d, "--quiet", ok=None)
            assert r.returncode in (0, 1)
            v = cli("verify", d, "--quiet", ok=None)
            assert v.returncode == 0, v.stdout
    finally:
        writer.kill()
        writer.wait()
    assert cli("verify", d, "--quiet").returncode == 0


def test_a_planted_journal_cannot_move_files_out_of_the_partition(tmp_path):
    """Whoever can write a partition directory could plant a journal telling root to move a
    file into a directory of their choosing (say /etc/cron.d): never applied."""
    d = make_partition(tmp_path / "logs" / "t-0", n=30)
    target = tmp_path / "etc-cron.d"
    target.mkdir()
    st = (d / "00000000000000000027.log").stat()
    step = {"op": "move", "name": "00000000000000000027.log", "dev": st.st_dev, "ino": st.st_ino,
            "size": st.st_size, "copied": False}  # fmt: skip
    for backup in (target, tmp_path / "attacker"):
        if backup.name == "attacker":
            backup.mkdir(mode=0o777)
            os.chmod(backup, 0o777)
            (backup / "REPAIR.json").write_text(json.dumps({"steps": [step]}))
        (d / ".kafkacodec-repair").write_text(json.dumps(
            {"kafkacodec_repair": 1, "partition": str(d), "backup": str(backup), "steps": [step]}))  # fmt: skip
        out = cli("recover", d, "--repair", "--quiet", ok=False)
        assert out.returncode == 2 and "not a journal kafkacodec wrote" in out.stderr
        assert (d / "00000000000000000027.log").exists() and not list(backup.glob("*.log"))
    (d / ".kafkacodec-repair").write_text(json.dumps({"kafkacodec_repair": 1, "partition": str(d),
        "backup": str(tmp_path), "steps": [dict(step, name="../../victim")]}))  # fmt: skip
    out = cli("recover", d, "--repair", "--quiet", ok=False)
    assert out.returncode == 2 and "a step names '../../victim'" in out.stderr


@pytest.mark.slow
def test_a_failed_step_after_the_commit_is_finished_by_the_next_run(corrupt_middle, tmp_path):
    """The segment to truncate becomes immutable (chattr +i) after the commit point: the
    repair stops with an error naming the file and stays pending; once the file can be
    written again, the next run finishes it."""
    if shutil.which("chattr") is None:
        pytest.skip("chattr (e2fsprogs) is needed")
    original = files(corrupt_middle)
    for step in range(200):  # the first kill point after the commit
        part = tmp_path / f"try{step}" / "logs" / "orders-0"
        shutil.copytree(corrupt_middle, part)
        crashed = subprocess.run([sys.executable, str(CRASHING), str(step), "recover", str(part),
                                  "--repair", "--quiet", "--backup", str(tmp_path / "bk")])  # fmt: skip
        if (part / ".kafkacodec-repair").exists():
            break
    assert crashed.returncode == -signal.SIGKILL
    seg = part / "00000000000000000027.log"
    if subprocess.run(["chattr", "+i", str(seg)]).returncode != 0:
        pytest.skip("this filesystem has no immutable flag")
    try:
        out = cli("recover", part, "--repair", "--quiet", "--backup", tmp_path / "bk", ok=False)
        assert out.returncode == 2 and str(seg) in out.stderr and "stays unfinished" in out.stderr
        assert (part / ".kafkacodec-repair").exists()
    finally:
        subprocess.run(["chattr", "-i", str(seg)], check=True)
    cli("recover", part, "--repair", "--quiet", "--backup", tmp_path / "bk")
    assert offsets(part) == list(range(31)) and not (part / ".kafkacodec-repair").exists()
    assert_nothing_lost(original, part, backup_dir(tmp_path / "bk"))


@pytest.fixture
def small_tmpfs(tmp_path):
    """A 256 KiB tmpfs (skipped where this process may not mount one)."""
    mnt = tmp_path / "tmpfs"
    mnt.mkdir()
    if subprocess.run(["mount", "-t", "tmpfs", "-o", "size=256k", "tmpfs", str(mnt)],
                      capture_output=True).returncode != 0:  # fmt: skip
        pytest.skip("cannot mount a tmpfs here")
    yield mnt
    subprocess.run(["umount", "-l", str(mnt)], check=False)


def test_a_full_disk_fails_cleanly_and_changes_nothing(small_tmpfs):
    d = make_partition(small_tmpfs / "logs" / "orders-0")
    flip(d / "00000000000000000027.log", 4 * 111 + 60)
    original = files(d)
    filler = small_tmpfs / "filler"
    with open(filler, "wb", buffering=0) as f:  # fill the disk to the last block
        try:
            while True:
                f.write(b"\0" * 4096)
        except OSError:
            pass
    out = cli("recover", d, "--repair", "--quiet", "--backup", small_tmpfs / "bk", ok=False)
    assert out.returncode == 2 and "No space left on device" in out.stderr
    assert "None:" not in out.stderr and str(small_tmpfs) in out.stderr
    assert files(d) == original  # not a byte changed, no temporary file left behind
    assert not [
        p for p in small_tmpfs.rglob("*") if p.name.endswith((".kafkacodec-tmp", ".kafkacodec-new"))
    ]
    filler.unlink()
    cli("recover", d, "--repair", "--quiet", "--backup", small_tmpfs / "bk")
    assert offsets(d) == list(range(31))


def test_a_backup_on_another_filesystem_copies_then_removes(small_tmpfs, tmp_path):
    d = make_partition(small_tmpfs / "logs" / "orders-0")
    flip(d / "00000000000000000027.log", 4 * 111 + 60)
    original = files(d)
    cli("recover", d, "--repair", "--quiet", "--backup", tmp_path / "bk")
    backup = backup_dir(tmp_path / "bk")
    assert os.stat(backup).st_dev != os.stat(d).st_dev
    assert offsets(d) == list(range(31))
    assert_nothing_lost(original, d, backup)
    journal = json.loads((backup / "REPAIR.json").read_text())
    assert {s["copied"] for s in journal["steps"] if s["op"] == "move"} == {True}


@pytest.mark.slow
def test_every_record_error_names_the_file_and_byte(tmp_path):
    """Damage anywhere in a segment: every error `records` prints names the file and a byte
    position, and `verify` names the file in every problem (a sweep of single-byte changes
    over one segment of every magic and codec; the command line run in-process)."""
    import contextlib
    import io
    import zlib

    from conftest import build_run

    from kafkacodec.cli import main
    from kafkacodec.runtime.crc import crc32c

    d = tmp_path / "logs" / "t-0"
    d.mkdir(parents=True)
    specs = [(k, c, [kc.Record(None, 1_700_000_000_000, b"k", b"v" * 30)] * 2, True)
             for k in ("v2", "v1", "v0") for c in ("none", "gzip", "snappy", "lz4")]  # fmt: skip
    good = build_run(specs)
    spans = [(b.position, b.position + b.size, b.magic) for b in kc.iter_batches(good)]
    log = d / "00000000000000000000.log"
    unnamed, failures = [], 0
    for pos, fix_crc in [(p, f) for p in range(0, len(good), 3) for f in (False, True)]:
        bad = bytearray(good)
        bad[pos] ^= 0x5A
        if fix_crc:  # damage the records only: the batch's CRC made to match again
            start, end, magic = next(s for s in spans if s[0] <= pos < s[1])
            at, begin = (start + 17, start + 21) if magic == 2 else (start + 12, start + 16)
            if pos < begin:
                continue
            crc = crc32c(bytes(bad[begin:end])) if magic == 2 else zlib.crc32(bytes(bad[begin:end]))
            bad[at : at + 4] = crc.to_bytes(4, "big")
        log.write_bytes(bytes(bad))
        for argv in (["records", str(d)], ["verify", "--quiet", str(d)]):
            out, err = io.StringIO(), io.StringIO()
            with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
                code = main(argv)
            failures += code != 0
            lines = [x for x in err.getvalue().splitlines() if x.startswith("kafkacodec records:")]
            if argv[0] == "verify":
                lines = [
                    x.strip()
                    for x in out.getvalue().splitlines()[1:]
                    if not x.strip().startswith("note:")
                ]
            unnamed += [(argv[0], pos, x) for x in lines if str(log) not in x or "byte" not in x]
    assert not unnamed, unnamed[:5]
    assert failures > len(good) // 2  # the sweep did hit damage

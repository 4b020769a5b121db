"""The installed `kafkacodec` console script, driven in a subprocess."""

import json
import shutil
import subprocess

import pytest
from conftest import EXE, KAFKA_JAVA
from conftest import kafkacodec_cli as kc

import kafkacodec as kc_mod
from kafkacodec.log import PartitionWriter

SEG_DIR = KAFKA_JAVA / "segments" / "segment_interval4096"


def dump_cases():
    out = []
    for txt in sorted(KAFKA_JAVA.rglob("*.dump.txt")):
        if txt.name == "index.dump.txt":
            continue
        binary = txt.with_name(txt.name[: -len(".dump.txt")])
        if not binary.exists():
            binary = binary.with_name(binary.name + ".bin")
        expected = txt.read_text()
        if "DUMP FAILED" in expected or "invalid bytes" in expected:
            continue  # Java exception texts: see test_dump_of_damaged_files
        out.append(pytest.param(binary, expected, id=binary.name))
    return out


@pytest.mark.parametrize("binary,expected", dump_cases())
def test_dump_text_matches_kafka(binary, expected):
    got = kc("dump", "--deep-iteration", binary).stdout
    assert got.splitlines() == expected.splitlines()


def test_dump_index_files_match_kafka():
    want = (SEG_DIR / "index.dump.txt").read_text().split("Dumping ")
    for chunk in filter(None, want):
        name = chunk.splitlines()[0]
        got = kc("dump", SEG_DIR / name).stdout
        assert got.splitlines() == ("Dumping " + chunk).splitlines()


@pytest.mark.slow
def test_dump_json_contract():
    for doc_path in sorted((KAFKA_JAVA / "v2").glob("*.json")) + sorted(
        (KAFKA_JAVA / "legacy").glob("*.json")
    ):
        doc = json.loads(doc_path.read_text())
        if "batches" not in doc:
            continue
        lines = kc(
            "dump", "--json", "--deep-iteration", doc_path.with_name(doc["file"])
        ).stdout.splitlines()
        got = [json.loads(x) for x in lines]
        assert len(got) == len(doc["batches"])
        for g, w in zip(got, doc["batches"]):
            assert (g["base_offset"], g["last_offset"], g["magic"], g["compression"], g["crc"], g["size"],
                    g["position"], g["is_valid"]) == (w["baseOffset"], w["lastOffset"], w["magic"], w["compression"],
                                                      w["crc"], w["sizeInBytes"], w["position"], w["isValid"])  # fmt: skip
            assert [r["offset"] for r in g["records"]] == [r["offset"] for r in w["records"]]
            keys = [
                r["key"]
                for r in w["records"]
                if isinstance(r.get("key"), str) or r.get("key") is None
            ]
            assert [r["key"] for r in g["records"]][: len(keys)] == keys


def test_dump_of_damaged_files():
    bad = KAFKA_JAVA / "corrupt" / "v2_truncated_tail.bin"
    out = kc("dump", bad).stdout
    assert (
        out.splitlines()[-1].startswith("Found ")
        and "invalid bytes at the end of v2_truncated_tail.bin" in out
    )


@pytest.mark.slow  # a CLI run per Kafka answer; CI runs it
def test_lookup_matches_kafka(tmp_path):
    d = tmp_path / "orders-0"
    shutil.copytree(SEG_DIR, d, ignore=shutil.ignore_patterns("*.json", "*.txt", "recovery"))
    seg = json.loads((SEG_DIR / "segment_interval4096.json").read_text())
    end = seg["readNextOffset"]
    out_of_range = 0
    for target, last, pos, _size in seg["translateOffset_target_batchLastOffset_position_size"][
        ::50
    ]:
        run = kc("lookup", d, "--offset", target, "--json", ok=None)
        res = json.loads(run.stdout)
        if not 1000 <= target < end:  # a partition's answer: Kafka's OffsetOutOfRange
            assert run.returncode == 1 and res is None and "OffsetOutOfRange" in run.stderr
            out_of_range += 1
            continue
        assert (res["batch_last_offset"], res["position"]) == (last, pos)
    assert out_of_range  # the vector asks below the segment and past its end too
    res = json.loads(kc("lookup", d, "--timestamp", "-1", "--json").stdout)
    assert res["offset"] == end
    for row in seg["findOffsetByTimestamp_target_startingOffset_timestamp_offset_leaderEpoch"][
        ::97
    ]:
        if row[0] < 0:
            continue
        run = kc("lookup", d, "--timestamp", row[0], "--json", ok=None)
        res = json.loads(run.stdout)
        assert run.returncode == (0 if res else 1)  # no record reaches it: no answer, exit 1
        assert (
            (res["timestamp"], res["offset"], res["leader_epoch"]) if res else (None, None, None)
        ) == tuple(row[2:])


def test_recover_dry_run_then_repair(tmp_path):
    d = tmp_path / "orders-0"
    d.mkdir()
    shutil.copy(
        SEG_DIR / "recovery" / "recover_trailing_20_junk_bytes.log", d / "00000000000000001000.log"
    )
    dry = kc("recover", d, ok=False)
    assert dry.returncode == 1 and "would cut 20 bytes" in dry.stdout
    assert (d / "00000000000000001000.log").stat().st_size == 66826
    kc("recover", d, "--repair")
    assert (d / "00000000000000001000.log").stat().st_size == 66806
    assert "clean" in kc("recover", d).stdout
    assert kc("verify", d).returncode == 0


def test_verify_finds_damage_and_records_prints(tmp_path):
    d = tmp_path / "orders-0"
    d.mkdir()
    shutil.copy(
        SEG_DIR / "recovery" / "recover_flipped_byte_in_batch_67.log",
        d / "00000000000000001000.log",
    )
    out = kc("verify", d, ok=False)
    assert (
        out.returncode == 1
        and "CRC mismatch" in out.stdout
        and "00000000000000001000.log: byte" in out.stdout
    )
    recs = kc("records", d, "--from-offset", 1010, "--limit", 2).stdout.splitlines()
    assert len(recs) == 2 and recs[0].startswith("offset 1010 CreateTime")


def test_verify_reports_the_same_with_worker_processes(tmp_path):
    """--jobs: the same report, problems in the same order, exit code and counts, with a
    damaged segment, an unreadable one (a directory in its place) and clean ones."""
    logs = tmp_path / "logs"
    for name, source in (("orders-0", "recover_flipped_byte_in_batch_67.log"),
                         ("orders-1", None), ("orders-2", "recover_flipped_byte_in_batch_67.log")):  # fmt: skip
        d = logs / name
        d.mkdir(parents=True)
        if source:
            shutil.copy(SEG_DIR / "recovery" / source, d / "00000000000000001000.log")
        else:  # a clean partition of two segments
            with PartitionWriter(d, segment_bytes=4000, fsync=False) as w:
                for i in range(0, 120, 10):
                    w.append(kc_mod.build_batch([kc_mod.Record(None, 1_700_000_000_000, b"k", b"v" * 200)] * 10,
                                                base_offset=i))  # fmt: skip
    (logs / "orders-3").mkdir()
    (logs / "orders-3" / "00000000000000000000.log").mkdir()  # not a file: cannot be checked
    one = kc("verify", "--json", "--jobs", 1, logs, ok=False)
    three = kc("verify", "--json", "--jobs", 3, logs, ok=False)
    # (a machine with fewer than 3 CPUs lowers --jobs, and says so: not part of the report)
    said = [line for line in three.stderr.splitlines(keepends=True) if "--jobs 3 lowered to" not in line]
    assert (one.returncode, one.stdout, one.stderr) == (three.returncode, three.stdout, "".join(said))
    doc = json.loads(one.stdout)
    assert one.returncode in (1, 2) and doc["problems_total"] >= 2 and doc["segments"] >= 4


@pytest.mark.parametrize("args,needle", [
    (["dump", "/nonexistent/x.log"], "/nonexistent/x.log: no such file"),
    (["lookup", "/nonexistent/t-0", "--offset", "1"], "/nonexistent/t-0: no such directory"),
    (["records", "/tmp"], "not a partition directory"),
])  # fmt: skip
def test_bad_paths_one_line(args, needle):
    out = kc(*args, ok=False)
    assert (
        out.returncode != 0 and needle in out.stderr and len(out.stderr.strip().splitlines()) == 1
    )


def test_every_subcommand_has_help_with_example():
    for sub in ("dump", "verify", "lookup", "records", "recover", "generate"):
        if sub == "generate":
            continue  # handled by the generator's own parser
        assert "example:" in kc(sub, "--help").stdout


def _data_suffix(rec, control: bool) -> str:
    """What --print-data-log appends to a record line, from Kafka's JSON for the same bytes."""
    if control:
        return ""
    out = ""
    for word, v in (("key", rec["key"]), ("payload", rec["value"])):
        if v is not None:
            out += f" {word}: {bytes.fromhex(v).decode('utf-8', 'replace')}"
    return out


def print_data_cases():
    out = []
    for p in dump_cases():
        binary, expected = p.values
        doc_path = binary.with_suffix(".json")
        if not doc_path.exists() or '"sha256"' in doc_path.read_text():
            continue  # values over 1 KiB are given only by their hash
        out.append(pytest.param(binary, expected, json.loads(doc_path.read_text()), id=binary.name))
    return out


@pytest.mark.parametrize("binary,expected,doc", print_data_cases())
def test_print_data_log_appends_keys_and_payloads(binary, expected, doc):
    want = expected.splitlines()
    records = iter([(r, b.get("isControl", False)) for b in doc["batches"] for r in b["records"]])
    for i, line in enumerate(want):
        if line.startswith("| "):
            rec, control = next(records)
            want[i] = line + _data_suffix(rec, control)
    assert next(records, None) is None
    got = kc("dump", "--print-data-log", binary).stdout.splitlines()
    assert got == want


def _segment_copy(tmp_path):
    d = tmp_path / "orders-0"
    shutil.copytree(SEG_DIR, d, ignore=shutil.ignore_patterns("*.json", "*.txt", "recovery"))
    return d


def test_verify_index_only_is_clean_on_kafkas_segment(tmp_path):
    out = kc("dump", "--verify-index-only", _segment_copy(tmp_path))
    assert out.stderr == ""
    assert [x for x in out.stdout.splitlines() if not x.startswith(("Dumping", "version:"))] == []


def test_verify_index_only_names_each_disagreement(tmp_path):
    d = _segment_copy(tmp_path)
    seg = json.loads((SEG_DIR / "segment_interval4096.json").read_text())
    index = bytearray((d / "00000000000000001000.index").read_bytes())
    # entry 3 now points at entry 2's batch; Kafka reports (entry offset, that batch's last offset)
    index[3 * 8 + 4 : 3 * 8 + 8] = index[2 * 8 + 4 : 2 * 8 + 8]
    (d / "00000000000000001000.index").write_bytes(index)
    tindex = bytearray((d / "00000000000000001000.timeindex").read_bytes())
    ts = seg["timeIndexEntries"][1][0]
    tindex[12:20] = (ts - 1).to_bytes(8, "big")  # entry 1's timestamp no longer the batch's
    (d / "00000000000000001000.timeindex").write_bytes(tindex)
    out = kc("dump", "--verify-index-only", d, ok=False)
    assert out.returncode == 1
    err = out.stderr.splitlines()
    i = err.index(f"Mismatches in :{d / '00000000000000001000.index'}")
    (off2, _), (off3, _) = seg["offsetIndexEntries"][2:4]
    assert err[i + 1] == f"  Index offset: {off3}, log offset: {off2}"
    j = err.index(f"Found timestamp mismatch in :{d / '00000000000000001000.timeindex'}")
    assert err[j + 1] == f"  Index timestamp: {ts - 1}, log timestamp: {ts}"
    # a plain dump prints the entries and reports the same, with exit 0 as Kafka does
    plain = kc("dump", d / "00000000000000001000.index")
    assert "Mismatches in :" in plain.stderr and "offset: " in plain.stdout


def test_non_consecutive_offsets_reported(tmp_path):
    from kafkacodec import Record, build_batch

    data = build_batch([Record(offset=0, value=b"a"), Record(offset=1, value=b"b")], base_offset=0)
    data += build_batch([Record(offset=7, value=b"c")], base_offset=7)
    f = tmp_path / "00000000000000000000.log"
    f.write_bytes(data)
    out = kc("dump", "--deep-iteration", f)
    assert out.stderr.splitlines() == [f"Non-consecutive offsets in {f}", "  1 is followed by 7"]


def test_index_dump_stops_at_the_zero_tail_and_says_empty(tmp_path):
    f = tmp_path / "00000000000000000500.index"
    f.write_bytes(bytes(8 * 4))
    out = kc("dump", f).stdout.splitlines()
    assert out == [f"Dumping {f.name}", "offset: 500 position: 0"]  # Kafka's rule: entry 0 is kept
    f.write_bytes(b"")
    assert kc("dump", f).stdout.splitlines() == [f"Dumping {f.name}", f"{f.name} is empty."]


def _run_on_pty(args):
    """Run the console script with stderr on a pseudo-terminal, stdout not a terminal."""
    import os
    import pty

    master, slave = pty.openpty()
    proc = subprocess.Popen([str(EXE), *map(str, args)], stdout=subprocess.DEVNULL, stderr=slave)
    os.close(slave)
    chunks = []
    while True:
        try:
            chunk = os.read(master, 4096)
        except OSError:
            break
        if not chunk:
            break
        chunks.append(chunk)
    proc.communicate(timeout=120)
    os.close(master)
    return proc.returncode, b"".join(chunks).decode()


@pytest.mark.parametrize("cmd", [["dump", "--deep-iteration"], ["verify"], ["recover"]])
def test_progress_bar_on_a_terminal_only(tmp_path, cmd):
    d = _segment_copy(tmp_path)
    rc, tty = _run_on_pty([*cmd, d])
    assert rc == 0 and "100%" in tty and "[####" in tty
    rc, tty = _run_on_pty([*cmd, "--quiet", d])
    assert rc == 0 and "%" not in tty
    piped = kc(*cmd, d)
    assert "%" not in piped.stderr


@pytest.mark.parametrize("suffix,at,needle", [
    (".index", 3 * 8 + 4, "is not a batch boundary"),  # a position moved by one byte
    (".index", 3 * 8 + 0, "is not the last offset of a batch"),  # an offset moved by one
    (".timeindex", 1 * 12 + 0, "is not the largest timestamp"),  # a timestamp moved
])  # fmt: skip
def test_verify_checks_indexes_against_the_log(tmp_path, suffix, at, needle):
    d = _segment_copy(tmp_path)
    assert kc("verify", d).returncode == 0
    f = d / f"00000000000000001000{suffix}"
    raw = bytearray(f.read_bytes())
    width = 8 if suffix == ".timeindex" else 4
    value = int.from_bytes(raw[at : at + width], "big")
    raw[at : at + width] = (value + 1).to_bytes(width, "big")
    f.write_bytes(raw)
    out = kc("verify", d, ok=False)
    assert out.returncode == 1 and f"{f}: entry " in out.stdout and needle in out.stdout


def test_a_file_that_is_not_kafka_is_named(tmp_path):
    d = tmp_path / "t-0"
    d.mkdir()
    f = d / "00000000000000000000.log"
    f.write_bytes(b"this is not a kafka log file at all, just text\n" * 3)
    declared = int.from_bytes(b"not ", "big")  # bytes 8..11 of the text
    for args in (["dump", f], ["records", d], ["lookup", d, "--offset", 1]):
        out = kc(*args, ok=False)
        assert out.returncode == 1 and out.stderr.strip() == (
            f"kafkacodec {args[0]}: {f}: byte 8: first entry declares {declared} bytes; "
            "not a Kafka segment"
        )
    out = kc("verify", d, ok=False)
    assert out.returncode == 1 and "not a Kafka segment" in out.stdout
    (d / "00000000000000000000.index").write_bytes(b"\x00" * 7)
    out = kc("dump", "--index-sanity-check", d / "00000000000000000000.index", ok=False)
    assert (
        out.returncode == 1
        and "failed sanity check." in out.stdout
        and "multiple of 8" in out.stderr
    )


def _epoch_partition(d):
    """A partition whose leader epoch rises every 5 batches (the writer keeps the
    checkpoint), in one segment."""
    from kafkacodec.log import PartitionWriter

    with PartitionWriter(d, fsync=False) as w:
        for i in range(20):
            recs = [kc_mod.Record(None, 1_700_000_000_000 + i, b"k", b"v" * 50)]
            w.append(kc_mod.build_batch(recs, base_offset=i, partition_leader_epoch=i // 5))
    return d


def test_recover_drops_epochs_past_the_new_log_end(tmp_path):
    from kafkacodec.log.partition import read_epoch_checkpoint
    from kafkacodec.records.columnar import walk_batches

    d = _epoch_partition(tmp_path / "orders-0")
    seg = d / "00000000000000000000.log"
    e = walk_batches(seg.read_bytes()).entries
    cut_at = int(e["position"][12]) + 30  # inside batch 12 (epoch 2): a lost tail
    with open(seg, "r+b") as f:
        f.truncate(cut_at)
    before = read_epoch_checkpoint(d / "leader-epoch-checkpoint")
    assert [tuple(x) for x in before] == [(0, 0), (1, 5), (2, 10), (3, 15)]
    dry = kc("recover", d, ok=False)
    assert dry.returncode == 1
    assert "would drop epochs past the log end 12: 3 from offset 15" in dry.stdout
    assert (
        read_epoch_checkpoint(d / "leader-epoch-checkpoint") == before
    )  # a dry run writes nothing
    out = json.loads(kc("recover", d, "--repair", "--json").stdout)
    assert out["dropped_epochs"] == [[3, 15]] and out["log_end_offset"] == 12
    assert [tuple(x) for x in read_epoch_checkpoint(d / "leader-epoch-checkpoint")] == [
        (0, 0), (1, 5), (2, 10)
    ]  # fmt: skip
    assert "clean" in kc("recover", d).stdout


@pytest.mark.parametrize("how", ["hex", "base64", "utf8"])
def test_records_json_is_every_record_as_the_library_reads_it(tmp_path, how):
    """`records --json`: one object per record, named as `dump --deep --json` names them,
    the bytes in --bytes' encoding (decoded back here), control records with their type."""
    import base64

    from kafkacodec.log import Partition, PartitionWriter

    d = tmp_path / "orders-0"
    recs = [kc_mod.Record(None, 1_700_000_000_000, None, b"\x00\x1b[31m\xff", [("h", None), ("\x1b", b"x")]),
            kc_mod.Record(None, 1_700_000_000_001, b"k", None, []),
            kc_mod.Record(None, 1_700_000_000_002, "ключ".encode(), b"", [("h", b"\x80")])]  # fmt: skip
    with PartitionWriter(d, fsync=False) as w:
        w.append(
            kc_mod.build_batch(
                recs, base_offset=0, producer_id=7, producer_epoch=0, is_transactional=True
            )
        )
        w.append(kc_mod.build_control_batch(True, offset=3, timestamp=1_700_000_000_009, producer_id=7,
                                            producer_epoch=0, coordinator_epoch=4))  # fmt: skip
    lines = kc("records", d, "--json", "--bytes", how).stdout.splitlines()
    assert all(line.isprintable() for line in lines)  # no escape sequence reaches a terminal
    got = [json.loads(line) for line in lines]

    def back(v):
        if v is None:
            return None
        return {"hex": bytes.fromhex, "base64": base64.b64decode, "utf8": str.encode}[how](v)

    want = [r for _s, _b, r in Partition(d).read()]
    assert len(got) == len(want) == 4
    for g, r in zip(got, want):
        assert (g["offset"], g["timestamp"], g["timestamp_type"]) == (
            r.offset,
            r.timestamp,
            r.timestamp_type,
        )
        if (
            how != "utf8"
            or r.value is None
            or bytes(r.value).decode("utf-8", "replace").encode() == bytes(r.value)
        ):
            assert back(g["value"]) == (None if r.value is None else bytes(r.value))
        assert [h[0] for h in g["headers"]] == [k for k, _ in r.headers]
        assert ("control" in g) == (r.control is not None)
    assert got[3]["control"] == {"type": "COMMIT", "version": 0, "coordinator_epoch": 4}


def test_ctrl_c_is_one_line_and_status_130(tmp_path):
    """Ctrl-C (SIGINT) while a command writes: one line on stderr, no traceback, the exit
    status a shell gives a program SIGINT ended (130)."""
    import signal
    import time

    from kafkacodec.sample import write_sample_log_dirs

    logs = write_sample_log_dirs(tmp_path / "logs", batches=40)
    # stdout is not read: the dump blocks on its pipe, and is there to be interrupted
    proc = subprocess.Popen([str(EXE), "dump", "--deep-iteration", "--print-data-log", *[logs] * 50],
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE)  # fmt: skip
    time.sleep(2)
    proc.send_signal(signal.SIGINT)
    _out, err = proc.communicate(timeout=60)
    assert proc.returncode == 130, err.decode()[-2000:]
    assert err.decode().strip().splitlines()[-1] == "kafkacodec dump: interrupted"
    assert "Traceback" not in err.decode()

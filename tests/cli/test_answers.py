"""The command line's answers, tried as a new user would (issue 35): every case of that
report, so that each answer stays true. Exit codes are the README's, the same for every
command: 0 done, 1 problems found (or what was asked for is not there), 2 could not check."""

from __future__ import annotations

import argparse
import json
import os
import shutil
import struct
import subprocess
from pathlib import Path

import pytest
from conftest import EXE, metadata_value
from conftest import kafkacodec_cli as kc
from hypothesis import given, settings
from hypothesis import strategies as st

import kafkacodec as kafka
from kafkacodec.log import Partition
from kafkacodec.runtime.crc import crc32c
from kafkacodec.sample import write_sample_log_dirs

T0 = 1700000000000


@pytest.fixture(scope="module")
def logdirs(tmp_path_factory) -> Path:
    """The `make demo` log.dirs (read only here: tests that change it take a copy)."""
    return write_sample_log_dirs(tmp_path_factory.mktemp("demo") / "logdirs")


def copy(logdirs: Path, tmp_path: Path) -> Path:
    return Path(shutil.copytree(logdirs, tmp_path / "logdirs", symlinks=True))


def damaged_copy(logdirs: Path, tmp_path: Path) -> Path:
    """A copy of the demo's orders-0 with a byte flipped in its middle segment (a CRC mismatch)."""
    part = copy(logdirs, tmp_path) / "orders-0"
    log = part / "00000000000000001470.log"
    data = bytearray(log.read_bytes())
    data[30000] ^= 0xFF
    log.write_bytes(bytes(data))
    return part


def partition(d: Path, batches: list[bytes], tail: bytes = b"") -> Path:
    d.mkdir(parents=True)
    (d / "00000000000000000000.log").write_bytes(b"".join(batches) + tail)
    return d


def batch(base: int, n: int, ts: int = T0) -> bytes:
    return kafka.build_batch([kafka.Record(None, ts + i, b"k", b"v%d" % i, []) for i in range(n)],
                             base_offset=base)  # fmt: skip


# ------------------------------------------------------------------------ 1, 5: metadata


def test_metadata_names_a_topic_no_record_names(tmp_path):
    d = tmp_path / "meta" / "__cluster_metadata-0"
    tid = bytes(range(16))
    values = [metadata_value("PartitionRecord", 0, partition_id=0, topic_id=tid, replicas=[1],
                             isr=[1], removing_replicas=[], adding_replicas=[], leader=1,
                             leader_epoch=0, partition_epoch=0),
              metadata_value("TopicRecord", 0, name="named", topic_id=bytes(range(1, 17)))]  # fmt: skip
    partition(d, [kafka.build_batch([kafka.Record(None, T0, None, v, []) for v in values])])
    doc = json.loads(kc("metadata", d, "--json").stdout)  # a TypeError before
    assert [t["name"] for t in doc["topics"]] == ["named", None]
    assert any("AAECAwQFBgcICQoLDA0ODw" in n and "no TopicRecord" in n for n in doc["notes"])
    text = kc("metadata", d).stdout
    assert "  (name unknown: no TopicRecord read) topicId AAECAwQFBgcICQoLDA0ODw partitions 1" in text
    assert "None" not in text


def test_metadata_after_a_snapshot_counts_offsets_of_the_log(tmp_path):
    d = tmp_path / "__cluster_metadata-0"
    snap = [metadata_value("FeatureLevelRecord", 0, name="metadata.version", feature_level=21),
            metadata_value("ConfigRecord", 0, resource_type=4, resource_name="",
                           name="log.retention.ms", value="1000")]  # fmt: skip
    d.mkdir()
    (d / "00000000000000000109-0000000002.checkpoint").write_bytes(
        kafka.build_batch([kafka.Record(None, T0, None, v, []) for v in snap]))  # fmt: skip
    deleted = metadata_value("ConfigRecord", 0, resource_type=4, resource_name="",
                             name="log.retention.ms", value=None)  # fmt: skip
    (d / "00000000000000000100.log").write_bytes(
        kafka.build_batch([kafka.Record(None, T0, None, deleted, [])] * 12, base_offset=100))
    text = kc("metadata", d).stdout.splitlines()
    # the snapshot's records are numbered from 0 inside it: its last offset is 108
    assert text[0] == ("Metadata from 00000000000000000109-0000000002.checkpoint (offsets below "
                       "109, 2 records) and the log: 3 records from the log, last offset 111")  # fmt: skip
    assert not any(line.startswith("  BROKER") for line in text)  # the deleted default is gone
    doc = json.loads(kc("metadata", d, "--json").stdout)
    assert (doc["snapshot_end_offset"], doc["last_offset"], doc["configs"]) == (109, 111, [])
    (d / "00000000000000000100.log").unlink()
    doc = json.loads(kc("metadata", d, "--json").stdout)
    assert doc["last_offset"] == 108 and doc["records"] == doc["snapshot_records"] == 2


# -------------------------------------------------------- 2, 9, 15, 16, 17: the parser


@pytest.mark.parametrize("args", [
    ["dump", "--max-bytes", "-1", "x.log"], ["dump", "--max-bytes", "0", "x.log"],
    ["records", "DIR", "--limit", "-1"], ["records", "DIR", "--limit", "0"],
    ["recover", "DIR", "--repair", "--index-interval-bytes", "-5"],
    ["sample", "OUT", "--records", "-5"], ["sample", "OUT", "--size", "0"],
    ["sample", "OUT", "--partitions", "0"], ["sample", "OUT", "--codecs", "lzma"],
    ["verify", "DIR", "--max-problems", "-1"], ["lookup", "DIR", "--timestamp", "-7"],
    ["rewrite", "DIR", "--check", "--index-interval-bytes", "-1"], ["rewrite", "DIR", "--check", "--jobs", "0"],
    ["corpus", "OUT", "--count", "0"], ["records", "DIR", "--from-offset", "x"],
])  # fmt: skip
def test_numbers_out_of_range_are_one_line_usage_errors(args, tmp_path):
    out = kc(*[str(tmp_path / a) if a in ("DIR", "OUT", "x.log") else a for a in args], ok=False)
    assert out.returncode == 2 and not out.stdout
    last = out.stderr.strip().splitlines()[-1]
    assert last.startswith(f"kafkacodec {args[0]}: error: argument ") and not list(tmp_path.iterdir())


def test_version():
    out = kc("--version")
    assert out.stdout.startswith("kafkacodec ") and out.stdout.split()[1][0].isdigit()


def _actions(parser: argparse.ArgumentParser, prefix: str):
    for action in parser._actions:
        if isinstance(action, argparse._SubParsersAction):
            for name, sub in action.choices.items():
                yield f"{prefix} {name}", sub, None
                yield from _actions(sub, f"{prefix} {name}")
        elif not isinstance(action, (argparse._HelpAction, argparse._VersionAction)):
            yield prefix, parser, action


def test_every_command_and_option_says_what_it_is():
    from kafkacodec.cli import parser

    missing = []
    for where, p, action in _actions(parser(), "kafkacodec"):
        if action is None:
            if not p.description:
                missing.append(f"{where}: no description")
        elif not action.help:
            missing.append(f"{where} {'/'.join(action.option_strings) or action.dest}: no help")
        elif "DESIGN.md" in action.help:
            missing.append(f"{where} {action.dest}: cites a document the project does not have")
    assert not missing, missing
    helps = {w: a.help for w, _p, a in _actions(parser(), "kafkacodec")
             if a is not None and a.dest == "tiered"}  # fmt: skip
    assert helps["kafkacodec remote-log"] != helps["kafkacodec verify"]


def test_sample_help_says_what_sample_does(tmp_path):
    text = " ".join(kc("sample", "--help").stdout.split())
    assert "default: 100000, or no limit with --size" in text and "the first reached stops" in text
    out = kc("sample", tmp_path / "s", "--size", "200k", "--partitions", "1", "--quiet").stdout
    records = int(out.split()[2])
    assert records > 1000  # --size alone: no 100000-record default, the size decides
    both = kc("sample", tmp_path / "t", "--size", "200k", "--records", "10", "--quiet").stdout
    assert " 10 records " in both  # with both, the first reached stops


def test_generate_has_the_command_lines_help():
    text = kc("generate", "--help").stdout
    assert "regenerate generated/ from schemas/" in text and "--schemas DIR" in text


# ----------------------------------------------------------------- 3: verify an index


def test_verify_checks_an_index_against_its_log(logdirs, tmp_path):
    part = logdirs / "orders-0"
    for suffix in (".index", ".timeindex", ".txnindex"):
        out = kc("verify", part / f"00000000000000000000{suffix}")
        assert out.stdout.startswith("1 index file, ") and out.stdout.rstrip().endswith(": clean")
    bad = copy(logdirs, tmp_path) / "orders-0"
    idx = bytearray((bad / "00000000000000000000.index").read_bytes())
    idx[4:8] = struct.pack(">i", struct.unpack(">i", idx[4:8])[0] + 1)  # off a batch boundary
    (bad / "00000000000000000000.index").write_bytes(bytes(idx))
    txn = bytearray((bad / "00000000000000000000.txnindex").read_bytes())
    txn[18:26] = struct.pack(">q", struct.unpack(">q", txn[18:26])[0] - 1)  # not the marker
    (bad / "00000000000000000000.txnindex").write_bytes(bytes(txn))
    for suffix, why in ((".index", "is not a batch boundary"), (".txnindex", "is not an ABORT marker")):
        out = kc("verify", bad / f"00000000000000000000{suffix}", ok=False)
        assert out.returncode == 1 and why in out.stdout
    whole = kc("verify", bad, ok=False)  # the partition's check sees both too
    assert whole.returncode == 1 and "is not an ABORT marker" in whole.stdout
    (bad / "00000000000000000000.log").unlink()
    out = kc("verify", bad / "00000000000000000000.index", ok=False)
    assert out.returncode == 2 and "no 00000000000000000000.log beside it" in out.stderr
    shutil.copy(part / "00000000000000000000.index", tmp_path / "x.index")
    out = kc("verify", tmp_path / "x.index", ok=False)
    assert out.returncode == 2 and "named <20-digit base offset>.index" in out.stderr


# ------------------------------------------------------------ 4, 8: out of range, None


def test_lookup_answers_offset_out_of_range_as_kafka(logdirs, tmp_path):
    part = logdirs / "orders-0"
    end = Partition(part).log_end_offset
    for offset, why in ((-5, "below the log start offset 0"), (end, "the log end offset"),
                        (end + 10, f"past the log end offset {end}")):  # fmt: skip
        out = kc("lookup", part, "--offset", offset, ok=False)
        assert out.returncode == 1 and not out.stdout
        assert "OffsetOutOfRange" in out.stderr and why in out.stderr and f"0-{end - 1}" in out.stderr
        assert kc("lookup", part, "--offset", offset, "--json", ok=False).stdout.strip() == "null"
    # a log that starts at 1470: offset 5 is below it
    later = copy(logdirs, tmp_path) / "orders-0"
    for name in os.listdir(later):
        if name.startswith("00000000000000000000."):
            os.unlink(later / name)
    out = kc("lookup", later, "--offset", 5, ok=False)
    assert out.returncode == 1 and "below the log start offset 1470" in out.stderr
    rec = kc("records", later, "--from-offset", 5, ok=False)
    assert rec.returncode == 1 and "below the log start offset 1470" in rec.stderr and not rec.stdout
    # the broker's checkpoint says the log starts at 0: offsets 0-1469 are elsewhere
    (later.parent / "log-start-offset-checkpoint").write_text("0\n1\norders 0 0\n")
    out = kc("lookup", later, "--offset", 5, ok=False)
    assert out.returncode == 1 and "not readable here" in out.stderr and "0-1469" in out.stderr
    # after DeleteRecords the checkpoint is above the first segment: Kafka's log start offset
    (later.parent / "log-start-offset-checkpoint").write_text("0\n1\norders 0 1500\n")
    out = kc("lookup", later, "--offset", 1480, ok=False)
    assert out.returncode == 1 and "below the log start offset 1500" in out.stderr
    assert json.loads(kc("lookup", later, "--timestamp", "-2", "--json").stdout)["offset"] == 1500


def test_no_python_none_in_text(logdirs, tmp_path):
    latest = kc("lookup", logdirs / "orders-0", "--timestamp", "-1").stdout
    assert "None" not in latest and "segment" not in latest and latest.startswith("timestamp: -1 offset: ")
    d = partition(tmp_path / "t-0", [batch(0, 2)])  # partitionLeaderEpoch -1
    for args in (["lookup", d, "--timestamp", T0], ["lookup", d, "--timestamp", "-3"],
                 ["lookup", d, "--timestamp", "-1"], ["lookup", d, "--offset", 1]):  # fmt: skip
        out = kc(*args).stdout
        assert "None" not in out and ("leader_epoch: -1" in out or "--offset" in args)


def test_a_timestamp_past_every_record_has_no_answer(logdirs):
    out = kc("lookup", logdirs / "orders-0", "--timestamp", 9 * T0, ok=False)
    assert out.returncode == 1 and "no record has a timestamp at or after" in out.stderr
    out = kc("records", logdirs / "orders-0", "--from-timestamp", 9 * T0, ok=False)
    assert out.returncode == 1 and "no record has a timestamp at or after" in out.stderr


# ------------------------------------------------------------- 6, 7, 13: nothing found


def test_commands_say_what_they_did_not_find(logdirs, tmp_path):
    empty = tmp_path / "empty"
    empty.mkdir()
    named_like_a_segment = tmp_path / "00000000000000000000.log"
    named_like_a_segment.mkdir()
    misnamed = tmp_path / "x-0"
    misnamed.mkdir()
    shutil.copy(logdirs / "orders-0" / "00000000000000000000.log", misnamed / "123.log")
    none = tmp_path / "y-0"
    none.mkdir()
    cases = [(["dump", empty], "holds no partition directories"),
             (["dump", named_like_a_segment], "nothing to dump"),
             (["records", misnamed], "123.log: not named as Kafka names segments"),
             (["lookup", misnamed, "--offset", 0], "holds no segments"),
             (["records", none], "holds no segments"), (["lookup", none, "--offset", 0], "holds no segments"),
             (["verify", none], "holds no segments"), (["verify", empty], "neither a partition"),
             (["recover", empty], "neither a partition"), (["recover", "--repair", empty], "neither a partition"),
             (["groups", empty], "no __consumer_offsets partition"),
             (["metadata", empty], "holds no KRaft snapshot"),
             (["remote-log", empty], "no __remote_log_metadata partition"),
             (["lookup", tmp_path / "nope", "--offset", 0], "no such")]  # fmt: skip
    for args, why in cases:
        out = kc(*args, ok=False)
        assert out.returncode == 2 and why in out.stderr, (args, out)
        assert not out.stdout, args
    dumped = kc("dump", logdirs).stdout  # a whole log.dirs, as verify and recover take it
    assert "Dumping orders-1/00000000000000002943.log" in dumped and "Dumping clicks-0/" in dumped


def _s16(text: str) -> bytes:
    return struct.pack(">h", len(text)) + text.encode()


def test_groups_takes_the_partition_directory(tmp_path):
    logs = tmp_path / "data"
    key = struct.pack(">h", 1) + _s16("billing") + _s16("orders") + struct.pack(">i", 0)
    value = struct.pack(">hqi", 3, 5, 3) + _s16("") + struct.pack(">q", T0)  # OffsetCommitValue v3
    partition(logs / "__consumer_offsets-0", [kafka.build_batch([kafka.Record(None, T0, key, value, [])])])
    partition(logs / "orders-0", [batch(0, 12)])
    whole = kc("groups", logs, "--json").stdout
    alone = kc("groups", logs / "__consumer_offsets-0", "--json").stdout
    assert whole == alone and json.loads(alone)["lag"] == 7
    out = kc("groups", logs / "orders-0", ok=False)
    assert out.returncode == 2 and "neither a log.dirs nor a partition directory of __consumer_offsets" in out.stderr


def test_damage_skipped_is_a_problem_found(logdirs, tmp_path):
    part = damaged_copy(logdirs, tmp_path)
    out = kc("records", part, "--skip-corrupt", ok=False)
    assert out.returncode == 1 and "kafkacodec records: skipped: " in out.stderr and out.stdout


def test_a_closed_pipe_does_not_change_the_answer(tmp_path):
    specs = Path(__file__).resolve().parents[2].parent / "shared" / "kafka-specs"
    dirs = sorted(p for p in specs.iterdir() if p.is_dir())
    want = kc("specs", "diff", dirs[0], dirs[-1], ok=None).returncode
    assert want == 1  # something breaks between the first and the last release
    for _ in range(5):
        cmd = f"{EXE} specs diff {dirs[0]} {dirs[-1]} | head -1; echo ${{PIPESTATUS[0]}}"
        run = subprocess.run(["bash", "-c", cmd], capture_output=True, text=True, timeout=120)
        assert run.stdout.splitlines()[-1] == str(want) and "Traceback" not in run.stderr
    big = write_sample_log_dirs(tmp_path / "logdirs")
    for args in (["dump", "--deep-iteration", big], ["records", big / "orders-0"]):
        cmd = f"{EXE} {' '.join(map(str, args))} | head -2 >/dev/null; echo ${{PIPESTATUS[0]}}"
        run = subprocess.run(["bash", "-c", cmd], capture_output=True, text=True, timeout=120)
        assert run.stdout.strip() == "0" and not run.stderr, (args, run.stderr)


# ----------------------------------------------------- 10: read as Kafka reads, 11


def test_a_preallocated_segment_reads_to_its_last_batch(tmp_path):
    d = partition(tmp_path / "t-0", [batch(0, 3)], tail=bytes(4096))
    found = json.loads(kc("lookup", d, "--timestamp", T0 + 1, "--json").stdout)
    assert (found["offset"], found["timestamp"]) == (1, T0 + 1)
    assert json.loads(kc("lookup", d, "--timestamp", "-1", "--json").stdout)["offset"] == 3
    assert json.loads(kc("lookup", d, "--timestamp", "-3", "--json").stdout)["offset"] == 2
    assert len(kc("records", d).stdout.splitlines()) == 3
    v = kc("verify", d, ok=False)  # a check still judges every byte, as Kafka's recovery
    assert v.returncode == 1 and "4096 zero bytes to the end of the file: preallocated" in v.stdout


def test_a_search_stops_at_its_first_answer(tmp_path):
    first = bytearray(batch(0, 3))
    first[57:61] = struct.pack(">i", 2**31 - 1)  # records count, then the CRC made right
    first[17:21] = struct.pack(">I", crc32c(bytes(first[21:])))
    d = partition(tmp_path / "t-0", [bytes(first), batch(3, 1, T0 + 100)])
    found = json.loads(kc("lookup", d, "--timestamp", T0 + 1, "--json").stdout)
    assert found["offset"] == 1
    assert json.loads(kc("lookup", d, "--offset", 1, "--json").stdout)["batch_last_offset"] == 2


def test_a_warning_is_said_once(logdirs, tmp_path):
    part = copy(logdirs, tmp_path) / "orders-0"
    with open(part / "00000000000000000000.index", "ab") as f:
        f.write(b"abc")  # not a multiple of 8: Kafka's sanity check fails
    for args in (["lookup", part, "--offset", 1300], ["records", part, "--from-offset", 1300, "--limit", 1]):
        err = kc(*args).stderr.splitlines()
        assert len(err) == 1 and err[0].startswith(f"kafkacodec {args[0]}: note: "), err


# ------------------------------------------------------------------------ 12: links


def test_links_named_on_the_command_line_are_followed_links_inside_are_not(logdirs, tmp_path):
    seg = logdirs / "orders-0" / "00000000000000000000.log"
    (tmp_path / "LINK.log").symlink_to(seg)
    (tmp_path / "part-link").symlink_to(logdirs / "orders-0")
    (tmp_path / "dirs-link").symlink_to(logdirs)
    assert kc("dump", tmp_path / "LINK.log").stdout == kc("dump", seg).stdout
    for args in (["verify"], ["lookup", "--offset", 7], ["records", "--limit", 3], ["recover"]):
        # the link is followed once, to what it names: the answers name that
        assert kc(args[0], tmp_path / "part-link", *args[1:]).stdout == kc(
            args[0], logdirs / "orders-0", *args[1:]).stdout  # fmt: skip
    assert kc("verify", tmp_path / "dirs-link").stdout.split(":")[0] == kc("verify", logdirs).stdout.split(":")[0]
    inside = copy(logdirs, tmp_path / "c")
    (inside / "orders-7").symlink_to(logdirs / "orders-0")
    (inside / "clicks-0" / "00000000000000000000.log").unlink()
    (inside / "clicks-0" / "00000000000000000000.log").symlink_to(logdirs / "clicks-0" / "00000000000000000000.log")
    out = kc("verify", inside, ok=False)
    assert out.returncode == 2  # a segment that could not be read: not checked
    assert "orders-7: a symbolic link inside the log directory: not read" in out.stdout
    assert "00000000000000000000.log: is a symbolic link inside a log directory: not followed" in out.stderr
    assert "named on the command line" in out.stderr


# ------------------------------------------------------------ 14: a partial backup


def test_a_partial_backup_is_named_and_marked(logdirs, tmp_path):
    part = damaged_copy(logdirs, tmp_path)
    bk = tmp_path / "bk"
    stale = bk / "logdirs" / "orders-0" / "20261101T000000.000000Z"
    stale.mkdir(parents=True, mode=0o700)
    (stale / "00000000000000001470.log.cut-at-29940.kafkacodec-tmp").write_bytes(b"x" * 100)
    dry = kc("recover", part, "--backup", bk, ok=False)
    assert dry.returncode == 1 and f"note: {stale} (100 bytes) is the partial backup" in dry.stdout
    done = kc("recover", part, "--repair", "--backup", bk)
    assert f"note: {stale} (100 bytes)" in done.stdout and "marked abandoned" in done.stdout
    assert json.loads((stale / "REPAIR.json").read_text())["status"].startswith("abandoned")
    assert (stale / "00000000000000001470.log.cut-at-29940.kafkacodec-tmp").exists()  # kept
    assert "partial backup" not in kc("recover", part, "--backup", bk).stdout  # named once


# ----------------------------------------------------------------- exit codes, in-process


def test_main_keeps_no_handler_behind(logdirs, capsys):
    import logging

    from kafkacodec.cli import main

    before = list(logging.getLogger("kafkacodec").handlers)
    assert main(["lookup", str(logdirs / "orders-0"), "--offset", "1300"]) == 0
    assert logging.getLogger("kafkacodec").handlers == before
    assert main(["lookup", str(logdirs / "orders-0"), "--offset", "-1"]) == 1
    assert "OffsetOutOfRange" in capsys.readouterr().err


def test_the_docs_document_the_exit_codes():
    page = (Path(__file__).resolve().parents[2] / "docs" / "cli.md").read_text()
    assert "**0** done" in page and "**1** problems found" in page and "**2** could not check" in page


@settings(max_examples=500, deadline=None)
@given(st.text())
def test_safe_escapes_exactly_the_characters_that_are_not_printable(text):
    """console.safe's fast path (the whole text printable) and its escaping agree with the
    rule: each character that is neither printable nor a space becomes its escape."""
    from kafkacodec.console import safe

    want = "".join(c if c.isprintable() or c == " " else ascii(c)[1:-1] for c in text)
    assert safe(text) == want
    assert safe(text).isprintable() or safe(text) == ""

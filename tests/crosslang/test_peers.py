"""The ecosystem's record decoders over the corpus (issue 39, part 5; peers/): the report in
peers/reports is what a run over `kafkacodec corpus --seed 7` gives today (the same table and
the same cases written up), and the driver classes answers, crashes and hangs as it says."""

from __future__ import annotations

import json
import re
import shutil
import sys
from pathlib import Path

import pytest
from conftest import ROOT

pytestmark = [pytest.mark.crosslang, pytest.mark.slow]

REPORT = ROOT / "peers" / "reports"
if str(ROOT) not in sys.path:  # peers/ is a folder of the checkout, as bench/ is
    sys.path.append(str(ROOT))


def _table(readme: str) -> list[str]:
    return [line for line in readme.splitlines() if line.startswith("|")]


def _cases(folder: Path) -> dict[str, str]:
    """{parser/case: its class line} of a report."""
    return {f"{d.parent.name}/{d.name}": (d / "README.md").read_text().splitlines()[0]
            for d in folder.glob("*/*") if d.is_dir()}  # fmt: skip


@pytest.mark.skipif(shutil.which("go") is None or shutil.which("cargo") is None, reason="needs Go and Rust")
def test_the_committed_report_is_what_a_run_gives(tmp_path):
    from peers.__main__ import report, run, write_corpus

    corpus = write_corpus(tmp_path / "corpus")
    table = report(corpus, run(corpus, tmp_path), tmp_path / "report")
    got = (tmp_path / "report" / "README.md").read_text()
    assert _table(got) == _table((REPORT / "README.md").read_text()), (
        "peers/reports is stale: run `python -m peers --out peers/reports`"
    )
    assert _cases(tmp_path / "report") == _cases(REPORT)
    page = (ROOT / "docs" / "corpus.md").read_text()
    assert all(line in page.splitlines() for line in _table(got)), (
        "docs/corpus.md's table of the peers is stale"
    )
    valid = sum(table["franz-go"][c] for c in ("right", "refused", "dropped"))
    assert valid > 200 and all(
        sum(counts.values()) == sum(table["franz-go"].values()) for counts in table.values()
    )
    # Every written-up case carries the file it is about, byte for byte the corpus'
    for d in (tmp_path / "report").glob("*/*"):
        assert (d / f"{d.name}.bin").read_bytes() == (
            REPORT / d.parent.name / d.name / f"{d.name}.bin"
        ).read_bytes()


def test_answers_are_classed_against_kafkas_reading():
    from peers import classify

    def rec(offset, ts=5, control=False):
        return {
            "offset": offset,
            "timestamp": ts,
            "key": None,
            "value": "00",
            "headers": [],
            "control": control,
        }

    valid = {"records": [rec(0), rec(1, control=True), rec(2)], "error": None}
    damaged = {"records": [rec(0)], "error": "ChecksumError: ..."}
    assert classify(valid, {"records": [rec(0), rec(2)]}) == "right"  # control records skipped
    assert classify(valid, {"records": [rec(0), rec(2)], "error": "x"}) == "refused"
    assert classify(valid, {"records": [rec(0)]}) == "dropped"
    assert classify(valid, {"records": [rec(0), rec(3)]}) == "wrong"
    assert classify(valid, {"records": [rec(0), rec(2), rec(3)]}) == "wrong"
    assert classify(damaged, {"records": [rec(0)], "error": "crc"}) == "rejected"
    assert classify(damaged, {"records": [], "error": "crc"}) == "rejected"
    assert classify(damaged, {"records": [rec(0)]}) == "missed"
    assert classify(damaged, {"records": [rec(0), rec(1)]}) == "wrong"  # read the corrupt batch
    assert classify(damaged, {"panic": "IndexError"}) == "crash"
    assert classify(damaged, {"hang": True}) == "hang"
    untimed = {"records": [rec(0, ts=None)], "error": None}  # magic 0: no timestamp to compare
    assert classify(untimed, {"records": [rec(0, ts=0)]}) == "right"


def test_a_parser_that_dies_or_hangs_costs_only_the_case_it_was_on(tmp_path):
    from peers.__main__ import run_parser

    fake = tmp_path / "fake.py"
    fake.write_text(
        "import json, os, sys, time\n"
        "for f in (l.strip() for l in sys.stdin if l.strip()):\n"
        "    if f.endswith('die'): os._exit(3)\n"
        "    if f.endswith('hang'): time.sleep(60)\n"
        "    print(json.dumps({'file': f, 'records': []}), flush=True)\n"
    )
    answers = run_parser([sys.executable, str(fake)], ["a", "b-die", "c", "d-hang", "e"], timeout=1)
    assert answers["a"] == {"file": "a", "records": []} and answers["e"]["records"] == []
    assert "exit status 3" in answers["b-die"]["panic"] and answers["c"]["records"] == []
    assert answers["d-hang"]["hang"] is True


def test_the_report_names_no_path_of_this_machine():
    for f in REPORT.rglob("README.md"):
        text = f.read_text()
        assert str(ROOT) not in text and not re.search(r"/(root|home)/", text), f
        json.dumps(text)  # readable


def test_a_crash_is_signed_by_the_first_line_its_process_wrote(tmp_path):
    """A process that dies after a long stack (Rust's abort on a failed allocation, Go's
    fatal error) is signed by its first line, whatever the stack's length: its start and its
    end are kept, not a tail cut anywhere."""
    from peers.__main__ import run_parser
    from peers.findings import signature

    fake = tmp_path / "fake.py"
    fake.write_text(
        "import os, sys\n"
        "for f in (l.strip() for l in sys.stdin if l.strip()):\n"
        "    sys.stderr.write('memory allocation of 188978561024 bytes failed\\n')\n"
        "    sys.stderr.write(''.join(f'  {i}: frame::in_the_stack_{i}\\n' for i in range(int(f.rsplit('-', 1)[1]))))\n"
        "    sys.stderr.flush(); os._exit(134)\n"
    )
    want = {"records": [], "error": None}
    signs = {signature(want, a) for a in run_parser([sys.executable, str(fake)], ["a-5", "b-70", "c-400"], 10).values()}
    assert signs == {"crash: the process died (exit status N): memory allocation of N bytes failed"}, signs


@pytest.mark.skipif(shutil.which("cargo") is None, reason="needs Rust")
def test_rskafka_refuses_the_transaction_marker_kafka_writes():
    """docs/corpus.md's claim, on Kafka's own bytes (MemoryRecords.withEndTransactionMarker,
    the kafka-java vectors): rskafka reads a control batch's region as the control key
    itself, so its record's length and attributes come out as version 8192; kafkacodec's
    crate and kafka-protocol read the COMMIT marker Kafka wrote."""
    from peers.__main__ import run_parser, rust_binary

    marker = str(ROOT / "tests" / "vectors" / "kafka-java" / "v2" / "v2_control_commit.bin")
    got = {p: run_parser([str(rust_binary()), "-parser", p], [marker], 30)[marker]
           for p in ("rskafka", "kafkacodec-rust", "kafka-protocol")}  # fmt: skip
    assert got["rskafka"]["records"] == [] and "control batch record version: 8192" in got["rskafka"]["error"]
    for p in ("kafkacodec-rust", "kafka-protocol"):
        assert "error" not in got[p], got[p]
        assert [(r["offset"], r["control"], r["key"]) for r in got[p]["records"]] == [(902, True, "00000001")]

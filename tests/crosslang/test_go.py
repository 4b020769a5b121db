"""The schemas' Go parsers (go/kafkacodec, written by kafkacodec's generator: generator/golang.py)
against kafkacodec's Python parsers: every shared log and index vector, every Kafka-written
internal payload and the whole corpus read by go/cmd/kafkacodec-dump, value for value.

Unlike the official compiler's outputs, the Go parsers check CRCs and every rule the Python
parsers check (a length that counts the rest of a structure included), so a refusal must
be the same refusal: the same family (checksum, truncated, invalid) at the same byte."""

from __future__ import annotations

import json
import shutil
import subprocess
from pathlib import Path

import pytest
from codec_edges import check_codec_edges, codec_edges, codec_input
from crosslang import (
    as_json,
    check_mutations,
    check_refused,
    corpus_fixture,
    corpus_jobs,
    disagreeing_lengths,
    internal_jobs,
    jobs_file,
    log_jobs,
    mutated_jobs,
)

_ = corpus_fixture  # the `corpus` fixture, session-wide

ROOT = Path(__file__).resolve().parents[2]
GO = ROOT / "go"

pytestmark = [
    pytest.mark.crosslang,
    pytest.mark.skipif(shutil.which("go") is None, reason="needs Go"),
]

#: The Go dump's check -> the family of kafkacodec's error (corpus._family).
FAMILY = {
    "checksum": "checksum",
    "truncated": "truncated",
    "invalid": "invalid",
    "corrupt": "invalid",
    "length": "invalid",
}


@pytest.fixture(scope="module")
def dump(tmp_path_factory) -> Path:
    out = tmp_path_factory.mktemp("go") / "kafkacodec-dump"
    proc = subprocess.run(["go", "build", "-o", str(out), "./cmd/kafkacodec-dump"], cwd=GO,
                          capture_output=True, text=True, timeout=900)  # fmt: skip
    assert proc.returncode == 0, proc.stderr[-4000:]
    return out


def run(dump: Path, jobs, tmp: Path, name: str, verify: bool = True) -> list[dict]:
    proc = subprocess.run([str(dump), *([] if verify else ["-no-crc"]), str(jobs_file(jobs, tmp / f"{name}.jobs"))],
                          capture_output=True, text=True, timeout=600)  # fmt: skip
    assert proc.returncode == 0, proc.stderr[-4000:]
    lines = proc.stdout.split("\n")[:-1]  # not splitlines: strings may hold U+2028
    assert len(lines) == len(jobs)
    return [json.loads(line) for line in lines]


def same(mine, theirs: dict) -> None:
    """kafkacodec's outcome (("ok", tree) or ("error", family)) is the Go parser's."""
    if mine[0] == "ok":
        assert "ok" in theirs, theirs
        assert theirs["ok"] == as_json(mine[1], theirs["ok"])
    else:
        assert "error" in theirs, f"kafkacodec refuses it ({mine[1]}), Go reads it"
        assert (FAMILY[theirs["check"]] == "checksum") == (mine[1] == "checksum"), theirs


def test_every_log_and_index_vector_reads_the_same_in_go(dump, tmp_path):
    jobs = log_jobs()
    for job, theirs in zip(jobs, run(dump, jobs, tmp_path, "logs")):
        try:
            same(job.expected, theirs)
        except AssertionError as err:
            raise AssertionError(f"{job.name}: {err}") from None


def test_every_internal_payload_reads_the_same_in_go(dump, tmp_path):
    jobs = internal_jobs(tmp_path)
    for job, theirs in zip(jobs, run(dump, jobs, tmp_path, "internal")):
        try:
            same(job.expected, theirs)
        except AssertionError as err:
            raise AssertionError(f"{job.name}: {err}") from None
    assert len(jobs) > 900


def test_lengths_that_disagree_with_their_fields_are_refused_in_go(dump, tmp_path):
    """A record's length one more or one less than its fields, bytes after a batch's last
    record: refused as Kafka refuses them."""
    jobs = disagreeing_lengths(tmp_path)
    check_refused(jobs, run(dump, jobs, tmp_path, "lengths"))

def test_the_corpus_reads_as_expected_in_go(dump, corpus, tmp_path):
    """Every case of `kafkacodec corpus`: the values, or the same refusal (family and byte)."""
    cases = corpus_jobs(corpus)
    refused = 0
    for case, theirs in zip(cases, run(dump, cases, tmp_path, "corpus")):
        expect = case.expect
        try:
            if "ok" in expect:
                assert theirs.get("ok") == expect["ok"], theirs.get("error")
                continue
            refused += 1
            assert "error" in theirs, f"the corpus expects {expect['error']['check']}, Go reads it"
            assert FAMILY[theirs["check"]] == expect["error"]["family"], (theirs, expect["error"])
            # a codec's refusal of a whole compressed region names no byte in Python (the
            # region is one stream, read lazily); any other refusal names the same byte
            if expect["error"]["position"] is not None:
                assert f"byte {expect['error']['position']}:" in theirs["error"], (
                    theirs,
                    expect["error"],
                )
        except AssertionError as err:
            raise AssertionError(f"{case.name}: {err}") from None
    assert refused > 50


def test_the_go_module_vets_and_its_examples_run():
    """`go vet` finds nothing in the generated package or the commands; the package's
    examples (go/kafkacodec/example_test.go) print what they say."""
    for cmd in (["go", "vet", "./..."], ["go", "test", "./..."]):
        proc = subprocess.run(cmd, cwd=GO, capture_output=True, text=True, timeout=900)
        assert proc.returncode == 0, proc.stdout[-3000:] + proc.stderr[-3000:]


def test_mutations_read_as_kafkacodec_reads_them_without_crc_checks_in_go(dump, tmp_path):
    """Seeded mutations of the shared vectors (peers/bytewise.py), read without CRC checks:
    every one kafkacodec reads is read to the same values, every one it refuses is refused
    (but for crosslang.KNOWN_GAPS, counted)."""
    jobs = mutated_jobs(tmp_path / "mutations", seed=54, count=600)
    check_mutations(jobs, run(dump, jobs, tmp_path, "mutations", verify=False), official=False)


def test_codec_edges_read_as_kafka_reads_them_in_go(dump):
    """The Go package's Decompress keeps Kafka's rules for LZ4 frames and for the bytes
    after a gzip, snappy or zstd stream (tests/codec_edges.py)."""
    proc = subprocess.run([str(dump), "-codecs"], input=codec_input(codec_edges()), capture_output=True,
                          text=True, timeout=300)  # fmt: skip
    assert proc.returncode == 0, proc.stderr[-3000:]
    check_codec_edges(proc.stdout.split())

"""kafkacodec's own targets of the schemas, the Go package (go/kafkacodec, generator/golang.py)
and the Rust crate (rust/, generator/rust.py), against kafkacodec's Python parsers: every
shared log and index vector, every Kafka-written internal payload and the whole corpus read
by each one's kafkacodec-dump (go/cmd, rust/src/bin), value for value.

Unlike the official compiler's outputs, these targets check CRCs and every rule the Python
parsers check (a length that counts the rest of a structure included), so a refusal must
be the same refusal: the same family (checksum, truncated, invalid) at the same byte. Each
language's own tools (go vet, cargo fmt / clippy / test) run in test_go.py and test_rust.py."""

from __future__ import annotations

import shutil
import subprocess
from pathlib import Path

import pytest
from codec_edges import check_codec_edges, codec_edges, codec_input
from crosslang import (
    check_corpus_refusal,
    check_mutations,
    check_refused,
    corpus_fixture,
    corpus_jobs,
    disagreeing_lengths,
    internal_jobs,
    log_jobs,
    mutated_jobs,
    run_dump,
    same_reading,
)

_ = corpus_fixture  # the `corpus` fixture, session-wide

ROOT = Path(__file__).resolve().parents[2]

pytestmark = pytest.mark.crosslang

#: Each target: its language's name in messages, the tool it needs, how its dump is built
#: (the command, in the folder, and where the program is then; "{out}": a folder of the test's).
TARGETS = {
    "go": ("Go", "go", ROOT / "go", ["go", "build", "-o", "{out}/kafkacodec-dump", "./cmd/kafkacodec-dump"],
           "{out}/kafkacodec-dump"),
    "rust": ("Rust", "cargo", ROOT / "rust", ["cargo", "build", "--release", "--locked", "--bin", "kafkacodec-dump"],
             str(ROOT / "rust" / "target" / "release" / "kafkacodec-dump")),
}  # fmt: skip


@pytest.fixture(scope="module", params=sorted(TARGETS))
def target(request, tmp_path_factory) -> tuple[str, Path]:
    """(the language's name, its dump program), built once a module."""
    language, tool, folder, build, program = TARGETS[request.param]
    if shutil.which(tool) is None:
        pytest.skip(f"needs {tool}")
    out = tmp_path_factory.mktemp(request.param)
    proc = subprocess.run([a.format(out=out) for a in build], cwd=folder, capture_output=True, text=True,
                          timeout=1800)  # fmt: skip
    assert proc.returncode == 0, proc.stderr[-4000:]
    return language, Path(program.format(out=out))


def test_every_log_and_index_vector_reads_the_same(target, tmp_path):
    language, dump = target
    jobs = log_jobs()
    for job, theirs in zip(jobs, run_dump(dump, jobs, tmp_path, "logs")):
        try:
            same_reading(job.expected, theirs, language)
        except AssertionError as err:
            raise AssertionError(f"{job.name}: {err}") from None


def test_every_internal_payload_reads_the_same(target, tmp_path):
    language, dump = target
    jobs = internal_jobs(tmp_path)
    for job, theirs in zip(jobs, run_dump(dump, jobs, tmp_path, "internal")):
        try:
            same_reading(job.expected, theirs, language)
        except AssertionError as err:
            raise AssertionError(f"{job.name}: {err}") from None
    assert len(jobs) > 900


def test_lengths_that_disagree_with_their_fields_are_refused(target, tmp_path):
    """A record's length one more or one less than its fields, bytes after a batch's last
    record: refused as Kafka refuses them."""
    jobs = disagreeing_lengths(tmp_path)
    check_refused(jobs, run_dump(target[1], jobs, tmp_path, "lengths"))


def test_the_corpus_reads_as_expected(target, corpus, tmp_path):
    """Every case of `kafkacodec corpus`: the values, or the same refusal (family and byte)."""
    language, dump = target
    cases = corpus_jobs(corpus)
    refused = 0
    for case, theirs in zip(cases, run_dump(dump, cases, tmp_path, "corpus")):
        expect = case.expect
        try:
            if "ok" in expect:
                assert theirs.get("ok") == expect["ok"], theirs.get("error")
                continue
            refused += 1
            check_corpus_refusal(expect, theirs, language)
        except AssertionError as err:
            raise AssertionError(f"{case.name}: {err}") from None
    assert refused > 50


def test_mutations_read_as_kafkacodec_reads_them_without_crc_checks(target, tmp_path):
    """Seeded mutations of the shared vectors (peers/bytewise.py), read without CRC checks:
    every one kafkacodec reads is read to the same values, every one it refuses is refused
    (but for crosslang.KNOWN_GAPS, counted); the program never panics (it answers every one)."""
    jobs = mutated_jobs(tmp_path / "mutations", seed=54, count=600)
    check_mutations(jobs, run_dump(target[1], jobs, tmp_path, "mutations", verify=False), official=False)


def test_codec_edges_read_as_kafka_reads_them(target):
    """The target's codecs keep Kafka's rules for LZ4 frames and blocks and for the bytes
    after a gzip, snappy or zstd stream (tests/codec_edges.py)."""
    proc = subprocess.run([str(target[1]), "-codecs"], input=codec_input(codec_edges()), capture_output=True,
                          text=True, timeout=300)  # fmt: skip
    assert proc.returncode == 0, proc.stderr[-3000:]
    check_codec_edges(proc.stdout.split())

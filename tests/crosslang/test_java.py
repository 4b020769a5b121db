"""The official Kaitai compiler's Java output of every schema, compiled with javac against
a test-support runtime (tests/crosslang/java/runtime: the subset of the official Java
runtime the generated code calls) and run on the JVM: on every shared log and index vector
and every Kafka-written internal payload it reads the same values as kafkacodec's Python
codecs, field by field, and refuses what they refuse. CRCs, which no generated parser can
compute, are checked by the dump with java.util.zip over the range each schema exposes
(crc_from, crc_to). Compression comes from the test's KafkaCompression (the JDK for gzip,
its own snappy and lz4 readers, libzstd through JDK 17's foreign-function API)."""

from __future__ import annotations

import json
import shutil
import subprocess
from pathlib import Path

import pytest
from crosslang import (
    check,
    check_case,
    corpus_fixture,
    corpus_jobs,
    fields_table,
    internal_jobs,
    jobs_file,
    log_jobs,
)

from kafkacodec.export import export

_ = corpus_fixture  # the `corpus` fixture, session-wide

HERE = Path(__file__).resolve().parent / "java"
# The test's zstd calls libzstd through JDK 17's incubating foreign-function API.
FOREIGN = ["--add-modules", "jdk.incubator.foreign", "--enable-native-access=ALL-UNNAMED"]

pytestmark = [
    pytest.mark.crosslang,
    pytest.mark.skipif(
        shutil.which("javac") is None or shutil.which("java") is None,
        reason="javac and java (JDK 17) are needed",
    ),
]


@pytest.fixture(scope="module")
def jvm(tmp_path_factory):
    """The generated Java, the test runtime and the dump program, compiled once."""
    out = tmp_path_factory.mktemp("java")
    results = export(out, ["java"])
    assert all(r["ok"] for r in results), [r for r in results if not r["ok"]]
    classes = out / "classes"
    sources = [*sorted((HERE / "runtime").rglob("*.java")), *sorted(HERE.glob("*.java")),
               *sorted((out / "java").glob("*.java"))]  # fmt: skip
    proc = subprocess.run(["javac", "-nowarn", "-encoding", "UTF-8", *FOREIGN[:2], "-d", str(classes), *map(str, sources)],
                          capture_output=True, text=True, timeout=600)  # fmt: skip
    assert proc.returncode == 0, proc.stderr[-4000:]
    (out / "fields.tsv").write_text(fields_table())
    return out, classes


def run(jvm, jobs, name: str) -> list[dict]:
    out, classes = jvm
    proc = subprocess.run(
        ["java", *FOREIGN, "-cp", str(classes), "KafkacodecDump", str(out / "fields.tsv"),
         str(jobs_file(jobs, out / f"{name}.jobs"))],
        capture_output=True, text=True, timeout=600,
    )  # fmt: skip
    assert proc.returncode == 0, proc.stderr[-4000:]
    lines = proc.stdout.split("\n")[:-1]  # not splitlines: strings may hold U+2028
    assert len(lines) == len(jobs)
    return [json.loads(line) for line in lines]


def test_every_log_and_index_vector_reads_the_same_on_the_jvm(jvm):
    jobs = log_jobs()
    for job, theirs in zip(jobs, run(jvm, jobs, "logs")):
        try:
            check(job, theirs)
        except AssertionError as err:
            raise AssertionError(f"{job.name}: {err}") from None


def test_every_internal_payload_reads_the_same_on_the_jvm(jvm, tmp_path):
    jobs = internal_jobs(tmp_path)
    for job, theirs in zip(jobs, run(jvm, jobs, "internal")):
        try:
            check(job, theirs)
        except AssertionError as err:
            raise AssertionError(f"{job.name}: {err}") from None
    assert len(jobs) > 900  # the vectors the shipped codecs read as Kafka wrote them (shipped_rows)


def test_the_corpus_reads_as_expected_on_the_jvm(jvm, corpus):
    """`kafkacodec corpus`: the edge cases of the log formats (offsets and timestamps near
    2^63, deltas past 32 bits and negative, 5- and 10-byte varints, large and many
    headers, a partial tail, control batches, every codec, magic 0 and 1), objects of every
    schema and version drawn by the strategies, and damaged logs with their failures: a
    32-bit expression anywhere in the schemas fails here."""
    cases = corpus_jobs(corpus)
    unnamed = 0
    for case, theirs in zip(cases, run(jvm, cases, "corpus")):
        unnamed += unknown_enums(case.expect.get("ok"), theirs.get("ok"))
        try:
            check_case(case, theirs)
        except AssertionError as err:
            raise AssertionError(f"{case.name}: {err}") from None
    assert unnamed > 0  # the drawn objects do hold numbers the enums do not name


def unknown_enums(mine, theirs) -> int:
    """Where the JVM read a number its enum does not name as null (Kaitai's Java runtime
    does: the value is lost there), check that the number is indeed unnamed and take it
    as read; return how many such fields there were."""
    n = 0
    if isinstance(mine, dict) and isinstance(theirs, dict):
        for k, v in theirs.items():
            if isinstance(v, dict) and set(v) == {"unknown_enum"}:
                assert isinstance(mine.get(k), int) and mine[k] not in v["unknown_enum"], (
                    k,
                    mine.get(k),
                )
                theirs[k] = mine[k]
                n += 1
            else:
                n += unknown_enums(mine.get(k), v)
    elif isinstance(mine, list) and isinstance(theirs, list):
        n += sum(unknown_enums(a, b) for a, b in zip(mine, theirs))
    return n

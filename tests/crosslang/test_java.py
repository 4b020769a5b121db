"""The official Kaitai compiler's Java output of every schema, built by the project's Maven
build (jvm/, `make jar`: the output in package io.kafkacodec.kaitai, compiled against the
official runtime io.kaitai:kaitai-struct-runtime from Maven Central) and run on the JVM with
the compression libraries of Kafka's own release (kafka-clients 4.4.0's lz4-java,
snappy-java and zstd-jni, from the broker harness) behind the schemas' custom process
(jvm/.../KafkaCompression): on every shared log and index vector and every Kafka-written
internal payload it reads the same values as kafkacodec's Python codecs, field by field,
and refuses what they refuse. CRCs, which no generated parser can compute, are checked by
the dump with java.util.zip over the range each schema exposes (crc_from, crc_to)."""

from __future__ import annotations

import json
import shutil
import subprocess
from pathlib import Path

import pytest
from codec_edges import check_codec_edges, codec_edges, codec_input
from crosslang import (
    check,
    check_case,
    check_mutations,
    check_refused,
    corpus_fixture,
    corpus_jobs,
    disagreeing_lengths,
    fields_table,
    greedy_jobs,
    internal_jobs,
    jobs_file,
    log_jobs,
    mutated_jobs,
    wide_batches,
)

_ = corpus_fixture  # the `corpus` fixture, session-wide

HERE = Path(__file__).resolve().parent / "java"
ROOT = HERE.parents[2]
TARGET = ROOT / "jvm" / "target"
PACKAGE = "io.kafkacodec.kaitai"
KAFKA = "4.4.0"  # whose compression libraries the generated code calls
CODEC_JARS = ("lz4-java", "snappy-java", "zstd-jni")

#: How many seeded mutations a run reads (peers/bytewise.py).
MUTATIONS = 600

pytestmark = [
    pytest.mark.crosslang,
    pytest.mark.skipif(
        shutil.which("javac") is None or shutil.which("java") is None,
        reason="javac and java (JDK 17) are needed",
    ),
]


def codec_jars() -> list[str]:
    """The lz4-java, snappy-java and zstd-jni jars on Kafka's own classpath."""
    from kafka_broker import HarnessError, classpath

    try:
        jars = classpath(KAFKA).split(":")
    except HarnessError as err:
        pytest.skip(str(err))
    found = [j for j in jars if any(Path(j).name.startswith(n + "-") for n in CODEC_JARS)]
    assert len(found) == len(CODEC_JARS), found
    return found


@pytest.fixture(scope="module")
def jvm(tmp_path_factory):
    """The Maven build's classes, the official runtime, Kafka's codecs, and the dump program."""
    classes = TARGET / "classes"
    if not (TARGET / "kaitai-classpath.txt").is_file() or not (classes / "io" / "kafkacodec" / "kaitai").is_dir():
        pytest.skip("the Maven build of the schemas' Java output is not there (make jar)")
    out = tmp_path_factory.mktemp("java")
    cp = ":".join([str(classes), (TARGET / "kaitai-classpath.txt").read_text().strip(), *codec_jars()])
    dump = out / "dump"
    proc = subprocess.run(["javac", "-nowarn", "-encoding", "UTF-8", "-cp", cp, "-d", str(dump),
                           str(HERE / "KafkacodecDump.java")],
                          capture_output=True, text=True, timeout=600)  # fmt: skip
    assert proc.returncode == 0, proc.stderr[-4000:]
    (out / "fields.tsv").write_text(fields_table())
    return out, f"{dump}:{cp}"


def run(jvm, jobs, name: str) -> list[dict]:
    out, cp = jvm
    proc = subprocess.run(
        ["java", "-cp", cp, "KafkacodecDump", str(out / "fields.tsv"),
         str(jobs_file(jobs, out / f"{name}.jobs")), PACKAGE],
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


WIDTHS_JAVA = """
import io.kaitai.struct.ByteBufferKaitaiStream;
import io.kafkacodec.kaitai.KafkaRecordBatch;
import java.nio.file.*;
public class Widths {
    public static void main(String[] args) throws Exception {
        for (String path : args) {
            KafkaRecordBatch b = new KafkaRecordBatch(new ByteBufferKaitaiStream(Files.readAllBytes(Paths.get(path))));
            System.out.println("{\\"base_offset\\":" + b.baseOffset() + ",\\"last_offset\\":" + b.lastOffset()
                               + ",\\"crc_to\\":" + b.crcTo() + "}");
        }
    }
}
"""


def test_value_instances_leave_32_bits_on_the_jvm(jvm, tmp_path):
    """The official compiler types an integer expression as an int unless the schema casts
    it: last_offset of Kafka's largest offsets came out as -1. The schemas cast every value
    instance that can leave 32 bits (tests/generator/test_value_widths.py)."""
    _out, cp = jvm
    (tmp_path / "Widths.java").write_text(WIDTHS_JAVA)
    subprocess.run(["javac", "-nowarn", "-cp", cp, "-d", str(tmp_path), str(tmp_path / "Widths.java")],
                   check=True, capture_output=True, timeout=300)  # fmt: skip
    cases = wide_batches(tmp_path)
    proc = subprocess.run(["java", "-cp", f"{tmp_path}:{cp}", "Widths", *(str(p) for p, _ in cases)],
                          capture_output=True, text=True, timeout=120, check=True)  # fmt: skip
    assert [json.loads(line) for line in proc.stdout.splitlines()] == [want for _p, want in cases]


def test_lengths_past_the_input_cost_no_memory_on_the_jvm(jvm, tmp_path):
    """Lengths and counts of up to 2^31 - 1 in inputs of 3 KB, read in a 64 MB heap: each
    refused by a check of the schema (the length against what the input holds after it),
    none by an OutOfMemoryError (Java's readBytes allocates the length it is given)."""
    out, cp = jvm
    jobs = greedy_jobs(tmp_path)
    proc = subprocess.run(["java", "-Xmx64m", "-cp", cp, "KafkacodecDump", str(out / "fields.tsv"),
                           str(jobs_file(jobs, tmp_path / "greedy.jobs")), PACKAGE],
                          capture_output=True, text=True, timeout=300)  # fmt: skip
    assert proc.returncode == 0, proc.stderr[-3000:]
    got = [json.loads(line) for line in proc.stdout.split("\n")[:-1]]
    assert len(got) == len(jobs)
    for job, theirs in zip(jobs, got):
        assert "error" in theirs and theirs["error"].startswith("Validation"), (job.name, theirs)


def test_lengths_that_disagree_with_their_fields_are_refused_on_the_jvm(jvm, tmp_path):
    """A record's length one more or one less than its fields, bytes after a batch's last
    record: refused as Kafka refuses them (the schemas read a record's body and the records
    region as sized substreams that their structures take to the last byte)."""
    jobs = disagreeing_lengths(tmp_path)
    check_refused(jobs, run(jvm, jobs, "lengths"))


def test_mutations_read_as_kafkacodec_reads_them_without_crc_checks(jvm, tmp_path):
    """Seeded mutations of the shared vectors (peers/bytewise.py): every one kafkacodec
    reads without CRC checks is read to the same values, every one it refuses is refused,
    but for the kinds crosslang.KNOWN_GAPS names (counted in the output)."""
    jobs = mutated_jobs(tmp_path / "mutations", seed=54, count=MUTATIONS)
    check_mutations(jobs, run(jvm, jobs, "mutations"))


CODECS_JAVA = """
import io.kafkacodec.kaitai.KafkaCompression;
import java.io.*;
import java.util.HexFormat;
public class CodecEdges {
    public static void main(String[] args) throws Exception {
        BufferedReader in = new BufferedReader(new InputStreamReader(System.in));
        for (String line; (line = in.readLine()) != null; ) {
            String[] part = line.split(" ");
            try {
                byte[] data = part[2].equals("-") ? new byte[0] : HexFormat.of().parseHex(part[2]);
                byte[] got = new KafkaCompression(Long.parseLong(part[0]), Long.parseLong(part[1])).decode(data);
                System.out.println("=" + HexFormat.of().formatHex(got));
            } catch (RuntimeException e) {
                System.out.println("refused");
            }
        }
    }
}
"""


def test_codec_edges_read_as_kafka_reads_them_on_the_jvm(jvm, tmp_path):
    """KafkaCompression.java keeps Kafka's rules for LZ4 frames and for the bytes after a
    gzip, snappy or zstd stream (crosslang.codec_edges)."""
    _out, cp = jvm
    (tmp_path / "CodecEdges.java").write_text(CODECS_JAVA)
    subprocess.run(["javac", "-nowarn", "-cp", cp, "-d", str(tmp_path), str(tmp_path / "CodecEdges.java")],
                   check=True, capture_output=True, timeout=300)  # fmt: skip
    proc = subprocess.run(["java", "-cp", f"{tmp_path}:{cp}", "CodecEdges"], capture_output=True, text=True,
                          input=codec_input(codec_edges()), timeout=120, check=True)  # fmt: skip
    check_codec_edges(proc.stdout.split())


def test_the_jazzer_target_finds_nothing_in_the_mutations(jvm, tmp_path):
    """harness/src/JavaOutputFuzz.java (`make fuzz` runs it under Jazzer, seeded with these
    mutations) over a seeded subset of peers.mutate's cases, as a program: every case read
    or refused on purpose (a schema's `valid`, the codec's Failure, the end of the data),
    none ending in another exception. (The compiled output threw NullPointerException on a
    codec id past 4 until the schemas gave the process `attributes & 7`, not the enum.)"""
    from peers.mutate import draw

    _out, cp = jvm
    seeds = tmp_path / "seeds"
    seeds.mkdir()
    for i, (_name, data) in enumerate(draw(4000, 9)):
        (seeds / f"{i:05d}.bin").write_bytes(data)
    classes = tmp_path / "classes"
    src = Path(__file__).resolve().parents[2] / "harness" / "src" / "JavaOutputFuzz.java"
    proc = subprocess.run(["javac", "-nowarn", "-cp", cp, "-d", str(classes), str(src)],
                          capture_output=True, text=True, timeout=600)  # fmt: skip
    assert proc.returncode == 0, proc.stderr[-3000:]
    proc = subprocess.run(["java", "-cp", f"{classes}:{cp}", "JavaOutputFuzz", str(seeds)],
                          capture_output=True, text=True, timeout=600)  # fmt: skip
    assert proc.returncode == 0, proc.stdout[-4000:]
    assert "read=4000" in proc.stdout, proc.stdout

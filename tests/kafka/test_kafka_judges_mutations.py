"""Kafka's own record classes judge every reading path of kafkacodec on seeded mutations of
the shared vectors (issue 54): the records Kafka's consumer gets, with check.crcs=true, from
MemoryRecords (harness/src/KafkaJudge.java, tests/kafka_judge.py), of the oldest and the
newest 4.x release, against what kafkacodec reads from the same bytes:

- the objects (iter_batches, batch.records()) through the native loops, and through the
  generated parsers alone (the reference the native loops are held to);
- the columns (decode_columns), which give the same records, and refuse what Kafka refuses.

The mutations (peers/bytewise.py) reach every check Kafka's readers make, in their order:
ByteBufferLogInputStream.nextBatchSize (a partial entry's length, then its magic, then
whether it is whole), DefaultRecordBatch.ensureValid and its record iterator (a count of 0
reads nothing after the stream's header; each DefaultRecord.readFrom; the bytes left after
the last record), LegacyRecord (any negative length is null, bytes after the value are not
read), AbstractLegacyRecordBatch's inner iterator (DataLogInputStream drops a partial inner
message; any inner magic), control records (ControlRecordType, EndTransactionMarker), and
the Java streams of each codec (GZIPInputStream, Lz4BlockInputStream, SnappyInputStream,
zstd-jni), where they end and what they refuse. A refusal must be at the batch Kafka refuses;
a record past int64 is the one difference on purpose (kafka_judge.as_kafka).

`tests/kafka_mutation_drill.py --cases N --seed S` runs the same comparison on any number
of mutations (`make judge-drill`: 200,000); CI runs this seeded subset."""

from __future__ import annotations

import struct

import pytest
from kafka_judge import columns_disagree, judge, objects_disagree, report

from peers.bytewise import VECTORS, Mutator, write

pytestmark = [pytest.mark.kafka, pytest.mark.slow]

RELEASES = ("4.0.0", "4.4.0")
SEED, CASES = 54, 6000


def the_issues_cases() -> list[tuple[str, bytes]]:
    """The trailing entries issue 54 names: each a valid batch, then a short entry whose
    magic Kafka refuses as soon as the 17 bytes up to it are there."""
    first = (VECTORS / "kafka-java" / "v2" / "v2_none_basic.bin").read_bytes()
    bare_v0 = struct.pack(">IBBii", 0x12345678, 0, 0, 1, 1) + b"kv"  # a bare message: 'a'...
    kafkajs = b"\0" * 8 + struct.pack(">i", 400) + b"a" * 8  # magic 97 at byte 16, short
    sarama = (VECTORS / "peers" / "sarama" / "legacy_emptyLZ4Message.bin").read_bytes()  # magic -1
    four = struct.pack(">qiib", 7, 100, 0, 4) + b"\0\0\0"  # magic 4, 20 of 112 bytes
    return [("issue-magic-97", first + kafkajs), ("issue-sarama-empty-lz4", first + sarama),
            ("issue-magic-4", first + four), ("issue-bare-v0", first + bare_v0)]  # fmt: skip


@pytest.fixture(scope="module")
def cases(tmp_path_factory):
    drawn = the_issues_cases() + Mutator(SEED).draw(CASES)
    return write(tmp_path_factory.mktemp("mutations"), drawn)


@pytest.fixture(scope="module", params=RELEASES)
def judged(request, cases, tmp_path_factory):
    return request.param, judge(request.param, tmp_path_factory.mktemp("build"), cases)


@pytest.mark.parametrize("path", ["native", "generated"])
def test_the_objects_read_what_kafka_reads(judged, cases, path):
    version, theirs = judged
    bad = objects_disagree(cases, theirs, generated=path == "generated")
    assert not bad, f"Kafka {version}: {len(bad)} of {len(cases)}\n" + report(bad)
    # the issue's cases: refused by both after the first batch, with Kafka's words for it
    first = len((VECTORS / "kafka-java" / "v2" / "v2_none_basic.bin").read_bytes())
    for f, kafka in zip(cases[:3], theirs[:3]):
        assert "Invalid magic found in record" in kafka["error"]["message"], f.name
        assert kafka["error"]["position"] == first and len(kafka["batches"]) == 1, f.name


def test_the_columns_read_what_kafka_reads(judged, cases):
    version, theirs = judged
    bad = columns_disagree(cases, theirs)
    assert not bad, f"Kafka {version}: {len(bad)} of {len(cases)}\n" + report(bad)
    # the mutations reach Kafka's refusals and its acceptance alike
    refused = sum("error" in k for k in theirs)
    assert len(cases) // 3 < refused < len(cases) - len(cases) // 10


def test_the_judge_runs_the_readers_every_check_reaches(judged, cases):
    """The mutations reach Kafka's checks: most of the refusals Kafka's record classes
    make are among the verdicts (a mutation generator that stopped reaching one would let a
    wrong order hide)."""
    _version, theirs = judged
    said = " ".join(k["error"]["message"] for k in theirs if "error" in k)
    for words in ("Invalid magic found in record", "is less than the minimum record overhead",
                  "Record is corrupt (stored crc", "Found invalid record count",
                  "Incorrect declared batch size", "Invalid record size",
                  "Found invalid number of record headers", "Unknown compression type id",
                  "Found invalid compressed record set with no inner records",
                  "Inner messages must not be compressed", "Corrupt GZIP trailer",
                  "Stream frame descriptor corrupted", "Invalid version found for control record"):  # fmt: skip
        assert words in said, words


def test_the_long_lived_oracle_answers_as_the_judge_of_files(judged, cases, tmp_path):
    """KafkaJudge --stream (kafka_judge.Oracle: the images framed on one pipe, the
    verdicts streamed back while more are written) gives, case after case, the verdicts
    the judge gives the same images as files; one JVM answers them all, and again after
    a first round (it is long-lived)."""
    from kafka_judge import Oracle

    version, theirs = judged
    images = [f.read_bytes() for f in cases]
    with Oracle(version, tmp_path) as kafka:
        # (each streamed answer adds the consumer's, which the files' judge does not give)
        assert [{k: v for k, v in a.items() if k != "consumer"} for a in kafka.judge_many(images)] == theirs
        assert [{k: v for k, v in a.items() if k != "consumer"} for a in kafka.judge_many(images[:50])] == theirs[:50]
        assert kafka.cases == len(images) + 50

"""The official Kaitai compiler's JavaScript output, with kafkacodec's JavaScript pieces
(kafkacodec/targets/javascript: the kafka_compression process and the CRC checks over the
range each schema exposes), run on Node with the official runtime from npm: on every
shared log and index vector, every Kafka-written internal payload and the width-stress
logs it reads what kafkacodec's Python codecs read, field by field.

JavaScript numbers are doubles: an integer beyond 2^53 (an offset or timestamp near 2^63,
a 10-byte varlong) comes out as the nearest double. That boundary is tested exactly: such
values compare as doubles, and the stress logs prove they are rounded, not wrong."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
from pathlib import Path

import pytest
from codec_edges import check_codec_edges, codec_edges, codec_input
from conftest import KSC
from crosslang import (
    check,
    check_case,
    check_mutations,
    check_refused,
    corpus_fixture,
    corpus_jobs,
    disagreeing_lengths,
    internal_jobs,
    jobs_file,
    log_jobs,
    mutated_jobs,
    wide_batches,
)

from kafkacodec.export import export

_ = corpus_fixture  # the `corpus` fixture, session-wide

#: How many seeded mutations a run reads (peers/bytewise.py).
MUTATIONS = 600

pytestmark = [
    pytest.mark.crosslang,
    pytest.mark.skipif(
        shutil.which("node") is None or not (KSC / "node_modules" / "fzstd").exists(),
        reason="node and tests/ksc/node_modules are needed (make test installs them)",
    ),
]

EXACT = 1 << 53


@pytest.fixture(scope="module")
def javascript(tmp_path_factory):
    out = tmp_path_factory.mktemp("export")
    results = export(out, ["javascript"])
    assert all(r["ok"] for r in results), [r for r in results if not r["ok"]]
    return out / "javascript"


def node(folder: Path, jobs, name: str) -> list[dict]:
    env = dict(os.environ, NODE_PATH=f"{KSC / 'node_modules'}{os.pathsep}{folder}")
    proc = subprocess.run(
        ["node", str(folder / "kafkacodec-dump.js"), "--jobs", str(jobs_file(jobs, folder / f"{name}.jobs"))],
        capture_output=True, text=True, env=env, timeout=600, check=True,
    )  # fmt: skip
    out = [json.loads(line) for line in proc.stdout.split("\n")[:-1]]  # strings may hold U+2028
    assert len(out) == len(jobs)
    return out


def as_double(tree):
    """Integers beyond 2^53 as the doubles JavaScript holds them."""
    if isinstance(tree, dict):
        return {k: as_double(v) for k, v in tree.items()}
    if isinstance(tree, list):
        return [as_double(v) for v in tree]
    if isinstance(tree, int) and not isinstance(tree, bool) and abs(tree) > EXACT:
        return float(tree)
    return tree


def compare(jobs, dumps) -> int:
    """Check every dump; return how many integers beyond 2^53 were compared as doubles."""
    rounded = 0
    for job, theirs in zip(jobs, dumps):
        if job.expected[0] == "ok":
            before = json.dumps(job.expected[1], default=str)
            job.expected = ("ok", as_double(job.expected[1]))
            rounded += before != json.dumps(job.expected[1], default=str)
        try:
            check(job, as_double(theirs))
        except AssertionError as err:
            raise AssertionError(f"{job.name}: {err}") from None
    return rounded


def test_every_log_and_index_vector_reads_the_same_on_node(javascript):
    jobs = log_jobs()
    compare(jobs, node(javascript, jobs, "logs"))


def test_every_internal_payload_reads_the_same_on_node(javascript, tmp_path):
    jobs = internal_jobs(tmp_path)
    compare(jobs, node(javascript, jobs, "internal"))
    assert len(jobs) > 900  # the vectors the shipped codecs read as Kafka wrote them (shipped_rows)


def test_the_corpus_on_node_exact_to_2_53_then_the_nearest_double(javascript, corpus):
    cases = corpus_jobs(corpus)
    dumps = node(javascript, cases, "corpus")
    by_name = {c.name: (c, d) for c, d in zip(cases, dumps)}
    # The boundary: a base offset near 2^63 is not exact in JavaScript, only the nearest double.
    case, theirs = by_name["valid/kafka_log/edge-offsets-near-2^63.bin"]
    mine = case.expect["ok"]["entries"][0]["body"]["base_offset"]
    got = theirs["ok"]["entries"][0]["body"]["base_offset"]
    assert got != mine and float(got) == float(mine)
    rounded = 0
    for case, theirs in zip(cases, dumps):
        before = json.dumps(case.expect)
        case.expect = as_double(case.expect)
        rounded += before != json.dumps(case.expect)
        try:
            check_case(case, as_double(theirs))
        except AssertionError as err:
            raise AssertionError(f"{case.name}: {err}") from None
    assert rounded >= 3  # the cases beyond 2^53 were compared as doubles; the rest exactly


NEGATIVE_INT64 = ["ffffffff00000000", "8000000000000000", "ffffffff7fffffff", "fffffffeffffffff"]


def node_reads(module: str, folder: Path) -> list:
    env = dict(os.environ, NODE_PATH=f"{KSC / 'node_modules'}{os.pathsep}{folder}")
    script = (
        f"const KS = require({module!r});"
        "console.log(JSON.stringify(process.argv.slice(1).map((h) =>"
        " new KS(new Uint8Array(Buffer.from(h, 'hex'))).readS8be())));"
    )
    proc = subprocess.run(["node", "-e", script, *NEGATIVE_INT64], capture_output=True,
                          text=True, env=env, check=True, timeout=60)  # fmt: skip
    return json.loads(proc.stdout)


def test_the_official_runtime_misreads_negative_int64s_and_the_fix_reads_them(javascript):
    """kaitai-struct 0.11.0 (npm) reads a negative int64 whose low 32 bits are below 2^31
    2^32 too large; KaitaiStream64.js, which the dump loads, reads the nearest double. When
    an npm release fixes it, the first assertion says so."""
    values = [int.from_bytes(bytes.fromhex(h), "big", signed=True) for h in NEGATIVE_INT64]
    wrong = [float(v + 2**32 if v % 2**32 < 2**31 else v) for v in values]
    assert [float(x) for x in node_reads("kaitai-struct/KaitaiStream", javascript)] == wrong
    fixed = node_reads(str(javascript / "KaitaiStream64.js"), javascript)
    assert [float(x) for x in fixed] == [float(v) for v in values]


def test_value_instances_leave_32_bits_in_javascript(javascript, tmp_path):
    """last_offset and crc_to as doubles: exact below 2^53, the nearest double above
    (documented), never wrapped at 32 bits."""
    env = dict(os.environ, NODE_PATH=f"{KSC / 'node_modules'}{os.pathsep}{javascript}")
    cases = wide_batches(tmp_path)
    script = (
        "require('./KaitaiStream64.js'); const KS = require('kaitai-struct/KaitaiStream');"
        "const B = require('./KafkaRecordBatch.js').KafkaRecordBatch || require('./KafkaRecordBatch.js');"
        "for (const p of process.argv.slice(1)) { const b = new B(new KS(require('fs').readFileSync(p)));"
        " console.log(JSON.stringify({base_offset: b.baseOffset, last_offset: b.lastOffset, crc_to: b.crcTo})); }"
    )
    proc = subprocess.run(["node", "-e", script, *(str(p) for p, _ in cases)], cwd=javascript, env=env,
                          capture_output=True, text=True, timeout=60)  # fmt: skip
    assert proc.returncode == 0, proc.stderr[-2000:]
    got = [as_double(json.loads(line)) for line in proc.stdout.splitlines()]  # (JSON prints them whole)
    assert got == [as_double(want) for _p, want in cases]
    assert got[1]["last_offset"] == (1 << 40) + 3  # exact below 2^53


def test_lengths_that_disagree_with_their_fields_are_refused_in_javascript(javascript, tmp_path):
    """A record's length one more or one less than its fields, bytes after a batch's last
    record: refused as Kafka refuses them (the schemas read a record's body and the records
    region as sized substreams that their structures take to the last byte)."""
    jobs = disagreeing_lengths(tmp_path)
    check_refused(jobs, node(javascript, jobs, "lengths"))


def test_mutations_read_as_kafkacodec_reads_them_without_crc_checks(javascript, tmp_path):
    """Seeded mutations of the shared vectors (peers/bytewise.py): every one kafkacodec
    reads without CRC checks is read to the same values, every one it refuses is refused,
    but for the kinds crosslang.KNOWN_GAPS names (counted in the output)."""
    jobs = mutated_jobs(tmp_path / "mutations", seed=54, count=MUTATIONS)
    check_mutations(jobs, node(javascript, jobs, "mutations"), doubles=as_double)


def test_codec_edges_read_as_kafka_reads_them_in_javascript(javascript):
    """KafkaCompression.js keeps Kafka's rules for LZ4 frames and for the bytes after a
    gzip, snappy or zstd stream (crosslang.codec_edges)."""
    env = dict(os.environ, NODE_PATH=f"{KSC / 'node_modules'}{os.pathsep}{javascript}")
    cases = codec_edges()
    script = (
        "const { KafkaCompression } = require('./KafkaCompression.js');"
        "const lines = require('fs').readFileSync(0, 'utf8').trim().split('\\n');"
        "for (const line of lines) { const [c, m, hex] = line.split(' ');"
        " const data = new Uint8Array(hex === '-' ? [] : Buffer.from(hex, 'hex'));"
        " try { console.log('=' + Buffer.from(new KafkaCompression(Number(c), Number(m)).decode(data)).toString('hex')); }"
        " catch (e) { console.log('refused'); } }"
    )
    proc = subprocess.run(["node", "-e", script], cwd=javascript, env=env, capture_output=True, text=True,
                          input=codec_input(cases), timeout=60)  # fmt: skip
    assert proc.returncode == 0, proc.stderr[-2000:]
    check_codec_edges(proc.stdout.split("\n")[: len(cases)])

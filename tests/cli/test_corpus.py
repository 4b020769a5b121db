"""`kafkacodec corpus`: a reproducible test corpus for other parsers, whose expectations are
kafkacodec's own readings (themselves checked against Kafka-written data elsewhere)."""

from __future__ import annotations

import json

import pytest
from conftest import kafkacodec_cli

import kafkacodec as kc
from kafkacodec.corpus import edge_cases, write_corpus


@pytest.fixture(scope="module")
def corpus(tmp_path_factory):
    out = tmp_path_factory.mktemp("corpus")
    return out, write_corpus(out, count=3, internal_count=1, seed=5)


def test_every_case_is_a_file_with_an_expectation(corpus):
    out, manifest = corpus
    assert manifest["format"] == 1 and manifest["seed"] == 5
    kinds = {c["kind"] for c in manifest["cases"]}
    assert kinds <= {"valid", "refused", "damaged"} and {"valid", "damaged"} <= kinds
    for c in manifest["cases"]:
        assert (out / c["file"]).is_file()
        assert ("ok" in c["expect"]) != ("error" in c["expect"])
        if c["kind"] == "valid":
            assert "ok" in c["expect"], c
    assert {c["schema"] for c in manifest["cases"]} >= {
        "kafka_log", "kafka_record_batch", "kafka_offset_index", "offset_commit_value",
    }  # fmt: skip


def test_a_drawn_case_kafka_refuses_is_no_valid_case(tmp_path):
    """Seed 0 draws log images Kafka 4.1.1's classes refuse (compression ids 5 and 7, a
    compressed magic 0 wrapper with a null value): they go under refused/, never valid/,
    whose every case Kafka reads (tests/kafka/test_kafka_judges_corpus.py judges them)."""
    from kafkacodec.corpus import kafka_refusal

    manifest = write_corpus(tmp_path / "c", seed=0)
    refused = [c for c in manifest["cases"] if c["kind"] == "refused"]
    assert len(refused) >= 3, len(refused)
    for c in manifest["cases"]:
        assert c["file"].startswith(f"{c['kind']}/")
        if c["kind"] == "valid":  # the schema reads it, and so do Kafka's record classes
            assert "ok" in c["expect"] and kafka_refusal(c["schema"], (tmp_path / "c" / c["file"]).read_bytes()) is None
        if c["kind"] == "refused":  # the schema refuses it, or Kafka does when its records are read
            assert "error" in c["expect"] or c["kafka_refuses"]
    assert any("null value" in c.get("kafka_refuses", "") for c in refused)


def test_the_edge_cases_read_back_as_written():
    """The edge cases are what their names say, read by kafkacodec's batch walk."""
    cases = edge_cases()
    (b,) = kc.iter_batches(cases["offsets-near-2^63"])
    assert b.last_offset == (1 << 63) - 1  # the largest offset there is
    deltas = [
        r.timestamp for r in next(iter(kc.iter_batches(cases["ten-byte-varlong-deltas"]))).records()
    ]
    assert deltas == [0, (1 << 62) + 1, -(1 << 62) - 1]
    assert len(list(kc.iter_batches(cases["partial-trailing-batch"]))) == 1


def test_damaged_cases_name_the_check_and_the_byte(corpus):
    out, manifest = corpus
    damaged = [c for c in manifest["cases"] if c["kind"] == "damaged"]
    crc = [c for c in damaged if "crc-covered-bit" in c["file"]]
    assert crc and all(c["expect"]["error"]["check"] == "ChecksumError" for c in crc)
    for c in crc:  # the bit flipped is the only damage: read without the CRC, the rest is there
        assert c["expect"]["crc_mismatch_at"] and "ok_without_crc" in c["expect"]
    short = [c for c in damaged if c["file"].endswith("-length-short.bin")]
    assert short and all(c["expect"]["error"]["check"] == "ValidationError" for c in short)
    for c in damaged:
        if "error" in c["expect"]:
            e = c["expect"]["error"]
            assert isinstance(e["position"], int) and e["family"] in (
                "checksum",
                "truncated",
                "invalid",
            )
            assert e["rule"] in ("crc", "length", "schema")


@pytest.mark.slow
def test_the_same_seed_writes_the_same_corpus(tmp_path):
    """Two runs (fresh processes, as a user runs it) with the same seed and versions."""
    for name in ("a", "b"):
        kafkacodec_cli(
            "corpus", tmp_path / name, "--count", "4", "--internal-count", "1", "--seed", "9"
        )
    a, b = (json.loads((tmp_path / n / "MANIFEST.json").read_text()) for n in ("a", "b"))
    assert json.dumps(a) == json.dumps(b)
    for c in a["cases"]:
        assert (tmp_path / "a" / c["file"]).read_bytes() == (
            tmp_path / "b" / c["file"]
        ).read_bytes()


def test_the_command(tmp_path):
    res = kafkacodec_cli("corpus", tmp_path / "c", "--count", "2", "--no-internal")
    assert res.stdout.startswith(f"wrote {tmp_path / 'c'}: ") and "MANIFEST.json" in res.stdout
    manifest = json.loads((tmp_path / "c" / "MANIFEST.json").read_text())
    assert all(c["param"] is None for c in manifest["cases"])
    refused = kafkacodec_cli("corpus", tmp_path / "c", ok=False)
    assert refused.returncode != 0 and "not empty" in refused.stderr

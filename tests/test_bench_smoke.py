"""Benchmarks are not timed tests: CI only checks that the commands run end to end."""

import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent


def run(*args):
    out = subprocess.run(
        [sys.executable, "-m", *args], cwd=ROOT, capture_output=True, text=True, timeout=300
    )
    assert out.returncode == 0, out.stderr
    return out.stdout


def test_codec_bench_runs():
    text = run("bench", "--mb", "0.05", "--repeat", "1")
    for figure in ("decode", "encode", "walk", "crc", "columnar"):
        for corpus in ("v2 none", "v2 lz4", "v2 zstd", "v1 none"):
            assert f"{figure:<9}{corpus:<9}kafkacodec " in text, (figure, corpus)
    assert "aiokafka" in text and "kafka-python" in text


def test_log_bench_runs():
    text = run("bench.log", "--segments", "5", "--walk-mb", "1")
    assert "lookups/s" in text and "anonymous memory grew" in text


@pytest.mark.slow
def test_remote_bench_runs():
    pytest.importorskip("moto")
    text = run("bench.remote", "--mb", "1", "--lookups", "2")
    for where in ("local disk", "s3 (moto)", "tiered, zstd", "tiered, zstd+AES"):
        assert where in text
    assert "lookup fetched" in text


def test_memory_bench_runs():
    text = run("bench.memory", "--mb", "2")
    assert "Segment.columns()" in text and "DecompressionLimitError" in text


@pytest.mark.spark
@pytest.mark.slow
def test_spark_bench_runs():
    text = run("bench.spark", "--mb", "1", "--partitions", "2", "--repeat", "1")
    for name in ("kafkacodec", "via-writer", "noop", "baseline"):
        assert f"  {name:<11}" in text and "rec/s" in text, name
    assert "x baseline" in text


def test_rewrite_bench_runs():
    text = run("bench.rewrite", "--mb", "0.5", "--repeat", "1")
    for codec in ("none", "lz4"):
        for name in ("rewrite (byte for byte)", "rewrite --check", "rewrite --compression zstd"):
            assert f"{codec:<7}{name:<26}" in text


@pytest.mark.crosslang
@pytest.mark.slow
def test_languages_bench_runs():
    """Every reader of the run (the Rust crate both ways, kafka-protocol, the Go package,
    franz-go, kafkacodec's C path, the Java output and Kafka's MemoryRecords) on every
    segment, their checksums equal (the jar of `make jar`, the broker harness's
    kafka-clients, Go and Rust are needed, as `make bench` has)."""
    import shutil

    if (
        shutil.which("go") is None
        or shutil.which("cargo") is None
        or not (ROOT / "jvm" / "target" / "kaitai-classpath.txt").is_file()
    ):
        pytest.skip("needs Go, Rust and `make jar`")
    text = run("bench.languages", "--mb", "0.4", "--repeat", "1")
    for segment in ("none", "gzip", "snappy", "lz4", "zstd"):
        for reader in ("Rust kafkacodec-reader", "Rust kafka-protocol", "Go franz-go", "C kafkacodec", "Java kafka"):
            assert f"{segment:8} {reader:24} " in text, (segment, reader)


def test_inflate_bench_runs():
    text = run("bench.inflate", "--mb", "0.2", "--repeat", "1")
    for corpus in ("v0 gzip", "v1 gzip", "v2 gzip"):
        assert text.count(corpus) == 1 and "x" in text


@pytest.mark.slow  # every command, twice over: 40 s
def test_commands_bench_runs(tmp_path):
    out = tmp_path / "commands"
    text = run("bench.commands", "--records", "3000", "--offsets", "500", "--big-records", "3000", "--repeat", "1",
               "--no-kafka", "--out", str(out))  # fmt: skip
    assert "records none" in text and "groups" in text
    assert (tmp_path / "commands.json").is_file()


@pytest.mark.kafka
@pytest.mark.slow
def test_commands_bench_runs_beside_kafkas_tools(tmp_path):
    out = tmp_path / "commands"
    text = run("bench.commands", "--records", "3000", "--offsets", "500", "--big-records", "3000", "--repeat", "1",
               "--out", str(out))  # fmt: skip
    assert "same output: True" in text and "same output: False" not in text
    assert "kafka-console-consumer" in text

"""Benchmarks are not timed tests: CI only checks that the commands run end to end."""

import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent


def run(*args):
    out = subprocess.run(
        [sys.executable, "-m", *args], cwd=ROOT, capture_output=True, text=True, timeout=300
    )
    assert out.returncode == 0, out.stderr
    return out.stdout


def test_codec_bench_runs():
    assert "decode (CRC on)" in run("bench", "--batches", "3", "--repeat", "1")


def test_log_bench_runs():
    text = run("bench.log", "--segments", "5", "--walk-mb", "1")
    assert "lookups/s" in text and "anonymous memory grew" in text

"""The fuzz harnesses (fuzz/): a bounded coverage-guided run of each under atheris, and
every input that ever crashed one, as a regression test."""

import os
import re
import shutil
import subprocess
import sys
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
REGRESSIONS = Path(__file__).parent / "fuzz_regressions"
sys.path.insert(0, str(ROOT))
from fuzz.harnesses import HARNESSES  # noqa: E402

pytestmark = [pytest.mark.fuzz, pytest.mark.slow]

#: Each plain run's seconds (CI's budget: the suite must finish in 30 minutes on 2 cores; long
#: runs are `python -m fuzz NAME --seconds N`, README "Fuzzing").
SECONDS = int(os.environ.get("KAFKACODEC_FUZZ_SECONDS", "30"))


#: The harnesses that reach the native extensions (kafkacodec/records/_native_*.c, runtime/_programs.c).
NATIVE_HARNESSES = ("batches", "records", "internal", "encode")


def _run(name: str, *flags: str, seconds: int = SECONDS) -> tuple[str, int, str]:
    proc = subprocess.run(
        [sys.executable, "-m", "fuzz", name, "--seconds", str(seconds), *flags],
        cwd=ROOT, capture_output=True, text=True, timeout=SECONDS * 3 + 300,
    )  # fmt: skip
    return name, proc.returncode, proc.stdout + proc.stderr


def test_every_harness_runs_clean():
    """SECONDS each, two at a time (the CI machine has two cores)."""
    pytest.importorskip("atheris")
    with ThreadPoolExecutor(max_workers=2) as pool:
        results = list(pool.map(_run, HARNESSES))
    _assert_clean(results)


def test_native_code_runs_clean_under_sanitizers():
    """The harnesses that reach C code, with the extensions built by clang under ASan and
    UBSan and coverage-guided (python -m fuzz --sanitized): a memory error, a reference
    count gone wrong or undefined behaviour stops the run with its report. make test
    installs clang."""
    pytest.importorskip("atheris")
    assert shutil.which("clang"), "the sanitized build needs clang (make test installs it)"
    subprocess.run([sys.executable, "-c", "import fuzz.__main__ as f; f.build_sanitized()"],
                   cwd=ROOT, check=True, timeout=600)  # fmt: skip
    with ThreadPoolExecutor(max_workers=2) as pool:
        # as long as the plain runs: an instrumented input costs several plain ones
        results = list(pool.map(lambda name: _run(name, "--sanitized", seconds=max(SECONDS, 10)),
                                NATIVE_HARNESSES))  # fmt: skip
    _assert_clean(results, "sanitized ")
    for _name, _code, out in results:
        assert "AddressSanitizer" not in out and "runtime error" not in out, out[-4000:]


def _assert_clean(results, kind=""):
    for name, code, out in results:
        runs = re.search(r"Done (\d+) runs in (\d+) second", out)
        rss = re.search(r"peak_rss_mb:\s+(\d+)", out)
        print(
            f"{kind}fuzz {name}: {runs.group(1) if runs else '?'} inputs, peak {rss.group(1) if rss else '?'} MB"
        )
        assert code == 0, f"{kind}fuzz {name} found a crash:\n{out[-4000:]}"
        assert runs and int(runs.group(1)) > 100, out[-2000:]


CASES = sorted(p for p in REGRESSIONS.glob("*/*") if p.is_file())


@pytest.mark.parametrize("path", CASES, ids=lambda p: f"{p.parent.name}/{p.name}")
def test_crash_stays_fixed(path):
    HARNESSES[path.parent.name](path.read_bytes())


def test_harnesses_refuse_garbage_with_kafkacodec_errors_only():
    for harness in HARNESSES.values():
        for data in (b"", b"\x00" * 100, b"\xff" * 100, bytes(range(256)) * 3):
            harness(data)


_LARGE_PARENT = """
import subprocess, sys
held = bytearray(1300 << 20)
held[::4096] = b"x" * len(held[::4096])  # resident: the peak RSS a child inherits
sys.exit(subprocess.run([sys.executable, "-m", "fuzz", "records", "--seconds", "3"]).returncode)
"""


def test_a_run_started_by_a_large_process_is_not_out_of_memory():
    """Linux keeps a parent's peak RSS across fork and exec, and libFuzzer's RSS limit
    watches the peak: started by a test worker past 1 GB, every run stopped at once (CI
    stops 33 and 34). python -m fuzz starts the run from a small process of its own."""
    pytest.importorskip("atheris")
    proc = subprocess.run([sys.executable, "-c", _LARGE_PARENT], cwd=ROOT, capture_output=True,
                          text=True, timeout=300)  # fmt: skip
    out = proc.stdout + proc.stderr
    assert proc.returncode == 0, out[-3000:]
    peak = re.search(r"peak_rss_mb:\s+(\d+)", out)
    assert peak and int(peak.group(1)) < 1024, out[-2000:]

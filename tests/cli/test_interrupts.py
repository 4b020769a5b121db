"""Ctrl-C as a terminal sends it (SIGINT to the command's whole process group) and --jobs
as an operator mistypes it (issue 55): one line, exit 130, no traceback, no process left
behind, nothing half-written; workers bounded by the work and the machine, and said so."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

from kafkacodec.sample import write_sized_log_dirs

EXE = Path(sys.executable).parent / "kafkacodec"


@pytest.fixture(scope="module")
def big(tmp_path_factory) -> Path:
    """A log.dirs that takes a few seconds to verify or rewrite with two workers."""
    return Path(write_sized_log_dirs(tmp_path_factory.mktemp("big") / "logs", records=None, size=160 << 20,
                                     partitions=4, codecs=("gzip",), record_bytes=400)["root"])  # fmt: skip


def children(pid: int) -> list[int]:
    """The processes whose parent is pid (Linux /proc)."""
    out = []
    for entry in Path("/proc").iterdir():
        if entry.name.isdigit():
            try:
                stat = (entry / "stat").read_text()
            except OSError:
                continue
            if int(stat.rsplit(")", 1)[1].split()[1]) == pid:
                out.append(int(entry.name))
    return out


def group_alive(pgid: int) -> bool:
    try:
        os.killpg(pgid, 0)
    except ProcessLookupError:
        return False
    return True


def interrupt(args, *, when=lambda proc: True, cwd=None, timeout=60.0):
    """Run kafkacodec with args in a process group of its own, send SIGINT to the group once
    when(proc) holds (polled), and return (status, stderr, what when() saw). Afterwards no
    process of the group may be alive."""
    proc = subprocess.Popen([str(EXE), *map(str, args)], stdout=subprocess.DEVNULL,
                            stderr=subprocess.PIPE, start_new_session=True, cwd=cwd)  # fmt: skip
    deadline = time.monotonic() + timeout
    seen = None
    while time.monotonic() < deadline and proc.poll() is None:
        seen = when(proc)
        if seen:
            break
        time.sleep(0.02)
    assert proc.poll() is None, "the command ended before it could be interrupted"
    os.killpg(proc.pid, signal.SIGINT)
    _out, err = proc.communicate(timeout=60)
    for _ in range(100):
        if not group_alive(proc.pid):
            break
        time.sleep(0.05)
    assert not group_alive(proc.pid), "a process of the command is still running"
    return proc.returncode, err.decode(), seen


def workers_busy(proc, since={}) -> bool:  # noqa: B006 (when each command's workers were first seen)
    """Two workers have run for half a second: each is inside a unit of work."""
    if len(children(proc.pid)) < 2:
        return False
    first = since.setdefault(proc.pid, time.monotonic())
    return time.monotonic() - first > 0.5


def test_verify_with_workers_is_interrupted_in_one_line(big):
    status, err, _ = interrupt(["verify", big, "--jobs", "2", "--quiet"], when=workers_busy)
    assert status == 130, err
    assert err.strip().splitlines() == ["kafkacodec verify: interrupted"], err
    assert "Traceback" not in err


def test_rewrite_with_workers_is_interrupted_and_leaves_nothing(big, tmp_path):
    dst = tmp_path / "out"
    status, err, _ = interrupt(["rewrite", big, dst, "--compression", "zstd", "--jobs", "2"],
                               when=workers_busy)  # fmt: skip
    assert status == 130, err
    assert err.strip().splitlines()[-1] == "kafkacodec rewrite: interrupted", err
    assert "Traceback" not in err and "Process" not in err
    assert not dst.exists()
    assert [p.name for p in tmp_path.iterdir()] == [], "a staging directory was left behind"


def test_an_interrupted_sample_leaves_nothing_and_runs_again(tmp_path):
    out = tmp_path / "logs"
    status, err, _ = interrupt(["sample", out, "--size", "4g", "--quiet"],
                               when=lambda proc: any(tmp_path.iterdir()))  # fmt: skip
    assert status == 130, err
    assert err.strip().splitlines() == ["kafkacodec sample: interrupted"], err
    assert list(tmp_path.iterdir()) == [], "sample left what it had written"
    done = subprocess.run([str(EXE), "sample", out, "--records", "100", "--quiet"], capture_output=True, text=True)
    assert done.returncode == 0, done.stderr


def test_records_is_interrupted_in_one_line(big):
    status, err, _ = interrupt(["records", big / "sample-0"], when=lambda proc: time.sleep(0.5) or True)
    assert status == 130, err
    assert err.strip().splitlines() == ["kafkacodec records: interrupted"], err


@pytest.mark.parametrize("asked", ["100", "10000"])
def test_jobs_are_bounded_by_the_work_and_the_machine(tmp_path, asked):
    """verify --jobs N starts no more workers than segments to check nor CPUs, and says so."""
    logs = Path(write_sized_log_dirs(tmp_path / "logs", records=3000, partitions=3)["root"])
    proc = subprocess.Popen([str(EXE), "verify", logs, "--jobs", asked, "--quiet"],
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE, start_new_session=True)  # fmt: skip
    most = 0
    while proc.poll() is None:
        most = max(most, len(children(proc.pid)))
        time.sleep(0.005)
    out, err = proc.communicate(timeout=60)
    assert proc.returncode == 0, err
    cpus = len(os.sched_getaffinity(0))
    assert most <= min(3, cpus) + 1  # the workers, and the pool's own helper at most
    assert f"--jobs {asked} lowered to {min(3, cpus)} (3 local segments to check, {cpus} CPUs)" in err.decode()


def test_rewrite_jobs_are_bounded_and_said(tmp_path):
    logs = Path(write_sized_log_dirs(tmp_path / "logs", records=3000, partitions=3)["root"])
    done = subprocess.run([str(EXE), "rewrite", logs, "--check", "--jobs", "50"], capture_output=True, text=True)
    assert done.returncode == 0, done.stderr
    assert "--jobs 50 lowered to 1 (the work: 1 units" in done.stdout

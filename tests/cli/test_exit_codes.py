"""Exit codes as docs/cli.md states them, per command (issue 55, points 5-6): a file the user
may not read is 2 ("could not check") in every command, a language the compiler has not is
a usage error (2), and a partition partly unreadable gives what can be read, saying what
could not."""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path

import pytest

from kafkacodec.sample import write_sized_log_dirs

EXE = Path(sys.executable).parent / "kafkacodec"
NOBODY = 65534


@pytest.fixture
def logs():
    """A log.dirs of one partition of five segments, every user may read but the second
    segment (its mode 000), in a folder every user may reach."""
    root = Path(tempfile.mkdtemp(prefix="kafkacodec-perm-", dir="/tmp"))
    try:
        write_sized_log_dirs(root / "l", records=2000, partitions=1, segment_bytes=20000)
        for d, _dirs, files in os.walk(root):
            os.chmod(d, 0o755)
            for f in files:
                os.chmod(Path(d) / f, 0o644)
        segments = sorted((root / "l" / "sample-0").glob("*.log"))
        assert len(segments) >= 3
        segments[1].chmod(0)
        yield root / "l", segments
    finally:
        shutil.rmtree(root, ignore_errors=True)


def as_user(*args) -> subprocess.CompletedProcess:
    """kafkacodec run as a user who may not read a mode-000 file (nobody, when root)."""
    drop = []
    if os.geteuid() == 0:
        if shutil.which("setpriv") is None:
            pytest.skip("root, and no setpriv to run as another user")
        drop = ["setpriv", f"--reuid={NOBODY}", f"--regid={NOBODY}", "--clear-groups"]
    return subprocess.run([*drop, str(EXE), *map(str, args)], capture_output=True, text=True, timeout=120)


@pytest.mark.parametrize("command", [
    ["records", "{part}"], ["dump", "{seg}"], ["lookup", "{part}", "--offset", "500"],
    ["verify", "{logs}"], ["recover", "{part}"],
])  # fmt: skip
def test_a_file_the_user_may_not_read_is_2_in_every_command(logs, command):
    root, segments = logs
    args = [a.format(logs=root, part=root / "sample-0", seg=segments[1]) for a in command]
    done = as_user(*args)
    assert done.returncode == 2, (done.returncode, done.stderr)
    assert f"{segments[1]}: cannot open: Permission denied" in done.stderr
    assert "Traceback" not in done.stderr


def test_what_can_be_read_is_read_and_the_rest_is_said(logs):
    root, segments = logs
    done = as_user("records", root / "sample-0", "--limit", "1")
    assert done.returncode == 0, done.stderr
    assert done.stdout.startswith("offset 0 ")
    first_of_next = int(segments[2].stem)
    assert (f"{segments[1]}: cannot open: Permission denied: offsets {int(segments[1].stem)}-{first_of_next - 1} "
            "cannot be read here") in done.stderr  # fmt: skip


def test_an_unknown_language_is_a_usage_error(tmp_path):
    done = subprocess.run([str(EXE), "export-schemas", "--lang", "cobol", "--out", tmp_path / "x"],
                          capture_output=True, text=True)  # fmt: skip
    assert done.returncode == 2, done.stderr
    assert done.stderr.strip() .startswith("kafkacodec export-schemas: unknown language 'cobol'")

"""`kafkacodec spark` at the terminal (issue 55, points 3-4): what can be refused is refused
before Spark starts (one line, exit 2, no JVM), and Ctrl-C at any moment ends the command
with one line, exit 130, and no process left behind (Spark's JVM runs in a session of its
own, which a terminal's SIGINT does not reach: the command ends it)."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import time
import uuid
from pathlib import Path

import pytest

from kafkacodec.sample import write_sized_log_dirs

pytestmark = pytest.mark.spark

EXE = Path(sys.executable).parent / "kafkacodec"


def marked(mark: str) -> list[int]:
    """The processes whose environment holds mark (every process a command started)."""
    out = []
    for entry in Path("/proc").iterdir():
        if entry.name.isdigit():
            try:
                if mark.encode() in (entry / "environ").read_bytes():
                    out.append(int(entry.name))
            except OSError:
                continue
    return out


@pytest.fixture(scope="module")
def logs(tmp_path_factory) -> Path:
    return Path(write_sized_log_dirs(tmp_path_factory.mktemp("spark-term") / "logs", records=None,
                                     size=60 << 20, partitions=2, codecs=("gzip",))["root"])  # fmt: skip


@pytest.mark.parametrize("args,says", [
    (["spark", "verify", "/nonexistent/logs"], "/nonexistent/logs: no such file or directory"),
    (["spark", "stats", "{logs}", "--master", "bogus://x"], "--master bogus://x: not a Spark master URL"),
    (["spark", "export", "{logs}", "{out}"], "exists (give --overwrite to replace it)"),
])  # fmt: skip
def test_refused_before_spark_starts(logs, tmp_path, args, says):
    (tmp_path / "out").mkdir()
    args = [a.format(logs=logs, out=tmp_path / "out") for a in args]
    mark = uuid.uuid4().hex
    start = time.monotonic()
    done = subprocess.run([str(EXE), *args], capture_output=True, text=True, timeout=120,
                          env=dict(os.environ, KAFKACODEC_TEST_MARK=mark))  # fmt: skip
    assert done.returncode == 2, done.stderr
    assert done.stderr.strip().splitlines() == [f"kafkacodec spark: {done.stderr.split(': ', 1)[1].strip()}"]
    assert says in done.stderr and "--append" not in done.stderr
    assert time.monotonic() - start < 20  # no JVM was started (Spark takes longer)


@pytest.mark.parametrize("after", [1.0, 3.0, 6.0])
def test_ctrl_c_at_any_moment_leaves_no_process(logs, after):
    """SIGINT to the command's process group, as a terminal sends it: while the JVM starts
    (1 s), as the session comes up (3 s), while the job runs (6 s)."""
    mark = uuid.uuid4().hex
    proc = subprocess.Popen([str(EXE), "spark", "verify", str(logs)], stdout=subprocess.DEVNULL,
                            stderr=subprocess.PIPE, start_new_session=True,
                            env=dict(os.environ, KAFKACODEC_TEST_MARK=mark))  # fmt: skip
    time.sleep(after)
    assert proc.poll() is None, "the job ended before it could be interrupted"
    os.killpg(proc.pid, signal.SIGINT)
    _out, err = proc.communicate(timeout=120)
    err = err.decode()
    assert proc.returncode == 130, err[-3000:]
    assert err.strip().splitlines()[-1] == "kafkacodec spark: interrupted", err[-3000:]
    assert "Traceback" not in err and "ERROR" not in err, err[-3000:]
    for _ in range(100):
        if not marked(mark):
            break
        time.sleep(0.1)
    assert marked(mark) == [], "a process the command started is still running"

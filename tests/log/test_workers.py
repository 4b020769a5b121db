"""log.workers: the worker processes of `verify --jobs` and `rewrite --jobs`. A worker that
dies mid-result, an interrupt at any moment and a unit that raises each end the run at
once, with no process left behind: the CI once hung here for 60 s (a worker terminated
while it wrote a large result to concurrent.futures' shared result queue, whose reader
then waited for the rest of the message forever)."""

from __future__ import annotations

import faulthandler
import os
import signal
import subprocess
import sys
import textwrap
import time
from pathlib import Path

import pytest

from kafkacodec.log.workers import in_order
from kafkacodec.runtime.errors import KafkacodecError, WorkerError

BIG = 48 << 20  # a result far larger than a pipe holds: its write takes many reads


@pytest.fixture(autouse=True)
def no_hang():
    """A hang ends this test's process with every thread's traceback (xdist then reports a
    crashed worker) instead of holding the suite until CI's limit. The children the test
    process had before (another test's Spark, S3 server or broker) are not this test's."""
    global BEFORE
    BEFORE = set(_children())
    faulthandler.dump_traceback_later(120, exit=True)
    yield
    faulthandler.cancel_dump_traceback_later()


BEFORE: set[int] = set()


def big_result(n: int) -> bytes:
    return bytes([n]) * BIG


def late_big_result(n: int) -> bytes:
    time.sleep(n)
    return big_result(n)


def fails_on_two(n: int) -> int:
    if n == 2:
        raise ValueError(f"unit {n} is bad")
    return n * 10


def kafkacodec_error(n: int) -> int:
    raise KafkacodecError(f"unit {n}: refused")


def live_children() -> list[int]:
    """This process's children that are not zombies (Linux /proc), started by this test."""
    return [pid for pid in _children() if pid not in BEFORE]


def _children() -> list[int]:
    out = []
    for entry in Path("/proc").iterdir():
        if entry.name.isdigit():
            try:
                fields = (entry / "stat").read_text().rsplit(")", 1)[1].split()
            except OSError:
                continue
            if int(fields[1]) == os.getpid() and fields[0] != "Z":
                out.append(int(entry.name))
    return out


def test_results_come_in_the_items_order_and_the_workers_end():
    items = list(range(23))
    got = list(in_order(items, lambda n: None if n % 5 == 0 else n, abs, abs, 2))
    assert [item for item, _ in got] == items
    assert [result for _, result in got] == [None if n % 5 == 0 else n for n in items]
    assert live_children() == []


def test_an_exception_a_unit_raises_comes_with_its_item_and_its_workers_traceback():
    done = in_order(range(6), lambda n: n, fails_on_two, fails_on_two, 2)
    assert next(done) == (0, 0) and next(done) == (1, 10)
    with pytest.raises(ValueError, match="unit 2 is bad") as caught:
        next(done)
    assert "fails_on_two" in str(caught.value.__cause__), "the worker's traceback is lost"
    assert live_children() == []
    with pytest.raises(KafkacodecError, match="unit 0: refused"):
        list(in_order(range(3), lambda n: n, kafkacodec_error, kafkacodec_error, 2))


def test_a_worker_killed_in_the_middle_of_its_result_is_an_error_not_a_hang():
    done = in_order([0, 1], lambda n: n, late_big_result, late_big_result, 2)
    first = next(done)  # both units were handed out; unit 1's result comes a second later
    assert first[1] == big_result(0)
    time.sleep(1.5)  # unit 1's worker has written what the pipe holds and waits to write the rest
    for pid in live_children():
        os.kill(pid, signal.SIGKILL)
    start = time.monotonic()
    with pytest.raises(WorkerError, match=r"worker process \d+ was killed by SIGKILL before it returned"):
        next(done)
    assert time.monotonic() - start < 10
    assert live_children() == []


def test_a_consumer_that_stops_taking_results_ends_the_workers():
    done = in_order(range(10), lambda n: n, big_result, big_result, 2)
    next(done)
    done.close()
    assert live_children() == []


DRILL = """
import os, random, signal, sys, time
sys.path.insert(0, {tests!r})
from test_workers import big_result, live_children
from kafkacodec.log.workers import in_order
random.seed({seed})
for round in range({rounds}):
    signal.setitimer(signal.ITIMER_REAL, random.uniform(0.01, 0.6))
    signal.signal(signal.SIGALRM, signal.default_int_handler)
    try:
        for _ in in_order(range(12), lambda n: n, big_result, big_result, 2):
            pass
        signal.setitimer(signal.ITIMER_REAL, 0)
    except KeyboardInterrupt:
        pass
    assert live_children() == [], f"round {{round}}: workers left"
print("ok")
"""


@pytest.mark.slow
def test_interrupts_at_any_moment_end_the_work_at_once():
    """KeyboardInterrupt at random moments of runs whose results are being transferred
    (in a child process, so that a hang fails the test instead of stopping the suite)."""
    code = textwrap.dedent(DRILL.format(tests=str(Path(__file__).parent), seed=55, rounds=40))
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=240)
    assert done.returncode == 0 and done.stdout.strip() == "ok", done.stderr[-3000:]


def test_a_unit_no_worker_finished_is_unchecked_data_not_a_problem_in_it():
    from kafkacodec.console import UNCHECKED, error_status

    assert error_status(WorkerError("worker process 7 was killed by SIGKILL")) == UNCHECKED

"""Progress a person can follow (issue 55, point 7): the bar moves within a segment (one of
a gigabyte of gzip takes a minute), names the partition as well as the file (every
partition's first segment is 00000000000000000000.log), and fits the terminal."""

from __future__ import annotations

import io
import time
from pathlib import Path

import pytest

from kafkacodec import console
from kafkacodec.cli import main
from kafkacodec.log import Segment
from kafkacodec.log.check import PROGRESS_STEP, check_segment
from kafkacodec.log.workers import in_order
from kafkacodec.sample import write_sized_log_dirs


@pytest.fixture(scope="module")
def logs(tmp_path_factory) -> Path:
    """Two partitions of one gzip segment of about 6 MB each."""
    return Path(write_sized_log_dirs(tmp_path_factory.mktemp("p") / "logs", records=None, size=12 << 20,
                                     partitions=2, codecs=("gzip",), record_bytes=400)["root"])  # fmt: skip


def segment_of(logs: Path, partition: int) -> Path:
    (log,) = sorted((logs / f"sample-{partition}").glob("*.log"))
    return log


def test_a_segments_check_says_where_it_is_as_it_goes(logs):
    path = segment_of(logs, 0)
    size = path.stat().st_size
    seen: list[int] = []
    seg = Segment(path.parent, 0)
    try:
        check = check_segment(seg, progress=seen.append)
    finally:
        seg.close()
    assert check.clean
    assert len(seen) >= size // PROGRESS_STEP - 1, f"{len(seen)} reports over {size} bytes"
    assert seen == sorted(set(seen)) and 0 <= seen[0] and seen[-1] < size
    assert all(b - a >= PROGRESS_STEP for a, b in zip(seen, seen[1:]))


def reports_three(n: int, report) -> int:
    for k in range(3):
        report(n * 100 + k)
        time.sleep(0.15)  # more than a worker's relay waits between two reports
    return n


@pytest.mark.parametrize("jobs", [1, 2])
def test_what_a_unit_reports_reaches_the_parent_with_its_item(jobs):
    seen = []
    done = list(in_order(["a", "b", "c"], lambda item: "abc".index(item), reports_three, reports_three, jobs,
                         on_progress=lambda item, n: seen.append((item, n))))  # fmt: skip
    assert done == [("a", 0), ("b", 1), ("c", 2)]
    for k, item in enumerate("abc"):
        assert [n for i, n in seen if i == item] == [k * 100, k * 100 + 1, k * 100 + 2], seen


@pytest.mark.parametrize("jobs", ["1", "2"])
def test_verify_moves_within_each_segment_and_names_its_partition(logs, monkeypatch, jobs):
    """(A worker relays a report every RELAY_EVERY seconds, longer than these small
    segments take: every report here, the forked workers inheriting the setting.)"""
    monkeypatch.setattr("kafkacodec.log.workers.RELAY_EVERY", 0.0)
    calls = []
    monkeypatch.setattr(console.Progress, "at", lambda self, key, n, label: calls.append((label, n)))
    assert main(["verify", str(logs), "--jobs", jobs, "--quiet"]) == 0
    for partition in (0, 1):
        path = segment_of(logs, partition)
        label = f"sample-{partition}/{path.name}"
        inside = [n for name, n in calls if name == label]
        assert any(0 < n < path.stat().st_size for n in inside), (label, calls)


class Terminal(io.StringIO):
    def isatty(self) -> bool:
        return True


@pytest.mark.parametrize("columns", [60, 80, 200])
def test_the_bar_fits_the_terminal_and_keeps_the_partition_and_the_offset(monkeypatch, columns):
    monkeypatch.setenv("COLUMNS", str(columns))
    stream = Terminal()
    bar = console.Progress(10 << 30, "verify", stream=stream)
    label = "a-very-long-topic-name-of-an-application-42/00000000000123456789.log"
    bar.at("x", 3 << 30, label)
    time.sleep(0.11)  # the bar redraws at most every 0.1 s
    bar.at("y", 1 << 30, "other-0/00000000000000000000.log")
    drawn = stream.getvalue().split("\r")[-1]
    assert len(drawn) <= columns - 1, drawn
    assert "40%" in drawn
    head = drawn.split(" [")[0]
    if columns >= 200:
        assert head.startswith(label) and "+1" in head
    else:
        assert head.startswith("a-very") and "6789.log" in head and "…" in head, head


def test_verify_says_how_many_of_its_records_are_control_records(tmp_path, capsys):
    """verify counts every record; a consumer (and spark stats) counts data records: the
    line says how many control records the count holds (issue 55, point 9)."""
    from kafkacodec.log.partition import LogDirs
    from kafkacodec.sample import write_sample_log_dirs

    root = write_sample_log_dirs(tmp_path / "kafka", batches=60)
    reads = [r for p in LogDirs(root).partitions for _s, _b, r in p.read()]
    controls = sum(r.control is not None for r in reads)
    assert controls > 1
    assert main(["verify", str(root)]) == 0
    line = capsys.readouterr().out.splitlines()[0]
    assert f"{len(reads)} records ({controls} of them control records)" in line, line


def test_an_interrupted_bar_leaves_the_line_clean():
    """Ctrl-C while only a file in flight was drawn (nothing done yet): "interrupted" was
    printed after the bar, on the same line."""
    stream = Terminal()
    with pytest.raises(KeyboardInterrupt):
        with console.Progress(100 << 20, "verify", stream=stream) as bar:
            bar.at("x", 5 << 20, "orders-0/00000000000000000000.log")
            raise KeyboardInterrupt
    drawn = stream.getvalue()
    assert "5%" in drawn and drawn.endswith("\r") and drawn.rsplit("\r", 2)[-2].strip() == ""

"""The Spark rewrite job (pipeline.jobs.rewrite): one task per partition, the same bytes as
`kafkacodec rewrite`, the log.dirs renamed into place once every task is done, nothing
left by a job that fails."""

import shutil

import pytest

pytest.importorskip("pyspark")

from kafkacodec.log import rewrite as RW  # noqa: E402
from kafkacodec.log.partition import LogDirs, Partition  # noqa: E402
from kafkacodec.sample import write_sample_log_dirs  # noqa: E402

pytestmark = [pytest.mark.spark]


@pytest.fixture(scope="module")
def logdirs(tmp_path_factory):
    root = write_sample_log_dirs(
        tmp_path_factory.mktemp("logdirs") / "kafka", batches=80, segment_bytes=16 << 10
    )
    (root / "meta.properties").write_text("version=1\nnode.id=1\n")
    (root / ".lock").write_bytes(b"")
    return root


def files(d):
    return {p.relative_to(d).as_posix(): p.read_bytes() for p in sorted(d.rglob("*")) if p.is_file()}


def counts(summary):
    d = summary.to_dict()
    for key in ("source", "destination", "seconds", "jobs", "tasks", "rolled_back"):
        d.pop(key)
    return d


@pytest.mark.parametrize("options", [{}, {"compression": "zstd", "magic": 2}, {"compression": "lz4", "level": 3}])
def test_the_job_writes_what_the_command_writes(spark, logdirs, tmp_path, options):
    from kafkacodec.pipeline import jobs

    got = jobs.rewrite(spark, logdirs, tmp_path / "spark", **options)
    want = RW.rewrite(logdirs, tmp_path / "here", jobs=1, **options)
    assert files(tmp_path / "spark") == files(tmp_path / "here")
    assert counts(got) == counts(want)
    n = len(LogDirs(logdirs).partitions)
    assert got.tasks == n and got.partitions == n and got.segments > n
    assert "meta.properties" in got.copied and ".lock" not in files(tmp_path / "spark")
    if not options:  # written by kafkacodec's writer: Kafka's bytes, every batch
        assert got.different == 0 and files(tmp_path / "spark") == {
            k: v for k, v in files(logdirs).items() if k != ".lock"}  # fmt: skip
    assert sorted(p.name for p in tmp_path.iterdir()) == ["here", "spark"]


def test_the_job_checks_without_writing(spark, logdirs, tmp_path):
    from kafkacodec.pipeline import jobs

    s = jobs.rewrite(spark, logdirs, None)
    assert s.destination is None and s.different == 0 and s.identical == s.batches_in > 0
    assert s.tasks == len(LogDirs(logdirs).partitions)
    one = next(iter(LogDirs(logdirs).partitions)).path
    s = jobs.rewrite(spark, one, tmp_path / "one")  # a partition: one task
    assert s.tasks == 1 and files(tmp_path / "one") == files(one)


def test_a_failed_task_leaves_nothing(spark, logdirs, tmp_path):
    from kafkacodec.pipeline import jobs

    root = tmp_path / "kafka"
    shutil.copytree(logdirs, root)
    part = next(p for p in LogDirs(root).partitions if len(p.segments) > 1)
    seg = Partition(part.path).segments[-1].path
    seg.write_bytes(seg.read_bytes()[:-5])  # a cut tail: for recover first
    with pytest.raises(Exception, match=seg.name):
        jobs.rewrite(spark, root, tmp_path / "new")
    assert sorted(p.name for p in tmp_path.iterdir()) == ["kafka"]


def test_a_retried_task_writes_its_partition_afresh(logdirs, tmp_path):
    """Spark runs a lost task again: the partition an earlier attempt finished, inside the
    job's staging directory, is replaced by the new attempt's."""
    from kafkacodec.pipeline.jobs import _rewrite_partition

    part = next(iter(LogDirs(logdirs).partitions)).path
    stage = tmp_path / f".new{RW.STAGE_SUFFIX}"
    target = stage / part.name
    target.mkdir(parents=True)
    (target / "00000000000000000000.log").write_bytes(b"an earlier attempt's")
    s = _rewrite_partition((str(part), str(target)), options={}, interval=None, interval_for=None)
    assert s.different == 0 and files(target) == files(part)

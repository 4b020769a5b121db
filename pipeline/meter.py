"""What a job's tasks fetched from object stores (requests, bytes, retries), added up on the
driver: a Spark accumulator that the tasks add to as they finish a slice.

A Python data source's reader runs in the executors' Python workers, which Spark gives no
SparkContext; the accumulator reaches them by its id (the data source option
kafkacodec.fetch_meter), and PySpark sends the workers' additions back with each task's
result as it does for any accumulator. A task that is retried adds again: the count is
of bytes fetched, including work that was done twice.
"""

from __future__ import annotations

from contextlib import contextmanager

from pyspark.accumulators import AccumulatorParam

from kafkacodec.storage import Stats, total_stats

#: The data source option that names the accumulator.
OPTION = "kafkacodec.fetch_meter"
ZERO = (0, 0, 0)  # requests, bytes, retries


class _Sum(AccumulatorParam):
    def zero(self, value):
        return ZERO

    def addInPlace(self, a, b):  # noqa: N802 - PySpark's name
        return tuple(x + y for x, y in zip(a, b))


class FetchMeter:
    """An accumulator of what the tasks of a job fetched."""

    def __init__(self, spark):
        self.acc = spark.sparkContext.accumulator(ZERO, _Sum())

    @property
    def aid(self) -> str:
        return str(self.acc.aid)

    @property
    def options(self) -> dict:
        """The option that lets a data source's tasks add to it."""
        return {OPTION: self.aid}

    def as_dict(self) -> dict:
        requests, nbytes, retries = self.acc.value
        return {"requests": requests, "bytes": nbytes, "retries": retries}

    def line(self) -> str | None:
        """What the tasks fetched, as the commands print it (None: nothing was fetched)."""
        return Stats(**self.as_dict()).describe()


@contextmanager
def measured(aid: str | None):
    """On an executor: add what the body fetched to the accumulator `aid` (nothing to do
    without one)."""
    if aid is None:
        yield
        return
    before = total_stats()
    try:
        yield
    finally:
        after = total_stats()
        from pyspark.accumulators import _deserialize_accumulator  # how PySpark unpickles one

        acc = _deserialize_accumulator(int(aid), ZERO, _Sum())
        acc.add((after.requests - before.requests, after.bytes - before.bytes,
                 after.retries - before.retries))  # fmt: skip

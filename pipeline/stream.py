"""Streaming: `spark.readStream.format("kafkacodec").load(path)` tails growing log
directories, as a consumer tails a broker.

Offsets are Kafka offsets, one per partition directory: {"orders-0": 1234} says the next
offset to read is 1234. They survive what byte positions would not (compaction rewriting
a segment, retention deleting one), so a query restarted from its checkpoint neither loses
nor repeats a record. Each micro-batch:

- ends, per partition, after the last complete batch (a batch the broker is still writing
  is left for a later micro-batch); with isolation=read_committed, at the last stable
  offset instead (the first offset of a transaction with no marker yet), as a broker's
  read-committed fetch does;
- picks up new segments and new partition directories (read from their start); a stream
  may start on a log.dirs with no data yet;
- reads [start, end) of each partition through the same slices as a batch query (the
  .index finds where to start; rows outside the range are cut exactly).

Options: Spark's kafka source's (request.py), with its names and meanings:
  startingOffsets         latest (default, as in Spark), earliest, or JSON naming every
                          partition read: {"orders": {"0": 1200, "1": -2}} (-2 earliest,
                          -1 latest); or startingTimestamp, startingOffsetsByTimestamp
                          (with startingOffsetsByTimestampStrategy). Only a query's first
                          run reads it; a restart goes on from its checkpoint. Partitions
                          that appear later are read from their start
  maxOffsetsPerTrigger    at most this many offsets per micro-batch, shared in proportion
                          to what each partition has waiting (Spark's rateLimit)
  minOffsetsPerTrigger    wait for at least this many offsets, or maxTriggerDelay (15m by
                          default) since the last micro-batch
  failOnDataLoss          true (default): a start offset that retention has already
                          deleted stops the query; false: warn and go on from the
                          partition's first offset
  includeHeaders, kafka.isolation.level, subscribe, subscribePattern, assign, and
  kafkacodec's verify_crc, include_control, on_corrupt, split_size, as a batch read takes
  them

Trigger.AvailableNow (SupportsTriggerAvailableNow, PySpark 4.2): the query reads what
every partition holds when it starts, in micro-batches of maxOffsetsPerTrigger, and stops;
what is appended meanwhile waits for the next run.
"""

from __future__ import annotations

import math
import time

from pyspark.sql.datasource import DataSourceStreamReader
from pyspark.sql.streaming.datasource import (
    ReadAllAvailable,
    ReadMaxRows,
    SupportsTriggerAvailableNow,
)

from kafkacodec.log.partition import Partition
from kafkacodec.storage import is_remote

from .options import Options, input_paths, partitions_of
from .read import records
from .request import Ends, Request, normalized
from .scan import Bounds, PipelineError, SegmentSlice, complete_end, plan

#: Spark's default maxTriggerDelay (KafkaSourceProvider.DEFAULT_MAX_TRIGGER_DELAY)
DEFAULT_MAX_TRIGGER_DELAY = "15m"
_UNITS = {"ms": 1, "s": 1000, "m": 60_000, "min": 60_000, "h": 3_600_000, "d": 86_400_000}


def _duration_ms(raw: str) -> int:
    """A time string as Spark's Utils.timeStringAsMs reads it: 500ms, 30s, 15m, 1h, 2d (a
    bare number is milliseconds)."""
    text = raw.strip().lower()
    digits = len(text) - len(text.lstrip("0123456789"))
    unit = text[digits:].strip() or "ms"
    if not digits or unit not in _UNITS:
        raise PipelineError(f"option maxTriggerDelay: a duration such as 30s or 15m, got {raw!r}")
    return int(text[:digits]) * _UNITS[unit]


class RecordsStreamReader(DataSourceStreamReader, SupportsTriggerAvailableNow):
    """The kafkacodec format as a stream (one row per record, RECORDS_SCHEMA)."""

    def __init__(self, options: dict):
        self.request = Request.parse(options, stream=True)
        self.opts = Options.parse(options)
        self.paths = input_paths(options)
        remote = [str(p) for p in self.paths if is_remote(p)]
        if remote:
            raise PipelineError(f"{remote[0]}: a stream tails log directories as brokers append "
                                "to them; an object store's segments do not grow: read it with "
                                "spark.read (a batch query)")  # fmt: skip
        lower = normalized(options)
        self.max_offsets = self._count(lower, "maxoffsetspertrigger")
        self.min_offsets = self._count(lower, "minoffsetspertrigger")
        if (
            self.min_offsets is not None
            and self.max_offsets is not None
            and self.min_offsets > self.max_offsets
        ):
            raise PipelineError(f"The value of minOffsetPerTrigger({self.min_offsets}) is higher "
                                f"than the maxOffsetsPerTrigger({self.max_offsets}).")  # fmt: skip
        self.max_delay_ms = _duration_ms(
            str(lower.get("maxtriggerdelay", DEFAULT_MAX_TRIGGER_DELAY))
        )
        self.last_trigger_ms = 0.0
        #: Trigger.AvailableNow: the ends every partition had when the query started
        self.available_now = False
        self.target: tuple[dict, dict] | None = None

    @staticmethod
    def _count(options: dict, name: str) -> int | None:
        raw = options.get(name)
        if raw is None:
            return None
        try:
            value = int(raw.strip())
        except ValueError:
            value = 0
        if value <= 0:
            raise PipelineError(f"option {name}: a count > 0, got {raw!r}")
        return value

    # -- the partitions and their ends
    def _partitions(self, *, check_topics: bool = False) -> dict[str, Partition]:
        """The partitions the query reads, by directory name; check_topics: refuse a
        subscribed topic none of the log directories holds (Request.check_topics)."""
        found: dict[str, Partition] = {}
        held = partitions_of(self.paths, empty_ok=True)
        if check_topics:
            self.request.check_topics(held, self.paths)
        for p in held:
            if not self.request.wants(p):
                continue
            key = p.path.name
            if key in found:
                raise PipelineError(f"{key} is in two log directories: {found[key].path}, {p.path}")
            found[key] = p
        return found

    def _end(self, p: Partition, start: int) -> int:
        """The offset after the last complete batch (read_committed: the last stable
        offset, when a transaction from start on has no marker yet)."""
        if not p.segments:
            return start
        return complete_end(p, read_committed=self.opts.read_committed,
                            on_corrupt_fail=self.opts.on_corrupt == "fail", start=start)  # fmt: skip

    # -- DataSourceStreamReader
    def initialOffset(self) -> dict:
        """Where the query's first run starts (Spark's getOrCreateInitialPartitionOffsets):
        startingOffsets resolved as a batch read resolves them."""
        parts = self._partitions(check_topics=True)
        by_key = {(p.topic, p.partition): name for name, p in parts.items()}
        mine = self.request.assigned(list(parts.values()))
        offsets = {}
        for key, p in mine.items():
            ends = Ends(p, self.opts.read_committed, self.opts.on_corrupt == "fail")
            offsets[by_key[key]] = self.request.resolve(
                self.request.starting, key, ends, starting=True
            )
        return offsets

    def getDefaultReadLimit(self):
        return ReadAllAvailable() if self.max_offsets is None else ReadMaxRows(self.max_offsets)

    def prepareForTriggerAvailableNow(self) -> None:
        """Trigger.AvailableNow: read up to what is there now, then stop (the ends are
        taken at the first latestOffset, as Spark's KafkaMicroBatchStream takes them)."""
        self.available_now = True

    def _latest(self, start: dict) -> tuple[dict, dict]:
        """Where each partition's next micro-batch starts (a new partition: at its log
        start) and where it can end now."""
        starts, ends = dict(start), dict(start)  # a partition that went away keeps its offset
        for key, p in self._partitions().items():
            first = p.kafka_log_start_offset()
            s = starts.setdefault(key, first)
            ends[key] = max(s, self._end(p, max(s, first)))
        return starts, ends

    def latestOffset(self, start: dict, limit) -> dict:
        if self.available_now:  # the ends of the first call, for the whole run
            if self.target is None:
                self.target = self._latest(start)
            firsts, target = self.target
            starts = {k: start.get(k, firsts[k]) for k in target}
            latest = {k: max(v, starts[k]) for k, v in target.items()}
        else:
            starts, latest = self._latest(start)
            if self.min_offsets is not None and self._delay(starts, latest):
                return dict(start)
        if isinstance(limit, ReadMaxRows):
            return _capped(starts, latest, limit.max_rows)
        return latest

    def _delay(self, starts: dict, latest: dict) -> bool:
        """minOffsetsPerTrigger: whether to wait for more (Spark's delayBatch): not once
        maxTriggerDelay has passed since the last micro-batch."""
        now = time.monotonic() * 1000
        if now - self.last_trigger_ms >= self.max_delay_ms:
            self.last_trigger_ms = now
            return False
        if sum(latest[k] - starts[k] for k in latest) < self.min_offsets:
            return True
        self.last_trigger_ms = now
        return False

    def partitions(self, start: dict, end: dict) -> list[SegmentSlice]:
        parts = self._partitions()
        slices = []
        for key, stop in sorted(end.items()):
            p = parts.get(key)
            if p is None:
                continue
            ends = Ends(p, self.opts.read_committed)  # its earliest: where a fetch may begin
            s = start.get(key, ends.earliest)
            if stop > s:
                s = self.request.available(p, s, ends)  # retention may have deleted some
            if stop > s:
                bounds = Bounds(first=s, last=stop - 1)
                slices += plan([p], bounds, split_size=self.opts.split_size or None,
                               read_committed=self.opts.read_committed, below_lso=True)  # fmt: skip
        return slices

    def read(self, partition):
        if isinstance(partition, SegmentSlice):
            yield from records(partition, self.opts)

    def commit(self, end: dict) -> None:
        pass  # the log is never changed by reading it


def _capped(start: dict, ends: dict, most: int) -> dict:
    """ends moved back so that at most about `most` offsets are read, shared in proportion
    to what each partition has waiting, as Spark's KafkaMicroBatchStream.rateLimit shares
    them: a partition's share rounded down, or up when below one (no partition starves)."""
    sizes = {k: ends[k] - start[k] for k in ends if ends[k] - start[k] > 0}
    total = float(sum(sizes.values()))
    if total < 1:
        return ends
    out = dict(ends)
    for k, size in sizes.items():
        prorate = most * (size / total)
        share = math.ceil(prorate) if prorate < 1 else math.floor(prorate)
        out[k] = min(ends[k], start[k] + share)
    return out

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

Options, besides the batch ones (verify_crc, include_control, isolation, on_corrupt,
split_size):
  starting_offsets        earliest (default), latest, or JSON as Spark's kafka source
                          takes it: {"orders": {"0": 1200, "1": -2}} (-2 earliest, -1
                          latest; partitions not named start at earliest)
  max_offsets_per_trigger at most this many offsets per micro-batch, shared across
                          partitions in proportion to what each has waiting
  fail_on_data_loss       true (default): a start offset that retention has already
                          deleted stops the query; false: warn and go on from the
                          partition's first offset
"""

from __future__ import annotations

import json
import warnings

from pyspark.sql.datasource import DataSourceStreamReader
from pyspark.sql.streaming.datasource import ReadAllAvailable, ReadMaxRows

from kafkacodec.generated.kafka_record_batch import KafkaRecordBatch
from kafkacodec.log.partition import Partition, open_transactions
from kafkacodec.records import columnar
from kafkacodec.records.batches import bit_field
from kafkacodec.storage import is_remote

from .options import Options, flag, input_paths, partitions_of
from .read import records
from .scan import Bounds, PipelineError, SegmentSlice, plan

EARLIEST, LATEST = -2, -1


class RecordsStreamReader(DataSourceStreamReader):
    """The kafkacodec format as a stream (one row per record, RECORDS_SCHEMA)."""

    def __init__(self, options: dict):
        self.opts = Options.parse(options)
        self.paths = input_paths(options)
        remote = [str(p) for p in self.paths if is_remote(p)]
        if remote:
            raise PipelineError(f"{remote[0]}: a stream tails log directories as brokers append "
                                "to them; an object store's segments do not grow: read it with "
                                "spark.read (a batch query)")  # fmt: skip
        self.starting = str(options.get("starting_offsets", "earliest")).strip()
        self.fail_on_data_loss = flag(options, "fail_on_data_loss", True)
        raw = options.get("max_offsets_per_trigger")
        try:
            self.max_offsets = None if raw is None else int(raw)
        except ValueError:
            self.max_offsets = 0
        if self.max_offsets is not None and self.max_offsets <= 0:
            raise PipelineError(f"option max_offsets_per_trigger: a count > 0, got {raw!r}")
        self.wanted = self._starting_offsets()

    def _starting_offsets(self) -> dict[str, int] | None:
        if self.starting.lower() in ("earliest", "latest"):
            return None
        try:
            doc = json.loads(self.starting)
            return {f"{topic}-{int(part)}": int(offset)
                    for topic, parts in doc.items() for part, offset in parts.items()}  # fmt: skip
        except (ValueError, AttributeError, TypeError):
            raise PipelineError(
                "option starting_offsets: earliest, latest, or JSON such as "
                f'{{"orders": {{"0": 1200}}}}, got {self.starting!r}'
            ) from None

    # -- the partitions and their ends
    def _partitions(self) -> dict[str, Partition]:
        found: dict[str, Partition] = {}
        for p in partitions_of(self.paths, empty_ok=True):
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
        seg = p.segments[-1]
        # from the last .index entry when it names a batch of the log (Segment.entry_holds,
        # as the batch source checks entries), else from the segment's start
        last = seg.offset_index.last_entry()
        begin = last.position if last.position and seg.entry_holds(last) else 0
        walk = columnar.walk_batches(seg.data, verify_crc=False, source=str(seg.path), start=begin, end=seg.size)
        if walk.error is not None and self.opts.on_corrupt == "fail":
            raise walk.error
        e = walk.entries
        if not len(e) and walk.position > 0:  # no batch where the index points: walk it all
            e = columnar.walk_batches(seg.data, verify_crc=False, end=seg.size).entries
        # After the last batch; an empty segment (just rolled) ends at its base offset.
        end = (
            int(e["base_offset"][-1] + e["last_offset_delta"][-1]) + 1
            if len(e)
            else seg.base_offset
        )
        if self.opts.read_committed:
            end = min(end, self._stable_end(p, start, end))
        return end

    def _stable_end(self, p: Partition, start: int, end: int) -> int:
        """The first offset of the earliest transaction in [start, end) still open at end."""
        return min(open_transactions(p, start, end).values(), default=end)

    # -- DataSourceStreamReader
    def initialOffset(self) -> dict:
        parts = self._partitions()
        offsets = {}
        for key, p in parts.items():
            first = p.kafka_log_start_offset()
            wanted = EARLIEST if self.wanted is None else self.wanted.get(key, EARLIEST)
            if self.wanted is None and self.starting.lower() == "latest":
                wanted = LATEST
            if wanted == LATEST:
                offsets[key] = self._end(p, first)
            else:
                offsets[key] = first if wanted == EARLIEST else wanted
        return offsets

    def getDefaultReadLimit(self):
        return ReadAllAvailable() if self.max_offsets is None else ReadMaxRows(self.max_offsets)

    def latestOffset(self, start: dict, limit) -> dict:
        starts, ends = dict(start), dict(start)  # a partition that went away keeps its offset
        for key, p in self._partitions().items():
            first = p.kafka_log_start_offset()
            s = starts.setdefault(key, first)  # a new partition: from its start
            ends[key] = max(s, self._end(p, max(s, first)))
        if isinstance(limit, ReadMaxRows):
            ends = _capped(starts, ends, limit.max_rows)
        return ends

    def partitions(self, start: dict, end: dict) -> list[SegmentSlice]:
        parts = self._partitions()
        slices = []
        for key, stop in sorted(end.items()):
            p = parts.get(key)
            if p is None:
                continue
            first = p.kafka_log_start_offset()  # where a consumer's fetch may begin
            s = start.get(key, first)
            if s < first and stop > s:
                lost = f"{p.path}: offsets {s} to {first - 1} were deleted before they were read"
                if self.fail_on_data_loss:
                    raise PipelineError(f"{lost} (option fail_on_data_loss=false goes on)")
                warnings.warn(lost, stacklevel=2)
                s = first
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
    """ends moved back so that at most `most` offsets are read, shared in proportion to
    what each partition has waiting (each gets at least one while any is left)."""
    waiting = {k: ends[k] - start[k] for k in ends}
    total = sum(w for w in waiting.values() if w > 0)
    if total <= most:
        return ends
    out = dict(ends)
    budget = most
    for k, w in sorted(waiting.items(), key=lambda kv: kv[1]):
        if w <= 0:
            continue
        share = min(w, max(1, most * w // total), budget)
        out[k] = start[k] + share
        budget -= share
    return out

"""The streaming reader (kafkacodec.pipeline.stream): offsets, complete batches only, new
segments and partitions, read_committed, restarts. Most tests drive the reader as Spark
does (initialOffset, latestOffset, partitions, read) without a SparkSession; one runs a
real streaming query from a checkpoint on a local Spark."""

import hashlib
import json
import os
import sys

import pyarrow as pa
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from test_readme import code_block, exec_shown

pytest.importorskip("pyspark")

from pyspark.sql.streaming.datasource import ReadAllAvailable, ReadMaxRows  # noqa: E402

from kafkacodec.log.writer import PartitionWriter  # noqa: E402
from kafkacodec.pipeline.scan import PipelineError  # noqa: E402
from kafkacodec.pipeline.stream import RecordsStreamReader  # noqa: E402
from kafkacodec.records.batches import Record  # noqa: E402
from kafkacodec.records.builders import build_batch, build_control_batch  # noqa: E402

pytestmark = [pytest.mark.spark]

T0 = 1_700_000_000_000
CODECS = ("none", "gzip", "snappy", "lz4", "zstd")


def _value(offset: int) -> bytes:
    return hashlib.sha256(b"%d" % offset).digest() * 2  # 64 bytes that do not compress


class Log:
    """A topic directory being written, batch by batch, as a broker would."""

    def __init__(self, root, name="events-0", segment_bytes=4 << 10):
        self.writer = PartitionWriter(root / name, segment_bytes=segment_bytes,
                                      index_interval_bytes=1024, fsync=False)  # fmt: skip
        self.i = 0

    def append(self, n=10, **kw) -> list[int]:
        w = self.writer
        base = w.next_offset
        recs = [
            Record(None, T0 + base + j, b"k%d" % (base + j), _value(base + j)) for j in range(n)
        ]
        w.append(build_batch(recs, base_offset=base, compression=CODECS[self.i % 5], **kw))
        self.i += 1
        return list(range(base, base + n))

    def marker(self, commit: bool, producer_id: int) -> None:
        w = self.writer
        w.append(build_control_batch(commit, offset=w.next_offset, timestamp=T0, producer_id=producer_id,
                                     producer_epoch=0, coordinator_epoch=1))  # fmt: skip


def micro_batch(reader, start, limit=None):
    """What Spark does for one micro-batch: the end, then the rows of [start, end)."""
    end = reader.latestOffset(start, limit or ReadAllAvailable())
    rows = []
    for s in reader.partitions(start, end):
        for b in reader.read(s):
            rows += pa.Table.from_batches([b]).select(["topic", "partition", "offset"]).to_pylist()
    return end, [(r["topic"], r["partition"], r["offset"]) for r in rows]


def test_tails_a_growing_partition_without_loss_or_repeat(tmp_path):
    log = Log(tmp_path)
    written = log.append() + log.append()
    reader = RecordsStreamReader({"startingOffsets": "earliest", "path": str(tmp_path)})
    start = reader.initialOffset()
    assert start == {"events-0": 0}
    seen = []
    for _ in range(40):  # several segment rolls (4 KiB segments)
        start, rows = micro_batch(reader, start)
        seen += [r[2] for r in rows]
        written += log.append(n=7)
    start, rows = micro_batch(reader, start)
    seen += [r[2] for r in rows]
    assert seen == written
    assert len(list((tmp_path / "events-0").glob("*.log"))) > 3
    assert micro_batch(reader, start) == (start, [])  # nothing new: the same offsets


def test_a_batch_being_written_waits_for_its_last_byte(tmp_path):
    log = Log(tmp_path)
    first = log.append()
    reader = RecordsStreamReader({"startingOffsets": "earliest", "path": str(tmp_path)})
    start = reader.initialOffset()
    seg = next((tmp_path / "events-0").glob("*.log"))
    whole = build_batch([Record(None, T0, b"k", b"late")], base_offset=log.writer.next_offset)
    with open(seg, "ab") as f:
        f.write(whole[:-5])  # a broker half-way through an append
    start, rows = micro_batch(reader, start)
    assert [r[2] for r in rows] == first
    with open(seg, "ab") as f:
        f.write(whole[-5:])
    start, rows = micro_batch(reader, start)
    assert [r[2] for r in rows] == [first[-1] + 1] and start == {"events-0": first[-1] + 2}


def test_new_partitions_are_read_from_their_start(tmp_path):
    Log(tmp_path, "a-0").append()
    reader = RecordsStreamReader({"startingOffsets": "earliest", "path": str(tmp_path)})
    start, rows = micro_batch(reader, reader.initialOffset())
    assert {r[0] for r in rows} == {"a"}
    later = Log(tmp_path, "b-3")
    expected = later.append() + later.append()
    start, rows = micro_batch(reader, start)
    assert rows == [("b", 3, o) for o in expected] and start["b-3"] == expected[-1] + 1


def test_restart_from_a_checkpointed_offset(tmp_path):
    log = Log(tmp_path)
    written = log.append() + log.append()
    first = RecordsStreamReader({"startingOffsets": "earliest", "path": str(tmp_path)})
    end, rows = micro_batch(first, first.initialOffset())
    checkpoint = json.loads(json.dumps(end))  # what Spark keeps
    written += log.append()
    again = RecordsStreamReader({"startingOffsets": "earliest", "path": str(tmp_path)})  # a new query process
    _, more = micro_batch(again, checkpoint)
    assert [r[2] for r in rows + more] == written


def test_starting_offsets(tmp_path):
    log = Log(tmp_path)
    written = log.append() + log.append()
    latest = RecordsStreamReader({"path": str(tmp_path), "starting_offsets": "latest"})
    assert latest.initialOffset() == {"events-0": written[-1] + 1}
    spec = json.dumps({"events": {"0": 5}})
    given = RecordsStreamReader({"path": str(tmp_path), "starting_offsets": spec})
    _, rows = micro_batch(given, given.initialOffset())
    assert [r[2] for r in rows] == written[5:]
    with pytest.raises(PipelineError, match="startingOffsets"):
        RecordsStreamReader({"path": str(tmp_path), "starting_offsets": "yesterday"})
    # Spark's default for a stream: latest
    assert RecordsStreamReader({"path": str(tmp_path)}).initialOffset() == {"events-0": written[-1] + 1}


def test_max_offsets_per_trigger(tmp_path):
    a, b = Log(tmp_path, "a-0"), Log(tmp_path, "b-0")
    for _ in range(6):
        a.append()
    b.append()
    reader = RecordsStreamReader({"startingOffsets": "earliest", "path": str(tmp_path), "max_offsets_per_trigger": "14"})
    limit = reader.getDefaultReadLimit()
    assert isinstance(limit, ReadMaxRows) and limit.max_rows == 14
    start, seen, sizes = reader.initialOffset(), [], []
    while True:
        start, rows = micro_batch(reader, start, limit)
        if not rows:
            break
        sizes.append(len(rows))
        seen += rows
    assert max(sizes) <= 14 and len(seen) == 70 == len(set(seen))


def test_read_committed_stops_at_an_open_transaction(tmp_path):
    log = Log(tmp_path)
    before = log.append()
    txn = log.append(producer_id=7, producer_epoch=0, is_transactional=True, base_sequence=0)
    after = log.append()  # not transactional, but after the open transaction
    reader = RecordsStreamReader({"startingOffsets": "earliest", "path": str(tmp_path), "isolation": "read_committed"})
    start, rows = micro_batch(reader, reader.initialOffset())
    assert [r[2] for r in rows] == before and start == {"events-0": txn[0]}
    log.marker(True, producer_id=7)
    start, rows = micro_batch(reader, start)
    assert [r[2] for r in rows] == txn + after  # the marker itself is not data


def test_data_deleted_before_it_was_read(tmp_path):
    log = Log(tmp_path, segment_bytes=2 << 10)
    for _ in range(10):
        log.append()
    reader = RecordsStreamReader({"startingOffsets": "earliest", "path": str(tmp_path)})
    start = reader.initialOffset()
    first = sorted((tmp_path / "events-0").glob("*.log"))[0]
    for suffix in (".log", ".index", ".timeindex"):
        first.with_suffix(suffix).unlink(missing_ok=True)  # retention
    with pytest.raises(PipelineError, match="deleted before they were read"):
        micro_batch(reader, start)
    lenient = RecordsStreamReader({"startingOffsets": "earliest", "path": str(tmp_path), "fail_on_data_loss": "false"})
    with pytest.warns(UserWarning, match="deleted"):
        _, rows = micro_batch(lenient, start)
    assert rows and rows[0][2] > 0


def test_a_streaming_query_restarts_from_its_checkpoint(tmp_path):
    """On a local Spark: two availableNow runs of one query, data appended in between;
    every record lands in the sink exactly once."""
    import os

    from kafkacodec.pipeline import jobs

    os.environ["PYSPARK_PYTHON"] = sys.executable
    log = Log(tmp_path / "logs")
    written = log.append() + log.append()
    spark = jobs.session("local[2]")
    try:

        def run():
            q = (
                spark.readStream.format("kafkacodec").option("startingOffsets", "earliest")
                .load(str(tmp_path / "logs"))
                .select("topic", "partition", "offset", "value")
                .writeStream.format("parquet").option("path", str(tmp_path / "sink"))
                .option("checkpointLocation", str(tmp_path / "checkpoint"))
                .trigger(availableNow=True).start()
            )  # fmt: skip
            q.awaitTermination(180)
            assert q.exception() is None

        run()
        written += log.append() + log.append(n=3)
        run()
        got = sorted(r["offset"] for r in spark.read.parquet(str(tmp_path / "sink")).collect())
        # docs/spark.md's query, as the page shows it (its paths here's): every record lands
        shown = {"/var/lib/kafka": "logs", "/data/orders-checkpoint": "page-checkpoint", "/data/orders": "page-sink"}
        q = exec_shown(code_block("docs/spark.md", "readStream.format"),
                       {literal: str(tmp_path / here) for literal, here in shown.items()}, {"spark": spark})["q"]  # fmt: skip
        try:
            q.processAllAvailable()
        finally:
            q.stop()
        sunk = spark.read.parquet(str(tmp_path / "page-sink"))
        page_got = sorted(r["offset"] for r in sunk.collect())
    finally:
        spark.stop()
    assert got == written
    assert page_got == written and "value" in sunk.columns


@settings(max_examples=int(os.environ.get("KAFKACODEC_STREAM_EXAMPLES", 60)), deadline=None)
@given(st.data())
def test_any_schedule_of_appends_and_triggers_reads_each_record_once(tmp_path_factory, data):
    """Appends (whole batches, some written in two halves), segment rolls, new partitions,
    triggers with and without a limit, and restarts from the last end, in any order: the
    stream gives every complete record exactly once, in offset order per partition."""
    root = tmp_path_factory.mktemp("stream")
    logs = {"a-0": Log(root, "a-0", segment_bytes=2 << 10)}
    written = {"a-0": []}
    half = {}  # partition -> the rest of a batch written half-way
    committed = data.draw(st.booleans())
    options = {
        "path": str(root), "startingOffsets": "earliest",
        "isolation": "read_committed" if committed else "read_uncommitted",
    }
    reader = RecordsStreamReader(options)
    start = reader.initialOffset()
    seen = []
    for step in data.draw(st.lists(st.sampled_from(
            ["append", "append", "half", "finish", "partition", "trigger", "limited", "restart"]),
            min_size=1, max_size=25)):  # fmt: skip
        name = data.draw(st.sampled_from(sorted(logs)))
        if step == "append" and name not in half:
            written[name] += logs[name].append(n=data.draw(st.integers(1, 12)))
        elif step == "half" and name not in half and list(logs[name].writer.path.glob("*.log")):
            log = logs[name]
            base = log.writer.next_offset
            whole = build_batch([Record(None, T0, b"h", _value(base))], base_offset=base)
            seg = sorted(log.writer.path.glob("*.log"))[-1]
            cut = data.draw(st.integers(1, len(whole) - 1))
            with open(seg, "ab") as f:
                f.write(whole[:cut])
            half[name] = (seg, whole[cut:], base)
        elif step == "finish" and name in half:
            seg, rest, base = half.pop(name)
            with open(seg, "ab") as f:
                f.write(rest)
            log = logs[name]  # the writer learns of the batch by reopening
            log.writer.close()
            log.writer = PartitionWriter(log.writer.path, segment_bytes=2 << 10,
                                         index_interval_bytes=1024, fsync=False)  # fmt: skip
            written[name].append(base)
        elif step == "partition" and len(logs) < 3:
            new = f"p{len(logs)}-{len(logs)}"
            logs[new], written[new] = Log(root, new, segment_bytes=2 << 10), []
        elif step in ("trigger", "limited"):
            limit = ReadMaxRows(data.draw(st.integers(1, 30))) if step == "limited" else None
            start, rows = micro_batch(reader, start, limit)
            seen += rows
        elif step == "restart":
            reader = RecordsStreamReader(options)
            start = json.loads(json.dumps(start))
    for name, (seg, rest, base) in list(half.items()):
        with open(seg, "ab") as f:
            f.write(rest)
        written[name].append(base)
    while True:
        start, rows = micro_batch(reader, start)
        if not rows:
            break
        seen += rows
    expected = sorted((n.rsplit("-", 1)[0], int(n.rsplit("-", 1)[1]), o)
                      for n, offs in written.items() for o in offs)  # fmt: skip
    assert sorted(seen) == expected and len(seen) == len(set(seen))
    for name in logs:  # within a partition, in offset order
        topic, part = name.rsplit("-", 1)
        mine = [r[2] for r in seen if r[:2] == (topic, int(part))]
        assert mine == sorted(mine)


@pytest.mark.parametrize("damage", ["past the end", "inside a batch"])
def test_a_wrong_last_index_entry_is_not_trusted(tmp_path, damage):
    """The active segment's last .index entry is checked against the log before the end of
    the log is looked for from it (as the batch source checks it): one past the end of the
    log, or pointing inside a batch, makes the stream walk the segment instead."""
    log = Log(tmp_path, segment_bytes=1 << 20)
    offsets = [o for _ in range(20) for o in log.append()]
    log.writer.close()
    index = next((tmp_path / "events-0").glob("*.index"))
    raw = bytearray(index.read_bytes())
    assert len(raw) >= 16  # entries were written (index_interval_bytes)
    size = next((tmp_path / "events-0").glob("*.log")).stat().st_size
    position = size + 4096 if damage == "past the end" else int.from_bytes(raw[-4:], "big") + 7
    raw[-4:] = position.to_bytes(4, "big")
    index.write_bytes(bytes(raw))
    reader = RecordsStreamReader({"startingOffsets": "earliest", "path": str(tmp_path)})
    end, rows = micro_batch(reader, reader.initialOffset())
    assert end == {"events-0": offsets[-1] + 1}
    assert [r[2] for r in rows] == offsets


def test_available_now_reads_what_was_there_in_capped_micro_batches(tmp_path):
    """Trigger.AvailableNow (prepareForTriggerAvailableNow): the ends are those at the
    first latestOffset; maxOffsetsPerTrigger still caps each micro-batch; what is appended
    meanwhile is left for the next run, which a restarted reader reaches from the end the
    last run committed."""
    a, b = Log(tmp_path, "a-0"), Log(tmp_path, "b-0")
    there = [("a", 0, o) for _ in range(6) for o in a.append()] + [("b", 0, o) for o in b.append()]
    reader = RecordsStreamReader({"path": str(tmp_path), "startingOffsets": "earliest",
                                  "maxOffsetsPerTrigger": "13"})  # fmt: skip
    reader.prepareForTriggerAvailableNow()
    start, seen, sizes = reader.initialOffset(), [], []
    while True:
        end, rows = micro_batch(reader, start, reader.getDefaultReadLimit())
        later = a.append()  # appended during the run: not for this run
        if end == start:
            break
        start = end
        sizes.append(len(rows))
        seen += rows
    assert sorted(seen) == sorted(there) and max(sizes) <= 13 and len(sizes) >= 5
    again = RecordsStreamReader({"path": str(tmp_path), "startingOffsets": "earliest"})
    again.prepareForTriggerAvailableNow()
    end, rows = micro_batch(again, start)
    assert [r[2] for r in rows] == list(range(60, later[-1] + 1)) and again.latestOffset(end, ReadAllAvailable()) == end


def test_min_offsets_per_trigger_waits_for_enough_or_for_max_trigger_delay(tmp_path):
    log = Log(tmp_path)
    log.append(n=5)
    reader = RecordsStreamReader({"path": str(tmp_path), "startingOffsets": "earliest",
                                  "minOffsetsPerTrigger": "20", "maxTriggerDelay": "1h"})  # fmt: skip
    start = reader.initialOffset()
    reader.latestOffset(start, ReadAllAvailable())  # the first trigger runs (no batch before it)
    assert reader.latestOffset(start, ReadAllAvailable()) == start  # 5 < 20: waits
    log.append(n=20)
    assert reader.latestOffset(start, ReadAllAvailable()) == {"events-0": 25}
    with pytest.raises(PipelineError, match="maxTriggerDelay"):
        RecordsStreamReader({"path": str(tmp_path), "maxTriggerDelay": "soon"})

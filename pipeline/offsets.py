"""The `kafkacodec_offsets` format: one row per offset commit of `__consumer_offsets`,
decoded with the codecs generated from Kafka's message specs (kafkacodec.internal):
group, topic, partition, committed offset, leader epoch, metadata, commit and expire
timestamps, and whether the record is a tombstone (a deleted commit), with where it is in
__consumer_offsets. Group metadata and the other coordinator records are left out.

It reads __consumer_offsets only (the topics option is ignored), with the options of the
records format: isolation read_committed drops commits of aborted transactions; on_corrupt
applies to records that do not decode too (fail names the segment and offset; skip and
report leave them out).
"""

from __future__ import annotations

import warnings
from dataclasses import replace

import pyarrow as pa

from kafkacodec.internal.codecs import DEFAULT
from kafkacodec.internal.groups import OFFSET_COMMIT_TYPES, OFFSETS_TOPIC, read_commit
from kafkacodec.runtime.errors import DecodeError

from .options import Options
from .read import records
from .scan import SegmentSlice

__all__ = ["OFFSETS_SCHEMA", "offset_commits"]

OFFSETS_SCHEMA = (
    "group string, topic string, partition int, committed_offset long, leader_epoch int, "
    "metadata string, commit_timestamp timestamp, expire_timestamp timestamp, tombstone boolean, "
    "value_version short, offsets_partition int, offset long, timestamp timestamp, "
    "is_transactional boolean, segment string, position long"
)
_FIELDS = [f.split()[0] for f in OFFSETS_SCHEMA.split(", ")]


_TS = pa.timestamp("us", tz="UTC")  # Spark's timestamps (read.py)


def _ms(v):
    """A commit's milliseconds as Spark's microseconds; null for -1 (none)."""
    return None if v is None or v < 0 else v * 1000


def offset_commits(s: SegmentSlice, opts: Options):
    """The offset commits of one slice of __consumer_offsets, as Arrow record batches."""
    if s.topic != OFFSETS_TOPIC:
        return
    for batch in records(s, replace(opts, include_metadata=True)):
        cols: dict[str, list] = {name: [] for name in _FIELDS}
        t = batch.to_pydict()
        rows = [
            i for i in range(batch.num_rows) if not t["is_control"][i] and t["key"][i] is not None
        ]
        decoded = DEFAULT.coordinator_pairs(
            OFFSETS_TOPIC, [(t["key"][i], t["value"][i]) for i in rows]
        )
        for i, got in zip(rows, decoded):
            if isinstance(got, DecodeError):
                if int.from_bytes(t["key"][i][:2], "big", signed=True) not in OFFSET_COMMIT_TYPES:
                    continue  # a record of another type: not this format's to judge
                where = f"{s.directory}/{t['segment'][i]} offset {t['offset'][i]}"
                if opts.on_corrupt == "fail":
                    raise got.with_source(where)
                if opts.on_corrupt == "skip":
                    warnings.warn(
                        f"{where}: skipped a record that does not decode: {got}", stacklevel=2
                    )
                continue
            record_type, k, version, v = got
            if record_type not in OFFSET_COMMIT_TYPES:
                continue
            (group, topic, partition), c = read_commit(k, v, t["offset"][i])
            row = {
                "group": group, "topic": topic, "partition": partition,
                "committed_offset": None if c is None else c.offset,
                "leader_epoch": None if c is None else c.leader_epoch,
                "metadata": None if c is None else c.metadata,
                "commit_timestamp": None if c is None else _ms(c.commit_timestamp),
                "expire_timestamp": None if c is None else _ms(c.expire_timestamp),
                "tombstone": c is None, "value_version": None if c is None else version,
                "offsets_partition": t["partition"][i], "offset": t["offset"][i],
                "timestamp": t["timestamp"][i], "is_transactional": t["is_transactional"][i],
                "segment": t["segment"][i], "position": t["position"][i],
            }  # fmt: skip
            for name in _FIELDS:
                cols[name].append(row[name])
        if cols["group"]:
            yield pa.record_batch([
                pa.array(cols["group"], pa.string()), pa.array(cols["topic"], pa.string()),
                pa.array(cols["partition"], pa.int32()), pa.array(cols["committed_offset"], pa.int64()),
                pa.array(cols["leader_epoch"], pa.int32()), pa.array(cols["metadata"], pa.string()),
                pa.array(cols["commit_timestamp"], _TS), pa.array(cols["expire_timestamp"], _TS),
                pa.array(cols["tombstone"], pa.bool_()), pa.array(cols["value_version"], pa.int16()),
                pa.array(cols["offsets_partition"], pa.int32()), pa.array(cols["offset"], pa.int64()),
                pa.array(cols["timestamp"], _TS),
                pa.array(cols["is_transactional"], pa.bool_()), pa.array(cols["segment"], pa.string()),
                pa.array(cols["position"], pa.int64()),
            ], names=_FIELDS)  # fmt: skip

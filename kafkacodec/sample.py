"""A sample log.dirs, written with the project's own builders and PartitionWriter: several
topics and partitions covering every magic and codec, headers, idempotent and
transactional producers with COMMIT and ABORT markers, LogAppendTime, leader epochs and
rolled segments. Deterministic: the same call writes the same bytes."""

from __future__ import annotations

import os
import shutil
from pathlib import Path

from .log.writer import PartitionWriter
from .records.batches import Record
from .records.builders import build_batch, build_control_batch, build_message_set

__all__ = ["write_sample_log_dirs", "write_sized_log_dirs", "write_damaged_copy", "write_consumer_offsets"]

T0 = 1_700_000_000_000
V2_CODECS = ("none", "gzip", "snappy", "lz4", "zstd")
LEGACY = ((0, "none"), (0, "gzip"), (0, "snappy"), (0, "lz4"),
          (1, "none"), (1, "gzip"), (1, "snappy"), (1, "lz4"))  # fmt: skip


def _orders(w: PartitionWriter, partition: int, batches: int) -> None:
    """v2 batches of every codec; every fifth batch belongs to a transaction that the next
    control batch commits or (every other time) aborts."""
    offset, ts, txn = 0, T0 + partition * 7, 0
    for i in range(batches):
        codec = V2_CODECS[i % len(V2_CODECS)]
        epoch = i // 40
        n = 5 + i % 11
        recs = [
            Record(None, ts + j * 10, f"customer-{(offset + j) % 17}".encode(),
                   f'{{"order": {offset + j}, "amount": {(offset + j) * 7 % 1000}}}'.encode(),
                   [("source", b"web" if j % 2 else b"app"), ("trace", f"{i}-{j}".encode())])
            for j in range(n)
        ]  # fmt: skip
        transactional = i % 5 == 4
        pid = 1000 + partition if not transactional else 2000 + txn
        w.append(build_batch(recs, base_offset=offset, compression=codec, producer_id=pid,
                             producer_epoch=0, base_sequence=offset if not transactional else 0,
                             is_transactional=transactional, partition_leader_epoch=epoch))  # fmt: skip
        offset += n
        ts += n * 10
        if transactional:
            w.append(build_control_batch(txn % 2 == 0, offset=offset, timestamp=ts, producer_id=pid,
                                         producer_epoch=0, coordinator_epoch=1,
                                         partition_leader_epoch=epoch))  # fmt: skip
            offset += 1
            txn += 1


def _clicks(w: PartitionWriter, batches: int) -> None:
    """LogAppendTime batches: the broker's clock stamps every record."""
    offset = 0
    for i in range(batches):
        recs = [Record(None, T0 + i, None, f"click {offset + j}".encode()) for j in range(20)]
        w.append(build_batch(recs, base_offset=offset, compression=V2_CODECS[i % 5],
                             timestamp_type="LogAppendTime", log_append_time=T0 + 1000 * i))  # fmt: skip
        offset += 20


def _legacy(w: PartitionWriter, rounds: int) -> None:
    """Message sets of magic 0 and 1, uncompressed and in wrappers of each codec."""
    offset = 0
    for _ in range(rounds):
        for magic, codec in LEGACY:
            recs = [Record(None, T0 + offset + j, f"k{offset + j}".encode(), f"legacy value {offset + j}".encode())
                    for j in range(4)]  # fmt: skip
            w.append(build_message_set(recs, magic=magic, compression=codec, base_offset=offset))
            offset += 4


def write_sample_log_dirs(root, *, batches: int = 400, segment_bytes: int = 64 << 10) -> Path:
    """Write a fresh sample log.dirs at `root` (removing what was there) and return it."""
    root = Path(root)
    if root.exists():
        shutil.rmtree(root)
    root.mkdir(parents=True)
    opts = {"segment_bytes": segment_bytes, "index_interval_bytes": 4096, "fsync": False}
    for p in (0, 1):
        with PartitionWriter(root / f"orders-{p}", **opts) as w:
            _orders(w, p, batches)
    with PartitionWriter(root / "clicks-0", **opts) as w:
        _clicks(w, max(1, batches // 4))
    with PartitionWriter(root / "legacy-events-0", **opts) as w:
        _legacy(w, max(1, batches // 40))
    return root


def write_sized_log_dirs(root, *, records: int | None = 100_000, size: int | None = None,
                         partitions: int = 4, codecs=V2_CODECS, topic: str = "sample",
                         record_bytes: int = 100, batch_records: int = 50,
                         segment_bytes: int = 1 << 30, progress=None) -> dict:  # fmt: skip
    """A log.dirs of any size for trying the pipeline at scale (`kafkacodec sample`):
    `partitions` directories `<topic>-<n>`, batches of `batch_records` JSON-like records of
    about `record_bytes` bytes, compressed with each of `codecs` in turn, timestamps 10 ms
    apart, until `records` records or `size` bytes on disk (whichever comes first). Refuses
    a root that exists and is not empty. Returns what was written.

    The log.dirs is written beside root (a hidden `.<name>.sample-<pid>`) and renamed to
    root when whole: stopped at any moment (Ctrl-C, an error, a full disk), it leaves
    nothing (what was written is removed), and a second run starts afresh."""
    root = Path(root)
    if root.exists() and (not root.is_dir() or any(root.iterdir())):
        raise FileExistsError(f"{root}: exists and is not empty; sample writes a new log.dirs")
    if records is None and size is None:
        raise ValueError("give records or size")
    if partitions < 1 or batch_records < 1 or not codecs:
        raise ValueError("partitions, batch_records and codecs must be at least 1")
    root.parent.mkdir(parents=True, exist_ok=True)
    stage = root.parent / f".{root.name}.sample-{os.getpid()}"
    shutil.rmtree(stage, ignore_errors=True)
    try:
        written = _write_sized(stage, records, size, partitions, codecs, topic, record_bytes,
                               batch_records, segment_bytes, progress)  # fmt: skip
        os.replace(stage, root)  # onto an empty root, or none
    except BaseException:
        shutil.rmtree(stage, ignore_errors=True)
        raise
    return {**written, "partitions": partitions, "root": str(root)}


def _write_sized(root: Path, records, size, partitions, codecs, topic, record_bytes, batch_records,
                 segment_bytes, progress) -> dict:  # fmt: skip
    writers = [PartitionWriter(root / f"{topic}-{p}", segment_bytes=segment_bytes, fsync=False)
               for p in range(partitions)]  # fmt: skip
    pad = "x" * max(0, record_bytes - 60)
    written = {"records": 0, "bytes": 0, "batches": 0}
    nxt = [0] * partitions
    try:
        while (records is None or written["records"] < records) and (
            size is None or written["bytes"] < size
        ):
            p = written["batches"] % partitions
            n = (
                batch_records
                if records is None
                else min(batch_records, records - written["records"])
            )
            base = nxt[p]
            recs = [Record(None, T0 + (base + j) * 10, f"key-{(base + j) % 1000}".encode(),
                           f'{{"id": {base + j}, "user": "u{(base + j) * 7919 % 9973}", "pad": "{pad}"}}'.encode(),
                           [("source", b"kafkacodec-sample")])
                    for j in range(n)]  # fmt: skip
            data = build_batch(
                recs, base_offset=base, compression=codecs[written["batches"] % len(codecs)]
            )
            writers[p].append(data)
            nxt[p] += n
            written["records"] += n
            written["bytes"] += len(data)
            written["batches"] += 1
            if progress is not None:
                progress(len(data))
    finally:
        for w in writers:
            w.close()
    return written


def write_damaged_copy(partition, root, *, base_offsets=(1912, 2367)) -> Path:
    """root/<the partition's name>: a copy of a partition directory whose batches at these
    base offsets are damaged (each one's last byte inverted, inside its records: a CRC
    mismatch), to try verify, records --skip-corrupt and recover on (`make demo` writes
    out/damaged from the sample's orders-0). root must not hold that partition already."""
    from .log.partition import Partition

    src = Path(partition)
    out = Path(root) / src.name
    out.parent.mkdir(parents=True, exist_ok=True)
    shutil.copytree(src, out)
    with Partition(out) as part:
        spots = {seg.path: [b.position + b.size - 1 for b in seg.batches() if b.base_offset in base_offsets]
                 for seg in part.segments}  # fmt: skip
    for path, positions in spots.items():
        if positions:
            data = bytearray(Path(path).read_bytes())
            for at in positions:
                data[at] ^= 0xFF
            Path(path).write_bytes(bytes(data))
    return out


def write_consumer_offsets(root, *, commits: int = 300, seed: int = 7) -> Path:
    """root/__consumer_offsets-0: `commits` offset commits as a group coordinator appends
    them (OffsetCommitKey version 1, OffsetCommitValue version 3, ten commits a batch):
    three groups consuming orders-0 and orders-1, each commit a little further on, to try
    `groups` and `dump --offsets-decoder` on (`make demo` writes out/consumer-offsets)."""
    import random

    from .generated.consumer_offsets_key import ConsumerOffsetsKey
    from .generated.consumer_offsets_value import ConsumerOffsetsValue
    from .generated.offset_commit_key import OffsetCommitKey
    from .generated.offset_commit_value import OffsetCommitValue

    rnd = random.Random(seed)
    at = {(g, p): 0 for g in ("billing", "shipping", "analytics") for p in (0, 1)}
    part = Path(root) / "__consumer_offsets-0"
    with PartitionWriter(part, segment_bytes=1 << 30, fsync=False) as w:
        for first in range(0, commits, 10):
            records = []
            for i in range(first, min(first + 10, commits)):
                group, partition = rnd.choice(sorted(at))
                at[group, partition] += rnd.randrange(10, 60)
                stamp = T0 + 1000 * i
                key = ConsumerOffsetsKey(record_type=1, key=OffsetCommitKey(
                    version=1, group=group, topic="orders", partition=partition))  # fmt: skip
                value = ConsumerOffsetsValue(record_type=1, version=3, value=OffsetCommitValue(
                    version=3, offset=at[group, partition], leader_epoch=0, metadata="",
                    commit_timestamp=stamp))  # fmt: skip
                records.append(Record(None, stamp, key.build(), value.build()))
            w.append(build_batch(records, base_offset=first))
    return part

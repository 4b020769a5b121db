"""Benchmark of kafkacodec.log: lookups per second on a partition of 1,000 segments, and
the memory used while walking a large segment.

python -m bench.log [--segments N] [--walk-mb M]. Writes bench/results/log.json.
"""

from __future__ import annotations

import argparse
import random
import tempfile
import time
from pathlib import Path

import kafkacodec as kc
from bench import rss_anon_kb, save
from kafkacodec.log import Partition, PartitionWriter, Segment

VALUE = b"v" * 100


def build_partition(path: Path, segments: int, batches_per_segment: int = 40) -> int:
    recs = [kc.Record(None, 0, b"key-%03d" % i, VALUE) for i in range(20)]
    batch_size = len(kc.build_batch(recs))
    offset = 0
    with PartitionWriter(
        path, segment_bytes=batch_size * batches_per_segment, index_interval_bytes=4096, fsync=False
    ) as w:
        for _ in range(segments * batches_per_segment):
            for j, r in enumerate(recs):
                r.timestamp = 1_700_000_000_000 + offset + j
            w.append(kc.build_batch(recs, base_offset=offset))
            offset += len(recs)
    return offset


def bench_lookups(path: Path, end_offset: int, n: int = 20000) -> dict:
    t = time.perf_counter()
    p = Partition(path)
    opened = time.perf_counter() - t
    rng = random.Random(7)
    targets = [rng.randrange(end_offset) for _ in range(n)]
    t = time.perf_counter()
    for off in targets:
        p.segment_for(off).translate_offset(off)
    by_offset = n / (time.perf_counter() - t)
    stamps = [1_700_000_000_000 + rng.randrange(end_offset) for _ in range(n // 10)]
    for s in p.segments:  # warm: every segment's indexes mapped once
        s.max_timestamp_so_far()
    t = time.perf_counter()
    for ts in stamps:
        p.list_offsets(ts)
    by_ts = len(stamps) / (time.perf_counter() - t)
    return {"segments": len(p.segments), "open_seconds": opened, "translate_offset_per_s": by_offset,
            "list_offsets_by_timestamp_per_s": by_ts}  # fmt: skip


def bench_walk(path: Path, megabytes: int) -> dict:
    recs = [kc.Record(None, 1_700_000_000_000, b"key", b"x" * 1000) for _ in range(100)]
    batch = bytearray(kc.build_batch(recs))
    seg = path / "00000000000000000000.log"
    n = megabytes * 1_000_000 // len(batch)
    with open(seg, "wb") as f:
        for i in range(n):
            batch[0:8] = (i * 100).to_bytes(8, "big")  # base offset (outside the CRC)
            f.write(batch)
    before = rss_anon_kb()
    peak = before
    t = time.perf_counter()
    s = Segment(path, 0)
    count = 0
    for _batch in s.batches(verify_crc=True):
        count += 1
        if count % 1000 == 0:
            peak = max(peak, rss_anon_kb())
    seconds = time.perf_counter() - t
    s.close()
    return {"segment_bytes": seg.stat().st_size, "batches": count, "seconds": seconds,
            "GB_per_s": seg.stat().st_size / seconds / 1e9, "rss_anon_growth_kb": peak - before}  # fmt: skip


def main(argv=None):
    ap = argparse.ArgumentParser(prog="python -m bench.log")
    ap.add_argument("--segments", type=int, default=1000)
    ap.add_argument("--walk-mb", type=int, default=1000)
    args = ap.parse_args(argv)
    with tempfile.TemporaryDirectory() as tmp:
        part = Path(tmp) / "bench-0"
        end = build_partition(part, args.segments)
        look = bench_lookups(part, end)
    with tempfile.TemporaryDirectory() as tmp:
        walk = bench_walk(Path(tmp), args.walk_mb)
    print(
        f"partition of {look['segments']} segments: opened in {look['open_seconds'] * 1000:.1f} ms"
    )
    print(f"  translate_offset  {look['translate_offset_per_s']:>10,.0f} lookups/s")
    print(f"  list_offsets(ts)  {look['list_offsets_by_timestamp_per_s']:>10,.0f} lookups/s")
    print(f"walk of a {walk['segment_bytes'] / 1e6:,.0f} MB segment with CRC checks: {walk['batches']:,} batches in "
          f"{walk['seconds']:.1f} s ({walk['GB_per_s']:.2f} GB/s), anonymous memory grew {walk['rss_anon_growth_kb']} kB")  # fmt: skip
    save("log", {"lookups": look, "walk": walk})


if __name__ == "__main__":
    main()

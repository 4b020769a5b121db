"""Benchmark of `kafkacodec rewrite`: MB/s of segment rewritten (a decode of every batch and
an encode from its decoded fields, indexes rebuilt, the new log written and fsynced), for an
uncompressed and an lz4 partition as a producer writes them (batches of about 16 kB:
batch.size), with no options (byte for byte; by one worker process per CPU, and by this
process alone: --jobs 1) and recompressed to zstd; and --check, which writes nothing.

Side by side with a plain copy of the same files (cp: the disk's and page cache's bound),
and with what the rewrite costs per batch.

python -m bench.rewrite [--mb N] [--repeat K]. Writes bench/results/rewrite.json.
"""

from __future__ import annotations

import argparse
import random
import shutil
import sys
import tempfile
import time
from pathlib import Path

import kafkacodec as kc
from bench import save
from kafkacodec.log import PartitionWriter
from kafkacodec.log.rewrite import rewrite

ROOT = Path(__file__).resolve().parent.parent
T0 = 1_700_000_000_000


def build(path: Path, mb: float, codec: str) -> tuple[int, int]:
    """A partition of about mb MB: batches of 100 records of ~160 bytes (keys, a header, values
    with some repetition, as application data has), one broker append each. Returns
    (records, batches)."""
    rng = random.Random(7)
    words = [bytes(rng.choice(b"abcdefghijklmnopqrstuvwxyz") for _ in range(rng.randint(3, 9)))
             for _ in range(500)]  # fmt: skip
    offset = batches = 0
    with PartitionWriter(path, segment_bytes=1 << 30, fsync=False) as w:
        size = 0
        while size < mb * 1e6:
            recs = [kc.Record(None, T0 + offset + j, b"user-%d" % rng.randrange(10_000),
                              b" ".join(rng.choice(words) for _ in range(22)),
                              [("trace", b"%016x" % rng.getrandbits(64))])
                    for j in range(100)]  # fmt: skip
            batch = kc.build_batch(recs, base_offset=offset, compression=codec)
            w.append(batch)
            size += len(batch)
            offset += 100
            batches += 1
    return offset, batches


def best(fn, repeat: int) -> float:
    times = []
    for _ in range(repeat):
        t = time.perf_counter()
        fn()
        times.append(time.perf_counter() - t)
    return min(times)


def measure(tmp_path: Path, codec: str, mb: float, repeat: int) -> list[dict]:
    """The runs on one partition of codec: a copy, the rewrites, the check."""
    src = tmp_path / f"{codec}-0"
    records, batches = build(src, mb, codec)
    size = sum(f.stat().st_size for f in src.glob("*.log"))
    out = tmp_path / "out"

    def cp() -> None:
        shutil.rmtree(out, ignore_errors=True)
        shutil.copytree(src, out)

    def write(**options):
        shutil.rmtree(out, ignore_errors=True)
        return rewrite(src, out, **options)

    copy_s = best(cp, repeat)
    runs = {
        "rewrite (byte for byte)": lambda: write(),
        "rewrite --jobs 1": lambda: write(jobs=1),
        "rewrite --check": lambda: rewrite(src, None),
        "rewrite --compression zstd": lambda: write(compression="zstd"),
    }
    rows = [("cp (copy, no decoding)", copy_s, size)]
    for name, fn in runs.items():
        seconds = best(fn, repeat)
        summary = fn()
        if not summary.options:
            assert summary.different == 0, summary.differences  # Kafka's bytes, every one
        rows.append((name, seconds, summary.bytes_out))
    out_rows = []
    for name, seconds, out_bytes in rows:
        mbs = size / seconds / 1e6
        print(f"{codec:<7}{name:<26}{mbs:>8,.0f}{batches / seconds:>12,.0f}"
              f"{copy_s / seconds:>8.2f}  {out_bytes:,}")  # fmt: skip
        out_rows.append({"codec": codec, "run": name, "mb": size / 1e6, "records": records,
                         "batches": batches, "seconds": seconds, "mb_per_s": mbs,
                         "vs_cp": copy_s / seconds, "bytes_out": out_bytes})  # fmt: skip
    shutil.rmtree(out, ignore_errors=True)
    shutil.rmtree(src)
    return out_rows


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--mb", type=float, default=256.0, help="size of each partition (MB)")
    ap.add_argument("--repeat", type=int, default=3)
    args = ap.parse_args(argv)
    results: list[dict] = []
    with tempfile.TemporaryDirectory(prefix="kafkacodec-bench-rewrite-") as tmp:
        tmp_path = Path(tmp)
        print(f"rewrite of one partition of {args.mb:g} MB (best of {args.repeat}):")
        print(f"{'data':<7}{'run':<26}{'MB/s':>8}{'batches/s':>12}{'vs cp':>8}  bytes out")
        for codec in ("none", "lz4"):
            results += measure(tmp_path, codec, args.mb, args.repeat)
    save("rewrite", results)
    return 0


if __name__ == "__main__":
    sys.exit(main())

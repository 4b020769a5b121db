"""Benchmark of reading log directories from an object store: the same partition on local
disk and in moto's S3 server on 127.0.0.1 (both on this machine), and in Aiven's
tiered-storage layout (4 MiB chunks, zstd, then also encrypted): records/s of a scan (object
and columnar), and what a lookup and a scan fetch (bytes, requests).

python -m bench.remote [--mb N] [--lookups K]. Writes bench/results/remote.json.

moto answers from one Python process: the figures measure kafkacodec's fetching (ranges,
windows, spool, parallel GETs) and an S3 endpoint that is slower than a real one, not S3.
"""

from __future__ import annotations

import argparse
import os
import random
import sys
import tempfile
import time
from pathlib import Path

import kafkacodec as kc
from bench import save
from kafkacodec.log import PartitionWriter, open_log
from kafkacodec.storage import total_stats

ROOT = Path(__file__).resolve().parent.parent
T0 = 1_700_000_000_000
CHUNK = 4 << 20  # the chunk size Aiven's docs suggest (chunk.size)


def build(path: Path, mb: float) -> int:
    """One segment of about `mb` MB (a producer's batches of 20 records of 200 bytes, lz4
    and uncompressed), indexed every 4096 bytes as a broker indexes it. Returns records."""
    rng = random.Random(3)
    offset = 0
    with PartitionWriter(path, segment_bytes=(1 << 31) - 1, index_interval_bytes=4096, fsync=False) as w:
        size = 0
        i = 0
        while size < mb * 1e6:
            recs = [kc.Record(None, T0 + offset + j, b"key-%d" % (offset + j),
                              bytes(rng.getrandbits(8) for _ in range(40)) * 5, [])
                    for j in range(20)]  # fmt: skip
            batch = kc.build_batch(recs, base_offset=offset, compression="lz4" if i % 2 else "none")
            w.append(batch)
            size += len(batch)
            offset += 20
            i += 1
    return offset


def fetched(fn, *args):
    """(seconds, bytes fetched, requests, result) of fn(*args)."""
    s0 = total_stats()
    t = time.perf_counter()
    value = fn(*args)
    dt = time.perf_counter() - t
    s1 = total_stats()
    return dt, s1.bytes - s0.bytes, s1.requests - s0.requests, value


def scan(target, keys=None) -> int:
    p = open_log(target, keys=keys)
    n = sum(1 for _ in p.read())
    p.close()
    return n


def columns(target, keys=None) -> int:
    p = open_log(target, keys=keys)
    n = sum(b.num_rows for seg in p.segments for b in seg.columns())
    p.close()
    return n


def lookups(target, offsets, keys=None) -> None:
    """A lookup as the command line makes one: a partition opened, one offset found."""
    for off in offsets:
        p = open_log(target, keys=keys)
        p.segment_for(off).translate_offset(off)
        p.close()


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--mb", type=float, default=64, help="size of the segment (MB)")
    ap.add_argument("--lookups", type=int, default=20)
    args = ap.parse_args(argv)
    sys.path.insert(0, str(ROOT / "tests"))
    from s3server import start_moto  # the tests' moto server, and their layout writer
    from tiered_layout import Encryptor, rsa_key, uuid, write_aiven

    from kafkacodec.storage.tiered import KeyRing

    out: dict = {"segment_mb": args.mb}
    with tempfile.TemporaryDirectory(prefix="kafkacodec-bench-remote-") as tmp:
        tmp = Path(tmp)
        local = tmp / "orders-0"
        total = build(local, args.mb)
        size = (local / "00000000000000000000.log").stat().st_size
        server = start_moto(tmp / "moto.log")
        try:
            os.environ.update(server.env)
            server.bucket("bench")
            url = server.upload(local, "s3://bench/logs/orders-0")
            pem, public = rsa_key(tmp)
            tid = uuid()
            put = lambda k, data: server.put(f"s3://bench/{k}", data)  # noqa: E731
            write_aiven(put, "zstd/", "orders", tid, 0, local, 0, chunk_size=CHUNK, compression=True)
            write_aiven(put, "enc/", "orders", tid, 0, local, 0, chunk_size=CHUNK, compression=True,
                        encryption=Encryptor(public))  # fmt: skip
            keys = KeyRing({"encryption_key": str(pem)})
            targets = {
                "local disk": (local, None),
                "s3 (moto)": (url, None),
                "tiered, zstd": (f"s3://bench/zstd/orders-{tid}/0", None),
                "tiered, zstd+AES": (f"s3://bench/enc/orders-{tid}/0", keys),
            }
            rng = random.Random(11)
            offsets = [rng.randrange(total) for _ in range(args.lookups)]
            columns(local)  # warm: the columnar path's imports are not a figure
            print(f"one segment of {size / 1e6:.1f} MB, {total:,} records; moto's S3 server on "
                  f"127.0.0.1 (tiered: {CHUNK >> 20} MiB chunks)\n")
            print(f"{'where':<18} {'scan rec/s':>11} {'columns rec/s':>14} {'scan fetched':>13} "
                  f"{'GETs':>5} {'lookup ms':>10} {'lookup fetched':>15} {'% of segment':>13}")
            for name, (target, k) in targets.items():
                dt, nbytes, req, n = fetched(scan, target, k)
                assert n == total, (name, n, total)
                row = dict(scan_rps=total / dt, scan_bytes=nbytes, scan_requests=req)
                dt, _b, _r, n = fetched(columns, target, k)
                assert n == total, (name, n, total)
                row.update(columns_rps=total / dt)
                dt, nbytes, req, _n = fetched(lookups, target, offsets, k)
                row.update(lookup_ms=dt / len(offsets) * 1e3, lookup_bytes=nbytes / len(offsets),
                           lookup_requests=req / len(offsets))  # fmt: skip
                out[name] = row
                remote = name != "local disk"
                print(f"{name:<18} {row['scan_rps']:>11,.0f} {row['columns_rps']:>14,.0f} "
                      f"{(row['scan_bytes'] / 1e6 if remote else 0):>10.1f} MB {row['scan_requests']:>5} "
                      f"{row['lookup_ms']:>10.1f} {(row['lookup_bytes'] / 1e3 if remote else 0):>12.1f} kB "
                      f"{(100 * row['lookup_bytes'] / size if remote else 0):>12.2f}%")  # fmt: skip
        finally:
            server.stop()
    save("remote", out)
    return 0


if __name__ == "__main__":
    sys.exit(main())

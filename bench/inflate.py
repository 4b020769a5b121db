"""gzip read with Intel ISA-L's inflate against zlib's (issue 40, part 3): the same corpora of
magic 0, 1 and 2 gzip batches (bench's corpus: 100-record batches of 10-byte keys and
100-byte hex values), each decoded in full with its CRCs checked, once with each inflater
(runtime/compression.py's _inflate swapped), alternately; and the inflate alone over the
corpus's payloads. Both inflaters must give the same records.

    python -m bench.inflate [--mb 20] [--repeat 5]

JSON goes to bench/results/inflate.json.
"""

from __future__ import annotations

import argparse
import statistics
import sys
import time
import zlib

import kafkacodec as kc
from bench import save
from bench.__main__ import corpus, ours_decode
from kafkacodec.runtime import compression

CORPORA = {"v0 gzip": 0, "v1 gzip": 1, "v2 gzip": 2}


def payloads(data: bytes) -> list[bytes]:
    """The compressed payloads of a corpus (records regions, wrappers' values)."""
    out = []
    for b in kc.iter_batches(data, verify_crc=False):
        raw = getattr(b, "records_region_raw", None)  # v2; a legacy wrapper's value: inner_raw
        out.append(bytes(raw if raw is not None else b.inner_raw))
    return out


def timed(fn, *args) -> float:
    start = time.perf_counter()
    fn(*args)
    return time.perf_counter() - start


def inflate_all(lib, blobs):
    for blob in blobs:
        lib.decompressobj(wbits=31).decompress(blob)


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(prog="python -m bench.inflate", description=__doc__.split("\n")[0])
    ap.add_argument("--mb", type=float, default=20.0)
    ap.add_argument("--repeat", type=int, default=5)
    args = ap.parse_args(argv)
    if compression.INFLATER != "isal":
        raise SystemExit("python-isal is not installed: nothing to compare")
    isal = compression._inflate
    results = {}
    print(f"{'corpus':9} {'records':>8} {'decode zlib':>13} {'decode isal':>13} {'gain':>6} {'inflate zlib':>13} {'inflate isal':>13} {'gain':>6}")
    for name, magic in CORPORA.items():
        data, _ = corpus(magic, "gzip", args.mb)
        blobs = payloads(data)
        out_bytes = sum(len(zlib.decompress(b, 31)) for b in blobs)
        counts, times = {}, {"zlib": [], "isal": [], "inflate zlib": [], "inflate isal": []}
        for i in range(args.repeat + 1):  # the first round warms up
            for lib_name, lib in (("zlib", zlib), ("isal", isal))[:: 1 if i % 2 else -1]:
                compression._inflate = lib
                try:
                    start = time.perf_counter()
                    counts[lib_name] = ours_decode(data)
                    t = time.perf_counter() - start
                finally:
                    compression._inflate = isal
                t_inflate = timed(inflate_all, lib, blobs)
                if i:
                    times[lib_name].append(t)
                    times[f"inflate {lib_name}"].append(t_inflate)
        if counts["zlib"] != counts["isal"]:
            raise SystemExit(f"{name}: the inflaters disagree ({counts})")
        med = {k: statistics.median(v) for k, v in times.items()}
        row = {"records": counts["isal"], "bytes": len(data), "inflated_bytes": out_bytes,
               "decode_records_per_s": {k: counts[k] / med[k] for k in ("zlib", "isal")},
               "inflate_mb_per_s": {k: out_bytes / 1e6 / med[f"inflate {k}"] for k in ("zlib", "isal")}}  # fmt: skip
        results[name] = row
        d, f = row["decode_records_per_s"], row["inflate_mb_per_s"]
        print(f"{name:9} {row['records']:8d} {d['zlib'] / 1e6:10.2f}M/s {d['isal'] / 1e6:10.2f}M/s "
              f"{d['isal'] / d['zlib']:5.2f}x {f['zlib']:9.0f}MB/s {f['isal']:9.0f}MB/s {f['isal'] / f['zlib']:5.2f}x")  # fmt: skip
    save("inflate", {"mb": args.mb, "repeat": args.repeat, "corpora": results})
    return 0


if __name__ == "__main__":
    sys.exit(main())

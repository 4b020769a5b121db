"""Memory benchmark: peak resident memory (each case in a fresh process, VmHWM) of reading
a large segment to columns and of a gzip bomb.

    python -m bench.memory [--mb 400]

Cases:
- columns, streamed: `Segment.columns()` over one --mb MB segment of v2 batches (gzip,
  lz4 and uncompressed in turn), the record batches dropped as they come, as a consumer
  that writes them somewhere does;
- columns, whole: `decode_columns` over the same file mapped in memory (one Arrow table of
  everything: memory grows with the file);
- gzip bomb: a batch whose 1 MB gzip records region inflates to 1 GB, read with the default
  decompression limit (it must end in DecompressionLimitError).

JSON goes to bench/results/memory.json.
"""

from __future__ import annotations

import argparse
import json
import subprocess
import sys
import tempfile
from pathlib import Path

import kafkacodec as kc
from bench import save

from .__main__ import RECORDS_PER_BATCH, _records

ROOT = Path(__file__).resolve().parents[1]


def write_segment(directory: Path, mb: float) -> int:
    """One segment of about mb MB; returns its record count."""
    from kafkacodec.log import PartitionWriter

    recs = _records(2)
    codecs = ("gzip", "lz4", "none")
    written = b = 0
    with PartitionWriter(directory, segment_bytes=1 << 31, fsync=False) as w:
        while written < mb * 1e6:
            batch = kc.build_batch(recs, base_offset=b * RECORDS_PER_BATCH, compression=codecs[b % 3])
            w.append(batch)
            written += len(batch)
            b += 1
    return b * RECORDS_PER_BATCH


def _peak_mb() -> float:
    for line in Path("/proc/self/status").read_text().splitlines():
        if line.startswith("VmHWM:"):
            return int(line.split()[1]) / 1024
    import resource

    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024


def child(case: str, directory: str) -> None:
    """One case, in this (fresh) process; prints its result as JSON."""
    from kafkacodec.log.segment import Segment

    out: dict = {"case": case}
    if case == "streamed":
        with Segment(Path(directory), 0) as seg:
            out["rows"] = sum(rb.num_rows for rb in seg.columns())
    elif case == "whole":
        from kafkacodec.records.columnar import decode_columns

        with Segment(Path(directory), 0) as seg:
            out["rows"] = decode_columns(seg.data, end=seg.size).num_rows
    elif case == "bomb":
        from kafkacodec.runtime.compression import compress

        bomb = compress(1, bytes(1 << 30), 2)
        raw = kc.build_batch([kc.Record(None, 1, None, b"x")], compression="gzip")
        batch = next(kc.iter_batches(raw))
        batch.records_region_raw = bomb
        try:
            batch.records()
            out["error"] = None
        except kc.KafkacodecError as err:
            out["error"] = f"{type(err).__name__}: {err}"
        out["bomb_bytes"] = len(bomb)
    out["peak_mb"] = round(_peak_mb(), 1)
    print(json.dumps(out))


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(prog="python -m bench.memory", description=__doc__.split("\n\n")[0])
    ap.add_argument("--mb", type=float, default=400)
    ap.add_argument("--child", nargs=2, help=argparse.SUPPRESS)
    args = ap.parse_args(argv)
    if args.child:
        child(*args.child)
        return 0
    with tempfile.TemporaryDirectory(prefix="kafkacodec-bench-memory-") as tmp:
        directory = Path(tmp) / "bench-0"
        rows = write_segment(directory, args.mb)
        size = sum(f.stat().st_size for f in directory.glob("*.log"))
        results = {"segment_bytes": size, "records": rows, "cases": {}}
        for case in ("streamed", "whole", "bomb"):
            proc = subprocess.run(
                [sys.executable, "-m", "bench.memory", "--child", case, str(directory)],
                cwd=ROOT, capture_output=True, text=True, check=True,
            )  # fmt: skip
            results["cases"][case] = json.loads(proc.stdout.splitlines()[-1])
    print(f"memory: a {size / 1e6:.0f} MB segment ({rows:,} records; gzip, lz4, none in turn), "
          "peak resident memory of a fresh process:")  # fmt: skip
    for case, r in results["cases"].items():
        what = {"streamed": "Segment.columns(), batches dropped as they come",
                "whole": "decode_columns(), one table",
                "bomb": f"gzip bomb ({r.get('bomb_bytes', 0) / 1e6:.2f} MB -> 1 GB)"}[case]  # fmt: skip
        extra = f", {r['rows']:,} rows" if "rows" in r else f", {r['error']}"
        print(f"  {what:<52} {r['peak_mb']:8.1f} MB{extra}")
    save("memory", results)
    return 0


if __name__ == "__main__":
    sys.exit(main())

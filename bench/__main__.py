"""Benchmark: v2 decode (CRC on), columnar decode and encode, kafkacodec next to
kafka-python and aiokafka's compiled reader, one interleaved run.

python -m bench [--batches N] [--repeat R]. Prints records/s and the ratios, writes JSON
to bench/results/codec.json. The peers come from the `bench` extra. "pure Py" rows
switch off the optional native loops (runtime/_speedups.c) and measure the generated
Python parsers and builders alone.
"""

from __future__ import annotations

import argparse
import json
import statistics
import time
from pathlib import Path

import kafkacodec as kc

RECORDS_PER_BATCH = 100
KEY = b"k" * 10
VALUE = b"v" * 100
HEADERS = [("h", b"hdr-value")]


def corpus(n_batches: int) -> bytes:
    out = bytearray()
    for b in range(n_batches):
        recs = [
            kc.Record(None, 1_700_000_000_000 + i, KEY, VALUE, HEADERS)
            for i in range(RECORDS_PER_BATCH)
        ]
        out += kc.build_batch(recs, base_offset=b * RECORDS_PER_BATCH)
    return bytes(out)


def ours_decode(data):
    n = 0
    for b in kc.iter_batches(data, verify_crc=True):
        n += len(b.records())
    return n


def pure(fn):
    """fn with the native loops switched off: the generated Python parsers and builders."""
    from kafkacodec import batches, builders

    def run(arg):
        saved = batches._native_records, builders._native_records
        batches._native_records = builders._native_records = None
        try:
            return fn(arg)
        finally:
            batches._native_records, builders._native_records = saved

    return run


def ours_encode(n_batches):
    recs = [
        kc.Record(None, 1_700_000_000_000 + i, KEY, VALUE, HEADERS)
        for i in range(RECORDS_PER_BATCH)
    ]
    for b in range(n_batches):
        kc.build_batch(recs, base_offset=b * RECORDS_PER_BATCH)
    return n_batches * RECORDS_PER_BATCH


def _peer_decode(memory_records, data):
    """Read every record through a peer's MemoryRecords, checking each batch's CRC."""
    n = 0
    mr = memory_records(data)
    while True:
        batch = mr.next_batch()
        if batch is None:
            return n
        if not batch.validate_crc():
            raise AssertionError("crc")
        for r in batch:
            _fields = (r.key, r.value, r.headers)  # touch what a reader reads
            n += 1


def kp_decode(data):
    from kafka.record.memory_records import MemoryRecords

    return _peer_decode(MemoryRecords, data)


def aio_decode(data):
    """aiokafka's compiled (Cython) reader."""
    from aiokafka.record._crecords.memory_records import MemoryRecords

    return _peer_decode(MemoryRecords, data)


def ours_columnar(data):
    from kafkacodec.columnar import decode_columns

    return decode_columns(data, verify_crc=True).num_rows


def kp_encode(n_batches):
    from kafka.record.default_records import DefaultRecordBatchBuilder

    for _ in range(n_batches):
        bb = DefaultRecordBatchBuilder(
            magic=2,
            compression_type=0,
            is_transactional=False,
            producer_id=-1,
            producer_epoch=-1,
            base_sequence=-1,
            batch_size=10**8,
        )
        for i in range(RECORDS_PER_BATCH):
            bb.append(i, timestamp=1_700_000_000_000 + i, key=KEY, value=VALUE, headers=HEADERS)
        bb.build()
    return n_batches * RECORDS_PER_BATCH


def measure(fn, arg, repeat):
    times = []
    for _ in range(repeat):
        t = time.perf_counter()
        n = fn(arg)
        times.append(time.perf_counter() - t)
    return n / statistics.median(times)


def main(argv=None):
    p = argparse.ArgumentParser(prog="python -m bench")
    p.add_argument("--batches", type=int, default=500)
    p.add_argument("--repeat", type=int, default=5)
    args = p.parse_args(argv)
    data = corpus(args.batches)
    results = {}
    # Interleave peers within each repetition so drift hits both alike.
    rows = [
        ("decode (CRC on)", ours_decode, {"kafka-python": kp_decode, "aiokafka": aio_decode}, data),
        ("decode, pure Py", pure(ours_decode), {"kafka-python": kp_decode}, data),
        (
            "columnar decode",
            ours_columnar,
            {"kafka-python": kp_decode, "aiokafka": aio_decode},
            data,
        ),
        ("encode", ours_encode, {"kafka-python": kp_encode}, args.batches),
        ("encode, pure Py", pure(ours_encode), {"kafka-python": kp_encode}, args.batches),
    ]
    for name, ours, peers, arg in rows:
        got = {"kafkacodec": [], **{p: [] for p in peers}}
        for fn in (ours, *peers.values()):  # warm-up: imports, caches, first-touch memory
            fn(arg)
        for _ in range(args.repeat):
            got["kafkacodec"].append(measure(ours, arg, 1))
            for peer, fn in peers.items():
                got[peer].append(measure(fn, arg, 1))
        results[name] = {k: statistics.median(v) for k, v in got.items()}
    print(
        f"v2, uncompressed, {args.batches} batches x {RECORDS_PER_BATCH} records ({len(data) / 1e6:.1f} MB)"
    )
    print(f"{'figure':<18}{'kafkacodec rec/s':>18}{'kafka-python rec/s':>20}{'ratio':>8}"
          f"{'aiokafka rec/s':>16}{'ratio':>8}")  # fmt: skip
    for name, r in results.items():
        r["ratio"] = r["kafkacodec"] / r["kafka-python"]
        line = f"{name:<18}{r['kafkacodec']:>18,.0f}{r['kafka-python']:>20,.0f}{r['ratio']:>8.2f}"
        if "aiokafka" in r:
            r["ratio_aiokafka"] = r["kafkacodec"] / r["aiokafka"]
            line += f"{r['aiokafka']:>16,.0f}{r['ratio_aiokafka']:>8.2f}"
        print(line)
    out = Path(__file__).parent / "results"
    out.mkdir(exist_ok=True)
    (out / "codec.json").write_text(json.dumps(results, indent=2))


if __name__ == "__main__":
    main()

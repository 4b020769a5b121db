"""Speed per language (issue 39, part 6; issue 58, part 4): every reader over the same
segments in one run, in records per second, each checking every batch's CRC and reading
every field of every record (offset, timestamp, key, value, headers) into a checksum all
must agree on:

- Rust (peers/rust/src/bin/rust-bench.rs): kafkacodec's crate (rust/) holding the whole log
  (`KafkaLog::parse`) and one entry at a time (`KafkaLog::reader`), and the kafka-protocol
  crate (`RecordBatchDecoder::decode_all`);
- Go (go/cmd/kafkacodec-bench): kafkacodec's package (`ParseKafkaLog`) and franz-go
  (`kgo.ProcessFetchPartition`, its consumer's path);
- C: kafkacodec's native path, from Python (`decode_columns`: the C walk and record
  decoder into Arrow columns, the checksum summed over them);
- Java: the official compiler's Java output (jvm/, with kafkacodec's varint classes in
  place of the compiler's) against Kafka's own `MemoryRecords` batch iteration
  (`ensureValid`, `streamingIterator`, as the consumer's CompletedFetch reads a batch),
  kafka-clients of the broker harness's newest release: bench/java/LanguagesBench.java.

    python -m bench.languages [--mb 50] [--repeat 5] [--no-java]

Segments: records in v2 batches of 100 (10-byte keys of 1,000 values, 100-byte random
values, one header) up to --mb megabytes uncompressed, then the same records with gzip,
snappy, lz4 and zstd. Each program runs its sides in turn after a warm-up round and reports
the median. JSON goes to bench/results/languages.json.
"""

from __future__ import annotations

import argparse
import json
import random
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import kafkacodec as kc
from bench import machine, save

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "tests"))  # the broker harness's classpath

from kafka_broker import VERSIONS, classpath, for_release  # noqa: E402

CODECS = ("none", "gzip", "snappy", "lz4", "zstd")
#: Bytes a record takes in the uncompressed segment (--mb sets the records from it).
RECORD_BYTES = 123.33
#: Every reader of a run, in the order the tables show them: (language, reader).
READERS = [("Rust", "kafkacodec-reader"), ("Rust", "kafkacodec"), ("Rust", "kafka-protocol"),
           ("Go", "kafkacodec"), ("Go", "franz-go"), ("C", "kafkacodec"), ("Java", "kafkacodec"),
           ("Java", "kafka")]  # fmt: skip


def segment(path: Path, records: int, codec: str) -> Path:
    rnd = random.Random(1)
    with open(path, "wb") as out:
        for base in range(0, records, 100):
            recs = [
                kc.Record(None, 1_700_000_000_000 + base + i, b"key-%05d" % rnd.randrange(1000),
                          rnd.randbytes(100), [("h", b"1")])
                for i in range(min(100, records - base))
            ]  # fmt: skip
            out.write(kc.build_batch(recs, base_offset=base, compression=codec))
    return path


def go(build: Path, seg: Path, repeat: int) -> dict:
    binary = build / "kafkacodec-bench"
    subprocess.run(
        ["go", "build", "-o", str(binary), "./cmd/kafkacodec-bench"], cwd=ROOT / "go", check=True
    )
    out = subprocess.run(
        [str(binary), "-repeat", str(repeat), str(seg)], capture_output=True, text=True, check=True
    )
    return json.loads(out.stdout)


def rust(seg: Path, repeat: int) -> dict:
    """kafkacodec's crate and kafka-protocol (peers/rust/src/bin/rust-bench.rs) over the segment."""
    subprocess.run(["cargo", "build", "--release", "--locked", "--bin", "rust-bench"],
                   cwd=ROOT / "peers" / "rust", check=True, capture_output=True)  # fmt: skip
    binary = ROOT / "peers" / "rust" / "target" / "release" / "rust-bench"
    out = subprocess.run([str(binary), "-repeat", str(repeat), str(seg)], capture_output=True, text=True, check=True)
    return json.loads(out.stdout)


def c_path(seg: Path, repeat: int) -> dict:
    """kafkacodec's native path from Python: decode_columns (the C walk and record decoder
    into Arrow columns), every CRC checked, the checksum summed over the columns as the
    other programs sum their records (in int64, wrapping)."""
    import pyarrow.compute as pc

    from kafkacodec.records.columnar import decode_columns

    data = seg.read_bytes()

    def walk() -> tuple[int, int]:
        t = decode_columns(data, verify_crc=True)
        headers = pc.list_flatten(t.column("headers"))
        parts = [pc.sum(t.column("offset")), pc.sum(t.column("timestamp")),
                 pc.sum(pc.binary_length(t.column("key"))), pc.sum(pc.binary_length(t.column("value"))),
                 pc.sum(pc.binary_length(pc.struct_field(headers, "key"))),
                 pc.sum(pc.binary_length(pc.struct_field(headers, "value")))]  # fmt: skip
        total = sum((p.as_py() or 0) for p in parts)
        return t.num_rows, (total + (1 << 63)) % (1 << 64) - (1 << 63)

    rates, got = [], (0, 0)
    for round_ in range(repeat + 1):  # the first round warms up
        start = time.perf_counter()
        got = walk()
        if round_:
            rates.append(got[0] / (time.perf_counter() - start))
    return {"kafkacodec": statistics.median(rates), "records": got[0], "checksum": got[1]}


def java(build: Path, seg: Path, repeat: int) -> dict:
    cp = classpath(VERSIONS[-1])
    target = ROOT / "jvm" / "target"
    kaitai = target / "kaitai-classpath.txt"
    if not kaitai.is_file():
        raise SystemExit("the Java parsers are not built: make jar")
    (build / "LanguagesBench.java").write_text(
        for_release((ROOT / "bench" / "java" / "LanguagesBench.java").read_text(), cp)
    )
    full = ":".join([str(target / "classes"), kaitai.read_text().strip(), cp])
    subprocess.run(
        ["javac", "-nowarn", "-d", str(build), "-cp", full, str(build / "LanguagesBench.java")],
        check=True,
    )
    out = subprocess.run(["java", "-Xmx2g", "-cp", f"{build}:{full}", "LanguagesBench", str(repeat), str(seg)],
                         capture_output=True, text=True, check=True)  # fmt: skip
    return json.loads(out.stdout)


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(prog="python -m bench.languages", description=__doc__.split("\n")[0])
    ap.add_argument("--mb", type=float, default=50, help="the uncompressed segment's size (default 50 MB)")
    ap.add_argument("--repeat", type=int, default=5)
    ap.add_argument("--no-java", action="store_true", help="leave the Java parsers out (no `make jar` needed)")
    args = ap.parse_args(argv)
    if not args.mb > 0 or args.repeat < 1:
        ap.error("--mb takes a size above 0 and --repeat 1 or more")
    records = max(100, round(args.mb * 1e6 / RECORD_BYTES))
    results: dict = {"records": records, "machine": machine(), "runs": {}}
    with tempfile.TemporaryDirectory(prefix="kafkacodec-bench-") as tmp:
        for name in CODECS:
            seg = segment(Path(tmp) / f"{name}.log", records, name)
            got = {"Rust": rust(seg, args.repeat), "Go": go(Path(tmp), seg, args.repeat), "C": c_path(seg, args.repeat)}
            if not args.no_java:
                got["Java"] = java(Path(tmp), seg, args.repeat)
            sums = {lang: (r["records"], r["checksum"]) for lang, r in got.items()}
            if len(set(sums.values())) != 1:
                raise SystemExit(f"{name}: the readers read other records (records, checksum): {sums}")
            results["runs"][name] = {"bytes": seg.stat().st_size,
                                     **{f"{lang} {reader}": got[lang][reader] for lang, reader in READERS
                                        if lang in got}}  # fmt: skip
    best = "Rust kafkacodec-reader"
    print(f"{records:,} records, {args.repeat} runs each, the median; x: against {best}")
    print(f"{'segment':8} {'reader':24} {'records/s':>11} {'x':>6}")
    for name, run in results["runs"].items():
        for key, rate in run.items():
            if key != "bytes":
                print(f"{name:8} {key:24} {rate / 1e6:10.2f}M {rate / run[best]:6.2f}")
    save("languages", results)
    return 0


if __name__ == "__main__":
    try:
        sys.exit(main())
    except KeyboardInterrupt:  # (the programs it runs end with the same Ctrl-C)
        print("bench.languages: interrupted", file=sys.stderr)
        sys.exit(130)

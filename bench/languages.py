"""Speed per language (issue 39, part 6): the schemas' parsers in Go and Java against the
hand-written decoder of each language, over the same segment, in records per second, with
every batch's CRC checked and every field of every record read (offset, timestamp, key,
value, headers), into a checksum both sides must agree on:

- Go: kafkacodec's Go target (go/kafkacodec, `ParseKafkaLog`) against franz-go's
  `kgo.ProcessFetchPartition` (its consumer's path): go/cmd/kafkacodec-bench;
- Rust: kafkacodec's Rust target (rust/, `KafkaLog::parse`) over the same segment
  (rust/src/bin/kafkacodec-bench), beside the Go program's franz-go figure of the same
  segment; its records and checksum must equal the Go package's;
- Java: the official compiler's Java output (jvm/, with kafkacodec's varint classes in
  place of the compiler's) against Kafka's own `MemoryRecords` batch iteration
  (`ensureValid`, `streamingIterator`, as the consumer's CompletedFetch reads a batch),
  kafka-clients of the broker harness's newest release: bench/java/LanguagesBench.java.

    python -m bench.languages [--records 500000] [--repeat 5]

Segments: --records records in v2 batches of 100 (10-byte keys of 1,000 values, 100-byte
random values, one header), uncompressed and zstd. Each program runs both sides
alternately after a warm-up round and reports the median. JSON goes to
bench/results/languages.json.
"""

from __future__ import annotations

import argparse
import json
import random
import subprocess
import sys
import tempfile
from pathlib import Path

import kafkacodec as kc
from bench import save

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "tests"))  # the broker harness's classpath

from kafka_broker import VERSIONS, classpath, for_release  # noqa: E402

CODECS = ("none", "zstd")


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
    """The Rust crate's parser (rust/src/bin/kafkacodec-bench) over the segment."""
    subprocess.run(["cargo", "build", "--release", "--locked", "--bin", "kafkacodec-bench"],
                   cwd=ROOT / "rust", check=True, capture_output=True)  # fmt: skip
    binary = ROOT / "rust" / "target" / "release" / "kafkacodec-bench"
    out = subprocess.run([str(binary), "-repeat", str(repeat), str(seg)], capture_output=True, text=True, check=True)
    return json.loads(out.stdout)


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
    ap = argparse.ArgumentParser(
        prog="python -m bench.languages", description=__doc__.split("\n")[0]
    )
    ap.add_argument("--records", type=int, default=500_000)
    ap.add_argument("--repeat", type=int, default=5)
    args = ap.parse_args(argv)
    results: dict = {"records": args.records, "runs": {}}
    with tempfile.TemporaryDirectory(prefix="kafkacodec-bench-") as tmp:
        for name in CODECS:
            seg = segment(Path(tmp) / f"{name}.log", args.records, name)
            results["runs"][name] = {
                "go": go(Path(tmp), seg, args.repeat),
                "rust": rust(seg, args.repeat),
                "java": java(Path(tmp), seg, args.repeat),
            }
            run = results["runs"][name]
            if run["rust"]["checksum"] != run["go"]["checksum"] or run["rust"]["records"] != run["go"]["records"]:
                raise SystemExit(f"{name}: the Rust crate and the Go package read other records: {run}")
            run["rust"]["franz-go"] = run["go"]["franz-go"]  # the same run's anchor
    print(f"{'segment':8} {'language':6} {'kafkacodec':>14} {'peer':>22} {'ratio':>6}")
    for name, run in results["runs"].items():
        for lang, peer in (("go", "franz-go"), ("rust", "franz-go"), ("java", "kafka")):
            r = run[lang]
            print(f"{name:8} {lang:6} {r['kafkacodec'] / 1e6:11.2f}M/s {peer:>10} {r[peer] / 1e6:8.2f}M/s "
                  f"{r['kafkacodec'] / r[peer]:5.2f}x")  # fmt: skip
    save("languages", results)
    return 0


if __name__ == "__main__":
    sys.exit(main())

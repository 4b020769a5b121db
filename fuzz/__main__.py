"""Coverage-guided fuzzing of kafkacodec's entry points with atheris (libFuzzer).

    python -m fuzz HARNESS [--seconds N] [--corpus DIR] [-- LIBFUZZER_FLAGS...]

HARNESS is one of fuzz/harnesses.py's HARNESSES (batches, records, indexes, recovery,
dump, internal). The corpus is seeded from tests/vectors (and grows in --corpus when given: keep
it between long runs). A crash leaves its input in fuzz/crashes/HARNESS-crash-<sha1>;
turn it into a regression test by moving it to tests/fuzz_regressions/HARNESS/.
Exits 0 when the run ends clean; the last line says how many inputs ran.
"""

from __future__ import annotations

import argparse
import shutil
import sys
import tempfile
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
VECTORS = ROOT / "tests" / "vectors"
MAX_LEN = 65536

SEEDS = {
    "batches": ("*.bin", "*.log"),
    "records": ("*.bin",),
    "indexes": ("*.index", "*.timeindex", "*.txnindex"),
    "recovery": ("*.log", "*.bin"),
    "dump": ("*.bin", "*.log"),
    "internal": (),  # seeded from kafka-internal/records.jsonl (internal_seeds)
}


def internal_seeds(into: Path, start: int) -> int:
    """The Kafka-written internal-topic payloads, framed as the `internal` harness reads
    them (its kind byte, and for coordinator topics the key first)."""
    import json

    from fuzz.harnesses import INTERNAL_KINDS

    modules = {"group-coordinator": "consumer_offsets", "share-coordinator": "share_group_state",
               "transaction-coordinator": "transaction_state"}  # fmt: skip
    rows = [
        json.loads(x)
        for x in (VECTORS / "kafka-internal" / "records.jsonl").read_text().splitlines()
    ]
    keys = {
        (r["module"], int(r["hex"][:4], 16)): bytes.fromhex(r["hex"])
        for r in rows
        if r["kind"] == "key"
    }
    n = start
    for r in rows:
        payload = bytes.fromhex(r["hex"])
        if r["kind"] == "value":
            key = keys.get((r["module"], r["recordType"]))
            if key is None or len(key) > 257:
                continue
            kind = modules[r["module"]]
            data = key[:2] + bytes([len(key) - 2]) + key[2:] + payload
        elif r["kind"] == "metadata":
            kind, data = "cluster_metadata", payload
        elif r["kind"] == "remote_metadata":
            kind, data = "remote_log_metadata", payload
        elif r["kind"] == "control":
            kind, data = "control", bytes([r["controlType"]]) + payload
        elif r["kind"] == "consumer_protocol":
            kind, data = "consumer_protocol", payload
        else:
            continue
        (into / f"seed-{n:04d}").write_bytes(bytes([INTERNAL_KINDS.index(kind)]) + data[:MAX_LEN])
        n += 1
    return n - start


def seed_corpus(harness: str, into: Path) -> int:
    """Copy the shared vectors that suit harness into a corpus folder (at most MAX_LEN
    bytes each, the larger ones cut); return how many."""
    n = 0
    for pattern in SEEDS[harness]:
        for path in sorted(VECTORS.rglob(pattern)):
            data = path.read_bytes()[:MAX_LEN]
            if harness == "records":
                data = bytes([data[21] & 0x3F if len(data) > 22 else 0, 10]) + data[61:]
            (into / f"seed-{n:04d}").write_bytes(data)
            n += 1
    if harness == "internal":
        n += internal_seeds(into, n)
    return n


def main(argv: list[str] | None = None) -> int:
    argv = sys.argv[1:] if argv is None else argv
    extra = []
    if "--" in argv:
        at = argv.index("--")
        argv, extra = argv[:at], argv[at + 1 :]
    parser = argparse.ArgumentParser(prog="python -m fuzz", description=__doc__.split("\n")[1])
    parser.add_argument("harness")
    parser.add_argument("--seconds", type=int, default=60)
    parser.add_argument("--corpus", type=Path, help="a corpus folder kept between runs")
    args = parser.parse_args(argv)

    import atheris

    with atheris.instrument_imports(include=["kafkacodec"]):
        from fuzz.harnesses import HARNESSES
    if args.harness not in HARNESSES:
        parser.error(f"unknown harness {args.harness!r} (known: {', '.join(HARNESSES)})")
    harness = HARNESSES[args.harness]

    corpus = args.corpus or Path(tempfile.mkdtemp(prefix=f"kafkacodec-fuzz-{args.harness}-"))
    corpus.mkdir(parents=True, exist_ok=True)
    seeds = Path(tempfile.mkdtemp(prefix="kafkacodec-fuzz-seeds-"))
    n = seed_corpus(args.harness, seeds)
    crashes = ROOT / "fuzz" / "crashes"
    crashes.mkdir(exist_ok=True)
    print(f"fuzz {args.harness}: {n} seeds, {args.seconds} s", flush=True)
    flags = [
        f"-max_total_time={args.seconds}",
        f"-max_len={MAX_LEN}",
        "-timeout=10",  # seconds for one input: a hang is a crash
        "-rss_limit_mb=1024",  # memory on hostile input stays bounded
        f"-artifact_prefix={crashes}/{args.harness}-",
        "-print_final_stats=1",
        *extra,
        str(corpus),
        str(seeds),
    ]
    try:
        atheris.Setup([sys.argv[0], *flags], harness)
        atheris.Fuzz()
    finally:
        shutil.rmtree(seeds, ignore_errors=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())

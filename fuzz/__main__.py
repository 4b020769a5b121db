"""Coverage-guided fuzzing of kafkacodec's entry points with atheris (libFuzzer).

    python -m fuzz HARNESS [--seconds N] [--corpus DIR] [--sanitized] [-- LIBFUZZER_FLAGS...]

HARNESS is one of fuzz/harnesses.py's HARNESSES (batches, records, indexes, recovery,
dump, internal, encode). The corpus is seeded from tests/vectors (and grows in --corpus when
given: keep it between long runs). A crash leaves its input in fuzz/crashes/HARNESS-crash-<sha1>;
turn it into a regression test by moving it to tests/fuzz_regressions/HARNESS/.
Exits 0 when the run ends clean; the last line says how many inputs ran.

--sanitized runs the native extensions (kafkacodec/records/_native_*.c, runtime/_programs.c,
kafkacodec/internal/_native_*.c) built
by clang with AddressSanitizer, UndefinedBehaviorSanitizer and libFuzzer's coverage
(fuzzer-no-link), under atheris's ASan runtime (LD_PRELOAD) with Python's allocator off
(PYTHONMALLOC=malloc: a reference count gone wrong is a use after free ASan sees): the
fuzzer steers into the C code, and any memory error or undefined behaviour there stops the
run with its report. The build goes to build/sanitized/ (clang: Debian's `clang`).
"""

from __future__ import annotations

import argparse
import importlib.util
import os
import resource
import shutil
import subprocess
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
    "encode": ("*.bin",),  # any bytes spell records
}
SANITIZED = ROOT / "build" / "sanitized"
#: The native extensions, by their import names.
NATIVE = (
    "kafkacodec.records._native",
    "kafkacodec.runtime._programs",
    "kafkacodec.internal._native",
)
#: What the sanitizers do on a finding: stop, with a report (CPython's own allocations at
#: exit are not leaks to report).
SANITIZER_ENV = {
    "ASAN_OPTIONS": "detect_leaks=0:abort_on_error=1:allocator_may_return_null=1",
    "UBSAN_OPTIONS": "halt_on_error=1:print_stacktrace=1",
    "PYTHONMALLOC": "malloc",
}


#: A peak RSS this size at start is a parent's (a fresh interpreter has a few tens of MB).
INHERITED_RSS_MB = 256
FRESH = "KAFKACODEC_FUZZ_FRESH"


def _peak_rss_mb() -> float:
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024


def build_sanitized() -> Path:
    """The native extensions built by clang with ASan, UBSan and libFuzzer's coverage into
    build/sanitized (setup.py's own sources and flags, these added)."""
    if shutil.which("clang") is None:
        raise SystemExit(
            "--sanitized needs clang (Debian: apt-get install clang; make test installs it)"
        )
    flags = ("-fsanitize=address,undefined,fuzzer-no-link -fno-sanitize-recover=undefined "
             "-fno-omit-frame-pointer -g -O1")  # fmt: skip
    env = dict(os.environ, CC="clang", LDSHARED="clang -shared", CFLAGS=flags, LDFLAGS=flags)
    subprocess.run(
        [sys.executable, "setup.py", "-q", "build_ext", "--build-lib", str(SANITIZED),
         "--build-temp", str(SANITIZED / "tmp")],
        cwd=ROOT, env=env, check=True, stdout=subprocess.DEVNULL,
    )  # fmt: skip
    return SANITIZED


def load_sanitized(build: Path) -> None:
    """Put the sanitized extensions in place of the installed ones before anything imports
    them; refuse to run without them (a run that silently used the plain ones proves nothing)."""
    for full in NATIVE:
        package, _, name = full.rpartition(".")
        found = sorted(build.joinpath(*package.split(".")).glob(f"{name}.*.so"))
        if not found:
            raise SystemExit(f"no sanitized build of {full} in {build}")
        spec = importlib.util.spec_from_file_location(full, found[0])
        module = importlib.util.module_from_spec(spec)
        sys.modules[full] = module
        spec.loader.exec_module(module)
        setattr(importlib.import_module(package), name, module)


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
    given = list(argv)
    extra = []
    if "--" in argv:
        at = argv.index("--")
        argv, extra = argv[:at], argv[at + 1 :]
    parser = argparse.ArgumentParser(prog="python -m fuzz", description=__doc__.split("\n")[1])
    parser.add_argument("harness")
    parser.add_argument("--seconds", type=int, default=60)
    parser.add_argument("--corpus", type=Path, help="a corpus folder kept between runs")
    parser.add_argument("--sanitized", action="store_true",
                        help="the native extensions built with ASan and UBSan, coverage-guided")  # fmt: skip
    args = parser.parse_args(argv)
    if _peak_rss_mb() > INHERITED_RSS_MB and FRESH not in os.environ:
        # libFuzzer's -rss_limit_mb watches the peak RSS (getrusage), and Linux keeps the
        # peak of the process that started this one across fork and exec: started by a
        # large process (a test worker past 1 GB), every run stopped at once as "out of
        # memory". A child of this small process starts from its own peak.
        return subprocess.call(
            [sys.executable, "-m", "fuzz", *given], env={**os.environ, FRESH: "1"}
        )

    import atheris

    rss_limit = 1024
    if args.sanitized:
        if "KAFKACODEC_SANITIZED" not in os.environ:  # build, then run again under the runtime
            build = build_sanitized()
            runtime = Path(atheris.path()) / "asan_with_fuzzer.so"
            env = dict(os.environ, KAFKACODEC_SANITIZED=str(build), LD_PRELOAD=str(runtime),
                       **SANITIZER_ENV)  # fmt: skip
            return subprocess.call([sys.executable, "-m", "fuzz", *given], env=env)
        load_sanitized(Path(os.environ["KAFKACODEC_SANITIZED"]))
        rss_limit = 2048  # ASan's shadow memory and quarantine come on top
    # The columnar module stays out of Python instrumentation: atheris's comparison tracing
    # keeps about 1 KB per input of numpy comparisons, enough to reach the RSS limit in a
    # quarter of an hour (its native loops are instrumented in the sanitized build).
    with atheris.instrument_imports(
        include=["kafkacodec"], exclude=["kafkacodec.records.columnar"]
    ):
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
        f"-rss_limit_mb={rss_limit}",  # memory on hostile input stays bounded
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

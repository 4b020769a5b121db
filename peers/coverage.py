"""python -m peers.coverage: how much of Kafka's record-reading code the corpus, the shared
vectors and a fuzz run reach (issue 57), measured with JaCoCo while Kafka's classes judge.

    python -m peers.coverage --kafka 4.4.0 --cases 200000 --seed 1 --out out/coverage

The oracle (KafkaJudge --stream --broker: a consumer's reading with check.crcs on, and the
broker's log layer reading the same bytes as a segment) runs under JaCoCo's agent over
every image of the corpus (`kafkacodec corpus --seed 7`), every shared vector and --cases
mutations (peers.mutate); then KafkaBranches.java counts, per method of kafka-clients'
record and compression packages, the branches taken. The reading code is the methods of
READING's classes less SET_ASIDE (writers, builders, the log's file management, equals /
hashCode / toString: each rule says why); OUT/README.md gives the figure, per class, and
every branch not reached, by source line; OUT/coverage.json the same as data.
"""

from __future__ import annotations

import argparse
import json
import re
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
#: The packages JaCoCo records and KafkaBranches analyses (4.4 moved the record classes to
#: record/internal).
PACKAGES = ("org/apache/kafka/common/record/", "org/apache/kafka/common/record/internal/",
            "org/apache/kafka/common/compress/")  # fmt: skip
#: The classes whose reading the figure is about (with their inner classes): a consumer's
#: (MemoryRecords, the batches of ByteBufferLogInputStream, ensureValid, the iterators, the
#: records through the compression package) and the broker's log layer's (FileRecords,
#: FileLogInputStream, searchForOffset..., searchForTimestamp, slice, skipKeyValueIterator).
READING = ("DefaultRecordBatch", "DefaultRecord", "LegacyRecord", "AbstractLegacyRecordBatch",
           "ByteBufferLogInputStream", "FileLogInputStream", "FileRecords", "MemoryRecords",
           "compress/*")  # fmt: skip
#: (class pattern, method pattern, why): methods of READING's classes that are not reading.
#: Patterns are regular expressions matched in full against the class's simple name (inner
#: classes as Outer$Inner) and the method's name.
SET_ASIDE: tuple[tuple[str, str, str], ...] = (
    (r".*", r"equals|hashCode|toString", "object identity and printing, not reading"),
    (r".*", r"write.*|append.*|build.*|.*[Bb]uilder.*", "writers and builders"),
    (r".*", r"set[A-Z].*", "setters of a batch's header (the broker's writes: leader epoch, last offset, max timestamp)"),
    (r"MemoryRecords", r"with.*|filterTo|filterBatches|.*[Ff]ilter.*|readFrom|writeFullyTo|toString|sizeInBytes|buffer|hasMatchingMagic|lambda\$.*",
     "records made (withRecords...), the log cleaner's rewrite (filterTo), the buffer's accessors"),
    (r"MemoryRecords\$.*", r".*", "the log cleaner's filter results and builders' records info"),
    (r"FileRecords", r"open|openChannel|close|closeHandlers|flush|trim|truncateTo|renameTo|setFile|deleteIfExists|updateParentDir|channel|file|sizeInBytes|readInto|sliceUnaligned|downConvert|writeTo|lambda\$.*",
     "the log's file management (open, flush, truncate, rename, delete) and the bytes sent as they are"),
    (r"FileRecords\$.*", r".*", "result holders (LogOffsetPosition, TimestampAndOffset): no reading"),
    (r"DefaultRecord", r"sizeInBytes|sizeOf|sizeOfBodyInBytes|recordSizeUpperBound|computePartialChecksum|writeTo",
     "sizes and checksums a writer computes before writing"),
    (r"DefaultRecordBatch", r"estimateBatchSizeUpperBound|incrementSequence|decrementSequence|computeAttributes|writeHeader|sizeInBytes",
     "sizes and sequence arithmetic for writers"),
    (r"LegacyRecord", r"create|write.*|computeChecksum|computeAttributes|recordSize|recordOverhead|headerSize|keyOffset",
     "legacy messages made and their sizes computed (the producer's path)"),
    (r"compress/.*", r"wrapForOutput|level|maxLevel|minLevel|defaultLevel|compressionLevel|type|of|.*Builder.*",
     "compression for writing: output streams, levels, builders"),
    (r"compress/(Lz4BlockOutputStream|GzipOutputStream|NoCompression|Compression)(\$.*)?", r".*",
     "the writers of the codecs (Lz4BlockOutputStream, GzipOutputStream) and the codec choice"),
    (r"compress/.*\$Builder", r".*", "builders of a codec's settings"),
)


#: (class, method or method+descriptor): why no input reaches the branches of it a run
#: leaves (checked against the source of the releases measured: the branches a fuzz case
#: could reach are reached, the test says so, and these alone are left).
UNREACHABLE: dict[tuple[str, str], str] = {
    ("ByteBufferLogInputStream", "nextBatchSize"):
        "a batch over maxMessageSize: MemoryRecords reads with Integer.MAX_VALUE as the limit",
    ("AbstractLegacyRecordBatch$DataLogInputStream", "nextBatch"):
        "an inner message over maxMessageSize: the deep iterator of a wrapper passes Integer.MAX_VALUE",
    ("FileRecords", "<init>"):
        "a segment file over 2 GiB (channel.size() > Integer.MAX_VALUE): not an input a case makes",
    ("FileRecords", "searchForTimestamp"):
        "(4.4) javac's null check of the try-with-resources record iterator, which is never null",
    ("AbstractLegacyRecordBatch$DeepRecordsIterator", "<init>"):
        "a wrapper of magic other than 0 and 1: the log input streams make legacy batches of magic 0 and 1 alone",
    ("LegacyRecord", "isValid"):
        "a legacy record under 14 bytes: the log input streams refuse the size before a LegacyRecord is made",
    ("LegacyRecord", "ensureValid"):
        "a legacy record under 14 bytes: the log input streams refuse the size before a LegacyRecord is made",
    ("LegacyRecord", "timestamp"):
        "LogAppendTime with no wrapper timestamp: the deep iterator always passes the wrapper's (a long)",
    ("DefaultRecord", "skipBytes"):
        "a stream whose skip returns 0 before its end, or more than asked, or less than 0: Kafka's "
        "decompression streams (ChunkedBytesStream.skip) return 0 at the end alone",
    ("DefaultRecordBatch$RecordIterator", "next"): "next() past the end: every reader asks hasNext() first",
    ("AbstractLegacyRecordBatch$1", "next"): "next() past the end: every reader asks hasNext() first",
    ("compress/Lz4BlockInputStream", "<init>"):
        "BROKEN_LZ4_EXCEPTION: a check of the lz4-java on the classpath, not of the input",
    ("compress/Lz4BlockInputStream", "read()I"):
        "read() a byte at a time: Kafka's readers wrap the stream in ChunkedBytesStream, which reads arrays",
}  # fmt: skip


def unreachable(cls: str, method: str, desc: str) -> str | None:
    """Why a method's branches a run leaves cannot be reached, or None: they could be."""
    return UNREACHABLE.get((cls, method + desc)) or UNREACHABLE.get((cls, method))


def _simple(cls: str) -> str:
    """A class by the name SET_ASIDE's patterns match: its simple name (Outer$Inner), or
    compress/NAME for the compression package's."""
    pkg, _, name = cls.rpartition("/")
    return f"compress/{name}" if pkg.endswith("/compress") else name


def reading(cls: str) -> bool:
    name = _simple(cls)
    outer = name.split("$")[0]
    return any(outer == r or (r.endswith("/*") and outer.startswith(r[:-1])) for r in READING)


def set_aside(cls: str, method: str) -> str | None:
    """Why a method of a reading class is not counted, or None: it is."""
    name = _simple(cls)
    for c, m, why in SET_ASIDE:
        if re.fullmatch(c, name) and re.fullmatch(m, method):
            return why
    return None


def measure(methods: list[dict]) -> dict:
    """The figure from KafkaBranches' lines: {"branches", "covered", "classes": {simple:
    [branches, covered]}, "missed": [{class, method, line, missed, total}], "set_aside":
    {why: [class.method, ...]}}."""
    out: dict = {"branches": 0, "covered": 0, "classes": {}, "missed": [], "set_aside": {}}
    for m in methods:
        if not reading(m["class"]):
            continue
        name = _simple(m["class"])
        why = set_aside(m["class"], m["method"])
        if why is not None:
            if m["branches"]:
                out["set_aside"].setdefault(why, []).append(f"{name}.{m['method']}")
            continue
        if not m["branches"]:
            continue
        out["branches"] += m["branches"]
        out["covered"] += m["covered"]
        c = out["classes"].setdefault(name, [0, 0])
        c[0] += m["branches"]
        c[1] += m["covered"]
        for line, missed, total in m["missed"]:
            out["missed"].append({"class": name, "source": m["source"], "method": m["method"], "desc": m["desc"],
                                  "line": line, "missed": missed, "total": total,
                                  "why": unreachable(name, m["method"], m["desc"])})  # fmt: skip
    return out


def images(cases: int, seed: int, work: Path):
    """(name, bytes) of every image the run feeds: the corpus, the shared vectors, then the
    mutations, drawn a chunk at a time."""
    from .mutate import draw

    corpus = work / "corpus"
    subprocess.run([sys.executable, "-m", "kafkacodec", "corpus", str(corpus), "--seed", "7"],
                   check=True, stdout=subprocess.DEVNULL)  # fmt: skip
    for p in sorted(corpus.glob("*.bin")):
        yield f"corpus/{p.name}", p.read_bytes()
    for p in sorted((ROOT / "tests" / "vectors").rglob("*.bin")):
        if p.stat().st_size <= 1 << 20:
            yield f"vectors/{p.relative_to(ROOT / 'tests' / 'vectors')}", p.read_bytes()
    yield from draw(cases, seed)


def run(version: str, cases: int, seed: int, out: Path) -> dict:
    sys.path.insert(0, str(ROOT / "tests"))
    from kafka_broker import HARNESS, classpath
    from kafka_judge import Oracle

    jacoco = (HARNESS / "target" / "jacoco.txt").read_text().strip().split(":")
    agent = next(j for j in jacoco if "org.jacoco.agent" in j)
    clients = next(j for j in classpath(version).split(":") if "/kafka-clients-" in j)
    if out.exists():
        shutil.rmtree(out)
    out.mkdir(parents=True)
    with tempfile.TemporaryDirectory(prefix="kafkacodec-coverage-") as tmp:
        work = Path(tmp)
        exec_file = work / "jacoco.exec"
        includes = ":".join(p.replace("/", ".") + "*" for p in PACKAGES)
        fed = 0
        t = time.monotonic()
        with Oracle(version, work / "build", broker=True,
                    jvm=(f"-javaagent:{agent}=destfile={exec_file},includes={includes}",)) as oracle:  # fmt: skip
            chunk: list[bytes] = []
            for _name, data in images(cases, seed, work):
                chunk.append(data)
                if len(chunk) == 2000:
                    oracle.judge_many(chunk)
                    fed += len(chunk)
                    chunk = []
            oracle.judge_many(chunk)
            fed += len(chunk)
        seconds = time.monotonic() - t
        classes = work / "branches"
        classes.mkdir()
        jcp = ":".join(jacoco)
        subprocess.run(["javac", "-nowarn", "-d", str(classes), "-cp", jcp, str(HARNESS / "src" / "KafkaBranches.java")],
                       check=True, capture_output=True)  # fmt: skip
        res = subprocess.run(["java", "-cp", f"{jcp}:{classes}", "KafkaBranches", str(exec_file), clients, *PACKAGES],
                             check=True, capture_output=True, text=True)  # fmt: skip
        methods = [json.loads(line) for line in res.stdout.splitlines()]
    figure = measure(methods)
    figure.update(version=version, cases=cases, seed=seed, images=fed, seconds=round(seconds, 1))
    (out / "coverage.json").write_text(json.dumps(figure, indent=1) + "\n")
    (out / "README.md").write_text(readme(figure))
    return figure


def readme(f: dict) -> str:
    pct = 100 * f["covered"] / max(f["branches"], 1)
    lines = [f"# Kafka {f['version']}'s record-reading branches reached: {f['covered']} of {f['branches']} ({pct:.1f}%)", "",
             f"{f['images']:,} images read by the oracle (a consumer's reading and the broker's log layer's) "
             f"under JaCoCo in {f['seconds']:.0f} s: the corpus (seed 7), the shared vectors and "
             f"{f['cases']:,} mutations (peers.mutate, seed {f['seed']}).", "",
             "| class | branches | reached | % |", "|---|---|---|---|"]  # fmt: skip
    for name, (total, covered) in sorted(f["classes"].items()):
        lines.append(f"| {name} | {total} | {covered} | {100 * covered / total:.1f} |")
    lines += ["", "## Branches not reached", "",
              "Each with why no input reaches it (peers/coverage.py UNREACHABLE); one without a reason is "
              "a gap of the mutations.", "",
              "| class | method | line | missed of | why |", "|---|---|---|---|---|"]  # fmt: skip
    for m in f["missed"]:
        lines.append(f"| {m['class']} | {m['method']} | {m['source']}:{m['line']} | {m['missed']} of {m['total']} "
                     f"| {m['why'] or '**not explained: a gap of the mutations**'} |")  # fmt: skip
    lines += ["", "## Set aside (not reading)", ""]
    for why, names in sorted(f["set_aside"].items()):
        lines.append(f"- {why}: {', '.join(sorted(set(names)))}")
    return "\n".join(lines) + "\n"


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(prog="python -m peers.coverage", description=__doc__.split("\n")[0])
    ap.add_argument("--kafka", default="4.4.0", help="the release whose classes are measured (default 4.4.0)")
    ap.add_argument("--cases", type=int, default=100000, help="mutations after the corpus and vectors")
    ap.add_argument("--seed", type=int, default=1)
    ap.add_argument("--out", type=Path, default=Path("out/coverage"))
    args = ap.parse_args(argv)
    sys.path.insert(0, str(ROOT / "tests"))
    from kafka_broker import HarnessError, classpath

    try:
        classpath(args.kafka)  # the release's jars, which `make harness` resolves
    except HarnessError as err:
        ap.error(str(err))  # (exit 2)
    try:
        f = run(args.kafka, args.cases, args.seed, args.out)
    except KeyboardInterrupt:
        print("peers.coverage: interrupted", file=sys.stderr)
        return 130
    print(f"Kafka {args.kafka}: {f['covered']} of {f['branches']} branches of the reading code reached "
          f"({100 * f['covered'] / max(f['branches'], 1):.1f}%); report: {args.out / 'README.md'}")  # fmt: skip
    return 0


if __name__ == "__main__":
    sys.exit(main())

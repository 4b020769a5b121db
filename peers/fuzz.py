"""python -m peers.fuzz: fuzz any Kafka record-set parser with Kafka's own classes as the
oracle (issue 57).

    python -m peers.fuzz --parser aiokafka --parser mine='./my-reader --flag' \\
        --cases 100000 --seed 1 --out out/fuzz

Seeded mutations (peers.mutate: the schema-aware families, which change a field, a varint's
encoding, a list, the codec, the compressed payload's own frame, the nesting of legacy
wrappers, control records or the entries' boundaries and then re-derive the CRCs, lengths
and counts or leave them stale; and peers.bytewise's byte-level ones) are judged by Kafka's
classes in one long-lived JVM (tests/kafka_judge.Oracle: KafkaJudge --stream, `make harness`
resolves the release) and read by each parser. A parser is judged by one of Kafka's two
answers (peers.findings.VIEWS): a client library by what a KafkaConsumer's CompletedFetch
hands its application ("consumer", the default), a log reader (kafkacodec, or any parser
given with --log-reader) by what Kafka's record classes read ("records"). Every answer that
differs is signed by what differs (peers.findings.signature: the field, Kafka's rule, the
panic), and the first case of each signature is minimized with the oracle in the loop and
written to OUT/<parser>/<signature>/ with the input, both answers and the command that
reproduces it. OUT/README.md has the table: per parser, the cases read, the distinct
divergences and how many cases each.

A parser plugs in as a program that speaks the protocol of peers/python_parsers.py and
go/cmd/peers: `PROGRAM FILE...` answers the files named; `PROGRAM -` reads file names on
standard input, one a line, answering each as soon as it is read (the run keeps one
process for case after case); each answer is one JSON line:

    {"file": NAME, "records": [{"offset": N, "timestamp": N|null, "key": HEX|null,
      "value": HEX|null, "headers": [[KEY, HEX|null], ...], "control": BOOL}, ...],
     "error": TEXT|null}

(or {"file": NAME, "panic": TEXT} for an exception that escaped its decoder). A process
that dies costs the case it was on (a crash) and is started again after it; no answer in
--timeout seconds is a hang. Built in: kafkacodec's reading paths (kafkacodec, its native
loops; kafkacodec-python, the generated parsers alone; kafkacodec-columns, the columnar
walk; kafkacodec-go and kafkacodec-rust, the Go package and the Rust crate the schemas
generate; kafkacodec-spark, the Spark format's JVM reader, built from
harness/src/SparkJvmPeer.java over `make jar`'s jar and pyspark's jars), the Python clients kafka-python and aiokafka, and the Go clients franz-go,
sarama and kafka-go (the Go program, built from go/), and the Rust crates kafka-protocol and
rskafka (the Rust program, built from peers/rust). An answer may also say
"handed_over": the Spark format's JVM reader hands bytes it does not read as regular to
kafkacodec's Python reader (fuzzed as kafkacodec): its rows before that must be Kafka's
first ones, and the case counts as handed over, not as a divergence.
"""

from __future__ import annotations

import argparse
import itertools
import json
import os
import shlex
import shutil
import sys
import tempfile
import time
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

from . import CLASSES
from .__main__ import ROOT, Session, go_binary, run_parser, rust_binary
from .findings import by_design, diverges, kafka_answer, minimize, signature, write_finding
from .mutate import FAMILIES
from .spark_jvm import spark_jvm_peer

BUILT_IN = {name: [sys.executable, "-m", "peers.python_parsers", name]
            for name in ("kafkacodec", "kafkacodec-python", "kafkacodec-columns", "kafka-python", "aiokafka")}  # fmt: skip
#: kafkacodec's reading paths: log readers, judged by Kafka's record classes.
KAFKACODEC = ("kafkacodec", "kafkacodec-python", "kafkacodec-columns", "kafkacodec-go", "kafkacodec-rust",
              "kafkacodec-spark")  # fmt: skip
GO = ("franz-go", "sarama", "kafka-go", "kafkacodec-go")
RUST = ("kafka-protocol", "rskafka", "kafkacodec-rust")
#: Cases written and judged at a time (the files of one chunk on disk at once).
CHUNK = 20000


def _command(spec: str, build: Path, timeout: float) -> tuple[str, list[str]]:
    name, sep, cmd = spec.partition("=")
    if sep:
        return name, shlex.split(cmd)
    if name in BUILT_IN:
        return name, BUILT_IN[name]
    if name in GO:
        return name, [str(go_binary(build)), "-timeout", f"{timeout}s", "-parser", name]
    if name in RUST:
        return name, [str(rust_binary()), "-timeout", f"{timeout}s", "-parser", name]
    if name == "kafkacodec-spark":
        return name, spark_jvm_peer(build)
    raise ValueError(f"--parser {spec}: not built in ({', '.join([*BUILT_IN, *GO, *RUST, 'kafkacodec-spark'])}); "
                     "give NAME=COMMAND")  # fmt: skip


def _reproduce(name: str, cmd: list[str]) -> str:
    """The command that reproduces a parser's answer, "{input}" for the input: a built-in
    one's as it runs from the checkout on any machine, a plugged-in one's as given."""
    if cmd == BUILT_IN.get(name):
        return f"python -m peers.python_parsers {name} {{input}}"
    if name in GO and "-parser" in cmd:
        return f"go -C go run ./cmd/peers -parser {name} ../{{input}}"
    if name in RUST and "-parser" in cmd:
        return f"cargo run --release --manifest-path peers/rust/Cargo.toml -- -parser {name} {{input}}"
    if name == "kafkacodec-spark" and cmd[-1] == "io.kafkacodec.spark.SparkJvmPeer":
        return "python -m peers.spark_jvm {input}"
    return f"{shlex.join(cmd)} {{input}}"


def run(parsers: dict[str, list[str]], *, cases: int, seed: int, version: str, out: Path,
        timeout: float = 10, budget: int = 500, families=None, log_readers=KAFKACODEC) -> dict:  # fmt: skip
    """The fuzz run: {parser: {"cases", "seconds", "view", "divergences": {signature: count}}};
    the findings and README.md written into out (replaced)."""
    sys.path.insert(0, str(ROOT / "tests"))
    from kafka_judge import Oracle

    from .mutate import FAMILIES, draw

    if out.exists():
        shutil.rmtree(out)
    out.mkdir(parents=True)
    # the cases' files: in memory when the machine has a tmpfs (a file a case, a million of
    # them: creating one took 0.4 ms in this machine's /tmp, 14 us in /dev/shm)
    shm = Path("/dev/shm")
    work = Path(tempfile.mkdtemp(prefix="peers-fuzz-", dir=shm if os.access(shm, os.W_OK) else out))
    views = {p: "records" if p in log_readers else "consumer" for p in parsers}
    table = {p: {"cases": 0, "seconds": 0.0, "view": views[p], "divergences": {}, "by_design": {}, "handed_over": 0}
             for p in parsers}  # fmt: skip
    first: dict[tuple[str, str], tuple[bytes, str]] = {}
    oracle_seconds, started = 0.0, time.monotonic()
    drawn = draw(cases, seed, tuple(families or FAMILIES))
    try:
        with Oracle(version, work / "build") as oracle, ThreadPoolExecutor(len(parsers) + 1) as pool:
            at = 0
            while chunk := list(itertools.islice(drawn, CHUNK)):
                files = []
                for i, (name, data) in enumerate(chunk):
                    f = work / f"{at + i:07d}.bin"
                    f.write_bytes(data)
                    files.append((f, name, data))
                at += len(chunk)
                # Kafka and every parser read the chunk at once (their own processes: the
                # JVM, the parsers'); the driver compares the answers once all are in
                judged = pool.submit(oracle.judge_many, [d for _n, d in chunk])
                usage = {p: {"cpu": 0.0} for p in parsers}
                read = {p: pool.submit(run_parser, cmd, [str(f) for f, _n, _d in files], timeout, usage[p])
                        for p, cmd in parsers.items()}  # fmt: skip
                verdicts = judged.result()
                # Kafka's answers in the parsers' shape, once a case for each view judging
                kafka = {v: [kafka_answer(verdict, v) for verdict in verdicts] for v in set(views.values())}
                for p in parsers:
                    answers = read[p].result()
                    table[p]["seconds"] += usage[p]["cpu"]
                    table[p]["cases"] += len(files)
                    for (f, name, data), want in zip(files, kafka[views[p]]):
                        sig = signature(want, answers[str(f)])
                        if sig == "handed over":
                            table[p]["handed_over"] += 1
                        elif diverges(sig) and by_design(p, sig):
                            table[p]["by_design"][sig] = table[p]["by_design"].get(sig, 0) + 1
                        elif diverges(sig):
                            table[p]["divergences"][sig] = table[p]["divergences"].get(sig, 0) + 1
                            first.setdefault((p, sig), (data, name))
                for f, _n, _d in files:
                    f.unlink()
            oracle_seconds = _cpu_seconds(oracle.proc.pid)
            sessions = {p: Session(cmd, timeout) for p, cmd in parsers.items()}
            try:
                for (p, sig), (data, name) in sorted(first.items()):
                    probe = work / f"probe-{p}.bin"

                    def answer(d: bytes, p=p, probe=probe) -> dict:
                        probe.write_bytes(d)
                        return sessions[p].answer(str(probe))

                    def kafka(d: bytes, p=p) -> dict:
                        return kafka_answer(oracle.judge_many([d])[0], views[p])

                    def still(d: bytes, sig=sig, answer=answer, kafka=kafka) -> bool:
                        return signature(kafka(d), answer(d)) == sig

                    small = minimize(data, still, budget=budget)
                    write_finding(out / p, small, kafka(small), answer(small), sig, _reproduce(p, parsers[p]),
                                  found_in=f"{name}, seed {seed}", view=views[p])  # fmt: skip
            finally:
                for session in sessions.values():
                    session.close()
    finally:  # the cases' files and the build, also when interrupted
        shutil.rmtree(work, ignore_errors=True)
    _readme(out, table, cases=cases, seed=seed, version=version, oracle_seconds=oracle_seconds,
            wall=time.monotonic() - started)  # fmt: skip
    return table


def _cpu_seconds(pid: int) -> float:
    """The CPU seconds (user and system) a running process has taken: /proc/PID/stat."""
    try:
        fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
    except OSError:
        return 0.0
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")


def _readme(out: Path, table: dict, *, cases: int, seed: int, version: str, oracle_seconds: float,
            wall: float) -> None:  # fmt: skip
    lines = [f"# Fuzz run: {cases} mutations (peers.mutate), seed {seed}, judged by Kafka {version}'s classes", "",
             f"The run took {wall:,.0f} s on {os.cpu_count()} cores, Kafka and the parsers reading each "
             f"chunk of cases at once. Kafka's oracle (one JVM) answered {cases / max(oracle_seconds, 1e-9):,.0f} "
             "cases per CPU-second; a parser's cases/s is per CPU-second of its own processes. "
             "A divergence is an answer that is not Kafka's (peers/__init__.py CLASSES); each "
             "distinct one has a folder here, minimized, with the command that reproduces it. "
             "Judged by: consumer, what a KafkaConsumer's CompletedFetch hands its application; "
             "records, what Kafka's record classes read (a log reader's answer).", "",
             "| parser | judged by | cases | cases/s | distinct divergences | cases diverging |",
             "|---|---|---|---|---|---|"]  # fmt: skip
    for p, t in table.items():
        rate = t["cases"] / max(t["seconds"], 1e-9)
        lines.append(f"| {p} | {t['view']} | {t['cases']} | {rate:,.0f} | {len(t['divergences'])} | "
                     f"{sum(t['divergences'].values())} |")  # fmt: skip
    lines.append("")
    for p, t in table.items():
        if t["divergences"] or t["by_design"] or t.get("handed_over"):
            lines.append(f"## {p}")
            lines.append("")
            for sig, n in sorted(t["divergences"].items(), key=lambda kv: -kv[1]):
                lines.append(f"- {n} cases: `{sig}` ({CLASSES.get(sig.split(':')[0], '')})")
            for sig, n in sorted(t["by_design"].items(), key=lambda kv: -kv[1]):
                lines.append(f"- {n} cases, by design: `{sig}`: {by_design(p, sig)}")
            if t.get("handed_over"):
                lines.append(f"- {t['handed_over']} cases handed over to another reader, Kafka's "
                             "records before that (the Spark format's JVM reader to kafkacodec's Python one)")  # fmt: skip
            lines.append("")
    (out / "README.md").write_text("\n".join(lines))
    (out / "table.json").write_text(json.dumps(table, indent=1) + "\n")


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(prog="python -m peers.fuzz", description=__doc__.split("\n")[0])
    ap.add_argument("--parser", action="append", required=True, metavar="NAME[=COMMAND]",
                    help="a built-in parser, or NAME=COMMAND: a program speaking the protocol (repeatable)")  # fmt: skip
    ap.add_argument("--cases", type=int, default=10000)
    ap.add_argument("--seed", type=int, default=1)
    ap.add_argument("--kafka", default="4.4.0", help="the Kafka release whose classes judge (default 4.4.0)")
    ap.add_argument("--out", type=Path, default=Path("out/fuzz"),
                    help="the report's folder (replaced); `make fuzz` writes peers/fuzz-reports")  # fmt: skip
    ap.add_argument("--timeout", type=float, default=10, help="seconds a parser may take on a case")
    ap.add_argument("--minimize-budget", type=int, default=500, help="tries per finding (default 500)")
    ap.add_argument("--family", action="append", choices=FAMILIES, help="mutation families (default: all)")
    ap.add_argument("--log-reader", action="append", default=[], metavar="NAME",
                    help="judge this parser by Kafka's record classes, as a log reader (kafkacodec is), "
                         "not by what a consumer hands its application")  # fmt: skip
    args = ap.parse_args(argv)
    build = args.out.parent / ".peers-build"
    sys.path.insert(0, str(ROOT / "tests"))
    from kafka_broker import HarnessError, classpath

    try:
        classpath(args.kafka)  # the release's jars, which `make harness` resolves
        parsers = dict(_command(spec, build, args.timeout) for spec in args.parser)
    except (HarnessError, ValueError) as err:
        ap.error(str(err))  # (exit 2)
    try:
        table = run(parsers, cases=args.cases, seed=args.seed, version=args.kafka, out=args.out,
                    timeout=args.timeout, budget=args.minimize_budget, families=args.family,
                    log_readers=(*KAFKACODEC, *args.log_reader))  # fmt: skip
    except KeyboardInterrupt:  # the oracle's JVM and the parsers' processes end with their pipes
        print("peers.fuzz: interrupted", file=sys.stderr)
        return 130
    for p, t in table.items():
        print(f"{p}: {t['cases']} cases, {len(t['divergences'])} distinct divergences "
              f"({sum(t['divergences'].values())} cases)")  # fmt: skip
    print(f"report: {args.out / 'README.md'}")
    return 1 if any(t["divergences"] for t in table.values()) else 0


if __name__ == "__main__":
    sys.exit(main())

"""Kafka's own record classes as the judge of record sets (harness/src/KafkaJudge.java), and
kafkacodec's reading of the same bytes in the judge's shape, for the tests that put the two
side by side (tests/kafka/test_kafka_judges_corpus.py, test_kafka_judges_mutations.py).

The judge reads each file as a consumer with check.crcs=true reads a fetched record set
(MemoryRecords, ensureValid on every batch and record, the records through Kafka's
decompression, a control record's key and marker through ControlRecordType and
EndTransactionMarker), in one JVM per release for any number of files."""

from __future__ import annotations

import contextlib
import json
import subprocess
from pathlib import Path

import pytest
from conftest import generated_parsers_only
from kafka_broker import HARNESS, HarnessError, classpath, for_release

import kafkacodec as kc
from kafkacodec.records.javatext import java_text
from kafkacodec.runtime.errors import KafkacodecError


def compile_judge(version: str, build: Path) -> tuple[str, Path]:
    """KafkaJudge compiled against a release's kafka-clients: (classpath, classes folder)."""
    try:
        cp = classpath(version)
    except HarnessError as err:
        pytest.skip(str(err))
    classes = build / f"judge-{version}"
    classes.mkdir(parents=True, exist_ok=True)
    source = classes / "KafkaJudge.java"
    source.write_text(for_release((HARNESS / "src" / "KafkaJudge.java").read_text(), cp))
    res = subprocess.run(["javac", "-nowarn", "-d", str(classes), "-cp", cp, str(source)],
                         capture_output=True, text=True, timeout=300)  # fmt: skip
    assert res.returncode == 0, res.stderr[-3000:]
    return cp, classes


def judge(version: str, build: Path, files: list) -> list[dict]:
    """Kafka's verdict on each file, in order (one JVM; the names on its standard input)."""
    cp, classes = compile_judge(version, build)
    res = subprocess.run(["java", "-Xmx512m", "-cp", f"{cp}:{classes}", "KafkaJudge", "-"],
                         input="".join(f"{f}\n" for f in files), capture_output=True, text=True,
                         timeout=1800)  # fmt: skip
    assert res.returncode == 0, res.stderr[-3000:]
    out = [json.loads(line) for line in res.stdout.splitlines()]
    assert len(out) == len(files)
    return out


class Oracle:
    """Kafka's record classes of one release in one long-lived JVM (KafkaJudge --stream):
    images go in framed by their length, verdicts come back one JSON line each, in order.
    A writer thread feeds the JVM while this thread reads, so any number of cases can be
    in flight (no pipe fills up on either side).

        with Oracle("4.4.0", build) as kafka:
            verdicts = kafka.judge_many(images)
    """

    def __init__(self, version: str, build: Path, *, jvm: tuple[str, ...] = (), broker: bool = False) -> None:
        """jvm: options for the JVM (a JaCoCo agent); broker: also read each image as the
        broker's log layer reads a segment (KafkaJudge --broker; the verdicts' "broker")."""
        cp, classes = compile_judge(version, build)
        self.version = version
        command = ["java", "-Xmx512m", *jvm, "-cp", f"{cp}:{classes}", "KafkaJudge", "--stream"]
        self.proc = subprocess.Popen([*command, *(["--broker"] if broker else [])],
                                     stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.PIPE)  # fmt: skip
        self.cases = 0

    def judge_many(self, images) -> list[dict]:
        """Kafka's verdict on each image, in order."""
        import struct
        import threading

        images = list(images)
        failed: list[BaseException] = []

        def feed() -> None:
            try:
                for data in images:
                    self.proc.stdin.write(struct.pack(">i", len(data)) + bytes(data))
                self.proc.stdin.flush()
            except BaseException as err:  # noqa: BLE001 (said below, with the JVM's stderr)
                failed.append(err)
                with contextlib.suppress(OSError):
                    self.proc.stdin.close()  # the JVM ends: the reader below sees it and says why

        writer = threading.Thread(target=feed, daemon=True)
        writer.start()
        out = []
        for _ in images:
            line = self.proc.stdout.readline()
            if not line:
                writer.join(5)
                raise HarnessError(f"the Kafka {self.version} oracle ended after {self.cases} cases: "
                                   f"{failed} {self.proc.stderr.read()[-3000:].decode('utf-8', 'replace')}")  # fmt: skip
            out.append(json.loads(line))
            self.cases += 1
        writer.join()
        return out

    def close(self) -> None:
        if self.proc.poll() is None:
            self.proc.stdin.close()
            try:
                self.proc.wait(30)
            except subprocess.TimeoutExpired:
                self.proc.kill()
                self.proc.wait()

    def __enter__(self) -> Oracle:
        return self

    def __exit__(self, exc_type, *exc) -> None:
        if exc_type is not None and self.proc.poll() is None:
            # interrupted (Ctrl-C) or failed: the JVM ends now, not after the cases in flight
            self.proc.kill()
            self.proc.wait()
        self.close()


def _hex(v) -> str | None:
    return None if v is None else bytes(v).hex()


def as_string(key: str) -> str:
    """A header key as Kafka's consumer gives it: its bytes decoded as Java decodes UTF-8
    (kafkacodec's Record keeps the bytes, surrogateescape; its columns and the Spark format
    decode as Java does: kafkacodec.records.javatext)."""
    return java_text(key)


def record_dict(r, batch) -> dict:
    out = {
        "offset": r.offset, "timestamp": r.timestamp, "timestamp_type": r.timestamp_type,
        "key": _hex(r.key), "value": _hex(r.value),
        "headers": [[as_string(k), _hex(v)] for k, v in r.headers],
    }  # fmt: skip
    if batch.is_control:
        c = r.control
        # Kafka reads the type as a short (ControlRecordType.parseTypeId)
        out["control"] = {"type": c.type - (1 << 16) if c.type >= 1 << 15 else c.type,
                          "coordinator_epoch": c.coordinator_epoch if c.type in (0, 1) else None}  # fmt: skip
    return out


def ours(data: bytes) -> dict:
    """kafkacodec's reading (iter_batches, batch.records()), in KafkaJudge's shape."""
    batches = []
    it = kc.iter_batches(data)
    position = 0
    try:
        for b in it:
            position = b.position
            recs = b.records()
            batches.append({
                "position": b.position, "magic": b.magic, "compression": b.compression.name.lower(),
                "control": b.is_control, "records": [record_dict(r, b) for r in recs],
            })  # fmt: skip
    except KafkacodecError as err:
        at = getattr(err, "position", None)
        return {"batches": batches, "error": {"class": type(err).__name__, "message": str(err),
                                              "position": position if at is None else at}}  # fmt: skip
    return {"batches": batches}


def columns(data: bytes) -> dict:
    """kafkacodec's columnar reading (decode_columns): {"records": [...]} in the shape of
    flat() of the judge's reading, or {"error": ...}."""
    from kafkacodec.records.columnar import TIMESTAMP_TYPE_CODES, decode_columns

    names = {code: name for name, code in TIMESTAMP_TYPE_CODES.items()}
    try:
        rows = decode_columns(data).to_pylist()
    except KafkacodecError as err:
        return {"error": {"class": type(err).__name__, "message": str(err)}}
    return {"records": [{
        "position": r["position"], "offset": r["offset"], "timestamp": r["timestamp"],
        "timestamp_type": names[r["timestamp_type"]], "key": _hex(r["key"]), "value": _hex(r["value"]),
        "headers": [[h["key"], _hex(h["value"])] for h in r["headers"]],
    } for r in rows]}  # fmt: skip


def flat(reading: dict) -> list[dict]:
    """The records of a judge-shaped reading, one list, each with its batch's position (and
    without what a control record says: the columns hold its key and value)."""
    return [{"position": b["position"], **{k: v for k, v in r.items() if k != "control"}}
            for b in reading["batches"] for r in b["records"]]  # fmt: skip


def wrap64(x: int) -> int:
    return (x + (1 << 63)) % (1 << 64) - (1 << 63)


def as_kafka(mine: dict) -> tuple[dict, int]:
    """kafkacodec's reading with offsets and timestamps wrapped as Java's long arithmetic
    wraps them (DefaultRecord: baseOffset + offsetDelta), and how many were past int64.
    kafkacodec differs there on purpose (docs/corpus.md, "Kafka as the judge"): its records
    give the exact sum (a Python int, which `records` prints), its columns refuse it."""
    wrapped = 0
    for b in mine["batches"]:
        for r in b["records"]:
            for field in ("offset", "timestamp"):
                if wrap64(r[field]) != r[field]:
                    r[field] = wrap64(r[field])
                    wrapped += 1
    return mine, wrapped


#: Kafka's verdicts that are the judge's JVM running out of heap, not a rule: DataLogInputStream
#: allocates an inner message's declared size before reading it, so a wrapper whose inner
#: length says 2 GB fails with -Xmx512m, and with a heap that holds it reads as a partial
#: entry, dropped. kafkacodec reads it as that (it allocates nothing before the bytes are there).
OUT_OF_HEAP = "Java heap space"


def disagreement(mine: dict, kafka: dict) -> str | None:
    """None when kafkacodec's reading is Kafka's: the same batches and records, field for
    field, and a refusal at the same batch; else what differs."""
    if kafka.get("error", {}).get("message") == OUT_OF_HEAP:
        return None
    if "error" not in mine and "error" not in kafka:
        return None if mine == kafka else "values"
    if "error" not in kafka:
        return "kafka accepts"
    if "error" not in mine:
        return "kafka refuses"
    return None if mine["batches"] == kafka["batches"] else "batches before the error"


def _int64(v: int) -> bool:
    return -(1 << 63) <= v < 1 << 63


def objects_disagree(files: list[Path], theirs: list[dict], *, generated: bool = False) -> list[tuple]:
    """(file, what differs, (kafkacodec's error, Kafka's)) for each file whose objects
    (iter_batches, records(); with generated, the generated parsers alone) Kafka reads
    otherwise."""
    bad = []
    with generated_parsers_only() if generated else contextlib.nullcontext():
        for f, kafka in zip(files, theirs):
            mine, _ = as_kafka(ours(f.read_bytes()))
            why = disagreement(mine, kafka)
            if why:
                bad.append((f.name, why, (mine.get("error"), kafka.get("error"))))
    return bad


def columns_disagree(files: list[Path], theirs: list[dict]) -> list[tuple]:
    """(file, what differs, the error) for each file whose columns (decode_columns) are not
    the records Kafka reads, or whose refusal is not Kafka's; a record past int64, which
    Kafka wraps and the objects give exactly, must be refused by the columns."""
    bad = []
    for f, kafka in zip(files, theirs):
        if kafka.get("error", {}).get("message") == OUT_OF_HEAP:
            continue
        data = f.read_bytes()
        got = columns(data)
        if "error" in kafka:
            if "error" not in got:
                bad.append((f.name, "kafka refuses", kafka["error"]))
            continue
        if not all(_int64(r["offset"]) and _int64(r["timestamp"]) for r in flat(ours(data))):
            if "does not fit in 64 bits" not in got.get("error", {}).get("message", ""):
                bad.append((f.name, "past int64, not refused", got.get("error")))
        elif "error" in got:
            bad.append((f.name, "kafka accepts", got["error"]))
        elif got["records"] != flat(kafka):
            bad.append((f.name, "values", None))
    return bad


def report(bad: list[tuple]) -> str:
    """Disagreements counted by kind, then the first ten."""
    from collections import Counter

    kinds = Counter((what, str(why)[:100]) for _f, what, why in bad)
    return "\n".join(f"{n} {k}" for k, n in kinds.most_common()) + "\n" + "\n".join(map(str, bad[:10]))

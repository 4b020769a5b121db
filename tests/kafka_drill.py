"""The recovery drill (issue 37): does `kafkacodec recover` predict what Kafka's recovery does?

A broker of a release writes a workload (every codec, transactions committed and aborted,
small segments so that each partition has several, with index entries) into source
partitions and stops cleanly. Each case is a partition of its own (topic `drill`, created
through the broker so that it knows its topic id): the files of a source partition are
copied into it and damaged at random, seeded (a flipped bit, a changed header field, a
changed magic or offset, a cut, inserted garbage, zeros, a torn batch, a missing or corrupt
index, a damaged transaction index, a missing middle segment, or two of them), and its
recovery point set at random (as written at the clean shutdown, none, a segment's base, any
offset). kafkacodec predicts the next load of every case (kafkacodec.log.loader, the same
prediction `kafkacodec recover --json` gives under "kafka_load"); then the broker starts
without its clean-shutdown file, and for every case its "Completed load of Log(...)" line
(segments, local log start, log end) and the files it leaves (each .log and its size, after
a clean stop) must be the predicted ones. A twin of every case (topic `repaired`) holds the
same damaged files repaired by kafkacodec (`recover --repair`, with the case's recovery
point): the broker must load it without a doubt in its log, ending where the repair said,
its files as the repair left them, and its consumer must fetch exactly the records
kafkacodec reads from them.

    python tests/kafka_drill.py --version 4.0.0 --cases 200 --seed 1    (make drill)

The seeded subset in CI: tests/kafka/test_kafka_recovery.py.
"""

from __future__ import annotations

import argparse
import json
import random
import re
import shutil
import struct
import sys
import time
from dataclasses import dataclass, field
from pathlib import Path

from kafka_broker import Broker, as_consumed, b64, small_segments

from kafkacodec.log import Partition
from kafkacodec.log import repair as R
from kafkacodec.log.loader import RECOVERY_POINT_CHECKPOINT, predict_load
from kafkacodec.log.partition import read_checkpoint

SOURCES = 4  # source partitions, written by the broker
T0 = 1_700_000_000_000
CODECS = ("none", "gzip", "snappy", "lz4", "zstd")
KINDS = ("flip", "flip-header", "magic", "offset", "cut", "garbage", "zeros", "torn",
         "index-missing", "index-corrupt", "txnindex", "segment-missing", "double")  # fmt: skip
_LOAD = re.compile(r"Completed load of Log\(dir=(?P<dir>[^,]+), .*?\) with (?P<segments>\d+) segments, "
                   r"local-log-start-offset (?P<start>-?\d+) and log-end-offset (?P<end>-?\d+)")  # fmt: skip


def workload(partitions: int) -> dict:
    """Records for the source partitions: every codec, batches of a few records, and a
    transactional producer that commits and aborts (a .txnindex in some segments)."""
    def rec(i: int, p: int) -> dict:
        key = None if i % 5 == 4 else f"k{i % 13}".encode()
        value = (f"value {i} of partition {p} " * (2 + i % 9)).encode()
        return {"topic": "source", "partition": p, "timestamp": T0 + 7 * i, "key": b64(key),
                "value": b64(value), "headers": [["h", b64(b"x")]] if i % 3 == 0 else []}  # fmt: skip
    producers = [{"config": {"compression.type": codec, "linger.ms": "20", "batch.size": "2048",
                             "enable.idempotence": "false", "acks": "1"},
                  "records": [rec(100 * n + i, i % partitions) for i in range(120)]}
                 for n, codec in enumerate(CODECS)]  # fmt: skip
    producers.append({"config": {"transactional.id": "drill-txn", "compression.type": "lz4", "linger.ms": "5"},
                      "transactions": [{"commit": t % 3 != 1,
                                        "records": [rec(5000 + 10 * t + i, i % partitions) for i in range(8)]}
                                       for t in range(9)]})  # fmt: skip
    return {"producers": producers}


# ---------------------------------------------------------------------------- damage


def _batches(data: bytes) -> list[tuple[int, int]]:
    """(position, size) of the whole batches of a segment."""
    out, pos = [], 0
    while pos + 17 <= len(data):
        size = struct.unpack_from(">i", data, pos + 8)[0]
        if size < 14 or pos + 12 + size > len(data):
            break
        out.append((pos, 12 + size))
        pos += 12 + size
    return out


def _segment_files(d: Path) -> list[Path]:
    return sorted(d.glob("*.log"))


def damage(d: Path, rng: random.Random, kind: str) -> str:
    """Damage the partition directory d; returns what was done."""
    logs = _segment_files(d)
    if kind == "double":
        a, b = rng.sample([k for k in KINDS if k != "double"], 2)
        return f"{damage(d, rng, a)}; {damage(d, rng, b)}"
    if kind in ("index-missing", "index-corrupt"):
        log = rng.choice(logs)
        suffix = rng.choice([".index", ".timeindex"]) if kind == "index-corrupt" else ".index"
        idx = log.with_suffix(suffix)
        if kind == "index-missing" or not idx.exists():
            idx.unlink(missing_ok=True)
            return f"{idx.name} removed"
        raw = bytearray(idx.read_bytes() or b"\0" * 12)
        at = rng.randrange(len(raw))
        raw[at:at + 4] = rng.randbytes(4)
        idx.write_bytes(bytes(raw[: rng.choice([len(raw), max(1, len(raw) - rng.randrange(1, 7))])]))
        return f"{idx.name} overwritten at {at}"
    if kind == "txnindex":
        with_txn = [p for p in d.glob("*.txnindex") if p.stat().st_size >= 34] or [logs[0].with_suffix(".txnindex")]
        idx = with_txn[0]
        raw = bytearray(idx.read_bytes() or bytes(34))
        base = int(idx.stem)
        struct.pack_into(">q", raw, 18, base - 1 - rng.randrange(1000))  # an entry ending before the segment
        idx.write_bytes(bytes(raw))
        return f"{idx.name}: an entry ends before the segment"
    if kind == "segment-missing":
        if len(logs) < 3:
            return damage(d, rng, "cut")
        log = rng.choice(logs[1:-1])
        for f in d.glob(f"{log.stem}.*"):
            f.unlink()
        return f"{log.name} and its indexes removed"
    log = rng.choice(logs) if kind != "zeros" or rng.random() < 0.5 else logs[-1]
    data = bytearray(log.read_bytes())
    batches = _batches(bytes(data))
    if not batches:
        return damage(d, rng, "garbage" if kind != "garbage" else "zeros")
    pos, size = rng.choice(batches)
    if kind == "flip":
        at = rng.randrange(len(data))
        data[at] ^= 1 << rng.randrange(8)
        what = f"bit flipped at byte {at}"
    elif kind == "flip-header":
        at = pos + rng.randrange(21)
        data[at] ^= 1 << rng.randrange(8)
        what = f"header bit flipped at byte {at} (batch at {pos})"
    elif kind == "magic":
        data[pos + 16] = rng.choice([0, 1, 3, 4, 7, 42, 127, 128, 200, 255])
        what = f"magic of the batch at {pos} set to {data[pos + 16]}"
    elif kind == "offset":
        old = struct.unpack_from(">q", data, pos)[0]
        new = max(0, old + rng.choice([-50, -5, -1, 1, 3, 1000, 2**31, 2**40]))
        struct.pack_into(">q", data, pos, new)
        what = f"base offset of the batch at {pos}: {old} -> {new}"
    elif kind == "cut":
        at = rng.randrange(len(data))
        del data[at:]
        what = f"cut at byte {at}"
    elif kind == "garbage":
        at = rng.choice([pos, pos + rng.randrange(size)])
        junk = rng.randbytes(rng.randrange(1, 200))
        data[at:at] = junk
        what = f"{len(junk)} random bytes inserted at {at}"
    elif kind == "zeros":
        if rng.random() < 0.5:
            n = rng.randrange(1, 5000)
            data += bytes(n)
            what = f"{n} zero bytes appended"
        else:
            n = rng.randrange(1, 300)
            data[pos : pos + n] = bytes(min(n, len(data) - pos))
            what = f"{n} bytes zeroed at {pos}"
    else:  # torn
        half = size // 2
        data[pos + half : pos + size] = rng.randbytes(size - half)
        what = f"second half of the batch at {pos} replaced"
    log.write_bytes(bytes(data))
    return f"{log.name}: {what}"


# ---------------------------------------------------------------------------- the drill


@dataclass
class Case:
    partition: int
    seed: int
    kind: str
    done: str = ""
    recovery_point: int | None = None  # None: no entry
    predicted: dict = field(default_factory=dict)
    observed: dict = field(default_factory=dict)
    #: What `recover --repair` of a copy (partition repaired-i) left, and what the broker
    #: must then load and serve: None when kafkacodec refuses to repair it.
    repaired: dict | None = None

    @property
    def name(self) -> str:
        return f"drill-{self.partition}"


def write_checkpoint(path: Path, entries: dict[tuple[str, int], int]) -> None:
    """An offset checkpoint file as a broker writes it (OffsetCheckpointFile)."""
    body = "".join(f"{t} {p} {o}\n" for (t, p), o in sorted(entries.items()))
    path.write_text(f"0\n{len(entries)}\n{body}")


#: (case, kind, damage, why) of each drawn case whose predicted load fails (drawn again).
FAILS_REDRAWN: list[tuple] = []


def _make_case(broker: Broker, i: int, seed: int, written: dict, points: dict) -> Case:
    """Partition drill-i: a source partition's files, damaged, and a recovery point."""
    case = Case(i, seed, KINDS[i % len(KINDS)])
    crng = random.Random(case.seed)
    broker.transplant(case.name, broker.log_dir / f"source-{i % SOURCES}")
    d = broker.log_dir / case.name
    end = written.get(("source", i % SOURCES), 0)
    case.done = damage(d, crng, case.kind)
    bases = [int(p.stem) for p in _segment_files(d)] or [0]
    choice = crng.choice(["end", "none", "segment", "any"])
    case.recovery_point = {"end": end, "none": None, "segment": crng.choice(bases),
                           "any": crng.randrange(end + 1)}[choice]  # fmt: skip
    if case.recovery_point is None:
        points.pop(("drill", i), None)
    else:
        points[("drill", i)] = case.recovery_point
    return case


def _repaired_twin(broker: Broker, case: Case, backup: Path, points: dict) -> dict | None:
    """Partition repaired-i: drill-i's damaged files, repaired by kafkacodec (the strict
    rule over every segment), with drill-i's recovery point; what Kafka must then find:
    nothing to cut, the log end and segments the repair reported, the records kafkacodec
    reads. None (and an empty partition) when kafkacodec refuses the repair."""
    name = f"repaired-{case.partition}"
    broker.transplant(name, broker.log_dir / case.name)
    d = broker.log_dir / name
    if case.recovery_point is None:
        points.pop(("repaired", case.partition), None)
    else:
        points[("repaired", case.partition)] = case.recovery_point
    with Partition(d) as p:
        refused = R.plan(p).refused
    if refused:
        for f in d.iterdir():
            if f.name != "partition.metadata":
                f.unlink()
        return None
    plan, _job = R.repair(d, backup_root=backup)
    files = {f.name: f.stat().st_size for f in _segment_files(d)}
    with Partition(d) as p:
        records = as_consumed(p, partition=case.partition)
    return {"end": plan.log_end_offset, "segments": max(1, len(files)), "files": files,
            "records": records}


def prepare(version: str, root: Path, cases: int, seed: int) -> tuple[Broker, list[Case], Path]:
    """The broker with its source partitions written, and the damaged cases in place."""
    build = root / "build"
    build.mkdir(parents=True, exist_ok=True)
    broker = Broker(version, root / "broker")
    with broker:
        small = small_segments(broker, build)
        broker.create_topic(build, "source", SOURCES, **small)
        broker.create_topic(build, "drill", cases, **small)
        broker.create_topic(build, "repaired", cases, **small)
        broker.produce(build, workload(SOURCES))
        broker.stop()
    logs = broker.log_dir
    rng = random.Random(seed)
    written = read_checkpoint(logs / RECOVERY_POINT_CHECKPOINT)
    points = dict(written)
    out: list[Case] = []
    for i in range(cases):
        # a case whose load Kafka fails (predicted) would stop the broker for every case:
        # it is drawn again, and counted (the failures have tests of their own)
        for _attempt in range(20):
            case = _make_case(broker, i, rng.randrange(2**32), written, points)
            write_checkpoint(logs / RECOVERY_POINT_CHECKPOINT, points)
            with Partition(logs / case.name) as p:
                pred = predict_load(p)
            if pred.fails is None:
                break
            FAILS_REDRAWN.append((case.name, case.kind, case.done, pred.fails))
        case.predicted = {"segments": pred.segments_after, "start": pred.log_start_offset,
                          "end": pred.log_end_offset, "split": pred.split,
                          "files": {s.name: (s.valid_bytes if s.valid_bytes is not None else s.size)
                                    for s in pred.segments if s.action != "deleted"},
                          "changes": [s.to_dict() for s in pred.changes]}  # fmt: skip
        out.append(case)
    for case in out:
        case.repaired = _repaired_twin(broker, case, root / "backup", points)
    write_checkpoint(logs / RECOVERY_POINT_CHECKPOINT, points)
    (logs / ".kafka_cleanshutdown").unlink(missing_ok=True)
    return broker, out, logs


#: What Kafka's recovery says when it cuts or doubts a log.
DOUBTS = ("Corruption found", "Found invalid offset", "Found invalid messages", "Truncat")


def judge(broker: Broker, cases: list[Case], logs: Path, build: Path | None = None) -> list[Case]:
    """Start the broker (an unclean start), read its load lines and the files it leaves,
    and fetch the repaired partitions with Kafka's consumer; the cases whose outcome
    differs from the prediction, or whose repaired twin Kafka does not load as it is."""
    mark = broker.server_log.stat().st_size
    with broker:
        fetched = broker.consume(build, "repaired") if build is not None else []
        broker.stop()
    text = broker.log_text(mark)
    loads = {Path(m["dir"]).name: m for m in _LOAD.finditer(text)}
    by_partition: dict[int, list] = {}
    for o in fetched:
        by_partition.setdefault(o["partition"], []).append(o)
    wrong = []
    for case in cases:
        m = loads.get(case.name)
        files = {f.name: f.stat().st_size for f in _segment_files(logs / case.name)}
        split = bool(broker.lines(rf"Caught segment overflow error.*{re.escape(case.name)}\b", mark))
        case.observed = {"segments": int(m["segments"]) if m else None, "start": int(m["start"]) if m else None,
                         "end": int(m["end"]) if m else None, "split": split, "files": files}  # fmt: skip
        p = case.predicted
        if p["split"]:
            ok = split
        else:
            ok = (m is not None and (p["segments"], p["start"], p["end"]) == (int(m["segments"]), int(m["start"]), int(m["end"]))
                  and p["files"] == {n: s for n, s in files.items()})  # fmt: skip
        if case.repaired is not None:
            name = f"repaired-{case.partition}"
            r = loads.get(name)
            doubts = [line for line in text.splitlines()
                      if re.search(rf"\b{re.escape(name)}\b", line) and any(d in line for d in DOUBTS)]  # fmt: skip
            got = sorted(by_partition.get(case.partition, []), key=lambda o: o["offset"])
            left = {f.name: f.stat().st_size for f in _segment_files(logs / name)}
            want = case.repaired
            case.observed["repaired"] = {"end": int(r["end"]) if r else None,
                                         "segments": int(r["segments"]) if r else None,
                                         "doubts": doubts[:3], "files": left,
                                         "records_equal": got == want["records"]}  # fmt: skip
            ok = ok and r is not None and not doubts and got == want["records"] and left == want["files"] \
                and (int(r["end"]), int(r["segments"])) == (want["end"], want["segments"])
        if not ok:
            wrong.append(case)
    return wrong


def run(version: str, root: Path, cases: int, seed: int) -> tuple[list[Case], list[Case]]:
    broker, all_cases, logs = prepare(version, root, cases, seed)
    return all_cases, judge(broker, all_cases, logs, root / "build")


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--version", action="append", help="Kafka release (repeatable; default 4.0.0 and 4.4.0)")
    ap.add_argument("--cases", type=int, default=200)
    ap.add_argument("--seed", type=int, default=1)
    ap.add_argument("--root", type=Path, default=Path("out/drill"))
    args = ap.parse_args()
    status = 0
    for version in args.version or ["4.0.0", "4.4.0"]:
        root = args.root / version
        shutil.rmtree(root, ignore_errors=True)
        t = time.monotonic()
        cases, wrong = run(version, root, args.cases, args.seed)
        kinds = {k: sum(c.kind == k for c in cases) for k in KINDS}
        changed = sum(bool(c.predicted["changes"]) for c in cases)
        print(f"Kafka {version}: {len(cases) - len(wrong)}/{len(cases)} cases as predicted "
              f"({changed} with a change by Kafka's load; seed {args.seed}; {time.monotonic() - t:.0f} s)")  # fmt: skip
        print("  kinds: " + ", ".join(f"{k} {n}" for k, n in kinds.items()))
        repaired = [c for c in cases if c.repaired is not None]
        print(f"  repaired by kafkacodec and loaded by Kafka as they are: "
              f"{sum(c not in wrong for c in repaired)}/{len(repaired)} "
              f"({len(cases) - len(repaired)} repairs refused by kafkacodec)")
        print(f"  drawn again, their load predicted to fail: {len(FAILS_REDRAWN)}")
        for f in FAILS_REDRAWN:
            print(f"    {f}")
        FAILS_REDRAWN.clear()
        for c in wrong:
            print(json.dumps({"case": c.name, "seed": c.seed, "kind": c.kind, "done": c.done,
                              "recovery_point": c.recovery_point, "predicted": c.predicted,
                              "repaired": c.repaired and {k: v for k, v in c.repaired.items() if k != "records"},
                              "observed": c.observed}))  # fmt: skip
        status |= bool(wrong)
    return status


if __name__ == "__main__":
    sys.exit(main())

"""The commands an operator runs over a whole log, side by side with their anchors, in one
run over the same files (issue 40's table):

- the machine's limits: `cat` of the files (disk and page cache), CRC-32C over every byte
  (the crc32c package, as `verify` computes it), and the codec libraries alone over every
  batch's records region (what decompression costs, nothing else);
- `kafkacodec records` (text and --json) next to kcat (Debian's) and Kafka's
  kafka-console-consumer reading the same partition from a real broker (the broker
  harness of the Kafka tests, the partition's files transplanted into it);
- `kafkacodec dump` (--deep-iteration, --print-data-log, --offsets-decoder) next to Kafka's
  DumpLogSegments over the same segment, and checked to print the same text;
- `kafkacodec groups` and `dump --offsets-decoder` over a __consumer_offsets partition (and
  kafka-consumer-groups --describe --all-groups asking a broker that loaded it), `dump
  --transaction-log-decoder` over a __transaction_state partition, `kafkacodec metadata` and
  `dump --cluster-metadata-decoder` over a __cluster_metadata partition;
- `kafkacodec verify` and `rewrite --check` next to their limit (CRC-32C plus
  decompression of the same bytes), and with --jobs 1 and 2 (verify over every partition).

Every command runs as a user runs it: a process of its own, with its bytecode compiled as
an install compiles it (the bench compiles it first, whatever PYTHONDONTWRITEBYTECODE
says), its output to a file (so its lines are counted: a command that printed less is not
faster), its wall time the median of --repeat runs, and its peak anonymous memory
(RssAnon, sampled; a mapped segment's file pages are not counted, as issue 40 asks). One
core: each command is one process.

    python -m bench.commands [--records N] [--repeat K] [--no-broker]

Writes bench/results/commands.json.
"""

from __future__ import annotations

import argparse
import compileall
import hashlib
import os
import re
import shutil
import statistics
import subprocess
import sys
import tempfile
import threading
import time
from pathlib import Path

from bench import rss_anon_kb, save

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT / "tests"))  # the broker harness of the Kafka tests

KAFKA = "4.4.0"  # the release whose tools are the anchors
CLI = [sys.executable, "-m", "kafkacodec"]
CODECS = ("none", "gzip", "snappy", "lz4", "zstd")


class Run:
    """One process run to its end: wall seconds, peak RssAnon (MB), output lines."""

    def __init__(self, cmd: list[str], out: Path, *, env: dict | None = None, ok=(0,)) -> None:
        with open(out, "wb") as sink:
            t0 = time.perf_counter()
            proc = subprocess.Popen(cmd, stdout=sink, stderr=subprocess.PIPE, env=env)
            peak = [0]
            done = threading.Event()
            sampler = threading.Thread(target=_sample, args=(proc.pid, peak, done), daemon=True)
            sampler.start()
            _, err = proc.communicate()
            self.seconds = time.perf_counter() - t0
            done.set()
            sampler.join()
        if proc.returncode not in ok:
            raise SystemExit(
                f"{' '.join(map(str, cmd))} exited {proc.returncode}:\n{err.decode()[-2000:]}"
            )
        self.anon_mb = peak[0] / 1024
        with open(out, "rb") as f:
            self.lines = sum(block.count(b"\n") for block in iter(lambda: f.read(1 << 20), b""))


def _sample(pid: int, peak: list[int], done: threading.Event) -> None:
    """The peak RssAnon (kB) of pid and its children, every 20 ms."""
    while not done.is_set():
        peak[0] = max(peak[0], sum(rss_anon_kb(p) for p in [pid, *_children(pid)]))
        done.wait(0.02)


def _children(pid: int) -> list[int]:
    try:
        return [int(c) for c in open(f"/proc/{pid}/task/{pid}/children").read().split()]
    except OSError:
        return []


def median_run(cmd, out: Path, repeat: int, **kw) -> dict:
    runs = [Run(cmd, out, **kw) for _ in range(repeat)]
    seconds = statistics.median(r.seconds for r in runs)
    return {"seconds": round(seconds, 3), "lines": runs[0].lines,
            "anon_mb": round(max(r.anon_mb for r in runs), 1)}  # fmt: skip


def rate(entry: dict, n: int, unit: str = "records_per_s") -> dict:
    entry[unit] = round(n / entry["seconds"])
    return entry


def sample(out: Path, records: int, codec: str, topic: str) -> Path:
    subprocess.run([*CLI, "sample", str(out), "--records", str(records), "--partitions", "1",
                    "--codecs", codec, "--topic", topic, "--batch-records", "200", "--quiet"],
                   check=True, stdout=subprocess.DEVNULL)  # fmt: skip
    return out / f"{topic}-0"


def offsets_partition(out: Path, n: int) -> Path:
    """A __consumer_offsets partition of n commits (bench.internal's corpus), in batches of
    100 as a group coordinator appends them."""
    import kafkacodec as kc
    from bench.internal import corpus
    from kafkacodec.log import PartitionWriter

    part = out / "__consumer_offsets-0"
    pairs = corpus(n)
    with PartitionWriter(part, segment_bytes=1 << 31, fsync=False) as w:
        for i in range(0, n, 100):
            recs = [kc.Record(None, 1_700_000_000_000 + i, k, v) for k, v in pairs[i : i + 100]]
            w.append(kc.build_batch(recs, base_offset=i))
    return part


def internal_partition(out: Path, name: str, pairs: list[tuple], batch: int = 100) -> Path:
    """A partition directory of (key, value) records, in batches of `batch` as a
    coordinator or a controller appends them."""
    import kafkacodec as kc
    from kafkacodec.log import PartitionWriter

    part = out / name
    with PartitionWriter(part, segment_bytes=1 << 31, fsync=False) as w:
        for i in range(0, len(pairs), batch):
            recs = [kc.Record(None, 1_700_000_000_000 + i, k, v) for k, v in pairs[i : i + batch]]
            w.append(kc.build_batch(recs, base_offset=i))
    return part


def _build(cls, version: int, **fields) -> bytes:
    """A struct of a generated class at a version, with its version prefix."""
    return version.to_bytes(2, "big") + cls(version=version, **fields).build()


def transaction_pairs(n: int) -> list[tuple[bytes, bytes]]:
    """n __transaction_state records as a transaction coordinator writes them over many
    transactions: each id going Ongoing (with its partitions), PrepareCommit, CompleteCommit,
    at value versions 0 and 1 (flexible, with a tagged field)."""
    import importlib
    import random

    from kafkacodec.internal import DEFAULT

    key_cls = DEFAULT.coordinator_structs("__transaction_state", "key")[0].cls
    value_cls = DEFAULT.coordinator_structs("__transaction_state", "value")[0].cls
    m = importlib.import_module(value_cls.__module__)
    rnd = random.Random(7)
    out = []
    for i in range(n):
        tid = f"txn-{i // 3 % 5000}"
        version = i % 2
        tagged = [m.TransactionLogValueTaggedField(version=version, tag=2,
                                                   value=m.TransactionLogValueTag2(version=version, client_transaction_version=2, unread=b""))
                  ] if version else []  # fmt: skip
        parts = [m.PartitionsSchema(version=version, topic=f"orders-{t}",
                                    partition_ids=sorted(rnd.sample(range(32), 3)),
                                    tagged_fields=[] if version else None)
                 for t in range(2)] if i % 3 == 0 else []  # fmt: skip
        value = _build(value_cls, version, producer_id=1000 + i // 3 % 5000, producer_epoch=i // 15000,
                       transaction_timeout_ms=60000, transaction_status=(1, 2, 4)[i % 3],
                       transaction_partitions=parts, transaction_last_update_timestamp_ms=1_700_000_000_000 + i,
                       transaction_start_timestamp_ms=1_700_000_000_000 + i - i % 3,
                       tagged_fields=tagged if version else None)  # fmt: skip
        out.append((_build(key_cls, 0, transactional_id=tid), value))
    return out


def metadata_values(n: int) -> list[tuple[None, bytes]]:
    """n __cluster_metadata records as a KRaft controller writes them: brokers registered,
    topics of 20 partitions each, then partition changes (leader and ISR, tagged fields)
    and the controller's periodic NoOpRecords."""
    import importlib

    from kafkacodec.internal import DEFAULT

    def cls(spec):
        return DEFAULT.top(DEFAULT.schema_of(spec))

    def value(spec: str, version: int, **fields) -> bytes:
        c = cls(spec)
        return bytes([1, c.MESSAGE["apiKey"], version]) + c(version=version, **fields).build()

    reg = importlib.import_module(cls("RegisterBrokerRecord").__module__)
    change = importlib.import_module(cls("PartitionChangeRecord").__module__)
    out: list[bytes] = []
    for b in range(3):
        endpoint = reg.BrokerEndpoint(version=0, name="PLAINTEXT", host=f"broker-{b}", port=9092,
                                      security_protocol=0, tagged_fields=[])  # fmt: skip
        out.append(value("RegisterBrokerRecord", 0, broker_id=b, incarnation_id=bytes([b]) * 16,
                         broker_epoch=10 + b, end_points=[endpoint], features=[], rack=None, fenced=0,
                         tagged_fields=[]))  # fmt: skip
    topics = max(1, n // 400)
    ids = [i.to_bytes(16, "big") for i in range(1, topics + 1)]
    for t, tid in enumerate(ids):
        out.append(value("TopicRecord", 0, name=f"orders-{t}", topic_id=tid, tagged_fields=[]))
        for p in range(20):
            replicas = [(p + k) % 3 for k in range(3)]
            out.append(value("PartitionRecord", 0, partition_id=p, topic_id=tid, replicas=replicas,
                             isr=replicas, removing_replicas=[], adding_replicas=[], leader=replicas[0],
                             leader_epoch=0, partition_epoch=0, tagged_fields=[]))  # fmt: skip
    i = 0
    while len(out) < n:
        if i % 10 == 9:
            out.append(value("NoOpRecord", 0, tagged_fields=[]))
        else:
            leader = change.PartitionChangeRecordTaggedField(
                version=0, tag=1, value=change.PartitionChangeRecordTag1(version=0, leader=i % 3, unread=b""))
            isr = change.PartitionChangeRecordTaggedField(
                version=0, tag=0, value=change.PartitionChangeRecordTag0(version=0, isr=[i % 3, (i + 1) % 3], unread=b""))
            out.append(value("PartitionChangeRecord", 0, partition_id=i % 20, topic_id=ids[i % topics],
                             tagged_fields=[isr, leader]))  # fmt: skip
        i += 1
    return [(None, v) for v in out[:n]]


def share_state_pairs(n: int) -> list[tuple[bytes, bytes]]:
    """n __share_group_state records as a share coordinator writes them: for each share
    partition a ShareSnapshotValue now and then, ShareUpdateValues between, each with a few
    acknowledged batches."""
    import importlib

    from kafkacodec.internal import DEFAULT

    keys = DEFAULT.coordinator_structs("__share_group_state", "key")
    values = DEFAULT.coordinator_structs("__share_group_state", "value")
    snap = importlib.import_module(values[0].cls.__module__)
    upd = importlib.import_module(values[1].cls.__module__)
    out = []
    for i in range(n):
        rt = 0 if i % 10 == 0 else 1  # ShareSnapshot, else ShareUpdate
        mod = snap if rt == 0 else upd
        batches = [mod.StateBatch(version=0, first_offset=i * 10 + b, last_offset=i * 10 + b + 4,
                                  delivery_state=b % 3, delivery_count=1 + b % 2, tagged_fields=[])
                   for b in range(3)]  # fmt: skip
        key = (rt.to_bytes(2, "big") + keys[rt].cls(version=0, group_id=f"share-{i % 40}",
               topic_id=(1 + i % 16).to_bytes(16, "big"), partition=i % 12).build())  # fmt: skip
        fields = dict(snapshot_epoch=i // 1000, leader_epoch=3, start_offset=i * 10, state_batches=batches,
                      tagged_fields=[])  # fmt: skip
        if rt == 0:
            fields.update(state_epoch=1, create_timestamp=1_700_000_000_000, write_timestamp=1_700_000_000_000 + i)
        out.append((key, _build(values[rt].cls, 0, **fields)))
    return out


def remote_metadata_values(n: int) -> list[tuple[None, bytes]]:
    """n __remote_log_metadata records as a broker's topic-based RLMM writes them: each
    segment copied (RemoteLogSegmentMetadataRecord, COPY_SEGMENT_STARTED) then finished
    (RemoteLogSegmentMetadataUpdateRecord, COPY_SEGMENT_FINISHED)."""
    import importlib

    from kafkacodec.internal import DEFAULT

    add = DEFAULT.top(DEFAULT.schema_of("RemoteLogSegmentMetadataRecord"))
    upd = DEFAULT.top(DEFAULT.schema_of("RemoteLogSegmentMetadataUpdateRecord"))
    ma, mu = importlib.import_module(add.__module__), importlib.import_module(upd.__module__)
    out = []
    for i in range(n):
        mod, cls = (ma, add) if i % 2 == 0 else (mu, upd)
        seg = i // 2
        tp = mod.TopicIdPartitionEntry(version=0, name=f"orders-{seg % 8}", id=(1 + seg % 8).to_bytes(16, "big"),
                                       partition=seg % 6, tagged_fields=[])  # fmt: skip
        sid = mod.RemoteLogSegmentIdEntry(version=0, topic_id_partition=tp, id=seg.to_bytes(16, "big"),
                                          tagged_fields=[])  # fmt: skip
        if cls is add:
            epochs = [ma.SegmentLeaderEpochEntry(version=0, leader_epoch=e, offset=seg * 1000 + e * 100,
                                                 tagged_fields=[]) for e in range(2)]  # fmt: skip
            obj = cls(version=0, remote_log_segment_id=sid, start_offset=seg * 1000, end_offset=seg * 1000 + 999,
                      broker_id=1, max_timestamp_ms=1_700_000_000_000 + seg, event_timestamp_ms=1_700_000_000_000,
                      segment_leader_epochs=epochs, segment_size_in_bytes=1 << 20, custom_metadata=None,
                      remote_log_segment_state=0, tagged_fields=[])  # fmt: skip
        else:
            obj = cls(version=0, remote_log_segment_id=sid, broker_id=1, event_timestamp_ms=1_700_000_000_000 + 1,
                      custom_metadata=None, remote_log_segment_state=1, tagged_fields=[])  # fmt: skip
        out.append((None, bytes([1, cls.MESSAGE["apiKey"], 0]) + obj.build()))
    return out


def limits(part: Path, repeat: int) -> dict:
    """cat of the files, CRC-32C over every byte, and the codec alone over every region."""
    import kafkacodec as kc
    from kafkacodec.records._native import check_v2_records
    from kafkacodec.runtime import compression as C
    from kafkacodec.runtime.crc import crc32c

    log = next(part.glob("*.log"))
    data = log.read_bytes()
    cat = median_run(["cat", *map(str, sorted(part.iterdir()))], Path(os.devnull), repeat)
    t = []
    for _ in range(repeat):
        t0 = time.perf_counter()
        crc32c(data)
        t.append(time.perf_counter() - t0)
    regions = [
        (b.attributes & 7, bytes(b.records_region_raw), b.num_records)
        for b in kc.iter_batches(data, verify_crc=False)
    ]
    d = []
    for _ in range(repeat):
        t0 = time.perf_counter()
        for codec, raw, _n in regions:
            if codec:
                C.decompress(codec, raw, 2)
        d.append(time.perf_counter() - t0)
    # what verify does beyond the limit: every record's framing checked (the native
    # check alone, over the regions already decompressed)
    plain = [(C.decompress(codec, raw, 2) if codec else raw, n) for codec, raw, n in regions]
    f = []
    for _ in range(repeat):
        t0 = time.perf_counter()
        for region, n in plain:
            check_v2_records(region, n)
        f.append(time.perf_counter() - t0)
    return {"bytes": len(data), "cat_s": cat["seconds"], "crc32c_s": round(statistics.median(t), 4),
            "decompress_s": round(statistics.median(d), 4), "records_check_s": round(statistics.median(f), 4)}  # fmt: skip


def _against_limits(e: dict, lim: dict, start: float) -> dict:
    """A check's figures beside its limits: the issue's (CRC-32C plus the codec alone), the
    same after the process's start, and after the start beside the limit plus every
    record's framing checked (what verify does beyond the issue's limit)."""
    floor = lim["crc32c_s"] + lim["decompress_s"]
    framed = floor + lim["records_check_s"]

    def ratio(a: float, b: float) -> float | None:
        return round(a / b, 2) if b > 0 else None

    e.update(mb_per_s=round(lim["bytes"] / 1e6 / e["seconds"], 1), limit_ratio=ratio(e["seconds"], floor),
             after_start_ratio=ratio(e["seconds"] - start, floor),
             framed_after_start_ratio=ratio(e["seconds"] - start, framed))  # fmt: skip
    return e


def normalize_dump(path: Path) -> str:
    """The sha256 of a dump with the `Dumping <path>` line (and an index's sanity-check line)
    naming the file alone (Kafka names it by the path it was given, kafkacodec by its name)."""
    h = hashlib.sha256()
    with open(path, "rb") as f:
        first = f.readline()
        h.update(re.sub(rb"^Dumping \S*/", b"Dumping ", first))
        second = f.readline()
        h.update(re.sub(rb"^/\S*/(\S+ (passed|failed) sanity check)", rb"\1", second))
        for block in iter(lambda: f.read(1 << 20), b""):
            h.update(block)
    return h.hexdigest()


def dumps(segment: Path, work: Path, repeat: int, flags: list[list[str]]) -> dict:
    from kafka_broker import classpath, dump_main

    cp = classpath(KAFKA)
    main = dump_main(KAFKA)
    out = {}
    for fl in flags:
        name = " ".join(fl)
        ours_file, kafka_file = work / "ours.txt", work / "kafka.txt"
        ours = median_run(
            [*CLI, "dump", "--kafka-version", KAFKA[:3], *fl, str(segment)], ours_file, repeat
        )
        kafka = median_run(
            ["java", "-Xmx2g", "-cp", cp, main, "--files", str(segment), *fl], kafka_file, repeat
        )
        same = normalize_dump(ours_file) == normalize_dump(kafka_file)
        out[name] = {"kafkacodec": rate(ours, ours["lines"], "lines_per_s"),
                     "DumpLogSegments": rate(kafka, kafka["lines"], "lines_per_s"),
                     "same_output": same, "ratio": round(kafka["seconds"] / ours["seconds"], 2)}  # fmt: skip
        print(
            f"  dump {name}: {ours['seconds']}s vs DumpLogSegments {kafka['seconds']}s "
            f"({out[name]['ratio']}x, same output: {same})",
            flush=True,
        )
    return out


def consumers(part: Path, n: int, work: Path, repeat: int) -> dict:
    """kcat and kafka-console-consumer reading the partition from a broker it was
    transplanted into, beside `kafkacodec records` on its files."""
    from kafka_broker import Broker, classpath, client_classes

    out: dict = {}
    root = work / "broker"
    build = work / "client"
    broker = Broker(KAFKA, root)
    try:
        broker.start()
        broker.create_topic(client_classes(KAFKA, build), "bench", 1)
        broker.stop()
        broker.transplant("bench-0", part)
        broker.start()
        fmt = "offset %o %T key=%k value=%s headers=%h\n"
        if shutil.which("kcat") is None:
            out["kcat"] = {
                "missing": "kcat is not installed (Debian: apt-get install kcat; make bench does)"
            }
        else:
            out["kcat"] = rate(median_run(["kcat", "-C", "-b", broker.bootstrap, "-t", "bench", "-p", "0",
                                           "-o", "beginning", "-e", "-q", "-f", fmt],
                                          work / "kcat.txt", repeat), n)  # fmt: skip
        console = ["java", "-Xmx1g", "-cp", classpath(KAFKA), "org.apache.kafka.tools.consumer.ConsoleConsumer",
                   "--bootstrap-server", broker.bootstrap, "--topic", "bench", "--from-beginning",
                   "--max-messages", str(n), "--timeout-ms", "30000",
                   "--property", "print.offset=true", "--property", "print.timestamp=true",
                   "--property", "print.key=true", "--property", "print.headers=true"]  # fmt: skip
        out["kafka-console-consumer"] = rate(median_run(console, work / "console.txt", repeat), n)
    finally:
        broker.kill()
    for name, entry in out.items():  # (the console consumer may log a line to stdout too)
        if "lines" in entry and not n <= entry["lines"] <= n + 10:
            raise SystemExit(f"{name} printed {entry['lines']} lines for {n} records")
    return out


def consumer_groups(offsets: Path, work: Path, repeat: int) -> dict:
    """kafka-consumer-groups --describe --all-groups asking a broker that loaded the
    __consumer_offsets partition (transplanted as its only partition, the topics its
    commits name created), beside `kafkacodec groups` on the files: the time of each, and
    whether both report the same committed offsets (group, topic, partition, offset)."""
    from kafka_broker import Broker, classpath, client_classes

    from bench.internal import GROUPS, TOPICS

    root, build = work / "groups-broker", work / "groups-client"
    broker = Broker(KAFKA, root, offsets_topic_num_partitions=1)
    tool = ["java", "-Xmx1g", "-cp", classpath(KAFKA),
            "org.apache.kafka.tools.consumer.group.ConsumerGroupCommand"]  # fmt: skip
    try:
        broker.start()
        for topic in TOPICS:
            broker.create_topic(client_classes(KAFKA, build), topic, 32)
        # a group lookup makes the coordinator create __consumer_offsets (one partition)
        subprocess.run([*tool, "--bootstrap-server", broker.bootstrap, "--describe", "--group", GROUPS[0]],
                       capture_output=True, timeout=300)  # fmt: skip
        for _ in range(120):
            if (broker.log_dir / "__consumer_offsets-0").is_dir():
                break
            time.sleep(0.5)
        broker.stop()
        broker.transplant("__consumer_offsets-0", offsets)
        broker.start()
        kafka_out, ours_out = work / "kcg.txt", work / "groups.txt"
        kafka = median_run([*tool, "--bootstrap-server", broker.bootstrap, "--describe", "--all-groups"],
                           kafka_out, repeat)  # fmt: skip
    finally:
        broker.kill()
    ours = median_run([*CLI, "groups", str(offsets)], ours_out, repeat)

    def rows(path: Path) -> set[tuple[str, ...]]:
        return {tuple(cells[:4]) for cells in (line.split() for line in path.read_text().splitlines())
                if len(cells) >= 6 and cells[0] != "GROUP"}  # fmt: skip

    same = rows(kafka_out) == rows(ours_out)
    return {"kafka-consumer-groups": kafka, "kafkacodec": ours, "same_offsets": same,
            "ratio": round(kafka["seconds"] / ours["seconds"], 2)}  # fmt: skip


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument(
        "--records", type=int, default=2_000_000, help="records of the uncompressed partition"
    )
    ap.add_argument(
        "--offsets", type=int, default=2_000_000, help="records of the __consumer_offsets partition"
    )
    ap.add_argument(
        "--internal", type=int, default=1_000_000,
        help="records of the __transaction_state, __cluster_metadata, __share_group_state and "
        "__remote_log_metadata partitions",
    )  # fmt: skip
    ap.add_argument(
        "--big-records", type=int, default=8_000_000,
        help="records of the uncompressed segment verify reads whole (8M: about 1 GB)",
    )  # fmt: skip
    ap.add_argument("--repeat", type=int, default=3)
    ap.add_argument(
        "--no-broker", action="store_true", help="leave out kcat and kafka-console-consumer"
    )
    ap.add_argument("--no-kafka", action="store_true", help="leave out every Kafka tool (no JVM)")
    ap.add_argument("--out", default="commands", help="the results' name in bench/results")
    args = ap.parse_args(argv)
    n, rep = args.records, args.repeat
    # as installed: pip compiles the bytecode at install, so no run here pays for it
    os.environ.pop("PYTHONDONTWRITEBYTECODE", None)
    compileall.compile_dir(ROOT / "kafkacodec", quiet=1)
    result: dict = {"records_uncompressed": n, "offsets_records": args.offsets,
                    "internal_records": args.internal, "repeat": rep, "kafka": KAFKA,
                    "python": sys.version.split()[0], "cpu": os.cpu_count()}  # fmt: skip
    with tempfile.TemporaryDirectory(prefix="kafkacodec-bench-") as tmp:
        work = Path(tmp)
        print(f"writing {n} records per codec ...", flush=True)
        parts = {
            c: sample(work / f"logs-{c}", n if c == "none" else n // 2, c, "bench") for c in CODECS
        }
        offsets = offsets_partition(work / "logs-offsets", args.offsets)
        result["limits"] = {c: limits(p, rep) for c, p in parts.items()}
        for c, lim in result["limits"].items():
            print(f"  limits {c}: {lim}", flush=True)

        counts = {c: n if c == "none" else n // 2 for c in CODECS}
        recs: dict = {}
        for c, p in parts.items():
            recs[c] = {
                "text": rate(median_run([*CLI, "records", str(p)], work / "r.txt", rep), counts[c]),
                "json": rate(
                    median_run([*CLI, "records", "--json", str(p)], work / "r.json", rep), counts[c]
                ),
            }
            for mode, e in recs[c].items():
                if e["lines"] != counts[c]:
                    raise SystemExit(f"records {mode} printed {e['lines']} lines for {counts[c]}")
            print(f"  records {c}: {recs[c]}", flush=True)
        result["records"] = recs

        # what every command pays before it reads a byte: the interpreter and the imports
        (work / "empty").mkdir()
        start = median_run([*CLI, "verify", "--quiet", str(work / "empty")], work / "v.txt", rep, ok=(0, 2))
        result["start_s"] = start["seconds"]
        checks: dict = {}
        for c, p in parts.items():
            checks[c] = {
                "verify": median_run([*CLI, "verify", "--quiet", str(p)], work / "v.txt", rep),
                "rewrite_check": median_run(
                    [*CLI, "rewrite", "--check", "--jobs", "1", str(p)], work / "w.txt", rep
                ),  # fmt: skip
            }
            for e in checks[c].values():
                _against_limits(e, result["limits"][c], start["seconds"])
            print(f"  verify/rewrite --check {c}: {checks[c]}", flush=True)
        # verify of a segment of Kafka's default size (log.segment.bytes, 1 GiB), uncompressed
        big = sample(work / "logs-big", args.big_records, "none", "bench")
        lim = result["limits"]["big"] = limits(big, rep)
        e = _against_limits(median_run([*CLI, "verify", "--quiet", str(big)], work / "v.txt", rep), lim, start["seconds"])
        checks["big"] = {"verify": e}
        print(f"  verify of {lim['bytes']} bytes: {e}", flush=True)
        shutil.rmtree(work / "logs-big")
        result["checks"] = checks
        # --jobs: verify of every partition above at once, and rewrite --check of one
        everything = [str(p) for p in parts.values()]
        result["jobs"] = {
            f"{cmd} --jobs {j}": median_run([*CLI, *cmd.split(), "--jobs", str(j), *paths], work / "j.txt", rep)
            for cmd, paths in (("verify --quiet", everything), ("rewrite --check", [str(parts["none"])]))
            for j in (1, 2)
        }  # fmt: skip
        print(f"  --jobs: {result['jobs']}", flush=True)

        m = args.internal
        txns = internal_partition(work / "logs-txn", "__transaction_state-0", transaction_pairs(m))
        meta = internal_partition(work / "logs-meta", "__cluster_metadata-0", metadata_values(m))
        share = internal_partition(work / "logs-share", "__share_group_state-0", share_state_pairs(m))
        remote = internal_partition(work / "logs-remote", "__remote_log_metadata-0", remote_metadata_values(m))
        internal = {
            "groups": rate(median_run([*CLI, "groups", str(offsets)], work / "g.txt", rep), args.offsets),
            "metadata": rate(median_run([*CLI, "metadata", str(meta)], work / "m.txt", rep), m),
        }  # fmt: skip
        decoders = (("--offsets-decoder", offsets, args.offsets), ("--transaction-log-decoder", txns, m),
                    ("--cluster-metadata-decoder", meta, m), ("--share-group-state-decoder", share, m),
                    ("--remote-log-metadata-decoder", remote, m))  # fmt: skip
        for flag, part, count in decoders:
            cmd = [*CLI, "dump", "--kafka-version", KAFKA[:3], flag, str(next(part.glob("*.log")))]
            internal[f"dump {flag}"] = rate(median_run(cmd, work / "d.txt", rep), count)
        result["internal"] = internal
        print(f"  internal topics: {internal}", flush=True)
        if not args.no_kafka:
            seg = next(parts["none"].glob("*.log"))
            result["dump"] = dumps(seg, work, rep, [["--deep-iteration"], ["--print-data-log"]])
            for index, flags in ((".index", [[], ["--verify-index-only"], ["--index-sanity-check"]]),
                                 (".timeindex", [["--index-sanity-check"]])):  # fmt: skip
                # (the time index dumped whole took DumpLogSegments 520 s here: left out)
                for fl in flags:
                    got = dumps(seg.with_suffix(index), work, rep, [fl])
                    result["dump"].update({f"{index} {k}".strip(): v for k, v in got.items()})
            for flag, part, _count in decoders:
                result["dump"].update(dumps(next(part.glob("*.log")), work, rep, [[flag]]))
            if not args.no_broker:
                result["consumers"] = consumers(parts["none"], n, work, rep)
                print(f"  consumers: {result['consumers']}", flush=True)
                result["groups_tool"] = consumer_groups(offsets, work, rep)
                print(f"  kafka-consumer-groups: {result['groups_tool']}", flush=True)
    path = save(args.out, result)
    print(f"wrote {path}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())

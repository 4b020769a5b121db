"""A sample log.dirs, written with the project's own builders and PartitionWriter: several
topics and partitions covering every magic and codec, headers, idempotent and
transactional producers with COMMIT and ABORT markers, LogAppendTime, leader epochs and
rolled segments. Deterministic: the same call writes the same bytes."""

from __future__ import annotations

import os
import shutil
from pathlib import Path

from .log.partition import write_checkpoint_text
from .log.writer import PartitionWriter
from .records.batches import Record
from .records.builders import build_batch, build_control_batch, build_message_set

__all__ = ["write_sample_log_dirs", "write_sized_log_dirs", "write_damaged_copy", "write_consumer_offsets",
           "write_cluster_disks", "SCENARIOS", "metadata_value"]

T0 = 1_700_000_000_000
V2_CODECS = ("none", "gzip", "snappy", "lz4", "zstd")
LEGACY = ((0, "none"), (0, "gzip"), (0, "snappy"), (0, "lz4"),
          (1, "none"), (1, "gzip"), (1, "snappy"), (1, "lz4"))  # fmt: skip


def _orders(w: PartitionWriter, partition: int, batches: int) -> None:
    """v2 batches of every codec; every fifth batch belongs to a transaction that the next
    control batch commits or (every other time) aborts."""
    offset, ts, txn = 0, T0 + partition * 7, 0
    for i in range(batches):
        codec = V2_CODECS[i % len(V2_CODECS)]
        epoch = i // 40
        n = 5 + i % 11
        recs = [
            Record(None, ts + j * 10, f"customer-{(offset + j) % 17}".encode(),
                   f'{{"order": {offset + j}, "amount": {(offset + j) * 7 % 1000}}}'.encode(),
                   [("source", b"web" if j % 2 else b"app"), ("trace", f"{i}-{j}".encode())])
            for j in range(n)
        ]  # fmt: skip
        transactional = i % 5 == 4
        pid = 1000 + partition if not transactional else 2000 + txn
        w.append(build_batch(recs, base_offset=offset, compression=codec, producer_id=pid,
                             producer_epoch=0, base_sequence=offset if not transactional else 0,
                             is_transactional=transactional, partition_leader_epoch=epoch))  # fmt: skip
        offset += n
        ts += n * 10
        if transactional:
            w.append(build_control_batch(txn % 2 == 0, offset=offset, timestamp=ts, producer_id=pid,
                                         producer_epoch=0, coordinator_epoch=1,
                                         partition_leader_epoch=epoch))  # fmt: skip
            offset += 1
            txn += 1


def _clicks(w: PartitionWriter, batches: int) -> None:
    """LogAppendTime batches: the broker's clock stamps every record."""
    offset = 0
    for i in range(batches):
        recs = [Record(None, T0 + i, None, f"click {offset + j}".encode()) for j in range(20)]
        w.append(build_batch(recs, base_offset=offset, compression=V2_CODECS[i % 5],
                             timestamp_type="LogAppendTime", log_append_time=T0 + 1000 * i))  # fmt: skip
        offset += 20


def _legacy(w: PartitionWriter, rounds: int) -> None:
    """Message sets of magic 0 and 1, uncompressed and in wrappers of each codec."""
    offset = 0
    for _ in range(rounds):
        for magic, codec in LEGACY:
            recs = [Record(None, T0 + offset + j, f"k{offset + j}".encode(), f"legacy value {offset + j}".encode())
                    for j in range(4)]  # fmt: skip
            w.append(build_message_set(recs, magic=magic, compression=codec, base_offset=offset))
            offset += 4


def write_sample_log_dirs(root, *, batches: int = 400, segment_bytes: int = 64 << 10) -> Path:
    """Write a fresh sample log.dirs at `root` (removing what was there) and return it."""
    root = Path(root)
    if root.exists():
        shutil.rmtree(root)
    root.mkdir(parents=True)
    opts = {"segment_bytes": segment_bytes, "index_interval_bytes": 4096, "fsync": False}
    for p in (0, 1):
        with PartitionWriter(root / f"orders-{p}", **opts) as w:
            _orders(w, p, batches)
    with PartitionWriter(root / "clicks-0", **opts) as w:
        _clicks(w, max(1, batches // 4))
    with PartitionWriter(root / "legacy-events-0", **opts) as w:
        _legacy(w, max(1, batches // 40))
    return root


def write_sized_log_dirs(root, *, records: int | None = 100_000, size: int | None = None,
                         partitions: int = 4, codecs=V2_CODECS, topic: str = "sample",
                         record_bytes: int = 100, batch_records: int = 50,
                         segment_bytes: int = 1 << 30, progress=None) -> dict:  # fmt: skip
    """A log.dirs of any size for trying the pipeline at scale (`kafkacodec sample`):
    `partitions` directories `<topic>-<n>`, batches of `batch_records` JSON-like records of
    about `record_bytes` bytes, compressed with each of `codecs` in turn, timestamps 10 ms
    apart, until `records` records or `size` bytes on disk (whichever comes first). Refuses
    a root that exists and is not empty. Returns what was written.

    The log.dirs is written beside root (a hidden `.<name>.sample-<pid>`) and renamed to
    root when whole: stopped at any moment (Ctrl-C, an error, a full disk), it leaves
    nothing (what was written is removed), and a second run starts afresh."""
    root = Path(root)
    if root.exists() and (not root.is_dir() or any(root.iterdir())):
        raise FileExistsError(f"{root}: exists and is not empty; sample writes a new log.dirs")
    if records is None and size is None:
        raise ValueError("give records or size")
    if partitions < 1 or batch_records < 1 or not codecs:
        raise ValueError("partitions, batch_records and codecs must be at least 1")
    root.parent.mkdir(parents=True, exist_ok=True)
    stage = root.parent / f".{root.name}.sample-{os.getpid()}"
    shutil.rmtree(stage, ignore_errors=True)
    try:
        written = _write_sized(stage, records, size, partitions, codecs, topic, record_bytes,
                               batch_records, segment_bytes, progress)  # fmt: skip
        os.replace(stage, root)  # onto an empty root, or none
    except BaseException:
        shutil.rmtree(stage, ignore_errors=True)
        raise
    return {**written, "partitions": partitions, "root": str(root)}


def _write_sized(root: Path, records, size, partitions, codecs, topic, record_bytes, batch_records,
                 segment_bytes, progress) -> dict:  # fmt: skip
    writers = [PartitionWriter(root / f"{topic}-{p}", segment_bytes=segment_bytes, fsync=False)
               for p in range(partitions)]  # fmt: skip
    pad = "x" * max(0, record_bytes - 60)
    written = {"records": 0, "bytes": 0, "batches": 0}
    nxt = [0] * partitions
    try:
        while (records is None or written["records"] < records) and (
            size is None or written["bytes"] < size
        ):
            p = written["batches"] % partitions
            n = (
                batch_records
                if records is None
                else min(batch_records, records - written["records"])
            )
            base = nxt[p]
            recs = [Record(None, T0 + (base + j) * 10, f"key-{(base + j) % 1000}".encode(),
                           f'{{"id": {base + j}, "user": "u{(base + j) * 7919 % 9973}", "pad": "{pad}"}}'.encode(),
                           [("source", b"kafkacodec-sample")])
                    for j in range(n)]  # fmt: skip
            data = build_batch(
                recs, base_offset=base, compression=codecs[written["batches"] % len(codecs)]
            )
            writers[p].append(data)
            nxt[p] += n
            written["records"] += n
            written["bytes"] += len(data)
            written["batches"] += 1
            if progress is not None:
                progress(len(data))
    finally:
        for w in writers:
            w.close()
    return written


def write_damaged_copy(partition, root, *, base_offsets=(1912, 2367)) -> Path:
    """root/<the partition's name>: a copy of a partition directory whose batches at these
    base offsets are damaged (each one's last byte inverted, inside its records: a CRC
    mismatch), to try verify, records --skip-corrupt and recover on (`make demo` writes
    out/damaged from the sample's orders-0). root must not hold that partition already."""
    from .log.partition import Partition

    src = Path(partition)
    out = Path(root) / src.name
    out.parent.mkdir(parents=True, exist_ok=True)
    shutil.copytree(src, out)
    with Partition(out) as part:
        spots = {seg.path: [b.position + b.size - 1 for b in seg.batches() if b.base_offset in base_offsets]
                 for seg in part.segments}  # fmt: skip
    for path, positions in spots.items():
        if positions:
            data = bytearray(Path(path).read_bytes())
            for at in positions:
                data[at] ^= 0xFF
            Path(path).write_bytes(bytes(data))
    return out


def write_consumer_offsets(root, *, commits: int = 300, seed: int = 7) -> Path:
    """root/__consumer_offsets-0: `commits` offset commits as a group coordinator appends
    them (OffsetCommitKey version 1, OffsetCommitValue version 3, ten commits a batch):
    three groups consuming orders-0 and orders-1, each commit a little further on, to try
    `groups` and `dump --offsets-decoder` on (`make demo` writes out/consumer-offsets)."""
    import random

    from .generated.consumer_offsets_key import ConsumerOffsetsKey
    from .generated.consumer_offsets_value import ConsumerOffsetsValue
    from .generated.offset_commit_key import OffsetCommitKey
    from .generated.offset_commit_value import OffsetCommitValue

    rnd = random.Random(seed)
    at = {(g, p): 0 for g in ("billing", "shipping", "analytics") for p in (0, 1)}
    part = Path(root) / "__consumer_offsets-0"
    with PartitionWriter(part, segment_bytes=1 << 30, fsync=False) as w:
        for first in range(0, commits, 10):
            records = []
            for i in range(first, min(first + 10, commits)):
                group, partition = rnd.choice(sorted(at))
                at[group, partition] += rnd.randrange(10, 60)
                stamp = T0 + 1000 * i
                key = ConsumerOffsetsKey(record_type=1, key=OffsetCommitKey(
                    version=1, group=group, topic="orders", partition=partition))  # fmt: skip
                value = ConsumerOffsetsValue(record_type=1, version=3, value=OffsetCommitValue(
                    version=3, offset=at[group, partition], leader_epoch=0, metadata="",
                    commit_timestamp=stamp))  # fmt: skip
                records.append(Record(None, stamp, key.build(), value.build()))
            w.append(build_batch(records, base_offset=first))
    return part


#: What write_cluster_disks can make happen to each partition before the disks are copied.
SCENARIOS = ("clean", "lagging", "unclean")


def _uuid(rnd) -> bytes:
    return bytes(rnd.getrandbits(8) for _ in range(16))


def metadata_value(spec: str, version: int, **fields) -> bytes:
    """A __cluster_metadata record value (frame version 1, apiKey, version, the struct),
    built with the generated codecs; tagged fields given as {tag: {field: value}}."""
    from .internal.codecs import DEFAULT

    cls = DEFAULT.top(DEFAULT.schema_of(spec))
    module = __import__(cls.__module__, fromlist=["x"])
    tags = []
    for number, values in sorted(fields.pop("tags", {}).items()):
        tag_cls = getattr(module, f"{cls.__name__}Tag{number}")
        if "tag_in_version" in tag_cls.FIELDS:
            values = {**values, "tag_in_version": b""}
        tagged = getattr(module, f"{cls.__name__}TaggedField")
        tags.append(tagged(version=version, tag=number, value=tag_cls(version=version, unread=b"", **values)))
    obj = cls(version=version, tagged_fields=tags, **fields)
    return bytes([1, cls.MESSAGE["apiKey"], version]) + obj.build()


def write_cluster_disks(root, *, brokers: int = 3, topics=(("orders", 3),), records: int = 1000,
                        batch_records: int = 10, scenario: str = "clean", seed: int = 0,
                        set_apart: bool = False, codecs=("none",), record_bytes: int | None = None) -> dict:  # fmt: skip
    """The disks of a KRaft cluster of `brokers` brokers, as copied after `scenario`
    happened to every partition (replication factor min(3, brokers), replicas assigned
    round-robin as Kafka's controller does, the last broker with two log.dirs (JBOD)):

    - "clean": every replica holds the leader's `records` records; clean shutdown;
    - "lagging": the third replica stopped at 60% of them and left the ISR, the others
      went on;
    - "unclean": the second replica stopped at 30% and left the ISR; the leader went on to
      55%, the third replica to 50%; then the leader and the third replica died, and
      unclean.leader.election.enable (set on the topic) elected the second, which wrote
      12% more in its new epoch. Kafka will truncate the two others to 30% when they rejoin.

    Each broker's metadata log (__cluster_metadata-0) holds the registrations and every
    change; each log dir its meta.properties and checkpoints. set_apart adds a deleted
    topic's `-delete` directory, a half-copied `-future` replica in the JBOD broker's
    other log dir and a `-stray` one. codecs: used in turn batch by batch; record_bytes:
    values padded to about that many bytes (default: a short text). Returns {"root", "log_dirs": {node id: [paths]},
    "cluster_id", "partitions": {name: {"replicas", "leader", "ends": {node: end},
    "cut": {node: offset}}}} with the scenario's own numbers."""
    import random

    from .internal.kafka_json import uuid_text  # (Kafka's Uuid.toString)

    if scenario not in SCENARIOS:
        raise ValueError(f"scenario {scenario!r}: one of {', '.join(SCENARIOS)}")
    if brokers < 1 or records < 10 or batch_records < 1:
        raise ValueError("brokers >= 1, records >= 10 and batch_records >= 1")
    rnd = random.Random(seed)
    root = Path(root)
    cluster_id = uuid_text(_uuid(rnd))
    rf = min(3, brokers)
    if scenario != "clean" and rf < 3:
        raise ValueError(f"scenario {scenario!r} needs 3 brokers")
    nodes = list(range(1, brokers + 1))
    dirs: dict[int, list[tuple[Path, bytes]]] = {}
    for n in nodes:
        names = ["kafka-logs-a", "kafka-logs-b"] if n == nodes[-1] and brokers > 1 else ["kafka-logs"]
        dirs[n] = [(root / f"broker-{n}" / name, _uuid(rnd)) for name in names]
        for d, did in dirs[n]:
            d.mkdir(parents=True, exist_ok=True)
            (d / "meta.properties").write_text(  # as Kafka's MetaPropertiesEnsemble writes it
                f"#\n#Sat Nov 28 00:00:00 UTC 2026\nnode.id={n}\ndirectory.id={uuid_text(did)}\n"
                f"version=1\ncluster.id={cluster_id}\n"
            )
    meta = [metadata_value("FeatureLevelRecord", 0, name="metadata.version", feature_level=21)]
    meta += [_register(n, rnd) for n in nodes]
    hw: dict[Path, dict] = {}
    ends: dict[Path, dict] = {}
    out_parts: dict[str, dict] = {}
    t = 0
    for topic, count in topics:
        tid = _uuid(rnd)
        meta.append(metadata_value("TopicRecord", 0, name=topic, topic_id=tid))
        if scenario == "unclean":
            meta.append(metadata_value("ConfigRecord", 0, resource_type=2, resource_name=topic,
                                        name="unclean.leader.election.enable", value="true"))  # fmt: skip
        for p in range(count):
            replicas = [nodes[(t + p + i) % brokers] for i in range(rf)]
            where = {b: dirs[b][p % len(dirs[b])] for b in replicas}
            history = _replicate(topic, p, replicas, records, batch_records, scenario, codecs, record_bytes)
            for b in replicas:
                d, _did = where[b]
                part = d / f"{topic}-{p}"
                with PartitionWriter(part, segment_bytes=64 << 10, index_interval_bytes=4096, fsync=False) as w:
                    for data in history["logs"][b]:
                        w.append(data)
                (part / "partition.metadata").write_text(f"version: 0\ntopic_id: {uuid_text(tid)}\n")
                hw.setdefault(d, {})[(topic, p)] = history["hw"][b]
                ends.setdefault(d, {})[(topic, p)] = history["ends"][b]
            meta.append(metadata_value(
                "PartitionRecord", 1, partition_id=p, topic_id=tid, replicas=replicas, isr=replicas,
                removing_replicas=[], adding_replicas=[], leader=replicas[0], leader_epoch=0,
                partition_epoch=0, directories=[where[b][1] for b in replicas]))  # fmt: skip
            for change in history["changes"]:
                meta.append(metadata_value("PartitionChangeRecord", 0, partition_id=p, topic_id=tid,
                                            tags=change))  # fmt: skip
            out_parts[f"{topic}-{p}"] = {"replicas": replicas, "leader": history["leader"],
                                         "ends": history["ends"], "cut": history["cut"],
                                         "hw": history["hw"],
                                         "paths": {b: str(where[b][0] / f"{topic}-{p}") for b in replicas}}  # fmt: skip
        t += count
    if set_apart:
        _set_apart(dirs, rnd, nodes)
    batch = build_batch([Record(None, T0, None, v) for v in meta], partition_leader_epoch=1)
    for n in nodes:
        d = dirs[n][0][0]
        with PartitionWriter(d / "__cluster_metadata-0", fsync=False) as w:
            w.append(batch)
    for n in nodes:
        for d, _did in dirs[n]:
            (d / "replication-offset-checkpoint").write_text(write_checkpoint_text(hw.get(d, {})))
            (d / "recovery-point-offset-checkpoint").write_text(write_checkpoint_text(ends.get(d, {})))
            (d / "log-start-offset-checkpoint").write_text(write_checkpoint_text({k: 0 for k in ends.get(d, {})}))
            if scenario == "clean":
                (d / ".kafka_cleanshutdown").write_text("")
    return {"root": str(root), "cluster_id": cluster_id, "partitions": out_parts,
            "log_dirs": {n: [str(d) for d, _ in dirs[n]] for n in nodes}}  # fmt: skip


def _register(node: int, rnd) -> bytes:
    return metadata_value("RegisterBrokerRecord", 0, broker_id=node, incarnation_id=_uuid(rnd),
                           broker_epoch=10 + node, end_points=[], features=[], rack=None, fenced=0)  # fmt: skip


def _replicate(topic: str, p: int, replicas: list[int], records: int, batch_records: int, scenario: str,
               codecs=("none",), record_bytes: int | None = None) -> dict:  # fmt: skip
    """Each replica's batches (the leader's bytes, as followers copy them), high watermarks,
    ends, the metadata's PartitionChangeRecords' tags and the truncation Kafka will make."""
    leader, second, third = (replicas + [None, None])[:3]
    log: list[tuple[int, bytes, int]] = []  # (base offset, batch, epoch): the first leader's

    def write(upto: int, epoch: int, by: int, into: list) -> None:
        at = into[-1][0] + batch_records if into else 0
        while at < upto:
            n = min(batch_records, upto - at)
            recs = [Record(None, T0 + 10 * (at + i), b"k%d" % ((at + i) % 97),
                           _padded(f"{topic}-{p} offset {at + i} by broker {by} in epoch {epoch}", record_bytes))
                    for i in range(n)]  # fmt: skip
            codec = codecs[(at // batch_records) % len(codecs)]
            into.append((at, build_batch(recs, base_offset=at, partition_leader_epoch=epoch,
                                         compression=codec), epoch))  # fmt: skip
            at += n

    def upto(entries: list, end: int) -> list:
        return [e for e in entries if e[0] < end]

    def end_of(entries: list) -> int:
        return entries[-1][0] + batch_records if entries else 0

    rounded = lambda share: max(batch_records, (int(records * share) // batch_records) * batch_records)  # noqa: E731
    changes: list[dict] = []
    cut: dict[int, int] = {}
    if scenario == "clean":
        write(records, 0, leader, log)
        logs = {b: list(log) for b in replicas}
        hw = {b: end_of(log) for b in replicas}
        now = leader
    elif scenario == "lagging":
        write(records, 0, leader, log)
        stop = rounded(0.6)
        logs = {leader: list(log), second: list(log), third: upto(log, stop)}
        changes.append({0: {"isr": [leader, second]}})
        hw = {leader: end_of(log), second: end_of(log), third: stop}
        now = leader
    else:  # unclean
        a, b_, c = rounded(0.3), rounded(0.5), rounded(0.55)
        write(c, 0, leader, log)
        logs = {leader: list(log), second: upto(log, a), third: upto(log, b_)}
        changes.append({0: {"isr": [leader, third]}})
        hw = {leader: b_, second: a, third: b_}
        # the leader and the third replica die: the ISR empties, unclean election of the second
        changes.append({0: {"isr": [third]}, 1: {"leader": -1}})
        changes.append({0: {"isr": []}})
        changes.append({0: {"isr": [second]}, 1: {"leader": second}, 5: {"leader_recovery_state": 1}})
        changes.append({5: {"leader_recovery_state": 0}})
        new = logs[second]
        write(a + rounded(0.12), 2, second, new)  # epoch 0, then -1 (no leader: 1), then 2
        hw[second] = end_of(new)
        cut = {leader: a, third: a}
        now = second
    return {"logs": {b: [e[1] for e in entries] for b, entries in logs.items()},
            "hw": hw, "ends": {b: end_of(entries) for b, entries in logs.items()},
            "changes": changes, "cut": cut, "leader": now}  # fmt: skip


def _padded(text: str, size: int | None) -> bytes:
    data = text.encode()
    return data if size is None or len(data) >= size else data + b" " + b"x" * (size - len(data) - 1)


def _set_apart(dirs: dict, rnd, nodes: list[int]) -> None:
    """A deleted topic's -delete directory, a half-copied -future replica and a -stray one."""
    first = dirs[nodes[0]][0][0]
    gone = first / f"gone-0.{_uuid(rnd).hex()}-delete"
    with PartitionWriter(gone, fsync=False) as w:
        w.append(build_batch([Record(None, T0, None, b"deleted topic's record")] * 5))
    last = dirs[nodes[-1]]
    if len(last) > 1:
        parts = sorted(p for p in last[0][0].iterdir() if p.is_dir() and not p.name.startswith("__"))
        if parts:
            src = parts[0]
            future = last[1][0] / f"{src.name}.{_uuid(rnd).hex()}-future"
            future.mkdir()
            first_log = sorted(src.glob("*.log"))[0]
            data = first_log.read_bytes()
            (future / first_log.name).write_bytes(data[: len(data) // 2])
    stray = first / f"orders-99.{_uuid(rnd).hex()}-stray"
    with PartitionWriter(stray, fsync=False) as w:
        w.append(build_batch([Record(None, T0, None, b"stray record")] * 3))

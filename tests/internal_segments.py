"""Log segments of Kafka's internal topics holding every Kafka-written payload of
tests/vectors/kafka-internal (every record spec of the internal topics and every KRaft
control record, at every version Kafka's trunk wrote): what each release's kafka-dump-log,
and `kafkacodec dump` with that release's specs, are put to side by side
(tests/kafka/test_kafka_dump_releases.py). A coordinator value is written with a key of its
record type (each key with a tombstone too), a metadata record with a null key, a control
record in a control batch, as the brokers write them."""

from __future__ import annotations

from pathlib import Path

from internal_vectors import ROWS, TOPIC

import kafkacodec as kc
from kafkacodec.log.writer import PartitionWriter

T0 = 1_729_814_400_000  # the vectors' fixed clock
PER_BATCH = 16


def _keys_by_type() -> dict[tuple[str, int], list[bytes]]:
    out: dict[tuple[str, int], list[bytes]] = {}
    for r in ROWS:
        if r["kind"] == "key":
            out.setdefault((TOPIC[r["module"]], r["recordType"]), []).append(bytes.fromhex(r["hex"]))
    return out


def records_by_topic() -> dict[str, list[tuple[bytes | None, bytes | None, int | None]]]:
    """(key, value, control type or None) of each record, by topic."""
    keys = _keys_by_type()
    out: dict[str, list] = {t: [] for t in (*TOPIC.values(), "__cluster_metadata", "__remote_log_metadata")}
    for (topic, _type), found in keys.items():
        out[topic] += [(k, None, None) for k in found]  # tombstones
    for n, r in enumerate(ROWS):
        data = bytes.fromhex(r["hex"])
        if r["kind"] == "value":
            topic = TOPIC[r["module"]]
            for t in r["recordTypes"]:
                found = keys.get((topic, t))
                if found:
                    out[topic].append((found[n % len(found)], data, None))
        elif r["kind"] == "metadata":
            out["__cluster_metadata"].append((None, data, None))
        elif r["kind"] == "remote_metadata":
            out["__remote_log_metadata"].append((None, data, None))
        elif r["kind"] == "control":
            out["__cluster_metadata"].append((bytes.fromhex(r["keyHex"]), data, r["controlType"]))
    return out


def write_internal_topics(root: Path) -> dict[str, Path]:
    """Partition 0 of each internal topic, every record above in batches of PER_BATCH (a
    control record in a batch of its own): {topic: its directory}."""
    dirs = {}
    for topic, records in records_by_topic().items():
        d = root / f"{topic}-0"
        with PartitionWriter(d, fsync=False) as w:
            data = [r for r in records if r[2] is None]
            for i in range(0, len(data), PER_BATCH):
                chunk = [kc.Record(None, T0 + i + j, k, v) for j, (k, v, _c) in enumerate(data[i : i + PER_BATCH])]
                w.append(kc.build_batch(chunk, base_offset=w.next_offset))
            for k, v, _control in (r for r in records if r[2] is not None):
                w.append(kc.build_batch([kc.Record(None, T0, k, v)], base_offset=w.next_offset, is_control=True))
        dirs[topic] = d
    return dirs


# -- the same payloads damaged: what a release reads otherwise, or not at all

#: Coordinator topics, whose parsers print Kafka's read error in the record's place.
COORDINATOR = ("__consumer_offsets", "__share_group_state", "__transaction_state")


def damage(rng, data: bytes, header: int = 2) -> bytes:
    """data changed as a bad disk, a bad writer or another release's spec would change it:
    cut short, grown at the end, a byte inserted, bytes flipped, a byte set to a length's
    or varint's edge value, or (keeping the bytes) the version before them changed."""
    kind = rng.randrange(7)
    if kind == 0 and len(data) > 1:
        return data[: rng.randrange(len(data))]
    if kind == 1:
        return data + rng.randbytes(rng.randint(1, 8))
    if kind == 2:
        at = rng.randint(min(header, len(data)), len(data))
        return data[:at] + rng.randbytes(rng.randint(1, 3)) + data[at:]
    out = bytearray(data)
    if not out:
        return bytes(rng.randbytes(rng.randint(1, 3)))
    if kind == 3 and len(out) > header:
        out[0:2] = rng.choice((-1, 0, 1, 2, 3, 4, 5, 6, 7, 9, 17, 0x7FFF)).to_bytes(2, "big", signed=True)
        return bytes(out)
    for _ in range(rng.randint(1, 3)):
        at = rng.randrange(min(header, len(out) - 1), len(out))
        out[at] = rng.choice((0x00, 0x01, 0x7F, 0x80, 0xFF, rng.randrange(256))) if kind >= 4 else rng.randrange(256)
    return bytes(out)


def damaged_records(seed: int) -> dict[str, list[tuple[bytes | None, bytes | None, int | None]]]:
    """records_by_topic's records damaged (seed: which damage): each coordinator value
    twice (under its own key), each coordinator key once (as a tombstone and with its
    value), each metadata record and KRaft control record value once, a control record's
    key now and then, a record with no key in each coordinator topic and one with no
    value in each metadata topic."""
    import random

    rng = random.Random(seed)
    out: dict[str, list] = {}
    for topic, records in records_by_topic().items():
        got = out.setdefault(topic, [])
        for k, v, control in records:
            if control is not None:
                got.append((k, damage(rng, v, 0), control))
                if rng.random() < 0.25:
                    got.append((damage(rng, k, 0), v, control))
            elif topic in COORDINATOR:
                if v is None:
                    got.append((damage(rng, k), None, None))
                    continue
                got += [(k, damage(rng, v), None), (k, damage(rng, v), None)]
                if rng.random() < 0.3:
                    got.append((damage(rng, k), v, None))
            else:
                got.append((k, damage(rng, v, 3), None))
        if topic in COORDINATOR:
            got.append((None, records[-1][1], None))
        else:
            got.append((None, None, None))
    return out


def write_damaged_topics(root: Path, seed: int) -> tuple[dict[str, Path], list[tuple[str, Path]]]:
    """The damaged records as segments: ({topic: partition directory} of the records that
    no release dies at, [(topic, partition directory)] of one record each: a record no
    parser of some release catches the error of (a KRaft control record, any
    __transaction_state record before 4.1's parser, a record with no key), which ends the
    whole dump there, so that each is judged alone."""
    bulk: dict[str, Path] = {}
    single: list[tuple[str, Path]] = []
    for topic, records in damaged_records(seed).items():
        plain = [r for r in records if r[2] is None and topic != "__transaction_state"
                 and (r[0] is not None or topic not in COORDINATOR)]  # fmt: skip
        alone = [r for r in records if r not in plain]
        d = root / f"{topic}-0"
        with PartitionWriter(d, fsync=False) as w:
            for i in range(0, len(plain), PER_BATCH):
                chunk = [kc.Record(None, T0 + i + j, k, v) for j, (k, v, _c) in enumerate(plain[i : i + PER_BATCH])]
                w.append(kc.build_batch(chunk, base_offset=w.next_offset))
        bulk[topic] = d
        for n, (k, v, control) in enumerate(alone):
            one = root / f"single-{len(single):04d}" / f"{topic}-0"
            with PartitionWriter(one, fsync=False) as w:
                w.append(kc.build_batch([kc.Record(None, T0 + n, k, v)], base_offset=n, is_control=control is not None))
            single.append((topic, one))
    return bulk, single

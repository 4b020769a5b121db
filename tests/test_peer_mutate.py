"""The schema-aware mutator (peers/mutate.py, issue 57): seeded, every family making cases,
the dependent fields re-derived in derive mode (so a case passes the outer checks and
reaches the inner ones) and left in stale mode, and a varint written longer read back as
the same value. Kafka's judgement of the cases is tests/kafka/test_kafka_fuzz_peers.py and
tests/kafka/test_kafka_coverage.py."""

from __future__ import annotations

import collections
import random
import struct
import zlib

import pytest

from kafkacodec.runtime import compression as C
from kafkacodec.runtime.crc import crc32c
from kafkacodec.runtime.errors import KafkacodecError
from peers import expected
from peers.mutate import FAMILIES, SCHEMA_FAMILIES, Mutator, entries, lz4_frame, parse_entry, seeds

SEEDS = seeds(drawn=40)


def crc_ok(entry: bytes) -> bool:
    """Whether a top-level entry's own CRC is right (v2: CRC-32C from attributes; legacy:
    CRC-32 from magic)."""
    if entry[16] == 2:
        return struct.unpack_from(">I", entry, 17)[0] == crc32c(entry[21:])
    return struct.unpack_from(">I", entry, 12)[0] == zlib.crc32(entry[16:])


def test_a_seed_gives_the_same_cases():
    a = list(Mutator(3, seed_images=SEEDS).draw(300))
    b = list(Mutator(3, seed_images=SEEDS).draw(300))
    assert a == b
    assert a != list(Mutator(4, seed_images=SEEDS).draw(300))


def test_a_seed_gives_the_same_cases_whenever_it_runs(monkeypatch):
    """Nothing of the clock goes into a case (a gzip member's header time did: a seeded
    run differed from the last on 5 of 3,000 cases)."""
    import time

    a = list(Mutator(5, seed_images=SEEDS).draw(1500, ("frame",)))
    monkeypatch.setattr(time, "time", lambda: 4102444800.0)  # another second
    assert list(Mutator(5, seed_images=SEEDS).draw(1500, ("frame",))) == a


def test_every_family_and_mode_makes_cases():
    made = collections.Counter()
    for name, data in Mutator(1, seed_images=SEEDS).draw(6000):
        family, _, rest = name.split("~")[1].partition(".")
        made[family] += 1
        if family in SCHEMA_FAMILIES:
            made[family, rest.split(".")[0]] += 1
        assert isinstance(data, bytes)
    assert set(FAMILIES) <= set(made), set(FAMILIES) - set(made)
    for family in SCHEMA_FAMILIES:
        if family not in ("wrapper", "boundary"):  # whole entries made or moved: no mode of their own
            for mode in ("derive", "crc", "stale"):
                assert made[family, mode], (family, mode)


def test_derive_mode_passes_the_outer_checks_stale_mode_does_not():
    """A field changed inside a record, the batch's CRC and length computed again: the
    entry's framing and CRC hold, so a reader gets to the record. Left stale: the CRC (of
    every changed batch whose bytes changed) does not."""
    derived = stale = 0
    for name, data in Mutator(2, seed_images=SEEDS).draw(3000, ("field", "bytes", "list", "varint")):
        family, mode = name.split("~")[1].split(".")[:2]
        whole = entries(data)
        # (the entry's magic, length or CRC changed: another CRC layout, other entries, a bad CRC)
        if mode == "derive" and not any(f"Message.{f}=" in name or f"Batch.{f}=" in name
                                        for f in ("magic", "len_batch", "len_message", "crc")):  # fmt: skip
            # every whole entry's CRC holds (the one changed was re-derived, the others kept)
            assert all(crc_ok(data[s:e]) for s, e in whole if e - s > 21), name
            derived += 1
        elif mode == "stale" and family in ("bytes", "list"):
            stale += any(not crc_ok(data[s:e]) for s, e in whole if e - s > 21)
    assert derived > 500
    assert stale > 100


def test_a_longer_varint_reads_as_the_same_value():
    """Kafka's ByteUtils reads a varint of up to 5 bytes (a varlong, 10) whatever its
    padding: a record whose varint is written longer, its length and the CRC re-derived,
    reads as the seed did when the padding stays within those bounds."""
    same = 0
    by_seed = dict(SEEDS)
    for name, data in Mutator(5, seed_images=SEEDS).draw(4000, ("varint",)):
        mode, detail = name.split("~")[1].split(".", 2)[1:]
        seed = by_seed[name.split("~")[0]]
        field, _, extra = detail.rpartition("+")
        if mode != "derive" or field.endswith("len_body"):
            continue
        cls, _, f = field.partition(".")
        limit = 10 if f == "timestamp_delta" else 5
        got, want = expected(data), expected(seed)
        if want["error"] is None and got["error"] is None:
            assert got["records"] == want["records"], name
            same += 1
        elif int(extra) >= limit:  # one byte past Kafka's bound: refused
            assert got["error"] is not None, name
    assert same > 50


def test_parse_entry_reads_nested_wrappers_and_compressed_regions():
    seen = collections.Counter()
    for _name, data in SEEDS:
        for s, e in entries(data):
            obj, lazies = parse_entry(data[s:e])
            if obj is None:
                continue
            seen[type(obj).__name__] += 1
            seen["lazy"] += len(lazies)
    assert seen["KafkaRecordBatch"] > 50 and seen["KafkaLegacyMessage"] > 20 and seen["lazy"] > 30


@pytest.mark.parametrize("magic", [0, 1, 2])
def test_an_lz4_frame_with_kafkas_flags_reads_back(magic):
    """The hand-written LZ4 frames: whenever the descriptor is one Kafka takes and nothing
    was damaged, kafkacodec's reader (Kafka's rules) gives the payload back."""
    payload = bytes(random.Random(magic).randrange(256) for _ in range(3000)) * 3
    ok = 0
    for i in range(300):
        frame = lz4_frame(payload, random.Random(i), magic)
        try:
            got = C.decompress(C.LZ4, frame, magic)
        except KafkacodecError:
            continue
        assert got == payload[: len(got)]
        ok += got == payload
    assert ok > 50

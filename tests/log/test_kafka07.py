"""Kafka 0.7 partitions (FORMATS.md 4, seed 002), read for real: a directory of
`<20 digits>.kafka` files, messages addressed by their byte position in the partition, magic
0 and 1, gzip and snappy compressed message sets. The files are built here to the spec, with
the CRC computed by zlib (an implementation independent of the reader)."""

import gzip
import json
import struct
import zlib

import pytest
from conftest import kafkacodec_cli as cli

from kafkacodec.log.kafka07 import Kafka07Partition


def message(payload: bytes, magic: int = 0, codec: int = 0) -> bytes:
    """One entry as Kafka 0.7 wrote it: length, magic, [attributes], CRC-32 of the payload."""
    head = bytes([magic]) + (bytes([codec]) if magic == 1 else b"")
    body = head + struct.pack(">I", zlib.crc32(payload)) + payload
    return struct.pack(">i", len(body)) + body


def xerial_snappy(data: bytes) -> bytes:
    """snappy-java's stream framing, as Kafka 0.7's SnappyOutputStream wrote it."""
    import cramjam

    block = bytes(cramjam.snappy.compress_raw(data))
    return b"\x82SNAPPY\x00" + struct.pack(">ii", 1, 1) + struct.pack(">i", len(block)) + block


@pytest.fixture
def topic(tmp_path):
    """my_topic_0 with two files: plain, gzip and snappy messages; the second file named by
    the byte address where the first one ends."""
    inner = message(b"inner-a", 1) + message(b"inner-b", 1)
    first = (message(b"hello") + message(b"world", 1)
             + message(gzip.compress(inner), 1, 1) + message(xerial_snappy(inner), 1, 2))  # fmt: skip
    second = message(b"after the roll") + message(b"last")
    d = tmp_path / "my_topic_0"
    d.mkdir()
    (d / "00000000000000000000.kafka").write_bytes(first)
    (d / f"{len(first):020d}.kafka").write_bytes(second)
    addresses = [0, 14, 29]
    addresses.append(addresses[-1] + len(message(gzip.compress(inner), 1, 1)))
    addresses += [len(first), len(first) + len(message(b"after the roll"))]
    return d, addresses, len(first) + len(second)


def test_records_are_addressed_by_byte_position(topic):
    d, addr, end = topic
    got = [
        (int(line.split()[1]), line.split("value=")[1])
        for line in cli("records", d).stdout.splitlines()
    ]
    assert got == [(addr[0], "hello"), (addr[1], "world"), (addr[2], "inner-a"), (addr[2], "inner-b"),
                   (addr[3], "inner-a"), (addr[3], "inner-b"), (addr[4], "after the roll"), (addr[5], "last")]  # fmt: skip
    assert Kafka07Partition(d).log_end_offset == end
    tail = cli("records", d, "--from-offset", addr[4]).stdout.splitlines()
    assert [int(x.split()[1]) for x in tail] == [addr[4], addr[5]]


def test_lookup_finds_the_message_at_or_after_an_address(topic):
    d, addr, _end = topic
    for target, want in ((0, addr[0]), (1, addr[1]), (addr[3], addr[3]), (addr[4] - 1, addr[4])):
        res = json.loads(cli("lookup", d, "--offset", target, "--json").stdout)
        assert res["message_offset"] == want
    past = cli("lookup", d, "--offset", 10**9, ok=False)  # no answer: exit 1, said on stderr
    assert past.returncode == 1 and not past.stdout and "no message at or after offset" in past.stderr
    out = cli("lookup", d, "--timestamp", 5, ok=False)
    assert out.returncode == 1 and "no timestamps" in out.stderr


def test_dump_and_verify(topic):
    d, addr, end = topic
    text = cli("dump", "--deep-iteration", d).stdout
    assert f"offset: {addr[2]} position: {addr[2]} isvalid: true size: " in text
    assert "compresscodec: gzip" in text and "compresscodec: snappy" in text
    assert text.count(f"| offset: {addr[3]} payloadsize: 7") == 2
    rows = [
        json.loads(x)
        for x in cli("dump", "--json", d / "00000000000000000000.kafka").stdout.splitlines()
    ]
    assert [r["offset"] for r in rows] == addr[:4] and all(r["is_valid"] for r in rows)
    v = cli("verify", d)
    assert (
        v.stdout.startswith("1 partition, 2 segments, 6 batches, 8 records")
        and "clean" in v.stdout
    )


def test_verify_names_every_bad_region(topic):
    d, addr, _end = topic
    f = d / "00000000000000000000.kafka"
    data = bytearray(f.read_bytes())
    data[addr[1] + 12] ^= 1  # the payload of "world"
    data[addr[3] + 40] ^= 1  # inside the snappy message
    f.write_bytes(bytes(data))
    out = json.loads(cli("verify", "--json", d, ok=False).stdout)
    assert [(r["start"], r["end"]) for r in out["bad_regions"]] == [
        (addr[1], addr[2]),
        (addr[3], addr[4]),
    ]
    assert (
        out["bad_regions"][0]["offset_before"] == 0
        and out["bad_regions"][0]["offset_after"] == addr[2]
    )
    read = cli("records", d, "--skip-corrupt", ok=False)  # damage read past is a problem found
    assert read.returncode == 1 and "2 damaged stretches left out" in read.stderr
    salvaged = read.stdout.splitlines()
    assert [int(x.split()[1]) for x in salvaged] == [addr[0], addr[2], addr[2], addr[4], addr[5]]
    assert cli("records", d, ok=False).returncode == 1


def test_recover_does_not_claim_a_kafka07_partition_is_clean(topic):
    d, _addr, _end = topic
    out = cli("recover", d, ok=False)
    assert out.returncode == 2 and "Kafka 0.7" in out.stderr and "clean" not in out.stdout

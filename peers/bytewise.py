"""Seeded byte-level mutations of the shared record-set vectors (bytes written by Kafka and
by other clients), for judging readers against Kafka's own classes (tests/kafka/
test_kafka_judges_mutations.py, tests/kafka_mutation_drill.py, peers.fuzz) and against
each other; peers.mutate adds the schema-aware ones and draws from both.

Each mutation is a whole image, named by what was done to which vector. The families reach
every check a reader makes, in Kafka's order, on every path:

- cut: the image cut short (a partial entry at the end, every kind of it).
- tail: a short entry after the image, with every magic and a length that is or is not there.
- byte: one byte set to an edge value, the CRCs of the top-level entries left stale or
  re-derived (so that the checks after the CRC are reached).
- inner: a compressed region (or an uncompressed records region) decompressed, one byte
  changed, cut or extended, compressed again with the same codec, lengths and CRC re-derived.
- field: a v2 record's field (a length, a count, a delta, the attributes byte, a header's
  lengths) set to an edge value, the record's length re-derived or left stale; a batch's
  record count changed.
- message: a byte of a legacy wrapper's inner message changed, its CRC re-derived.
- codec: a compressed region cut, extended with bytes that look like other streams, doubled,
  or a byte of it changed (its frame, its blocks), the batch's CRC re-derived.
"""

from __future__ import annotations

import hashlib
import random
import struct
import zlib
from collections.abc import Iterator
from pathlib import Path

from kafkacodec.runtime import compression as C
from kafkacodec.runtime.crc import crc32c

VECTORS = Path(__file__).resolve().parents[1] / "tests" / "vectors"
FAMILIES = ("cut", "tail", "byte", "inner", "field", "message", "codec")
EDGE_BYTES = (0x00, 0x01, 0x7F, 0x80, 0xFF)
EDGE_INTS = (-(1 << 31), -2, -1, 0, 1, 3, 127, 128, 1 << 20, (1 << 31) - 1)
JUNK = (b"\0", b"\0" * 4, b"\0" * 30, b"junk", b"junk" * 10,
        bytes.fromhex("1f8b08000000000000ff"), bytes.fromhex("1f8b08000000000000ff0300") + bytes(8),
        bytes.fromhex("04224d18"), bytes.fromhex("28b52ffd"), b"\x82SNAPPY\x00")  # fmt: skip
MAGICS = (0, 1, 2, 3, 4, 97, 0x80, 0xFF)


def bases() -> list[tuple[str, bytes]]:
    """The valid record sets the mutations start from: Kafka's own writes and the peers'."""
    out = []
    for p in sorted(VECTORS.glob("kafka-java/*/*.bin")) + sorted(VECTORS.glob("peers/*/*.bin")):
        if "corrupt" in p.parts or not 1 < p.stat().st_size <= 20000:
            continue
        out.append((f"{p.parent.name}/{p.stem}", p.read_bytes()))
    return out


def entries(data: bytes) -> Iterator[tuple[int, int, int]]:
    """(start, end, magic) of each whole top-level entry."""
    pos = 0
    while len(data) - pos >= 17:
        size = struct.unpack_from(">i", data, pos + 8)[0]
        if size < 14 or pos + 12 + size > len(data):
            return
        yield pos, pos + 12 + size, data[pos + 16]
        pos += 12 + size


def rederive(img: bytes) -> bytes:
    """The image with the CRC of every whole top-level entry computed again."""
    out = bytearray(img)
    for start, end, magic in entries(img):
        if magic == 2 and end - start >= 61:
            struct.pack_into(">I", out, start + 17, crc32c(bytes(out[start + 21 : end])))
        elif magic in (0, 1):
            struct.pack_into(">I", out, start + 12, zlib.crc32(bytes(out[start + 16 : end])))
    return bytes(out)


def v2_with_region(batch: bytes, region: bytes) -> bytes:
    """A v2 batch with another records region, its length and CRC re-derived."""
    out = bytearray(batch[:61]) + region
    struct.pack_into(">i", out, 8, len(out) - 12)
    struct.pack_into(">I", out, 17, crc32c(bytes(out[21:])))
    return bytes(out)


def _value_at(msg: bytes) -> int:
    """Where a legacy message's value length lies."""
    key_at = 18 if msg[16] == 0 else 26
    return key_at + 4 + max(struct.unpack_from(">i", msg, key_at)[0], 0)


def legacy_with_value(msg: bytes, value: bytes) -> bytes:
    """A legacy message with another value, its length and CRC re-derived."""
    out = bytearray(msg[: _value_at(msg)]) + struct.pack(">i", len(value)) + value
    struct.pack_into(">i", out, 8, len(out) - 12)
    struct.pack_into(">I", out, 12, zlib.crc32(bytes(out[16:])))
    return bytes(out)


def _zz(n: int, width: int = 64) -> bytes:
    u = ((n << 1) ^ (n >> (width - 1))) & ((1 << width) - 1)
    out = bytearray()
    while True:
        if u >= 0x80:
            out.append((u & 0x7F) | 0x80)
            u >>= 7
        else:
            out.append(u)
            return bytes(out)


def _read_zz(buf: bytes, pos: int) -> tuple[int, int]:
    shift = u = 0
    while True:
        b = buf[pos]
        pos += 1
        u |= (b & 0x7F) << shift
        shift += 7
        if not b & 0x80:
            return (u >> 1) ^ -(u & 1), pos


def _records(region: bytes, n: int) -> list[dict]:
    """The records of a (decompressed) v2 records region, field by field."""
    out, pos = [], 0
    for _ in range(n):
        _length, p = _read_zz(region, pos)
        r = {"attr": region[p]}
        r["ts"], p = _read_zz(region, p + 1)
        r["od"], p = _read_zz(region, p)
        r["kl"], p = _read_zz(region, p)
        r["key"], p = region[p : p + max(r["kl"], 0)], p + max(r["kl"], 0)
        r["vl"], p = _read_zz(region, p)
        r["val"], p = region[p : p + max(r["vl"], 0)], p + max(r["vl"], 0)
        r["nh"], p = _read_zz(region, p)
        r["hs"] = []
        for _h in range(r["nh"]):
            hk, p = _read_zz(region, p)
            k, p = region[p : p + hk], p + hk
            hv, p = _read_zz(region, p)
            v, p = region[p : p + max(hv, 0)], p + max(hv, 0)
            r["hs"].append([hk, k, hv, v])
        out.append(r)
        pos = p
    return out


def _record_bytes(r: dict, length: int | None = None) -> bytes:
    body = (bytes([r["attr"] & 0xFF]) + _zz(r["ts"]) + _zz(r["od"], 32) + _zz(r["kl"], 32) + r["key"]
            + _zz(r["vl"], 32) + r["val"] + _zz(r["nh"], 32))  # fmt: skip
    for hk, k, hv, v in r["hs"]:
        body += _zz(hk, 32) + k + _zz(hv, 32) + v
    return _zz(len(body) if length is None else length, 32) + body


class Mutator:
    """Mutations drawn from a seed: mutate(family) gives (name, image) or None when the
    family has nothing to change in the vector drawn."""

    def __init__(self, seed: int):
        self.rnd = random.Random(seed)
        self.bases = bases()

    def draw(self, n: int, families=FAMILIES) -> list[tuple[str, bytes]]:
        """n distinct mutations (fewer when the families have fewer to give), the families
        taken in turn."""
        out: list[tuple[str, bytes]] = []
        seen: set[bytes] = set()
        tries = 0
        while len(out) < n and tries < 20 * n:
            family = families[tries % len(families)]
            tries += 1
            got = getattr(self, family)(*self.rnd.choice(self.bases))
            if got is None:
                continue
            digest = hashlib.sha1(got[1]).digest()
            if digest not in seen:
                seen.add(digest)
                out.append((f"{family}-{got[0]}", got[1]))
        return out

    def _entry(self, data: bytes, want) -> tuple[int, int, int] | None:
        found = [e for e in entries(data) if want(data[e[0] : e[1]], e[2])]
        return self.rnd.choice(found) if found else None

    def cut(self, name: str, data: bytes):
        at = self.rnd.randrange(1, len(data))
        return f"{name}-cut{at}", data[:at]

    def tail(self, name: str, data: bytes):
        magic, length = self.rnd.choice(MAGICS), self.rnd.choice((13, 14, 30, 200))
        have = self.rnd.choice((12, 16, 17, 18, 25))
        tail = struct.pack(">qi", 5, length) + bytes(4) + bytes([magic]) + bytes(40)
        return f"{name}-tail-m{magic}-l{length}-h{have}", data + tail[:have]

    def byte(self, name: str, data: bytes):
        at = self.rnd.randrange(len(data))
        value = self.rnd.choice(EDGE_BYTES + (data[at] ^ 1, data[at] ^ 0x10))
        img = data[:at] + bytes([value]) + data[at + 1 :]
        if self.rnd.random() < 0.5:
            return f"{name}-b{at}={value}", img
        return f"{name}-b{at}={value}-crc", rederive(img)

    def _inner_bytes(self, inner: bytes) -> tuple[str, bytes]:
        kind = self.rnd.randrange(3)
        if kind == 0 and inner:
            at = self.rnd.randrange(len(inner))
            value = self.rnd.choice(EDGE_BYTES + (inner[at] ^ 1,))
            return f"i{at}={value}", inner[:at] + bytes([value]) + inner[at + 1 :]
        if kind == 1 and inner:
            at = self.rnd.randrange(len(inner))
            return f"icut{at}", inner[:at]
        extra = self.rnd.choice((b"\0", b"\0" * 12, b"junk-junk-junk-junk"))
        return f"iext{len(extra)}", inner + extra

    def inner(self, name: str, data: bytes):
        e = self._entry(data, lambda b, m: (m == 2 and len(b) >= 61) or (m in (0, 1) and b[17] & 7))
        if e is None:
            return None
        start, end, magic = e
        b = data[start:end]
        try:
            if magic == 2:
                codec = struct.unpack_from(">h", b, 21)[0] & 7
                inner = bytes(C.decompress(codec, b[61:], 2)) if codec else b[61:]
                tag, m = self._inner_bytes(inner)
                new = v2_with_region(b, C.compress(codec, m, 2) if codec else m)
            else:
                codec, at = b[17] & 7, _value_at(b)
                size = struct.unpack_from(">i", b, at)[0]
                if size < 0:
                    return None
                inner = bytes(C.decompress(codec, b[at + 4 : at + 4 + size], magic))
                tag, m = self._inner_bytes(inner)
                new = legacy_with_value(b, C.compress(codec, m, magic))
        except C.CompressionError:
            return None
        return f"{name}-e{start}-{tag}", data[:start] + new + data[end:]

    def field(self, name: str, data: bytes):
        e = self._entry(data, lambda b, m: m == 2 and len(b) >= 61)
        if e is None:
            return None
        start, end, _magic = e
        b = data[start:end]
        codec, n = struct.unpack_from(">h", b, 21)[0] & 7, struct.unpack_from(">i", b, 57)[0]
        try:
            region = bytes(C.decompress(codec, b[61:], 2)) if codec else b[61:]
            recs = _records(region, n)
        except (C.CompressionError, IndexError):
            return None
        if recs and b[22] & 0x20:  # a control batch: its records' key and value
            i = self.rnd.randrange(len(recs))
            r = dict(recs[i])
            part = self.rnd.choice(("key", "val"))
            raw = bytearray(r[part] or b"\0\0\0\0")
            if self.rnd.random() < 0.3:
                raw = raw[: self.rnd.randrange(len(raw))]
                tag = f"r{i}-control-{part}-cut{len(raw)}"
            else:
                at = self.rnd.randrange(len(raw))
                raw[at] = self.rnd.choice(EDGE_BYTES)
                tag = f"r{i}-control-{part}{at}={raw[at]}"
            r[part], r["kl" if part == "key" else "vl"] = bytes(raw), len(raw)
            recs = recs[:i] + [r] + recs[i + 1 :]
            region = b"".join(_record_bytes(x) for x in recs)
            new = v2_with_region(b, C.compress(codec, region, 2) if codec else region)
            return f"{name}-e{start}-{tag}", data[:start] + new + data[end:]
        if not recs or self.rnd.random() < 0.1:  # the batch's count
            count = self.rnd.choice((-1, 0, n - 1, n + 1, 1 << 30))
            head = bytearray(b)
            struct.pack_into(">i", head, 57, count)
            return f"{name}-e{start}-count={count}", data[:start] + v2_with_region(bytes(head), b[61:]) + data[end:]
        i = self.rnd.randrange(len(recs))
        r = dict(recs[i])
        value = self.rnd.choice(EDGE_INTS)
        choices = ["kl", "vl", "nh", "od", "ts", "attr", "len"] + ["h"] * bool(r["hs"])
        what = self.rnd.choice(choices)
        stale = None
        if what == "len":  # the record's length off by a little
            stale = len(_record_bytes(r)) - len(_zz(len(_record_bytes(r)))) + self.rnd.choice((-3, -1, 1, 5))
            tag = f"r{i}-len={stale}"
        elif what == "h":
            j, k = self.rnd.randrange(len(r["hs"])), self.rnd.choice((0, 2))
            r["hs"] = [list(h) for h in r["hs"]]
            r["hs"][j][k] = value
            tag = f"r{i}-h{j}{'kv'[k // 2]}={value}"
        else:
            r[what] = value
            tag = f"r{i}-{what}={value}"
            if self.rnd.random() < 0.5:  # the length the record had
                stale = _read_zz(_record_bytes(recs[i]), 0)[0]
                tag += "-stale"
        recs = recs[:i] + [r] + recs[i + 1 :]
        region = b"".join(_record_bytes(x, stale if k == i else None) for k, x in enumerate(recs))
        new = v2_with_region(b, C.compress(codec, region, 2) if codec else region)
        return f"{name}-e{start}-{tag}", data[:start] + new + data[end:]

    def message(self, name: str, data: bytes):
        e = self._entry(data, lambda b, m: m in (0, 1) and b[17] & 7)
        if e is None:
            return None
        start, end, magic = e
        b = data[start:end]
        codec, at = b[17] & 7, _value_at(b)
        size = struct.unpack_from(">i", b, at)[0]
        try:
            inner = bytes(C.decompress(codec, b[at + 4 : at + 4 + size], magic)) if size >= 0 else b""
        except C.CompressionError:
            return None
        found = list(entries(inner))
        if not found:
            return None
        k = self.rnd.randrange(len(found))
        s, t, _m = found[k]
        msg = bytearray(inner[s:t])
        if self.rnd.random() < 0.1:
            msg += b"\0\0\0"
            tag = f"in{k}-extra"
        else:
            off = self.rnd.randrange(12, len(msg))
            msg[off] = self.rnd.choice((0, 1, 2, 3, 0x7F, 0x80, 0xFF))
            tag = f"in{k}-b{off}={msg[off]}"
        struct.pack_into(">i", msg, 8, len(msg) - 12)
        struct.pack_into(">I", msg, 12, zlib.crc32(bytes(msg[16:])))
        new = legacy_with_value(b, C.compress(codec, inner[:s] + bytes(msg) + inner[t:], magic))
        return f"{name}-e{start}-{tag}", data[:start] + new + data[end:]

    def codec(self, name: str, data: bytes):
        e = self._entry(data, lambda b, m: (m == 2 and len(b) >= 61 and struct.unpack_from(">h", b, 21)[0] & 7)
                        or (m in (0, 1) and b[17] & 7))  # fmt: skip
        if e is None:
            return None
        start, end, magic = e
        b = data[start:end]
        if magic == 2:
            region = b[61:]
        else:
            at = _value_at(b)
            size = struct.unpack_from(">i", b, at)[0]
            if size < 0:
                return None
            region = b[at + 4 : at + 4 + size]
        kind = self.rnd.randrange(4)
        if kind == 0 and region:
            at = self.rnd.randrange(len(region))
            new, tag = region[:at], f"rcut{at}"
        elif kind == 1:
            j = self.rnd.randrange(len(JUNK))
            new, tag = region + JUNK[j], f"rjunk{j}"
        elif kind == 2:
            new, tag = region + region, "rtwice"
        else:  # the frame's first bytes, where its header is, more often
            reach = self.rnd.choice((8, 32, len(region)))
            at = self.rnd.randrange(min(len(region), reach)) if region else 0
            value = self.rnd.choice(EDGE_BYTES + (region[at] ^ 1, region[at] ^ 0x10)) if region else 0
            new, tag = region[:at] + bytes([value]) + region[at + 1 :], f"r{at}={value}"
        body = v2_with_region(b, new) if magic == 2 else legacy_with_value(b, new)
        return f"{name}-e{start}-{tag}", data[:start] + body + data[end:]


def write(out: Path, cases: list[tuple[str, bytes]]) -> list[Path]:
    """The cases as files in out (named by number and mutation), in order."""
    out.mkdir(parents=True, exist_ok=True)
    files = []
    for i, (name, img) in enumerate(cases):
        f = out / f"{i:06d}-{name.replace('/', '_')}.bin"
        f.write_bytes(img)
        files.append(f)
    return files

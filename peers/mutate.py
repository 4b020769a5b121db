"""Schema-aware mutations of Kafka record sets (issue 57): what a parser must interpret,
changed through the generated classes' model of the schemas, for fuzzing parsers against
Kafka's own classes (peers.fuzz, peers.coverage).

An image is cut into its top-level entries; one entry is parsed with the generated classes
(KafkaRecordBatch with its records and their headers, KafkaLegacyMessage with the inner
messages of a wrapper, nested as deep as they go), every field is found through the classes'
FIELDS, KINDS (the wire type: s4, varint32, bytes, KafkaRecord[], ...), BITS (bit fields) and
DERIVED (what a builder computes: lengths, counts, CRCs), and one change is made:

- field: a number set to an edge of its wire type or a neighbour of its value, a bit field
  (codec, timestamp type, transactional, control, delete horizon) to each of its values;
- bytes: a key, value or header key emptied, cut, grown, made null or not valid UTF-8;
- varint: a varint's encoding made longer than it needs (Kafka reads up to 5 bytes for a
  varint, 10 for a varlong; one more is "too long");
- list: records, headers or inner messages dropped, repeated, swapped, cut short, or bytes
  left after them;
- codec: the codec bits changed, the payload compressed again with the new codec or left;
- frame: the compressed payload's own frame written by hand (LZ4's flags, block size, content
  size, header and block checksums, raw and short blocks; gzip's header flags, trailer and
  members; snappy-java's framing; zstd's checksums and frames);
- wrapper: legacy messages nested in a wrapper (a wrapper in a wrapper, a v2 batch in a
  wrapper, an empty wrapper, inner messages of another magic);
- control: a control batch's key and marker (their own schemas' fields) changed, or a data
  batch made a control batch;
- boundary: whole entries dropped, repeated, swapped, cut, or a partial entry of any magic
  left at the end.

Then, by MODE: "derive" computes every dependent field again (the CRCs, the lengths, the
counts, a batch's last offset delta) but the one changed, so that the input passes the outer
checks and reaches the inner ones; "crc" re-derives the CRCs alone (a stale length behind a
valid CRC); "stale" leaves them all as they were. The seeds: Kafka's and the other
clients' writes (the shared vectors), the corpus's edge cases and record sets drawn from the
generated Hypothesis strategies.

    for name, data in draw(100_000, seed=1): ...
"""

from __future__ import annotations

import functools
import gzip as _gzip
import random
import struct
import zlib
from collections.abc import Iterator
from pathlib import Path

from kafkacodec.generated.kafka_control_record_key import KafkaControlRecordKey
from kafkacodec.generated.kafka_end_txn_marker import KafkaEndTxnMarker
from kafkacodec.generated.kafka_legacy_message import InnerEntry, KafkaLegacyMessage
from kafkacodec.generated.kafka_record_batch import KafkaRecordBatch
from kafkacodec.runtime import compression as C
from kafkacodec.runtime.errors import KafkacodecError
from kafkacodec.runtime.varint import encode_uvarint, encode_varint

from . import bytewise
from .findings import entries as _framed

ROOT = Path(__file__).resolve().parents[1]
VECTORS = ROOT / "tests" / "vectors"
#: The schema-aware families (see above), then peers.bytewise's, named raw-FAMILY.
SCHEMA_FAMILIES = ("field", "bytes", "varint", "list", "codec", "frame", "wrapper", "control", "boundary")
FAMILIES = SCHEMA_FAMILIES + tuple(f"raw-{f}" for f in bytewise.FAMILIES)
MODES = ("derive", "crc", "stale")
#: The largest seed image taken (bytes): mutations of larger ones cost more than they reach.
MAX_SEED = 20000
_BUILD_ERRORS = (
    KafkacodecError,
    struct.error,
    ValueError,
    TypeError,
    AttributeError,
    OverflowError,
)


class Raw:
    """Bytes a builder writes as they are in place of an object (a record, a header, an
    inner entry): anything can sit inside a region whose lengths and CRC are re-derived."""

    __slots__ = ("data",)
    KINDS: dict = {}
    DERIVED: tuple = ()

    def __init__(self, data: bytes) -> None:
        self.data = bytes(data)

    def build_into(self, out: bytearray) -> None:
        out += self.data

    def build(self) -> bytes:
        return self.data


# -- the wire types


def _int_range(kind: str) -> tuple[int, int, int] | None:
    """(bits, lo, hi) of a numeric wire type, None for others."""
    if kind[:1] in "su" and kind[1:].isdigit():
        bits = 8 * int(kind[1:])
        signed = kind[0] == "s"
    elif kind.startswith(("varint", "uvarint")):
        bits = int(kind[-2:])
        signed = not kind.startswith("u")
    else:
        return None
    if signed:
        return bits, -(1 << (bits - 1)), (1 << (bits - 1)) - 1
    return bits, 0, (1 << bits) - 1


def _wrap(v: int, bits: int, lo: int) -> int:
    """v in the type's range, wrapped as Java wraps it."""
    u = v & ((1 << bits) - 1)
    return u - (1 << bits) if lo < 0 and u >> (bits - 1) else u


def edge_values(kind: str, v: int, rng: random.Random) -> int:
    """A value a parser must get right for this wire type, near v or at the type's edges."""
    bits, lo, hi = _int_range(kind)  # type: ignore[misc]
    pick = rng.randrange(12)
    if pick == 0:
        return lo
    if pick == 1:
        return hi
    if pick == 2:
        return _wrap(-1, bits, lo)
    if pick == 3:
        return rng.choice((0, 1, 2, 14, 17, 61))
    if pick in (4, 5):
        return _wrap(v + rng.choice((-2, -1, 1, 2)), bits, lo)
    if pick == 6:
        return _wrap(v ^ (1 << rng.randrange(bits)), bits, lo)
    if pick == 7:
        return _wrap(-rng.randrange(2, 1 << min(bits - 1, 20)), bits, lo)
    if pick == 8:
        return rng.randint(lo, hi)
    if pick == 9:
        return _wrap(v + rng.choice((-1, 1)) * rng.randrange(3, 1 << 12), bits, lo)
    if pick == 10:
        return _wrap(1 << rng.randrange(7, bits), bits, lo)  # a varint's byte boundaries
    return _wrap(hi >> rng.randrange(1, bits), bits, lo)


# -- an entry as objects


def _open(obj, lazies: list, typed: dict) -> None:
    """Decode obj's lazy fields (a compressed region, a wrapper's inner messages) and theirs,
    noting each in lazies as (object, field), and a control record's key and marker in typed."""
    if isinstance(obj, KafkaRecordBatch):
        try:
            obj.read_records_region(verify=False)
            lazies.append((obj, "records_region"))
        except KafkacodecError:
            return
        if obj.is_control:
            for r in obj.records_region.records:
                _open_control(r, typed)
    elif isinstance(obj, KafkaLegacyMessage) and obj.inner_raw is not None:
        try:
            obj.read_inner(verify=False)
        except KafkacodecError:
            return
        lazies.append((obj, "inner"))
        for e in obj.inner.entries:
            if e.message is not None:
                _open(e.message, lazies, typed)


class _Typed:
    """A record's key or value read as the schema of a control record's key (or marker):
    a field of the record whose bytes are built from it."""

    __slots__ = ("obj", "record", "field")

    def __init__(self, obj, record, field: str) -> None:
        self.obj, self.record, self.field = obj, record, field

    def write(self) -> None:
        setattr(self.record, self.field, self.obj.build())


def _open_control(record, typed: dict) -> None:
    for field, cls in (("key", KafkaControlRecordKey), ("value", KafkaEndTxnMarker)):
        data = getattr(record, field, None)
        if data is None or len(data) < cls.MIN_SIZE:
            continue
        try:
            obj, end = cls.parse(bytes(data), 0, verify=False)
        except KafkacodecError:
            continue
        if end == len(data):
            typed[id(record), field] = _Typed(obj, record, field)


def parse_entry(data: bytes, typed: dict | None = None):
    """An entry (a v2 batch or a legacy message) as generated objects, its lazy fields
    decoded; None when the generated classes cannot read it. typed: where a control
    record's key and marker go, read through their schemas ({(id(record), field): _Typed},
    for sites)."""
    if len(data) < 17:
        return None, []
    try:
        if data[16] == 2:
            obj, _ = KafkaRecordBatch.parse(data, 0, verify=False)
        elif data[16] in (0, 1):
            obj, _ = KafkaLegacyMessage.parse(data, 0, verify=False)
        else:
            return None, []
    except KafkacodecError:
        return None, []
    lazies: list = []
    _open(obj, lazies, {} if typed is None else typed)
    return obj, lazies


def sites(obj, path: tuple = (), typed: dict | None = None) -> Iterator[tuple[tuple, object, str, str]]:
    """(path, holder, field, wire type) of every field in obj and below it (a control
    record's key and marker through typed, parse_entry's); path is the objects above the
    holder, outermost first."""
    typed = {} if typed is None else typed
    for field, kind in obj.KINDS.items():
        value = getattr(obj, field, None)
        if kind.endswith("[]"):
            yield path, obj, field, kind
            for item in value or ():
                if hasattr(item, "KINDS") and not isinstance(item, Raw):
                    yield from sites(item, (*path, obj), typed)
        elif kind in ("bytes", "str"):
            yield path, obj, field, kind
            schema = typed.get((id(obj), field))
            if schema is not None:
                yield from sites(schema.obj, (*path, obj, schema), typed)
        elif _int_range(kind) is not None:
            yield path, obj, field, kind
        elif value is not None and hasattr(value, "KINDS"):
            yield from sites(value, (*path, obj), typed)


# -- dependent fields


def _crc_fields(obj) -> tuple[str, ...]:
    return ("crc",) if "crc_start" in obj.FIELDS else ()


def rederive(path: tuple, holder, changed: str | None, mode: str) -> None:
    """Clear the dependent fields the mode computes again, on the holder and every object
    above it, but the one changed; a v2 batch's last offset delta follows its records."""
    for obj in (*path, holder):
        if isinstance(obj, _Typed):
            continue
        if mode == "derive":
            names = obj.DERIVED
        elif mode == "crc":
            names = _crc_fields(obj)
        else:
            names = ()
        for name in names:
            if name == "num_records" and getattr(obj, "records_region", None) is None:
                continue  # the records are stored bytes here (compressed, or a frame made by hand)
            if not (obj is holder and name == changed):
                setattr(obj, name, None)
        if (
            mode == "derive"
            and isinstance(obj, KafkaRecordBatch)
            and not (obj is holder and changed == "last_offset_delta")
        ):
            records = obj.records_region.records if obj.records_region is not None else []
            deltas = [r.offset_delta for r in records if not isinstance(r, Raw)]
            if deltas:
                obj.last_offset_delta = deltas[-1]


def _typed_write(path: tuple) -> None:
    """A control key or marker changed: its record's bytes from it (innermost first)."""
    for obj in reversed(path):
        if isinstance(obj, _Typed):
            obj.write()


def _restore(lazies: list, keep: set[int]) -> None:
    """The lazy fields the change did not reach go back to their stored bytes (a builder
    writes those as they were, not compressed again)."""
    for obj, field in lazies:
        if id(obj) not in keep:
            setattr(obj, field, None)


def build(obj, path: tuple, holder, lazies: list) -> bytes | None:
    _typed_write(path)
    keep = {id(o) for o in (*path, holder)}
    _restore(lazies, keep)
    try:
        return obj.build()
    except _BUILD_ERRORS:
        return None


# -- the compressed payloads' frames, written by hand


def lz4_frame(payload: bytes, rng: random.Random, magic: int) -> bytes:
    """An LZ4 frame of payload as Kafka's Lz4BlockInputStream must read (or refuse) it:
    its version, flags (independence, block and content checksums, content size, reserved
    and dictionary bits), block size id, header checksum (over the magic too for magic 0,
    KAFKA-3160), blocks stored raw or compressed, short, empty, or past the block size, an
    end mark or none."""
    import lz4.block

    # most frames get past the descriptor's checks, to reach the blocks'
    version = 1 if rng.random() < 0.92 else rng.choice((0, 2, 3))
    independent = rng.random() < 0.95
    block_ck = rng.random() < 0.3
    content_size = rng.random() < 0.2
    content_ck = rng.random() < 0.3
    reserved = rng.choice((0,) * 30 + (1, 2))  # FLG bit 1 reserved, bit 0 a dictionary id
    flg = (
        version << 6
        | independent << 5
        | block_ck << 4
        | content_size << 3
        | content_ck << 2
        | reserved
    )
    bd_id = rng.choice((4,) * 12 + (5, 6, 7, 0, 3))
    bd = bd_id << 4 | (rng.choice((0,) * 30 + (0x80, 0x01)))
    desc = bytes((flg, bd))
    if content_size:
        desc += struct.pack("<q", rng.choice((len(payload), 0, -1, len(payload) + 1)))
    if reserved & 1:
        desc += struct.pack("<I", rng.randrange(1 << 32))
    magic_bytes = struct.pack("<I", 0x184D2204)
    if rng.random() < 0.04:  # the header cut short: inside the content size, or before its checksum
        if rng.random() < 0.5:
            desc = bytes((0x68, 0x40)) + struct.pack("<q", len(payload))  # version 1, independent, a size
        return magic_bytes + desc[: rng.randrange(1, len(desc) + 1)]
    hc = (C.xxh32((magic_bytes if magic == 0 else b"") + desc) >> 8) & 0xFF
    if rng.random() < 0.1:
        hc ^= 1 << rng.randrange(8)
    out = bytearray(magic_bytes + desc + bytes((hc,)))
    max_block = 1 << (2 * bd_id + 8) if bd_id >= 4 else 1 << 16
    size = rng.choice((max_block, 16, 1, max(1, len(payload) // 2)))
    for i in range(0, max(len(payload), 1), size):
        chunk = payload[i : i + size]
        how = rng.random()
        if how < 0.5:
            block = lz4.block.compress(chunk, store_size=False)
            word = len(block)
        else:
            block = chunk
            word = len(block) | 0x80000000
        if rng.random() < 0.03:
            word = rng.choice((max_block + 1, 0x7FFFFFFF, len(block) + 1))
        out += struct.pack("<I", word) + block
        if block_ck:
            ck = C.xxh32(bytes(block))
            out += struct.pack("<I", ck ^ (1 if rng.random() < 0.05 else 0))
        if rng.random() < 0.02:
            out += struct.pack("<I", 0x80000000)  # an empty raw block
    if rng.random() < 0.9:
        out += b"\0\0\0\0"
        if content_ck:
            out += struct.pack("<I", C.xxh32(payload) if rng.random() < 0.9 else 0)
    if rng.random() < 0.1:
        out = out[: rng.randrange(len(out) + 1)]
    return bytes(out)


def gzip_frame(payload: bytes, rng: random.Random) -> bytes:
    """A gzip stream of payload with header flags (FTEXT, FHCRC, FEXTRA, FNAME, FCOMMENT,
    reserved), other methods, a trailer right or wrong, more members, or bytes after it."""
    flags = 0
    for bit in (0x01, 0x02, 0x04, 0x08, 0x10):
        if rng.random() < 0.2:
            flags |= bit
    if rng.random() < 0.05:
        flags |= 0x20 << rng.randrange(3)
    head = bytearray(
        b"\x1f\x8b" + bytes((8 if rng.random() < 0.95 else rng.choice((0, 7, 9)), flags))
    )
    head += struct.pack("<I", rng.randrange(1 << 32)) + bytes(
        (rng.choice((0, 2, 4)), rng.choice((0, 3, 255)))
    )
    if flags & 0x04:
        extra = bytes(rng.randrange(16))
        head += struct.pack("<H", len(extra) + rng.choice((0, 0, 0, 1))) + extra
    if flags & 0x08:
        head += b"name\0"
    if flags & 0x10:
        head += b"comment\0"
    if flags & 0x02:
        head += struct.pack(
            "<H", (zlib.crc32(bytes(head)) & 0xFFFF) ^ (1 if rng.random() < 0.2 else 0)
        )
    co = zlib.compressobj(rng.choice((0, 1, 6, 9)), zlib.DEFLATED, -15)
    body = co.compress(payload) + co.flush()
    crc = zlib.crc32(payload)
    isize = len(payload)
    if rng.random() < 0.1:
        crc ^= 1
    if rng.random() < 0.1:
        isize += 1
    out = bytes(head) + body + struct.pack("<II", crc, isize & 0xFFFFFFFF)
    if rng.random() < 0.1:
        # a second member (mtime 0, as the JDK writes it: a seeded case is the same every run)
        out += _gzip.compress(payload[: len(payload) // 2], mtime=0)
    if rng.random() < 0.05:
        out += b"\0" * rng.choice((1, 8, 20))
    if rng.random() < 0.1:
        out = out[: rng.randrange(len(out) + 1)]
    return out


def snappy_frame(payload: bytes, rng: random.Random) -> bytes:
    """snappy-java's framing (magic, version, compatible version, then chunks: a length and
    a raw snappy block) with its fields changed, or a raw snappy block with no framing."""
    import cramjam

    def block(b: bytes) -> bytes:
        return bytes(cramjam.snappy.compress_raw(b))

    if rng.random() < 0.15:
        return block(payload)
    magic = (
        b"\x82SNAPPY\x00"
        if rng.random() < 0.9
        else rng.choice((b"\x82SNAPPY\x01", b"\x00SNAPPY\x00", b"\x82SNAP"))
    )
    out = bytearray(
        magic + struct.pack(">ii", rng.choice((1, 1, 1, 0, 2)), rng.choice((1, 1, 1, 0, 2)))
    )
    size = rng.choice((32 * 1024, 7, max(1, len(payload) // 3)))
    for i in range(0, max(len(payload), 1), size):
        chunk = block(payload[i : i + size])
        length = len(chunk) if rng.random() < 0.95 else rng.choice((0, -1, len(chunk) + 1, 1 << 30))
        out += struct.pack(">i", length) + chunk
    if rng.random() < 0.05:
        out += struct.pack(">i", 0)
    if rng.random() < 0.1:
        out = out[: rng.randrange(len(out) + 1)]
    return bytes(out)


def zstd_frame(payload: bytes, rng: random.Random) -> bytes:
    """zstd frames of payload with and without a checksum and a content size, several
    frames, a skippable frame, or bytes after them."""
    import zstandard

    def frame(b: bytes) -> bytes:
        cctx = zstandard.ZstdCompressor(level=rng.choice((1, 3, 19)), write_checksum=rng.random() < 0.5,
                                        write_content_size=rng.random() < 0.7)  # fmt: skip
        return cctx.compress(b)

    half = len(payload) // 2
    out = frame(payload) if rng.random() < 0.6 else frame(payload[:half]) + frame(payload[half:])
    if rng.random() < 0.15:
        out = struct.pack("<II", 0x184D2A50 + rng.randrange(16), 3) + b"abc" + out
    if rng.random() < 0.1 and len(out) > 8:
        i = rng.randrange(len(out) - 4, len(out))
        out = out[:i] + bytes((out[i] ^ 1,)) + out[i + 1 :]  # the checksum, when there is one
    if rng.random() < 0.05:
        out += b"\0" * rng.choice((1, 4, 9))
    if rng.random() < 0.1:
        out = out[: rng.randrange(len(out) + 1)]
    return out


def framed(codec: int, payload: bytes, rng: random.Random, magic: int) -> bytes | None:
    if codec == C.LZ4:
        return lz4_frame(payload, rng, magic)
    if codec == C.GZIP:
        return gzip_frame(payload, rng)
    if codec == C.SNAPPY:
        return snappy_frame(payload, rng)
    if codec == C.ZSTD:
        return zstd_frame(payload, rng)
    return None


# -- seeds


def entries(data: bytes) -> list[tuple[int, int]]:
    """(start, end) of each whole top-level entry (peers.findings.entries less a partial
    last one), in order."""
    return [(s, e) for s, e in _framed(data)
            if e - s >= 26 and struct.unpack_from(">i", data, s + 8)[0] == e - s - 12]  # fmt: skip


@functools.cache
def seeds(drawn: int = 200, seed: int = 7) -> tuple[tuple[str, bytes], ...]:
    """The images mutations start from: the shared vectors Kafka and the other clients
    wrote, the corpus's edge cases, and record sets drawn from the generated strategies."""
    from kafkacodec.corpus import draw_examples, edge_cases

    out = []
    for p in sorted(VECTORS.glob("kafka-java/*/*.bin")) + sorted(VECTORS.glob("peers/*/*.bin")):
        if "corrupt" not in p.parts and 1 < p.stat().st_size <= MAX_SEED:
            out.append((f"{p.parent.name}/{p.stem}", p.read_bytes()))
    for name, data in sorted(edge_cases().items()):
        if len(data) <= MAX_SEED:
            out.append((f"edge/{name}", data))
    try:
        from kafkacodec.generated.strategies.kafka_log import kafka_log
    except ImportError:  # no hypothesis (the dev extra): the written seeds alone
        return tuple(out)
    for i, log in enumerate(draw_examples(kafka_log(), drawn, seed)):
        try:
            data = log.build()
        except _BUILD_ERRORS:
            continue
        if 17 <= len(data) <= MAX_SEED:
            out.append((f"drawn/{i}", data))
    return tuple(out)


# -- the mutator


class Mutator:
    """Seeded schema-aware mutations of the seeds (see the module's doc)."""

    def __init__(self, seed: int, *, seed_images=None) -> None:
        self.rng = random.Random(seed)
        self.seeds = tuple(seed_images) if seed_images is not None else seeds()
        self.raw = bytewise.Mutator(seed)
        #: the case being made's control keys and markers, read through their schemas
        self._typed: dict[tuple[int, str], _Typed] = {}

    def draw(self, n: int, families=FAMILIES) -> Iterator[tuple[str, bytes]]:
        """n images, each named SEED~FAMILY.MODE.DETAIL (SEED~raw-FAMILY.DETAIL for
        peers.bytewise's families, which say in DETAIL whether they re-derived the CRC)."""
        made = 0
        tries = 0
        while made < n:
            tries += 1
            if tries > 50 * (n + 10):
                raise RuntimeError("peers.mutate: no mutation could be made of these seeds")
            name, data = self.rng.choice(self.seeds)
            family = self.rng.choice(families)
            if family.startswith("raw-"):
                got = getattr(self.raw, family[4:])("", data)
                if got is None or got[1] == data:
                    continue
                made += 1
                yield f"{name}~{family}.{got[0].lstrip('-')}", got[1]
                continue
            mode = self.rng.choice(MODES)
            try:
                got = getattr(self, family)(data, mode)
            finally:
                self._typed.clear()
            if got is None:
                continue
            detail, out = got
            if out is None or out == data:  # a change the builders refused, or none
                continue
            made += 1
            yield f"{name}~{family}.{mode}.{detail}", out

    # each family: (detail, image) or None when it does not apply to this seed

    def _entry(self, data: bytes, want=None):
        spans = entries(data)
        if want is not None:
            spans = [s for s in spans if want(data, *s)]
        if not spans:
            return None
        start, end = self.rng.choice(spans)
        obj, lazies = parse_entry(data[start:end], self._typed)
        if obj is None:
            return None
        return start, end, obj, lazies

    @staticmethod
    def _splice(data: bytes, start: int, end: int, new: bytes | None) -> bytes | None:
        return None if new is None else data[:start] + new + data[end:]

    def _site(self, obj, accept) -> tuple | None:
        found = [s for s in sites(obj, (), self._typed) if accept(*s)]
        return self.rng.choice(found) if found else None

    def field(self, data: bytes, mode: str):
        got = self._entry(data)
        if got is None:
            return None
        start, end, obj, lazies = got
        site = self._site(obj, lambda _p, _h, _f, kind: _int_range(kind) is not None)
        if site is None:
            return None
        path, holder, field, kind = site
        old = getattr(holder, field)
        if old is None:
            old = 0
        bits = [b for b in getattr(holder, "BITS", {}).values() if b[0] == field]
        if bits and self.rng.random() < 0.6:  # a bit field: one of its values, or one bit
            _f, mask, shift = self.rng.choice(bits)
            if self.rng.random() < 0.5:
                value = (old & ~mask) | (
                    (self.rng.randrange(mask >> shift) + 1 if mask >> shift else 0) << shift & mask
                )
            else:
                value = old ^ mask
            range_ = _int_range(kind)
            value = _wrap(value, range_[0], range_[1])  # type: ignore[index]
        else:
            value = edge_values(kind, old, self.rng)
        setattr(holder, field, value)
        if isinstance(holder, (KafkaRecordBatch, KafkaLegacyMessage)) and field == "attributes":
            self._recodec(holder, old, value)
        if isinstance(holder, KafkaLegacyMessage) and field == "magic":  # magic 0 has no timestamp
            holder.timestamp = (
                None if value == 0 else (holder.timestamp if holder.timestamp is not None else -1)
            )
        rederive(path, holder, field, mode)
        return f"{type(holder).__name__}.{field}={value}", self._splice(
            data, start, end, build(obj, path, holder, lazies)
        )

    def _recodec(self, holder, old: int, new: int) -> None:
        """The codec bits changed: the region is compressed with the new codec, or left as
        it was when the new one is none Kafka knows."""
        if (old & 7) == (new & 7):
            return
        limit = 4 if isinstance(holder, KafkaRecordBatch) else 3
        if (new & 7) > limit or self.rng.random() < 0.3:
            # the stored bytes under the other codec's bits
            if isinstance(holder, KafkaRecordBatch):
                holder.records_region = None
            elif holder.inner is not None or holder.value is not None:
                raw = holder.inner_raw if holder.inner_raw is not None else holder.value
                holder.inner, holder.value = None, None
                if new & 7:
                    holder.inner_raw = raw
                else:
                    holder.value = raw
            return
        if isinstance(holder, KafkaLegacyMessage):
            if not old & 7 and holder.value is not None:  # a plain value read as a wrapper's
                holder.inner_raw = C.compress(new & 7, bytes(holder.value), holder.magic)
                holder.value = None
            elif not new & 7 and holder.inner_raw is not None:  # a wrapper's payload as a value
                holder.value = (
                    holder.inner.build() if holder.inner is not None else holder.inner_raw
                )
                holder.inner = holder.inner_raw = None

    def bytes(self, data: bytes, mode: str):
        got = self._entry(data)
        if got is None:
            return None
        start, end, obj, lazies = got
        site = self._site(obj, lambda _p, _h, _f, kind: kind in ("bytes", "str"))
        if site is None:
            return None
        path, holder, field, kind = site
        if field in ("inner", "partial", "unused") or isinstance(holder, InnerEntry):
            return None
        old = getattr(holder, field)
        raw = old.encode("utf-8", "surrogateescape") if isinstance(old, str) else bytes(old or b"")
        how = self.rng.choice(("empty", "cut", "grow", "null", "utf8", "big"))
        if how == "empty":
            new = b""
        elif how == "cut":
            new = raw[: self.rng.randrange(len(raw) + 1)]
        elif how == "grow":
            new = raw + bytes(self.rng.randrange(1, 40))
        elif how == "big":
            new = raw * self.rng.randrange(2, 200) or b"x" * 300
        elif how == "utf8":
            new = raw + self.rng.choice((b"\xff", b"\xc3", b"\xed\xa0\x80", b"\xf4\x90\x80\x80"))
        else:
            new = None
        if kind == "str":
            if new is None:
                return None  # a header key is never null in the schema: a length changes it
            value = new.decode("utf-8", "surrogateescape")
        else:
            value = new
        setattr(holder, field, value)
        rederive(path, holder, None, mode)
        if mode != "derive" and f"len_{field}" in holder.FIELDS:
            # the length stays (a stale one), unless it no longer fits the null / not null
            length = getattr(holder, f"len_{field}")
            if length is None or (length < 0) != (value is None):
                setattr(holder, f"len_{field}", None)
        return f"{type(holder).__name__}.{field}:{how}", self._splice(
            data, start, end, build(obj, path, holder, lazies)
        )

    def varint(self, data: bytes, mode: str):
        """A varint written in more bytes than it needs (up to one past Kafka's bound)."""
        got = self._entry(data, lambda d, s, e: d[s + 16] == 2)
        if got is None:
            return None
        start, end, obj, lazies = got
        site = self._site(
            obj,
            lambda p, h, f, kind: "varint" in kind and not any(isinstance(x, _Typed) for x in p),
        )
        if site is None:
            return None
        path, holder, field, kind = site
        # the record whose bytes change: the holder, or the record holding this header
        record = holder if not path or not hasattr(path[-1], "headers") else path[-1]
        try:
            body = bytearray(holder.build())
        except _BUILD_ERRORS:
            return None
        at = _offset(holder, field)
        if at is None:
            return None
        bits = int(kind[-2:])
        max_len = 5 if bits == 32 else 10
        value = getattr(holder, field)
        minimal = (encode_varint if not kind.startswith("u") else encode_uvarint)(value, max_len)
        extra = self.rng.choice((1, 1, 2, max_len - len(minimal), max_len + 1 - len(minimal)))
        extra = max(extra, 1)
        padded = bytearray(minimal)
        padded[-1] |= 0x80
        padded += b"\x80" * (extra - 1) + b"\x00"
        body[at : at + len(minimal)] = padded
        patched = Raw(bytes(body))
        if holder is record:
            if mode == "derive" and field != "len_body":
                patched = Raw(_with_rest_length(bytes(body), holder.len_body))
            _replace(path[-1], record, patched)
            rederive(path[:-1], path[-1], None, mode)
        else:
            _replace(record, holder, patched)
            rederive(path[:-1], record, None, mode)
        return f"{type(holder).__name__}.{field}+{extra}", self._splice(
            data, start, end, build(obj, path[:-1], path[-1], lazies)
        )

    def list(self, data: bytes, mode: str):
        got = self._entry(data)
        if got is None:
            return None
        start, end, obj, lazies = got
        site = self._site(obj, lambda _p, _h, _f, kind: kind.endswith("[]"))
        if site is None:
            return None
        path, holder, field, _kind = site
        items = list(getattr(holder, field) or [])
        how = self.rng.choice(("drop", "repeat", "swap", "clear", "cut", "junk", "reverse"))
        rng = self.rng
        if how == "drop" and items:
            del items[rng.randrange(len(items))]
        elif how == "repeat" and items:
            i = rng.randrange(len(items))
            items.insert(i, items[i])
        elif how == "swap" and len(items) > 1:
            i, j = rng.sample(range(len(items)), 2)
            items[i], items[j] = items[j], items[i]
        elif how == "reverse" and len(items) > 1:
            items.reverse()
        elif how == "clear":
            items = []
        elif how == "cut" and items:
            i = rng.randrange(len(items))
            try:
                b = items[i].build()
            except _BUILD_ERRORS:
                return None
            items[i] = Raw(b[: rng.randrange(len(b))] if b else b"")
            del items[i + 1 :]
        elif how == "junk":
            items.append(
                Raw(
                    rng.choice(
                        (b"\0", b"\x01\x00", b"\x7f", bytes(rng.randrange(1, 30)), b"\x02" * 7)
                    )
                )
            )
        else:
            return None
        setattr(holder, field, items)
        rederive(path, holder, None, mode)
        return f"{type(holder).__name__}.{field}:{how}", self._splice(
            data, start, end, build(obj, path, holder, lazies)
        )

    def codec(self, data: bytes, mode: str):
        got = self._entry(data)
        if got is None:
            return None
        start, end, obj, lazies = got
        old = obj.attributes
        new = (old & ~7) | self.rng.choice([c for c in range(8) if c != old & 7])
        obj.attributes = new
        self._recodec(obj, old, new)
        rederive((), obj, "attributes", mode)
        return f"codec={new & 7}", self._splice(data, start, end, build(obj, (), obj, lazies))

    def frame(self, data: bytes, mode: str):
        got = self._entry(data, lambda d, s, e: d[s + (22 if d[s + 16] == 2 else 17)] & 7 != 0)
        if got is None:
            return None
        start, end, obj, lazies = got
        codec = obj.attributes & 7
        if isinstance(obj, KafkaRecordBatch):
            if obj.records_region is None:
                return None
            payload = obj.records_region.build()
            new = framed(codec, payload, self.rng, 2)
            if new is None:
                return None
            obj.records_region, obj.records_region_raw = None, new
        else:
            if obj.inner is None:
                return None
            payload = obj.inner.build()
            new = framed(codec, payload, self.rng, obj.magic)
            if new is None:
                return None
            obj.inner, obj.inner_raw = None, new
        lazies = [(o, f) for o, f in lazies if o is not obj]
        rederive((), obj, None, mode)
        return f"{C.codec_name(codec)}-frame", self._splice(
            data, start, end, build(obj, (), obj, lazies)
        )

    def wrapper(self, data: bytes, mode: str):
        """Entries nested in a new legacy wrapper (messages, a wrapper, a v2 batch), an
        inner message of another magic, or a wrapper with nothing inside."""
        spans = entries(data)
        if not spans:
            return None
        rng = self.rng
        i = rng.randrange(len(spans))
        j = min(len(spans), i + rng.randrange(1, 4))
        inner = [data[s:e] for s, e in spans[i:j]]
        magic = data[spans[i][0] + 16]
        if magic not in (0, 1) or rng.random() < 0.2:
            magic = rng.choice((0, 1))
        how = rng.choice(("nest", "nest", "empty", "relative", "absolute"))
        if how == "empty":
            inner = []
        entries_ = []
        for k, b in enumerate(inner):
            b = bytearray(b)
            if how == "relative":
                struct.pack_into(">q", b, 0, k)
            elif how == "absolute":
                struct.pack_into(">q", b, 0, 1000 + k * rng.choice((1, 1, -1, 0)))
            entries_.append(Raw(bytes(b)))
        codec = rng.choice((C.GZIP, C.SNAPPY, C.LZ4))
        payload = b"".join(e.data for e in entries_)
        last = struct.unpack_from(">q", inner[-1], 0)[0] if inner else 0
        offset = rng.choice((last, last, last + 5, last - 1, 0, -1))
        attributes = codec | (8 if magic == 1 and rng.random() < 0.2 else 0)
        msg = KafkaLegacyMessage(offset=offset, magic=magic, attributes=attributes,
                                 timestamp=1700000000000 if magic == 1 else None, key=None,
                                 inner_raw=C.compress(codec, payload, magic))  # fmt: skip
        try:
            new = msg.build()
        except _BUILD_ERRORS:
            return None
        if mode == "stale":
            new = bytearray(new)
            new[12] ^= 0xFF  # a wrapper with a wrong CRC
            new = bytes(new)
        return f"{how}-{C.codec_name(codec)}-magic{magic}", data[: spans[i][0]] + new + data[
            spans[j - 1][1] :
        ]

    def control(self, data: bytes, mode: str):
        got = self._entry(data, lambda d, s, e: d[s + 16] == 2)
        if got is None:
            return None
        start, end, obj, lazies = got
        if obj.records_region is None:
            return None
        rng = self.rng
        if not obj.is_control or rng.random() < 0.3:
            obj.attributes |= 0x20 | (0x10 if rng.random() < 0.8 else 0)
            records = obj.records_region.records
            if not records:
                return None
            r = records[0]
            key = KafkaControlRecordKey(version=0, type=rng.choice((0, 1, 2, 3, 4, 5, 6, 7, -1)))
            marker = KafkaEndTxnMarker(version=0, coordinator_epoch=rng.randrange(100))
            r.key, r.value = key.build(), marker.build()
            r.len_key = r.len_value = None
            self._typed[id(r), "key"] = _Typed(key, r, "key")
            self._typed[id(r), "value"] = _Typed(marker, r, "value")
        site = self._site(
            obj,
            lambda p, _h, _f, kind: (
                any(isinstance(x, _Typed) for x in p) and _int_range(kind) is not None
            ),
        )
        if site is None:
            return None
        path, holder, field, kind = site
        value = edge_values(kind, getattr(holder, field) or 0, rng)
        setattr(holder, field, value)
        records_path = [x for x in path if not isinstance(x, _Typed)]
        record = records_path[-1]
        rederive(tuple(records_path[:-1]), record, None, mode)
        if rng.random() < 0.2:  # bytes after the key or the marker
            typed = next(x for x in path if isinstance(x, _Typed))
            typed.write()
            setattr(record, typed.field, getattr(record, typed.field) + b"\0" * rng.randrange(1, 5))
            self._typed.pop((id(record), typed.field), None)
            path = tuple(x for x in path if x is not typed)
        return f"control.{type(holder).__name__}.{field}={value}", self._splice(
            data, start, end, build(obj, path, holder, lazies)
        )

    def boundary(self, data: bytes, mode: str):
        spans = entries(data)
        rng = self.rng
        how = rng.choice(("drop", "repeat", "swap", "cut", "tail", "join"))
        if how == "drop" and len(spans) > 1:
            s, e = rng.choice(spans)
            return how, data[:s] + data[e:]
        if how == "repeat" and spans:
            s, e = rng.choice(spans)
            return how, data[:e] + data[s:e] + data[e:]
        if how == "swap" and len(spans) > 1:
            (s1, e1), (s2, e2) = sorted(rng.sample(spans, 2))
            return how, data[:s1] + data[s2:e2] + data[e1:s2] + data[s1:e1] + data[e2:]
        if how == "cut" and spans:
            s, e = rng.choice(spans)
            cut = rng.choice((s + rng.randrange(1, 17), s + 17, e - 1, rng.randrange(s + 1, e)))
            return how, data[:cut]
        if how == "tail":
            magic = rng.choice((0, 1, 2, 3, 4, 97, 0x80, 0xFF))
            size = rng.choice((14, 20, 60, 1000, 2**31 - 1, -1, 0, 13))
            tail = struct.pack(">qiiB", rng.choice((0, 5)), size, 0, magic)
            return f"tail-magic{magic}", data + tail[: rng.choice((17, 17, 12, len(tail)))]
        if how == "join":
            other = rng.choice(self.seeds)[1]
            return how, data + other
        return None


def _offset(obj, field: str) -> int | None:
    """Where field's bytes start in obj.build(), from the sizes of the fields before it
    (in KINDS' order, the order on the wire)."""
    at = 0
    for name, kind in obj.KINDS.items():
        if name == field:
            return at
        value = getattr(obj, name)
        if value is None:
            continue
        r = _int_range(kind)
        if r is not None:
            if "varint" in kind:
                at += len(
                    (encode_uvarint if kind.startswith("u") else encode_varint)(
                        value, 5 if r[0] == 32 else 10
                    )
                )
            else:
                at += r[0] // 8
        elif kind == "str":
            at += len(value.encode("utf-8", "surrogateescape"))
        elif kind == "bytes":
            at += len(value)
        elif kind.endswith("[]"):
            try:
                at += sum(len(item.build()) for item in value)
            except _BUILD_ERRORS:
                return None
        else:
            return None
    return None


def _with_rest_length(body: bytes, old_length: int) -> bytes:
    """A record's bytes with its first varint (the length of the rest) computed again."""
    skip = len(encode_varint(old_length, 5))
    rest = body[skip:]
    return encode_varint(len(rest), 5) + rest


def _replace(holder, old, new) -> None:
    """old, an item of one of holder's lists, replaced by new."""
    for field, kind in holder.KINDS.items():
        if kind.endswith("[]"):
            items = getattr(holder, field)
            for i, item in enumerate(items or ()):
                if item is old:
                    items[i] = new
                    return


def draw(cases: int, seed: int, families=FAMILIES) -> Iterator[tuple[str, bytes]]:
    """cases mutations (name, image), the same for the same seed."""
    yield from Mutator(seed).draw(cases, families)


def main(argv: list[str] | None = None) -> int:
    """python -m peers.mutate --cases N --seed S --out DIR: the cases as files (NAME.bin),
    a seed corpus for a coverage-guided fuzzer (go test -fuzz reads them through
    KAFKACODEC_SEEDS, go/kafkacodec/fuzz_test.go; atheris takes a directory as its corpus)."""
    import argparse

    ap = argparse.ArgumentParser(prog="python -m peers.mutate", description=main.__doc__.split("\n")[0])
    ap.add_argument("--cases", type=int, default=10000)
    ap.add_argument("--seed", type=int, default=1)
    ap.add_argument("--family", action="append", choices=FAMILIES, help="mutation families (default: all)")
    ap.add_argument("--out", type=Path, required=True)
    args = ap.parse_args(argv)
    args.out.mkdir(parents=True, exist_ok=True)
    for i, (_name, data) in enumerate(draw(args.cases, args.seed, tuple(args.family or FAMILIES))):
        (args.out / f"{i:07d}.bin").write_bytes(data)
    print(f"wrote {args.cases} cases to {args.out}")
    return 0


if __name__ == "__main__":
    import sys

    sys.exit(main())

"""A test corpus that any Kafka parser, in any language, can be checked against
(`kafkacodec corpus OUT`): valid images of every format, codec and edge case, each with the
values a reader must find, and damaged images, each with the failure a reader must report
(which check fails, at which byte). kafkacodec's own parsers are the reference the
expectations come from; they are checked against Kafka-written data in kafkacodec's tests.

OUT/MANIFEST.json lists every case:

    {"file": "valid/kafka_log/edge-offsets-near-2^63.bin", "schema": "kafka_log",
     "class": "KafkaLog", "param": null, "kind": "valid", "about": "...",
     "expect": {"ok": TREE}}

    {"file": "damaged/kafka_log/...-crc-flip-at-61.bin", ..., "kind": "damaged",
     "expect": {"error": {"check": "ChecksumError", "family": "checksum", "position": 0,
                          "message": "..."},
                "ok_without_crc": TREE, "crc_mismatch_at": [0]}}

TREE is the schema's stored fields (its parameters, then its seq fields, by their schema
names), absent fields left out: integers as JSON numbers (full 64-bit), bytes as
{"hex": "..."}, strings as strings, varints as their value, nested types as objects, lists
as arrays; compressed regions decompressed. A family is "checksum" (a CRC does not
match: a parser that cannot compute one reads `ok_without_crc` and should find a mismatch
at the entries of `crc_mismatch_at`, or, when the data is also wrong otherwise, should
fail as `error_without_crc` says), "truncated" (the data ends inside a field) or
"invalid" (any other check); a rule is "crc", "length" (a length that counts the rest of
a record, batch or message disagrees with its fields: parsers generated from the Kaitai
schemas cannot check that, and read on) or "schema" (a check the schemas state). `param` is the version a type made from a Kafka message spec
is read at (null for the log formats).

Cases: hand-written edge cases of the log formats (offsets and timestamps near 2^63,
deltas beyond 32 bits and negative, 5- and 10-byte varints, many and large headers, null
and empty keys and values, a partial trailing batch, control batches, LogAppendTime, every
codec, legacy magic 0 and 1), objects of every schema (and every version of the schemas
made from Kafka's specs) drawn by the generated Hypothesis strategies with a fixed seed
(under `valid/` when Kafka reads them, under `refused/`, kind "refused", when Kafka's
classes refuse them: an unknown codec id, a compressed magic 0 wrapper with a null value),
and damaged copies of the log images (a flipped byte in each CRC's range, lengths cut
short or made too long, a bad magic, a varint made too long, the tail cut at several
places). The same seed and version of kafkacodec and Hypothesis write the same corpus.

Needs hypothesis (kafkacodec's dev extra).
"""

from __future__ import annotations

import contextlib
import importlib
import json
import re
from pathlib import Path
from typing import Any

from .records.batches import Record
from .records.builders import build_batch, build_control_batch, build_message_set
from .runtime import _prim
from .runtime.errors import ChecksumError, KafkacodecError, LengthMismatchError, TruncatedError

__all__ = ["write_corpus", "edge_cases", "tree", "expectation", "FORMAT"]

FORMAT = 1  # MANIFEST.json's "format": raised when its shape changes

T = 1_700_000_000_000
BIG = (1 << 63) - 1
DAMAGE_MAX = 1 << 16  # logs up to this size get damaged copies
_SURROGATE = re.compile(r"\\ud[89a-f][0-9a-f]{2}")


def _broker_stamped(wrapper: bytes, log_append_time: int) -> bytes:
    """A producer's compressed magic 1 wrapper as a broker in LogAppendTime stores it: the
    wrapper's timestamp type and timestamp set, its CRC again, the inner messages as the
    producer wrote them (their own CreateTime timestamps: Kafka's LogValidator rewrites
    the wrapper only)."""
    import struct
    import zlib

    out = bytearray(wrapper)
    out[17] |= 0x08  # attributes: LogAppendTime
    struct.pack_into(">q", out, 18, log_append_time)
    end = 12 + struct.unpack_from(">i", out, 8)[0]
    struct.pack_into(">I", out, 12, zlib.crc32(bytes(out[16:end])))
    return bytes(out)


def edge_cases() -> dict[str, bytes]:
    """Logs that stress what every language must get right (Kafka's varlong is 64 bits;
    offsets and timestamps are int64), built by kafkacodec's writer: name -> bytes."""
    R = Record
    out = {
        "offsets-near-2^63": build_batch([R(None, T, b"k", b"v") for _ in range(5)], base_offset=BIG - 4),
        "offset-deltas-2^30-and-2^31-1": build_batch(
            [R(0, T, None, b"a"), R((1 << 30) + 1, T, None, b"b"), R((1 << 31) - 1, T, None, b"c")]),
        "timestamp-deltas-above-2^31-2^32-and-negative": build_batch(
            [R(None, T + d, None, b"x") for d in (0, (1 << 31) + 5, (1 << 32) + 7, -(1 << 33), 1 << 40)]),
        "base-timestamp-near-2^63": build_batch(
            [R(None, BIG - (1 << 35) + d, None, b"x") for d in (0, 1 << 33, (1 << 35) - 1)]),
        "ten-byte-varlong-deltas": build_batch(
            [R(None, 0, None, b"x"), R(None, (1 << 62) + 1, None, b"y"), R(None, -(1 << 62) - 1, None, b"z")]),
        "five-byte-varint-lengths": build_batch([R(None, T, b"k" * ((1 << 21) + 3), b"v" * ((1 << 14) + 1))]),
        "many-and-large-headers": build_batch(
            [R(None, T, b"k", b"v", [(f"h{i}", bytes([i % 256])) for i in range(1000)]),
             R(None, T, None, None, [("", b""), ("big", b"\xab" * 200_000), ("null", None)])]),
        "null-and-empty-keys-and-values": build_batch(
            [R(None, T, None, None), R(None, T, b"", b""), R(None, T, b"\x00", None)]),
        "partial-trailing-batch": (lambda b: b + b[:40])(build_batch([R(None, T, b"k", b"v")])),
        "control-batches": build_control_batch(True, offset=7, timestamp=T, producer_id=3, producer_epoch=1)
        + build_control_batch(False, offset=8, timestamp=T, producer_id=4, producer_epoch=0),
        "log-append-time": build_batch([R(None, T, b"k", b"v")] * 3, timestamp_type="LogAppendTime",
                                       log_append_time=T + 99),
        # a magic 1 wrapper in LogAppendTime: its inner messages keep their own timestamps,
        # which Kafka replaces by the wrapper's (AbstractLegacyRecordBatch)
        "magic1-gzip-log-append-time": _broker_stamped(build_message_set(
            [R(None, T + i, b"k", b"v") for i in range(3)], magic=1, compression="gzip"), T + 99),
        # a magic 1 wrapper at offset 0 (a producer's, before the broker assigns offsets):
        # Kafka takes its inner offsets 0, 1, 2 as they are (AbstractLegacyRecordBatch's
        # DeepRecordsIterator: a wrapper offset of 0 is no absolute offset)
        "magic1-gzip-wrapper-at-offset-0": bytes(8) + build_message_set(
            [R(None, T + i, b"k", b"v") for i in range(3)], magic=1, compression="gzip")[8:],
    }  # fmt: skip
    out.update(_fuzz_families())
    for codec in ("gzip", "snappy", "lz4", "zstd"):
        records = [
            R(None, T + i, f"key{i}".encode(), b"value" * i, [("h", b"1")]) for i in range(20)
        ]
        out[f"v2-{codec}"] = build_batch(records, compression=codec, base_offset=1 << 40)
    for magic in (0, 1):
        for codec in ("none", "gzip", "snappy", "lz4"):
            records = [R(None, T + i, b"k", b"v" * (i + 1)) for i in range(4)]
            out[f"magic{magic}-{codec}"] = build_message_set(
                records, magic=magic, compression=codec, base_offset=(1 << 62) + 3
            )
    return out


def _fuzz_families() -> dict[str, bytes]:
    """A case of each family the fuzz run against Kafka brought (peers.mutate, issue 57),
    its CRCs and lengths right, so that a reader reaches what it is about: what Kafka reads
    there is what its record classes read (tests/kafka/test_kafka_judges_corpus.py)."""
    import struct

    from .generated.kafka_legacy_message import KafkaLegacyMessage
    from .generated.kafka_record_batch import KafkaRecordBatch
    from .runtime import compression as C
    from .runtime.varint import encode_varint

    R = Record

    def v2(records, change, **kw) -> bytes:
        b = KafkaRecordBatch.parse(build_batch(records, **kw))[0]
        b.read_records_region()
        change(b)
        b.len_batch = b.crc = None
        return b.build()

    def raw_region(b, region: bytes, count: int) -> None:
        b.records_region, b.records_region_raw, b.num_records = None, region, count

    def long(value: int, max_len: int, extra: int) -> bytes:
        """value's varint written `extra` bytes longer than it needs (Kafka reads up to
        max_len bytes)."""
        out = bytearray(encode_varint(value, max_len))
        out[-1] |= 0x80
        return bytes(out) + b"\x80" * (extra - 1) + b"\x00"

    body = b"\x00" + long(3, 10, 9 - len(encode_varint(3, 10))) + long(0, 5, 4) + long(1, 5, 3) + b"k" \
        + long(1, 5, 2) + b"v" + long(0, 5, 4)  # fmt: skip
    padded = encode_varint(len(body), 5) + body
    payload = build_batch([R(None, T, b"k", b"v" * 40, [("h", b"1")]) for _ in range(3)])[61:]
    desc = bytes((0x60 | 0x10 | 0x08 | 0x04, 0x40)) + struct.pack("<q", len(payload))
    frame = (struct.pack("<I", 0x184D2204) + desc + bytes(((C.xxh32(desc) >> 8) & 0xFF,))
             + struct.pack("<I", len(payload) | 0x80000000) + payload + struct.pack("<I", C.xxh32(payload))
             + b"\0\0\0\0" + struct.pack("<I", C.xxh32(payload)))  # fmt: skip
    inner = build_message_set([R(None, T, b"k", b"v")], magic=1) + struct.pack(">qi", 1, (1 << 31) - 8)
    wrapper = KafkaLegacyMessage(offset=1, magic=1, attributes=C.GZIP, timestamp=T, key=None,
                                 inner_raw=C.compress(C.GZIP, inner, 1)).build()  # fmt: skip
    # (Not here: a header key that is not UTF-8: each language decodes it its own way, as
    # valid_text says.)
    junk = b"not a record, never read"
    import zstandard

    def lz4_literals_block(data: bytes, nibble: int) -> bytes:
        """data as one LZ4 block of literals only, its token's match length nibble set
        (liblz4, which lz4-java calls for Kafka, ignores it in a block's last sequence)."""
        n = len(data)
        ext = b"" if n < 15 else b"\xff" * ((n - 15) // 255) + bytes(((n - 15) % 255,))
        return bytes(((min(n, 15) << 4) | nibble,)) + ext + data

    region = build_batch([R(None, T, b"k", b"v" * 40, [("h", b"1")]) for _ in range(3)])[61:]
    block = lz4_literals_block(region, 3)
    lz4_nibble = (struct.pack("<I", 0x184D2204) + bytes((0x60, 0x40, (C.xxh32(bytes((0x60, 0x40))) >> 8) & 0xFF))
                  + struct.pack("<I", len(block)) + block + bytes(4))  # fmt: skip
    skippable = struct.pack("<II", 0x184D2A50, 3) + b"abc"
    zstd_cut = skippable + zstandard.ZstdCompressor(write_checksum=True).compress(region)[:-2]
    return {
        # every varint of a record longer than it needs, within Kafka's 5 and 10 bytes
        "varints-written-long": v2([R(None, T, b"k", b"v")], lambda b: raw_region(b, padded, 1)),
        # an LZ4 frame with a content size, block and content checksums, a raw block
        "lz4-frame-content-size-and-checksums": v2(
            [R(None, T, b"k", b"v")], lambda b: (setattr(b, "attributes", C.LZ4), raw_region(b, frame, 3))),
        # offsets that go back inside a batch: the record classes read them, a consumer skips
        "offsets-going-back": build_batch([R(5, T, b"a", b"1"), R(7, T, b"b", b"2"), R(6, T, b"c", b"3")],
                                          base_offset=5),
        # an inner message declaring more than Kafka 4.4 reads (DataLogInputStream)
        "magic1-inner-size-past-kafkas-limit": wrapper,
        # a batch of no record whose region holds other bytes: Kafka reads no further than
        # the codec's head (DefaultRecordBatch's iterators), so none of these bytes is read;
        # a head its codec's stream refuses is refused (the schema's third process argument)
        "no-record-region-not-read": v2([R(None, T, b"k", b"v")], lambda b: raw_region(b, junk, 0)),
        "no-record-gzip-head-only": v2([R(None, T, b"k", b"v")], lambda b: (
            setattr(b, "attributes", C.GZIP), raw_region(b, C.compress(C.GZIP, b"")[:10] + junk, 0))),
        "no-record-lz4-head-refused": v2([R(None, T, b"k", b"v")], lambda b: (
            setattr(b, "attributes", C.LZ4), raw_region(b, junk, 0))),
        # an LZ4 block whose last sequence's token has a match length nibble: liblz4 reads
        # its literals (lz4-java, Kafka's Lz4BlockInputStream); some Go decoders refuse it
        "lz4-last-token-match-nibble": v2([R(None, T, b"k", b"v")], lambda b: (
            setattr(b, "attributes", C.LZ4), raw_region(b, lz4_nibble, 3))),
        # a skippable zstd frame, then a frame with a content checksum cut inside it: zstd-jni
        # hands every whole block over, and a frame ended since its last read (Kafka's
        # ZstdCompression: the quiet end)
        "zstd-skippable-then-frame-cut-in-its-checksum": v2([R(None, T, b"k", b"v")], lambda b: (
            setattr(b, "attributes", C.ZSTD), raw_region(b, zstd_cut, 3))),
    }  # fmt: skip


# -- the expected values


def _stored() -> dict[type, tuple[str, ...]]:
    """Each generated class's stored fields (parameters, then seq fields), from the IR."""
    from .generator.ir import SchemaSet
    from .generator.render import SCHEMA_DIR

    out: dict[type, tuple[str, ...]] = {}
    for m in SchemaSet(SCHEMA_DIR).modules():
        module = importlib.import_module(f"kafkacodec.generated.{m.id}")
        for t in m.types:
            out[getattr(module, t.class_name)] = (
                *(p.name for p in t.params),
                *(f.name for f in t.fields),
            )
    return out


_STORED: dict[type, tuple[str, ...]] = {}


def tree(obj: Any, verify: bool = True) -> Any:
    """A decoded object as the corpus's TREE: stored fields by name (absent ones left out),
    bytes as {"hex": ...}, compressed regions read (their CRCs checked unless not verify)."""
    if not _STORED:
        _STORED.update(_stored())
    if isinstance(obj, _prim.Generated):
        cls = type(obj)
        out = {}
        for name in _STORED[cls]:
            reader = getattr(cls, "read_" + name, None)
            value = reader(obj, verify=verify) if reader is not None else getattr(obj, name)
            if value is not None:
                out[name] = tree(value, verify)
        return out
    if isinstance(obj, (list, tuple)):
        return [tree(x, verify) for x in obj]
    if isinstance(obj, (bytes, bytearray, memoryview)):
        return {"hex": bytes(obj).hex()}
    if isinstance(obj, bool):
        return obj
    if isinstance(obj, int):
        return int(obj)
    return obj


def _parse(cls, data: bytes, param, verify: bool = True):
    if param is None:
        return cls.parse_all(data, verify=verify)
    obj, end = cls.parse(data, 0, len(data), param, verify=verify)
    if end != len(data):
        raise TruncatedError(f"{len(data) - end} bytes after the struct", end)
    return obj


def _family(err: KafkacodecError) -> str:
    if isinstance(err, ChecksumError):
        return "checksum"
    if isinstance(err, TruncatedError):
        return "truncated"
    return "invalid"


def _rule(err: KafkacodecError) -> str:
    """Which rule the failure breaks: "crc", "length" (a length that counts the rest of a
    structure disagrees with its fields: a Kaitai schema cannot say that, so parsers
    generated from one read on) or "schema" (a check every parser of the schemas makes)."""
    if isinstance(err, ChecksumError):
        return "crc"
    if isinstance(err, LengthMismatchError):
        return "length"
    return "schema"


def expectation(cls, data: bytes, param=None) -> dict:
    """What a reader must make of data: {"ok": TREE}, or {"error": {...}} (with, for a CRC
    mismatch, what a reader that cannot check CRCs reads and where the mismatches are)."""
    try:
        return {"ok": tree(_parse(cls, data, param))}
    except KafkacodecError as err:
        out: dict[str, Any] = {"error": _failure(err)}
        if isinstance(err, ChecksumError):
            try:
                out["ok_without_crc"] = tree(_parse(cls, data, param, verify=False), verify=False)
                out["crc_mismatch_at"] = _crc_mismatches(data)
            except KafkacodecError as again:
                out["error_without_crc"] = _failure(again)
        return out


#: The schemas of record sets, whose images Kafka's record classes read (MemoryRecords).
RECORD_SETS = ("kafka_log", "kafka_record_batch", "kafka_legacy_message")


def kafka_refusal(schema: str, data: bytes) -> str | None:
    """Why Kafka's record classes refuse a record-set image the schema reads (kafkacodec's
    reading of its batches and records, which Kafka's classes judge in the tests), else
    None; None for every other schema."""
    if schema not in RECORD_SETS:
        return None
    from .records.batches import iter_batches

    try:
        for b in iter_batches(data):
            b.records()
    except KafkacodecError as err:
        return str(err)
    return None


def _failure(err: KafkacodecError) -> dict:
    return {"check": type(err).__name__, "family": _family(err), "rule": _rule(err),
            "position": getattr(err, "position", None), "message": str(err)}  # fmt: skip


def _crc_mismatches(data: bytes) -> list[int]:
    """The positions of the log entries whose CRC does not match."""
    from .generated.kafka_log import KafkaLog
    from .runtime.crc import crc32, crc32c

    out, at = [], 0
    for e in KafkaLog.parse_all(data, verify=False).entries:
        if e.body is None:
            break
        b = e.body
        covered = data[at + b.crc_from : at + b.crc_to]
        if (crc32c(covered) if b.magic == 2 else crc32(covered)) != b.crc:
            out.append(at)
        at = b.crc_end
    return out


# -- damage


def damaged(data: bytes) -> dict[str, bytes]:
    """Deterministic damage to a log image: name -> bytes."""
    from .generated.kafka_log import KafkaLog

    out: dict[str, bytes] = {}
    log = KafkaLog.parse_all(data, verify=False)
    at = 0
    for i, e in enumerate(log.entries[:3]):
        if e.body is None:
            break
        b = e.body
        # A bit the CRC covers and no reader interprets further (bit 6 of the attributes:
        # delete horizon in a v2 batch, unused in a legacy message): only the CRC can tell.
        # (Damage inside a compressed region is not made: what a decompressor makes of
        # corrupt input differs between libraries, and no CRC-less reader can agree.)
        bit = at + b.crc_from + 1
        flip = bytearray(data)
        flip[bit] ^= 0x40
        out[f"entry{i}-crc-covered-bit-at-{bit}"] = bytes(flip)
        for name, value in (("short", 5), ("past-the-end", len(data))):
            bad = bytearray(data)
            bad[at + 8 : at + 12] = value.to_bytes(4, "big")
            out[f"entry{i}-length-{name}"] = bytes(bad)
        magic = bytearray(data)
        magic[at + 16] = 3
        out[f"entry{i}-magic-3"] = bytes(magic)
        at = b.crc_end
    for cut in sorted({1, 11, 12, 16, 17, 40, len(data) // 2, len(data) - 1}):
        if 0 < cut < len(data):
            out[f"cut-at-{cut}"] = data[:cut]
    # bytes after the last entry that are no entry (a segment's preallocated or torn tail):
    # 20 of them hold a whole header whose size field Kafka's walk refuses
    # (ByteBufferLogInputStream: a size below the record overhead is corrupt)
    out["twenty-junk-bytes-after"] = data + b"\x00" * 4 + b"junk" * 4
    return out


# -- drawing objects with the generated strategies


@contextlib.contextmanager
def _without_local_constants():
    """Hypothesis (6.13x on) mixes literals of the *local* modules loaded at the time, an
    editable install's sources among them, into what it draws (providers._get_local_constants).
    A corpus would then depend on which parts of kafkacodec were imported first and on any
    edit of a literal anywhere in them: the same seed gave 741, 745, 755 or 768 cases. While
    the corpus draws, that pool is empty, so that a seed and a Hypothesis version write one
    corpus. (A private function of Hypothesis: where it is gone, nothing is patched.)"""
    try:
        from hypothesis.internal.conjecture import providers
    except ImportError:  # pragma: no cover
        yield
        return
    real = getattr(providers, "_get_local_constants", None)
    empty = getattr(providers, "Constants", None)
    if real is None or empty is None:  # pragma: no cover - a Hypothesis without the pool
        yield
        return
    providers._get_local_constants = lambda: empty()
    providers.CONSTANTS_CACHE.cache.clear()
    try:
        yield
    finally:
        providers._get_local_constants = real
        providers.CONSTANTS_CACHE.cache.clear()


def draw_examples(strategy, count: int, seed: int) -> list:
    """count objects of a Hypothesis strategy, the same ones for the same seed (the corpus's
    drawn cases; peers.mutate's seeds)."""
    from hypothesis import HealthCheck, Phase, given, settings
    from hypothesis import seed as fixed_seed

    got: list = []
    if count <= 0:
        return got

    @fixed_seed(seed)
    @settings(max_examples=count, phases=[Phase.generate], database=None, deadline=None,
              suppress_health_check=list(HealthCheck))  # fmt: skip
    @given(strategy)
    def collect(obj):
        if len(got) < count:
            got.append(obj)

    with _without_local_constants():
        collect()
    return got


def _drawn_cases(count: int, internal_count: int, seed: int):
    """(schema id, class, param, about, bytes) of objects drawn for every schema."""
    from .generator.ir import SchemaSet
    from .generator.render import SCHEMA_DIR
    from .internal.codecs import in_versions

    for m in SchemaSet(SCHEMA_DIR).modules():
        top = m.types[0]
        if len(top.params) > 1:
            continue  # the KRaft control framing (control type and version): drawn inside others
        module = importlib.import_module(f"kafkacodec.generated.{m.id}")
        strategies = importlib.import_module(f"kafkacodec.generated.strategies.{m.id}")
        cls = getattr(module, top.class_name)
        message = getattr(cls, "MESSAGE", None) or {}
        if top.params:
            valid = message.get("validVersions")
            if not valid:
                continue  # a framing type with a record type or control type: drawn inside others
            lo, _, hi = valid.partition("-")
            versions = [v for v in range(int(lo), int(hi or lo) + 1) if in_versions(valid, v)]
            for v in versions:
                for i, obj in enumerate(
                    draw_examples(getattr(strategies, m.id)(v), internal_count, seed + v)
                ):
                    yield m.id, cls, v, f"drawn {i} of {m.id} version {v}", obj.build()
        else:
            for i, obj in enumerate(draw_examples(getattr(strategies, m.id)(), count, seed)):
                yield m.id, cls, None, f"drawn {i} of {m.id}", obj.build()


def write_corpus(out: Path | str, *, count: int = 12, internal_count: int = 3, seed: int = 0,
                 internal: bool = True) -> dict:  # fmt: skip
    """Write the corpus to out (a new or empty directory); return the manifest."""
    import hypothesis

    from . import __version__
    from .generated.kafka_log import KafkaLog

    out = Path(out)
    if out.exists() and any(out.iterdir()):
        raise FileExistsError(f"{out} is not empty")
    out.mkdir(parents=True, exist_ok=True)
    cases: list[dict] = []

    def add(kind: str, schema: str, cls, param, name: str, about: str, data: bytes) -> None:
        rel = Path(kind) / schema / f"{name}.bin"
        (out / rel).parent.mkdir(parents=True, exist_ok=True)
        (out / rel).write_bytes(data)
        cases.append({"file": str(rel), "schema": schema, "class": cls.__name__, "param": param,
                      "kind": kind, "about": about, "expect": expectation(cls, data, param)})  # fmt: skip

    def valid_text(expect: dict) -> bool:
        # A drawn string that is not UTF-8 (kept by kafkacodec as surrogate escapes): Kafka
        # never writes one, and each language decodes it its own way. Left out.
        return not _SURROGATE.search(json.dumps(expect))

    logs: dict[str, bytes] = {}
    for name, data in edge_cases().items():
        # one Kafka refuses (a family the fuzz run brought: _fuzz_families) is a refused case
        kind = "valid" if kafka_refusal("kafka_log", data) is None else "refused"
        add(kind, "kafka_log", KafkaLog, None, f"edge-{name}", f"edge case: {name}", data)
        if kind == "valid":
            logs[f"edge-{name}"] = data
    for n, (schema, cls, param, about, data) in enumerate(
        _drawn_cases(count, internal_count if internal else 0, seed)
    ):
        expect = expectation(cls, data, param)
        if not internal and param is not None or not valid_text(expect):
            continue
        # labelled by what Kafka does with it (kafkacodec's reading of records, judged by
        # Kafka's classes): a drawn object the schema reads but Kafka refuses when its
        # records are read (an unknown codec id, a compressed magic 0 wrapper with a null
        # value, a wrapper inside a wrapper) is no valid case
        refusal = None if "ok" not in expect else kafka_refusal(schema, data)
        kind = "valid" if "ok" in expect and refusal is None else "refused"
        add(kind, schema, cls, param, f"drawn-{n:05d}", about, data)
        if refusal is not None:
            cases[-1]["kafka_refuses"] = refusal
        if schema == "kafka_log" and data:
            logs[f"drawn-{n:05d}"] = data
    for name, data in logs.items():
        if len(data) > DAMAGE_MAX:
            continue  # the large edge cases: their smaller siblings are damaged instead
        try:
            variants = damaged(data)
        except KafkacodecError:
            continue
        for how, bad in variants.items():
            add(
                "damaged",
                "kafka_log",
                KafkaLog,
                None,
                f"{name}-{how}",
                f"{name} damaged: {how}",
                bad,
            )
    manifest = {
        "format": FORMAT, "kafkacodec": __version__, "hypothesis": hypothesis.__version__,
        "seed": seed, "count": count, "internal_count": internal_count if internal else 0,
        "cases": cases,
    }  # fmt: skip
    (out / "MANIFEST.json").write_text(json.dumps(manifest, indent=1) + "\n")
    return manifest

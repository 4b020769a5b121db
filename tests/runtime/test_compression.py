"""The codecs write Kafka's bytes: every compressed payload Apache Kafka 3.8 wrote (the
shared images and the segment) is reproduced byte for byte from its decompressed content,
and the framing of each codec is checked against its specification."""

import gzip
import os
import struct
import zlib

import lz4.frame
import pytest
import zstandard
from conftest import KAFKA_JAVA

import kafkacodec as kc
from kafkacodec.runtime import compression as C
from kafkacodec.runtime.errors import EncodeError


def kafka_payloads():
    """(name, codec, magic, compressed payload) of every compressed batch Kafka wrote."""
    files = sorted([*KAFKA_JAVA.glob("legacy/*.bin"), *KAFKA_JAVA.glob("v2/*.bin"),
                    *KAFKA_JAVA.glob("multi/*.bin"), *KAFKA_JAVA.glob("segments/*/*.log")])  # fmt: skip
    out = []
    for f in files:
        for b in kc.iter_batches(f.read_bytes()):
            if b.compression != C.NONE:
                raw = bytes(b.records_region_raw if b.magic == 2 else b.inner_raw)
                out.append((f"{f.name}@{b.position}", b.compression, b.magic, raw))
    return out


PAYLOADS = kafka_payloads()


def test_every_codec_and_magic_is_covered():
    seen = {(codec, magic) for _, codec, magic, _ in PAYLOADS}
    assert seen >= {(c, m) for c in (C.GZIP, C.SNAPPY, C.LZ4) for m in (0, 1, 2)} | {(C.ZSTD, 2)}
    assert len(PAYLOADS) >= 100  # the segment's batches are most of them


@pytest.mark.parametrize("codec", [C.GZIP, C.SNAPPY, C.LZ4, C.ZSTD], ids=C.codec_name)
def test_kafka_payloads_reproduced_byte_for_byte(codec):
    cases = [(n, m, raw) for n, c, m, raw in PAYLOADS if c == codec]
    differ = [n for n, magic, raw in cases
              if C.compress(codec, C.decompress(codec, raw, magic), magic) != raw]  # fmt: skip
    assert cases and not differ


def test_the_system_snappy_library_is_used():
    # the Makefile installs Debian's libsnappy; without it snappy output is valid, not Kafka's
    assert C.SNAPPY_LIBRARY == "libsnappy" and C.snappy_is_kafkas()


DATA = b"".join(b"record %d with a value that repeats %d\n" % (i, i % 7) for i in range(20000))


def test_gzip_is_the_jdks_stream():
    out = C.compress(C.GZIP, DATA)
    assert out[:10] == bytes.fromhex("1f8b08000000000000ff")  # no flags, mtime 0, XFL 0, OS 255
    assert C.gzip_os_of(out) == C.GZIP_OS_JDK17
    assert struct.unpack("<II", out[-8:]) == (zlib.crc32(DATA), len(DATA))
    assert gzip.decompress(out) == DATA
    old = C.compress(C.GZIP, DATA, gzip_os=C.GZIP_OS_JDK8)
    assert old[9] == 0 and old[10:] == out[10:] and C.gzip_os_of(old) == C.GZIP_OS_JDK8
    # the body is raw deflate at zlib's level 6 (Deflater.DEFAULT_COMPRESSION)
    d = zlib.compressobj(6, zlib.DEFLATED, -15)
    assert out[10:-8] == d.compress(DATA) + d.flush()
    assert C.gzip_os_of(gzip.compress(DATA)) is None  # Python's own header is not the JDK's


def lz4_blocks(frame: bytes):
    """(size field, block) of each block of a frame whose descriptor is Kafka's."""
    pos, out = 7, []
    while True:
        (n,) = struct.unpack_from("<I", frame, pos)
        pos += 4
        if n == 0:
            assert pos == len(frame)
            return out
        size = n & 0x7FFFFFFF
        out.append((n, frame[pos : pos + size]))
        pos += size


@pytest.mark.parametrize("magic", [0, 1, 2])
def test_lz4_is_kafkas_frame(magic):
    out = C.compress(C.LZ4, DATA, magic)
    assert out[:6] == bytes.fromhex("04224d186040")
    covered = out[:6] if magic == 0 else out[4:6]  # KAFKA-3160: magic 0 checksums the magic
    assert out[6] == (C.xxh32(covered) >> 8) & 0xFF
    blocks = lz4_blocks(out)
    assert len(blocks) == -(-len(DATA) // 65536) and all(n < 65536 for n, _ in blocks)
    if magic != 0:  # the reference decoder checks the descriptor's checksum
        assert lz4.frame.decompress(out) == DATA
    assert C.decompress(C.LZ4, out, magic) == DATA


def test_lz4_stores_incompressible_blocks_raw():
    noise = os.urandom(150_000)
    blocks = lz4_blocks(C.compress(C.LZ4, noise))
    assert [n for n, _ in blocks] == [65536 | 1 << 31, 65536 | 1 << 31, (150_000 - 131072) | 1 << 31]
    assert b"".join(b for _, b in blocks) == noise
    assert C.compress(C.LZ4, b"") == bytes.fromhex("04224d186040") + bytes([
        (C.xxh32(b"\x60\x40") >> 8) & 0xFF]) + b"\0\0\0\0"  # fmt: skip


def test_lz4_levels_other_than_the_default_use_hc():
    fast = C.compress(C.LZ4, DATA)
    assert C.compress(C.LZ4, DATA, level=9) == fast
    hc = C.compress(C.LZ4, DATA, level=12)
    assert hc != fast and len(hc) < len(fast)
    assert C.decompress(C.LZ4, hc) == DATA


def test_zstd_is_zstd_jnis_stream():
    out = C.compress(C.ZSTD, DATA)
    params = zstandard.get_frame_parameters(out)
    assert params.content_size == zstandard.CONTENTSIZE_UNKNOWN and not params.has_checksum
    assert out.endswith(b"\x01\x00\x00")  # the empty last block of the frame's end
    assert zstandard.ZstdDecompressor().decompressobj().decompress(out) == DATA
    assert C.compress(C.ZSTD, DATA, level=3) == out != C.compress(C.ZSTD, DATA, level=19)


@pytest.mark.parametrize("codec", [C.GZIP, C.SNAPPY, C.LZ4, C.ZSTD], ids=C.codec_name)
def test_every_level_round_trips(codec):
    levels = C.LEVELS.get(codec)
    for level in [None] if levels is None else [None, levels.low if codec != C.ZSTD else -5,
                                                 levels.default, levels.high]:  # fmt: skip
        assert C.decompress(codec, C.compress(codec, DATA, level=level)) == DATA
        assert C.decompress(codec, C.compress(codec, b"", level=level)) == b""


def test_levels_outside_kafkas_range_are_refused():
    with pytest.raises(EncodeError, match="gzip level 10 is outside Kafka's range 1..9"):
        C.compress(C.GZIP, DATA, level=10)
    with pytest.raises(EncodeError, match="lz4 level 0"):
        C.compress(C.LZ4, DATA, level=0)
    with pytest.raises(EncodeError, match="zstd level 23"):
        C.compress(C.ZSTD, DATA, level=23)
    with pytest.raises(EncodeError, match="snappy has no compression level"):
        C.compress(C.SNAPPY, DATA, level=1)


def test_snappy_blocks_are_32k_slices():
    out = C.compress(C.SNAPPY, DATA)
    assert out[:16] == b"\x82SNAPPY\x00" + struct.pack(">ii", 1, 1)
    pos, sizes = 16, []
    while pos < len(out):
        (n,) = struct.unpack_from(">i", out, pos)
        sizes.append(C._snappy_raw_length(out[pos + 4 : pos + 4 + n]))
        pos += 4 + n
    assert sizes == [32768] * (len(DATA) // 32768) + [len(DATA) % 32768]


@pytest.mark.parametrize("codec", [C.GZIP, C.LZ4, C.ZSTD], ids=C.codec_name)
def test_builders_compress_at_the_level_given(codec):
    records = [(None, 1000 + i, b"k%d" % i, b"value %d " % i * 20, []) for i in range(300)]
    level = C.LEVELS[codec].high
    plain = kc.build_batch(records)
    (region,) = [bytes(b.records_region_raw) for b in kc.iter_batches(plain)]
    (b,) = kc.iter_batches(kc.build_batch(records, compression=codec, compression_level=level))
    assert bytes(b.records_region_raw) == C.compress(codec, region, 2, level)
    assert b.records() == next(iter(kc.iter_batches(plain))).records()
    if codec != C.ZSTD:
        (w,) = kc.iter_batches(kc.build_message_set(records, magic=1, compression=codec,
                                                    compression_level=level))  # fmt: skip
        inner = C.decompress(codec, bytes(w.inner_raw), 1)
        assert bytes(w.inner_raw) == C.compress(codec, inner, 1, level)
        assert [r.value for r in w.records()] == [r[3] for r in records]
    with pytest.raises(EncodeError, match="outside Kafka's range"):
        kc.build_batch(records, compression=codec, compression_level=level + 1)

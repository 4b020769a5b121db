"""Compressed streams at the edges of Kafka's rules, for every language's kafka_compression:
LZ4 frames (Lz4BlockInputStream) and gzip, snappy and zstd streams with bytes after them
(GZIPInputStream, SnappyInputStream, zstd-jni, each through Kafka's ChunkedBytesStream), with
what Kafka's reading gives. kafkacodec's runtime (kafkacodec.runtime.compression) computes
that answer; tests/kafka/test_kafka_stream_ends.py holds it to Kafka's own
Compression.wrapForInput, and tests/crosslang to every other language."""

from __future__ import annotations


def lz4_frames() -> list[tuple[str, int, bytes, bytes | None]]:
    """LZ4 frames at the edges of Kafka's rules (Lz4BlockInputStream, Lz4BlockOutputStream's
    FLG and BD), as (name, magic, frame, what Kafka's reading gives: the bytes, or None where
    it refuses): kafkacodec's runtime (kafkacodec.runtime.compression, judged by Kafka's own
    classes) says which. Every language's kafka_compression must give the same."""
    from kafkacodec.runtime import compression as C

    payload = b"kafkacodec " * 300
    good = C.compress(3, payload, magic=2)
    head_end = 7  # magic, FLG, BD, HC (Kafka writes no content size)

    def with_descriptor(flg: int, bd: int, frame: bytes = good, fix: bool = True) -> bytes:
        head = bytearray(frame[:head_end])
        head[4], head[5] = flg, bd
        if fix:
            head[6] = (C.xxh32(bytes(head[4:6])) >> 8) & 0xFF
        return bytes(head) + frame[head_end:]

    flg, bd = good[4], good[5]
    end = good.rindex(b"\0\0\0\0")
    cases = [
        ("kafkas", 2, good),
        ("dict-id-bit", 2, with_descriptor(flg | 0x01, bd)),
        ("reserved-bit", 2, with_descriptor(flg | 0x02, bd)),
        ("dependent-blocks", 2, with_descriptor(flg & ~0x20, bd)),
        ("version-2", 2, with_descriptor((flg & 0x3F) | 0x80, bd)),
        ("bd-reserved", 2, with_descriptor(flg, bd | 0x01)),
        ("block-size-3", 2, with_descriptor(flg, (bd & 0x8F) | 0x30)),
        ("bad-header-checksum", 2, with_descriptor(flg, bd, fix=False)[:6] + bytes([good[6] ^ 0xFF]) + good[7:]),
        ("bad-header-checksum-magic-0", 0, good[:6] + bytes([good[6] ^ 0xFF]) + good[7:]),
        ("content-checksum-flag", 2, with_descriptor(flg | 0x04, bd)),
        ("junk-after-end-mark", 2, good + b"junk after the frame"),
        ("second-frame", 2, good + C.compress(3, b"more", magic=2)),
        ("raw-end-mark", 2, good[:end] + b"\0\0\0\x80"),
        ("empty-raw-block", 2, good[:end] + b"\0\0\0\x80" + b"\x05\0\0\x80hello" + b"\0\0\0\0"),
        ("cut-in-header", 2, good[:5]),
        ("cut-before-end-mark", 2, good[:end]),
    ]
    out = []
    for name, magic, frame in cases:
        try:
            want = C.decompress(3, frame, magic=magic)
        except Exception:  # noqa: BLE001 (refused, whatever the reason)
            want = None
        out.append((name, magic, frame, want))
    assert sum(w is None for *_x, w in out) >= 8 and out[0][3] == payload
    return out


def stream_ends() -> list[tuple[str, int, int, bytes, bytes | None]]:
    """gzip, snappy and zstd streams with bytes after them, as (name, codec, magic, data,
    what Kafka's reading gives: the bytes, or None where it refuses). kafkacodec's runtime
    says which (kafkacodec.runtime.compression: _gunzip is GZIPInputStream with the 8 KiB
    buffer Kafka's GzipCompression gives it, _unsnappy snappy-java's SnappyInputStream,
    _unzstd zstd-jni through Kafka's ChunkedBytesStream; tests/kafka judges them with
    Kafka's classes on mutated batches). Every language's kafka_compression must give the
    same."""
    import random

    from kafkacodec.runtime import compression as C

    rng = random.Random(54)
    small, other = b"kafkacodec " * 40, b"another member"
    noise = bytes(rng.getrandbits(8) for _ in range(20000))  # incompressible: 8 KiB fills
    cases: list[tuple[str, int, bytes]] = []
    gz, gz2, big = C.compress(1, small), C.compress(1, other), C.compress(1, noise)
    header = gz[:10]
    for n in (1, 2, 4, 8, 17, 18, 19, 26, 27, 40):
        cases.append((f"gzip-junk-{n}", 1, gz + bytes([0x42]) * n))
    cases += [
        ("gzip-twice", 1, gz + gz2),
        ("gzip-magic-only-after", 1, gz + b"\x1f\x8b"),
        ("gzip-header-and-5-junk", 1, gz + header + b"junk!"),  # 23 bytes read ahead: not looked at
        ("gzip-header-and-20-junk", 1, gz + header + bytes(range(1, 21))),
        ("gzip-bad-header-crc-after", 1, gz + header[:3] + b"\x02" + header[4:] + b"\0\0" + gz2[10:]),
        ("gzip-big-then-header-and-5-junk", 1, big + header + b"junk!"),
        ("gzip-big-then-20-junk", 1, big + bytes(range(1, 21))),
        ("gzip-big-twice", 1, big + gz2),
        ("gzip-cut-in-trailer", 1, gz[:-3]),
    ]
    sn = C.compress(2, small, magic=1)  # xerial framing (snappy-java's stream)
    sn2 = C.compress(2, other, magic=1)
    raw = sn[20:]  # the stream's one chunk: a raw block
    bad = b"\x82SNA" + b"NOTSNAPPY!!!"
    s2048, s2047 = C.compress(2, b"x" * 2048, magic=1), C.compress(2, b"x" * 2047, magic=1)
    s4096 = C.compress(2, noise[:4096], magic=1)
    assert len(sn) == 20 + len(raw), "one chunk"
    cases += [
        ("snappy-twice", 2, sn + sn2),
        ("snappy-junk-1", 2, sn + b"\x01"),
        ("snappy-junk-3", 2, sn + b"\x01\x02\x03"),
        ("snappy-junk-4", 2, sn + b"\x00\x00\x00\x09"),
        ("snappy-magic-head-then-junk", 2, sn + b"\x82SNA" + b"junk" * 4),
        ("snappy-magic-head-cut", 2, sn + b"\x82SNAPP"),
        ("snappy-second-header-version-0", 2, sn + sn2[:8] + b"\0\0\0\0" + sn2[12:]),
        ("snappy-negative-chunk", 2, sn + b"\xff\xff\xff\xff" + raw),
        ("snappy-raw-block", 2, raw),
        ("snappy-raw-block-and-junk", 2, raw + b"\0\0"),
        ("snappy-short-magic-is-raw", 2, sn[:12]),
        ("snappy-empty", 2, b""),
        # a length that is the magic's first bytes, the rest not the magic: snappy-java skips
        # those 16 bytes, and its read returns what it gave (the next read goes on after
        # them), or -1 when it gave nothing yet (ChunkedBytesStream's 2 KiB reads: the end)
        ("snappy-bad-header-then-chunk", 2, sn + bad + sn2[16:]),
        ("snappy-bad-header-twice-then-chunk", 2, sn + bad + bad + sn2[16:]),
        ("snappy-bad-header-at-2048", 2, s2048 + bad + sn2[16:]),
        ("snappy-bad-header-at-4096", 2, s4096 + bad + sn2[16:]),
        ("snappy-bad-header-at-2047", 2, s2047 + bad + sn2[16:]),
    ]
    zs, zs2 = C.compress(4, small), C.compress(4, other)
    zbig, zbig2 = (C.compress(4, bytes(rng.getrandbits(8) for _ in range(100000))) for _ in range(2))
    assert 90000 < len(zbig) < 131075 < len(zbig) + len(zbig2), len(zbig)
    skippable = (0x184D2A50).to_bytes(4, "little") + (3).to_bytes(4, "little") + b"abc"
    empty = C.compress(4, b"")
    # frames with a content checksum (Kafka writes none; other producers may), cut inside it:
    # zstd-jni hands over every block's content before it looks for the checksum
    import zstandard

    summed = zstandard.ZstdCompressor(write_checksum=True)
    zsum = summed.compress(small)
    zsum3 = summed.compressobj()
    zsum3 = zsum3.compress(b"three blocks " * 30000) + zsum3.flush()
    assert zsum[4] & 4 and zsum3[4] & 4
    raw_payload = bytes(range(200))  # a frame of one raw block (no content size, no checksum)
    raw_frame = (0xFD2FB528).to_bytes(4, "little") + bytes((0x00, 0x50)) \
        + ((len(raw_payload) << 3) | 1).to_bytes(3, "little") + raw_payload  # fmt: skip
    cases += [
        ("zstd-summed-cut-in-checksum-alone", 4, zsum[:-2]),
        ("zstd-skippable-then-summed-cut-in-checksum", 4, skippable + zsum[:-1]),
        ("zstd-skippable-then-summed-blocks-cut-in-checksum", 4, skippable + zsum3[:-3]),
        ("zstd-skippable-then-summed-cut-in-a-block", 4, skippable + zsum3[: len(zsum3) // 2]),
        # a raw block cut short: zstd-jni's stream (libzstd) hands over the bytes it has
        ("zstd-skippable-then-raw-block-cut", 4, skippable + raw_frame[:-40]),
        ("zstd-raw-block-cut-alone", 4, raw_frame[:-40]),
    ]
    cases += [
        ("zstd-twice", 4, zs + zs2),
        ("zstd-junk", 4, zs + b"junk"),
        ("zstd-skippable-then-frame", 4, zs + skippable + zs2),
        ("zstd-empty-frame-then-frame", 4, zs + empty + zs2),
        ("zstd-magic-part-after", 4, zs + zs2[:2]),
        ("zstd-magic-only-after", 4, zs + zs2[:4]),
        ("zstd-cut-frame-after", 4, zs + zs2[:-3]),
        ("zstd-cut", 4, zs[:-3]),
        ("zstd-skippable-first", 4, skippable + zs),
        ("zstd-frame-then-skippable", 4, zs + skippable),
        ("zstd-empty-then-cut", 4, empty + zs2[:-3]),
        ("zstd-frame-then-cut-in-first-block", 4, zs + zs2[:8]),
        ("zstd-skippable-then-cut", 4, zs + skippable + zs2[:-3]),
        ("zstd-skippable-then-cut-alone", 4, skippable + zs2[:-3]),
        ("zstd-empty-then-magic-part", 4, empty + zs2[:2]),
        ("zstd-magic-part-only", 4, zs2[:2]),
        ("zstd-empty-only", 4, empty),
        ("zstd-skippable-only", 4, skippable),
        ("zstd-cut-in-header", 4, zs[:6]),
        # zstd-jni reads its input 131075 bytes at a time: a frame cut short after a frame
        # that ended since its last read is the quiet end, else "Truncated source"
        ("zstd-big-then-small-cut", 4, zbig + zs2[:-3]),
        ("zstd-big-then-big-cut", 4, zbig + zbig2[:-3]),
    ]
    out = []
    for name, codec, data in cases:
        magic = 1 if codec == 2 else 2
        try:
            want = C.decompress(codec, data, magic=magic)
        except Exception:  # noqa: BLE001 (refused, whatever the reason)
            want = None
        out.append((name, codec, magic, data, want))
    refused = {n for n, *_x, w in out if w is None}
    assert {"gzip-header-and-20-junk", "snappy-negative-chunk", "zstd-junk"} <= refused, refused
    assert not {"gzip-junk-1", "gzip-header-and-5-junk", "snappy-junk-3", "zstd-magic-part-after"} & refused
    return out


def lz4_blocks() -> list[tuple[str, int, bytes, bytes | None]]:
    """LZ4 blocks at the edges of what LZ4_decompress_safe takes (the decompressor lz4-java
    calls for Kafka's Lz4BlockInputStream, with the frame's block size as the output's
    bound), each in one of Kafka's frames, as (name, magic, frame, want): a last sequence
    whose match length nibble is not 0, literals that end within 8 bytes of the block's end
    without ending it, a block that ends with a match, a match of offset 0, one reaching
    before the output's start, a match that ends within 5 bytes of the bound; and seeded
    mutations of real blocks (a byte changed, cut, or an extension byte added), which find
    the rules a hand-made case misses. kafkacodec's runtime (python-lz4: liblz4) answers;
    tests/kafka/test_kafka_stream_ends.py holds it to Kafka's classes."""
    import random
    import struct

    import lz4.block

    from kafkacodec.runtime import compression as C

    def frame(block: bytes) -> bytes:
        desc = bytes((0x60, 0x40))
        return (struct.pack("<I", 0x184D2204) + desc + bytes(((C.xxh32(desc) >> 8) & 0xFF,))
                + struct.pack("<I", len(block)) + block + bytes(4))  # fmt: skip

    def ext(n: int) -> bytes:  # a length's extension bytes for n past 15
        return b"\xff" * (n // 255) + bytes((n % 255,))

    bound = 64 * 1024  # BD 0x40: Kafka's 64 KiB blocks
    long_match = bound - 4 - 1  # 'a', then a match to 5 bytes before the bound
    cases = [
        ("lz4-last-token-match-nibble", b"\x53hello"),
        ("lz4-literals-end-near-the-end", b"\x10a\x01\x00\x10b"),
        ("lz4-ends-with-a-match", b"\xf0\x05" + b"x" * 20 + b"\x01\x00"),
        ("lz4-offset-zero", b"\x10a\x00\x00\x80abcdefgh"),
        ("lz4-offset-before-the-start", b"\x10a\x02\x00\x80abcdefgh"),
        ("lz4-match-to-the-last-5", b"\x1fa\x01\x00" + ext(long_match - 1 - 19) + b"\x50abcde"),
        ("lz4-match-into-the-last-5", b"\x1fa\x01\x00" + ext(long_match - 19) + b"\x40abcd"),
        ("lz4-literals-past-the-bound", b"\xf0" + ext(bound + 1 - 15) + b"y" * (bound + 1)),
    ]
    rng = random.Random(57)
    texts = [b"kafkacodec " * 40, bytes(rng.getrandbits(8) for _ in range(300)) * 3,
             b"".join(b"key%d value%d " % (i, i * i) for i in range(80))]  # fmt: skip
    for i in range(240):
        block = bytearray(lz4.block.compress(texts[i % 3], store_size=False))
        at = rng.randrange(len(block))
        kind = i % 4
        if kind == 0:
            block[at] = rng.getrandbits(8)
        elif kind == 1:
            block[at] ^= 0x0F  # a token's match length nibble, or any byte's low bits
        elif kind == 2:
            del block[at:]
        else:
            block[at:at] = b"\xff"
        cases.append((f"lz4-block-mutation-{i}", bytes(block) or b"\x00"))
    out = []
    for name, block in cases:
        data = frame(block)
        try:
            want = C.decompress(3, data, magic=2)
        except Exception:  # noqa: BLE001 (refused, whatever the reason)
            want = None
        out.append((name, 2, data, want))
    answers = {n: w for n, _m, _d, w in out}
    assert answers["lz4-last-token-match-nibble"] == b"hello"
    assert answers["lz4-offset-zero"] == b"a" + bytes(4) + b"abcdefgh"
    assert answers["lz4-match-to-the-last-5"] is not None and answers["lz4-match-into-the-last-5"] is None
    refused = sum(w is None for w in answers.values())
    assert 40 < refused < len(out) - 40, refused
    return out


def codec_edges() -> list[tuple[str, int, int, bytes, bytes | None]]:
    """lz4_frames, lz4_blocks and stream_ends, as (name, codec, magic, data, want)."""
    return [(n, 3, m, f, w) for n, m, f, w in lz4_frames() + lz4_blocks()] + stream_ends()


def codec_input(cases) -> str:
    """The edge cases as a driver's input: one `codec magic hex` line each (`-` for none)."""
    return "".join(f"{c} {m} {d.hex() or '-'}\n" for _n, c, m, d, _w in cases)


def check_codec_edges(got: list[str]) -> None:
    """A language's answers to codec_edges (`=` and the decoded bytes in hex, or
    "refused"), in order."""
    cases = codec_edges()
    assert len(got) == len(cases), (len(got), len(cases))
    want = {n: "refused" if w is None else "=" + w.hex() for n, _c, _m, _d, w in cases}
    differ = {n: (g[:40], len(g), want[n][:40], len(want[n])) for (n, *_x), g in zip(cases, got) if g != want[n]}
    assert not differ, differ

"""Kafka's compression codecs, each bounded on inflated size; written byte for byte as Java
Kafka writes them (Kafka 3.8 on JDK 17: org.apache.kafka.common.compress.*Compression).

- gzip: an RFC 1952 stream (several members are read one after the other). Written as the
  JDK's GZIPOutputStream writes it: its own 10-byte header (no flags, mtime 0, XFL 0 at any
  level, OS byte 255 on JDK 16 and later, 0 on JDK 8 and 11), raw deflate from classic
  zlib (window 15, memLevel 8, default strategy; Kafka's default level is zlib's 6), then
  CRC-32 and the length mod 2^32, little-endian.
- snappy: Java Kafka writes snappy-java's stream framing (8-byte magic, version, minimum
  compatible version, then `int32 length` + raw snappy block per 32 KiB of input); readers
  also accept one raw snappy block, which other clients write. The blocks are Google's C++
  snappy 1.1.x's (snappy-java bundles it): taken from the system's libsnappy when it is
  there, else from cramjam, whose blocks are valid but not the same bytes.
- lz4: Kafka's own frame writer (Lz4BlockOutputStream): FLG 0x60 (version 1, independent
  blocks, no checksums, no content size), BD 0x40 (64 KiB blocks), blocks from LZ4's fast
  compressor at Kafka's default level 9 and from its HC compressor at any other, a block
  that does not shrink stored raw (size's top bit set), then an int32 zero. For magic 0
  Java Kafka computes the frame header checksum over the magic number too (KAFKA-3160):
  magic 0 readers ignore that byte and magic 0 writers reproduce the quirk.
- zstd: zstandard frames, magic 2 only, read as a stream (no content size needed);
  written at level 3 with no content size and no checksum, as zstd-jni's stream writes
  it on close (a block flush, then the frame's end: an empty last block).

Decompressed output larger than `max_size` (default DEFAULT_MAX_INFLATED) raises
DecompressionLimitError before more memory is taken.
"""

from __future__ import annotations

import ctypes
import ctypes.util
import struct
import threading
import types
import zlib
from typing import NamedTuple

import cramjam
import lz4.block
import lz4.frame
import zstandard

from .errors import (
    CompressionError,
    DecompressionLimitError,
    EncodeError,
    UnsupportedCodecError,
)

_inflate: types.ModuleType
try:  # gzip is read with Intel ISA-L's inflate (python-isal), written with zlib's deflate
    from isal import isal_zlib as _inflate
except ImportError:  # pragma: no cover - a platform python-isal has no wheel for
    _inflate = zlib
#: The same bytes as zlib's inflate, 1.2x to 2x as fast here (bench.inflate); writing stays zlib's,
#: whose deflate output is Kafka's byte for byte.
INFLATER = "isal" if _inflate is not zlib else "zlib"
_INFLATE_ERRORS = tuple({zlib.error, getattr(_inflate, "error", zlib.error)})

__all__ = [
    "NONE", "GZIP", "SNAPPY", "LZ4", "ZSTD", "CODEC_NAMES", "CODEC_IDS", "codec_name",
    "DEFAULT_MAX_INFLATED", "decompress", "compress", "kafka_compression_decode",
    "kafka_compression_encode", "LEVELS", "Levels", "check_level", "GZIP_OS_JDK17",
    "GZIP_OS_JDK8", "gzip_os_of", "SNAPPY_LIBRARY", "snappy_is_kafkas",
]  # fmt: skip

NONE, GZIP, SNAPPY, LZ4, ZSTD = 0, 1, 2, 3, 4
CODEC_NAMES = {NONE: "none", GZIP: "gzip", SNAPPY: "snappy", LZ4: "lz4", ZSTD: "zstd"}
CODEC_IDS = {name: codec for codec, name in CODEC_NAMES.items()}
#: Default bound on the decompressed size of one batch or wrapper (bytes).
DEFAULT_MAX_INFLATED = 128 * 1024 * 1024

_XERIAL_MAGIC = b"\x82SNAPPY\x00"
_XERIAL_HEADER = struct.Struct(">8sii")
_XERIAL_BLOCK = 32 * 1024  # snappy-java's default block size
_LZ4_MAGIC = b"\x04\x22\x4d\x18"


class Levels(NamedTuple):
    """A codec's compression levels as Kafka's CompressionType defines them (KIP-390)."""

    low: int
    high: int
    default: int


#: Kafka's compression.<codec>.level ranges and defaults (GzipCompression: Deflater's 1..9
#: and DEFAULT_COMPRESSION, which zlib takes as 6; Lz4Compression: 1..17, default 9;
#: ZstdCompression: zstd's minimum level..22, default 3). Snappy has no level.
LEVELS = {GZIP: Levels(1, 9, 6), LZ4: Levels(1, 17, 9), ZSTD: Levels(-131072, 22, 3)}

#: The gzip header's OS byte: the JDK writes 255 (unknown) since JDK 16, 0 before.
GZIP_OS_JDK17, GZIP_OS_JDK8 = 255, 0


def check_level(codec: int, level: int | None) -> int | None:
    """The level to compress at (None: Kafka's default); EncodeError outside Kafka's range."""
    if level is None:
        return None
    levels = LEVELS.get(codec)
    if levels is None:
        raise EncodeError(f"{codec_name(codec)} has no compression level")
    if not levels.low <= level <= levels.high:
        raise EncodeError(f"{codec_name(codec)} level {level} is outside Kafka's range "
                          f"{levels.low}..{levels.high}")  # fmt: skip
    return level


def codec_name(codec: int) -> str:
    """Kafka's name of a codec id ("gzip"), or "unknown(N)" for an id Kafka does not define;
    an enum member of the schemas' compression_type is its id."""
    return CODEC_NAMES.get(int(codec), f"unknown({int(codec)})")


def check_codec(codec: int, magic: int) -> None:
    """Raise UnsupportedCodecError unless codec is defined for this magic."""
    top = ZSTD if magic >= 2 else LZ4
    if not 0 <= codec <= top:
        allowed = ", ".join(f"{c} {CODEC_NAMES[c]}" for c in range(top + 1))
        raise UnsupportedCodecError(
            f"unknown compression codec {codec} for magic {magic} (allowed: {allowed})"
        )


def _limit(max_size: int | None) -> int:
    return DEFAULT_MAX_INFLATED if max_size is None else max_size


def _too_big(codec: int, limit: int) -> DecompressionLimitError:
    return DecompressionLimitError(
        f"{codec_name(codec)} data inflates past the limit of {limit} bytes"
    )


# -- gzip ------------------------------------------------------------------------------


_INFLATE_STEP = 1 << 20  # gzip output is taken a megabyte at a time, the limit checked each


def _gunzip(data, limit: int) -> bytes:
    rest = bytes(data)
    # RFC 1952: the last member ends with its size mod 2^32 (ISIZE). A member is at least
    # that large, so a stream whose ISIZE passes the limit is refused before anything is
    # inflated: a gzip bomb costs no memory. (A member that lies is stopped at the limit.)
    if len(rest) >= 18 and int.from_bytes(rest[-4:], "little") > limit:
        raise DecompressionLimitError(
            f"gzip data declares {int.from_bytes(rest[-4:], 'little')} bytes in its trailer, "
            f"past the limit of {limit} bytes"
        )
    out = bytearray()
    while True:
        d = _inflate.decompressobj(wbits=31)
        tail = rest
        while not d.eof:
            chunk = d.decompress(tail, _INFLATE_STEP)
            out += chunk
            if len(out) > limit:
                raise _too_big(GZIP, limit)
            tail = d.unconsumed_tail
            if not tail and len(chunk) < _INFLATE_STEP:
                break  # the input is used up and nothing more is pending
        if not d.eof:
            raise CompressionError("gzip stream ends before its end marker")
        rest = d.unused_data
        if not rest:
            return bytes(out)


_GZIP_HEADER = b"\x1f\x8b\x08\x00\x00\x00\x00\x00\x00"  # ID1 ID2 CM FLG MTIME XFL; OS follows


def _gzip(data, level: int, os_byte: int) -> bytes:
    """java.util.zip.GZIPOutputStream's bytes (Kafka's GzipCompression): the JDK's header,
    raw deflate, CRC-32 and ISIZE little-endian."""
    c = zlib.compressobj(level, zlib.DEFLATED, -15, 8, zlib.Z_DEFAULT_STRATEGY)
    body = c.compress(data) + c.flush()
    trailer = struct.pack("<II", zlib.crc32(data), len(data) & 0xFFFFFFFF)
    return _GZIP_HEADER + bytes((os_byte,)) + body + trailer


def gzip_os_of(payload) -> int | None:
    """The JDK that wrote a gzip payload, by its header's OS byte (GZIP_OS_JDK17 or
    GZIP_OS_JDK8), or None when the header is not one the JDK writes."""
    head = bytes(payload[:10])
    if len(head) == 10 and head[:9] == _GZIP_HEADER and head[9] in (GZIP_OS_JDK17, GZIP_OS_JDK8):
        return head[9]
    return None


# -- snappy ----------------------------------------------------------------------------


def _snappy_raw_length(block) -> int:
    """The uncompressed length a raw snappy block announces (its uvarint preamble)."""
    n = 0
    for i in range(min(5, len(block))):
        b = block[i]
        n |= (b & 0x7F) << (7 * i)
        if b < 0x80:
            return n
    raise CompressionError("snappy block has no valid length preamble")


def _unsnappy_block(block, limit: int, so_far: int) -> bytes:
    if so_far + _snappy_raw_length(block) > limit:
        raise _too_big(SNAPPY, limit)
    try:
        return bytes(cramjam.snappy.decompress_raw(bytes(block)))
    except Exception as err:  # noqa: BLE001 - cramjam raises its own error types
        raise CompressionError(f"snappy block does not decompress: {err}") from None


def _unsnappy(data, limit: int) -> bytes:
    data = bytes(data)
    if not data.startswith(_XERIAL_MAGIC):
        return _unsnappy_block(data, limit, 0)
    if len(data) < _XERIAL_HEADER.size:
        raise CompressionError("snappy-java stream header is truncated")
    pos = _XERIAL_HEADER.size
    out = bytearray()
    while pos < len(data):
        if len(data) - pos < 4:
            raise CompressionError(f"snappy-java block length truncated at byte {pos}")
        (n,) = struct.unpack_from(">i", data, pos)
        pos += 4
        if n < 0 or n > len(data) - pos:
            raise CompressionError(
                f"snappy-java block at byte {pos - 4} claims {n} bytes, {len(data) - pos} left"
            )
        out += _unsnappy_block(data[pos : pos + n], limit, len(out))
        pos += n
    return bytes(out)


def _load_libsnappy():
    """Google's C++ snappy from the system (Debian's libsnappy1v5), through its C API; None
    when it is not installed."""
    name = ctypes.util.find_library("snappy")
    try:
        lib = ctypes.CDLL(name or "libsnappy.so.1")
    except OSError:
        return None
    lib.snappy_max_compressed_length.restype = ctypes.c_size_t
    lib.snappy_max_compressed_length.argtypes = [ctypes.c_size_t]
    lib.snappy_compress.restype = ctypes.c_int
    lib.snappy_compress.argtypes = [ctypes.c_char_p, ctypes.c_size_t, ctypes.c_char_p,
                                    ctypes.POINTER(ctypes.c_size_t)]  # fmt: skip
    return lib


_LIBSNAPPY = _load_libsnappy()
#: Where snappy blocks come from: "libsnappy" writes Kafka's bytes (snappy-java bundles the
#: same C++ library); "cramjam" (when libsnappy is not installed) writes valid blocks that
#: are not byte for byte Kafka's.
SNAPPY_LIBRARY = "libsnappy" if _LIBSNAPPY is not None else "cramjam"


def snappy_is_kafkas() -> bool:
    """Whether snappy output is byte for byte what snappy-java writes."""
    return _LIBSNAPPY is not None


def _snappy_block(data: bytes) -> bytes:
    if _LIBSNAPPY is None:
        return bytes(cramjam.snappy.compress_raw(data))
    size = ctypes.c_size_t(_LIBSNAPPY.snappy_max_compressed_length(len(data)))
    out = ctypes.create_string_buffer(size.value)
    if _LIBSNAPPY.snappy_compress(data, len(data), out, ctypes.byref(size)) != 0:
        raise EncodeError("libsnappy could not compress a block")  # only for a short buffer
    return out.raw[: size.value]


def _snappy(data) -> bytes:
    """snappy-java's SnappyOutputStream (Kafka's SnappyCompression): its header, then each
    32 KiB of input as an int32 length and a raw block."""
    data = bytes(data)
    out = bytearray(_XERIAL_HEADER.pack(_XERIAL_MAGIC, 1, 1))
    for i in range(0, len(data), _XERIAL_BLOCK):
        block = _snappy_block(data[i : i + _XERIAL_BLOCK])
        out += struct.pack(">i", len(block)) + block
    return bytes(out)


# -- lz4 -------------------------------------------------------------------------------

_P1, _P2, _P3, _P4, _P5 = 2654435761, 2246822519, 3266489917, 668265263, 374761393
_M32 = 0xFFFFFFFF


def _rotl(x: int, r: int) -> int:
    return ((x << r) | (x >> (32 - r))) & _M32


def xxh32(data: bytes, seed: int = 0) -> int:
    """xxHash32, for the few bytes of an LZ4 frame descriptor."""
    n = len(data)
    i = 0
    if n >= 16:
        v = [(seed + _P1 + _P2) & _M32, (seed + _P2) & _M32, seed, (seed - _P1) & _M32]
        while i + 16 <= n:
            for j in range(4):
                (lane,) = struct.unpack_from("<I", data, i + 4 * j)
                v[j] = (_rotl((v[j] + lane * _P2) & _M32, 13) * _P1) & _M32
            i += 16
        h = (_rotl(v[0], 1) + _rotl(v[1], 7) + _rotl(v[2], 12) + _rotl(v[3], 18)) & _M32
    else:
        h = (seed + _P5) & _M32
    h = (h + n) & _M32
    while i + 4 <= n:
        (lane,) = struct.unpack_from("<I", data, i)
        h = (_rotl((h + lane * _P3) & _M32, 17) * _P4) & _M32
        i += 4
    while i < n:
        h = (_rotl((h + data[i] * _P5) & _M32, 11) * _P1) & _M32
        i += 1
    h ^= h >> 15
    h = (h * _P2) & _M32
    h ^= h >> 13
    h = (h * _P3) & _M32
    h ^= h >> 16
    return h


def _lz4_descriptor_end(frame: bytes) -> int:
    """Position of the header checksum byte of an LZ4 frame."""
    if len(frame) < 7 or frame[:4] != _LZ4_MAGIC:
        raise CompressionError("not an LZ4 frame (bad magic number)")
    flg = frame[4]
    end = 6 + (8 if flg & 0x08 else 0) + (4 if flg & 0x01 else 0)
    if len(frame) <= end:
        raise CompressionError("LZ4 frame header is truncated")
    return end


def _lz4_set_checksum(frame: bytes, broken: bool) -> bytes:
    """Rewrite the header checksum: correct, or Kafka's magic 0 variant (over the magic)."""
    end = _lz4_descriptor_end(frame)
    covered = frame[0:end] if broken else frame[4:end]
    hc = (xxh32(covered) >> 8) & 0xFF
    return frame[:end] + bytes([hc]) + frame[end + 1 :]


def _unlz4(data, limit: int, magic: int) -> bytes:
    frame = bytes(data)
    if magic == 0:
        frame = _lz4_set_checksum(frame, broken=False)
    out = bytearray()
    # Output in steps: python-lz4 allocates max_length up front, so asking for the whole
    # limit (128 MiB) at once cost an allocation of that size per batch.
    step = max(1 << 16, 4 * len(frame))
    try:
        while frame:
            d = lz4.frame.LZ4FrameDecompressor()
            out += d.decompress(frame, max_length=min(step, limit + 1 - len(out)))
            while not d.eof and not d.needs_input and len(out) <= limit:
                step *= 2
                out += d.decompress(b"", max_length=min(step, limit + 1 - len(out)))
            if len(out) > limit:
                raise _too_big(LZ4, limit)
            if not d.eof:
                raise CompressionError("LZ4 frame ends before its end mark")
            frame = d.unused_data
    except RuntimeError as err:
        raise CompressionError(f"LZ4 frame does not decompress: {err}") from None
    return bytes(out)


_LZ4_BLOCK = 64 * 1024
_LZ4_DESCRIPTOR = b"\x60\x40"  # FLG: version 1, independent blocks; BD: 64 KiB blocks
_LZ4_RAW = 0x80000000  # a block size's top bit: the block is stored uncompressed
#: The frame header (magic, descriptor, checksum byte) for magic 0 (KAFKA-3160's checksum
#: over the magic too) and for magic 1 and 2.
_LZ4_HEADERS = {
    broken: _LZ4_MAGIC
    + _LZ4_DESCRIPTOR
    + bytes(((xxh32((_LZ4_MAGIC if broken else b"") + _LZ4_DESCRIPTOR) >> 8) & 0xFF,))
    for broken in (True, False)
}
_U32 = struct.Struct("<I")


def _lz4(data, magic: int, level: int) -> bytes:
    """Kafka's Lz4BlockOutputStream: LZ4's fast compressor at the default level, its HC
    compressor at any other (lz4-java's fastCompressor / highCompressor(level)). The fast
    blocks are cramjam's LZ4_compress_default: python-lz4's block API gives other bytes."""
    data = memoryview(bytes(data))
    if level == LEVELS[LZ4].default:

        def block(chunk):
            return cramjam.lz4.compress_block(chunk, store_size=False)
    else:  # cramjam's block API has no HC mode (it ignores mode): python-lz4's LZ4_compress_HC

        def block(chunk):
            return lz4.block.compress(chunk, mode="high_compression", compression=level,
                                      store_size=False)  # fmt: skip

    out = bytearray(_LZ4_HEADERS[magic == 0])
    for i in range(0, len(data), _LZ4_BLOCK):
        chunk = data[i : i + _LZ4_BLOCK]
        packed = block(chunk)
        if len(packed) >= len(chunk):  # incompressible: stored as it is
            out += _U32.pack(len(chunk) | _LZ4_RAW)
            out += chunk
        else:
            out += _U32.pack(len(packed))
            out += packed
    out += b"\0\0\0\0"
    return bytes(out)


# -- zstd ------------------------------------------------------------------------------


_ZSTD = threading.local()  # a decompression context per thread, reused (making one costs)
_ZSTD_MAGIC = 0xFD2FB528


def _zstd_frames_end(data) -> int:
    """Walk the zstd frames' headers and block headers (RFC 8878) to their end: zstandard's
    stream reader returns what it has when a frame is cut short (a truncated frame read as
    empty), so a frame that does not end where the data does is refused here first.
    Returns how many frames there are (skippable ones included)."""
    n, pos, frames = len(data), 0, 0
    while pos < n:
        frames += 1
        if n - pos < 4:
            raise CompressionError(f"zstd data ends inside a frame magic at byte {pos}")
        magic = int.from_bytes(data[pos : pos + 4], "little")
        if magic & 0xFFFFFFF0 == 0x184D2A50:  # a skippable frame
            if n - pos < 8:
                raise CompressionError(f"zstd skippable frame cut short at byte {pos}")
            pos += 8 + int.from_bytes(data[pos + 4 : pos + 8], "little")
            continue
        if magic != _ZSTD_MAGIC:
            raise CompressionError(f"zstd data holds no frame at byte {pos}")
        if n - pos < 5:
            raise CompressionError(f"zstd frame header cut short at byte {pos}")
        fhd = data[pos + 4]
        single = (fhd >> 5) & 1
        header = 1 + (1 - single) + (0, 1, 2, 4)[fhd & 3] + (single, 2, 4, 8)[fhd >> 6]
        pos += 4 + header
        while True:
            if n - pos < 3:
                raise CompressionError("zstd frame ends before its last block")
            bh = data[pos] | data[pos + 1] << 8 | data[pos + 2] << 16
            kind = (bh >> 1) & 3
            if kind == 3:
                raise CompressionError(f"zstd block of the reserved type at byte {pos}")
            pos += 3 + (1 if kind == 1 else bh >> 3)  # an RLE block holds one byte
            if bh & 1:
                break
        pos += 4 * ((fhd >> 2) & 1)  # the content checksum
        if pos > n:
            raise CompressionError("zstd frame ends before its last block")
    return frames


#: Output a single call may make: the data's size times this, plus _ZSTD_ONE_CALL_SLACK
#: (ratios above it, and bombs, take the streaming path and its limit).
_ZSTD_ONE_CALL_RATIO = 16
_ZSTD_ONE_CALL_SLACK = 64 << 10


def _unzstd(data, limit: int) -> bytes:
    frames = _zstd_frames_end(data)
    dctx = getattr(_ZSTD, "dctx", None)
    if dctx is None:
        dctx = _ZSTD.dctx = zstandard.ZstdDecompressor()
    # The usual batch: one frame whose output fits a buffer of a few times its size, in
    # one call (Kafka writes no content size, so the buffer is sized here). Anything else
    # (more output, several frames, damage) is read as a stream, which decides.
    # A content size in the frame header is what zstandard allocates: not trusted past cap.
    cap = min(limit, _ZSTD_ONE_CALL_RATIO * len(data) + _ZSTD_ONE_CALL_SLACK)
    if frames == 1:
        try:
            if zstandard.frame_content_size(data) <= cap:  # -1: not given
                return dctx.decompress(data, max_output_size=cap)
        except zstandard.ZstdError:
            dctx = _ZSTD.dctx = zstandard.ZstdDecompressor()
    out = bytearray()
    try:
        reader = dctx.stream_reader(bytes(data), read_across_frames=True)
        with reader:
            while True:
                chunk = reader.read(min(1 << 20, limit + 1 - len(out)))
                if not chunk:
                    break
                out += chunk
                if len(out) > limit:
                    raise _too_big(ZSTD, limit)
    except zstandard.ZstdError as err:
        _ZSTD.dctx = None  # not reused after a failure
        raise CompressionError(f"zstd data does not decompress: {err}") from None
    return bytes(out)


_ZSTD_WRITERS: dict[int, zstandard.ZstdCompressor] = {}


def _zstd(data, level: int) -> bytes:
    """zstd-jni's ZstdOutputStream as Kafka's ZstdCompression closes it: no content size,
    no checksum, a block flush and then the frame's end (an empty last block)."""
    cctx = _ZSTD_WRITERS.get(level)
    if cctx is None:
        cctx = _ZSTD_WRITERS[level] = zstandard.ZstdCompressor(
            level=level, write_content_size=False, write_checksum=False
        )
    c = cctx.compressobj()
    return (c.compress(data) + c.flush(zstandard.COMPRESSOBJ_FLUSH_BLOCK)
            + c.flush(zstandard.COMPRESSOBJ_FLUSH_FINISH))  # fmt: skip


# -- entry points ----------------------------------------------------------------------


def decompress(codec: int, data, magic: int = 2, max_size: int | None = None):
    """Decompress data written with codec (for this magic); NONE returns data as is."""
    check_codec(codec, magic)
    if codec == NONE:
        return data
    limit = _limit(max_size)
    try:
        if codec == GZIP:
            return _gunzip(data, limit)
        if codec == SNAPPY:
            return _unsnappy(data, limit)
        if codec == LZ4:
            return _unlz4(data, limit, magic)
        return _unzstd(data, limit)
    except _INFLATE_ERRORS as err:
        raise CompressionError(f"gzip data does not decompress: {err}") from None


def compress(codec: int, data, magic: int = 2, level: int | None = None, *,
             gzip_os: int = GZIP_OS_JDK17) -> bytes:  # fmt: skip
    """Compress data byte for byte as Java Kafka does for this codec, magic and level
    (None: Kafka's default); gzip_os GZIP_OS_JDK8 writes the header of JDK 8 and 11."""
    try:
        check_codec(codec, magic)
    except UnsupportedCodecError as err:
        raise EncodeError(str(err)) from None
    if codec == NONE:
        return bytes(data)
    level = check_level(codec, level)
    if codec == GZIP:
        return _gzip(data, LEVELS[GZIP].default if level is None else level, gzip_os)
    if codec == SNAPPY:
        return _snappy(data)
    if codec == LZ4:
        return _lz4(data, magic, LEVELS[LZ4].default if level is None else level)
    return _zstd(data, LEVELS[ZSTD].default if level is None else level)


def kafka_compression_decode(data, codec, magic, max_size=None):
    """The schemas' `process: kafka_compression(codec, magic)`, reading direction."""
    return decompress(int(codec), data, int(magic), max_size)


def kafka_compression_encode(data, codec, magic) -> bytes:
    """The schemas' `process: kafka_compression(codec, magic)`, writing direction."""
    return compress(int(codec), data, int(magic))

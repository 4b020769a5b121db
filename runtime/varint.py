"""Varints and varlongs, zig-zag (records) and unsigned (compact lengths, tagged fields,
metadata record frames), bounded as Kafka bounds them.

A varint (int32) takes at most 5 bytes and a varlong (int64) at most 10; a longer
encoding, or one whose value does not fit, is corrupt (VarintError).
"""

from __future__ import annotations

from .errors import EncodeError, TruncatedError, VarintError

__all__ = [
    "read_varint", "write_varint", "encode_varint", "read_uvarint", "write_uvarint", "encode_uvarint",
    "zigzag", "unzigzag", "size_of_varint",
]  # fmt: skip

_BITS = {5: 32, 10: 64}


def zigzag(n: int) -> int:
    """Signed -> unsigned: 0, -1, 1, -2 ... -> 0, 1, 2, 3 ..."""
    return (n << 1) ^ (n >> 63)


def unzigzag(u: int) -> int:
    """Unsigned -> signed: the inverse of zigzag."""
    return (u >> 1) ^ -(u & 1)


def _kind(max_len: int, signed: bool) -> str:
    return ("" if signed else "unsigned ") + ("varint" if max_len == 5 else "varlong")


def _read_raw(buf: bytes | bytearray | memoryview, pos: int, end: int, max_len: int,
              where: str | None, signed: bool) -> tuple[int, int]:  # fmt: skip
    """The 7-bit groups at buf[pos] as one unsigned number, bounded by max_len bytes and
    by what the type holds (32 bits for max_len 5, 64 for 10)."""
    start = pos
    raw = 0
    shift = 0
    limit = min(end, pos + max_len)
    while pos < limit:
        b = buf[pos]
        pos += 1
        raw |= (b & 0x7F) << shift
        if b < 0x80:
            if raw >> _BITS[max_len]:
                raise VarintError(f"{_kind(max_len, signed)} value out of range (raw {raw:#x})",
                                  start, where)  # fmt: skip
            return raw, pos
        shift += 7
    if pos >= end and pos - start < max_len:
        raise TruncatedError("varint runs past the end of the data", start, where)
    raise VarintError(f"{_kind(max_len, signed)} longer than {max_len} bytes", start, where)


def read_varint(buf: bytes | bytearray | memoryview, pos: int, end: int, max_len: int = 5,
                where: str | None = None) -> tuple[int, int]:  # fmt: skip
    """Decode a zig-zag varint (max_len 5) or varlong (max_len 10) at buf[pos]; return
    (value, position after it)."""
    raw, pos = _read_raw(buf, pos, end, max_len, where, True)
    return (raw >> 1) ^ -(raw & 1), pos


def read_uvarint(buf: bytes | bytearray | memoryview, pos: int, end: int, max_len: int = 5,
                 where: str | None = None) -> tuple[int, int]:  # fmt: skip
    """Decode an unsigned varint (max_len 5: 0 to 2^32-1, Kafka's readUnsignedVarint) or
    varlong (max_len 10) at buf[pos]; return (value, position after it). Kafka's reader
    wraps a fifth byte above 0x0f into its int; here that value is out of range (corrupt)."""
    return _read_raw(buf, pos, end, max_len, where, False)


def _groups(u: int) -> bytes:
    out = bytearray()
    while u >= 0x80:
        out.append((u & 0x7F) | 0x80)
        u >>= 7
    out.append(u)
    return bytes(out)


def encode_varint(value: int, max_len: int = 5, where: str | None = None) -> bytes:
    """The zig-zag encoding of value as a varint (max_len 5) or varlong (max_len 10)."""
    bits = _BITS[max_len]
    if not -(1 << (bits - 1)) <= value < (1 << (bits - 1)):
        raise EncodeError(
            f"{where + ': ' if where else ''}{value} does not fit a {_kind(max_len, True)}"
        )
    return _groups((value << 1) ^ (value >> (bits - 1)))


def encode_uvarint(value: int, max_len: int = 5, where: str | None = None) -> bytes:
    """The unsigned varint (max_len 5) or varlong (max_len 10) encoding of value."""
    if not 0 <= value < (1 << _BITS[max_len]):
        raise EncodeError(
            f"{where + ': ' if where else ''}{value} does not fit an {_kind(max_len, False)}"
        )
    return _groups(value)


def write_varint(out: bytearray, value: int, max_len: int = 5, where: str | None = None) -> None:
    """Append the zig-zag encoding of value to out."""
    out += encode_varint(value, max_len, where)


def write_uvarint(out: bytearray, value: int, max_len: int = 5, where: str | None = None) -> None:
    """Append the unsigned encoding of value to out."""
    out += encode_uvarint(value, max_len, where)


def size_of_varint(value: int) -> int:
    """Bytes the zig-zag encoding of value takes."""
    u = zigzag(value)
    n = 1
    while u >= 0x80:
        u >>= 7
        n += 1
    return n

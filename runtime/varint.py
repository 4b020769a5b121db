"""Zig-zag varints and varlongs (protobuf encoding), bounded as Kafka bounds them.

A varint (int32) takes at most 5 bytes and a varlong (int64) at most 10; a longer
encoding, or one whose value does not fit, is corrupt (VarintError).
"""

from __future__ import annotations

from .errors import EncodeError, TruncatedError, VarintError

__all__ = ["read_varint", "write_varint", "encode_varint", "zigzag", "unzigzag", "size_of_varint"]

_BITS = {5: 32, 10: 64}


def zigzag(n: int) -> int:
    """Signed -> unsigned: 0, -1, 1, -2 ... -> 0, 1, 2, 3 ..."""
    return (n << 1) ^ (n >> 63)


def unzigzag(u: int) -> int:
    """Unsigned -> signed: the inverse of zigzag."""
    return (u >> 1) ^ -(u & 1)


def read_varint(buf: bytes | bytearray | memoryview, pos: int, end: int, max_len: int = 5,
                where: str | None = None) -> tuple[int, int]:  # fmt: skip
    """Decode a zig-zag varint (max_len 5) or varlong (max_len 10) at buf[pos]; return
    (value, position after it)."""
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
                kind = "varint" if max_len == 5 else "varlong"
                raise VarintError(f"{kind} value out of range (raw {raw:#x})", start, where)
            return (raw >> 1) ^ -(raw & 1), pos
        shift += 7
    if pos >= end and pos - start < max_len:
        raise TruncatedError("varint runs past the end of the data", start, where)
    kind = "varint" if max_len == 5 else "varlong"
    raise VarintError(f"{kind} longer than {max_len} bytes", start, where)


def encode_varint(value: int, max_len: int = 5, where: str | None = None) -> bytes:
    """The zig-zag encoding of value as a varint (max_len 5) or varlong (max_len 10)."""
    bits = _BITS[max_len]
    if not -(1 << (bits - 1)) <= value < (1 << (bits - 1)):
        kind = "varint" if max_len == 5 else "varlong"
        raise EncodeError(f"{where + ': ' if where else ''}{value} does not fit a {kind}")
    u = (value << 1) ^ (value >> (bits - 1))
    out = bytearray()
    while u >= 0x80:
        out.append((u & 0x7F) | 0x80)
        u >>= 7
    out.append(u)
    return bytes(out)


def write_varint(out: bytearray, value: int, max_len: int = 5, where: str | None = None) -> None:
    """Append the zig-zag encoding of value to out."""
    out += encode_varint(value, max_len, where)


def size_of_varint(value: int) -> int:
    """Bytes the zig-zag encoding of value takes."""
    u = zigzag(value)
    n = 1
    while u >= 0x80:
        u >>= 7
        n += 1
    return n

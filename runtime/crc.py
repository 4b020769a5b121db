"""CRC-32 (IEEE, magic 0 and 1 messages) and CRC-32C (Castagnoli, v2 batches)."""

from __future__ import annotations

import zlib

from crc32c import crc32c as _crc32c

__all__ = ["crc32", "crc32c", "compute"]


def crc32(data: bytes | bytearray | memoryview) -> int:
    """CRC-32 (IEEE 802.3, as zlib.crc32) of a bytes-like object."""
    return zlib.crc32(data) & 0xFFFFFFFF


def crc32c(data: bytes | bytearray | memoryview) -> int:
    """CRC-32C (Castagnoli) of a bytes-like object; hardware accelerated where available."""
    return _crc32c(data)


#: The C functions themselves (crc32c's, zlib's), for native loops that call them once an
#: entry: CRC-32C and CRC-32 of a buffer, each an unsigned int.
NATIVE = (_crc32c, zlib.crc32)

_ALGORITHMS = {"crc32": crc32, "crc32c": crc32c}


def compute(algorithm: str, buf: bytes | bytearray | memoryview, start: int, end: int) -> int:
    """CRC of buf[start:end] without copying it."""
    view = memoryview(buf)[start:end]
    try:
        return _ALGORITHMS[algorithm](view)
    finally:
        view.release()

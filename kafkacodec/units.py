"""Byte sizes as people write them on a command line or in an option: 1048576, 64k, 128m, 1g."""

from __future__ import annotations

__all__ = ["parse_size"]

_UNITS = {"": 1, "b": 1, "k": 1 << 10, "kb": 1 << 10, "m": 1 << 20, "mb": 1 << 20,
          "g": 1 << 30, "gb": 1 << 30, "t": 1 << 40, "tb": 1 << 40}  # fmt: skip


def parse_size(raw) -> int:
    """A size in bytes (units k, m, g, t are powers of 1024); ValueError for anything else."""
    text = str(raw).strip().lower()
    digits = text.rstrip("kmgtb")
    try:
        value = int(digits) * _UNITS[text[len(digits) :]]
    except (ValueError, KeyError):
        raise ValueError(f"expected a size such as 128m, got {raw!r}") from None
    if value < 0:
        raise ValueError(f"expected a size >= 0, got {raw!r}")
    return value

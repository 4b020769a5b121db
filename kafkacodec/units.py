"""Numbers as people write them on a command line or in an option: sizes (1048576, 64k,
128m, 1g) and counts, and the argparse types that check them where they are parsed (a
value out of range is argparse's one-line usage error, exit 2, never a surprise later)."""

from __future__ import annotations

import argparse
from collections.abc import Callable

__all__ = ["parse_size", "integer", "size", "LATEST", "EARLIEST", "MAX_TIMESTAMP",
           "TIMESTAMP_TARGETS", "timestamp_target", "EARLIEST_LOCAL", "LATEST_TIERED", "utc_ms"]

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


def _named(parse: Callable[[str], int], name: str) -> Callable[[str], int]:
    parse.__name__ = name  # argparse names the type by it in "invalid <type> value"
    return parse


def integer(low: int | None = None, high: int | None = None) -> Callable[[str], int]:
    """An argparse type: an integer in [low, high] (either bound may be open)."""

    def parse(text: str) -> int:
        try:
            n = int(text, 10)
        except ValueError:
            raise argparse.ArgumentTypeError(f"{text!r} is not an integer") from None
        if low is not None and n < low:
            raise argparse.ArgumentTypeError(f"must be {low} or more, not {n}")
        if high is not None and n > high:
            raise argparse.ArgumentTypeError(f"must be {high} or less, not {n}")
        return n

    return _named(parse, "integer")


def size(low: int = 1) -> Callable[[str], int]:
    """An argparse type: a size (parse_size) of at least `low` bytes."""

    def parse(text: str) -> int:
        try:
            n = parse_size(text)
        except ValueError as err:
            raise argparse.ArgumentTypeError(str(err)) from None
        if n < low:
            raise argparse.ArgumentTypeError(f"must be at least {low} bytes, not {text}")
        return n

    return _named(parse, "size")


#: ListOffsets' special timestamps (Kafka's ListOffsetsRequest), the targets a timestamp
#: option takes besides a time in milliseconds (the log layer answers them).
LATEST, EARLIEST, MAX_TIMESTAMP, EARLIEST_LOCAL, LATEST_TIERED = -1, -2, -3, -4, -5
TIMESTAMP_TARGETS = {LATEST: "latest", EARLIEST: "earliest", MAX_TIMESTAMP: "max timestamp",
                     EARLIEST_LOCAL: "earliest local", LATEST_TIERED: "latest tiered"}  # fmt: skip


def timestamp_target(text: str) -> int:
    """An argparse type: a timestamp in milliseconds since the epoch, or one of
    TIMESTAMP_TARGETS."""
    n = integer()(text)
    if n < 0 and n not in TIMESTAMP_TARGETS:
        known = ", ".join(f"{k} ({v})" for k, v in TIMESTAMP_TARGETS.items())
        raise argparse.ArgumentTypeError(f"{n}: a timestamp is milliseconds since the epoch, "
                                         f"or {known}")  # fmt: skip
    return n


_named(timestamp_target, "timestamp")


def utc_ms(ms: int) -> str:
    """A Kafka timestamp (milliseconds since the epoch) as people read it, always in one
    form: ISO 8601 in UTC to the millisecond, "2023-11-14T22:13:20.000Z"."""
    from datetime import datetime, timezone

    return datetime.fromtimestamp(ms / 1000, timezone.utc).isoformat(timespec="milliseconds").replace("+00:00", "Z")

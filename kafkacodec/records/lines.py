"""Records as lines of text, a batch's worth at a time: the native formatters
(kafkacodec/records/_native_text.c) where they apply, else the caller's own Python
formatter for each record, which stays the reference (a test compares both on every
vector and on generated records).

- record_lines: `kafkacodec records`' lines, text or JSON (kafkacodec.cli.records).
- dump_lines: kafka-dump-log's record lines of a v2 batch (kafkacodec.dump).
"""

from __future__ import annotations

from collections.abc import Callable, Sequence

from .batches import Record

try:  # the optional native loops; the Python formatters are the reference
    from ._native import dump_lines as _native_dump
    from ._native import record_lines as _native_lines
except ImportError:  # pragma: no cover - no compiler at install time
    _native_dump = _native_lines = None

__all__ = ["record_lines", "dump_lines", "MODES"]

#: record_lines' modes: text, or JSON with bytes in hex, base64 or UTF-8.
MODES = ("text", "hex", "base64", "utf8")


def record_lines(records: Sequence[Record], mode: str, one: Callable[[Record], str]) -> str:
    """The lines of records, each ending with a newline: one(record) is the reference
    formatter of a record's line for mode (one of MODES)."""
    if mode not in MODES:
        raise ValueError(f"record_lines: no mode {mode!r}")
    if _native_lines is not None:
        text = _native_lines(_as_list(records), Record, mode)
        if text is not None:
            return text
    return "".join([one(r) + "\n" for r in records])


def dump_lines(records: Sequence[Record], print_data: bool, previous: int | None,
               texts: list[tuple] | None = None,
               ) -> tuple[str, int | None, list[tuple[int, int]]] | None:  # fmt: skip
    """kafka-dump-log's lines for the records of a v2 batch, each ending with a newline:
    (text, the last record's offset, the (offset, next offset) pairs that are not
    consecutive, counting from previous). With print_data, each record's key and payload
    as text, or texts[i]'s first two items (a decoder's key and payload texts, None where it
    prints none).
    None when the native formatter does not apply (not built; a control record, a header
    key that is not ASCII, ...): the caller formats those records itself."""
    if _native_dump is None:
        return None
    return _native_dump(_as_list(records), Record, print_data, previous, texts)


def _as_list(records: Sequence[Record]) -> list[Record]:
    return records if type(records) is list else list(records)

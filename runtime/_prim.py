"""The runtime primitives generated code calls: errors with positions and schema paths,
varints, CRCs, `process` routines, enums, and the plumbing of generated classes.

Only generated modules should need this; everything here is small and has no state.
"""

from __future__ import annotations

import struct
from array import array
from collections.abc import Callable
from enum import IntEnum
from typing import Any, ClassVar

from . import compression
from .crc import compute as compute_crc
from .errors import (
    ChecksumError,
    CorruptRecordError,
    DecodeError,
    EncodeError,
    LengthMismatchError,
    TruncatedError,
    ValidationError,
)
from .varint import read_uvarint, read_varint, write_uvarint, write_varint

__all__ = [
    "compute_crc", "read_varint", "write_varint", "read_uvarint", "write_uvarint", "truncated", "length_mismatch", "trailing",
    "check_crc", "invalid", "bad_length", "bad_size", "bad_count", "no_progress", "no_case",
    "bad_contents", "decode_str", "to_enum", "KafkaEnum", "kafka_names", "Generated", "ENCODE_ERRORS",
    "encode_failed", "not_expected", "derive", "process_decode", "process_encode",
    "int_column", "BinaryColumn", "ListColumn", "column_buffers",
]  # fmt: skip

#: Exceptions that mean "these values cannot be encoded" inside a generated builder.
ENCODE_ERRORS = (TypeError, AttributeError, OverflowError, struct.error)


def truncated(where: str, pos: int, end: int, needed: int | None = None) -> TruncatedError:
    if needed is None:
        return TruncatedError("data ends inside the structure", pos, where)
    return TruncatedError("data ends inside the structure", pos, where, needed, max(end - pos, 0))


def length_mismatch(where: str, start: int, declared: int, used: int) -> LengthMismatchError:
    return LengthMismatchError(
        f"declared length {declared} but the fields take {used} bytes", start, where
    )


def trailing(where: str, pos: int, end: int) -> CorruptRecordError:
    return CorruptRecordError(f"{end - pos} unexpected bytes after the structure", pos, where)


def check_crc(algorithm: str, stored: int, buf, start: int, end: int, at: int, where: str):
    computed = compute_crc(algorithm, buf, start, end)
    if computed != stored:
        raise ChecksumError(
            "CRC mismatch", at, where, algorithm=algorithm, stored=stored, computed=computed
        )


def invalid(where: str, pos: int, name: str, value, message: str) -> ValidationError:
    return ValidationError(f"{name} {message}, got {value}", pos, where)


def bad_length(where: str, pos: int, name: str, value: int, available: int) -> DecodeError:
    if value < 0:
        return CorruptRecordError(f"{name} is negative ({value})", pos, where)
    return TruncatedError(f"{name} says {value} bytes follow", pos, where, value, available)


def bad_size(where: str, pos: int, name: str, value: int, available: int) -> DecodeError:
    if value < 0:
        return CorruptRecordError(f"size of {name} is negative ({value})", pos, where)
    return TruncatedError(f"{name} is {value} bytes long", pos, where, value, available)


def bad_count(where, pos, name, count, available=None, min_size=None) -> CorruptRecordError:
    if available is None:
        return CorruptRecordError(f"count of {name} is negative ({count})", pos, where)
    return CorruptRecordError(
        f"{count} {name} cannot fit in {available} bytes (each takes at least {min_size})",
        pos,
        where,
    )


def no_progress(where: str, pos: int, name: str) -> CorruptRecordError:
    return CorruptRecordError(f"an element of {name} took no bytes", pos, where)


def no_case(where: str, pos: int, on: str, value) -> CorruptRecordError:
    return CorruptRecordError(f"no type for {on} = {value}", pos, where)


def bad_contents(where: str, pos: int, expected: bytes, found) -> CorruptRecordError:
    return CorruptRecordError(
        f"expected bytes {bytes(expected).hex()}, found {bytes(found).hex()}", pos, where
    )


def as_bytes(value):
    """The encoding of a switch's value: an object's build(), or the raw bytes a sized
    switch kept when no case matched."""
    if isinstance(value, (bytes, bytearray, memoryview)):
        return value
    return value.build()


def decode_str(buf, start: int, end: int, encoding: str) -> str:
    """Decode text losslessly: bytes that are not valid text survive as surrogate escapes,
    so a builder writes them back unchanged (Java Kafka would replace them instead)."""
    return bytes(buf[start:end]).decode(encoding, "surrogateescape")


class KafkaEnum(IntEnum):
    """Base of the generated enums: an int (compares, hashes and serializes as its id), that
    also knows Kafka's name of each member (the schema's `-orig-id`, else its `id`).

    Compared with a str, a member is equal to Kafka's name of it (`batch.compression ==
    "gzip"`), and a str that names no member of the enum raises ValueError rather than
    being unequal in silence (a misspelt name, or the name of another enum's member). Its
    hash stays the int's: a str key does not find a member in a dict, nor a member a str key.
    """

    #: Kafka's name of each member, by id (kafka_names sets it on each generated enum).
    KAFKA_NAMES: ClassVar[dict[int, str]]

    @property
    def kafka_name(self) -> str:
        """Kafka's name of the member ("gzip", "CreateTime", "ABORT")."""
        return type(self).KAFKA_NAMES[int(self)]

    def __eq__(self, other: object) -> bool:
        if isinstance(other, str):
            names = type(self).KAFKA_NAMES
            if other not in names.values():
                raise ValueError(f"{other!r} is not Kafka's name of a {type(self).__name__} "
                                 f"(its names: {', '.join(names.values())})")  # fmt: skip
            return bool(names[int(self)] == other)
        return int.__eq__(self, other)

    def __ne__(self, other: object) -> bool:
        equal = self.__eq__(other)
        return equal if equal is NotImplemented else not equal

    __hash__ = int.__hash__


def kafka_names(enum_class: type[KafkaEnum], names: dict[int, str]) -> None:
    """Give a generated enum Kafka's name of each member (its KAFKA_NAMES)."""
    type.__setattr__(enum_class, "KAFKA_NAMES", dict(names))


def to_enum(enum_class, value):
    """The enum member for value, or value itself when the schema does not name it."""
    try:
        return enum_class(value)
    except ValueError:
        return value


class Generated:
    """Base of every generated class: what is the same for all of them.

    A subclass defines FIELDS (its stored fields; also its __slots__), PATH, DERIVED,
    parse() and build_into(); extra parse() arguments are the type's Kaitai params.
    Subclasses of generated classes may add slots of their own: FIELDS stays the data."""

    __slots__ = ()
    __hash__ = None  # type: ignore[assignment]  # mutable values: not hashable

    FIELDS: ClassVar[tuple[str, ...]]
    PATH: ClassVar[str]
    DERIVED: ClassVar[tuple[str, ...]]
    #: Instances that are bit fields (field, mask, shift), in the classes that have some.
    BITS: ClassVar[dict[str, tuple[str, int, int]]]
    #: parse(buf, pos=0, end=None, *params, verify=True) -> (object, position after it)
    parse: ClassVar[Callable[..., tuple[Any, int]]]

    def build_into(self, out: bytearray) -> None:
        """Append the encoding to out."""
        raise NotImplementedError

    def __repr__(self) -> str:
        fields = ", ".join(
            f"{name}={getattr(self, name)!r}"
            for name in self.FIELDS
            if getattr(self, name, None) is not None
        )
        return f"{type(self).__name__}({fields})"

    def _state(self):
        return tuple(getattr(self, name, None) for name in self.FIELDS)

    def __eq__(self, other) -> bool:
        if not isinstance(other, Generated) or other.FIELDS != self.FIELDS:
            return NotImplemented
        return self._state() == other._state()

    @classmethod
    def parse_all(cls, buf, *params, verify=True):
        """Read exactly one object that fills buf (params: the type's Kaitai params)."""
        obj, pos = cls.parse(buf, 0, len(buf), *params, verify=verify)
        if pos != len(buf):
            raise trailing(cls.PATH, pos, len(buf))
        return obj

    def build(self) -> bytes:
        """Encode; fields in DERIVED that are None are computed."""
        out = bytearray()
        self.build_into(out)
        return bytes(out)


def encode_failed(obj, err: Exception) -> EncodeError:
    missing = [
        name
        for name in obj.FIELDS
        if getattr(obj, name, None) is None
        and name not in obj.DERIVED
        and not name.endswith("_raw")
    ]
    hint = f" (fields left None: {', '.join(missing)})" if missing else ""
    return EncodeError(f"cannot encode {type(obj).__name__} [{obj.PATH}]: {err}{hint}")


def not_expected(obj, name: str, condition: str) -> EncodeError:
    return EncodeError(
        f"{type(obj).__name__}.{name} is set but its condition ({condition}) is false"
    )


def derive(compute, obj, name: str):
    try:
        return compute()
    except (AttributeError, TypeError, IndexError) as err:
        raise EncodeError(
            f"{type(obj).__name__}.{name} cannot be derived ({err}); set it explicitly"
        ) from None


_PROCESSES: dict[str, tuple[Callable[..., bytes], Callable[..., bytes]]] = {
    "kafka_compression": (
        compression.kafka_compression_decode,
        compression.kafka_compression_encode,
    ),
}


def process_decode(name: str, data, *args, max_size=None):
    return _PROCESSES[name][0](data, *args, max_size=max_size)


def process_encode(name: str, data, *args) -> bytes:
    return _PROCESSES[name][1](data, *args)


# ----------------------------------------------------------------- columnar decoders


def int_column(typecode: str) -> array:
    """An integer column: an array of the field's width."""
    return array(typecode)


class BinaryColumn:
    """A binary or string column as Arrow lays it out: a validity byte per value (nullable
    columns only), int32 end offsets after a leading 0, and the bytes end to end."""

    __slots__ = ("valid", "offsets", "data")

    def __init__(self, nullable: bool):
        self.valid = bytearray() if nullable else None
        self.offsets = array("i", [0])
        self.data = bytearray()

    def add(self, value) -> None:
        if self.valid is not None:
            self.valid.append(value is not None)
        if value is not None:
            self.data += value
        self.offsets.append(len(self.data))

    def buffers(self) -> list:
        head = [] if self.valid is None else [self.valid]
        return [*head, self.offsets, self.data]


class ListColumn:
    """A list column: int32 end offsets into the rows of its element type's columns."""

    __slots__ = ("offsets", "spec", "child")

    def __init__(self, element_class):
        self.offsets = array("i", [0])
        self.spec = element_class.COLUMNS
        self.child = element_class.new_columns()

    def add(self, count: int) -> None:
        self.offsets.append(self.offsets[-1] + count)


def column_buffers(spec, cols) -> list:
    """The columns' buffers, flattened depth first in COLUMNS order: an int column is one
    buffer, a binary or string column [validity (nullable only), offsets, data], a list
    column its offsets then its children's buffers. The native decoder returns this too."""
    out = []
    for (_name, kind, _other, _nullable), col in zip(spec, cols):
        if kind == "int":
            out.append(col)
        elif kind == "list":
            out.append(col.offsets)
            out += column_buffers(col.spec, col.child)
        else:
            out += col.buffers()
    return out

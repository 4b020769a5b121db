"""Construct building blocks for the definitions the generator writes to generated/construct/.

Construct (https://construct.readthedocs.io) declares a format once and both parses and
builds with it. What Kafka's formats need beyond Construct's own vocabulary is here:

- ZigZagVarint: Kafka's bounded zig-zag varint (5 bytes) and varlong (10 bytes);
- Text: a string that keeps bytes that are not valid text as surrogate escapes, so that
  build(parse(data)) == data holds for any header key, as it does for kafkacodec's parsers;
- KafkaCompressed: the records or inner messages inside a Kafka codec, chosen from context;
- Sized: FixedSized when parsing; when building, the size is derived from what was built;
- RepeatEos: entries up to the end of the stream, with errors kept (GreedyRange would
  silently stop at a damaged entry);
- KafkaStruct: a Struct whose length-of-rest and CRC fields are checked when parsing and
  computed when building (a Rebuild cannot do that: they come before the bytes they cover).

Errors are Construct's own (StreamError, ValidationError, ChecksumError, ...), as any
Construct user expects; the messages name the field and what was wrong.
"""

from __future__ import annotations

import io

from construct import (
    ChecksumError,
    Construct,
    ConstructError,
    Container,
    SizeofError,
    Struct,
    Subconstruct,
    ValidationError,
)
from construct.core import (
    Adapter,
    BytesIOWithOffsets,
    evaluate,
    stream_read,
    stream_read_entire,
    stream_seek,
    stream_tell,
    stream_write,
)

from .runtime import compression, crc
from .runtime.errors import KafkacodecError
from .runtime.varint import encode_uvarint, encode_varint, read_uvarint, read_varint

__all__ = [
    "CompressionFailed",
    "KafkaCompressed",
    "KafkaStruct",
    "PeekAt",
    "RepeatEos",
    "Sized",
    "Text",
    "UnsignedVarint",
    "ZigZagVarint",
    "encoded_size",
    "stream_size",
]


class CompressionFailed(ConstructError):
    """A Kafka codec could not decompress (or compress) a region, or it inflated past the bound."""


class ZigZagVarint(Construct):
    """Kafka's zig-zag varint: max_len 5 for an int32 (varint), 10 for an int64 (varlong)."""

    read, encode, what = staticmethod(read_varint), staticmethod(encode_varint), "a varint"

    def __init__(self, max_len: int):
        super().__init__()
        if max_len not in (5, 10):
            raise ValueError("max_len is 5 (varint) or 10 (varlong)")
        self.max_len = max_len

    def _parse(self, stream, context, path):
        data = bytearray()
        while len(data) < self.max_len:
            byte = stream_read(stream, 1, path)[0]
            data.append(byte)
            if not byte & 0x80:
                break
        try:
            value, _ = self.read(bytes(data), 0, len(data), self.max_len)
        except KafkacodecError as err:
            raise ValidationError(str(err), path=path) from None
        return value

    def _build(self, obj, stream, context, path):
        try:
            data = self.encode(obj, self.max_len)
        except (KafkacodecError, TypeError) as err:
            raise ValidationError(
                f"cannot encode {obj!r} as {self.what}: {err}", path=path
            ) from None
        stream_write(stream, data, len(data), path)
        return obj

    def _sizeof(self, context, path):
        raise SizeofError("a varint has no fixed size", path=path)


class UnsignedVarint(ZigZagVarint):
    """Kafka's unsigned varint (compact lengths, tagged fields): max_len 5 for 0 to 2^32-1,
    10 for 0 to 2^64-1."""

    read, encode = staticmethod(read_uvarint), staticmethod(encode_uvarint)
    what = "an unsigned varint"


class Text(Adapter):
    """Bytes as text; bytes that are not valid text survive as surrogate escapes."""

    def __init__(self, subcon, encoding: str):
        super().__init__(subcon)
        self.encoding = encoding

    def _decode(self, obj, context, path):
        return bytes(obj).decode(self.encoding, "surrogateescape")

    def _encode(self, obj, context, path):
        if not isinstance(obj, str):
            raise ValidationError(f"expected a str, got {type(obj).__name__}", path=path)
        return obj.encode(self.encoding, "surrogateescape")


class Sized(Subconstruct):
    """subcon inside exactly `length` bytes when parsing. When building, the subcon is
    written as it comes: the length field is derived from it (by a Rebuild or KafkaStruct)."""

    def __init__(self, length, subcon):
        super().__init__(subcon)
        self.length = length

    def _parse(self, stream, context, path):
        length = evaluate(self.length, context)
        if length < 0:
            raise ValidationError(f"negative size {length}", path=path)
        substream = BytesIOWithOffsets.from_reading(stream, length, path)
        if context.get("_defer"):
            return _Deferred(self.subcon, substream, path)
        return self.subcon._parsereport(substream, context, path)

    def _build(self, obj, stream, context, path):
        return self.subcon._build(obj, stream, context, path)

    def _sizeof(self, context, path):
        return evaluate(self.length, context)


class _Deferred:
    """A sized region read but not yet decoded (see KafkaStruct's deferred)."""

    def __init__(self, subcon, stream, path):
        self.subcon, self.stream, self.path = subcon, stream, path

    def resolve(self, context):
        return self.subcon._parsereport(self.stream, context, self.path)


class KafkaCompressed(Subconstruct):
    """subcon stored through a Kafka codec (kafkacodec.runtime.compression). codec, magic and
    records (how many records a v2 batch's region holds: of none, Kafka reads the codec's
    head alone) are values or context functions; the whole (sized) stream is the
    compressed region, and subcon must use all of what it inflates to (Kafka refuses
    records left over)."""

    def __init__(self, subcon, codec, magic, records=None, max_size: int | None = None):
        super().__init__(subcon)
        self.codec = codec
        self.magic = magic
        self.records = records
        self.max_size = max_size

    def _parse(self, stream, context, path):
        data = stream_read_entire(stream, path)
        codec = evaluate(self.codec, context)
        magic = evaluate(self.magic, context)
        records = evaluate(self.records, context)
        try:
            raw = compression.kafka_compression_decode(data, codec, magic, records, self.max_size)
        except KafkacodecError as err:
            raise CompressionFailed(str(err), path=path) from None
        inner = io.BytesIO(bytes(raw))
        obj = self.subcon._parsereport(inner, context, path)
        if inner.tell() != len(raw):
            raise ValidationError(
                f"{len(raw) - inner.tell()} bytes left over after the decoded region", path=path
            )
        return obj

    def _build(self, obj, stream, context, path):
        inner = io.BytesIO()
        built = self.subcon._build(obj, inner, context, path)
        try:
            data = compression.compress(
                evaluate(self.codec, context), inner.getvalue(), evaluate(self.magic, context)
            )
        except KafkacodecError as err:
            raise CompressionFailed(str(err), path=path) from None
        stream_write(stream, data, len(data), path)
        return built

    def _sizeof(self, context, path):
        raise SizeofError("a compressed region has no fixed size", path=path)


class RepeatEos(Subconstruct):
    """subcon repeated up to the end of the stream (Kaitai's repeat: eos)."""

    def _parse(self, stream, context, path):
        end = _stream_end(stream)
        items = []
        while stream_tell(stream, path) < end:
            context._index = len(items)
            items.append(self.subcon._parsereport(stream, context, path))
        return items

    def _build(self, obj, stream, context, path):
        out = []
        for i, item in enumerate(obj):
            context._index = i
            out.append(self.subcon._build(item, stream, context, path))
        return out

    def _sizeof(self, context, path):
        raise SizeofError("repeated to the end of the stream", path=path)


class PeekAt(Subconstruct):
    """Kaitai's positional instance (`pos:` and a fixed-width type): subcon read at
    position `at` (a function of the context) without moving, with its checks, when the
    stream reaches that far; None when it does not (the fields that need it then fail).
    Construct's Peek would also turn a failed check into None. Builders write nothing."""

    def __init__(self, at, subcon):
        super().__init__(subcon)
        self.at = at

    def _parse(self, stream, context, path):
        at = evaluate(self.at, context)
        if at + self.subcon._sizeof(context, path) > _stream_end(stream):
            return None
        here = stream_tell(stream, path)
        stream_seek(stream, at, 0, path)
        try:
            return self.subcon._parsereport(stream, context, path)
        finally:
            stream_seek(stream, here, 0, path)

    def _build(self, obj, stream, context, path):
        return obj

    def _sizeof(self, context, path):
        return 0


def _stream_end(stream) -> int:
    here = stream.tell()
    end = stream.seek(0, io.SEEK_END)
    stream.seek(here)
    return end


def stream_size(stream) -> int:
    """Kaitai's `_io.size`: the size of the stream a field is read from."""
    return _stream_end(stream)


class KafkaStruct(Struct):
    """A Struct with Kafka's framing fields.

    rest: name of a length field that counts every byte after it. Parsing reads exactly
      that many bytes for the fields after it (and refuses leftovers); building writes the
      fields after it first, then the length.
    crc: (field, from_field, algorithm) - a CRC (crc32 or crc32c) of the bytes from
      from_field to the end of the struct (the end of the rest when there is one). Parsing
      checks it after the fields; building computes it.
    deferred: names of Sized fields whose bytes are read in order but decoded only after
      the CRC and the rest's length are checked (kafkacodec's parsers read them lazily),
      so that damage is reported as the parsers report it.
    """

    def __init__(self, *subcons, rest=None, crc=None, deferred=(), **subconskw):
        super().__init__(*subcons, **subconskw)
        self.rest = rest
        self.crc = crc
        self.deferred = tuple(deferred)

    def _context(self, stream, context):
        context = Container(
            _=context,
            _params=context._params,
            _root=None,
            _parsing=context._parsing,
            _building=context._building,
            _sizing=context._sizing,
            _subcons=self._subcons,
            _io=stream,
            _index=context.get("_index", None),
        )
        context._root = context._.get("_root", context)
        return context

    def _parse(self, stream, context, path):
        obj = Container()
        obj._io = stream
        context = self._context(stream, context)
        crc_name, crc_from, algorithm = self.crc or (None, None, None)
        crc_at = rest_end = None
        for sc in self.subcons:
            if sc.name == crc_from:
                crc_at = stream_tell(stream, path)
            context._defer = sc.name in self.deferred
            value = sc._parsereport(stream, context, path)
            context._defer = False
            if sc.name:
                obj[sc.name] = value
                context[sc.name] = value
            if sc.name == self.rest:
                if value < 0:
                    raise ValidationError(f"{self.rest} is negative: {value}", path=path)
                stream = BytesIOWithOffsets.from_reading(stream, value, path)
                context._io = stream
                rest_end = stream.parent_stream_offset + value
        end = stream_tell(stream, path)
        if rest_end is not None and end != rest_end:
            start = stream.parent_stream_offset
            raise ValidationError(
                f"{self.rest} says {rest_end - start} bytes follow it, the fields take {end - start}",
                path=path,
            )
        if self.crc is not None:
            self._check_crc(stream, crc_at, end, context[crc_name], algorithm, path)
        for name in self.deferred:
            if isinstance(obj.get(name), _Deferred):
                obj[name] = context[name] = obj[name].resolve(context)
        return obj

    @staticmethod
    def _check_crc(stream, start, end, expected, algorithm, path):
        if end is None:
            end = _stream_end(stream)
        here = stream_tell(stream, path)
        stream_seek(stream, start, 0, path)
        data = stream_read(stream, end - start, path)
        stream_seek(stream, here, 0, path)
        actual = crc.compute(algorithm, data, 0, len(data))
        if actual != expected:
            raise ChecksumError(
                f"{algorithm} mismatch: stored 0x{expected:08x}, computed 0x{actual:08x}", path=path
            )

    def _build(self, obj, stream, context, path):
        if obj is None:
            obj = Container()
        outer = stream
        context = self._context(stream, context)
        context.update(obj)
        crc_name, crc_from, algorithm = self.crc or (None, None, None)
        derived = {self.rest, crc_name} - {None}
        rest_sc = crc_sc = None
        crc_at = crc_from_at = None
        for sc in self.subcons:
            if sc.name in derived:
                context[sc.name] = 0
                if sc.name == self.rest:
                    rest_sc = sc
                    stream = io.BytesIO()
                    context._io = stream
                    continue
                crc_sc, crc_at = sc, stream_tell(stream, path)
                sc._build(0, stream, context, path)
                continue
            if sc.name == crc_from:
                crc_from_at = stream_tell(stream, path)
            subobj = obj.get(sc.name, None) if sc.flagbuildnone else _required(obj, sc, path)
            if sc.name:
                context[sc.name] = subobj
            built = sc._build(subobj, stream, context, path)
            if sc.name:
                context[sc.name] = built
        if crc_sc is not None:
            data = stream.getvalue() if stream is not outer else _written(outer, crc_from_at)
            value = crc.compute(
                algorithm, data, crc_from_at if stream is not outer else 0, len(data)
            )
            context[crc_name] = value
            patch = io.BytesIO()
            crc_sc._build(value, patch, context, path)
            here = stream_tell(stream, path)
            stream_seek(stream, crc_at, 0, path)
            stream_write(stream, patch.getvalue(), len(patch.getvalue()), path)
            stream_seek(stream, here, 0, path)
        if rest_sc is not None:
            tail = stream.getvalue()
            context[self.rest] = len(tail)
            rest_sc._build(len(tail), outer, context, path)
            stream_write(outer, tail, len(tail), path)
        return context


def encoded_size(this, *targets) -> int:
    """For the Rebuild of a length field: the encoded size of the first of targets (pairs of
    field name and its construct) present in the context, or -1 (null) when none is."""
    for name, subcon in targets:
        obj = this.get(name)
        if obj is not None:
            stream = io.BytesIO()
            subcon._build(obj, stream, this, f"(size of {name})")
            return len(stream.getvalue())
    return -1


def _required(obj, sc, path):
    try:
        return obj[sc.name]
    except KeyError:
        raise ValidationError(f"missing field {sc.name!r}", path=path) from None


def _written(stream, start: int) -> bytes:
    here = stream.tell()
    stream.seek(start)
    data = stream.read(here - start)
    stream.seek(here)
    return data

"""How far Kafka's generated `read(Readable, short version)` gets through a struct's bytes,
and, where it throws, the message Kafka's tools print (Throwable.getMessage()).

Kafka's readers are not ours: the generated classes (org.apache.kafka.message.
MessageDataGenerator.generateClassReader, over a ByteBufferAccessor) read a known tagged
field in place whatever its size says, take a compact string's length as it comes,
bound a collection only by the bytes left, and leave the bytes after the struct unread.
kafkacodec's generated parsers are stricter (every length agrees, nothing is left over),
so where they refuse a struct, the text kafka-dump-log prints (`Could not read record with
version 0 from value's buffer due to: non-nullable field partitions was serialized as
null.`, CoordinatorRecordSerde.readMessage) comes from here, and where Kafka reads on, the
end this gives says how many bytes Kafka took.

The rules, each in Kafka's order (MessageDataGenerator, VersionConditional, Versions,
ByteBufferAccessor, Readable, ByteUtils.readUnsignedVarint):

- a field is read at the versions its `versions` minus its `taggedVersions` hold, tested
  as VersionConditional tests them (only the bounds inside the versions the reader can be
  at); a struct at `new X(_readable, _version)`, nullable ones behind a byte (< 0: null),
  whose reader refuses a version its parent's class was not made for (`Can't read version
  V of X`: a message read at a version its spec does not have);
- a string, bytes or array length is an int16 / int32 (a compact one: an unsigned varint
  minus one, in int arithmetic); below zero it is null where the field is nullable, else
  `non-nullable field <name> was serialized as null`; a string over 0x7fff is `string
  field <name> had invalid length <n>`; an array longer than the bytes left is `Tried to
  allocate a collection of size <n>, but there are only <m> bytes remaining.`; bytes and
  string bodies go through readArray (`Error reading byte array of <n> byte(s): only <m>
  byte(s) available`, a negative size Java's NegativeArraySizeException, `-<n>`);
- the readers of some releases (dump_format.READ_BOUNDS) also refuse a collection over
  1,000,000 items (after the bytes-left test), and a tagged-field count that is negative,
  more than the bytes left, or over 10,000, each in its own words;
- the tagged fields of a flexible version: a count, then for each a tag and a size; a
  known tag at a version its field is tagged in is read in place (its size unused), at
  another version `Tag <t> is not valid for version <v>`; an unknown tag takes readArray of
  its size;
- a fixed-size read past the end is a BufferUnderflowException, whose message is null
  (printed `null`); an unsigned varint whose fifth byte has its top bit set is `Varint is
  too long, the most significant bit in the 5th byte is set, converted value: <hex>`.
"""

from __future__ import annotations

import functools
import sys
from typing import Any

from kafkacodec.runtime.errors import CorruptRecordError

__all__ = ["JavaReadError", "java_read", "java_message", "java_uvarint"]

_SHORT_MAX = 0x7FFF
_MAX_COLLECTION = 1_000_000  # the bounds of the generators that have them
_MAX_TAGGED = 10_000
_NONE = (0, -1)  # Versions.NONE
_FIXED = {"bool": 1, "int8": 1, "int16": 2, "uint16": 2, "int32": 4, "uint32": 4, "int64": 8,
          "float64": 8, "uuid": 16}  # fmt: skip


class JavaReadError(CorruptRecordError):
    """Kafka's generated reader throws here: `java` is the message Kafka's tools print
    (Throwable.getMessage(); `null` when the exception has none)."""

    java: str = "null"


def _fail(java: str, pos: int) -> JavaReadError:
    err = JavaReadError(f"Kafka's reader stops here: {java}", pos)
    err.java = java
    return err


@functools.lru_cache(maxsize=1024)
def java_versions(text: str | None) -> tuple[int, int]:
    """A spec's version range as Kafka's Versions (lowest, highest); "none" is (0, -1)."""
    if text is None or text == "none":
        return _NONE
    if text.endswith("+"):
        return int(text[:-1]), _SHORT_MAX
    lo, _, hi = text.partition("-")
    return int(lo), int(hi or lo)


def _intersect(a: tuple[int, int], b: tuple[int, int]) -> tuple[int, int]:
    lo, hi = max(a[0], b[0]), min(a[1], b[1])
    return _NONE if lo > hi else (lo, hi)


def _subtract(a: tuple[int, int], b: tuple[int, int]) -> tuple[int, int]:
    """Versions.subtract (a split range keeps a whole, as VersionConditional then does)."""
    if b[0] <= a[0]:
        if b[1] >= a[1]:
            return _NONE
        if b[1] < a[0]:
            return a
        return b[1] + 1, a[1]
    if b[1] >= a[1]:
        top = b[0] - 1
        if top < 0 or top >= a[1]:
            return a
        return a[0], top
    return a


def _member(containing: tuple[int, int], possible: tuple[int, int], version: int) -> bool:
    """VersionConditional.generate: whether the code for `containing` runs at `version`
    when the reader can be at `possible` (only the bounds that cut `possible` are tested)."""
    c_lo, c_hi = containing
    p_lo, p_hi = possible
    if p_lo < c_lo:
        if p_hi > c_hi:
            return c_lo <= version <= c_hi
        if p_hi >= c_lo:
            return version >= c_lo
        return False
    if p_hi >= c_lo and p_lo <= c_hi:
        return version <= c_hi if p_hi > c_hi else True
    return False


def _name(field: dict) -> str:
    n = field["name"]
    return n[:1].lower() + n[1:]  # MessageGenerator.lowerCaseFirst


def _int32(v: int) -> int:
    v &= 0xFFFFFFFF
    return v - (1 << 32) if v & 0x80000000 else v


class _Reader:
    """A ByteBufferAccessor over data[pos:end] that also writes what it reads, as Kafka
    takes it, to `outs[-1]`: fixed-size values and byte arrays as they are, varints in
    their shortest form (the caller writes them: it knows what each means)."""

    __slots__ = ("data", "pos", "end", "outs")

    def __init__(self, data, pos: int, end: int):
        self.data, self.pos, self.end = data, pos, end
        self.outs = [bytearray()]

    def take(self, n: int) -> int:
        """A fixed-size read of n bytes (BufferUnderflowException past the end)."""
        if self.end - self.pos < n:
            raise _fail("null", self.pos)
        at = self.pos
        self.pos += n
        self.outs[-1] += self.data[at : at + n]
        return at

    def signed(self, n: int) -> int:
        at = self.take(n)
        return int.from_bytes(bytes(self.data[at : at + n]), "big", signed=True)

    def uvarint(self) -> int:
        """ByteUtils.readUnsignedVarint: an int (the fifth byte shifted into its top bits).
        Not written: see emit."""
        start = self.pos
        result = 0
        for i in range(5):
            if self.pos >= self.end:
                raise _fail("null", self.pos)
            b = self.data[self.pos]
            self.pos += 1
            if i == 4:
                result = _int32(result | (b << 28))
                if b & 0x80:
                    raise _fail("Varint is too long, the most significant bit in the 5th byte is set, "
                                f"converted value: {result & 0xFFFFFFFF:x}", start)  # fmt: skip
                return result
            if b < 0x80:
                return _int32(result | (b << (7 * i)))
            result |= (b & 0x7F) << (7 * i)
        raise AssertionError("unreachable")  # pragma: no cover

    def emit(self, value: int) -> None:
        """An unsigned varint, shortest form, of an int's 32 bits."""
        value &= 0xFFFFFFFF
        out = self.outs[-1]
        while value >= 0x80:
            out.append((value & 0x7F) | 0x80)
            value >>= 7
        out.append(value)

    def array(self, size: int) -> None:
        """Readable.readArray."""
        remaining = self.end - self.pos
        if size > remaining:
            raise _fail(f"Error reading byte array of {size} byte(s): only {remaining} byte(s) available",
                        self.pos)  # fmt: skip
        if size < 0:
            raise _fail(str(size), self.pos)  # new byte[size]: NegativeArraySizeException
        self.outs[-1] += self.data[self.pos : self.pos + size]
        self.pos += size


@functools.lru_cache(maxsize=256)
def _structs(module_name: str) -> dict[str, Any]:
    """The classes of a generated module, by the struct name of their spec."""
    out: dict[str, Any] = {}
    for value in vars(sys.modules[module_name]).values():
        m = getattr(value, "MESSAGE", None)
        if isinstance(m, dict) and m.get("struct") and isinstance(value, type):
            out.setdefault(m["struct"], value)
    return out


class _Walk:
    """One read: the top class's flexible versions and the reader; bounded: the generator's
    bounds on counts of Kafka 4.2.2 and 4.4 (dump_format.READ_BOUNDS)."""

    def __init__(self, cls, r: _Reader, version: int, bounded: bool):
        m = cls.MESSAGE
        self.r, self.version, self.module, self.bounded = r, version, cls.__module__, bounded
        self.flexible = java_versions(m.get("flexibleVersions", "none"))
        self.valid = java_versions(m.get("validVersions", "0+"))

    def struct(self, cls, cur: tuple[int, int]) -> None:
        """generateClassReader, at versions `cur` (the top's valid versions, narrowed by
        each struct field's versions on the way down)."""
        v, r = self.version, self.r
        fields = cls.MESSAGE["fields"]
        for f in fields:
            versions = java_versions(f["versions"])
            tagged = java_versions(f.get("taggedVersions"))
            mandatory = _subtract(versions, tagged)
            if _member(mandatory, cur, v):
                self.field(f, _intersect(mandatory, cur), cur, tagged=False)
        cur_flexible = _intersect(self.flexible, cur)
        if not _member(self.flexible, cur, v):
            return
        known = {}
        for f in fields:
            valid_tagged = _intersect(
                java_versions(f["versions"]), java_versions(f.get("taggedVersions"))
            )
            if valid_tagged != _NONE and "tag" in f:
                known[f["tag"]] = (f, valid_tagged)
        count = r.uvarint()
        r.emit(max(count, 0))
        if self.bounded:
            if count < 0:
                raise _fail(f"Invalid negative number of tagged fields {count}", r.pos)
            if count > r.end - r.pos:
                raise _fail(f"Tried to read {count} tagged fields, but there are only {r.end - r.pos} bytes "
                            "remaining.", r.pos)  # fmt: skip
            if count > _MAX_TAGGED:
                raise _fail(f"Tried to read {count} tagged fields, which exceeds the maximum allowed count "
                            f"of {_MAX_TAGGED}.", r.pos)  # fmt: skip
        for _ in range(max(count, 0)):  # (a negative count reads none: `_i < _numTaggedFields`)
            tag = r.uvarint()
            size = r.uvarint()
            r.emit(tag)
            if tag in known:
                f, valid_tagged = known[tag]
                if not _member(valid_tagged, cur_flexible, v):
                    raise _fail(f"Tag {tag} is not valid for version {v}", r.pos)
                r.outs.append(bytearray())  # (read in place: its size is the bytes it took)
                self.field(f, _intersect(valid_tagged, cur_flexible), cur, tagged=True)
                value = r.outs.pop()
                r.emit(len(value))
                r.outs[-1] += value
            else:
                r.emit(size)
                r.array(size)  # readUnknownTaggedField

    def field(self, f: dict, possible: tuple[int, int], cur: tuple[int, int], tagged: bool) -> None:
        """A field the reader reads at `possible` versions, in a struct read at `cur`."""
        typ, v, r = f["type"], self.version, self.r
        nullable = java_versions(f.get("nullableVersions"))
        if typ in _FIXED:
            r.take(_FIXED[typ])
        elif typ in ("string", "bytes", "records") or typ.startswith("[]"):
            self.variable(_name(f), typ, possible, nullable, cur, f)
        else:  # a struct (generateStructReader)
            if _member(nullable, possible, v):
                if tagged:
                    marker = r.uvarint()
                    r.emit(max(marker, 0))
                    if marker <= 0:
                        return
                elif r.signed(1) < 0:
                    return
            self.nested(typ, cur, f)

    def nested(self, typ: str, cur: tuple[int, int], f: dict) -> None:
        """`new X(_readable, _version)`: X's class is generated for its parent's versions
        (`cur`), and its reader refuses a version outside them that its field's versions
        hold ("Can't read version V of X"); its fields are read at those narrowed by the
        field's. A common struct's class is generated for its own versions alone."""
        cls = _structs(self.module).get(typ)
        if cls is None:
            raise KeyError(typ)  # a spec this module does not hold: a bug, not data
        common = cls.MESSAGE.get("versions")
        if common is not None:
            self.struct(cls, java_versions(common))
            return
        versions = java_versions(f["versions"])
        if not _member(cur, versions, self.version):
            raise _fail(f"Can't read version {self.version} of {typ}", self.r.pos)
        self.struct(cls, _intersect(cur, versions))

    def variable(self, name: str, typ: str, possible: tuple[int, int], nullable: tuple[int, int],
                 cur: tuple[int, int], f: dict) -> None:  # fmt: skip
        """generateVariableLengthReader."""
        v, r = self.version, self.r
        if _member(self.flexible, possible, v):
            length = _int32(r.uvarint() - 1)
            r.emit(max(length + 1, 0))
        elif typ == "string":
            length = r.signed(2)
        else:
            length = r.signed(4)
        if length < 0:
            if _member(nullable, possible, v):
                return
            raise _fail(f"non-nullable field {name} was serialized as null", r.pos)
        if typ == "string":
            if length > _SHORT_MAX:
                raise _fail(f"string field {name} had invalid length {length}", r.pos)
            r.array(length)
        elif typ == "bytes":
            r.array(length)
        elif typ == "records":  # readRecords: a slice whose limit is the length
            remaining = r.end - r.pos
            if length > remaining:
                raise _fail(f"newLimit > capacity: ({length} > {remaining})", r.pos)
            r.pos += length
        else:
            remaining = r.end - r.pos
            if length > remaining:
                raise _fail(f"Tried to allocate a collection of size {length}, but there are only "
                            f"{remaining} bytes remaining.", r.pos)  # fmt: skip
            if self.bounded and length > _MAX_COLLECTION:
                raise _fail(f"Tried to read a collection of size {length}, which exceeds the maximum allowed "
                            f"size of {_MAX_COLLECTION}.", r.pos)  # fmt: skip
            element = typ[2:]
            for _ in range(length):
                if element in _FIXED:
                    r.take(_FIXED[element])
                elif element in ("string", "bytes"):
                    self.variable(f"{name} element", element, possible, _NONE, cur, f)
                else:
                    self.nested(element, cur, f)


def java_uvarint(data, pos: int, end: int) -> tuple[int, int]:
    """ByteUtils.readUnsignedVarint at data[pos:end]: (the int, Java's, so possibly
    negative, the position after it); JavaReadError where it throws."""
    r = _Reader(data, pos, end)
    return r.uvarint(), r.pos


def java_read(
    cls, data, pos: int, end: int, version: int, bounded: bool = False
) -> tuple[int, bytes]:
    """Where Kafka's generated reader of cls's spec stops reading data[pos:end] at version
    (the bytes after it are left unread), and the bytes it took as it took them: each
    known tagged field's size the bytes its value took (Kafka reads it in place, its size
    unused), each varint in its shortest form (a length Kafka takes as null as 0), so that
    a stricter reader of the same spec reads in them what Kafka read. JavaReadError where
    Kafka's reader throws. bounded: the reader of a release whose generator bounds counts
    (dump_format.READ_BOUNDS)."""
    r = _Reader(data, pos, end)
    w = _Walk(cls, r, version, bounded)
    w.struct(cls, w.valid)
    return r.pos, bytes(r.outs[0])


def java_message(cls, data, pos: int, end: int, version: int, bounded: bool = False) -> str | None:
    """The message of what Kafka's generated reader throws reading data[pos:end] at
    version, None when it reads the struct."""
    try:
        java_read(cls, data, pos, end, version, bounded)
    except JavaReadError as err:
        return err.java
    return None

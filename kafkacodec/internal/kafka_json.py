"""A struct as JSON, exactly as Kafka's generated `<Spec>JsonConverter.write(message,
version)` prints it (org.apache.kafka.message.JsonConverterGenerator, written through
Jackson):

- fields in spec order, named with a lower-case first letter (`kRaftVersion`), only those
  present at the version; a tagged field only when it differs from its default
  (FieldSpec.generateNonDefaultValueCheck);
- integers as JSON numbers at full 64-bit precision, bool as true/false, float64 as
  Java's Double.toString (`0.0`, `-0.0`, `1.0E300`, `4.9E-324`);
- strings escaped as Jackson does (`\\"`, `\\\\`, `\\n`, `\\t`, `\\b`, `\\f`, `\\r`, other
  characters below 0x20 as `\\u00XX`, everything else raw), bytes as standard base64 with
  padding, UUIDs as Kafka's Uuid.toString (URL-safe base64 without padding, 22
  characters), null as `null`.

The writer reads what the spec says of each field from the generated classes' MESSAGE
(`-kafkacodec-message` in the schemas), so it serves any set of generated codecs.

to_json is the reference. NativeJson compiles the same plans for the native writer
(kafkacodec/internal/_native_json.c), which writes many records' structs at a time and
hands back to Python (None) whatever a plan does not cover: a test compares both.
"""

from __future__ import annotations

import base64
import binascii
import decimal
import functools
import math
from typing import Any

from ..records.javatext import java_text, java_utf8
from .codecs import in_versions, version_bounds

try:  # the optional native writer; to_json is the reference
    from . import _native
except ImportError:  # pragma: no cover - no compiler at install time
    _native = None

__all__ = [
    "to_json", "java_double", "json_string", "java_utf8", "java_text", "field_value", "tagged_values", "present",
    "uuid_text", "NativeJson", "access",
]  # fmt: skip

_INT_TYPES = frozenset({"int8", "int16", "uint16", "int32", "uint32", "int64"})
_ESCAPES = {
    '"': '\\"',
    "\\": "\\\\",
    "\n": "\\n",
    "\t": "\\t",
    "\b": "\\b",
    "\f": "\\f",
    "\r": "\\r",
}
_TABLE = {i: _ESCAPES.get(chr(i), f"\\u{i:04X}") for i in range(0x20)}
_TABLE[ord('"')] = '\\"'
_TABLE[ord("\\")] = "\\\\"


def json_string(text: str, where: str = "") -> str:
    """text as a JSON string, escaped as Jackson escapes it, after Java's reading of its
    bytes (java_text: what was not UTF-8 is U+FFFD, as Kafka's JSON prints it)."""
    return '"' + java_text(text).translate(_TABLE) + '"'


def java_double(value: float) -> str:
    """Java's Double.toString (JDK 19 and later: the shortest decimal that rounds to the
    value, at least one digit after the point; two significant digits when one would do)."""
    if math.isnan(value):
        return "NaN"
    if math.isinf(value):
        return "Infinity" if value > 0 else "-Infinity"
    if value == 0:
        return "-0.0" if math.copysign(1.0, value) < 0 else "0.0"
    sign = "-" if value < 0 else ""
    v = abs(value)
    t = decimal.Decimal(repr(v)).normalize().as_tuple()  # the shortest digits that round-trip
    digits = "".join(map(str, t.digits))
    point = len(digits) + int(t.exponent) - 1  # the decimal exponent of the first digit
    if len(digits) == 1:  # Java prints two digits, the closer pair: 4.9E-324, not 5.0E-324
        two = f"{v:.1e}"
        digits = (two[0] + two[2]).rstrip("0") or two[0]
        point = int(two.partition("e")[2])
    if 1e-3 <= v < 1e7:
        if point >= 0:
            whole = digits[: point + 1].ljust(point + 1, "0")
            frac = digits[point + 1 :] or "0"
        else:
            whole = "0"
            frac = "0" * (-point - 1) + digits
        return f"{sign}{whole}.{frac}"
    return f"{sign}{digits[0]}.{digits[1:] or '0'}E{point}"


_URL_SAFE = bytes.maketrans(b"+/", b"-_")


def uuid_text(value) -> str:
    """A UUID's 16 bytes as Kafka's Uuid.toString prints them (URL-safe base64, no padding)."""
    return _uuid_text(bytes(value))


@functools.lru_cache(maxsize=1 << 16)  # topic ids come back record after record; bounded
def _uuid_text(raw: bytes) -> str:
    return binascii.b2a_base64(raw, newline=False).translate(_URL_SAFE).rstrip(b"=").decode("ascii")


def tagged_values(obj) -> dict[int, Any]:
    """The decoded known tagged fields of a struct, by tag (unknown tags left out)."""
    out = {}
    for t in getattr(obj, "tagged_fields", None) or ():
        value = t.value
        if not isinstance(value, (bytes, bytearray, memoryview)):
            out[t.tag] = value
    return out


@functools.lru_cache(maxsize=8192)  # asked for every field of every record; versions come from data: bounded
def present(text: str, version: int, valid: str | None) -> bool:
    """Whether a field with versions `text` is there at a version, as Kafka's generated code
    decides (VersionConditional): only the bounds of the field's range that lie inside the
    message's validVersions are tested, so a version outside them (a KRaft control record
    read at 0 but printed at its Version field) keeps every field that spans them."""
    if valid is None:
        return in_versions(text, version)
    if text == "none":
        return False
    flo, fhi = version_bounds(text)
    vlo, vhi = version_bounds(valid)
    if fhi is not None and fhi < vlo or (vhi is not None and flo > vhi):
        return False
    return (flo <= vlo or version >= flo) and (
        fhi is None or (vhi is not None and fhi >= vhi) or version <= fhi
    )


def access(f: dict, version: int, valid: str | None = None) -> tuple:
    """How a field is read at a version (the rule field_value, dump_format.get and the
    native readers share): () when it is not there, (attribute,) for a stored field,
    (attribute, tag, default) for a tagged one (the attribute of its tag's value)."""
    if not present(f["versions"], version, valid):
        return ()
    if "tag" in f and present(f.get("taggedVersions", "none"), version, valid):
        return f["id"], f["tag"], default_of(f)
    return (f["id"],)


def field_value(obj, f: dict, version: int, tagged: dict | None = None, valid: str | None = None):
    """The value of a field of a struct at a version: its attribute, or for a tagged field
    the value of its tag (its default when the tag is absent). Returns (present, value)."""
    how = access(f, version, valid)
    if not how:
        return False, None
    if len(how) == 3:
        t = (tagged if tagged is not None else tagged_values(obj)).get(how[1])
        return True, how[2] if t is None else getattr(t, how[0])
    return True, getattr(obj, how[0])


def default_of(f: dict):
    """A field's default as the decoder's values hold it (FieldSpec.fieldDefault)."""
    typ, d = f["type"], f.get("default")
    text = "" if d is None else str(d)
    if text == "null":
        return None
    if typ.startswith("[]"):
        return []
    if typ == "bool":
        return 1 if text.lower() == "true" else 0
    if typ in _INT_TYPES:
        if not text:
            return 0
        return int(text, 16) if text.startswith("0x") else int(text)
    if typ == "float64":
        return float(text) if text else 0.0
    if typ == "string":
        return text
    if typ == "bytes":
        return b""
    if typ == "uuid":
        return base64.urlsafe_b64decode(text + "==") if text else bytes(16)
    return _EMPTY_STRUCT  # a struct: the empty struct


class _EmptyStruct:
    """A struct default: every field at its default (compared field by field)."""


_EMPTY_STRUCT = _EmptyStruct()


def _is_default(value, f: dict, version: int, valid: str | None) -> bool:
    d = default_of(f)
    if d is _EMPTY_STRUCT:
        return value is _EMPTY_STRUCT or (
            value is not None and _struct_is_default(value, version, valid)
        )
    if value is None or d is None:
        return value is None and d is None
    if f["type"] in ("bytes", "uuid"):
        return bytes(value) == bytes(d)
    if f["type"].startswith("[]"):
        return len(value) == 0
    if f["type"] == "bool":
        return bool(value) == bool(d)
    return value == d


def _struct_is_default(obj, version: int, valid: str | None) -> bool:
    tagged = tagged_values(obj)
    for f in type(obj).MESSAGE["fields"]:
        there, value = field_value(obj, f, version, tagged, valid)
        if there and not _is_default(value, f, version, valid):
            return False
    return True


#: A field's replacement JSON, by (struct, field) Kafka names: a function of the value that
#: returns JSON text, or None to print the value as usual.
Replace = dict


def _value(value, typ: str, version: int, where: str, replace: Replace, valid) -> str:
    if value is None:
        return "null"
    if typ in _INT_TYPES:
        return str(int(value))
    if typ == "bool":
        return "true" if value else "false"
    if typ == "string":
        return json_string(value, where)
    if typ == "bytes":
        return '"' + base64.b64encode(bytes(value)).decode("ascii") + '"'
    if typ == "uuid":
        return '"' + uuid_text(value) + '"'
    if typ == "float64":
        return java_double(value)
    if typ.startswith("[]"):
        el = typ[2:]
        if el in ("string", "bytes"):  # each in its own item (its length before it)
            value = [v.value for v in value]
        return "[" + ",".join(_value(v, el, version, where, replace, valid) for v in value) + "]"
    return to_json(value, version, replace, valid)


#: Each (class, version, validVersions)'s fields as to_json prints them: (Kafka's JSON
#: name, where for messages, the field's metadata, tagged at this version).
_PLANS: dict[tuple, list[tuple[str, str, dict, bool]]] = {}


def _plan(cls, version: int, valid: str | None) -> list[tuple[str, str, dict, bool]]:
    key = (cls, version, valid)
    plan = _PLANS.get(key)
    if plan is None:
        message = cls.MESSAGE
        plan = []
        for f in message["fields"]:
            if not present(f["versions"], version, valid):
                continue
            tagged = "tag" in f and present(f.get("taggedVersions", "none"), version, valid)
            name = f["name"][:1].lower() + f["name"][1:]
            plan.append((name, f"{message['struct']}.{f['name']}", f, tagged))
        if len(_PLANS) < 100_000:  # versions come from data: keep the cache bounded
            _PLANS[key] = plan
    return plan


def to_json(obj, version: int, replace: Replace | None = None, valid: str | None = None) -> str:
    """A decoded struct (a generated object whose class has MESSAGE) as Kafka's JSON.
    replace: {(struct, field): function} for fields printed otherwise (kafka-dump-log's
    decoded consumer protocol); valid: the message's validVersions (the top's, by default)."""
    cls = type(obj)
    message = cls.MESSAGE
    if valid is None:
        valid = message.get("validVersions")
    tagged = None
    parts = []
    # The version the struct was read at (its `version` parameter): a field printed at
    # `version` that it did not read holds its default, as in Kafka's generated classes
    # (a KRaft control record read at 0 and printed at its Version field)
    read = getattr(obj, "version", version)
    for name, where, f, is_tagged in _plan(cls, version, valid):
        if is_tagged:
            if tagged is None:
                tagged = tagged_values(obj)
            t = tagged.get(f["tag"])
            value = default_of(f) if t is None else getattr(t, f["id"])
            if _is_default(value, f, version, valid):
                continue
        else:
            value = getattr(obj, f["id"])
            if value is None and read != version and not access(f, read, valid):
                value = default_of(f)
        text = None
        if replace:
            fn = replace.get((message["struct"], name))
            if fn is not None:
                text = fn(value)
        if text is None:
            text = _value(value, f["type"], version, where, replace or {}, valid)
        parts.append(f'"{name}":{text}')
    return "{" + ",".join(parts) + "}"


# -- the native writer's plans

#: The native writer's kinds of value (kafkacodec/internal/_native_json.c).
_J_INT, _J_BOOL, _J_STR, _J_BYTES, _J_UUID, _J_STRUCT, _J_NAMES, _J_ARRAY = range(1, 9)
_J_KINDS = {"bool": _J_BOOL, "string": _J_STR, "bytes": _J_BYTES, "uuid": _J_UUID}
#: How a tagged field's default is told: equal, None, empty, the same truth, a struct.
_D_EQ, _D_NONE, _D_EMPTY, _D_BOOL, _D_STRUCT = range(1, 6)


def _kind(typ: str) -> int | None:
    """The native writer's kind for a spec type (None: float64, which Python writes)."""
    if typ in _INT_TYPES:
        return _J_INT
    if typ == "float64":
        return None
    return _J_KINDS.get(typ, _J_STRUCT)


def _default_mode(f: dict) -> tuple[int, Any]:
    """How the native writer tells a tagged field's default (_is_default's cases): the mode
    and the value to compare with."""
    d = default_of(f)
    if d is _EMPTY_STRUCT:
        return _D_STRUCT, None
    if d is None:
        return _D_NONE, None
    if f["type"].startswith("[]"):
        return _D_EMPTY, None
    if f["type"] == "bool":
        return _D_BOOL, d
    return _D_EQ, d


class NativeJson:
    """Plans for the native writer, which gives to_json's text for many structs at a time.

    names: {(struct, JSON name): {int: JSON text}}, a field printed by its name (to_json's
    replace with a lookup, as 4.1's TransactionLogMessageParser prints a state); python:
    the (struct, JSON name) fields that only a Python function prints (to_json's replace):
    a struct that has one is always written by to_json. Plans are made once per (class,
    version, validVersions). A tagged field is printed as to_json prints it: when its tag
    is there and its value is not its default (a struct-valued one set: to_json writes it)."""

    def __init__(self, names: dict[tuple[str, str], dict[int, str]] | None = None,
                 python: frozenset[tuple[str, str]] = frozenset()) -> None:  # fmt: skip
        self.names = names or {}
        self.python = python
        self._plans: dict[tuple, Any] = {}

    @staticmethod
    def available() -> bool:
        return _native is not None

    def plan(self, cls, version: int, valid: str | None = None) -> Any:
        """The native plan of a class at a version (None: to_json must write it)."""
        if _native is None:
            return None
        if valid is None:
            valid = cls.MESSAGE.get("validVersions")
        key = (cls, version, valid)
        if key not in self._plans:
            made = self._make(cls, version, valid)
            if len(self._plans) < 100_000:  # versions come from data: keep the cache bounded
                self._plans[key] = made
            return made
        return self._plans[key]

    def _make(self, cls, version: int, valid: str | None) -> Any:
        message = getattr(cls, "MESSAGE", None)
        if message is None or "fields" not in message:
            return None
        entries: list[tuple] = []
        for name, _where, f, is_tagged in _plan(cls, version, valid):
            where = (message["struct"], name)
            if where in self.python:
                return None
            typ, element = f["type"], None
            if where in self.names:
                kind: int | None = _J_NAMES
            elif typ.startswith("[]"):
                kind, element = _J_ARRAY, _kind(typ[2:])
                if element is None:
                    return None
            else:
                kind = _kind(typ)
            if kind is None:
                return None
            entry: tuple = (f'"{name}":', f["id"], kind, element or 0, self.names.get(where))
            if is_tagged:  # printed when its tag is there with a value that is not its default
                entry += (f["tag"], *_default_mode(f))
            entries.append(entry)
        tagged = "tagged_fields" if "tagged_fields" in getattr(cls, "FIELDS", ()) else None
        try:
            return _native.plan(cls, tuple(entries), tagged,
                                functools.partial(self.plan, version=version, valid=valid))  # fmt: skip
        except TypeError:  # a field that is not a slot of its class: Python writes it
            return None

    @staticmethod
    def reader(cls, version: int, names: tuple[str, ...], *, absent_none: bool = False) -> Any:
        """A plan that reads fields of cls at a version by their Kafka names, each as
        dump_format.get reads it (a tagged field: the value of its tag, else its default),
        for the native loops that read fields rather than print them; None when one of
        them is not in the version (or nothing is built), unless absent_none: then such a
        field reads as None, as get reads it."""
        if _native is None:
            return None
        fields = {f["name"]: f for f in cls.MESSAGE["fields"]}
        tagged = "tagged_fields" if "tagged_fields" in getattr(cls, "FIELDS", ()) else None
        entries = []
        for name in names:
            how = access(fields[name], version)
            if not how and absent_none and tagged is not None:
                # read as a tag no valid record carries (one carrying it holds bytes there,
                # which the native loop leaves to Python): always its default, None
                how = (fields[name]["id"], (1 << 31) - 1, None)
            if not how:
                return None
            entry: tuple = ("", how[0], _J_INT, 0, None)
            if len(how) == 3:
                entry += (how[1], _D_EQ, how[2])
            entries.append(entry)
        try:
            return _native.plan(cls, tuple(entries), tagged, lambda _cls: None)
        except TypeError:  # a field that is not a slot of its class
            return None

    @staticmethod
    def coordinator_texts(items: list, keys: dict, values: dict, word: str) -> list:
        """kafka-dump-log's (key, payload, False) texts for Codecs.coordinator_pairs' items
        (None where Python must write one): keys {record type: plan}, values {record type: (plan
        for each version from 0)}, word: what names the value's version ("version")."""
        return _native.coordinator_texts(items, keys, values, word)

    @staticmethod
    def metadata_texts(items: list, plans: dict, names: dict) -> list:
        """kafka-dump-log's (None, payload, False) for Codecs.metadata_items' items (None
        where Python must write one): plans {apiKey: (plan for each version from 0)},
        names {apiKey: MetadataRecordType name}."""
        return _native.metadata_texts(items, plans, names)

    def write(self, obj, version: int, valid: str | None = None) -> str | None:
        """obj as to_json writes it (with this object's names), or None where to_json must."""
        plan = self.plan(type(obj), version, valid)
        return None if plan is None else _native.write(obj, plan)

"""The codecs of Kafka's internal topics: the classes `kafkacodec specs import` generated
from Kafka's JSON message specs, found through the framing schemas' tables.

A Codecs is one set of generated modules: kafkacodec.generated (the specs the project
ships, schemas/internal/), or a folder the generator wrote from other specs (a newer Kafka
release, loaded with Codecs.load). Every decode checks the version against the spec's
validVersions first, so a reader never guesses at a version it does not know.
"""

from __future__ import annotations

import functools
import gc
import importlib
import importlib.util
import re
import sys
from pathlib import Path
from types import ModuleType
from typing import Any, NamedTuple

from kafkacodec.runtime.errors import CorruptRecordError, DecodeError, ValidationError
from kafkacodec.runtime.varint import read_uvarint

from .topics import COORDINATOR_TOPICS, FRAMINGS, METADATA_TOPICS, TAG_UNREAD, TAG_VERSION_CHECK

try:  # the optional native interpreter of the generated programs (runtime/_programs.c)
    import kafkacodec.runtime._programs as _programs
except ImportError:  # no compiler at install: the generated Python parsers read everything
    _programs = None

__all__ = [
    "Codecs", "Message", "UnknownVersionError", "UnknownRecordTypeError", "in_versions", "DEFAULT",
]  # fmt: skip


class UnknownVersionError(CorruptRecordError):
    """A record at a version its spec (as this codec knows it) does not have: `version`."""

    version: int | None = None


class UnknownRecordTypeError(CorruptRecordError):
    """A record type (or apiKey, or control type) no spec of this codec has."""


@functools.lru_cache(maxsize=1024)  # a spec has a few ranges; asked once per field per record
def version_bounds(text: str) -> tuple[int, int | None]:
    """A spec's version range as (lo, hi): "0-4" -> (0, 4), "2" -> (2, 2), "1+" -> (1,
    None). ("none" is the caller's to handle.)"""
    if text.endswith("+"):
        return int(text[:-1]), None
    lo, _, hi = text.partition("-")
    return int(lo), int(hi or lo)


@functools.lru_cache(maxsize=8192)  # (range, version) from data: bounded
def in_versions(text: str, version: int) -> bool:
    """Whether a spec's version range ("0+", "1-3", "2", "none") holds version."""
    if text == "none":
        return False
    lo, hi = version_bounds(text)
    return lo <= version and (hi is None or version <= hi)


class Message(NamedTuple):
    """One decoded struct of a spec: its name, the version it was read at, the generated
    object, and what framed it (record type, apiKey or control type)."""

    spec: str
    version: int
    obj: Any
    record_type: int = -1  # a coordinator record's type (-1: not one)
    api_key: int = -1  # a metadata record's apiKey (-1: not one)


class _Entry(NamedTuple):
    """A coordinator record type's struct, found once: spec, class, the version a key is
    read at."""

    spec: str
    cls: Any
    key_version: int = 0


class _Info(NamedTuple):
    """What reading a class needs, found once: its native program (or None) and its
    validVersions as closed bounds (an open range ends at int16's largest)."""

    program: Any
    lo: int
    hi: int


def _collector_paused(call, *args):
    """call(*args) with the cyclic collector paused: a bulk read makes many objects, all
    live in its list, that each of the collector's runs would walk for nothing (json and
    pickle loaders pause it the same way)."""
    paused = gc.isenabled()
    gc.disable()
    try:
        return call(*args)
    finally:
        if paused:
            gc.enable()


class Codecs:
    """The generated codecs of one set of specs."""

    def __init__(self, package: str = "kafkacodec.generated") -> None:
        self.package = package
        self._classes: dict[str, Any] = {}  # generated classes, by schema id
        self._framing: dict[Any, Any] = {}  # framing tables, and lookups built from them
        self._info: dict[Any, _Info] = {}  # by class
        self._entries: dict[Any, _Entry] = {}  # what decoding needs, by (topic, kind, type)

    @classmethod
    def load(cls, directory: Path | str, name: str | None = None) -> Codecs:
        """Codecs from a folder the generator wrote (it holds __init__.py and one module
        per schema), imported as a package of its own."""
        directory = Path(directory).resolve()
        name = name or f"_kafkacodec_codecs_{abs(hash(str(directory))):x}"
        if name not in sys.modules:
            spec = importlib.util.spec_from_file_location(
                name, directory / "__init__.py", submodule_search_locations=[str(directory)]
            )
            if spec is None or spec.loader is None:
                raise FileNotFoundError(f"{directory}: no generated codecs (__init__.py)")
            module = importlib.util.module_from_spec(spec)
            sys.modules[name] = module
            spec.loader.exec_module(module)
        return cls(name)

    # -- modules and classes
    def module(self, schema_id: str) -> ModuleType | None:
        """The generated module of a schema id in this set of codecs, None when it has none."""
        try:
            return importlib.import_module(f"{self.package}.{schema_id}")
        except ModuleNotFoundError as err:
            if err.name == f"{self.package}.{schema_id}":
                return None
            raise

    def top(self, schema_id: str) -> Any:
        """The top-level class of a schema (None: no such schema in this set)."""
        if schema_id not in self._classes:
            mod = self.module(schema_id)
            self._classes[schema_id] = getattr(mod, mod.__all__[0]) if mod else None
        return self._classes[schema_id]

    def message_class(self, spec: str) -> Any:
        """The class of a spec the framing tables name (None: this set has no such spec)."""
        schema = self.schema_of(spec)
        return self.top(schema) if schema else None

    def schema_of(self, spec: str) -> str | None:
        """The schema id of a spec, as the framing tables give it."""
        if "_schemas" not in self._framing:
            ids: dict[str, str] = {}
            pkg = importlib.import_module(self.package)
            for fid in pkg.MODULES:
                top = self.top(fid) if fid in FRAMINGS else None
                for r in (getattr(top, "MESSAGE", None) or {}).get("records", []):
                    for name_key, id_key in (("key", "keySchema"), ("value", "valueSchema"),
                                             ("spec", "schema")):  # fmt: skip
                        if r.get(name_key) and r.get(id_key):
                            ids[r[name_key]] = r[id_key]
            self._framing["_schemas"] = ids
        return self._framing["_schemas"].get(spec)

    def framing(self, schema_id: str) -> dict:
        """A framing schema's table (its MESSAGE), {} when this set has none."""
        if schema_id not in self._framing:
            top = self.top(schema_id)
            self._framing[schema_id] = dict(top.MESSAGE) if top is not None else {}
        return self._framing[schema_id]

    def specs(self) -> list[str]:
        """Every spec the framing tables name."""
        self.schema_of("")
        return sorted(self._framing["_schemas"])

    def program(self, cls: Any) -> Any:
        """The native program of a generated class (None: no interpreter, or a class it
        does not read), compiled once."""
        return self.info(cls).program

    def info(self, cls: Any) -> _Info:
        """A class's program and version bounds, found once."""
        got = self._info.get(cls)
        if got is None:
            valid = (getattr(cls, "MESSAGE", None) or {}).get("validVersions")  # tops only
            lo, hi = version_bounds(valid) if valid else (0, None)
            got = self._info[cls] = _Info(self._compile(cls), lo, 0x7FFF if hi is None else hi)
        return got

    def _compile(self, cls: Any) -> Any:
        if _programs is None or getattr(cls, "PROGRAM", None) is None:
            return None
        module = sys.modules[cls.__module__]

        class NoProgram(Exception):
            pass

        def resolve(name: str) -> Any:
            found = self.program(getattr(module, name))
            if found is None:
                raise NoProgram(name)
            return found

        try:
            return _programs.compile(cls, resolve)
        except NoProgram:
            return None

    # -- checks
    @staticmethod
    def check_version(cls: Any, version: int, pos: int = 0) -> None:
        m = cls.MESSAGE
        valid = m["validVersions"]
        if not in_versions(valid, version):
            newer = version > version_bounds(valid)[0]
            what = "is newer than this codec knows" if newer else "is not one this codec knows"
            err = UnknownVersionError(f"{m['spec']} version {version} {what} ({valid})", pos)
            err.version = version
            raise err

    # -- decoding
    def parse_struct(
        self, cls: Any, data, pos: int, end: int, version: int, trailing: bool = False,
        version_at: int | None = None, any_version: bool = False,
    ) -> Any:  # fmt: skip
        """One struct of a spec at a version, which must take the bytes to end (unless
        trailing: bytes after it are ignored, as Kafka's readers of nested bytes do).
        version_at: where the version was read, the position an unknown version names
        (pos when the caller was given the version). any_version: read a version outside
        the spec's validVersions too, as Kafka's generated readers do when asked to (each
        field's versions tested only where they cut the valid ones)."""
        program, lo, hi = self.info(cls)
        if not lo <= version <= hi and not any_version:
            self.check_version(cls, version, pos if version_at is None else version_at)
        if program is not None:
            done = _programs.parse(program, data, pos, end, version)
            if done is not None:  # else: bad bytes, read again by the Python parser to say why
                obj, after = done
                if after == end or trailing:
                    return obj
        try:
            obj, after = cls.parse(data, pos, end, version)
        except ValidationError as err:
            named: DecodeError = err
            if err.message.startswith(TAG_UNREAD + " "):  # a tagged field's `unread` bytes
                named = CorruptRecordError(
                    "a tagged field's size says more bytes than its value takes",
                    err.position,
                    err.schema_path,
                )
            elif err.message.startswith(TAG_VERSION_CHECK + " "):
                tag = re.search(r"_tag_(\d+)/", err.schema_path or "")
                named = CorruptRecordError(  # Kafka's words (MessageDataGenerator's readers)
                    f"Tag {tag.group(1) if tag else '?'} is not valid for version {version}",
                    err.position,
                    err.schema_path,
                )
            raise named.within(f"{cls.MESSAGE['spec']} version {version}") from None
        except DecodeError as err:
            raise err.within(f"{cls.MESSAGE['spec']} version {version}") from None
        if after != end and not trailing:
            raise CorruptRecordError(
                f"{end - after} bytes after the {cls.MESSAGE['spec']} version {version} struct",
                after,
            )
        return obj

    def coordinator_key(self, topic: str, data) -> Message:
        """A record key of a coordinator topic: int16 record type, then the key struct."""
        if data is None:
            raise CorruptRecordError(f"a {topic} record has no key", 0)
        if len(data) < 2:
            raise CorruptRecordError(f"a {topic} key needs 2 bytes, found {len(data)}", 0)
        record_type = ((data[0] << 8) | data[1]) - ((data[0] & 0x80) << 9)
        e = self._entries.get((topic, "key", record_type))
        if e is None:
            e = self._entry(topic, "key", record_type)
        obj = self.parse_struct(e.cls, data, 2, len(data), e.key_version)
        return Message(e.spec, e.key_version, obj, record_type)

    def coordinator_value(self, topic: str, record_type: int, data) -> Message:
        """A record value of a coordinator topic (not a tombstone): int16 version, then the
        value struct of the key's record type."""
        e = self._entries.get((topic, "value", record_type))
        if e is None:
            e = self._entry(topic, "value", record_type)
        if len(data) < 2:
            raise CorruptRecordError(f"a {topic} value needs 2 bytes, found {len(data)}", 0)
        version = ((data[0] << 8) | data[1]) - ((data[0] & 0x80) << 9)
        obj = self.parse_struct(e.cls, data, 2, len(data), version, version_at=0)
        return Message(e.spec, version, obj, record_type)

    def _entry(self, topic: str, kind: str, record_type: int) -> _Entry:
        r = self._coordinator(topic, kind)["by_type"].get(record_type)
        if r is None or r[kind] is None:
            raise UnknownRecordTypeError(f"Unknown record type {record_type}", 0)
        e = _Entry(r[kind], self.top(r[f"{kind}Schema"]), r.get("keyVersion", 0))
        self._entries[(topic, kind, record_type)] = e
        return e

    def coordinator_pairs(self, topic: str, pairs: list) -> list:
        """Many records of a coordinator topic at once: for each (key, value) pair (bytes;
        value None for a tombstone; a key None is an error), (record_type, key object, value version, value object
        or None), or the DecodeError that pair raises (in place: the others still decode).
        The native interpreter reads the whole list in one call; what it cannot read goes
        through coordinator_key and coordinator_value."""
        out = None
        tables = self._pair_tables(topic) if _programs is not None else None
        if tables is not None:
            out = _collector_paused(_programs.coordinator_pairs, pairs, *tables)
        if out is None:
            out = [None] * len(pairs)
        for i, got in enumerate(out) if not all(out) else ():  # (all: C speed; items are tuples)
            if got is None:
                key, value = pairs[i]
                try:
                    k = self.coordinator_key(topic, key)
                    if value is None:
                        out[i] = (k.record_type, k.obj, -1, None)
                    else:
                        v = self.coordinator_value(topic, k.record_type, value)
                        out[i] = (k.record_type, k.obj, v.version, v.obj)
                except DecodeError as err:
                    out[i] = err
        return out

    def coordinator_structs(self, topic: str, kind: str) -> dict[int, _Entry]:
        """The key ("key") or value ("value") struct of each record type of a coordinator
        topic that this set of codecs has, by record type."""
        out = {}
        for rt, r in self._coordinator(topic, kind)["by_type"].items():
            if r[kind] is None:
                continue
            try:
                out[rt] = self._entries.get((topic, kind, rt)) or self._entry(topic, kind, rt)
            except UnknownRecordTypeError:
                continue
        return out

    def _pair_tables(self, topic: str) -> tuple[dict, dict] | None:
        cached = self._framing.get((topic, "pairs"))
        if cached is None:
            keys: dict[int, tuple] = {}
            values: dict[int, tuple] = {}
            for kind, table in (("key", keys), ("value", values)):
                for rt, e in self.coordinator_structs(topic, kind).items():
                    info = self.info(e.cls)
                    if info.program is not None:
                        table[rt] = (info.program, e.key_version) if kind == "key" else info
            cached = self._framing[(topic, "pairs")] = (keys, values)
        return cached

    def _coordinator(self, topic: str, kind: str) -> dict:
        key = (topic, kind)
        cached = self._framing.get(key)
        if cached is None:
            t = COORDINATOR_TOPICS.get(topic)
            table = self.framing(f"{t.framing}_{kind}") if t else {}
            by_type = {r["recordType"]: r for r in table.get("records", [])}
            cached = self._framing[key] = {"by_type": by_type}
        return cached

    def metadata_record(self, topic: str, data) -> Message:
        """A framed metadata record: unsigned varint frame version (1), apiKey and version,
        then the struct (Kafka's AbstractApiMessageSerde)."""
        if data is None:
            raise CorruptRecordError(f"a {topic} record has no value", 0)
        specs = self.metadata_specs(topic)
        end = len(data)
        if end > 3 and data[0] == 1 and data[1] < 0x80 and data[2] < 0x80:  # one byte each
            api_key, version_at, version, pos = data[1], 2, data[2], 3
        else:
            frame, pos = read_uvarint(data, 0, end, 5, f"{topic} frame version")
            if frame != 1:
                raise CorruptRecordError(f"unknown frame version {frame} (Kafka writes 1)", 0)
            api_key, pos = read_uvarint(data, pos, end, 5, f"{topic} apiKey")
            version_at = pos
            version, pos = read_uvarint(data, pos, end, 5, f"{topic} version")
        found = specs.get(api_key)
        if found is None:
            raise UnknownRecordTypeError(f"Unknown metadata record type {api_key}", version_at)
        spec, cls = found
        if version > 0x7FFF:
            raise UnknownVersionError(f"{spec} version {version} is out of range", version_at)
        obj = self.parse_struct(cls, data, pos, end, version, version_at=version_at)
        return Message(spec, version, obj, api_key=api_key)

    def metadata_items(self, topic: str, values: list) -> list:
        """Many framed metadata records at once: for each value (bytes) its (apiKey,
        version, object), or the DecodeError metadata_record raises for it (in place: the
        others still decode). The native interpreter reads the whole list in one call; what
        it cannot read goes through metadata_record."""
        out = None
        if _programs is not None:
            out = _collector_paused(_programs.metadata_values, values, self._metadata_programs(topic))
        if out is None:
            out = [None] * len(values)
        for i, got in enumerate(out) if not all(out) else ():  # (all: C speed; items are tuples)
            if got is None:
                try:
                    m = self.metadata_record(topic, values[i])
                    out[i] = (m.api_key, m.version, m.obj)
                except DecodeError as err:
                    out[i] = err
        return out

    def _metadata_programs(self, topic: str) -> dict[int, tuple[Any, int, int]]:
        """A metadata topic's (native program, lowest and highest version) by apiKey, for
        the specs the interpreter reads."""
        key = (topic, "programs")
        found = self._framing.get(key)
        if found is None:
            found = {}
            for api_key, (_spec, cls) in self.metadata_specs(topic).items():
                info = self.info(cls) if cls is not None else None
                if info is not None and info.program is not None:
                    found[api_key] = (info.program, info.lo, info.hi)
            self._framing[key] = found
        return found

    def metadata_specs(self, topic: str) -> dict[int, tuple[str, Any]]:
        """A metadata topic's (spec, class) by apiKey, found once (class None: this set of
        codecs has no such spec)."""
        key = (topic, "apiKeys")
        found = self._framing.get(key)
        if found is None:
            table = self.framing(METADATA_TOPICS[topic].framing)
            found = self._framing[key] = {r["apiKey"]: (r["spec"], self.message_class(r["spec"]))
                                          for r in table.get("records", [])}  # fmt: skip
        return found

    def control_record(self, control_type: int, data, version: int = 0) -> Message:
        """A KRaft control record value of a control type, read at version (Kafka's
        kafka-dump-log reads every one at 0)."""
        spec, cls = self.control_class(control_type)
        obj = self.parse_struct(cls, data, 0, len(data), version)
        return Message(spec, version, obj)

    def control_class(self, control_type: int) -> tuple[str, Any]:
        """The spec and class of a KRaft control record type's value."""
        key = ("control", "types")
        if key not in self._framing:
            table = self.framing("kraft_control_value")
            self._framing[key] = {r["controlType"]: r["spec"] for r in table.get("records", [])}
        spec = self._framing[key].get(control_type)
        if spec is None:
            raise UnknownRecordTypeError(f"no spec for control type {control_type}", 0)
        return spec, self.message_class(spec)

    def versioned(self, spec: str, data, trailing: bool = False) -> Message:
        """A struct preceded by its int16 version (ConsumerProtocolSubscription and
        ConsumerProtocolAssignment, as group members' bytes hold them)."""
        if len(data) < 2:
            raise CorruptRecordError(f"a {spec} needs 2 bytes, found {len(data)}", 0)
        version = int.from_bytes(data[0:2], "big", signed=True)
        cls = self.message_class(spec)
        if cls is None:
            raise UnknownRecordTypeError(f"this codec has no {spec}", 0)
        obj = self.parse_struct(cls, data, 2, len(data), version, trailing, version_at=0)
        return Message(spec, version, obj)

    def metadata_type_name(self, topic: str, api_key: int) -> str:
        """Kafka's MetadataRecordType name of an apiKey (TOPIC_RECORD)."""
        key = (topic, "typeNames")
        names = self._framing.get(key)
        if names is None:
            table = self.framing(METADATA_TOPICS[topic].framing)
            names = self._framing[key] = {r["apiKey"]: r["typeName"] for r in table.get("records", [])}
        name = names.get(api_key)
        if name is None:
            raise UnknownRecordTypeError(f"Unknown metadata record type {api_key}", 0)
        return name

    def struct(self, spec: str, data, version: int) -> Message:
        """A spec's struct alone, at a version the caller knows."""
        cls = self.message_class(spec)
        if cls is None:
            raise UnknownRecordTypeError(f"this codec has no {spec}", 0)
        return Message(spec, version, self.parse_struct(cls, data, 0, len(data), version))


DEFAULT = Codecs()

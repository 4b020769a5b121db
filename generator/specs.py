"""Kafka's JSON message specs (the input of Kafka's own generator), read into a model.

A spec declares one message: its `name`, its `type` (`data`, `metadata`,
`coordinator-key`, `coordinator-value`, ...), an `apiKey` for some, the versions it has
(`validVersions`), the versions that are flexible (`flexibleVersions`: compact lengths and
tagged fields), its `fields` and its `commonStructs`. Each field has a `type` (a primitive,
a struct name, or `[]` and an element type), the versions it is present in (`versions`),
may be null in (`nullableVersions`) or is tagged in (`taggedVersions`, with its `tag`), a
`default`, `ignorable`, and, for structs, `fields` of its own. Kafka's MessageSpec,
FieldSpec and Versions (generator/src/main/java/org/apache/kafka/message/) read the same
keys; the files carry `//` comments, which Kafka's JSON reader allows.

Only the standard library: `kafkacodec specs diff` reads specs without the generator's
templates.
"""

from __future__ import annotations

import json
import re
import zipfile
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from kafkacodec.runtime.errors import KafkacodecError, SchemaError

__all__ = [
    "SpecError", "Versions", "SpecField", "MessageSpec", "load_spec", "load_specs", "parse_spec", "strip_comments",
    "PRIMITIVES",
]  # fmt: skip

#: The primitive field types of Kafka's specs (FieldType), with their fixed widths (None:
#: a length-prefixed or varying encoding).
PRIMITIVES: dict[str, int | None] = {
    "bool": 1, "int8": 1, "int16": 2, "uint16": 2, "int32": 4, "uint32": 4, "int64": 8,
    "float64": 8, "uuid": 16, "string": None, "bytes": None, "records": None,
}  # fmt: skip

_SPEC_KEYS = {"apiKey", "type", "listeners", "name", "validVersions", "deprecatedVersions",
              "flexibleVersions", "latestVersionUnstable", "fields", "commonStructs"}  # fmt: skip
_FIELD_KEYS = {"name", "type", "versions", "nullableVersions", "taggedVersions", "tag", "default",
               "ignorable", "entityType", "about", "mapKey", "flexibleVersions", "fields",
               "zeroCopy"}  # fmt: skip
_NAME = re.compile(r"[A-Za-z][A-Za-z0-9]*\Z")


class SpecError(SchemaError):
    """A message spec that cannot be read: its file, where in it, and what is wrong (a
    SchemaError: the generator's input, which a command could not use)."""

    def __init__(self, path: Path | str, where: str, message: str) -> None:
        self.path, self.where, self.message, self.file = str(path), where, message, None
        KafkacodecError.__init__(self, f"{path}: {where}: {message}" if where else f"{path}: {message}")


@dataclass(frozen=True)
class Versions:
    """A version range as Kafka writes it: "3", "0-4", "2+" (open), "none" (empty).
    Kafka's org.apache.kafka.message.Versions."""

    lo: int
    hi: int | None  # None: open ("2+")
    empty: bool = False

    NONE_TEXT = "none"

    @classmethod
    def parse(cls, text: Any, where: str = "") -> Versions:
        raw = str(text).strip()
        if raw == cls.NONE_TEXT:
            return cls(0, -1, True)
        m = re.fullmatch(r"(\d+)(\+|-(\d+))?", raw)
        if not m:
            raise ValueError(f"{where}: not a version range: {text!r}")
        lo = int(m[1])
        if m[2] == "+":
            return cls(lo, None)
        hi = int(m[3]) if m[3] is not None else lo
        if hi < lo:
            raise ValueError(f"{where}: version range {text!r} ends before it starts")
        return cls(lo, hi)

    def __contains__(self, version: int) -> bool:
        return not self.empty and self.lo <= version and (self.hi is None or version <= self.hi)

    def within(self, outer: Versions) -> list[int]:
        """The versions of this range that outer (a closed range) holds."""
        if self.empty or outer.empty or outer.hi is None:
            return []
        return [v for v in range(outer.lo, outer.hi + 1) if v in self]

    def __str__(self) -> str:
        if self.empty:
            return self.NONE_TEXT
        if self.hi is None:
            return f"{self.lo}+"
        return str(self.lo) if self.lo == self.hi else f"{self.lo}-{self.hi}"


NO_VERSIONS = Versions(0, -1, True)


@dataclass
class SpecField:
    """One field of a spec (or of one of its structs)."""

    name: str
    type: str
    versions: Versions
    nullable: Versions = NO_VERSIONS
    tagged: Versions = NO_VERSIONS
    tag: int | None = None
    default: Any = None
    ignorable: bool = False
    about: str = ""
    map_key: bool = False
    entity_type: str | None = None
    fields: list[SpecField] = field(default_factory=list)  # a struct's own fields

    @property
    def is_array(self) -> bool:
        return self.type.startswith("[]")

    @property
    def element(self) -> str:
        """The type of one value: the element type of an array, else the type itself."""
        return self.type[2:] if self.is_array else self.type

    @property
    def is_struct(self) -> bool:
        return self.element not in PRIMITIVES


@dataclass
class MessageSpec:
    """One spec file."""

    name: str
    type: str
    api_key: int | None
    valid: Versions
    flexible: Versions
    fields: list[SpecField]
    common_structs: dict[str, list[SpecField]]
    path: str  # relative to the directory it was loaded from
    #: Each common struct's own versions (Kafka generates its class for them alone: no
    #: version check when read, its fields' versions tested against these).
    common_versions: dict[str, Versions] = field(default_factory=dict)

    @property
    def folder(self) -> str:
        """The top folder of Kafka's source tree the spec is in (group-coordinator, metadata,
        ...): it says which topic's records the spec is for; "" for a spec at the top."""
        return self.path.split("/", 1)[0] if "/" in self.path else ""

    @property
    def versions(self) -> list[int]:
        return self.valid.within(self.valid) if self.valid.hi is not None else []

    def walk(self) -> list[tuple[str, SpecField]]:
        """Every field with its path: `A.B` for a field B of an inline struct A, `<S>.B` for
        a field B of the common struct S."""
        out: list[tuple[str, SpecField]] = []

        def visit(prefix: str, fields: list[SpecField]) -> None:
            for f in fields:
                name = f"{prefix}{f.name}"
                out.append((name, f))
                visit(f"{name}.", f.fields)

        visit("", self.fields)
        for struct, fields in self.common_structs.items():
            visit(f"<{struct}>.", fields)
        return out


def strip_comments(text: str) -> str:
    """The JSON of a spec file without its `//` comments (outside strings)."""
    out, i, n, in_string = [], 0, len(text), False
    while i < n:
        ch = text[i]
        if in_string:
            out.append(ch)
            if ch == "\\" and i + 1 < n:
                out.append(text[i + 1])
                i += 1
            elif ch == '"':
                in_string = False
        elif ch == '"':
            in_string = True
            out.append(ch)
        elif text.startswith("//", i):
            while i < n and text[i] != "\n":
                i += 1
            continue
        else:
            out.append(ch)
        i += 1
    return "".join(out)


def _versions(
    node: dict, key: str, path: Path, where: str, default: Versions | None = None
) -> Versions:
    if key not in node:
        if default is None:
            raise SpecError(path, where, f"{key} is missing")
        return default
    try:
        return Versions.parse(node[key], f"{where}/{key}")
    except ValueError as err:
        raise SpecError(path, f"{where}/{key}", str(err).split(": ", 1)[-1]) from None


def _field(node: Any, path: Path, where: str) -> SpecField:
    if not isinstance(node, dict):
        raise SpecError(path, where, "a field is a JSON object")
    unknown = set(node) - _FIELD_KEYS
    if unknown:
        raise SpecError(path, where, f"unknown keys {sorted(unknown)}")
    name, typ = node.get("name"), node.get("type")
    if not isinstance(name, str) or not _NAME.match(name):
        raise SpecError(path, where, f"name {name!r} is not a spec name")
    if not isinstance(typ, str) or not _NAME.match(typ.removeprefix("[]")):
        raise SpecError(path, f"{where}/type", f"type {typ!r} is not a spec type")
    tag = node.get("tag")
    if tag is not None:
        try:
            tag = int(tag)  # "tag": "0" is allowed, as Kafka's FieldSpec reads it
        except (TypeError, ValueError):
            raise SpecError(path, f"{where}/tag", f"tag {tag!r} is not a number") from None
    tagged = _versions(node, "taggedVersions", path, where, NO_VERSIONS)
    # A tagged field may leave out versions: they are its taggedVersions (Kafka's FieldSpec).
    versions = _versions(node, "versions", path, where, None if tagged.empty else tagged)
    f = SpecField(
        name=name, type=typ, versions=versions,
        nullable=_versions(node, "nullableVersions", path, where, NO_VERSIONS),
        tagged=tagged, tag=tag,
        default=node.get("default"), ignorable=bool(node.get("ignorable", False)),
        about=str(node.get("about", "")), map_key=bool(node.get("mapKey", False)),
        entity_type=node.get("entityType"),
    )  # fmt: skip
    if (tag is None) != f.tagged.empty:
        raise SpecError(path, where, "a tagged field has both tag and taggedVersions")
    subfields = node.get("fields") or []
    if subfields and not f.is_struct:
        raise SpecError(path, where, f"a {typ} field has no fields of its own")
    f.fields = [_field(s, path, f"{where}/fields/{i}") for i, s in enumerate(subfields)]
    return f


def load_spec(path: Path, root: Path | None = None) -> MessageSpec:
    """One spec file; SpecError names the file and the place in it that is wrong."""
    try:
        text = path.read_text(encoding="utf-8")
    except (OSError, UnicodeDecodeError) as err:
        raise SpecError(path, "", f"cannot read: {err}") from None
    return parse_spec(text, path, str(path.relative_to(root)) if root else path.name)


def parse_spec(text: str, path: Path | str, relative: str) -> MessageSpec:
    """A spec's text; path names it in errors, relative is its path below the tree it
    comes from (whose first folder says its topic)."""
    try:
        node = json.loads(strip_comments(text))
    except json.JSONDecodeError as err:
        raise SpecError(path, f"line {err.lineno}", f"not JSON: {err.msg}") from None
    if not isinstance(node, dict):
        raise SpecError(path, "", "a spec is a JSON object")
    unknown = set(node) - _SPEC_KEYS
    if unknown:
        raise SpecError(path, "", f"unknown keys {sorted(unknown)}")
    name = node.get("name")
    if not isinstance(name, str) or not _NAME.match(name):
        raise SpecError(path, "/name", f"{name!r} is not a spec name")
    api_key = node.get("apiKey")
    if api_key is not None and not isinstance(api_key, int):
        raise SpecError(path, "/apiKey", f"{api_key!r} is not a number")
    structs: dict[str, list[SpecField]] = {}
    common_versions: dict[str, Versions] = {}
    for i, s in enumerate(node.get("commonStructs") or []):
        where = f"/commonStructs/{i}"
        if not isinstance(s, dict) or not isinstance(s.get("name"), str):
            raise SpecError(path, where, "a common struct has a name and fields")
        structs[s["name"]] = [_field(f, path, f"{where}/fields/{j}")
                              for j, f in enumerate(s.get("fields") or [])]  # fmt: skip
        common_versions[s["name"]] = _versions(s, "versions", path, where, Versions(0, None))
    return MessageSpec(
        name=name, type=str(node.get("type", "")), api_key=api_key,
        valid=_versions(node, "validVersions", path, ""),
        flexible=_versions(node, "flexibleVersions", path, "", NO_VERSIONS),
        fields=[_field(f, path, f"/fields/{i}") for i, f in enumerate(node.get("fields") or [])],
        common_structs=structs,
        path=relative,
        common_versions=common_versions,
    )  # fmt: skip


def load_specs(source: Path | str) -> dict[str, MessageSpec]:
    """Every spec of a source, by name; a name twice is an error. The source is a directory
    (a Kafka source tree or a copy of its specs: every *.json at or below it; or a Kafka
    release's libs/: the specs inside its kafka-*.jar files), or one such jar."""
    root = Path(source)
    if root.is_file() and root.suffix == ".jar":
        found = _jar_specs(root)
    elif root.is_dir():
        found = [load_spec(p, root) for p in sorted(root.rglob("*.json"))]
        for jar in sorted(root.glob("kafka-*.jar")):
            found += _jar_specs(jar)
    else:
        raise SpecError(root, "", "not a directory of message specs, nor a Kafka jar")
    out: dict[str, MessageSpec] = {}
    for spec in found:
        if spec.name in out:
            raise SpecError(spec.path, "/name", f"{spec.name} is also declared by {out[spec.name].path}")
        out[spec.name] = spec
    if not out:
        raise SpecError(root, "", "holds no message specs (*.json, or kafka-*.jar holding them)")
    return out


#: A Kafka jar's name: kafka-group-coordinator-4.4.0.jar is the module group-coordinator.
_JAR = re.compile(r"kafka-(?P<module>[a-z0-9-]+?)-\d[^/]*\.jar\Z")


def _jar_specs(jar: Path) -> list[MessageSpec]:
    """The specs a Kafka jar ships (the JSON files of its resources: common/message/ in
    kafka-clients and the coordinators' jars, common/metadata/ in kafka-metadata, message/
    in kafka-storage), each as if in the module's folder of Kafka's source tree."""
    m = _JAR.match(jar.name)
    if not m:
        raise SpecError(jar, "", "not a Kafka module's jar (kafka-MODULE-VERSION.jar)")
    try:
        with zipfile.ZipFile(jar) as z:
            names = sorted(n for n in z.namelist() if n.endswith(".json") and "/" in n)
            texts = {n: z.read(n).decode("utf-8") for n in names}
    except (OSError, zipfile.BadZipFile, UnicodeDecodeError) as err:
        raise SpecError(jar, "", f"cannot read: {err}") from None
    return [parse_spec(text, f"{jar}!/{n}", f"{m['module']}/{n}") for n, text in texts.items()]

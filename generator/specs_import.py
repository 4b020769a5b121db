"""Kafka's JSON message specs turned into Kaitai Struct schemas (`kafkacodec specs import`).

Each spec becomes one .ksy covering all its versions: every type takes the message version
as its parameter `version`, and every field is read in the versions the spec gives it.
What Kafka's own generator (org.apache.kafka.message.MessageDataGenerator) writes, the
schema says in Kaitai's terms:

- int8-int64, uint16, uint32 and float64 are s1-s8, u2, u4 and f8; bool is u1 (any byte
  other than 0 is true); a uuid is its 16 bytes.
- A string or bytes field has a length before it: in versions that are not flexible an
  int16 (strings) or int32 (bytes), -1 for null; in flexible versions an unsigned varint
  holding the length + 1, 0 for null. Arrays have a count the same way (int32 or unsigned
  varint + 1). A field that has both (a message that turned flexible) has both length
  fields, each present in its own versions (-kafkacodec-length-of names what it measures,
  so builders derive them).
- A nullable struct is preceded by an int8: -1 for null, 1 for a struct.
- Each struct of a flexible version ends with its tagged fields: an unsigned varint count,
  then per field its tag, its size and its bytes. Known tags are decoded (a switch on the
  tag, inside the size); an unknown tag keeps its bytes, and builders write them back
  unchanged, as Kafka's _unknownTaggedFields.

Each type carries what the spec says of it (-kafkacodec-message: the spec's name, source
file and label, its versions, and every field with its Kafka name, type, versions,
nullable and tagged versions, tag, default and ignorable) for the layers above, which print
Kafka's JSON and check versions without reading the spec again.

Besides one schema per spec, the import writes the framing Kafka puts around them in each
internal topic (see FRAMINGS), as schemas of their own.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from pathlib import Path

import yaml

from kafkacodec.internal.topics import (
    COORDINATOR_TOPICS,
    FRAMINGS,
    METADATA_TOPICS,
    TAG_UNREAD,
    TAG_VERSION_CHECK,
)

from .specs import MessageSpec, SpecError, SpecField, Versions, load_specs

__all__ = [
    "import_specs", "ImportResult", "snake", "schema_id", "CONTROL_SPECS", "FRAMINGS", "STORED_TYPES",
    "RECORD_FORMAT_SPECS", "generate_codecs",
]  # fmt: skip

#: The spec each KRaft control record type carries (Kafka's ControlRecordType; the type
#: numbers are schemas/kafka_control_record_key.ksy's enum).
CONTROL_SPECS = {
    "leader_change": "LeaderChangeMessage",
    "snapshot_header": "SnapshotHeaderRecord",
    "snapshot_footer": "SnapshotFooterRecord",
    "kraft_version": "KRaftVersionRecord",
    "kraft_voters": "VotersRecord",
}

#: Specs stored as an int16 version and then the struct, and where.
VERSIONED = {
    "ConsumerProtocolSubscription": "a consumer group member's bytes hold it (Kafka's ConsumerProtocol)",
    "ConsumerProtocolAssignment": "a consumer group member's bytes hold it (Kafka's ConsumerProtocol)",
    "ProducerSnapshot": "a producer-state .snapshot file holds it (Kafka's ProducerStateManager)",
}

#: The spec types that describe stored bytes (a log's records, a state file): Kafka's
#: message generator writes the same classes for them; the others (request, response,
#: header) are the wire protocol's, which a Kafka source tree's clients/ holds beside them.
STORED_TYPES = ("coordinator-key", "coordinator-value", "metadata", "data")

#: Specs of the record format itself, which kafkacodec's own schemas describe (their
#: bytes after the int16 version): from Kafka 4.4 clients/ ships them as data specs.
#: tests/kafka/test_kafka_specs.py checks each schema against its spec.
RECORD_FORMAT_SPECS = {
    "AbortedTxn": "kafka_txn_index",
    "ControlRecordTypeSchema": "kafka_control_record_key",
    "EndTxnMarker": "kafka_end_txn_marker",
}

#: The schemas of a directory of specs import the unsigned varint of the project's
#: schemas/common/, next to the directory they are written to (schemas/internal/).
COMMON = "../common/unsigned_varint"

_INTS = {"int8": "s1", "int16": "s2", "uint16": "u2", "int32": "s4", "uint32": "u4",
         "int64": "s8", "float64": "f8", "bool": "u1"}  # fmt: skip
#: Names the generated code keeps for itself (generator.ir.RESERVED) or Kaitai does.
_TAKEN = {
    "buf", "pos", "end", "start", "cls", "self", "out", "o", "outer", "verify", "b", "n", "item",
    "data", "rest_start", "crc_start", "crc_end", "max_size", "count", "before", "rest_bytes",
    "rest_auto", "crc_auto", "rest_at", "crc_at", "limit", "cols", "version", "io", "root",
    "parent", "index", "tagged_fields", "num_tagged_fields",
}  # fmt: skip


def snake(name: str) -> str:
    """A spec name in Kaitai's snake case: OffsetCommitValue -> offset_commit_value,
    KRaftVersion -> k_raft_version, protocolType -> protocol_type."""
    s = re.sub(r"([a-z0-9])([A-Z])", r"\1_\2", name)
    s = re.sub(r"([A-Z])([A-Z][a-z])", r"\1_\2", s)
    return s.lower()


def schema_id(spec_name: str) -> str:
    return snake(spec_name)


def record_type_name(spec_name: str) -> str:
    """Kafka's MetadataRecordType name of a metadata spec (TopicRecord -> TOPIC_RECORD):
    MessageGenerator.toSnakeCase, upper-cased (an underscore before each capital that
    follows a lower-case letter or digit)."""
    out, prev_upper = [], True
    for ch in spec_name:
        if ch.isupper():
            if not prev_upper:
                out.append("_")
            out.append(ch.lower())
            prev_upper = True
        else:
            out.append(ch)
            prev_upper = False
    return "".join(out).upper()


def _field_id(name: str) -> str:
    s = snake(name)
    return f"{s}_field" if s in _TAKEN else s


@dataclass
class ImportResult:
    """What an import wrote: schema id -> text, and what it left out and why."""

    files: dict[str, str]
    skipped: list[tuple[str, str]]


class _Versions:
    """Conditions over the message version, as Kaitai expressions."""

    def __init__(self, spec: MessageSpec):
        self.all = set(spec.versions)
        self.flexible = {v for v in self.all if v in spec.flexible}

    def of(self, r: Versions) -> set[int]:
        return {v for v in self.all if v in r}

    def cond(self, vs: set[int]) -> str | None:
        """None: every version; else an expression true exactly in vs."""
        if vs == self.all:
            return None
        if not vs:
            return "false"
        runs, lo, prev = [], None, None
        for v in sorted(vs):
            if lo is None:
                lo = prev = v
            elif v == prev + 1:
                prev = v
            else:
                runs.append((lo, prev))
                lo = prev = v
        runs.append((lo, prev))
        lo_all, hi_all = min(self.all), max(self.all)
        parts = []
        for a, b in runs:
            terms = []
            if a == b and a != lo_all and b != hi_all:
                terms.append(f"version == {a}")
            else:
                if a > lo_all:
                    terms.append(f"version >= {a}")
                if b < hi_all:
                    terms.append(f"version <= {b}")
            parts.append(" and ".join(terms) if terms else "true")
        if len(parts) == 1:
            return parts[0]
        return " or ".join(f"({p})" for p in parts)


def _and(*conds: str | None) -> str | None:
    parts = [c for c in conds if c is not None]
    if not parts:
        return None
    if len(parts) == 1:
        return parts[0]
    return " and ".join(f"({p})" if " or " in p or "?" in p else p for p in parts)


def _pick(cond_compact: str | None, compact: str, classic: str, modes: tuple[bool, bool]) -> str:
    """compact or classic, or a ternary when a field has both (modes: classic?, compact?)."""
    has_classic, has_compact = modes
    if has_classic and has_compact:
        return f"({cond_compact}) ? {compact} : {classic}"
    return compact if has_compact else classic


class _Importer:
    def __init__(self, spec: MessageSpec, label: str):
        self.spec = spec
        self.label = label
        self.v = _Versions(spec)
        self.types: dict[str, dict] = {}  # local types, in order
        self.structs = dict(spec.common_structs)
        self.where = f"{spec.path}"

    def fail(self, where: str, message: str) -> SpecError:
        return SpecError(self.spec.path, where, message)

    # -- the schema
    def schema(self) -> dict:
        spec = self.spec
        top = self.struct_type(spec.name, spec.fields, "/fields")
        sid = schema_id(spec.name)
        doc = (
            f"Kafka's {spec.name} ({spec.type or 'data'} spec"
            + (f", apiKey {spec.api_key}" if spec.api_key is not None else "")
            + f"), versions {spec.valid}"
            + (f", flexible {spec.flexible}" if not spec.flexible.empty else "")
            + f".\n\nGenerated by `kafkacodec specs import` from {spec.path} of the specs labelled"
            f" {self.label}: do not edit; import the specs again.\n"
        )
        top["-kafkacodec-message"] = {
            "spec": spec.name,
            "label": self.label,
            "source": spec.path,
            "type": spec.type or "data",
            "apiKey": spec.api_key,
            "validVersions": str(spec.valid),
            "flexibleVersions": str(spec.flexible),
            **top["-kafkacodec-message"],
        }
        out = {
            "meta": {
                "id": sid,
                "title": f"Kafka {spec.name}, from its JSON message spec ({self.label})",
                "license": "Apache-2.0",
                "endian": "be",
                "imports": [COMMON],
            },
            "doc": doc,
            "doc-ref": f"https://github.com/apache/kafka/blob/trunk/{spec.path}",
            "params": top.pop("params"),
            "seq": top.pop("seq"),
        }
        out["-kafkacodec-message"] = top.pop("-kafkacodec-message")
        if self.types:
            out["types"] = self.types
        return out

    def struct_type(self, name: str, fields: list[SpecField], where: str) -> dict:
        seq: list[dict] = []
        meta_fields = []
        tagged: list[SpecField] = []
        for i, f in enumerate(fields):
            at = f"{where}/{i}"
            if f.type == "records" or f.element == "records":
                raise self.fail(at, "records fields are not supported in internal-topic specs")
            tagged_vs = self.v.of(f.tagged)
            regular = self.v.of(f.versions) - tagged_vs
            if tagged_vs - self.v.flexible:
                raise self.fail(at, f"{f.name} is tagged in versions that are not flexible")
            if tagged_vs:
                tagged.append(f)
            seq += self.field(f, regular, at)
            meta_fields.append(self.meta(f))
        if self.v.flexible:
            flex = self.v.cond(self.v.flexible)
            seq.append(
                {
                    "id": "num_tagged_fields",
                    "type": "unsigned_varint(5)",
                    "doc": "Tagged fields that follow (flexible versions).",
                }  # fmt: skip
            )
            seq.append(
                {
                    "id": "tagged_fields",
                    "type": f"{snake(name)}_tagged_field(version)",
                    "repeat": "expr",
                    "repeat-expr": "num_tagged_fields.value",
                    "doc": "Tagged fields, known and unknown, in the order they were written.",
                }  # fmt: skip
            )
            if flex:
                seq[-2]["if"] = seq[-1]["if"] = flex
            self.tagged_type(name, tagged)
        return {
            "params": [{"id": "version", "type": "s2", "doc": "The message version."}],
            "seq": seq,
            "-kafkacodec-message": {"struct": name, "fields": meta_fields},
        }

    def add_type(self, name: str, node: dict) -> str:
        tid = snake(name)
        if tid in self.types or tid == schema_id(self.spec.name):
            raise self.fail("", f"two types are named {tid!r}")
        self.types[tid] = node
        return tid

    def struct_ref(self, f: SpecField, where: str) -> str:
        """The local type of a struct field (inline fields, or a common struct), made once."""
        name = f.element
        tid = snake(name)
        if tid in self.types:
            return tid
        fields = f.fields or self.structs.get(name)
        if fields is None:
            if not f.fields and name not in self.structs:
                raise self.fail(where, f"struct {name} has no fields and is no common struct")
        node = self.struct_type(name, fields, f"{where}/fields")
        if not f.fields and name in self.spec.common_versions:  # a common struct: its own versions
            node["-kafkacodec-message"]["versions"] = str(self.spec.common_versions[name])
        self.add_type(name, node)
        return tid

    def meta(self, f: SpecField) -> dict:
        out = {"name": f.name, "id": _field_id(f.name), "type": f.type, "versions": str(f.versions)}
        if not f.nullable.empty:
            out["nullableVersions"] = str(f.nullable)
        if not f.tagged.empty:
            out["taggedVersions"] = str(f.tagged)
            out["tag"] = f.tag
        if f.default is not None:
            out["default"] = f.default if isinstance(f.default, (int, bool)) else str(f.default)
        if f.ignorable:
            out["ignorable"] = True
        return out

    # -- one field in its regular (not tagged) versions
    def field(
        self, f: SpecField, regular: set[int], where: str, *, in_tag: bool = False
    ) -> list[dict]:
        if not regular:
            return []
        fid = _field_id(f.name)
        # In a tagged field the value is always in its compact form, and always there.
        present = None if in_tag else self.v.cond(regular)
        compact_vs = regular if in_tag else regular & self.v.flexible
        classic_vs = set() if in_tag else regular - self.v.flexible
        modes = (bool(classic_vs), bool(compact_vs))
        cond_compact = None if in_tag else self.v.cond(self.v.flexible)
        null_vs = self.v.of(f.nullable) & regular
        doc = f.about.strip() or None

        def base(attr: dict) -> dict:
            if doc:
                attr["doc"] = doc
            attr["-orig-id"] = f.name
            return attr

        el = f.element
        if not f.is_array and el in _INTS:
            return [base(_if({"id": fid, "type": _INTS[el]}, present))]
        if not f.is_array and el == "uuid":
            return [base(_if({"id": fid, "size": 16}, present))]
        if not f.is_array and not f.is_struct:  # string, bytes
            classic_t = "s2" if el == "string" else "s4"
            out, size, notnull = self.lengths(
                fid, f"len_{fid}", classic_t, present, classic_vs, compact_vs, null_vs,
                cond_compact, modes, in_tag, what="length",
            )  # fmt: skip
            value = {"id": fid}
            if el == "string":
                value.update(type="str", encoding="UTF-8")
            value["size"] = size
            out.append(base(_if(value, _and(present, notnull))))
            return out
        if not f.is_array:  # a struct
            tid = self.struct_ref(f, where)
            out = []
            notnull = None
            if null_vs:
                # Kafka's MessageDataGenerator: an int8 before a nullable struct (-1 null,
                # 1 present); in a tagged field an unsigned varint (0 null, 1 present).
                marker = f"present_{fid}"
                out.append(
                    _if(
                        {
                            "id": marker,
                            "type": "unsigned_varint(5)" if in_tag else "s1",
                            "doc": f"{'0' if in_tag else '-1'}: {f.name} is null; 1: it follows.",
                        },  # fmt: skip
                        _and(present, _in(self.v, null_vs, regular)),
                    )
                )
                nv = _in(self.v, null_vs, regular)
                test = f"{marker}.value > 0" if in_tag else f"{marker} >= 0"
                notnull = test if nv is None else f"not ({nv}) or {test}"
            out.append(base(_if({"id": fid, "type": f"{tid}(version)"}, _and(present, notnull))))
            return out
        # an array
        out, count, notnull = self.lengths(
            fid, f"num_{fid}", "s4", present, classic_vs, compact_vs, null_vs,
            cond_compact, modes, in_tag, what="count",
        )  # fmt: skip
        value = {"id": fid}
        if el in _INTS:
            value["type"] = _INTS[el]
        elif el == "uuid":
            value["size"] = 16
        elif el in ("string", "bytes"):
            value["type"] = self.item_type(el, modes, cond_compact, in_tag)
        else:
            value["type"] = f"{self.struct_ref(f, where)}(version)"
        value.update({"repeat": "expr", "repeat-expr": count})
        out.append(base(_if(value, _and(present, notnull))))
        return out

    def lengths(self, fid, lid, classic_t, present, classic_vs, compact_vs, null_vs,
                cond_compact, modes, in_tag, *, what) -> tuple[list[dict], str, str | None]:  # fmt: skip
        """The classic and compact length (or count) fields of fid; the size expression;
        the condition that the value is not null (None: never null)."""
        out = []
        if classic_vs:
            attr = {"id": lid, "type": classic_t,
                    "doc": f"The {what} of {fid}, -1 for null (versions that are not flexible).",
                    "-kafkacodec-length-of": {"field": fid, "when-null": -1}}  # fmt: skip
            attr = _if(attr, _and(present, None if in_tag else self.v.cond(classic_vs)))
            nullable = null_vs & classic_vs
            if nullable != classic_vs:  # (where nullable, any negative is null, as in Kafka's readers)
                ok = "_ >= 0" if not nullable else f"_ >= 0 or ({self.v.cond(nullable)})"
                attr["valid"] = {"expr": ok}
            out.append(attr)
        if compact_vs:
            cid = f"{lid}_compact" if classic_vs else lid
            attr = {"id": cid, "type": "unsigned_varint(5)",
                    "doc": f"The {what} of {fid} + 1, 0 for null (flexible versions).",
                    "-kafkacodec-length-of": {"field": fid, "plus": 1, "when-null": 0}}  # fmt: skip
            attr = _if(attr, _and(present, None if in_tag else self.v.cond(compact_vs)))
            nullable = null_vs & compact_vs
            if nullable != compact_vs:
                ok = (
                    "_.value >= 1" if not nullable else f"_.value >= 1 or ({self.v.cond(nullable)})"
                )
                attr["valid"] = {"expr": ok}
            out.append(attr)
        cid = f"{lid}_compact" if classic_vs else lid
        size = _pick(cond_compact, f"{cid}.value - 1", lid, modes)
        notnull = None
        if null_vs:
            notnull = _pick(cond_compact, f"{cid}.value != 0", f"{lid} >= 0", modes)
        return out, size, notnull

    def item_type(self, el: str, modes, cond_compact, in_tag) -> str:
        """A helper type for one string (or bytes) of an array."""
        has_classic, has_compact = modes
        kind = "str" if el == "string" else "bytes"
        classic_t = "s2" if el == "string" else "s4"
        value = {"id": "value"}
        if kind == "str":
            value.update(type="str", encoding="UTF-8")
        if has_classic and has_compact:
            name = f"{kind}_item"
            node = {
                "doc": f"One {el} of an array: classic or compact length.",
                "params": [{"id": "compact", "type": "bool", "doc": "A flexible version's compact length."}],
                "seq": [
                    {"id": "len_value", "type": classic_t, "if": "not compact", "valid": {"expr": "_ >= 0"},
                     "-kafkacodec-length-of": {"field": "value"}},
                    {"id": "len_value_compact", "type": "unsigned_varint(5)", "if": "compact",
                     "valid": {"expr": "_.value >= 1"},
                     "-kafkacodec-length-of": {"field": "value", "plus": 1, "when-null": 0}},
                    {**value, "size": "compact ? len_value_compact.value - 1 : len_value"},
                ],
            }  # fmt: skip
            self.types.setdefault(name, node)
            return f"{name}({cond_compact})"
        compact = has_compact
        name = f"{'compact' if compact else 'classic'}_{kind}_item"
        len_field = (
            {"id": "len_value", "type": "unsigned_varint(5)", "valid": {"expr": "_.value >= 1"},
             "-kafkacodec-length-of": {"field": "value", "plus": 1, "when-null": 0}}
            if compact else
            {"id": "len_value", "type": classic_t, "valid": {"expr": "_ >= 0"},
             "-kafkacodec-length-of": {"field": "value"}}
        )  # fmt: skip
        node = {
            "doc": f"One {el} of an array ({'compact' if compact else 'classic'} length).",
            "seq": [
                len_field,
                {**value, "size": "len_value.value - 1" if compact else "len_value"},
            ],
        }
        self.types.setdefault(name, node)
        return name

    # -- the tagged fields of one struct
    def tagged_type(self, name: str, tagged: list[SpecField]) -> None:
        base = snake(name)
        cases = {}
        for f in sorted(tagged, key=lambda f: f.tag):
            tag_name = f"{base}_tag_{f.tag}"
            tagged_vs = self.v.of(f.tagged)
            seq = self.field(f, tagged_vs, f"tagged {f.name}", in_tag=True)
            if self.v.flexible - tagged_vs:
                # Kafka's generated readers (MessageDataGenerator) throw "Tag N is not valid
                # for version V" on a known tag outside its taggedVersions.
                seq.insert(0, {
                    "id": TAG_VERSION_CHECK, "size": 0, "valid": {"expr": self.v.cond(tagged_vs)},
                    "doc": f"Nothing: the check that the message version is one of the tag's "
                           f"({f.tagged}); Kafka refuses tag {f.tag} at any other.",
                })  # fmt: skip
            seq.append(
                {"id": TAG_UNREAD, "size-eos": True, "valid": {"expr": "_.size == 0"},
                 "doc": "Bytes of the tagged field after its value: none (a size that says more "
                        "than the value takes is corrupt; Kafka would read on from the wrong byte)."}
            )  # fmt: skip
            self.types[tag_name] = {
                "doc": f"Tagged field {f.tag}: {f.name}.",
                "params": [{"id": "version", "type": "s2"}],
                "seq": seq,
            }
            if str(f.tag) in cases or f.tag in cases:
                raise self.fail("", f"tag {f.tag} is used twice in {name}")
            cases[f.tag] = f"{tag_name}(version)"
        data = {"id": "value", "size": "len_value.value",
                "doc": "The field's value; an unknown tag's raw bytes."}  # fmt: skip
        if cases:
            # As an int: Kafka reads a tag into an int, and Java cannot switch on a long
            # (the varint's value is 64-bit in every target).
            data["type"] = {"switch-on": "tag.value.as<s4>", "cases": cases}
        self.types[f"{base}_tagged_field"] = {
            "doc": f"One tagged field of {name}: tag, size, value.",
            "params": [{"id": "version", "type": "s2"}],
            "seq": [
                {"id": "tag", "type": "unsigned_varint(5)"},
                {"id": "len_value", "type": "unsigned_varint(5)",
                 "-kafkacodec-length-of": {"field": "value"}},
                data,
            ],
        }  # fmt: skip


def _if(attr: dict, cond: str | None) -> dict:
    if cond is not None:
        attr["if"] = cond
    return attr


def _in(v: _Versions, subset: set[int], within: set[int]) -> str | None:
    """A condition for subset, knowing the version is in within (None: all of within)."""
    return None if subset == within else v.cond(subset)


# ---------------------------------------------------------------------------------------
# Framing: what Kafka puts around the specs' structs in each topic.


def _coordinator_pairs(
    specs: list[MessageSpec], where: str, skipped: list[tuple[str, str]]
) -> list[tuple[int, MessageSpec, int, MessageSpec | None]]:
    """(record type, key spec, key version, value spec) for each coordinator record type:
    before Kafka 4.0 a key's version is its record type and a value goes with the key of
    the same name; from 4.0 (coordinator-key / coordinator-value) both carry the record
    type as apiKey and the key is read at version 0. A record type two keys claim is left
    out of the framing (and reported in skipped): nothing says which one a record is."""
    by_name = {s.name: s for s in specs}
    values_by_type = {s.api_key: s for s in specs if s.type == "coordinator-value"}
    claims: dict[int, list[tuple[MessageSpec, int, MessageSpec | None]]] = {}
    for s in specs:
        if s.type == "coordinator-key":
            types = [(s.api_key, 0)]
            # a value of the same apiKey; else (specs of mixed conventions) of the same name
            value = values_by_type.get(s.api_key) or by_name.get(s.name[:-3] + "Value")
        elif s.name.endswith("Key") and s.type == "data":
            types = [(v, v) for v in s.versions]
            value = by_name.get(s.name[:-3] + "Value")
        else:
            continue
        for rtype, key_version in types:
            claims.setdefault(rtype, []).append((s, key_version, value))
    out = []
    for rtype, found in sorted(claims.items()):
        if len(found) > 1:
            names = " and ".join(s.name for s, _kv, _v in found)
            skipped.append((f"{where} record type {rtype}", f"claimed by {names}: left out"))
            continue
        s, key_version, value = found[0]
        out.append((rtype, s, key_version, value))
    return out


def _framing_meta(fid: str, title: str, doc: str, imports: list[str], label: str) -> dict:
    return {
        "meta": {"id": fid, "title": title, "license": "Apache-2.0", "endian": "be",
                 "imports": [COMMON, *sorted(set(imports))]},
        "doc": doc + f"\nGenerated by `kafkacodec specs import` (specs labelled {label}): do not edit.\n",
    }  # fmt: skip


def framings(
    specs: dict[str, MessageSpec], label: str, skipped: list[tuple[str, str]]
) -> dict[str, dict]:
    out: dict[str, dict] = {}
    for topic_name, t in COORDINATOR_TOPICS.items():
        topic = t.framing
        mine = [s for s in specs.values() if s.folder in t.folders]
        pairs = _coordinator_pairs(mine, topic_name, skipped)
        if not pairs:
            continue
        # A key before 4.0 is read at its record type, which is its version.
        # (a literal is cast: the parameter is an s2, and Java's compiler takes no int for it)
        key_cases = {
            rt: f"{schema_id(k.name)}({'record_type' if kv == rt else f'{kv}.as<s2>'})"
            for rt, k, kv, _v in pairs
        }
        value_cases = {rt: f"{schema_id(v.name)}(version)" for rt, _k, _kv, v in pairs if v}
        table = [
            {"recordType": rt, "key": k.name, "keySchema": schema_id(k.name), "keyVersion": kv,
             "value": v.name if v else None, "valueSchema": schema_id(v.name) if v else None}
            for rt, k, kv, v in pairs
        ]  # fmt: skip
        imports = [schema_id(k.name) for _rt, k, _kv, _v in pairs]
        key = _framing_meta(
            f"{topic}_key", f"Record key of {topic_name}",
            f"A record key of {topic_name}: the record type (int16), then the key struct of\n"
            "that type. Kafka's CoordinatorRecordSerde.",
            imports, label,
        )  # fmt: skip
        key["seq"] = [
            {"id": "record_type", "type": "s2"},
            {"id": "key", "type": {"switch-on": "record_type", "cases": key_cases}},
        ]
        key["-kafkacodec-message"] = {
            "framing": "coordinator-key",
            "topic": topic_name,
            "records": table,
        }
        out[f"{topic}_key"] = key
        value = _framing_meta(
            f"{topic}_value", f"Record value of {topic_name}",
            f"A record value of {topic_name}: the value version (int16), then the value struct\n"
            "of the record type its key names, at that version. A null value (no bytes) is a\n"
            "tombstone. Kafka's CoordinatorRecordSerde.",
            [schema_id(v.name) for _rt, _k, _kv, v in pairs if v], label,
        )  # fmt: skip
        value["params"] = [
            {"id": "record_type", "type": "s2", "doc": "The record type of the key."}
        ]
        value["seq"] = [
            {"id": "version", "type": "s2"},
            {"id": "value", "type": {"switch-on": "record_type", "cases": value_cases}},
        ]
        value["-kafkacodec-message"] = {
            "framing": "coordinator-value",
            "topic": topic_name,
            "records": table,
        }
        out[f"{topic}_value"] = value
    for topic_name, t in METADATA_TOPICS.items():
        mine = sorted(
            (s for s in specs.values() if s.folder in t.folders and s.type == "metadata"),
            key=lambda s: s.api_key,
        )
        if not mine:
            continue
        claims: dict[int, list[str]] = {}
        for s in mine:
            claims.setdefault(s.api_key, []).append(s.name)
        for key, names in claims.items():
            if len(names) > 1:  # nothing says which one a record is
                skipped.append(
                    (f"{topic_name} apiKey {key}", f"claimed by {' and '.join(names)}: left out")
                )
        mine = [s for s in mine if len(claims[s.api_key]) == 1]
        rec = _framing_meta(
            t.framing, f"Record value of {topic_name}",
            f"A record value of {topic_name}: an unsigned varint frame version (1), the\n"
            "record's apiKey and version (unsigned varints), then the struct. Kafka's\n"
            "AbstractApiMessageSerde.",
            [schema_id(s.name) for s in mine], label,
        )  # fmt: skip
        rec["seq"] = [
            {"id": "frame_version", "type": "unsigned_varint(5)", "valid": {"expr": "_.value == 1"}},
            # Kafka reads both into a short and refuses more ("Value for version was too
            # large.", AbstractApiMessageSerde.unsignedIntToShort).
            {"id": "api_key", "type": "unsigned_varint(5)", "valid": {"expr": "_.value <= 32767"}},
            {"id": "version", "type": "unsigned_varint(5)", "valid": {"expr": "_.value <= 32767"}},
            {"id": "message", "type": {"switch-on": "api_key.value.as<s4>",
                                       "cases": {s.api_key: f"{schema_id(s.name)}(version.value.as<s2>)" for s in mine}}},
        ]  # fmt: skip
        rec["-kafkacodec-message"] = {
            "framing": "metadata", "topic": topic_name,
            "records": [{"apiKey": s.api_key, "spec": s.name, "schema": schema_id(s.name),
                         "typeName": record_type_name(s.name)} for s in mine],
        }  # fmt: skip
        out[t.framing] = rec
    control = [(n, specs[s]) for n, s in CONTROL_SPECS.items() if s in specs]
    if control:
        numbers = _control_numbers()
        rec = _framing_meta(
            "kraft_control_value", "Value of a KRaft control record",
            "The value of a KRaft control record (a control batch of __cluster_metadata or of a\n"
            "snapshot): the struct of the control type its key names. Nothing in the bytes\n"
            "gives the struct's version: Kafka's ControlRecordUtils reads each at its current\n"
            "version, and kafka-dump-log at 0, whatever the struct's own Version field says.",
            [schema_id(s.name) for _n, s in control], label,
        )  # fmt: skip
        rec["params"] = [
            {"id": "control_type", "type": "u2", "doc": "The control type of the key."},
            {"id": "version", "type": "s2", "doc": "The version to read the struct at."},
        ]
        rec["seq"] = [
            {"id": "message", "type": {"switch-on": "control_type",
                                       "cases": {numbers[n]: f"{schema_id(s.name)}(version)" for n, s in control}}},
        ]  # fmt: skip
        rec["-kafkacodec-message"] = {
            "framing": "control",
            "records": [{"controlType": numbers[n], "spec": s.name, "schema": schema_id(s.name)}
                        for n, s in control],
        }  # fmt: skip
        out["kraft_control_value"] = rec
    for name, where in VERSIONED.items():
        if name not in specs:
            continue
        fid = f"{schema_id(name)}_framed"
        rec = _framing_meta(
            fid, f"{name} with its version",
            f"A {name} as {where}: the version (int16), then the struct.",
            [schema_id(name)], label,
        )  # fmt: skip
        rec["seq"] = [
            {"id": "version", "type": "s2"},
            {"id": "message", "type": f"{schema_id(name)}(version)"},
        ]
        rec["-kafkacodec-message"] = {
            "framing": "versioned",
            "records": [{"spec": name, "schema": schema_id(name)}],
        }
        out[fid] = rec
    return out


def _control_numbers() -> dict[str, int]:
    """schemas/kafka_control_record_key.ksy's control types, by name."""
    from kafkacodec.schemas import __path__ as schema_path

    node = yaml.safe_load((Path(schema_path[0]) / "kafka_control_record_key.ksy").read_text())
    members = node["enums"]["control_record_type"].items()
    return {str(label["id"] if isinstance(label, dict) else label): int(num) for num, label in members}


# ---------------------------------------------------------------------------------------


_ORDER = ("id", "-orig-id", "type", "encoding", "size", "size-eos", "if", "repeat", "repeat-expr",
          "valid", "-kafkacodec-length-of", "doc")  # fmt: skip


class _Dumper(yaml.SafeDumper):
    """Block style for text of several lines; attributes in Kaitai's usual order."""


def _str(dumper: yaml.SafeDumper, text: str):
    style = "|" if "\n" in text else None
    return dumper.represent_scalar("tag:yaml.org,2002:str", text, style=style)


def _dict(dumper: yaml.SafeDumper, node: dict):
    if "id" in node and not isinstance(node.get("id"), dict):
        rank = {k: i for i, k in enumerate(_ORDER)}
        node = dict(sorted(node.items(), key=lambda kv: rank.get(kv[0], len(rank))))
    return dumper.represent_mapping("tag:yaml.org,2002:map", node.items())


_Dumper.add_representer(str, _str)
_Dumper.add_representer(dict, _dict)


def _dump(node: dict) -> str:
    return yaml.dump(node, Dumper=_Dumper, sort_keys=False, allow_unicode=True, width=100)


def import_specs(spec_dir: Path | str, label: str) -> ImportResult:
    """Every spec below spec_dir as a Kaitai schema, plus the framings: id -> .ksy text."""
    specs = load_specs(spec_dir)
    files: dict[str, str] = {}
    skipped: list[tuple[str, str]] = []
    protocol = sorted(name for name, s in specs.items() if s.type not in STORED_TYPES)
    if protocol:
        kinds = sorted({specs[name].type or "untyped" for name in protocol})
        skipped.append((f"{len(protocol)} {', '.join(kinds)} specs",
                        "the wire protocol's messages, not stored in a log or state file"))  # fmt: skip
    for name in sorted(set(RECORD_FORMAT_SPECS) & set(specs)):
        skipped.append((name, f"the record format's own schema: schemas/{RECORD_FORMAT_SPECS[name]}.ksy"))
    specs = {n: s for n, s in specs.items() if s.type in STORED_TYPES and n not in RECORD_FORMAT_SPECS}
    for name, spec in sorted(specs.items()):
        if not spec.versions:
            skipped.append((name, f"validVersions {spec.valid} names no version"))
            continue
        node = _Importer(spec, label).schema()
        sid = schema_id(name)
        if sid in files:
            raise SpecError(spec.path, "/name", f"two specs make the schema {sid}")
        files[sid] = _dump(node)
    for fid, node in framings(specs, label, skipped).items():
        files[fid] = _dump(node)
    return ImportResult(files, skipped)


def write_schemas(result: ImportResult, out_dir: Path) -> list[str]:
    """Write the schemas into out_dir, removing .ksy files an earlier import wrote there
    that this one did not; return the names of the files that changed."""
    out_dir.mkdir(parents=True, exist_ok=True)
    changed = []
    common = out_dir.parent / "common" / "unsigned_varint.ksy"
    if not common.exists():  # what the schemas import (COMMON), beside a folder of our own
        from kafkacodec.schemas import __path__ as schema_path

        common.parent.mkdir(parents=True, exist_ok=True)
        common.write_bytes((Path(schema_path[0]) / "common" / "unsigned_varint.ksy").read_bytes())
        changed.append(str(common))
    wanted = {f"{sid}.ksy": text for sid, text in result.files.items()}
    for name, text in wanted.items():
        p = out_dir / name
        if not p.exists() or p.read_text(encoding="utf-8") != text:
            p.write_text(text, encoding="utf-8")
            changed.append(name)
    for p in sorted(out_dir.glob("*.ksy")):
        if p.name not in wanted and "kafkacodec specs import" in p.read_text(encoding="utf-8"):
            p.unlink()
            changed.append(p.name)
    return changed


def generate_codecs(source: Path | str, dest: Path, label: str | None = None) -> tuple[ImportResult, Path]:
    """The codecs of a source of specs (load_specs' sources: a Kafka release's libs/, a
    source tree, a copy of its specs), generated into dest: its schemas in
    dest/schemas/internal/, its modules in dest/generated/ (load them with
    kafkacodec.internal.Codecs.load). Returns the import's result and that folder."""
    from .render import render_all

    result = import_specs(source, label or Path(source).resolve().name)
    schemas = Path(dest) / "schemas"
    write_schemas(result, schemas / "internal")
    out = Path(dest) / "generated"
    out.mkdir(parents=True, exist_ok=True)
    for name, text in render_all(schemas, raw=True).items():
        if name.endswith(".py") and "/" not in name:  # the modules, not construct/ or c/
            (out / name).write_text(text, encoding="utf-8")
    return result, out

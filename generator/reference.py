"""From the IR to a Markdown reference per format (generated/reference/): byte layout
tables with each field's offset (while it is fixed), type and description (where its bytes
are: its condition, size and repetition; then its documentation), in four columns that fit
a page."""

from __future__ import annotations

from dataclasses import dataclass, field

from .ir import FieldIR, ModuleIR, TypeIR


@dataclass
class Row:
    offset: str
    name: str
    type: str
    doc: str


@dataclass
class RType:
    name: str
    anchor: str
    doc: str
    params: list[tuple[str, str]]
    rows: list[Row]
    instances: list[Row]
    notes: list[str] = field(default_factory=list)


def _cell(text) -> str:
    return " ".join(str(text).split()).replace("|", "\\|")


def _code(text) -> str:
    return f"`{_cell(text)}`" if text not in (None, "") else ""


def breakable(name: str) -> str:
    """A snake_case name that a narrow column may wrap after its underscores (<wbr>: a
    copy of the name is still the name), for the field and type columns."""
    return name.replace("_", "_<wbr>")


def anchor(name: str) -> str:
    """The anchor of a type's heading ("## name"): its slug as GitHub and MyST make one
    (lower case, underscores kept)."""
    return name.lower()


def _type(f: FieldIR, local: set[str]) -> str:
    """A field's type in a few words (the type column stays narrow: how long it is, how
    often it repeats and what it passes through are _layout's, in the description)."""
    k = f.ksy
    if f.fixed:
        text = f.ksy_type
    elif f.kind == "varint":
        how = "zig-zag" if f.varint_signed else "unsigned"
        text = f"varint ({how}, 1-5 bytes)" if f.max_len == 5 else f"varlong ({how}, 1-10 bytes)"
    elif f.kind == "contents":
        text = "bytes (fixed)"
    elif f.kind in ("bytes", "str"):
        text = "bytes" if f.kind == "bytes" else f"{f.encoding} text"
    elif f.kind == "user":
        name = str(k.get("type")).split("(")[0]
        link = f"#{anchor(name)}" if name in local else f"{name}.md"
        text = f"[{breakable(name)}]({link})"
    else:  # switch: its cases are _layout's
        text = "one of several types"
    return f"list of {text}" if f.repeat else text


def _layout(f: FieldIR) -> str:
    """Where a field's bytes are, when its type alone does not say: its condition, the
    type's arguments, its size, what it passes through, how often it repeats."""
    k = f.ksy
    out = []
    if k.get("if") is not None:
        out.append(f"Present when {_code(k.get('if'))}.")
    if f.kind == "contents":
        out.append(f"The bytes {f.contents.hex()}.")
    elif f.kind in ("bytes", "str"):
        out.append("To the end of its structure." if f.size_eos else f"Size {_code(k.get('size'))}.")
    elif f.kind == "user":
        if "(" in str(k.get("type")):
            out.append(f"Arguments {_code('(' + str(k.get('type')).split('(', 1)[1])}.")
        if k.get("size") is not None:
            out.append(f"In {_code(k.get('size'))} bytes.")
    elif f.kind == "switch":
        cases = k["type"]["cases"]
        out.append(f"By {_code(k['type']['switch-on'])}: " + ", ".join(f"{key} → {v}" for key, v in cases.items()) + ".")
    if f.process:
        out.append(f"Through {_code(k.get('process'))}.")
    if f.repeat == "expr":
        out.append(f"{_code(k.get('repeat-expr'))} of them.")
    elif f.repeat == "eos":
        out.append("Repeated to the end.")
    elif f.repeat == "until":
        out.append(f"Repeated until {_code(k.get('repeat-until'))}.")
    return " ".join(out)


def _derived(f: FieldIR) -> str:
    if f.length_of_rest:
        return "Derived: the length of every byte after it."
    if f.crc_algorithm:
        return f"Derived: the {f.crc_algorithm.upper()} of `{f.crc_from}` to the end."
    if f.size_of:
        return (
            "Derived: the length of "
            + ", ".join(f"`{n}`" for n in f.size_of)
            + (f" plus {f.length_plus}" if f.length_plus else "")
            + f" ({f.length_when_null} when null)."
        )
    if f.count_of:
        return f"Derived: the number of `{f.count_of}`."
    if f.derive:
        return f"Derived: {_code(f.ksy.get('-kafkacodec-derive'))}."
    return ""


def _valid(f: FieldIR) -> str:
    v = f.ksy.get("valid")
    if v is None:
        return ""
    if not isinstance(v, dict):
        return f"Must be {v}."
    parts = []
    for key, word in (("eq", "equal"), ("min", "at least"), ("max", "at most")):
        if key in v:
            parts.append(f"{word} {v[key]}")
    if "any-of" in v:
        parts.append("one of " + ", ".join(str(x) for x in v["any-of"]))
    if "expr" in v:
        parts.append(f"such that {_code(v['expr'])}")
    return "Must be " + " and ".join(parts) + "."


def plan_type(t: TypeIR, local: set[str], skip_doc: bool = False) -> RType:
    """skip_doc: the top type, whose doc is the page's introduction."""
    rows, offset = [], 0
    for f in t.fields:
        fixed = offset is not None
        width = (
            f.width if (f.fixed or f.kind == "contents") and not f.cond and not f.is_list else None
        )
        doc = " ".join(x for x in (_layout(f), _cell(f.doc), _derived(f), _valid(f)) if x)
        if f.orig_id:
            doc += f" (Kafka: `{f.orig_id}`)"
        rows.append(
            Row(str(offset) if fixed else "", f"<code>{breakable(f.name)}</code>", _type(f, local), doc)
        )
        offset = offset + width if fixed and width is not None else None
    instances = []
    for inst in t.instances:
        what = (
            f"at {_code(inst.ksy.get('pos'))}: {inst.ksy.get('type')}"
            if inst.kind == "pos"
            else _code(inst.ksy.get("value"))
        )
        if inst.ksy.get("enum"):
            what += f" as [{inst.ksy['enum']}](#{anchor(inst.ksy['enum'])})"
        instances.append(Row("", inst.name, what, _cell(inst.doc)))
    return RType(
        t.name,
        anchor(t.name),
        "" if skip_doc else t.doc,
        [(p.name, _cell(p.doc)) for p in t.params],
        rows,
        instances,
    )


def plan(mod: ModuleIR) -> dict:
    local = {t.name for t in mod.types}
    return {
        "mod": mod,
        # a link is a link (an autolink), not text to copy into a browser
        "references": ", ".join(f"<{r}>" if str(r).startswith(("http://", "https://")) else str(r)
                                for r in mod.doc_ref or ()),  # fmt: skip
        "types": [plan_type(t, local, skip_doc=i == 0) for i, t in enumerate(mod.types)],
        "enums": [(e.name, anchor(e.name), e.members) for e in mod.enums],
    }


#: The format reference's sections, in the order a reader looks for them: what a segment
#: holds first, then its indexes, then each internal topic's payloads, then the state
#: files. Each: (title, what it holds, its schemas' first pages in reading order).
SECTIONS = [
    ("Records and log segments", "what a .log file holds, batch by batch",
     ["kafka_record_batch", "kafka_record", "kafka_control_record_key", "kafka_end_txn_marker",
      "kafka_legacy_message", "kafka_log", "kafka07_message"]),
    ("Index files", "the .index, .timeindex and .txnindex beside each segment", []),
    ("__consumer_offsets", "consumer groups: offsets committed, group metadata, the consumer protocol",
     ["consumer_offsets_key", "consumer_offsets_value"]),
    ("__transaction_state", "transactional producers", ["transaction_state_key", "transaction_state_value"]),
    ("__share_group_state", "share groups (KIP-932)", ["share_group_state_key", "share_group_state_value"]),
    ("__cluster_metadata", "KRaft's metadata log and its control records", ["cluster_metadata_record", "kraft_control_value"]),
    ("__remote_log_metadata", "tiered storage's segment metadata", ["remote_log_metadata_record"]),
    ("State files", "the producer snapshots and KRaft's quorum-state beside the logs", []),
    ("Other payloads", "structures the others embed", []),
]  # fmt: skip

#: Where a schema imported from Kafka's JSON message specs belongs: the folder of its spec
#: in Kafka's source (its doc-ref), or its name.
_SPEC_FOLDERS = {
    "group-coordinator/": "__consumer_offsets",
    "transaction-coordinator/": "__transaction_state",
    "share-coordinator/": "__share_group_state",
    "metadata/": "__cluster_metadata",
    "storage/message/RemoteLog": "__remote_log_metadata",
    "storage/message/RemotePartition": "__remote_log_metadata",
}
_NAMED = [
    ("consumer_protocol_", "__consumer_offsets"), ("consumer_offsets_", "__consumer_offsets"),
    ("transaction_state_", "__transaction_state"), ("share_group_state_", "__share_group_state"),
    ("cluster_metadata_", "__cluster_metadata"), ("kraft_control_", "__cluster_metadata"),
    ("leader_change_", "__cluster_metadata"), ("snapshot_", "__cluster_metadata"),
    ("voters_", "__cluster_metadata"), ("k_raft_version_", "__cluster_metadata"),
    ("remote_log_metadata_", "__remote_log_metadata"), ("producer_snapshot", "State files"),
    ("quorum_state", "State files"),
]  # fmt: skip


def section(mod: ModuleIR) -> str:
    """The title of the section of the format reference a schema's page is listed in."""
    if "/internal/" not in f"/{mod.source}":
        return "Index files" if mod.id.endswith("_index") else "Records and log segments"
    for prefix, title in _NAMED:
        if mod.id.startswith(prefix):
            return title
    for ref in mod.doc_ref:
        for folder, title in _SPEC_FOLDERS.items():
            if f"/{folder}" in str(ref):
                return title
    return "Other payloads"


def index_plan(modules: list[ModuleIR]) -> list[tuple[str, str, list[ModuleIR]]]:
    """The format reference's index: (section title, what it holds, its modules) for each
    section with a module, in SECTIONS' order; in a section, its first pages, then the rest
    by title."""
    out = []
    for title, what, first in SECTIONS:
        mods = [m for m in modules if section(m) == title]
        mods.sort(key=lambda m: (first.index(m.id) if m.id in first else len(first), m.title.lower()))
        if mods:
            out.append((title, what, mods))
    return out

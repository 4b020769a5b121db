"""From the IR to a Markdown reference per format (generated/reference/): byte layout
tables with each field's offset (while it is fixed), type, presence and documentation."""

from __future__ import annotations

from dataclasses import dataclass, field

from .ir import FieldIR, ModuleIR, TypeIR


@dataclass
class Row:
    offset: str
    name: str
    type: str
    when: str
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


def anchor(name: str) -> str:
    """The anchor of a type's heading ("## name"): its slug as GitHub and MyST make one
    (lower case, underscores kept)."""
    return name.lower()


def _type(f: FieldIR, local: set[str]) -> str:
    k = f.ksy
    if f.fixed:
        text = f.ksy_type
    elif f.kind == "varint":
        how = "zig-zag" if f.varint_signed else "unsigned"
        text = f"varint ({how}, 1-5 bytes)" if f.max_len == 5 else f"varlong ({how}, 1-10 bytes)"
    elif f.kind == "contents":
        text = f"bytes {f.contents.hex()} (fixed)"
    elif f.kind in ("bytes", "str"):
        size = "to the end" if f.size_eos else _code(k.get("size"))
        text = f"bytes, size {size}" if f.kind == "bytes" else f"{f.encoding} text, size {size}"
    elif f.kind == "user":
        name = str(k.get("type")).split("(")[0]
        text = f"[{name}](#{anchor(name)})" if name in local else f"[{name}]({name}.md)"
        if "(" in str(k.get("type")):
            text += " " + _code("(" + str(k.get("type")).split("(", 1)[1])
        if k.get("size") is not None:
            text += f", in {_code(k.get('size'))} bytes"
    else:
        cases = k["type"]["cases"]
        text = f"by {_code(k['type']['switch-on'])}: " + ", ".join(
            f"{key} → {v}" for key, v in cases.items()
        )
    if f.process:
        text += f", through {_code(k.get('process'))}"
    if f.repeat == "expr":
        text += f", × {_code(k.get('repeat-expr'))}"
    elif f.repeat == "eos":
        text += ", repeated to the end"
    elif f.repeat == "until":
        text += f", repeated until {_code(k.get('repeat-until'))}"
    return text


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
        doc = " ".join(x for x in (_cell(f.doc), _derived(f), _valid(f)) if x)
        if f.orig_id:
            doc += f" (Kafka: `{f.orig_id}`)"
        rows.append(
            Row(str(offset) if fixed else "", f.name, _type(f, local), _code(f.ksy.get("if")), doc)
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
        instances.append(Row("", inst.name, what, "", _cell(inst.doc)))
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
        "types": [plan_type(t, local, skip_doc=i == 0) for i, t in enumerate(mod.types)],
        "enums": [(e.name, anchor(e.name), e.members) for e in mod.enums],
    }

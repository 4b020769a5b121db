"""The Rust target: the schemas as a Rust crate of parsers (rust/, module `gen`), from the
same IR as the Python parsers and the Go package, with the same checks and the same errors.

The official compiler's Rust output does not build against any runtime on crates.io (the
official Kaitai Rust runtime is not published there; 252 errors against its repository's),
so, as for Go, this target reads a byte slice with explicit bounds, borrowing from it: byte
fields are slices of the input (or of a decompressed region, kept in the caller's Arena for
as long as the parsed value lives), strings borrow too when they are UTF-8 (Cow), and a
record costs no allocation but its list of headers. Every integer expression is
computed in i64 with Java's wrapping arithmetic (the schemas' arithmetic stays within 64
bits), varints are read with Kafka's bounds, and the runtime the code calls is small and
hand-written beside it (rust/src/runtime.rs: errors, varints, CRCs, the JSON tree;
rust/src/compression.rs: Kafka's codecs as Kafka's Java streams read them). No `unsafe`,
no panic: every index is checked before it is made, every error is a value.

Per type T of a schema (nested types prefixed with the schema's class, KafkaLogEntry):

    pub struct T<'a> { pub field: RustType, ... }       fields in byte order, params first
    impl<'a> T<'a> {
        pub fn parse(data: &'a [u8], params..., verify: bool[, arena: &'a Arena]) -> Result<T<'a>>
        pub fn instance(&self) -> i64                                       each value instance
    }

A type with no byte or string field (nor one in a type it holds) has no lifetime; one that
decompresses (a `process`, or a type it holds does) takes the Arena its regions are kept in.

A field under `if` is an Option (None: absent), a user type a Box (recursive types), a
`switch` type an enum of its cases (and Raw bytes for a sized one no case reads).
"""

from __future__ import annotations

import re

from .errors import SchemaError
from .expr import parse_expr
from .ir import FieldIR, InstanceIR, ModuleIR, SchemaSet, TypeIR, camel
from .targets import TargetModule, TargetTranslator, Unparsed, comment, format_sources
from .targets import indent as _indent

__all__ = ["render_rust"]

_RS_INT = {"b": "i8", "B": "u8", "h": "i16", "H": "u16", "i": "i32", "I": "u32",
           "q": "i64", "Q": "u64", "f": "f32", "d": "f64"}  # fmt: skip
_RS_OPS = {"and": "&&", "or": "||"}
_WRAPPING = {"+": "wrapping_add", "-": "wrapping_sub", "*": "wrapping_mul"}
_KEYWORDS = {"type", "fn", "match", "ref", "mod", "move", "self", "super", "crate", "loop", "impl",
             "trait", "use", "where", "as", "box", "in", "let", "mut", "pub", "static", "struct",
             "enum", "const", "true", "false", "if", "else", "for", "while", "break", "continue",
             "return", "unsafe", "extern", "dyn", "async", "await", "abstract", "final", "macro",
             "override", "priv", "typeof", "unsized", "virtual", "yield", "try", "gen"}  # fmt: skip


def _q(text: str) -> str:
    """A Rust string literal."""
    return '"' + text.replace("\\", "\\\\").replace('"', '\\"').replace("\n", "\\n") + '"'


def _snake(name: str) -> str:
    """A Rust field or local for a schema name, clear of Rust's keywords."""
    return f"r#{name}" if name in _KEYWORDS else name


def _const(name: str) -> str:
    return re.sub(r"[^A-Z0-9]+", "_", re.sub(r"([a-z0-9])([A-Z])", r"\1_\2", name).upper()).strip("_")


class _Module(TargetModule):
    LANGUAGE = "Rust"

    def __init__(self, mod: ModuleIR):
        self.TRANSLATOR = _Translator
        super().__init__(mod)
        #: Rust names of the types that borrow from the input (and have a lifetime) and of
        #: those that decompress (and take an Arena): set by render_rust over every schema
        self.borrowing: set[str] = set()
        self.arena: set[str] = set()

    def lt(self, rs_name: str, name: str = "'a") -> str:
        """The type's lifetime parameter (named name: "'_" where it is elided), if it borrows."""
        return f"<{name}>" if rs_name in self.borrowing else ""

    def refs(self, t: TypeIR) -> tuple[bool, bool, set[str]]:
        """(borrows itself, decompresses itself, the Rust names of the types its fields hold)."""
        borrows = any(f.kind in ("bytes", "contents", "str", "switch") or f.lazy for f in t.fields)
        unpacks = any(f.process for f in t.fields)
        held = set()
        for f in t.fields:
            if f.kind == "user" and f.user_class:
                held.add(self.rs_class(f.user_class))
            if f.kind == "switch":
                held |= {self.rs_class(c) for c in self._switch_classes(f)}
        return borrows, unpacks, held

    def rs_class(self, cls: str) -> str:
        return self.class_of(cls)

    def enum_const(self, enum_class: str, label: str) -> str:
        return _const(self.prefix + enum_class + camel(label.lower()))

    def switch_enum(self, t: TypeIR, f: FieldIR) -> str:
        return self.rs_class(t.class_name) + camel(f.name)

    def negated_expr(self, t: TypeIR, text, where: str, item) -> str:
        """`a OP b` fails as `a NOT-OP b` (what clippy asks of a negated comparison)."""
        node = parse_expr(text, where)
        if node.kind == "binary" and node.value in _NEGATED:
            a, b = (self.expr(t, Unparsed(x), where, item)[0] for x in node.args)
            return f"{a} {_NEGATED[node.value]} {b}"
        return super().negated_expr(t, text, where, item)

    # -- types of fields
    def elem_type(self, t: TypeIR, f: FieldIR) -> str:
        if f.kind in ("int", "float"):
            return _RS_INT[f.fmt]
        if f.kind == "varint":
            return "i64"
        if f.kind in ("bytes", "contents"):
            return "&'a [u8]"
        if f.kind == "str":
            return "Cow<'a, str>"
        if f.kind == "user":
            cls = self.rs_class(f.user_class or "")
            return cls + self.lt(cls)
        if f.kind == "switch":
            return self.switch_enum(t, f) + "<'a>"
        raise SchemaError(f.path, f"the Rust target does not read a {f.kind} field")

    def field_type(self, t: TypeIR, f: FieldIR) -> str:
        elem = self.elem_type(t, f)
        if f.is_list:
            return f"Option<Vec<{elem}>>" if f.cond else f"Vec<{elem}>"
        if f.kind in ("user", "switch"):
            return f"Option<Box<{elem}>>"
        if f.cond or f.lazy:
            return f"Option<{elem}>"
        return elem

    def value_of(self, f: FieldIR) -> tuple[str, str]:
        """A field in an expression, over the object x: (source, kind)."""
        rs = f"x.{_snake(f.name)}"
        if f.is_list:
            return (f"{rs}.as_deref().unwrap_or(&[])" if f.cond else rs), "list"
        if f.kind in ("bytes", "contents"):
            return (f"{rs}.as_deref().unwrap_or(&[])" if f.cond or f.lazy else f"&{rs}[..]"), "bytes"
        if f.kind == "str":
            return (f"{rs}.as_deref().unwrap_or(\"\")" if f.cond else f"(&*{rs})"), "str"
        if f.kind in ("int", "varint"):
            src = f"{rs}.unwrap_or_default()" if f.cond else rs
            return (src if f.kind == "varint" or f.fmt == "q" else f"({src} as i64)"), "int"
        if f.kind == "float":
            raise SchemaError(f.path, "the Rust target does not compute with floats")
        return rs, "object"

    # -- printing
    def render(self) -> str:
        body = []
        for e in self.mod.enums:
            body.append(f"// {self.prefix}{e.class_name}: enum `{e.name}` of {self.mod.source}.")
            for value, label in e.members:
                body.append(f"pub const {self.enum_const(e.class_name, label)}: i64 = {value};")
            body.append("")
        for t in self.mod.types:
            body.append(self.type_decl(t))
            body.append(self.parse_funcs(t))
            body.append(self.tree_impl(t))
            if (listed := self.streams(t)) is not None:
                body.append(self.reader(t, listed))
        head = [
            f"// Code generated by kafkacodec's generator from {self.mod.source}. DO NOT EDIT.",
            "// Change the schema or generator/rust.py, then run `kafkacodec generate`.",
            "#![allow(unused_variables, unused_mut, unused_imports, unused_assignments, unused_comparisons)]",
            "",
            "use crate::gen::*;",
            "use crate::runtime::*;",
            "use std::borrow::Cow;",
            "",
        ]
        return "\n".join(head + body) + "\n"

    def type_decl(self, t: TypeIR) -> str:
        name = self.rs_class(t.class_name)
        lines = [_doc_comment(t.doc or f"Type `{t.name}` of {self.mod.source}."),
                 "#[derive(Clone, Debug, Default, PartialEq)]", f"pub struct {name}{self.lt(name)} {{"]  # fmt: skip
        for p in t.params:
            lines.append(f"    pub {_snake(p.name)}: i64,")
        for f in t.fields:
            if f.doc:
                lines.append(_doc_comment(f.doc, indent="    "))
            lines.append(f"    pub {_snake(f.name)}: {self.field_type(t, f)},")
        for inst in t.pos_instances:
            lines.append("    /// Read ahead (a positional instance); None when the data ends before it.")
            lines.append(f"    pub {_snake(inst.name)}: Option<{_RS_INT[inst.fmt]}>,")
        if t.crc_field:
            lines.append("    /// The bytes the CRC covers, as offsets into the parsed buffer.")
            lines.append("    pub crc_start: usize,")
            lines.append("    pub crc_end: usize,")
        lines.append("}\n")
        extra = []
        for f in t.fields:
            if f.kind == "switch":
                extra.append(self.switch_decl(t, f))
        return "\n".join(lines + extra)

    def switch_decl(self, t: TypeIR, f: FieldIR) -> str:
        name = self.switch_enum(t, f)
        lines = [f"/// What `{f.name}` of {self.rs_class(t.class_name)} holds, by its `switch-on`.",
                 "#[derive(Clone, Debug, PartialEq)]", f"pub enum {name}<'a> {{"]  # fmt: skip
        for cls in self._switch_classes(f):
            lines.append(f"    {self.rs_class(cls)}({self.rs_class(cls)}{self.lt(self.rs_class(cls))}),")
        lines.append("    /// Bytes no case reads (a sized field).")
        lines.append("    Raw(&'a [u8]),")
        lines.append("}\n")
        lines.append(f"impl Tree for {name}<'_> {{\n    fn tree(&self, out: &mut String) {{\n        match self {{")
        for cls in self._switch_classes(f):
            lines.append(f"            {name}::{self.rs_class(cls)}(v) => v.tree(out),")
        lines.append(f"            {name}::Raw(v) => v.tree(out),")
        lines.append("        }\n    }\n}\n")
        return "\n".join(lines)

    def _switch_classes(self, f: FieldIR) -> list[str]:
        out = []
        for _key, ref in f.ksy["type"]["cases"].items():
            m = re.fullmatch(r"([a-z][a-z0-9_]*)\s*(?:\((.*)\))?", str(ref).strip())
            assert m is not None
            _kind, cls = self.names.resolve_type(m.group(1), f.path)
            if cls and cls not in out:
                out.append(cls)
        return out

    def params_sig(self, t: TypeIR) -> str:
        return "".join(f", {_snake(p.name)}: i64" for p in t.params)

    def parse_funcs(self, t: TypeIR) -> str:
        name = self.rs_class(t.class_name)
        where = f"{self.mod.id} {t.path}"
        args = "".join(f", {_snake(p.name)}" for p in t.params)
        a = "'a " if name in self.borrowing else ""
        arena, pass_arena = (f", arena: &{a}Arena", ", arena") if name in self.arena else ("", "")
        doc = (" Decompressed regions are kept in arena, which the value borrows."
               if name in self.arena and name in self.borrowing else "")  # fmt: skip
        out = [
            f"impl{self.lt(name)} {name}{self.lt(name)} {{",
            f"    /// Reads one {name} that fills data (with verify, a CRC that does not match is an error).{doc}",
            f"    pub fn parse(data: &{a}[u8]{self.params_sig(t)}, verify: bool{arena}) -> Result<Self> {{",
            f"        let (x, pos) = Self::parse_at(data, 0, data.len(){args}, verify{pass_arena})?;",
            f"        if pos != data.len() {{\n            return Err(trailing({_q(where)}, pos, data.len()));\n        }}",
            "        Ok(x)\n    }\n",
            f"    pub(crate) fn parse_at(buf: &{a}[u8], pos: usize, end: usize{self.params_sig(t)}, verify: bool{arena}) -> Result<(Self, usize)> {{",
            "        let mut x = Self::default();",
            f"        let pos = x.read(buf, pos, end{args}, verify{pass_arena})?;",
            "        Ok((x, pos))\n    }\n",
            f"    pub(crate) fn read(&mut self, buf: &{a}[u8], mut pos: usize, mut end: usize{self.params_sig(t)}, verify: bool{arena}) -> Result<usize> {{",
            "        let x = self;",
        ]
        out += [f"        x.{_snake(p.name)} = {_snake(p.name)};" for p in t.params]
        if t.needs_start:
            out.append("        let start = pos;")
        if t.rest_field:
            out.append("        let mut rest_start = pos;")
        if t.crc_field:
            out.append("        let mut crc_start = pos;")
        for f in t.lazy_fields:
            out.append(f"        let mut lazy_{f.name}: Option<&'a [u8]> = None; // read once the type is whole (and its CRC checked)")
        for inst in t.pos_instances:
            out.append(_indent(self.pos_instance(t, inst), "        "))
        for f in t.fields:
            out.append(_indent(self.field(t, f), "        "))
        if t.rest_field:
            out.append(f"        if pos != end {{\n            return Err(length_mismatch({_q(where)}, start, end - rest_start, pos - rest_start));\n        }}")
        if t.crc_field:
            c = t.crc_field
            out.append("        x.crc_start = crc_start;\n        x.crc_end = pos;")
            stored = f"x.{_snake(c.name)}" + ("" if c.fmt == "I" else " as u32")
            out.append(f"        if verify {{\n            check_crc({_q(c.crc_algorithm or '')}, {stored}, &buf[crc_start..pos], start, {_q(where)})?;\n        }}")
        for f in t.lazy_fields:
            out.append(_indent(self.lazy_decode(t, f), "        "))
        out.append("        Ok(pos)\n    }")
        for inst in t.value_instances:
            out.append(self.instance(t, inst))
        out.append("}\n")
        return "\n".join(out)

    def streams(self, t: TypeIR) -> FieldIR | None:
        """The list a reader can hand out one item at a time: a type whose one field is a list
        of a type read to the end of its data (`repeat: eos`; a log, an index)."""
        if t is not self.mod.types[0] or t.params or t.pos_instances or t.crc_field or len(t.fields) != 1:
            return None
        f = t.fields[0]
        if f.repeat != "eos" or f.kind != "user" or f.cond or f.size is not None or f.size_eos or f.process:
            return None
        if self.type_args(f.ksy["type"]) or "valid" in f.ksy:
            return None
        return f

    def reader(self, t: TypeIR, f: FieldIR) -> str:
        """{T}Reader: the items of T's list one at a time, read as T's parse reads them (the
        same parser, the same no-progress rule), for data too big to hold as one value: what
        an item holds is freed with it, and a decompressed region lives in the arena it is
        read into (one per item, or one for many). f: the list (streams)."""
        name, item = self.rs_class(t.class_name), self.rs_class(f.user_class or "")
        reader, lt = f"{name}Reader", self.lt(name)
        arena = item in self.arena
        call = f"{item}::parse_at(self.data, self.pos, self.data.len(), self.verify{', arena' if arena else ''})"
        step = f"""
        if self.done || self.pos >= self.data.len() {{
            return None;
        }}
        let before = self.pos;
        match {call} {{
            Ok((item, next)) if next > before => {{
                self.pos = next;
                Some(Ok(item))
            }}
            Ok(_) => {{
                self.done = true;
                Some(Err(no_progress({_q(f.where)}, before, {_q(f.name)})))
            }}
            Err(e) => {{
                self.done = true;
                Some(Err(e))
            }}
        }}"""
        out = f"""
/// The `{f.name}` of a {name} one at a time ({name}::reader), each read as {name}::parse
/// reads it; an error ends the reading. For data too big to hold as one value: an item's
/// memory goes with it.
#[derive(Clone, Debug)]
pub struct {reader}<'a> {{
    data: &'a [u8],
    pos: usize,
    verify: bool,
    done: bool,
}}

impl{lt} {name}{lt} {{
    /// A reader of data's `{f.name}`, one at a time (with verify, a CRC that does not match is an error).
    pub fn reader{"" if lt else "<'a>"}(data: &'a [u8], verify: bool) -> {reader}<'a> {{
        {reader} {{ data, pos: 0, verify, done: false }}
    }}
}}

impl<'a> {reader}<'a> {{
    /// Where the next of the `{f.name}` starts in the data (the data's end once all are read).
    pub fn position(&self) -> usize {{
        self.pos
    }}
"""
        if arena:
            return out + f"""
    /// The next of the `{f.name}` (None at the end, and after an error), its decompressed
    /// regions kept in arena: the value borrows the data and the arena.
    pub fn next_in<'b>(&mut self, arena: &'b Arena) -> Option<Result<{item}<'b>>>
    where
        'a: 'b,
    {{{step}
    }}
}}
"""
        return out + f"""}}

impl<'a> Iterator for {reader}<'a> {{
    type Item = Result<{item}{self.lt(item)}>;

    fn next(&mut self) -> Option<Self::Item> {{{step}
    }}
}}
"""

    def tree_impl(self, t: TypeIR) -> str:
        name = self.rs_class(t.class_name)
        elided = self.lt(name, "'_")
        lines = [f"impl Tree for {name}{elided} {{", "    fn tree(&self, out: &mut String) {", "        let mut o = Obj::new(out);"]
        for p in t.params:
            lines.append(f"        o.field({_q(p.name)}, &self.{_snake(p.name)});")
        for f in t.fields:
            lines.append(f"        o.field({_q(f.name)}, &self.{_snake(f.name)});")
        lines.append("        o.end();\n    }\n}\n")
        return "\n".join(lines)

    def pos_instance(self, t: TypeIR, inst: InstanceIR) -> str:
        at = self.int_expr(t, inst.ksy["pos"], f"{inst.where}/pos")
        rs = _snake(inst.name)
        lines = [f"{{\n    let p = {at};",
                 f"    if p >= 0 && (p as u64) < (end as u64).saturating_sub({inst.width - 1}) {{" if inst.width > 1
                 else "    if p >= 0 && (p as u64) < end as u64 {",
                 "        let p = p as usize;",
                 f"        let v = {_read(inst.fmt, 'p')};",
                 f"        x.{rs} = Some(v);"]  # fmt: skip
        for cond, msg in self.valid_checks(t, inst.ksy.get("valid"), "int", "(v as i64)", f"{inst.where}/valid"):
            lines.append(f"        if {_bare(cond)} {{\n            return Err(invalid({_q(inst.where)}, p, {_q(inst.name)}, v, {_q(msg)}));\n        }}")
        lines.append("    }\n}")
        return "\n".join(lines)

    def field(self, t: TypeIR, f: FieldIR) -> str:
        lines = []
        if f.crc_starts:
            lines.append("crc_start = pos;")
        rs = _snake(f.name)
        if f.lazy:
            lines += self.size(t, f)
            lines += [f"lazy_{f.name} = Some(&buf[pos..pos + n]);", "pos += n;"]
        elif f.repeat:
            lines += self.repeated(t, f)
        else:
            lines += self.read_one(t, f, "v")
            lines += self.checks(t, f, "v")
            wrap = f.kind in ("user", "switch") or f.cond
            value = "Box::new(v)" if f.kind in ("user", "switch") else "v"
            lines.append(f"x.{rs} = {'Some(' + value + ')' if wrap else value};")
        if f.length_of_rest:
            lines.append(
                f"if v < 0 || v as u64 > (end - pos) as u64 {{\n    return Err(bad_length({_q(f.where)}, start, {_q(f.name)}, {'v' if f.fmt == 'q' or f.kind == 'varint' else 'v as i64'}, end - pos));\n}}"
            )
            lines.append("rest_start = pos;\nend = pos + v as usize;")
        body = "\n".join(lines)
        if f.cond:
            cond = _bare(self.bool_expr(t, f.ksy["if"], f"{f.path}/if"))
            return f"if {cond} {{\n{_indent(body, '    ')}\n}}"
        return "{\n" + _indent(body, "    ") + "\n}"

    def lazy_decode(self, t: TypeIR, f: FieldIR) -> str:
        """A lazy field decoded after the rest of its type, as the Python parsers decode it
        on first use (read_<field>): its process, then the whole of it as its type."""
        raw = f"lazy_{f.name}"
        value = "Box::new(v)" if f.kind in ("user", "switch") else "v"
        lines = [*self.decode_whole(t, f, "raw", "0"), f"x.{_snake(f.name)} = Some({value});"]
        return f"if let Some(raw) = {raw} {{\n" + _indent("\n".join(lines), "    ") + "\n}"

    def checks(self, t: TypeIR, f: FieldIR, var: str) -> list[str]:
        if "valid" not in f.ksy or f.valid_spec == {}:
            return []
        kind = {"int": "int", "varint": "int", "bytes": "bytes", "contents": "bytes", "str": "str"}.get(f.kind, "object")
        value = {"int": var if f.fmt == "q" else f"({var} as i64)", "bytes": f"{var}[..]",
                 "str": f"(&*{var})"}.get(f.kind if f.kind != "contents" else "bytes", var)  # fmt: skip
        out = []
        spec = f.ksy["valid"] if f.valid_spec is None else f.valid_spec
        for cond, msg in self.valid_checks(t, spec, kind, value, f"{f.path}/valid"):
            shown = var if kind in ("int", "str") else f"{var}.len()"
            out.append(f"if {_bare(cond)} {{\n    return Err(invalid({_q(f.where)}, pos, {_q(f.name)}, {shown}, {_q(msg)}));\n}}")
        return out

    def size(self, t: TypeIR, f: FieldIR) -> list[str]:
        if f.size_eos:
            return ["let n = end - pos;"]
        n = self.int_expr(t, f.ksy["size"], f"{f.path}/size")
        return [f"let n64: i64 = {_bare(n)};",
                f"if n64 < 0 || n64 as u64 > (end - pos) as u64 {{\n    return Err(bad_size({_q(f.where)}, pos, {_q(f.name)}, n64, end - pos));\n}}",
                "let n = n64 as usize;"]  # fmt: skip

    def user_args(self, t: TypeIR, cls: str, args_text: list, lo: str, hi: str, where: str, source: str = "buf") -> str:
        """The arguments a read of a cls at lo..hi of source takes: its params, verify, and
        the arena where cls decompresses."""
        args = "".join(f", {_bare(self.int_expr(t, a, where))}" for a in args_text)
        arena = ", arena" if self.rs_class(cls) in self.arena else ""
        return f"({source}, {lo}, {hi}{args}, verify{arena})"

    def user_call(self, t: TypeIR, cls: str, args_text: list, lo: str, hi: str, where: str, source: str = "buf") -> str:
        return f"{self.rs_class(cls)}::parse_at{self.user_args(t, cls, args_text, lo, hi, where, source)}"

    def decode_whole(self, t: TypeIR, f: FieldIR, raw: str, at: str, target: str = "v") -> list[str]:
        """A sized field's bytes (raw, a slice) as the field holds them, into target: through
        its process (the decompressed bytes kept in the arena), then, for a user type, parsed
        to the last byte."""
        lines, data = [], raw
        if f.process:
            codec = ", ".join(self.int_expr(t, a, f"{f.path}/process") for a in self.type_args(f.ksy["process"]))
            args = codec.split(", ") if codec else []
            records = f"Some({_bare(args[2])})" if len(args) > 2 else "None"
            lines += [f"let data = arena.keep(crate::compression::decompress({raw}, {_bare(args[0])}, {_bare(args[1])}, {records})"
                      f".map_err(|e| corrupt({_q(f.where)}, {at}, e))?);"]  # fmt: skip
            data = "data"
        if f.kind == "bytes":
            return lines + [f"let {target} = {data};"]
        if f.kind == "str":
            return lines + [f"let {target} = java_str({data});"]
        if f.kind != "user":
            raise SchemaError(f.path, f"the Rust target reads no sized {f.kind}")
        call = self.user_call(t, f.user_class or "", self.type_args(f.ksy["type"]), "0", f"{data}.len()", f.path, data)
        return lines + [f"let ({target}, used) = {call}?;",
                        f"if used != {data}.len() {{\n    return Err(trailing({_q(f.where)}, used, {data}.len()));\n}}"]  # fmt: skip

    def read_one(self, t: TypeIR, f: FieldIR, target: str) -> list[str]:
        """Read one value of f at pos into a new variable target."""
        if f.kind in ("int", "float"):
            return [f"if end - pos < {f.width} {{\n    return Err(truncated({_q(f.where)}, pos, end, {f.width}));\n}}",
                    f"let {target} = {_read(f.fmt, 'pos')};", f"pos += {f.width};"]  # fmt: skip
        if f.kind == "varint":
            fn = "read_varint" if f.varint_signed else "read_uvarint"
            return [f"let ({target}, next) = {fn}(buf, pos, end, {f.max_len}, {_q(f.where)})?;", "pos = next;"]
        if f.kind == "contents":
            lit = "&[" + ", ".join(f"{b}u8" for b in (f.contents or b"")) + "]"
            return [f"let expected: &[u8] = {lit};",
                    f"if end - pos < {f.width} || &buf[pos..pos + {f.width}] != expected {{\n    return Err(bad_contents({_q(f.where)}, pos, expected, &buf[pos..end.min(pos + {f.width})]));\n}}",
                    f"let {target} = &buf[pos..pos + {f.width}];", f"pos += {f.width};"]  # fmt: skip
        if f.kind == "switch":
            return self.switch(t, f, target)
        if f.kind == "user" and f.size is None and not f.size_eos:
            call = self.user_call(t, f.user_class or "", self.type_args(f.ksy["type"]), "pos", "end", f.path)
            return [f"let ({target}, next) = {call}?;", "pos = next;"]
        if f.process or f.kind != "user":
            return [*self.size(t, f), "let raw = &buf[pos..pos + n];",
                    *self.decode_whole(t, f, "raw", "pos", target), "pos += n;"]  # fmt: skip
        # a user type inside its size: read from its front (Kaitai's substream; the rest is skipped)
        call = self.user_call(t, f.user_class or "", self.type_args(f.ksy["type"]), "pos", "pos + n", f.path)
        lines = [*self.size(t, f), f"let ({target}, used) = {call}?;"]
        if f.consumed:
            lines.append(f"if used != pos + n {{\n    return Err(trailing({_q(f.where)}, used, pos + n));\n}}")
        return [*lines, "pos += n;"]

    def switch(self, t: TypeIR, f: FieldIR, target: str) -> list[str]:
        typ = f.ksy["type"]
        enum = self.switch_enum(t, f)
        on = self.int_expr(t, typ["switch-on"], f"{f.path}/type/switch-on")
        sized = f.size is not None or f.size_eos
        lines = self.size(t, f) if sized else []
        hi = "pos + n" if sized else "end"
        lines += [f"let on: i64 = {_bare(on)};", f"let {target}: {enum} = match on {{"]
        default = None
        for key, ref in typ["cases"].items():
            m = re.fullmatch(r"([a-z][a-z0-9_]*)\s*(?:\((.*)\))?", str(ref).strip())
            assert m is not None
            _kind, cls = self.names.resolve_type(m.group(1), f.path)
            call = self.user_call(t, cls or "", self.type_args(ref), "pos", hi, f.path)
            read = (f"{{\n    let (got, next) = {call}?;\n" + ("" if sized else "    pos = next;\n")
                    + f"    {enum}::{self.rs_class(cls or '')}(got)\n}}")  # fmt: skip
            if key == "_":
                default = read
                continue
            lines.append(f"    {_bare(self.int_expr(t, key, f'{f.path}/type/cases'))} => {_indent(read, '    ').lstrip()}")
        if default is not None:
            lines.append(f"    _ => {_indent(default, '    ').lstrip()}")
        elif sized:
            lines.append(f"    _ => {enum}::Raw(&buf[pos..pos + n]),")
        else:
            lines.append(f"    _ => return Err(no_case({_q(f.where)}, pos, {_q(str(typ['switch-on']))}, on)),")
        lines.append("};")
        if sized:
            lines.append("pos += n;")
        return lines

    def repeated(self, t: TypeIR, f: FieldIR) -> list[str]:
        elem = self.elem_type(t, f)
        rs = _snake(f.name)
        checks = self.checks(t, f, "item")
        if f.kind == "user" and f.size is None and not f.size_eos and not checks:
            # read where the item stays, at the list's end: a record is not built on the
            # stack and then moved (a read that fails leaves it there; the list goes with it)
            args = self.user_args(t, f.user_class or "", self.type_args(f.ksy["type"]), "pos", "end", f.path)
            one = ["items.push(Default::default());",
                   f"if let Some(item) = items.last_mut() {{\n    pos = item.read{args}?;\n}}"]  # fmt: skip
        else:
            one = [*self.read_one(t, f, "item"), *checks, "items.push(item);"]
        store = f"x.{rs} = {'Some(items)' if f.cond else 'items'};"
        if f.repeat == "expr":
            count = self.int_expr(t, f.ksy["repeat-expr"], f"{f.path}/repeat-expr")
            lines = [f"let count: i64 = {_bare(count)};",
                     f"if count < 0 {{\n    return Err(bad_count({_q(f.where)}, pos, {_q(f.name)}, count, 0, 0));\n}}"]  # fmt: skip
            least = max(f.elem_min_size, f.width if f.kind in ("int", "float") else 0, 1 if f.kind == "varint" else 0)
            if least:
                times = "" if least == 1 else f".saturating_mul({least})"
                lines.append(f"if (count as u64){times} > (end - pos) as u64 {{\n    return Err(bad_count({_q(f.where)}, pos, {_q(f.name)}, count, end - pos, {least}));\n}}")
                lines.append(f"let mut items: Vec<{elem}> = Vec::with_capacity(count as usize);")
            else:
                lines.append(f"let mut items: Vec<{elem}> = Vec::new();")
            lines.append("for i in 0..count {\n" + _indent("\n".join(one), "    ") + "\n}")
            return [*lines, store]
        if f.repeat == "eos":
            return [f"let mut items: Vec<{elem}> = Vec::new();",
                    "while pos < end {\n    let before = pos;\n" + _indent("\n".join(one), "    ")
                    + f"\n    if pos == before {{\n        return Err(no_progress({_q(f.where)}, pos, {_q(f.name)}));\n    }}\n}}",
                    store]  # fmt: skip
        kind = "int" if f.kind in ("int", "varint") else ("bytes" if f.kind == "bytes" else "object")
        last = "(*items.last().unwrap_or(&0) as i64)" if kind == "int" else "items.last()"
        until = self.bool_expr(t, f.ksy["repeat-until"], f"{f.path}/repeat-until", (last, kind))
        return [f"let mut items: Vec<{elem}> = Vec::new();",
                "loop {\n    let before = pos;\n" + _indent("\n".join(one), "    ")
                + f"\n    if {_bare(until)} {{\n        break;\n    }}"
                + f"\n    if pos == before || pos >= end {{\n        return Err(truncated({_q(f.where)}, pos, end, 0));\n    }}\n}}",
                store]  # fmt: skip

    def instance(self, t: TypeIR, inst: InstanceIR) -> str:
        src, kind = self.expr(t, inst.ksy["value"], f"{t.path}/instances/{inst.name}/value")
        rs_type = {"int": "i64", "bool": "bool"}.get(kind)
        if rs_type is None:
            raise SchemaError(f"{t.path}/instances/{inst.name}", f"the Rust target does not compute a {kind} instance")
        doc = _doc_comment(inst.doc or f"Instance `{inst.name}`.", indent="    ")
        return f"\n{doc}\n    pub fn {_snake(inst.name)}(&self) -> {rs_type} {{\n        let x = self;\n        {_bare(src)}\n    }}"


def _wrapped(src: str) -> bool:
    """Whether src is one parenthesized expression, or a token a method can be called on."""
    if re.fullmatch(r"[A-Za-z_][A-Za-z0-9_.]*(\(\))?|-?[0-9]+i64", src):
        return True
    if not (src.startswith("(") and src.endswith(")")):
        return False
    depth = 0
    for i, c in enumerate(src):
        depth += c == "("
        depth -= c == ")"
        if depth == 0 and i < len(src) - 1:
            return False
    return True


def _paren(src: str) -> str:
    return src if _wrapped(src) else f"({src})"


def _bare(src: str) -> str:
    """src without the parentheses around the whole of it (a function's argument)."""
    while src.startswith("(") and src.endswith(")") and _wrapped(src) and not re.fullmatch(r"[A-Za-z_].*", src):
        src = src[1:-1]
    return src


_NEGATED = {"==": "!=", "!=": "==", "<": ">=", ">=": "<", ">": "<=", "<=": ">"}


def _read(fmt: str, p: str) -> str:
    """A big-endian value at buf[p..] (its bounds checked before)."""
    if fmt == "B":
        return f"buf[{p}]"
    if fmt == "b":
        return f"buf[{p}] as i8"
    return f"be_{_RS_INT[fmt]}(buf, {p})"


class _Translator(TargetTranslator):
    IO = {"pos": ("(pos as i64)", "int"), "size": ("(end as i64)", "int"), "eos": ("(pos >= end)", "bool")}

    def index(self) -> str:
        return "(i as i64)"

    def param(self, name: str) -> str:
        return f"x.{_snake(name)}"

    def pos_instance(self, name: str) -> str:
        return f"(x.{_snake(name)}.unwrap_or_default() as i64)"

    def value_instance(self, name: str) -> str:
        return f"x.{_snake(name)}()"

    def length(self, base: str) -> str:
        return f"({base.removeprefix('&')}.len() as i64)"

    def number(self, value: int) -> str:
        return f"({value}i64)" if value < 0 else f"{value}i64"

    def string(self, value: str) -> str:
        return _q(value)

    def byte_string(self, value: bytes) -> str:
        return "&[" + ", ".join(f"{b}u8" for b in value) + "][..]"

    def enum_value(self, const: str) -> str:
        return const

    def unary(self, op: str, src: str) -> str:
        return f"({src}).wrapping_neg()" if op == "-" else f"!({src})"

    def ternary(self, cond: str, a: str, b: str, kind: str) -> str:
        return f"(if {_bare(cond)} {{ {_bare(a)} }} else {{ {_bare(b)} }})"

    def logical(self, op: str, a: str, b: str) -> str:
        ma, mb = (re.fullmatch(r"\((.+) >= (-?[0-9]+)i64\)", x) for x in (a, b))
        if op == "and" and ma and mb and ma.group(1) == mb.group(1):  # nested versions
            return a if int(ma.group(2)) >= int(mb.group(2)) else b
        return f"({a} {_RS_OPS[op]} {b})"

    def arithmetic(self, op: str, a: str, b: str) -> str:
        if op == "/":
            return f"floor_div({_bare(a)}, {_bare(b)})"
        if op == "%":
            return f"floor_mod({_bare(a)}, {_bare(b)})"
        if op in _WRAPPING:
            return f"{_paren(a)}.{_WRAPPING[op]}({_bare(b)})"
        if op == "<<":
            return f"{_paren(a)}.wrapping_shl({_paren(b)} as u32)"
        if op == ">>":
            return f"{_paren(a)}.wrapping_shr({_paren(b)} as u32)"
        return f"({a} {op} {b})"


def _doc_comment(doc: str, indent: str = "") -> str:
    return comment(doc, "///", indent)


def rustfmt(sources: dict[str, str]) -> dict[str, str]:
    """Format Rust sources with the machine's rustfmt (edition 2021, as `cargo fmt` does)."""
    return format_sources(sources, ["rustfmt", "--edition", "2021", "--emit", "stdout", "--quiet"], "Rust",
                          "Rust (https://rustup.rs)")  # fmt: skip


def _registry(modules: list[_Module]) -> str:
    lines = [
        "// Code generated by kafkacodec's generator from schemas/. DO NOT EDIT.",
        "//! The generated parsers, one module a schema, and every type's parser by name.",
        "",
        "use crate::runtime::{Arena, Result, Tree};",
        "",
    ]
    for m in modules:
        lines.append(f"pub mod {m.mod.id};")
    for m in modules:
        lines.append(f"pub use {m.mod.id}::*;")
    lines += [
        "",
        "/// The type named (its Rust name) read from the whole of data with its params, as the",
        "/// JSON tree the cross-language tests compare; None for a name no schema gives or a",
        "/// wrong number of params.",
        "pub fn parse_tree(name: &str, data: &[u8], params: &[i64], verify: bool) -> Option<Result<String>> {",
        "    fn tree<T: Tree>(v: Result<T>) -> Result<String> {",
        "        v.map(|v| { let mut out = String::new(); v.tree(&mut out); out })",
        "    }",
        "    let arena = Arena::new();",
        "    Some(match (name, params) {",
    ]
    for m in modules:
        for t in m.mod.types:
            name = m.rs_class(t.class_name)
            pat = "[" + ", ".join(f"p{i}" for i in range(len(t.params))) + "]"
            args = "".join(f"*p{i}, " for i in range(len(t.params)))
            arena = ", &arena" if name in m.arena else ""
            lines.append(f"        ({_q(name)}, {pat}) => tree({name}::parse(data, {args}verify{arena})),")
    lines += ["        _ => return None,", "    })", "}"]
    return "\n".join(lines) + "\n"


def render_rust(schemas: SchemaSet) -> dict[str, str]:
    """{file name under rust/src/gen/: Rust source} of every schema, and mod.rs: the modules
    and every type's parser by name."""
    modules = [_Module(mod) for mod in schemas.modules()]
    # which types borrow from the input and which decompress: their own fields, then what
    # the types they hold do, to a fixed point (types hold types of other schemas)
    facts = {m.rs_class(t.class_name): m.refs(t) for m in modules for t in m.mod.types}
    borrowing = {n for n, (b, _u, _h) in facts.items() if b}
    arena = {n for n, (_b, u, _h) in facts.items() if u}
    changed = True
    while changed:
        changed = False
        for n, (_b, _u, held) in facts.items():
            if n not in borrowing and held & borrowing:
                borrowing.add(n)
                changed = True
            if n not in arena and held & arena:
                arena.add(n)
                changed = True
    for m in modules:
        m.borrowing, m.arena = borrowing, arena
    sources = {f"{m.mod.id}.rs": m.render() for m in modules}
    sources["mod.rs"] = _registry(modules)
    return rustfmt(sources)

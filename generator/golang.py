"""The Go target: the schemas as a Go package of parsers (go/kafkacodec), from the same IR
as the Python parsers, with the same checks and the same errors.

The official compiler's Go output does not serve (kaitai-struct-compiler 0.11): about 60
type errors in mixed-width integer expressions, `repeat: until` loops that start at index
1, `and`/`or` that evaluate both sides, and the custom `process` dropped (its bytes are read
as if uncompressed). This target reads a byte slice as the Python target does, with explicit
bounds: every integer expression is computed in int64 (the schemas' arithmetic stays within
64 bits for Java), varints are read inline, and the runtime the code calls is small and
hand-written beside it (go/kafkacodec/runtime.go: errors, varints, CRCs;
compression.go: Kafka's codecs through the Go libraries Kafka's Go clients use).

Per type T of a schema (nested types prefixed with the schema's class, KafkaLogEntry):

    type T struct { Field GoType `ksy:"field"` ... }      fields in byte order, params first
    func ParseT(data []byte, params..., verify bool) (*T, error)   the whole of data
    func parseT(buf []byte, pos, end int, params..., verify bool) (*T, int, error)
    func (x *T) Instance() int64                           each value instance

A field under `if` is a pointer (nil: absent), as are user types; lists and byte fields
are nil when absent. Positional instances are read first, as the Python parsers read them,
and kept in fields tagged `ksy:"name,pos"`.
"""

from __future__ import annotations

import re

from .errors import SchemaError
from .ir import FieldIR, InstanceIR, ModuleIR, SchemaSet, TypeIR, camel
from .targets import TargetModule, TargetTranslator, comment, format_sources
from .targets import indent as _indent

__all__ = ["render_go", "PACKAGE"]

PACKAGE = "kafkacodec"

_GO_INT = {"b": "int8", "B": "uint8", "h": "int16", "H": "uint16", "i": "int32", "I": "uint32",
           "q": "int64", "Q": "uint64", "f": "float32", "d": "float64"}  # fmt: skip
_READ = {
    "b": "int8(buf[{p}])", "B": "buf[{p}]",
    "h": "int16(binary.BigEndian.Uint16(buf[{p}:]))", "H": "binary.BigEndian.Uint16(buf[{p}:])",
    "i": "int32(binary.BigEndian.Uint32(buf[{p}:]))", "I": "binary.BigEndian.Uint32(buf[{p}:])",
    "q": "int64(binary.BigEndian.Uint64(buf[{p}:]))", "Q": "binary.BigEndian.Uint64(buf[{p}:])",
    "f": "math.Float32frombits(binary.BigEndian.Uint32(buf[{p}:]))",
    "d": "math.Float64frombits(binary.BigEndian.Uint64(buf[{p}:]))",
}  # fmt: skip
_GO_OPS = {"and": "&&", "or": "||"}


def _q(text: str) -> str:
    """A Go string literal."""
    return '"' + text.replace("\\", "\\\\").replace('"', '\\"').replace("\n", "\\n") + '"'


class _Module(TargetModule):
    LANGUAGE = "Go"

    def __init__(self, mod: ModuleIR):
        self.TRANSLATOR = _Translator
        super().__init__(mod)
        self.uses = {"binary": False, "math": False}

    def go_class(self, cls: str) -> str:
        return self.class_of(cls)

    def enum_const(self, enum_class: str, label: str) -> str:
        return self.prefix + enum_class + camel(label.lower())

    # -- types of fields
    def elem_type(self, f: FieldIR) -> str:
        if f.kind in ("int", "float"):
            return _GO_INT[f.fmt]
        if f.kind == "varint":
            return "int64"
        if f.kind in ("bytes", "contents"):
            return "[]byte"
        if f.kind == "str":
            return "string"
        if f.kind == "user":
            return "*" + self.go_class(f.user_class or "")
        if f.kind == "switch":
            return "any"
        raise SchemaError(f.path, f"the Go target does not read a {f.kind} field")

    def field_type(self, f: FieldIR) -> str:
        elem = self.elem_type(f)
        if f.is_list:
            return "[]" + (elem[1:] if f.kind == "user" else elem)  # user types by value: one array
        if f.cond and f.kind in ("int", "float", "varint", "str"):
            return "*" + elem
        return elem

    def value_of(self, f: FieldIR) -> tuple[str, str]:
        """A field in an expression, over the object x: (source, kind)."""
        go = f"x.{camel(f.name)}"
        if f.is_list:
            return go, "list"
        if f.kind in ("bytes", "contents"):
            return go, "bytes"
        if f.kind == "str":
            return (f"deref({go})" if f.cond else go), "str"
        if f.kind in ("int", "varint"):
            src = f"deref({go})" if f.cond else go
            return (src if f.kind == "varint" or f.fmt == "q" else f"int64({src})"), "int"
        if f.kind == "float":
            raise SchemaError(f.path, "the Go target does not compute with floats")
        return go, "object"

    # -- printing
    def render(self) -> str:
        body = []
        for e in self.mod.enums:
            body.append(f"// {self.prefix}{e.class_name}: enum `{e.name}` of {self.mod.source}.")
            body.append("const (")
            for value, label in e.members:
                body.append(f"\t{self.enum_const(e.class_name, label)} = {value}")
            body.append(")\n")
        for t in self.mod.types:
            body.append(self.type_decl(t))
            body.append(self.parse_funcs(t))
            for inst in t.value_instances:
                body.append(self.instance(t, inst))
        imports = [name for name, used in self.uses.items() if used]
        head = [
            f"// Code generated by kafkacodec's generator from {self.mod.source}. DO NOT EDIT.",
            "// Change the schema or generator/golang.py, then run `kafkacodec generate`.",
            "",
            f"package {PACKAGE}",
            "",
        ]
        if imports:
            head.append("import (")
            head += [f'\t"{"encoding/binary" if i == "binary" else i}"' for i in imports]
            head.append(")\n")
        return "\n".join(head + body) + "\n"

    def type_decl(self, t: TypeIR) -> str:
        name = self.go_class(t.class_name)
        doc = _doc_comment(name, t.doc or f"type `{t.name}` of {self.mod.source}.")
        lines = [doc, f"type {name} struct {{"]
        for p in t.params:
            lines.append(f'\t{camel(p.name)} int64 `ksy:"{p.name}"`')
        for f in t.fields:
            if f.doc:
                lines.append(_doc_comment("", f.doc, indent="\t"))
            lines.append(f'\t{camel(f.name)} {self.field_type(f)} `ksy:"{f.name}"`')
        for inst in t.pos_instances:
            lines.append(
                f"\t// {camel(inst.name)} is read ahead (a positional instance); nil when the data ends before it."
            )
            lines.append(f'\t{camel(inst.name)} *{_GO_INT[inst.fmt]} `ksy:"{inst.name},pos"`')
        if t.crc_field:
            lines.append(
                "\t// CrcStart and CrcEnd: the bytes the CRC covers, as offsets into the parsed buffer."
            )
            lines.append('\tCrcStart, CrcEnd int `ksy:"-"`')
        lines.append("}\n")
        return "\n".join(lines)

    def params_sig(self, t: TypeIR) -> str:
        return "".join(f", {_local(p.name)} int64" for p in t.params)

    def parse_funcs(self, t: TypeIR) -> str:
        name = self.go_class(t.class_name)
        where = f"{self.mod.id} {t.path}"
        args = "".join(f", {_local(p.name)}" for p in t.params)
        out = [
            f"// Parse{name} reads one {name} that fills data (with verify, a CRC that does not match is an error).",
            f"func Parse{name}(data []byte{self.params_sig(t)}, verify bool) (*{name}, error) {{",
            f"\tx, pos, err := parse{name}(data, 0, len(data){args}, verify)",
            "\tif err != nil {\n\t\treturn nil, err\n\t}",
            f"\tif pos != len(data) {{\n\t\treturn nil, trailing({_q(where)}, pos, len(data))\n\t}}",
            "\treturn x, nil\n}\n",
            f"func parse{name}(buf []byte, pos, end int{self.params_sig(t)}, verify bool) (*{name}, int, error) {{",
            f"\tx := &{name}{{}}",
            f"\tpos, err := x.read(buf, pos, end{args}, verify)",
            "\tif err != nil {\n\t\treturn nil, pos, err\n\t}",
            "\treturn x, pos, nil\n}\n",
            "// read reads x in place from buf[pos:end] (elements of a list are read into the list's array).",
            f"func (x *{name}) read(buf []byte, pos, end int{self.params_sig(t)}, verify bool) (int, error) {{",
        ]
        out += [f"\tx.{camel(p.name)} = {_local(p.name)}" for p in t.params]
        body_from = len(out)
        if t.needs_start:
            out.append("\tstart := pos")
        if t.rest_field:
            out.append("\trestStart := pos")
        if t.crc_field:
            out.append("\tcrcStart := pos")
        for f in t.lazy_fields:
            out.append(
                f"\tvar lazy{camel(f.name)} []byte // read once the type is whole (and its CRC checked)"
            )
        for inst in t.pos_instances:
            out.append(self.pos_instance(t, inst))
        for f in t.fields:
            out.append(self.field(t, f))
        if t.rest_field:
            out.append(
                f"\tif pos != end {{\n\t\treturn nil, pos, lengthMismatch({_q(where)}, start, end-restStart, pos-restStart)\n\t}}"
            )
        if t.crc_field:
            c = t.crc_field
            out.append("\tx.CrcStart, x.CrcEnd = crcStart, pos")
            out.append(
                f"\tif verify {{\n\t\tif err := checkCRC({_q(c.crc_algorithm or '')}, x.{camel(c.name)}, buf[crcStart:pos], start, {_q(where)}); err != nil {{\n\t\t\treturn nil, pos, err\n\t\t}}\n\t}}"
            )
        for f in t.lazy_fields:
            out.append(self.lazy_decode(t, f))
        out.append("\treturn pos, nil\n}\n")
        body = "\n".join(out[body_from:])
        body = re.sub(r"return nil, (pos|p|used), ", r"return \1, ", body)
        return "\n".join(out[:body_from] + [body])

    def pos_instance(self, t: TypeIR, inst: InstanceIR) -> str:
        self.uses["binary"] = self.uses["binary"] or inst.width > 1
        at = self.int_expr(t, inst.ksy["pos"], f"{inst.where}/pos")
        go = camel(inst.name)
        lines = [f"\tif p := int({at}); p >= 0 && p+{inst.width} <= end {{",
                 f"\t\tv := {_READ[inst.fmt].format(p='p')}", f"\t\tx.{go} = &v"]  # fmt: skip
        for cond, msg in self.valid_checks(
            t, inst.ksy.get("valid"), "int", "int64(v)", f"{inst.where}/valid"
        ):
            lines.append(
                f"\t\tif {cond} {{\n\t\t\treturn nil, p, invalid({_q(inst.where)}, p, {_q(inst.name)}, v, {_q(msg)})\n\t\t}}"
            )
        lines.append("\t}")
        return "\n".join(lines)

    def field(self, t: TypeIR, f: FieldIR) -> str:
        lines = []
        if f.crc_starts:
            lines.append("crcStart = pos")
        if f.lazy:
            lines += self.size(t, f)
            lines += [f"lazy{camel(f.name)} = buf[pos : pos+n : pos+n]", "pos += n"]
        elif f.repeat:
            lines += self.repeated(t, f)
        else:
            pointer = f.cond and f.kind in ("int", "float", "varint", "str")  # field_type's *T
            lines += self.read_one(t, f, "v")
            lines.append(f"x.{camel(f.name)} = {'&v' if pointer else 'v'}")
            lines += self.checks(t, f, "v")
        if f.length_of_rest:
            v = "int(v)"
            lines.append(
                f"if {v} < 0 || {v} > end-pos {{\n\treturn nil, pos, badLength({_q(f.where)}, start, {_q(f.name)}, int64(v), end-pos)\n}}"
            )
            lines.append(f"restStart = pos\nend = pos + {v}")
        body = "\n".join(lines)
        if f.cond:
            cond = self.bool_expr(t, f.ksy["if"], f"{f.path}/if")
            body = f"if {cond} {{\n{body}\n}}"
        else:
            body = "{\n" + body + "\n}"
        return _indent(body, "\t")

    def lazy_decode(self, t: TypeIR, f: FieldIR) -> str:
        """A lazy field decoded after the rest of its type, as the Python parsers decode it
        on first use (read_<field>): its process, then the whole of it as its type."""
        raw = f"lazy{camel(f.name)}"
        lines = [*self.decode_whole(t, f, raw, "0"), f"x.{camel(f.name)} = v"]
        return _indent(f"if {raw} != nil {{\n" + "\n".join(lines) + "\n}", "\t")

    def checks(self, t: TypeIR, f: FieldIR, var: str) -> list[str]:
        if "valid" not in f.ksy or f.valid_spec == {}:
            return []
        kind = {
            "int": "int",
            "varint": "int",
            "bytes": "bytes",
            "contents": "bytes",
            "str": "str",
        }.get(f.kind, "object")
        value = f"int64({var})" if f.kind == "int" else var
        out = []
        spec = f.ksy["valid"] if f.valid_spec is None else f.valid_spec
        for cond, msg in self.valid_checks(t, spec, kind, value, f"{f.path}/valid"):
            shown = var if kind in ("int", "str") else f"len({var})"
            out.append(
                f"if {cond} {{\n\treturn nil, pos, invalid({_q(f.where)}, pos, {_q(f.name)}, {shown}, {_q(msg)})\n}}"
            )
        return out

    def size(self, t: TypeIR, f: FieldIR) -> list[str]:
        if f.size_eos:
            return ["n := end - pos"]
        n = self.int_expr(t, f.ksy["size"], f"{f.path}/size")
        return [f"n64 := int64({n})",
                f"if n64 < 0 || n64 > int64(end-pos) {{\n\treturn nil, pos, badSize({_q(f.where)}, pos, {_q(f.name)}, n64, end-pos)\n}}",
                "n := int(n64)"]  # fmt: skip

    def user_call(self, t: TypeIR, cls: str, args_text: list, lo: str, hi: str, where: str,
                  source: str = "buf") -> str:  # fmt: skip
        args = "".join(f", {self.int_expr(t, a, where)}" for a in args_text)
        return f"parse{self.go_class(cls)}({source}, {lo}, {hi}{args}, verify)"

    def decode_whole(
        self, t: TypeIR, f: FieldIR, raw: str, at: str, target: str = "v"
    ) -> list[str]:
        """A sized field's bytes (raw) as the field holds them, into target: through its process,
        then, for a user type, parsed to the last byte (Python's parse_all: a processed or lazy
        field). at: the position a codec's error names."""
        lines, data = [], raw
        if f.process:
            codec = ", ".join(
                self.int_expr(t, a, f"{f.path}/process") for a in self.type_args(f.ksy["process"])
            )
            lines += [f"data, err := kafkaCompression({raw}, {codec})",
                      f"if err != nil {{\n\treturn nil, pos, corrupt({_q(f.where)}, {at}, err)\n}}"]  # fmt: skip
            data = "data"
        if f.kind != "user":
            return lines + [f"{target} := {'string(' + data + ')' if f.kind == 'str' else data}"]
        call = self.user_call(
            t, f.user_class or "", self.type_args(f.ksy["type"]), "0", f"len({data})", f.path, data
        )
        return lines + [f"{target}, used, err := {call}", "if err != nil {\n\treturn nil, pos, err\n}",
                        f"if used != len({data}) {{\n\treturn nil, pos, trailing({_q(f.where)}, used, len({data}))\n}}"]  # fmt: skip

    def read_one(self, t: TypeIR, f: FieldIR, target: str) -> list[str]:
        """Read one value of f at pos into a new variable target (`:=`)."""
        err = "return nil, pos, err"
        if f.kind in ("int", "float"):
            self.uses["binary"] = self.uses["binary"] or f.width > 1
            self.uses["math"] = self.uses["math"] or f.kind == "float"
            return [f"if end-pos < {f.width} {{\n\treturn nil, pos, truncated({_q(f.where)}, pos, end, {f.width})\n}}",
                    f"{target} := {_READ[f.fmt].format(p='pos')}", f"pos += {f.width}"]  # fmt: skip
        if f.kind == "varint":
            fn = "readVarint" if f.varint_signed else "readUvarint"
            return [f"{target}, next, err := {fn}(buf, pos, end, {f.max_len}, {_q(f.where)})",
                    f"if err != nil {{\n\t{err}\n}}", "pos = next"]  # fmt: skip
        if f.kind == "contents":
            lit = "[]byte{" + ", ".join(str(b) for b in (f.contents or b"")) + "}"
            return [f"{target} := {lit}",
                    f"if end-pos < {f.width} || string(buf[pos:pos+{f.width}]) != string({target}) {{\n\treturn nil, pos, badContents({_q(f.where)}, pos, {target}, buf[pos:min(end, pos+{f.width})])\n}}",
                    f"pos += {f.width}"]  # fmt: skip
        if f.kind == "switch":
            return self.switch(t, f, target)
        if f.kind == "user" and f.size is None and not f.size_eos:
            call = self.user_call(
                t, f.user_class or "", self.type_args(f.ksy["type"]), "pos", "end", f.path
            )
            return [
                f"{target}, next, err := {call}",
                f"if err != nil {{\n\t{err}\n}}",
                "pos = next",
            ]
        raw = "buf[pos : pos+n : pos+n]"
        if f.process or f.kind != "user":
            return [*self.size(t, f), *self.decode_whole(t, f, raw, "pos", target), "pos += n"]
        # a user type inside its size: read from its front (Kaitai's substream; the rest is skipped)
        call = self.user_call(
            t, f.user_class or "", self.type_args(f.ksy["type"]), "pos", "pos + n", f.path
        )
        used = "used" if f.consumed else "_"
        return [
            *self.size(t, f),
            f"{target}, {used}, err := {call}",
            f"if err != nil {{\n\t{err}\n}}",
            *([f"if used != pos+n {{\n\treturn nil, pos, trailing({_q(f.where)}, used, pos+n)\n}}"] if f.consumed else []),
            "pos += n",
        ]

    def switch(self, t: TypeIR, f: FieldIR, target: str) -> list[str]:
        typ = f.ksy["type"]
        on = self.int_expr(t, typ["switch-on"], f"{f.path}/type/switch-on")
        sized = f.size is not None or f.size_eos
        lines = self.size(t, f) if sized else []
        hi = "pos + n" if sized else "end"
        lines += [f"var {target} any", f"switch on := {on}; on {{"]
        default = None
        for key, ref in typ["cases"].items():
            m = re.fullmatch(r"([a-z][a-z0-9_]*)\s*(?:\((.*)\))?", str(ref).strip())
            assert m is not None
            kind, cls = self.names.resolve_type(m.group(1), f.path)
            call = self.user_call(t, cls or "", self.type_args(ref), "pos", hi, f.path)
            read = (f"got, next, err := {call}\nif err != nil {{\n\treturn nil, pos, err\n}}\n{target} = got"
                    + ("" if sized else "\npos = next") + ("\n_ = next" if sized else ""))  # fmt: skip
            if key == "_":
                default = read
                continue
            lines.append(
                f"case {self.int_expr(t, key, f'{f.path}/type/cases')}:\n{_indent(read, chr(9))}"
            )
        if default is not None:
            lines.append(f"default:\n{_indent(default, chr(9))}")
        elif sized:
            lines.append(f"default:\n\t{target} = buf[pos : pos+n : pos+n]")
        else:
            lines.append(
                f"default:\n\treturn nil, pos, noCase({_q(f.where)}, pos, {_q(str(typ['switch-on']))}, on)"
            )
        lines.append("}")
        if sized:
            lines.append("pos += n")
        return lines

    def read_into(self, t: TypeIR, f: FieldIR, into: str) -> list[str]:
        """Read one value of a user-type field into the object at into (a list's element)."""
        if f.process or f.lazy:
            raise SchemaError(f.path, "the Go target reads a list of processed values nowhere")
        args = "".join(f", {self.int_expr(t, a, f.path)}" for a in self.type_args(f.ksy["type"]))
        if f.size is None and not f.size_eos:
            return [f"next, err := {into}.read(buf, pos, end{args}, verify)",
                    "if err != nil {\n\treturn nil, pos, err\n}", "pos = next"]  # fmt: skip
        return self.size(t, f) + [f"if _, err := {into}.read(buf, pos, pos+n{args}, verify); err != nil {{\n\treturn nil, pos, err\n}}",
                                  "pos += n"]  # fmt: skip

    def repeated(self, t: TypeIR, f: FieldIR) -> list[str]:
        elem = self.elem_type(f)
        go = f"x.{camel(f.name)}"
        if f.kind == "user":
            elem = elem[1:]
            one = self.read_into(t, f, "item") + self.checks(t, f, "item")
            if f.repeat == "expr":
                one = [f"item := &{go}[i]", *one]
            else:
                one = [f"{go} = append({go}, {elem}{{}})", f"item := &{go}[len({go})-1]", *one]
        else:
            one = (
                self.read_one(t, f, "item")
                + self.checks(t, f, "item")
                + [f"{go} = append({go}, item)"]
            )
        if f.repeat == "expr":
            count = self.int_expr(t, f.ksy["repeat-expr"], f"{f.path}/repeat-expr")
            lines = [f"count := int64({count})",
                     f"if count < 0 {{\n\treturn nil, pos, badCount({_q(f.where)}, pos, {_q(f.name)}, count, -1, 0)\n}}"]  # fmt: skip
            least = max(
                f.elem_min_size,
                f.width if f.kind in ("int", "float") else 0,
                1 if f.kind == "varint" else 0,
            )
            if least:
                lines.append(
                    f"if count*{least} > int64(end-pos) {{\n\treturn nil, pos, badCount({_q(f.where)}, pos, {_q(f.name)}, count, end-pos, {least})\n}}"
                )
            lines.append(f"{go} = make([]{elem}, {'' if f.kind == 'user' else '0, '}count)")
            lines.append("for i := int64(0); i < count; i++ {\n_ = i\n" + "\n".join(one) + "\n}")
            return lines
        if f.repeat == "eos":
            return [f"{go} = []{elem}{{}}",
                    "for pos < end {\nbefore := pos\n" + "\n".join(one)
                    + f"\nif pos == before {{\n\treturn nil, pos, noProgress({_q(f.where)}, pos, {_q(f.name)})\n}}\n}}"]  # fmt: skip
        kind = (
            "int" if f.kind in ("int", "varint") else ("bytes" if f.kind == "bytes" else "object")
        )
        until = self.bool_expr(t, f.ksy["repeat-until"], f"{f.path}/repeat-until", ("item", kind))
        return [f"{go} = []{elem}{{}}",
                "for {\nbefore := pos\n" + "\n".join(one) + f"\nif {until} {{\n\tbreak\n}}"
                + f"\nif pos == before || pos >= end {{\n\treturn nil, pos, truncated({_q(f.where)}, pos, end, 0)\n}}\n}}"]  # fmt: skip

    def instance(self, t: TypeIR, inst: InstanceIR) -> str:
        name = self.go_class(t.class_name)
        src, kind = self.expr(t, inst.ksy["value"], f"{t.path}/instances/{inst.name}/value")
        go_type = {"int": "int64", "bool": "bool", "bytes": "[]byte", "str": "string"}.get(kind)
        if go_type is None:
            raise SchemaError(
                f"{t.path}/instances/{inst.name}",
                f"the Go target does not compute a {kind} instance",
            )
        doc = _doc_comment(camel(inst.name), inst.doc or f"instance `{inst.name}`.")
        return f"{doc}\nfunc (x *{name}) {camel(inst.name)}() {go_type} {{\n\treturn {src}\n}}\n"


class _Translator(TargetTranslator):
    IO = {"pos": ("int64(pos)", "int"), "size": ("int64(end)", "int"), "eos": ("(pos >= end)", "bool")}

    def index(self) -> str:
        return "int64(i)"

    def param(self, name: str) -> str:
        return f"x.{camel(name)}"

    def pos_instance(self, name: str) -> str:
        return f"int64(deref(x.{camel(name)}))"

    def value_instance(self, name: str) -> str:
        return f"x.{camel(name)}()"

    def length(self, base: str) -> str:
        return f"int64(len({base}))"

    def number(self, value: int) -> str:
        return f"int64({value})" if value < 0 else str(value)

    def string(self, value: str) -> str:
        return _q(value)

    def byte_string(self, value: bytes) -> str:
        return "[]byte{" + ", ".join(map(str, value)) + "}"

    def enum_value(self, const: str) -> str:
        return f"int64({const})"

    def unary(self, op: str, src: str) -> str:
        return f"-({src})" if op == "-" else f"^({src})"

    def ternary(self, cond: str, a: str, b: str, kind: str) -> str:
        # Both branches are plain values of fields already read: evaluating both is safe.
        if kind == "int":  # typed: a literal alone would make the helper's type int
            a, b = (v if v.startswith("int64(") else f"int64({v})" for v in (a, b))
        return f"ifElse({cond}, {a}, {b})"

    def logical(self, op: str, a: str, b: str) -> str:
        return f"({a} {_GO_OPS[op]} {b})"

    def arithmetic(self, op: str, a: str, b: str) -> str:
        if op == "/":
            return f"floorDiv({a}, {b})"
        if op == "%":
            return f"floorMod({a}, {b})"
        return f"({a} {op} {b})"


def _local(name: str) -> str:
    """A Go local for a schema name (params): lower camel case, clear of Go's keywords."""
    c = camel(name)
    out = c[:1].lower() + c[1:]
    return (
        out + "_" if out in {"type", "func", "range", "map", "var", "len", "go", "select"} else out
    )


def _doc_comment(name: str, doc: str, indent: str = "") -> str:
    text = " ".join(str(doc).split())
    if name:
        text = f"{name}: {text}" if not text.startswith(name) else text
    return comment(text, "//", indent)


def gofmt(sources: dict[str, str]) -> dict[str, str]:
    """Format Go sources with the machine's gofmt (as `go fmt` does)."""
    return format_sources(sources, ["gofmt"], "Go", "Go (https://go.dev/dl)")


def _registry(modules: list[_Module]) -> str:
    lines = [
        "// Code generated by kafkacodec's generator from schemas/. DO NOT EDIT.",
        "",
        f"package {PACKAGE}",
        "",
        "// Parser reads one value of a type from the whole of data, with the type's params.",
        "type Parser struct {",
        "\t// Params: how many parameters the type takes (a message version, a record type, ...).",
        "\tParams int",
        "\tParse  func(data []byte, params []int64, verify bool) (any, error)",
        "}",
        "",
        "// Parsers holds every type's parser by its Go name, for tools that choose a type at run time.",
        "var Parsers = map[string]Parser{",
    ]
    for m in modules:
        for t in m.mod.types:
            name = m.go_class(t.class_name)
            args = "".join(f"p[{i}], " for i in range(len(t.params)))
            lines.append(f"\t{_q(name)}: {{{len(t.params)}, func(data []byte, p []int64, verify bool) (any, error) "
                         f"{{ return Parse{name}(data, {args}verify) }}}},")  # fmt: skip
    lines.append("}")
    return "\n".join(lines) + "\n"


def render_go(schemas: SchemaSet) -> dict[str, str]:
    """{file name: Go source} of every schema (the primitives are read inline), and
    parsers.go: every type's parser by name."""
    modules = [_Module(mod) for mod in schemas.modules()]
    sources = {f"{m.mod.id}.go": m.render() for m in modules}
    sources["parsers.go"] = _registry(modules)
    return gofmt(sources)

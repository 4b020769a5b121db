"""From the IR to Construct definitions (generated/construct/): every decision here, the
template only prints.

Each schema type becomes a Construct `Struct` (a `KafkaStruct` when it has a length-of-rest
or CRC field; a function returning one when it takes params). Fields map as:

- integers to Int8sb..Int64ub, zig-zag varints to ZigZagVarint(5|10), contents to Const;
- bytes to Bytes(size) or GreedyBytes, strings to Text(...) (lossless, as the parsers);
- `if` to If, `repeat` to Array / RepeatEos / RepeatUntil, `switch-on` to Switch;
- `size` over user types to Sized (parse inside the size, build derives it) or FixedSized;
- `process: kafka_compression(...)` to KafkaCompressed;
- `valid` to ExprValidator (checked both ways);
- lengths and counts builders derive to Rebuild; length-of-rest and CRC to KafkaStruct;
- value instances to Computed at the end, positional instances to PeekAt (read when the data reaches them).
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field

from .expr import parse_expr
from .ir import FieldIR, InstanceIR, ModuleIR, TypeIR

INT_CLASSES = {
    "b": "Int8sb", "B": "Int8ub", "h": "Int16sb", "H": "Int16ub",
    "i": "Int32sb", "I": "Int32ub", "q": "Int64sb", "Q": "Int64ub", "f": "Float32b", "d": "Float64b",
}  # fmt: skip
CODECS = {"UTF-8": "utf-8", "ASCII": "ascii"}


@dataclass
class CField:
    name: str
    expr: str
    doc: str = ""


@dataclass
class CType:
    name: str
    params: list[str]
    doc: str
    fields: list[CField]
    kwargs: list[str] = field(default_factory=list)  # KafkaStruct options

    @property
    def ctor(self) -> str:
        return "KafkaStruct" if self.kwargs else "Struct"


@dataclass
class CModule:
    id: str
    source: str
    title: str
    doc: str
    imports: list[tuple[str, str]]
    enums: list
    types: list[CType]  # in definition order (a type before the types that use it)
    top: str = ""  # the schema's own type (the usage example names it)
    names: list[str] = field(default_factory=list)  # construct names the module uses
    ours: list[str] = field(default_factory=list)  # kafkacodec.constructs names it uses
    uses_enums: bool = False  # to_enum for enum-typed instances


def _natural(name: str):
    """Sort key putting Int8sb before Int16sb, as isort does."""
    return [int(p) if p.isdigit() else p for p in re.split(r"(\d+)", name)]


def _lam(src: str) -> str:
    return f"lambda this: {src}"


def _refs(src: str | None) -> set[str]:
    return set(re.findall(r"\bthis\.(\w+)", src or ""))


def _doc_line(text: str) -> str:
    return " ".join(text.split()) if text else ""


# What kafkacodec.constructs provides; every other name comes from construct itself.
OURS = {
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
}


class _Planner:
    def __init__(self, mod: ModuleIR):
        assert mod.names is not None
        self.mod = mod
        self.schema = mod.names  # the schema's names and expressions, printed for `this`
        self.by_class = {t.class_name: t for t in mod.types}
        self.defined: set[str] = set()
        self.names: set[str] = set()

    # -- the schema's expressions over a Construct context `this`
    def ctx(self, t: TypeIR, f: FieldIR, key: str, locals_=frozenset()) -> str | None:
        """The field's `key` expression (size, if, repeat-expr, ...) over `this`; None
        when the schema does not give it."""
        if key not in f.ksy:
            return None
        out = self.schema.translate(t, f.ksy[key], f"{f.path}/{key}", "ctx", locals_)
        if "stream_size(" in out:  # _io.size
            self.names.add("stream_size")
        return out

    def call_args(self, t: TypeIR, f: FieldIR, key: str, mode: str) -> list[str]:
        """The arguments of a call the schema writes at `key` (a type's params, a process)."""
        call = parse_expr(f.ksy[key], f"{f.path}/{key}")
        args = list(call.args[1:]) if call.kind == "call" else []
        return [self.schema.translate_node(t, a, f"{f.path}/{key}", mode) for a in args]

    def switch(self, t: TypeIR, f: FieldIR) -> tuple[str, list[tuple[list[str], str]], str | None]:
        """switch-on over `this`, the case keys over `this` grouped by class (in the
        schema's order), and the default class."""
        typ = f.ksy["type"]
        on = self.schema.translate(t, typ["switch-on"], f"{f.path}/type/switch-on", "ctx")
        grouped: dict[str, list[str]] = {}
        for key, ref in typ["cases"].items():
            if key == "_":
                continue
            where = f"{f.path}/type/cases/{key}"
            _kind, cls = self.schema.resolve_type(str(ref).split("(")[0].strip(), where)
            grouped.setdefault(cls, []).append(self.schema.translate(t, key, where, "ctx"))
        return on, [(keys, cls) for cls, keys in grouped.items()], f.switch_default

    def case_args(self, t: TypeIR, f: FieldIR) -> dict[str, list[str]]:
        """Each case class's arguments over `this` (the switch's parent)."""
        out: dict[str, list[str]] = {}
        for key, ref in f.ksy["type"]["cases"].items():
            where = f"{f.path}/type/cases/{key}"
            call = parse_expr(str(ref), where)
            args = list(call.args[1:]) if call.kind == "call" else []
            _kind, cls = self.schema.resolve_type(str(ref).split("(")[0].strip(), where)
            out[cls] = [self.schema.translate_node(t, a, where, "ctx_parent") for a in args]
        return out

    def instance(self, t: TypeIR, inst: InstanceIR) -> str:
        """A value instance's value, or a positional instance's position, over `this`."""
        key = "value" if inst.kind == "value" else "pos"
        return self.schema.translate(
            t, inst.ksy[key], f"{t.path}/instances/{inst.name}/{key}", "ctx"
        )

    def use(self, *names: str) -> None:
        self.names.update(names)

    def plan(self) -> CModule:
        order: list[TypeIR] = []
        seen: set[str] = set()

        def visit(t: TypeIR):
            if t.class_name in seen:
                return
            seen.add(t.class_name)
            for f in t.fields:
                for cls in self._classes(f):
                    if cls in self.by_class:
                        visit(self.by_class[cls])
            order.append(t)

        visit(self.mod.types[0])
        for t in self.mod.types:
            visit(t)
        types = []
        for t in order:
            types.append(self.type(t))
            self.defined.add(t.class_name)
        return CModule(
            id=self.mod.id,
            source=self.mod.source,
            title=self.mod.title,
            doc=self.mod.doc,
            imports=self.mod.imports,
            enums=self.mod.enums,
            types=types,
            top=self.mod.types[0].class_name,
            names=sorted(self.names - OURS - {"to_enum"}, key=_natural),
            ours=sorted(self.names & OURS),
            uses_enums="to_enum" in self.names,
        )

    @staticmethod
    def _classes(f: FieldIR) -> list[str]:
        if f.kind == "user":
            return [f.user_class]
        if f.kind == "switch":
            return [cls for _, cls in f.switch_cases]
        return []

    def type(self, t: TypeIR) -> CType:
        fields = []
        for p in t.params:
            self.use("Computed")
            fields.append(CField(p.name, f"Computed({p.name})", p.doc))
        for inst in t.pos_instances:
            self.use("PeekAt", INT_CLASSES[inst.fmt])
            sub = self.validated(INT_CLASSES[inst.fmt], t, "int", inst.ksy.get("valid"),
                                 f"{t.path}/instances/{inst.name}/valid")  # fmt: skip
            pos = self.instance(t, inst)
            fields.append(CField(inst.name, f"PeekAt({_lam(pos)}, {sub})", _doc_line(inst.doc)))
        for f in t.fields:
            fields.append(CField(f.name, self.field(t, f), _doc_line(f.doc)))
        for inst in t.value_instances:
            self.use("Computed")
            value = self.instance(t, inst)
            if inst.enum_class:
                value = f"to_enum({inst.enum_class}, {value})"
                self.use("to_enum")
            fields.append(CField(inst.name, f"Computed({_lam(value)})", _doc_line(inst.doc)))
        kwargs = []
        if t.rest_field:
            kwargs.append(f'rest="{t.rest_field.name}"')
        if t.crc_field:
            f = t.crc_field
            kwargs.append(f'crc=("{f.name}", "{f.crc_from}", "{f.crc_algorithm}")')
        lazy = [g.name for g in t.fields if g.lazy and g.size is not None]
        if kwargs and lazy:
            kwargs.append(f"deferred=({''.join(f'{n!r}, ' for n in lazy)})".replace("'", '"'))
        ctype = CType(t.class_name, [p.name for p in t.params], t.doc, fields, kwargs)
        self.use(ctype.ctor)
        return ctype

    def ref(self, cls: str, args: list[str]) -> str:
        call = f"{cls}({', '.join(_lam(a) for a in args)})" if args else cls
        if cls in self.by_class and cls not in self.defined:
            self.use("LazyBound")
            return f"LazyBound(lambda: {call})"
        return call

    def base(self, t: TypeIR, f: FieldIR, region: str = "GreedyBytes") -> str:
        """The field's own type; bytes and text take `region` (the whole stream, or their
        size when Bytes can check it both ways)."""
        if f.fixed:
            self.use(INT_CLASSES[f.fmt])
            return INT_CLASSES[f.fmt]
        if f.kind == "varint":
            cls = "ZigZagVarint" if f.varint_signed else "UnsignedVarint"
            self.use(cls)
            return f"{cls}({f.max_len})"
        if f.kind == "contents":
            self.use("Const")
            return f"Const({f.contents!r})"
        if f.kind == "user":
            return self.ref(f.user_class, self.call_args(t, f, "type", "ctx_parent"))
        if f.kind == "switch":
            self.use("Switch")
            on, keyed, default_cls = self.switch(t, f)
            args = self.case_args(t, f)
            cases = ", ".join(
                f"{key}: {self.ref(cls, args[cls])}" for keys, cls in keyed for key in keys
            )
            if default_cls:
                default = self.ref(default_cls, args[default_cls])
            elif f.switch_raw_default:  # Kaitai: a sized switch no case matches is its bytes
                self.use("GreedyBytes")
                default = "GreedyBytes"
            else:
                self.use("Error")
                default = "Error"
            return f"Switch({_lam(on)}, {{{cases}}}, default={default})"
        self.use(region.split("(")[0])
        if f.kind == "str":
            self.use("Text")
            return f'Text({region}, "{CODECS.get(f.encoding.upper(), f.encoding.lower())}")'
        return region

    def coded(self, t: TypeIR, f: FieldIR, region: str = "GreedyBytes") -> str:
        """The base type through the field's codec (`process`), if it has one: what a
        length field measures."""
        sub = self.base(t, f, region)
        if f.process:
            self.use("KafkaCompressed")
            args = self.call_args(t, f, "process", "ctx")
            sub = f"KafkaCompressed({sub}, {', '.join(_lam(a) for a in args)})"
        return sub

    def item(self, t: TypeIR, f: FieldIR) -> str:
        """One element: the coded type inside its size, checked."""
        size = self.ctx(t, f, "size")
        if size is None:
            return self.field_validated(self.coded(t, f), t, f)
        size_from = _refs(size)
        struct_derived = {g.name for g in t.fields if g.length_of_rest or g.crc_algorithm}
        if not size_from & set(t.derived_names):
            self.use("FixedSized")
            sub = f"FixedSized({_lam(size)}, {self.coded(t, f)})"
        elif f.kind in ("bytes", "str") and not f.process and not size_from & struct_derived:
            # The size is a Rebuild of this field's length: Bytes checks it both ways.
            sub = self.coded(t, f, f"Bytes({_lam(size)})")
        else:
            # The size is derived from this field when building (by a Rebuild or KafkaStruct).
            self.use("Sized")
            sub = f"Sized({_lam(size)}, {self.coded(t, f)})"
        return self.field_validated(sub, t, f)

    def field_validated(self, sub: str, t: TypeIR, f: FieldIR) -> str:
        spec = f.ksy.get("valid") if f.valid_spec is None else (f.valid_spec or None)
        return self.validated(sub, t, f.kind, spec, f"{f.path}/valid")

    def validated(self, sub: str, t: TypeIR, kind: str, spec, where: str) -> str:
        """sub checked by the schema's `valid` (both ways)."""
        if spec is None:
            return sub
        self.use("ExprValidator")
        checks = self.schema.valid_checks(t, kind, spec, where, "ctx")
        fails = " or ".join(f"({v.fails})" for v in checks)
        return f"ExprValidator({sub}, lambda _, this: not ({fails}))"

    def field(self, t: TypeIR, f: FieldIR) -> str:
        sub = self.item(t, f)
        if f.size_of:
            self.use("Rebuild", "encoded_size")
            by_name = {g.name: g for g in t.fields}
            targets = ", ".join(f'("{n}", {self.coded(t, by_name[n])})' for n in f.size_of)
            size = f"encoded_size(this, {targets})"
            if f.length_plus or f.length_when_null != -1:  # compact: + 1 when present, 0 when null
                size = f"(lambda n: {f.length_when_null} if n < 0 else n + {f.length_plus})({size})"
            sub = f"Rebuild({sub}, lambda this: {size})"
        elif f.count_of:
            self.use("Rebuild")
            items = f'this["{f.count_of}"]'
            count = (
                f"len({items})"
                if f.length_of is None
                else (
                    f"{f.length_when_null} if {items} is None else len({items}) + {f.length_plus}"
                )
            )
            sub = f"Rebuild({sub}, lambda this: {count})"
        elif f.derive:
            self.use("Rebuild")
            sub = f"Rebuild({sub}, {_lam(self.ctx(t, f, '-kafkacodec-derive'))})"
        if f.repeat == "expr":
            self.use("Array")
            sub = f"Array({_lam(self.ctx(t, f, 'repeat-expr'))}, {sub})"
        elif f.repeat == "eos":
            self.use("RepeatEos")
            sub = f"RepeatEos({sub})"
        elif f.repeat == "until":
            self.use("RepeatUntil")
            until = self.ctx(t, f, "repeat-until", {"_"})
            sub = f"RepeatUntil(lambda _, _items, this: {until}, {sub})"
        cond = self.ctx(t, f, "if")
        if cond and f.cond_io:  # builders cannot know where the data ends: present when given
            cond = f"({cond}) if this._parsing else (this.{f.name} is not None)"
        if cond:
            self.use("If")
            sub = f"If({_lam(cond)}, {sub})"
        return sub


def plan(mod: ModuleIR) -> CModule:
    return _Planner(mod).plan()

"""What kafkacodec's own language targets (generator/golang.py, generator/rust.py) share: a
module's names (classes prefixed with the schema's class, enum members), expressions handed
to the target's translator, the `valid` rules of a field, a type reference's arguments, and
the walk of an expression's names and attributes. Each target says how its language writes
them (Target's class attributes and methods)."""

from __future__ import annotations

from .errors import SchemaError
from .expr import _BINARY, Node, parse_expr
from .ir import ModuleIR, TypeIR, _as_list

__all__ = ["Unparsed", "TargetModule", "TargetTranslator", "indent", "comment", "format_sources"]


class Unparsed:
    """A parsed argument node, passed where an expression text is expected."""

    def __init__(self, node: Node):
        self.node = node


def indent(text: str, prefix: str) -> str:
    return "\n".join(prefix + line if line else line for line in text.split("\n"))


def comment(doc: str, marker: str, prefix: str = "") -> str:
    """doc as comment lines of about 90 characters, each `prefix` `marker` text."""
    words, lines, line = " ".join(str(doc).split()).split(" "), [], ""
    for w in words:
        if line and len(line) + len(w) > 90:
            lines.append(line)
            line = w
        else:
            line = f"{line} {w}" if line else w
    lines.append(line)
    return "\n".join(f"{prefix}{marker} {x}" for x in lines)


def format_sources(sources: dict[str, str], command: list[str], language: str, install: str) -> dict[str, str]:
    """Each source formatted by the language's formatter (command reads it on stdin)."""
    import shutil
    import subprocess

    from .errors import GenerateError

    tool = shutil.which(command[0])
    if tool is None:
        raise GenerateError(f"the {language} target is formatted with {command[0]}: install {install}")
    out = {}
    for name, src in sources.items():
        proc = subprocess.run([tool, *command[1:]], input=src, capture_output=True, text=True, check=False)
        if proc.returncode != 0:
            raise GenerateError(f"{command[0]} refuses the {language} output for {name}: {proc.stderr[:2000]}")
        out[name] = proc.stdout
    return out


class TargetModule:
    """One schema's module in a target language. Subclasses set LANGUAGE, TRANSLATOR and
    enum_const (an enum member's name in the language)."""

    LANGUAGE = ""
    TRANSLATOR: type[TargetTranslator]

    def __init__(self, mod: ModuleIR):
        self.mod = mod
        self.names = mod.names
        assert self.names is not None
        self.prefix = mod.types[0].class_name
        self.local = {t.class_name for t in mod.types}
        self.enum_values = {}
        for name, e in self.names.enums.items():
            for _value, label in e.members:
                self.enum_values[(name, label.lower())] = self.enum_const(e.class_name, label)

    def enum_const(self, enum_class: str, label: str) -> str:
        raise NotImplementedError

    def class_of(self, cls: str) -> str:
        """The type of a class the IR names: a local type is prefixed with the schema's class
        (unless it is that class); an imported schema's top keeps its name."""
        if cls in self.local and cls != self.prefix:
            return self.prefix + cls
        return cls

    # -- expressions
    def expr(self, t: TypeIR, text, where: str, item: tuple[str, str] | None = None) -> tuple[str, str]:
        """A schema expression of type t in the language: (source, kind), kind one of int,
        bool, bytes, str, list. item: what `_` is (its source and kind), in valid and
        repeat-until."""
        node = text.node if isinstance(text, Unparsed) else parse_expr(text, where)
        return self.TRANSLATOR(self, t, where, item).emit(node)

    def int_expr(self, t: TypeIR, text, where: str, item=None) -> str:
        src, kind = self.expr(t, text, where, item)
        if kind != "int":
            raise SchemaError(where, f"expected an integer expression, got {kind}: {text!r}")
        return src

    def bool_expr(self, t: TypeIR, text, where: str, item=None) -> str:
        src, kind = self.expr(t, text, where, item)
        if kind != "bool":
            raise SchemaError(where, f"expected a condition, got {kind}: {text!r}")
        return src

    def negated_expr(self, t: TypeIR, text, where: str, item) -> str:
        """The condition that holds when `valid: {expr: text}` fails."""
        return f"!({self.bool_expr(t, text, where, item)})"

    def valid_checks(self, t: TypeIR, spec, kind: str, value: str, where: str) -> list[tuple[str, str]]:
        """(a condition that holds when the value is invalid, message) of a `valid`."""
        if spec is None:
            return []
        if not isinstance(spec, dict):
            spec = {"eq": spec}
        item = (value, kind)
        out = []
        if "eq" in spec:
            v = self.int_expr(t, spec["eq"], f"{where}/eq")
            out.append((f"{value} != {v}", f"expected {spec['eq']}"))
        if "min" in spec:
            v = self.int_expr(t, spec["min"], f"{where}/min")
            out.append((f"{value} < {v}", f"must be at least {spec['min']}"))
        if "max" in spec:
            v = self.int_expr(t, spec["max"], f"{where}/max")
            out.append((f"{value} > {v}", f"must be at most {spec['max']}"))
        if "any-of" in spec:
            vals = [self.int_expr(t, a, f"{where}/any-of") for a in _as_list(spec["any-of"])]
            out.append(("!(" + " || ".join(f"{value} == {v}" for v in vals) + ")",
                        "must be one of " + ", ".join(str(a) for a in _as_list(spec["any-of"]))))  # fmt: skip
        if "expr" in spec:
            out.append((self.negated_expr(t, spec["expr"], f"{where}/expr", item), f"must satisfy {spec['expr']}"))
        return out

    @staticmethod
    def type_args(ref) -> list:
        """The argument expressions of a type reference `name(a, b)` (as nodes)."""
        ref = str(ref).strip()
        if "(" not in ref:
            return []
        call = parse_expr(ref, "type")
        return [Unparsed(a) for a in call.args[1:]]


class TargetTranslator:
    """A schema expression in a target language: the walk of names and attributes, each
    language's syntax by its methods (field, param, instance, io, length, item_index)."""

    def __init__(self, m: TargetModule, t: TypeIR, where: str, item):
        self.m = m
        self.t = t
        self.where = where
        self.item = item
        self.fields = {f.name: f for f in t.fields}
        self.instances = {i.name: i for i in t.instances}
        self.params = {p.name for p in t.params}

    def fail(self, msg: str):
        raise SchemaError(self.where, f"the {self.m.LANGUAGE} target: {msg}")

    def emit(self, n: Node) -> tuple[str, str]:
        k = n.kind
        if k == "num":
            if not -(1 << 63) <= n.value < (1 << 63):
                self.fail(f"{n.value} does not fit 64 bits")
            return self.number(n.value), "int"
        if k == "bool":
            return ("true" if n.value else "false"), "bool"
        if k == "str":
            return self.string(n.value), "str"
        if k == "bytes":
            return self.byte_string(n.value), "bytes"
        if k == "name":
            return self.name(n.value)
        if k == "enum":
            key = (n.value[0], n.value[1])
            if key not in self.m.enum_values:
                self.fail(f"unknown enum member {key[0]}::{key[1]}")
            return self.enum_value(self.m.enum_values[key]), "int"
        if k == "unary":
            src, _kind = self.emit(n.args[0])
            if n.value == "not":
                return f"!({src})", "bool"
            return self.unary(n.value, src), "int"
        if k == "binary":
            return self.binary(n)
        if k == "ternary":
            cond, ck = self.emit(n.args[0])
            a, ak = self.emit(n.args[1])
            b, bk = self.emit(n.args[2])
            if ck != "bool" or ak != bk:
                self.fail("a ternary needs a condition and two branches of one kind")
            return self.ternary(cond, a, b, ak), ak
        if k == "attr":
            return self.attr(n)
        self.fail(f"unsupported expression ({k})")
        raise AssertionError

    def binary(self, n: Node) -> tuple[str, str]:
        op = n.value
        a, ak = self.emit(n.args[0])
        b, bk = self.emit(n.args[1])
        if op in ("and", "or"):
            if ak != "bool" or bk != "bool":
                self.fail(f"{op} needs two conditions")
            if a == b:  # `version >= 1 and version >= 1`, as specs import writes nested versions
                return a, "bool"
            return self.logical(op, a, b), "bool"
        if op in ("==", "!=", "<", "<=", ">", ">="):
            if ak != bk:
                self.fail(f"comparing a {ak} with a {bk}")
            return f"({a} {op} {b})", "bool"
        if ak != "int" or bk != "int":
            self.fail(f"{op} needs integers")
        if op not in _BINARY and op not in ("/", "%"):
            self.fail(f"unknown operator {op}")
        return self.arithmetic(op, a, b), "int"

    # the language's spelling of each kind of expression
    def number(self, value: int) -> str:
        raise NotImplementedError

    def string(self, value: str) -> str:
        raise NotImplementedError

    def byte_string(self, value: bytes) -> str:
        raise NotImplementedError

    def enum_value(self, const: str) -> str:
        raise NotImplementedError

    def unary(self, op: str, src: str) -> str:
        raise NotImplementedError

    def ternary(self, cond: str, a: str, b: str, kind: str) -> str:
        raise NotImplementedError

    def logical(self, op: str, a: str, b: str) -> str:
        raise NotImplementedError

    def arithmetic(self, op: str, a: str, b: str) -> str:
        raise NotImplementedError

    # the language's spelling of each name and attribute
    def index(self) -> str:
        raise NotImplementedError

    def param(self, name: str) -> str:
        raise NotImplementedError

    def pos_instance(self, name: str) -> str:
        raise NotImplementedError

    def value_instance(self, name: str) -> str:
        raise NotImplementedError

    IO: dict[str, tuple[str, str]] = {}

    def length(self, base: str) -> str:
        raise NotImplementedError

    def name(self, name: str) -> tuple[str, str]:
        if name == "_":
            if self.item is None:
                self.fail("`_` outside valid and repeat-until")
            return self.item
        if name == "_index":
            return self.index(), "int"
        if name == "_io":
            return "", "io"
        if name in self.params:
            return self.param(name), "int"
        if name in self.fields:
            return self.m.value_of(self.fields[name])  # type: ignore[attr-defined]
        inst = self.instances.get(name)
        if inst is not None:
            if inst.kind == "pos":
                return self.pos_instance(name), "int"
            _src, kind = self.m.expr(self.t, inst.ksy["value"], f"{self.t.path}/instances/{name}/value")
            return self.value_instance(name), kind
        self.fail(f"unknown name {name!r}")
        raise AssertionError

    def attr(self, n: Node) -> tuple[str, str]:
        base, kind = self.emit(n.args[0])
        name = n.value
        if kind == "io":
            if name not in self.IO:
                self.fail(f"_io.{name}")
            return self.IO[name]
        if name in ("value", "to_i") and kind == "int":
            return base, "int"  # a varint's value; an enum's integer
        if name in ("size", "length") and kind in ("list", "bytes", "str"):
            return self.length(base), "int"
        self.fail(f".{name} of a {kind}")
        raise AssertionError


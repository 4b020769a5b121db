"""A type's parse as a program for the native interpreter (runtime/_programs.c): plain
data (nested tuples of ints and strings) the generator prints into the class as PROGRAM.

The interpreter reads the subset the schemas made from Kafka's message specs use:
fixed-width integers and floats, unsigned varints, bytes and UTF-8 strings of a size, rest
bytes, user types with arguments, a sized switch on an integer, `if`, `repeat: expr` and
`valid` (expr, min, max, eq), with integer expressions over the type's params and earlier
fields. A type using anything else gets no program (None) and is read by its Python
parser only. Where the program meets bad bytes, the interpreter gives up and the Python
parser reads the same bytes again, so errors are always the Python parser's.

    PROGRAM = (fields, instructions, number of params: the first fields)
    instruction = (kind, slot, cond, count, valids, a, b, c)
      kind: INT (a: width, b: signed), FLOAT (a: width), UVARINT (a: max bytes),
            BYTES (a: size), REST, STR (a: size), USER (a: class name, b: arguments),
            SWITCH (a: size, b: switch-on, c: ((value, class name, arguments), ...);
                    no match keeps the bytes)
      slot: the field's index in FIELDS; cond, count: expressions or None; valids: expressions
    expression = a tuple of ints, a stack machine's code (OPS)
"""

from __future__ import annotations

from .expr import Node, parse_expr
from .ir import FieldIR, ModuleIR, TypeIR

__all__ = ["program", "OPS", "KINDS"]

KINDS = {
    "INT": 1,
    "FLOAT": 2,
    "UVARINT": 3,
    "BYTES": 4,
    "REST": 5,
    "STR": 6,
    "USER": 7,
    "SWITCH": 8,
}
#: Stack machine operations (runtime/_programs.c): CONST takes the next int; SLOT the int
#: value of a field or param; LEN the byte length of a bytes or string field; CUR and
#: CUR_LEN the value being checked (`_`) and its length.
OPS = {
    "CONST": 0, "SLOT": 1, "LEN": 2, "CUR": 3, "CUR_LEN": 4,
    "+": 10, "-": 11, "*": 12, "==": 13, "!=": 14, "<": 15, "<=": 16, ">": 17, ">=": 18,
    "and": 19, "or": 20, "not": 21, "neg": 22, "?": 23,
}  # fmt: skip


class Unsupported(Exception):
    """What the interpreter does not read: the type keeps its Python parser alone."""


class _Compiler:
    def __init__(self, mod: ModuleIR, t: TypeIR):
        self.mod = mod
        self.t = t
        self.slots = {name: i for i, name in enumerate(t.stored)}
        self.fields = {f.name: f for f in t.fields}

    def expr(self, text, current: FieldIR | None = None) -> tuple[int, ...]:
        out: list[int] = []
        self._emit(parse_expr(text, self.t.path), out, current)
        return tuple(out)

    def _emit(self, n: Node, out: list[int], current: FieldIR | None) -> None:
        k = n.kind
        if k == "num":
            if not -(1 << 63) <= n.value < (1 << 63):
                raise Unsupported("a constant beyond 64 bits")
            out += [OPS["CONST"], n.value]
        elif k == "bool":
            out += [OPS["CONST"], int(n.value)]
        elif k == "name":
            out += self._name(n.value, current, length=False)
        elif k == "attr":
            base = n.args[0]
            if base.kind != "name":
                raise Unsupported("attributes of expressions")
            if n.value == "value":
                out += self._name(base.value, current, length=False, varint=True)
            elif n.value in ("size", "length"):
                out += self._name(base.value, current, length=True)
            else:
                raise Unsupported(f".{n.value}")
        elif k == "unary":
            self._emit(n.args[0], out, current)
            if n.value == "not":
                out.append(OPS["not"])
            elif n.value == "-":
                out.append(OPS["neg"])
            else:
                raise Unsupported(f"unary {n.value}")
        elif k == "binary":
            if n.value not in OPS:
                raise Unsupported(f"operator {n.value}")
            self._emit(n.args[0], out, current)
            self._emit(n.args[1], out, current)
            out.append(OPS[n.value])
        elif k == "ternary":
            for a in n.args:
                self._emit(a, out, current)
            out.append(OPS["?"])
        else:
            raise Unsupported(f"expression {k}")

    def _name(
        self, name: str, current: FieldIR | None, *, length: bool, varint: bool = False
    ) -> list[int]:
        if name == "_":
            if current is None:
                raise Unsupported("_ outside a check")
            if length:
                return [OPS["CUR_LEN"]]
            return [OPS["CUR"]]
        if name not in self.slots:
            raise Unsupported(f"name {name}")
        f = self.fields.get(name)
        if length:
            if f is None or f.kind not in ("bytes", "str") or f.is_list:
                raise Unsupported(f"{name}.size")
            return [OPS["LEN"], self.slots[name]]
        if f is not None and (f.is_list or f.kind not in ("int", "varint")):
            raise Unsupported(f"the value of {name}")
        if varint and (f is None or f.kind != "varint"):
            raise Unsupported(f"{name}.value")
        return [OPS["SLOT"], self.slots[name]]

    def valids(self, f: FieldIR) -> tuple:
        spec = f.ksy.get("valid")
        if spec is None:
            return ()
        if f.is_list or f.kind not in ("int", "varint", "bytes"):
            raise Unsupported("valid on this field")
        if not isinstance(spec, dict):
            spec = {"eq": spec}
        out = []
        cur = [OPS["CUR"]] if f.kind != "bytes" else None
        for key, value in spec.items():
            if key == "expr":
                out.append(self.expr(value, f))
            elif key in ("min", "max", "eq") and cur is not None and isinstance(value, int):
                op = {"min": ">=", "max": "<=", "eq": "=="}[key]
                out.append((*cur, OPS["CONST"], value, OPS[op]))
            else:
                raise Unsupported(f"valid {key}")
        return tuple(out)

    def args(self, f: FieldIR, ref: str) -> tuple:
        call = parse_expr(ref, f.path)
        if call.kind != "call":
            return ()
        out = []
        for a in call.args[1:]:
            code: list[int] = []
            self._emit(a, code, None)
            out.append(tuple(code))
        return tuple(out)

    def field(self, f: FieldIR) -> tuple:
        if (
            f.process
            or f.lazy
            or f.crc_algorithm
            or f.length_of_rest
            or f.repeat not in (None, "expr")
        ):
            raise Unsupported("process, lazy, CRC, rest lengths, repeat other than expr")
        if f.enum_class or f.bounds and "any-of" in f.bounds:
            raise Unsupported("enums")
        cond = self.expr(f.ksy["if"]) if "if" in f.ksy else None
        count = self.expr(f.ksy["repeat-expr"]) if f.repeat == "expr" else None
        slot = self.slots[f.name]
        valids = self.valids(f)
        a = b = c = None
        if f.kind == "int":
            kind, a, b = "INT", f.width, int(f.fmt.islower())
        elif f.kind == "float":
            kind, a = "FLOAT", f.width
        elif f.kind == "varint":
            if f.varint_signed:
                raise Unsupported("zig-zag varints")
            kind, a = "UVARINT", f.max_len
        elif f.kind in ("bytes", "str"):
            if f.size_eos:
                if f.kind != "bytes":
                    raise Unsupported("text to the end")
                kind = "REST"
            else:
                kind, a = ("STR" if f.kind == "str" else "BYTES"), self.expr(f.ksy["size"])
            if f.kind == "str" and str(f.encoding).upper().replace("-", "") != "UTF8":
                raise Unsupported("text other than UTF-8")
        elif f.kind == "user":
            if f.size is not None or f.size_eos:
                raise Unsupported("a sized user type")
            ref = f.ksy["type"]
            kind, a, b = "USER", f.user_class, self.args(f, ref)
        elif f.kind == "switch":
            if f.size is None or f.switch_default is not None:
                raise Unsupported("a switch without a size, or with a default")
            cases = []
            for key, ref in f.ksy["type"]["cases"].items():
                if not isinstance(key, int):
                    raise Unsupported("switch cases that are not integers")
                _kind, cls = self.mod.names.resolve_type(str(ref).split("(")[0].strip(), f.path)
                cases.append((key, cls, self.args(f, str(ref))))
            kind, a, b, c = (
                "SWITCH",
                self.expr(f.ksy["size"]),
                self.expr(f.ksy["type"]["switch-on"]),
                tuple(cases),
            )
        else:
            raise Unsupported(f"a {f.kind} field")
        return (KINDS[kind], slot, cond, count, valids, a, b, c)


def program(mod: ModuleIR, t: TypeIR):
    """PROGRAM for a type, or None when the interpreter does not read it."""
    if t.rest_field or t.crc_field or any(i.kind == "pos" for i in t.instances):
        return None
    try:
        c = _Compiler(mod, t)
        return (tuple(t.stored), tuple(c.field(f) for f in t.fields), len(t.params))
    except Unsupported:
        return None


def wanted(mod: ModuleIR) -> bool:
    """Programs are printed for the schemas made from Kafka's message specs (a type with
    -kafkacodec-message): the log formats have native loops of their own."""
    return any(t.message is not None for t in mod.types)

"""Kaitai Struct expressions: a parser and a translator to Python source.

The subset kafkacodec's schemas use: integer, boolean and string literals; names
(`_`, `_index`, `_io`, fields, params, instances); enum references `enum::member`;
unary `-`, `~`, `not`; binary arithmetic, shifts, bitwise and comparison operators;
`and`, `or`; the ternary `c ? a : b`; attribute access (`.size`, `.last`, `.first`,
`.to_i`, `.length`, `.value`, `.pos`, `.eos`, field access); indexing; calls in type
references (`name(arg, ...)`).

Translation is given a resolver that maps a bare name to Python source, so the same
expression can be printed for a parser (locals), a builder (locals) or a property (self).
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from .errors import SchemaError

_TOKEN = re.compile(
    r"""
    (?P<ws>\s+)
  | (?P<num>0[xX][0-9a-fA-F_]+|0[bB][01_]+|0[oO][0-7_]+|[0-9][0-9_]*)
  | (?P<str>'[^']*'|"(?:[^"\\]|\\.)*")
  | (?P<name>[A-Za-z_][A-Za-z0-9_]*)
  | (?P<op>::|<<|>>|<=|>=|==|!=|[-+*/%&|^~<>?:.,()\[\]])
    """,
    re.VERBOSE,
)

# Binary operators: precedence (higher binds tighter) and the Python spelling.
_BINARY = {
    "or": (1, "or"),
    "and": (2, "and"),
    "==": (4, "=="),
    "!=": (4, "!="),
    "<": (4, "<"),
    "<=": (4, "<="),
    ">": (4, ">"),
    ">=": (4, ">="),
    "|": (5, "|"),
    "^": (6, "^"),
    "&": (7, "&"),
    "<<": (8, "<<"),
    ">>": (8, ">>"),
    "+": (9, "+"),
    "-": (9, "-"),
    "*": (10, "*"),
    "/": (10, "//"),
    "%": (10, "%"),
}
_TERNARY_PREC = 0
_UNARY_PREC = 11


@dataclass(frozen=True)
class Node:
    """An expression tree node: kind is one of num, bool, str, name, enum, unary,
    binary, ternary, attr, index, call."""

    kind: str
    value: object = None
    args: tuple = ()


def _tokenize(text: str, where: str) -> list[tuple[str, str]]:
    tokens = []
    pos = 0
    while pos < len(text):
        m = _TOKEN.match(text, pos)
        if not m:
            raise SchemaError(where, f"cannot read expression {text!r} at character {pos}")
        pos = m.end()
        kind = m.lastgroup
        if kind != "ws":
            tokens.append((kind, m.group()))
    tokens.append(("end", ""))
    return tokens


class _Parser:
    def __init__(self, text: str, where: str):
        self.text = text
        self.where = where
        self.tokens = _tokenize(text, where)
        self.i = 0

    def fail(self, msg: str):
        raise SchemaError(self.where, f"{msg} in expression {self.text!r}")

    def peek(self) -> tuple[str, str]:
        return self.tokens[self.i]

    def take(self, value: str | None = None) -> tuple[str, str]:
        tok = self.tokens[self.i]
        if value is not None and tok[1] != value:
            self.fail(f"expected {value!r}, found {tok[1] or 'the end'!r}")
        self.i += 1
        return tok

    def parse(self) -> Node:
        node = self.expr(_TERNARY_PREC)
        if self.peek()[0] != "end":
            self.fail(f"unexpected {self.peek()[1]!r}")
        return node

    def expr(self, min_prec: int) -> Node:
        left = self.unary()
        while True:
            kind, tok = self.peek()
            if tok == "?" and min_prec <= _TERNARY_PREC:
                self.take()
                then = self.expr(_TERNARY_PREC)
                self.take(":")
                other = self.expr(_TERNARY_PREC)
                left = Node("ternary", None, (left, then, other))
                continue
            op = tok if kind in ("op", "name") else None
            if op not in _BINARY or _BINARY[op][0] < min_prec or min_prec == _UNARY_PREC:
                return left
            prec = _BINARY[op][0]
            self.take()
            right = self.expr(prec + 1)
            left = Node("binary", op, (left, right))

    def unary(self) -> Node:
        kind, tok = self.peek()
        if tok in ("-", "~", "not"):
            self.take()
            operand = self.expr(_UNARY_PREC) if tok != "not" else self.expr(3)
            return Node("unary", tok, (operand,))
        return self.postfix(self.atom())

    def atom(self) -> Node:
        kind, tok = self.take()
        if kind == "num":
            return Node("num", int(tok.replace("_", ""), 0))
        if kind == "str":
            return Node("str", tok[1:-1])
        if kind == "name":
            if tok in ("true", "false"):
                return Node("bool", tok == "true")
            if self.peek()[1] == "::":
                self.take()
                member = self.take()
                if member[0] != "name":
                    self.fail("expected an enum member after '::'")
                return Node("enum", (tok, member[1]))
            return Node("name", tok)
        if tok == "(":
            node = self.expr(_TERNARY_PREC)
            self.take(")")
            return node
        if tok == "[":  # a byte array literal: [], [0x01, 2]
            values = []
            while self.peek()[1] != "]":
                if values:
                    self.take(",")
                kind, num = self.take()
                if kind != "num" or not 0 <= int(num.replace("_", ""), 0) <= 255:
                    self.fail("a byte array literal holds numbers 0 to 255")
                values.append(int(num.replace("_", ""), 0))
            self.take("]")
            return Node("bytes", bytes(values))
        self.fail(f"unexpected {tok or 'end'!r}")
        raise AssertionError  # unreachable

    def postfix(self, node: Node) -> Node:
        while True:
            tok = self.peek()[1]
            if tok == ".":
                self.take()
                kind, name = self.take()
                if kind != "name":
                    self.fail("expected a name after '.'")
                if name == "as" and self.peek()[1] == "<":
                    # `.as<type>` casts are no-ops for Python integers.
                    self.take("<")
                    while self.peek()[1] != ">":
                        if self.peek()[0] == "end":
                            self.fail("unterminated .as<...>")
                        self.take()
                    self.take(">")
                    continue
                node = Node("attr", name, (node,))
            elif tok == "[":
                self.take()
                index = self.expr(_TERNARY_PREC)
                self.take("]")
                node = Node("index", None, (node, index))
            elif tok == "(":
                self.take()
                args = []
                if self.peek()[1] != ")":
                    args.append(self.expr(_TERNARY_PREC))
                    while self.peek()[1] == ",":
                        self.take()
                        args.append(self.expr(_TERNARY_PREC))
                self.take(")")
                node = Node("call", None, (node, *args))
            else:
                return node


def parse_expr(text, where: str) -> Node:
    """Parse a Kaitai expression (a YAML scalar: str, int or bool)."""
    if isinstance(text, bool):
        return Node("bool", text)
    if isinstance(text, int):
        return Node("num", text)
    if not isinstance(text, str) or not text.strip():
        raise SchemaError(where, f"expected an expression, found {text!r}")
    return _Parser(text, where).parse()


class Translator:
    """Prints an expression tree as Python source.

    resolve(name) returns (python_source, kind) where kind tells how attribute access on
    it behaves: "int" (a plain value), "varint" (an inlined zig-zag varint: `.value` is
    the value itself), "list", "io", or "object".
    enum_class(name) returns the Python class name of a schema enum.
    """

    # How `_io.<attr>` reads: in parsers, over the locals pos and end.
    IO = {"pos": "pos", "size": "end", "eos": "pos >= end"}

    def __init__(self, resolve, enum_class, where: str, io: dict[str, str] | None = None,
                 subscript: bool = False):  # fmt: skip
        self.io = io or self.IO
        self.subscript = subscript  # fields of nested objects by key (they may be dicts)
        self.resolve = resolve
        self.enum_class = enum_class
        self.where = where

    def fail(self, msg: str):
        raise SchemaError(self.where, msg)

    def __call__(self, node: Node) -> str:
        return self.emit(node)[0]

    def emit(self, n: Node) -> tuple[str, str]:
        k = n.kind
        if k == "num":
            return (hex(n.value) if n.value > 255 else str(n.value)), "int"
        if k == "bool":
            return ("True" if n.value else "False"), "int"
        if k == "str":
            return repr(n.value), "str"
        if k == "bytes":
            return repr(n.value), "bytes"
        if k == "name":
            return self.resolve(n.value)
        if k == "enum":
            enum, member = n.value
            return f"{self.enum_class(enum)}.{member.upper()}", "int"
        if k == "unary":
            inner = self.emit(n.args[0])[0]
            return (f"not {inner}" if n.value == "not" else f"{n.value}{inner}"), "int"
        if k == "binary":
            left = self.wrap(n.args[0])
            right = self.wrap(n.args[1])
            return f"{left} {_BINARY[n.value][1]} {right}", "int"
        if k == "ternary":
            cond, then, other = (self.wrap(a) for a in n.args)
            return f"{then} if {cond} else {other}", "int"
        if k == "index":
            base, kind = self.emit(n.args[0])
            return f"{self.wrap_src(base, n.args[0])}[{self(n.args[1])}]", "object"
        if k == "attr":
            return self.attr(n)
        if k == "call":
            self.fail("calls are allowed only in type references")
        self.fail(f"unsupported expression node {k}")
        raise AssertionError

    def attr(self, n: Node) -> tuple[str, str]:
        name = n.value
        base, kind = self.emit(n.args[0])
        base = self.wrap_src(base, n.args[0])
        if kind == "io":
            if name in self.io:
                return self.io[name], "int"
            self.fail(f"_io.{name} is not supported")
        if kind == "varint":
            if name == "value":
                return base, "int"
            self.fail(f"a zig-zag varint exposes only .value, not .{name}")
        if name == "size" or name == "length":
            return f"len({base})", "int"
        if name == "last":
            return f"{base}[-1]", "object"
        if name == "first":
            return f"{base}[0]", "object"
        if name == "to_i":
            inner = base[1:-1] if base.startswith("(") and base.endswith(")") else base
            return f"int({inner})", "int"
        if self.subscript:
            return f'{base}["{name}"]', "object"
        return f"{base}.{name}", "object"

    def wrap(self, node: Node) -> str:
        return self.wrap_src(self(node), node)

    @staticmethod
    def wrap_src(src: str, node: Node) -> str:
        if node.kind in ("binary", "ternary", "unary"):
            return f"({src})"
        return src

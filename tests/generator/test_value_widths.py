"""Every value instance of the record schemas is computed in a width that holds it in every
language: the official compiler types an integer expression without a cast as a 32-bit
int (Java `((Number) (...)).intValue()`, C++ `int32_t`), so `base_offset +
last_offset_delta` came out as -1 for Kafka's 4611686018427387903. An expression whose
range (interval arithmetic over its fields' types) leaves the 32-bit range must say its
width with a cast (`.as<s8>`), as Kafka computes it in a long."""

from __future__ import annotations

import ast
import re

import pytest

from kafkacodec.generator.render import SCHEMA_DIR

INT32 = (-(2**31), 2**31 - 1)
WIDTHS = {f"{s}{n}": ((-(2 ** (8 * n - 1)), 2 ** (8 * n - 1) - 1) if s == "s" else (0, 2 ** (8 * n) - 1))
          for s in "su" for n in (1, 2, 4, 8)}  # fmt: skip
SCHEMAS = sorted(SCHEMA_DIR.glob("*.ksy"))


def _split_top(expr: str, sep: str) -> list[str] | None:
    depth = 0
    for i, c in enumerate(expr):
        depth += c == "("
        depth -= c == ")"
        if depth == 0 and expr.startswith(sep, i):
            return [expr[:i], expr[i + len(sep) :]]
    return None


#: The integer types Java and C++ hold in 64 bits (Kaitai's u4 is a Java long too).
WIDE = {"s8", "u8", "u4"}


def value_range(expr, scope: dict) -> tuple[int, int]:
    """The range of an integer expression over fields whose ranges `scope` gives; an
    AssertionError where a sum, difference or product can leave the 32-bit range while
    none of its operands is 64 bits wide (the compiled languages compute it in an int)."""
    return _range(str(expr), scope)[:2]


def _range(expr: str, scope: dict) -> tuple[int, int, bool]:
    expr = expr.strip()
    cast = re.fullmatch(r"\((.*)\)\.as<([su][1248])>", expr)
    if cast:
        _range(cast[1], scope)  # (checked inside too)
        return (*WIDTHS[cast[2]], cast[2] in WIDE)
    ternary = _split_top(expr, "?")
    if ternary:
        a, b = _split_top(ternary[1], ":")
        x, y = _range(a, scope), _range(b, scope)
        return min(x[0], y[0]), max(x[1], y[1]), x[2] or y[2]
    if any(op in expr for op in ("==", "!=", "<=", ">=")) or re.search(r"[^<>]<[^<s]|[^>]>[^>]", expr):
        return (0, 1, False)
    python = re.sub(r"(\w+)\.as<([su][1248])>", r"__as_\2(\1)", expr)
    return _node(ast.parse(python, mode="eval").body, scope, expr)


def _node(n, scope, expr: str) -> tuple[int, int, bool]:
    if isinstance(n, ast.Constant) and isinstance(n.value, int):
        return n.value, n.value, False
    if isinstance(n, ast.Name):
        return scope[n.id]()
    if isinstance(n, ast.Call) and isinstance(n.func, ast.Name) and n.func.id.startswith("__as_"):
        kind = n.func.id[len("__as_"):]
        _node(n.args[0], scope, expr)
        return (*WIDTHS[kind], kind in WIDE)
    if isinstance(n, ast.BinOp):
        (a, b, w1), (c, d, w2) = _node(n.left, scope, expr), _node(n.right, scope, expr)
        wide = w1 or w2
        if isinstance(n.op, (ast.Add, ast.Sub, ast.Mult)):
            if isinstance(n.op, ast.Add):
                lo, hi = a + c, b + d
            elif isinstance(n.op, ast.Sub):
                lo, hi = a - d, b - c
            else:
                products = (a * c, a * d, b * c, b * d)
                lo, hi = min(products), max(products)
            assert wide or INT32[0] <= lo <= hi <= INT32[1], (
                f"{expr}: {ast.unparse(n)} ranges over [{lo}, {hi}] in a 32-bit int: make an operand "
                "64 bits wide (x.as<s8>)")
            return lo, hi, wide
        if isinstance(n.op, ast.BitAnd) and c == d and c >= 0:
            return 0, c, wide
        if isinstance(n.op, ast.RShift) and c == d:
            return a >> c, b >> c, wide
    raise AssertionError(f"the width check does not know {ast.dump(n)}: teach it")


def _scope(doc: dict) -> dict:
    scope = {}
    for f in doc.get("seq", []):
        if f.get("type") in WIDTHS:
            scope[f["id"]] = lambda t=f["type"]: (*WIDTHS[t], t in WIDE)
    for name, inst in (doc.get("instances") or {}).items():
        if "value" in inst:
            scope[name] = lambda v=inst["value"]: _range(str(v), scope)
    return scope


def test_the_check_sees_what_a_32_bit_int_cannot_hold():
    scope = {"base_offset": lambda: (*WIDTHS["s8"], True), "delta": lambda: (*WIDTHS["s4"], False),
             "attributes": lambda: (*WIDTHS["s2"], False)}  # fmt: skip
    assert value_range("base_offset + delta", scope) == (-(2**63) - 2**31, 2**63 - 1 + 2**31 - 1)
    assert value_range("(base_offset + delta).as<s8>", scope) == WIDTHS["s8"]
    assert value_range("(attributes >> 3) & 1", scope) == (0, 1)
    with pytest.raises(AssertionError, match="in a 32-bit int"):
        value_range("12 + delta", scope)
    with pytest.raises(AssertionError, match="in a 32-bit int"):
        value_range("(12 + delta).as<s8>", scope)  # (Java adds the ints, then widens)
    assert value_range("(12 + delta.as<s8>).as<s8>", scope) == WIDTHS["s8"]


@pytest.mark.parametrize("schema", SCHEMAS, ids=[s.stem for s in SCHEMAS])
def test_every_value_instance_has_a_width_that_holds_it(schema):
    import yaml

    doc = yaml.safe_load(schema.read_text())
    scope = _scope(doc)
    for name, inst in (doc.get("instances") or {}).items():
        if "value" not in inst or isinstance(inst["value"], bool):
            continue
        lo, hi = value_range(inst["value"], scope)
        explicit = re.fullmatch(r"\(.*\)\.as<[su][1248]>", str(inst["value"]).strip())
        assert explicit or INT32[0] <= lo <= hi <= INT32[1], (
            f"{schema.name}: {name} = {inst['value']} ranges over [{lo}, {hi}], beyond a 32-bit int: "
            f"cast it (.as<s8>), as the compiled languages compute it in 32 bits otherwise")

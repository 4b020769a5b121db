"""From the IR to Hypothesis strategies (generated/strategies/): the statements each
type's strategy runs, decided here; the template only prints them.

A type's strategy draws its fields in byte order into locals named as the fields, so the
schema's conditions and checks read as they do in builders. Fields builders derive are
left None (the builder computes them); in conditions they count as present (0), so that a
field whose presence sets a length (`if: len_key >= 0`) is drawn as optional.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field

from .errors import SchemaError
from .ir import FieldIR, ModuleIR, TypeIR


@dataclass
class SType:
    name: str  # the strategy function
    class_name: str
    params: list[str]
    lines: list[str]
    ctor: list[tuple[str, str]]  # (field, local or None)
    derived: list[tuple[str, str, list[str]]]  # (field, int code, fields it sizes): invalid mode
    doc: str = ""


@dataclass
class SModule:
    id: str
    source: str
    title: str
    classes: list[str]
    imports: list[tuple[str, str]]  # (module, strategy function)
    enums: list[str]  # enum classes the statements name
    types: list[SType] = field(default_factory=list)
    top: str = ""  # the schema's own type's strategy (the usage example names it)
    uses_assume: bool = False


def snake(class_name: str) -> str:
    return re.sub(r"(?<!^)(?=[A-Z])", "_", class_name).lower()


def _names(src: str | None) -> set[str]:
    return set(re.findall(r"\b[a-z_][a-z0-9_]*\b", src or ""))


class _Planner:
    def __init__(self, mod: ModuleIR):
        self.mod = mod

    def plan(self) -> SModule:
        types = [self.type(t) for t in self.mod.types]
        text = "\n".join(line for t in types for line in t.lines)
        enums = [e.class_name for e in self.mod.enums if re.search(rf"\b{e.class_name}\b", text)]
        return SModule(
            id=self.mod.id,
            source=self.mod.source,
            title=self.mod.title,
            classes=sorted(
                [t.class_name for t in self.mod.types] + enums, key=lambda c: (c.lower(), c)
            ),
            imports=[(m, snake(c)) for m, c in self.mod.imports],
            enums=enums,
            types=types,
            top=types[0].name,
            uses_assume="assume(" in text,
        )

    def type(self, t: TypeIR) -> SType:
        derived = set(t.derived_names)
        lines = []
        in_conditions = sorted(derived & _names(" ".join(f.cond_build or "" for f in t.fields)))
        if in_conditions:
            lines.append(" = ".join(in_conditions) + " = 0  # derived: present, in conditions")
        for p in t.params:
            lines.append(f"if {p.name} is None:")
            lines.append(f"    {p.name} = draw(st.integers(0, _h.MAX_ITEMS))")
        ctor = [(p.name, p.name) for p in t.params]
        for f in t.fields:
            if f.derived:
                ctor.append((f.name, "None"))
                continue
            lines += self.field(t, f, derived)
            ctor.append((f.name, f.name))
        codes = []
        for f in t.fields:
            if f.derived and f.kind in ("int", "varint"):
                codes.append((f.name, f.range_code, f.size_of))
        return SType(
            snake(t.class_name), t.class_name, [p.name for p in t.params], lines, ctor, codes, t.doc
        )

    def value(self, t: TypeIR, f: FieldIR, derived: set[str]) -> str:
        """The strategy of one value (one element of a list)."""
        if f.kind in ("int", "varint"):
            code = f.range_code
            b = f.draw_bounds or f.bounds
            args = [f'"{code}"']
            if "eq" in b:
                args.append(f"choices=[{b['eq']}]")
            elif "any-of" in b:
                args.append(f"choices=[{', '.join(b['any-of'])}]")
            else:
                if "min" in b:
                    args.append(f"lo={b['min']}")
                if "max" in b:
                    args.append(f"hi={b['max']}")
            args.append("invalid=invalid")
            strat = f"_h.ints({', '.join(args)})"
            if f.enum_class:
                strat = f"st.one_of(st.sampled_from([int(m) for m in {f.enum_class}]), {strat})"
            return strat
        if f.kind == "float":  # NaN left out: it never equals itself after a round trip
            return f"st.floats(width={f.width * 8}, allow_nan=False)"
        if f.kind == "contents":
            return f"st.just({f.contents!r})"
        if f.kind == "bytes":
            if f.const_size is not None:
                return f"st.binary(min_size={f.const_size}, max_size={f.const_size})"
            return "st.binary(max_size=_h.MAX_BYTES)"
        if f.kind == "str":
            return "st.text(_h.UTF8, max_size=_h.MAX_BYTES)"
        if f.kind == "user":
            args = [("None" if _names(a) & derived else a) for a in f.user_args]
            return f"_S.{snake(f.user_class)}({''.join(a + ', ' for a in args)}invalid=invalid)"
        if f.kind == "switch":
            # The case the switch-on value picks, as a parser would (its bytes when none
            # does, for a sized switch).
            def case(cls: str) -> str:
                args = [("None" if _names(a) & derived else a) for a in f.switch_args.get(cls, [])]
                return f"_S.{snake(cls)}({''.join(a + ', ' for a in args)}invalid=invalid)"

            drawn = {g.name for g in t.fields} | {p.name for p in t.params}
            if _names(f.switch_on) - drawn:  # switched on what is not drawn (an instance)
                return "st.one_of(" + ", ".join(case(c) for _, c in f.switch_cases) + ")"
            out = (
                case(f.switch_default)
                if f.switch_default
                else (
                    "st.binary(max_size=_h.MAX_BYTES)" if f.switch_raw_default else "st.nothing()"
                )
            )
            nested = False
            for cond, cls in reversed([c for c in f.switch_cases if c[0] is not None]):
                out = f"{case(cls)} if ({cond}) else {f'({out})' if nested else out}"
                nested = True
            return out
        raise SchemaError(f.path, f"no strategy for a {f.kind} field")

    def field(self, t: TypeIR, f: FieldIR, derived: set[str]) -> list[str]:
        strat = self.value(t, f, derived)
        if f.repeat == "until":
            raise SchemaError(f.path, "strategies do not support repeat: until")
        if f.is_list:
            count = "None"
            if f.repeat == "expr" and not (_names(f.repeat_expr) & derived):
                count = f.repeat_expr
            strat = f"_h.sized_list({strat}, {count})"
        lines = []
        if f.cond_io:  # where the data ends decides: an object drawn alone is followed by more
            lines.append(f"{f.name} = None" if f.draw_absent else f"{f.name} = draw({strat})")
        elif f.cond:
            optional = bool(_names(f.cond_build) & derived)
            if optional:
                strat = f"st.one_of(st.none(), {strat})"
            lines.append(f"{f.name} = draw({strat}) if ({f.cond_build}) else None")
        else:
            lines.append(f"{f.name} = draw({strat})")
        for v in f.valid:
            if "not (" in v.fails and v.fails.startswith("not ("):  # an `expr` check
                lines.append(f"if not invalid and {f.name} is not None:")
                lines.append(f"    assume(not ({v.fails}))")
        return lines


def plan(mod: ModuleIR) -> SModule:
    return _Planner(mod).plan()

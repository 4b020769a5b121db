"""The C target: generated/kafka_layout.h, the byte layout the schemas declare, for C code
that reads Kafka data (kafkacodec/records/_native_*.c includes it, so that a schema change reaches C).

For every type, the fewest bytes a value takes (_MIN_SIZE, the IR's min_size). For each type
that starts with fixed-width fields (a struct run of the IR's plan): each field's offset
(_AT) and size (_SIZE), the run's size (_FIXED_SIZE), the schema's numeric bounds (_MIN,
_MAX, _EQ), where a CRC's coverage starts (_CRC_FROM), where the bytes a
length field counts start (_REST_AT), and for each instance that is a bit field of one of
those fields (InstanceIR.bits), its mask and shift (_MASK, _SHIFT). And every enum's values.
"""

from __future__ import annotations

from .ir import FieldIR, ModuleIR, TypeIR

__all__ = ["plan"]


def _prefix(mod: ModuleIR, t: TypeIR) -> str:
    name = mod.id if t.path == "/" else f"{mod.id}_{t.name}"
    return name.upper()


def _bounds(prefix: str, f: FieldIR) -> list[tuple[str, str, str]]:
    out = []
    for key, suffix in (("eq", "EQ"), ("min", "MIN"), ("max", "MAX")):
        raw = f.bounds.get(key)
        if isinstance(raw, str) and raw.lstrip("-").isdigit():
            out.append((f"{prefix}_{f.name.upper()}_{suffix}", raw, f"valid {key}"))
    return out


def _type_constants(mod: ModuleIR, t: TypeIR) -> list[tuple[str, str, str]]:
    prefix = _prefix(mod, t)
    # the fewest bytes any value of the type takes (the parsers' MIN_SIZE): a count that
    # needs more than the bytes present is refused before anything is read
    out = [(f"{prefix}_MIN_SIZE", str(t.min_size), "the fewest bytes a value takes")]
    if not t.steps or t.steps[0].kind != "run":
        return out
    run = t.steps[0]
    at = dict(zip((f.name for f in run.fields), run.offsets))
    for f, offset in zip(run.fields, run.offsets):
        name = f"{prefix}_{f.name.upper()}"
        out.append((f"{name}_AT", str(offset), f.ksy_type))
        out.append((f"{name}_SIZE", str(f.width), ""))
        out += _bounds(prefix, f)
    out.append(
        (f"{prefix}_FIXED_SIZE", str(run.size), "bytes of the fixed-width fields it starts with")
    )
    if t.crc_field is not None and t.crc_field.crc_from in at:
        out.append((f"{prefix}_CRC_FROM", str(at[t.crc_field.crc_from]),
                    f"{t.crc_field.crc_algorithm} covers from {t.crc_field.crc_from} to the end"))  # fmt: skip
    rest = t.rest_field
    if rest is not None and rest.name in at:
        out.append((f"{prefix}_REST_AT", str(at[rest.name] + rest.width),
                    f"where the bytes {rest.name} counts start"))  # fmt: skip
    for inst in t.bit_instances:
        assert inst.bits is not None
        field_name, mask, shift = inst.bits
        if field_name in at:
            name = f"{prefix}_{inst.name.upper()}"
            out.append(
                (f"{name}_MASK", hex(mask), f"bits of {field_name}: {inst.ksy.get('value')}")
            )
            out.append((f"{name}_SHIFT", str(shift), ""))
    return out


def plan(modules: list[ModuleIR]) -> dict:
    """What layout.h.j2 prints: a block of #defines per type and per enum."""
    blocks = []
    for mod in modules:
        for t in mod.types:
            consts = _type_constants(mod, t)
            if consts:
                title = f"{mod.id}{'' if t.path == '/' else '::' + t.name} (schemas/{mod.id}.ksy)"
                blocks.append({"title": title, "consts": consts})
        for e in mod.enums:
            name = f"{mod.id}_{e.name}".upper()
            consts = [(f"{name}_{member}", str(value), "") for value, member in e.members]
            blocks.append({"title": f"enum {mod.id}::{e.name}", "consts": consts})
    return {"blocks": blocks}

"""Helpers for the Hypothesis strategies the generator writes to generated/strategies/.

Every schema type gets a strategy of objects of its generated class (valid: they build,
and parse back equal) and one of encodings, `<type>_bytes(mode)`:

- "valid": the encoding of a valid object;
- "invalid": structurally invalid: a valid object in which some of the fields builders
  derive (lengths, counts, CRCs) are overwritten with other values, and whose range
  checks (`valid:` in the schema) may be ignored, encoded as it stands;
- "mutated": a valid encoding, then damaged at the byte level (bytes flipped, the tail
  cut, bytes inserted or dropped, a 4-byte field set to a boundary value).

Needs hypothesis (the dev extra).
"""

from __future__ import annotations

import struct

from hypothesis import strategies as st

from .runtime.errors import KafkacodecError

__all__ = ["MAX_BYTES", "MAX_ITEMS", "UTF8", "ints", "sized_list", "corrupt", "builds", "encoded", "mutate"]

MAX_BYTES = 48  # longest drawn byte or text field
MAX_ITEMS = 4  # longest drawn list
#: The characters of a string field: every code point UTF-8 encodes (all but surrogates).
#: st.text()'s default alphabet is the same set, named by codec ("utf-8"), which Hypothesis
#: works out on the first draw in a fresh .hypothesis directory: over a second, enough for
#: its too_slow health check to fail a user's first run of a test on these strategies.
UTF8 = st.characters(exclude_categories=["Cs"])

_RANGES = {
    "b": 8, "B": 8, "h": 16, "H": 16, "i": 32, "I": 32, "q": 64, "Q": 64,
}  # fmt: skip
BOUNDARY = (0, 1, -1, 0x7F, 0x80, 0x7FFF, 0x8000, 0x7FFFFFFF, -0x80000000, 0xFFFFFFFF)


def int_range(code: str) -> tuple[int, int]:
    """The range of an integer field: a struct code (b, B, h, ... Q), a zig-zag varint's
    32 or 64, or an unsigned varint's u32 or u64."""
    if code in ("u32", "u64"):
        return 0, (1 << int(code[1:])) - 1
    if code in ("32", "64"):
        bits = int(code)
        return -(1 << (bits - 1)), (1 << (bits - 1)) - 1
    bits = _RANGES[code]
    if code.islower():
        return -(1 << (bits - 1)), (1 << (bits - 1)) - 1
    return 0, (1 << bits) - 1


def ints(
    code: str, lo: int | None = None, hi: int | None = None, choices=None, invalid: bool = False
):
    """Integers of a field's type; lo, hi and choices are the schema's `valid` (ignored
    half of the time in invalid mode). Small values and the range's ends come often."""
    full_lo, full_hi = int_range(code)
    if invalid:
        narrowed = ints(code, lo, hi, choices)
        return st.one_of(narrowed, st.integers(full_lo, full_hi))
    if choices is not None:
        return st.sampled_from(list(choices))
    lo = full_lo if lo is None else max(lo, full_lo)
    hi = full_hi if hi is None else min(hi, full_hi)
    ends = [v for v in (lo, hi, 0, -1, 1) if lo <= v <= hi]
    return st.one_of(
        st.sampled_from(ends), st.integers(max(lo, -128), min(hi, 127)), st.integers(lo, hi)
    )


def sized_list(element, count: int | None):
    """A list of count elements, or of up to MAX_ITEMS when count is None."""
    if count is not None:
        return st.lists(element, min_size=count, max_size=count)
    return st.lists(element, max_size=MAX_ITEMS)


def corrupt(draw, obj, derived: dict[str, tuple[str, tuple[str, ...]]]):
    """Overwrite some of obj's derived fields with drawn integers, maybe none. derived maps
    a field to its int code and the fields whose length it is: such a length stays null
    (-1) when they are absent and becomes a wrong non-negative length when present (the
    builders refuse a length that contradicts presence)."""
    if not derived or not draw(st.booleans()):
        return obj
    for name in draw(st.lists(st.sampled_from(sorted(derived)), min_size=1, unique=True)):
        code, sizes = derived[name]
        lo, hi = int_range(code)
        if sizes:
            if all(getattr(obj, s) is None for s in sizes):
                continue
            lo = 0
        edges = [v for v in BOUNDARY if lo <= v <= hi]
        setattr(obj, name, draw(st.one_of(st.sampled_from(edges), st.integers(lo, hi))))
    return obj


def builds(obj) -> bool:
    """Whether obj encodes: a drawn object may name a codec the runtime cannot write
    (bits the schema leaves open), so strategies keep only those that do."""
    try:
        obj.build()
    except KafkacodecError:
        return False
    return True


def encoded(objects, invalid_objects):
    """The `<type>_bytes(mode)` strategy over a type's object strategies."""

    def of(mode: str = "valid"):
        if mode == "valid":
            return objects.map(lambda o: o.build())
        if mode == "invalid":
            return invalid_objects.map(lambda o: o.build())
        if mode == "mutated":
            return objects.map(lambda o: o.build()).flatmap(mutate)
        raise ValueError(f"mode is valid, invalid or mutated, not {mode!r}")

    return of


@st.composite
def mutate(draw, data: bytes) -> bytes:
    """data damaged at the byte level, one to three times."""
    buf = bytearray(data)
    for _ in range(draw(st.integers(1, 3))):
        kind = draw(st.sampled_from(["flip", "cut", "insert", "drop", "int32"]))
        at = draw(st.integers(0, len(buf)))
        if kind == "flip" and at < len(buf):
            buf[at] ^= draw(st.integers(1, 255))
        elif kind == "cut":
            del buf[at:]
        elif kind == "insert":
            buf[at:at] = draw(st.binary(min_size=1, max_size=8))
        elif kind == "drop":
            del buf[at : at + draw(st.integers(1, 8))]
        elif kind == "int32" and at + 4 <= len(buf):
            value = draw(st.sampled_from(BOUNDARY))
            buf[at : at + 4] = struct.pack(">I", value & 0xFFFFFFFF)
    return bytes(buf)

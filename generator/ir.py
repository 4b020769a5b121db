"""From .ksy files to a typed model (the IR) that the templates only print.

Every decision is taken here: which fields share one precompiled struct, how an
expression reads in a parser, a builder or a property, which fields a builder derives and
from what, the smallest size of each type (to refuse counts the data cannot hold), and
the messages of the errors the generated code raises.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from pathlib import Path

import yaml

from .errors import SchemaError
from .expr import Node, Translator, parse_expr

# ---------------------------------------------------------------------------------------
# The Kaitai subset kafkacodec accepts, and its extension vocabulary.

EXT_PREFIX = "-kafkacodec-"
# Extension keys (see schemas/README.md), with the places they may appear.
EXT_KEYS = {
    "meta": {"-kafkacodec-primitive"},
    "type": {"-kafkacodec-columns", "-kafkacodec-message"},
    "attr": {
        "-kafkacodec-length-of",
        "-kafkacodec-crc",
        "-kafkacodec-lazy",
        "-kafkacodec-derive",
        "-kafkacodec-draw",
        "-kafkacodec-inline",
    },
}
META_KEYS = {
    "id", "title", "license", "endian", "imports", "file-extension", "ks-version",
    "application", "xref", "encoding", "tags",
}  # fmt: skip
TYPE_KEYS = {"meta", "doc", "doc-ref", "params", "seq", "types", "instances", "enums"}
ATTR_KEYS = {
    "id", "type", "size", "size-eos", "repeat", "repeat-expr", "repeat-until", "if",
    "enum", "contents", "valid", "encoding", "process", "doc", "doc-ref",
}  # fmt: skip
INSTANCE_KEYS = {"value", "pos", "type", "enum", "doc", "doc-ref", "if", "valid"}
PARAM_KEYS = {"id", "type", "doc", "doc-ref", "enum"}
UNSUPPORTED_ATTR_KEYS = {
    "terminator": "terminated fields",
    "consume": "terminated fields",
    "include": "terminated fields",
    "eos-error": "terminated fields",
    "pad-right": "padded fields",
    "io": "instances in another stream",
}
PRIMITIVES = {"zigzag_varint", "unsigned_varint"}
# Custom `process` routines the runtime implements, with the argument counts each takes:
# kafka_compression(codec, magic[, records]).
PROCESSES = {"kafka_compression": (2, 3)}
CRC_ALGORITHMS = {"crc32", "crc32c"}

INT_TYPES = {
    "u1": ("B", 1, False), "u2": ("H", 2, False), "u4": ("I", 4, False), "u8": ("Q", 8, False),
    "s1": ("b", 1, True), "s2": ("h", 2, True), "s4": ("i", 4, True), "s8": ("q", 8, True),
}  # fmt: skip
FLOAT_TYPES = {"f4": ("f", 4, True), "f8": ("d", 8, True)}  # IEEE 754
#: Kaitai's name of each struct code (b -> s1, d -> f8, ...).
KSY_NAMES = {fmt: name for name, (fmt, _w, _s) in {**INT_TYPES, **FLOAT_TYPES}.items()}
RESERVED = {
    "buf", "pos", "end", "start", "cls", "self", "out", "o", "outer", "verify", "b", "n", "_", "_i",
    "item", "data", "rest_start", "crc_start", "crc_end", "max_size", "count", "before", "rest_bytes",
    "rest_auto", "crc_auto", "rest_at", "crc_at", "limit", "cols",
}  # fmt: skip
NAME_RE = re.compile(r"^[a-z][a-z0-9_]*$")
# Names a Construct Container answers as methods: expressions read such fields by key.
CONTAINER_ATTRS = frozenset(dir(dict)) | {"search", "search_all"}


def camel(name: str) -> str:
    return "".join(part[:1].upper() + part[1:] for part in name.split("_"))


# ---------------------------------------------------------------------------------------
# The model.


@dataclass
class EnumIR:
    name: str
    class_name: str
    members: list[tuple[int, str]]
    #: Kafka's name of each member: the schema's `-orig-id`, else its `id`.
    kafka_names: list[tuple[int, str]] = field(default_factory=list)


@dataclass
class Valid:
    fails: str  # Python condition over `_` that holds when the value is invalid
    message: str  # printed with the value: f"{message}, got {_}"


@dataclass
class FieldIR:
    name: str
    path: str
    doc: str
    orig_id: str | None
    kind: str  # int, varint, bytes, str, user, switch, contents
    fmt: str = ""
    width: int = 0
    max_len: int = 0
    varint_bits: int = 0
    varint_signed: bool = True  # zig-zag (records); False: unsigned (compact lengths, tags)
    size: str | None = None
    size_eos: bool = False
    encoding: str | None = None
    cond: str | None = None
    cond_build: str | None = None
    # The condition reads the stream (`_io`: where the data ends): a builder writes the
    # field when it is not None, and strategies draw it unless draw_absent.
    cond_io: bool = False
    draw_absent: bool = False
    repeat: str | None = None
    repeat_expr: str | None = None
    repeat_until: str | None = None
    elem_min_size: int = 0
    user_class: str | None = None
    user_args: list[str] = field(default_factory=list)
    switch_on: str | None = None
    switch_cases: list[tuple[str | None, str]] = field(default_factory=list)  # (condition, class)
    switch_args: dict[str, list[str]] = field(default_factory=dict)  # class -> its arguments
    enum_class: str | None = None
    contents: bytes | None = None
    valid: list[Valid] = field(default_factory=list)
    process: str | None = None
    process_args: list[str] = field(default_factory=list)  # over self, for lazy reads
    process_args_build: list[str] = field(default_factory=list)
    process_args_parse: list[str] = field(default_factory=list)
    lazy: bool = False
    crc_algorithm: str | None = None
    crc_from: str | None = None
    length_of_rest: bool = False
    #: The schema's `valid: {expr: '_._io.pos == _._io.size'}` on a sized user-type field:
    #: the structure takes every byte of its size (checked; not a `valid` of the value).
    consumed: bool = False
    #: The field is in the schema's sized body `via` (-kafkacodec-inline), read here as a
    #: field of the type that holds that body.
    via: str | None = None
    #: The field's `valid` as the parsers check it, where that is not the schema's own (a
    #: bound the length-of-rest check already makes left out); None: the schema's.
    valid_spec: dict | None = None
    length_of: str | None = None  # -kafkacodec-length-of {field}: the field this counts
    length_plus: int = 0  # added to the length (Kafka's compact lengths: +1)
    length_when_null: int = -1  # written when the field is None (compact: 0)
    derive: str | None = None  # builder expression (over self) for -kafkacodec-derive
    size_of: list[str] = field(default_factory=list)  # fields whose encoded length this is
    count_of: str | None = None  # list field whose length this is
    prebuild: bool = False  # builder encodes this field before writing (its length is needed)
    in_run: bool = False
    run_offset: int = 0  # offset inside its struct run
    struct_name: str = ""  # a struct of this field alone (conditional ints, patched lengths)
    where: str = ""  # schema id and path, for error messages
    crc_starts: bool = False  # the type's CRC covers from this field on
    user_args_self: list[str] = field(default_factory=list)  # user args over self (lazy reads)
    bounds: dict = field(default_factory=dict)  # the schema's `valid` eq/min/max/any-of, as Python
    #: -kafkacodec-draw's eq/min/max/any-of: what strategies draw, in place of bounds
    draw_bounds: dict = field(default_factory=dict)
    ksy: dict = field(default_factory=dict)  # the attribute as written in the schema (for docs)

    @property
    def derived(self) -> bool:
        return bool(
            self.length_of_rest
            or self.crc_algorithm
            or self.derive
            or self.size_of
            or self.count_of
        )

    @property
    def is_list(self) -> bool:
        return self.repeat is not None

    @property
    def fixed(self) -> bool:
        """A fixed-width number (an integer or a float), read and written with struct."""
        return self.kind in ("int", "float")

    @property
    def ksy_type(self) -> str:
        """Kaitai's name of a fixed-width number's type (s4, u2, f8, ...)."""
        return KSY_NAMES[self.fmt]

    @property
    def wire(self) -> str:
        """The field's type on the wire, as the generated KINDS says it (peers.mutate draws
        values by it): Kaitai's name of a fixed-width number (s4, u4, f8), varint32 /
        varint64 (zig-zag) or uvarint32 / uvarint64 (unsigned), bytes, str, contents, switch,
        or the class a user type is parsed as; a list ends in []."""
        if self.fixed:
            one = self.ksy_type
        elif self.kind == "varint":
            one = f"{'' if self.varint_signed else 'u'}varint{self.varint_bits}"
        elif self.kind == "user":
            one = self.user_class or "user"
        else:
            one = self.kind
        return one + "[]" if self.is_list else one

    @property
    def read_as(self) -> str:
        """How a parser reads one value, the printing shape its template picks: fixed (an
        integer or float, by struct), varint (zig-zag), uvarint (unsigned), contents, switch; lazy (its raw bytes kept, decoded on use); bytes (a
        slice); str; user (parsed in place); user_in_size (parsed inside its size);
        processed_user, processed_bytes (decoded by its process first)."""
        if self.fixed:
            return "fixed"
        if self.kind == "varint" and not self.varint_signed:
            return "uvarint"
        if self.kind == "switch":
            return "switch_in_size" if self.size is not None else "switch"
        if self.kind in ("varint", "contents"):
            return self.kind
        if self.lazy:
            return "lazy"
        if self.kind == "bytes" and not self.process:
            return "bytes"
        if self.kind == "str":
            return "str"
        if self.kind == "user" and self.size is None and not self.size_eos:
            return "user"
        if self.process:
            return "processed_user" if self.kind == "user" else "processed_bytes"
        return "user_in_size"

    @property
    def switch_default(self) -> str | None:
        """The class a switch reads when no case matches; None: no case is an error (or,
        for a switch with a size, its raw bytes: Kaitai's rule)."""
        return next((cls for cond, cls in self.switch_cases if cond is None), None)

    @property
    def const_size(self) -> int | None:
        """The size of a bytes field whose size is a number (a UUID's 16): builders refuse
        other lengths."""
        if self.kind == "bytes" and not self.process and self.size and self.size.isdigit():
            return int(self.size)
        return None

    @property
    def switch_raw_default(self) -> bool:
        """A sized switch no case of which matches keeps its bytes (Kaitai's rule)."""
        return self.kind == "switch" and self.size is not None and self.switch_default is None

    def case_args(self, cls: str) -> str:
        """The arguments a switch passes to one case's parse, each after a comma."""
        return "".join(f", {a}" for a in self.switch_args.get(cls, []))

    @property
    def column_read_as(self) -> str:
        """read_as in a columnar decoder, which keeps a string's raw bytes (its column is
        Arrow's UTF-8)."""
        return "bytes" if self.read_as == "str" else self.read_as

    @property
    def write_as(self) -> str:
        """How a builder writes one value: fixed, varint, contents; object (its build_into);
        bytes (bytes it has, or that were encoded ahead: prebuild)."""
        if self.fixed:
            return "fixed"
        if self.kind in ("varint", "contents"):
            return self.kind
        if self.kind in ("user", "switch") and not self.prebuild:
            return "object"
        return "bytes"

    @property
    def rest_varint(self) -> bool:
        """A length-of-rest varint: a builder writes the rest first, then its length."""
        return self.length_of_rest and self.kind == "varint"

    @property
    def size_of_expr(self) -> str:
        """What a builder writes in a length field left None: the encoded size of the first
        of size_of that is not None (plus length_plus), or length_when_null."""
        plus = f" + {self.length_plus}" if self.length_plus else ""
        tests = "".join(f"len({s}_b){plus} if {s}_b is not None else " for s in self.size_of)
        return f"{tests}{self.length_when_null}"

    @property
    def count_of_expr(self) -> str:
        """What a builder writes in a count field left None."""
        if self.length_of is None:
            return f"len({self.count_of})"
        plus = f" + {self.length_plus}" if self.length_plus else ""
        return f"len({self.count_of}){plus} if {self.count_of} is not None else {self.length_when_null}"

    @property
    def derive_as(self) -> str | None:
        """What a builder computes when the field is None: size_of (the encoded length of
        fields), count_of (a list's length), expr (the schema's -kafkacodec-derive)."""
        if self.size_of:
            return "size_of"
        if self.count_of:
            return "count_of"
        return "expr" if self.derive else None

    @property
    def range_code(self) -> str:
        """The values an integer field holds, as kafkacodec.strategies.int_range names
        them: a struct code (b, B, ... Q), a zig-zag varint's bits (32, 64), or an
        unsigned varint's (u32, u64)."""
        if self.kind != "varint":
            return self.fmt
        return str(self.varint_bits) if self.varint_signed else f"u{self.varint_bits}"

    @property
    def item_type(self) -> str:
        """The Python type of one value of the field (of each item, for a list)."""
        if self.kind == "user":
            return self.user_class or "object"
        if self.kind == "switch":
            classes = [cls for _, cls in self.switch_cases]
            return " | ".join(dict.fromkeys(classes + ["bytes"] * self.switch_raw_default))
        return {"int": "int", "varint": "int", "float": "float", "str": "str"}.get(
            self.kind, "bytes"
        )

    @property
    def ahead(self) -> str:
        """Builder expression for this field's encoded bytes (None when absent), for
        fields a builder encodes before writing (prebuild)."""
        name = self.name
        if self.kind == "str":
            encoded = f'{name}.encode("{self.encoding}", "surrogateescape")'
        elif self.kind == "switch":
            encoded = f"_p.as_bytes({name})"
        else:
            encoded = f"{name}.build()" if self.kind == "user" else name
            if self.process:
                args = ", ".join([encoded, *self.process_args_build])
                encoded = f'_p.process_encode("{self.process}", {args})'
        if self.lazy:
            return f"{encoded} if {name} is not None else self.{name}_raw"
        if encoded == name or not self.cond:
            return encoded  # always written: None fails to encode, named by encode_failed
        return f"None if {name} is None else {encoded}"

    @property
    def summary(self) -> str:
        """One line for the class docstring: type, condition, how it is read and built."""
        if self.fixed:
            text = self.ksy_type
        elif self.kind == "varint":
            text = ("" if self.varint_signed else "unsigned ") + (
                "varint" if self.max_len == 5 else "varlong"
            )
        elif self.kind == "user":
            text = self.user_class or ""
        elif self.kind == "switch":
            text = " | ".join(cls for _, cls in self.switch_cases)
        else:
            text = self.kind
        if self.is_list:
            text += " list"
        if self.cond:
            text += f", if {self.cond}"
        if self.process:
            text += f", through {self.process}"
        if self.lazy:
            text += f", lazy (see read_{self.name})"
        if self.derived:
            text += ", derived by builders"
        if self.doc:
            text += ". " + first_sentence(self.doc)
        return text


def first_sentence(doc: str) -> str:
    """The first whole sentence of a doc (its lines joined): a summary never stops mid-sentence."""
    text = " ".join(doc.split())
    m = re.search(r"(?<=[.!?])\s+(?=[A-Z`(\"])", text)
    return text[: m.start()] if m else text


@dataclass
class ColumnIR:
    """One column of a type's columnar decoder (`parse_columns`)."""

    name: str
    kind: str  # int, binary, string or list
    typecode: str = ""  # array.array typecode of an int column
    nullable: bool = False  # binary and string columns: the field has an `if`
    child_class: str | None = None  # list columns: the element type

    @property
    def spec(self) -> str:
        """The COLUMNS entry: (name, kind, typecode or child class, nullable)."""
        other = self.child_class if self.kind == "list" else self.typecode
        return f'("{self.name}", "{self.kind}", "{other}", {self.nullable})'

    @property
    def new(self) -> str:
        """An empty column of this kind (runtime classes in kafkacodec.runtime._prim)."""
        if self.kind == "int":
            return f'_p.int_column("{self.typecode}")'
        if self.kind == "list":
            return f"_p.ListColumn({self.child_class})"
        return f"_p.BinaryColumn(nullable={self.nullable})"

    @property
    def store(self) -> str:
        """The statement that appends a decoded value to the column; lists fill theirs
        while they are read (their element type's parse_columns), so they have none."""
        if self.kind == "list":
            return ""
        method = "append" if self.kind == "int" else "add"
        return f"col_{self.name}.{method}({self.name})"


@dataclass
class Step:
    kind: str  # "run" or "field"
    fields: list[FieldIR]
    struct_name: str = ""
    fmt: str = ""
    size: int = 0
    offsets: list[int] = field(default_factory=list)


@dataclass
class InstanceIR:
    name: str
    doc: str
    kind: str  # value or pos
    expr: str = ""  # over self
    enum_class: str | None = None
    pos: str = ""  # parse context (pos instances)
    fmt: str = ""
    width: int = 0
    struct_name: str = ""
    ksy: dict = field(default_factory=dict)  # the instance as written in the schema (for docs)
    valid: list[Valid] = field(default_factory=list)  # positional instances: checked when read
    where: str = ""
    #: (field, mask, shift) when the value reads bits of one integer field of the type
    #: (`field & mask`, `(field >> shift) & m`): what a writer sets to give it a value.
    bits: tuple[str, int, int] | None = None

    @property
    def summary(self) -> str:
        """The instance's docstring: the first sentence of its doc."""
        return first_sentence(self.doc) if self.doc else f"Instance `{self.name}`."


def bits_of(node: Node, fields: set[str]) -> tuple[str, int, int] | None:
    """(field, mask, shift) when an instance's expression is a bit field of one of fields,
    so that a writer can set it: `field & mask` (shift 0), `(field >> shift) & m` (mask
    m << shift), or a flag `(field & bit) != 0` (shift: the bit's position). The value v is
    stored as (v << shift) & mask. None for any other expression."""

    def num(n: Node) -> int | None:
        return int(n.value) if n.kind == "num" else None

    if node.kind == "binary" and node.value == "!=" and num(node.args[1]) == 0:
        found = bits_of(node.args[0], fields)
        if found and found[2] == 0 and found[1] & (found[1] - 1) == 0:  # one bit
            return found[0], found[1], found[1].bit_length() - 1
        return None
    if node.kind != "binary" or node.value != "&" or num(node.args[1]) is None:
        return None
    value, mask = node.args[0], int(node.args[1].value)
    if value.kind == "name" and value.value in fields:
        return value.value, mask, 0
    if value.kind == "binary" and value.value == ">>" and num(value.args[1]) is not None:
        inner = value.args[0]
        if inner.kind == "name" and inner.value in fields:
            shift = int(value.args[1].value)
            return inner.value, mask << shift, shift
    return None


@dataclass
class ParamIR:
    name: str
    doc: str


@dataclass
class InlinedIR:
    """A length-prefixed body the schema reads as a sized substream of its own type
    (`size:` the length field before it; what the official compiler's outputs read) and
    kafkacodec's targets read as fields of the type that holds it (-kafkacodec-inline):
    the length field is the length of the rest, and the body takes every byte of it."""

    name: str  # the body field's id (`body`)
    type_name: str  # its type's id
    class_name: str
    path: str  # the body type's schema path
    doc: str
    length_field: str
    fields: list[str]


@dataclass
class TypeIR:
    name: str
    class_name: str
    path: str
    doc: str
    doc_ref: list[str]
    params: list[ParamIR]
    fields: list[FieldIR]
    instances: list[InstanceIR]
    steps: list[Step] = field(default_factory=list)
    min_size: int = 0
    rest_field: FieldIR | None = None
    crc_field: FieldIR | None = None
    columns: list[ColumnIR] | None = None  # -kafkacodec-columns: a columnar decoder too
    #: Sized bodies read inline (-kafkacodec-inline): their fields are in `fields`.
    inlined: list[InlinedIR] = field(default_factory=list)
    #: -kafkacodec-message: what a message spec says of this type (schemas generated by
    #: `kafkacodec specs import`), carried into the class as MESSAGE.
    message: dict | None = None
    #: What each name means inside the type, for targets that translate the schema's
    #: expressions their own way (ModuleIR.names.translate).
    scope: _Scope | None = field(default=None, repr=False, compare=False)

    @property
    def stored(self) -> list[str]:
        names = [p.name for p in self.params]
        for f in self.fields:
            names.append(f.name)
            if f.lazy:
                names.append(f.name + "_raw")
        names += [i.name for i in self.instances if i.kind == "pos"]
        if self.crc_field:
            names += ["crc_start", "crc_end"]
        return names

    @property
    def whole_struct(self) -> str:
        """The struct of a type that is one run of fixed-width numbers and nothing else (no
        check on any of them, no params, instances, CRC or length): many values of it are
        read at once by that struct as its parser reads one. "" for any other type."""
        if (self.params or self.instances or self.crc_field or self.rest_field
                or len(self.steps) != 1 or self.steps[0].kind != "run"):  # fmt: skip
            return ""
        run = self.steps[0]
        if [f.name for f in run.fields] != [f.name for f in self.fields]:
            return ""
        if any(f.bounds or f.derived or f.is_list or not f.fixed for f in run.fields):
            return ""
        return run.struct_name

    @property
    def rest_varint(self) -> bool:
        """Its length-of-rest field is a varint (written after the rest)."""
        return self.rest_field is not None and self.rest_field.rest_varint

    @property
    def needs_start(self) -> bool:
        return bool(self.rest_field or self.crc_field)

    @property
    def build_params(self) -> list[str]:
        """Params a builder reads (in conditions or process arguments)."""
        used = " ".join(
            [f.cond_build or "" for f in self.fields]
            + [a for f in self.fields for a in f.process_args_build]
        )
        return [p.name for p in self.params if re.search(rf"\b{p.name}\b", used)]

    @property
    def derived_names(self) -> list[str]:
        return [f.name for f in self.fields if f.derived]

    @property
    def value_instances(self) -> list[InstanceIR]:
        return [i for i in self.instances if i.kind == "value"]

    @property
    def bit_instances(self) -> list[InstanceIR]:
        return [i for i in self.instances if i.bits]

    @property
    def pos_instances(self) -> list[InstanceIR]:
        return [i for i in self.instances if i.kind == "pos"]

    @property
    def lazy_fields(self) -> list[FieldIR]:
        return [f for f in self.fields if f.lazy]

    @property
    def prebuilt(self) -> list[FieldIR]:
        return [f for f in self.fields if f.prebuild]

    @property
    def count_derived(self) -> list[FieldIR]:
        return [f for f in self.fields if f.count_of or f.size_of or f.derive]


@dataclass
class ModuleIR:
    id: str
    source: str
    title: str
    doc: str
    doc_ref: list[str]
    imports: list[tuple[str, str]]  # (module, class)
    types: list[TypeIR]
    enums: list[EnumIR]
    structs: list[tuple[str, str]]  # (name, format)
    uses_struct: bool = False
    #: The schema's names and expressions for a target that prints them its own way
    #: (translate, valid_checks, resolve_type); the Python target's are translated above.
    names: ModuleBuilder | None = field(default=None, repr=False, compare=False)

    @property
    def class_names(self) -> list[str]:
        return [t.class_name for t in self.types] + [e.class_name for e in self.enums]


# ---------------------------------------------------------------------------------------
# Loading.


@dataclass
class Spec:
    """One loaded .ksy file."""

    id: str
    file: Path
    rel: str
    data: dict
    primitive: str | None


def _plain(value) -> bool:
    """JSON-like data: what a generated module can print as a Python literal."""
    if isinstance(value, dict):
        return all(isinstance(k, str) and _plain(v) for k, v in value.items())
    if isinstance(value, list):
        return all(_plain(v) for v in value)
    return value is None or isinstance(value, (str, int, float, bool))


def _as_list(value) -> list:
    if value is None:
        return []
    return value if isinstance(value, list) else [value]


def _doc(node: dict) -> str:
    return str(node.get("doc", "")).strip()


def _check_keys(node, allowed: set[str], where: str, ext_place: str | None = None):
    if not isinstance(node, dict):
        raise SchemaError(where, f"expected a mapping, found {type(node).__name__}")
    ext_allowed = EXT_KEYS.get(ext_place, set()) if ext_place else set()
    for key in node:
        if not isinstance(key, str):
            raise SchemaError(where, f"key {key!r} is not a string")
        if key.startswith(EXT_PREFIX):
            if key not in ext_allowed:
                known = ", ".join(sorted(ext_allowed)) or "none here"
                raise SchemaError(f"{where}/{key}", f"unknown extension key (allowed: {known})")
        elif key.startswith("-"):
            continue  # other tools' extension keys (-orig-id, -webide-...) are documentation
        elif key in UNSUPPORTED_ATTR_KEYS and ext_place == "attr":
            raise SchemaError(
                f"{where}/{key}",
                f"{UNSUPPORTED_ATTR_KEYS[key]} are not supported by kafkacodec's generator",
            )
        elif key not in allowed:
            raise SchemaError(f"{where}/{key}", "unknown key")


def load_spec(file: Path, root: Path) -> Spec:
    try:
        data = yaml.safe_load(file.read_text(encoding="utf-8"))
    except yaml.YAMLError as err:
        raise SchemaError("/", f"not valid YAML: {err}", str(file)) from err
    rel = str(file.relative_to(root)) if file.is_relative_to(root) else str(file)
    try:
        if not isinstance(data, dict):
            raise SchemaError("/", "a schema must be a mapping")
        _check_keys(data, TYPE_KEYS, "", "type")
        meta = data.get("meta")
        if not isinstance(meta, dict) or "id" not in meta:
            raise SchemaError("/meta", "meta/id is required")
        _check_keys(meta, META_KEYS, "/meta", "meta")
        if file.stem != meta["id"]:
            raise SchemaError("/meta/id", f"must equal the file name {file.stem!r}")
        if meta.get("endian", "be") != "be":
            raise SchemaError("/meta/endian", "only big-endian (be) schemas are supported")
        return Spec(meta["id"], file, rel, data, meta.get("-kafkacodec-primitive"))
    except SchemaError as err:
        raise err.in_file(rel) from None


class SchemaSet:
    """Every .ksy below a folder, imports resolved, ready to build modules."""

    def __init__(self, root: Path):
        self.root = Path(root)
        self.specs: dict[str, Spec] = {}
        for file in sorted(self.root.rglob("*.ksy")):
            spec = load_spec(file, self.root)
            if spec.id in self.specs:
                raise SchemaError("/meta/id", f"duplicate schema id {spec.id!r}", spec.rel)
            self.specs[spec.id] = spec
        for spec in self.specs.values():
            for i, imp in enumerate(_as_list(spec.data["meta"].get("imports"))):
                target = Path(str(imp)).name
                if target not in self.specs:
                    raise SchemaError(f"/meta/imports/{i}", f"no schema {imp!r}", spec.rel)

        self._built: dict[str, ModuleIR] = {}

    def module(self, schema_id: str) -> ModuleIR:
        """The IR of one (non-primitive) schema, built once."""
        if schema_id not in self._built:
            spec = self.specs[schema_id]
            try:
                self._built[schema_id] = ModuleBuilder(self, spec).build()
            except SchemaError as err:
                raise err.in_file(spec.rel) from None
        return self._built[schema_id]

    def modules(self) -> list[ModuleIR]:
        out = []
        for spec in self.specs.values():
            if spec.primitive:
                if spec.primitive not in PRIMITIVES:
                    raise SchemaError(
                        "/meta/-kafkacodec-primitive",
                        f"unknown primitive {spec.primitive!r} (known: {sorted(PRIMITIVES)})",
                        spec.rel,
                    )
                continue
            out.append(self.module(spec.id))
        return out


# ---------------------------------------------------------------------------------------
# Building one module.


@dataclass
class _Scope:
    """What a name means inside one type: for expression translation."""

    fields: dict[str, dict]
    params: dict[str, dict]
    instances: dict[str, dict]
    type_path: str


class ModuleBuilder:
    def __init__(self, schemas: SchemaSet, spec: Spec):
        self.schemas = schemas
        self.spec = spec
        self.types: list[TypeIR] = []
        self.enums: dict[str, EnumIR] = {}
        self.imports: dict[str, str] = {}
        self.local_types: dict[str, tuple[str, dict, str]] = {}  # name -> (class, node, path)
        self.type_ir: dict[str, TypeIR] = {}
        self.structs: dict[str, str] = {}
        self.min_sizes: dict[str, int] = {}

    # -- entry point
    def build(self) -> ModuleIR:
        data = self.spec.data
        meta = data["meta"]
        top = meta["id"]
        self._collect_types(top, data, "")
        self._collect_enums(data, "")
        class_names = [c for c, _, _ in self.local_types.values()] + [
            e.class_name for e in self.enums.values()
        ]
        dupes = {c for c in class_names if class_names.count(c) > 1}
        if dupes:
            raise SchemaError("/types", f"names clash once turned into classes: {sorted(dupes)}")
        for name, (_cls, node, path) in self.local_types.items():
            self.type_ir[name] = self._build_type(name, node, path)
        for t in self.type_ir.values():
            self._plan(t)
            self._check_consumed(t)
        for t in self.type_ir.values():
            t.min_size = self._min_size(t.name, set())
        for t in self.type_ir.values():
            for f in t.fields:
                if f.is_list and f.kind in ("user", "switch"):
                    f.elem_min_size = self._elem_min_size(f)
        for name, (_cls, node, path) in self.local_types.items():
            flag = node.get("-kafkacodec-columns")
            if flag not in (None, True):
                raise SchemaError(f"{path}/-kafkacodec-columns", "the only value is true")
            if flag:
                self._columns(self.type_ir[name])
        return ModuleIR(
            id=top,
            source=f"schemas/{self.spec.rel}",
            title=str(meta.get("title", top)),
            doc=_doc(data),
            doc_ref=[str(r) for r in _as_list(data.get("doc-ref"))],
            imports=sorted(self.imports.items()),
            types=list(self.type_ir.values()),
            enums=list(self.enums.values()),
            structs=sorted(self.structs.items(), key=lambda kv: int(kv[0][2:])),
            uses_struct=bool(self.structs),
            names=self,
        )

    def _collect_types(self, name: str, node: dict, path: str):
        _check_keys(node, TYPE_KEYS, path or "/", "type")
        if path and "meta" in node:
            _check_keys(node["meta"], {"endian"}, f"{path}/meta")
        if not NAME_RE.match(name):
            raise SchemaError(path or "/meta/id", f"type name {name!r} is not lower_snake_case")
        if name in self.local_types:
            raise SchemaError(path, f"type {name!r} is defined twice in this schema")
        self.local_types[name] = (camel(name), node, path)
        inline = self._inline_names(node, path)
        for sub, subnode in (node.get("types") or {}).items():
            if sub in inline:  # its fields are read as the holding type's (_build_type)
                self._check_inlined(sub, subnode, f"{path}/types/{sub}")
                continue
            self._collect_types(sub, subnode, f"{path}/types/{sub}")

    @staticmethod
    def _inline_names(node: dict, path: str) -> set[str]:
        """The types of node's seq fields marked -kafkacodec-inline (each defined in node's
        own types)."""
        out = set()
        for i, attr in enumerate(node.get("seq") or []):
            if not isinstance(attr, dict) or "-kafkacodec-inline" not in attr:
                continue
            typ = attr.get("type")
            if not isinstance(typ, str) or typ not in (node.get("types") or {}):
                raise SchemaError(
                    f"{path}/seq/{i}/type", "an inlined body's type is one of this type's own types"
                )
            out.add(typ)
        return out

    def _check_inlined(self, name: str, node: dict, path: str) -> None:
        _check_keys(node, {"doc", "doc-ref", "seq"}, path)
        if not NAME_RE.match(name):
            raise SchemaError(path, f"type name {name!r} is not lower_snake_case")
        if not node.get("seq"):
            raise SchemaError(f"{path}/seq", "an inlined body has fields")

    def _collect_enums(self, node: dict, path: str):
        for name, members in (node.get("enums") or {}).items():
            where = f"{path}/enums/{name}"
            if not isinstance(members, dict) or not members:
                raise SchemaError(where, "an enum maps integers to names")
            out, kafka = [], []
            for value, label in members.items():
                if not isinstance(value, int):
                    raise SchemaError(where, f"enum key {value!r} is not an integer")
                orig = None
                if isinstance(label, dict):
                    label, orig = label.get("id"), label.get("-orig-id")
                if not isinstance(label, str) or not NAME_RE.match(label):
                    raise SchemaError(where, f"enum member {label!r} is not lower_snake_case")
                if orig is not None and not isinstance(orig, str):
                    raise SchemaError(where, f"-orig-id of {label!r} is not a string")
                out.append((value, label.upper()))
                kafka.append((value, label if orig is None else orig))
            if len({n for _v, n in kafka}) != len(kafka):
                raise SchemaError(where, "two members have the same Kafka name (-orig-id)")
            if name in self.enums:
                raise SchemaError(where, f"enum {name!r} is defined twice")
            self.enums[name] = EnumIR(name, camel(name), out, kafka)
        for sub, subnode in (node.get("types") or {}).items():
            self._collect_enums(subnode, f"{path}/types/{sub}")

    def enum_class(self, name: str, where: str = "") -> str:
        if name not in self.enums:
            raise SchemaError(where, f"unknown enum {name!r}")
        return self.enums[name].class_name

    # -- type references
    def resolve_type(self, ref: str, where: str) -> tuple[str, str | None]:
        """Return (kind, class name) for a user type name: local, imported or primitive."""
        if ref in self.local_types:
            return "user", self.local_types[ref][0]
        imports = [Path(str(i)).name for i in _as_list(self.spec.data["meta"].get("imports"))]
        if ref in imports:
            spec = self.schemas.specs[ref]
            if spec.primitive:
                return spec.primitive, None
            cls = camel(ref)
            self.imports[ref] = cls
            return "user", cls
        raise SchemaError(where, f"unknown type {ref!r}")

    # -- one type
    def _build_type(self, name: str, node: dict, path: str) -> TypeIR:
        params = []
        pscope = {}
        for i, p in enumerate(_as_list(node.get("params"))):
            where = f"{path}/params/{i}"
            _check_keys(p, PARAM_KEYS, where)
            pname = p.get("id")
            self._check_name(pname, where)
            params.append(ParamIR(pname, _doc(p)))
            pscope[pname] = {"kind": "int"}
        fields: list[FieldIR] = []
        scope = _Scope({}, pscope, {}, path)
        raw_instances = node.get("instances") or {}
        if not isinstance(raw_instances, dict):
            raise SchemaError(f"{path}/instances", "instances must be a mapping")
        for iname, inode in raw_instances.items():
            self._check_name(iname, f"{path}/instances/{iname}")
            scope.instances[iname] = {"node": inode, "path": f"{path}/instances/{iname}"}
        seq = node.get("seq") or []
        if not isinstance(seq, list):
            raise SchemaError(f"{path}/seq", "seq must be a list")
        raw_by_name = {}
        inlined: list[InlinedIR] = []
        for attr, where, via in self._expand_inline(seq, node, path, inlined):
            _check_keys(attr, ATTR_KEYS, where, "attr")
            fname = attr.get("id")
            self._check_name(fname, where)
            if fname in scope.fields or fname in pscope or fname in scope.instances:
                raise SchemaError(where, f"{fname!r} is defined twice")
            f = self._build_field(attr, where, scope)
            f.via = via
            fields.append(f)
            raw_by_name[fname] = attr
            scope.fields[fname] = {"kind": f.kind, "list": f.is_list, "field": f}
        t = TypeIR(
            name=name,
            class_name=camel(name),
            path=path or "/",
            doc=_doc(node),
            doc_ref=[str(r) for r in _as_list(node.get("doc-ref"))],
            params=params,
            fields=fields,
            instances=[],
            scope=scope,
            inlined=inlined,
        )
        for body in inlined:
            length = next(f for f in fields if f.name == body.length_field)
            if length.kind not in ("int", "varint") or length.cond or length.is_list:
                raise SchemaError(length.path, "an inlined body's length is a plain integer or varint")
            length.length_of_rest = True
            if str((length.valid_spec or {}).get("expr", "")).replace(" ", "") in ("_.value>=0", "_>=0"):
                length.valid, length.valid_spec = [], {}  # the length-of-rest check makes it
        message = node.get("-kafkacodec-message")
        if message is not None:
            if not isinstance(message, dict) or not _plain(message):
                raise SchemaError(
                    f"{path}/-kafkacodec-message",
                    "a mapping of plain values (text, numbers, lists)",
                )
            t.message = message
        for f in fields:  # derive expressions may name later fields
            if "-kafkacodec-derive" in raw_by_name[f.name]:
                text = raw_by_name[f.name]["-kafkacodec-derive"]
                f.derive = self.expr(text, scope, f"{f.path}/-kafkacodec-derive", "self")
        ints = {f.name for f in fields if f.kind == "int" and not f.is_list}
        for iname, info in scope.instances.items():
            inst = self._build_instance(iname, info["node"], info["path"], scope)
            if inst.kind == "value":
                inst.bits = bits_of(parse_expr(str(info["node"]["value"]), info["path"]), ints)
            t.instances.append(inst)
        self._derivations(t, raw_by_name, scope)
        return t

    #: What `valid` says of a sized structure that takes every byte of its size (the
    #: official compiler's substream, checked after the structure is read).
    CONSUMED = "_._io.pos==_._io.size"

    def _expand_inline(self, seq: list, node: dict, path: str, inlined: list[InlinedIR]):
        """seq's attributes as (attr, schema path, inlined body or None): the attributes of
        a -kafkacodec-inline body in place of the body field. The body is the last field,
        sized by the length field just before it (`size: len` or `len.value`), and says it
        takes every byte of that size (`valid: {expr: '_._io.pos == _._io.size'}`): what
        kafkacodec's parsers check of a length of the rest, in the official compiler's
        terms (Kaitai reads a substream and leaves what its fields do not take)."""
        for i, attr in enumerate(seq):
            where = f"{path}/seq/{i}"
            if not isinstance(attr, dict) or "-kafkacodec-inline" not in attr:
                yield attr, where, None
                continue
            _check_keys(attr, {"id", "type", "size", "valid", "doc", "doc-ref"}, where, "attr")
            if attr["-kafkacodec-inline"] is not True:
                raise SchemaError(f"{where}/-kafkacodec-inline", "the only value is true")
            if i != len(seq) - 1 or i == 0:
                raise SchemaError(where, "an inlined body is the last field, after its length")
            length = seq[i - 1].get("id")
            if str(attr.get("size", "")).replace(" ", "") not in (length, f"{length}.value"):
                raise SchemaError(f"{where}/size", f"an inlined body's size is the field before it ({length!r})")
            if not self._says_consumed(attr):
                raise SchemaError(f"{where}/valid", "an inlined body says it takes its whole size: "
                                  "valid: {expr: '_._io.pos == _._io.size'}")  # fmt: skip
            self._check_name(attr.get("id"), where)
            tname = attr["type"]
            body = node["types"][tname]
            bpath = f"{path}/types/{tname}"
            names = [b.get("id") for b in body["seq"]]
            inlined.append(InlinedIR(attr["id"], tname, camel(tname), bpath, _doc(body) or _doc(attr),
                                     length, names))  # fmt: skip
            for j, battr in enumerate(body["seq"]):
                if isinstance(battr, dict) and "-kafkacodec-inline" in battr:
                    raise SchemaError(f"{bpath}/seq/{j}", "an inlined body holds no inlined body")
                yield battr, f"{bpath}/seq/{j}", attr["id"]

    def _check_consumed(self, t: TypeIR) -> None:
        """kafkacodec's parsers read a processed or lazy structure to its last byte
        (parse_all: bytes it leaves are corrupt); the official compiler's only where the
        schema says so. A schema says so wherever the structure can end before its bytes
        do (its last field is not read to the end of the stream)."""
        by_class = {u.class_name: u for u in self.type_ir.values()}
        for f in t.fields:
            if f.kind != "user" or f.consumed or not (f.process or f.lazy):
                continue
            target = by_class.get(f.user_class or "")
            last = target.fields[-1] if target and target.fields else None
            if last is not None and (last.repeat == "eos" or last.size_eos):
                continue
            raise SchemaError(f.path, "a processed or lazy structure is read to its last byte: say so "
                              "for every target (valid: {expr: '_._io.pos == _._io.size'})")  # fmt: skip

    @classmethod
    def _says_consumed(cls, attr: dict) -> bool:
        """Whether attr's `valid` is exactly CONSUMED."""
        valid = attr.get("valid")
        return (isinstance(valid, dict) and set(valid) == {"expr"}
                and str(valid["expr"]).replace(" ", "") == cls.CONSUMED)  # fmt: skip

    def _consumed(self, f: FieldIR, attr: dict, where: str) -> bool:
        """A `valid` that says a sized structure takes every byte of its size: f.consumed."""
        if not self._says_consumed(attr):
            return False
        if f.kind != "user" or (f.size is None and not f.size_eos) or f.is_list:
            raise SchemaError(f"{where}/valid", "'_._io.pos == _._io.size' applies to a sized user-type field")
        f.consumed = True
        f.valid_spec = {}
        return True

    def _columns(self, t: TypeIR):
        """The columns of t's columnar decoder, and of the element types of its lists: one
        per stored field, except what builders derive (lengths, counts) and constants."""
        if t.columns is not None:
            return
        t.columns = []
        by_class = {ir.class_name: ir for ir in self.type_ir.values()}
        for f in t.fields:
            where = f"{f.path}: -kafkacodec-columns"
            if f.derived or f.kind == "contents":
                continue
            if f.lazy or f.process or f.kind == "switch":
                raise SchemaError(
                    where, f"field {f.name!r} cannot be a column ({f.kind}, lazy or processed)"
                )
            if f.is_list:
                if f.repeat != "expr" or f.kind != "user" or f.user_class not in by_class:
                    raise SchemaError(
                        where, f"list {f.name!r} must repeat-expr a type of this schema"
                    )
                t.columns.append(ColumnIR(f.name, "list", child_class=f.user_class))
                self._columns(by_class[f.user_class])
            elif f.kind in ("int", "varint"):
                if f.cond:
                    raise SchemaError(where, f"integer {f.name!r} has an `if`: no null integers")
                code = f.fmt if f.kind == "int" else ("i" if f.max_len == 5 else "q")
                t.columns.append(ColumnIR(f.name, "int", typecode=code))
            elif f.kind in ("bytes", "str"):
                kind = "binary" if f.kind == "bytes" else "string"
                t.columns.append(ColumnIR(f.name, kind, nullable=f.cond is not None))
            else:
                raise SchemaError(where, f"field {f.name!r} ({f.kind}) cannot be a column")

    def _check_name(self, name, where: str):
        if not isinstance(name, str) or not NAME_RE.match(name):
            raise SchemaError(where, f"id {name!r} is not lower_snake_case")
        if name in RESERVED:
            raise SchemaError(where, f"id {name!r} is reserved in generated code")

    # -- expressions
    def translator(self, scope: _Scope, where: str, mode: str, local_names: set[str] = frozenset()):
        """mode: parse or build (names are locals), self (names are attributes), ctx (names
        are in a Construct context `this`) or ctx_parent (in its parent, `this._`)."""
        prefix = {
            "parse": "",
            "build": "",
            "self": "self.",
            "ctx": "this.",
            "ctx_parent": "this._.",
        }[mode]

        def at(name: str) -> str:
            if mode.startswith("ctx") and name in CONTAINER_ATTRS:
                return f"{prefix[:-1]}[{name!r}]".replace("'", '"')
            return f"{prefix}{name}"

        io = (
            {"pos": f"{prefix}_io.tell()", "size": f"stream_size({prefix}_io)"}
            if mode.startswith("ctx")
            else None
        )

        def resolve(name: str) -> tuple[str, str]:
            if name in local_names:
                return name, "int"
            if name == "_" and name in scope.fields:  # a valid expr: the value being checked
                info = scope.fields[name]
                return "_", ("varint" if info["kind"] == "varint" else "int")
            if name == "_io":
                if mode == "self":
                    raise SchemaError(where, "_io is not available outside parsing")
                return "_io", "io"
            if name == "_index":
                return (f"{prefix}_index" if mode.startswith("ctx") else "_i"), "int"
            if name in ("_parent", "_root"):
                raise SchemaError(
                    where, f"{name} is not supported by kafkacodec's generator: pass a param"
                )
            if name in scope.params:
                return at(name), "int"
            if name in scope.fields:
                info = scope.fields[name]
                kind = "varint" if info["kind"] == "varint" else "int"
                if info["list"]:
                    kind = "list"
                elif info["kind"] in ("user", "switch"):
                    kind = "object"
                return at(name), kind
            if name in scope.instances:
                return self._instance_expr(name, scope, mode)
            raise SchemaError(where, f"unknown name {name!r}")

        return Translator(
            resolve, lambda e: self.enum_class(e, where), where, io, mode.startswith("ctx")
        )

    def _instance_expr(self, name: str, scope: _Scope, mode: str) -> tuple[str, str]:
        info = scope.instances[name]
        node = info["node"]
        if "value" not in node:
            # A positional instance is read while parsing and then stored.
            prefix = {"self": "self.", "ctx": "this.", "ctx_parent": "this._."}.get(mode, "")
            return f"{prefix}{name}", "int"
        # Inlined even over self: a subclass may override the property with another meaning.
        if info.get("busy"):
            raise SchemaError(info["path"], f"instance {name!r} depends on itself")
        info["busy"] = True
        try:
            tree = parse_expr(node["value"], f"{info['path']}/value")
            return f"({self.translator(scope, info['path'], mode)(tree)})", "int"
        finally:
            info["busy"] = False

    def expr(
        self, text, scope: _Scope, where: str, mode: str = "parse", locals_=frozenset()
    ) -> str:
        tree = parse_expr(text, where)
        return self.translator(scope, where, mode, set(locals_))(tree)

    # -- one field
    def _build_field(self, attr: dict, where: str, scope: _Scope) -> FieldIR:
        name = attr["id"]
        f = FieldIR(name=name, path=where, doc=_doc(attr), orig_id=attr.get("-orig-id"), kind="")
        f.ksy = attr
        f.where = f"{self.spec.id} {where}"
        self._field_type(f, attr, where, scope)
        self._field_size(f, attr, where, scope)
        self._field_repeat(f, attr, where, scope)
        if "enum" in attr:
            if f.kind != "int":
                raise SchemaError(f"{where}/enum", "enum applies to integer fields")
            f.enum_class = self.enum_class(attr["enum"], f"{where}/enum")
        if "valid" in attr and not self._consumed(f, attr, where):
            f.valid = self._valid(attr["valid"], f, scope, f"{where}/valid")
        if "process" in attr:
            self._field_process(f, attr, where, scope)
        self._field_extensions(f, attr, where)
        self._allocation_bound(f, attr, scope, where)
        return f

    #: The `valid` of a length that bounds it by what the input holds after it, for the
    #: official compiler's readers (Java's and C++'s readBytes allocate the length they are
    #: given before reading it): `max` of an integer, `expr` of a varint.
    #: (A negative length, null, is tested first: C++ compares an int with the stream's
    #: unsigned size as unsigned.)
    ALLOCATION_BOUNDS = {("max", "_io.size-_io.pos"), ("expr", "_<0or_<=_io.size-_io.pos"),
                         ("expr", "_.value<0or_.value<=_io.size-_io.pos")}  # fmt: skip

    def _allocation_bound(self, f: FieldIR, attr: dict, scope: _Scope, where: str) -> None:
        """kafkacodec's parsers check every read against the end of their input (a length
        that reaches past it is refused where it is read, as a length): the allocation
        bound the schema gives the other languages is not checked twice, and a `valid` that
        is only that bound is none."""
        spec = attr.get("valid")
        if not isinstance(spec, dict):
            return
        expr = str(spec.get("expr", ""))
        rest, sep, last = expr.rpartition(" and ")
        if sep and last.replace(" ", "") in ("_.value<=_io.size-_io.pos", "_<=_io.size-_io.pos"):
            # `<check> and <bound>`, the check making the value >= 0 (C++ above)
            f.valid_spec = {**spec, "expr": rest}
        else:
            bound = [k for k, v in spec.items() if (k, str(v).replace(" ", "")) in self.ALLOCATION_BOUNDS]
            if not bound:
                return
            f.valid_spec = {k: v for k, v in spec.items() if k != bound[0]}
            f.bounds.pop(bound[0], None)
        f.bounds.pop("max", None)
        f.valid = self._valid(f.valid_spec, f, scope, f"{where}/valid") if f.valid_spec else []

    def _field_type(self, f: FieldIR, attr: dict, where: str, scope: _Scope) -> None:
        """What the field is: contents, a switch, bytes or a string, an integer, a varint
        or a user type (with its arguments)."""
        typ = attr.get("type")
        if "contents" in attr:
            raw = attr["contents"]
            parts = raw if isinstance(raw, list) else [raw]
            data = b""
            for p in parts:
                data += p.encode("utf-8") if isinstance(p, str) else bytes([p])
            f.kind, f.contents, f.width = "contents", data, len(data)
            if typ is not None:
                raise SchemaError(where, "contents and type do not go together")
        elif isinstance(typ, dict):
            self._field_switch(f, typ, where, scope)
        elif typ is None or typ == "str":
            f.kind = "bytes" if typ is None else "str"
            if typ == "str":
                f.encoding = attr.get("encoding") or self.spec.data["meta"].get("encoding")
                if not f.encoding:
                    raise SchemaError(where, "a str needs an encoding")
                f.encoding = str(f.encoding)
        elif typ in INT_TYPES or (
            isinstance(typ, str) and typ[:-2] in INT_TYPES and typ[-2:] == "be"
        ):
            base = typ if typ in INT_TYPES else typ[:-2]
            f.kind = "int"
            f.fmt, f.width, _signed = INT_TYPES[base]
        elif typ in FLOAT_TYPES or (
            isinstance(typ, str) and typ[:-2] in FLOAT_TYPES and typ[-2:] == "be"
        ):
            f.kind = "float"
            f.fmt, f.width, _signed = FLOAT_TYPES[typ if typ in FLOAT_TYPES else typ[:-2]]
        elif isinstance(typ, str):
            self._field_named(f, typ, where, scope)
        else:
            raise SchemaError(f"{where}/type", f"cannot read type {typ!r}")

    def _field_switch(self, f: FieldIR, typ: dict, where: str, scope: _Scope) -> None:
        """A type chosen by switch-on among cases (user types, with their arguments; `_`
        the default)."""
        _check_keys(typ, {"switch-on", "cases"}, f"{where}/type")
        f.kind = "switch"
        f.switch_on = self.expr(typ.get("switch-on"), scope, f"{where}/type/switch-on")
        cases = typ.get("cases")
        if not isinstance(cases, dict) or not cases:
            raise SchemaError(f"{where}/type/cases", "switch-on needs cases")
        grouped: dict[str, list[str]] = {}
        default = None
        tr = self.translator(scope, f"{where}/type", "parse")
        for key, ref in cases.items():
            at = f"{where}/type/cases/{key}"
            m = re.fullmatch(r"([a-z][a-z0-9_]*)\s*(?:\((.*)\))?", str(ref).strip())
            if not m:
                raise SchemaError(at, f"cannot read type {ref!r}")
            kind, cls = self.resolve_type(m.group(1), at)
            if kind != "user":
                raise SchemaError(at, "cases must be user types")
            args = []
            if m.group(2) is not None:
                call = parse_expr(str(ref), at)
                args = [tr(a) for a in call.args[1:]] if call.kind == "call" else []
            nparams = self._param_count(m.group(1))
            if len(args) != nparams:
                raise SchemaError(
                    at, f"type {m.group(1)!r} takes {nparams} arguments, given {len(args)}"
                )
            if f.switch_args.setdefault(cls, args) != args:
                raise SchemaError(
                    at, f"{m.group(1)!r} is called with other arguments by another case"
                )
            if key == "_":
                default = cls
                continue
            grouped.setdefault(cls, []).append(self.expr(key, scope, at))
        on = f.switch_on
        f.switch_cases = [
            (" or ".join(f"{on} == {v}" for v in vals), cls) for cls, vals in grouped.items()
        ]
        if default:
            f.switch_cases.append((None, default))

    def _field_named(self, f: FieldIR, typ: str, where: str, scope: _Scope) -> None:
        """A named type: a zig-zag varint, or a user type with its arguments."""
        m = re.fullmatch(r"([a-z][a-z0-9_]*)\s*(?:\((.*)\))?", typ.strip())
        if not m:
            raise SchemaError(f"{where}/type", f"cannot read type {typ!r}")
        kind, cls = self.resolve_type(m.group(1), f"{where}/type")
        args = []
        if m.group(2) is not None:
            call = parse_expr(typ, f"{where}/type")
            args = list(call.args[1:]) if call.kind == "call" else []
        if kind in ("zigzag_varint", "unsigned_varint"):
            f.kind = "varint"
            f.varint_signed = kind == "zigzag_varint"
            if len(args) != 1 or args[0].kind != "num" or args[0].value not in (5, 10):
                raise SchemaError(
                    f"{where}/type",
                    f"{kind} takes one argument: 5 (varint) or 10 (varlong)",
                )
            f.max_len = args[0].value
            f.varint_bits = 32 if f.max_len == 5 else 64
        else:
            f.kind = "user"
            f.user_class = cls
            tr = self.translator(scope, f"{where}/type", "parse")
            f.user_args = [tr(a) for a in args]
            self_tr = self.translator(scope, f"{where}/type", "self")
            f.user_args_self = [self_tr(a) for a in args]
            nparams = self._param_count(m.group(1))
            if len(args) != nparams:
                raise SchemaError(
                    f"{where}/type",
                    f"type {m.group(1)!r} takes {nparams} arguments, given {len(args)}",
                )

    def _param_count(self, ref: str) -> int:
        """How many parameters a type takes: a local type, or an imported schema's top."""
        target = self.local_types.get(ref)
        if target is not None:
            return len(_as_list(target[1].get("params")))
        spec = self.schemas.specs.get(ref)
        return len(_as_list(spec.data.get("params"))) if spec and not spec.primitive else 0

    def _field_size(self, f: FieldIR, attr: dict, where: str, scope: _Scope) -> None:
        """How many bytes the field takes, when the schema says (size, size-eos)."""
        if "size" in attr or attr.get("size-eos"):
            if f.fixed or f.kind in ("varint", "contents"):
                raise SchemaError(where, f"size does not apply to a {f.kind} field")
            if attr.get("size-eos"):
                f.size_eos = True
            else:
                f.size = self.expr(attr["size"], scope, f"{where}/size")
        elif f.kind in ("bytes", "str"):
            raise SchemaError(where, "a byte or string field needs size or size-eos")

    def _field_repeat(self, f: FieldIR, attr: dict, where: str, scope: _Scope) -> None:
        """When the field is there (if) and how often (repeat)."""
        if "if" in attr:
            f.cond = self.expr(attr["if"], scope, f"{where}/if")
            if re.search(r"\b_io\b", str(attr["if"])):
                f.cond_io = True
                f.cond_build = f"{f.name} is not None"
            else:
                f.cond_build = self.expr(attr["if"], scope, f"{where}/if", "build")
        draw = attr.get("-kafkacodec-draw")
        if isinstance(draw, dict):  # the values strategies draw, where parsers take more
            _check_keys(draw, {"eq", "min", "max", "any-of"}, f"{where}/-kafkacodec-draw")
            values = [v for k, v in draw.items() for v in (_as_list(v) if k == "any-of" else [v])]
            if f.kind not in ("int", "varint") or not all(type(v) is int for v in values):
                raise SchemaError(f"{where}/-kafkacodec-draw",
                                  "drawn values are integers, of an integer or varint field")  # fmt: skip
            f.draw_bounds = {k: ([str(x) for x in v] if k == "any-of" else str(v)) for k, v in draw.items()}
        elif draw is not None:
            if draw != "absent" or not f.cond_io:
                raise SchemaError(
                    f"{where}/-kafkacodec-draw",
                    "-kafkacodec-draw: absent applies to a field whose if reads _io",
                )
            f.draw_absent = True
        repeat = attr.get("repeat")
        if repeat is not None:
            if repeat not in ("expr", "eos", "until"):
                raise SchemaError(f"{where}/repeat", f"unknown repeat {repeat!r}")
            f.repeat = repeat
            if repeat == "expr":
                if "repeat-expr" not in attr:
                    raise SchemaError(where, "repeat: expr needs repeat-expr")
                f.repeat_expr = self.expr(attr["repeat-expr"], scope, f"{where}/repeat-expr")
            if repeat == "until":
                if "repeat-until" not in attr:
                    raise SchemaError(where, "repeat: until needs repeat-until")
                f.repeat_until = self.expr(
                    attr["repeat-until"], scope, f"{where}/repeat-until", locals_={"_"}
                )
        elif "repeat-expr" in attr or "repeat-until" in attr:
            raise SchemaError(where, "repeat-expr and repeat-until need repeat")

    def _field_process(self, f: FieldIR, attr: dict, where: str, scope: _Scope) -> None:
        """The codec the field is read through (process), with its arguments."""
        m = re.fullmatch(r"([a-z][a-z0-9_]*)\((.*)\)", str(attr["process"]).strip())
        pname = m.group(1) if m else str(attr["process"])
        if pname not in PROCESSES:
            raise SchemaError(
                f"{where}/process", f"unknown process {pname!r} (known: {sorted(PROCESSES)})"
            )
        call = parse_expr(attr["process"], f"{where}/process")
        args = list(call.args[1:])
        if len(args) not in PROCESSES[pname]:
            counts = " or ".join(map(str, PROCESSES[pname]))
            raise SchemaError(
                f"{where}/process", f"{pname} takes {counts} arguments, given {len(args)}"
            )
        if f.kind not in ("bytes", "user"):
            raise SchemaError(f"{where}/process", "process applies to bytes or a user type")
        f.process = pname
        self_tr = self.translator(scope, f"{where}/process", "self")
        build_tr = self.translator(scope, f"{where}/process", "build")
        f.process_args = [self_tr(a) for a in args]
        f.process_args_build = [build_tr(a) for a in args]
        f.process_args_parse = [
            self.translator(scope, f"{where}/process", "parse")(a) for a in args
        ]

    def _field_extensions(self, f: FieldIR, attr: dict, where: str) -> None:
        """kafkacodec's own keys: -kafkacodec-lazy, -kafkacodec-length-of, -kafkacodec-crc."""
        f.lazy = bool(attr.get("-kafkacodec-lazy"))
        if f.lazy and (f.kind not in ("bytes", "user") or (f.size is None and not f.size_eos)):
            raise SchemaError(where, "-kafkacodec-lazy applies to a sized bytes or user-type field")
        if f.lazy and f.is_list:
            raise SchemaError(where, "a lazy field cannot repeat")
        rest = attr.get("-kafkacodec-length-of")
        if rest is not None:
            if f.kind not in ("int", "varint") or f.is_list or (rest == "rest" and f.cond):
                raise SchemaError(where, "a length-of field is a plain integer or varint")
            if rest == "rest":
                f.length_of_rest = True
            elif isinstance(rest, dict):
                self._length_of(f, rest, f"{where}/-kafkacodec-length-of")
            else:
                raise SchemaError(
                    f"{where}/-kafkacodec-length-of", "'rest', or {field, plus, when-null}"
                )
        crc = attr.get("-kafkacodec-crc")
        if crc is not None:
            if not isinstance(crc, dict) or set(crc) != {"algorithm", "from"}:
                raise SchemaError(f"{where}/-kafkacodec-crc", "needs exactly algorithm and from")
            if crc["algorithm"] not in CRC_ALGORITHMS:
                raise SchemaError(
                    f"{where}/-kafkacodec-crc/algorithm",
                    f"unknown algorithm {crc['algorithm']!r} (known: {sorted(CRC_ALGORITHMS)})",
                )
            if f.kind != "int" or f.width != 4 or f.fmt != "I":
                raise SchemaError(where, "a CRC field is a u4")
            f.crc_algorithm, f.crc_from = crc["algorithm"], crc["from"]

    @staticmethod
    def _length_of(f: FieldIR, spec: dict, where: str) -> None:
        """The length (bytes, or items of a list) of a named field, plus `plus`, and
        `when-null` when it is None: Kafka's classic (-1 null) and compact (+1, 0 null)."""
        _check_keys(spec, {"field", "plus", "when-null"}, where)
        if not isinstance(spec.get("field"), str):
            raise SchemaError(where, "field names the field whose length this is")
        for key in ("plus", "when-null"):
            if key in spec and not isinstance(spec[key], int):
                raise SchemaError(f"{where}/{key}", "an integer")
        f.length_of = spec["field"]
        f.length_plus = spec.get("plus", 0)
        f.length_when_null = spec.get("when-null", -1)

    def _valid(self, spec, f: FieldIR, scope: _Scope, where: str) -> list[Valid]:
        if not isinstance(spec, dict):
            spec = {"eq": spec}
        _check_keys(spec, {"eq", "min", "max", "any-of", "expr"}, where)
        if f.kind not in ("int", "varint") and set(spec) - {"expr"}:
            raise SchemaError(where, "only expr validation applies to non-integer fields")
        inner = self._valid_scope(scope, f.kind, where)
        out = self._checks(spec, self.translator(inner, where, "parse"), where)
        tr = self.translator(inner, where, "parse")
        for key in ("eq", "min", "max"):
            if key in spec:
                f.bounds[key] = tr(parse_expr(spec[key], f"{where}/{key}"))
        if "any-of" in spec:
            f.bounds["any-of"] = [
                tr(parse_expr(v, f"{where}/any-of")) for v in _as_list(spec["any-of"])
            ]
        # Checks read the field's own local variable where the schema says `_`.
        for v in out:
            v.fails = re.sub(r"\b_\b", f.name, v.fails)
        return out

    @staticmethod
    def _valid_scope(scope: _Scope, kind: str, where: str) -> _Scope:
        """scope with `_`: the value a `valid` checks."""
        fields = dict(scope.fields, _={"kind": kind, "list": False})
        return _Scope(fields, scope.params, scope.instances, where)

    def valid_checks(self, t: TypeIR, kind: str, spec, where: str, mode: str) -> list[Valid]:
        """A `valid` of type t (over `_`, the value checked, of this kind) in a target's mode."""
        spec = spec if isinstance(spec, dict) else {"eq": spec}
        return self._checks(
            spec, self.translator(self._valid_scope(t.scope, kind, where), where, mode), where
        )

    def translate(self, t: TypeIR, text, where: str, mode: str, locals_=frozenset()) -> str:
        """A schema expression of type t in a target's mode (see translator)."""
        return self.expr(text, t.scope, where, mode, locals_)

    def translate_node(self, t: TypeIR, node: Node, where: str, mode: str) -> str:
        """A parsed expression (a call's argument) of type t in a target's mode."""
        return self.translator(t.scope, where, mode)(node)

    @staticmethod
    def _checks(spec: dict, tr, where: str) -> list:
        """The valid checks as (fails, message), over `_` (the value checked)."""
        out = []
        if "eq" in spec:
            v = tr(parse_expr(spec["eq"], f"{where}/eq"))
            out.append(Valid(f"_ != {v}", f"expected {v}"))
        if "min" in spec:
            v = tr(parse_expr(spec["min"], f"{where}/min"))
            out.append(Valid(f"_ < {v}", f"must be at least {v}"))
        if "max" in spec:
            v = tr(parse_expr(spec["max"], f"{where}/max"))
            out.append(Valid(f"_ > {v}", f"must be at most {v}"))
        if "any-of" in spec:
            vals = [tr(parse_expr(v, f"{where}/any-of")) for v in _as_list(spec["any-of"])]
            listed = ", ".join(vals) + ("," if len(vals) == 1 else "")
            out.append(Valid(f"_ not in ({listed})", f"must be one of {', '.join(vals)}"))
        if "expr" in spec:
            src = tr(parse_expr(spec["expr"], f"{where}/expr"))
            text = str(spec["expr"]).replace("_.value", "value")
            out.append(Valid(f"not ({src})", f"must satisfy {text}"))
        return out

    def _build_instance(self, name: str, node: dict, where: str, scope: _Scope) -> InstanceIR:
        _check_keys(node, INSTANCE_KEYS, where)
        inst = InstanceIR(name=name, doc=_doc(node), kind="value")
        inst.ksy = node
        if "enum" in node:
            inst.enum_class = self.enum_class(node["enum"], f"{where}/enum")
        if "value" in node:
            if "pos" in node or "type" in node:
                raise SchemaError(where, "a value instance has neither pos nor type")
            inst.expr = self.expr(node["value"], scope, f"{where}/value", "self")
            if "valid" in node:
                raise SchemaError(f"{where}/valid", "valid applies to positional instances only")
            return inst
        if "pos" not in node:
            raise SchemaError(where, "an instance needs value or pos")
        typ = node.get("type")
        if typ not in INT_TYPES:
            raise SchemaError(f"{where}/type", "a positional instance reads an integer type")
        inst.kind = "pos"
        inst.pos = self.expr(node["pos"], scope, f"{where}/pos")
        inst.fmt, inst.width, _ = INT_TYPES[typ]
        inst.where = f"{self.spec.id} {where}"
        if "valid" in node:
            read = FieldIR(name=name, path=where, doc="", orig_id=None, kind="int", fmt=inst.fmt)
            inst.valid = self._valid(node["valid"], read, scope, f"{where}/valid")
        return inst

    # -- what builders derive
    def _derivations(self, t: TypeIR, raw: dict[str, dict], scope: _Scope):
        by_name = {f.name: f for f in t.fields}
        for f in t.fields:
            attr = raw[f.name]
            if f.length_of_rest:
                if t.rest_field is not None:
                    raise SchemaError(f.path, "only one length-of: rest per type")
                t.rest_field = f
            if f.crc_algorithm:
                if f.crc_from not in by_name:
                    raise SchemaError(f"{f.path}/-kafkacodec-crc/from", f"no field {f.crc_from!r}")
                if t.fields.index(by_name[f.crc_from]) <= t.fields.index(f):
                    raise SchemaError(f"{f.path}/-kafkacodec-crc/from", "must name a later field")
                t.crc_field = f
                by_name[f.crc_from].crc_starts = True
            if f.length_of is not None:
                target = by_name.get(f.length_of)
                if target is None:
                    raise SchemaError(
                        f"{f.path}/-kafkacodec-length-of", f"no field {f.length_of!r}"
                    )
                if target.is_list:
                    f.count_of = target.name
                else:
                    f.size_of.append(target.name)
                    target.prebuild = True
            if "size" in attr:
                target = self._bare_name(attr["size"], f"{f.path}/size")
                if target in by_name and by_name[target].kind in ("int", "varint"):
                    src = by_name[target]
                    if not src.length_of_rest and src.length_of is None:
                        src.size_of.append(f.name)
                        f.prebuild = True
            if f.repeat == "expr":
                target = self._bare_name(attr["repeat-expr"], f"{f.path}/repeat-expr")
                if target in by_name and by_name[target].kind in ("int", "varint"):
                    if by_name[target].length_of is None:
                        by_name[target].count_of = f.name
        for f in t.fields:
            if f.process or f.lazy or f.kind == "str" or (f.kind == "switch" and f.size):
                f.prebuild = True
        if t.rest_field and t.rest_field.kind == "varint" and t.crc_field:
            raise SchemaError(
                t.path, "a varint length-of: rest and a CRC in one type is not supported"
            )
        for f in t.fields:
            sources = (
                bool(f.size_of)
                + bool(f.count_of)
                + bool(f.derive)
                + f.length_of_rest
                + bool(f.crc_algorithm)
            )
            if sources > 1:
                raise SchemaError(f.path, f"{f.name!r} would be derived in more than one way")

    @staticmethod
    def _bare_name(text, where: str) -> str | None:
        tree = parse_expr(text, where)
        if tree.kind == "name":
            return tree.value
        if tree.kind == "attr" and tree.value == "value" and tree.args[0].kind == "name":
            return tree.args[0].value
        return None

    # -- parse plan: runs of fixed-size integers read with one struct
    def _plan(self, t: TypeIR):
        run: list[FieldIR] = []

        def flush():
            if not run:
                return
            fmt = ">" + "".join(f.fmt for f in run)
            name = self.structs_name(fmt)
            offsets, o = [], 0
            for f in run:
                offsets.append(o)
                f.run_offset = o
                o += f.width
                f.in_run = True
            t.steps.append(Step("run", list(run), name, fmt, o, offsets))
            run.clear()

        for f in t.fields:
            if f.fixed and not f.cond and not f.is_list:
                run.append(f)
                continue
            flush()
            t.steps.append(Step("field", [f]))
        flush()
        for f in t.fields:
            if f.fixed and (not f.in_run or f.length_of_rest or f.crc_algorithm):
                f.struct_name = self.structs_name(">" + f.fmt)
        for inst in t.pos_instances:
            inst.struct_name = self.structs_name(">" + inst.fmt)

    def structs_name(self, fmt: str) -> str:
        for name, existing in self.structs.items():
            if existing == fmt:
                return name
        name = f"_S{len(self.structs)}"
        self.structs[name] = fmt
        return name

    # -- smallest encoding of a type, to refuse counts the data cannot hold
    def _min_size(self, name: str, seen: set[str]) -> int:
        if name in self.min_sizes:
            return self.min_sizes[name]
        if name in seen:
            return 0
        seen = seen | {name}
        t = self.type_ir[name]
        total = 0
        for f in t.fields:
            if f.cond or f.is_list:
                continue
            total += self._field_min(f, seen)
        self.min_sizes[name] = total
        return total

    def _field_min(self, f: FieldIR, seen: set[str]) -> int:
        if f.fixed or f.kind == "contents":
            return f.width
        if f.kind == "varint":
            return 1
        if f.kind == "user" and f.size is None and not f.size_eos:
            return self._class_min(f.user_class, seen)
        if f.kind == "switch" and f.size is None:
            return min(self._class_min(cls, seen) for _, cls in f.switch_cases)
        return 0

    def _class_min(self, cls: str, seen: set[str]) -> int:
        for name, (c, _, _) in self.local_types.items():
            if c == cls:
                return self._min_size(name, seen)
        for mod, c in self.imports.items():
            if c == cls:
                return self.schemas.module(mod).types[0].min_size
        return 0

    def _elem_min_size(self, f: FieldIR) -> int:
        if f.size is not None or f.size_eos:
            return 0
        if f.kind == "user":
            return self._class_min(f.user_class, set())
        return min(self._class_min(cls, set()) for _, cls in f.switch_cases)


__all__ = ["SchemaSet", "ModuleIR", "TypeIR", "FieldIR", "Step", "camel"]

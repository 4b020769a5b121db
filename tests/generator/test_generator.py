"""The generator: freshness, small inline schemas that must generate (and work) or fail
with a precise message, and the import arrows between the layers."""

import ast
import importlib.util
import re
import shutil
import subprocess
import sys
import textwrap
from pathlib import Path

import construct
import pytest
from conftest import generate_inline, run_generated

from kafkacodec.generator import render
from kafkacodec.runtime.errors import SchemaError

ROOT = Path(__file__).resolve().parents[2]


def test_generated_is_fresh():
    assert render.check() == [], "run `kafkacodec generate`"


def test_generate_check_cli():
    out = subprocess.run(
        [sys.executable, "-m", "kafkacodec", "generate", "--check"], capture_output=True, text=True
    )
    assert out.returncode == 0, out.stderr


def gen(tmp_path, text, name="t", common=()):
    """The generated module of one inline schema, imported from files (its generated files
    as `.files`)."""
    files = generate_inline(tmp_path, text, name, common)
    out = tmp_path / "out"
    out.mkdir(exist_ok=True)
    for fname, src in files.items():
        (out / fname).parent.mkdir(exist_ok=True)
        (out / fname).write_text(src)
    spec = importlib.util.spec_from_file_location(f"gen_{name}", out / f"{name}.py")
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    mod.files = files
    return mod


def test_inline_schema_generates_and_round_trips(tmp_path):
    mod = gen(
        tmp_path,
        """
        meta:
          id: t
          endian: be
        seq:
          - id: magic
            contents: [0xCA, 0xFE]
          - id: num_items
            type: u2
          - id: len_name
            type: u1
          - id: name
            type: str
            encoding: UTF-8
            size: len_name
          - id: items
            type: item
            repeat: expr
            repeat-expr: num_items
          - id: tail
            type: u4
            if: num_items > 1
          - id: rest
            size-eos: true
        types:
          item:
            seq:
              - id: a
                type: s2
                valid:
                  min: -5
              - id: c
                type: u1
                enum: color
        enums:
          color:
            1: red
            2: green
        """,
    )
    obj = mod.T(name="hé", items=[mod.Item(a=-5, c=1), mod.Item(a=7, c=2)], tail=9, rest=b"zz")
    data = obj.build()
    assert data == b"\xca\xfe\x00\x02\x03h\xc3\xa9\xff\xfb\x01\x00\x07\x02\x00\x00\x00\x09zz"
    back = mod.T.parse_all(data)
    assert back.items[1].c == mod.Color.GREEN and back.name == "hé" and back.rest == b"zz"
    with pytest.raises(ValueError, match="at least -5"):
        mod.T.parse_all(b"\xca\xfe\x00\x01\x00\xff\xf0\x01")
    with pytest.raises(ValueError, match="expected bytes cafe"):
        mod.T.parse_all(b"\xca\xff\x00\x00\x00")
    with pytest.raises(ValueError, match="cannot fit"):
        mod.T.parse_all(b"\xca\xfe\xff\xff\x00")
    # The Construct definition of the same schema reads and writes the same bytes.
    spec = importlib.util.spec_from_file_location(
        "gen_t_construct", tmp_path / "out" / "construct" / "t.py"
    )
    cons = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(cons)
    parsed = cons.T.parse(data)
    assert (parsed.name, parsed.tail, parsed.rest) == ("hé", 9, b"zz")
    assert [(i.a, i.c) for i in parsed["items"]] == [(-5, 1), (7, 2)]
    assert cons.T.build(parsed) == data
    with pytest.raises(construct.ValidationError):
        cons.T.parse(b"\xca\xfe\x00\x01\x00\xff\xf0\x01")
    with pytest.raises(construct.ConstError):
        cons.T.parse(b"\xca\xff\x00\x00\x00")


def test_columnar_decoder_reads_what_parse_reads(tmp_path):
    mod = gen(
        tmp_path,
        """
        meta:
          id: t
          endian: be
        -kafkacodec-columns: true
        seq:
          - id: a
            type: s2
          - id: len_name
            type: u1
          - id: name
            type: str
            encoding: UTF-8
            size: len_name
          - id: has_blob
            type: u1
          - id: blob
            size: 2
            if: has_blob == 1
          - id: num_items
            type: u1
          - id: items
            type: item
            repeat: expr
            repeat-expr: num_items
        types:
          item:
            seq:
              - id: v
                type: u4
        """,
    )
    assert [c[:2] for c in mod.T.COLUMNS] == [
        ("a", "int"), ("name", "string"), ("has_blob", "int"), ("blob", "binary"), ("items", "list"),
    ]  # fmt: skip
    values = [
        mod.T(a=-3, name="hé", has_blob=1, blob=b"xy", items=[mod.Item(v=1), mod.Item(v=2)]),
        mod.T(a=7, name="", has_blob=0, items=[]),
    ]
    data = b"".join(v.build() for v in values)
    cols = mod.T.new_columns()
    assert mod.T.parse_columns(data, 0, len(data), 2, cols) == len(data)
    a, name, has_blob, blob, items = cols
    assert list(a) == [-3, 7] and list(has_blob) == [1, 0]
    assert (bytes(name.data), list(name.offsets), name.valid) == ("hé".encode(), [0, 3, 3], None)
    assert (bytes(blob.valid), list(blob.offsets), bytes(blob.data)) == (
        b"\x01\x00",
        [0, 2, 2],
        b"xy",
    )
    assert list(items.offsets) == [0, 2, 2] and list(items.child[0]) == [1, 2]
    with pytest.raises(ValueError, match="data ends"):
        mod.T.parse_columns(data[:-1], 0, len(data) - 1, 2, mod.T.new_columns())


@pytest.mark.parametrize(
    "body,message",
    [
        ("seq:\n  - id: x\n    type: u9\n", "unknown type 'u9'"),
        (
            "seq:\n  - id: x\n    type: u1\n    terminator: 0\n",
            "terminated fields are not supported",
        ),
        ("seq:\n  - id: x\n    size: y\n", "unknown name 'y'"),
        ("seq:\n  - id: x\n    size: 1 +\n", "in expression"),
        (
            "seq:\n  - id: x\n    type: u1\n    -kafkacodec-crc: {algorithm: md5, from: x}\n",
            "unknown algorithm",
        ),
        ("seq:\n  - id: x\n    type: u1\n    -kafkacodec-bogus: 1\n", "unknown extension key"),
        ("seq:\n  - id: pos\n    type: u1\n", "reserved"),
        ("seq:\n  - id: x\n    size: 2\n    process: xor(1)\n", "unknown process 'xor'"),
        ("seq:\n  - id: x\n    type: u1\n    repeat: expr\n", "needs repeat-expr"),
        ("seq:\n  - id: x\n    size: _parent.y\n", "_parent is not supported"),
        ("seq:\n  - id: x\n    type: u1\n  - id: x\n    type: u1\n", "defined twice"),
        ("seq:\n  - id: x\n    type: u1\n    bogus: 1\n", "unknown key"),
        (
            "-kafkacodec-columns: true\nseq:\n  - id: x\n    type: u1\n    if: 1 > 0\n",
            "no null integers",
        ),
        (
            "-kafkacodec-columns: true\nseq:\n  - id: x\n    type: u1\n    repeat: expr\n    repeat-expr: 2\n",
            "must repeat-expr a type of this schema",
        ),
        (
            "-kafkacodec-columns: true\nseq:\n  - id: x\n    size: 2\n    process: kafka_compression(0, 2)\n",
            "cannot be a column",
        ),
    ],
)
def test_bad_schemas_fail_precisely(tmp_path, body, message):
    (tmp_path / "t.ksy").write_text("meta:\n  id: t\n  endian: be\n" + body)
    with pytest.raises(SchemaError, match=message) as err:
        render.render_all(tmp_path, raw=True)
    assert "t.ksy" in str(err.value) and "/seq/" in str(err.value)


def test_meta_id_must_match_file_name(tmp_path):
    (tmp_path / "t.ksy").write_text("meta:\n  id: other\n")
    with pytest.raises(SchemaError, match="must equal the file name"):
        render.render_all(tmp_path, raw=True)


def test_generated_code_imports_only_the_runtime():
    """What the templates print imports the standard library, the runtime and other
    generated modules; nothing else (the layers above are import-linter's, test_layers.py)."""
    for f in (ROOT / "generated").glob("*.py"):
        for node in ast.walk(ast.parse(f.read_text())):
            if isinstance(node, ast.ImportFrom):
                names = ["kafkacodec.generated"] if node.level else [node.module or ""]
            elif isinstance(node, ast.Import):
                names = [a.name for a in node.names]
            else:
                continue
            for name in names:
                assert name in ("__future__", "struct", "enum") or name.startswith(
                    ("kafkacodec.runtime", "kafkacodec.generated")
                ), (f, name)


def test_generated_modules_stay_small_and_name_their_schema():
    for f in (ROOT / "generated").glob("kafka*.py"):
        text = f.read_text()
        assert text.startswith("# Generated by kafkacodec's generator from schemas/")
        # A columnar decoder (-kafkacodec-columns) repeats the parse body once more.
        limit = 600 + 250 * ("def parse_columns" in text)
        assert text.count("\n") < limit, f


def test_construct_emitter_knows_what_kafkacodec_constructs_provides():
    """The emitter imports these names from kafkacodec.constructs, every other one from
    construct; the generator does not import the runtime, so the two lists are kept
    equal here."""
    from kafkacodec import constructs
    from kafkacodec.generator.construct import OURS

    assert OURS == set(constructs.__all__) - {"CompressionFailed"}


def test_field_summaries_keep_whole_sentences(tmp_path):
    mod = gen(
        tmp_path,
        """
        meta:
          id: t
          endian: be
        seq:
          - id: flags
            type: u2
            doc: |
              Bits 0-2 codec, bit 3 timestamp type (LogAppendTime when set), bit 4
              transactional, bit 5 control. A second sentence stays out of the summary.
        """,
    )
    doc = mod.T.__doc__
    assert "bit 4 transactional, bit 5 control." in doc
    assert "A second sentence" not in doc.split("Fields, in byte order")[1]


def _layout() -> dict[str, int]:
    text = (ROOT / "generated" / "kafka_layout.h").read_text()
    return {
        m[1]: int(m[2], 0) for m in re.finditer(r"^#define (\w+) +(0x[0-9a-f]+|-?\d+)", text, re.M)
    }


def test_the_c_layout_header_says_what_kafkas_classes_say():
    """generated/kafka_layout.h (what kafkacodec/records/_native_*.c reads batches with) against the
    constants of Kafka's DefaultRecordBatch and LegacyRecord (offsets from the batch or
    message start, after the 12-byte offset and length of LegacyRecord's LOG_OVERHEAD)."""
    got = _layout()
    default_record_batch = {  # org.apache.kafka.common.record.DefaultRecordBatch
        "BASE_OFFSET": 0, "LEN_BATCH": 8, "PARTITION_LEADER_EPOCH": 12, "MAGIC": 16, "CRC": 17,
        "ATTRIBUTES": 21, "LAST_OFFSET_DELTA": 23, "BASE_TIMESTAMP": 27, "MAX_TIMESTAMP": 35,
        "PRODUCER_ID": 43, "PRODUCER_EPOCH": 51, "BASE_SEQUENCE": 53, "NUM_RECORDS": 57,
    }  # fmt: skip
    for name, offset in default_record_batch.items():
        assert got[f"KAFKA_RECORD_BATCH_{name}_AT"] == offset, name
    assert got["KAFKA_RECORD_BATCH_FIXED_SIZE"] == 61  # RECORD_BATCH_OVERHEAD
    assert got["KAFKA_RECORD_BATCH_CRC_FROM"] == 21  # the CRC covers from ATTRIBUTES_OFFSET
    assert got["KAFKA_RECORD_BATCH_REST_AT"] == 12  # Records.LOG_OVERHEAD
    assert got["KAFKA_RECORD_BATCH_LEN_BATCH_MIN"] == 61 - 12
    masks = {"COMPRESSION": 0x07, "TIMESTAMP_TYPE": 0x08, "IS_TRANSACTIONAL": 0x10,
             "IS_CONTROL": 0x20, "HAS_DELETE_HORIZON": 0x40}  # fmt: skip
    for name, mask in masks.items():
        assert got[f"KAFKA_RECORD_BATCH_{name}_MASK"] == mask, name
    shifts = {"COMPRESSION": 0, "TIMESTAMP_TYPE": 3, "IS_TRANSACTIONAL": 4, "IS_CONTROL": 5,
              "HAS_DELETE_HORIZON": 6}  # fmt: skip
    for name, shift in shifts.items():
        assert got[f"KAFKA_RECORD_BATCH_{name}_SHIFT"] == shift, name
    legacy = {"CRC": 12 + 0, "MAGIC": 12 + 4, "ATTRIBUTES": 12 + 5}  # LegacyRecord.*_OFFSET
    for name, offset in legacy.items():
        assert got[f"KAFKA_LEGACY_MESSAGE_{name}_AT"] == offset, name
    assert got["KAFKA_LEGACY_MESSAGE_FIXED_SIZE"] == 12 + 6  # TIMESTAMP_OFFSET (magic 1)
    assert got["KAFKA_LEGACY_MESSAGE_LEN_MESSAGE_MIN"] == 14  # RECORD_OVERHEAD_V0
    assert got["KAFKA_LEGACY_MESSAGE_CRC_FROM"] == 16
    assert got["KAFKA_LEGACY_MESSAGE_COMPRESSION_MASK"] == 0x07
    # The legacy timestamp type (0 none, 1 create, 2 log append) is not a bit field of
    # attributes: the writer cannot set it through a mask, and the header does not say one.
    assert "KAFKA_LEGACY_MESSAGE_TIMESTAMP_TYPE_MASK" not in got
    codecs = {"NONE": 0, "GZIP": 1, "SNAPPY": 2, "LZ4": 3, "ZSTD": 4}  # CompressionType ids
    for name, cid in codecs.items():
        assert got[f"KAFKA_RECORD_BATCH_COMPRESSION_TYPE_{name}"] == cid
    assert got["KAFKA_TXN_INDEX_ENTRY_FIXED_SIZE"] == 34  # AbortedTxn.TOTAL_SIZE
    assert got["KAFKA_OFFSET_INDEX_ENTRY_FIXED_SIZE"] == 8
    assert got["KAFKA_TIME_INDEX_ENTRY_FIXED_SIZE"] == 12


def test_a_schema_change_reaches_the_c_header(tmp_path):
    """Move a field in a copy of the schemas: the header's offsets follow."""
    shutil.copytree(ROOT / "schemas", tmp_path / "schemas")
    batch = tmp_path / "schemas" / "kafka_record_batch.ksy"
    text = batch.read_text()
    swapped = text.replace("  - id: max_timestamp\n    -orig-id: maxTimestamp\n    type: s8\n", "")
    swapped = swapped.replace(
        "  - id: producer_epoch\n",
        "  - id: max_timestamp\n    type: s8\n  - id: producer_epoch\n",
        1,
    )
    assert swapped != text
    batch.write_text(swapped.replace("min: 49", "min: 50"))
    header = render.render_all(tmp_path / "schemas", raw=True)["kafka_layout.h"]
    assert re.search(r"#define KAFKA_RECORD_BATCH_PRODUCER_ID_AT +35\b", header)
    assert re.search(r"#define KAFKA_RECORD_BATCH_MAX_TIMESTAMP_AT +43\b", header)
    assert re.search(r"#define KAFKA_RECORD_BATCH_LEN_BATCH_MIN +50\b", header)


def test_the_model_is_target_free():
    """The IR holds no Construct (or other target) spelling: each target translates the
    schema's expressions through ModuleIR.names (generator/construct.py, cheader.py)."""
    import dataclasses

    from kafkacodec.generator import ir

    for cls in (ir.FieldIR, ir.TypeIR, ir.InstanceIR, ir.Valid, ir.ModuleIR):
        names = [f.name for f in dataclasses.fields(cls)]
        assert not [n for n in names if n.startswith("c_")], cls
    mod = ir.SchemaSet(render.SCHEMA_DIR).module("kafka_record_batch")
    top = mod.types[0]
    size = next(f for f in top.fields if f.name == "records_region")
    assert mod.names.translate(top, size.ksy["size"], "x", "ctx") == "this.len_batch - 49"
    assert size.size == "len_batch - 49"  # the Python parser's spelling (locals)


def test_floats_are_fixed_width_numbers(tmp_path):
    """f4 and f8 (Kafka's float64): read in the struct runs with the integers, written
    back bit for bit (-0.0, subnormals, infinities), Construct and the reference agree."""
    import math
    import struct as _struct

    mod = gen(
        tmp_path,
        """
        meta:
          id: t
          endian: be
        seq:
          - id: a
            type: s2
          - id: ratio
            type: f8
          - id: small
            type: f4be
        """,
    )
    for value in (0.0, -0.0, 1.0e300, 5e-324, math.inf, -math.inf, 0.1):
        raw = _struct.pack(">hdf", -2, value, 1.5)
        obj = mod.T.parse_all(raw)
        assert (obj.a, obj.small) == (-2, 1.5)
        assert _struct.pack(">d", obj.ratio) == _struct.pack(">d", value)  # -0.0 stays -0.0
        assert obj.build() == raw
    assert mod.T.MIN_SIZE == 14
    files = mod.files
    ns = run_generated(files["construct/t.py"], "construct_t.py")
    raw = _struct.pack(">hdf", 7, -0.0, 2.5)
    parsed = ns["T"].parse(raw)
    assert (parsed.a, math.copysign(1, parsed.ratio), parsed.small) == (7, -1.0, 2.5)
    assert ns["T"].build(parsed) == raw
    assert "| f8 |" in files["reference/t.md"] or "f8" in files["reference/t.md"]
    assert "st.floats(width=64, allow_nan=False)" in files["strategies/t.py"]


def test_explicit_lengths_classic_and_compact(tmp_path):
    """-kafkacodec-length-of {field, plus, when-null}: the lengths of Kafka's flexible
    versions (uvarint length + 1, 0 for null) and classic ones (-1 for null), for strings
    and lists, derived by the builders and read back; Construct agrees."""
    from kafkacodec.runtime.varint import encode_uvarint

    mod = gen(
        tmp_path,
        """
        meta:
          id: t
          endian: be
          imports:
            - common/unsigned_varint
        seq:
          - id: len_name
            type: unsigned_varint(5)
            -kafkacodec-length-of: {field: name, plus: 1, when-null: 0}
          - id: name
            type: str
            encoding: UTF-8
            size: len_name - 1
            if: len_name > 0
          - id: num_items
            type: unsigned_varint(5)
            -kafkacodec-length-of: {field: items, plus: 1, when-null: 0}
          - id: items
            type: s4
            repeat: expr
            repeat-expr: num_items - 1
            if: num_items > 0
          - id: len_note
            type: s2
            -kafkacodec-length-of: {field: note}
          - id: note
            type: str
            encoding: UTF-8
            size: len_note
            if: len_note >= 0
        """,
        common=("unsigned_varint",),
    )
    full = mod.T(name="h\u00e9llo", items=[1, -2], note="").build()
    assert full == (encode_uvarint(7) + "h\u00e9llo".encode() + encode_uvarint(3)
                    + bytes.fromhex("00000001fffffffe") + b"\x00\x00")  # fmt: skip
    back = mod.T.parse_all(full)
    assert (back.name, back.items, back.note) == ("h\u00e9llo", [1, -2], "")
    empty = mod.T(name=None, items=None, note=None).build()
    assert empty == b"\x00\x00\xff\xff"
    assert (lambda o: (o.name, o.items, o.note))(mod.T.parse_all(empty)) == (None, None, None)
    files = mod.files
    ns = run_generated(files["construct/t.py"], "construct_t.py")
    for raw in (full, empty):
        parsed = ns["T"].parse(raw)
        parsed.len_name = parsed.num_items = parsed.len_note = None  # rebuilt from the values
        assert ns["T"].build(parsed) == raw
    assert "plus 1 (0 when null)" in files["reference/t.md"]


@pytest.mark.parametrize("spec,message", [
    ("{field: nope}", "no field 'nope'"),
    ("{field: payload, plus: x}", "an integer"),
    ("{field: payload, minus: 1}", "minus"),
    ("[payload]", "'rest', or {field, plus, when-null}"),
])  # fmt: skip
def test_a_bad_length_of_is_named(tmp_path, spec, message):
    (tmp_path / "t.ksy").write_text(textwrap.dedent(f"""
        meta:
          id: t
          endian: be
        seq:
          - id: len_payload
            type: s4
            -kafkacodec-length-of: {spec}
          - id: payload
            size: len_payload
        """))  # fmt: skip
    with pytest.raises(SchemaError, match=re.escape(message)):
        render.render_all(tmp_path, raw=True)


def test_a_length_by_version_classic_or_compact(tmp_path):
    """One string whose length is an int16 before version 1 and a compact uvarint from it,
    as Kafka's flexible versions write it: the builder derives only the length the version
    writes."""
    from kafkacodec.runtime.varint import encode_uvarint

    mod = gen(
        tmp_path,
        """
        meta:
          id: t
          endian: be
          imports:
            - common/unsigned_varint
        params:
          - id: version
            type: s2
        seq:
          - id: len_name
            type: s2
            if: version < 1
            -kafkacodec-length-of: {field: name}
          - id: len_name_compact
            type: unsigned_varint(5)
            if: version >= 1
            -kafkacodec-length-of: {field: name, plus: 1, when-null: 0}
          - id: name
            type: str
            encoding: UTF-8
            size: 'version < 1 ? len_name : len_name_compact - 1'
            if: 'version < 1 ? len_name >= 0 : len_name_compact > 0'
        """,
        common=("unsigned_varint",),
    )
    for version, name, raw in (
        (0, "ab", b"\x00\x02ab"), (0, None, b"\xff\xff"),
        (1, "ab", encode_uvarint(3) + b"ab"), (1, None, b"\x00"),
    ):  # fmt: skip
        assert mod.T(version=version, name=name).build() == raw
        assert mod.T.parse_all(raw, version).name == name


SWITCH_SCHEMA = """
meta:
  id: t
  endian: be
  imports: [common/unsigned_varint]
-kafkacodec-message:
  spec: T
  fields: [{name: Tag, id: tag}]
seq:
  - id: version
    type: s2
  - id: tag
    type: unsigned_varint(5)
  - id: len_value
    type: unsigned_varint(5)
    -kafkacodec-length-of:
      field: value
  - id: value
    size: len_value.value
    type:
      switch-on: tag.value
      cases:
        0: small(version)
        1: small(version)
        2: wide
types:
  small:
    params:
      - id: version
        type: s2
    seq:
      - id: first
        type: s2
      - id: second
        type: s2
        if: version >= 1
  wide:
    seq:
      - id: c
        type: s4
"""


def test_a_sized_switch_passes_arguments_and_keeps_unknown_cases_as_bytes(tmp_path):
    """A switch with a size reads its case inside the size, calls it with its arguments,
    and keeps the bytes of a value no case matches (Kaitai's rule); builders write each
    back and derive the size."""
    mod = gen(tmp_path, SWITCH_SCHEMA, common=("unsigned_varint",))
    v1 = bytes.fromhex("00010004000a000b")
    obj = mod.T.parse_all(v1)
    assert (type(obj.value).__name__, obj.value.first, obj.value.second) == ("Small", 10, 11)
    assert obj.build() == v1
    v0 = bytes.fromhex("00000102000a")  # version 0: no b
    obj = mod.T.parse_all(v0)
    assert (obj.value.first, obj.value.second) == (10, None)
    assert obj.build() == v0
    unknown = bytes.fromhex("00010703aabbcc")
    obj = mod.T.parse_all(unknown)
    assert bytes(obj.value) == b"\xaa\xbb\xcc"
    assert obj.build() == unknown
    obj.len_value = None  # derived from the value's encoding
    obj.value = mod.Wide(c=-1)
    obj.tag = 2
    assert obj.build() == bytes.fromhex("00010204ffffffff")
    short = bytes.fromhex("00010202ffff")  # a case needs more than the size holds
    with pytest.raises(Exception) as err:
        mod.T.parse_all(short)
    assert type(err.value).__name__ == "TruncatedError"


def test_message_metadata_becomes_a_class_attribute(tmp_path):
    mod = gen(tmp_path, SWITCH_SCHEMA, common=("unsigned_varint",))
    assert mod.T.MESSAGE == {"spec": "T", "fields": [{"name": "Tag", "id": "tag"}]}


def test_construct_and_strategies_follow_the_switch(tmp_path):
    """The Construct definition reads and writes the same; the strategies draw the case the
    switch-on value picks, so every drawn object round-trips."""
    from hypothesis import given, settings

    mod = gen(tmp_path, SWITCH_SCHEMA, common=("unsigned_varint",))
    ns = run_generated(
        mod.files["construct/t.py"].replace("from .", "from kafkacodec.generated."), "c"
    )
    data = bytes.fromhex("00010004000a000b")
    parsed = ns["T"].parse(data)
    assert (parsed.value.first, parsed.value.second) == (10, 11)
    assert ns["T"].build(parsed) == data
    unknown = bytes.fromhex("00010703aabbcc")
    assert ns["T"].parse(unknown).value == b"\xaa\xbb\xcc"
    assert ns["T"].build(ns["T"].parse(unknown)) == unknown

    sys.modules["gen_t"] = mod  # the strategies import their classes relatively
    src = mod.files["strategies/t.py"].replace("from ..t import", "from gen_t import")
    (tmp_path / "gen_t_strategies.py").write_text(src)
    spec = importlib.util.spec_from_file_location(
        "gen_t_strategies", tmp_path / "gen_t_strategies.py"
    )
    smod = importlib.util.module_from_spec(spec)
    sys.modules["gen_t_strategies"] = smod
    spec.loader.exec_module(smod)
    strat = vars(smod)

    @settings(max_examples=50, deadline=None)
    @given(strat["t"]())
    def round_trip(obj):
        data = obj.build()
        assert mod.T.parse_all(data).build() == data

    round_trip()


def test_an_imported_type_takes_its_parameters(tmp_path):
    """A type of another schema, called with the arguments its top-level params take."""
    (tmp_path / "other.ksy").write_text(
        "meta:\n  id: other\n  endian: be\nparams:\n  - id: v\n    type: s2\n"
        "seq:\n  - id: x\n    type: s2\n    if: v >= 1\n"
    )
    text = textwrap.dedent("""
        meta:
          id: t
          endian: be
          imports: [other]
        seq:
          - id: inner
            type: other
    """)
    (tmp_path / "t.ksy").write_text(text)
    with pytest.raises(SchemaError, match="takes 1 arguments, given 0"):
        render.render_all(tmp_path, raw=True)
    (tmp_path / "t.ksy").write_text(text.replace("type: other", "type: other(1)"))
    files = render.render_all(tmp_path, raw=True)
    assert "Other.parse(buf, pos, end, 1, verify=verify)" in files["t.py"]


_FIRST_RUN = """
from hypothesis import given, settings
from kafkacodec.generated.strategies.kafka_log import kafka_log_bytes

@settings(max_examples=60)
@given(kafka_log_bytes("mutated"))
def test(data):
    pass

test()
"""


@pytest.mark.slow  # two fresh processes
def test_the_strategies_pass_hypothesis_health_checks_on_a_first_run(tmp_path):
    """A user's first run (no .hypothesis directory yet), as docs/regenerating.md shows it,
    with Hypothesis's default health checks: the string fields' alphabet is not named by
    codec, which Hypothesis works out on that first draw (over a second), failing too_slow."""
    for run in ("first", "second"):
        res = subprocess.run([sys.executable, "-c", _FIRST_RUN], cwd=tmp_path, capture_output=True, text=True,
                             timeout=300)  # fmt: skip
        assert res.returncode == 0, f"{run} run: {res.stderr[-3000:]}"
    assert (tmp_path / ".hypothesis").is_dir()


INLINE = """
    meta:
      id: t
      endian: be
    seq:
      - id: tag
        type: u1
      - id: len_body
        type: u1
      - id: body
        size: len_body
        type: body
        valid:
          expr: _._io.pos == _._io.size
        -kafkacodec-inline: true
    types:
      body:
        seq:
          - id: len_name
            type: u1
            valid:
              max: _io.size - _io.pos
          - id: name
            size: len_name
          - id: items
            type: item
            repeat: eos
      item:
        seq:
          - id: a
            type: u1
    """


def test_an_inlined_body_is_read_as_the_holding_types_fields(tmp_path):
    """-kafkacodec-inline: a length-prefixed body the official compiler reads as a sized
    substream of its own type, and kafkacodec's targets as the holding type's own fields,
    the length a length-of-rest (bounded, checked, derived)."""
    from kafkacodec.runtime.errors import KafkacodecError

    mod = gen(tmp_path, INLINE)
    data = mod.T(tag=7, name=b"ab", items=[mod.Item(a=1), mod.Item(a=2)]).build()
    assert data == bytes([7, 5, 2]) + b"ab" + bytes([1, 2])
    back = mod.T.parse_all(data)
    assert (back.tag, back.len_body, back.name, [i.a for i in back.items]) == (7, 5, b"ab", [1, 2])
    assert not hasattr(mod, "Body")  # no class for the body: its fields are T's
    assert "len_body" in mod.T.DERIVED
    # the name's bound is the body's end, not the input's: a length past the body fails
    with pytest.raises(KafkacodecError, match=r"name is 5 bytes long: needs 5 bytes, 1 available \[t /types/body"):
        mod.T.parse_all(bytes([7, 2, 5]) + b"abcde")
    # a length past the input, or one that the fields do not fill (repeat: eos fills it)
    with pytest.raises(KafkacodecError):
        mod.T.parse_all(bytes([7, 9, 0]))
    ns = run_generated(mod.files["construct/t.py"], "construct_t.py")
    assert ns["T"].parse(data).name == b"ab"
    # the body's fields say where they are in the schema
    assert "t /types/body/seq/1" in mod.files["t.py"]


@pytest.mark.parametrize("change,message", [
    (lambda s: s.replace("      - id: body\n        size: len_body", "      - id: body\n        size: tag"),
     "size is the field before it ('len_body')"),
    (lambda s: s.replace("          expr: _._io.pos == _._io.size\n        -kafkacodec-inline", "          expr: true\n        -kafkacodec-inline"),
     "an inlined body says it takes its whole size"),
    (lambda s: s.replace("    types:\n      body:\n", "      - id: after\n        type: u1\n    types:\n      body:\n"),
     "an inlined body is the last field"),
    (lambda s: s.replace("        type: body\n", "        type: item\n").replace("      item:\n        seq:\n          - id: a\n            type: u1\n", "      item:\n        seq:\n          - id: a\n            type: u1\n        instances:\n          x:\n            value: 1\n"),
     "instances"),
    (lambda s: s.replace("        type: body\n", "        type: nowhere\n"),
     "an inlined body's type is one of this type's own types"),
    (lambda s: s.replace("        -kafkacodec-inline: true", "        -kafkacodec-inline: yes please"),
     "the only value is true"),
])  # fmt: skip
def test_a_bad_inlined_body_is_named(tmp_path, change, message):
    (tmp_path / "t.ksy").write_text(textwrap.dedent(change(INLINE)))
    with pytest.raises(SchemaError, match=re.escape(message)):
        render.render_all(tmp_path, raw=True)


def test_a_processed_structure_says_it_takes_its_whole_size(tmp_path):
    """kafkacodec's parsers read a processed structure to its last byte; the official
    compiler's only where the schema's `valid` says so: the generator asks for it."""
    text = textwrap.dedent("""
        meta:
          id: t
          endian: be
        seq:
          - id: codec
            type: u1
          - id: region
            size-eos: true
            type: inner
            process: kafka_compression(codec, 2)
        types:
          inner:
            seq:
              - id: a
                type: u1
        """)
    (tmp_path / "t.ksy").write_text(text)
    with pytest.raises(SchemaError, match="read to its last byte"):
        render.render_all(tmp_path, raw=True)
    (tmp_path / "t.ksy").write_text(text.replace("process:", "valid:\n      expr: _._io.pos == _._io.size\n    process:"))
    render.render_all(tmp_path, raw=True)


def test_a_sized_structure_that_says_it_takes_its_size_is_checked(tmp_path):
    """The same `valid` on an unprocessed sized structure: every target checks it (Kaitai
    leaves a substream's rest unread otherwise, and so do kafkacodec's parsers)."""
    from kafkacodec.runtime.errors import KafkacodecError

    text = """
        meta:
          id: t
          endian: be
        seq:
          - id: len_inner
            type: u1
          - id: inner
            size: len_inner
            type: inner
        types:
          inner:
            seq:
              - id: a
                type: u1
        """
    (tmp_path / "loose").mkdir()
    (tmp_path / "strict").mkdir()
    loose = gen(tmp_path / "loose", text)
    assert loose.T.parse_all(bytes([2, 9, 9])).inner.a == 9  # the rest of the size skipped
    consumed = "            valid:\n              expr: _._io.pos == _._io.size\n"
    strict = gen(tmp_path / "strict", text.replace("size: len_inner\n", "size: len_inner\n" + consumed))
    assert strict.T.parse_all(bytes([1, 9])).inner.a == 9
    with pytest.raises(KafkacodecError, match="unexpected bytes"):
        strict.T.parse_all(bytes([2, 9, 9]))

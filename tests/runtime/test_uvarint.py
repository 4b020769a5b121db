"""Unsigned varints (Kafka's compact lengths, tagged fields and metadata record frames):
the runtime, the generator's inline reading and writing, the Construct definition, and the
frames of metadata records Kafka's own classes wrote."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from conftest import generate_inline, run_generated
from hypothesis import given
from hypothesis import strategies as st

from kafkacodec.runtime.errors import EncodeError, TruncatedError, VarintError
from kafkacodec.runtime.varint import encode_uvarint, read_uvarint

ROOT = Path(__file__).resolve().parents[2]
INTERNAL = ROOT.parent / "shared" / "vectors" / "kafka-internal" / "records.jsonl"

# Unsigned LEB128 (protobuf's varint): the encodings every implementation agrees on.
KNOWN = [(0, "00"), (1, "01"), (127, "7f"), (128, "8001"), (300, "ac02"), (16383, "ff7f"),
         (16384, "808001"), (2**31, "8080808008"), (2**32 - 1, "ffffffff0f")]  # fmt: skip


@pytest.mark.parametrize("value,hexed", KNOWN)
def test_known_encodings(value, hexed):
    assert encode_uvarint(value).hex() == hexed
    assert read_uvarint(bytes.fromhex(hexed), 0, len(hexed) // 2) == (value, len(hexed) // 2)


def test_varlongs_and_bounds():
    assert encode_uvarint(2**64 - 1, 10).hex() == "ff" * 9 + "01"
    with pytest.raises(VarintError, match="out of range"):
        read_uvarint(bytes.fromhex("ffffffff1f"), 0, 5)  # 2^33 - 1 in five bytes
    with pytest.raises(VarintError, match="longer than 5 bytes"):
        read_uvarint(bytes.fromhex("8080808080"), 0, 5)
    with pytest.raises(TruncatedError):
        read_uvarint(bytes.fromhex("8080"), 0, 2)
    for bad in (-1, 2**32):
        with pytest.raises(EncodeError):
            encode_uvarint(bad)


@given(st.integers(0, 2**64 - 1))
def test_round_trip(value):
    max_len = 5 if value < 2**32 else 10
    data = encode_uvarint(value, max_len)
    assert read_uvarint(data + b"\x99", 0, len(data) + 1, max_len) == (value, len(data))


@pytest.mark.skipif(not INTERNAL.exists(), reason="../shared/vectors/kafka-internal is not here")
def test_the_frames_of_metadata_records_kafka_wrote():
    """__cluster_metadata values start with uvarint frame version 1, apiKey, version."""
    seen = 0
    for line in INTERNAL.read_text().splitlines():
        rec = json.loads(line)
        if rec["kind"] not in ("metadata", "remote_metadata"):
            continue
        data = bytes.fromhex(rec["hex"])
        frame, pos = read_uvarint(data, 0, len(data))
        api_key, pos = read_uvarint(data, pos, len(data))
        version, pos = read_uvarint(data, pos, len(data))
        assert (frame, api_key, version, pos) == (
            1,
            rec["apiKey"],
            rec["version"],
            rec["headerBytes"],
        )
        seen += 1
    assert seen > 200


def test_generated_code_reads_and_writes_unsigned_varints(tmp_path):
    """A schema field of type unsigned_varint(5|10): the generated parser and builder, and
    the Construct definition, agree with the runtime."""
    files = generate_inline(tmp_path, """
        meta:
          id: t
          endian: be
          imports:
            - common/unsigned_varint
        seq:
          - id: len_payload
            type: unsigned_varint(5)
          - id: payload
            size: len_payload
          - id: big
            type: unsigned_varint(10)
        """, common=("unsigned_varint",))  # fmt: skip
    ns = run_generated(files["t.py"], "t.py")
    cns = run_generated(files["construct/t.py"], "construct_t.py")
    t = ns["T"]
    for data, big in ((b"", 0), (b"x" * 300, 2**63 + 5)):
        raw = encode_uvarint(len(data)) + data + encode_uvarint(big, 10)
        obj = t.parse_all(raw)
        assert (obj.len_payload, bytes(obj.payload), obj.big) == (len(data), data, big)
        assert t(payload=data, big=big).build() == raw  # len_payload derived
        assert cns["T"].parse(raw).big == big and cns["T"].build(cns["T"].parse(raw)) == raw
    with pytest.raises(VarintError):
        t.parse_all(bytes.fromhex("ffffffff1f"))


@pytest.mark.crosslang
def test_the_official_compilers_reading_agrees(tmp_path):
    """schemas/common/unsigned_varint.ksy, as every other Kaitai target reads it, compiled
    with the official compiler to Python: the same values and lengths as the runtime."""
    import shutil as _shutil
    import sys

    from kafkacodec.export import ExportError, compile_schemas

    if _shutil.which("node") is None:
        pytest.skip("node is needed for the official compiler")
    try:
        results = compile_schemas(tmp_path, ["python"], ROOT / "schemas" / "common")
    except ExportError as err:
        pytest.skip(str(err))
    assert all(r["ok"] for r in results), results
    from kaitaistruct import BytesIO, KaitaiStream, ValidationExprError

    sys.path.insert(0, str(tmp_path / "python"))
    try:
        from unsigned_varint import UnsignedVarint
    finally:
        sys.path.remove(str(tmp_path / "python"))
    for value, hexed in KNOWN:
        parsed = UnsignedVarint(5, KaitaiStream(BytesIO(bytes.fromhex(hexed))))
        assert (parsed.value, parsed.len) == (value, len(hexed) // 2)
    with pytest.raises(ValidationExprError):  # a sixth group: longer than 5 bytes
        UnsignedVarint(5, KaitaiStream(BytesIO(bytes.fromhex("808080808000"))))

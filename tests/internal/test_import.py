"""`kafkacodec specs import`: Kafka's JSON message specs as Kaitai schemas, and the drill a
new Kafka release takes: codecs generated from every label of ../shared/kafka-specs decode
what is valid for that label, round-trip it byte for byte, refuse newer versions with a
clear error, and keep unknown tagged fields."""

from __future__ import annotations

import re
import shutil

import pytest
from conftest import KAFKA_SPECS, VECTORS_LABEL, generate_codecs
from internal_vectors import ROWS, decode

from kafkacodec.internal import UnknownVersionError
from kafkacodec.internal.kafka_json import to_json

LABELS = ["3.8.0", "3.9", "trunk-2024-10", "latest-index"]
needs_specs = pytest.mark.skipif(
    not KAFKA_SPECS.is_dir(), reason="../shared/kafka-specs is not here"
)


def generate(tmp_path, label: str):
    """The schemas and codecs of one label, in tmp_path: (import result, Codecs)."""
    return generate_codecs(KAFKA_SPECS / label, label, tmp_path)


@needs_specs
@pytest.mark.slow
@pytest.mark.parametrize("label", LABELS)
def test_the_drill(tmp_path, label):
    """Codecs from each label: every vector whose spec and version the label has decodes
    and builds back byte for byte; where the spec did not change since the label, the JSON
    is Kafka's; a version the label does not know is refused, naming spec, version and
    the versions known. (The shipped codecs, from a release's jars, take the same drill in
    tests/kafka/test_kafka_specs.py.)"""
    from kafkacodec.generator.specs import load_specs
    from kafkacodec.generator.specs_diff import diff_specs

    result, codecs = generate(tmp_path, label)
    specs = load_specs(KAFKA_SPECS / label)
    diff = diff_specs(specs, load_specs(KAFKA_SPECS / VECTORS_LABEL))
    changed = {d.name for d in diff.changed}
    # A version whose bytes changed between the labels (specs diff says which) is not the
    # older label's to read.
    relaid = {
        (name, int(v))
        for name, c in diff.breaking
        for v in re.findall(r"version (\d+)(?:'s bytes| no longer| encodes)", c.why)
    }
    left_out = " ".join(what for what, _why in result.skipped)
    decoded = refused = 0
    for r in ROWS:
        spec = specs.get(r["spec"])
        if (
            spec is None
            or (r["spec"], r["version"]) in relaid
            or (r["kind"] == "key" and f"record type {r['recordType']}" in left_out)
        ):
            continue
        if r["kind"] == "value" and f"record type {r['recordType']}" in left_out:
            continue
        if r["kind"] in ("metadata", "remote_metadata") and f"apiKey {r['apiKey']}" in left_out:
            continue
        version_known = r["version"] in spec.valid or (
            r["kind"] == "key" and spec.type == "coordinator-key"
        )
        if not version_known:
            with pytest.raises(UnknownVersionError) as err:
                decode(codecs, r)
            assert f"{r['spec']} version {r['version']} is newer than this codec knows" in str(
                err.value
            )
            assert f"({spec.valid})" in str(err.value)
            refused += 1
            continue
        m = decode(codecs, r)
        assert m.spec == r["spec"]
        data = bytes.fromhex(r["hex"])
        assert data[: r["headerBytes"]] + m.obj.build() == data
        if r["spec"] not in changed:
            assert to_json(m.obj, m.version) == r["json"], r["spec"]
        decoded += 1
    assert decoded > 500
    if label == "3.8.0":
        assert refused > 0  # LeaderChangeMessage version 1 came with 3.9


@needs_specs
@pytest.mark.slow
def test_every_label_compiles_with_the_official_compiler(tmp_path):
    """The imported schemas are Kaitai Struct: the official compiler takes every one of
    every label, for Java, C++, JavaScript and Python."""
    from conftest import KSC

    from kafkacodec.export import compile_schemas
    from kafkacodec.generator.specs_import import import_specs, write_schemas

    if (
        shutil.which("node") is None
        or not (KSC / "node_modules" / "kaitai-struct-compiler").exists()
    ):
        pytest.skip("node and tests/ksc/node_modules are needed (make test installs them)")
    for label in LABELS:
        schemas = tmp_path / label
        write_schemas(import_specs(KAFKA_SPECS / label, label), schemas / "internal")
        results = compile_schemas(
            tmp_path / f"out-{label}", ["java", "cpp_stl", "javascript", "python"], schemas
        )
        bad = [(r["schema"], r["lang"], r["error"][:200]) for r in results if not r["ok"]]
        assert not bad, bad
        assert len(results) == 4 * len(list((schemas / "internal").glob("*.ksy")))


def test_offset_commit_value_v4_as_kafka_4_1_writes_it():
    """The real case: value bytes of OffsetCommitValue version 4 written by Kafka 4.1 (the
    version that broke readers with a hand-written list of versions)."""
    from kafkacodec.internal import DEFAULT

    data = bytes.fromhex("0004000000000021d4a8ffffffff010000019964f2d83600")
    m = DEFAULT.coordinator_value("__consumer_offsets", 1, data)
    assert (m.spec, m.version) == ("OffsetCommitValue", 4)
    # By hand: int16 version 4, int64 offset, int32 leader epoch, compact string (0x01:
    # empty), int64 commit timestamp, no tagged fields.
    offset = int.from_bytes(data[2:10], "big")
    ts = int.from_bytes(data[15:23], "big")
    assert to_json(m.obj, 4) == (
        f'{{"offset":{offset},"leaderEpoch":-1,"metadata":"","commitTimestamp":{ts}}}'
    )
    assert data[:2] + m.obj.build() == data


def test_a_newer_version_is_refused_not_guessed():
    from kafkacodec.internal import DEFAULT

    data = bytes.fromhex("0005000000000021d4a8ffffffff010000019964f2d83600")
    with pytest.raises(UnknownVersionError) as err:
        DEFAULT.coordinator_value("__consumer_offsets", 1, data)
    assert "OffsetCommitValue version 5 is newer than this codec knows (0-4)" in str(err.value)
    assert err.value.position == 0  # where the version is


def test_unknown_tagged_fields_survive_a_round_trip():
    """A tag this codec does not know (a newer Kafka's) is kept with its bytes and written
    back unchanged, as Kafka's _unknownTaggedFields; the JSON leaves it out, as Kafka's."""
    from kafkacodec.internal import DEFAULT

    plain = bytes.fromhex("0004000000000021d4a8ffffffff010000019964f2d83600")
    # the same value with two unknown tags (tag 5: 3 bytes; tag 200: 0 bytes)
    tagged = plain[:-1] + bytes.fromhex("020503aabbccc80100")
    m = DEFAULT.coordinator_value("__consumer_offsets", 1, tagged)
    assert [(t.tag, bytes(t.value)) for t in m.obj.tagged_fields] == [
        (5, b"\xaa\xbb\xcc"),
        (200, b""),
    ]
    assert tagged[:2] + m.obj.build() == tagged
    assert to_json(m.obj, 4) == to_json(
        DEFAULT.coordinator_value("__consumer_offsets", 1, plain).obj, 4
    )

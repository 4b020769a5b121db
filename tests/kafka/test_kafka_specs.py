"""Kafka's JSON message specs from the released jars (issue 37, part 5): where each release
ships them; `kafkacodec specs diff` between the oldest and the newest release, its claims
checked against the raw JSON of the jars; the shipped codecs are those of the newest
release's jars; the record format's own schemas agree with the specs Kafka ships for it."""

from __future__ import annotations

import re

import pytest
from conftest import KAFKA_SPECS, ROOT, VECTORS_LABEL
from conftest import kafkacodec_cli as cli
from kafka_broker import SPEC_JARS, VERSIONS, libs, raw, release_specs

pytestmark = pytest.mark.kafka

@pytest.fixture(scope="module")
def specs(tmp_path_factory):
    return {v: release_specs(v, tmp_path_factory.mktemp(f"specs-{v}")) for v in VERSIONS}


def test_each_jar_ships_its_specs_where_expected(specs):
    for _version, d in specs.items():
        for folder, (_artifact, inside) in SPEC_JARS.items():
            found = list((d / folder).rglob("*.json"))
            assert found and {f.parent for f in found} == {d / folder / inside}, folder
        # the internal topics' and state files' specs, each in its jar
        for folder, name in [("group-coordinator", "OffsetCommitValue"), ("transaction-coordinator", "TransactionLogValue"),
                             ("share-coordinator", "ShareUpdateValue"), ("metadata", "RegisterBrokerRecord"),
                             ("raft", "QuorumStateData"), ("storage", "RemoteLogSegmentMetadataRecord"),
                             ("clients", "ConsumerProtocolAssignment")]:  # fmt: skip
            assert raw(d / folder / SPEC_JARS[folder][1] / f"{name}.json")["name"] == name


def _field(spec: dict, name: str) -> dict:
    (found,) = [f for f in spec["fields"] if f["name"] == name]
    return found


def test_specs_diff_between_the_oldest_and_the_newest_release(specs):
    old, new = specs[VERSIONS[0]], specs[VERSIONS[-1]]
    run = cli("specs", "diff", old, new, ok=None)
    # the same from the jars themselves (a release's libs/)
    assert cli("specs", "diff", libs(VERSIONS[0]), libs(VERSIONS[-1]), ok=None).stdout.splitlines()[1:] \
        == run.stdout.splitlines()[1:]
    assert run.returncode == 1, run.stderr  # some changes break older readers
    text = run.stdout
    # each claim checked against the jars' raw JSON
    reg_old = raw(old / "metadata/common/metadata/RegisterBrokerRecord.json")
    reg_new = raw(new / "metadata/common/metadata/RegisterBrokerRecord.json")
    assert (reg_old["validVersions"], reg_new["validVersions"]) == ("0-3", "0-4")
    cordoned = _field(reg_new, "CordonedLogDirs")
    assert re.search(rf"changed RegisterBrokerRecord +\(breaks older readers\)\n  validVersions 0-3 -> 0-4 "
                     rf"+BREAKING.*\n  field CordonedLogDirs added \(\[\]uuid, versions {re.escape(cordoned['versions'])}, "
                     rf"tag {cordoned['tag']}\)", text)  # fmt: skip
    share_old = raw(old / "share-coordinator/common/message/ShareUpdateValue.json")
    share_new = raw(new / "share-coordinator/common/message/ShareUpdateValue.json")
    before, after = _field(share_old, "SnapshotEpoch")["type"], _field(share_new, "SnapshotEpoch")["type"]
    assert before != after
    assert f"field SnapshotEpoch type {before} -> {after}  BREAKING" in text
    names_old = {p.stem for p in old.rglob("*.json")}
    names_new = {p.stem for p in new.rglob("*.json")}
    for gone in names_old - names_new:
        assert f"removed {gone}\n" in text
    for added in names_new - names_old:
        assert f"added   {added}\n" in text


def test_the_shipped_codecs_are_the_newest_releases():
    """schemas/internal/ is what `kafkacodec specs import` (`make specs`) makes of the
    newest release's jars, and generated/ is fresh from it (CI's check-generated); the
    import keeps to the specs of stored bytes, leaving out the wire protocol's."""
    from kafkacodec.generator.specs import load_specs
    from kafkacodec.generator.specs_import import import_specs

    newest = VERSIONS[-1]
    result = import_specs(libs(newest), newest)
    on_disk = {p.stem: p.read_text() for p in (ROOT / "schemas" / "internal").glob("*.ksy")}
    assert on_disk == result.files
    specs = load_specs(libs(newest))
    protocol = [s for s in specs.values() if s.type in ("request", "response", "header")]
    assert len(protocol) > 150
    assert (f"{len(protocol)} header, request, response specs",
            "the wire protocol's messages, not stored in a log or state file") in result.skipped
    assert cli("--version").stdout.strip().endswith(f"(internal-topic codecs from Kafka's specs labelled {newest})")


#: What a spec's type is in the record format's own schemas (Kaitai's).
_WIDTH = {"int16": ("s2", "u2"), "int32": ("s4",), "int64": ("s8",)}


@pytest.mark.parametrize("version", VERSIONS)
def test_the_record_formats_schemas_agree_with_kafkas_specs(version):
    """From Kafka 4.4, kafka-clients ships specs of the record format itself (the aborted
    transaction of a .txnindex, a control record's key, a transaction marker's value):
    kafkacodec's hand-written schemas hold the same fields, in order, of the same types,
    after the int16 version Kafka writes before each."""
    import yaml

    from kafkacodec.generator.specs import load_specs
    from kafkacodec.generator.specs_import import RECORD_FORMAT_SPECS, snake

    specs = load_specs(libs(version))
    shipped = [name for name in RECORD_FORMAT_SPECS if name in specs]
    if version == "4.0.0":
        assert not shipped  # not yet specs then
        return
    assert shipped == list(RECORD_FORMAT_SPECS)
    for name, schema in RECORD_FORMAT_SPECS.items():
        node = yaml.safe_load((ROOT / "schemas" / f"{schema}.ksy").read_text())
        seq = node["types"]["entry"]["seq"] if "entry" in node.get("types", {}) else node["seq"]
        assert seq[0]["id"] == "version" and seq[0]["type"] == "s2", schema
        spec = specs[name]
        assert [(snake(f.name), f.type) for f in spec.fields] == [
            (f["id"], next(t for t, widths in _WIDTH.items() if f["type"] in widths)) for f in seq[1:]
        ], schema
        assert spec.versions == [0]


def test_the_shipped_codecs_read_every_vector_but_those_kafka_changed():
    """The internal-topic vectors (Kafka trunk of 2024-10) read by the shipped codecs (the
    newest release's) as Kafka wrote them, but for the records whose bytes changed between
    that trunk and the release: exactly those `specs diff` calls breaking for a version the
    vectors hold, or removed."""
    from internal_vectors import ROWS, shipped_rows

    from kafkacodec.generator.specs import load_specs
    from kafkacodec.generator.specs_diff import diff_specs

    diff = diff_specs(load_specs(KAFKA_SPECS / VECTORS_LABEL), load_specs(libs(VERSIONS[-1])))
    relaid = {(name, int(v)) for name, c in diff.breaking
              for v in re.findall(r"version (\d+)(?:'s bytes| no longer| encodes)", c.why)}  # fmt: skip
    removed = set(diff.removed)
    read = {id(r) for r in shipped_rows()}
    unread = {(r["spec"], r["version"]) for r in ROWS if id(r) not in read}
    expected = {(r["spec"], r["version"]) for r in ROWS
                if (r["spec"], r["version"]) in relaid or r["spec"] in removed}  # fmt: skip
    assert unread == expected
    assert len(read) > 900

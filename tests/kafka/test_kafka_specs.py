"""Kafka's JSON message specs from the released jars (issue 37, part 5): where each release
ships them, and `kafkacodec specs diff` between the oldest and the newest release, its
claims checked against the raw JSON of the jars."""

from __future__ import annotations

import json
import re
import zipfile
from pathlib import Path

import pytest
from conftest import kafkacodec_cli as cli
from kafka_broker import VERSIONS, classpath

pytestmark = pytest.mark.kafka

#: The folder `specs import` reads a spec's topic from -> (the jar that ships it, the
#: directory inside the jar).
SPEC_JARS = {
    "clients": ("kafka-clients", "common/message"),
    "group-coordinator": ("kafka-group-coordinator", "common/message"),
    "transaction-coordinator": ("kafka-transaction-coordinator", "common/message"),
    "share-coordinator": ("kafka-share-coordinator", "common/message"),
    "metadata": ("kafka-metadata", "common/metadata"),
    "raft": ("kafka-raft", "common/message"),
    "storage": ("kafka-storage", "message"),
}


def release_specs(version: str, dest: Path) -> Path:
    """Every JSON spec of the release's jars, in the folders `specs import` reads."""
    jars = {Path(j).name: Path(j) for j in classpath(version).split(":")}
    for folder, (artifact, _inside) in SPEC_JARS.items():
        with zipfile.ZipFile(jars[f"{artifact}-{version}.jar"]) as z:
            for name in z.namelist():
                if name.endswith(".json"):
                    out = dest / folder / name
                    out.parent.mkdir(parents=True, exist_ok=True)
                    out.write_bytes(z.read(name))
    return dest


def raw(spec: Path) -> dict:
    """A spec file as JSON (Kafka's specs carry // comments)."""
    return json.loads("\n".join(line for line in spec.read_text().splitlines()
                                if not re.match(r"\s*//", line)))  # fmt: skip


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

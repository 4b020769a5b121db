"""Kafka's JSON message specs read into a model, and the compatibility report between two
directories of them (`kafkacodec specs diff`). The oracle for the report is the change
tables of ../shared/kafka-specs/README.md, computed independently from the same files."""

from __future__ import annotations

import json
import re
import textwrap
from pathlib import Path

import pytest
from conftest import kafkacodec_cli

from kafkacodec.generator.specs import SpecError, Versions, load_spec, load_specs, strip_comments
from kafkacodec.generator.specs_diff import diff_specs

SPECS = Path(__file__).resolve().parents[3] / "shared" / "kafka-specs"
LABELS = ["3.8.0", "3.9", "trunk-2024-10", "latest-index"]

pytestmark = pytest.mark.skipif(not SPECS.is_dir(), reason="../shared/kafka-specs is not here")


def readme_tables() -> dict[tuple[str, str], list[tuple[str, str, str]]]:
    """{(old, new): [(kind, spec, detail)]} from the README's "Changes between labels"."""
    text = (SPECS / "README.md").read_text()
    tables = {}
    for m in re.finditer(r"^### (\S+) -> (\S+)\n\n\| kind.*\n\|[-| ]+\n((?:\|.*\n)+)", text, re.M):
        rows = []
        for line in m[3].splitlines():
            kind, spec, detail = [c.strip() for c in line.strip("|").split("|")]
            rows.append((kind, spec, detail.strip("`")))
        tables[(m[1], m[2])] = rows
    return tables


TABLES = readme_tables() if SPECS.is_dir() else {}


def test_every_label_loads():
    counts = {label: load_specs(SPECS / label) for label in LABELS}
    assert [len(counts[label]) for label in LABELS] == [56, 62, 75, 93]  # the README's totals
    for specs in counts.values():
        for spec in specs.values():
            assert spec.valid.hi is not None and spec.versions
            for _path, f in spec.walk():
                assert not f.versions.empty


@pytest.mark.parametrize("pair", [("3.8.0", "3.9"), ("3.9", "trunk-2024-10"),
                                  ("trunk-2024-10", "latest-index")])  # fmt: skip
def test_the_report_agrees_with_the_readme_tables(pair):
    old, new = pair
    report = diff_specs(load_specs(SPECS / old), load_specs(SPECS / new))
    rows = TABLES[pair]
    expect = {kind: {spec for k, spec, _ in rows if k == kind and spec != "-"}
              for kind in ("added", "removed", "changed", "text only")}  # fmt: skip
    assert set(report.added) == expect["added"]
    removed = set(report.removed)
    if new == "latest-index":  # the README does not count clients/ files there as removed
        removed -= {
            s.name for s in load_specs(SPECS / old).values() if s.path.startswith("clients/")
        }
    assert removed == expect["removed"]
    changed = {d.name: d for d in report.changed}
    assert set(changed) == expect["changed"]
    assert not expect["text only"] & set(changed)  # bytes differ, no property does
    for _kind, spec, detail in (r for r in rows if r[0] == "changed"):
        d = changed[spec]
        parts = dict(p.split(" ", 1) for p in detail.split("; ") if p.startswith("fields"))
        for key, got in (("fields+", d.fields_added), ("fields-", d.fields_removed),
                         ("fields~", d.fields_changed)):  # fmt: skip
            assert sorted(got) == sorted(parts[key].split(",")) if key in parts else not got, (
                spec,
                key,
            )
        for prop in ("validVersions", "type", "apiKey"):
            m = re.search(rf"\b{prop} '?([^';]*?)'?->'?([^';]*?)'?(?:;|$)", detail)
            ours = [c.what.replace("'", "") for c in d.changes if c.what.startswith(prop + " ")]
            if m:
                assert ours == [f"{prop} {m[1]} -> {m[2]}".replace("'", "")], (spec, prop)
            else:
                assert not ours, (spec, prop)
        moved = re.search(r"moved (\S+)->(\S+)", detail)
        assert d.moved == ((moved[1], moved[2]) if moved else None)


def test_what_breaks_a_reader_from_the_older_specs():
    r = diff_specs(load_specs(SPECS / "3.8.0"), load_specs(SPECS / "3.9"))
    assert [(name, c.what) for name, c in r.breaking] == [
        ("LeaderChangeMessage", "validVersions 0 -> 0-1")]  # fmt: skip
    r = diff_specs(load_specs(SPECS / "3.9"), load_specs(SPECS / "trunk-2024-10"))
    tagged = next(d for d in r.changed if d.name == "TransactionLogValue")
    assert tagged.fields_added and not tagged.breaking  # three new tagged fields
    assert {name for name, _ in r.breaking} == {"ShareGroupPartitionMetadataValue"}  # redone at v0
    r = diff_specs(load_specs(SPECS / "trunk-2024-10"), load_specs(SPECS / "latest-index"))
    assert not r.breaking  # the 4.0 renaming of keys changes no byte; TxnIndexEmpty is tagged


def spec(tmp_path: Path, name: str, body: str, folder: str = "x") -> Path:
    p = tmp_path / folder / f"{name}.json"
    p.parent.mkdir(parents=True, exist_ok=True)
    p.write_text(textwrap.dedent(body))
    return p


BASE = """
{ "type": "data", "name": "V", "validVersions": "0-1", "flexibleVersions": "1+",
  "fields": [
    { "name": "a", "type": "int64", "versions": "0+" },
    { "name": "b", "type": "string", "versions": "1+", "default": "x" }
  ] }
"""


@pytest.mark.parametrize("edit,breaking", [
    (lambda t: t.replace('"0-1"', '"0-2"'), True),  # a new version
    (lambda t: t.replace('"0-1"', '"1"'), False),  # a version dropped
    (lambda t: t.replace('"default": "x"', '"default": "y"'), False),
    (lambda t: t.replace('"b", "type": "string", "versions": "1+"',
                         '"b", "type": "string", "versions": "1+", "nullableVersions": "1+"'), True),
    (lambda t: t.replace(' ]', ', { "name": "c", "type": "int32", "versions": "1+" } ]'), True),
    (lambda t: t.replace(' ]', ', { "name": "c", "type": "int32", "taggedVersions": "1+", "tag": 0 } ]'), False),
    (lambda t: t.replace('"int64"', '"int32"'), True),
    (lambda t: t.replace('"flexibleVersions": "1+"', '"flexibleVersions": "0+"'), True),
])  # fmt: skip
def test_breaking_changes(tmp_path, edit, breaking):
    spec(tmp_path / "old", "V", BASE)
    spec(tmp_path / "new", "V", edit(BASE))
    r = diff_specs(load_specs(tmp_path / "old"), load_specs(tmp_path / "new"))
    assert r.changed and bool(r.breaking) is breaking, r.lines()


def test_reading_follows_kafkas_rules(tmp_path):
    p = spec(tmp_path, "T", """
        // a comment, and one after a value
        { "type": "data", "name": "T", "validVersions": "0", // here
          "fields": [
            { "name": "u", "type": "string", "versions": "0+", "about": "see http://x//y" },
            { "name": "t", "type": "int32", "taggedVersions": "0+", "tag": "3" }
          ] }
        """)  # fmt: skip
    t = load_spec(p)
    assert t.fields[0].about == "see http://x//y"  # `//` inside a string is not a comment
    assert (
        t.fields[1].tag == 3 and str(t.fields[1].versions) == "0+"
    )  # versions from taggedVersions
    assert str(Versions.parse("none")) == "none" and 5 not in Versions.parse("none")
    assert strip_comments('"a" // b\n') == '"a" \n'


@pytest.mark.parametrize("body,where,message", [
    ('{ "name": "T", "validVersions": "0", "fields": [ {', "line", "not JSON"),
    ('{ "name": "T", "validVersions": "2-1", "fields": [] }', "validVersions", "ends before it starts"),
    ('{ "name": "T", "validVersions": "0", "fields": [ { "name": "a", "type": "int8" } ] }',
     "/fields/0", "versions is missing"),
    ('{ "name": "T", "validVersions": "0", "fields": [ { "name": "a", "type": "int8", "versions": "0+", "tag": 1 } ] }',
     "/fields/0", "both tag and taggedVersions"),
    ('{ "name": "T", "validVersions": "0", "bogus": 1, "fields": [] }', "", "unknown keys"),
])  # fmt: skip
def test_a_bad_spec_is_named_with_where_and_what(tmp_path, body, where, message):
    p = spec(tmp_path, "T", body)
    with pytest.raises(SpecError, match=re.escape(message)) as err:
        load_spec(p)
    assert str(p) in str(err.value) and where in str(err.value)


def test_a_name_declared_twice_is_an_error(tmp_path):
    spec(tmp_path, "V", BASE, "one")
    spec(tmp_path, "V2", BASE, "two")
    with pytest.raises(SpecError, match="V is also declared by"):
        load_specs(tmp_path)


def test_the_command(tmp_path):
    res = kafkacodec_cli("specs", "diff", SPECS / "3.8.0", SPECS / "3.9", ok=False)
    assert res.returncode == 1  # LeaderChangeMessage v1 breaks a 3.8.0 reader
    assert "1 change breaks" in res.stdout and "changed LeaderChangeMessage" in res.stdout
    res = kafkacodec_cli("specs", "diff", "--json", SPECS / "trunk-2024-10", SPECS / "latest-index")
    doc = json.loads(res.stdout)
    assert res.returncode == 0 and len(doc["added"]) == 26
    res = kafkacodec_cli("specs", "diff", tmp_path / "nothing", SPECS / "3.9", ok=False)
    assert res.returncode == 2 and "not a directory of message specs" in res.stderr


def _jar(path: Path, files: dict[str, str]) -> Path:
    import zipfile

    with zipfile.ZipFile(path, "w") as z:
        z.writestr("META-INF/MANIFEST.MF", "Manifest-Version: 1.0\n")
        for name, text in files.items():
            z.writestr(name, text)
    return path


def test_specs_inside_a_releases_jars(tmp_path):
    """A release's libs/: the specs inside its kafka-MODULE-VERSION.jar files, each in the
    folder of Kafka's source tree its module names (what says its topic); the same specs as
    the source tree's own files."""
    import shutil

    tree = SPECS / "trunk-2024-10"
    libs = tmp_path / "libs"
    libs.mkdir()
    for module in ("group-coordinator", "metadata"):
        files = {str(p.relative_to(tree / module / "src/main/resources")): p.read_text()
                 for p in (tree / module).rglob("*.json")}  # fmt: skip
        _jar(libs / f"kafka-{module}-4.9.1.jar", files)
    _jar(libs / "kafka_2.13-4.9.1.jar", {"x.json": "{}"})  # not a module's jar: not read
    _jar(libs / "kafka-server-common-4.9.1.jar", {})  # a module's jar with no specs
    (libs / "scala-library-2.13.15.jar").write_bytes(b"not even a zip")  # not read
    from_jars = load_specs(libs)
    copy = tmp_path / "tree"
    for module in ("group-coordinator", "metadata"):
        shutil.copytree(tree / module, copy / module)
    from_tree = load_specs(copy)
    assert set(from_jars) == set(from_tree) and len(from_jars) > 40
    for name, s in from_jars.items():
        assert s.folder == from_tree[name].folder
        assert (s.fields, s.valid, s.type, s.api_key) == (from_tree[name].fields, from_tree[name].valid,
                                                          from_tree[name].type, from_tree[name].api_key)  # fmt: skip
    one = load_specs(libs / "kafka-metadata-4.9.1.jar")  # one jar
    assert set(one) == {n for n, s in from_tree.items() if s.folder == "metadata"}


def test_a_bad_jar_is_named(tmp_path):
    bad = tmp_path / "kafka-clients-4.0.0.jar"
    bad.write_bytes(b"PK\x03\x04 cut short")
    with pytest.raises(SpecError, match=r"kafka-clients-4\.0\.0\.jar: cannot read"):
        load_specs(bad)
    spec_jar = _jar(tmp_path / "kafka-raft-4.0.0.jar",
                    {"common/message/Q.json": '{ "name": "Q", "validVersions": "0", "fields": [ {'})  # fmt: skip
    with pytest.raises(SpecError, match=r"kafka-raft-4\.0\.0\.jar!/common/message/Q\.json: line \d+: not JSON"):
        load_specs(spec_jar)
    with pytest.raises(SpecError, match="not a Kafka module's jar"):
        load_specs(_jar(tmp_path / "other.jar", {}))
    empty = tmp_path / "empty"
    empty.mkdir()
    with pytest.raises(SpecError, match="holds no message specs"):
        load_specs(empty)


def test_dump_with_the_specs_of_another_release(tmp_path):
    """--specs: codecs generated for the run from another release's specs; a source that
    holds none is one clear line and exit 2."""
    import kafkacodec as kc

    log = tmp_path / "__consumer_offsets-0" / "00000000000000000000.log"
    log.parent.mkdir()
    log.write_bytes(kc.build_batch([kc.Record(None, 0, b"\x00\x01", b"\x00\x03", [])]))
    empty = tmp_path / "no-specs"
    empty.mkdir()
    res = kafkacodec_cli("dump", "--specs", empty, "--offsets-decoder", log, ok=False)
    assert res.returncode == 2 and "Traceback" not in res.stderr
    assert res.stderr.startswith(f"kafkacodec dump: {empty}: holds no message specs")

"""Kafka's generated message classes as the judge of the internal-topic payloads (issue 39,
part 4, internal half): every valid internal payload of `kafkacodec corpus` and every
Kafka-written vector the shipped codecs read, read by the release's own class
(OffsetCommitValue, PartitionRecord, ...) at its version, printed by its JsonConverter and
written back (harness/src/InternalJudge.java), for the oldest and the newest release of the
harness.

What must hold for each payload:
- Kafka reads it, to its last byte;
- Kafka's JSON is kafkacodec's (internal.kafka_json.to_json), character for character;
- Kafka writes back the same bytes, or the bytes are not the one encoding Kafka writes and
  the difference is one of Kafka's normalizations, each checked: Kafka refuses to write
  unknown tagged fields that are not in strictly ascending order below 2^31 (its
  RawTaggedFieldWriter), and writes a bool as 0/1, a null struct's presence byte as -1 and
  known tagged fields in tag order, which kafkacodec reads back to the same JSON.

The shipped codecs are the newest release's specs; an older release judges the messages whose
spec it ships unchanged (the rest differ by design: `kafkacodec specs diff`)."""

from __future__ import annotations

import importlib
import json
import subprocess

import pytest
from internal_vectors import decode, shipped_rows
from kafka_broker import HARNESS, VERSIONS, HarnessError, classpath, raw, release_specs

from kafkacodec.internal.codecs import version_bounds
from kafkacodec.internal.kafka_json import present

pytestmark = [pytest.mark.kafka, pytest.mark.slow]


def _parse(schema: str, cls_name: str, data: bytes, version: int):
    from kafkacodec.corpus import _parse

    cls = getattr(importlib.import_module(f"kafkacodec.generated.{schema}"), cls_name)
    return _parse(cls, data, version)


@pytest.fixture(scope="module")
def payloads(tmp_path_factory):
    """(where from, Kafka's class name, version, bytes, the schema module, kafkacodec's object)."""
    pytest.importorskip("hypothesis")
    from kafkacodec.corpus import write_corpus
    from kafkacodec.internal import DEFAULT

    out = tmp_path_factory.mktemp("corpus")
    manifest = write_corpus(out, count=0, internal_count=4, seed=39)
    found = []
    for c in manifest["cases"]:
        if c["param"] is not None and c["kind"] == "valid":
            data = (out / c["file"]).read_bytes()
            found.append((c["file"], c["class"], c["param"], data, c["schema"],
                          _parse(c["schema"], c["class"], data, c["param"])))  # fmt: skip
    corpus = len(found)
    for r in shipped_rows():
        m = decode(DEFAULT, r)
        data = bytes.fromhex(r["hex"])[r["headerBytes"] :]
        found.append((f"vector {r['spec']} v{r['version']} {r['kind']} {r['instance']}",
                      type(m.obj).__name__, m.version, data, type(m.obj).__module__.rsplit(".", 1)[-1], m.obj))  # fmt: skip
    assert corpus > 200 and len(found) - corpus > 50
    return found


def judge(version: str, build, cases) -> list[dict]:
    try:
        cp = classpath(version)
    except HarnessError as err:
        pytest.skip(str(err))
    classes = build / f"internal-judge-{version}"
    classes.mkdir(parents=True, exist_ok=True)
    res = subprocess.run(["javac", "-nowarn", "-d", str(classes), "-cp", cp, str(HARNESS / "src" / "InternalJudge.java")],
                         capture_output=True, text=True, timeout=300)  # fmt: skip
    assert res.returncode == 0, res.stderr[-3000:]
    jobs = "".join(f"{name}\t{v}\t{data.hex()}\n" for _w, name, v, data, _s, _o in cases)
    res = subprocess.run(["java", "-Xmx512m", "-cp", f"{cp}:{classes}", "InternalJudge"], input=jobs,
                         capture_output=True, text=True, timeout=600)  # fmt: skip
    assert res.returncode == 0, res.stderr[-3000:]
    out = [
        json.loads(line) for line in res.stdout.split("\n") if line
    ]  # not splitlines: U+2028 and the like stay raw
    assert len(out) == len(cases)
    return out


def unchanged(version: str, tmp_path) -> set[tuple[str, int]] | None:
    """The (spec name, version) the release reads and writes as the shipped codecs' release
    does: the same fields at that version, of the same types, nullability, tags and
    defaults, flexible or not alike (None: it is that release)."""
    if version == VERSIONS[-1]:
        return None

    def specs(v: str) -> dict[tuple[str, int], str]:
        out = {}
        for f in release_specs(v, tmp_path / f"specs-{v}").rglob("*.json"):
            spec = raw(f)
            if spec.get("validVersions", "none") == "none":
                continue
            lo, hi = version_bounds(spec["validVersions"])
            for n in range(lo, (lo if hi is None else hi) + 1):
                out[(spec["name"], n)] = json.dumps(at_version(spec, n), sort_keys=True)
        return out

    old, new = specs(version), specs(VERSIONS[-1])
    return {key for key, text in new.items() if old.get(key) == text}


def at_version(spec: dict, v: int) -> dict:
    """What of a spec decides how Kafka's generated class reads, prints and writes it at v."""
    valid = spec["validVersions"]

    def fields(fs: list) -> list:
        return [{"name": f["name"], "type": f["type"], "default": f.get("default"),
                 "nullable": present(f.get("nullableVersions", "none"), v, valid),
                 "tag": f.get("tag"), "tagged": present(f.get("taggedVersions", "none"), v, valid),
                 "fields": fields(f.get("fields", []))}
                for f in fs  # a tagged field without versions has its taggedVersions (FieldSpec)
                if present(f.get("versions") or f["taggedVersions"], v, valid)]  # fmt: skip

    return {"flexible": present(spec.get("flexibleVersions", "none"), v, valid),
            "fields": fields(spec.get("fields", [])),
            "common": {s["name"]: fields(s.get("fields", [])) for s in spec.get("commonStructs", [])}}  # fmt: skip


def tag_lists(tree) -> list[list[int]]:
    """The tags of every struct's tagged fields in a corpus TREE, in the order they are."""
    out = []
    if isinstance(tree, dict):
        if "tagged_fields" in tree:
            out.append([t["tag"] for t in tree["tagged_fields"]])
        for v in tree.values():
            out += tag_lists(v)
    elif isinstance(tree, list):
        for v in tree:
            out += tag_lists(v)
    return out


def kafka_cannot_write(obj) -> bool:
    """Whether the tagged fields Kafka keeps as raw (unknown to it) are, somewhere, not in
    strictly ascending order below 2^31 (Kafka reads a tag into an int): Kafka's
    RawTaggedFieldWriter refuses to write them ("Invalid raw tag field list")."""
    from kafkacodec.corpus import tree

    def wrong(tags: list[int]) -> bool:
        return any(t >= 1 << 31 for t in tags) or any(b <= a for a, b in zip(tags, tags[1:]))

    return any(wrong(tags) for tags in tag_lists(tree(obj)))


@pytest.mark.parametrize("version", VERSIONS)
def test_kafkas_message_classes_read_print_and_write_every_internal_payload(
    payloads, version, tmp_path
):
    from kafkacodec.internal.kafka_json import to_json

    same = unchanged(version, tmp_path)
    cases = [c for c in payloads if same is None or (c[1], c[2]) in same]
    theirs = judge(version, tmp_path, cases)
    disagree, counts = [], {"identical": 0, "normalized": 0, "unwritable": 0}
    for (where, name, v, data, schema, obj), k in zip(cases, theirs):
        mine = to_json(obj, v)
        if "json" not in k:
            disagree.append((where, "Kafka does not read it", k))
        elif k["left"]:
            disagree.append((where, f"Kafka leaves {k['left']} bytes unread", data.hex()))
        elif k["json"] != mine:
            disagree.append((where, "values", mine, k["json"]))
        elif k.get("written") == data.hex():
            counts["identical"] += 1
        elif "write_error" in k:
            if "Invalid raw tag field list" in k["write_error"] and kafka_cannot_write(obj):
                counts["unwritable"] += 1
            else:
                disagree.append((where, "Kafka cannot write it back", k["write_error"]))
        elif to_json(_parse(schema, name, bytes.fromhex(k["written"]), v), v) == k["json"]:
            counts["normalized"] += 1  # Kafka's one encoding of the same values
        else:
            disagree.append((where, "Kafka writes other values", data.hex(), k["written"]))
    assert not disagree, "\n".join(map(repr, disagree[:20])) + f"\n... {len(disagree)} in all"
    print(version, len(cases), counts)
    assert counts["identical"] > 0.6 * len(cases)
    if same is not None:  # an older release: most of the specs are as they were
        assert len(cases) > 0.5 * len(payloads)

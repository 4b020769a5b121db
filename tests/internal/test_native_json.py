"""The internal topics' native loops (kafkacodec/internal/_native_*.c) against their Python
references: the JSON writer against kafka_json.to_json (and Kafka's own JSON of the
vectors), a Decoder's batch against its record-at-a-time call, and the fold of the newest
record per key against groups._fold_latest. On every input the native path gives the same
text or value, or gives up (None) so that Python does that record."""

from __future__ import annotations

import importlib
import json
import sys
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from internal_vectors import CODECS, ROWS, TOPIC, decode, row_id

from kafkacodec.internal import DEFAULT, groups
from kafkacodec.internal import kafka_json as K
from kafkacodec.internal.codecs import in_versions
from kafkacodec.internal.dump_format import PARSERS, Decoder, KafkaStops
from kafkacodec.records.batches import Record
from kafkacodec.runtime.errors import DecodeError

sys.path.insert(0, str(Path(__file__).parents[1] / "generator"))  # differential.py
from differential import ours_tree  # noqa: E402

pytestmark = pytest.mark.skipif(K._native is None, reason="no native writer built")


def test_the_native_loops_are_built():
    # CI has a compiler; a silent fallback there would hide a broken extension.
    assert K._native is not None and groups.fold_latest is not groups._fold_latest


PLAIN = K.NativeJson()


@pytest.mark.parametrize("r", ROWS, ids=row_id)
def test_the_writer_gives_to_json_on_every_vector(r):
    m = decode(CODECS, r)
    want = K.to_json(m.obj, m.version)
    got = PLAIN.write(m.obj, m.version)
    assert got is None or got == want
    if r["kind"] != "control":  # Kafka's own JSON of it (control records: their Version)
        assert want == r["json"]
    if got is None:  # only what the plans leave to Python: a float64, a struct in a tag
        assert _floats_or_tagged_structs(m.obj), f"{r['spec']} given up without a reason"


_SCALARS = {"int8", "int16", "uint16", "int32", "uint32", "int64", "bool", "string", "bytes", "uuid"}


def _floats_or_tagged_structs(obj) -> bool:
    """Whether obj holds a float64, or a struct-valued tagged field whose tag is there."""
    if isinstance(obj, float):
        return True
    if isinstance(obj, list):
        return any(_floats_or_tagged_structs(x) for x in obj)
    fields = getattr(type(obj), "FIELDS", None)
    if fields is None:
        return False
    message = getattr(type(obj), "MESSAGE", None) or {}
    tags = {t.tag for t in getattr(obj, "tagged_fields", None) or ()}
    if any("tag" in f and f["tag"] in tags and f["type"] not in _SCALARS
           and not f["type"].startswith("[]") for f in message.get("fields", ())):  # fmt: skip
        return True
    return any(_floats_or_tagged_structs(getattr(obj, f, None)) for f in fields)


def test_the_vectors_are_written_natively():
    """The writer is not a fallback in disguise: it writes every vector but those with a
    float64 or a struct-valued tagged field set, tagged fields included."""
    ms = [decode(CODECS, r) for r in ROWS]
    written = sum(PLAIN.write(m.obj, m.version) is not None for m in ms)
    plain = sum(not _floats_or_tagged_structs(m.obj) for m in ms)
    tagged = sum(bool(getattr(m.obj, "tagged_fields", None)) and PLAIN.write(m.obj, m.version) is not None
                 for m in ms)  # fmt: skip
    assert written == plain > len(ROWS) // 2 and tagged > 10


def _spec_cases() -> list:
    out = []
    for spec in DEFAULT.specs():
        sid = DEFAULT.schema_of(spec)
        valid = DEFAULT.top(sid).MESSAGE["validVersions"]
        lo, _, hi = valid.partition("-")
        out += [pytest.param(sid, v, id=f"{spec}-v{v}") for v in range(int(lo), int(hi or lo) + 1)
                if in_versions(valid, v)]  # fmt: skip
    return out


@pytest.mark.parametrize("schema_id, version", _spec_cases())
@settings(max_examples=4, deadline=None, suppress_health_check=list(HealthCheck))
@given(data=st.data())
def test_the_writer_gives_to_json_on_generated_structs(schema_id, version, data):
    """Every spec at every version, with values drawn by the generated strategies: strings
    of every kind (escapes, non-ASCII, not UTF-8), nulls, extremes, nested arrays."""
    strategies = importlib.import_module(f"kafkacodec.generated.strategies.{schema_id}")
    cls = DEFAULT.top(schema_id)
    obj = cls.parse_all(data.draw(getattr(strategies, schema_id)(version)).build(), version)
    try:
        want = K.to_json(obj, version)
    except K.TextError:
        assert PLAIN.write(obj, version) is None  # refused by Python: never written here
        return
    got = PLAIN.write(obj, version)
    assert got is None or got == want
    json.loads(want)


@given(st.text(), st.binary(), st.integers(-(2**63), 2**63 - 1))
@settings(max_examples=300, deadline=None)
def test_strings_bytes_and_ints_as_jackson_writes_them(text, blob, number):
    """Jackson's escapes (control characters as \\u00XX, the short forms, quote and
    backslash), non-ASCII as is, bytes as padded base64, 64-bit ints, on drawn values."""
    cls = DEFAULT.top(DEFAULT.schema_of("ConsumerProtocolSubscription"))
    obj = cls.parse_all(cls.parse_all(_subscription(text, blob), 0).build(), 0)
    obj.topics[0].value = text
    want_error = any("\udc80" <= c <= "\udcff" for c in text)
    got = PLAIN.write(obj, 0)
    if want_error:
        assert got is None
        with pytest.raises(K.TextError):
            K.to_json(obj, 0)
    else:
        assert got == K.to_json(obj, 0)
    key = DEFAULT.coordinator_key("__consumer_offsets", _commit_key("g", "t", number & 0x7FFFFFFF))
    assert PLAIN.write(key.obj, key.version) == K.to_json(key.obj, key.version)


def _subscription(topic: str, user_data: bytes) -> bytes:
    t = topic.encode("utf-8", "surrogateescape")
    return (len([t]).to_bytes(4, "big") + len(t).to_bytes(2, "big") + t
            + len(user_data).to_bytes(4, "big") + user_data)  # fmt: skip


def _commit_key(group: str, topic: str, partition: int, record_type: int = 1) -> bytes:
    g, t = group.encode(), topic.encode()
    return (record_type.to_bytes(2, "big") + len(g).to_bytes(2, "big") + g
            + len(t).to_bytes(2, "big") + t + partition.to_bytes(4, "big"))  # fmt: skip


# -- a Decoder's batch against its call


def _coordinator_records(module: str) -> list[Record]:
    """Records of a coordinator topic from the vectors: each key with each value of its
    type, tombstones, a record with no key, damaged values, an unknown record type."""
    keys = {r["recordType"]: bytes.fromhex(r["hex"]) for r in ROWS
            if r["module"] == module and r["kind"] == "key"}  # fmt: skip
    pairs = [(keys[r["recordType"]], bytes.fromhex(r["hex"])) for r in ROWS
             if r["module"] == module and r["kind"] == "value" and r["recordType"] in keys]  # fmt: skip
    pairs += [(k, None) for k in keys.values()]
    pairs += [(None, pairs[0][1]), (pairs[0][0], pairs[0][1][:-3]), (b"\x00\x63\x00\x00", b"\x00\x00")]
    return [Record(i, 1_700_000_000_000, k, v) for i, (k, v) in enumerate(pairs)]


def _metadata_records() -> list[Record]:
    """__cluster_metadata and __remote_log_metadata records from the vectors, and ones that are not: a value cut
    short, a byte changed in each framing field, a longer varint framing, no value."""
    values = [bytes.fromhex(r["hex"]) for r in ROWS if r["kind"] in ("metadata", "remote_metadata")]
    first = values[0]
    values += [first[:-1], b"\x02" + first[1:], first[:1] + b"\x7f" + first[2:],
               first[:2] + b"\x7e" + first[3:], first[:1] + bytes([first[1] | 0x80, 0]) + first[2:], None]
    return [Record(i, 1_700_000_000_000, None, v) for i, v in enumerate(values)]


def test_metadata_items_are_metadata_record_one_at_a_time():
    values = [r.value for r in _metadata_records()]
    items = CODECS.metadata_items("__cluster_metadata", values)
    assert len(items) == len(values)
    for value, item in zip(values, items):
        try:
            m = CODECS.metadata_record("__cluster_metadata", value)
        except DecodeError as err:
            assert isinstance(item, DecodeError) and str(item) == str(err)
            continue
        api_key, version, obj = item
        assert (api_key, version, ours_tree(obj)) == (m.api_key, m.version, ours_tree(m.obj))
    assert sum(isinstance(x, DecodeError) for x in items) >= 4


@pytest.mark.parametrize("name", sorted(PARSERS))
@pytest.mark.parametrize("kafka", [(4, 0), (4, 4)])
def test_a_decoders_batch_is_its_calls(name, kafka):
    module = {"offsets": "group-coordinator", "share-group-state": "share-coordinator",
              "transaction-log": "transaction-coordinator"}.get(name, "group-coordinator")  # fmt: skip
    records = _coordinator_records(module) + _metadata_records()
    d = Decoder(name, CODECS, kafka)

    def one(r):  # a record kafka-dump-log dies at (no key, for a coordinator topic): in place
        try:
            return d(r.key, r.value, r.offset)
        except KafkaStops as stop:
            return str(stop)

    assert [x if type(x) is tuple else str(x) for x in d.many(records)] == [one(r) for r in records]


def test_consumer_group_members_are_decoded_as_kafka_does():
    """OffsetsMessageParser's decoded subscription and assignment: a struct with one is
    never written natively (its plan is None), so Python's replacement prints it."""
    d = Decoder("offsets", CODECS)
    records = _coordinator_records("group-coordinator")
    many = [m for m in d.many(records) if type(m) is tuple]
    texts = [m[1] for m in many if m[1] and '"protocolType":"consumer"' in m[1]]
    members = [t for t in texts if '"members":[{' in t]
    assert members and all('"subscription":{' in t for t in members)


def test_transaction_states_by_name():
    d = Decoder("transaction-log", CODECS, (4, 4))
    texts = [m[1] for m in d.many(_coordinator_records("transaction-coordinator")) if type(m) is tuple and m[1]]
    states = [t for t in texts if '"transactionStatus":' in t]
    assert states and all('"transactionStatus":"' in t for t in states)


# -- the fold of the newest record per key


def _items(draw_keys: list[tuple[str, str, int, int]]) -> tuple[list, list[Record]]:
    records, pairs = [], []
    for i, (group, topic, partition, what) in enumerate(draw_keys):
        key = _commit_key(group, topic, partition, record_type=1)
        value = None if what == 0 else (b"\x00\x03" + i.to_bytes(8, "big") + b"\x00\x00\x00\x07"
                                         + b"\x00\x00" + i.to_bytes(8, "big"))  # fmt: skip
        if what == 2:
            value = value[:-1]  # damaged
        if what == 3:
            key = b"\x00\x02" + key[2:]  # group metadata: another record type
        # a value the Python parser read as a slice of its buffer, now and then
        records.append(Record(100 + i, 0, key, memoryview(value) if value and i % 3 == 0 else value))
        pairs.append((key, value))
    return DEFAULT.coordinator_pairs("__consumer_offsets", pairs), records


@given(st.lists(st.tuples(st.sampled_from(["g1", "g2"]), st.sampled_from(["t", "u"]),
                          st.integers(0, 2), st.integers(0, 3)), max_size=40),
       st.booleans())  # fmt: skip
@settings(max_examples=300, deadline=None)
def test_the_fold_is_the_reference_fold(keys, delete):
    items, records = _items(keys)
    attrs, types = groups._key_attrs(DEFAULT), frozenset(groups.OFFSET_COMMIT_TYPES)
    def start():
        return {"g1": {"t": {0: b"\x00\x01" + bytes(8) + b"v"}}, "g2": {"u": {2: None}}}

    native, python = start(), start()
    errors = groups.fold_latest(items, records, types, attrs, native, delete)
    assert errors == groups._fold_latest(items, records, types, attrs, python, delete)
    assert native == python
    assert list(groups._leaves(native, 3)) == list(groups._leaves(python, 3))  # the same order
    assert all(isinstance(items[i], DecodeError) for i in errors)


def test_the_fold_takes_the_topics_key_attributes_from_the_spec():
    attrs = groups._key_attrs(DEFAULT)
    key = DEFAULT.coordinator_key(TOPIC["group-coordinator"], _commit_key("g", "t", 3)).obj
    assert tuple(getattr(key, a) for a in attrs) == ("g", "t", 3)


# -- tagged fields: printed when their tag is there with a value that is not the default

_SAMPLES = {"int8": 3, "int16": 3, "uint16": 3, "int32": 7, "uint32": 7, "int64": 1 << 40,
            "string": "x\n\u00e9", "bytes": b"\x00\xff", "uuid": bytes(range(16))}  # fmt: skip


def _tagged_cases() -> list:
    out = []
    for param in _spec_cases():
        schema_id, version = param.values
        cls = DEFAULT.top(schema_id)
        fields = [f for f in cls.MESSAGE["fields"] if "tag" in f
                  and K.present(f.get("taggedVersions", "none"), version, cls.MESSAGE["validVersions"])
                  and (f["type"] in _SAMPLES or f["type"] == "bool"
                       or f["type"][2:] in ("int32", "int64", "uuid"))]  # fmt: skip
        if fields:
            out.append(pytest.param(schema_id, version, fields, id=param.id))
    return out


@pytest.mark.parametrize("schema_id, version, fields", _tagged_cases())
@settings(max_examples=6, deadline=None, suppress_health_check=list(HealthCheck))
@given(data=st.data())
def test_tagged_fields_at_their_default_are_left_out(schema_id, version, fields, data):
    """A tagged field's tag holding its default is not printed (FieldSpec's non-default
    check), and one holding another value is: modes equal, null, empty and bool."""
    strategies = importlib.import_module(f"kafkacodec.generated.strategies.{schema_id}")
    cls = DEFAULT.top(schema_id)
    module = importlib.import_module(cls.__module__)
    obj = cls.parse_all(data.draw(getattr(strategies, schema_id)(version)).build(), version)
    items = []
    for f in fields:
        choice = data.draw(st.sampled_from(["absent", "default", "other"]))
        if choice == "absent":
            continue
        d = K.default_of(f)
        if choice == "default":
            value = d
        elif f["type"] == "bool":
            value = 0 if d else 1
        elif f["type"].startswith("[]"):
            value = [_SAMPLES.get(f["type"][2:], 5)]
        else:
            value = _SAMPLES[f["type"]]
        tag = getattr(module, f"{cls.__name__}Tag{f['tag']}")(version=version, **{f["id"]: value})
        items.append(getattr(module, f"{cls.__name__}TaggedField")(version=version, tag=f["tag"], value=tag))
    obj.tagged_fields = items
    want = K.to_json(obj, version)
    got = PLAIN.write(obj, version)
    assert got is None or got == want
    if not _floats_or_tagged_structs(obj):
        assert got == want


def test_metadata_texts_are_written_natively():
    """Every metadata vector without a float64 or a struct-valued tag is written in C."""
    d = Decoder("cluster-metadata", CODECS)
    records = _metadata_records()
    items = CODECS.metadata_items("__cluster_metadata", [r.value for r in records])
    texts = K.NativeJson.metadata_texts(items, *d._metadata_tables())
    plain = [isinstance(i, tuple) and not _floats_or_tagged_structs(i[2]) for i in items]
    assert [t is not None for t in texts] == plain and sum(plain) > 10


# -- __remote_log_metadata's templates: the native programs against _render


def _remote_cases() -> list:
    out = []
    for api_key, (spec, cls) in DEFAULT.metadata_specs("__remote_log_metadata").items():
        if cls is None:
            continue
        info = DEFAULT.info(cls)
        out += [pytest.param(api_key, spec, v, id=f"{spec}-v{v}") for v in range(info.lo, info.hi + 1)]
    return out


@pytest.mark.parametrize("api_key, spec, version", _remote_cases())
@settings(max_examples=60, deadline=None, suppress_health_check=list(HealthCheck))
@given(data=st.data())
def test_the_remote_templates_write_what_render_writes(api_key, spec, version, data):
    """Every __remote_log_metadata spec at every version, drawn by the generated strategies
    (states no name is known for, empty and repeated leader epochs, tagged fields, custom
    metadata): a batch written by the native programs is the records written one at a time
    by the Python templates (_render), errors included, and the programs write most of them."""
    sid = DEFAULT.schema_of(spec)
    draw = getattr(importlib.import_module(f"kafkacodec.generated.strategies.{sid}"), sid)
    objs = data.draw(st.lists(draw(version), min_size=1, max_size=6))
    values = [bytes([1, api_key, version]) + o.build() for o in objs]
    records = [Record(i, 1_700_000_000_000, None, v) for i, v in enumerate(values)]
    d = Decoder("remote-log-metadata", DEFAULT)
    assert d.many(records) == [d(r.key, r.value, r.offset) for r in records]


def test_the_remote_templates_are_run_natively():
    """The programs are not a fallback in disguise: they write every remote vector that
    has a text, and leave to the Python templates exactly those that are refused (an
    empty leader-epoch map, a state no name is known for)."""
    from kafkacodec.internal import _native

    values = [bytes.fromhex(r["hex"]) for r in ROWS if r["kind"] == "remote_metadata"]
    d = Decoder("remote-log-metadata", DEFAULT)
    items = DEFAULT.metadata_items("__remote_log_metadata", values)
    texts = _native.template_texts(items, d._remote_programs())
    calls = [d(None, v, i) for i, v in enumerate(values)]
    assert [t is None for t in texts] == [failed for _k, _p, failed in calls]
    assert [t for t in texts if t] == [c for c in calls if not c[2]]
    assert sum(t is not None for t in texts) >= 10


def test_without_the_native_writers_a_batch_is_still_its_calls(monkeypatch):
    """Without the extension a Decoder writes a batch from the items it decoded at once (the
    Python templates, _render), the same texts as one record at a time."""
    records = _metadata_records() + [Record(i, 0, None, bytes.fromhex(r["hex"])) for i, r in enumerate(ROWS)
                                     if r["kind"] == "remote_metadata"]  # fmt: skip
    monkeypatch.setattr(K, "_native", None)
    for name in ("remote-log-metadata", "cluster-metadata"):
        d = Decoder(name, CODECS)
        assert d.many(records) == [d(r.key, r.value, r.offset) for r in records]

"""Differential tests: kafkacodec's generated parsers against the generated Construct
definitions, the official Kaitai compiler's Python output and kafka-python's reader, on
every shared vector and on Hypothesis inputs from the generated strategies (valid,
structurally invalid and mutated encodings)."""

import importlib
from pathlib import Path

import pytest
from conftest import INDEX_SCHEMAS, INTERNAL_SCHEMAS, VECTORS, batch_spec, build_run
from differential import (
    camel,
    construct_parse_all,
    kafka_python_records,
    kafkacodec_records,
    kaitai_project,
    ours_tree,
    outcome,
    project,
)
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import kafkacodec as kc
import kafkacodec.generated as G
from kafkacodec.strategies import mutate

pytestmark = [pytest.mark.slow]  # differential runs over generated inputs: CI runs them

SETTINGS = settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.too_slow])


def schema(schema_id):
    """(generated class, Construct definition, strategies module) of a schema's top type."""
    ours = importlib.import_module(f"kafkacodec.generated.{schema_id}")
    cons = importlib.import_module(f"kafkacodec.generated.construct.{schema_id}")
    strategies = importlib.import_module(f"kafkacodec.generated.strategies.{schema_id}")
    return getattr(ours, camel(schema_id)), getattr(cons, camel(schema_id)), strategies


def ours_outcome(cls, data):
    return outcome(lambda: ours_tree(cls.parse_all(data)))


def agree(schema_id, data, exact_family=True):
    """Ours and Construct give the same tree, or both fail (with the same family); a
    Construct build of what it parsed is the input again (or, recompressed, the same content)."""
    cls, cons, _ = schema(schema_id)
    mine = ours_outcome(cls, data)
    theirs = outcome(construct_parse_all, cons, data)
    assert mine[0] == theirs[0], (mine, theirs if theirs[0] == "error" else "ok")
    if mine[0] == "error":
        if exact_family:
            assert mine == theirs
        return
    assert project(theirs[1], mine[1]) == mine[1]
    rebuilt = cons.build(theirs[1])
    if rebuilt != data:  # recompressed: same content, and an encoding both read alike
        again = cls.parse_all(rebuilt)
        assert ours_tree(again, derived=False) == ours_tree(cls.parse_all(data), derived=False)
        assert project(construct_parse_all(cons, rebuilt), ours_tree(again)) == ours_tree(again)


LOG_FILES = sorted(VECTORS.rglob("*.bin")) + sorted(VECTORS.rglob("*.log"))


@pytest.mark.parametrize("path", LOG_FILES, ids=lambda p: str(p.relative_to(VECTORS)))
def test_construct_agrees_on_every_vector(path: Path):
    agree("kafka_log", path.read_bytes())


@pytest.mark.parametrize(
    "path",
    [p for p in sorted(VECTORS.rglob("*")) if p.suffix in INDEX_SCHEMAS],
    ids=lambda p: p.name,
)
def test_construct_agrees_on_index_files(path: Path):
    agree(INDEX_SCHEMAS[path.suffix], path.read_bytes())


# The log formats' schemas; those imported from Kafka's message specs (schemas/internal/)
# are tested on Kafka-written payloads and per version in tests/internal/.
LOG_MODULES = [m for m in G.MODULES if m not in INTERNAL_SCHEMAS]


@pytest.mark.parametrize("schema_id", LOG_MODULES)
@pytest.mark.parametrize("mode", ["valid", "invalid", "mutated"])
@SETTINGS
@given(data=st.data())
def test_construct_agrees_on_generated_inputs(schema_id, mode, data):
    _, _, strategies = schema(schema_id)
    blob = data.draw(getattr(strategies, f"{schema_id}_bytes")(mode))
    # Several derived fields overwritten at once: readers that check in another order
    # may name another of the faults; both must still refuse.
    agree(schema_id, blob, exact_family=mode != "invalid")


@pytest.mark.parametrize("schema_id", LOG_MODULES)
@SETTINGS
@given(data=st.data())
def test_generated_objects_round_trip(schema_id, data):
    cls, _, strategies = schema(schema_id)
    obj = data.draw(getattr(strategies, schema_id)())
    encoded = obj.build()
    again = cls.parse_all(encoded)
    assert again.build() == encoded
    assert ours_tree(again, derived=False) == ours_tree(cls.parse_all(encoded), derived=False)


# ------------------------------------------------------- the official compiler's Python


def kaitai_agrees(kaitai, schema_id, data):
    """Where ours reads, Kaitai reads the same; where Kaitai fails, ours fails. (Kaitai's
    schemas cannot check CRCs or length-of-rest, so ours may refuse what it reads; and
    it decodes strings strictly, where ours keeps invalid UTF-8 as surrogate escapes.)"""
    cls = schema(schema_id)[0]
    mine = ours_outcome(cls, data)
    module = getattr(kaitai, schema_id)
    try:
        theirs = ("ok", getattr(module, camel(schema_id)).from_bytes(data))
    except UnicodeDecodeError:
        return
    except Exception as err:  # noqa: BLE001 - any error of the official runtime
        theirs = ("error", type(err).__name__)
    if mine[0] == "ok":
        assert theirs[0] == "ok", theirs
        assert kaitai_project(theirs[1], mine[1]) == mine[1]
    if theirs[0] == "error":
        assert mine[0] == "error"


@pytest.mark.parametrize("path", LOG_FILES, ids=lambda p: str(p.relative_to(VECTORS)))
def test_kaitai_agrees_on_every_vector(kaitai, path):
    kaitai_agrees(kaitai, "kafka_log", path.read_bytes())


@pytest.mark.parametrize("schema_id", [m for m in LOG_MODULES if m != "kafka07_message"])
@pytest.mark.parametrize("mode", ["valid", "mutated"])
@settings(max_examples=60, deadline=None)
@given(data=st.data())
def test_kaitai_agrees_on_generated_inputs(kaitai, schema_id, mode, data):
    _, _, strategies = schema(schema_id)
    kaitai_agrees(kaitai, schema_id, data.draw(getattr(strategies, f"{schema_id}_bytes")(mode)))


# ------------------------------------------------------------------------ kafka-python


def kafka_python_agrees(data):
    """Where ours reads the records, kafka-python reads the same ones with every CRC
    matching; where ours finds a bad CRC (and nothing else wrong), kafka-python does too."""

    mine = outcome(kafkacodec_records, data)
    if mine[0] == "error" and mine != ("error", "checksum"):
        return  # kafka-python's reader has no error contract for damaged data
    try:
        theirs, crc_ok = kafka_python_records(data)
    except Exception:  # noqa: BLE001 - see above; a bad CRC may come with other damage
        assert mine[0] == "error"
        return
    if mine[0] == "error":
        assert not crc_ok
        return
    assert crc_ok
    # kafka-python gives a magic 0 message's missing timestamp as None, kafkacodec as -1.
    assert [(o, -1 if t is None else t, k, v, h) for o, t, k, v, h in theirs] == mine[1]


def _kafka_python_reads(spec) -> bool:
    kind, name, recs, _flag = spec
    # kafka-python decodes header keys strictly; kafkacodec keeps invalid UTF-8 (as
    # surrogate escapes), so only valid keys are compared.
    valid_keys = all(k.isascii() or _utf8(k) for r in recs for k, _ in r.headers)
    return kind != "control" and valid_keys


def _utf8(text: str) -> bool:
    try:
        text.encode("utf-8")
    except UnicodeEncodeError:
        return False
    return True


def _has_control(data) -> bool:
    try:
        return any(getattr(b, "is_control", False) for b in kc.iter_batches(data, verify_crc=False))
    except kc.KafkacodecError:
        return False


# Vectors kafka-python's reader gets wrong (kafkacodec reads them as sarama and Kafka do).
# (sarama's legacy_emptyLZ4Message_as_msgset, a wrapper of no inner message, is refused by
# kafka-python, by Kafka and by kafkacodec alike: tests/kafka/test_kafka_judges_corpus.py.)
KAFKA_PYTHON_GAPS = {
    "legacy_emptyBulkLZ4Message_as_msgset.bin": "struct.error reading a magic 0 lz4 wrapper",
}


@pytest.mark.parametrize(
    "path",
    [
        pytest.param(p, marks=pytest.mark.xfail(reason=KAFKA_PYTHON_GAPS[p.name], strict=True))
        if p.name in KAFKA_PYTHON_GAPS
        else p
        for p in LOG_FILES
    ],
    ids=lambda p: str(p.relative_to(VECTORS)),
)
def test_kafka_python_agrees_on_every_vector(path):
    data = path.read_bytes()
    if _has_control(data):
        pytest.skip("kafka-python hands control records to the application")
    kafka_python_agrees(data)


@SETTINGS
@given(st.lists(batch_spec.filter(_kafka_python_reads), min_size=1, max_size=6), st.data())
def test_kafka_python_agrees_on_generated_runs(specs, data):
    blob = build_run(specs)
    kafka_python_agrees(blob)
    kafka_python_agrees(data.draw(mutate(blob)))

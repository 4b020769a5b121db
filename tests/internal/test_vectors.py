"""Kafka-written internal-topic payloads (tests/vectors/kafka-internal: every spec and
version of Kafka's trunk of October 2024, 10 instances each, written by Kafka's own
generated classes) decoded by the codecs generated from the same specs: the spec and
version found through the framing, the JSON Kafka's JsonConverter printed, and the bytes
again from a build (byte-identical); the Construct definitions and the official Kaitai
compiler's Python output of the shipped schemas read the same (every vector the shipped
codecs, from a release's specs, read as Kafka wrote it)."""

from __future__ import annotations

import importlib
import io
import sys
from pathlib import Path

import pytest
from internal_vectors import CODECS, ROWS, TOPIC, decode, row_id, shipped_rows

sys.path.insert(0, str(Path(__file__).parents[1] / "generator"))  # differential.py
from differential import camel, construct_parse_all, kaitai_project, ours_tree, project  # noqa: E402

from kafkacodec.internal.kafka_json import to_json


def test_the_vectors_cover_every_kind():
    assert len(ROWS) == 980
    kinds = {r["kind"] for r in ROWS}
    assert kinds == {"key", "value", "metadata", "remote_metadata", "control", "consumer_protocol"}


@pytest.mark.parametrize("r", ROWS, ids=row_id)
def test_decodes_as_kafka_wrote_it(r):
    m = decode(CODECS, r)
    assert (m.spec, m.version) == (r["spec"], r["version"])
    assert to_json(m.obj, m.version) == r["json"]
    data = bytes.fromhex(r["hex"])
    assert data[: r["headerBytes"]] + m.obj.build() == data


def test_every_spec_of_the_codecs_is_in_the_vectors():
    """The vectors hold every spec the framings name but the producer-state snapshot (a
    file, not a topic's record: tests/internal/test_state_files.py)."""
    assert set(CODECS.specs()) == {r["spec"] for r in ROWS} | {"ProducerSnapshot"}


# ---------------------------------------------------------------- other readers, same schemas


def framing(r: dict) -> tuple[str, tuple]:
    """The framing schema of a vector and its parameters."""
    from kafkacodec.internal.topics import TOPICS

    if r["kind"] in ("key", "value"):
        return f"{TOPICS[TOPIC[r['module']]].framing}_{r['kind']}", (
            (r["recordType"],) if r["kind"] == "value" else ()
        )
    if r["kind"] in ("metadata", "remote_metadata"):
        name = "__cluster_metadata" if r["kind"] == "metadata" else "__remote_log_metadata"
        return TOPICS[name].framing, ()
    if r["kind"] == "control":
        return "kraft_control_value", (r["controlType"], r["version"])
    return f"{'consumer_protocol_' + r['spec'][len('ConsumerProtocol') :].lower()}_framed", ()


@pytest.mark.slow
@pytest.mark.parametrize("r", shipped_rows(), ids=row_id)
def test_construct_reads_and_writes_the_same(r):
    fid, params = framing(r)
    ours_cls = getattr(importlib.import_module(f"kafkacodec.generated.{fid}"), camel(fid))
    cons = getattr(importlib.import_module(f"kafkacodec.generated.construct.{fid}"), camel(fid))
    data = bytes.fromhex(r["hex"])
    definition = cons(*params) if params else cons
    mine = ours_tree(ours_cls.parse_all(data, *params))
    theirs = construct_parse_all(definition, data)
    assert project(theirs, mine) == mine
    assert definition.build(theirs) == data


@pytest.mark.crosslang
@pytest.mark.parametrize("r", shipped_rows(), ids=row_id)
def test_official_compiler_python_reads_the_same(kaitai, r):
    from kaitaistruct import KaitaiStream

    fid, params = framing(r)
    data = bytes.fromhex(r["hex"])
    ours_cls = getattr(importlib.import_module(f"kafkacodec.generated.{fid}"), camel(fid))
    mine = ours_tree(ours_cls.parse_all(data, *params))
    module = getattr(kaitai, fid)
    theirs = getattr(module, camel(fid))(*params, KaitaiStream(io.BytesIO(data)))
    assert kaitai_project(theirs, mine) == mine


def test_a_struct_alone_at_a_known_version():
    r = next(r for r in ROWS if r["spec"] == "OffsetCommitValue" and r["version"] == 4)
    m = CODECS.struct("OffsetCommitValue", bytes.fromhex(r["hex"])[2:], 4)
    assert (m.spec, m.version, to_json(m.obj, 4)) == ("OffsetCommitValue", 4, r["json"])

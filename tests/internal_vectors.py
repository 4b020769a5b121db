"""The internal-topic vectors (tests/vectors/kafka-internal/records.jsonl) and how to decode
one with a set of codecs, for the tests of this folder."""

from __future__ import annotations

import json

from conftest import KAFKA_INTERNAL, label_codecs

ROWS = [json.loads(line) for line in KAFKA_INTERNAL.read_text().splitlines()]
#: The codecs of the specs Kafka wrote the vectors with (conftest.VECTORS_LABEL): the
#: shipped ones follow a release, where some of these records read otherwise.
CODECS = label_codecs()
#: The coordinator topic of each Kafka module that writes coordinator records.
TOPIC = {
    "group-coordinator": "__consumer_offsets",
    "share-coordinator": "__share_group_state",
    "transaction-coordinator": "__transaction_state",
}


def row_id(r: dict) -> str:
    return f"{r['spec']}-v{r['version']}-{r['kind']}-{r['instance']}"


def decode(codecs, r: dict):
    """The Message a vector holds, read through its framing as Kafka wrote it."""
    data = bytes.fromhex(r["hex"])
    kind = r["kind"]
    if kind == "key":
        return codecs.coordinator_key(TOPIC[r["module"]], data)
    if kind == "value":
        return codecs.coordinator_value(TOPIC[r["module"]], r["recordType"], data)
    if kind in ("metadata", "remote_metadata"):
        topic = "__cluster_metadata" if kind == "metadata" else "__remote_log_metadata"
        return codecs.metadata_record(topic, data)
    if kind == "control":
        return codecs.control_record(r["controlType"], data, r["version"])
    assert kind == "consumer_protocol"
    return codecs.versioned(r["spec"], data)


_SHIPPED: list = []


def shipped_rows() -> list[dict]:
    """The vectors the shipped codecs (a release's specs) read as Kafka wrote them: Kafka's
    JSON, the same bytes built back (the spec's name and version may be the release's own:
    from Kafka 4.0 a key is read at version 0, its record type its apiKey, and record type
    0's key is LegacyOffsetCommitKey). The others are records whose bytes changed between
    the vectors' trunk build and the release (`specs diff` says which; tests/kafka/
    test_kafka_specs.py checks that these are exactly those)."""
    if not _SHIPPED:
        from kafkacodec.internal import DEFAULT
        from kafkacodec.internal.kafka_json import to_json
        from kafkacodec.runtime.errors import DecodeError

        for r in ROWS:
            data = bytes.fromhex(r["hex"])
            try:
                m = decode(DEFAULT, r)
                same = (to_json(m.obj, m.version) == r["json"]
                        and data[: r["headerBytes"]] + m.obj.build() == data)  # fmt: skip
            except DecodeError:
                same = False
            if same:
                _SHIPPED.append(r)
    return _SHIPPED

"""The internal-topic vectors (tests/vectors/kafka-internal/records.jsonl) and how to decode
one with a set of codecs, for the tests of this folder."""

from __future__ import annotations

import json

from conftest import KAFKA_INTERNAL

ROWS = [json.loads(line) for line in KAFKA_INTERNAL.read_text().splitlines()]
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

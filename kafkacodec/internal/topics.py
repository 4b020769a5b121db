"""Kafka's internal topics: how each frames its records, and which folder of Kafka's source
tree holds the specs of their structs. One table, read by the importer (which writes a
framing schema per topic) and by the decoders (which find the framing schema by topic).
"""

from __future__ import annotations

from dataclasses import dataclass

__all__ = [
    "Topic", "TOPICS", "FRAMINGS", "COORDINATOR_TOPICS", "METADATA_TOPICS", "UNLISTED", "topic_of",
    "TAG_UNREAD", "TAG_VERSION_CHECK",
]  # fmt: skip


@dataclass(frozen=True)
class Topic:
    name: str  # __consumer_offsets
    framing: str  # the framing schema's id, or the stem of its _key / _value pair
    kind: str  # "coordinator" (key: int16 record type + struct; value: int16 version +
    #            struct) or "metadata" (uvarint frame version, apiKey, version + struct)
    folders: tuple[str, ...]  # the folders of Kafka's source tree holding the specs
    #: Whether Admin.listTopics lists it by default: not the internal topics (Kafka's
    #: Topic.isInternal: INTERNAL_TOPICS), nor the KRaft metadata log, which is no topic of
    #: the metadata image. A consumer's pattern subscription never takes those.
    listed: bool = False


TOPICS = {
    t.name: t
    for t in (
        Topic("__consumer_offsets", "consumer_offsets", "coordinator", ("group-coordinator",)),
        Topic("__share_group_state", "share_group_state", "coordinator", ("share-coordinator",)),
        # core/ until Kafka 3.9 moved them
        Topic(
            "__transaction_state",
            "transaction_state",
            "coordinator",
            ("transaction-coordinator", "core"),
        ),  # fmt: skip
        Topic("__cluster_metadata", "cluster_metadata_record", "metadata", ("metadata",)),
        Topic("__remote_log_metadata", "remote_log_metadata_record", "metadata", ("storage",), listed=True),
    )
}
COORDINATOR_TOPICS = {n: t for n, t in TOPICS.items() if t.kind == "coordinator"}
METADATA_TOPICS = {n: t for n, t in TOPICS.items() if t.kind == "metadata"}
#: The topics Admin.listTopics leaves out (Topic.listed).
UNLISTED = frozenset(n for n, t in TOPICS.items() if not t.listed)

#: Every framing schema `kafkacodec specs import` writes.
FRAMINGS = (
    *(f"{t.framing}_{kind}" for t in COORDINATOR_TOPICS.values() for kind in ("key", "value")),
    *(t.framing for t in METADATA_TOPICS.values()),
    "kraft_control_value",  # KRaft control records (__cluster_metadata, snapshots)
    "consumer_protocol_subscription_framed",  # inside GroupMetadataValue members
    "consumer_protocol_assignment_framed",
    "producer_snapshot_framed",  # producer-state .snapshot files
)

#: The checks the importer writes into the type of each tagged field (read by the decoders,
#: which report a failed one in Kafka's words): `unread`, the bytes after the field's value
#: inside its size (none); `tag_in_version`, a zero-size field first where the tag is known
#: only in some flexible versions, whose `valid` fails at the others.
TAG_UNREAD = "unread"
TAG_VERSION_CHECK = "tag_in_version"


def topic_of(directory_name: str) -> Topic | None:
    """The internal topic of a partition directory (`__consumer_offsets-7` ->
    __consumer_offsets), None for any other topic."""
    name, _, partition = directory_name.rpartition("-")
    return TOPICS.get(name) if partition.isdigit() else None

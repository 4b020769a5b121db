"""Kafka's internal topics and state files, read with the codecs generated from Kafka's
own JSON message specs (schemas/internal/, written by `kafkacodec specs import`).

- codecs: find and decode a topic's records (coordinator records, framed metadata
  records, KRaft control records, the consumer protocol) with version checks.
- kafka_json: the JSON Kafka's generated JsonConverter prints for a struct.
- topics: how each internal topic frames its records.
"""

from .codecs import DEFAULT, Codecs, Message, UnknownRecordTypeError, UnknownVersionError
from .topics import TOPICS, Topic, topic_of

__all__ = [
    "Codecs", "DEFAULT", "Message", "UnknownRecordTypeError", "UnknownVersionError", "TOPICS",
    "Topic", "topic_of",
]  # fmt: skip

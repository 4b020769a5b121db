"""What kafka-dump-log prints for the records of Kafka's internal topics, with each of its
decoder flags (Kafka's DumpLogSegments: OffsetsMessageParser, TransactionLogMessageParser,
ClusterMetadataLogMessageParser, RemoteMetadataLogMessageParser, and the share-group-state
parser), and for KRaft control records.

Each parser returns (key, payload, failed): key and payload None when kafka-dump-log
prints nothing for them; failed when the record could not be decoded (the text then says
why, in Kafka's words where Kafka has them: "Error at offset 7, skipping. ...").
"""

from __future__ import annotations

import functools
import operator
import re
import sys
from collections.abc import Callable, Sequence
from typing import Any

from kafkacodec.runtime.errors import CorruptRecordError, KafkacodecError

from .codecs import DEFAULT, Codecs, Message, UnknownRecordTypeError, UnknownVersionError
from .java_read import JavaReadError, java_read, java_uvarint, java_versions
from .kafka_json import NativeJson, access, java_text, to_json, uuid_text

__all__ = [
    "PARSERS", "Decoder", "get_many", "offsets_parser", "share_group_state_parser", "transaction_log_parser",
    "cluster_metadata_parser", "remote_log_metadata_parser", "control_text", "control_refused", "get",
    "TRANSACTION_STATES", "scala_hash_set_order", "NEWEST", "release", "READ_BOUNDS", "Release",
    "TRANSACTION_JSON_SINCE", "TRANSACTION_STATE_NAMES_SINCE", "LEADER_CHANGE_SINCE",
    "SNAPSHOT_LINE_TRIMMED_SINCE", "RELEASES", "OFFSETS_TYPES_39",
]  # fmt: skip

Parsed = tuple[str | None, str | None, bool]

# -- what changed in kafka-dump-log's text, release by release: each found, and checked, by
# running that release's DumpLogSegments over the same files (tests/kafka/
# test_kafka_dump_releases.py sweeps every release below; test_kafka_writes.py the
# broker-written log.dirs of the oldest and the newest)

#: The releases `kafkacodec dump --kafka-version` takes, by (major, minor), with their patch
#: releases: every one Maven Central serves of the last 3.x and of 4.x, each checked.
RELEASES: dict[tuple[int, int], tuple[str, ...]] = {
    (3, 9): ("3.9.1", "3.9.2"),
    (4, 0): ("4.0.0", "4.0.1", "4.0.2"),
    (4, 1): ("4.1.0", "4.1.1", "4.1.2"),
    (4, 2): ("4.2.0", "4.2.1", "4.2.2"),
    (4, 3): ("4.3.0", "4.3.1"),
    (4, 4): ("4.4.0",),
}
#: A release as (major, minor, patch): what `--kafka-version` gives the decoders; compared
#: with (major, minor) pairs below (4.1.0 and later is `>= (4, 1)`).
Release = tuple[int, ...]
#: The newest release the tests run: `kafkacodec dump --kafka-version`'s default.
NEWEST: Release = max(tuple(map(int, p.split("."))) for ps in RELEASES.values() for p in ps)
#: The releases whose generated readers (MessageDataGenerator) bound the counts they read:
#: a collection over 1,000,000 items, and a tagged-field count that is negative, more than
#: the bytes left or over 10,000, refused in their own words (java_read's `bounded`).
#: Backported to 4.2.2; 4.3.0 and 4.3.1, released before, have not.
READ_BOUNDS = frozenset({(4, 2, 2), (4, 4, 0)})
#: A coordinator value of a version its spec does not have is refused
#: (UnknownRecordVersionException); 3.9's CoordinatorRecordSerde reads it at that version.
VALUE_VERSION_CHECKED_SINCE = (4, 0)
#: Kafka's record classes in org.apache.kafka.common.record.internal (a null pointer's
#: message names the class).
RECORD_INTERNAL_SINCE = (4, 3)
#: EndTransactionMarker read by a generated class (EndTxnMarker): no size check of its own,
#: a short value is the ByteBuffer's BufferUnderflowException.
END_TXN_MARKER_GENERATED_SINCE = (4, 1)
#: __transaction_state records as JSON ({"type":..,"data":..} keys, {"version":..,"data":..}
#: values, as the offsets decoder prints its own), no longer TransactionLog's text.
TRANSACTION_JSON_SINCE = (4, 1)
#: A transaction's state by its TransactionState name in that JSON ("Ongoing"; its id before).
TRANSACTION_STATE_NAMES_SINCE = (4, 4)
#: __share_group_state values as {"version":..,"data":..} (ShareGroupStateMessageParser
#: became a CoordinatorRecordMessageParser), no longer {"type":..,"data":..}.
SHARE_STATE_VERSION_SINCE = (4, 1)
#: LeaderChange control records decoded (`LeaderChange: {...}`), no longer
#: `controlType: LEADER_CHANGE(2)`.
LEADER_CHANGE_SINCE = (4, 1)
#: A producer snapshot entry without batch metadata ends without a space (the tool's Java
#: port, org.apache.kafka.tools.DumpLogSegments).
SNAPSHOT_LINE_TRIMMED_SINCE = (4, 3)
#: The record types 3.9's OffsetsMessageParser prints (the keys it matches: the classic
#: groups' and KIP-848 consumer groups'); any other is an unknown record type to it.
OFFSETS_TYPES_39 = frozenset(range(9))


def release(text: str) -> Release:
    """A release as (major, minor, patch) from "4.1.0", or from "4.1" (its newest patch
    release); ValueError for anything else, and for a release whose text no test has
    checked (RELEASES)."""
    parts = text.strip().split(".")
    if len(parts) not in (2, 3) or not all(p.isdigit() for p in parts):
        raise ValueError(f"{text!r} is not a Kafka release (such as 4.1)")
    key = (int(parts[0]), int(parts[1]))
    known = RELEASES.get(key)
    if known is None or (len(parts) == 3 and ".".join(map(str, (*key, int(parts[2])))) not in known):
        names = ", ".join(f"{a}.{b}" for a, b in RELEASES)
        patch = f" (its releases: {', '.join(known)})" if known else ""
        raise ValueError(f"no Kafka release {text.strip()} whose kafka-dump-log text kafkacodec knows{patch}; "
                         f"known: {names}")  # fmt: skip
    return (*key, int(parts[2]) if len(parts) == 3 else int(known[-1].split(".")[2]))


#: The native writer's plans for structs printed as to_json prints them, with nothing replaced.
_PLAIN_JSON = NativeJson()


def _json(obj, version: int) -> str:
    """to_json(obj, version), by the native writer where it applies."""
    text = _PLAIN_JSON.write(obj, version)
    return to_json(obj, version) if text is None else text


#: How each field of a class at a version is read, by Kafka name: (attribute,) for a stored
#: field, (attribute, tag, default) for a tagged one, () for one not in the version.
_ACCESS: dict[type, dict[int, dict[str, tuple]]] = {}


def _table(obj) -> dict[str, tuple]:
    cls = type(obj)
    version = getattr(obj, "version", 0)
    by_version = _ACCESS.get(cls)
    table = None if by_version is None else by_version.get(version)
    return _access(cls, version) if table is None else table


def get(obj, name: str):
    """A field of a decoded struct by its Kafka name (tagged fields included: the value of
    its tag, else its default); None when the field is not in the struct's version (as
    kafka_json.field_value reads it)."""
    how = _table(obj)[name]
    if len(how) == 1:
        return getattr(obj, how[0])
    if not how:
        return None
    value = [] if type(how[2]) is list else how[2]  # (a list of its own to each caller)
    for t in getattr(obj, "tagged_fields", None) or ():  # the last of a tag wins
        if t.tag == how[1] and not isinstance(t.value, (bytes, bytearray, memoryview)):
            value = getattr(t.value, how[0])
    return value


def get_many(obj, names: tuple[str, ...]) -> Sequence:
    """Fields of a decoded struct by their Kafka names, as get reads each: one reader per
    class, version and names, made once (operator.attrgetter when every one is a stored
    field of the version; else its tagged fields looked at once)."""
    cls = type(obj)
    key = (cls, getattr(obj, "version", 0), names)
    reader = _READERS.get(key)
    if reader is None:
        reader = _reader(*key)
    return reader(obj)


#: get_many's readers, by (class, version, names).
_READERS: dict[tuple, Callable[[Any], Sequence]] = {}


def _reader(cls, version: int, names: tuple[str, ...]) -> Callable[[Any], Sequence]:
    hows = [_access(cls, version)[name] for name in names]
    reader: Callable[[Any], Sequence]
    if all(len(how) == 1 for how in hows):
        ids = [how[0] for how in hows]
        reader = operator.attrgetter(*ids) if len(ids) > 1 else (lambda obj: (getattr(obj, ids[0]),))
    else:

        def reader(obj) -> list:
            tags = {t.tag: t.value for t in getattr(obj, "tagged_fields", None) or ()
                    if not isinstance(t.value, (bytes, bytearray, memoryview))}  # fmt: skip
            out = []
            for how in hows:
                if len(how) == 1:
                    out.append(getattr(obj, how[0]))
                elif not how:
                    out.append(None)
                else:
                    t = tags.get(how[1])
                    out.append(([] if type(how[2]) is list else how[2]) if t is None else getattr(t, how[0]))
            return out

    if len(_READERS) < 100_000:  # versions come from data: keep the cache bounded
        _READERS[(cls, version, names)] = reader
    return reader


def _access(cls, version: int) -> dict[str, tuple]:
    # field_value's rule; at a version outside validVersions, as Kafka's generated code reads
    # it (a GroupMetadataValue at version -1 has its protocolType: VersionConditional)
    valid = cls.MESSAGE.get("validVersions")
    table = {f["name"]: access(f, version, valid) for f in cls.MESSAGE["fields"]}
    by_version = _ACCESS.setdefault(cls, {})
    if len(by_version) < 1000:  # versions come from data: keep the cache bounded
        by_version[version] = table
    return table


# -- __consumer_offsets (OffsetsMessageParser) and __share_group_state


def _consumer_protocol(codecs: Codecs, spec: str, kafka: Release) -> Callable:
    """A GroupMetadataValue member's subscription or assignment as its decoded
    ConsumerProtocol JSON, read as OffsetsMessageParser's replaceField reads it: an int16
    version, then the struct at that version (any: the generated reader does not check),
    what follows it unread; None (keep the base64, as Kafka does) where it throws."""
    cls = codecs.message_class(spec)

    def replace(value) -> str | None:
        if value is None or cls is None or len(value) < 2:
            return None
        data = bytes(value)
        version = _int16(data)
        try:
            return to_json(kafka_reads(codecs, cls, data, 2, version, kafka)[0], version)
        except KafkacodecError:  # (JavaReadError among them)
            return None

    return replace


#: The GroupMetadataValue member fields OffsetsMessageParser prints decoded, and the spec of
#: each, for a group whose protocolType is "consumer".
_CONSUMER_PROTOCOL_FIELDS = {
    ("MemberMetadata", "subscription"): "ConsumerProtocolSubscription",
    ("MemberMetadata", "assignment"): "ConsumerProtocolAssignment",
}


def _consumer_protocols(codecs: Codecs, v, kafka: Release = NEWEST) -> dict:
    """A consumer group's members' subscription and assignment decoded (OffsetsMessageParser)."""
    if v.spec != "GroupMetadataValue" or get(v.obj, "protocolType") != "consumer":
        return {}
    return {where: _consumer_protocol(codecs, spec, kafka) for where, spec in _CONSUMER_PROTOCOL_FIELDS.items()}


#: The field 4.1's TransactionLogMessageParser prints by its TransactionState name.
_TRANSACTION_STATUS = ("TransactionLogValue", "transactionStatus")


def _transaction_state_names(codecs: Codecs, v, kafka: Release = NEWEST) -> dict:
    """A transaction's state by its TransactionState name (4.4's TransactionLogMessageParser)."""
    return {_TRANSACTION_STATUS: lambda status: f'"{TRANSACTION_STATES.get(status, status)}"'}


class KafkaStops(KafkacodecError):
    """Here kafka-dump-log dies: an exception none of its parsers catches leaves the JVM,
    after the record's line so far (`partial`, set by the caller that printed it). `java`
    is the exception's message (what the JVM prints after its class name)."""

    def __init__(self, java: str, exception: str = "java.lang.RuntimeException"):
        super().__init__(f"{exception}: {java}" if java else exception)  # (as the JVM prints it)
        self.java, self.exception = java, exception
        self.partial = ""  # the record's line so far, as kafka-dump-log printed it
        self.where: tuple[str, int] | None = None  # (file, record offset)


#: What each coordinator decoder calls itself when a record has no key, before 4.1.
_MISSING_KEY_DECODER = {"__consumer_offsets": "offset topic decoder",
                        "__share_group_state": "share group state topic decoder"}  # fmt: skip


def _missing_key(topic: str, offset: int, kafka: Release) -> KafkaStops:
    """The parser's RuntimeException for a record with no key: it leaves kafka-dump-log."""
    what = "the specified decoder" if kafka >= (4, 1) else f"{_MISSING_KEY_DECODER[topic]}"
    return KafkaStops(f"Failed to decode message at offset {offset} using {what} (message had a missing key)")


def _int16(data) -> int:
    return ((data[0] << 8) | data[1]) - ((data[0] & 0x80) << 9)


def kafka_reads(codecs: Codecs, cls, data: bytes, pos: int, version: int, kafka: Release) -> tuple[Any, int]:
    """The struct Kafka's generated reader makes of data[pos:] at version (any version:
    Kafka's readers read whatever they are asked to), and where it stops: kafkacodec's
    reading where that takes every byte, else what Kafka read (java_read's bytes as Kafka
    took them, read by kafkacodec: a tagged field's lying size, a length Kafka takes as
    null, the bytes Kafka leaves after the struct). JavaReadError, with Kafka's message,
    where Kafka's reader throws."""
    low, high = java_versions(cls.MESSAGE.get("validVersions", "0+"))
    if low <= version <= high:  # (outside, a nested struct's reader may refuse the version)
        try:
            return codecs.parse_struct(cls, data, pos, len(data), version, any_version=True), len(data)
        except KafkacodecError:
            pass
    end, taken = java_read(cls, data, pos, len(data), version, kafka in READ_BOUNDS)
    try:
        return codecs.parse_struct(cls, taken, 0, len(taken), version, any_version=True), end
    except KafkacodecError as err:  # what this emulation of Kafka's reader does not cover
        raise CorruptRecordError(f"Kafka reads this {cls.MESSAGE.get('spec', cls.__name__)} version {version}, "
                                 f"and kafkacodec cannot read what it read: {err}", pos) from None


def _kafka_serde(codecs: Codecs, topic: str, key: bytes, value: bytes | None, kafka: Release) -> tuple | str:
    """CoordinatorRecordSerde.deserialize as Kafka runs it, for a record kafkacodec's
    stricter reading refused (java_read says how Kafka's generated readers read): the
    RuntimeException's message where Kafka throws, else the key and value Messages read
    as far as Kafka reads them (the bytes Kafka leaves unread after a struct ignored)."""
    if len(key) < 2:
        return "Could not read version from key's buffer."
    record_type = _int16(key)
    k = codecs.coordinator_structs(topic, "key").get(record_type)
    if k is None:
        raise UnknownRecordTypeError(f"Unknown record type {record_type}", 0)
    try:
        key_obj = kafka_reads(codecs, k.cls, key, 2, record_type, kafka)[0]  # (read at the record type)
    except JavaReadError as why:
        return f"Could not read record with version {record_type} from key's buffer due to: {why.java}."
    key_msg = Message(k.spec, k.key_version, key_obj, record_type)
    if value is None:
        return key_msg, None
    if len(value) < 2:
        return "Could not read version from value's buffer."
    v = codecs.coordinator_structs(topic, "value").get(record_type)
    if v is None:
        raise UnknownRecordTypeError(f"Unknown record type {record_type}", 0)
    version = _int16(value)
    lo, hi = codecs.info(v.cls)[1:]
    if not lo <= version <= hi and kafka >= VALUE_VERSION_CHECKED_SINCE:  # UnknownRecordVersionException
        return f"Found an unknown record version {version} for {record_type} type"
    try:
        value_obj = kafka_reads(codecs, v.cls, value, 2, version, kafka)[0]
    except JavaReadError as why:
        return f"Could not read record with version {version} from value's buffer due to: {why.java}."
    return key_msg, Message(v.spec, version, value_obj, record_type)


def _coordinator_parser(topic: str, value_word: str,
                        replacing: Callable[[Codecs, Any, Release], dict] | None = None):  # fmt: skip
    """A coordinator topic's parser (Kafka's CoordinatorRecordMessageParser): keys and
    values as JSON; `replacing(codecs, value, release)` gives the fields printed otherwise
    (kafka_json.to_json's replace). A record kafkacodec's reading refuses is read again
    as Kafka reads it (_kafka_serde), so that the text is Kafka's either way."""

    def text(k: Message, v: Message | None, codecs: Codecs, kafka: Release) -> tuple[str, str]:
        # Jackson's ObjectNode: {"type":"<record type>","data":{...}} (numbers as text)
        key_text = f'{{"type":"{k.record_type}","data":{to_json(k.obj, k.version)}}}'
        if v is None:
            return key_text, "<DELETE>"
        data = to_json(v.obj, v.version, replacing(codecs, v, kafka) if replacing else None)
        return key_text, f'{{"{value_word}":"{v.version}","data":{data}}}'

    def parse(key, value, offset: int, codecs: Codecs = DEFAULT, kafka: Release = NEWEST) -> Parsed:
        if key is None:
            raise _missing_key(topic, offset, kafka)
        k = None
        try:
            try:
                k = codecs.coordinator_key(topic, bytes(key))
                v = None if value is None else codecs.coordinator_value(topic, k.record_type, bytes(value))
            except UnknownRecordTypeError:
                raise
            except KafkacodecError as err:
                if isinstance(err, UnknownVersionError) and kafka >= VALUE_VERSION_CHECKED_SINCE:
                    raise
                got = _kafka_serde(codecs, topic, bytes(key), None if value is None else bytes(value), kafka)
                if isinstance(got, str):
                    return f"Error at offset {offset}, skipping. {got}", None, True
                k, v = got
            key_text, value_text = text(k, v, codecs, kafka)
            return key_text, value_text, False
        except UnknownRecordTypeError as err:
            if err.message.startswith("Unknown record type"):
                rtype = err.message.split()[-1]
                return f"Unknown record type {rtype} at offset {offset}, skipping.", None, True
            return f"Error at offset {offset}, skipping. {err.message}", None, True
        except UnknownVersionError as err:
            if err.version is not None and k is not None:  # the value's (CoordinatorRecordSerde)
                return (f"Error at offset {offset}, skipping. Found an unknown record version "
                        f"{err.version} for {k.record_type} type", None, True)  # fmt: skip
            return f"Error at offset {offset}, skipping. {err}", None, True
        except KafkacodecError as err:
            return f"Error at offset {offset}, skipping. {err}", None, True

    return parse


_offsets_json = _coordinator_parser("__consumer_offsets", "version", _consumer_protocols)


def offsets_parser(key, value, offset: int, codecs: Codecs = DEFAULT,
                   kafka: Release = NEWEST) -> Parsed:  # fmt: skip
    """Kafka's OffsetsMessageParser: keys and values as JSON, a consumer group's members'
    protocol decoded; before 4.0, a record of a type it has no key class for
    (OFFSETS_TYPES_39) is an unknown record type."""
    if kafka < (4, 0) and key is not None and len(key) >= 2:
        record_type = int.from_bytes(bytes(key[:2]), "big", signed=True)
        if record_type not in OFFSETS_TYPES_39:
            return f"Unknown record type {record_type} at offset {offset}, skipping.", None, True
    return _offsets_json(key, value, offset, codecs, kafka)


_share_state_json = _coordinator_parser("__share_group_state", "version")
_share_state_json_40 = _coordinator_parser("__share_group_state", "type")


def share_group_state_parser(key, value, offset: int, codecs: Codecs = DEFAULT,
                             kafka: Release = NEWEST) -> Parsed:  # fmt: skip
    """Kafka's ShareGroupStateMessageParser: keys and values as JSON, a value's version under
    "version" from 4.1 on (a CoordinatorRecordMessageParser, as the offsets decoder's), under
    "type" in 4.0."""
    parse = _share_state_json if kafka >= SHARE_STATE_VERSION_SINCE else _share_state_json_40
    return parse(key, value, offset, codecs, kafka)


#: 4.4's TransactionLogMessageParser: the records as JSON, the state by its name; 4.1's to
#: 4.3's: the records as JSON, the state by its id.
_transaction_json = _coordinator_parser("__transaction_state", "version", _transaction_state_names)
_transaction_json_41 = _coordinator_parser("__transaction_state", "version")


# -- __transaction_state (TransactionLogMessageParser: TransactionLog.formatRecordKeyAndValue)

#: Kafka's TransactionState names, by id.
TRANSACTION_STATES = {
    0: "Empty", 1: "Ongoing", 2: "PrepareCommit", 3: "PrepareAbort", 4: "CompleteCommit",
    5: "CompleteAbort", 6: "Dead", 7: "PrepareEpochFence",
}  # fmt: skip


def _java_string_hash(text: str) -> int:
    """Java's String.hashCode, over UTF-16 code units (unsigned 32 bits)."""
    h = 0
    data = text.encode("utf-16-be", "surrogatepass")
    for i in range(0, len(data), 2):
        h = (31 * h + ((data[i] << 8) | data[i + 1])) & 0xFFFFFFFF
    return h


def _int32(v: int) -> int:
    v &= 0xFFFFFFFF
    return v - (1 << 32) if v & 0x80000000 else v


def scala_hash_set_order(partitions: list[tuple[str, int]]) -> list[tuple[str, int]]:
    """Topic partitions in the order Scala 2.13's mutable.HashSet iterates them (Kafka's
    TransactionMetadata.topicPartitions): by bucket of the improved hash of Java's
    TopicPartition.hashCode (31 * (31 + partition) + topic.hashCode()), then by that hash,
    in a table of 16 buckets doubled whenever it is three quarters full. Duplicates once."""
    unique = list(dict.fromkeys(partitions))
    size = 16
    while len(unique) >= int(size * 0.75):
        size *= 2

    def key(tp):
        h = (31 * (31 + tp[1]) + _java_string_hash(tp[0])) & 0xFFFFFFFF
        improved = h ^ (h >> 16)
        return (improved & (size - 1), _int32(improved))

    return sorted(unique, key=key)


def kafka_struct(codecs: Codecs, cls, data, pos: int, version: int, kafka: Release):
    """A struct as Kafka's generated reader reads data[pos:] at version (the bytes it
    leaves after the struct ignored): kafkacodec's reading where it agrees, Kafka's
    (java_read) where kafkacodec's stricter reading refuses; KafkaStops with Kafka's
    message where Kafka's reader throws. (Callers whose Kafka catches nothing.)"""
    try:
        return kafka_reads(codecs, cls, data, pos, version, kafka)[0]
    except JavaReadError as why:
        raise KafkaStops(why.java) from None


def _underflow() -> KafkaStops:
    return KafkaStops("", "java.nio.BufferUnderflowException")


#: The client transaction versions Kafka 4.0's TransactionVersion.fromFeatureLevel knows.
_TRANSACTION_VERSIONS_40 = (0, 1, 2)


def _transaction_framing(codecs: Codecs, part: str, data: bytes) -> tuple[Any, int, bool]:
    """TransactionLog's read of a key's or value's version (an int16; BufferUnderflow on
    fewer bytes): (its struct's codec entry, the version, whether the struct has it)."""
    if len(data) < 2:
        raise _underflow()
    version = _int16(data)
    entry = codecs.coordinator_structs("__transaction_state", part)[0]
    lo, hi = codecs.info(entry.cls)[1:]
    return entry, version, lo <= version <= hi


def transaction_log_parser(key, value, offset: int, codecs: Codecs = DEFAULT,
                           kafka: Release = NEWEST) -> Parsed:  # fmt: skip
    """Kafka's TransactionLogMessageParser: from 4.1 on the records as JSON, as the offsets
    decoder prints them; before, TransactionLog.formatRecordKeyAndValue's text, whose
    parser catches nothing: where it throws, kafka-dump-log stops (KafkaStops)."""
    if kafka >= TRANSACTION_STATE_NAMES_SINCE:
        return _transaction_json(key, value, offset, codecs, kafka)
    if kafka >= TRANSACTION_JSON_SINCE:
        return _transaction_json_41(key, value, offset, codecs, kafka)
    if key is None:  # readTxnRecordKey(null)
        raise KafkaStops('Cannot invoke "java.nio.ByteBuffer.getShort()" because "buffer" is null',
                         "java.lang.NullPointerException")  # fmt: skip
    key = bytes(key)
    k, key_version, known = _transaction_framing(codecs, "key", key)  # TransactionLogKey
    if not known:  # UnknownKey: its version, and no value read
        return f"unknown::version={key_version}", None, False
    key_obj = kafka_struct(codecs, k.cls, key, 2, key_version, kafka)
    key_text = f"transaction_metadata::transactionalId={java_text(get(key_obj, 'TransactionalId'))}"
    if value is None:
        return key_text, "<DELETE>", False
    value = bytes(value)
    v, version, known = _transaction_framing(codecs, "value", value)  # TransactionLogValue
    if not known:
        raise KafkaStops(f"Unknown version {version} from the transaction log message value",
                         "java.lang.IllegalStateException")  # fmt: skip
    obj = kafka_struct(codecs, v.cls, value, 2, version, kafka)
    status = get(obj, "TransactionStatus")
    state = TRANSACTION_STATES.get(status)
    if state is None:  # TransactionState.fromId
        raise KafkaStops(f"Unknown transaction state id {status} from the transaction status message",
                         "java.lang.IllegalStateException")  # fmt: skip
    if kafka >= (4, 0):  # TransactionVersion.fromFeatureLevel (a tagged field; 0 when absent)
        level = get(obj, "ClientTransactionVersion") if "ClientTransactionVersion" in _table(obj) else None
        level = 0 if level is None else level
        if level not in _TRANSACTION_VERSIONS_40:
            raise KafkaStops(f"No feature:transaction.version with feature level {level}",
                             "java.lang.IllegalArgumentException")  # fmt: skip
    parts = []
    if state != "Empty":  # an Empty transaction's partitions are not read back
        for p in get(obj, "TransactionPartitions") or []:
            topic_name = java_text(get(p, "Topic"))
            parts += [(topic_name, pid) for pid in get(p, "PartitionIds")]
    ordered = scala_hash_set_order(parts)
    payload = (
        f"producerId:{get(obj, 'ProducerId')},producerEpoch:{get(obj, 'ProducerEpoch')},"
        f"state={state},partitions=[{','.join(f'{t}-{p}' for t, p in ordered)}],"
        f"txnLastUpdateTimestamp={get(obj, 'TransactionLastUpdateTimestampMs')},"
        f"txnTimeoutMs={get(obj, 'TransactionTimeoutMs')}"
    )
    return key_text, payload, False


# -- __cluster_metadata (ClusterMetadataLogMessageParser)


class _Refused(Exception):
    """What a Kafka serde throws, its message as kafka-dump-log prints it."""


def _short_varint(data: bytes, pos: int, entity: str) -> tuple[int, int]:
    """AbstractApiMessageSerde.unsignedIntToShort: an unsigned varint read as a short."""
    try:
        val, pos = java_uvarint(data, pos, len(data))
    except JavaReadError:
        raise _Refused(f"Error while reading {entity}") from None
    if val > 0x7FFF:
        raise _Refused(f"Value for {entity} was too large.")
    return ((val + 0x8000) & 0xFFFF) - 0x8000, pos  # (short) val


def _api_message_serde(codecs: Codecs, topic: str, data: bytes, kafka: Release) -> Message:
    """AbstractApiMessageSerde.read as Kafka runs it (MetadataRecordSerde, and the
    BytesApiMessageSerde of RemoteLogMetadataSerde), for a record kafkacodec's stricter
    reading refused: its frame version, apiKey and version as shorts, the struct read as
    Kafka's generated reader reads it (java_read), at any version, nothing left after it;
    _Refused with MetadataParseException's message where Kafka throws."""
    frame, pos = _short_varint(data, 0, "frame version")
    if frame == 0:
        raise _Refused("Could not deserialize metadata record with frame version 0. Note that upgrades from "
                       "the preview release of KRaft in 2.8 to newer versions are not supported.")  # fmt: skip
    if frame != 1:
        raise _Refused(f"Could not deserialize metadata record due to unknown frame version {frame}"
                       "(only frame version 1 is supported)")  # fmt: skip
    api_key, pos = _short_varint(data, pos, "type")
    version, pos = _short_varint(data, pos, "version")
    spec, cls = codecs.metadata_specs(topic).get(api_key, (None, None))
    if cls is None or spec is None:  # MetadataRecordType.fromId, wrapped: its toString
        raise _Refused(f"org.apache.kafka.common.errors.UnsupportedVersionException: Unknown metadata id {api_key}")
    try:
        obj, end = kafka_reads(codecs, cls, data, pos, version, kafka)
    except JavaReadError:
        raise _Refused(f"Failed to deserialize record with type {api_key}") from None
    if end < len(data):
        raise _Refused(f"Found {len(data) - end} byte(s) of garbage after {api_key}")
    return Message(spec, version, obj, api_key=api_key)


def _metadata(codecs: Codecs, topic: str, value, kafka: Release) -> Message:
    """A metadata record as Kafka's serde reads it: kafkacodec's reading, or where that
    refuses it, Kafka's (_api_message_serde)."""
    data = bytes(value)
    try:
        return codecs.metadata_record(topic, data)
    except KafkacodecError:
        return _api_message_serde(codecs, topic, data, kafka)


def cluster_metadata_parser(key, value, offset: int, codecs: Codecs = DEFAULT, kafka: Release = NEWEST) -> Parsed:
    """ClusterMetadataLogMessageParser: a record as {"type":..,"version":..,"data":..}, or
    `Error at <offset>, skipping. <why>` in Kafka's words."""
    try:
        if value is None:  # (the serde's first read, of the frame version, throws)
            raise _Refused("Error while reading frame version")
        m = _metadata(codecs, "__cluster_metadata", value, kafka)
        name = codecs.metadata_type_name("__cluster_metadata", m.api_key)
        out = f'{{"type":"{name}","version":{m.version},"data":{_json(m.obj, m.version)}}}'
    except _Refused as why:
        return None, f"Error at {offset}, skipping. {why}", True
    except KafkacodecError as err:
        return None, f"Error at {offset}, skipping. {err}", True
    return None, out, False  # no keys for metadata records


# -- __remote_log_metadata (RemoteMetadataLogMessageParser: RemoteLogMetadata.toString)

_SEGMENT_STATES = {0: "COPY_SEGMENT_STARTED", 1: "COPY_SEGMENT_FINISHED",
                   2: "DELETE_SEGMENT_STARTED", 3: "DELETE_SEGMENT_FINISHED"}  # fmt: skip
_PARTITION_STATES = {0: "DELETE_PARTITION_MARKED", 1: "DELETE_PARTITION_STARTED",
                     2: "DELETE_PARTITION_FINISHED"}  # fmt: skip


# The text of each record is a template over its spec's fields (by Kafka name): a str is
# written as it is; (kind, field, ...) writes a field: T_INT and T_STR as Java prints them,
# T_UUID as Uuid.toString, T_BOOL as true/false, (T_NAMES, field, {id: name}, what) the name
# of an id (an unknown one: "unknown <what> id N"), (T_OPTIONAL_LEN, field, before, after,
# empty) an Optional of bytes, (T_STRUCT, field, template) a nested struct, (T_SORTED_MAP,
# field, key, value, error) a TreeMap of the items' key and value fields (none: the error);
# (T_IF, field, template) writes the template when the spec has that field. Checks write
# nothing and raise Kafka's error, in the order Kafka's classes make them (a template starts
# with the checks of the constructors its record goes through): (T_CHECK_MIN, field, bound,
# error) a field below the bound, (T_CHECK_NOT_BELOW, field, other, error) a field below
# another, (T_CHECK_NONEMPTY, field, error) an empty list, (T_CHECK_NAMED, field, {id: name},
# error) an id with no name; an error names fields as {Field}. _render writes them (the
# reference); the native writer runs the same templates (_native_template.c), and leaves a
# record whose check fails to _render.
T_LIT, T_INT, T_STR, T_UUID, T_BOOL, T_NAMES, T_OPTIONAL_LEN, T_STRUCT, T_SORTED_MAP, T_IF = range(10)
T_CHECK_MIN, T_CHECK_NOT_BELOW, T_CHECK_NONEMPTY, T_CHECK_NAMED = range(10, 14)
_CHECKS = frozenset({T_CHECK_MIN, T_CHECK_NOT_BELOW, T_CHECK_NONEMPTY, T_CHECK_NAMED})

_TOPIC_ID_PARTITION = ((T_UUID, "Id"), ":", (T_STR, "Name"), "-", (T_INT, "Partition"))  # TopicIdPartition
_SEGMENT_ID = ("RemoteLogSegmentId{topicIdPartition=", (T_STRUCT, "TopicIdPartition", _TOPIC_ID_PARTITION),
               ", id=", (T_UUID, "Id"), "}")  # RemoteLogSegmentId  # fmt: skip
_CUSTOM = (T_OPTIONAL_LEN, "CustomMetadata", "Optional[CustomMetadata{", " bytes}]", "Optional.empty")
_EPOCHS = (T_SORTED_MAP, "SegmentLeaderEpochs", "LeaderEpoch", "Offset", "segmentLeaderEpochs can not be empty")
_SEGMENT_STATE = (T_NAMES, "RemoteLogSegmentState", _SEGMENT_STATES, "RemoteLogSegmentState")

#: RemoteLogSegmentState.forId of an id no state has: null, which the constructors refuse.
_STATE_NULL = (T_CHECK_NAMED, "RemoteLogSegmentState", _SEGMENT_STATES, "state can not be null")

#: RemoteLogMetadata.toString of each record of __remote_log_metadata, by spec, after the
#: checks of the constructors RemoteLogMetadataSerde's transforms call: RemoteLogSegmentMetadata
#: (its start offset, end offset, leader epochs), then the RemoteLogSegmentMetadataUpdate of
#: its state (RemoteLogSegmentMetadataTransform); RemoteLogSegmentMetadataUpdate;
#: RemotePartitionDeleteMetadata (Objects.requireNonNull of its state: a message of null);
#: RemoteLogSegmentMetadataSnapshot (its state, then its leader epochs).
_REMOTE_TEMPLATES: dict[str, tuple] = {
    "RemoteLogSegmentMetadataRecord": (
        (T_CHECK_MIN, "StartOffset", 0,
         "Unexpected start offset = {StartOffset}. StartOffset for a remote segment cannot be negative"),
        (T_CHECK_NOT_BELOW, "EndOffset", "StartOffset",
         "Unexpected end offset = {EndOffset}. EndOffset for a remote segment cannot be less than "
         "startOffset = {StartOffset}"),
        (T_CHECK_NONEMPTY, "SegmentLeaderEpochs", "segmentLeaderEpochs can not be null or empty"),
        _STATE_NULL,
        "RemoteLogSegmentMetadata{remoteLogSegmentId=", (T_STRUCT, "RemoteLogSegmentId", _SEGMENT_ID),
        ", startOffset=", (T_INT, "StartOffset"), ", endOffset=", (T_INT, "EndOffset"),
        ", brokerId=", (T_INT, "BrokerId"), ", maxTimestampMs=", (T_INT, "MaxTimestampMs"),
        ", eventTimestampMs=", (T_INT, "EventTimestampMs"), ", segmentLeaderEpochs=", _EPOCHS,
        ", segmentSizeInBytes=", (T_INT, "SegmentSizeInBytes"), ", customMetadata=", _CUSTOM,
        ", state=", _SEGMENT_STATE,
        (T_IF, "TxnIndexEmpty", (", txnIdxEmpty=", (T_BOOL, "TxnIndexEmpty"))),  # Kafka 3.9 on
        "}",
    ),
    "RemoteLogSegmentMetadataUpdateRecord": (
        _STATE_NULL,
        "RemoteLogSegmentMetadataUpdate{remoteLogSegmentId=", (T_STRUCT, "RemoteLogSegmentId", _SEGMENT_ID),
        ", customMetadata=", _CUSTOM, ", state=", _SEGMENT_STATE,
        ", eventTimestampMs=", (T_INT, "EventTimestampMs"), ", brokerId=", (T_INT, "BrokerId"), "}",
    ),
    "RemotePartitionDeleteMetadataRecord": (
        (T_CHECK_NAMED, "RemotePartitionDeleteState", _PARTITION_STATES, "null"),
        "RemotePartitionDeleteMetadata{topicPartition=", (T_STRUCT, "TopicIdPartition", _TOPIC_ID_PARTITION),
        ", state=", (T_NAMES, "RemotePartitionDeleteState", _PARTITION_STATES, "RemotePartitionDeleteState"),
        ", eventTimestampMs=", (T_INT, "EventTimestampMs"), ", brokerId=", (T_INT, "BrokerId"), "}",
    ),
    "RemoteLogSegmentMetadataSnapshotRecord": (
        _STATE_NULL,
        (T_CHECK_NONEMPTY, "SegmentLeaderEpochs", "segmentLeaderEpochs can not be null or empty"),
        "RemoteLogSegmentMetadataSnapshot{segmentId=", (T_UUID, "SegmentId"),
        ", startOffset=", (T_INT, "StartOffset"), ", endOffset=", (T_INT, "EndOffset"),
        ", maxTimestampMs=", (T_INT, "MaxTimestampMs"), ", segmentLeaderEpochs=", _EPOCHS,
        ", segmentSizeInBytes=", (T_INT, "SegmentSizeInBytes"), ", customMetadata=", _CUSTOM,
        ", state=", _SEGMENT_STATE,
        (T_IF, "TxnIndexEmpty", (", txnIdxEmpty=", (T_BOOL, "TxnIndexEmpty"))),  # Kafka 4.0 on
        "}",
    ),
}  # fmt: skip


def _render(template: tuple, o, out: list[str]) -> None:
    """Write a template's text of a decoded struct into out (the reference of the native
    writer, which runs the same templates)."""
    for op in template:
        if type(op) is str:
            out.append(op)
            continue
        kind, name, *args = op
        if kind == T_IF:
            if name in _table(o):  # a field of the spec, at any version
                _render(args[0], o, out)
            continue
        v = get(o, name)
        if kind in _CHECKS:
            failed = ((kind == T_CHECK_MIN and v < args[0])
                      or (kind == T_CHECK_NOT_BELOW and v < get(o, args[0]))
                      or (kind == T_CHECK_NONEMPTY and not v)
                      or (kind == T_CHECK_NAMED and v not in args[0]))  # fmt: skip
            if failed:
                raise KafkacodecError(re.sub(r"\{(\w+)\}", lambda m: str(get(o, m[1])), args[-1]))
            continue
        if kind == T_INT:
            out.append(f"{v}")
        elif kind == T_STR:
            out.append(java_text(v))
        elif kind == T_UUID:
            out.append(uuid_text(v))
        elif kind == T_BOOL:
            out.append("true" if v else "false")
        elif kind == T_NAMES:
            names, what = args
            if v not in names:
                raise KafkacodecError(f"unknown {what} id {v}")
            out.append(names[v])
        elif kind == T_OPTIONAL_LEN:
            before, after, empty = args
            out.append(empty if v is None else f"{before}{len(v)}{after}")
        elif kind == T_STRUCT:
            _render(args[0], v, out)
        elif kind == T_SORTED_MAP:
            key, value, error = args
            m = {}
            for e in v:
                k, x = get_many(e, (key, value))
                m[k] = x
            if not m:
                raise KafkacodecError(error)
            out.append("{" + ", ".join(f"{k}={m[k]}" for k in sorted(m)) + "}")
        else:  # pragma: no cover - a template of this module
            raise AssertionError(f"template kind {kind}")


def _remote_text(spec: str, o) -> str:
    """RemoteLogMetadata.toString of a decoded __remote_log_metadata record of a spec."""
    template = _REMOTE_TEMPLATES.get(spec)
    if template is None:
        raise UnknownRecordTypeError(f"no text for {spec}", 0)
    out: list[str] = []
    _render(template, o, out)
    return "".join(out)


def _program(template: tuple, cls, version: int) -> Any:
    """The native program of a template for a class at a version (None: Python writes it):
    the fields it reads by a NativeJson reader plan, nested structs and map items by their
    own classes' (found in cls's module, by the spec's type names)."""
    message = getattr(cls, "MESSAGE", None)
    if message is None or not NativeJson.available():
        return None
    from . import _native

    fields = {f["name"]: f for f in message.get("fields", ())}
    flat: list = []
    for op in template:
        if type(op) is not str and op[0] == T_IF:
            if op[1] in fields:
                flat += op[2]
        else:
            flat.append(op)
    names = tuple(dict.fromkeys(n for op in flat if type(op) is not str
                                for n in ((op[1], op[2]) if op[0] == T_CHECK_NOT_BELOW else (op[1],))))  # fmt: skip
    reader = NativeJson.reader(cls, version, names)
    if reader is None:
        return None
    module = sys.modules[cls.__module__]
    ops: list[tuple] = []
    for op in flat:
        if type(op) is str:
            ops.append((T_LIT, 0, op))
            continue
        kind, name, *args = op
        index = names.index(name)
        if kind in (T_NAMES, T_CHECK_NAMED, T_CHECK_MIN):
            ops.append((kind, index, args[0]))
        elif kind == T_CHECK_NOT_BELOW:
            ops.append((kind, index, names.index(args[0])))
        elif kind == T_CHECK_NONEMPTY:
            ops.append((kind, index))
        elif kind == T_OPTIONAL_LEN:
            ops.append((kind, index, *args))
        elif kind in (T_STRUCT, T_SORTED_MAP):
            nested = getattr(module, fields[name]["type"].removeprefix("[]"), None)
            if nested is None:
                return None
            child = (_program(args[0], nested, version) if kind == T_STRUCT
                     else NativeJson.reader(nested, version, tuple(args[:2])))  # fmt: skip
            if child is None:
                return None
            ops.append((kind, index, child))
        else:
            ops.append((kind, index))
    return _native.template_program(reader, tuple(ops))


def remote_log_metadata_parser(key, value, offset: int, codecs: Codecs = DEFAULT,
                               kafka: Release = NEWEST) -> Parsed:  # fmt: skip
    """RemoteMetadataLogMessageParser: RemoteLogMetadataSerde's object's toString, or `Error
    at offset <offset>, skipping. <why>` in Kafka's words."""
    try:
        if value is None:  # new byte[record.value().remaining()]
            record = "record.internal" if kafka >= RECORD_INTERNAL_SINCE else "record"
            raise _Refused('Cannot invoke "java.nio.ByteBuffer.remaining()" because the return value of '
                           f'"org.apache.kafka.common.{record}.Record.value()" is null')  # fmt: skip
        m = _metadata(codecs, "__remote_log_metadata", value, kafka)
        out = _remote_text(m.spec, m.obj)
    except _Refused as why:
        return None, f"Error at offset {offset}, skipping. {why}", True
    except KafkacodecError as err:
        return None, f"Error at offset {offset}, skipping. {err}", True
    return None, out, False


#: kafka-dump-log's decoder flags and the parser each selects.
PARSERS = {
    "offsets": offsets_parser,
    "transaction-log": transaction_log_parser,
    "cluster-metadata": cluster_metadata_parser,
    "remote-log-metadata": remote_log_metadata_parser,
    "share-group-state": share_group_state_parser,
}
#: The decoder of each internal topic, when none is given.
TOPIC_DECODERS = {
    "__consumer_offsets": "offsets",
    "__transaction_state": "transaction-log",
    "__cluster_metadata": "cluster-metadata",
    "__remote_log_metadata": "remote-log-metadata",
    "__share_group_state": "share-group-state",
}

# -- a decoder bound to its codecs and release, for one record or a batch's records

#: The native writer's plans for the coordinator decoders' JSON (kafka_json.NativeJson), each
#: made from the same facts as the Python writer's replacements above.
_OFFSETS_JSON = NativeJson(python=frozenset(_CONSUMER_PROTOCOL_FIELDS))
_TRANSACTION_JSON = NativeJson(
    names={_TRANSACTION_STATUS: {k: f'"{name}"' for k, name in TRANSACTION_STATES.items()}}
)
#: The highest value version the native tables cover (versions come from data; a higher
#: one is written by the Python writer).
_NATIVE_VERSIONS = 256


class Decoder:
    """One of kafka-dump-log's decoders (PARSERS), bound to a set of codecs and a release.
    Called with (key, value, offset), it decodes one record; many(records) gives the same
    texts for a batch's records at once, the coordinator topics' through the native
    decoder and JSON writer (Codecs.coordinator_pairs, kafka_json.NativeJson), with every
    record they do not take decoded by the call."""

    def __init__(self, name: str, codecs: Codecs = DEFAULT, kafka: Release = NEWEST):
        if name not in PARSERS:
            raise ValueError(f"no decoder {name!r} (one of {', '.join(PARSERS)})")
        self.name, self.codecs, self.kafka = name, codecs, kafka
        parser: Callable = PARSERS[name]
        self._one = functools.partial(parser, codecs=codecs, kafka=kafka)
        # (topic, the value's version word, plans) where the texts are coordinator JSON
        self._coordinator: tuple[str, str, NativeJson] | None = None
        if name == "offsets" and kafka >= (4, 0):  # (3.9's: every record by the call)
            self._coordinator = ("__consumer_offsets", "version", _OFFSETS_JSON)
        elif name == "share-group-state":
            word = "version" if kafka >= SHARE_STATE_VERSION_SINCE else "type"
            self._coordinator = ("__share_group_state", word, _PLAIN_JSON)
        elif name == "transaction-log" and kafka >= TRANSACTION_STATE_NAMES_SINCE:
            self._coordinator = ("__transaction_state", "version", _TRANSACTION_JSON)
        elif name == "transaction-log" and kafka >= TRANSACTION_JSON_SINCE:
            self._coordinator = ("__transaction_state", "version", _PLAIN_JSON)
        self._tables: tuple[dict, dict] | None = None
        self._metadata = name == "cluster-metadata" and NativeJson.available()
        self._remote = name == "remote-log-metadata"
        self._programs: dict | None = None

    def __call__(self, key, value, offset: int) -> Parsed:
        return self._one(key, value, offset)

    def _each(self, key, value, offset: int) -> Parsed | KafkaStops:
        """One record's text, or the KafkaStops it raises (in its place: the records
        before it are printed first)."""
        try:
            return self._one(key, value, offset)
        except KafkaStops as stop:
            return stop

    def many(self, records: Sequence) -> list[Parsed | KafkaStops]:
        """(key, payload, failed) for each record (objects with key, value and offset), or
        the KafkaStops where kafka-dump-log dies at it."""
        if self._metadata:
            return self._metadata_many(records)
        if self._remote:
            return self._remote_many(records)
        if self._coordinator is None or not NativeJson.available():
            return [self._each(r.key, r.value, r.offset) for r in records]
        topic, word, _plans = self._coordinator
        items = self.codecs.coordinator_pairs(topic, [(r.key, r.value) for r in records])
        return self._rest(NativeJson.coordinator_texts(items, *self._plan_tables(), word), records)

    def _rest(self, got: list, records: Sequence) -> list[Parsed | KafkaStops]:
        """got, with the records the native writer left (None) decoded one at a time."""
        if not all(got):  # (C speed: the texts are tuples, None where Python must write one)
            for i, text in enumerate(got):
                if text is None:
                    r = records[i]
                    got[i] = self._each(r.key, r.value, r.offset)
        return got

    def _metadata_many(self, records: Sequence) -> list[Parsed | KafkaStops]:
        """ClusterMetadataLogMessageParser's text for a batch's records (what
        cluster_metadata_parser gives each), decoded at once (Codecs.metadata_items) and
        written by the native writer where it applies."""
        items = self.codecs.metadata_items("__cluster_metadata", [r.value for r in records])
        return self._rest(NativeJson.metadata_texts(items, *self._metadata_tables()), records)

    def _remote_many(self, records: Sequence) -> list[Parsed | KafkaStops]:
        """RemoteMetadataLogMessageParser's text for a batch's records (what
        remote_log_metadata_parser gives each), decoded at once (Codecs.metadata_items)
        and written by the native templates where they apply."""
        topic = "__remote_log_metadata"
        items = self.codecs.metadata_items(topic, [r.value for r in records])
        if NativeJson.available():
            from . import _native

            return self._rest(_native.template_texts(items, self._remote_programs()), records)
        specs = self.codecs.metadata_specs(topic)
        out: list[Parsed | KafkaStops] = []
        for r, item in zip(records, items):  # the templates in Python, over the same items
            try:
                out.append((None, _remote_text(specs[item[0]][0], item[2]), False))
            except (KafkacodecError, TypeError):  # (TypeError: the item is the record's error)
                out.append(self._each(r.key, r.value, r.offset))
        return out

    def _remote_programs(self) -> dict:
        """The native program of each apiKey's template ({apiKey: (program for each version
        from 0)})."""
        if self._programs is None:
            self._programs = self._by_version(
                "__remote_log_metadata",
                lambda spec, cls, v: _program(_REMOTE_TEMPLATES[spec], cls, v) if spec in _REMOTE_TEMPLATES else None,
            )  # fmt: skip
        return self._programs

    def _by_version(self, topic: str, make: Callable[[str, Any, int], Any]) -> dict:
        """{apiKey: (make(spec, class, version) for each version from 0, None below the
        class's lowest)} for a metadata topic's specs, up to the native loops' versions."""
        table = {}
        for api_key, (spec, cls) in self.codecs.metadata_specs(topic).items():
            if cls is None:
                continue
            info = self.codecs.info(cls)
            top = min(info.hi, _NATIVE_VERSIONS - 1)
            table[api_key] = tuple(make(spec, cls, v) if v >= info.lo else None for v in range(top + 1))
        return table

    def _metadata_tables(self) -> tuple[dict, dict]:
        """The native plans of each apiKey's struct ({apiKey: (plan for each version from
        0)}) and its MetadataRecordType name."""
        if self._tables is None:
            topic = "__cluster_metadata"
            plans = self._by_version(topic, lambda _spec, cls, v: _PLAIN_JSON.plan(cls, v))
            self._tables = (plans, {k: self.codecs.metadata_type_name(topic, k) for k in plans})
        return self._tables

    def _plan_tables(self) -> tuple[dict, dict]:
        """The native plans of each record type's key ({type: plan}) and value ({type:
        (plan for each version from 0)})."""
        if self._tables is None:
            topic, _word, plans = self._coordinator  # type: ignore[misc]
            keys = {rt: plans.plan(e.cls, e.key_version)
                    for rt, e in self.codecs.coordinator_structs(topic, "key").items()}  # fmt: skip
            values = {}
            for rt, e in self.codecs.coordinator_structs(topic, "value").items():
                info = self.codecs.info(e.cls)
                top = min(info.hi, _NATIVE_VERSIONS - 1)
                values[rt] = tuple(plans.plan(e.cls, v) if v >= info.lo else None
                                   for v in range(top + 1))  # fmt: skip
            self._tables = (keys, values)
        return self._tables


# -- KRaft control records

#: What kafka-dump-log prints before the JSON of each KRaft control record it decodes.
CONTROL_LABELS = {3: "SnapshotHeader", 4: "SnapshotFooter", 5: "KRaftVersion", 6: "KRaftVoters"}


def control_refused(key, value, kafka: Release = NEWEST) -> KafkaStops:
    """What kafka-dump-log throws for a control record whose key or end-transaction marker
    kafkacodec's reading refused (batches.parse_control): ControlRecordType.parseTypeId,
    then for ABORT and COMMIT EndTransactionMarker.deserialize (their texts: from 4.1 the
    marker is read by a generated class, from 4.3 the key too, in record.internal). Nothing
    in the tool catches it."""
    irx = "org.apache.kafka.common.InvalidRecordException"
    npe = "java.lang.NullPointerException"
    if key is None:
        call = "duplicate" if kafka >= RECORD_INTERNAL_SINCE else "remaining"
        return KafkaStops(f'Cannot invoke "java.nio.ByteBuffer.{call}()" because "key" is null', npe)
    key = bytes(key)
    if len(key) < 4:
        what = "control record key. Must" if kafka >= RECORD_INTERNAL_SINCE else "end control record key. Must"
        return KafkaStops(f"Invalid value size found for {what} have at least 4 bytes, but found only {len(key)}", irx)
    version = _int16(key)
    if version < 0:
        return KafkaStops(f"Invalid version found for control record: {version}. May indicate data corruption", irx)
    generated = kafka >= END_TXN_MARKER_GENERATED_SINCE
    if value is None:  # EndTransactionMarker.deserializeValue(type, record.value())
        call = "getShort" if generated else "remaining"
        return KafkaStops(f'Cannot invoke "java.nio.ByteBuffer.{call}()" because "value" is null', npe)
    value = bytes(value)
    if not generated and len(value) < 6:
        return KafkaStops("Invalid value size found for end transaction marker. Must have at least 6 bytes, "
                          f"but found only {len(value)}", irx)  # fmt: skip
    if len(value) < 2:
        return KafkaStops("", "java.nio.BufferUnderflowException")
    marker_version = _int16(value)
    if marker_version < 0:
        return KafkaStops(f"Invalid version found for end transaction marker: {marker_version}. "
                          "May indicate data corruption", irx)  # fmt: skip
    return KafkaStops("", "java.nio.BufferUnderflowException")  # (the generated EndTxnMarker's readInt)


def control_text(control_type: int, value, codecs: Codecs = DEFAULT,
                 kafka: Release = NEWEST) -> str | None:  # fmt: skip
    """` SnapshotHeader {...}` (without the leading space) for the KRaft control records
    kafka-dump-log decodes: read at version 0, whatever their Version field says, and
    written as JSON at that field's value (ControlRecordUtils, then the JsonConverter at
    message.version()); from 4.1 on also `LeaderChange: {...}`. None for the others
    (kafka-dump-log prints controlType: NAME(N)). KafkaStops where ControlRecordUtils
    throws (nothing in kafka-dump-log catches it)."""
    label: str | None
    if control_type == 2 and kafka >= LEADER_CHANGE_SINCE:
        label = "LeaderChange:"
    else:
        label = CONTROL_LABELS.get(control_type)
        if label is None:
            return None
    if value is None:  # ControlRecordUtils: record.value().slice()
        raise KafkaStops('Cannot invoke "java.nio.ByteBuffer.slice()" because "data" is null',
                         "java.lang.NullPointerException")  # fmt: skip
    _spec, cls = codecs.control_class(control_type)
    obj = kafka_struct(codecs, cls, bytes(value), 0, 0, kafka)
    return f"{label} {to_json(obj, get(obj, 'Version'))}"

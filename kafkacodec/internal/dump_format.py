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
import sys
from collections.abc import Callable, Sequence
from typing import Any

from kafkacodec.runtime.errors import KafkacodecError

from .codecs import DEFAULT, Codecs, UnknownRecordTypeError
from .kafka_json import NativeJson, access, to_json, uuid_text

__all__ = [
    "PARSERS", "Decoder", "get_many", "offsets_parser", "share_group_state_parser", "transaction_log_parser",
    "cluster_metadata_parser", "remote_log_metadata_parser", "control_text", "get",
    "TRANSACTION_STATES", "scala_hash_set_order", "NEWEST", "release", "BY_RELEASE",
    "TRANSACTION_JSON_SINCE", "LEADER_CHANGE_SINCE", "SNAPSHOT_LINE_TRIMMED_SINCE",
]  # fmt: skip

Parsed = tuple[str | None, str | None, bool]

# -- what changed in kafka-dump-log's text, release by release (each found by running that
# release's DumpLogSegments over the same broker-written files: tests/kafka/test_kafka_writes.py)

#: The newest release the tests run: `kafkacodec dump --kafka-version`'s default.
NEWEST = (4, 4)
#: __transaction_state records as JSON ({"type":..,"data":..} keys, {"version":..,"data":..}
#: values, as the offsets decoder prints its own), no longer TransactionLog's text.
TRANSACTION_JSON_SINCE = (4, 1)
#: __share_group_state values as {"version":..,"data":..} (ShareGroupStateMessageParser
#: became a CoordinatorRecordMessageParser), no longer {"type":..,"data":..}.
SHARE_STATE_VERSION_SINCE = (4, 1)
#: LeaderChange control records decoded (`LeaderChange: {...}`), no longer
#: `controlType: LEADER_CHANGE(2)`.
LEADER_CHANGE_SINCE = (4, 1)
#: A producer snapshot entry without batch metadata ends without a space (the tool's Java
#: port, org.apache.kafka.tools.DumpLogSegments).
SNAPSHOT_LINE_TRIMMED_SINCE = (4, 3)


def release(text: str) -> tuple[int, int]:
    """A release as (major, minor) from "4.1" or "4.1.0"; ValueError for anything else."""
    parts = text.strip().split(".")
    if len(parts) not in (2, 3) or not all(p.isdigit() for p in parts):
        raise ValueError(f"{text!r} is not a Kafka release (such as 4.1)")
    return int(parts[0]), int(parts[1])


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
    table = {f["name"]: access(f, version) for f in cls.MESSAGE["fields"]}  # field_value's rule
    by_version = _ACCESS.setdefault(cls, {})
    if len(by_version) < 1000:  # versions come from data: keep the cache bounded
        by_version[version] = table
    return table


# -- __consumer_offsets (OffsetsMessageParser) and __share_group_state


def _consumer_protocol(codecs: Codecs, spec: str) -> Callable:
    """A GroupMetadataValue member's subscription or assignment as its decoded
    ConsumerProtocol JSON (None: keep the base64, as Kafka does when decoding fails)."""

    def replace(value) -> str | None:
        if value is None:
            return None
        try:
            m = codecs.versioned(spec, bytes(value), trailing=True)
            return to_json(m.obj, m.version)
        except KafkacodecError:
            return None

    return replace


#: The GroupMetadataValue member fields OffsetsMessageParser prints decoded, and the spec of
#: each, for a group whose protocolType is "consumer".
_CONSUMER_PROTOCOL_FIELDS = {
    ("MemberMetadata", "subscription"): "ConsumerProtocolSubscription",
    ("MemberMetadata", "assignment"): "ConsumerProtocolAssignment",
}


def _consumer_protocols(codecs: Codecs, v) -> dict:
    """A consumer group's members' subscription and assignment decoded (OffsetsMessageParser)."""
    if v.spec != "GroupMetadataValue" or get(v.obj, "protocolType") != "consumer":
        return {}
    return {where: _consumer_protocol(codecs, spec) for where, spec in _CONSUMER_PROTOCOL_FIELDS.items()}


#: The field 4.1's TransactionLogMessageParser prints by its TransactionState name.
_TRANSACTION_STATUS = ("TransactionLogValue", "transactionStatus")


def _transaction_state_names(codecs: Codecs, v) -> dict:
    """A transaction's state by its TransactionState name (4.1's TransactionLogMessageParser)."""
    return {_TRANSACTION_STATUS: lambda status: f'"{TRANSACTION_STATES.get(status, status)}"'}


def _coordinator_parser(topic: str, value_word: str,
                        replacing: Callable[[Codecs, Any], dict] | None = None):  # fmt: skip
    """A coordinator topic's parser: keys and values as JSON; `replacing(codecs, value)`
    gives the fields printed otherwise (kafka_json.to_json's replace)."""
    def parse(key, value, offset: int, codecs: Codecs = DEFAULT) -> Parsed:
        if key is None:  # Kafka throws here, which stops kafka-dump-log
            return (
                f"Error at offset {offset}, skipping. Failed to decode message at offset {offset} "
                "using offset topic decoder (message had a missing key)", None, True,
            )  # fmt: skip
        try:
            k = codecs.coordinator_key(topic, bytes(key))
            # Jackson's ObjectNode: {"type":"<record type>","data":{...}} (numbers as text)
            key_text = f'{{"type":"{k.record_type}","data":{to_json(k.obj, k.version)}}}'
            if value is None:
                return key_text, "<DELETE>", False
            v = codecs.coordinator_value(topic, k.record_type, bytes(value))
            data = to_json(v.obj, v.version, replacing(codecs, v) if replacing else None)
            return key_text, f'{{"{value_word}":"{v.version}","data":{data}}}', False
        except UnknownRecordTypeError as err:
            if err.message.startswith("Unknown record type"):
                rtype = err.message.split()[-1]
                return f"Unknown record type {rtype} at offset {offset}, skipping.", None, True
            return f"Error at offset {offset}, skipping. {err.message}", None, True
        except KafkacodecError as err:
            return f"Error at offset {offset}, skipping. {err}", None, True

    return parse


offsets_parser = _coordinator_parser("__consumer_offsets", "version", _consumer_protocols)
_share_state_json = _coordinator_parser("__share_group_state", "version")
_share_state_json_40 = _coordinator_parser("__share_group_state", "type")


def share_group_state_parser(key, value, offset: int, codecs: Codecs = DEFAULT,
                             kafka: tuple[int, int] = NEWEST) -> Parsed:  # fmt: skip
    """Kafka's ShareGroupStateMessageParser: keys and values as JSON, a value's version under
    "version" from 4.1 on (a CoordinatorRecordMessageParser, as the offsets decoder's), under
    "type" in 4.0."""
    parse = _share_state_json if kafka >= SHARE_STATE_VERSION_SINCE else _share_state_json_40
    return parse(key, value, offset, codecs)


#: 4.1's TransactionLogMessageParser: the records as JSON, the state by its name.
_transaction_json = _coordinator_parser("__transaction_state", "version", _transaction_state_names)


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


def transaction_log_parser(key, value, offset: int, codecs: Codecs = DEFAULT,
                           kafka: tuple[int, int] = NEWEST) -> Parsed:  # fmt: skip
    """Kafka's TransactionLogMessageParser: from 4.1 on the records as JSON, as the offsets
    decoder prints them; before, TransactionLog.formatRecordKeyAndValue's text. Where Kafka
    would throw (and stop), the error is printed in place of the key."""
    if kafka >= TRANSACTION_JSON_SINCE:
        return _transaction_json(key, value, offset, codecs)
    try:
        if key is None:
            raise KafkacodecError("the record has no key")
        k = codecs.coordinator_key("__transaction_state", bytes(key))
        key_text = f"transaction_metadata::transactionalId={get(k.obj, 'TransactionalId')}"
        if value is None:
            return key_text, "<DELETE>", False
        v = codecs.coordinator_value("__transaction_state", k.record_type, bytes(value))
        status = get(v.obj, "TransactionStatus")
        state = TRANSACTION_STATES.get(status)
        if state is None:
            raise KafkacodecError(f"Unknown transaction state id {status}")
        parts = []
        for p in get(v.obj, "TransactionPartitions") or []:
            topic = get(p, "Topic")
            parts += [(topic, pid) for pid in get(p, "PartitionIds")]
        if state == "Empty" and parts:
            raise KafkacodecError(
                f"Transaction is not expected to have any partitions since its state is {state}"
            )
    except KafkacodecError as err:
        return f"Error at offset {offset}, skipping. {err}", None, True
    ordered = scala_hash_set_order(parts)
    payload = (
        f"producerId:{get(v.obj, 'ProducerId')},producerEpoch:{get(v.obj, 'ProducerEpoch')},"
        f"state={state},partitions=[{','.join(f'{t}-{p}' for t, p in ordered)}],"
        f"txnLastUpdateTimestamp={get(v.obj, 'TransactionLastUpdateTimestampMs')},"
        f"txnTimeoutMs={get(v.obj, 'TransactionTimeoutMs')}"
    )
    return key_text, payload, False


# -- __cluster_metadata (ClusterMetadataLogMessageParser)


def cluster_metadata_parser(key, value, offset: int, codecs: Codecs = DEFAULT) -> Parsed:
    try:
        if value is None:
            raise KafkacodecError("the record has no value")
        m = codecs.metadata_record("__cluster_metadata", bytes(value))
        name = codecs.metadata_type_name("__cluster_metadata", m.api_key)
        out = f'{{"type":"{name}","version":{m.version},"data":{_json(m.obj, m.version)}}}'
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
# (T_IF, field, template) writes the template when the spec has that field. _render writes
# them (the reference); the native writer runs the same templates (_native_template.c).
T_LIT, T_INT, T_STR, T_UUID, T_BOOL, T_NAMES, T_OPTIONAL_LEN, T_STRUCT, T_SORTED_MAP, T_IF = range(10)

_TOPIC_ID_PARTITION = ((T_UUID, "Id"), ":", (T_STR, "Name"), "-", (T_INT, "Partition"))  # TopicIdPartition
_SEGMENT_ID = ("RemoteLogSegmentId{topicIdPartition=", (T_STRUCT, "TopicIdPartition", _TOPIC_ID_PARTITION),
               ", id=", (T_UUID, "Id"), "}")  # RemoteLogSegmentId  # fmt: skip
_CUSTOM = (T_OPTIONAL_LEN, "CustomMetadata", "Optional[CustomMetadata{", " bytes}]", "Optional.empty")
_EPOCHS = (T_SORTED_MAP, "SegmentLeaderEpochs", "LeaderEpoch", "Offset", "segmentLeaderEpochs can not be empty")
_SEGMENT_STATE = (T_NAMES, "RemoteLogSegmentState", _SEGMENT_STATES, "RemoteLogSegmentState")

#: RemoteLogMetadata.toString of each record of __remote_log_metadata, by spec.
_REMOTE_TEMPLATES: dict[str, tuple] = {
    "RemoteLogSegmentMetadataRecord": (
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
        "RemoteLogSegmentMetadataUpdate{remoteLogSegmentId=", (T_STRUCT, "RemoteLogSegmentId", _SEGMENT_ID),
        ", customMetadata=", _CUSTOM, ", state=", _SEGMENT_STATE,
        ", eventTimestampMs=", (T_INT, "EventTimestampMs"), ", brokerId=", (T_INT, "BrokerId"), "}",
    ),
    "RemotePartitionDeleteMetadataRecord": (
        "RemotePartitionDeleteMetadata{topicPartition=", (T_STRUCT, "TopicIdPartition", _TOPIC_ID_PARTITION),
        ", state=", (T_NAMES, "RemotePartitionDeleteState", _PARTITION_STATES, "RemotePartitionDeleteState"),
        ", eventTimestampMs=", (T_INT, "EventTimestampMs"), ", brokerId=", (T_INT, "BrokerId"), "}",
    ),
    "RemoteLogSegmentMetadataSnapshotRecord": (
        "RemoteLogSegmentMetadataSnapshot{segmentId=", (T_UUID, "SegmentId"),
        ", startOffset=", (T_INT, "StartOffset"), ", endOffset=", (T_INT, "EndOffset"),
        ", maxTimestampMs=", (T_INT, "MaxTimestampMs"), ", segmentLeaderEpochs=", _EPOCHS,
        ", segmentSizeInBytes=", (T_INT, "SegmentSizeInBytes"), ", customMetadata=", _CUSTOM,
        ", state=", _SEGMENT_STATE, "}",
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
        if kind in (T_INT, T_STR):
            out.append(f"{v}")
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
    names = tuple(dict.fromkeys(op[1] for op in flat if type(op) is not str))
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
        if kind == T_NAMES:
            ops.append((kind, index, args[0]))
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


def remote_log_metadata_parser(key, value, offset: int, codecs: Codecs = DEFAULT) -> Parsed:
    try:
        if value is None:
            raise KafkacodecError("the record has no value")
        m = codecs.metadata_record("__remote_log_metadata", bytes(value))
        out = _remote_text(m.spec, m.obj)
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
#: The decoders whose text depends on the release (a `kafka` argument).
BY_RELEASE = frozenset({"transaction-log", "share-group-state"})
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

    def __init__(self, name: str, codecs: Codecs = DEFAULT, kafka: tuple[int, int] = NEWEST):
        if name not in PARSERS:
            raise ValueError(f"no decoder {name!r} (one of {', '.join(PARSERS)})")
        self.name, self.codecs, self.kafka = name, codecs, kafka
        parser: Callable = PARSERS[name]
        self._one = (functools.partial(parser, codecs=codecs, kafka=kafka) if name in BY_RELEASE
                     else functools.partial(parser, codecs=codecs))  # fmt: skip
        # (topic, the value's version word, plans) where the texts are coordinator JSON
        self._coordinator: tuple[str, str, NativeJson] | None = None
        if name == "offsets":
            self._coordinator = ("__consumer_offsets", "version", _OFFSETS_JSON)
        elif name == "share-group-state":
            word = "version" if kafka >= SHARE_STATE_VERSION_SINCE else "type"
            self._coordinator = ("__share_group_state", word, _PLAIN_JSON)
        elif name == "transaction-log" and kafka >= TRANSACTION_JSON_SINCE:
            self._coordinator = ("__transaction_state", "version", _TRANSACTION_JSON)
        self._tables: tuple[dict, dict] | None = None
        self._metadata = name == "cluster-metadata" and NativeJson.available()
        self._remote = name == "remote-log-metadata"
        self._programs: dict | None = None

    def __call__(self, key, value, offset: int) -> Parsed:
        return self._one(key, value, offset)

    def many(self, records: Sequence) -> list[Parsed]:
        """(key, payload, failed) for each record (objects with key, value and offset)."""
        if self._metadata:
            return self._metadata_many(records)
        if self._remote:
            return self._remote_many(records)
        if self._coordinator is None or not NativeJson.available():
            return [self._one(r.key, r.value, r.offset) for r in records]
        topic, word, _plans = self._coordinator
        items = self.codecs.coordinator_pairs(topic, [(r.key, r.value) for r in records])
        return self._rest(NativeJson.coordinator_texts(items, *self._plan_tables(), word), records)

    def _rest(self, got: list, records: Sequence) -> list[Parsed]:
        """got, with the records the native writer left (None) decoded one at a time."""
        if not all(got):  # (C speed: the texts are tuples, None where Python must write one)
            for i, text in enumerate(got):
                if text is None:
                    r = records[i]
                    got[i] = self._one(r.key, r.value, r.offset)
        return got

    def _metadata_many(self, records: Sequence) -> list[Parsed]:
        """ClusterMetadataLogMessageParser's text for a batch's records (what
        cluster_metadata_parser gives each), decoded at once (Codecs.metadata_items) and
        written by the native writer where it applies."""
        items = self.codecs.metadata_items("__cluster_metadata", [r.value for r in records])
        return self._rest(NativeJson.metadata_texts(items, *self._metadata_tables()), records)

    def _remote_many(self, records: Sequence) -> list[Parsed]:
        """RemoteMetadataLogMessageParser's text for a batch's records (what
        remote_log_metadata_parser gives each), decoded at once (Codecs.metadata_items)
        and written by the native templates where they apply."""
        topic = "__remote_log_metadata"
        items = self.codecs.metadata_items(topic, [r.value for r in records])
        if NativeJson.available():
            from . import _native

            return self._rest(_native.template_texts(items, self._remote_programs()), records)
        specs = self.codecs.metadata_specs(topic)
        out: list[Parsed] = []
        for r, item in zip(records, items):  # the templates in Python, over the same items
            try:
                out.append((None, _remote_text(specs[item[0]][0], item[2]), False))
            except (KafkacodecError, TypeError):  # (TypeError: the item is the record's error)
                out.append(self._one(r.key, r.value, r.offset))
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


def control_text(control_type: int, value, codecs: Codecs = DEFAULT,
                 kafka: tuple[int, int] = NEWEST) -> str | None:  # fmt: skip
    """` SnapshotHeader {...}` (without the leading space) for the KRaft control records
    kafka-dump-log decodes: read at version 0, whatever their Version field says, and
    written as JSON at that field's value (ControlRecordUtils, then the JsonConverter at
    message.version()); from 4.1 on also `LeaderChange: {...}`. None for the others
    (kafka-dump-log prints controlType: NAME(N))."""
    if control_type == 2 and kafka >= LEADER_CHANGE_SINCE:
        m = codecs.control_record(control_type, bytes(value or b""), 0)
        return f"LeaderChange: {to_json(m.obj, get(m.obj, 'Version'))}"
    label = CONTROL_LABELS.get(control_type)
    if label is None:
        return None
    m = codecs.control_record(control_type, bytes(value or b""), 0)
    return f"{label} {to_json(m.obj, get(m.obj, 'Version'))}"

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


def _topic_id_partition(tp) -> str:  # TopicIdPartition.toString
    topic_id, name, partition = get_many(tp, ("Id", "Name", "Partition"))
    return f"{uuid_text(topic_id)}:{name}-{partition}"


def _segment_id(sid) -> str:  # RemoteLogSegmentId.toString
    tp, segment = get_many(sid, ("TopicIdPartition", "Id"))
    return f"RemoteLogSegmentId{{topicIdPartition={_topic_id_partition(tp)}, id={uuid_text(segment)}}}"


def _custom(value) -> str:
    return "Optional.empty" if value is None else f"Optional[CustomMetadata{{{len(value)} bytes}}]"


def _epochs(entries) -> str:  # a TreeMap<Integer, Long>
    m = {}
    for e in entries:
        epoch, offset = get_many(e, ("LeaderEpoch", "Offset"))
        m[epoch] = offset
    if not m:
        raise KafkacodecError("segmentLeaderEpochs can not be empty")
    return "{" + ", ".join(f"{k}={m[k]}" for k in sorted(m)) + "}"


def _state(table: dict, value: int, what: str) -> str:
    if value not in table:
        raise KafkacodecError(f"unknown {what} id {value}")
    return table[value]


#: The fields RemoteLogSegmentMetadata.toString and RemoteLogSegmentMetadataUpdate.toString
#: print, in the order _remote_text reads them.
_SEGMENT_FIELDS = ("RemoteLogSegmentId", "StartOffset", "EndOffset", "BrokerId", "MaxTimestampMs",
                   "EventTimestampMs", "SegmentLeaderEpochs", "SegmentSizeInBytes", "CustomMetadata",
                   "RemoteLogSegmentState")  # fmt: skip
_UPDATE_FIELDS = ("RemoteLogSegmentId", "CustomMetadata", "RemoteLogSegmentState", "EventTimestampMs", "BrokerId")


def _remote_text(spec: str, o) -> str:
    """RemoteLogMetadata.toString of a decoded __remote_log_metadata record of a spec."""
    if spec == "RemoteLogSegmentMetadataRecord":
        sid, start, end, broker, max_ts, event_ts, epochs, size, custom, state = get_many(o, _SEGMENT_FIELDS)
        text = (
            f"RemoteLogSegmentMetadata{{remoteLogSegmentId={_segment_id(sid)}, "
            f"startOffset={start}, endOffset={end}, brokerId={broker}, maxTimestampMs={max_ts}, "
            f"eventTimestampMs={event_ts}, segmentLeaderEpochs={_epochs(epochs)}, "
            f"segmentSizeInBytes={size}, customMetadata={_custom(custom)}, "
            f"state={_state(_SEGMENT_STATES, state, 'RemoteLogSegmentState')}"
        )
        if "TxnIndexEmpty" in _table(o):  # a field of the spec (Kafka 3.9 on)
            text += f", txnIdxEmpty={'true' if get(o, 'TxnIndexEmpty') else 'false'}"
        return text + "}"
    if spec == "RemoteLogSegmentMetadataUpdateRecord":
        sid, custom, state, event_ts, broker = get_many(o, _UPDATE_FIELDS)
        return (
            f"RemoteLogSegmentMetadataUpdate{{remoteLogSegmentId={_segment_id(sid)}, "
            f"customMetadata={_custom(custom)}, "
            f"state={_state(_SEGMENT_STATES, state, 'RemoteLogSegmentState')}, "
            f"eventTimestampMs={event_ts}, brokerId={broker}}}"
        )
    if spec == "RemotePartitionDeleteMetadataRecord":
        return (
            f"RemotePartitionDeleteMetadata{{topicPartition={_topic_id_partition(get(o, 'TopicIdPartition'))}, "
            f"state={_state(_PARTITION_STATES, get(o, 'RemotePartitionDeleteState'), 'RemotePartitionDeleteState')}, "
            f"eventTimestampMs={get(o, 'EventTimestampMs')}, brokerId={get(o, 'BrokerId')}}}"
        )
    if spec == "RemoteLogSegmentMetadataSnapshotRecord":
        return (
            f"RemoteLogSegmentMetadataSnapshot{{segmentId={uuid_text(get(o, 'SegmentId'))}, "
            f"startOffset={get(o, 'StartOffset')}, endOffset={get(o, 'EndOffset')}, "
            f"maxTimestampMs={get(o, 'MaxTimestampMs')}, "
            f"segmentLeaderEpochs={_epochs(get(o, 'SegmentLeaderEpochs'))}, "
            f"segmentSizeInBytes={get(o, 'SegmentSizeInBytes')}, "
            f"customMetadata={_custom(get(o, 'CustomMetadata'))}, "
            f"state={_state(_SEGMENT_STATES, get(o, 'RemoteLogSegmentState'), 'RemoteLogSegmentState')}}}"
        )
    raise UnknownRecordTypeError(f"no text for {spec}", 0)


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
        remote_log_metadata_parser gives each), decoded at once (Codecs.metadata_items)."""
        topic = "__remote_log_metadata"
        specs = self.codecs.metadata_specs(topic)
        items = self.codecs.metadata_items(topic, [r.value for r in records])
        out: list = []
        for r, item in zip(records, items):
            try:
                out.append((None, _remote_text(specs[item[0]][0], item[2]), False))
            except (KafkacodecError, TypeError):  # (TypeError: the item is the record's error)
                out.append(self._one(r.key, r.value, r.offset))
        return out

    def _metadata_tables(self) -> tuple[dict, dict]:
        """The native plans of each apiKey's struct ({apiKey: (plan for each version from
        0)}) and its MetadataRecordType name."""
        if self._tables is None:
            topic = "__cluster_metadata"
            plans, names = {}, {}
            for api_key, (_spec, cls) in self.codecs.metadata_specs(topic).items():
                if cls is None:
                    continue
                info = self.codecs.info(cls)
                top = min(info.hi, _NATIVE_VERSIONS - 1)
                plans[api_key] = tuple(_PLAIN_JSON.plan(cls, v) if v >= info.lo else None
                                       for v in range(top + 1))  # fmt: skip
                names[api_key] = self.codecs.metadata_type_name(topic, api_key)
            self._tables = (plans, names)
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

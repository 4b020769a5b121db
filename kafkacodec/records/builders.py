"""The public writing API: v2 record batches and legacy message sets, as Java Kafka's
MemoryRecordsBuilder writes them. The generated builders derive every length, count,
varint and CRC; this layer adds Kafka's semantics (deltas, base and max timestamps,
LogAppendTime, wrapper offsets, control markers)."""

from __future__ import annotations

from collections.abc import Callable, Iterable, Mapping
from typing import NamedTuple

from kafkacodec.generated.kafka_control_record_key import KafkaControlRecordKey
from kafkacodec.generated.kafka_end_txn_marker import KafkaEndTxnMarker
from kafkacodec.generated.kafka_legacy_message import KafkaLegacyMessage
from kafkacodec.generated.kafka_record import Header, KafkaRecord
from kafkacodec.generated.kafka_record_batch import KafkaRecordBatch, RecordList

from ..runtime import compression as _comp
from ..runtime import crc as _crc
from ..runtime._prim import Generated
from ..runtime.errors import EncodeError
from .batches import Record

try:  # the optional native loops (kafkacodec/records/_native_*.c); the generated builders are the reference
    from ._native import encode_legacy as _native_legacy
    from ._native import encode_v2_batch as _native_batch
    from ._native import encode_v2_records as _native_records
except ImportError:  # pragma: no cover - exercised when no compiler was available
    _native_records = _native_legacy = _native_batch = None

__all__ = ["build_batch", "build_message_set", "build_control_batch", "control_record"]

_TS_TYPES = {"CreateTime": 0, "LogAppendTime": 1}
#: compress(data, codec, magic), at the level the caller chose
Encoder = Callable[[bytes, int, int], bytes]


def _codec(compression: str | int, magic: int) -> int:
    """The codec id for a name (or id), checked against what this magic allows."""
    codec = compression if isinstance(compression, int) else _comp.CODEC_IDS.get(compression)
    if codec is None:
        raise EncodeError(
            f"unknown compression {compression!r} (one of {', '.join(_comp.CODEC_IDS)})"
        )
    try:
        _comp.check_codec(codec, magic)
    except _comp.UnsupportedCodecError as err:
        raise EncodeError(str(err)) from None
    return codec


def _base_offset(base_offset: int) -> int:
    if not isinstance(base_offset, int):
        raise EncodeError(f"base_offset must be an int, not {type(base_offset).__name__}")
    return base_offset


def _ts_type(name: str) -> int:
    try:
        return _TS_TYPES[name]
    except KeyError:
        raise EncodeError(
            f"unknown timestamp type {name!r} (CreateTime or LogAppendTime)"
        ) from None


_ATTRIBUTES: dict[tuple, int] = {}  # what _attributes made, by its arguments (a batch's flags)


def _attributes(cls: type[Generated], **values: int) -> int:
    """An attributes field that gives each named instance its value, through the bit
    fields the schema declares for them (the generated class's BITS)."""
    key = (cls, *values.items())
    try:
        return _ATTRIBUTES[key]
    except (KeyError, TypeError):  # not made yet, or a value that cannot be a key
        pass
    out = 0
    for name, value in values.items():
        _field, mask, shift = cls.BITS[name]
        if int(value) << shift & ~mask:
            raise EncodeError(
                f"{cls.__name__}.{name}: {int(value)} does not fit its bits {mask:#x}"
            )
        out |= int(value) << shift
    if len(_ATTRIBUTES) < 1024:  # a few combinations of flags, in practice
        try:
            _ATTRIBUTES[key] = out
        except TypeError:
            pass
    return out


def _as_record(r: Record | Mapping | tuple) -> Record:
    if isinstance(r, Record):
        return r
    try:
        if isinstance(r, Mapping):
            return Record(**r)
        if isinstance(r, tuple):
            return Record(*r)
    except TypeError as err:  # wrong fields, or headers that are not a list of pairs
        raise EncodeError(f"cannot use {type(r).__name__} {r!r:.60} as a record: {err}") from None
    raise EncodeError(f"cannot use {type(r).__name__} as a record (a Record, a mapping or a tuple)")


def _bytes(v: bytes | bytearray | memoryview | str | None, what: str) -> bytes | None:
    if v is None or isinstance(v, bytes):
        return v
    if isinstance(v, str):
        return v.encode("utf-8")
    if isinstance(v, (bytearray, memoryview)):
        return bytes(v)
    raise EncodeError(f"{what} must be bytes, str or None, not {type(v).__name__}")


def build_batch(
    records: Iterable,
    *,
    base_offset: int = 0,
    compression: str | int = "none",
    timestamp_type: str = "CreateTime",
    log_append_time: int | None = None,
    producer_id: int = -1,
    producer_epoch: int = -1,
    base_sequence: int = -1,
    is_transactional: bool = False,
    is_control: bool = False,
    partition_leader_epoch: int = -1,
    last_offset_delta: int | None = None,
    base_timestamp: int | None = None,
    max_timestamp: int | None = None,
    delete_horizon_ms: int | None = None,
    compression_level: int | None = None,
    gzip_os: int = _comp.GZIP_OS_JDK17,
) -> bytes:
    """Encode records as one v2 record batch (magic 2).

    Records are Record objects, mappings or tuples (offset, timestamp, key, value,
    headers); a record whose offset is None takes base_offset + its index. With
    LogAppendTime every timestamp becomes log_append_time, as a broker stamps it. The
    header fields Kafka derives (last offset delta, first and max timestamp) may be given
    to write a batch whose records were removed by compaction. compression_level is the
    codec's level in Kafka's range (compression.<codec>.level; None: Kafka's default);
    gzip_os GZIP_OS_JDK8 writes the gzip header of a broker or producer on JDK 8 or 11.
    """
    codec = _codec(compression, 2)
    encode = _encoder(codec, compression_level, gzip_os)
    base_offset = _base_offset(base_offset)
    ts_type = _ts_type(timestamp_type)
    if ts_type == 1 and log_append_time is None:
        raise EncodeError("LogAppendTime needs log_append_time")
    if (_native_batch is not None and base_timestamp is None and last_offset_delta is None
            and max_timestamp is None and delete_horizon_ms is None):  # fmt: skip
        # The whole batch in C when nothing in it needs converting or refusing: what the
        # generated builder would write from the native region below.
        if type(records) is not list:
            records = list(records)
        batch = _native_batch(
            records, base_offset, Record,
            _attributes(KafkaRecordBatch, compression=codec, timestamp_type=ts_type,
                        is_transactional=is_transactional, is_control=is_control,
                        has_delete_horizon=False),
            partition_leader_epoch, producer_id, producer_epoch, base_sequence,
            log_append_time if ts_type == 1 else None, encode, codec, _crc.NATIVE[0],
        )  # fmt: skip
        if batch is not None:
            return batch
    # Under LogAppendTime, Java Kafka keeps each record's own timestamp in its delta and
    # stamps only max_timestamp; readers report max_timestamp for every record.
    r = _records_region(records, base_offset, base_timestamp)
    region, records_region, num_records = r.region, r.records, r.num_records
    if base_timestamp is None:
        base_timestamp = r.first_timestamp if r.first_timestamp is not None else -1
    if delete_horizon_ms is not None:
        base_timestamp = delete_horizon_ms
    max_ts = log_append_time if ts_type == 1 else r.max_timestamp
    if region is None and encode is not _comp.kafka_compression_encode:
        # the generated builder compresses at Kafka's defaults: the region goes to encode
        region, records_region = (r.records or RecordList(records=[])).build(), None
    attributes = _attributes(
        KafkaRecordBatch, compression=codec, timestamp_type=ts_type,
        is_transactional=is_transactional, is_control=is_control,
        has_delete_horizon=delete_horizon_ms is not None,
    )  # fmt: skip
    batch = KafkaRecordBatch(
        base_offset=base_offset,
        partition_leader_epoch=partition_leader_epoch,
        magic=2,
        attributes=attributes,
        last_offset_delta=r.last_offset_delta if last_offset_delta is None else last_offset_delta,
        base_timestamp=base_timestamp,
        max_timestamp=max_ts if max_timestamp is None else max_timestamp,
        producer_id=producer_id,
        producer_epoch=producer_epoch,
        base_sequence=base_sequence,
        num_records=num_records,
        records_region=records_region,
        records_region_raw=None if region is None else encode(region, codec, 2),
    )
    return batch.build()


def _encoder(codec: int, level: int | None, gzip_os: int) -> Encoder:
    """compress(data, codec, magic) at level (checked here, before anything is encoded)."""
    if codec == _comp.NONE:
        return _comp.kafka_compression_encode
    _comp.check_level(codec, level)
    if gzip_os not in (_comp.GZIP_OS_JDK17, _comp.GZIP_OS_JDK8):
        raise EncodeError(f"gzip_os {gzip_os}: the JDK writes {_comp.GZIP_OS_JDK17} "
                          f"(JDK 16 and later) or {_comp.GZIP_OS_JDK8} (JDK 8 and 11)")  # fmt: skip
    if level is None and gzip_os == _comp.GZIP_OS_JDK17:
        return _comp.kafka_compression_encode

    def encode(data: bytes, codec: int, magic: int) -> bytes:
        return _comp.compress(codec, data, magic, level, gzip_os=gzip_os)

    return encode


class _Region(NamedTuple):
    """A v2 batch's records: encoded by the native loop (region), or as generated
    KafkaRecord objects (records), with what the header derives from them."""

    region: bytes | None
    records: RecordList | None
    num_records: int
    first_timestamp: int | None
    max_timestamp: int
    last_offset_delta: int


def _records_region(records: Iterable, base_offset: int, base_timestamp: int | None) -> _Region:
    if _native_records is not None:
        # The native loop takes Record objects and 5-tuples in Record's order (a producer's
        # plain data); other shapes (shorter tuples, mappings) become Records first, and
        # what it still leaves is for the generated builder to convert or refuse.
        if type(records) is not list:
            records = list(records)
        native = _native_records(records, base_offset, base_timestamp, Record)
        if native is None and any(type(r) is not Record for r in records):
            try:
                as_records = [r if type(r) is Record else _as_record(r) for r in records]
            except (TypeError, EncodeError):
                as_records = None
            if as_records is not None:
                records = as_records
                native = _native_records(records, base_offset, base_timestamp, Record)
        if native is not None:
            region, first_ts, max_ts, last_delta = native
            return _Region(region, None, len(records), first_ts, max_ts, last_delta)
    # No native loop, or values it leaves to the generated builder to convert or refuse.
    first_ts, max_ts, last_delta, kafka = _kafka_records(records, base_offset, base_timestamp)
    return _Region(None, RecordList(records=kafka), len(kafka), first_ts, max_ts, last_delta)


def _kafka_records(
    records: Iterable, base_offset: int, base_timestamp: int | None
) -> tuple[int | None, int, int, list[KafkaRecord]]:
    """The generated KafkaRecord objects for records, with the first and max timestamps
    and the last offset delta."""
    kafka_records = []
    first_ts = None
    max_ts = -1
    last_delta = -1
    for i, r in enumerate(map(_as_record, records)):
        offset = base_offset + i if r.offset is None else r.offset
        ts = r.timestamp
        for what, v in (("timestamp", ts), ("offset", offset)):
            if not isinstance(v, int) or isinstance(v, bool):
                raise EncodeError(f"record {i}: its {what} must be an int, not {type(v).__name__}")
        if first_ts is None:
            first_ts = ts
        if ts > max_ts:
            max_ts = ts
        delta = offset - base_offset
        last_delta = max(last_delta, delta)
        headers = [Header(key=k, value=_bytes(v, "a header value")) for k, v in r.headers]
        kafka_records.append(
            KafkaRecord(
                attributes=0,
                timestamp_delta=ts - (first_ts if base_timestamp is None else base_timestamp),
                offset_delta=delta,
                key=_bytes(r.key, "a key"),
                value=_bytes(r.value, "a value"),
                headers=headers,
            )
        )
    return first_ts, max_ts, last_delta, kafka_records


def control_record(
    control_type: int, coordinator_epoch: int = 0, *, offset: int | None = None, timestamp: int = -1
) -> Record:
    """A control record: key (version 0, type), and for ABORT (0) / COMMIT (1) the
    end-transaction marker value (version 0, coordinator epoch)."""
    key = KafkaControlRecordKey(version=0, type=control_type).build()
    value = None
    if control_type in (0, 1):
        value = KafkaEndTxnMarker(version=0, coordinator_epoch=coordinator_epoch).build()
    return Record(offset, timestamp, key, value)


def build_control_batch(
    commit: bool,
    *,
    offset: int,
    timestamp: int,
    producer_id: int,
    producer_epoch: int,
    coordinator_epoch: int = 0,
    partition_leader_epoch: int = -1,
) -> bytes:
    """An end-transaction marker batch (COMMIT or ABORT), as the coordinator writes it."""
    record = control_record(
        1 if commit else 0, coordinator_epoch, offset=offset, timestamp=timestamp
    )
    return build_batch(
        [record],
        base_offset=offset,
        producer_id=producer_id,
        producer_epoch=producer_epoch,
        is_transactional=True,
        is_control=True,
        partition_leader_epoch=partition_leader_epoch,
    )


def build_message_set(
    records: Iterable,
    *,
    magic: int = 1,
    compression: str | int = "none",
    base_offset: int = 0,
    timestamp_type: str = "CreateTime",
    log_append_time: int | None = None,
    compression_level: int | None = None,
    gzip_os: int = _comp.GZIP_OS_JDK17,
) -> bytes:
    """Encode records as a legacy message set (magic 0 or 1).

    Uncompressed: one entry per record. Compressed: one wrapper whose value is the
    compressed inner message set (magic 1 inner offsets relative 0..n-1, magic 0 absolute;
    the wrapper takes the last offset and, for CreateTime, the largest inner timestamp).
    """
    if magic not in (0, 1):
        raise EncodeError(f"legacy message sets have magic 0 or 1, not {magic}")
    codec = _codec(compression, magic)
    encode = _encoder(codec, compression_level, gzip_os)
    base_offset = _base_offset(base_offset)
    ts_type = _ts_type(timestamp_type) if magic == 1 else 0
    if ts_type == 1 and log_append_time is None:
        raise EncodeError("LogAppendTime needs log_append_time")
    ts_bit = _attributes(KafkaLegacyMessage, log_append_time_bit=ts_type)
    log_append = log_append_time if ts_type == 1 else None
    records = records if isinstance(records, list) else list(records)
    if _native_legacy is not None:
        # magic 1 wrappers carry inner offsets relative to the base offset (Java Kafka's)
        shift = base_offset if codec != _comp.NONE and magic == 1 else 0
        native = _native_legacy(records, magic, base_offset, shift, ts_bit, log_append, Record)
        if native is not None:
            inner, last_offset, max_ts = native
            if codec == _comp.NONE or not records:
                return inner
            wrapper_ts = None if magic == 0 else log_append if ts_bit else max_ts
            return _wrapper_message(inner, last_offset, magic, codec, ts_bit, wrapper_ts,
                                    encode).build()  # fmt: skip
    entries = []
    for i, r in enumerate([_as_record(r) for r in records]):
        offset = base_offset + i if r.offset is None else r.offset
        if r.headers:
            raise EncodeError("legacy messages (magic 0 and 1) cannot carry headers")
        ts = log_append if ts_type == 1 else r.timestamp
        if magic == 1 and not isinstance(ts, int):
            raise EncodeError(f"record {i}: a magic 1 message needs an int timestamp, not {ts!r:.40}")
        entries.append(
            KafkaLegacyMessage(
                offset=offset,
                magic=magic,
                attributes=ts_bit,
                timestamp=ts if magic == 1 else None,
                key=_bytes(r.key, "a key"),
                value=_bytes(r.value, "a value"),
            )
        )
    if codec == _comp.NONE:
        out = bytearray()
        for e in entries:
            e.build_into(out)
        return bytes(out)
    if not entries:
        return b""
    return _wrapper(entries, magic, codec, base_offset, ts_bit, log_append, encode)


def _wrapper(entries: list[KafkaLegacyMessage], magic: int, codec: int, base_offset: int,
             ts_bit: int, log_append_time: int | None, encode: Encoder) -> bytes:  # fmt: skip
    """The compressed wrapper of legacy messages: the last offset and, for CreateTime, the
    largest inner timestamp (Kafka's MemoryRecordsBuilder.writeLegacyCompressedWrapperHeader)."""
    last_offset = entries[-1].offset
    if magic == 1:
        for e in entries:  # Java Kafka writes inner offsets relative to the base offset
            e.offset -= base_offset
    wrapper_ts = None
    if magic == 1:
        wrapper_ts = log_append_time if ts_bit else max(e.timestamp for e in entries)
    return _wrapper_message(b"".join(e.build() for e in entries), last_offset, magic, codec, ts_bit,
                            wrapper_ts, encode).build()  # fmt: skip


def _wrapper_message(inner: bytes, last_offset: int, magic: int, codec: int, ts_bit: int,
                     wrapper_ts: int | None, encode: Encoder) -> KafkaLegacyMessage:  # fmt: skip
    """The wrapper of an inner message set's bytes, compressed by encode."""
    return KafkaLegacyMessage(
        offset=last_offset,
        magic=magic,
        attributes=_attributes(KafkaLegacyMessage, compression=codec) | ts_bit,
        timestamp=wrapper_ts,
        key=None,
        inner=None,
        inner_raw=encode(inner, codec, magic),
    )

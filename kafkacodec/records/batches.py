"""The public reading API: shallow iteration over batches of any magic, and records.

The batch classes subclass the generated ones (the schema's fields stay as they are) and
add what Kafka means by them: names for codecs and timestamp types, last offset and
sequence, validity, and records with absolute offsets and Kafka's timestamp rules.
"""

from __future__ import annotations

import contextlib
import mmap
import struct
import sys
from collections.abc import Iterable, Iterator
from typing import Any

from kafkacodec.generated.kafka_control_record_key import ControlRecordType, KafkaControlRecordKey
from kafkacodec.generated.kafka_end_txn_marker import KafkaEndTxnMarker
from kafkacodec.generated.kafka_legacy_message import KafkaLegacyMessage
from kafkacodec.generated.kafka_legacy_message import TimestampType as _LegacyTimestampType
from kafkacodec.generated.kafka_record import KafkaRecord
from kafkacodec.generated.kafka_record_batch import KafkaRecordBatch
from kafkacodec.generated.kafka_record_batch import TimestampType as _V2TimestampType

from ..runtime import compression as _comp
from ..runtime import crc as _crc
from ..runtime._prim import Generated
from ..runtime.errors import (
    CorruptRecordError,
    DecodeError,
    UnknownMagicError,
)

try:  # the optional native loops (kafkacodec/records/_native_*.c); the generated parser is the reference
    from ._native import Walker as _Walker
    from ._native import check_v2_records as _native_check
    from ._native import decode_legacy as _native_legacy
    from ._native import decode_v2_records as _native_records
    from ._native import keep_freed as _keep_freed
    from ._native import lazy_fields as _lazy_fields
    from ._native import native_legacy_records as _native_legacy_records
    from ._native import native_record_init as _native_record_init
except ImportError:  # pragma: no cover - exercised when no compiler was available
    _native_records = _native_legacy = _lazy_fields = _native_legacy_records = None
    _native_check = None
    _native_record_init = _keep_freed = None
    _Walker = None

#: Whether iter_batches walks natively (batches read lazily); False: the generated parsers.
_native_walk = _Walker is not None

__all__ = [
    "iter_batches", "BatchIterator", "RecordBatch", "LegacyBatch", "Record", "ControlInfo",
    "LOG_OVERHEAD", "TIMESTAMP_TYPES",
]  # fmt: skip

#: What the readers take: any buffer of bytes (a file's mmap, bytes, a memoryview).
BytesLike = bytes | bytearray | memoryview | mmap.mmap

LOG_OVERHEAD = 12  # offset (int64) + size (int32) before every batch or message
MIN_MESSAGE_OVERHEAD = 14  # Kafka's LegacyRecord.RECORD_OVERHEAD_V0, checked for every magic
#: The most bytes an inner message of a wrapper may declare (schemas/kafka_legacy_message.ksy,
#: inner_entry's length, whose `valid` tests/records/test_batches.py compares with this):
#: Integer.MAX_VALUE - 8, Kafka 4.4's DataLogInputStream maxRecordBodySize.
MAX_INNER_SIZE = 2147483639
#: Bytes of an entry up to and with its magic byte (Records.HEADER_SIZE_UP_TO_MAGIC).
HEADER_UP_TO_MAGIC = 17
#: Fewer bytes than this at the end of a file are not looked at (FileLogInputStream.nextBatch
#: returns null when `position >= end - HEADER_SIZE_UP_TO_MAGIC`).
_FILE_HEADER_MIN = HEADER_UP_TO_MAGIC + 1
#: Kafka's names (TimestampType.name) of the schemas' timestamp_type enums, by id: v2, and
#: legacy; and of the control record types (ControlRecordType). The schemas say them
#: (their enums' -orig-id): the generated enums' KAFKA_NAMES (ids 0, 1, ...: a tuple by id).
TIMESTAMP_TYPES = tuple(map(_V2TimestampType.KAFKA_NAMES.__getitem__, range(len(_V2TimestampType))))
LEGACY_TIMESTAMP_TYPES = tuple(map(_LegacyTimestampType.KAFKA_NAMES.__getitem__, range(len(_LegacyTimestampType))))
CONTROL_TYPES = dict(ControlRecordType.KAFKA_NAMES)
_PREFIX = struct.Struct(">qi")


class ControlInfo:
    """What a control record says: its type (ABORT, COMMIT, ...) and, for transaction
    markers, the coordinator epoch. Unknown types keep their number and name UNKNOWN."""

    __slots__ = ("type", "type_name", "version", "coordinator_epoch", "value_version")

    def __init__(self, type: int, version: int, coordinator_epoch: int | None = None,  # noqa: A002
                 value_version: int | None = None) -> None:  # fmt: skip
        self.type = type
        self.type_name = CONTROL_TYPES.get(type, "UNKNOWN")
        self.version = version
        self.coordinator_epoch = coordinator_epoch
        self.value_version = value_version

    def __repr__(self) -> str:
        epoch = (
            f", coordinator_epoch={self.coordinator_epoch}"
            if self.coordinator_epoch is not None
            else ""
        )
        return f"ControlInfo({self.type_name}, version={self.version}{epoch})"

    def __eq__(self, other: object) -> bool:
        if not isinstance(other, ControlInfo):
            return NotImplemented
        return (self.type, self.version, self.coordinator_epoch) == (
            other.type, other.version, other.coordinator_epoch,
        )  # fmt: skip


class Record:
    """A record as an application sees it: absolute offset, timestamp, key, value, headers
    (a list of (str, bytes | None)), and for control records `control`."""

    __slots__ = (
        "offset", "timestamp", "timestamp_type", "key", "value", "headers", "sequence",
        "control", "attributes",
    )  # fmt: skip

    def __init__(
        self, offset: int | None = None, timestamp: int = -1, key: bytes | None = None,
        value: bytes | None = None, headers: Iterable[tuple[str, bytes | None]] = (), *,
        timestamp_type: str = "CreateTime", sequence: int = -1, control: ControlInfo | None = None,
        attributes: int = 0,
    ) -> None:  # fmt: skip
        # None only in a record given to a builder, which numbers it; every record read
        # from data has its offset.
        self.offset: int = offset  # type: ignore[assignment]
        self.timestamp = timestamp
        self.timestamp_type = timestamp_type
        self.key = key
        self.value = value
        self.headers = list(headers)
        self.sequence = sequence
        self.control = control
        self.attributes = attributes

    def __repr__(self) -> str:
        extra = f", control={self.control!r}" if self.control is not None else ""
        return (
            f"Record(offset={self.offset}, timestamp={self.timestamp}, key={self.key!r}, "
            f"value={self.value!r}, headers={self.headers!r}{extra})"
        )

    def __eq__(self, other: object) -> bool:
        if not isinstance(other, Record):
            return NotImplemented
        return (
            self.offset, self.timestamp, self.key, self.value, self.headers, self.control,
        ) == (other.offset, other.timestamp, other.key, other.value, other.headers, other.control)  # fmt: skip

    __hash__ = None  # type: ignore[assignment]  # mutable: not hashable


def bit_field(cls: type[Generated], name: str, attributes: Any) -> Any:
    """The value of cls's instance `name`, a bit field of attributes (the schema's BITS), in
    attributes: an int, or a numpy array of them. The compression bits are the same in
    the v2 and legacy schemas (tests/records/test_columnar.py), so KafkaRecordBatch's
    serve entries of every magic."""
    _field, mask, shift = cls.BITS[name]
    return (attributes & mask) >> shift


def _located(
    err: DecodeError, where: str, shift: int = 0, source: str | None = None
) -> DecodeError:
    """Say where a record-level error lies: the batch (byte position, offset), the file."""
    if shift:
        err.shift(shift)
    err.within(where)
    return err.with_source(source) if source else err


# --------------------------------------------------------------------------------- v2


class RecordBatch(KafkaRecordBatch):
    """A v2 record batch (magic 2) found by iter_batches."""

    __slots__ = ("position", "_buf", "_records", "source")
    position: int
    _buf: memoryview
    _records: list[Record] | None
    source: str | None

    @property
    def timestamp_type(self) -> str:  # Kafka's name of the enum
        """Kafka's name of the batch's timestamp type: "CreateTime" or "LogAppendTime"."""
        return TIMESTAMP_TYPES[super().timestamp_type]

    @property
    def count(self) -> int:
        return self.num_records

    @property
    def size(self) -> int:
        """The batch's bytes in the log, its 12-byte offset and length prefix included."""
        return self.len_batch + LOG_OVERHEAD

    @property
    def last_sequence(self) -> int:
        """The sequence number of the last record (wrapping past int32's largest, as Kafka's
        DefaultRecordBatch.lastSequence), -1 without a producer sequence."""
        if self.base_sequence == -1:
            return -1
        seq = self.base_sequence + self.last_offset_delta
        return seq - 0x80000000 if seq > 0x7FFFFFFF else seq

    @property
    def delete_horizon_ms(self) -> int | None:
        """The delete horizon (KIP-534: when the log cleaner may drop the batch's tombstones and
        markers), which then takes base_timestamp's place; None when the batch has none."""
        return self.base_timestamp if self.has_delete_horizon else None

    @property
    def is_valid(self) -> bool:
        """Kafka's isValid: the size holds a header and the CRC-32C matches."""
        return self.crc_matches(self._buf)

    def records(self, *, verify_crc: bool = True, max_inflated: int | None = None) -> list[Record]:
        """Decode the records (decompressing them first); offsets are absolute."""
        recs = self._records
        if recs is not None:
            return recs
        attributes = self.attributes
        codec = attributes & 7
        try:
            raw = self.records_region_raw
            data = self._region(raw, max_inflated)
            if self.num_records == 0:
                self._records = []
                return self._records
        except DecodeError as err:
            raise _located(err, self._where(), 0, getattr(self, "source", None)) from None
        try:
            recs = _decode_records(self, data, attributes)
        except DecodeError as err:
            where = self._where()
            shift = self.position + self.size - len(raw) if codec == _comp.NONE else 0
            if codec != _comp.NONE:
                where = f"decompressed {where} (positions inside the decompressed data)"
            raise _located(err, where, shift, getattr(self, "source", None)) from None
        self._records = recs
        return recs

    def record_count(self, *, max_inflated: int | None = None) -> int:
        """How many records the batch holds, each judged as records() judges it (the same
        DecodeError when one is not right), without making them when nothing else is asked
        (verify's count): a native check of every record's framing, where it applies."""
        if self._records is None and _native_check is not None and not self.is_control and self.num_records:
            try:
                data = self._region(self.records_region_raw, max_inflated)
            except DecodeError:
                pass  # records() raises it, located
            else:
                if _native_check(data, self.num_records):
                    return self.num_records
        return len(self.records(max_inflated=max_inflated))

    def _region(self, raw: BytesLike, max_inflated: int | None) -> BytesLike:
        """The records region, decompressed (raw: its bytes as stored), through the schema's
        process with the batch's record count: of a region said to hold no record, Kafka reads
        the codec's head alone (DefaultRecordBatch), and nothing comes out."""
        return _comp.kafka_compression_decode(raw, self.attributes & 7, 2, self.num_records, max_inflated)

    def iter_records(self, *, max_inflated: int | None = None) -> Iterator[Record]:
        """The records one at a time, as Kafka's batch iterator reads them for a search
        (LogSegment.findOffsetByTimestamp): one that stops at its answer never reads past
        it. A damaged record, or a count the records region cannot hold, is raised only
        when the walk reaches it (records() decodes, and judges, the whole batch first)."""
        try:
            recs = self.records(max_inflated=max_inflated)
        except DecodeError as err:
            failed = err
        else:
            yield from recs
            return
        attributes = self.attributes
        try:
            data = self._region(self.records_region_raw, max_inflated)
        except DecodeError:
            raise failed from None
        ts_type = TIMESTAMP_TYPES[bit_field(KafkaRecordBatch, "timestamp_type", attributes)]
        try:
            for rec in _iter_parsed(self, bytes(data), ts_type):
                if self.is_control:
                    rec.control = parse_control(rec.key, rec.value)
                yield rec
        except DecodeError:
            raise failed from None
        raise failed

    def kafka_records(self, *, max_inflated: int | None = None) -> tuple[list[Record], DecodeError | None]:
        """The records as Kafka's DefaultRecordBatch.iterator() hands them to a reader that
        prints each as it comes (kafka-dump-log), with the error it stops at (None: none):
        an uncompressed batch's records are read one at a time (uncompressedIterator), so
        those before a damaged one come, and the last one only once nothing remains after
        it ("Incorrect declared batch size, records still remaining"); a compressed batch's
        are all read first (compressedIterator into a list), so all come or none. A control
        record's key is read where the whole batch reads (`control`); where one does not,
        the keys are left to the caller (ControlRecordType.parse is its reader's): `control`
        is None on each."""
        try:
            return self.records(verify_crc=False, max_inflated=max_inflated), None
        except DecodeError as err:
            failed = err
        if self.attributes & 7 != _comp.NONE:
            try:
                data = self._region(self.records_region_raw, max_inflated)
                ts_type = TIMESTAMP_TYPES[bit_field(KafkaRecordBatch, "timestamp_type", self.attributes)]
                return _parse_records(self, bytes(data), ts_type), None  # a control batch's keys failed
            except DecodeError:
                return [], failed
        ts_type = TIMESTAMP_TYPES[bit_field(KafkaRecordBatch, "timestamp_type", self.attributes)]
        out: list[Record] = []
        stop: list[int] = []
        data = bytes(self.records_region_raw)
        try:
            for rec in _iter_parsed(self, data, ts_type, stop):
                out.append(rec)
        except DecodeError:
            return out, failed
        if stop[0] != len(data):  # the last record is refused as it is read
            return out[:-1], failed
        return out, None  # (what failed was a control record's key)

    def _where(self) -> str:
        return f"records of the batch at byte {self.position} (base offset {self.base_offset})"


def _iter_parsed(batch: RecordBatch, data: bytes, ts_type: str,
                 stop: list[int] | None = None) -> Iterator[Record]:  # fmt: skip
    """The records of a records region, parsed one at a time (the generated parser), as
    far as the region holds them; `stop` is told where the last one ends."""
    base_offset, base_ts, max_ts = batch.base_offset, batch.base_timestamp, batch.max_timestamp
    log_append = ts_type == "LogAppendTime"
    base_seq = batch.base_sequence
    pos, end = 0, len(data)
    for _ in range(batch.num_records):
        r, pos = KafkaRecord.parse(data, pos, end)
        delta = r.offset_delta
        yield Record(
            base_offset + delta, max_ts if log_append else base_ts + r.timestamp_delta, r.key,
            r.value, [(h.key, h.value) for h in r.headers] if r.headers else [],
            timestamp_type=ts_type,
            sequence=-1 if base_seq == -1 else (base_seq + delta) & 0x7FFFFFFF,
            attributes=r.attributes,
        )  # fmt: skip
    if stop is not None:
        stop.append(pos)


def _decode_records(batch: RecordBatch, data: BytesLike, attributes: int) -> list[Record]:
    ts_type = TIMESTAMP_TYPES[bit_field(KafkaRecordBatch, "timestamp_type", attributes)]
    log_append = ts_type == "LogAppendTime"
    out = None
    if _native_records is not None:
        out = _native_records(
            data, batch.num_records, batch.base_offset, batch.base_timestamp,
            batch.max_timestamp if log_append else None, batch.base_sequence, ts_type, Record,
        )  # fmt: skip
    if out is None:  # no native loop, or data it does not accept: the generated parser decides
        out = _parse_records(batch, bytes(data), ts_type)
    if batch.is_control:
        for rec in out:
            rec.control = parse_control(rec.key, rec.value)
    return out


def _parse_records(batch: RecordBatch, data: bytes, ts_type: str) -> list[Record]:
    """The records region through the generated parser, which names any error precisely."""
    n = batch.num_records
    end = len(data)
    if n * KafkaRecord.MIN_SIZE > end:
        raise CorruptRecordError(
            f"records count {n} cannot fit in {end} bytes of records",
            0,
            "kafka_record_batch /seq/12",
        )
    stop: list[int] = []
    out = list(_iter_parsed(batch, data, ts_type, stop))
    if stop[0] != end:
        raise CorruptRecordError(
            f"{end - stop[0]} bytes remain after the {n} records the batch declares", stop[0]
        )
    return out


def parse_control(key: bytes | None, value: bytes | None) -> ControlInfo:
    """Read a control record's key (and, for ABORT/COMMIT, its end-transaction marker), as
    Kafka does (ControlRecordType.parse; EndTransactionMarker.deserialize, which a broker's
    producer state, DumpLogSegments and read_committed consumers use): bytes after what they
    read are not looked at."""
    if key is None:
        raise CorruptRecordError("a control record has a null key")
    k = KafkaControlRecordKey.parse(key, 0, len(key))[0]
    info = ControlInfo(int(k.type), k.version)
    if info.type in (0, 1):
        if value is None:
            raise CorruptRecordError("an end transaction marker has a null value")
        marker = KafkaEndTxnMarker.parse(value, 0, len(value))[0]
        info.coordinator_epoch = marker.coordinator_epoch
        info.value_version = marker.version
    return info


# ----------------------------------------------------------------------------- legacy


class LegacyBatch(KafkaLegacyMessage):
    """A top-level magic 0 or 1 message (Kafka's legacy "batch"): one message, or a
    compressed wrapper whose records are its inner messages."""

    __slots__ = ("position", "_buf", "_records", "source")
    position: int
    _buf: memoryview
    _records: list[Record] | None
    source: str | None

    producer_id = -1
    producer_epoch = -1
    base_sequence = -1
    last_sequence = -1
    partition_leader_epoch = -1
    is_transactional = False
    is_control = False
    count = None  # Kafka's countOrNull(): unknown without decompressing

    @property
    def timestamp_type(self) -> str:  # Kafka's name of the enum
        """Kafka's name of the message's timestamp type: "NoTimestampType" (magic 0),
        "CreateTime" or "LogAppendTime"."""
        return LEGACY_TIMESTAMP_TYPES[super().timestamp_type]

    @property
    def max_timestamp(self) -> int:
        """The message's timestamp, as a batch's largest (-1 for magic 0, which has none)."""
        return -1 if self.magic == 0 else self.timestamp

    @property
    def last_offset(self) -> int:
        return self.offset

    @property
    def base_offset(self) -> int:
        """Offset of the first record; for a wrapper this decompresses it and walks its
        inner messages' offsets and sizes (records() reads their contents)."""
        if self.compression == _comp.NONE:
            return self.offset
        recs = self._records
        if recs is not None:
            return recs[0].offset if recs else self.offset
        heads = self._heads()
        return self.offset if heads is None else heads[0]

    def count_records(self) -> int:
        """How many records the message holds: 1, or a wrapper's inner messages, counted
        from their heads (records() decodes them; Kafka's countOrNull() says null)."""
        if self.compression == _comp.NONE:
            return 1
        recs = self._records
        if recs is not None:
            return len(recs)
        heads = self._heads()
        return 0 if heads is None else heads[1]

    def _heads(self) -> tuple[int, int] | None:
        try:
            return _wrapper_heads(self)
        except DecodeError as err:
            source = getattr(self, "source", None)
            raise (err.with_source(source) if source else err) from None

    @property
    def size(self) -> int:
        """The message's bytes in the log, its 12-byte offset and length prefix included."""
        return self.len_message + LOG_OVERHEAD

    @property
    def is_valid(self) -> bool:
        """Whether the message's stored CRC-32 matches its bytes."""
        return self.crc_matches(self._buf)

    def record_count(self, *, max_inflated: int | None = None) -> int:
        """How many records the message holds (itself, or a wrapper's inner messages), each
        judged as records() judges it."""
        return len(self.records(max_inflated=max_inflated))

    def records(self, *, verify_crc: bool = True, max_inflated: int | None = None) -> list[Record]:
        """The message itself, or a wrapper's inner messages with absolute offsets.

        With the native extension this is a method in C (native_legacy_records) that reads
        an uncompressed message's record from its bytes and comes here for the rest."""
        recs = self._records
        if recs is not None:
            return recs
        if self.attributes & 7 == _comp.NONE:
            buf = getattr(self, "_buf", None)
            if _native_legacy is not None and buf is not None:  # from its bytes
                recs = _native_legacy(buf, self.position, -1, None, None, Record,
                                      LEGACY_TIMESTAMP_TYPES)  # fmt: skip
            if recs is None:
                ts = -1 if self.magic == 0 else self.timestamp
                recs = [
                    Record(
                        self.offset,
                        ts,
                        _b(self.key),
                        _b(self.value),
                        timestamp_type=self.timestamp_type,
                        attributes=self.attributes,
                    )  # fmt: skip
                ]
        else:
            try:
                recs = _inner_records(self, verify_crc, max_inflated)
            except DecodeError as err:
                source = getattr(self, "source", None)
                raise (err.with_source(source) if source else err) from None
        self._records = recs
        return recs

    def iter_records(self, *, max_inflated: int | None = None) -> Iterator[Record]:
        """The records, for a search (RecordBatch.iter_records): a legacy entry's inner
        messages are decoded together, as Kafka decompresses a wrapper whole."""
        yield from self.records(max_inflated=max_inflated)


def _b(v: bytes | memoryview | None) -> bytes | None:
    return None if v is None else bytes(v)


_INNER_HEAD = struct.Struct(">qi")  # an inner message's offset and size


def _inner_entries(data: BytesLike) -> Iterator[tuple[int, int, int]]:
    """(position, offset, size) of each message of a wrapper's decompressed inner set, as
    Kafka's AbstractLegacyRecordBatch.DataLogInputStream finds them: the set ends at the
    end of the data or at an entry the data does not hold whole (fewer than 12 bytes, or
    fewer than its length says), which Kafka drops; a length below 14 is corrupt."""
    pos, end = 0, len(data)
    while end - pos >= LOG_OVERHEAD:
        offset, size = _INNER_HEAD.unpack_from(data, pos)
        if size < MIN_MESSAGE_OVERHEAD:
            raise CorruptRecordError(
                f"an inner message declares {size} bytes, less than the minimum record "
                f"overhead ({MIN_MESSAGE_OVERHEAD})", pos + 8,
            )  # fmt: skip
        if size > MAX_INNER_SIZE:  # checked before the bytes are read (DataLogInputStream.nextBatch)
            raise CorruptRecordError(
                f"an inner message declares {size} bytes, more than Kafka reads ({MAX_INNER_SIZE})", pos + 8
            )
        if end - pos - LOG_OVERHEAD < size:
            return
        yield pos, offset, size
        pos += LOG_OVERHEAD + size


def _wrapper_heads(wrapper: LegacyBatch) -> tuple[int, int] | None:
    """A wrapper's first absolute offset (Kafka's AbstractLegacyRecordBatch.baseOffset: the
    first inner record's) and its inner messages' count (None: it holds none), from their
    heads alone (offset and size): no Record per inner message, so a wrapper inflating to
    many tiny messages costs its inflated bytes only."""
    where = f"inner messages of the wrapper at byte {wrapper.position} (offset {wrapper.offset})"
    raw = wrapper.inner_raw
    if raw is None:
        raise CorruptRecordError("a compressed wrapper has a null value", wrapper.position).within(
            where
        )
    first = last = None
    count = 0
    try:
        data = _comp.decompress(wrapper.attributes & 7, raw, wrapper.magic)
        for pos, offset, _size in _inner_entries(data):
            if data[pos + LOG_OVERHEAD + 5] & 7 != _comp.NONE:
                raise CorruptRecordError(
                    "a compressed message inside a compressed wrapper (Kafka allows one level)", pos
                )
            if first is None:
                first = offset
            last = offset
            count += 1
    except DecodeError as err:
        raise _located(err, f"decompressed {where}") from None
    if first is None or last is None:
        return None
    if wrapper.magic == 0 or wrapper.offset == 0:  # as _inner_records: offsets as they are
        return first, count
    if wrapper.offset < last:
        raise CorruptRecordError(
            f"wrapper offset {wrapper.offset} is smaller than its last inner offset {last}",
            wrapper.position,
        ).within(where)
    return wrapper.offset - last + first, count


def _inner_records(
    wrapper: LegacyBatch, verify_crc: bool, max_inflated: int | None
) -> list[Record]:
    """A wrapper's inner messages as records, with Kafka's rules (AbstractLegacyRecordBatch's
    DeepRecordsIterator, as a consumer reads them): the set read as DataLogInputStream reads
    it (_inner_entries), any inner magic (magic 0's layout, or magic 1's for any other
    value), one level of compression, no empty wrapper, magic 1 inner offsets relative to
    the last one unless the wrapper's offset is 0; each record takes its wrapper's
    timestamp type, and its timestamp is the wrapper's for a magic 1 message in a
    LogAppendTime wrapper, none for magic 0, else its own."""
    where = f"inner messages of the wrapper at byte {wrapper.position} (offset {wrapper.offset})"
    if wrapper.inner_raw is None:
        raise CorruptRecordError("a compressed wrapper has a null value", wrapper.position).within(
            where
        )
    log_append = wrapper.timestamp_type == "LogAppendTime"
    if _native_legacy is not None:
        try:
            data = _comp.decompress(wrapper.attributes & 7, wrapper.inner_raw, wrapper.magic,
                                    max_inflated)  # fmt: skip
        except DecodeError as err:
            raise _located(err, f"decompressed {where}") from None
        recs = _native_legacy(
            data, 0, len(data), (wrapper.offset, wrapper.magic, wrapper.timestamp if log_append else None),
            _crc.NATIVE[1] if verify_crc else None, Record, LEGACY_TIMESTAMP_TYPES,
        )  # fmt: skip
        if recs:
            return recs
    # the generated parser, which names what is wrong
    try:
        entries = wrapper.read_inner(max_size=max_inflated, verify=verify_crc).entries
    except DecodeError as err:
        raise _located(err, f"decompressed {where}") from None
    inner = [e.message for e in entries if e.message is not None]
    if not inner:
        # Kafka refuses it: AbstractLegacyRecordBatch.DeepRecordsIterator, "Found invalid
        # compressed record set with no inner records" (InvalidRecordException)
        raise CorruptRecordError("a compressed wrapper holds no inner records", wrapper.position).within(where)
    for msg in inner:
        if msg.compression != _comp.NONE:
            raise CorruptRecordError(
                "a compressed message inside a compressed wrapper (Kafka allows one level)",
                wrapper.position,
            ).within(where)
    magic = wrapper.magic
    base = 0
    if magic >= 1:
        last_inner = inner[-1].offset
        if wrapper.offset == 0:
            base = 0
        elif wrapper.offset < last_inner:
            raise CorruptRecordError(
                f"wrapper offset {wrapper.offset} is smaller than its last inner offset {last_inner}",
                wrapper.position,
            ).within(where)
        else:
            # exact: an offset past 2^63 stays the sum (Kafka's long would wrap it), as a
            # v2 record's does; the columns refuse it
            base = wrapper.offset - last_inner
    ts_type = wrapper.timestamp_type
    out = []
    for msg in inner:
        if msg.magic == 0:
            ts = -1
        elif msg.magic == 1 and log_append:
            ts = wrapper.timestamp
        else:
            ts = msg.timestamp
        out.append(
            Record(
                base + msg.offset,
                ts,
                _b(msg.key),
                _b(msg.value),
                timestamp_type=ts_type,
                attributes=msg.attributes,
            )
        )
    return out


# -------------------------------------------------------------------------- iteration


def byte_view(data: BytesLike) -> memoryview:
    """A flat view of unsigned bytes over any buffer (bytes, bytearray, mmap, memoryview)."""
    view = data if isinstance(data, memoryview) else memoryview(data)
    if view.ndim != 1 or view.itemsize != 1:
        view = view.cast("B")
    return view


class _PyWalker:
    """The walk in Python, where the native one is not built: every entry goes to the
    generated parsers (BatchIterator._slow_next)."""

    def __init__(self, view: memoryview, start: int, end: int, verify_crc: bool,
                 source: str | None, *_native: Any) -> None:  # fmt: skip
        if not 0 <= start <= len(view) or end < start:
            raise ValueError("start and end must lie inside data")
        self._view = view
        self.position = start
        self.end = min(end, len(view))
        self.verify_crc = verify_crc
        self.source = source
        self.batches = 0

    def __iter__(self) -> _PyWalker:
        return self

    def __next__(self) -> RecordBatch | LegacyBatch:
        return self._slow_next()  # type: ignore[attr-defined]


class BatchIterator(_Walker or _PyWalker):  # type: ignore[misc]
    """Iterates the batches of a buffer; after it ends, `position` is where it stopped and
    `remaining` how many bytes were left there (a partial entry at the end, or 0).

    Where the entries end is Kafka's rule for the kind of data (`file`): a buffer (a fetch
    response, a produce request, any bytes: MemoryRecords) is walked as Kafka's
    ByteBufferLogInputStream.nextBatchSize walks it, a log segment (file=True) as
    FileLogInputStream.nextBatch does. They differ only at a trailing entry that is not
    all there: the buffer's walk refuses a length below 14 once the 12 bytes up to it are
    there and an invalid magic once the 17 up to it are, before asking whether the entry
    is whole; the file's walk looks at nothing in fewer than 18 bytes, refuses a length
    below 14, and ends at an entry the file does not hold whole whatever its magic.

    The native walk (kafkacodec/records/_native_walk.c, Walker) checks each entry as the generated parsers
    do, its CRC too, and yields batches whose fields are read from their bytes on first
    access; any entry it does not take whole (damaged, partial, an unknown magic) comes
    here, to _slow_next, where the generated parser reads it or raises the precise error."""

    position: int
    end: int
    batches: int
    verify_crc: bool
    source: str | None
    file: bool
    _view: memoryview

    def __init__(self, data: BytesLike, *, verify_crc: bool = True, source: str | None = None,
                 start: int = 0, end: int | None = None, file: bool = False) -> None:  # fmt: skip
        view = byte_view(data)
        super().__init__(
            view, start, len(view) if end is None else end, verify_crc, source, RecordBatch,
            LegacyBatch, *_crc.NATIVE, _native_walk,
        )  # fmt: skip
        self.file = file

    @property
    def remaining(self) -> int:
        """Bytes from where the walk stopped to the end: a partial entry at the end of the data
        (0 when it read everything)."""
        return self.end - self.position

    def _slow_next(self) -> RecordBatch | LegacyBatch:
        view = self._view
        pos = self.position
        end = self.end
        left = end - pos
        try:
            if left < (_FILE_HEADER_MIN if self.file else LOG_OVERHEAD):
                raise StopIteration
            _offset, size = _PREFIX.unpack_from(view, pos)
            if size < MIN_MESSAGE_OVERHEAD:
                raise CorruptRecordError(
                    f"record size {size} is less than the minimum record overhead ({MIN_MESSAGE_OVERHEAD})",
                    pos + 8,
                )
            whole = left >= size + LOG_OVERHEAD
            if not whole and (self.file or left < HEADER_UP_TO_MAGIC):
                raise StopIteration
            magic = view[pos + 16]
            if magic not in (0, 1, 2):
                signed = magic - 256 if magic > 127 else magic
                raise UnknownMagicError(f"invalid magic {signed} (known: 0, 1, 2)", pos + 16)
            if not whole:
                raise StopIteration
            if magic == 2:
                batch, nxt = RecordBatch.parse(
                    view, pos, pos + size + LOG_OVERHEAD, verify=self.verify_crc
                )
            else:
                batch, nxt = LegacyBatch.parse(
                    view, pos, pos + size + LOG_OVERHEAD, verify=self.verify_crc
                )
        except DecodeError as err:
            if self.source:
                err.with_source(self.source)
            raise
        batch.position = pos
        batch._buf = view
        batch._records = None
        batch.source = self.source
        self.position = nxt
        self.batches += 1
        return batch


def iter_batches(
    data: BytesLike, *, verify_crc: bool = True, source: str | None = None, file: bool = False
) -> BatchIterator:
    """Shallow iteration over a buffer (bytes, bytearray, memoryview, mmap) holding any mix
    of magic 0, 1 and 2 entries. Records are not decoded (see batch.records()). A partial
    entry at the end ends the iteration without an error: the iterator's `position` and
    `remaining` then say where and how many bytes are left. As Kafka reads a buffer
    (ByteBufferLogInputStream), a partial entry whose length is below 14 or whose magic is
    invalid is refused first; with file=True the data is walked as Kafka walks a log
    segment (FileLogInputStream), which ends at any partial entry (BatchIterator). With
    verify_crc, a batch whose CRC does not match raises ChecksumError; without it,
    batch.is_valid tells."""
    return BatchIterator(data, verify_crc=verify_crc, source=source, file=file)


if _lazy_fields is not None:  # the native walk's batches read their fields when asked
    _lazy_fields(RecordBatch, "v2")
    _lazy_fields(LegacyBatch, "legacy")
#: Record.__init__ in Python: the reference, which the C method mirrors (its parameters and
#: defaults are read from this one).
record_init_reference = Record.__init__
if _native_record_init is not None:  # a producer makes one Record a message
    _native_record_init(Record)
if _keep_freed is not None:  # made and freed by the million: freed ones are reused
    for _cls in (Record, RecordBatch, LegacyBatch):
        _keep_freed(_cls)

#: LegacyBatch.records in Python: the reference, and what the C method calls for the rest.
legacy_records_reference = LegacyBatch.records
if _native_legacy_records is not None:  # a plain legacy message's record, straight in C
    _native_legacy_records(LegacyBatch, legacy_records_reference, Record, LEGACY_TIMESTAMP_TYPES)


@contextlib.contextmanager
def reference_parsers() -> Iterator[None]:
    """Within it, the records layer without its native loops: every entry read by the
    generated parsers (the reference the native walk and record loops are held to: the
    tests, and the fuzz run's kafkacodec-python target). Not thread-safe: it switches
    module state."""
    module = sys.modules[__name__]
    switches = ("_native_walk", "_native_legacy", "_native_records")
    saved = [getattr(module, name) for name in switches]
    saved_method = LegacyBatch.records
    for name in switches:
        setattr(module, name, None if name != "_native_walk" else False)
    LegacyBatch.records = legacy_records_reference  # type: ignore[method-assign]
    try:
        yield
    finally:
        for name, value in zip(switches, saved):
            setattr(module, name, value)
        LegacyBatch.records = saved_method  # type: ignore[method-assign]

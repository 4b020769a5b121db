"""Rebuilding batches from their decoded fields, as Kafka's writers write them.

A v2 batch is decoded to its header fields and its records' fields (attributes, deltas,
key, value, headers), then written again: records as DefaultRecord.writeTo writes them,
the region compressed as Kafka's codecs compress it, lengths and CRC computed. A legacy
message is rebuilt from its offset, magic, attributes, timestamp, key and value; a wrapper
from its inner messages. For data Kafka wrote, the result is the same bytes; a batch that
comes out different was written by something else (another client library, another codec
build), and the first differing byte says where.

Options change what is written, never an offset:
- a codec (and level) recompresses every batch; a control batch written uncompressed
  stays so (LogValidator: "Do not compress control records unless they are written
  compressed");
- magic 2 converts legacy message sets as Kafka's LogValidator converts them on append
  (convertAndAssignOffsetsNonCompressed, buildRecordsAndAssignOffsets): a compressed
  wrapper becomes one v2 batch of its inner records; a run of uncompressed messages (one
  produce request's worth; the requests' bounds are not on disk, so runs end at
  `batch_bytes`) becomes one batch. Records keep their offsets, timestamps, keys and
  values; magic 0 records have no timestamp (-1). A LogAppendTime source stays
  LogAppendTime, stamped with the time its broker stamped. Producer id, epoch and sequence
  are -1 (a legacy batch has none: RecordBatch.NO_PRODUCER_ID) and the batch is not
  transactional. The partition leader epoch is the one the partition's
  leader-epoch-checkpoint gives for the batch's first offset (the leader's, as the broker
  stamps it on append), else -1.

Where no codec is given (each batch keeps its own), the level that reproduces the source
is looked for: the last one that did, then Kafka's default, then the others in
Kafka's range (nothing in a batch records its level); a gzip payload keeps the JDK its
header names (8/11 or 16+).
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Iterator
from dataclasses import dataclass

from kafkacodec.generated.kafka_legacy_message import KafkaLegacyMessage
from kafkacodec.generated.kafka_record_batch import KafkaRecordBatch, RecordList

from ..runtime import compression as _comp
from ..runtime.errors import CorruptRecordError, DecodeError, EncodeError
from .batches import LegacyBatch, Record, RecordBatch
from .builders import build_batch, build_message_set

try:  # the optional native loop (kafkacodec/records/_native_*.c); the generated parser and builder are the reference
    from ._native import reencode_v2_records as _native_reencode
except ImportError:  # pragma: no cover - exercised when no compiler was available
    _native_reencode = None

__all__ = ["Rebuilt", "Rebuilder", "rebuild_region", "first_difference", "DEFAULT_BATCH_BYTES"]

Batch = RecordBatch | LegacyBatch

#: How many bytes of uncompressed legacy messages become one batch when they are converted
#: or compressed: the producer's default batch.size, the most one legacy producer request
#: carried per partition by default.
DEFAULT_BATCH_BYTES = 16384
#: After this many batches of one codec that no level reproduces, the search stops (the
#: partition was written by something else; every batch would cost a search).
_SEARCH_GIVE_UP = 3
_ZSTD_SEARCH = (*range(1, 23), -1, -2, -3, -4, -5)  # the levels producers use, in order

_MASK = KafkaRecordBatch.BITS["compression"][1]
_LEGACY_MASK = KafkaLegacyMessage.BITS["compression"][1]
_LOG_APPEND_BIT = KafkaLegacyMessage.BITS["log_append_time_bit"][1]


@dataclass(slots=True)
class Rebuilt:
    """One batch written, and the source entries it replaces."""

    data: bytes
    position: int  #: where the first source entry was
    size: int  #: the source entries' bytes
    entries: int  #: source batches (or legacy messages) it replaces
    records: int
    first_offset: int
    last_offset: int
    max_timestamp: int
    identical: bool  #: data is the source's bytes
    difference: int | None  #: the first differing byte's position in the source, if any
    level: int | None = None  #: the level that reproduced a compressed source


def first_difference(a, b) -> int:
    """The index of the first byte where a and b differ (len of the shorter one when one
    is the other's prefix); a and b differ."""
    lo, hi = 0, min(len(a), len(b))
    if a[:hi] == b[:hi]:
        return hi
    while hi - lo > 1:  # a[:lo] == b[:lo], a[:hi] != b[:hi]
        mid = (lo + hi) // 2
        if a[lo:mid] == b[lo:mid]:
            lo = mid
        else:
            hi = mid
    return lo


def rebuild_region(region, count: int) -> bytes:
    """A v2 records region rebuilt from its count records' decoded fields (DecodeError,
    located in the region, when it does not hold exactly count records). A count of 0 is no
    record, whatever the region holds (Kafka reads none of it: DefaultRecordBatch)."""
    if count == 0:
        return b""
    if _native_reencode is not None:
        out = _native_reencode(region, count)
        if out is not None:
            return out
    records, pos = RecordList.parse(region, 0, len(region), num_records=count)
    if pos != len(region):
        raise CorruptRecordError(
            f"{len(region) - pos} bytes follow the batch's {count} records", pos
        ).within("the records region")
    return records.build()


class _Levels:
    """The level search of one codec: the level that last reproduced a batch comes first."""

    __slots__ = ("hint", "misses")

    def __init__(self) -> None:
        self.hint: int | None = None
        self.misses = 0

    def candidates(self, codec: int) -> Iterator[int]:
        """The levels to try, in order (made as they are asked for: the first usually
        reproduces the batch)."""
        levels = _comp.LEVELS[codec]
        hint = self.hint
        if hint is not None and hint != levels.default:
            yield hint
        yield levels.default
        if self.misses < _SEARCH_GIVE_UP:
            rest = _ZSTD_SEARCH if codec == _comp.ZSTD else range(levels.low, levels.high + 1)
            yield from (lv for lv in rest if lv != levels.default and lv != hint)


class Rebuilder:
    """Rebuild a segment's batches (in order, from one walk).

    compression: a codec name or id to recompress every batch with (None: each batch's
    own); level: its level (None: Kafka's default, or for a batch's own codec the level
    that reproduces it); magic: 2 to convert legacy message sets (None: keep each entry's);
    gzip_os: the gzip header's JDK (None: the source's, else JDK 16+);
    epoch_for(offset): the leader epoch to stamp on converted batches.
    """

    def __init__(self, *, compression: str | int | None = None, level: int | None = None,
                 magic: int | None = None, gzip_os: int | None = None,
                 batch_bytes: int = DEFAULT_BATCH_BYTES,
                 epoch_for: Callable[[int], int] | None = None,
                 max_inflated: int | None = None) -> None:  # fmt: skip
        codec = None
        if compression is not None:
            codec = compression if isinstance(compression, int) else _comp.CODEC_IDS.get(compression)
            if codec is None:
                raise EncodeError(f"unknown compression {compression!r} "
                                  f"(one of {', '.join(_comp.CODEC_IDS)})")  # fmt: skip
            _comp.check_codec(codec, 2)
            _comp.check_level(codec, level)
        elif level is not None:
            raise EncodeError("a level needs a codec to apply to (compression)")
        if magic not in (None, 2):
            raise EncodeError(f"batches can be converted to magic 2 only, not {magic}")
        if gzip_os not in (None, _comp.GZIP_OS_JDK17, _comp.GZIP_OS_JDK8):
            raise EncodeError(f"gzip_os {gzip_os} is not a JDK's (255 or 0)")
        if batch_bytes < 1:
            raise EncodeError(f"batch_bytes must be positive, not {batch_bytes}")
        self.codec, self.level, self.magic, self.gzip_os = codec, level, magic, gzip_os
        self.batch_bytes = batch_bytes
        self.epoch_for = epoch_for or (lambda offset: -1)
        self.max_inflated = max_inflated
        self._levels = {c: _Levels() for c in _comp.LEVELS}

    # -- walking
    def rebuild(self, batches: Iterable[Batch]) -> Iterator[Rebuilt]:
        """The rebuilt batches of a walk, in order (a run of uncompressed legacy messages
        that is converted or compressed comes out as one)."""
        run: list[LegacyBatch] = []
        for b in batches:
            if isinstance(b, RecordBatch):
                if run:
                    yield self._run(run)
                    run = []
                yield self.rebuild_v2(b)
            elif b.attributes & _LEGACY_MASK != _comp.NONE or not self.groups_legacy:
                if run:
                    yield self._run(run)
                    run = []
                yield self.rebuild_legacy(b)
            else:
                if run and (self._run_key(run[0]) != self._run_key(b)
                            or sum(m.size for m in run) + b.size > self.batch_bytes):  # fmt: skip
                    yield self._run(run)
                    run = []
                run.append(b)
        if run:
            yield self._run(run)

    @property
    def groups_legacy(self) -> bool:
        """Whether uncompressed legacy messages are grouped (several entries become one):
        when they become v2 batches or compressed wrappers."""
        return self.magic == 2 or (self.codec is not None and self.codec != _comp.NONE)

    @staticmethod
    def _run_key(b: LegacyBatch) -> tuple:
        log_append = b.magic >= 1 and bool(b.attributes & _LOG_APPEND_BIT)
        return (b.magic, log_append, b.timestamp if log_append else None)

    # -- v2
    def rebuild_v2(self, b: RecordBatch) -> Rebuilt:
        """A v2 batch from its header fields and its records' fields."""
        source = b.compression
        region = _comp.decompress(source, b.records_region_raw, 2, self.max_inflated)
        region = rebuild_region(region, b.num_records)
        codec = source if self.codec is None or (b.is_control and source == _comp.NONE) else self.codec
        raw, level = self._compress(codec, region, 2, source, b.records_region_raw)
        data = KafkaRecordBatch(
            base_offset=b.base_offset, partition_leader_epoch=b.partition_leader_epoch, magic=2,
            attributes=(b.attributes & ~_MASK) | codec, last_offset_delta=b.last_offset_delta,
            base_timestamp=b.base_timestamp, max_timestamp=b.max_timestamp,
            producer_id=b.producer_id, producer_epoch=b.producer_epoch,
            base_sequence=b.base_sequence, num_records=b.num_records, records_region_raw=raw,
        ).build()  # fmt: skip
        return self._done(data, [b], b.num_records, b.base_offset, b.last_offset, b.max_timestamp,
                          level)  # fmt: skip

    # -- legacy
    def rebuild_legacy(self, b: LegacyBatch) -> Rebuilt:
        """A top-level legacy message, or a wrapper, rebuilt (or converted to magic 2)."""
        if self.magic == 2:
            return self._upgrade([b])
        if b.attributes & _LEGACY_MASK == _comp.NONE:
            data = _message(b).build()
            return self._done(data, [b], 1, b.offset, b.offset, b.max_timestamp, None)
        source = b.attributes & _LEGACY_MASK
        codec = source if self.codec is None else self.codec
        inner = _inner_messages(b, self.max_inflated)
        if codec == _comp.NONE:  # the inner messages, as top-level ones
            records = b.records()
            log_append = bool(b.attributes & _LOG_APPEND_BIT) and b.magic >= 1
            out = bytearray()
            for m, r in zip(inner, records):
                msg = _message(m)
                msg.offset = r.offset
                if log_append:
                    msg.attributes |= _LOG_APPEND_BIT
                    msg.timestamp = b.timestamp
                msg.build_into(out)
            return self._done(bytes(out), [b], len(records), b.base_offset, b.offset,
                              b.max_timestamp, None)  # fmt: skip
        if codec == _comp.ZSTD:
            raise EncodeError("zstd needs message format v2: convert legacy data with magic 2")
        plain = b"".join(_message(m).build() for m in inner)
        raw, level = self._compress(codec, plain, b.magic, source, b.inner_raw)
        data = KafkaLegacyMessage(
            offset=b.offset, magic=b.magic, attributes=(b.attributes & ~_LEGACY_MASK) | codec,
            timestamp=b.timestamp if b.magic >= 1 else None, key=_bytes(b.key), inner_raw=raw,
        ).build()  # fmt: skip
        return self._done(data, [b], len(inner), b.base_offset, b.offset,
                          b.max_timestamp, level)  # fmt: skip

    def _run(self, run: list[LegacyBatch]) -> Rebuilt:
        """A run of uncompressed legacy messages: one v2 batch, or one wrapper."""
        if self.magic == 2:
            return self._upgrade(run)
        first = run[0]
        codec = self.codec if self.codec is not None else _comp.NONE
        if codec == _comp.ZSTD:
            raise EncodeError("zstd needs message format v2: convert legacy data with magic 2")
        records = [r for m in run for r in m.records()]
        log_append = self._run_key(first)[1]
        data = build_message_set(
            records, magic=first.magic, compression=codec, base_offset=records[0].offset,
            timestamp_type="LogAppendTime" if log_append else "CreateTime",
            log_append_time=first.timestamp if log_append else None,
            compression_level=self.level, gzip_os=self._gzip_os(None),
        )  # fmt: skip
        max_ts = max(m.max_timestamp for m in run)
        return self._done(data, run, len(records), records[0].offset, records[-1].offset, max_ts,
                          None)  # fmt: skip

    def _upgrade(self, sources: list[LegacyBatch]) -> Rebuilt:
        """Legacy entries as one v2 batch, as LogValidator converts one append."""
        first = sources[0]
        records = [r for m in sources for r in m.records(max_inflated=self.max_inflated)]
        source_codec = first.attributes & _LEGACY_MASK
        codec = source_codec if self.codec is None else self.codec
        log_append = first.magic >= 1 and bool(first.attributes & _LOG_APPEND_BIT)
        last = sources[-1].offset
        if not records:  # an empty wrapper: Kafka's deep iteration yields nothing to append
            return self._done(b"", sources, 0, last, last, -1, None)
        base = records[0].offset
        data = build_batch(
            [Record(r.offset, r.timestamp, r.key, r.value) for r in records], base_offset=base,
            compression=codec, compression_level=self.level, gzip_os=self._gzip_os(None),
            timestamp_type="LogAppendTime" if log_append else "CreateTime",
            log_append_time=first.timestamp if log_append else None,
            partition_leader_epoch=self.epoch_for(base),
        )  # fmt: skip
        # what build_batch derived: the last offset, and the largest timestamp or the stamp
        max_ts = first.timestamp if log_append else max(-1, *(r.timestamp for r in records))
        return self._done(data, sources, len(records), base, records[-1].offset, max_ts, None)

    # -- compression
    def _gzip_os(self, original) -> int:
        if self.gzip_os is not None:
            return self.gzip_os
        found = None if original is None else _comp.gzip_os_of(original)
        return _comp.GZIP_OS_JDK17 if found is None else found

    def _compress(self, codec: int, plain: bytes, magic: int, source: int,
                  original) -> tuple[bytes, int | None]:  # fmt: skip
        """plain compressed with codec; when each batch keeps its codec, at the level (and
        with the gzip header) that gives the original's bytes when one does."""
        if codec == _comp.NONE:
            return plain, None
        keep = self.codec is None  # the source's codec: its level and header are looked for
        gzip_os = self._gzip_os(original if keep and codec == _comp.GZIP else None)
        if not keep or codec == _comp.SNAPPY:
            return _comp.compress(codec, plain, magic, self.level, gzip_os=gzip_os), self.level
        search = self._levels[codec]
        original = bytes(original)  # bytes compare by memcmp; a memoryview, byte by byte
        default = _comp.LEVELS[codec].default
        at_default = None
        for level in search.candidates(codec):
            out = _comp.compress(codec, plain, magic, level, gzip_os=gzip_os)
            if out == original:
                search.hint, search.misses = level, 0
                return out, level
            if level == default:
                at_default = out
        search.misses += 1
        # Nothing reproduces it: Kafka's default level, whatever the search tried first
        # (what is written depends on the batch alone, not on the batches before it).
        assert at_default is not None  # the default is always a candidate
        return at_default, None

    # -- results
    @staticmethod
    def _done(data: bytes, sources: list, records: int, first_offset: int, last_offset: int,
              max_timestamp: int, level: int | None) -> Rebuilt:  # fmt: skip
        b0 = sources[0]
        position = b0.position
        size = sum(s.size for s in sources)
        original = bytes(b0._buf[position : position + size])  # compared by memcmp
        identical = data == original
        return Rebuilt(
            data, position, size, len(sources), records, first_offset, last_offset, max_timestamp,
            identical, None if identical else position + first_difference(data, original), level,
        )  # fmt: skip


def _message(m: KafkaLegacyMessage) -> KafkaLegacyMessage:
    """A message with only its decoded fields: the builder derives lengths and CRC."""
    return KafkaLegacyMessage(
        offset=m.offset, magic=m.magic, attributes=m.attributes,
        timestamp=m.timestamp if m.magic >= 1 else None, key=_bytes(m.key), value=_bytes(m.value),
    )  # fmt: skip


def _bytes(v) -> bytes | None:
    return None if v is None else bytes(v)


def _inner_messages(b: LegacyBatch, max_inflated: int | None) -> list[KafkaLegacyMessage]:
    """A wrapper's inner messages (the generated parser's objects), checked as its records
    are (one level of compression, absolute offsets that fit)."""
    where = f"inner messages of the wrapper at byte {b.position} (offset {b.offset})"
    b.records(max_inflated=max_inflated)  # the checks Kafka's deep iteration makes
    try:
        inner = b.read_inner(max_size=max_inflated, verify=True)
    except DecodeError as err:
        raise err.within(where) from None
    return [e.message for e in inner.entries if e.message is not None] if inner is not None else []

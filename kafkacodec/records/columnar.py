"""Columnar decoding: batch headers and records as Arrow tables, without a Python object per
batch or per record.

Two layers, each with a generated reference and an optional native accelerator:

- The batch walk (`walk_batches`, `scan_batches`) reads only the headers of the batches
  (and legacy messages) into one NumPy structured array (ENTRY). `_native.scan_batches`
  walks them in C; whatever it stops at (a partial or damaged entry) goes through the
  Python BatchIterator, which reads it or raises the precise error.
- The records (`decode_columns`) of a run of v2 batches are decoded by the generated
  `KafkaRecord.parse_columns` (from schemas/kafka_record.ksy, `-kafkacodec-columns`) into
  Arrow-shaped buffers; `_native.decode_v2_columns` fills the same buffers in C. NumPy
  then adds the batch-level values: absolute offsets, timestamps (LogAppendTime), the
  batch metadata of every record.

The object path (`batch.records()`) stays the reference: legacy messages and control
batches go through it, and so does any batch the column decoders do not accept, so that a
damaged batch raises the same error with the same position (tests/records/test_columnar.py).

Needs the `columnar` extra (numpy, pyarrow).
"""

from __future__ import annotations

import sys
from collections.abc import Callable, Iterator
from dataclasses import dataclass

import numpy as np
import pyarrow as pa

from kafkacodec.generated.kafka_record import KafkaRecord
from kafkacodec.generated.kafka_record_batch import KafkaRecordBatch

from ..runtime import compression as _comp
from ..runtime._prim import column_buffers
from ..runtime.errors import CorruptRecordError, DecodeError
from .batches import LOG_OVERHEAD, MIN_MESSAGE_OVERHEAD, BatchIterator, bit_field, byte_view
from .javatext import java_text, java_utf8
from .walk import ENTRY, NATIVE, native_run

V2 = KafkaRecordBatch  # whose BITS name the attribute bits (bit_field)

try:
    from ._native import decode_v2_columns as _native_columns
except ImportError:  # pragma: no cover - a build without a C compiler
    _native_columns = None

__all__ = [
    "SCHEMA", "BATCH_SCHEMA", "ENTRY", "TIMESTAMP_TYPE_CODES", "Walk", "walk_batches",
    "scan_batches", "decode_columns", "iter_columns",
]  # fmt: skip

HEADER = pa.struct([("key", pa.string()), ("value", pa.binary())])

#: One row per record: the record's fields, then the metadata of its batch.
SCHEMA = pa.schema([
    ("offset", pa.int64()), ("timestamp", pa.int64()), ("timestamp_type", pa.int8()),
    ("key", pa.binary()), ("value", pa.binary()), ("headers", pa.list_(HEADER)),
    ("base_offset", pa.int64()), ("magic", pa.int8()), ("compression", pa.string()),
    ("producer_id", pa.int64()), ("producer_epoch", pa.int16()), ("base_sequence", pa.int32()),
    ("is_transactional", pa.bool_()), ("is_control", pa.bool_()),
    ("partition_leader_epoch", pa.int32()), ("position", pa.int64()),
])  # fmt: skip

#: One row per batch (a legacy top-level message counts as a batch), from its header only.
#: A legacy compressed wrapper has a null base_offset and num_records: knowing them means
#: decompressing it (Kafka's countOrNull).
BATCH_SCHEMA = pa.schema([
    ("position", pa.int64()), ("size", pa.int32()), ("magic", pa.int8()),
    ("base_offset", pa.int64()), ("last_offset", pa.int64()), ("num_records", pa.int32()),
    ("partition_leader_epoch", pa.int32()), ("crc", pa.int64()), ("attributes", pa.int16()),
    ("compression", pa.string()), ("timestamp_type", pa.int8()),
    ("base_timestamp", pa.int64()), ("max_timestamp", pa.int64()),
    ("producer_id", pa.int64()), ("producer_epoch", pa.int16()), ("base_sequence", pa.int32()),
    ("is_transactional", pa.bool_()), ("is_control", pa.bool_()),
])  # fmt: skip

#: timestamp_type codes, as Kafka numbers them (Spark's `timestampType` column too).
TIMESTAMP_TYPE_CODES = {"NoTimestampType": -1, "CreateTime": 0, "LogAppendTime": 1}

_RUN_BYTES = 1 << 20  # ~1 MB of batches per native call: the working set stays in cache
#: The codecs' names, by code (a list here: pyarrow imports pandas on its first pa.array of
#: Python values, 0.2 s that every command would pay at import; the array is made on use).
_CODEC_NAMES = [_comp.codec_name(i) for i in range(8)]


# ------------------------------------------------------------------------------ walk


@dataclass
class Walk:
    """The batches found from `start`: their headers (ENTRY array, in file order), where
    the walk stopped, and the error that stopped it (None when it ran to the end or to a
    partial entry there)."""

    entries: np.ndarray
    position: int
    end: int
    error: DecodeError | None

    @property
    def remaining(self) -> int:
        """Bytes left after the last complete batch (a partial entry, or 0)."""
        return self.end - self.position


def _entry(b) -> tuple:
    """An ENTRY row for a batch object (the Python walk)."""
    if b.magic >= 2:
        return (b.position, b.base_offset, b.base_timestamp, b.max_timestamp, b.producer_id,
                b.len_batch, b.partition_leader_epoch, b.last_offset_delta, b.base_sequence,
                b.num_records, b.crc, b.attributes, b.producer_epoch, b.magic)  # fmt: skip
    ts = b.timestamp if b.magic >= 1 else -1
    count = -1 if bit_field(V2, "compression", b.attributes) else 1
    return (b.position, b.offset, ts, ts, -1, b.len_message, -1, 0, -1, count, b.crc,
            b.attributes, -1, b.magic)  # fmt: skip


def walk_batches(data, *, verify_crc: bool = True, source: str | None = None, start: int = 0,
                 end: int | None = None, file: bool = False) -> Walk:  # fmt: skip
    """Walk the batches of data[start:end] (any magic) reading headers only, as iter_batches
    does (a log segment's bytes with file=True: BatchIterator), and return them as a Walk;
    an error is returned in it, not raised, so that a caller can first use the batches
    before it. With verify_crc each batch's CRC is checked (a mismatch stops the walk with
    ChecksumError)."""
    view = byte_view(data)
    end = len(view) if end is None else end
    pieces: list[np.ndarray] = []
    rows: list[tuple] = []
    pos = start
    error = None
    while True:
        if NATIVE:
            run, pos = native_run(view, pos, end, verify_crc=verify_crc)
            if len(run):
                if rows:
                    pieces.append(np.array(rows, ENTRY))
                    rows = []
                pieces.append(run)
        # What the native walk stopped at (or everything, without it): the Python iterator.
        it = BatchIterator(view, verify_crc=verify_crc, source=source, start=pos, end=end, file=file)
        try:
            b = next(it)
        except StopIteration:
            break
        except DecodeError as err:
            error = err
            break
        rows.append(_entry(b))
        pos = it.position
    if rows or not pieces:
        pieces.append(np.array(rows, ENTRY))
    entries = pieces[0] if len(pieces) == 1 else np.concatenate(pieces)
    return Walk(entries, pos, end, error)


def scan_batches(data, *, verify_crc: bool = True, source: str | None = None, start: int = 0,
                 end: int | None = None, file: bool = False) -> pa.Table:  # fmt: skip
    """One row per batch of data[start:end] (BATCH_SCHEMA), from the headers only; no
    record is decoded or decompressed. Raises the DecodeError iter_batches raises."""
    w = walk_batches(data, verify_crc=verify_crc, source=source, start=start, end=end, file=file)
    if w.error is not None:
        raise w.error
    return batch_table(w.entries)


def _batch_values(e: np.ndarray) -> dict:
    """The batch-level columns of ENTRY rows, as the batch objects answer them (compression
    as its code: _record_batch and batch_table name it)."""
    magic, attributes = e["magic"], e["attributes"]
    v2 = magic >= 2
    return {
        "timestamp_type": np.where(
            v2 | (magic == 1), bit_field(V2, "timestamp_type", attributes), -1
        ).astype(np.int8),
        "base_offset": e["base_offset"],
        "magic": magic,
        "compression": bit_field(V2, "compression", attributes).astype(np.int8),
        "producer_id": e["producer_id"],
        "producer_epoch": e["producer_epoch"],
        "base_sequence": e["base_sequence"],
        "is_transactional": v2 & (bit_field(V2, "is_transactional", attributes) != 0),
        "is_control": v2 & (bit_field(V2, "is_control", attributes) != 0),
        "partition_leader_epoch": e["partition_leader_epoch"],
        "position": e["position"],
    }


def _codec_names(codes) -> pa.Array:
    """The codec name of each code (a string column). One codec throughout, the usual
    case, is written at once: its name repeated, at evenly spaced offsets."""
    codes = np.asarray(codes, np.int8)
    n = len(codes)
    if n and codes.min() == codes.max() and 0 <= codes[0] < len(_CODEC_NAMES):
        name = _CODEC_NAMES[int(codes[0])].encode()
        offsets = np.arange(0, (n + 1) * len(name), len(name), dtype=np.int32)
        return pa.Array.from_buffers(pa.string(), n,
                                     [None, pa.py_buffer(offsets), pa.py_buffer(name * n)])  # fmt: skip
    return pa.array(_CODEC_NAMES, pa.string()).take(pa.array(codes, pa.int8()))


def _bools(values: np.ndarray) -> pa.Array:
    """A boolean column; all false (the usual is_transactional and is_control of a run)
    is a bitmap of zeros, not a packing of every value."""
    if len(values) and not values.any():
        return pa.Array.from_buffers(pa.bool_(), len(values),
                                     [None, pa.py_buffer(bytes((len(values) + 7) // 8))])  # fmt: skip
    return pa.array(values, pa.bool_())


def batch_table(e: np.ndarray) -> pa.Table:
    """BATCH_SCHEMA rows for ENTRY rows."""
    wrapper = (e["magic"] < 2) & (bit_field(V2, "compression", e["attributes"]) != 0)
    cols = _batch_values(e)
    cols.update({
        "size": e["len_batch"] + 12,
        "base_offset": pa.array(e["base_offset"], mask=wrapper),
        "last_offset": e["base_offset"] + e["last_offset_delta"],
        "num_records": pa.array(e["num_records"], mask=wrapper),
        "crc": e["crc"].astype(np.int64),
        "attributes": e["attributes"],
        "compression": _codec_names(cols["compression"]),
        "base_timestamp": e["base_timestamp"],
        "max_timestamp": e["max_timestamp"],
    })  # fmt: skip
    return pa.table([pa.array(cols[f.name], f.type) for f in BATCH_SCHEMA], schema=BATCH_SCHEMA)


# --------------------------------------------------------------------------- records


def decode_columns(data, *, verify_crc: bool = True, source: str | None = None, start: int = 0,
                   end: int | None = None, max_inflated: int | None = None,
                   file: bool = False) -> pa.Table:  # fmt: skip
    """The records of every complete batch in data[start:end] as an Arrow table (SCHEMA),
    in chunks of about 1 MB of input. CRCs are checked per batch unless verify_crc is
    False; bad input raises the DecodeError the object path raises, the first in file
    order."""
    w = walk_batches(data, verify_crc=verify_crc, source=source, start=start, end=end, file=file)
    # The records of the batches before a damaged one are decoded (and may fail) first.
    table = records_table(data, w, max_inflated=max_inflated)
    if w.error is not None:
        raise w.error
    return table


#: How much input iter_columns decodes at a time (its memory is about that of one chunk).
CHUNK_BYTES = 16 << 20


def iter_columns(data, *, verify_crc: bool = True, source: str | None = None, start: int = 0,
                 end: int | None = None, max_inflated: int | None = None,
                 chunk_bytes: int = CHUNK_BYTES, passed: Callable[[int], None] | None = None,
                 file: bool = False) -> Iterator[pa.RecordBatch]:  # fmt: skip
    """decode_columns a chunk at a time: the records of data[start:end] as SCHEMA record
    batches, about chunk_bytes of input each, in order, so that memory stays that of one
    chunk whatever the size of the data (a batch larger than a chunk is one chunk). After
    each chunk, passed(position) is called with where the walk is (Segment.columns lets
    the file's pages before it go). Bad input raises what decode_columns raises, after
    the records before it were yielded."""
    view = byte_view(data)
    end = len(view) if end is None else end
    pos = start
    while pos < end:
        stop = min(end, pos + chunk_bytes)
        w = walk_batches(view, verify_crc=verify_crc, source=source, start=pos, end=stop, file=file)
        if w.position == pos and w.error is None and stop < end:  # no whole batch before stop
            # the entry that crosses stop, walked whole (or to the end, where a partial one
            # or one too small to be an entry is the walk's to judge)
            size = int.from_bytes(view[pos + 8 : pos + 12], "big", signed=True)
            stop = end if size < MIN_MESSAGE_OVERHEAD else min(end, pos + LOG_OVERHEAD + size)
            w = walk_batches(view, verify_crc=verify_crc, source=source, start=pos, end=stop, file=file)
        if w.position == pos and w.error is None:
            return  # a partial entry at the end
        yield from records_table(view, w, max_inflated=max_inflated).to_batches()
        if w.error is not None:
            raise w.error
        if w.position <= pos:  # never loop in place, whatever the bytes
            stuck = CorruptRecordError("no batch can be read here", pos)
            raise stuck.with_source(source) if source else stuck
        pos = w.position
        if passed is not None:
            passed(pos)


def records_table(data, w: Walk, *, max_inflated: int | None = None) -> pa.Table:
    """The records of the batches a walk found (SCHEMA)."""
    view = byte_view(data)
    e = w.entries
    magic, attributes, sizes = e["magic"], e["attributes"], e["len_batch"] + 12
    pieces: list[pa.RecordBatch] = []
    i, n = 0, len(e)
    # How each batch is read: v2 record columns, a plain legacy message straight from its
    # bytes, or (control batches, legacy wrappers) the object path.
    codec = bit_field(V2, "compression", attributes)
    kind = np.where((magic >= 2) & (bit_field(V2, "is_control", attributes) == 0), _V2,
                    np.where(magic >= 2, _OBJECTS, np.where(codec == 0, _PLAIN, _WRAPPERS)))  # fmt: skip
    # Runs of one kind, each cut once it holds _RUN_BYTES of input (the entry that gets
    # there included): stretches of one kind from where the kind changes, cuts by the
    # running sum of the sizes.
    ends = np.append(np.flatnonzero(kind[1:] != kind[:-1]) + 1, n)
    upto = np.cumsum(sizes, dtype=np.int64)
    for stretch_end in ends.tolist():
        while i < stretch_end:
            before = int(upto[i - 1]) if i else 0
            j = min(stretch_end, int(np.searchsorted(upto, before + _RUN_BYTES)) + 1)
            pieces += _run(view, e, kind[i], i, j, max_inflated)
            i = j
    return pa.Table.from_batches(pieces, SCHEMA)


def _run(view, e: np.ndarray, kind: int, i: int, j: int, max_inflated) -> list[pa.RecordBatch]:
    """The records of entries i..j-1, all of one kind."""
    if kind == _V2:
        return _v2_run(view, e, i, j, max_inflated)
    if kind == _PLAIN:
        return [_plain_run(view, e[i:j])]
    if kind == _WRAPPERS:
        return _wrapper_run(view, e, i, j, max_inflated)
    return [_from_objects([_batch(view, e, k) for k in range(i, j)], max_inflated)]


_V2, _PLAIN, _OBJECTS, _WRAPPERS = 0, 1, 2, 3


def _be32(u8: np.ndarray, at: np.ndarray) -> np.ndarray:
    """The big-endian int32 at each position (its four bytes gathered at once)."""
    return u8[np.add.outer(at, _FOUR)].view(">i4").ravel().astype(np.int32)


_FOUR = np.arange(4)


def _all_in(wanted: np.ndarray, sorted_values: np.ndarray) -> bool:
    """Whether every value of wanted is one of sorted_values (ascending): a binary search
    each (np.isin hashes them all, a tenth of a gzip wrapper run's time)."""
    at = np.searchsorted(sorted_values, wanted)
    return bool((at < len(sorted_values)).all()
                and (sorted_values[np.minimum(at, len(sorted_values) - 1)] == wanted).all())  # fmt: skip


def _gather(u8: np.ndarray, starts: np.ndarray, lengths: np.ndarray) -> pa.Array:
    """A binary column of u8[start:start + length] per row (rows in increasing, disjoint
    ranges); a length of -1 is null. The ranges and the gaps between them are one Arrow
    array over u8 itself (offsets alternating span and gap), and one `take` of the spans
    copies them out in C++."""
    n = len(starts)
    if n == 0:
        return pa.array([], pa.binary())
    sizes = np.maximum(lengths, 0).astype(np.int64)
    bounds = np.empty(2 * n, np.int64)
    bounds[0::2] = starts
    bounds[1::2] = starts + sizes
    spans_and_gaps = pa.Array.from_buffers(
        pa.large_binary(), 2 * n - 1, [None, pa.py_buffer(bounds), pa.py_buffer(u8)]
    )
    spans = spans_and_gaps.take(pa.array(np.arange(0, 2 * n - 1, 2))).cast(pa.binary())
    valid = lengths >= 0
    if valid.all():
        return spans
    bitmap = pa.py_buffer(np.packbits(valid, bitorder="little"))
    return pa.Array.from_buffers(pa.binary(), n, [bitmap, *spans.buffers()[1:]],
                                 null_count=int(n - valid.sum()), offset=spans.offset)  # fmt: skip


def _plain_run(view, e: np.ndarray) -> pa.RecordBatch:
    """Uncompressed legacy messages (one record each), vectorised: the walk has checked
    that their key and value lengths fill each message exactly."""
    out = _batch_values(e)
    out.update(_message_columns(np.frombuffer(view, np.uint8), e))
    out["offset"] = e["base_offset"]
    out["timestamp"] = e["base_timestamp"]  # -1 for magic 0, as the walk stores it
    return _record_batch(out)


def _len_key_at(e: np.ndarray) -> np.ndarray:
    """Where the key length of each legacy message e lies: after offset, size, crc, magic,
    attributes and (magic 1) timestamp."""
    return e["position"] + 18 + 8 * (e["magic"] >= 1)


def _message_columns(u8: np.ndarray, e: np.ndarray) -> dict:
    """The key, value and (no) headers of the legacy messages e found in u8."""
    len_key_at = _len_key_at(e)
    len_key = _be32(u8, len_key_at)
    len_value_at = len_key_at + 4 + np.maximum(len_key, 0)
    no_headers = pa.ListArray.from_arrays(pa.array(np.zeros(len(e) + 1, np.int32)),
                                          pa.array([], HEADER))  # fmt: skip
    return {
        "key": _gather(u8, len_key_at + 4, len_key),
        "value": _gather(u8, len_value_at + 4, _be32(u8, len_value_at)),
        "headers": no_headers,
    }


def _wrapper_run(view, e: np.ndarray, i: int, j: int, max_inflated) -> list[pa.RecordBatch]:
    """Legacy wrappers i..j-1: each one's inner message set decompressed and walked (CRCs
    checked, as batch.records() checks them), its messages read as plain ones, and Kafka's
    wrapper rules applied (AbstractLegacyRecordBatch, FORMATS.md 1.3): magic 1 inner offsets
    relative to the last one (a wrapper offset of 0 taken as base 0), LogAppendTime from the
    wrapper. A wrapper that is anything but that goes through the object path, which
    raises its precise error."""
    at_once = _wrappers_at_once(view, e[i:j], max_inflated)
    if at_once is not None:
        return at_once
    pieces: list[pa.RecordBatch] = []
    inners: list[tuple] = []  # (wrapper's index in e, inner bytes, inner entries, absolute offsets)

    def flush() -> None:
        if inners:
            pieces.append(_inner_batch(e, inners))
            inners.clear()

    for k in range(i, j):
        inner = _inner_messages(view, e[k], max_inflated)
        if inner is None or not len(inner[1]):  # (a wrapper of nothing: the object path refuses it)
            flush()
            pieces.append(_from_objects([_batch(view, e, k)], max_inflated))
        else:
            inners.append((k, *inner))
    flush()
    return pieces


def _wrappers_at_once(view, run: np.ndarray, max_inflated) -> list[pa.RecordBatch] | None:
    """_wrapper_run for the usual run, vectorised: every wrapper of run decompressed, the
    inner sets walked as one (CRCs checked), and Kafka's rules applied to all at once.
    None when any wrapper is anything else (a null value, a set that does not decompress
    or walk whole, inner entries that are not plain legacy messages, a wrapper offset
    below its last inner one): the caller then takes them one at a time."""
    u8 = np.frombuffer(view, np.uint8)
    magic = run["magic"]
    # The walk has checked each wrapper's layout: its key and value fit in it (bytes after the
    # value, which Kafka never reads, may follow).
    len_key_at = _len_key_at(run)
    len_value_at = len_key_at + 4 + np.maximum(_be32(u8, len_key_at), 0)
    len_value = _be32(u8, len_value_at)
    if (len_value < 0).any():
        return None
    datas = []
    try:
        for at, n, codec, m in zip((len_value_at + 4).tolist(), len_value.tolist(),
                                   bit_field(V2, "compression", run["attributes"]).tolist(),
                                   magic.tolist()):  # fmt: skip
            datas.append(_comp.decompress(codec, view[at : at + n], m, max_inflated))
    except DecodeError:
        return None
    sizes = np.array([len(d) for d in datas], np.int64)
    starts = np.cumsum(sizes) - sizes
    data = b"".join(datas)
    del datas  # (the pieces go: only the joined copy is held)
    inner = walk_batches(data, verify_crc=True)
    e = inner.entries
    group = np.searchsorted(starts, e["position"], side="right") - 1  # each one's wrapper
    counts = np.bincount(group, minlength=len(run))
    if (inner.error is not None or inner.position != len(data) or (e["magic"] >= 2).any()
            or (bit_field(V2, "compression", e["attributes"]) != 0).any()
            or not _all_in(starts[sizes > 0], e["position"])):  # fmt: skip
        return None  # (a set that ends inside a message does not start one of the next)
    if (counts == 0).any():
        return None  # a wrapper of no inner message, which Kafka refuses: one at a time
    # Magic 1 inner offsets are relative to the last one (which takes the wrapper's offset),
    # unless the wrapper's offset is 0 (FORMATS.md 1.3, AbstractLegacyRecordBatch).
    last = np.zeros(len(run), np.int64)
    held = counts > 0
    last[held] = e["base_offset"][np.cumsum(counts)[held] - 1]
    wrapper_offset = run["base_offset"]
    relative = (magic >= 1) & (wrapper_offset != 0)
    if (held & relative & (wrapper_offset < last)).any():
        return None
    with np.errstate(over="ignore"):
        shift = wrapper_offset - last
    if (relative & held & (((wrapper_offset ^ last) & (wrapper_offset ^ shift)) < 0)).any():
        return None  # a shift past int64 (an inner offset far below the wrapper's)
    try:
        offsets = _add(e["base_offset"], np.where(relative, shift, 0)[group])
    except DecodeError:
        return None
    out = {name: np.repeat(v, counts) for name, v in _batch_values(run).items()}
    out.update(_message_columns(np.frombuffer(data, np.uint8), e))
    out["offset"] = offsets
    first = np.zeros(len(run), np.int64)
    first[held] = offsets[(np.cumsum(counts) - counts)[held]]
    out["base_offset"] = np.repeat(first, counts)  # the first record's
    log_append = np.repeat((magic >= 1) & (bit_field(V2, "timestamp_type", run["attributes"]) == 1),
                           counts)  # fmt: skip
    # a magic 1 inner message takes a LogAppendTime wrapper's time; magic 0 has none
    # (DeepRecordsIterator); the walk stores -1 for magic 0's
    out["timestamp"] = np.where(log_append & (e["magic"] == 1), np.repeat(run["base_timestamp"], counts),
                                e["base_timestamp"])  # fmt: skip
    return [_record_batch(out)]


def _inner_messages(view, w, max_inflated):
    """(inner bytes, inner ENTRY rows, absolute offsets) of the wrapper w, or None when
    the object path must read it."""
    pos, size, magic = int(w["position"]), int(w["len_batch"]) + 12, int(w["magic"])
    if size < 26 + 8 * (magic >= 1):
        return None
    len_key_at = pos + 18 + 8 * (magic >= 1)
    len_key = int.from_bytes(view[len_key_at : len_key_at + 4], "big", signed=True)
    value_at = len_key_at + 4 + max(len_key, 0) + 4
    if value_at > pos + size:
        return None
    len_value = int.from_bytes(view[value_at - 4 : value_at], "big", signed=True)
    if not 0 <= len_value <= pos + size - value_at:  # (bytes after the value: `unused`)
        return None
    try:
        data = _comp.decompress(bit_field(V2, "compression", int(w["attributes"])),
                                view[value_at : value_at + len_value], magic, max_inflated)  # fmt: skip
    except DecodeError:
        return None
    inner = walk_batches(data, verify_crc=True)
    e = inner.entries
    if (inner.error is not None or inner.position != len(data) or (e["magic"] >= 2).any()
            or (bit_field(V2, "compression", e["attributes"]) != 0).any()):  # fmt: skip
        return None
    offsets = e["base_offset"]
    if magic >= 1 and len(e):
        last, wrapper_offset = int(offsets[-1]), int(w["base_offset"])
        if wrapper_offset and wrapper_offset < last:
            return None
        shift = wrapper_offset - last if wrapper_offset else 0
        if not -(1 << 63) <= shift < 1 << 63:  # an inner offset far below the wrapper's
            return None
        try:
            offsets = _add(offsets, np.full(len(e), shift, np.int64))
        except DecodeError:
            return None
    return bytes(data), e, offsets


def _inner_batch(e: np.ndarray, inners: list[tuple]) -> pa.RecordBatch:
    """SCHEMA rows of the inner messages of some wrappers of e (what _inner_messages read)."""
    datas, entries, shift = [], [], 0
    for _k, data, messages, _offsets in inners:
        moved = messages.copy()
        moved["position"] += shift
        entries.append(moved)
        datas.append(data)
        shift += len(data)
    wrappers = e[np.array([k for k, *_ in inners])]
    counts = np.array([len(messages) for _k, _d, messages, _o in inners])
    out = {name: np.repeat(v, counts) for name, v in _batch_values(wrappers).items()}
    inner = np.concatenate(entries)
    out.update(_message_columns(np.frombuffer(b"".join(datas), np.uint8), inner))
    out["offset"] = np.concatenate([o for *_x, o in inners])
    out["base_offset"] = np.repeat([o[0] for *_x, o in inners], counts)  # the first record's
    log_append = np.repeat((wrappers["magic"] >= 1)
                           & (bit_field(V2, "timestamp_type", wrappers["attributes"]) == 1), counts)  # fmt: skip
    out["timestamp"] = np.where(log_append & (inner["magic"] == 1),
                                np.repeat(wrappers["base_timestamp"], counts), inner["base_timestamp"])  # fmt: skip
    return _record_batch(out)


def _batch(view, e, i):
    """The batch object of entry i (the object path)."""
    pos = int(e["position"][i])
    return next(
        BatchIterator(view, verify_crc=False, start=pos, end=pos + int(e["len_batch"][i]) + 12)
    )


def _v2_run(view, e, i: int, j: int, max_inflated) -> list[pa.RecordBatch]:
    """Entries i..j-1 (v2, not control) through the column decoders."""
    regions = []
    run = e[i:j]
    for pos, size, codec, count in zip(run["position"].tolist(), (run["len_batch"] + 12).tolist(),
                                       bit_field(V2, "compression", run["attributes"]).tolist(),
                                       run["num_records"].tolist()):  # fmt: skip
        region = view[pos + V2.MIN_SIZE : pos + size]  # the header, then the records
        if codec != _comp.NONE:
            try:
                region = _comp.decompress(codec, region, 2, max_inflated)
            except DecodeError:
                return _split(view, e, i, j, max_inflated)  # the object path locates it
        regions.append((region, count))
    buffers = _decode_regions(regions)
    if buffers is None:
        return _split(view, e, i, j, max_inflated)
    try:
        return [_assemble(buffers, e[i:j])]
    except DecodeError:
        return _split(view, e, i, j, max_inflated)


def _decode_regions(regions):
    """Column buffers for records regions: the native loop, else the generated decoder;
    None when either finds something wrong (the object path then raises it, located)."""
    if sum(len(r) for r, _ in regions) >= 1 << 31:
        return None  # past Arrow's int32 offsets: the object path
    if _native_columns is not None:
        got = _native_columns(regions)
        if got is not None:
            return got
    cols = KafkaRecord.new_columns()
    try:
        for region, count in regions:
            if KafkaRecord.parse_columns(region, 0, len(region), count, cols) != len(region):
                return None
    except DecodeError:
        return None
    return column_buffers(KafkaRecord.COLUMNS, cols)


def _split(view, e, i, j, max_inflated):
    """A run the column decoders did not take: each batch alone, and the object path for
    the one(s) they do not take (which raises the precise error if a batch is damaged)."""
    if j - i > 1:
        return [p for k in range(i, j) for p in _v2_run(view, e, k, k + 1, max_inflated)]
    return [_from_objects([_batch(view, e, i)], max_inflated)]


def _element_class(name: str):
    return getattr(sys.modules[KafkaRecord.__module__], name)


def _arrays(spec, buffers, n: int) -> dict:
    """Arrow arrays (NumPy arrays for int columns) from column_buffers-ordered buffers."""
    out = {}
    for name, kind, other, nullable in spec:
        if kind == "int":
            out[name] = np.frombuffer(next(buffers), np.dtype(other))
        elif kind == "list":
            offsets = np.frombuffer(next(buffers), np.int32)
            cls = _element_class(other)
            child = _arrays(cls.COLUMNS, buffers, int(offsets[-1]))
            struct = pa.StructArray.from_arrays([child[c[0]] for c in cls.COLUMNS],
                                                [c[0] for c in cls.COLUMNS])  # fmt: skip
            out[name] = pa.ListArray.from_arrays(pa.array(offsets), struct)
        else:
            valid = next(buffers) if nullable else None
            out[name] = _binary(pa.string() if kind == "string" else pa.binary(), n, valid,
                                next(buffers), next(buffers))  # fmt: skip
    return out


def _binary(type_, n: int, valid, offsets, data) -> pa.Array:
    nulls = 0
    bitmap = None
    if valid is not None:
        mask = np.frombuffer(valid, np.uint8)
        nulls = n - int(np.count_nonzero(mask))
        if nulls:
            bitmap = pa.py_buffer(np.packbits(mask, bitorder="little"))
    arr = pa.Array.from_buffers(pa.binary(), n, [bitmap, pa.py_buffer(offsets), pa.py_buffer(data)],
                                null_count=nulls)  # fmt: skip
    if type_ == pa.string():
        try:
            return arr.cast(pa.string())  # checks that it is UTF-8
        except pa.ArrowInvalid:  # it is not: what is malformed replaced as Java replaces it
            return pa.array([None if v is None else java_utf8(v)
                             for v in arr.to_pylist()], pa.string())  # fmt: skip
    return arr


_SAFE = 1 << 62  # |a|, |b| below this: a + b fits in int64


def _add(base: np.ndarray, delta: np.ndarray) -> np.ndarray:
    """base + delta in int64; DecodeError when a sum does not fit (the object path then
    reports it, located)."""
    if len(base) and (np.abs(base).max() >= _SAFE or np.abs(delta).max() >= _SAFE):
        with np.errstate(over="ignore"):
            out = base + delta
        if (((base ^ out) & (delta ^ out)) < 0).any():
            raise CorruptRecordError("a record's offset or timestamp does not fit in 64 bits")
        return out
    return base + delta


def _assemble(buffers, e: np.ndarray) -> pa.RecordBatch:
    """SCHEMA rows from the column buffers of the records of entries e (v2, in order)."""
    counts = e["num_records"]
    n = int(counts.sum())
    cols = _arrays(KafkaRecord.COLUMNS, iter(buffers), n)

    out = {name: np.repeat(values, counts) for name, values in _batch_values(e).items()}
    log_append = out["timestamp_type"] == 1
    offset = _add(out["base_offset"], cols["offset_delta"].astype(np.int64))
    if not log_append.any():
        timestamp = _add(np.repeat(e["base_timestamp"], counts), cols["timestamp_delta"])
    else:  # LogAppendTime: the batch's max timestamp for every record
        timestamp = np.repeat(e["max_timestamp"], counts)
        created = ~log_append
        timestamp[created] = _add(np.repeat(e["base_timestamp"], counts)[created],
                                  cols["timestamp_delta"][created])  # fmt: skip
    out.update({
        "offset": offset,
        "timestamp": timestamp,
        "key": cols["key"],
        "value": cols["value"],
        "headers": cols["headers"],
    })  # fmt: skip
    return _record_batch(out)


def _record_batch(cols: dict) -> pa.RecordBatch:
    """A SCHEMA batch from columns by name (compression as codec codes)."""
    cols["compression"] = _codec_names(cols["compression"])
    arrays = [c if isinstance(c, pa.Array)
              else _bools(c) if isinstance(c, np.ndarray) and f.type == pa.bool_()
              else pa.array(c, f.type)
              for f in SCHEMA for c in [cols[f.name]]]  # fmt: skip
    return pa.RecordBatch.from_arrays(arrays, schema=SCHEMA)


_BATCH_VALUES = {  # what a batch object says for the batch-level columns
    "timestamp_type": lambda b: TIMESTAMP_TYPE_CODES[b.timestamp_type],
    "base_offset": lambda b: b.base_offset,
    "magic": lambda b: b.magic,
    "compression": lambda b: int(b.compression),
    "producer_id": lambda b: b.producer_id,
    "producer_epoch": lambda b: b.producer_epoch,
    "base_sequence": lambda b: b.base_sequence,
    "is_transactional": lambda b: b.is_transactional,
    "is_control": lambda b: b.is_control,
    "partition_leader_epoch": lambda b: b.partition_leader_epoch,
    "position": lambda b: b.position,
}


def _from_objects(batches, max_inflated: int | None) -> pa.RecordBatch:
    """The object path: Record objects, then columns (legacy messages, control batches,
    and what the column decoders do not take)."""
    cols: dict[str, list] = {name: [] for name in SCHEMA.names}
    for b in batches:
        records = b.records(max_inflated=max_inflated)
        for name, get in _BATCH_VALUES.items():
            cols[name] += [get(b)] * len(records)
        for r in records:
            for name, value in (("offset", r.offset), ("timestamp", r.timestamp)):
                if not -(1 << 63) <= value < 1 << 63:
                    raise CorruptRecordError(
                        f"the {name} {value} of a record does not fit in 64 bits", b.position
                    )
            cols["offset"].append(r.offset)
            cols["timestamp"].append(r.timestamp)
            cols["key"].append(None if r.key is None else bytes(r.key))
            cols["value"].append(None if r.value is None else bytes(r.value))
            cols["headers"].append([
                {"key": java_text(k),
                 "value": None if v is None else bytes(v)}
                for k, v in r.headers
            ])  # fmt: skip
    return _record_batch(cols)

"""Columnar decoding: a run of batches into one Arrow record batch, without a Python object
per record.

The v2 records of a run go through one native call (`_speedups.decode_v2_columns`) that
writes Arrow-ready buffers (int64 offsets and timestamps, binary keys and values as
validity + int32 offsets + data, headers as list<struct<key, value>>); NumPy and PyArrow
wrap them without copying. Whatever that loop does not take (legacy message sets, a batch
it gives up on, a build without the C extension) goes through the object path, which stays
the reference: the columns equal those of `batch.records()` for every input, and a damaged
batch raises the same error with the same position (tests/test_columnar.py).

Needs the `columnar` extra (numpy, pyarrow).
"""

from __future__ import annotations

import numpy as np
import pyarrow as pa

from . import compression as _comp
from .batches import BatchIterator
from .errors import DecodeError

try:
    from ._speedups import decode_v2_columns as _native_columns
except ImportError:  # pragma: no cover - a build without a C compiler
    _native_columns = None

__all__ = ["SCHEMA", "decode_columns", "columns_from_batches"]

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

#: timestamp_type codes, as Kafka numbers them (Spark's `timestampType` column too).
TIMESTAMP_TYPE_CODES = {"NoTimestampType": -1, "CreateTime": 0, "LogAppendTime": 1}

_RUN_BYTES = 1 << 20  # ~1 MB of batches per native call: the working set stays in cache


def decode_columns(data, *, verify_crc: bool = True, source: str | None = None, start: int = 0,
                   end: int | None = None, max_inflated: int | None = None) -> pa.Table:  # fmt: skip
    """The records of every complete batch in data[start:end] as an Arrow table (SCHEMA),
    in chunks of about 1 MB of input. CRCs are checked per batch unless verify_crc is False; bad input raises the
    DecodeError the object path raises."""
    it = BatchIterator(data, verify_crc=verify_crc, source=source, start=start, end=end)
    batches = []
    try:
        for b in it:
            batches.append(b)
    except DecodeError:
        # The first error in file order wins, as in the object path: the records of the
        # batches before the damaged one are decoded (and may fail) first.
        columns_from_batches(batches, max_inflated=max_inflated)
        raise
    return columns_from_batches(batches, max_inflated=max_inflated)


def columns_from_batches(batches, *, max_inflated: int | None = None) -> pa.Table:
    """Columns for batches already found by a BatchIterator (in order)."""
    meta = _Meta(batches)
    pieces: list[pa.RecordBatch] = []
    run: list = []
    run_bytes = 0

    def flush():
        nonlocal run, run_bytes
        if run:
            pieces.extend(_v2_run(run, batches, meta, max_inflated))
            run, run_bytes = [], 0

    for i, b in enumerate(batches):
        if b.magic >= 2 and _native_columns is not None:
            run.append(i)
            run_bytes += b.size
            if run_bytes >= _RUN_BYTES:
                flush()
        else:
            flush()
            pieces.append(_from_objects([i], batches, meta))
    flush()
    return pa.Table.from_batches(pieces, SCHEMA)


def _region(b, max_inflated):
    codec = b.attributes & 7
    if codec == _comp.NONE:
        return b.records_region_raw
    try:
        return _comp.decompress(codec, b.records_region_raw, 2, max_inflated)
    except DecodeError:
        return None  # the object path raises it, located


def _v2_run(run: list[int], batches, meta, max_inflated) -> list[pa.RecordBatch]:
    regions = []
    for i in run:
        b = batches[i]
        region = _region(b, max_inflated)
        if region is None:
            return _split(run, batches, meta, max_inflated)
        lat = b.max_timestamp if b.attributes & 0x08 else None
        regions.append((region, b.num_records, b.base_offset, b.base_timestamp, lat, i))
    cols = _native_columns(regions)
    if cols is None:
        return _split(run, batches, meta, max_inflated)
    return [_assemble(cols, meta)]


def _split(run, batches, meta, max_inflated):
    """A run the native loop gave up on: each batch alone, the object path for the one(s)
    it does not take (which raises the precise error if the batch is damaged)."""
    if len(run) > 1:
        return [p for i in run for p in _v2_run([i], batches, meta, max_inflated)]
    return [_from_objects(run, batches, meta)]


def _binary(valid: bytes, offsets: bytes, data: bytes) -> pa.Array:
    mask = np.frombuffer(valid, np.uint8)
    n = len(mask)
    nulls = n - int(np.count_nonzero(mask))
    bitmap = pa.py_buffer(np.packbits(mask, bitorder="little")) if nulls else None
    return pa.Array.from_buffers(pa.binary(), n, [bitmap, pa.py_buffer(offsets), pa.py_buffer(data)],
                                 null_count=nulls)  # fmt: skip


def _assemble(cols, meta: _Meta) -> pa.RecordBatch:
    (offset, timestamp, batch, kv, ko, kd, vv, vo, vd, ho, hko, hkd, hvv, hvo, hvd) = cols
    n_headers = len(hko) // 4 - 1
    hkeys = pa.Array.from_buffers(
        pa.string(), n_headers, [None, pa.py_buffer(hko), pa.py_buffer(hkd)]
    )
    headers = pa.ListArray.from_arrays(
        pa.array(np.frombuffer(ho, np.int32)),
        pa.StructArray.from_arrays([hkeys, _binary(hvv, hvo, hvd)], fields=list(HEADER)),
    )
    cols_out = {
        "offset": pa.array(np.frombuffer(offset, np.int64)),
        "timestamp": pa.array(np.frombuffer(timestamp, np.int64)),
        "key": _binary(kv, ko, kd),
        "value": _binary(vv, vo, vd),
        "headers": headers,
        **meta.columns(np.frombuffer(batch, np.int32)),
    }
    return pa.RecordBatch.from_arrays([cols_out[f.name] for f in SCHEMA], schema=SCHEMA)


_META = {  # batch-level columns: Arrow type, NumPy type, how to read it off a batch
    "timestamp_type": (pa.int8(), np.int8, lambda b: TIMESTAMP_TYPE_CODES[b.timestamp_type]),
    "base_offset": (pa.int64(), np.int64, lambda b: b.base_offset),
    "magic": (pa.int8(), np.int8, lambda b: b.magic),
    "compression": (pa.string(), np.int8, lambda b: b.attributes & 7),
    "producer_id": (pa.int64(), np.int64, lambda b: b.producer_id),
    "producer_epoch": (pa.int16(), np.int16, lambda b: b.producer_epoch),
    "base_sequence": (pa.int32(), np.int32, lambda b: b.base_sequence),
    "is_transactional": (pa.bool_(), np.bool_, lambda b: b.is_transactional),
    "is_control": (pa.bool_(), np.bool_, lambda b: b.is_control),
    "partition_leader_epoch": (pa.int32(), np.int32, lambda b: b.partition_leader_epoch),
    "position": (pa.int64(), np.int64, lambda b: b.position),
}
_CODECS = pa.array([_comp.CODEC_NAMES.get(i, f"unknown({i})") for i in range(8)], pa.string())


class _Meta:
    """The batch-level values of a run of batches as NumPy arrays, read once."""

    def __init__(self, batches):
        self.arrays = {name: np.fromiter((get(b) for b in batches), dtype, len(batches))
                       for name, (_, dtype, get) in _META.items()}  # fmt: skip

    def columns(self, idx: np.ndarray) -> dict:
        """One value per record (idx: each record's batch index)."""
        out = {}
        for name, (type_, _, _) in _META.items():
            values = self.arrays[name][idx]
            if name == "compression":
                out[name] = _CODECS.take(pa.array(values))
            else:
                out[name] = pa.array(values, type_)
        return out


def _from_objects(run: list[int], batches, meta: _Meta) -> pa.RecordBatch:
    """The object path: Record objects, then columns (legacy message sets, and what the
    native loop does not take)."""
    offsets, stamps, keys, values, headers, idx = [], [], [], [], [], []
    for i in run:
        for r in batches[i].records():
            offsets.append(r.offset)
            stamps.append(r.timestamp)
            keys.append(None if r.key is None else bytes(r.key))
            values.append(None if r.value is None else bytes(r.value))
            headers.append([
                {"key": k.encode("utf-8", "surrogateescape").decode("utf-8", "replace"),
                 "value": None if v is None else bytes(v)}
                for k, v in r.headers
            ])  # fmt: skip
            idx.append(i)
    columns = meta.columns(np.array(idx, np.int32))
    cols = {
        "offset": pa.array(offsets, pa.int64()),
        "timestamp": pa.array(stamps, pa.int64()),
        "key": pa.array(keys, pa.binary()),
        "value": pa.array(values, pa.binary()),
        "headers": pa.array(headers, pa.list_(HEADER)),
        **columns,
    }
    return pa.RecordBatch.from_arrays([cols[f.name] for f in SCHEMA], schema=SCHEMA)

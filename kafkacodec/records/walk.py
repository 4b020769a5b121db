"""The native batch walk as NumPy arrays, without Arrow: the layout of a walked entry
(ENTRY, the C walk's BatchEntry), the native walk of a run of batches, and the native check
of the records of a run. `verify` reads whole segments through these (kafkacodec.log.check)
and pays for NumPy's import, not Arrow's; columnar builds its tables on the same ENTRY."""

from __future__ import annotations

import numpy as np

from kafkacodec.generated.kafka_record_batch import KafkaRecordBatch

from ..runtime import compression as _comp
from ..runtime.crc import crc32, crc32c
from ..runtime.errors import DecodeError
from .batches import LOG_OVERHEAD, bit_field, byte_view

try:
    from ._native import V2_RECORDS_AT
    from ._native import check_v2_records as _native_check
    from ._native import check_v2_run as _native_check_run
    from ._native import scan_batches as _native_scan
except ImportError:  # pragma: no cover - a build without a C compiler
    _native_check = _native_check_run = _native_scan = None
    V2_RECORDS_AT = 0

__all__ = ["ENTRY", "NATIVE", "native_run", "check_run", "check_compressed", "CHECKED", "UNCHECKED",
           "NOT_APPLICABLE"]  # fmt: skip

#: A batch header as the walk stores it: the v2 header fields, and its position. The C
#: struct of kafkacodec/records/_native_*.c (BatchEntry) has this layout (a test compares
#: them). Legacy messages fill it as Kafka's legacy batches answer: base_offset = their
#: offset, num_records -1 for a compressed wrapper, timestamps -1 for magic 0, no producer.
ENTRY = np.dtype([
    ("position", "i8"), ("base_offset", "i8"), ("base_timestamp", "i8"),
    ("max_timestamp", "i8"), ("producer_id", "i8"), ("len_batch", "i4"),
    ("partition_leader_epoch", "i4"), ("last_offset_delta", "i4"), ("base_sequence", "i4"),
    ("num_records", "i4"), ("crc", "u4"), ("attributes", "i2"), ("producer_epoch", "i2"),
    ("magic", "i1"),
], align=True)  # fmt: skip

#: Whether the native walk and check are built (without them: nothing here applies).
NATIVE = _native_scan is not None

#: check_run's answers per entry: records framed as the parser frames them, not, or a batch
#: the check does not read (compressed, control, legacy).
UNCHECKED, CHECKED, NOT_APPLICABLE = 0, 1, 2


def native_run(data, start: int, end: int, *, verify_crc: bool) -> tuple[np.ndarray, int]:
    """The entries of data[start:end] that the native walk reads, from start up to the
    first one it leaves to the Python iterator (damage, a partial entry at the end: that
    iterator reads it or names what is wrong), and where it stopped. Needs NATIVE."""
    if _native_scan is None:  # pragma: no cover
        raise RuntimeError("the native walk is not built")
    crcs = (crc32c, crc32) if verify_crc else (None, None)
    raw, stop = _native_scan(byte_view(data), start, end, *crcs)
    return np.frombuffer(raw, ENTRY), stop


def check_run(data, entries: np.ndarray) -> np.ndarray:
    """Per entry of a native run (native_run's), CHECKED when it is an uncompressed v2
    batch, not a control batch, whose records region is exactly its count of records,
    each framed as the generated parser frames it; UNCHECKED when such a batch's records
    are not (the parser then names what is wrong); NOT_APPLICABLE for the rest. Needs
    NATIVE."""
    if _native_check_run is None:  # pragma: no cover
        raise RuntimeError("the native check is not built")
    run = np.ascontiguousarray(entries, dtype=ENTRY)
    return np.frombuffer(bytearray(_native_check_run(byte_view(data), run)), np.uint8)


def check_compressed(data, entries: np.ndarray, flags: np.ndarray, progress=None) -> None:
    """check_run's check for the compressed v2 batches (not control batches) of a run,
    into flags (NOT_APPLICABLE there): each records region decompressed by the codec, as
    Batch.record_count decompresses it, then checked natively; CHECKED, or UNCHECKED when
    it does not decompress or its records are not right (the parser then names what).
    `progress(position)`: told each batch's position before it is checked."""
    view = byte_view(data)
    codecs = bit_field(KafkaRecordBatch, "compression", entries["attributes"])
    control = bit_field(KafkaRecordBatch, "is_control", entries["attributes"]) != 0
    todo = np.flatnonzero((flags == NOT_APPLICABLE) & (entries["magic"] == 2) & (codecs != 0) & ~control)
    position, size, count = entries["position"], entries["len_batch"], entries["num_records"]
    for i in todo.tolist():
        start = int(position[i])
        if progress is not None:
            progress(start)
        try:
            region = _comp.decompress(int(codecs[i]), view[start + V2_RECORDS_AT : start + LOG_OVERHEAD + int(size[i])], 2)
        except DecodeError:
            flags[i] = UNCHECKED
            continue
        flags[i] = CHECKED if _native_check(region, int(count[i])) else UNCHECKED

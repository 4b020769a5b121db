"""`make demo`: write a sample record set of every magic and codec, then read it back."""

from __future__ import annotations

import sys
from pathlib import Path

import kafkacodec as kc


def main(out: str = "out/sample.log") -> int:
    path = Path(out)
    path.parent.mkdir(parents=True, exist_ok=True)
    data = bytearray()
    offset = 0
    for magic, codec in [(0, "none"), (0, "gzip"), (1, "snappy"), (1, "lz4")]:
        recs = [kc.Record(None, 1_700_000_000_000 + i, b"key-%d" % i, b"value-%d" % i) for i in range(3)]
        data += kc.build_message_set(recs, magic=magic, compression=codec, base_offset=offset)
        offset += 3
    for codec in ["none", "gzip", "snappy", "lz4", "zstd"]:
        recs = [kc.Record(None, 1_700_000_000_000 + i, b"key", b"value", [("h", b"1")]) for i in range(3)]
        data += kc.build_batch(recs, base_offset=offset, compression=codec, producer_id=42, producer_epoch=0,
                               base_sequence=offset, is_transactional=True)
        offset += 3
    data += kc.build_control_batch(True, offset=offset, timestamp=1_700_000_000_100, producer_id=42,
                                   producer_epoch=0, coordinator_epoch=3)
    path.write_bytes(data)
    print(f"wrote {path} ({len(data)} bytes)")
    it = kc.iter_batches(path.read_bytes(), source=str(path))
    records = 0
    for b in it:
        recs = b.records()
        records += len(recs)
        print(f"baseOffset: {b.base_offset} lastOffset: {b.last_offset} magic: {b.magic} "
              f"compresscodec: {b.compression} position: {b.position} size: {b.size} "
              f"crc: {b.crc} isvalid: {b.is_valid} records: {len(recs)}"
              + (f" control: {recs[0].control.type_name}" if b.is_control else ""))
    print(f"verified {it.batches} batches, {records} records, CRCs all valid, {it.remaining} bytes left over")
    return 0


if __name__ == "__main__":
    sys.exit(main(*sys.argv[1:]))

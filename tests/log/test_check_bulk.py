"""verify's bulk check of a large segment (check._checked_in_bulk: the native walk and record
check over a whole run of batches) against the batch-at-a-time loop it replaces: on sound
and damaged segments of every kind, both find the same batches, records, offsets, ABORT
markers, unreadable regions and problems, in the same order."""

from __future__ import annotations

import struct

import pytest

from kafkacodec.log import check
from kafkacodec.log.check import check_segment
from kafkacodec.log.segment import Segment
from kafkacodec.records import walk
from kafkacodec.records.batches import Record
from kafkacodec.records.builders import build_batch, build_control_batch, build_message_set

pytestmark = pytest.mark.skipif(not walk.NATIVE, reason="the native extension is not built")

T0 = 1_700_000_000_000
CODECS = ("none", "gzip", "snappy", "lz4", "zstd")


def _batches(n: int, *, codecs=CODECS, start: int = 0) -> list[bytes]:
    """v2 batches of each codec; every fourth in a transaction a control batch ends
    (commit or abort, in turn); every tenth with timestamps older than the ones before."""
    out, offset = [], start
    for i in range(n):
        back = 5000 if i % 10 == 7 else 0
        recs = [Record(None, T0 + offset + j - back, f"k{(offset + j) % 7}".encode(), f"value {offset + j}".encode() * (1 + j % 3),
                       [("h", str(j).encode())] if j % 2 else []) for j in range(3 + i % 5)]  # fmt: skip
        txn = i % 4 == 3
        pid = 9000 + i if txn else 1
        out.append(build_batch(recs, base_offset=offset, compression=codecs[i % len(codecs)], producer_id=pid,
                               producer_epoch=0, is_transactional=txn))  # fmt: skip
        offset += len(recs)
        if txn:
            out.append(build_control_batch(i % 8 == 3, offset=offset, timestamp=T0 + offset,
                                           producer_id=pid, producer_epoch=0))  # fmt: skip
            offset += 1
    return out


def _legacy(start: int) -> list[bytes]:
    recs = [Record(None, T0 + j, b"k", f"legacy {j}".encode()) for j in range(3)]
    return [build_message_set(recs, magic=m, compression=c, base_offset=start + 3 * k)
            for k, (m, c) in enumerate([(0, "none"), (1, "none"), (1, "gzip")])]  # fmt: skip


def _at(parts: list[bytes], k: int) -> int:
    return sum(len(p) for p in parts[:k])


def _check(path, monkeypatch, bulk: bool, **kw):
    monkeypatch.setattr(check, "BULK_FROM", 0 if bulk else 1 << 62)
    seg = Segment(path.parent, int(path.stem))
    try:
        c = check_segment(seg, indexes=False, **kw)
    finally:
        seg.close()
    return (c.batches, c.records, [str(r) for r in c.regions], list(c.problems), c.problems.total,
            c.walk, sorted(c.aborts), c.notes)  # fmt: skip


def _damaged() -> dict[str, bytes]:
    parts = _batches(60)
    sound = b"".join(parts)
    cases = {"sound": sound}
    none_at = next(k for k, p in enumerate(parts) if p[21:23] == b"\x00\x00")  # attributes 0
    # a record's bytes changed inside an uncompressed batch (its CRC no longer matches)
    flipped = bytearray(sound)
    flipped[_at(parts, none_at) + 70] ^= 0x40
    cases["record byte flipped"] = bytes(flipped)
    # a count of records the region does not hold (inside the CRC too)
    count = bytearray(sound)
    pos = _at(parts, 5) + 57
    count[pos : pos + 4] = struct.pack(">i", struct.unpack_from(">i", count, pos)[0] + 2)
    cases["record count too large"] = bytes(count)
    # base offsets going back (outside the CRC)
    back = bytearray(sound)
    back[_at(parts, 9) : _at(parts, 9) + 8] = struct.pack(">q", 0)
    back[_at(parts, 30) : _at(parts, 30) + 8] = struct.pack(">q", 2)
    cases["offsets going back"] = bytes(back)
    # an offset the segment named 0 cannot hold
    far = _batches(3, start=(1 << 31) + 10)
    cases["offset out of the segment's range"] = sound + b"".join(far)
    # legacy messages after v2 batches, then v2 again
    end = struct.unpack_from(">q", parts[-1], 0)[0] + 100
    cases["legacy in between"] = sound + b"".join(_legacy(end)) + b"".join(_batches(10, start=end + 9))
    # damage in the middle (resynchronized after) and a partial batch at the end
    torn = bytearray(sound)
    torn[_at(parts, 20) + 8 : _at(parts, 20) + 12] = struct.pack(">i", 7)
    cases["damage then a partial tail"] = bytes(torn) + parts[0][:40]
    return cases


@pytest.mark.parametrize("case", list(_damaged()))
@pytest.mark.parametrize("verify_crc", [True, False])
@pytest.mark.parametrize("decode", [True, False])
def test_bulk_check_finds_what_the_loop_finds(tmp_path, monkeypatch, case, verify_crc, decode):
    path = tmp_path / "t-0" / f"{0:020d}.log"
    path.parent.mkdir()
    path.write_bytes(_damaged()[case])
    slow = _check(path, monkeypatch, False, verify_crc=verify_crc, decode=decode)
    fast = _check(path, monkeypatch, True, verify_crc=verify_crc, decode=decode)
    assert fast == slow
    sound = case in ("sound", "legacy in between")
    assert slow[0] > 0
    if verify_crc:  # every damage here is seen (without CRCs, not all: a value's byte)
        assert sound == (not slow[2] and not slow[3])


def test_bulk_check_counts_only_what_it_read(tmp_path, monkeypatch):
    """An uncompressed segment is counted by the native check; the count is the records
    the batches hold, not their declared counts (a count too large is a problem)."""
    path = tmp_path / "t-0" / f"{0:020d}.log"
    path.parent.mkdir()
    parts = _batches(40, codecs=("none",))
    data = bytearray(b"".join(parts))
    pos = _at(parts, 2) + 57
    data[pos : pos + 4] = struct.pack(">i", 1000)
    path.write_bytes(bytes(data))
    batches, records, regions, problems, *_ = _check(path, monkeypatch, True, verify_crc=False)
    declared = sum(struct.unpack_from(">i", p, 57)[0] for k, p in enumerate(parts) if k != 2)
    assert (batches, records, regions) == (len(parts), declared, [])
    assert len(problems) == 1 and f"byte {_at(parts, 2)}" in problems[0]


# ------------------------------------------------------------------ the indexes in bulk


def _indexed_segment(root):
    from kafkacodec.log.writer import PartitionWriter

    with PartitionWriter(root / "t-0", index_interval_bytes=64, fsync=False) as w:
        for part in _batches(80):
            w.append(part)
    return root / "t-0"


def _index_damage() -> dict:
    """Ways an .index (entries of 8 bytes) or .timeindex (12) can be wrong, by how they
    change the file's bytes."""

    def put(suffix, entry, at, fmt, value):
        def change(d):
            f = d / f"{0:020d}{suffix}"
            b = bytearray(f.read_bytes())
            size = 8 if suffix == ".index" else 12
            struct.pack_into(fmt, b, entry * size + at, value)
            f.write_bytes(bytes(b))

        return change

    return {
        "sound": lambda d: None,
        "position not a boundary": put(".index", 5, 4, ">i", 3),
        "offset not a batch's last": put(".index", 9, 0, ">i", 1),
        "offsets going back": put(".index", 12, 0, ">i", 0),
        "position past the log": put(".index", 20, 4, ">i", 1 << 30),
        "timestamp not the largest": put(".timeindex", 7, 0, ">q", T0 + 1),
        "time offset in no batch": put(".timeindex", 11, 8, ">i", 1 << 28),
        "timestamps going back": put(".timeindex", 15, 0, ">q", 0),
        "entry at a batch older than the largest": _older_batch_entry,
    }


def _older_batch_entry(d) -> None:
    """A time index entry naming, with the largest timestamp so far, a batch whose own
    timestamps are older (the entry's timestamp is not that batch's)."""
    seg = Segment(d, 0)
    walk = check_segment(seg, indexes=False).walk
    seg.close()
    j = next(i for i in range(1, len(walk)) if walk[i][3] < max(w[3] for w in walk[:i]))
    f = d / f"{0:020d}.timeindex"
    b = bytearray(f.read_bytes())
    struct.pack_into(">qi", b, 0, max(w[3] for w in walk[:j]), walk[j][2])
    f.write_bytes(bytes(b))


@pytest.mark.parametrize("case", list(_index_damage()))
@pytest.mark.parametrize("live", [False, True])
def test_index_checks_in_bulk_find_what_the_loop_finds(tmp_path, monkeypatch, case, live):
    from kafkacodec.log import index, segment

    d = _indexed_segment(tmp_path)
    _index_damage()[case](d)

    def problems(bulk: bool):
        limit = 0 if bulk else 1 << 62
        monkeypatch.setattr(index, "BULK_ENTRIES", limit)
        monkeypatch.setattr(segment, "BULK_ENTRIES", limit)
        seg = Segment(d, 0)
        try:
            c = check_segment(seg, live=live)
            return (list(c.problems), c.problems.total, list(seg.offset_index.check(seg.size)),
                    list(seg.time_index.check(10**6)))  # fmt: skip
        finally:
            seg.close()

    slow = problems(False)
    assert problems(True) == slow
    assert len(Segment(d, 0).offset_index) > 40
    if not live:
        assert (case == "sound") == (not slow[0])

"""kafkacodec.storage.fsio: files as a running broker changes them under a reader."""


def test_a_file_that_shrinks_while_it_is_mapped_is_mapped_at_its_new_size(tmp_path, monkeypatch):
    """A broker trims the preallocated index it rolls: between a file's size and its
    mapping, the file can shrink (mmap then refuses the old size). The mapping is taken again
    at the size the file has then."""
    import os

    from kafkacodec.storage import fsio

    f = tmp_path / "00000000000000000000.index"
    f.write_bytes(b"\0" * 4096)
    real = os.fstat
    calls = []

    def fstat(fd):
        st = real(fd)
        calls.append(st.st_size)
        if st.st_size == 4096 and len(calls) > 1:  # the size map_regular takes, then a trim
            os.truncate(f, 80)
        return st

    monkeypatch.setattr(fsio.os, "fstat", fstat)
    mapped, size = fsio.map_regular(f)
    assert size == 80 and len(mapped) == 80


def test_an_index_trimmed_while_it_is_open_is_read_as_it_was(tmp_path):
    """A broker preallocates the active segment's index files and trims them to their
    entries when it rolls the segment (OffsetIndex.trimToValidSize). A reader that mapped the
    preallocated size and touches what the trim cut is killed by SIGBUS: the index maps only
    its entries and reads past them with pread. Run in a process of its own (a SIGBUS there
    fails the test, not the run)."""
    import subprocess
    import sys

    code = f"""
import os
from kafkacodec.log.index import OffsetIndex, TimeIndex, encode_offset_entries, encode_time_entries
entries = [(100 + 10 * i, 4096 * (i + 1)) for i in range(50)]
for name, cls, body in (("a.index", OffsetIndex, encode_offset_entries(100, entries)),
                        ("a.timeindex", TimeIndex, encode_time_entries(100, entries))):
    path = os.path.join({str(tmp_path)!r}, name)
    with open(path, "wb") as f:  # preallocated: the entries, then zeros to 10 MB
        f.write(body)
        f.truncate(10 << 20)
    idx = cls(path, 100)
    before = (len(idx), idx.preallocated, list(idx.dump_entries()), idx.file_sanity())
    os.truncate(path, len(body))  # the broker rolls the segment
    after = (len(idx), idx.preallocated, list(idx.dump_entries()), idx.file_sanity())
    assert before == after and len(idx) == 50, (before[:2], after[:2])
    idx.close()
print("ok")
"""
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=120)
    assert out.returncode == 0, (out.returncode, out.stderr[-2000:])
    assert out.stdout.strip() == "ok"


def test_dumping_a_preallocated_index_reads_past_its_entries_once(tmp_path, monkeypatch):
    """kafka-dump-log's entries of an active segment's index (its entries, then zeros to
    the preallocated 10 MB) end at the first zero entry: the tail is never read entry by
    entry (it was: 1.3M reads, 10 s for `kafkacodec dump` of one index)."""
    import os

    from kafkacodec.log.index import (
        OffsetIndex,
        TimeIndex,
        encode_offset_entries,
        encode_time_entries,
    )

    entries = [(100 + 10 * i, 4096 * (i + 1)) for i in range(50)]
    for name, cls, body in (("a.index", OffsetIndex, encode_offset_entries(100, entries)),
                            ("a.timeindex", TimeIndex, encode_time_entries(100, entries))):  # fmt: skip
        path = tmp_path / name
        path.write_bytes(body)
        os.truncate(path, 10 << 20)
        idx = cls(path, 100)
        reads = []
        real = idx._read
        monkeypatch.setattr(idx, "_read", lambda i, real=real, reads=reads: reads.append(i) or real(i))
        dumped = list(idx.dump_entries())
        assert len(dumped) == 50 and dumped == [idx.entry(i) for i in range(50)]
        assert len(reads) <= 51 + 50  # the entries compared above, and the first zero one
        idx.close()

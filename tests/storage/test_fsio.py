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

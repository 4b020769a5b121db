"""The bytes of one file, local or remote, read a range at a time.

Every reader of the log layer takes a buffer in which a byte's index is its position in the
file (the walks, the columnar decoder, the error messages all speak absolute positions).
A local file is mapped whole (fsio.map_regular) and the kernel reads what is touched. A
remote one cannot fault pages in, so a SpooledBlob fetches what a reader asks for with
ensure(start, end) before it reads there: the ranges arrive in an unlinked, sparse
temporary file (the spool) mapped in memory at their positions. So:

- a lookup fetches the few kilobytes around an index entry, not the object;
- a scan fetches large sequential ranges (8 MiB pieces, four at a time) and the pages it
  has passed can be let go (release): memory stays that of the pieces in flight; the
  spool's disk space is freed when the blob is closed and nothing views it any more, even
  if the process dies (the file has no name);
- bytes never fetched are never seen: nothing is read outside an ensured range (the
  readers are bounded by it), and nothing fetched is ever taken back from the spool
  (release drops pages from memory, to be read again from the spool, never from the
  network), so a batch still holding a view of its bytes keeps seeing them.

A chunked source (Kafka tiered storage, storage/tiered.py) fetches whole chunks and
transforms them back (decrypts, decompresses) before they reach the spool: readers see
the original segment's bytes either way.
"""

from __future__ import annotations

import mmap
import os
import tempfile
import threading
from collections.abc import Callable, Iterable, Sequence
from concurrent.futures import ThreadPoolExecutor
from typing import Any

from ..runtime.errors import StorageError
from . import fsio

__all__ = ["Blob", "LocalBlob", "SpooledBlob", "RangeSet", "PIECE", "PARALLEL"]

#: The largest range one GET fetches when a blob is read in bulk.
PIECE = 8 << 20
#: GETs in flight at once for a bulk read.
PARALLEL = 4


class RangeSet:
    """Disjoint, sorted [start, end) ranges."""

    __slots__ = ("spans",)

    def __init__(self) -> None:
        self.spans: list[tuple[int, int]] = []

    def missing(self, start: int, end: int) -> list[tuple[int, int]]:
        """The parts of [start, end) not in the set."""
        out, pos = [], start
        for a, b in self.spans:
            if b <= pos:
                continue
            if a >= end:
                break
            if a > pos:
                out.append((pos, a))
            pos = max(pos, b)
            if pos >= end:
                break
        if pos < end:
            out.append((pos, end))
        return out

    def add(self, start: int, end: int) -> None:
        if start >= end:
            return
        merged = []
        for a, b in self.spans:
            if b < start or a > end:
                merged.append((a, b))
            else:
                start, end = min(a, start), max(b, end)
        merged.append((start, end))
        merged.sort()
        self.spans = merged

    @property
    def total(self) -> int:
        return sum(b - a for a, b in self.spans)


class Blob:
    """The bytes of one file: `size`, and a buffer of it in which [start, end) holds the
    file's bytes once ensure(start, end) has returned it."""

    name: str
    size: int
    #: Whether reading costs fetches (a reader then asks for ranges, not the whole).
    remote = False
    #: (st_dev, st_ino) of the local file read, whatever its name is now; None when remote.
    identity: tuple[int, int] | None = None

    def ensure(self, start: int, end: int):
        """A buffer in which the bytes [start, end) of the file are present, at their positions
        (a remote file fetches what it does not have yet)."""
        raise NotImplementedError

    def whole(self):
        """A buffer holding every byte of the file."""
        return self.ensure(0, self.size)

    def release(self, start: int, end: int) -> None:
        """The bytes [start, end) will not be read again soon: their pages may leave memory
        (they are read again, from the file or the spool, if they are touched)."""

    def prefetch(self, start: int, end: int) -> None:
        """The bytes [start, end) will be read next: a remote file fetches them in the
        background, while the reader works on what it has."""

    def close(self) -> None:
        """Let go of the file's bytes (a mapping unmapped, a spool removed)."""
        pass


class LocalBlob(Blob):
    """A local file, mapped whole (never through a symbolic link; fsio's rules)."""

    def __init__(self, path) -> None:
        self.name = str(path)
        data, size, identity = fsio.map_identified(path)
        if data is None:
            raise FileNotFoundError(path)
        self._map = data
        self.size = size
        self.identity = identity

    def ensure(self, start: int, end: int):
        return self._map

    def release(self, start: int, end: int) -> None:
        _drop(self._map, start, end)

    def close(self) -> None:
        fsio.unmap(self._map)
        self._map = b""


def _drop(buf, start: int, end: int) -> None:
    """Drop the whole pages of a file mapping inside [start, end) (the pages themselves stay
    in the file: touching them again reads them back)."""
    if isinstance(buf, mmap.mmap) and hasattr(mmap, "MADV_DONTNEED"):
        first = start + (-start) % mmap.PAGESIZE
        stop = end - end % mmap.PAGESIZE
        if stop > first:
            try:
                buf.madvise(mmap.MADV_DONTNEED, first, stop - first)
            except (OSError, ValueError):
                pass


class SpooledBlob(Blob):
    """A remote file, fetched a range at a time into a spool (module docstring).

    `units(start, end)` cuts a missing range into the ranges one fetch gets (a source that
    reads whole chunks widens it to their boundaries); `fetch(start, end)` returns the
    file's bytes [start, end) for one unit. Bulk reads run PARALLEL fetches at once."""

    remote = True

    def __init__(self, name: str, size: int, fetch: Callable[[int, int], bytes],
                 units: Callable[[int, int], Sequence[tuple[int, int]]] | None = None,
                 spool_dir: str | None = None) -> None:  # fmt: skip
        self.name = name
        self.size = size
        self._fetch = fetch
        self._units = units or _pieces
        self._spool_dir = spool_dir
        self._fd: int | None = None
        self._map: Any = None
        self._have = RangeSet()
        self._lock = threading.Lock()
        self._ahead: ThreadPoolExecutor | None = None

    def _open_spool(self):
        if self._map is not None:
            return self._map
        if self.size == 0:
            self._map = b""
            return self._map
        try:
            fd, tmp = tempfile.mkstemp(prefix="kafkacodec-spool-", dir=self._spool_dir)
        except OSError as err:
            raise StorageError(self.name, f"cannot make a spool file in "
                               f"{self._spool_dir or tempfile.gettempdir()}: {err.strerror} "
                               "(storage option spool_dir)") from None  # fmt: skip
        try:
            os.unlink(tmp)  # nameless: its space is freed when the last view of it goes
            os.ftruncate(fd, self.size)  # sparse: only what is fetched takes space
            self._map = mmap.mmap(fd, self.size, access=mmap.ACCESS_READ)
        except OSError as err:
            os.close(fd)
            raise StorageError(self.name, f"cannot map a spool of {self.size} bytes: "
                               f"{err.strerror}") from None  # fmt: skip
        self._fd = fd
        return self._map

    def ensure(self, start: int, end: int):
        start, end = max(0, start), min(end, self.size)
        with self._lock:
            buf = self._open_spool()
            if start >= end:
                return buf
            todo = [u for gap in self._have.missing(start, end) for u in self._units(*gap)]
            if len(todo) == 1:
                self._store(*todo[0])
                self._have.add(*todo[0])
            elif todo:
                with ThreadPoolExecutor(min(PARALLEL, len(todo)),
                                        thread_name_prefix="kafkacodec-fetch") as pool:  # fmt: skip
                    for (a, b), f in [((a, b), pool.submit(self._store, a, b)) for a, b in todo]:
                        f.result()
                        self._have.add(a, b)
            return buf

    def _store(self, start: int, end: int) -> None:
        data = self._fetch(start, end)
        if len(data) != end - start:  # a source's own check failed to say so
            raise StorageError(self.name, f"{len(data)} bytes arrived for {end - start}",
                               start, end)  # fmt: skip
        view = memoryview(data)
        pos = start
        try:
            while view:
                n = os.pwrite(self._fd, view, pos)  # type: ignore[arg-type]
                view, pos = view[n:], pos + n
        except OSError as err:
            raise StorageError(self.name, f"cannot keep the fetched bytes in the spool "
                               f"({self._spool_dir or tempfile.gettempdir()}): {err.strerror} "
                               "(storage option spool_dir)", start, end) from None  # fmt: skip

    def release(self, start: int, end: int) -> None:
        if self._map is not None:
            _drop(self._map, start, end)

    def prefetch(self, start: int, end: int) -> None:
        if self._ahead is None:
            self._ahead = ThreadPoolExecutor(1, thread_name_prefix="kafkacodec-readahead")
        self._ahead.submit(self._fetch_quietly, start, end)

    def _fetch_quietly(self, start: int, end: int) -> None:
        try:
            self.ensure(start, end)
        except Exception:  # noqa: BLE001 - the reader's own ensure() fetches again and says why
            pass

    def __del__(self) -> None:
        if self._fd is not None:
            os.close(self._fd)
            self._fd = None

    def close(self) -> None:
        if self._ahead is not None:
            self._ahead.shutdown(wait=True, cancel_futures=True)
            self._ahead = None
        with self._lock:
            fsio.unmap(self._map)  # while batches still view it, it goes when they do
            self._map = None
            if self._fd is not None:
                os.close(self._fd)
                self._fd = None
            self._have = RangeSet()


def _pieces(start: int, end: int) -> list[tuple[int, int]]:
    return [(a, min(a + PIECE, end)) for a in range(start, end, PIECE)]


def covering(bounds: Iterable[int], start: int, end: int) -> list[tuple[int, int]]:
    """The units (consecutive [bound, next bound) ranges, grouped up to about PIECE bytes)
    that cover [start, end), for a source whose fetches must start and end on bounds (the
    sorted chunk starts of a chunked file, ending with its size)."""
    import bisect

    cuts = list(bounds)
    i = max(bisect.bisect_right(cuts, start) - 1, 0)
    out: list[tuple[int, int]] = []
    while i < len(cuts) - 1 and cuts[i] < end:
        a = cuts[i]
        j = i + 1
        while j < len(cuts) - 1 and cuts[j] < end and cuts[j + 1] - a <= PIECE:
            j += 1
        out.append((a, cuts[j]))
        i = j
    return out

"""Where log directories live: local disks, read with fsio's care (no symbolic link
followed, only regular files, sizes capped), and object stores (objects.py: S3, GCS, Azure,
HDFS through pyarrow.fs), read a range at a time (blob.py); Kafka tiered storage's layouts
on top of either (tiered.py).

A path is a pathlib.Path for a local file or directory and an objects.ObjectPath for a URL;
both answer name, suffix, parent, /, exists(), is_dir() and iterdir(), so the log layer
lists and names files the same way wherever they are. Reading goes through this module:

    p = as_path("s3://backups/kafka/orders-0", {"region": "eu-west-1"})
    blob = open_blob(p / "00000000000000000000.log")    # blob.ensure(start, end) -> buffer
    data, size = map_file(p / "00000000000000000000.index")
    text = read_side_file(p / "leader-epoch-checkpoint")
"""

from __future__ import annotations

import os
import threading
from pathlib import Path

from ..runtime.errors import StorageError
from . import fsio
from .blob import Blob, LocalBlob, SpooledBlob
from .objects import ObjectPath, Stats, is_url, object_path, parse_options, total_stats

__all__ = [
    "as_path", "is_remote", "open_blob", "map_file", "read_whole", "read_side_file", "size_of",
    "ObjectPath", "Blob", "Stats", "total_stats", "parse_options", "is_url", "refuse_remote",
    "named_path", "LINK_RULE",
]  # fmt: skip

#: How kafkacodec treats symbolic links, said in the messages that refuse one.
LINK_RULE = ("kafkacodec follows a link only when it is named on the command line, never one "
             "found inside a log directory")  # fmt: skip

StoragePath = Path | ObjectPath


def as_path(target, options: dict | None = None) -> StoragePath:
    """A local path, or the ObjectPath of a URL (with the store options that configure it).
    `file://` URLs are local paths; any other scheme that is not an object store's is an
    error (never a local file named like a URL)."""
    if isinstance(target, (Path, ObjectPath)):
        return target
    text = str(target)
    if text.startswith("file://"):
        return Path(text[len("file://") :])
    if is_url(text):
        return object_path(text, options)
    if "://" in text:
        raise StorageError(text, f"unsupported URL scheme {text.split('://')[0]!r} (object "
                                 "stores: s3, gs, abfs, abfss, hdfs; or a local path)")  # fmt: skip
    return Path(text)


def named_path(target, options: dict | None = None) -> StoragePath:
    """A path named on the command line (as_path): a local symbolic link is followed, once,
    to what it points to, since the operator chose it (a linked segment, partition
    directory or log.dirs reads as what it points to). Links found inside a log directory
    are never followed (fsio opens files with O_NOFOLLOW; LogDirs names linked partition
    directories): LINK_RULE."""
    p = as_path(target, options)
    if isinstance(p, Path) and p.is_symlink():
        return Path(os.path.realpath(p))
    return p


def is_remote(path) -> bool:
    """Whether path is in an object store."""
    return isinstance(path, ObjectPath)


def refuse_remote(path, what: str) -> None:
    """Raise StorageError for a command that would write where path is: kafkacodec never
    writes to an object store."""
    if is_remote(path) or (isinstance(path, str) and is_url(path)):
        raise StorageError(str(path), f"{what} writes files, and kafkacodec never writes to an "
                                      "object store: copy the data to a local directory first")  # fmt: skip


class _Object:
    """An object's pyarrow file, opened on the first fetch (pyarrow asks for its size
    then) and shared by the fetches of a blob (ranged reads are thread-safe)."""

    def __init__(self, path: ObjectPath):
        self.path = path
        self._handle = None
        self._lock = threading.Lock()

    def read(self, start: int, end: int) -> bytes:
        if self._handle is None:
            with self._lock:
                if self._handle is None:
                    self._handle = self.path.store.open(self.path.key)
        return self.path.store.read(self._handle, self.path.key, start, end)


def open_blob(path: StoragePath) -> Blob:
    """The bytes of a file, read a range at a time (FileNotFoundError when it is missing;
    a local one is refused as fsio refuses it: a link, a FIFO, a device)."""
    if isinstance(path, ObjectPath):
        info = path.info()
        if not path.is_file():
            raise FileNotFoundError(str(path))
        obj = _Object(path)
        return SpooledBlob(str(path), info.size, obj.read, spool_dir=path.store.spool_dir)
    return LocalBlob(path)


def map_file(path: StoragePath):
    """(a buffer of the whole file, its size), or (None, 0) when it is missing: a local
    file mapped (fsio.map_regular), a remote one fetched in one GET (index files)."""
    if isinstance(path, ObjectPath):
        if not path.exists():
            return None, 0
        if not path.is_file():
            raise StorageError(str(path), "is a directory, not a file")
        size = path.size
        if size == 0:
            return b"", 0
        obj = _Object(path)
        return obj.read(0, size), size
    return fsio.map_regular(path)


def read_whole(path: StoragePath):
    """Every byte of a file that is read through (a .log dumped, or checked against its
    index), or None when it is missing: a local file mapped, a remote one fetched into a
    spool on disk (blob.py), not into memory."""
    try:
        return open_blob(path).whole()
    except FileNotFoundError:
        return None


def read_side_file(path: StoragePath, limit: int = fsio.SIDE_FILE_LIMIT) -> bytes | None:
    """The bytes of a small file (a checkpoint, partition.metadata, a manifest), None when
    missing; refused above `limit` bytes before any of it is read."""
    if isinstance(path, ObjectPath):
        if not path.exists():
            return None
        size = path.size
        if size > limit:
            raise StorageError(str(path), f"{size} bytes: larger than any such file Kafka "
                                          f"writes (limit {limit}); not read")  # fmt: skip
        return b"" if size == 0 else _Object(path).read(0, size)
    return fsio.read_side_file(path, limit)


def size_of(path: StoragePath) -> int:
    """A file's size as it stands, 0 when it is gone."""
    if isinstance(path, ObjectPath):
        try:
            return path.size
        except StorageError:
            return 0
    return fsio.size_or_zero(path)

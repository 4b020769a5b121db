"""Careful file access for a tool that operators run as root on a broker's disks.

Everything the log layer opens goes through here, so that the same rules hold everywhere:

- never through a symbolic link (O_NOFOLLOW): a link planted in a partition directory
  must not turn a read into a read of /etc/shadow, nor a repair into a write elsewhere;
- only regular files: a FIFO, socket or device named like a segment is refused at once
  (opened with O_NONBLOCK, so that a FIFO cannot hang the command);
- side files (checkpoints, partition.metadata, journals) are read with a size cap;
- new files are created with O_EXCL under a name of kafkacodec's own, written, fsynced and
  renamed into place; a failed step removes its temporary file; they take the owner, group
  and mode of the file they replace, so that a repair run as root leaves files the broker
  can still write;
- every error names the file (an OSError without a file name becomes a LogError that has one).

The lock a broker holds on its log directory (`<log.dir>/.lock`, a Java FileChannel lock,
which is a POSIX fcntl lock on Linux) is taken here too, by LogDirLock.
"""

from __future__ import annotations

import errno
import fcntl
import mmap
import os
import shutil
import stat
import struct
from collections.abc import Iterable
from pathlib import Path
from typing import Any, BinaryIO

from ..runtime.errors import LogError, RefusedError, UnreadableError

__all__ = [
    "SIDE_FILE_LIMIT", "TMP_SUFFIX", "open_regular", "read_side_file", "map_regular", "map_identified",
    "unmap", "write_atomic", "copy_range", "fsync_dir", "LogDirLock", "lock_holder",
    "take_owner", "size_or_zero", "append_file", "GrowingTail",
]  # fmt: skip

#: The largest side file read (leader-epoch-checkpoint, partition.metadata, broker
#: checkpoints, repair journals): far above anything Kafka writes, far below harm.
SIDE_FILE_LIMIT = 16 << 20
#: kafkacodec's temporary files: a name Kafka never uses (Kafka's own is ".tmp").
TMP_SUFFIX = ".kafkacodec-tmp"
_CHUNK = 1 << 20
#: copy_file_range's answers that mean: not in the kernel here (another filesystem, an old
#: kernel, a filesystem that does not do it); the copy goes through a buffer instead.
_NO_KERNEL_COPY = {errno.EXDEV, errno.ENOSYS, errno.EOPNOTSUPP, errno.EINVAL}
_KINDS = (
    (stat.S_ISDIR, "a directory"), (stat.S_ISFIFO, "a FIFO"), (stat.S_ISSOCK, "a socket"),
    (stat.S_ISCHR, "a character device"), (stat.S_ISBLK, "a block device"),
)  # fmt: skip


def _oserror(path, err: OSError, verb: str) -> LogError:
    if err.errno == errno.ELOOP:
        return UnreadableError(path, "is a symbolic link inside a log directory: not followed ("
                              "kafkacodec follows a link only when it is named on the command "
                              "line)")  # fmt: skip
    return UnreadableError(path, f"cannot {verb}: {err.strerror}")


def open_regular(path, flags: int = os.O_RDONLY) -> int:
    """A file descriptor of the regular file at path, opened without following a symbolic
    link and without blocking on a FIFO. FileNotFoundError when it is missing; LogError
    for anything else that is not a plain file."""
    try:
        fd = os.open(path, flags | os.O_NOFOLLOW | os.O_NONBLOCK | os.O_CLOEXEC)
    except FileNotFoundError:
        raise
    except OSError as err:
        if err.errno == errno.ENXIO:  # a FIFO without a reader, opened for writing
            raise LogError(path, "is a FIFO, not a regular file") from None
        raise _oserror(path, err, "open") from None
    mode = os.fstat(fd).st_mode
    if not stat.S_ISREG(mode):
        os.close(fd)
        kind = next((name for test, name in _KINDS if test(mode)), "not a plain file")
        raise LogError(path, f"is {kind}, not a regular file")
    return fd


def read_side_file(path, limit: int = SIDE_FILE_LIMIT) -> bytes | None:
    """The bytes of a small file (None when missing); LogError above `limit` bytes, before
    reading any of it (a sparse 1 GB file costs nothing)."""
    try:
        fd = open_regular(path)
    except FileNotFoundError:
        return None
    try:
        size = os.fstat(fd).st_size
        if size > limit:
            raise LogError(path, f"{size} bytes: larger than any such file Kafka writes "
                                 f"(limit {limit}); not read")  # fmt: skip
        with os.fdopen(fd, "rb", closefd=False) as f:
            data = f.read(limit + 1)
        if len(data) > limit:
            raise LogError(path, f"grew past {limit} bytes while read; not read")
        return data
    except OSError as err:
        raise _oserror(path, err, "read") from None
    finally:
        os.close(fd)


#: Attempts at mapping a file that shrinks between its size and its mapping.
_MAP_TRIES = 5


def map_regular(path):
    """(a read-only mmap, or b"" when empty, and the size) of a regular file; (None, 0)
    when it is missing."""
    data, size, _identity = map_identified(path)
    return data, size


def map_identified(path):
    """map_regular's (buffer, size) and the identity (st_dev, st_ino) of the very file
    mapped, from the descriptor it was mapped through: a path stat-ed before or after can
    name another file (a broker renames and replaces segments as it runs). (None, 0, None)
    when it is missing."""
    try:
        fd = open_regular(path)
    except FileNotFoundError:
        return None, 0, None
    try:
        for _ in range(_MAP_TRIES):
            st = os.fstat(fd)
            identity = (st.st_dev, st.st_ino)
            if st.st_size == 0:
                return b"", 0, identity
            try:
                return mmap.mmap(fd, st.st_size, access=mmap.ACCESS_READ), st.st_size, identity
            except ValueError:  # shrunk since fstat: a broker trims an index it rolls
                continue
        raise LogError(path, "kept shrinking while it was mapped; not read")
    except OSError as err:
        raise _oserror(path, err, "read") from None
    finally:
        os.close(fd)


class GrowingTail:
    """A regular file read in two parts, for files a broker preallocates and trims when it
    rolls them (its index files): the bytes [0, prefix) mapped, which no trim reaches, and
    anything after read with pread, as zeros where the file no longer has them (a trim only
    cuts the zero-filled tail). A mapping of bytes the file lost is a SIGBUS for its reader,
    which no Python code can catch. `size` is the size when opened."""

    def __init__(self, path) -> None:
        self.path = path
        fd = open_regular(path)
        try:
            self.size = os.fstat(fd).st_size
        except OSError as err:
            os.close(fd)
            raise _oserror(path, err, "read") from None
        self._fd: int | None = fd
        self.prefix: Any = b""

    def pread(self, n: int, at: int) -> bytes:
        """The file's bytes [at, at + n) as they are now, zero-padded past its end."""
        if self._fd is None:
            raise LogError(self.path, "read after close")
        try:
            data = os.pread(self._fd, n, at)
        except OSError as err:
            raise _oserror(self.path, err, "read") from None
        return data.ljust(n, b"\0")

    def map_prefix(self, n: int):
        """Map the bytes [0, n) (n at most size); the file is closed after."""
        try:
            if n > 0:
                if self._fd is None:
                    raise LogError(self.path, "mapped after close")
                try:
                    self.prefix = mmap.mmap(self._fd, n, access=mmap.ACCESS_READ)
                except ValueError:  # shrunk below n since opened: read what is asked
                    self.prefix = self.pread(n, 0)
                except OSError as err:
                    raise _oserror(self.path, err, "read") from None
            return self.prefix
        finally:
            self.close()

    def close(self) -> None:
        if self._fd is not None:
            os.close(self._fd)
            self._fd = None


#: How far a walk reads before it lets the kernel drop the pages of the file it has read.
DROP_EVERY = 32 << 20


def drop_pages(buf, upto: int) -> None:
    """Let the kernel drop the pages of a map_regular mapping before byte `upto` (they are
    read again from the file if touched): a walk over a large file keeps its resident
    memory bounded instead of growing with the file. Anything else is left alone."""
    if isinstance(buf, mmap.mmap) and hasattr(mmap, "MADV_DONTNEED"):
        length = upto - upto % mmap.PAGESIZE
        if length > 0:
            try:
                buf.madvise(mmap.MADV_DONTNEED, 0, length)
            except (OSError, ValueError):
                pass


class PageDropper:
    """Lets the kernel drop the pages of a mapping (or of a storage.Blob) behind a walk,
    every DROP_EVERY bytes: a walk over a large file keeps its resident memory bounded
    whatever the file's size."""

    __slots__ = ("buf", "dropped")

    def __init__(self, buf, start: int = 0) -> None:
        self.buf = buf
        self.dropped = start

    def passed(self, position: int) -> None:
        """The walk is at position: what is before it may go."""
        if position - self.dropped > DROP_EVERY:
            release = getattr(self.buf, "release", None)
            if release is not None:  # a Blob: a local map or a remote file's spool
                release(0, position)
            else:
                drop_pages(self.buf, position)
            self.dropped = position


def unmap(buf) -> None:
    """Close what map_regular mapped; while batches still view it, it unmaps when they go."""
    if isinstance(buf, mmap.mmap):
        try:
            buf.close()
        except BufferError:
            pass


def take_owner(fd: int, like: os.stat_result | None, mode: int = 0o600) -> None:
    """Give the open file fd the owner, group and permission bits of `like` (the file it
    replaces), or `mode` with the current user's ownership when there is none."""
    if like is None:
        os.fchmod(fd, mode)
        return
    try:
        os.fchown(fd, like.st_uid, like.st_gid)
    except PermissionError:  # not root: a file we may create is ours; keep the mode
        pass
    os.fchmod(fd, stat.S_IMODE(like.st_mode))


def _remove_stale(path: Path) -> None:
    """Remove a leftover temporary file of ours: unlink never follows a link, so a planted
    symbolic link is removed, not its target."""
    try:
        if stat.S_ISDIR(os.lstat(path).st_mode):
            raise LogError(path, "is a directory where kafkacodec keeps a temporary file")
        os.unlink(path)
    except FileNotFoundError:
        pass


def write_atomic(path, chunks: Iterable[bytes], *, like: os.stat_result | None = None,
                 mode: int = 0o600, replace: bool = True) -> os.stat_result:  # fmt: skip
    """Write a file crash-safely: a temporary file (O_EXCL, never through a link) gets the
    bytes, the owner and mode of `like`, an fsync, then a rename to path. A crash leaves the
    old file or the new one; a failed step removes the temporary file. With replace=False
    an existing path is an error. Returns the new file's stat."""
    path = Path(path)
    tmp = path.with_name(path.name + TMP_SUFFIX)
    _remove_stale(tmp)
    try:
        fd = os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_NOFOLLOW | os.O_CLOEXEC,
                     0o600)  # fmt: skip
    except OSError as err:
        raise _oserror(tmp, err, "create") from None
    try:
        try:
            take_owner(fd, like, mode)
            for chunk in chunks:
                view = memoryview(chunk)
                while view:
                    view = view[os.write(fd, view) :]
            os.fsync(fd)
            st = os.fstat(fd)
        finally:
            os.close(fd)
        if not replace and os.path.lexists(path):
            raise LogError(path, "exists already; not overwritten")
        os.replace(tmp, path)
        return st
    except OSError as err:
        _cleanup(tmp)
        raise _oserror(path, err, "write") from None
    except BaseException:
        _cleanup(tmp)
        raise


def _cleanup(tmp: Path) -> None:
    try:
        os.unlink(tmp)
    except OSError:
        pass


def copy_range(src, start: int, end: int) -> Iterable[bytes]:
    """The bytes [start, end) of a regular file, in chunks of 1 MiB: a copy streams, it
    never holds a whole segment."""
    fd = open_regular(src)
    try:
        pos = start
        while pos < end:
            chunk = os.pread(fd, min(_CHUNK, end - pos), pos)
            if not chunk:
                raise LogError(src, f"ended at byte {pos}, before {end}, while copied")
            yield chunk
            pos += len(chunk)
    except OSError as err:
        raise _oserror(src, err, "read") from None
    finally:
        os.close(fd)


def append_file(src: BinaryIO, dst: BinaryIO) -> int:
    """Append the whole of the open file src to dst at its position, in the kernel where
    it can (copy_file_range: no bytes through this process; a reflink on filesystems that
    share extents), else through a buffer. Returns the bytes appended."""
    dst.flush()
    size = os.fstat(src.fileno()).st_size
    done = 0
    try:
        while done < size:
            n = os.copy_file_range(src.fileno(), dst.fileno(), size - done)
            if n == 0:
                raise LogError(src.name, f"ended at byte {done}, before {size}, while copied")
            done += n
    except (AttributeError, OSError) as err:  # no copy_file_range here, or not between these
        if isinstance(err, OSError) and err.errno not in _NO_KERNEL_COPY:
            raise
        src.seek(done)
        shutil.copyfileobj(src, dst, _CHUNK)
        done = size
    return done


def size_or_zero(path) -> int:
    """A file's size as it stands (a link's own, never its target's); 0 when it is gone."""
    try:
        return os.lstat(path).st_size
    except OSError:
        return 0


def fsync_dir(path) -> None:
    try:
        fd = os.open(path, os.O_RDONLY | os.O_DIRECTORY | os.O_CLOEXEC)
    except OSError as err:
        raise _oserror(path, err, "open") from None
    try:
        os.fsync(fd)
    finally:
        os.close(fd)


# ---------------------------------------------------------------------------- the lock

LOCK_FILE = ".lock"
# struct flock on Linux: short l_type, short l_whence, off_t l_start, off_t l_len, pid_t l_pid
_FLOCK = struct.Struct("hhqqi4x")


def lock_holder(log_dir) -> int | None:
    """The process that holds log_dir/.lock (a broker), 0 when a holder exists whose pid
    the system does not tell, None when nobody holds it or there is no such file."""
    try:
        fd = open_regular(Path(log_dir) / LOCK_FILE)
    except (FileNotFoundError, LogError):
        return None
    try:
        query = _FLOCK.pack(fcntl.F_WRLCK, os.SEEK_SET, 0, 0, 0)
        l_type, _w, _s, _l, pid = _FLOCK.unpack(fcntl.fcntl(fd, fcntl.F_GETLK, query))
        return None if l_type == fcntl.F_UNLCK else pid
    except OSError:
        return None
    finally:
        os.close(fd)


class LogDirLock:
    """Hold a log directory's `.lock` as a broker does (Kafka's FileLock: FileChannel.tryLock,
    a POSIX fcntl write lock over the whole file), for as long as a rewrite runs. A broker
    that starts meanwhile fails to take it and stops; while a broker holds it, acquiring
    raises LogError naming the holder. A missing .lock is created with the log directory's
    owner (as the broker would), and kept, as Kafka keeps it."""

    def __init__(self, log_dir):
        self.log_dir = Path(os.path.abspath(log_dir))  # (what a message names: the folder too)
        self.path = self.log_dir / LOCK_FILE
        self._fd: int | None = None

    def acquire(self) -> LogDirLock:
        try:
            fd = open_regular(self.path, os.O_RDWR)
        except FileNotFoundError:
            fd = self._create()
        try:
            fcntl.lockf(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except OSError as err:
            os.close(fd)
            if err.errno not in (errno.EACCES, errno.EAGAIN):
                raise _oserror(self.path, err, "lock") from None
            pid = lock_holder(self.log_dir)
            who = f"process {pid}" if pid else "another process"
            raise RefusedError(self.path, f"is locked by {who} (a running broker?): stop the broker, "
                                      "or take this disk out of its log.dirs, before a repair") from None  # fmt: skip
        self._fd = fd
        return self

    def _create(self) -> int:
        try:
            fd = os.open(self.path, os.O_RDWR | os.O_CREAT | os.O_EXCL | os.O_NOFOLLOW |
                         os.O_CLOEXEC, 0o644)  # fmt: skip
        except FileExistsError:  # created meanwhile: open what is there
            return open_regular(self.path, os.O_RDWR)
        except OSError as err:
            raise _oserror(self.path, err, "create") from None
        st = os.stat(self.log_dir)
        try:
            os.fchown(fd, st.st_uid, st.st_gid)
        except PermissionError:
            pass
        return fd

    def release(self) -> None:
        if self._fd is not None:
            os.close(self._fd)  # closing the descriptor releases the lock
            self._fd = None

    def __enter__(self) -> LogDirLock:
        return self.acquire()

    def __exit__(self, *exc) -> None:
        self.release()

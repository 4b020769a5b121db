"""kafkacodec's exceptions: one hierarchy rooted at KafkacodecError.

Every error raised while decoding names where the problem is (the source, when known,
and the absolute byte position) and what was wrong; errors raised by generated code also
name the schema path (e.g. ``kafka_record /seq/4``). Decode errors are also ValueErrors,
so code that already catches ValueError keeps working.
"""

from __future__ import annotations

import os

__all__ = [
    "KafkacodecError",
    "UsageError",
    "UnreadableError",
    "NotKnownError",
    "SchemaError",
    "DecodeError",
    "TruncatedError",
    "ChecksumError",
    "CorruptRecordError",
    "LengthMismatchError",
    "ValidationError",
    "VarintError",
    "UnknownMagicError",
    "CompressionError",
    "UnsupportedCodecError",
    "DecompressionLimitError",
    "EncodeError",
    "LogError",
    "NotAPartitionError",
    "NotASegmentError",
    "CorruptIndexError",
    "StorageError",
    "RefusedError",
    "OffsetOutOfRangeError",
    "WorkerError",
]


class KafkacodecError(Exception):
    """Base of every error kafkacodec raises."""

    def __reduce__(self) -> tuple:
        # Pickled as it is (its text and attributes), whatever its __init__ takes: errors
        # cross process boundaries (the rewrite's worker processes).
        return _restore, (type(self), self.args, self.__dict__)


def _restore(cls: type[KafkacodecError], args: tuple, state: dict) -> KafkacodecError:
    err = cls.__new__(cls)
    Exception.__init__(err, *args)
    err.__dict__.update(state)
    return err


class SchemaError(KafkacodecError):
    """A .ksy schema the generator cannot accept; names the file and the schema path."""

    def __init__(self, path: str, message: str, file: str | None = None):
        self.path = path
        self.message = message
        self.file = file
        super().__init__(self._text())

    def _text(self) -> str:
        where = f"{self.file}: " if self.file else ""
        return f"{where}{self.path}: {self.message}"

    def in_file(self, file: str) -> SchemaError:
        """The error, naming the schema file it is in (once: the first file given stays)."""
        if self.file is None:
            self.file = file
            self.args = (self._text(),)
        return self


class UsageError(KafkacodecError):
    """An argument the command cannot take (a Spark master URL that is not one, a language
    the compiler has not): nothing was read."""


class DecodeError(KafkacodecError, ValueError):
    """Bytes that are not a valid instance of a Kafka format.

    position: absolute byte position of the problem (None when unknown);
    schema_path: the schema element being read (e.g. "kafka_record /seq/4"), or None;
    source: the file or buffer name, when a caller supplied one;
    context: outer structures, innermost first (e.g. "records of the batch at byte 4096").
    """

    def __init__(self, message: str, position: int | None = None, schema_path: str | None = None):
        self.message = message
        self.position = position
        self.schema_path = schema_path
        self.source: str | None = None
        self.context: list[str] = []
        super().__init__(self._text())

    def _text(self) -> str:
        parts = []
        if self.source:
            parts.append(self.source)
        if self.position is not None:
            parts.append(f"byte {self.position}")
        head = ": ".join(parts)
        text = f"{head}: {self.message}" if head else self.message
        if self.context:
            text += " (in " + ", in ".join(self.context) + ")"
        if self.schema_path:
            text += f" [{self.schema_path}]"
        return text

    def _refresh(self) -> None:
        self.args = (self._text(),)

    def shift(self, offset: int) -> DecodeError:
        """Make the position absolute: add the offset of the buffer it was relative to."""
        if self.position is not None:
            self.position += offset
        self._refresh()
        return self

    def within(self, context: str) -> DecodeError:
        """Say which outer structure the problem lies in."""
        self.context.append(context)
        self._refresh()
        return self

    def with_source(self, source: str) -> DecodeError:
        """Name the file (or stream) the bytes came from."""
        if self.source is None:
            self.source = source
            self._refresh()
        return self


class TruncatedError(DecodeError):
    """The data ends before the structure does. needed/available are byte counts."""

    def __init__(self, message: str, position: int | None = None, schema_path: str | None = None,
                 needed: int | None = None, available: int | None = None) -> None:  # fmt: skip
        self.needed = needed
        self.available = available
        if needed is not None and available is not None:
            message = f"{message}: needs {needed} bytes, {available} available"
        super().__init__(message, position, schema_path)


class CorruptRecordError(DecodeError):
    """A structural rule of the format is broken (a length, count or layout)."""


class LengthMismatchError(CorruptRecordError):
    """A length that counts the rest of a structure (a record's, a batch's, a message's)
    disagrees with the bytes its fields take."""


class ValidationError(CorruptRecordError):
    """A field holds a value the schema forbids (`valid` in the .ksy)."""


class VarintError(CorruptRecordError):
    """A varint or varlong longer than allowed, or out of range."""


class UnknownMagicError(CorruptRecordError):
    """A magic byte (message format version) other than 0, 1 or 2."""


class ChecksumError(DecodeError):
    """A stored CRC differs from the one computed over the bytes."""

    def __init__(self, message: str, position: int | None = None, schema_path: str | None = None,
                 *, algorithm: str, stored: int, computed: int) -> None:  # fmt: skip
        self.algorithm = algorithm
        self.stored = stored
        self.computed = computed
        message = f"{message}: {algorithm} stored {stored:#010x}, computed {computed:#010x}"
        super().__init__(message, position, schema_path)


class CompressionError(DecodeError):
    """Compressed data that cannot be decompressed."""


class UnsupportedCodecError(CompressionError):
    """A codec id that is not defined for this magic."""


class DecompressionLimitError(CompressionError):
    """Decompressed data larger than the configured bound (a decompression bomb guard)."""


class EncodeError(KafkacodecError, ValueError):
    """Values that cannot be encoded (out of range, missing, or inconsistent)."""


class LogError(KafkacodecError):
    """A problem with a log directory or one of its files; names the path and, when it
    concerns bytes, the position."""

    def __init__(self, path: os.PathLike | str, message: str, position: int | None = None) -> None:
        self.path = str(path)
        self.message = message
        self.position = position
        where = f"{self.path}: byte {position}" if position is not None else self.path
        super().__init__(f"{where}: {message}")


class MissingSegmentError(LogError):
    """A segment file listed a moment ago is not there: a broker deleted it since (by
    retention, or after its log cleaner replaced it)."""


class NotAPartitionError(LogError):
    """A directory that is not a partition (<topic>-<partition>) nor a log.dirs."""


class NotASegmentError(LogError):
    """A file that is not a Kafka segment or index file."""


class UnreadableError(LogError):
    """A file or directory that cannot be opened, read or written (its permissions, a disk
    that fails, a link not followed): what it holds was not checked, nothing was written."""


class RefusedError(LogError):
    """An operation kafkacodec will not do here: a log directory a broker holds (its .lock),
    a destination that exists or lies inside a log directory, an unfinished repair in the
    way. Nothing was changed."""


class NotKnownError(LogError):
    """A question the files read cannot answer: what only another file records (the
    cluster's __remote_log_metadata, for one), and it is not at hand."""


class OffsetOutOfRangeError(LogError):
    """An offset a partition does not hold: below its log start offset or past its log end
    offset (Kafka's OffsetOutOfRangeException), or in a part of the log not on the disk
    read. log_start_offset / log_end_offset: the partition's."""

    def __init__(self, path: os.PathLike | str, message: str, *, offset: int,
                 log_start_offset: int, log_end_offset: int) -> None:  # fmt: skip
        self.offset = offset
        self.log_start_offset = log_start_offset
        self.log_end_offset = log_end_offset
        super().__init__(path, message)


class CorruptIndexError(LogError):
    """An index file that fails Kafka's sanity check (readers fall back to a walk)."""


class WorkerError(KafkacodecError):
    """A worker process (`--jobs`) ended before it returned its unit's result: killed (the
    kernel's OOM killer, a signal) or crashed. That unit was not done; nothing is known of
    the data it was to read."""


class StorageError(LogError):
    """A file of an object store (or of a tiered-storage layout) that could not be read:
    names its URL and, when it concerns bytes, the range [start, end) asked for. Raised
    after retries for a transient failure (a dropped connection, a timeout, a 5xx), at once
    for one that retrying cannot mend (missing, access denied, a wrong key)."""

    def __init__(self, url: str, message: str, start: int | None = None,
                 end: int | None = None) -> None:  # fmt: skip
        self.url = url
        self.start = start
        self.end = end
        where = f"bytes {start}-{end - 1}: " if start is not None and end is not None else ""
        super().__init__(url, where + message)

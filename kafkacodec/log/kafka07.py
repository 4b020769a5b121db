"""Kafka 0.7 partitions: the format of Kafka's first public releases (FORMATS.md 4, seed 002).

A partition directory `<topic>_<partition>` (or any directory) holds files named
`<20 digits>.kafka`, each named by the byte address of its first message in the stream of
all messages ever written to the partition. A message is addressed by that byte address
(its "offset"): the file's base plus its position in the file. Each entry is
schemas/kafka07_message.ksy: `int32 length`, `int8 magic`, `int8 attributes` (magic 1 only;
bits 0-1: 0 none, 1 gzip, 2 snappy), `uint32 crc` (CRC-32 of the payload), the payload.
A compressed message's payload is itself a series of such entries, compressed as one
stream; a consumer can fetch only at the compressed message's own address, so each of its
inner messages reports that address as its offset (Kafka 0.7's deep iterator hands them out
with the address of the next message set, which is no better a key).

Kafka 0.7 kept no index files: a lookup walks the file that holds the address.
"""

from __future__ import annotations

import bisect
import re
import zlib
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

from kafkacodec.generated.kafka07_message import Kafka07Message

from ..records.batches import Record
from ..runtime import compression as _comp
from ..runtime.errors import (
    CorruptRecordError,
    DecodeError,
    LogError,
    NotAPartitionError,
    UnsupportedCodecError,
)
from ..storage.fsio import map_regular, unmap
from .check import BadRegion, SegmentCheck, records_or_damage, resync
from .segment import parse_segment_name

__all__ = ["Message07", "Kafka07File", "Kafka07Partition", "scan", "check_file",
           "CODECS"]  # fmt: skip

#: Codecs of Kafka 0.7 (attribute bits 0-1).
CODECS = {0: "none", 1: "gzip", 2: "snappy"}
SUFFIX = ".kafka"
#: Bytes before the payload: length, magic, [attributes], crc.
_HEADER = {0: 9, 1: 10}


@dataclass
class Message07:
    """One entry of a .kafka file: its address (offset), where it lies, and its fields."""

    offset: int
    position: int
    size: int  # the whole entry, length prefix included
    magic: int
    attributes: int
    crc: int
    is_valid: bool
    payload: memoryview
    source: str

    @property
    def codec(self) -> int:
        return self.attributes & 3

    @property
    def compression(self) -> str:
        return CODECS.get(self.codec, f"codec {self.codec}")

    def records(self, *, max_inflated: int | None = None) -> list[Record]:
        """The message as a record (its payload is the value; 0.7 has no keys or timestamps),
        or a compressed message's inner messages, all at this message's offset."""
        if self.codec == 0:
            return [
                Record(self.offset, -1, None, bytes(self.payload), timestamp_type="NoTimestampType")
            ]
        where = f"inner messages of the compressed message at byte {self.position} (offset {self.offset})"
        try:
            if self.codec not in CODECS:
                raise UnsupportedCodecError(
                    f"codec {self.codec} is not defined in Kafka 0.7", self.position + 5
                )
            inner = _comp.decompress(self.codec, self.payload, 1, max_inflated)
            out = []
            for msg in _walk(
                memoryview(inner),
                0,
                len(inner),
                self.offset,
                verify_crc=True,
                source=None,
                inner=True,
            ):
                if msg.codec:
                    raise CorruptRecordError(
                        "a compressed message inside a compressed message", msg.position
                    )
                out.append(
                    Record(
                        self.offset, -1, None, bytes(msg.payload), timestamp_type="NoTimestampType"
                    )
                )
            return out
        except DecodeError as err:
            raise err.within(where).with_source(self.source) from None


def _walk(view, start: int, end: int, base: int, *, verify_crc: bool, source, inner: bool = False):
    """The messages of view[start:end]; a partial entry at the end stops the walk (the
    caller sees where through the last message's end)."""
    pos = start
    while end - pos >= 4:
        length = int.from_bytes(view[pos : pos + 4], "big", signed=True)
        if length >= 0 and pos + 4 + length > end and not inner:
            return  # an incomplete entry at the end: a lost tail, or one being written
        try:
            msg, nxt = Kafka07Message.parse(view, pos, end, verify=verify_crc)
        except DecodeError as err:
            raise (err.with_source(source) if source else err) from None
        yield Message07(base + pos, pos, nxt - pos, msg.magic, msg.attributes or 0, msg.crc,
                        msg.crc_matches(view) if not verify_crc else True, msg.payload, source)  # fmt: skip
        pos = nxt
    if inner and pos != end:
        raise CorruptRecordError(f"{end - pos} bytes after the last inner message", pos)


class Kafka07File:
    """A .kafka file: messages addressed by base + position."""

    def __init__(self, path, base: int | None = None):
        self.path = Path(path)
        parsed = parse_segment_name(self.path.name)
        self.base = base if base is not None else (parsed[0] if parsed else 0)
        data, self.size = map_regular(self.path)
        if data is None:
            raise LogError(self.path, "no such file")
        self.data = data

    def messages(self, position: int = 0, *, verify_crc: bool = True) -> Iterator[Message07]:
        return _walk(memoryview(self.data), position, self.size, self.base, verify_crc=verify_crc,
                     source=str(self.path))  # fmt: skip

    def end_of_messages(self) -> int:
        """Where the last complete message ends (no CRC check): the rest is a partial one."""
        end = 0
        for msg in self.messages(verify_crc=False):
            end = msg.position + msg.size
        return end

    def close(self) -> None:
        unmap(self.data)
        self.data = b""

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        self.close()


class Kafka07Partition:
    """A Kafka 0.7 partition directory: its .kafka files by base address."""

    def __init__(self, path):
        self.path = Path(path)
        if not self.path.is_dir():
            raise NotAPartitionError(self.path, "not a directory")
        self.bases = sorted(parsed[0] for c in self.path.iterdir()
                            if (parsed := parse_segment_name(c.name)) and parsed[1] == SUFFIX)  # fmt: skip
        if not self.bases:
            raise NotAPartitionError(self.path, "holds no Kafka 0.7 .kafka files")

    def file(self, base: int) -> Kafka07File:
        return Kafka07File(self.path / f"{base:020d}{SUFFIX}", base)

    @property
    def files(self) -> list[Path]:
        return [self.path / f"{b:020d}{SUFFIX}" for b in self.bases]

    def file_for(self, offset: int) -> int | None:
        """The base of the file holding an address (the largest base <= it)."""
        i = bisect.bisect_right(self.bases, offset) - 1
        return self.bases[i] if i >= 0 else None

    def lookup(self, offset: int) -> Message07 | None:
        """The message at an address, or the first one after it (a walk of one file: 0.7 has
        no index); None past the end."""
        base = self.file_for(offset)
        for b in self.bases[self.bases.index(base) if base is not None else 0 :]:
            with self.file(b) as f:
                for msg in f.messages(verify_crc=False):
                    if msg.offset >= offset:
                        return msg
        return None

    def read(
        self, from_offset: int | None = None, *, on_damage=None
    ) -> Iterator[tuple[Path, Message07, Record]]:
        """(file, message, record) from an address on, in order across files."""
        start = from_offset if from_offset is not None else self.bases[0]
        first = self.file_for(start)
        for b in self.bases[self.bases.index(first) if first is not None else 0 :]:
            f = self.file(b)
            try:
                for msg in f.messages() if on_damage is None else scan(f):
                    if isinstance(msg, BadRegion):
                        on_damage(str(msg))
                        continue
                    if msg.offset < start:
                        continue
                    for r in records_or_damage(msg, on_damage):
                        yield f.path, msg, r
            finally:
                f.close()

    @property
    def log_end_offset(self) -> int:
        """The address after the last complete message."""
        b = self.bases[-1]
        with self.file(b) as f:
            return b + f.end_of_messages()


_MAGIC_AT_4 = re.compile(rb"(?s)(?=.{4}[\x00\x01])")


def _valid_at(view, q: int, end: int) -> bool:
    """Whether a whole 0.7 message whose CRC matches starts at q."""
    if end - q < _HEADER[0]:
        return False
    length = int.from_bytes(view[q : q + 4], "big", signed=True)
    magic = view[q + 4]
    if magic not in _HEADER or length < _HEADER[magic] - 4 or q + 4 + length > end:
        return False
    at = q + _HEADER[magic] - 4
    return zlib.crc32(view[at + 4 : q + 4 + length]) == int.from_bytes(view[at : at + 4], "big")


def scan(f: Kafka07File, position: int = 0) -> Iterator:
    """The messages of a .kafka file from a position, and a BadRegion for each stretch that
    holds none: after damage the walk resynchronizes on the next whole message whose CRC
    matches, as check.scan does for later formats."""
    view = memoryview(f.data)
    pos, last = position, None
    while pos < f.size:
        tail = False
        try:
            for msg in _walk(view, pos, f.size, f.base, verify_crc=True, source=str(f.path)):
                yield msg
                last, pos = msg.offset, msg.position + msg.size
            if pos >= f.size:
                return
            remaining = f.size - pos
            declared = (
                int.from_bytes(view[pos : pos + 4], "big", signed=True) + 4 if remaining >= 4 else 0
            )
            reason = (f"{remaining} bytes at the end of the file are too few for a message"
                      if remaining < 4 else
                      f"a message declares {declared} bytes, but only {remaining} remain in the file")  # fmt: skip
            tail = True
        except DecodeError as err:
            reason = err.message
        nxt = resync(view, pos, f.size, valid_at=_valid_at, candidates=_MAGIC_AT_4, size_at=0)
        yield BadRegion(str(f.path), pos, nxt, reason, last, f.base + nxt if nxt < f.size else None,
                        tail and nxt == f.size)  # fmt: skip
        pos = nxt


def check_file(f: Kafka07File) -> SegmentCheck:
    """Every message of a .kafka file, its CRC and (compressed) its inner messages, and
    every unreadable stretch."""
    out = SegmentCheck(str(f.path), f.size)
    for item in scan(f):
        if isinstance(item, BadRegion):
            out.regions.append(item)
            continue
        out.batches += 1
        try:
            out.records += len(item.records())
        except DecodeError as err:
            out.problems.append(str(err))
    return out

"""A partition directory (<topic>-<partition>) and a log.dirs holding many.

Opening one lists files and stats them; no .log file is read until a search or a walk
needs it. Log-level answers follow Kafka's UnifiedLog: the segment holding an offset is the
one with the largest base offset <= it; ListOffsets by timestamp asks the first segment
whose largest timestamp reaches the target; -1, -2 and -3 are latest, earliest and the
record with the largest timestamp.
"""

from __future__ import annotations

import bisect
import operator
import re
from collections.abc import Callable, Iterator, Sequence
from functools import cached_property
from typing import TYPE_CHECKING, NamedTuple

from ..generated.kafka_record_batch import KafkaRecordBatch
from ..records.batches import Record, bit_field
from ..runtime.errors import (
    DecodeError,
    LogError,
    NotAPartitionError,
    NotKnownError,
    OffsetOutOfRangeError,
)
from ..storage import LINK_RULE, StoragePath, as_path, read_side_file
from ..units import (  # ListOffsets' targets
    EARLIEST,
    EARLIEST_LOCAL,
    LATEST,
    LATEST_TIERED,
    MAX_TIMESTAMP,
)
from .check import BadRegion, records_or_damage, scan
from .index import AbortedTxn, TimestampOffset
from .recovery import TxnTracker
from .segment import Batch, LogOffsetPosition, Segment, TimestampAndOffset, parse_segment_name

_OFFSET = operator.attrgetter("offset")

if TYPE_CHECKING:
    from typing_extensions import Self

__all__ = [
    "Partition", "LogDirs", "open_log", "EpochEntry", "ListOffsetsResult", "LATEST", "EARLIEST",
    "EARLIEST_LOCAL", "LATEST_TIERED",
    "MAX_TIMESTAMP", "read_epoch_checkpoint", "read_epoch_checkpoint_text", "EPOCH_CHECKPOINT",
    "write_epoch_checkpoint_text", "read_checkpoint", "write_checkpoint_text", "LOG_START_CHECKPOINT",
    "log_dirs_for", "java_int", "JAVA_LINE_END",
]  # fmt: skip

#: Suffixes Kafka writes in a partition directory.
SEGMENT_SUFFIXES = (".log", ".index", ".timeindex", ".txnindex", ".snapshot")
#: Suffixes of unfinished operations (deletion, cleaning, swapping).
LEFTOVER_SUFFIXES = (".deleted", ".cleaned", ".swap")
EPOCH_CHECKPOINT = "leader-epoch-checkpoint"
#: The broker's record of each partition's log start offset, in its log directory.
LOG_START_CHECKPOINT = "log-start-offset-checkpoint"
KNOWN_FILES = (EPOCH_CHECKPOINT, "partition.metadata")
#: A partition directory, possibly marked for deletion or as a future replica (ASCII digits
#: only: Kafka's names never hold others).
_DIR_NAME = re.compile(
    r"^(?P<topic>.+)-(?P<partition>[0-9]+)(?:\.(?P<uid>[0-9a-f]{32})-(?P<state>delete|future|stray))?$"
)

#: Kafka's topic names (org.apache.kafka.common.internals.Topic.validate): 1 to 249
#: characters of [a-zA-Z0-9._-], not "." nor "..".
TOPIC_MAX_LENGTH = 249
_TOPIC_CHARS = re.compile(r"[a-zA-Z0-9._-]+")


def topic_name_problem(name: str) -> str | None:
    """What Kafka's Topic.validate says of a topic name, None when it takes it."""
    if not name:
        return "Topic name is illegal, it can't be empty"
    if name in (".", ".."):
        return "Topic name cannot be \".\" or \"..\""
    if len(name) > TOPIC_MAX_LENGTH:
        return (f"Topic name is illegal, it can't be longer than {TOPIC_MAX_LENGTH} characters, "
                f"topic name: {name}")
    if not _TOPIC_CHARS.fullmatch(name):
        return (f"Topic name \"{name}\" is illegal, it contains a character other than ASCII "
                "alphanumerics, '.', '_' and '-'")
    return None


def _side_text(path: StoragePath) -> str | None:
    """A small text file of a partition or log.dirs (None when missing), size-capped."""
    raw = read_side_file(path)
    if raw is None:
        return None
    try:
        return raw.decode("utf-8")
    except UnicodeDecodeError as err:
        raise LogError(path, f"not UTF-8 text (byte {err.start})") from None


def write_checkpoint_text(entries: dict[tuple[str, int], int]) -> str:
    """The text of a broker checkpoint file (OffsetCheckpointFile) read_checkpoint reads:
    version 0, the count, then `topic partition offset` lines."""
    lines = [f"{t} {p} {o}\n" for (t, p), o in sorted(entries.items())]
    return f"0\n{len(lines)}\n" + "".join(lines)


def read_checkpoint(path: StoragePath) -> dict[tuple[str, int], int]:
    """A broker checkpoint file (OffsetCheckpointFile: version 0, a count, then `topic
    partition offset` lines); {} when missing, LogError when malformed."""
    text = _side_text(path)
    if text is None:
        return {}
    try:
        out = {}
        for line in text.splitlines()[2:]:
            topic, part, off = line.rsplit(" ", 2)
            out[(topic, int(part))] = int(off)
        return out
    except ValueError:
        raise LogError(path, "malformed checkpoint file") from None


class EpochEntry(NamedTuple):
    epoch: int
    start_offset: int


class ListOffsetsResult(NamedTuple):
    """Kafka's answer to ListOffsets, with where the record lies (segment and position of
    its batch) when the answer is a record."""

    timestamp: int
    offset: int
    leader_epoch: int | None
    segment: str | None = None
    position: int | None = None


def read_epoch_checkpoint(path: StoragePath) -> list[EpochEntry]:
    """leader-epoch-checkpoint: version (0), count, then `epoch start_offset` lines."""
    text = _side_text(path)
    return [] if text is None else read_epoch_checkpoint_text(text, path)


#: What ends a line for Java's BufferedReader.readLine: \n, \r, or \r\n.
JAVA_LINE_END = re.compile(r"\r\n|\r|\n")
#: Java's \s+ (LeaderEpochCheckpointFile's WHITE_SPACES_PATTERN), ASCII whitespace only.
_JAVA_SPACES = re.compile(r"[ \t\n\x0b\f\r]+")
_JAVA_INT = re.compile(r"[+-]?[0-9]+")


def java_int(text: str, bits: int) -> int:
    """Integer.parseInt / Long.parseLong: an optional sign and digits, in range."""
    if not _JAVA_INT.fullmatch(text) or not -(1 << (bits - 1)) <= int(text) < 1 << (bits - 1):
        raise ValueError(f"{text!r} is not an int{bits}")
    return int(text)


def read_epoch_checkpoint_text(text: str, path: StoragePath | str) -> list[EpochEntry]:
    """The entries of a leader-epoch checkpoint's text (path: how errors name it), by
    Kafka's own reader (server-common's CheckpointFile.CheckpointReadBuffer.read with
    LeaderEpochCheckpointFile's formatter): an empty file, or one that ends after its
    version line, holds no entries (a broker writes a zero-length file for a replica with
    no epoch yet, an empty __consumer_offsets partition's one); the version must be 0;
    each entry is `epoch start_offset`, split at runs of whitespace; their count must be
    the one the second line says."""
    lines = JAVA_LINE_END.split(text)
    if lines and lines[-1] == "":  # readLine gives no line after the last line's end
        lines.pop()
    try:
        if not lines:
            return []
        if java_int(lines[0], 32) != 0:
            raise ValueError(f"unrecognised version {lines[0]} (expected 0)")
        if len(lines) == 1:
            return []
        count = java_int(lines[1], 32)
        out = []
        for n, line in enumerate(lines[2:], start=3):
            parts = _JAVA_SPACES.split(line)
            while parts and parts[-1] == "":  # Java's split drops trailing empty strings
                parts.pop()
            if len(parts) != 2:
                raise ValueError(f"line {n}: {line!r} is not `epoch start_offset`")
            out.append(EpochEntry(java_int(parts[0], 32), java_int(parts[1], 64)))
        if len(out) != count:
            raise ValueError(f"says {count} entries but has {len(out)}")
        return out
    except ValueError as err:
        raise LogError(path, f"malformed leader-epoch-checkpoint: {err}") from None


def write_epoch_checkpoint_text(entries: list[EpochEntry]) -> str:
    return "0\n" + f"{len(entries)}\n" + "".join(f"{e} {o}\n" for e, o in entries)


class Partition:
    """A partition directory: its segments by base offset, its metadata, Kafka's lookups.
    In a local directory or an object store (a URL, or storage.as_path's ObjectPath)."""

    def __init__(self, path: StoragePath | str) -> None:
        self.path = as_path(path)
        if not self.path.is_dir():
            if self.path.exists():
                raise NotAPartitionError(self.path, "not a directory")
            raise NotAPartitionError(self.path, "no such directory")
        m = _DIR_NAME.match(self.path.name)
        self.topic = m["topic"] if m else None
        self.partition = int(m["partition"]) if m else None
        self.state = m["state"] if m else None  # "delete" / "future" / "stray" or None
        self.index_files: dict[int, set[str]] = {}
        self.snapshots: list[int] = []
        self.leftovers: list[str] = []
        self.unknown: list[str] = []
        self.kafka07: list[str] = []
        #: kafkacodec's own files: a repair's journal, rebuilt files not yet renamed in.
        self.repair_files: list[str] = []
        bases = self._sort_files()
        if m is None and not bases and not self.kafka07:
            raise NotAPartitionError(
                self.path,
                "not a partition directory (named <topic>-<partition>, holding .log segments)",
            )
        self.base_offsets = sorted(bases)
        self.segments = [Segment(self.path, b) for b in self.base_offsets]
        #: Index files whose .log is missing (Kafka deletes them on load).
        self.orphan_indexes = sorted(
            f"{b:020d}{s}" for b, ss in self.index_files.items() if b not in bases for s in ss
        )
        #: Side files that could not be read (a malformed checkpoint or partition.metadata):
        #: reported by verify, while the segments are still read.
        self.problems: list[str] = []
        #: (segment name, its file's modification time in ms) of each segment whose time the
        #: last list_offsets for a timestamp took as its largest timestamp (mtime_note).
        self.mtimes_used: list[tuple[str, int]] = []
        self.leader_epochs: list[EpochEntry] = []
        self.metadata: dict = {}
        try:
            self.leader_epochs = read_epoch_checkpoint(self.path / EPOCH_CHECKPOINT)
        except LogError as err:
            self.problems.append(str(err))
        try:
            self.metadata = self._read_metadata()
        except LogError as err:
            self.problems.append(str(err))

    def _sort_files(self) -> set[int]:
        """File the directory's names by role (Kafka's LogLoader reads them so); returns the
        base offsets of the .log segments."""
        try:
            names = sorted(p.name for p in self.path.iterdir())
        except OSError as err:
            raise NotAPartitionError(self.path, f"cannot list: {err.strerror}") from None
        bases: set[int] = set()
        for name in names:
            parsed = parse_segment_name(name)
            if ".kafkacodec-" in name:
                self.repair_files.append(name)
            elif name.endswith(LEFTOVER_SUFFIXES):
                self.leftovers.append(name)
            elif parsed is None:
                if name not in KNOWN_FILES:
                    self.unknown.append(name)
            elif parsed[1] == ".log":
                bases.add(parsed[0])
            elif parsed[1] == ".snapshot":
                self.snapshots.append(parsed[0])
            elif parsed[1] == ".kafka":
                self.kafka07.append(name)
            elif parsed[1] in SEGMENT_SUFFIXES:
                self.index_files.setdefault(parsed[0], set()).add(parsed[1])
            else:
                self.unknown.append(name)
        return bases

    def __repr__(self) -> str:
        return f"Partition({str(self.path)!r}, segments={len(self.segments)})"

    def _read_metadata(self) -> dict:
        p = self.path / "partition.metadata"
        text = _side_text(p)
        if text is None:
            return {}
        out = {}
        for n, line in enumerate(text.splitlines(), start=1):
            if not line.strip():
                continue
            key, sep, value = line.partition(":")
            if not sep:
                raise LogError(p, f"line {n}: {line!r} is not `key: value`")
            out[key.strip()] = value.strip()
        return out

    @property
    def topic_id(self) -> str | None:
        """The topic's id from the partition's partition.metadata file (Kafka's Uuid text), None
        without one."""
        return self.metadata.get("topic_id")

    def close(self) -> None:
        """Unmap every segment's files (the partition can be read again: they map again on
        use)."""
        for s in self.segments:
            s.close()

    def __enter__(self) -> Self:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    # -- offsets
    def segment_for(self, offset: int) -> Segment | None:
        """The segment with the largest base offset <= offset (None if before the first)."""
        i = bisect.bisect_right(self.base_offsets, offset) - 1
        return self.segments[i] if i >= 0 else None

    @property
    def log_start_offset(self) -> int:
        """The first segment's base offset (the broker's checkpoint may say more; see
        LogDirs.log_start_offset), or 0 for an empty partition."""
        return self.base_offsets[0] if self.base_offsets else 0

    @cached_property
    def recorded_log_start_offset(self) -> int | None:
        """The log start offset the broker recorded for this partition in its log
        directory's log-start-offset-checkpoint; None when none is recorded (or the
        partition is not in a log directory, or the checkpoint cannot be read: then
        self.problems says so). Kafka's logStartOffset: above the first segment's base
        offset after DeleteRecords, below it when older segments are in tiered storage."""
        if self.topic is None or self.partition is None or self.state is not None:
            return None
        try:
            return read_checkpoint(self.path.parent / LOG_START_CHECKPOINT).get(
                (self.topic, self.partition))  # fmt: skip
        except LogError as err:
            self.problems.append(str(err))
            return None

    #: The remote segments the cluster's __remote_log_metadata lists for this partition as
    #: readable, (start offset, end offset, max timestamp), when a caller read it
    #: (kafkacodec.internal.remote.remote_extent): what the log holds beyond its files here.
    remote_extent: Sequence[tuple[int, int, int]] = ()
    #: When the __remote_log_metadata of the partition's log directory lists nothing of it:
    #: whether that means nothing of it was copied (the partition Kafka puts its records in
    #: is that one), told on first call (internal.remote.learn_remote_extent); None when
    #: nothing here says.
    remote_none_copied: Callable[[], bool] | None = None

    @property
    def local_segments(self) -> list[Segment]:
        """The segments of the broker's log directory (Kafka's local log): all of them here;
        a tiered view's local ones (log.tiered)."""
        return self.segments

    def local_log_start_offset(self) -> int:
        """Kafka's localLogStartOffset: where the local log starts, the first local
        segment's base or the log start offset above it (LogLoader takes the larger)."""
        local = self.local_segments
        start = self.kafka_log_start_offset()
        return max(start, local[0].base_offset) if local else start

    def highest_remote_offset(self) -> int:
        """Kafka's highestOffsetInRemoteStorage: the last offset of the remote segments
        __remote_log_metadata lists as copied for the partition (RemoteLogManager learns it
        there), -1 when the __remote_log_metadata partition Kafka puts its records in is
        here and lists none (nothing copied, or no remote storage: Kafka answers both alike).
        NotKnownError when that partition is not here: its records may be another broker's."""
        if self.remote_extent:
            return max(e for _s, e, _t in self.remote_extent)
        if self.remote_none_copied is None or not self.remote_none_copied():
            raise NotKnownError(self.path, "the latest tiered offset is the last one __remote_log_metadata lists as "
                                           "copied to tiered storage, and its log directory holds no "
                                           "__remote_log_metadata partition that lists it, nor the one Kafka "
                                           "would put it in (with __cluster_metadata to say which): its records "
                                           "may be in another broker's")  # fmt: skip
        return -1

    @property
    def looked_in(self) -> list[str]:
        """Where this view's segments were looked for (said when offsets are missing)."""
        return [str(self.path)]

    def kafka_log_start_offset(self) -> int:
        """Kafka's log start offset: known_log_start's, else the first segment's base."""
        known = self.known_log_start()
        return self.log_start_offset if known is None else known[0]

    def known_log_start(self) -> tuple[int, str] | None:
        """Kafka's log start offset as the broker's files record it, and what records it:
        its log-start-offset-checkpoint, else the first remote segment __remote_log_metadata
        lists (remote_extent); None when neither says (the first segment here is the start)."""
        recorded = self.recorded_log_start_offset
        if recorded is not None:
            return recorded, f"the broker's {LOG_START_CHECKPOINT}"
        if self.remote_extent:
            return min(s for s, _e, _t in self.remote_extent), "__remote_log_metadata"
        return None

    def unreadable(self) -> list[tuple[int, int, str]]:
        """(first, last, what says the log holds them) of each run of offsets the log holds
        by its broker's records (known_log_start, remote_extent) that no segment read here
        holds: remote segments whose tiered storage was not given or not found, data lost.
        Offsets past the last segment's base are never counted (past the end is out of
        range, not missing)."""
        if not self.segments:
            return []
        claims: list[tuple[int, int, str]] = []
        known = self.known_log_start()
        if known is not None and known[0] < self.base_offsets[0]:
            claims.append((known[0], self.base_offsets[0] - 1, known[1]))
        claims += [(s, e, "__remote_log_metadata") for s, e, _t in self.remote_extent]
        held = [(b, n - 1) for b, n in zip(self.base_offsets, self.base_offsets[1:])]
        held.append((self.base_offsets[-1], 2**63 - 1))
        out: list[tuple[int, int, str]] = []
        for first, last, why in sorted(claims):
            for a, b in _without(first, last, held):
                if out and a <= out[-1][1] + 1:  # one run, said by each who says so
                    says = out[-1][2] if why in out[-1][2] else f"{out[-1][2]} and {why}"
                    out[-1] = (out[-1][0], max(out[-1][1], b), says)
                else:
                    out.append((a, b, why))
        return out

    def check_offset(self, offset: int, *, end: bool = True) -> None:
        """Raise OffsetOutOfRangeError when a fetch at offset gets Kafka's OffsetOutOfRange
        (UnifiedLog.read: below the log start offset, or past the log end offset; the log end
        offset itself is in range when `end`, an empty fetch), or when the offset lies in
        what this view does not hold (unreadable: the broker's records say the log holds it,
        in tiered storage not given or not found, or data lost)."""
        first = self.log_start_offset
        known = self.known_log_start()
        log_end = self.log_end_offset
        start = self.kafka_log_start_offset()
        readable = max(first, start)
        holds = (f"the segments here hold offsets {readable}-{log_end - 1}" if log_end > readable
                 else "the log is empty")  # fmt: skip
        named = "" if known is None else f" ({known[1]})"
        why = None
        gap = next(((a, b, w) for a, b, w in self.unreadable() if a <= offset <= b), None)
        if gap is not None:
            why = (f"offset {offset} is not readable here: {self.missing_text(gap)}")
        elif offset < start:  # [start, first) is an unreadable run
            why = (f"offset {offset} is out of range (Kafka's OffsetOutOfRange): below the log "
                   f"start offset {start}{named}; {holds}")  # fmt: skip
        elif offset > log_end or (offset == log_end and not end):
            why = (f"offset {offset} is out of range (Kafka's OffsetOutOfRange): "
                   + ("the log end offset: no record there yet" if offset == log_end
                      else f"past the log end offset {log_end}")
                   + f"; {holds}")  # fmt: skip
        if why is not None:
            raise OffsetOutOfRangeError(self.path, why, offset=offset, log_start_offset=start,
                                        log_end_offset=log_end)  # fmt: skip

    def missing_text(self, gap: tuple[int, int, str]) -> str:
        """What unreadable() found, as a sentence: which offsets, who says the log holds
        them, where they were looked for."""
        first, last, why = gap
        since = (", deleted since the checkpoint was written" if LOG_START_CHECKPOINT in why
                 else "")  # fmt: skip
        says = "say" if " and " in why else "says"
        return (f"offsets {first}-{last} are in the log ({why} {says} so), but in no segment "
                f"read (looked in {', '.join(self.looked_in)}): in tiered storage (--tiered "
                f"ROOT){since}, or lost")  # fmt: skip

    def fetch(self, offset: int) -> tuple[Segment, LogOffsetPosition] | None:
        """Where a fetch at offset starts: the segment and the first batch whose last
        offset is >= offset, searched from the segment holding it on (Kafka's LocalLog.read:
        an offset in a segment's compacted-away tail is served from the next one); None
        when no batch holds it (the log end). Range checks are check_offset's."""
        seg = self.segment_for(offset) or (self.segments[0] if self.segments else None)
        if seg is None:
            return None
        for s in self.segments[self.segments.index(seg) :]:
            found = s.translate_offset(offset)
            if found is not None:
                return s, found
        return None

    @property
    def log_end_offset(self) -> int:
        """The offset after the last batch (an empty last segment: its base offset, as after
        a roll), 0 for an empty partition."""
        return self.segments[-1].read_next_offset() if self.segments else 0

    def epoch_for_offset(self, offset: int) -> int | None:
        """The leader epoch that wrote offset, from leader-epoch-checkpoint."""
        found = None
        for e in self.leader_epochs:
            if e.start_offset <= offset:
                found = e.epoch
        return found

    def list_offsets(
        self, timestamp: int, log_start_offset: int | None = None
    ) -> ListOffsetsResult | None:
        """Kafka's ListOffsets for one partition, as UnifiedLog.fetchOffsetByTimestamp
        answers it: -1 latest, -2 earliest (the log start offset: known_log_start's, else
        the first segment's), -3 the record with the largest timestamp of the local log
        (Kafka looks at its local segments only, a tiered partition's too), -4 earliest
        local (local_log_start_offset), -5 latest tiered (highest_remote_offset), else the
        first record with a timestamp >= timestamp. An answer that may lie in offsets this
        view cannot read (unreadable) raises OffsetOutOfRangeError rather than answer from
        what it can read."""
        start = self.kafka_log_start_offset() if log_start_offset is None else log_start_offset
        if timestamp == LATEST:
            end = self.log_end_offset
            return ListOffsetsResult(
                -1, end, self.leader_epochs[-1].epoch if self.leader_epochs else None
            )
        local = self.local_log_start_offset() if timestamp == EARLIEST_LOCAL and log_start_offset is None else start
        if local != start:  # earliest local, with tiered storage below it
            return ListOffsetsResult(-1, local, self.epoch_for_offset(local))
        if timestamp in (EARLIEST, EARLIEST_LOCAL):
            # the earliest cached epoch, when it starts at or below the log start (it may
            # not, after a message format upgrade: UnifiedLog's comment)
            first = self.leader_epochs[0] if self.leader_epochs else None
            return ListOffsetsResult(-1, start, first.epoch if first is not None and first.start_offset <= start else None)
        if timestamp == LATEST_TIERED:
            highest = self.highest_remote_offset()
            return ListOffsetsResult(-1, highest, self.epoch_for_offset(highest) if highest >= 0 else None)
        if timestamp == MAX_TIMESTAMP:
            return self._max_timestamp()
        if timestamp < 0:
            raise LogError(self.path, f"unsupported ListOffsets target {timestamp} (a timestamp, or -1 to -5)")
        last = self.segments[-1] if self.segments else None
        answer = None
        self.mtimes_used = []
        # UnifiedLog.fetchOffsetByTimestamp: the first segment whose largestTimestamp reaches
        # the target, and only it (a segment holding no timestamp stands for its file's
        # modification time there: LogSegment.largestTimestamp)
        for seg in self.segments:
            largest, by_mtime = seg.largest_timestamp(immutable=seg is not last)
            if by_mtime:
                self.mtimes_used.append((seg.path.name, largest))
            if largest >= timestamp:
                found = seg.find_offset_by_timestamp(timestamp, start)
                answer = self._located(found, seg) if found else None
                break
        self._answerable(timestamp, answer)
        return answer

    def mtime_note(self) -> str | None:
        """What the last list_offsets for a timestamp took from files' modification times
        (LogSegment.largestTimestamp of segments holding no timestamp), as a sentence;
        None when it took none. A copy of the files, or an object store, may not keep the
        times the broker's files had, and Kafka's answer there rests on them."""
        used = self.mtimes_used
        if not used:
            return None
        named = ", ".join(f"{name} (modified {ms})" for name, ms in used)
        return (f"the answer rests on the modification time of {named}: holding no timestamp, "
                "Kafka takes its file's last-modified time as its largest timestamp "
                "(LogSegment.largestTimestamp); a copy or an object store may not keep the times "
                "the broker's files had")  # fmt: skip

    def _answerable(self, timestamp: int, answer: ListOffsetsResult | None) -> None:
        """Raise OffsetOutOfRangeError when offsets this view cannot read may hold the
        answer to a ListOffsets for a timestamp: a run before the answer whose largest
        timestamp reaches it, or is not known (remote_extent gives remote segments' largest
        timestamps)."""
        for gap in self.unreadable():
            if answer is not None and gap[0] > answer.offset:
                break
            largest = self._largest_timestamp(gap)
            if largest is None or largest >= timestamp:
                known = "is not known" if largest is None else f"is {largest}"
                raise OffsetOutOfRangeError(
                    self.path, f"the answer for timestamp {timestamp} may be in offsets {gap[0]}-{gap[1]}, "
                    f"whose largest timestamp {known}, and they are not readable here: "
                    f"{self.missing_text(gap)}", offset=gap[0],
                    log_start_offset=self.kafka_log_start_offset(), log_end_offset=self.log_end_offset,
                )  # fmt: skip

    def _largest_timestamp(self, gap: tuple[int, int, str]) -> int | None:
        """The largest timestamp of offsets [first, last] of an unreadable run, from the
        remote segments __remote_log_metadata lists there; None unless they cover it."""
        first, last, _why = gap
        covering = sorted((s, e, t) for s, e, t in self.remote_extent if e >= first and s <= last)
        at, largest = first, -1
        for s, e, t in covering:
            if s > at:
                return None
            at, largest = max(at, e + 1), max(largest, t)
        return largest if at > last else None

    def _located(self, found: TimestampAndOffset, seg: Segment) -> ListOffsetsResult:
        where = seg.translate_offset(found.offset)
        return ListOffsetsResult(*found, seg.path.name, where.position if where else None)

    def _max_timestamp(self) -> ListOffsetsResult | None:
        best: TimestampOffset | None = None
        best_seg: Segment | None = None
        local = self.local_segments
        for seg in local:
            m = seg.max_timestamp_so_far(immutable=seg is not local[-1])
            if m.timestamp >= 0 and (best is None or m.timestamp > best.timestamp):
                best, best_seg = m, seg
        if best is None or best_seg is None:
            return None
        # The batch holding it, then its first record carrying that timestamp.
        where = best_seg.translate_offset(best.offset)
        for batch in best_seg.reads(where.position if where else 0):
            if batch.last_offset < best.offset:
                continue
            for r in batch.iter_records():
                if r.timestamp == best.timestamp:
                    epoch = (
                        self.epoch_for_offset(r.offset)
                        if self.leader_epochs
                        else batch.partition_leader_epoch
                    )
                    found = TimestampAndOffset(
                        r.timestamp, r.offset, None if epoch is None or epoch < 0 else epoch
                    )
                    return ListOffsetsResult(*found, best_seg.path.name, batch.position)
            break
        return None

    # -- reading
    def read(self, from_offset: int | None = None, *, verify_crc: bool = True,
             committed_only: bool = False, on_damage: Callable[[str], object] | None = None,
             txns: AbortFilter | None = None) -> Iterator[tuple[Segment, Batch, Record]]:  # fmt: skip
        """(segment, batch, record) from from_offset on, across segments. Starts at the
        indexed position of the right segment: an index lookup and a short walk.

        Damage raises a DecodeError naming the file and byte, unless `on_damage` is given:
        then the walk reads past it (check.scan resynchronizes on the next valid batch, as
        `verify` does) and on_damage(text) is told each stretch or batch left out.

        committed_only reads as a read_committed consumer fetches: aborted transactions
        dropped, control records left out, and nothing from the last stable offset on
        (AbortFilter.stable_end: the first offset of a transaction with no marker yet); txns
        is the AbortFilter to use (one the caller keeps, to say where the read stopped)."""
        for seg, batch, records in self.read_batches(from_offset, verify_crc=verify_crc,
                                                     committed_only=committed_only,
                                                     on_damage=on_damage, txns=txns):  # fmt: skip
            for r in records:
                yield seg, batch, r

    def read_batches(self, from_offset: int | None = None, *, verify_crc: bool = True,
                     committed_only: bool = False, on_damage: Callable[[str], object] | None = None,
                     txns: AbortFilter | None = None) -> Iterator[tuple[Segment, Batch, list[Record]]]:  # fmt: skip
        """What read() gives, a batch at a time: (segment, batch, its records that read()
        yields, in order), never with an empty list."""
        if not self.segments:
            return
        if from_offset is None:
            from_offset = self.base_offsets[0]
        first = self.segment_for(from_offset) or self.segments[0]
        aborted = (txns or AbortFilter(self)) if committed_only else None
        stable = None if aborted is None else aborted.stable_end()
        for seg in self.segments[self.segments.index(first) :]:
            start = seg.start_position(from_offset) if seg is first else 0
            pages = seg.pages(start)
            upper = seg.upper  # where a later segment takes over (a tiered view)
            for batch in self._batches(seg, start, verify_crc, on_damage):
                pages.passed(batch.position)
                if batch.last_offset < from_offset:
                    continue
                if stable is not None and batch.base_offset >= stable:
                    return  # past the last stable offset: read_committed reads no further
                if aborted is not None and aborted.drops(batch):
                    continue
                past = upper is not None and batch.last_offset >= upper
                records = records_or_damage(batch, on_damage)
                # the usual batch: every record is read (one pass in C over the offsets, which
                # even a damaged batch may hold in any order)
                if (records and not past and not (committed_only and batch.is_control)
                        and min(map(_OFFSET, records)) >= from_offset
                        and (stable is None or max(map(_OFFSET, records)) < stable)):  # fmt: skip
                    yield seg, batch, records
                    continue
                kept = []
                stop = False
                for r in records:
                    if past and r.offset >= upper:
                        break
                    if stable is not None and r.offset >= stable:
                        stop = True
                        break
                    if r.offset >= from_offset and not (committed_only and r.control is not None):
                        kept.append(r)
                if kept:
                    yield seg, batch, kept
                if stop:
                    return
                if past:
                    break
            if seg.remote:  # its spool's space goes (once nothing views it)
                seg.close()

    @staticmethod
    def _batches(seg: Segment, start: int, verify_crc: bool,
                 on_damage: Callable[[str], object] | None) -> Iterator[Batch]:  # fmt: skip
        if on_damage is None:
            yield from seg.reads(start, verify_crc=verify_crc)
            return
        for item in scan(seg.data, source=str(seg.path), start=start, end=seg.size,
                         verify_crc=verify_crc):  # fmt: skip
            if isinstance(item, BadRegion):
                on_damage(str(item))
            else:
                yield item

    def aborted_transactions(self, fetch_offset: int, upper_bound_offset: int) -> list[AbortedTxn]:
        """Kafka's UnifiedLog.collectAbortedTransactions: from the segment holding
        fetch_offset on, until an index says no later segment can add one."""
        out: list[AbortedTxn] = []
        seg = self.segment_for(fetch_offset) or (self.segments[0] if self.segments else None)
        if seg is None:
            return out
        for s in self.segments[self.segments.index(seg) :]:
            res = s.collect_aborted_txns(fetch_offset, upper_bound_offset)
            out.extend(res.aborted)
            if res.is_complete:
                break
        return out


def _without(first: int, last: int, held: list[tuple[int, int]]) -> list[tuple[int, int]]:
    """The runs of [first, last] outside every [a, b] of held (sorted, disjoint)."""
    out, at = [], first
    for a, b in held:
        if b < at:
            continue
        if a > last:
            break
        if a > at:
            out.append((at, a - 1))
        at = max(at, b + 1)
        if at > last:
            return out
    if at <= last:
        out.append((at, last))
    return out


def open_transactions(p: Partition, start: int = 0, end: int | None = None) -> dict[int, int]:
    """The transactions with no commit or abort marker yet among the batches holding offsets
    in [start, end) (end None: to the log end), producer id -> first offset, as
    ProducerStateManager's ongoing transactions: from the batch headers alone (the columnar
    header walk, no record decoded). A walk stopped by damage counts the batches before it."""
    from ..records import columnar  # numpy and pyarrow: imported when used (a command's start)

    ongoing: dict[int, int] = {}
    first = p.segment_for(start) or (p.segments[0] if p.segments else None)
    if first is None:
        return ongoing
    for seg in p.segments[p.segments.index(first) :]:
        if end is not None and seg.base_offset >= end:
            break
        pos = seg.start_position(start) if seg is first else 0
        e = columnar.walk_batches(seg.data, verify_crc=False, source=str(seg.path), start=pos, end=seg.size,
                                  file=True).entries  # fmt: skip
        e = e[(e["magic"] >= 2) & (bit_field(KafkaRecordBatch, "is_transactional", e["attributes"]) != 0)]
        control = bit_field(KafkaRecordBatch, "is_control", e["attributes"]) != 0
        for row, is_control in zip(e, control):
            base = int(row["base_offset"])
            if base + int(row["last_offset_delta"]) < start or (end is not None and base >= end):
                continue
            if is_control:  # a marker ends the producer's transaction
                ongoing.pop(int(row["producer_id"]), None)
            else:
                ongoing.setdefault(int(row["producer_id"]), base)
    return ongoing


class AbortFilter:
    """Read-committed filtering (a broker's READ_COMMITTED fetch): batches of aborted
    transactions are dropped, and nothing is read from the last stable offset on: the first
    offset of a transaction with no marker yet (Kafka's LSO, up to which a read_committed
    fetch returns data: UnifiedLog.lastStableOffset, from ProducerStateManager's ongoing
    transactions). Each found on first use: the aborted transactions from each segment's
    .txnindex when every one is usable, else from the ABORT markers themselves (a walk that
    also finds the open ones); the open ones otherwise from open_transactions' header walk
    (no index lists them)."""

    def __init__(self, partition: Partition):
        self.partition = partition
        self._aborted: dict[int, list[tuple[int, int]]] | None = None  # producer -> [(first, last)]
        self._open: tuple[int, int] | None = None
        self._open_known = False

    @property
    def aborted(self) -> dict[int, list[tuple[int, int]]]:
        if self._aborted is None:
            self._aborted = {}
            segs = self.partition.segments
            if all(s.txn_index.usable for s in segs):
                for s in segs:
                    for e in s.txn_index:
                        self._aborted.setdefault(e.producer_id, []).append((e.first_offset, e.last_offset))
                return self._aborted
            tracker = TxnTracker()
            for s in segs:
                try:
                    for batch in s.reads():
                        tracker.update(batch)
                except DecodeError:  # damage: the rest of that segment is the read's to report
                    continue
            for e in tracker.aborted:
                self._aborted.setdefault(e.producer_id, []).append((e.first_offset, e.last_offset))
            self._set_open(tracker.ongoing)
        return self._aborted

    def _set_open(self, ongoing: dict[int, int]) -> None:
        self._open = min(((first, pid) for pid, first in ongoing.items()), default=None)
        self._open_known = True

    @property
    def open(self) -> tuple[int, int] | None:
        """(first offset, producer id) of the earliest transaction with no marker, or None."""
        if not self._open_known:
            self._set_open(open_transactions(self.partition))
        return self._open

    def stable_end(self) -> int | None:
        """The last stable offset when a transaction is open (None: every one has its
        marker, and a read_committed fetch reads to the log end)."""
        return None if self.open is None else self.open[0]

    def ranges(self) -> list[tuple[int, int, int]]:
        """Every aborted transaction of the partition: (producer id, first, last offset)."""
        return [(pid, first, last) for pid, spans in self.aborted.items() for first, last in spans]

    def drops(self, batch: Batch) -> bool:
        if batch.magic < 2 or not batch.is_transactional or batch.is_control:
            return False
        for first, last in self.aborted.get(batch.producer_id, ()):
            if first <= batch.base_offset <= last:
                return True
        return False


class LogDirs:
    """A broker's log.dirs entry: one Partition per <topic>-<partition> directory, plus
    the broker's checkpoint files."""

    CHECKPOINTS = (
        "recovery-point-offset-checkpoint", "log-start-offset-checkpoint",
        "replication-offset-checkpoint", "cleaner-offset-checkpoint",
    )  # fmt: skip

    def __init__(self, path: StoragePath | str) -> None:
        self.path = as_path(path)
        if not self.path.is_dir():
            raise NotAPartitionError(
                self.path, "no such directory" if not self.path.exists() else "not a directory"
            )
        self.partitions: list[Partition] = []
        self.other: list[str] = []
        #: Partition directories that could not be opened: one broken partition does not
        #: stop the others.
        self.problems: list[str] = []
        children: list[StoragePath] = sorted(self.path.iterdir(), key=str)
        for child in children:
            if _DIR_NAME.match(child.name) and child.is_symlink():
                self.problems.append(f"{child}: a symbolic link inside the log directory: not "
                                     f"read ({LINK_RULE}; name it to read what it points to)")  # fmt: skip
            elif child.is_dir() and _DIR_NAME.match(child.name):
                try:
                    self.partitions.append(Partition(child))
                except LogError as err:
                    self.problems.append(str(err))
            elif child.name not in self.CHECKPOINTS and child.name not in (
                "meta.properties",
                ".lock",
            ):
                self.other.append(child.name)
        self.partitions.sort(key=lambda p: (p.topic, p.partition))

    def __repr__(self) -> str:
        return f"LogDirs({str(self.path)!r}, partitions={len(self.partitions)})"

    def checkpoint(self, name: str) -> dict[tuple[str, int], int]:
        """A broker checkpoint file of this log directory (read_checkpoint)."""
        return read_checkpoint(self.path / name)

    def log_start_offset(self, partition: Partition) -> int:
        """Kafka's log start offset of a partition of these log directories: the log-start-
        offset-checkpoint's, when it is past the first segment's base offset."""
        if partition.topic is None or partition.partition is None:
            return partition.log_start_offset
        cp = self.checkpoint(LOG_START_CHECKPOINT).get((partition.topic, partition.partition))
        return max(cp or 0, partition.log_start_offset)

    def close(self) -> None:
        """Unmap the files of every partition."""
        for p in self.partitions:
            p.close()


def log_dirs_for(path: StoragePath | str, topic: str) -> LogDirs:
    """What a command about one topic's partitions reads (groups: __consumer_offsets,
    remote-log: __remote_log_metadata): a log.dirs, or a partition directory of that topic
    standing for itself in its log directory (the log directory's other partitions are
    kept, the topic's others left out). NotAPartitionError for another topic's partition."""
    p = as_path(path)
    log = open_log(p)
    if isinstance(log, LogDirs):
        return log
    if log.topic != topic or log.state is not None:
        log.close()
        raise NotAPartitionError(p, f"neither a log.dirs nor a partition directory of {topic}")
    log.close()
    dirs = LogDirs(p.parent)
    dirs.partitions = [q for q in dirs.partitions if q.topic != topic or q.path.name == p.name]
    return dirs


def open_log(path: StoragePath | str) -> Partition | LogDirs:
    """A partition directory, or a log.dirs holding partition directories (a local path,
    a URL, or an ObjectPath)."""
    p = as_path(path)
    if not p.exists():
        raise NotAPartitionError(p, "no such file or directory")
    if p.is_dir():
        children: list[StoragePath] = list(p.iterdir())
        if not any(parse_segment_name(c.name) for c in children) and (
            not _DIR_NAME.match(p.name)
            # named like a partition (a log.dirs called broker-1), but holding partition
            # directories: a partition directory never holds directories
            or any(_DIR_NAME.match(c.name) and c.is_dir() for c in children)
            # or a broker's meta.properties, which Kafka writes in each log.dir and never
            # in a partition (kafka-logs-2, a JBOD disk a broker has not used yet)
            or any(c.name == "meta.properties" for c in children)
        ):
            return LogDirs(p)
    return Partition(p)

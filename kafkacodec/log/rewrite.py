"""Rewriting a log offline: a segment, a partition directory or a log.dirs, written anew
with every batch rebuilt from its decoded fields (records.rebuild), never in place.

With no options the new log is byte for byte the old one where Kafka wrote it; a codec
recompresses every batch, magic 2 converts legacy message sets. Offsets never change, so
what holds only offsets is copied as it is (.txnindex, leader-epoch-checkpoint,
producer snapshots, partition.metadata, the broker's checkpoints); the offset and time
indexes hold positions and are rebuilt as Kafka's LogSegment builds them for the
partition's index.interval.bytes (log.index.IndexBuilder).

The destination is written atomically: everything goes into a staging directory beside
it (`.<name>.kafkacodec-rewrite`), each file and directory fsynced, then renamed to the
destination in one step. A run that stops before the rename leaves only the staging
directory, which the next run removes before it starts again (the source is untouched);
after the rename the destination is complete. The destination must not exist, and may not
be inside the source, nor inside a Kafka log directory (a broker would load it as a
partition). A source whose log directory a broker holds (its .lock) is refused: the copy
would be torn.
"""

from __future__ import annotations

import os
import shutil
import time
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import BinaryIO

from ..records.rebuild import Rebuilder, Rebuilt
from ..runtime.errors import DecodeError, EncodeError, LogError
from ..storage import fsio, refuse_remote
from ..storage.fsio import lock_holder
from .index import IndexBuilder, encode_offset_entries, encode_time_entries
from .partition import EPOCH_CHECKPOINT, LogDirs, Partition, open_log, read_epoch_checkpoint
from .recovery import DEFAULT_INDEX_INTERVAL
from .segment import Segment, parse_segment_name, segment_name

__all__ = ["RewriteSummary", "Difference", "rewrite", "STAGE_SUFFIX", "DIFFERENCES_LISTED"]

STAGE_SUFFIX = ".kafkacodec-rewrite"
#: How many differing batches a summary names (all are counted).
DIFFERENCES_LISTED = 20
#: The largest segment Kafka can index: positions are int32 (LogSegment).
_MAX_SEGMENT = 0x7FFFFFFF
_INDEX_SUFFIXES = (".log", ".index", ".timeindex")


@dataclass(slots=True)
class Difference:
    """A batch whose rebuilt bytes are not its source's."""

    file: str
    position: int  #: the source batch's position in its segment
    offset: int  #: its first offset
    at: int  #: the position of the first differing byte in the source segment


@dataclass
class RewriteSummary:
    source: str
    destination: str | None  #: None for a check, which writes nothing
    options: dict
    partitions: int = 0
    segments: int = 0
    batches_in: int = 0
    batches_out: int = 0
    records: int = 0
    bytes_in: int = 0
    bytes_out: int = 0
    identical: int = 0
    different: int = 0
    #: batches that should have come back identical (no options) and did not
    differences: list[Difference] = field(default_factory=list)
    copied: list[str] = field(default_factory=list)  #: files copied as they are
    skipped: list[str] = field(default_factory=list)  #: a log.dirs' entries neither read nor copied
    intervals: dict[str, int] = field(default_factory=dict)  #: index.interval.bytes used, by partition
    seconds: float = 0.0
    rolled_back: str | None = None  #: a staging directory an earlier run left, removed

    def add(self, seg: Segment, r: Rebuilt) -> None:
        self.batches_in += r.entries
        self.batches_out += 1 if r.data else 0
        self.records += r.records
        self.bytes_in += r.size
        self.bytes_out += len(r.data)
        if r.identical:
            self.identical += 1
            return
        self.different += 1
        if not self.options and len(self.differences) < DIFFERENCES_LISTED:
            at = r.position if r.difference is None else r.difference
            self.differences.append(Difference(str(seg.path), r.position, r.first_offset, at))

    def to_dict(self) -> dict:
        return {
            "source": self.source, "destination": self.destination, "options": self.options,
            "partitions": self.partitions, "segments": self.segments,
            "batches_in": self.batches_in, "batches_out": self.batches_out,
            "records": self.records, "bytes_in": self.bytes_in, "bytes_out": self.bytes_out,
            "identical": self.identical, "different": self.different,
            "differences": [_difference(d) for d in self.differences],
            "copied": self.copied, "skipped": self.skipped,
            "index_interval_bytes": self.intervals,
            "seconds": round(self.seconds, 3), "rolled_back": self.rolled_back,
        }  # fmt: skip


def _difference(d: Difference) -> dict:
    return {"file": d.file, "position": d.position, "offset": d.offset, "first_difference": d.at}


# ------------------------------------------------------------------------------ walking


def _rebuilt(seg: Segment, rebuilder: Rebuilder) -> Iterator[Rebuilt]:
    """The segment's batches rebuilt; damage (a bad CRC, a cut tail, a batch that does not
    decode) stops the rewrite with the file and position named: a damaged log is for
    `kafkacodec recover` first, never silently cut here."""
    it = seg.batches(0, verify_crc=True)
    try:
        yield from rebuilder.rebuild(it)
    except (DecodeError, EncodeError) as err:
        where = getattr(err, "position", None)
        raise LogError(seg.path, f"cannot be rewritten: {getattr(err, 'message', str(err))}"
                       + ("" if isinstance(err, EncodeError) else
                          " (verify tells what is damaged; recover repairs it first)"),
                       where if where is not None else it.position) from None  # fmt: skip
    if it.remaining:
        raise LogError(seg.path, f"ends with {it.remaining} bytes that are not a complete batch "
                                 "(a cut tail: `kafkacodec recover` repairs it first)", it.position)  # fmt: skip


def _check_segment(seg: Segment, rebuilder: Rebuilder, summary: RewriteSummary) -> None:
    for r in _rebuilt(seg, rebuilder):
        summary.add(seg, r)
    summary.segments += 1


def _write_segment(seg: Segment, out_dir: Path, rebuilder: Rebuilder, interval: int,
                   summary: RewriteSummary) -> None:  # fmt: skip
    """The segment rebuilt into out_dir under its own name, with indexes built as Kafka's
    LogSegment builds them and its .txnindex copied (it holds offsets only)."""
    base = seg.base_offset
    indexes = IndexBuilder(base, interval)
    position = 0
    log_path = out_dir / segment_name(base)
    with open(log_path, "wb", buffering=1 << 20) as log:
        for r in _rebuilt(seg, rebuilder):
            summary.add(seg, r)
            if not r.data:
                continue
            if position + len(r.data) > _MAX_SEGMENT:
                raise LogError(seg.path, f"would grow past {_MAX_SEGMENT} bytes rewritten (Kafka "
                                         "indexes positions as int32): choose a codec that keeps "
                                         "it smaller", r.position)  # fmt: skip
            indexes.append(position, r.last_offset, r.max_timestamp)
            log.write(r.data)
            position += len(r.data)
        _sync(log)
    indexes.close()
    _write(out_dir / segment_name(base, ".index"), encode_offset_entries(base, indexes.offset_entries))
    _write(out_dir / segment_name(base, ".timeindex"), encode_time_entries(base, indexes.time_entries))
    txn = Path(seg.path).with_name(segment_name(base, ".txnindex"))
    if txn.exists():
        _copy(txn, out_dir / txn.name)
    summary.segments += 1


def _write(path: Path, data: bytes) -> None:
    with open(path, "wb") as f:
        f.write(data)
        _sync(f)


def _sync(f: BinaryIO) -> None:
    f.flush()
    os.fsync(f.fileno())


def _copy(src: Path, dst: Path) -> None:
    with open(dst, "wb") as out:
        for chunk in fsio.copy_range(src, 0, os.stat(src).st_size):
            out.write(chunk)
        _sync(out)


# --------------------------------------------------------------------------- partitions


def _epoch_lookup(part: Partition) -> Callable[[int], int]:
    """The leader epoch the partition's leader-epoch-checkpoint gives for an offset, -1
    before its first entry (LeaderEpochFileCache.epochForOffset)."""
    entries = read_epoch_checkpoint(part.path / EPOCH_CHECKPOINT)

    def epoch_for(offset: int) -> int:
        epoch = -1
        for e in entries:
            if e.start_offset > offset:
                break
            epoch = e.epoch
        return epoch

    return epoch_for


def _refuse_unfinished(part: Partition) -> None:
    if part.repair_files:
        raise LogError(part.path, f"holds an unfinished repair ({', '.join(part.repair_files[:3])}): "
                                  "`kafkacodec recover` finishes it first")  # fmt: skip
    if part.leftovers:
        raise LogError(part.path, f"holds files of an operation Kafka did not finish "
                                  f"({', '.join(part.leftovers[:3])}): let a broker load it, or "
                                  "`kafkacodec recover` it, first")  # fmt: skip


def _partition(part: Partition, out_dir: Path | None, options: dict, interval: int,
               summary: RewriteSummary) -> None:  # fmt: skip
    _refuse_unfinished(part)
    rebuilder = Rebuilder(**options, epoch_for=_epoch_lookup(part))
    summary.partitions += 1
    summary.intervals[part.path.name] = interval
    if out_dir is not None:
        os.mkdir(out_dir, 0o755)
    for seg in part.segments:
        if out_dir is None:
            _check_segment(seg, rebuilder, summary)
        else:
            _write_segment(seg, out_dir, rebuilder, interval, summary)
    if out_dir is None:
        return
    written = set(os.listdir(out_dir))
    for child in sorted(Path(part.path).iterdir()):
        parsed = parse_segment_name(child.name)
        if child.name in written or (parsed and parsed[1] in _INDEX_SUFFIXES):
            continue  # rebuilt (an index of a segment, or one whose .log is missing)
        if child.is_file() and not child.is_symlink():
            _copy(child, out_dir / child.name)
            summary.copied.append(f"{part.path.name}/{child.name}")
        else:
            summary.skipped.append(f"{part.path.name}/{child.name}")
    fsio.fsync_dir(out_dir)


# ---------------------------------------------------------------------------- the entry


def _log_dir_of(src: Path, kind: str) -> Path:
    return {"segment": src.parent.parent, "partition": src.parent, "log.dirs": src}[kind]


def _check_destination(src: Path, dst: Path) -> None:
    if dst.exists() or dst.is_symlink():
        raise LogError(dst, "exists: the rewrite writes a new log and never over anything")
    real_src, real_dst = Path(os.path.realpath(src)), Path(os.path.realpath(dst))
    if real_dst == real_src or real_src in real_dst.parents:
        raise LogError(dst, f"is inside the source {src}")
    for d in real_dst.parents:
        if (d / "meta.properties").exists():  # every broker's log directory holds one
            raise LogError(dst, f"is inside {d}, a Kafka log directory: a broker would load the "
                                "rewrite as a partition; write it elsewhere")  # fmt: skip
    if not real_dst.parent.is_dir():
        raise LogError(dst, f"cannot be created: {dst.parent} is not a directory")


def rewrite(src: Path | str, dst: Path | str | None, *, compression: str | int | None = None,
            level: int | None = None, magic: int | None = None, gzip_os: int | None = None,
            index_interval_bytes: int | None = None,
            interval_for: Callable[[str], int | None] | None = None,
            batch_bytes: int | None = None) -> RewriteSummary:  # fmt: skip
    """Rewrite a segment file, a partition directory or a log.dirs into dst (a new
    directory), or with dst None only check that every batch rebuilds identically.

    index.interval.bytes: index_interval_bytes, else interval_for(topic) (a topic's
    config, where the caller knows it), else Kafka's default 4096. Options as
    records.rebuild.Rebuilder takes them. Raises LogError for damaged input or a
    destination that is not a new directory outside the source and every log directory."""
    refuse_remote(src, "a rewrite")
    started = time.perf_counter()
    src = Path(src)
    options: dict = {"compression": compression, "level": level, "magic": magic,
                     "gzip_os": gzip_os}  # fmt: skip
    if batch_bytes is not None:
        options["batch_bytes"] = batch_bytes
    Rebuilder(**options)  # bad options are refused before anything is read or written
    kind, log = _open(src, dst is not None)
    summary = RewriteSummary(str(src), None if dst is None else str(dst),
                             {k: v for k, v in options.items() if v is not None})  # fmt: skip
    holder = lock_holder(_log_dir_of(src, kind))
    if holder is not None:
        raise LogError(_log_dir_of(src, kind) / fsio.LOCK_FILE,
                       f"is held by {'process ' + str(holder) if holder else 'another process'} "
                       "(a running broker?): its log changes while it is read; stop the broker "
                       "first")  # fmt: skip

    def interval(part: Partition | None) -> int:
        if index_interval_bytes is not None:
            return index_interval_bytes
        topic = part.topic if part is not None else None
        found = interval_for(topic) if interval_for and topic else None
        return DEFAULT_INDEX_INTERVAL if found is None else found

    stage = None
    if dst is not None:
        dst = Path(dst)
        _check_destination(src, dst)
        stage = dst.with_name(f".{dst.name}{STAGE_SUFFIX}")
        if stage.exists():  # an earlier run stopped before its rename: roll it back
            shutil.rmtree(stage)
            summary.rolled_back = str(stage)
    try:
        _run(kind, log, src, stage, options, interval, summary)
        if stage is not None and dst is not None:
            fsio.fsync_dir(stage)
            os.rename(stage, dst)  # the commit point
            fsio.fsync_dir(dst.parent)
    except BaseException:
        if stage is not None and stage.exists():
            shutil.rmtree(stage, ignore_errors=True)  # our own partial output; the source is whole
        raise
    finally:
        if isinstance(log, (Partition, LogDirs)):
            log.close()
    summary.seconds = time.perf_counter() - started
    return summary


def _open(src: Path, writing: bool) -> tuple[str, Segment | Partition | LogDirs]:
    if src.is_file():
        parsed = parse_segment_name(src.name)
        if parsed is not None and parsed[1] == ".log":
            return "segment", Segment(src.parent, parsed[0])
        if writing:
            raise LogError(src, "is not a segment (named <20-digit base offset>.log): the "
                                "rewrite names its output by it (--check reads any file)")  # fmt: skip
        return "segment", Segment.standalone(src)
    log = open_log(src)
    return ("log.dirs" if isinstance(log, LogDirs) else "partition"), log


def _run(kind: str, log: Segment | Partition | LogDirs, src: Path, stage: Path | None,
         options: dict, interval: Callable[[Partition | None], int],
         summary: RewriteSummary) -> None:  # fmt: skip
    if isinstance(log, Segment):
        part = _partition_of(src)
        summary.partitions = 1
        rebuilder = Rebuilder(**options, epoch_for=_epoch_lookup(part) if part else None)
        summary.intervals[src.name] = interval(part)
        if stage is None:
            _check_segment(log, rebuilder, summary)
            return
        os.mkdir(stage, 0o755)
        _write_segment(log, stage, rebuilder, interval(part), summary)
        return
    if isinstance(log, Partition):
        _partition(log, stage, options, interval(log), summary)
        return
    if log.problems:
        raise LogError(src, "holds partitions that cannot be read: " + "; ".join(log.problems[:3]))
    if stage is not None:
        os.mkdir(stage, 0o755)
    for part in log.partitions:
        _partition(part, None if stage is None else stage / part.path.name, options,
                   interval(part), summary)  # fmt: skip
    if stage is None:
        return
    done = {p.path.name for p in log.partitions}
    for child in sorted(src.iterdir()):
        if child.name == fsio.LOCK_FILE or child.name in done:
            continue
        if child.is_file() and not child.is_symlink():
            _copy(child, stage / child.name)
            summary.copied.append(child.name)
        else:
            summary.skipped.append(child.name)


def _partition_of(segment: Path) -> Partition | None:
    """The partition directory a segment file is in, when it is one (for its topic and
    leader epochs)."""
    try:
        return Partition(segment.parent)
    except LogError:
        return None

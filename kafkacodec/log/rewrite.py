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

Worker processes share the work: each segment is cut at batch boundaries into units of
about UNIT_BYTES, rebuilt in order by a window of workers, each writing its unit's bytes
to a file in the staging directory that this process appends to the segment (in the
kernel) while it builds the indexes. Each unit starts its own Rebuilder, so the bytes
written are the same for any number of processes. The Spark job (pipeline.jobs.rewrite)
runs one partition per task with the pieces below (staged, check_destination, ...).
"""

from __future__ import annotations

import argparse
import os
import shutil
import time
from collections.abc import Callable, Generator, Iterable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from pathlib import Path
from typing import BinaryIO

from ..console import safe
from ..records.batches import LOG_OVERHEAD, MIN_MESSAGE_OVERHEAD
from ..records.rebuild import Rebuilder, Rebuilt
from ..runtime.errors import DecodeError, EncodeError, LogError, RefusedError
from ..storage import fsio, refuse_remote
from ..storage.fsio import lock_holder
from .index import IndexBuilder, encode_offset_entries, encode_time_entries
from .partition import EPOCH_CHECKPOINT, LogDirs, Partition, open_log, read_epoch_checkpoint
from .recovery import DEFAULT_INDEX_INTERVAL
from .segment import Segment, parse_segment_name, segment_name
from .workers import in_order, usable_cpus, worker_count

__all__ = [
    "RewriteSummary", "Difference", "rewrite", "STAGE_SUFFIX", "DIFFERENCES_LISTED", "UNIT_BYTES",
    "refuse_held", "check_destination", "staged", "copy_log_dirs_files", "rebuild_options",
    "add_arguments", "options_of",
]  # fmt: skip

STAGE_SUFFIX = ".kafkacodec-rewrite"
#: How many differing batches a summary names (all are counted).
DIFFERENCES_LISTED = 20
#: The largest segment Kafka can index: positions are int32 (LogSegment).
_MAX_SEGMENT = 0x7FFFFFFF
_INDEX_SUFFIXES = (".log", ".index", ".timeindex")
#: About how many bytes of a segment one unit of work rebuilds (a worker process's share
#: at a time): large enough that handing it over costs little, small enough that two
#: processes share one segment.
UNIT_BYTES = 8 << 20


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
    jobs: int = 1  #: worker processes that shared the work (1: none)
    jobs_asked: int | None = None  #: --jobs, when the work or the machine lowered it
    units: int = 0  #: units of work (about UNIT_BYTES each) the workers shared
    tasks: int = 0  #: Spark tasks that shared the work (the Spark job: one per partition)
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

    def merge(self, part: RewriteSummary) -> None:
        """Add the counts of a part of the work (a unit's summary), in order."""
        for name in ("batches_in", "batches_out", "records", "bytes_in", "bytes_out",
                     "identical", "different"):  # fmt: skip
            setattr(self, name, getattr(self, name) + getattr(part, name))
        room = DIFFERENCES_LISTED - len(self.differences)
        self.differences.extend(part.differences[: max(room, 0)])
        self.partitions += part.partitions
        self.segments += part.segments
        self.copied += part.copied
        self.skipped += part.skipped
        self.intervals.update(part.intervals)

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
            "seconds": round(self.seconds, 3), "jobs": self.jobs, "jobs_asked": self.jobs_asked,
            "tasks": self.tasks, "rolled_back": self.rolled_back,
        }  # fmt: skip


    def lines(self) -> list[str]:
        """The summary: what was read and written, how it compares, how long it took."""
        rate = self.bytes_in / self.seconds / 1e6 if self.seconds > 0 else 0.0
        head = f"checked {safe(self.source)}" if self.destination is None else \
            f"rewrote {safe(self.source)} -> {safe(self.destination)}"  # fmt: skip
        opts = ", ".join(f"{k} {v}" for k, v in self.options.items())
        out = [head + (f" ({opts})" if opts else ""),
               f"  partitions {self.partitions:,}, segments {self.segments:,}, batches {self.batches_in:,}"
               + (f" -> {self.batches_out:,}" if self.batches_out != self.batches_in else "")
               + f", records {self.records:,}",
               f"  bytes {self.bytes_in:,} -> {self.bytes_out:,}"
               + (f" ({100 * self.bytes_out / self.bytes_in:.1f}%)" if self.bytes_in else ""),
               f"  time {self.seconds:.2f} s ({rate:,.0f} MB/s of segment"
               + (f", {self.tasks:,} Spark tasks)" if self.tasks else
                  f", {self.jobs} processes)" if self.jobs > 1 else ")")]  # fmt: skip
        if self.jobs_asked is not None:
            out.append(f"  --jobs {self.jobs_asked} lowered to {self.jobs} (the work: {self.units:,} "
                       f"units of up to {UNIT_BYTES >> 20} MiB; this machine: {usable_cpus()} CPUs)")
        if self.options:
            out.append(f"  batches written unchanged {self.identical:,}, changed {self.different:,}")
        else:
            out.append(f"  batches identical {self.identical:,}, different {self.different:,}")
            for d in self.differences:
                out.append(f"  different: {safe(d.file)} batch at byte {d.position:,} (offset "
                           f"{d.offset}): first differing byte at {d.at:,}")  # fmt: skip
            if self.different > len(self.differences):
                out.append(f"  ... and {self.different - len(self.differences):,} more different batches")
            if self.different and self.destination is not None:
                out.append("  (each was written as Kafka's writer rebuilds it from its decoded "
                           "fields: valid, with the same records)")  # fmt: skip
        if self.rolled_back:
            out.append(f"  removed {safe(self.rolled_back)}, left by a rewrite that stopped before "
                       "its end")  # fmt: skip
        if self.skipped:
            out.append(f"  not copied (not files): {', '.join(safe(x) for x in self.skipped[:10])}")
        return out


def _difference(d: Difference) -> dict:
    return {"file": d.file, "position": d.position, "offset": d.offset, "first_difference": d.at}


# ------------------------------------------------------------------------------ walking


@dataclass(slots=True)
class _Unit:
    """A unit of work, run in a worker process or in this one: the batches of a segment
    from byte `start` to `end` (None: its end), rebuilt. Picklable."""

    segment: Segment
    start: int
    end: int | None
    options: dict
    epochs: tuple[tuple[int, int], ...]  #: the partition's (start offset, epoch) entries
    out: str | None  #: when writing, the file a worker process writes the unit's bytes to


@dataclass(slots=True)
class _Done:
    """A unit's result: the rebuilt bytes (when writing: in memory, or in the unit's file
    when a worker process ran it), one (size, last offset, max timestamp, source position)
    per batch written, and its part of the summary."""

    data: bytes
    path: str | None
    written: list[tuple[int, int, int, int]]
    summary: RewriteSummary


def _epoch_for(epochs: tuple[tuple[int, int], ...]) -> Callable[[int], int]:
    """The leader epoch the partition's leader-epoch-checkpoint gives for an offset, -1
    before its first entry (Kafka's LeaderEpochFileCache.epochForOffset)."""

    def epoch_for(offset: int) -> int:
        epoch = -1
        for start, e in epochs:
            if start > offset:
                break
            epoch = e
        return epoch

    return epoch_for


def _rebuilt(seg: Segment, rebuilder: Rebuilder, start: int = 0,
             end: int | None = None) -> Iterator[Rebuilt]:  # fmt: skip
    """The segment's batches from start to end rebuilt; damage (a bad CRC, a cut tail, a
    batch that does not decode) stops the rewrite with the file and position named: a
    damaged log is for `kafkacodec recover` first, never silently cut here."""
    it = seg.batches(start, verify_crc=True, end=end)
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


def _run_unit(unit: _Unit, to_file: bool = False) -> _Done:
    """Rebuild a unit's batches; when writing, into memory or (to_file) the unit's file.
    Each unit starts a Rebuilder afresh, so what is written does not depend on how many
    processes share the work (the level search's memory of the last level that reproduced
    a batch is per unit)."""
    rebuilder = Rebuilder(**unit.options, epoch_for=_epoch_for(unit.epochs))
    summary = RewriteSummary("", None, {k: v for k, v in unit.options.items() if v is not None})
    pieces, written = [], []
    for r in _rebuilt(unit.segment, rebuilder, unit.start, unit.end):
        summary.add(unit.segment, r)
        if unit.out is not None and r.data:
            pieces.append(r.data)
            written.append((len(r.data), r.last_offset, r.max_timestamp, r.position))
    if to_file and unit.out is not None:
        # no fsync: the file is copied into the segment, which is, and then removed
        with open(unit.out, "wb") as f:
            f.writelines(pieces)
        return _Done(b"", unit.out, written, summary)
    return _Done(b"".join(pieces), None, written, summary)


def _work(unit: _Unit) -> _Done:
    """_run_unit in a worker process: the bytes go to the unit's file (handing them over a
    pipe costs more than the rebuild of uncompressed data); its copy of the segment is
    closed after."""
    try:
        return _run_unit(unit, to_file=True)
    finally:
        unit.segment.close()


def _cuts(seg: Segment, whole: bool) -> list[tuple[int, int | None]]:
    """Where a segment's units of work start and end: at batch boundaries about every
    UNIT_BYTES, found by walking the entries' sizes (whole: one unit, for a rewrite that
    groups legacy messages across entries). The last unit runs to the end of the file, so
    damage past the walk is met, and named, by the unit that reads it."""
    size = seg.size
    if whole or size <= UNIT_BYTES:
        return [(0, None)]
    data = seg.data
    cuts: list[tuple[int, int | None]] = []
    start = pos = 0
    while size - pos >= LOG_OVERHEAD:
        declared = int.from_bytes(data[pos + 8 : pos + LOG_OVERHEAD], "big", signed=True)
        if declared < MIN_MESSAGE_OVERHEAD or size - pos - LOG_OVERHEAD < declared:
            break
        pos += LOG_OVERHEAD + declared
        if pos - start >= UNIT_BYTES and pos < size:
            cuts.append((start, pos))
            start = pos
    cuts.append((start, None))
    return cuts


@dataclass(slots=True)
class _Step:
    """One step of a rewrite, in order: a unit of work (run in a worker), or what this
    process does between units: make a partition's directory ("partition"), finish a
    segment's files ("segment"), copy a partition's other files ("partition-end")."""

    kind: str
    out_dir: Path | None = None
    part: Partition | None = None
    seg: Segment | None = None
    interval: int = 0
    unit: _Unit | None = None


def _segment_steps(seg: Segment, out_dir: Path | None, interval: int, options: dict,
                   epochs: tuple[tuple[int, int], ...]) -> Iterator[_Step]:  # fmt: skip
    whole = Rebuilder(**options).groups_legacy
    for k, (start, end) in enumerate(_cuts(seg, whole)):
        out = None if out_dir is None else str(out_dir / f"{segment_name(seg.base_offset)}.unit-{k:06d}")
        yield _Step("unit", out_dir, seg=seg, interval=interval,
                    unit=_Unit(seg, start, end, options, epochs, out))  # fmt: skip
    yield _Step("segment", out_dir, seg=seg, interval=interval)


def _partition_steps(part: Partition, out_dir: Path | None, options: dict,
                     interval: int) -> Iterator[_Step]:  # fmt: skip
    _refuse_unfinished(part)
    epochs = _epochs(part)
    yield _Step("partition", out_dir, part=part, interval=interval)
    for seg in part.segments:
        yield from _segment_steps(seg, out_dir, interval, options, epochs)
    yield _Step("partition-end", out_dir, part=part)


def _ordered(steps: Iterable[_Step], jobs: int) -> Generator[tuple[_Step, _Done | None], None, None]:
    """The steps with their units' results, in order: run here (jobs 1), or by `jobs`
    worker processes at most 2 * jobs units ahead of the one being written (the parent's
    memory holds that many units' bytes at most)."""
    return in_order(steps, lambda step: step.unit, _run_unit, _work, jobs)


class _SegmentWriter:
    """A segment's rebuilt bytes written to out_dir under its name, with its indexes built
    as Kafka's LogSegment builds them on append (log.index.IndexBuilder) and its .txnindex
    copied (it holds offsets only)."""

    def __init__(self, seg: Segment, out_dir: Path, interval: int) -> None:
        self.seg, self.out_dir, self.base = seg, out_dir, seg.base_offset
        self.indexes = IndexBuilder(self.base, interval)
        self.position = 0
        self.file = open(out_dir / segment_name(self.base), "wb")  # noqa: SIM115 - closed in finish/abort

    def add(self, done: _Done) -> None:
        for size, last_offset, max_timestamp, source in done.written:
            if self.position + size > _MAX_SEGMENT:
                raise LogError(self.seg.path, f"would grow past {_MAX_SEGMENT} bytes rewritten "
                                              "(Kafka indexes positions as int32): choose a codec "
                                              "that keeps it smaller", source)  # fmt: skip
            self.indexes.append(self.position, last_offset, max_timestamp)
            self.position += size
        if done.path is None:
            self.file.write(done.data)
            return
        with open(done.path, "rb") as unit:
            fsio.append_file(unit, self.file)
        os.unlink(done.path)

    def finish(self) -> None:
        _sync(self.file)
        self.file.close()
        self.indexes.close()
        base, out_dir = self.base, self.out_dir
        _write(out_dir / segment_name(base, ".index"), encode_offset_entries(base, self.indexes.offset_entries))
        _write(out_dir / segment_name(base, ".timeindex"), encode_time_entries(base, self.indexes.time_entries))
        txn = Path(self.seg.path).with_name(segment_name(base, ".txnindex"))
        if txn.exists():
            _copy(txn, out_dir / txn.name)

    def abort(self) -> None:
        self.file.close()  # the staging directory it is in is removed


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


def _perform(steps: Iterable[_Step], jobs: tuple[int, int | None, int], summary: RewriteSummary) -> None:
    """Run the steps in order, writing what the units rebuilt (when writing)."""
    summary.jobs, summary.jobs_asked, summary.units = jobs
    writer: _SegmentWriter | None = None
    results = _ordered(steps, summary.jobs)
    try:
        for step, done in results:
            if step.kind == "unit":
                assert done is not None and step.seg is not None
                summary.merge(done.summary)
                if step.out_dir is not None:
                    if writer is None:
                        writer = _SegmentWriter(step.seg, step.out_dir, step.interval)
                    writer.add(done)
            elif step.kind == "segment":
                summary.segments += 1
                if writer is not None:
                    writer.finish()
                    writer = None
            elif step.kind == "partition":
                assert step.part is not None
                summary.partitions += 1
                summary.intervals[step.part.path.name] = step.interval
                if step.out_dir is not None:
                    os.mkdir(step.out_dir, 0o755)
            elif step.out_dir is not None and step.part is not None:  # "partition-end"
                _copy_side_files(step.part, step.out_dir, summary)
    finally:
        # the workers stop (those running finish their unit) before anything is removed
        results.close()
        if writer is not None:
            writer.abort()


# --------------------------------------------------------------------------- partitions


def _epochs(part: Partition | None) -> tuple[tuple[int, int], ...]:
    if part is None:
        return ()
    return tuple((e.start_offset, e.epoch) for e in read_epoch_checkpoint(part.path / EPOCH_CHECKPOINT))


def _refuse_unfinished(part: Partition) -> None:
    if part.repair_files:
        raise RefusedError(part.path, f"holds an unfinished repair ({', '.join(part.repair_files[:3])}): "
                                  "`kafkacodec recover` finishes it first")  # fmt: skip
    if part.leftovers:
        raise RefusedError(part.path, f"holds files of an operation Kafka did not finish "
                                  f"({', '.join(part.leftovers[:3])}): let a broker load it, or "
                                  "`kafkacodec recover` it, first")  # fmt: skip


def _copy_side_files(part: Partition, out_dir: Path, summary: RewriteSummary) -> None:
    """What holds offsets only (checkpoints, snapshots, partition.metadata) copied as it is."""
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


def refuse_held(log_dir: Path) -> None:
    """LogError when a process (a broker) holds the log directory's .lock: its log changes
    while it is read."""
    holder = lock_holder(log_dir)
    if holder is not None:
        raise RefusedError(log_dir / fsio.LOCK_FILE,
                       f"is held by {'process ' + str(holder) if holder else 'another process'} "
                       "(a running broker?): its log changes while it is read; stop the broker "
                       "first")  # fmt: skip


def check_destination(src: Path, dst: Path) -> None:
    """LogError unless dst is a new directory outside src and outside every Kafka log
    directory (a broker would load the rewrite as a partition)."""
    if dst.exists() or dst.is_symlink():
        raise RefusedError(dst, "exists: the rewrite writes a new log and never over anything")
    real_src, real_dst = Path(os.path.realpath(src)), Path(os.path.realpath(dst))
    if real_dst == real_src or real_src in real_dst.parents:
        raise RefusedError(dst, f"is inside the source {src}")
    for d in real_dst.parents:
        if (d / "meta.properties").exists():  # every broker's log directory holds one
            raise RefusedError(dst, f"is inside {d}, a Kafka log directory: a broker would load the "
                                "rewrite as a partition; write it elsewhere")  # fmt: skip
    if not real_dst.parent.is_dir():
        raise RefusedError(dst, f"cannot be created: {dst.parent} is not a directory")


@contextmanager
def staged(dst: Path, summary: RewriteSummary) -> Iterator[Path]:
    """The staging directory beside dst (`.<name>.kafkacodec-rewrite`, not made yet) for
    the body to fill; on success fsynced and renamed to dst in one step (the commit
    point), on any failure removed (the source is whole). One an earlier run left is
    rolled back first (summary.rolled_back)."""
    stage = dst.with_name(f".{dst.name}{STAGE_SUFFIX}")
    if stage.exists():  # an earlier run stopped before its rename: roll it back
        shutil.rmtree(stage)
        summary.rolled_back = str(stage)
    try:
        yield stage
        fsio.fsync_dir(stage)
        os.rename(stage, dst)  # the commit point
        fsio.fsync_dir(dst.parent)
    except BaseException:
        if stage.exists():
            shutil.rmtree(stage, ignore_errors=True)  # our own partial output
        raise


def copy_log_dirs_files(src: Path, stage: Path, partitions: set[str],
                        summary: RewriteSummary) -> None:  # fmt: skip
    """A log.dirs' own files (meta.properties, the checkpoints) copied as they are; its
    .lock and its partitions (written apart) left out, what is not a file named skipped."""
    for child in sorted(src.iterdir()):
        if child.name == fsio.LOCK_FILE or child.name in partitions:
            continue
        if child.is_file() and not child.is_symlink():
            _copy(child, stage / child.name)
            summary.copied.append(child.name)
        else:
            summary.skipped.append(child.name)


def add_arguments(p: argparse.ArgumentParser, path: Callable[[str], Path] = Path,
                  src: str = "a segment (.log), a partition directory or a log.dirs",
                  src_path: Callable[[str], Path] | None = None) -> None:  # fmt: skip
    """SRC, DST, --check and the rebuild's options as a command line takes them (the one
    definition of `kafkacodec rewrite` and `kafkacodec spark rewrite`); path: DST's type
    (and SRC's, unless src_path is given); src: what SRC may be."""
    from ..runtime.compression import CODEC_IDS
    from ..units import integer

    p.add_argument("src", metavar="SRC", type=src_path or path,
                   help=f"{src}; only read")  # fmt: skip
    p.add_argument("dst", metavar="DST", type=path, nargs="?",
                   help="the new directory to write (must not exist; outside every log "
                   "directory); not with --check")  # fmt: skip
    p.add_argument("--check", action="store_true",
                   help="write nothing: rebuild every batch and report whether it comes back "
                   "byte for byte (exit 1 when one does not)")  # fmt: skip
    p.add_argument("--compression", choices=sorted(CODEC_IDS, key=lambda name: CODEC_IDS[name]),
                   help="recompress every batch with this codec (default: each keeps its own)")  # fmt: skip
    p.add_argument("--level", type=integer(),
                   help="the codec's level, in Kafka's range (compression.<codec>.level)")  # fmt: skip
    p.add_argument("--magic", type=int, choices=[2],
                   help="convert legacy message sets (magic 0 and 1) to v2 batches, as Kafka's "
                   "LogValidator converts them on append")  # fmt: skip
    p.add_argument("--gzip-jdk", choices=["8", "17"],
                   help="the JDK whose gzip header to write (8: JDK 8 and 11; 17: JDK 16 and "
                   "later; default: the source's, else 17)")  # fmt: skip
    p.add_argument("--index-interval-bytes", type=integer(0), metavar="N",
                   help="index.interval.bytes for the rebuilt indexes (default: the topic's "
                   "config, where the log.dirs holds the cluster's metadata, else 4096)")  # fmt: skip
    p.add_argument("--batch-bytes", type=integer(1), metavar="N",
                   help="how many bytes of uncompressed legacy messages become one batch when "
                   "they are converted or compressed (default 16384, the producer's batch.size)")  # fmt: skip
    p.add_argument("--json", action="store_true", help="the summary as JSON")


def options_of(args: argparse.Namespace) -> dict:
    """rewrite()'s keyword options from add_arguments' arguments."""
    from ..runtime.compression import GZIP_OS_JDK8, GZIP_OS_JDK17

    gzip_os = None if args.gzip_jdk is None else {"8": GZIP_OS_JDK8, "17": GZIP_OS_JDK17}[args.gzip_jdk]
    return {"compression": args.compression, "level": args.level, "magic": args.magic,
            "gzip_os": gzip_os, "index_interval_bytes": args.index_interval_bytes,
            "batch_bytes": args.batch_bytes}  # fmt: skip


def rebuild_options(compression: str | int | None = None, level: int | None = None,
                    magic: int | None = None, gzip_os: int | None = None,
                    batch_bytes: int | None = None) -> dict:  # fmt: skip
    """A rewrite's Rebuilder options, refused (EncodeError) before anything is read."""
    options: dict = {"compression": compression, "level": level, "magic": magic,
                     "gzip_os": gzip_os}  # fmt: skip
    if batch_bytes is not None:
        options["batch_bytes"] = batch_bytes
    Rebuilder(**options)
    return options


def rewrite(src: Path | str, dst: Path | str | None, *, compression: str | int | None = None,
            level: int | None = None, magic: int | None = None, gzip_os: int | None = None,
            index_interval_bytes: int | None = None,
            interval_for: Callable[[str], int | str | None] | None = None,
            batch_bytes: int | None = None, jobs: int | None = None) -> RewriteSummary:  # fmt: skip
    """Rewrite a segment file, a partition directory or a log.dirs into dst (a new
    directory), or with dst None only check that every batch rebuilds identically.

    index.interval.bytes: index_interval_bytes, else interval_for(topic) (a topic's
    config, where the caller knows it), else Kafka's default 4096. Options as
    records.rebuild.Rebuilder takes them. jobs: worker processes (None: one per CPU this
    process may use; 1: none); the bytes written do not depend on it. Raises LogError for
    damaged input or a destination that is not a new directory outside the source and
    every log directory."""
    refuse_remote(src, "a rewrite")
    started = time.perf_counter()
    src = Path(src)
    options = rebuild_options(compression, level, magic, gzip_os, batch_bytes)
    kind, log = _open(src, dst is not None)
    summary = RewriteSummary(str(src), None if dst is None else str(dst),
                             {k: v for k, v in options.items() if v is not None})  # fmt: skip
    try:
        refuse_held(_log_dir_of(src, kind))

        def interval(part: Partition | None) -> int:
            if index_interval_bytes is not None:
                return index_interval_bytes
            topic = part.topic if part is not None else None
            found = interval_for(topic) if interval_for and topic else None
            return DEFAULT_INDEX_INTERVAL if found is None else int(found)

        if dst is None:
            _run(kind, log, src, None, options, interval, summary, jobs)
        else:
            dst = Path(dst)
            check_destination(src, dst)
            with staged(dst, summary) as stage:
                _run(kind, log, src, stage, options, interval, summary, jobs)
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
         options: dict, interval: Callable[[Partition | None], int], summary: RewriteSummary,
         jobs: int | None) -> None:  # fmt: skip
    steps: Iterable[_Step]
    if isinstance(log, Segment):
        part = _partition_of(src)
        summary.partitions = 1
        summary.intervals[src.name] = interval(part)
        if stage is not None:
            os.mkdir(stage, 0o755)
        steps = _segment_steps(log, stage, interval(part), options, _epochs(part))
        _perform(steps, _jobs(jobs, [log]), summary)
        return
    if isinstance(log, Partition):
        steps = _partition_steps(log, stage, options, interval(log))
        _perform(steps, _jobs(jobs, log.segments), summary)
        return
    if log.problems:
        raise LogError(src, "holds partitions that cannot be read: " + "; ".join(log.problems[:3]))
    if stage is not None:
        os.mkdir(stage, 0o755)
    steps = (step for part in log.partitions
             for step in _partition_steps(part, None if stage is None else stage / part.path.name,
                                          options, interval(part)))  # fmt: skip
    _perform(steps, _jobs(jobs, [s for p in log.partitions for s in p.segments]), summary)
    if stage is not None:
        copy_log_dirs_files(src, stage, {p.path.name for p in log.partitions}, summary)


def _jobs(asked: int | None, segments: list[Segment]) -> tuple[int, int | None, int]:
    """Worker processes for a rewrite of these segments (log.workers.worker_count: no more
    than its units of up to UNIT_BYTES, nor than the CPUs; none for less than two units'
    worth of bytes, where starting workers would cost more than they save), the number
    asked for when that was more (None otherwise: also when none was asked), and the
    units."""
    units = sum(max(1, -(-seg.size // UNIT_BYTES)) for seg in segments)
    work = 1 if sum(seg.size for seg in segments) < 2 * UNIT_BYTES else units
    used = worker_count(usable_cpus() if asked is None else asked, work)
    return used, (asked if asked is not None and used < asked else None), work


def _partition_of(segment: Path) -> Partition | None:
    """The partition directory a segment file is in, when it is one (for its topic and
    leader epochs)."""
    try:
        return Partition(segment.parent)
    except LogError:
        return None

"""Repair of a partition as a broker recovers it after an unclean shutdown, crash-safely,
moving aside what Kafka would delete.

The rule is Kafka's LogLoader.recoverLog: segments are recovered in order (LogSegment.recover,
see recovery.py); the first one with invalid bytes is truncated to its valid prefix and every
later segment is deleted, since nothing after a hole can be trusted to be in order. On load
Kafka also drops leader epochs that start at or past the new log end
(LeaderEpochFileCache.truncateFromEnd), producer snapshots past it
(ProducerStateManager.truncateAndReload) and index files without a .log (LogLoader's orphans),
and rebuilds a segment's indexes when they are missing or corrupt.

kafkacodec does the same, but never deletes a byte: the later segments with their index
files, the cut-off tail, the replaced indexes and checkpoint all go to a backup directory
outside the log directory (Kafka takes every directory inside a log directory for a
partition). A segment that does not look like Kafka data, or whose offsets its name cannot
hold, is refused: Kafka would not truncate it either.

`plan(partition)` is the dry run: it changes nothing and says exactly which files, batches,
records and bytes would move. `apply(plan)` writes it, under the broker's own lock:

1. prepare (nothing Kafka reads changes): the backup directory is made (mode 0700); the
   cut-off tail, the files to be replaced, and (on another filesystem) the files to be
   moved are copied there, streamed and fsynced; the rebuilt files are written beside their
   targets as `<name>.kafkacodec-new`, with the owner and mode of the file they replace;
2. commit: the journal `<partition>/.kafkacodec-repair` (JSON: every step with the state
   of its files before and after) is written atomically; its rename is the commit point;
3. apply: later segments are moved last first (at every step the partition is a prefix of
   itself, which Kafka's own recovery would also accept), then the bad segment is truncated,
   then the new files are renamed into place; then the journal is removed.

Every step checks that its files are exactly in the "before" state or the "after" state
the journal recorded (inode, size) before it acts. A journal whose files match neither (a
broker appended meanwhile, a file was replaced) is reported and never applied. Killed at
any point, the next `apply` (`kafkacodec recover --repair`) completes the journal; killed
before the commit point, the partition is as it was.
"""

from __future__ import annotations

import datetime as _dt
import json
import os
import re
import stat
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from ..records.batches import RecordBatch
from ..runtime.errors import LogError, NotASegmentError, RefusedError
from ..storage import fsio, refuse_remote
from .check import BadRegion, scan
from .index import (
    encode_offset_entries,
    encode_time_entries,
    encode_txn_entries,
)
from .partition import (
    EPOCH_CHECKPOINT,
    Partition,
    read_epoch_checkpoint,
    write_epoch_checkpoint_text,
)
from .recovery import DEFAULT_INDEX_INTERVAL, RecoveryReport, TxnTracker, recover_segment
from .segment import Segment, parse_segment_name

__all__ = ["RepairPlan", "Move", "Replace", "plan", "plan_repair", "apply", "finish", "repair",
           "pending", "PendingRepair", "JOURNAL", "default_backup_root", "abandoned_backups",
           "mark_abandoned", "ABANDONED"]  # fmt: skip

#: The journal of a committed repair, in the partition directory (Kafka ignores files that
#: are not segments or indexes).
JOURNAL = ".kafkacodec-repair"
NEW_SUFFIX = ".kafkacodec-new"
#: The file in a backup directory that says what it holds and whether the repair finished.
MANIFEST = "REPAIR.json"
_JOURNAL_VERSION = 1
#: The bytes segment.sniff needs to tell Kafka data from something else.
_SNIFF_MIN = 17


@dataclass
class Move:
    """A file Kafka would delete, moved to the backup directory; with the batches, records
    and bytes it holds when it is a .log."""

    name: str
    size: int
    why: str
    batches: int | None = None
    records: int | None = None


@dataclass
class Replace:
    """A file rewritten: rebuilt indexes, or the leader-epoch-checkpoint."""

    name: str
    data: bytes
    why: str
    like: str  # the file whose owner and mode the new one takes


@dataclass
class RepairPlan:
    """What a repair of one partition would do (the dry run)."""

    partition: Path
    log_dir: Path
    reports: list[RecoveryReport] = field(default_factory=list)
    truncate: RecoveryReport | None = None
    moves: list[Move] = field(default_factory=list)
    replaces: list[Replace] = field(default_factory=list)
    dropped_epochs: list = field(default_factory=list)
    #: Why this partition cannot be repaired (nothing is changed), or None.
    refused: str | None = None
    log_end_offset: int = 0
    index_interval_bytes: int = DEFAULT_INDEX_INTERVAL
    #: Readable batches and records in the bytes cut off (after the first bad one): what
    #: `kafkacodec records --skip-corrupt` can still salvage from the backup.
    cut_batches: int = 0
    cut_records: int = 0

    @property
    def clean(self) -> bool:
        """Whether the partition needs no repair (and none was refused)."""
        return self.refused is None and not (self.truncate or self.moves or self.replaces)

    @property
    def moved_segments(self) -> list[Move]:
        """The whole segments the repair moves to the backup (their .log files)."""
        return [m for m in self.moves if m.name.endswith(".log")]

    def to_dict(self) -> dict:
        """The plan as JSON-ready values (`recover --json`)."""
        t = self.truncate
        return {
            "partition": str(self.partition), "clean": self.clean, "refused": self.refused,
            "log_end_offset": self.log_end_offset,
            "truncate": None if t is None else {
                "segment": Path(t.segment).name, "position": t.invalid_position, "reason": t.reason,
                "last_valid_offset": t.last_valid_offset, "cut_bytes": t.truncated_bytes,
                "cut_readable_batches": self.cut_batches, "cut_readable_records": self.cut_records},
            "move": [m.__dict__ for m in self.moves],
            "rewrite": [{"name": r.name, "why": r.why} for r in self.replaces],
            "dropped_epochs": [list(e) for e in self.dropped_epochs],
            "segments": [r.to_dict() | {"walk": None, "offset_index": None, "time_index": None}
                         for r in self.reports],
        }  # fmt: skip


def default_backup_root(log_dir: Path) -> Path:
    """Beside the log directory, never inside one: `<parent of log.dir>/kafkacodec-backup`."""
    return Path(os.path.abspath(log_dir)).parent / "kafkacodec-backup"


# --------------------------------------------------------------------------- the dry run


def plan(partition: Partition, *, index_interval_bytes: int = DEFAULT_INDEX_INTERVAL,
         progress: Callable[[int], object] | None = None) -> RepairPlan:  # fmt: skip
    """Kafka's recovery of the whole partition, as a plan; reads, never writes."""
    refuse_remote(partition.path, "a repair (a plan is made to be applied)")
    assert isinstance(partition.path, Path)
    p = RepairPlan(partition.path, partition.path.parent, index_interval_bytes=index_interval_bytes)
    tracker = TxnTracker()  # producer state runs across the segments of a partition
    segments = partition.segments
    cut_at = None
    for n, seg in enumerate(segments):
        try:
            if seg.size >= _SNIFF_MIN:  # shorter: a torn first write, too short to judge
                seg.sniff()
        except NotASegmentError as err:
            p.refused = (f"{err}: kafkacodec repairs only Kafka data (Kafka's recovery would "
                         "empty this file and delete every later segment; look at it by hand)")  # fmt: skip
            return p
        rep = recover_segment(seg, index_interval_bytes, tracker, progress)
        p.reports.append(rep)
        if rep.offset_problem:
            p.refused = f"{seg.path}: {rep.offset_problem}"
            return p
        p.replaces += _index_rewrites(seg, rep, truncated=not rep.clean)
        rep.walk = []  # a tuple per batch: not kept for a whole partition
        if not rep.clean:
            p.truncate, cut_at = rep, n
            p.cut_batches, p.cut_records = _readable(seg, rep.valid_bytes)
        seg.close()  # unmapped as soon as walked: a partition may hold thousands
        if cut_at is not None:
            break
    p.log_end_offset = p.reports[-1].next_offset if p.reports else partition.log_start_offset
    if cut_at is not None:
        for seg in reversed(segments[cut_at + 1 :]):  # the last first: see the docstring
            p.moves += _segment_moves(seg)
    p.moves += [Move(name, fsio.size_or_zero(partition.path / name),
                     f"a producer snapshot past the new log end {p.log_end_offset}")
                for name in _snapshots_past(partition, p.log_end_offset)]  # fmt: skip
    p.moves += [Move(name, fsio.size_or_zero(partition.path / name), "an index file without its .log")
                for name in partition.orphan_indexes]  # fmt: skip
    epochs = read_epoch_checkpoint(partition.path / EPOCH_CHECKPOINT)
    kept = [e for e in epochs if e.start_offset < p.log_end_offset]
    if len(kept) < len(epochs):
        p.dropped_epochs = epochs[len(kept) :]
        p.replaces.append(Replace(EPOCH_CHECKPOINT, write_epoch_checkpoint_text(kept).encode(),
                                  f"epochs from offset {p.log_end_offset} on dropped",
                                  EPOCH_CHECKPOINT))  # fmt: skip
    return p


def _index_rewrites(seg: Segment, rep: RecoveryReport, *, truncated: bool) -> list[Replace]:
    """Rebuilt indexes where Kafka rebuilds them: a segment it recovers (truncated), an index
    missing or failing its sanity check (LogLoader.loadSegmentFiles); and where an index
    disagrees with the log (its readers would be misled). An index that already holds what
    Kafka would build is left alone, so that a repair is idempotent even on a log whose
    offsets no index can describe (they go backwards)."""
    problems = seg.index_problems(rep.walk)
    base = seg.base_offset
    txn = seg.txn_index
    want_txn = list(rep.txn_index)
    candidates: list[tuple[Any, bytes, str | None]] = []
    for index, data in (
        (seg.offset_index, encode_offset_entries(base, rep.offset_index)),
        (seg.time_index, encode_time_entries(base, rep.time_index)),
    ):
        bad = [p for p in problems if p.startswith(f"{index.path}:")]
        why = ("the segment is truncated" if truncated else "missing" if not index.exists
               else bad[0].split(": ", 1)[1] if bad else None)  # fmt: skip
        candidates.append((index, data, why))
    if truncated and (txn.exists or want_txn):
        why = "the segment is truncated"
    elif txn.exists and txn.problems:
        why = txn.problems[0]
    elif not txn.exists and want_txn:
        why = f"missing, and the log holds {len(want_txn)} aborted transactions"
    else:
        why = None
    candidates.append((txn, encode_txn_entries(want_txn), why))
    return [Replace(index.path.name, data, why, seg.path.name)
            for index, data, why in candidates if why and _content(index.path) != data]  # fmt: skip


def _content(path: Path) -> bytes | None:
    """A file's bytes, None when it is missing or not a regular file."""
    try:
        data, _size = fsio.map_regular(path)
    except LogError:
        return None
    if data is None:
        return None
    try:
        return bytes(data)
    finally:
        fsio.unmap(data)


def _readable(seg: Segment, start: int) -> tuple[int, int]:
    """Batches with a matching CRC, and their records, from a position on (read past damage)."""
    batches = records = 0
    for item in scan(seg.data, source=str(seg.path), start=start, end=seg.size):
        if not isinstance(item, BadRegion):
            batches += 1
            records += item.count if isinstance(item, RecordBatch) else 1
    return batches, records


def _segment_moves(seg: Segment) -> list[Move]:
    """A later segment's files, counted: the .log by what is readable of it (batches with a
    matching CRC, read past damage: a later segment may be damaged too)."""
    batches, records = _readable(seg, 0)
    moves = [Move(seg.path.name, seg.size, "after the first invalid batch", batches, records)]
    for suffix in (".index", ".timeindex", ".txnindex"):
        f = seg.dir / f"{seg.base_offset:020d}{suffix}"
        if os.path.lexists(f):
            moves.append(Move(f.name, fsio.size_or_zero(f), "the index of a moved segment"))
    seg.close()
    return moves


def _snapshots_past(partition: Partition, end: int) -> list[str]:
    return [f"{o:020d}.snapshot" for o in partition.snapshots if o > end]


# -------------------------------------------------------------------------- the journal


class PendingRepair:
    """A committed repair found in a partition directory: its journal and the state of
    each step's files now ("before", "after", or why they match neither)."""

    def __init__(self, partition: Path):
        self.partition = Path(partition)
        self.path = self.partition / JOURNAL
        raw = fsio.read_side_file(self.path)
        if raw is None:
            raise FileNotFoundError(self.path)
        try:
            self.doc = json.loads(raw)
            if self.doc.get("kafkacodec_repair") != _JOURNAL_VERSION:
                raise ValueError(f"version {self.doc.get('kafkacodec_repair')!r}")
            self.steps = list(self.doc["steps"])
            self.backup = Path(self.doc["backup"])
        except (ValueError, KeyError, TypeError) as err:
            raise LogError(self.path, f"unreadable repair journal ({err}); not applied") from None
        why = _untrusted(self)
        if why:
            raise LogError(self.path, f"not a journal kafkacodec wrote ({why}); not applied: "
                                      "look at it, then remove it by hand")  # fmt: skip
        self.states = [_state(self.partition, self.backup, s) for s in self.steps]

    @property
    def done(self) -> int:
        return sum(s == "after" for s in self.states)

    @property
    def mismatch(self) -> str | None:
        """Why the files do not match the journal (then it is never applied), or None. The
        steps run in order: some done, then the rest not started."""
        for step, state in zip(self.steps, self.states):
            if state not in ("before", "after"):
                return f"{step.get('name')}: {state}"
        seen_before = False
        for step, state in zip(self.steps, self.states):
            if state == "before":
                seen_before = True
            elif seen_before:
                return f"{step['name']}: done, though an earlier step is not (not this journal's order)"
        return None

    def describe(self) -> str:
        return (f"{self.path}: a repair is unfinished ({self.done} of {len(self.steps)} steps "
                f"done; backup in {self.backup}); what Kafka would read now is the files as they "
                "are: finish it with `kafkacodec recover --repair`")  # fmt: skip


_OPS = {"move", "truncate", "replace"}


def _untrusted(job: PendingRepair) -> str | None:
    """Why a journal found on disk cannot be one kafkacodec wrote, or None. Whoever can write
    the partition directory (the broker's user) could plant one: its names must stay inside
    the partition, and its backup directory must be one this user made (owned by it, not
    writable by others, holding the same steps in its REPAIR.json), so that a planted
    journal cannot move files into a directory of the attacker's choosing."""
    for step in job.steps:
        name = step.get("name") if isinstance(step, dict) else None
        if (
            step.get("op") not in _OPS
            or not isinstance(name, str)
            or "/" in name
            or name in ("", ".", "..")
        ):
            return f"a step names {name!r}"
        if step["op"] == "truncate" and not (parse_segment_name(name) or ("", ""))[1] == ".log":
            return f"it truncates {name!r}, which is not a segment"
    try:
        st = os.lstat(job.backup)
    except OSError:
        return f"its backup directory {job.backup} is missing"
    if not stat.S_ISDIR(st.st_mode) or st.st_uid != os.geteuid() or st.st_mode & 0o022:
        return f"its backup directory {job.backup} is not a private directory of this user"
    try:
        manifest = json.loads(fsio.read_side_file(job.backup / MANIFEST) or b"null")
    except (LogError, ValueError):
        manifest = None
    if not isinstance(manifest, dict) or manifest.get("steps") != job.steps:
        return f"{job.backup / MANIFEST} does not describe the same steps"
    return None


def pending(partition: Path | str) -> PendingRepair | None:
    """The unfinished repair of a partition directory, or None."""
    try:
        return PendingRepair(Path(partition))
    except FileNotFoundError:
        return None


#: How _make_backup_dir names a repair's backup directory (the time it was made).
_STAMP = re.compile(r"^[0-9]{8}T[0-9]{6}\.[0-9]{6}Z$")
#: The REPAIR.json status of a backup whose repair stopped before its commit point.
ABANDONED = ("abandoned: the repair that made it stopped before its commit point, so the "
             "partition was not changed by it; its files are copies of bytes the partition held "
             "then (a <name>.kafkacodec-tmp one is a copy cut short). Remove it when it is not "
             "needed")  # fmt: skip


def abandoned_backups(partition: Path, backup_root: Path | None = None) -> list[tuple[Path, int]]:
    """(directory, bytes) of each backup of this partition under backup_root (default:
    default_backup_root) that a repair left before its commit point (killed while it
    prepared): no REPAIR.json, or one still "prepared", and no journal of the partition
    names it. Nothing refers to it; the next repair makes a backup of its own."""
    root = Path(os.path.abspath(backup_root or default_backup_root(partition.parent)))
    base = root / partition.parent.name / partition.name
    if not base.is_dir() or base.is_symlink():
        return []
    try:
        job = pending(partition)
    except LogError:
        return []  # an unreadable journal: reported as such, and its backup not judged
    current = None if job is None else Path(os.path.abspath(job.backup))
    out = []
    for d in sorted(base.iterdir()):
        if not _STAMP.match(d.name) or d.is_symlink() or not d.is_dir() or d == current:
            continue
        try:
            raw = fsio.read_side_file(d / MANIFEST)
            status = json.loads(raw).get("status", "") if raw else ""
        except (LogError, ValueError, AttributeError):
            continue  # not a manifest kafkacodec wrote: not ours to judge
        if status == "" or status.startswith("prepared"):
            size = sum(f.stat().st_size for f in d.iterdir() if f.is_file() and not f.is_symlink())
            out.append((d, size))
    return out


def mark_abandoned(backup: Path) -> None:
    """Say in a backup's REPAIR.json that its repair was abandoned (abandoned_backups), so
    that it is named once and never taken for a repair's record."""
    raw = fsio.read_side_file(backup / MANIFEST)
    doc = {k: v for k, v in (json.loads(raw) if raw else {}).items()
           if k not in ("status", "written", "how_to_restore")}  # fmt: skip
    _write_manifest(backup, doc, ABANDONED)


def _ident(st: os.stat_result) -> dict:
    return {"dev": st.st_dev, "ino": st.st_ino, "size": st.st_size}


def _lstat(path: Path) -> os.stat_result | None:
    try:
        st = os.lstat(path)
    except FileNotFoundError:
        return None
    return st


def _is(st: os.stat_result | None, ident: dict, size: int | None = None) -> bool:
    return (st is not None and stat.S_ISREG(st.st_mode) and st.st_ino == ident["ino"]
            and st.st_dev == ident["dev"] and st.st_size == (ident["size"] if size is None else size))  # fmt: skip


def _state(part: Path, backup: Path, step: dict) -> str:
    """ "before", "after", or why the files match neither."""
    op, name = step["op"], step["name"]
    src, dst = _lstat(part / name), _lstat(backup / name)
    if op == "move":
        if step["copied"]:  # another filesystem: the copy was made before the commit
            if dst is None or dst.st_size != step["size"]:
                return "its copy in the backup is missing or has another size"
            if src is None:
                return "after"
            return "before" if _is(src, step) else "changed since the journal was written"
        if _is(src, step) and dst is None:
            return "before"
        if src is None and _is(dst, step):
            return "after"
        return "neither where the journal left it nor moved"
    if op == "truncate":
        if _is(src, step, step["to"]):
            return "after"
        if not _is(src, step):
            return (f"is {src.st_size if src else 'missing'} bytes, neither the {step['size']} "
                    f"the journal found nor the {step['to']} it cuts to: changed since")  # fmt: skip
        cut = _lstat(backup / step["backup"])
        if cut is None or cut.st_size != step["size"] - step["to"]:
            return "its cut-off bytes are not complete in the backup"
        return "before"
    if op == "replace":
        new = _lstat(part / (name + NEW_SUFFIX))
        if _is(new, step["new"]):
            return "before"
        if new is None and _is(src, step["new"]):
            return "after"
        return "neither the old file with its replacement ready, nor the replacement in place"
    return f"unknown step {op!r}"


# ----------------------------------------------------------------------------- applying


def apply(p: RepairPlan, backup_root: Path | None = None) -> PendingRepair | None:
    """Write a plan, crash-safely (the module docstring). The caller holds the log
    directory's lock (fsio.LogDirLock). Returns None (nothing to do) or the finished
    journal, for its backup path and steps."""
    if p.refused:
        raise RefusedError(p.partition, f"not repaired: {p.refused}")
    if pending(p.partition) is not None:
        raise RefusedError(p.partition / JOURNAL, "an unfinished repair is here; finish it first")
    _remove_stale(p.partition)
    if p.clean:
        return None
    root = Path(os.path.abspath(backup_root or default_backup_root(p.log_dir)))
    _check_outside_log_dirs(root, p.log_dir)
    backup = _make_backup_dir(root / p.log_dir.name / p.partition.name)
    try:
        steps = _prepare(p, backup)
    except OSError as err:
        raise LogError(err.filename or p.partition, f"cannot prepare the repair: {err.strerror}; "
                       "nothing in the partition was changed") from None  # fmt: skip
    doc = {"kafkacodec_repair": _JOURNAL_VERSION, "partition": str(p.partition),
           "backup": str(backup), "log_end_offset": p.log_end_offset, "steps": steps}  # fmt: skip
    _write_manifest(backup, doc, "prepared: the partition was not changed")
    fsio.fsync_dir(backup)
    fsio.fsync_dir(p.partition)
    fsio.write_atomic(p.partition / JOURNAL, [json.dumps(doc, indent=1).encode()])
    fsio.fsync_dir(p.partition)  # the commit point
    return finish(p.partition)


def finish(partition: Path) -> PendingRepair | None:
    """Complete a committed repair, if there is one whose files still match its journal
    (idempotent; the caller holds the lock). A journal that does not match raises LogError
    and is left as it is."""
    job = pending(partition)
    if job is None:
        return None
    why = job.mismatch
    if why is not None:
        raise RefusedError(job.path, f"the files no longer match this repair journal ({why}); it "
                                 f"was not applied. The backup is {job.backup}. Look at the "
                                 "partition and remove the journal by hand")  # fmt: skip
    part, backup = job.partition, job.backup
    for step, state in zip(job.steps, job.states):
        if state == "after":
            continue
        try:
            _apply_step(part, backup, step)
        except (OSError, LogError) as err:
            why = err.message if isinstance(err, LogError) else err.strerror
            raise LogError(part / step["name"], f"cannot {step['op']}: {why}; the repair stays "
                           f"unfinished ({job.path}): fix this and run `kafkacodec recover "
                           "--repair` again") from None  # fmt: skip
    fsio.fsync_dir(part)
    fsio.fsync_dir(backup)
    _write_manifest(backup, job.doc, "done")
    os.unlink(job.path)
    fsio.fsync_dir(part)
    job.states = ["after"] * len(job.steps)
    return job


def _apply_step(part: Path, backup: Path, step: dict) -> None:
    name = step["name"]
    if step["op"] == "move":
        if step["copied"]:  # on another filesystem, copied before the commit point
            os.unlink(part / name)
        else:
            os.rename(part / name, backup / name)
    elif step["op"] == "truncate":
        fd = fsio.open_regular(part / name, os.O_RDWR)
        try:
            os.ftruncate(fd, step["to"])
            os.fsync(fd)
        finally:
            os.close(fd)
    elif step["op"] == "replace":
        os.replace(part / (name + NEW_SUFFIX), part / name)


def _remove_stale(part: Path) -> None:
    """Temporary and replacement files of a repair that stopped before its commit point
    (without a journal, nothing refers to them). unlink never follows a link."""
    for child in part.iterdir():
        if child.name.endswith((NEW_SUFFIX, fsio.TMP_SUFFIX)) and not child.is_dir():
            os.unlink(child)


def _check_outside_log_dirs(root: Path, log_dir: Path) -> None:
    """A backup inside a log directory would be loaded by Kafka as a partition (or stop the
    broker): refuse the log directory itself and any directory holding a meta.properties."""
    real = Path(os.path.realpath(root))
    ld = Path(os.path.realpath(log_dir))
    if real == ld or ld in real.parents:
        raise RefusedError(root, f"is inside the log directory {log_dir}: Kafka would take it for a "
                             "partition; choose a backup directory outside every log.dirs")  # fmt: skip
    for d in [real, *real.parents]:
        if (d / "meta.properties").exists():
            raise RefusedError(root, f"is inside {d}, a Kafka log directory (it holds "
                                 "meta.properties); choose a backup directory outside log.dirs")  # fmt: skip


def _make_backup_dir(base: Path) -> Path:
    """A new directory under base, named by the time, mode 0700 (as every new parent)."""
    missing = [d for d in [base, *base.parents] if not d.exists()]
    for d in reversed(missing):
        try:
            os.mkdir(d, 0o700)
        except FileExistsError:
            pass
        except OSError as err:
            raise LogError(d, f"cannot create the backup directory: {err.strerror}") from None
    stamp = _dt.datetime.now(_dt.timezone.utc).strftime("%Y%m%dT%H%M%S.%fZ")
    d = base / stamp
    try:
        os.mkdir(d, 0o700)
    except OSError as err:
        raise LogError(d, f"cannot create the backup directory: {err.strerror}") from None
    return d


def _prepare(p: RepairPlan, backup: Path) -> list[dict]:
    """Everything before the commit point; returns the journal's steps."""
    part = p.partition
    same_fs = os.stat(part).st_dev == os.stat(backup).st_dev
    steps = []
    for m in p.moves:
        src = part / m.name
        fd = fsio.open_regular(src)  # a link or a FIFO planted as a segment is refused here
        try:
            st = os.fstat(fd)
        finally:
            os.close(fd)
        if not same_fs:
            fsio.write_atomic(backup / m.name, fsio.copy_range(src, 0, st.st_size),
                              replace=False)  # fmt: skip
        steps.append({"op": "move", "name": m.name, **_ident(st), "copied": not same_fs})
    if p.truncate is not None:
        t = p.truncate
        src = Path(t.segment)
        fd = fsio.open_regular(src)
        try:
            st = os.fstat(fd)
        finally:
            os.close(fd)
        if st.st_size != t.size:
            raise LogError(src, f"is {st.st_size} bytes, not the {t.size} the dry run read: it "
                                "changed (is a broker running?); run the repair again")  # fmt: skip
        cut = f"{src.name}.cut-at-{t.valid_bytes}"
        fsio.write_atomic(backup / cut, fsio.copy_range(src, t.valid_bytes, t.size), replace=False)
        steps.append({"op": "truncate", "name": src.name, **_ident(st), "to": t.valid_bytes,
                      "backup": cut})  # fmt: skip
    for r in p.replaces:
        target = part / r.name
        old = _lstat(target)
        if old is not None:
            fsio.write_atomic(backup / (r.name + ".old"),
                              fsio.copy_range(target, 0, old.st_size), replace=False)  # fmt: skip
        like = old if old is not None else os.stat(part / r.like, follow_symlinks=False)
        st = fsio.write_atomic(part / (r.name + NEW_SUFFIX), [r.data], like=like)
        steps.append({"op": "replace", "name": r.name, "why": r.why, "new": _ident(st)})
    return steps


def _write_manifest(backup: Path, doc: dict, status: str) -> None:
    body = {"status": status, "written": _dt.datetime.now(_dt.timezone.utc).isoformat(),
            "how_to_restore": "files named like segments are the partition's own, moved here; "
                              "<name>.cut-at-N holds bytes N.. of <name>; <name>.old is the file "
                              "a rebuilt one replaced", **doc}  # fmt: skip
    fsio.write_atomic(backup / MANIFEST, [json.dumps(body, indent=1).encode()])


plan_repair = plan


def repair(path: Path | str, *, backup_root: Path | str | None = None,
           index_interval_bytes: int = DEFAULT_INDEX_INTERVAL,
           progress: Callable[[int], object] | None = None) -> tuple[RepairPlan, PendingRepair | None]:  # fmt: skip
    """Repair a partition directory under its log directory's lock (LogError while a broker
    holds it): finish an unfinished repair first, then plan and apply what is left. Returns
    the plan and the journal written (None when there was nothing to do)."""
    refuse_remote(path, "a repair")
    part = Path(path)
    with fsio.LogDirLock(part.parent):
        finish(part)
        with Partition(part) as partition:
            p = plan(partition, index_interval_bytes=index_interval_bytes, progress=progress)
        return p, apply(p, None if backup_root is None else Path(backup_root))

"""`kafkacodec verify`: every segment a path names checked with kafkacodec.log.check (the
checker the Spark verify job runs too). Exit codes: CLEAN, PROBLEMS, UNCHECKED (console.py)."""

from __future__ import annotations

import argparse
import functools
import json
import sys
from pathlib import Path

from ..console import CLEAN, PROBLEMS, UNCHECKED, control_note, counted, out, safe
from ..runtime.errors import KafkacodecError
from ..units import integer
from .common import held, keys, no_segments, storage_arguments, target, tiered

HELP = "check every batch's CRC and structure, and indexes against their log"
EXAMPLE = "kafkacodec verify /var/lib/kafka            # a log.dirs, a partition or a file"


def define(p: argparse.ArgumentParser) -> None:
    p.add_argument("paths", nargs="+", metavar="PATH",
                   help="a log.dirs, a partition directory, a segment (.log) or an index file "
                   "(.index, .timeindex, .txnindex: checked against its .log)")  # fmt: skip
    p.add_argument("--json", action="store_true",
                   help="the summary as one JSON object: the counts, clean, problems, "
                   "bad_regions, unchecked, notes")  # fmt: skip
    p.add_argument("--quiet", action="store_true", help="no progress bar")
    p.add_argument("--max-problems", type=integer(0), default=1000, metavar="N",
                   help="list at most N problems (the rest are counted); default 1000")  # fmt: skip
    p.add_argument("--jobs", type=integer(1), default=1, metavar="N",
                   help="worker processes checking local segments side by side (default 1: "
                   "none); the report is the same for any N")  # fmt: skip
    storage_arguments(p, tiered=True)


def run(args: argparse.Namespace) -> int:
    from ..console import Progress, file_label
    from ..log.index import Problems
    from ..log.workers import in_order, usable_cpus, worker_count
    from ..storage import size_of

    problems, notes, unchecked = Problems(args.max_problems), [], []
    totals = dict.fromkeys(("partitions", "segments", "indexes", "batches", "records", "control_records",
                            "bytes", "bad_regions", "unreadable_bytes"), 0)  # fmt: skip
    targets = []
    for raw in args.paths:
        try:
            targets += _verify_targets(target(args, raw), totals, problems, notes, args)
        except KafkacodecError as err:
            unchecked.append(str(err))
    notes += _replica_notes([target(args, raw) for raw in args.paths])
    regions = []
    total = sum(size_of(path) for path, _check, _kind, _task in targets)
    units = sum(task is not None for _path, _check, _kind, task in targets)
    jobs = worker_count(args.jobs, units)
    if jobs < args.jobs:  # bounded by the work and the machine (log.workers.worker_count)
        print(f"kafkacodec verify: --jobs {args.jobs} lowered to {jobs} ({units} local segments to "
              f"check, {usable_cpus()} CPUs)", file=sys.stderr)  # fmt: skip
    with Progress(total, "verify", quiet=args.quiet) as progress:
        # each segment checked here, or by a worker process (log.workers.in_order: the
        # results are taken in the targets' order, so the report is the same for any N),
        # the bar moving as each check reports where it is
        def at(item, position):
            progress.at(item[0], position, file_label(item[0]))

        def unit(item):  # a remote segment (no worker task) is checked here
            return item[1] if jobs == 1 else item[3]

        done = in_order(targets, unit, _checked, _checked, jobs, on_progress=at)
        for item, result in done:
            path, check, kind, _task = item
            if result is None:
                result = _checked(check, functools.partial(at, item))
            _verify_one(result, kind, totals, problems, notes, unchecked, regions)
            progress(size_of(path), path)
    checked = totals["segments"] + totals["indexes"] > 0
    status = UNCHECKED if unchecked or not checked else PROBLEMS if problems else CLEAN
    if args.json:
        out(json.dumps({**totals, "clean": status == CLEAN, "problems": problems.lines(),
                         "problems_total": problems.total, "bad_regions": regions[: args.max_problems],
                         "unchecked": unchecked, "notes": notes}))  # fmt: skip
    else:
        summary = _summary(totals)
        if not checked:
            pass
        elif status == CLEAN:
            out(f"{summary}: clean")
        elif problems:
            out(f"{summary}: {counted(problems.total, 'problem')} ({counted(totals['bad_regions'], 'bad region')}, "
                 f"{counted(totals['unreadable_bytes'], 'byte')} unreadable)")  # fmt: skip
        else:
            out(f"{summary}: no problems in what was checked")
        for line in problems.lines():
            out(f"  {safe(line)}")
        for line in notes:
            out(f"  note: {safe(line)}")
    for line in unchecked:
        print(f"kafkacodec verify: could not check: {safe(line)}", file=sys.stderr)
    return status


def _summary(t: dict) -> str:
    """What was checked: partitions, segments, batches and records when segments were;
    index files (each against its log) when they were named."""
    head = [counted(t["partitions"], "partition"), counted(t["segments"], "segment")] if t["segments"] else []
    if t["indexes"]:
        head.append(counted(t["indexes"], "index file"))
    if t["segments"]:
        head += [counted(t["batches"], "batch", "batches"), counted(t["records"], "record") + control_note(t["control_records"])]
    return ", ".join([*head, f"{counted(t['bytes'], 'byte')} checked"])


#: Partitions with several replicas named one by one in verify's notes, up to this many.
REPLICA_NOTES = 10


def _replica_notes(paths: list) -> list[str]:
    """What readers make of the directories given, when they are several brokers' disks:
    each replica is checked here (its damage is its own), but a partition is read from one
    replica (kafkacodec.brokers) and directories that are no live replica not at all."""
    from ..brokers import open_disks
    from ..log import open_log

    dirs = [p for p in paths if p.is_dir()]
    if len(dirs) < 2 and not any((p / "meta.properties").exists() for p in dirs):
        return []
    try:
        disks = open_disks([open_log(p) for p in dirs])
    except KafkacodecError as err:
        return [f"replicas not compared: {err}"]
    shared = [pr for pr in disks.partitions.values() if len(pr.replicas) > 1 and pr.served is not None]
    notes = []
    if len(shared) > REPLICA_NOTES:
        notes.append(f"{counted(len(shared), 'partition')} with several replicas here, each checked; "
                     "readers read one replica of each (kafkacodec replicas says which and why)")  # fmt: skip
    else:
        notes += [f"{pr.name}: {len(pr.replicas)} replicas checked ({', '.join(r.broker for r in pr.replicas)}); "
                  f"readers read {pr.served.broker}'s: {pr.why}" for pr in shared if pr.served is not None]  # fmt: skip
    notes += [f"{a.path} ({a.broker}): checked; readers leave it out: {a.kind}: {a.why}" for a in disks.set_apart]
    return notes + disks.problems


def _verify_targets(path: Path, totals, problems, notes, args=None) -> list:
    """(file, a function that checks it) for each segment a path names; LogError when it
    names nothing verify can check."""
    from ..internal.remote import learn_remote_extent
    from ..log import LogDirs, Partition, Segment, open_log
    from ..log.check import INDEX_SUFFIXES
    from ..log.repair import pending
    from ..log.segment import parse_segment_name
    from ..runtime.errors import NotAPartitionError, NotASegmentError
    from ..storage import is_remote

    if not path.is_dir():
        if not path.exists() and not path.is_symlink():
            raise NotASegmentError(path, "no such file or directory")
        parsed = parse_segment_name(path.name)
        if parsed and parsed[1] == ".log":
            live = held(path.parent.parent)
            return [_segment_target(Segment(path.parent, parsed[0]), live, True)]
        if parsed and parsed[1] in INDEX_SUFFIXES:
            return [_index_target(Segment(path.parent, parsed[0]), parsed[1], path,
                                  held(path.parent.parent))]  # fmt: skip
        if path.suffix in INDEX_SUFFIXES:
            raise NotASegmentError(path, f"an index file is checked against its segment's .log: "
                                         f"named <20-digit base offset>{path.suffix}, beside it")  # fmt: skip
        if path.suffix == ".kafka":
            return [_kafka07_target(path)]
        seg = Segment.standalone(path)
        seg.sniff()  # a file that is not Kafka data cannot be checked, only named
        return [_segment_target(seg, False, False)]
    log = open_log(path, keys=keys(args), tiered=tiered(args))
    if isinstance(log, LogDirs):
        problems.extend(log.problems)
        if not log.partitions and not log.problems:
            if (path / "meta.properties").exists():  # a broker's log.dir it has not used yet (JBOD)
                notes.append(f"{path}: a broker's log directory that holds no partition")
                return []
            raise NotAPartitionError(path, "neither a partition directory nor a log.dirs: no "
                                           "<topic>-<partition> directories or segments in it")  # fmt: skip
        parts = log.partitions
    else:
        parts = [log]
    live = held(path if isinstance(log, LogDirs) else path.parent)
    out = []
    for part in parts:
        assert isinstance(part, Partition)
        totals["partitions"] += 1
        learn_remote_extent(part)
        problems.extend(part.problems)
        for gap in part.unreadable():  # with --tiered, the remote data was to be read
            (problems.add if args is not None and tiered(args) else notes.append)(
                f"{part.path}: {part.missing_text(gap)}")  # fmt: skip
        if is_remote(part.path):  # a journal is finished where it was made, never here
            if part.repair_files:
                problems.add(f"{part.path}: holds the files of an unfinished kafkacodec repair "
                             f"({', '.join(part.repair_files)}): finish it on the local copy "
                             "with kafkacodec recover --repair")  # fmt: skip
            job = None
        else:
            try:
                job = pending(part.path)
            except KafkacodecError as err:
                problems.add(str(err))
                job = None
        if job is not None:
            problems.add(job.describe())
        if part.kafka07 and not part.segments:
            out += [_kafka07_target(part.path / name) for name in part.kafka07]
            continue
        if not part.segments:
            if len(parts) == 1:
                raise NotAPartitionError(part.path, no_segments(part, "nothing to verify"))
            notes.append(f"{part.path}: {no_segments(part, 'nothing to verify in it')}")
        out += [
            _segment_target(seg, live and seg is part.segments[-1], True) for seg in part.segments
        ]
    if not out:
        raise NotAPartitionError(path, f"no segments in any of its {len(parts)} partition "
                                       "directories: nothing to verify")  # fmt: skip
    return out


def _segment_target(seg, live: bool, indexes: bool):
    """(file, its check, kind, the check as a worker process's task: a local segment's)."""
    from ..storage import is_remote

    task = None if is_remote(seg.path) else functools.partial(_check_segment, seg, live, indexes)
    return seg.path, functools.partial(_check_segment, seg, live, indexes), "segments", task


def _check_segment(seg, live: bool, indexes: bool, progress=None):
    from ..log.check import check_segment

    try:
        return check_segment(seg, live=live, indexes=indexes, progress=progress)
    finally:
        seg.close()


def _checked(check, progress=None):
    """check()'s result, or the KafkacodecError it raised (so that one unreadable segment
    does not stop the others, in this process or in a worker); progress(position), when
    given, is told where a segment's check has got."""
    try:
        return check() if progress is None else check(progress=progress)
    except KafkacodecError as err:
        return err


def _index_target(seg, suffix: str, path: Path, live: bool):
    from ..log.check import check_index

    def check(progress=None):  # counted when done: its .log's positions are not the index's bytes
        try:
            return check_index(seg, suffix, live=live)
        finally:
            seg.close()

    return path, check, "indexes", None


def _kafka07_target(path: Path):
    from ..log.kafka07 import Kafka07File, check_file

    def check(progress=None):  # a 0.7 file is read in one pass, its size counted when done
        with Kafka07File(path) as f:
            return check_file(f)

    return path, check, "segments", None


def _verify_one(c, kind: str, totals, problems, notes, unchecked, regions) -> None:
    if isinstance(c, KafkacodecError):
        unchecked.append(str(c))
        return
    totals[kind] += 1
    totals["bytes"] += c.size
    totals["batches"] += c.batches
    totals["records"] += c.records
    totals["control_records"] += c.control_records
    totals["bad_regions"] += len(c.regions)
    totals["unreadable_bytes"] += c.unreadable_bytes
    for r in c.regions:
        problems.add(str(r))
        regions.append(r.to_dict())
    problems.extend(c.problems)
    notes += c.notes

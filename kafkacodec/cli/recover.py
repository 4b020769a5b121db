"""`kafkacodec recover`: Kafka's recovery of each partition named (LogLoader's rule, see
kafkacodec.log.repair): a dry run by default, applied with --repair under the log
directory's lock."""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path

from ..console import CLEAN, PROBLEMS, UNCHECKED, counted, out, safe
from ..runtime.errors import KafkacodecError
from ..units import integer
from .common import local_path

HELP = "Kafka's recovery of a partition or log.dirs, as a dry run; --repair applies it"
EXAMPLE = "kafkacodec recover /var/lib/kafka/orders-0 --repair"


def define(p: argparse.ArgumentParser) -> None:
    p.add_argument("path", metavar="DIR|SEGMENT", type=_local_log,
                   help="a partition directory, a log.dirs, or a segment (its partition)")  # fmt: skip
    p.add_argument(
        "--repair",
        action="store_true",
        help="apply it: truncate the first bad segment, move every later one to the "
        "backup, rebuild indexes (journaled; takes the log directory's .lock)",
    )
    p.add_argument(
        "--backup",
        type=local_path,
        metavar="DIR",
        help="where moved and cut data go (default: kafkacodec-backup beside the "
        "log directory; never inside a log directory)",
    )
    p.add_argument("--index-interval-bytes", type=integer(0), default=4096, metavar="N",
                   help="index.interval.bytes of the rebuilt indexes (the topic's config; "
                   "default Kafka's 4096)")  # fmt: skip
    p.add_argument("--json", action="store_true", help="one JSON object per partition")
    p.add_argument("--quiet", action="store_true", help="no progress bar")


def _local_log(raw: str) -> Path:
    """recover is for a broker's local log directory: a URL is refused (never rewritten)."""
    if "://" in raw:
        raise argparse.ArgumentTypeError(
            f"{raw}: recover works on a broker's local log directory and --repair rewrites it; "
            "kafkacodec never writes to an object store (`kafkacodec verify URL` checks one)"
        )
    from ..storage import named_path

    return named_path(raw)  # a link named here is followed (storage.LINK_RULE)


def run(args: argparse.Namespace) -> int:
    """Kafka's recovery of each partition named (LogLoader's rule, see log/repair.py): a dry
    run by default, applied with --repair under the log directory's lock."""
    from ..console import Progress
    from ..storage.fsio import LogDirLock, size_or_zero

    groups = _recover_groups(args.path)
    status = CLEAN
    total = sum(size_or_zero(s.path) for _ld, parts in groups for p in parts for s in p.segments)
    with Progress(total, "recover", quiet=args.quiet) as progress:
        for log_dir, parts in groups:
            try:
                lock = LogDirLock(log_dir).acquire() if args.repair else None
            except KafkacodecError as err:
                print(f"kafkacodec recover: {safe(str(err))}", file=sys.stderr)
                status = UNCHECKED
                continue
            try:
                for part in parts:
                    status = max(status, _recover_partition(args, part, progress))
            finally:
                if lock is not None:
                    lock.release()
    return status


def _recover_groups(path: Path) -> list:
    """[(log directory, [partitions])] for a partition, a log.dirs, or a segment file (its
    partition: Kafka's rule is per partition, a bad segment ends the log there)."""
    from ..log import LogDirs, Partition
    from ..log.partition import open_log  # a broker's own directories, never a tiered layout
    from ..log.segment import parse_segment_name

    if path.is_file() or path.is_symlink():
        parsed = parse_segment_name(path.name)
        if not parsed or parsed[1] != ".log":
            from ..runtime.errors import NotASegmentError

            raise NotASegmentError(path, "not a segment (.log named by its base offset)")
        path = path.parent
    log = open_log(path)
    if isinstance(log, LogDirs):
        for line in log.problems:
            print(f"kafkacodec recover: {safe(line)}", file=sys.stderr)
        if not log.partitions:
            from ..runtime.errors import NotAPartitionError

            raise NotAPartitionError(path, "neither a partition directory nor a log.dirs")
        return [(path, log.partitions)]
    assert isinstance(log, Partition)
    return [(path.parent, [log])]


def _recover_partition(args, part, progress) -> int:
    from ..log import repair as R
    from ..log.loader import predict_load

    progress.describe(safe(part.path.name))
    if not part.segments:
        what = ("a Kafka 0.7 partition (.kafka files): recover does not rewrite that format; "
                "verify and records read it" if part.kafka07 else "holds no segments: nothing to recover")  # fmt: skip
        print(f"kafkacodec recover: {safe(str(part.path))}: {what}", file=sys.stderr)
        return UNCHECKED
    try:
        if args.repair:
            job = R.finish(part.path)
            if job is not None:
                out(f"{safe(str(part.path))}: finished an interrupted repair (backup in "
                     f"{safe(str(job.backup))})")  # fmt: skip
                part.close()
                part = type(part)(part.path)
        else:
            job = R.pending(part.path)
            if job is not None:
                _report_pending(args, job)
                return PROBLEMS
        # what a broker's next start does to the files as they are (before any repair)
        load = None if args.repair else predict_load(part, index_interval_bytes=args.index_interval_bytes)
        plan = R.plan(part, index_interval_bytes=args.index_interval_bytes, progress=progress)
        progress.clear()
        abandoned = R.abandoned_backups(part.path, args.backup)
        done = R.apply(plan, args.backup) if args.repair and not plan.refused else None
        if args.repair:
            for d, _size in abandoned:
                R.mark_abandoned(d)
    except KafkacodecError as err:
        print(f"kafkacodec recover: {safe(str(err))}", file=sys.stderr)
        return UNCHECKED
    finally:
        part.close()
    _report_plan(args, plan, done, abandoned, load)
    if plan.refused:
        return UNCHECKED
    if args.repair:
        return CLEAN
    return CLEAN if plan.clean and load is not None and not (load.changes or load.fails) else PROBLEMS


def _report_pending(args, job) -> None:
    why = job.mismatch
    if args.json:
        out(json.dumps({"partition": str(job.partition), "pending_repair": str(job.path),
                         "backup": str(job.backup), "steps": len(job.steps), "done": job.done,
                         "mismatch": why}))  # fmt: skip
        return
    out(safe(job.describe()))
    if why:
        out(f"  the files no longer match it ({safe(why)}): it will not be applied")


def _report_plan(args, plan, done, abandoned, load) -> None:
    name = safe(str(plan.partition))
    if args.json:
        out(json.dumps({**plan.to_dict(), "repaired": done is not None,
                         "kafka_load": None if load is None else load.to_dict(),
                         "backup": str(done.backup) if done else None,
                         "abandoned_backups": [{"path": str(d), "bytes": n} for d, n in abandoned]}))  # fmt: skip
        return
    _report_steps(plan, done, name)
    if load is not None and (load.changes or load.fails or not plan.clean):
        out(f"  {_kafka_load_text(load, plan)}")
    for d, n in abandoned:
        what = "marked abandoned in its REPAIR.json" if args.repair else "it will be marked abandoned by --repair"
        out(f"  note: {safe(str(d))} ({n} bytes) is the partial backup of a repair that stopped "
            "before its commit point (the partition was not changed by it; its files are copies): "
            f"kept, {what}; remove it when it is not needed")  # fmt: skip


def _kafka_load_text(load, plan) -> str:
    """What a broker's next start does to the files as they are (kafkacodec.log.loader)."""
    from ..log.loader import CLEAN_SHUTDOWN, RECOVERY_POINT_CHECKPOINT
    from ..log.partition import LOG_START_CHECKPOINT

    if load.clean_shutdown:
        state = f"after a clean shutdown ({CLEAN_SHUTDOWN}), recovering no segment"
    elif load.recovery_point_source == RECOVERY_POINT_CHECKPOINT:
        state = f"after an unclean shutdown, recovering from the recovery point {load.recovery_point} on"
    else:
        state = f"after an unclean shutdown, recovery point {load.recovery_point_source}"
    head = f"a broker's next start ({state})"
    if load.fails:
        return f"{head} fails to load the partition: {safe(load.fails)}"
    said = []
    deleted = [s.name for s in load.segments if s.action == "deleted"]
    for s in load.segments:
        if s.action == "truncated":
            said.append(f"truncates {s.name} at byte {s.valid_bytes} ({safe(s.reason or '')})")
        elif s.action == "emptied":
            said.append(f"empties {s.name} ({safe(s.reason or '')})")
        elif s.action == "split":
            said.append(f"splits {s.name} ({safe(s.reason or '')}; kafkacodec does not predict the rest)")
        elif s.action == "recovered" and s.at_load:
            said.append(f"rebuilds the indexes of {s.name} ({safe(s.why or '')})")
    if load.deleted_all:
        said.append(f"deletes every segment (the log would end below the log start offset "
                    f"{load.log_start_checkpoint} of {LOG_START_CHECKPOINT})")  # fmt: skip
    elif deleted:
        said.append(f"deletes {len(deleted)} later segment{'s' if len(deleted) != 1 else ''} "
                    f"({', '.join(deleted)})")  # fmt: skip
    text = f"{head} {'; '.join(said) if said else 'changes nothing'}"
    if not load.split:
        text += f"; log end offset {load.log_end_offset}"
    t = plan.truncate
    if t is not None:
        name = Path(t.segment).name
        cut = {s.name for s in load.segments if s.action in ("truncated", "emptied", "deleted")}
        before = [s.name for s in load.segments if s.name <= name]
        if not cut.intersection(before):
            text += (f"; it does not read the damage at byte {t.invalid_position} of {name}, and "
                     "serves it (a repair cuts it)")  # fmt: skip
    return text


def _stays(rep) -> str:
    if rep.last_valid_offset is None:
        return "no batch of it stays"
    return f"offsets up to {rep.last_valid_offset} stay"


def _report_steps(plan, done, name: str) -> None:
    reps = plan.reports
    if plan.refused:
        out(f"{name}: not repairable by kafkacodec: {safe(plan.refused)}")
        return
    if plan.clean:
        out(f"{name}: clean, {counted(len(reps), 'segment')}, "
             f"{counted(sum(r.batches for r in reps), 'batch', 'batches')}, "
             f"log end offset {plan.log_end_offset}")  # fmt: skip
        return
    would = "" if done else "would "
    out(f"{name}: a repair (Kafka's recovery, LogLoader's rule, over every segment) "
        f"{'did' if done else 'would do'} this:")
    t = plan.truncate
    if t is not None:
        out(f"  {would}cut {t.truncated_bytes} bytes from byte {t.invalid_position} of "
             f"{Path(t.segment).name} to the backup ({safe(t.reason or '')}); "
             f"{_stays(t)}; the cut bytes hold {plan.cut_batches} readable batches "
             f"({plan.cut_records} records)")  # fmt: skip
    segs = plan.moved_segments
    if plan.moves:
        batches = sum(m.batches or 0 for m in segs)
        records = sum(m.records or 0 for m in segs)
        size = sum(m.size for m in plan.moves)
        later = f"{len(segs)} later segment{'s' if len(segs) != 1 else ''}"
        out(f"  {would}move {len(plan.moves)} files to the backup ({later}: {batches} batches, "
             f"{records} records; {size} bytes in all):")  # fmt: skip
        for m in plan.moves:
            counts = f", {m.batches} batches, {m.records} records" if m.batches is not None else ""
            out(f"    {m.name}: {m.size} bytes{counts} ({m.why})")
    for r in plan.replaces:
        out(f"  {would}rewrite {r.name} ({safe(r.why)}; the old one to the backup)")
    if plan.dropped_epochs:
        listed = ", ".join(f"{e} from offset {o}" for e, o in plan.dropped_epochs)
        out(f"  {would}drop epochs past the log end {plan.log_end_offset}: {listed} "
             "(leader-epoch-checkpoint)")  # fmt: skip
    out(f"  log end offset after the repair: {plan.log_end_offset}")
    if done:
        out(f"  backup: {safe(str(done.backup))}")

"""`kafkacodec remote-log LOG_DIR...`: what is in tiered storage, from __remote_log_metadata
on a broker's log.dirs (kafkacodec.internal.remote), with no broker; with --tiered ROOT,
checked against the remote storage's files."""

from __future__ import annotations

import argparse
import json
import sys

from ..console import CLEAN, PROBLEMS, UNCHECKED, counted, out, safe
from ..units import utc_ms
from .common import codecs_of, specs_argument, storage_arguments, target

HELP = "remote (tiered) segments from __remote_log_metadata on disk; --tiered checks their files"
EXAMPLE = "kafkacodec remote-log /var/lib/kafka --tiered s3://tiered-bucket/prefix/"


def define(p: argparse.ArgumentParser) -> None:
    p.add_argument("log_dirs", nargs="+", metavar="LOG_DIR",
                   help="log.dirs entries holding __remote_log_metadata-<n> folders, or such "
                   "a folder")  # fmt: skip
    p.add_argument("--topic", action="append", help="only this topic (repeatable)")
    p.add_argument("--all", action="store_true",
                   help="also segments not (or no longer) read: copies in progress, deletions")  # fmt: skip
    p.add_argument("--json", action="store_true", help="one JSON object per segment")
    specs_argument(p)
    storage_arguments(p, tiered="a tiered-storage root (Aiven's bucket prefix, or Kafka's "
                      "LocalTieredStorage directory): check that the files of every segment "
                      "listed are there, and name files no segment names (exit 1 when "
                      "something is missing)")  # fmt: skip


def _time(ms: int) -> str:
    if ms is None or ms < 0:
        return "-"
    return utc_ms(ms)


def run(args: argparse.Namespace) -> int:
    from ..brokers import open_disks
    from ..internal.remote import TOPIC, check_layout, fold_remote_log
    from ..log.partition import log_dirs_for

    dirs = [log_dirs_for(target(args, d), TOPIC) for d in args.log_dirs]
    try:
        # a cluster's disks: each __remote_log_metadata partition from one replica
        folded = fold_remote_log(dirs, codecs_of(args), open_disks(dirs).served())
    finally:
        for d in dirs:
            d.close()
    if folded.partitions == 0:
        print("kafkacodec remote-log: no __remote_log_metadata partition in "
              + ", ".join(args.log_dirs), file=sys.stderr)  # fmt: skip
        return UNCHECKED
    segs = [s for s in folded.listed(every=args.all) if not args.topic or s.topic in args.topic]
    if args.json:
        for s in segs:
            out(json.dumps(s.to_dict()))
    else:
        current = None
        for s in segs:
            if (s.topic, s.partition) != current:
                current = (s.topic, s.partition)
                mine = [x for x in segs if (x.topic, x.partition) == current]
                state = folded.partition_states.get(current)
                out(safe(f"{s.topic}-{s.partition} (topic id {s.topic_id}): {len(mine)} segments, "
                         f"offsets {min(x.start_offset for x in mine)}-{max(x.end_offset for x in mine)}, "
                         f"{sum(x.size for x in mine)} bytes" + (f"; {state}" if state else "")))  # fmt: skip
            epochs = ",".join(f"{e}@{o}" for e, o in sorted(s.leader_epochs.items()))
            out(safe(f"  {s.name} offsets {s.start_offset}-{s.end_offset} {s.size} bytes "
                     f"max timestamp {_time(s.max_timestamp)} epochs {epochs} {s.state}"))  # fmt: skip
    print(f"{len(segs)} remote segments from {folded.records} records of {folded.partitions} "
          f"{'partition' if folded.partitions == 1 else 'partitions'} of __remote_log_metadata",
          file=sys.stderr)  # fmt: skip
    status = CLEAN
    for problem in folded.problems:
        print(f"kafkacodec remote-log: {safe(problem)}", file=sys.stderr)
        status = PROBLEMS
    if args.tiered is not None:
        from ..log.tiered import tiered_root

        check = check_layout(folded, tiered_root(target(args, args.tiered)))
        for line in check.problems:
            print(f"kafkacodec remote-log: missing: {safe(line)}", file=sys.stderr)
        for line in check.notes:
            print(f"kafkacodec remote-log: note: {safe(line)}", file=sys.stderr)
        print(f"checked the files of {check.checked} segments under {args.tiered}: "
              + (counted(len(check.problems), "problem") if check.problems else "all there"), file=sys.stderr)  # fmt: skip
        if check.problems:
            status = PROBLEMS
    return status

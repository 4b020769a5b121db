"""`kafkacodec groups LOG_DIRS`: consumer groups' committed offsets and lag from the
brokers' log.dirs, no broker needed: `__consumer_offsets` folded as the group coordinator
folds it (kafkacodec.internal.groups), each partition's log end offset from the same
log.dirs, printed as kafka-consumer-groups --describe prints them, or as JSON."""

from __future__ import annotations

import argparse
import json
import sys

from ..console import CLEAN, PROBLEMS, UNCHECKED, counted, out, safe
from .common import codecs_of, specs_argument, storage_arguments, target

HELP = "consumer groups' committed offsets and lag, from __consumer_offsets on disk"
EXAMPLE = "kafkacodec groups /var/lib/kafka/data --group billing"


def define(p: argparse.ArgumentParser) -> None:
    p.add_argument("log_dirs", nargs="+", metavar="LOG_DIR",
                   help="a broker's log.dirs entries (each holding <topic>-<partition> folders), "
                   "or a __consumer_offsets-<n> folder (its lag from the log.dirs holding it)")  # fmt: skip
    p.add_argument("--group", action="append", help="only this group (repeatable)")
    p.add_argument("--json", action="store_true", help="one JSON object per row")
    specs_argument(p)
    storage_arguments(p)


def run(args: argparse.Namespace) -> int:
    from ..brokers import open_disks
    from ..internal.groups import describe, table

    said: list[str] = []

    def one_replica_each(dirs):  # a cluster's disks: each partition from the replica Kafka serves
        disks = open_disks(dirs)
        said.extend(disks.problems)
        return disks.served()

    rows, folded = describe([target(args, d) for d in args.log_dirs], codecs_of(args), one_replica_each)
    folded.problems += said
    if args.group:
        rows = [r for r in rows if r["group"] in set(args.group)]
    if folded.partitions == 0:
        print("kafkacodec groups: no __consumer_offsets partition in "
              + ", ".join(map(str, args.log_dirs)), file=sys.stderr)  # fmt: skip
        return UNCHECKED
    if args.json:
        for r in rows:
            out(json.dumps(r))
    else:
        for line in table(rows):
            out(safe(line))
    print(f"{counted(len(rows), 'committed offset')} from {counted(folded.records, 'record')} of "
          f"{counted(folded.partitions, '__consumer_offsets partition')}"
          + (f"; {counted(folded.pending, 'transactional commit')} with no marker yet" if folded.pending else ""),
          file=sys.stderr)  # fmt: skip
    for problem in folded.problems:
        print(f"kafkacodec groups: {safe(problem)}", file=sys.stderr)
    return PROBLEMS if folded.problems else CLEAN

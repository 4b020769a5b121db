"""`kafkacodec lookup`: Kafka's answer for an offset (the batch a fetch at it starts with)
or a timestamp (ListOffsets), through the indexes as a broker searches them. An offset
the partition does not hold is Kafka's OffsetOutOfRange (exit 1); a timestamp no record
reaches has no answer (exit 1)."""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path

from ..console import DONE, PROBLEMS, out, safe
from ..runtime.errors import KafkacodecError, OffsetOutOfRangeError
from ..units import integer, timestamp_target
from .common import (
    chosen_partition,
    open_kafka07,
    open_partition,
    partition_arguments,
    storage_arguments,
)

HELP = ("Kafka's answer for an offset or a timestamp (-1 latest, -2 earliest, -3 max timestamp, "
        "-4 earliest local, -5 latest tiered)")
EXAMPLE = "kafkacodec lookup /var/lib/kafka/orders-0 --timestamp 1700000000000"


def define(p: argparse.ArgumentParser) -> None:
    partition_arguments(p)
    g = p.add_mutually_exclusive_group(required=True)
    g.add_argument("--offset", type=integer(), metavar="N",
                   help="the batch a fetch at offset N starts with (an offset below the log "
                   "start offset, or at or past the log end offset, is out of range: exit 1)")  # fmt: skip
    g.add_argument("--timestamp", type=timestamp_target, metavar="T",
                   help="ListOffsets: the first record with a timestamp >= T (milliseconds), "
                   "or -1 latest (the log end offset), -2 earliest (the log start offset), "
                   "-3 the record with the largest timestamp in the local log (as Kafka answers "
                   "it, a tiered partition's too), -4 earliest local (where the local log "
                   "starts), -5 latest tiered (the last offset __remote_log_metadata in the log "
                   "directory lists as copied to tiered storage; exit 2 when it lists none)")  # fmt: skip
    p.add_argument("--json", action="store_true",
                   help="the answer as one JSON object (null when there is none)")  # fmt: skip
    storage_arguments(p, tiered=True)


def _line(res: dict) -> str:
    """The answer as `key: value` pairs: an unknown leader epoch is -1 as in Kafka's
    ListOffsets answers, and a place no segment holds (the log end) is left out."""
    shown = {k: (-1 if k == "leader_epoch" and v is None else v) for k, v in res.items()
             if v is not None or k == "leader_epoch"}  # fmt: skip
    return safe(" ".join(f"{k}: {v}" for k, v in shown.items()))


def _answer(args, res: dict | None, missing: str) -> int:
    if args.json:
        out(json.dumps(res))
    elif res is not None:
        out(_line(res))
    if res is None:
        print(f"kafkacodec lookup: {safe(missing)}", file=sys.stderr)
        return PROBLEMS
    return DONE


def _lookup07(args, p) -> int:
    if args.timestamp is not None:
        raise KafkacodecError(f"{p.path}: a Kafka 0.7 partition: its messages have no timestamps")
    m = p.lookup(args.offset)
    res = None if m is None else {"offset": args.offset, "message_offset": m.offset,
                                  "file": Path(m.source).name, "position": m.position, "size": m.size}  # fmt: skip
    return _answer(args, res, f"{p.path}: no message at or after offset {args.offset}")


def run(args: argparse.Namespace) -> int:
    path = chosen_partition(args, "lookup")
    k07 = open_kafka07(path)
    if k07 is not None:
        return _lookup07(args, k07)
    p = open_partition(path, args)
    try:
        if args.offset is not None:
            return _by_offset(args, p)
        found = p.list_offsets(args.timestamp)
        res = None if found is None else found._asdict()
        note = p.mtime_note()
        if note is None:
            missing = f"{p.path}: no record has a timestamp at or after {args.timestamp}"
        else:  # the answer is Kafka's, and rests on files' modification times
            missing = f"{p.path}: Kafka answers no offset for timestamp {args.timestamp}: {note}"
            if found is not None:
                print(f"kafkacodec lookup: {safe(f'{p.path}: {note}')}", file=sys.stderr)
        return _answer(args, res, missing)
    finally:
        p.close()


def _by_offset(args, p) -> int:
    try:
        p.check_offset(args.offset, end=False)
    except OffsetOutOfRangeError as err:
        if args.json:
            out(json.dumps(None))
        print(f"kafkacodec lookup: {safe(str(err))}", file=sys.stderr)
        return PROBLEMS
    found = p.fetch(args.offset)
    res = None
    if found is not None:
        seg, where = found
        res = {"offset": args.offset, "batch_last_offset": where.offset, "segment": seg.path.name,
               "position": where.position, "size": where.size}  # fmt: skip
    return _answer(args, res, f"{p.path}: no batch holds offset {args.offset} or a later one")

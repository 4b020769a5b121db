"""`kafkacodec lookup`: Kafka's answer for an offset (the batch holding it) or a timestamp
(ListOffsets), through the indexes as a broker searches them."""

from __future__ import annotations

import argparse
import json
from pathlib import Path

from ..console import out
from ..runtime.errors import KafkacodecError
from .common import notes, open_kafka07, open_partition, storage_arguments, target

HELP = "Kafka's answer for an offset or a timestamp (-1 latest, -2 earliest, -3 max timestamp)"
EXAMPLE = "kafkacodec lookup /var/lib/kafka/orders-0 --timestamp 1700000000000"


def define(p: argparse.ArgumentParser) -> None:
    p.add_argument("dir", metavar="DIR")
    g = p.add_mutually_exclusive_group(required=True)
    g.add_argument("--offset", type=int)
    g.add_argument("--timestamp", type=int)
    p.add_argument("--json", action="store_true")
    storage_arguments(p, tiered=True)


def _lookup07(args, p) -> int:
    if args.timestamp is not None:
        raise KafkacodecError(f"{p.path}: a Kafka 0.7 partition: its messages have no timestamps")
    m = p.lookup(args.offset)
    res = None if m is None else {"offset": args.offset, "message_offset": m.offset,
                                  "file": Path(m.source).name, "position": m.position, "size": m.size}  # fmt: skip
    if args.json:
        out(json.dumps(res))
    else:
        out("no such offset" if res is None else " ".join(f"{k}: {v}" for k, v in res.items()))
    return 0


def run(args: argparse.Namespace) -> int:
    path = target(args, args.dir)
    k07 = open_kafka07(path)
    if k07 is not None:
        return _lookup07(args, k07)
    p = open_partition(path, args)
    if args.offset is not None:
        seg = p.segment_for(args.offset) or (p.segments[0] if p.segments else None)
        found = seg.translate_offset(args.offset) if seg else None
        res = None if found is None else {"offset": args.offset, "batch_last_offset": found.offset,
                                          "segment": seg.path.name, "position": found.position, "size": found.size}  # fmt: skip
    else:
        found = p.list_offsets(args.timestamp)
        res = None if found is None else found._asdict()
    if args.json:
        out(json.dumps(res))
    elif res is None:
        out("no such offset")
    else:
        out(" ".join(f"{k}: {v}" for k, v in res.items()))
    notes(p)
    return 0

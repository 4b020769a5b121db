"""`kafkacodec records`: records for humans, from an offset or a timestamp."""

from __future__ import annotations

import argparse
import sys

from ..console import out, safe
from ..runtime.errors import KafkacodecError
from .common import notes, open_kafka07, open_partition, storage_arguments, target

HELP = "records for humans: keys and values as text when UTF-8, headers shown"
EXAMPLE = "kafkacodec records /var/lib/kafka/orders-0 --from-offset 1200 --limit 5"


def define(p: argparse.ArgumentParser) -> None:
    p.add_argument("dir", metavar="DIR")
    g = p.add_mutually_exclusive_group()
    g.add_argument("--from-offset", type=int)
    g.add_argument("--from-timestamp", type=int)
    p.add_argument("--limit", type=int, default=None)
    p.add_argument(
        "--read-committed", action="store_true", help="drop aborted transactions and markers"
    )
    p.add_argument(
        "--skip-corrupt",
        action="store_true",
        help="read past damaged bytes (as verify does) instead of stopping; each "
        "stretch left out is named on stderr",
    )
    storage_arguments(p, tiered=True)


def _show(v) -> str:
    if v is None:
        return "null"
    try:
        return bytes(v).decode("utf-8")
    except UnicodeDecodeError:
        return "0x" + bytes(v).hex()


def _record_line(r) -> str:
    headers = ", ".join(f"{k}={_show(v)}" for k, v in r.headers)
    extra = f" control={r.control.type_name}" if r.control is not None else ""
    return safe(f"offset {r.offset} {r.timestamp_type} {r.timestamp} key={_show(r.key)} "
                 f"value={_show(r.value)}{' headers=[' + headers + ']' if headers else ''}{extra}")  # fmt: skip


def run(args: argparse.Namespace) -> int:
    skipped = []
    on_damage = skipped.append if args.skip_corrupt else None
    path = target(args, args.dir)
    k07 = open_kafka07(path)
    if k07 is not None:
        if args.from_timestamp is not None:
            raise KafkacodecError(
                f"{k07.path}: a Kafka 0.7 partition: its messages have no timestamps"
            )
        rows = ((None, None, r) for _f, _m, r in k07.read(args.from_offset, on_damage=on_damage))
        p = None
    else:
        p = open_partition(path, args)
        start = args.from_offset
        if args.from_timestamp is not None:
            found = p.list_offsets(args.from_timestamp)
            if found is None:
                return 0
            start = found.offset
        rows = p.read(start, committed_only=args.read_committed, on_damage=on_damage)
    n = 0
    for _seg, _batch, r in rows:
        if args.limit is not None and n >= args.limit:
            break
        out(_record_line(r))
        n += 1
    if p is not None:
        notes(p)
    for line in skipped:
        print(f"kafkacodec records: skipped: {safe(line)}", file=sys.stderr)
    return 0

"""`kafkacodec records`: records for humans, from an offset or a timestamp."""

from __future__ import annotations

import argparse
import json
import sys

from ..console import DONE, PROBLEMS, out_lines, output_closed, safe
from ..dump import record_dict
from ..records.lines import record_lines
from ..runtime.errors import KafkacodecError
from ..units import integer, timestamp_target
from .common import (
    chosen_partition,
    held,
    open_kafka07,
    open_partition,
    partition_arguments,
    storage_arguments,
)

HELP = "records for humans: keys and values as text when UTF-8, headers shown"
EXAMPLE = "kafkacodec records /var/lib/kafka/orders-0 --from-offset 1200 --limit 5"


def define(p: argparse.ArgumentParser) -> None:
    partition_arguments(p)
    g = p.add_mutually_exclusive_group()
    g.add_argument("--from-offset", type=integer(), metavar="N",
                   help="start at offset N, as a consumer fetching it (out of range below the "
                   "log start offset or past the log end, exit 1); default: the log start")  # fmt: skip
    g.add_argument("--from-timestamp", type=timestamp_target, metavar="T",
                   help="start at the offset ListOffsets gives for T (see lookup --timestamp)")  # fmt: skip
    p.add_argument("--limit", type=integer(1), default=None, metavar="K",
                   help="print at most K records (default: all)")  # fmt: skip
    p.add_argument("--json", action="store_true",
                   help="one JSON object per record: offset, timestamp, timestamp_type, key, value, "
                   "headers ([key, value] pairs), and control (type, version, coordinator_epoch) "
                   "for a control record, as `dump --deep --json` names them")  # fmt: skip
    p.add_argument("--bytes", choices=("hex", "base64", "utf8"), default="hex",
                   help="how --json prints keys, values and header values (default hex, as dump)")  # fmt: skip
    p.add_argument(
        "--read-committed", action="store_true",
        help="as a read_committed consumer: aborted transactions and markers dropped, nothing "
        "from the last stable offset on (a transaction with no marker yet)",
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


def _record_json(r, how: str) -> str:
    """A record as `dump --deep --json` prints it, with its timestamp type (JSON escapes
    every control character: nothing reaches a terminal raw)."""
    return json.dumps({**record_dict(r, how), "timestamp_type": r.timestamp_type})


def run(args: argparse.Namespace) -> int:
    skipped: list[str] = []
    missing: list = []
    on_damage = skipped.append if args.skip_corrupt else None
    path = chosen_partition(args, "records")
    from ..log.partition import AbortFilter

    k07 = open_kafka07(path)
    p = None
    txns = None
    if k07 is not None:
        if args.from_timestamp is not None:
            raise KafkacodecError(
                f"{k07.path}: a Kafka 0.7 partition: its messages have no timestamps"
            )
        rows = ((None, None, [r]) for _f, _m, r in k07.read(args.from_offset, on_damage=on_damage))
    else:
        p = open_partition(path, args)
        start = args.from_offset
        if args.from_timestamp is not None:
            found = p.list_offsets(args.from_timestamp)
            note = p.mtime_note()  # Kafka's answer rests on files' modification times
            if found is None:
                why = (f"no record has a timestamp at or after {args.from_timestamp}" if note is None
                       else f"Kafka answers no offset for timestamp {args.from_timestamp}: {note}")  # fmt: skip
                print(f"kafkacodec records: {safe(str(p.path))}: {safe(why)}", file=sys.stderr)
                return PROBLEMS
            if note is not None:
                print(f"kafkacodec records: {safe(str(p.path))}: {safe(note)}", file=sys.stderr)
            start = found.offset
        if start is not None:
            p.check_offset(start)  # OffsetOutOfRangeError: exit 1, with the log's range
        elif p.segments and (known := p.known_log_start()) and known[0] > p.base_offsets[0]:
            # Kafka's log start offset is inside the first segment (DeleteRecords, or
            # retention that has not yet removed the segment): a consumer fetches from it
            start = known[0]
            print(f"kafkacodec records: {safe(str(p.path))}: from the log start offset {start} "
                  f"({safe(known[1])}); offsets {p.base_offsets[0]}-{start - 1} are "
                  "still in the files but deleted for Kafka (DeleteRecords or retention): not "
                  "shown", file=sys.stderr)  # fmt: skip
        for gap in p.unreadable():  # offsets the log holds that this view cannot read
            if start is None or gap[1] >= start:
                missing.append(gap)
                print(f"kafkacodec records: {safe(str(p.path))}: {safe(p.missing_text(gap))}; "
                      "they are left out", file=sys.stderr)  # fmt: skip
        txns = AbortFilter(p) if args.read_committed else None
        rows = p.read_batches(start, committed_only=args.read_committed, on_damage=on_damage,
                              txns=txns)  # fmt: skip
    n = 0
    how = args.bytes
    mode, one = (how, lambda r: _record_json(r, how)) if args.json else ("text", _record_line)
    try:
        for _seg, _batch, recs in rows:
            if args.limit is not None:
                if n >= args.limit:
                    break
                recs = recs[: args.limit - n]
            if output_closed():
                break
            out_lines(record_lines(recs, mode, one))
            n += len(recs)
    finally:
        if p is not None:
            p.close()
    if txns is not None and txns.open is not None and not output_closed() and (
        args.limit is None or n < args.limit
    ):
        first, pid = txns.open
        print(f"kafkacodec records: {safe(str(p.path))}: stopped at the last stable offset {first}: "
              f"producer {pid}'s transaction from there has no commit or abort marker yet (a "
              "read_committed consumer stops there too)", file=sys.stderr)  # fmt: skip
    torn = [] if p is None or output_closed() else [s for s in p.segments if s.unread_tail]
    for seg in torn:
        at, size = seg.unread_tail
        print(f"kafkacodec records: {safe(str(seg.path))}: byte {at}: the last {size} bytes are "
              "not a complete batch (a write cut short, or damage; Kafka's reads stop there "
              "too): not read", file=sys.stderr)  # fmt: skip
    if n == 0 and not torn and not output_closed() and p is not None:
        print(f"kafkacodec records: {safe(str(p.path))}: no records"
              + (f" from offset {start}" if start is not None else "")
              + f" (the log end offset is {p.log_end_offset})", file=sys.stderr)  # fmt: skip
    for line in skipped:
        print(f"kafkacodec records: skipped: {safe(line)}", file=sys.stderr)
    if skipped:  # damage read past is a problem found
        stretches = "stretch" if len(skipped) == 1 else "stretches"
        print(f"kafkacodec records: {len(skipped)} damaged {stretches} left out (--skip-corrupt); "
              "`kafkacodec verify` names them all", file=sys.stderr)  # fmt: skip
        return PROBLEMS
    if (torn and not held(p.path.parent)) or missing:  # a torn write (not a live broker's), data not here
        return PROBLEMS
    return DONE


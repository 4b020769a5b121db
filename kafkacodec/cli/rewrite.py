"""`kafkacodec rewrite SRC DST`: a segment, partition or log.dirs written anew, every batch
rebuilt from its decoded fields (byte for byte Kafka's where Kafka wrote it), optionally
recompressed or converted to magic 2; `--check` only says which batches would change."""

from __future__ import annotations

import argparse
import json
import sys

from ..console import out, safe
from .common import CLEAN, PROBLEMS, local_path

HELP = ("write a segment, partition or log.dirs anew, every batch rebuilt as Kafka writes it; "
        "recompress (--compression) or convert legacy data (--magic 2); --check writes nothing")  # fmt: skip
EXAMPLE = "kafkacodec rewrite /var/lib/kafka/orders-0 /backup/orders-0 --compression zstd"


def define(p: argparse.ArgumentParser) -> None:
    from ..log.rewrite import add_arguments

    add_arguments(p, path=local_path)
    p.add_argument("--jobs", type=positive, metavar="N",
                   help="worker processes sharing the batches (default: one per CPU; 1: none); "
                   "the bytes written are the same for any N")  # fmt: skip


def positive(text: str) -> int:
    n = int(text)
    if n < 1:
        raise argparse.ArgumentTypeError(f"must be 1 or more, not {n}")
    return n


def run(args: argparse.Namespace) -> int:
    from ..internal.cluster import index_intervals
    from ..log.rewrite import options_of, rewrite

    if args.check == (args.dst is not None):
        print("kafkacodec rewrite: give DST to write, or --check to write nothing",
              file=sys.stderr)  # fmt: skip
        return 2
    options = options_of(args)
    if args.index_interval_bytes is None:
        options["interval_for"] = index_intervals(
            args.src, lambda problem: print(f"kafkacodec rewrite: {safe(problem)}", file=sys.stderr))
    summary = rewrite(args.src, args.dst, jobs=args.jobs, **options)
    if args.json:
        out(json.dumps(summary.to_dict(), indent=1))
    else:
        for line in summary.lines():
            out(line)
    return PROBLEMS if args.check and summary.different else CLEAN

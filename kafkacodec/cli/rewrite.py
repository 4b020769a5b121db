"""`kafkacodec rewrite SRC DST`: a segment, partition or log.dirs written anew, every batch
rebuilt from its decoded fields (byte for byte Kafka's where Kafka wrote it), optionally
recompressed or converted to magic 2; `--check` only says which batches would change."""

from __future__ import annotations

import argparse
import json
import sys

from ..console import CLEAN, PROBLEMS, UNCHECKED, out, safe
from ..units import integer
from .common import local_path, local_source

HELP = ("write a segment, partition or log.dirs anew, every batch rebuilt as Kafka writes it; "
        "recompress (--compression) or convert legacy data (--magic 2); --check writes nothing")  # fmt: skip
EXAMPLE = "kafkacodec rewrite /var/lib/kafka/orders-0 /backup/orders-0 --compression zstd"


def define(p: argparse.ArgumentParser) -> None:
    from ..log.rewrite import add_arguments

    add_arguments(p, path=local_path, src_path=local_source)
    p.add_argument("--jobs", type=integer(1), metavar="N",
                   help="worker processes sharing the batches (default: one per CPU; 1: none); "
                   "the bytes written are the same for any N")  # fmt: skip


def run(args: argparse.Namespace) -> int:
    from ..internal.cluster import index_intervals
    from ..log.rewrite import options_of, rebuild_options, rewrite
    from ..runtime.errors import EncodeError

    if args.check == (args.dst is not None):
        print("kafkacodec rewrite: give DST to write, or --check to write nothing",
              file=sys.stderr)  # fmt: skip
        return UNCHECKED
    options = options_of(args)
    try:  # a codec level out of Kafka's range is a usage error, before anything is read
        rebuild_options(**{k: options[k] for k in ("compression", "level", "magic", "gzip_os",
                                                    "batch_bytes")})  # fmt: skip
    except EncodeError as err:
        print(f"kafkacodec rewrite: {safe(str(err))}", file=sys.stderr)
        return UNCHECKED
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

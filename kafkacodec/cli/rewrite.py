"""`kafkacodec rewrite SRC DST`: a segment, partition or log.dirs written anew, every batch
rebuilt from its decoded fields (byte for byte Kafka's where Kafka wrote it), optionally
recompressed or converted to magic 2; `--check` only says which batches would change."""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path

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
    from ..log.rewrite import options_of, rewrite

    if args.check == (args.dst is not None):
        print("kafkacodec rewrite: give DST to write, or --check to write nothing",
              file=sys.stderr)  # fmt: skip
        return 2
    options = options_of(args)
    if args.index_interval_bytes is None:
        options["interval_for"] = _topic_intervals(args.src)
    summary = rewrite(args.src, args.dst, jobs=args.jobs, **options)
    if args.json:
        out(json.dumps(summary.to_dict(), indent=1))
    else:
        for line in summary.lines():
            out(line)
    return PROBLEMS if args.check and summary.different else CLEAN


def _topic_intervals(src: Path):
    """index.interval.bytes by topic from the cluster's metadata, where the log.dirs holds
    it (__cluster_metadata-0: a topic's ConfigRecord, else the cluster-wide
    log.index.interval.bytes); None when it does not."""
    from ..internal.cluster import fold_cluster, metadata_root
    from ..runtime.errors import KafkacodecError

    root = metadata_root(src)
    if root is None:
        return None
    try:
        config = fold_cluster(root).topic_config("index.interval.bytes", "log.index.interval.bytes")
    except KafkacodecError as err:
        print(f"kafkacodec rewrite: the cluster's metadata cannot be read ({safe(str(err))}): "
              "Kafka's default index.interval.bytes is used", file=sys.stderr)  # fmt: skip
        return None
    return config

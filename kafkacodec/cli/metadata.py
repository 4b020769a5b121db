"""`kafkacodec metadata LOG_DIR`: the cluster's topics, partitions, brokers, features and
configs from a KRaft `__cluster_metadata-0` on disk: its latest snapshot, then its log
(kafkacodec.internal.cluster), as text or JSON."""

from __future__ import annotations

import argparse
import json
import sys

from ..console import CLEAN, PROBLEMS, out, safe
from .common import codecs_of, specs_argument, storage_arguments, target

HELP = "the cluster's topics, brokers, features and configs from __cluster_metadata on disk"
EXAMPLE = "kafkacodec metadata /var/lib/kafka/metadata --json"


def define(p: argparse.ArgumentParser) -> None:
    p.add_argument("log_dir", metavar="DIR",
                   help="__cluster_metadata-0, or the log dir (metadata.log.dir) holding it")  # fmt: skip
    p.add_argument("--json", action="store_true", help="the state as one JSON object")
    specs_argument(p)
    storage_arguments(p)


def run(args: argparse.Namespace) -> int:
    from ..internal.cluster import fold_cluster, text

    state = fold_cluster(target(args, args.log_dir), codecs_of(args))
    if args.json:
        out(json.dumps(state.to_dict()))
    else:
        for line in text(state):
            out(safe(line))
    for problem in state.problems:
        print(f"kafkacodec metadata: {safe(problem)}", file=sys.stderr)
    return PROBLEMS if state.problems else CLEAN

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
    p.add_argument("log_dirs", nargs="+", metavar="DIR",
                   help="__cluster_metadata-0, or the log dir (metadata.log.dir) holding it; or "
                   "several nodes' (a cluster's disks): the most advanced copy is read")  # fmt: skip
    p.add_argument("--json", action="store_true", help="the state as one JSON object")
    specs_argument(p)
    storage_arguments(p)


def run(args: argparse.Namespace) -> int:
    from ..internal.cluster import fold_cluster, text

    paths = [target(args, d) for d in args.log_dirs]
    where = paths[0]
    if len(paths) > 1:
        where = _most_advanced(paths)
        print(f"kafkacodec metadata: read from {safe(str(where))}, the most advanced of the copies given "
              "(the largest end offset of its log or latest snapshot)", file=sys.stderr)  # fmt: skip
    state = fold_cluster(where, codecs_of(args))
    if args.json:
        out(json.dumps(state.to_dict()))
    else:
        for line in text(state):
            out(safe(line))
    for problem in state.problems:
        print(f"kafkacodec metadata: {safe(problem)}", file=sys.stderr)
    return PROBLEMS if state.problems else CLEAN


def _most_advanced(paths: list):
    """The __cluster_metadata-0 among the copies under paths that goes furthest
    (kafkacodec.brokers: the end offset of its log or its latest snapshot)."""
    from ..brokers import open_disks
    from ..internal.cluster import METADATA_DIR
    from ..log import open_log
    from ..runtime.errors import NotAPartitionError

    logs = [open_log(p / METADATA_DIR if (p / METADATA_DIR).is_dir() else p) for p in paths]
    pr = open_disks(logs).partitions.get(("__cluster_metadata", 0))
    if pr is None or pr.served is None:
        raise NotAPartitionError(paths[0], "no __cluster_metadata-0 in any of the directories given")
    return pr.served.partition.path

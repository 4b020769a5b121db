"""`kafkacodec sample`: a sample log.dirs of any size (kafkacodec.sample)."""

from __future__ import annotations

import argparse

from ..console import out
from ..runtime.errors import RefusedError
from ..units import integer, size
from .common import local_path

HELP = "write a sample log.dirs of any size, for trying the Spark pipeline at scale"
EXAMPLE = "kafkacodec sample /tmp/big-logdirs --size 4g --partitions 8"


def define(p: argparse.ArgumentParser) -> None:
    p.add_argument("out", metavar="OUT", type=local_path, help="a new directory (refused if not empty)")
    p.add_argument("--records", type=integer(1), default=None, metavar="N",
                   help="how many records (default: 100000, or no limit with --size)")  # fmt: skip
    p.add_argument("--size", type=size(1), metavar="BYTES",
                   help="how many bytes on disk, e.g. 4g; with --records too, the first reached "
                   "stops")  # fmt: skip
    p.add_argument("--partitions", type=integer(1), default=4, metavar="P",
                   help="partition directories (default 4)")  # fmt: skip
    p.add_argument("--topic", default="sample", type=_topic,
                   help="the topic's name, as Kafka takes one: up to 249 of a-z A-Z 0-9 . _ - "
                   "(default sample)")  # fmt: skip
    p.add_argument(
        "--codecs",
        type=_codecs, default="none,gzip,snappy,lz4,zstd",
        help="comma-separated, used in turn batch by batch (default: all five)",
    )
    p.add_argument("--record-bytes", type=integer(0), default=100, metavar="N",
                   help="about how long a value is (default 100)")  # fmt: skip
    p.add_argument("--batch-records", type=integer(1), default=50, metavar="N",
                   help="records per batch (default 50)")  # fmt: skip
    p.add_argument("--segment-bytes", type=size(1), default=1 << 30, metavar="BYTES",
                   help="roll segments at this size (default 1g)")  # fmt: skip
    p.add_argument("--brokers", type=integer(1), metavar="N",
                   help="write N brokers' disks instead (replication factor up to 3, the last "
                   "broker with two log.dirs, a __cluster_metadata copy on each): a cluster's "
                   "disks, as docs/cluster.md reads them; --records is per partition then "
                   "(default 10000)")  # fmt: skip
    p.add_argument("--scenario", choices=("clean", "lagging", "unclean"), default="clean",
                   help="with --brokers: what happened to every partition's replicas before the "
                   "disks were copied (default clean; lagging, unclean need 3 brokers)")  # fmt: skip
    p.add_argument("--quiet", action="store_true", help="no progress bar")


def _topic(text: str) -> str:
    """--topic: a name Kafka takes (log.partition.topic_name_problem; argparse's error otherwise)."""
    from ..log.partition import topic_name_problem

    problem = topic_name_problem(text)
    if problem:
        raise argparse.ArgumentTypeError(problem)
    return text


def _codecs(text: str) -> tuple[str, ...]:
    """--codecs: Kafka's codec names, comma-separated (argparse's error otherwise)."""
    from ..runtime.compression import CODEC_IDS

    codecs = tuple(c.strip() for c in text.split(",") if c.strip())
    unknown = [c for c in codecs if c not in CODEC_IDS]
    if unknown or not codecs:
        raise argparse.ArgumentTypeError(f"{', '.join(unknown) or 'none given'}; known: "
                                         f"{', '.join(CODEC_IDS)}")  # fmt: skip
    return codecs


def run(args: argparse.Namespace) -> int:
    from ..console import Progress
    from ..sample import write_sized_log_dirs

    if args.brokers is not None:
        return _cluster(args)
    codecs = args.codecs
    size, segment = args.size, args.segment_bytes
    records = args.records if args.records is not None or size is not None else 100_000
    with Progress(size or 0, "sample", quiet=args.quiet or not size) as progress:
        try:
            res = write_sized_log_dirs(args.out, records=records, size=size, partitions=args.partitions,
                                       codecs=codecs, topic=args.topic, record_bytes=args.record_bytes,
                                       batch_records=args.batch_records, segment_bytes=segment,
                                       progress=progress)  # fmt: skip
        except FileExistsError:
            raise RefusedError(args.out, "exists and is not empty; sample writes a new "
                                         "log.dirs") from None  # fmt: skip
    out(f"wrote {args.out}: {res['records']} records in {res['batches']} batches over "
         f"{res['partitions']} partitions, {res['bytes']} bytes ({', '.join(codecs)})")  # fmt: skip
    return 0


def _cluster(args: argparse.Namespace) -> int:
    """--brokers: a cluster's disks (sample.write_cluster_disks), written beside OUT and
    renamed to it when whole: interrupted, it leaves nothing."""
    import os
    import shutil

    from ..runtime.errors import UsageError
    from ..sample import write_cluster_disks

    if args.size is not None:
        raise UsageError("--size is not taken with --brokers: give --records (per partition)")
    if args.scenario != "clean" and args.brokers < 3:
        raise UsageError(f"--scenario {args.scenario} needs --brokers 3 or more")
    root = args.out
    if root.exists() and (not root.is_dir() or any(root.iterdir())):
        raise RefusedError(root, "exists and is not empty; sample writes new disks")
    root.parent.mkdir(parents=True, exist_ok=True)
    stage = root.parent / f".{root.name}.sample-{os.getpid()}"
    shutil.rmtree(stage, ignore_errors=True)
    records = args.records if args.records is not None else 10_000
    try:
        res = write_cluster_disks(stage, brokers=args.brokers, topics=((args.topic, args.partitions),),
                                  records=records, batch_records=args.batch_records,
                                  scenario=args.scenario, codecs=args.codecs,
                                  record_bytes=args.record_bytes)  # fmt: skip
        os.replace(stage, root)
    except BaseException:
        shutil.rmtree(stage, ignore_errors=True)
        raise
    dirs = sum(len(v) for v in res["log_dirs"].values())
    out(f"wrote {root}: {args.brokers} brokers' disks ({dirs} log dirs), {args.partitions} partitions of "
        f"{records} records each, each on {min(3, args.brokers)} brokers ({args.scenario})")  # fmt: skip
    return 0

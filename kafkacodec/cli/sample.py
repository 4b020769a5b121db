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

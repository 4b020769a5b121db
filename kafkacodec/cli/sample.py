"""`kafkacodec sample`: a sample log.dirs of any size (kafkacodec.sample)."""

from __future__ import annotations

import argparse

from ..console import out
from ..runtime.errors import KafkacodecError
from .common import local_path

HELP = "write a sample log.dirs of any size, for trying the Spark pipeline at scale"
EXAMPLE = "kafkacodec sample /tmp/big-logdirs --size 4g --partitions 8"


def define(p: argparse.ArgumentParser) -> None:
    p.add_argument("out", metavar="OUT", type=local_path, help="a new directory (refused if not empty)")
    p.add_argument("--records", type=int, default=None, help="how many records (default 100000)")
    p.add_argument("--size", help="or how many bytes on disk, e.g. 4g (the first reached stops)")
    p.add_argument("--partitions", type=int, default=4)
    p.add_argument("--topic", default="sample")
    p.add_argument(
        "--codecs",
        default="none,gzip,snappy,lz4,zstd",
        help="comma-separated, used in turn batch by batch (default: all five)",
    )
    p.add_argument("--record-bytes", type=int, default=100, help="about how long a value is")
    p.add_argument("--batch-records", type=int, default=50)
    p.add_argument("--segment-bytes", default="1g", help="roll segments at this size (default 1g)")
    p.add_argument("--quiet", action="store_true", help="no progress bar")


def run(args: argparse.Namespace) -> int:
    from .. import units
    from ..console import Progress
    from ..runtime.compression import CODEC_IDS
    from ..sample import write_sized_log_dirs

    codecs = tuple(c.strip() for c in args.codecs.split(",") if c.strip())
    unknown = [c for c in codecs if c not in CODEC_IDS]
    try:
        size = None if args.size is None else units.parse_size(args.size)
        segment = units.parse_size(args.segment_bytes)
    except ValueError as err:
        raise KafkacodecError(str(err)) from None
    if unknown or not codecs:
        raise KafkacodecError(f"--codecs: {', '.join(unknown) or 'none given'}; "
                              f"known: {', '.join(CODEC_IDS)}")  # fmt: skip
    records = args.records if args.records is not None or size is not None else 100_000
    with Progress(size or 0, "sample", quiet=args.quiet or not size) as progress:
        try:
            res = write_sized_log_dirs(args.out, records=records, size=size, partitions=args.partitions,
                                       codecs=codecs, topic=args.topic, record_bytes=args.record_bytes,
                                       batch_records=args.batch_records, segment_bytes=segment,
                                       progress=progress)  # fmt: skip
        except (FileExistsError, ValueError) as err:
            raise KafkacodecError(str(err)) from None
    out(f"wrote {args.out}: {res['records']} records in {res['batches']} batches over "
         f"{res['partitions']} partitions, {res['bytes']} bytes ({', '.join(codecs)})")  # fmt: skip
    return 0

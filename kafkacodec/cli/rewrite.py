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
    from ..runtime.compression import CODEC_IDS

    p.add_argument("src", metavar="SRC", type=local_path,
                   help="a segment (.log), a partition directory or a log.dirs; only read")  # fmt: skip
    p.add_argument("dst", metavar="DST", type=local_path, nargs="?",
                   help="the new directory to write (must not exist; outside every log "
                   "directory); not with --check")  # fmt: skip
    p.add_argument("--check", action="store_true",
                   help="write nothing: rebuild every batch and report whether it comes back "
                   "byte for byte (exit 1 when one does not)")  # fmt: skip
    p.add_argument("--compression", choices=sorted(CODEC_IDS, key=CODEC_IDS.get),
                   help="recompress every batch with this codec (default: each keeps its own)")  # fmt: skip
    p.add_argument("--level", type=int,
                   help="the codec's level, in Kafka's range (compression.<codec>.level)")  # fmt: skip
    p.add_argument("--magic", type=int, choices=[2],
                   help="convert legacy message sets (magic 0 and 1) to v2 batches, as Kafka's "
                   "LogValidator converts them on append")  # fmt: skip
    p.add_argument("--gzip-jdk", choices=["8", "17"],
                   help="the JDK whose gzip header to write (8: JDK 8 and 11; 17: JDK 16 and "
                   "later; default: the source's, else 17)")  # fmt: skip
    p.add_argument("--index-interval-bytes", type=int, metavar="N",
                   help="index.interval.bytes for the rebuilt indexes (default: the topic's "
                   "config, where the log.dirs holds the cluster's metadata, else 4096)")  # fmt: skip
    p.add_argument("--batch-bytes", type=int, metavar="N",
                   help="how many bytes of uncompressed legacy messages become one batch when "
                   "they are converted or compressed (default 16384, the producer's batch.size)")  # fmt: skip
    p.add_argument("--jobs", type=positive, metavar="N",
                   help="worker processes sharing the batches (default: one per CPU; 1: none); "
                   "the bytes written are the same for any N")  # fmt: skip
    p.add_argument("--json", action="store_true", help="the summary as JSON")


def positive(text: str) -> int:
    n = int(text)
    if n < 1:
        raise argparse.ArgumentTypeError(f"must be 1 or more, not {n}")
    return n


def run(args: argparse.Namespace) -> int:
    from ..log.rewrite import rewrite
    from ..runtime.compression import GZIP_OS_JDK8, GZIP_OS_JDK17

    if args.check == (args.dst is not None):
        print("kafkacodec rewrite: give DST to write, or --check to write nothing",
              file=sys.stderr)  # fmt: skip
        return 2
    gzip_os = None if args.gzip_jdk is None else {"8": GZIP_OS_JDK8, "17": GZIP_OS_JDK17}[args.gzip_jdk]
    summary = rewrite(
        args.src, args.dst, compression=args.compression, level=args.level, magic=args.magic,
        gzip_os=gzip_os, index_interval_bytes=args.index_interval_bytes,
        interval_for=None if args.index_interval_bytes is not None else _topic_intervals(args.src),
        batch_bytes=args.batch_bytes, jobs=args.jobs,
    )  # fmt: skip
    if args.json:
        out(json.dumps(summary.to_dict(), indent=1))
    else:
        for line in lines(summary):
            out(line)
    return PROBLEMS if args.check and summary.different else CLEAN


def _topic_intervals(src: Path):
    """index.interval.bytes by topic from the cluster's metadata, where the log.dirs holds
    it (__cluster_metadata-0: a topic's ConfigRecord, else the cluster-wide
    log.index.interval.bytes); None when it does not."""
    from ..internal.cluster import METADATA_DIR, fold_cluster
    from ..runtime.errors import KafkacodecError

    root = src if (src / METADATA_DIR).is_dir() else src.parent if src.parent.joinpath(
        METADATA_DIR).is_dir() else None  # fmt: skip
    if root is None:
        return None
    try:
        state = fold_cluster(root)
    except KafkacodecError as err:
        print(f"kafkacodec rewrite: the cluster's metadata cannot be read ({safe(str(err))}): "
              "Kafka's default index.interval.bytes is used", file=sys.stderr)  # fmt: skip
        return None
    default = state.configs.get(("BROKER", ""), {}).get("log.index.interval.bytes")

    def interval_for(topic: str) -> int | None:
        value = state.configs.get(("TOPIC", topic), {}).get("index.interval.bytes", default)
        return None if value is None else int(value)

    return interval_for


def _mb(n: int) -> str:
    return f"{n / 1e6:,.1f} MB"


def lines(s) -> list[str]:
    """The summary: what was read and written, how it compares, how long it took."""
    rate = s.bytes_in / s.seconds / 1e6 if s.seconds > 0 else 0.0
    head = f"checked {safe(s.source)}" if s.destination is None else \
        f"rewrote {safe(s.source)} -> {safe(s.destination)}"  # fmt: skip
    opts = ", ".join(f"{k} {v}" for k, v in s.options.items())
    out = [head + (f" ({opts})" if opts else ""),
           f"  partitions {s.partitions:,}, segments {s.segments:,}, batches {s.batches_in:,}"
           + (f" -> {s.batches_out:,}" if s.batches_out != s.batches_in else "")
           + f", records {s.records:,}",
           f"  bytes {s.bytes_in:,} -> {s.bytes_out:,}"
           + (f" ({100 * s.bytes_out / s.bytes_in:.1f}%)" if s.bytes_in else ""),
           f"  time {s.seconds:.2f} s ({rate:,.0f} MB/s of segment"
           + (f", {s.jobs} processes)" if s.jobs > 1 else ")")]  # fmt: skip
    if s.options:
        out.append(f"  batches written unchanged {s.identical:,}, changed {s.different:,}")
    else:
        out.append(f"  batches identical {s.identical:,}, different {s.different:,}")
        for d in s.differences:
            out.append(f"  different: {safe(d.file)} batch at byte {d.position:,} (offset "
                       f"{d.offset}): first differing byte at {d.at:,}")  # fmt: skip
        if s.different > len(s.differences):
            out.append(f"  ... and {s.different - len(s.differences):,} more different batches")
        if s.different and s.destination is not None:
            out.append("  (each was written as Kafka's writer rebuilds it from its decoded "
                       "fields: valid, with the same records)")  # fmt: skip
    if s.rolled_back:
        out.append(f"  removed {safe(s.rolled_back)}, left by a rewrite that stopped before "
                   "its end")  # fmt: skip
    if s.skipped:
        out.append(f"  not copied (not files): {', '.join(safe(x) for x in s.skipped[:10])}")
    return out

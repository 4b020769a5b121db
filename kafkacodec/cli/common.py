"""What the commands share: exit codes, and opening what a path names (printing is
kafkacodec.console)."""

from __future__ import annotations

import sys
from pathlib import Path

from ..console import safe
from ..runtime.errors import KafkacodecError

#: Exit codes of verify and recover (README: "Exit codes").
CLEAN, PROBLEMS, UNCHECKED = 0, 1, 2


def local_path(raw: str) -> Path:
    """An argparse type for a path a command writes, or reads as a local file: a URL is
    refused with a clear message (kafkacodec never writes to an object store, and Path()
    would turn s3://bucket into the local s3:/bucket)."""
    import argparse

    from ..storage import is_url

    if is_url(raw) or "://" in raw:
        raise argparse.ArgumentTypeError(
            f"{raw}: a local path is needed here; kafkacodec writes only local files (it never "
            "writes to an object store)"
        )
    return Path(raw)


def storage_arguments(p, *, tiered: bool = False) -> None:
    """The options of a command that reads object stores as well as local paths (with
    `tiered`, also --tiered ROOT)."""
    if tiered:
        p.add_argument(
            "--tiered", metavar="ROOT",
            help="a tiered-storage root (Aiven's bucket prefix, or Kafka's LocalTieredStorage "
            "directory): the partition's remote segments join its local ones, read as Kafka "
            "serves them (remote below the local log start)",
        )  # fmt: skip
    p.add_argument(
        "--storage-option", action="append", default=[], metavar="KEY=VALUE",
        help="an option of the object store's filesystem (pyarrow.fs), e.g. region=eu-west-1, "
        "endpoint_override=http://127.0.0.1:9000, access_key=..., retries=8, spool_dir=/var/tmp; "
        "repeatable. Without them, the AWS environment (AWS_ENDPOINT_URL, AWS_REGION, "
        "AWS_ACCESS_KEY_ID, ...) and the SDK's credential chain apply",
    )  # fmt: skip
    p.add_argument(
        "--verbose", action="store_true",
        help="say on stderr what was fetched from object stores (requests, bytes, retries)",
    )  # fmt: skip


def storage_options(args) -> dict:
    """The --storage-option pairs of a command, as a dict."""
    from ..storage import parse_options

    return parse_options(getattr(args, "storage_option", None))


def target(args, raw):
    """A path named on the command line: local, or an object store's (with the command's
    storage options)."""
    from ..storage import as_path

    return as_path(raw, storage_options(args))


def fetched_line() -> str | None:
    """What this process fetched from object stores, as --verbose says it (None: nothing)."""
    from ..storage import total_stats

    return total_stats().describe()


def expand(paths, *, index_only: bool = False, options: dict | None = None) -> list:
    """Files named on the command line (local paths or URLs), and the segment files of each
    directory named (only its index files when `index_only`)."""
    from ..runtime.errors import NotASegmentError
    from ..storage import as_path

    wanted = {".index", ".timeindex", ".txnindex"} | (set() if index_only else {".log", ".kafka"})
    found = []
    for p in (as_path(x, options) for x in paths):
        if p.is_dir():
            found.extend(sorted(c for c in p.iterdir() if c.suffix in wanted))
        elif p.exists():
            found.append(p)
        else:
            raise NotASegmentError(p, "no such file or directory")
    return found


def read_file(path, limit: int | None = None, args=None):
    """A buffer of a file the command reads through (a remote one fetched into a spool):
    every byte, or with `limit` at least the first `limit` bytes (--max-bytes). The .log of
    a segment in Aiven's tiered layout is read through its manifest (its chunks
    transformed back), as the segment it was."""
    from ..runtime.errors import NotASegmentError
    from ..storage import open_blob
    from ..storage.tiered import aiven_segment_of

    try:
        tiered = aiven_segment_of(path, keys(args))
        blob = tiered.open_log() if tiered is not None else open_blob(path)
    except FileNotFoundError:
        raise NotASegmentError(path, "no such file") from None
    return blob.whole() if limit is None else blob.ensure(0, max(limit, 61))


def open_partition(path, args=None):
    """The partition at `path` (a local path or an ObjectPath; a partition of a tiered-storage
    layout; with the command's --tiered, joined with its remote segments), each of its
    local segments checked to start like a Kafka segment (a file of something else gets
    named, rather than read as an empty segment)."""
    from ..log import TieredSegment
    from ..log.tiered import open_partition as opened

    p = opened(path, keys=keys(args), tiered=tiered(args))
    for seg in p.segments:
        if not isinstance(seg, TieredSegment):  # a remote one is named by its layout
            seg.sniff()
    return p


def keys(args):
    """The RSA keys for encrypted tiered segments (storage options encryption_key[.ID])."""
    from ..storage.tiered import KeyRing

    return KeyRing(storage_options(args) if args is not None else {})


def tiered(args):
    """The command's --tiered root (local or a URL), or None."""
    raw = getattr(args, "tiered", None)
    return None if raw is None else target(args, raw)


def open_kafka07(path):
    """A Kafka 0.7 partition (.kafka files, no .log), or None."""
    from ..log.kafka07 import Kafka07Partition
    from ..storage import is_remote

    p = path if is_remote(path) else Path(path)
    if is_remote(p) or not p.is_dir() or any(c.suffix == ".log" for c in p.iterdir()):
        return None
    try:
        return Kafka07Partition(p)
    except KafkacodecError:
        return None


def notes(p) -> None:
    """What the reads said about indexes they could not trust (on stderr)."""
    for seg in p.segments:
        for note in seg.notes:
            print(f"kafkacodec: note: {safe(note)}", file=sys.stderr)

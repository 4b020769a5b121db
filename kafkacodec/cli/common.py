"""What the commands share: exit codes, and opening what a path names (printing is
kafkacodec.console)."""

from __future__ import annotations

import argparse
import logging
import sys
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

from ..console import safe
from ..runtime.errors import KafkacodecError, UsageError


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


TIERED_HELP = ("a tiered-storage root (Aiven's bucket prefix, or Kafka's LocalTieredStorage "
               "directory): the partition's remote segments join its local ones, read as Kafka "
               "serves them (remote below the local log start)")  # fmt: skip


def local_source(raw: str) -> Path:
    """local_path for a path a command reads: a link named is followed (storage.named_path)."""
    return Path(named_path(local_path(raw)))


def storage_arguments(p, *, tiered: bool | str = False) -> None:
    """The options of a command that reads object stores as well as local paths (with
    `tiered`, also --tiered ROOT: TIERED_HELP, or the command's own help text)."""
    if tiered:
        p.add_argument("--tiered", metavar="ROOT",
                       help=TIERED_HELP if tiered is True else tiered)  # fmt: skip
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
    """A path named on the command line: local (a symbolic link followed: storage.named_path),
    or an object store's (with the command's storage options)."""
    return named_path(raw, storage_options(args))


def named_path(raw, options: dict | None = None):
    """storage.named_path: a link named on the command line is followed."""
    from ..storage import named_path as named

    return named(raw, options)


def fetched_line() -> str | None:
    """What this process fetched from object stores, as --verbose says it (None: nothing)."""
    from ..storage import total_stats

    return total_stats().describe()


def expand(paths, *, index_only: bool = False, options: dict | None = None) -> list:
    """(file, label) of each file named on the command line (local paths or URLs), and of
    the segment files of each directory named: a partition's, or every partition's of a
    log.dirs (only index files when `index_only`). label: how the file is named in the
    output (its name; `<partition>/<name>` inside a log.dirs). NotASegmentError for a path
    that is missing or a directory that holds none."""
    from ..log.partition import LogDirs, open_log
    from ..runtime.errors import NotASegmentError

    wanted = {".index", ".timeindex", ".txnindex"} | (set() if index_only else {".log", ".kafka"})
    kinds = "index files" if index_only else "segment or index files"
    found = []
    for raw in paths:
        p = named_path(raw, options)
        if not p.is_dir():
            if not p.exists():
                raise NotASegmentError(p, "no such file or directory")
            found.append((p, p.name))
            continue
        remote = _tiered_files(p, wanted, options)
        if remote is not None:
            if not remote:
                raise NotASegmentError(p, f"a tiered-storage folder that holds no remote {kinds}: nothing to dump")
            found.extend(remote)
            continue
        log = open_log(p)
        try:
            if isinstance(log, LogDirs):
                files = [(c, f"{part.path.name}/{c.name}") for part in log.partitions
                         for c in _files_in(part.path, wanted)]  # fmt: skip
                what = (f"{kinds} in any of its {len(log.partitions)} partition directories"
                        if log.partitions else f"partition directories and no {kinds}")  # fmt: skip
            else:
                files = [(c, c.name) for c in _files_in(p, wanted)]
                what = f"{kinds} (<20-digit base offset>{', '.join(sorted(wanted))})"
        finally:
            log.close()
        if not files:
            raise NotASegmentError(p, f"holds no {what}: nothing to dump")
        found.extend(files)
    return found


def _tiered_files(path, wanted: set[str], options: dict | None) -> list | None:
    """(file, label) of the remote segments' files of a tiered-storage folder (a partition
    or a root of Aiven's layout, or of Kafka's LocalTieredStorage), in offset order: each
    .log (Aiven's read through its manifest, read_file) and LocalTieredStorage's index
    copies (Aiven's indexes travel in one encrypted bundle, which is no Kafka file: not
    listed); None when path is no such folder. Labels name the partition inside a root."""
    from ..log.tiered import TieredLogDirs, open_tiered
    from ..storage.tiered import INDEX_KINDS, KeyRing

    found = open_tiered(path, KeyRing(options or {}))
    if found is None:
        return None
    parts = found.partitions if isinstance(found, TieredLogDirs) else [found]
    out = []
    try:
        for part in parts:
            where = "" if part is found else f"{part.path.relative_to(path)}/"
            for seg in part.remote_segments:
                files = seg.files
                named = [files.log] if ".log" in wanted and files.log is not None else []
                if files.layout == "local-tiered":
                    named += [files.files[k] for k in ("offset", "timestamp", "transaction")
                              if k in files.files and f".{INDEX_KINDS[k][1]}" in wanted]  # fmt: skip
                out += [(f, f"{where}{f.name}") for f in named]
    finally:
        found.close()
    return out


def _files_in(directory, wanted: set[str]) -> list:
    """The files of a partition directory named as Kafka names segment files, with a
    wanted suffix, in order."""
    from ..log.segment import parse_segment_name

    return sorted(c for c in directory.iterdir()
                  if (parsed := parse_segment_name(c.name)) and parsed[1] in wanted)  # fmt: skip


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
    from ..internal.remote import learn_remote_extent
    from ..log import TieredSegment
    from ..log.tiered import open_partition as opened
    from ..runtime.errors import NotAPartitionError, UnreadableError

    p = opened(path, keys=keys(args), tiered=tiered(args))
    if not p.segments:
        p.close()
        raise NotAPartitionError(p.path, no_segments(p, "nothing to read"))
    learn_remote_extent(p)
    for problem in p.problems:  # a side file not read, remote segments not found: said
        logging.getLogger("kafkacodec.cli").warning(problem)
    unreadable = []
    for seg in p.segments:
        if not isinstance(seg, TieredSegment):  # a remote one is named by its layout
            try:
                with damaged_if_named(True):
                    seg.sniff()
            except UnreadableError as err:  # read what can be read; said, and an error if reached
                unreadable.append((seg, err))
    if unreadable and len(unreadable) == len(p.segments):
        p.close()
        raise unreadable[0][1]
    for seg, err in unreadable:
        nxt = next((b for b in p.base_offsets if b > seg.base_offset), None)
        span = f"offsets {seg.base_offset}-{nxt - 1}" if nxt is not None else f"offsets from {seg.base_offset}"
        logging.getLogger("kafkacodec.cli").warning(
            f"{err}: {span} cannot be read here; a read that reaches them stops there")
    return p


@contextmanager
def damaged_if_named(named: bool) -> Iterator[None]:
    """A segment named as Kafka names them (or in a partition directory) whose bytes are not
    Kafka's is damaged data, a problem found (exit 1, as verify reports it); any other file
    that is not Kafka data is not what the command reads (NotASegmentError: exit 2)."""
    from ..runtime.errors import LogError, NotASegmentError

    try:
        yield
    except NotASegmentError as err:
        if not named:
            raise
        raise LogError(err.path, err.message, err.position) from None


def held(log_dir) -> bool:
    """Whether a broker holds a local log directory (its .lock); an object store's never is."""
    from ..storage import is_remote
    from ..storage.fsio import lock_holder

    return not is_remote(log_dir) and lock_holder(log_dir) is not None


def no_segments(p, consequence: str) -> str:
    """Why a partition directory gives nothing to read, naming the files that look like
    segments but are not named as Kafka names them."""
    near = [n for n in p.unknown if n.endswith((".log", ".index", ".timeindex", ".txnindex"))]
    hint = (f" ({', '.join(near[:3])}{', ...' if len(near) > 3 else ''}: not named as Kafka "
            "names segments, <20-digit base offset>.log)" if near else "")  # fmt: skip
    return f"holds no segments{hint}: {consequence}"


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




SPECS_HELP = (
    "decode the internal topics with codecs generated now from these Kafka message specs (a "
    "Kafka release's libs/, whose kafka-*.jar hold them, or a Kafka source tree) instead of "
    "the shipped ones (`kafkacodec --version` names their release)"
)


def specs_argument(p) -> None:
    """--specs SOURCE: the codecs of another release (SPECS_HELP)."""
    p.add_argument("--specs", type=local_source, metavar="SOURCE", help=SPECS_HELP)


_CODECS: dict = {}


def codecs_of(args):
    """The codecs a command decodes internal topics with: the shipped ones, or those of
    --specs, generated into a temporary folder that lives as long as the process."""
    from ..internal.codecs import DEFAULT, Codecs

    source = getattr(args, "specs", None)
    if source is None:
        return DEFAULT
    key = str(Path(source).resolve())
    if key not in _CODECS:
        import atexit
        import shutil
        import tempfile

        try:
            from ..generator.specs_import import generate_codecs
        except ImportError as err:
            raise KafkacodecError(f"--specs needs the generator's extra: pip install "
                                  f"'kafkacodec[generator]' ({err})") from None  # fmt: skip
        dest = Path(tempfile.mkdtemp(prefix="kafkacodec-codecs-"))
        atexit.register(shutil.rmtree, dest, True)
        _result, generated = generate_codecs(source, dest)
        _CODECS[key] = Codecs.load(generated)
    return _CODECS[key]


PARTITION_DIRS_HELP = ("a partition directory (<topic>-<partition>); or several: the replicas "
                       "of one partition on a cluster's disks, or brokers' log.dirs with "
                       "--partition (the replica Kafka would serve it from is read)")  # fmt: skip


def partition_arguments(p) -> None:
    """DIR... and --partition, for a command that reads one partition."""
    p.add_argument("dirs", nargs="+", metavar="DIR", help=PARTITION_DIRS_HELP)
    p.add_argument("--partition", metavar="TOPIC-N", type=_partition_name,
                   help="which partition of the log.dirs given (needed when they hold several)")  # fmt: skip


def _partition_name(raw: str) -> tuple[str, int]:
    topic, sep, n = raw.rpartition("-")
    if not sep or not topic or not n.isdigit():
        raise argparse.ArgumentTypeError(f"{raw!r}: expected TOPIC-N, e.g. orders-0")
    return topic, int(n)


def chosen_partition(args, command: str):
    """The path of the partition a one-partition command reads: DIR itself when it is one
    directory and no --partition; else the replica Kafka would serve it from among the
    directories given (kafkacodec.brokers), said on stderr when there was a choice."""
    from ..brokers import open_disks
    from ..log import LogDirs, open_log

    paths = [target(args, d) for d in args.dirs]
    if len(paths) == 1 and args.partition is None:
        return paths[0]
    logs = [open_log(p) for p in paths]
    disks = open_disks(logs)
    candidates = {k: v for k, v in disks.partitions.items() if k[0] != "__cluster_metadata" or args.partition}
    if args.partition is not None:
        pr = candidates.get(args.partition)
        if pr is None:
            raise KafkacodecError(f"{'-'.join(map(str, args.partition))}: not on the disks given "
                                  f"({', '.join(map(str, paths))})")  # fmt: skip
    elif len(candidates) == 1:
        (pr,) = candidates.values()
    else:
        names = ", ".join(v.name for v in candidates.values()) or "none"
        shown = names if len(names) < 300 else names[:300] + "..."
        raise UsageError(f"the directories given hold {len(candidates)} partitions ({shown}): name one "
                         "with --partition TOPIC-N")  # fmt: skip
    if pr.served is None:
        raise KafkacodecError(f"{pr.name}: no replica of it can be read here")
    for s in disks.set_apart:
        if s.partition == (pr.topic, pr.partition):
            print(f"kafkacodec {command}: {safe(s.path)} ({safe(s.broker)}): not read: {s.kind}: {s.why}",
                  file=sys.stderr)  # fmt: skip
    if len(pr.replicas) > 1 or any(isinstance(x, LogDirs) for x in logs):
        others = len(pr.replicas) - 1
        print(f"kafkacodec {command}: {pr.name}: read from {safe(pr.served.path)} ({pr.served.broker}"
              + (f"; {others} other replica{'s' if others > 1 else ''} here: {pr.why}" if others else "")
              + ")", file=sys.stderr)  # fmt: skip
    return pr.served.partition.path

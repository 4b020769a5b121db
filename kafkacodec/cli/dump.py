"""`kafkacodec dump`: batches and records of .log files (and KRaft snapshots), entries of
index files, producer snapshots and the small state files, in kafka-dump-log's text
(DumpLogSegments) or as JSON lines. The records of Kafka's internal topics are decoded with
the codecs generated from Kafka's message specs, as kafka-dump-log's decoder flags do."""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path

from ..console import out, out_lines, output_closed
from ..internal.dump_format import NEWEST, KafkaStops
from ..runtime.errors import NotASegmentError
from ..units import integer
from .common import (
    codecs_of,
    damaged_if_named,
    expand,
    read_file,
    specs_argument,
    storage_arguments,
    storage_options,
)

HELP = "print batches and records of .log files, or entries of index files, as kafka-dump-log does"
EXAMPLE = "kafkacodec dump --deep-iteration /var/lib/kafka/orders-0/00000000000000000000.log"


def define(p: argparse.ArgumentParser) -> None:
    p.add_argument("paths", nargs="+", metavar="FILE|DIR",
                   help="segment, index, snapshot or state files; a partition directory (its "
                   "files) or a log.dirs (every partition's files)")  # fmt: skip
    p.add_argument("--deep-iteration", action="store_true", help="also print every record")
    p.add_argument(
        "--print-data-log", action="store_true", help="also print keys and values (implies deep)"
    )
    p.add_argument("--index-sanity-check", action="store_true", help="only check index files")
    p.add_argument(
        "--verify-index-only", action="store_true", help="check index files against their log"
    )
    p.add_argument(
        "--max-bytes", type=integer(1), default=None, metavar="N",
        help="read only the batches that lie wholly within the first N bytes of each .log "
        "(kafka-dump-log's --max-bytes; default: all)",
    )  # fmt: skip
    p.add_argument(
        "--json", action="store_true",
        help="one JSON object per batch or index entry, the fields kafka-dump-log prints",
    )  # fmt: skip
    p.add_argument(
        "--bytes", choices=("hex", "base64", "utf8"), default="hex", help="how --json prints bytes"
    )
    p.add_argument("--quiet", action="store_true", help="no progress bar")
    specs_argument(p)
    p.add_argument("--kafka-version", type=_release, default=".".join(map(str, NEWEST)),
                   metavar="X.Y[.Z]",
                   help="print what that release's kafka-dump-log prints where releases differ "
                   "(4.1 prints the transaction log and LeaderChange records as JSON; 4.3 trims "
                   "producer snapshot lines; each reads damaged payloads its own way); X.Y is its "
                   f"newest patch release; default {'.'.join(map(str, NEWEST))}; a release no "
                   "test has run beside kafkacodec is refused")  # fmt: skip
    storage_arguments(p)
    for flag, what in DECODERS.items():
        p.add_argument(
            f"--{flag}-decoder", dest="decoders", action="append_const", const=flag,
            help=f"decode records as {what} (implies --print-data-log)",
        )  # fmt: skip
    p.add_argument(
        "--raw-data", dest="decoders", action="append_const", const="raw",
        help="print keys and values as text even in an internal topic (kafka-dump-log's "
        "default); without a decoder flag, --print-data-log decodes the records of an "
        "internal topic's directory with that topic's decoder",
    )  # fmt: skip


def _release(text: str) -> tuple[int, int]:
    from ..internal.dump_format import release

    try:
        return release(text)
    except ValueError as err:
        raise argparse.ArgumentTypeError(str(err)) from None


#: kafka-dump-log's decoder flags, and what each decodes.
DECODERS = {
    "offsets": "__consumer_offsets records (group and offset commit records)",
    "transaction-log": "__transaction_state records",
    "cluster-metadata": "__cluster_metadata records (KRaft metadata)",
    "remote-log-metadata": "__remote_log_metadata records (tiered storage)",
    "share-group-state": "__share_group_state records",
}


def _choose_decoder(args: argparse.Namespace) -> None:
    """args.decoder from the decoder flags given: as kafka-dump-log chooses (DumpLogSegments
    takes the first of its flags in DECODERS' order, whatever else is given), a decoder flag
    over --raw-data; said when more than one was given."""
    given = list(dict.fromkeys(args.decoders or []))
    kafka = [flag for flag in DECODERS if flag in given]
    args.decoder = kafka[0] if kafka else ("raw" if given else None)
    if len(given) > 1:
        flags = " and ".join(f"--{g}-decoder" if g != "raw" else "--raw-data" for g in given)
        print(f"kafkacodec dump: note: {flags}: kafka-dump-log decodes with the first of "
              f"{', '.join(DECODERS)} it is given (DumpLogSegments), and so does this dump: "
              f"--{args.decoder}-decoder", file=sys.stderr)  # fmt: skip


def run(args: argparse.Namespace) -> int:
    _choose_decoder(args)
    from .. import dump as dumplog
    from ..console import Progress, file_label
    from ..storage import size_of

    files = _files(args)
    total = sum(size_of(p) for p, s, _n in files if s not in dumplog.INDEX_SUFFIXES)
    show = not args.quiet and not sys.stdout.isatty()  # on a terminal the dump is the progress
    findings = dumplog.Findings()
    status = 0
    try:
        with Progress(total, "dump", quiet=not show) as progress:
            for path, suffix, name in files:
                if output_closed():
                    break
                progress.describe(file_label(path))
                if suffix in dumplog.INDEX_SUFFIXES:
                    status |= _index(args, path, suffix, findings, name)
                elif suffix == "state":
                    _state(args, path, name)
                else:
                    for lines in _log(args, path, suffix, findings, progress, name):
                        if output_closed():
                            break
                        out_lines(lines)
    except KafkaStops as stop:
        _stopped(args, stop, files)
        return 1
    for line in findings.lines():
        print(line, file=sys.stderr)
    if args.verify_index_only and findings.index_problems:
        status = 1
    if findings.decode_errors:
        print(f"kafkacodec dump: {len(findings.decode_errors)} records could not be decoded "
              f"(first: {findings.decode_errors[0][0]} offset {findings.decode_errors[0][1]})",
              file=sys.stderr)  # fmt: skip
        status |= 1
    return status


def _stopped(args: argparse.Namespace, stop: KafkaStops, files: list) -> None:
    """Where kafka-dump-log dies, the dump stops as it does: the record's line so far,
    without its newline (Kafka's stdout ends there), then on stderr what Kafka threw, and
    that nothing after it (the file's other records, the files after it, the summaries
    printed at the end) was printed."""
    out_lines(stop.partial)
    sys.stdout.flush()
    source, offset = stop.where or ("?", -1)
    release = ".".join(map(str, args.kafka_version))
    print(f"\nkafkacodec dump: {source}: record at offset {offset}: kafka-dump-log {release} stops here "
          f"({stop}), and so does this dump (--kafka-version); `kafkacodec records` reads on",
          file=sys.stderr)  # fmt: skip


def _files(args: argparse.Namespace) -> list[tuple[Path, str, str]]:
    """(path, kind, label) of each file to dump: kind is its suffix ("" for a file not
    named by Kafka, "state" for a state file), label how the output names it."""
    from ..internal.state_files import is_state_file
    from ..log.segment import parse_segment_name

    index_only = args.verify_index_only or args.index_sanity_check
    files = []
    for path, name in expand(args.paths, index_only=index_only, options=storage_options(args)):
        parsed = parse_segment_name(path.name)
        suffix = parsed[1] if parsed else path.suffix
        if is_state_file(path):
            suffix = "state"
        elif suffix not in (".log", ".bin", "", ".index", ".timeindex", ".txnindex", ".kafka",
                            ".checkpoint"):  # fmt: skip
            raise NotASegmentError(
                path, "not a .log, .checkpoint, .index, .timeindex, .txnindex, .snapshot, "
                ".kafka or state file",
            )  # fmt: skip
        files.append((path, suffix, name))
    return files


def _decoder(args: argparse.Namespace, path: Path):
    """The internal-topic parser for a file's records: the flag's, else (when printing
    data) that of the topic its directory names; None for plain text."""
    from ..internal.dump_format import TOPIC_DECODERS, Decoder
    from ..internal.topics import topic_of

    name = args.decoder
    if name == "raw":
        return None
    if name is None:
        topic = topic_of(path.resolve().parent.name)
        if path.suffix == ".checkpoint" and path.resolve().parent.name == "__cluster_metadata-0":
            topic = topic_of("__cluster_metadata-0")
        if topic is None or not args.print_data_log:
            return None
        name = TOPIC_DECODERS[topic.name]
    return Decoder(name, codecs_of(args), args.kafka_version)


def _state(args: argparse.Namespace, path: Path, name: str) -> None:
    from ..internal.state_files import dump_state_file

    lines, doc = dump_state_file(path, codecs_of(args), kafka=args.kafka_version)
    if args.json:
        out(json.dumps(doc))
    else:
        out(f"Dumping {name}")
        for line in lines:
            out(line)


def _index(args: argparse.Namespace, path: Path, suffix: str, findings, name: str) -> int:
    """Dump (or check) one index file; 1 when --index-sanity-check finds problems."""
    from .. import dump as dumplog

    if args.index_sanity_check and suffix != ".txnindex":  # Kafka dumps a .txnindex as it is
        line, problems = dumplog.index_sanity(path, suffix, name)
        out(f"Dumping {name}")
        out(line)
        for prob in problems:
            print(f"{path}: {prob}", file=sys.stderr)
        return int(bool(problems))
    if args.json:
        for row in dumplog.index_json(path, suffix):
            out(json.dumps(row))
    else:
        for line in dumplog.dump_index(path, suffix, verify_only=args.verify_index_only,
                                       findings=findings, name=name):  # fmt: skip
            out(line)
    return 0


def _log(args: argparse.Namespace, path: Path, suffix: str, findings, progress, name: str):
    """The lines of one log file (a segment, or a Kafka 0.7 .kafka file), in pieces of whole
    lines, each line ending with a newline."""
    from .. import dump as dumplog
    from ..log.kafka07 import Kafka07File
    from ..log.segment import parse_segment_name, sniff

    if args.decoder not in (None, "raw"):
        args.print_data_log = True  # a decoder flag implies printing the records' data
    deep = args.deep_iteration or args.print_data_log
    decoder = _decoder(args, path)
    if suffix == ".kafka":
        with Kafka07File(path) as f:
            if args.json:
                rows = dumplog.dump07_json(f, deep=deep, how=args.bytes, progress=progress)
                yield from (json.dumps(row) + "\n" for row in rows)
            else:
                lines = dumplog.dump07_text(f, deep=deep, print_data=args.print_data_log,
                                            progress=progress, name=name)  # fmt: skip
                yield from (line + "\n" for line in lines)
        return
    data = read_file(path, args.max_bytes, args)
    with damaged_if_named(parse_segment_name(path.name) is not None):
        sniff(data, path)
    if args.json:
        rows = dumplog.dump_json(path, data, deep=deep, how=args.bytes, max_bytes=args.max_bytes,
                                 progress=progress, decoder=decoder, findings=findings,
                                 kafka=args.kafka_version, codecs=codecs_of(args))  # fmt: skip
        yield from (json.dumps(row) + "\n" for row in rows)
    else:
        yield from dumplog.dump_text(path, data, deep=deep, print_data=args.print_data_log,
                                     max_bytes=args.max_bytes, findings=findings,
                                     progress=progress, decoder=decoder, name=name,
                                     kafka=args.kafka_version, codecs=codecs_of(args),
                                     blocks=True)  # fmt: skip

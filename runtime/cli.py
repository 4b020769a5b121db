"""The `kafkacodec` command line: dump, verify, lookup, records, recover, generate,
export-schemas.

Bad data or a wrong path prints one line on stderr (file, byte position, problem) and
exits with 1; a usage error exits with 2. Never a traceback for bad input.
"""

from __future__ import annotations

import argparse
import json
import os
import sys
from pathlib import Path

from .errors import KafkacodecError

EXAMPLES = {
    "dump": "kafkacodec dump --deep-iteration /var/lib/kafka/orders-0/00000000000000000000.log",
    "verify": "kafkacodec verify /var/lib/kafka            # a log.dirs, a partition or a file",
    "lookup": "kafkacodec lookup /var/lib/kafka/orders-0 --timestamp 1700000000000",
    "records": "kafkacodec records /var/lib/kafka/orders-0 --from-offset 1200 --limit 5",
    "recover": "kafkacodec recover /var/lib/kafka/orders-0 --repair",
    "generate": "kafkacodec generate --check",
    "export-schemas": "kafkacodec export-schemas --lang java --lang javascript --out kafka-parsers",
    "spark": "kafkacodec spark export /var/lib/kafka /data/kafka-parquet\n  kafkacodec spark stats /var/lib/kafka --master spark://head:7077",
}


def _parser() -> argparse.ArgumentParser:
    p = argparse.ArgumentParser(
        prog="kafkacodec", description="Read, search, verify and repair Kafka data on disk."
    )
    sub = p.add_subparsers(dest="command", required=True)

    def add(name, help_):
        return sub.add_parser(name, help=help_, description=help_, epilog=f"example:\n  {EXAMPLES[name]}",
                              formatter_class=argparse.RawDescriptionHelpFormatter)  # fmt: skip

    d = add(
        "dump",
        "print batches and records of .log files, or entries of index files, as kafka-dump-log does",
    )
    d.add_argument("paths", nargs="+", metavar="FILE|DIR")
    d.add_argument("--deep-iteration", action="store_true", help="also print every record")
    d.add_argument(
        "--print-data-log", action="store_true", help="also print keys and values (implies deep)"
    )
    d.add_argument("--index-sanity-check", action="store_true", help="only check index files")
    d.add_argument(
        "--verify-index-only", action="store_true", help="check index files against their log"
    )
    d.add_argument(
        "--max-bytes", type=int, default=None, help="read at most this many bytes of each .log"
    )
    d.add_argument(
        "--json", action="store_true", help="one JSON object per line (DESIGN.md contract)"
    )
    d.add_argument(
        "--bytes", choices=("hex", "base64", "utf8"), default="hex", help="how --json prints bytes"
    )
    d.add_argument("--quiet", action="store_true", help="no progress bar")

    v = add("verify", "check every batch's CRC and structure, and indexes against their log")
    v.add_argument("paths", nargs="+", metavar="PATH")
    v.add_argument("--json", action="store_true")
    v.add_argument("--quiet", action="store_true")

    look = add(
        "lookup",
        "Kafka's answer for an offset or a timestamp (-1 latest, -2 earliest, -3 max timestamp)",
    )
    look.add_argument("dir", metavar="DIR")
    g = look.add_mutually_exclusive_group(required=True)
    g.add_argument("--offset", type=int)
    g.add_argument("--timestamp", type=int)
    look.add_argument("--json", action="store_true")

    r = add("records", "records for humans: keys and values as text when UTF-8, headers shown")
    r.add_argument("dir", metavar="DIR")
    g = r.add_mutually_exclusive_group()
    g.add_argument("--from-offset", type=int)
    g.add_argument("--from-timestamp", type=int)
    r.add_argument("--limit", type=int, default=None)
    r.add_argument(
        "--read-committed", action="store_true", help="drop aborted transactions and markers"
    )

    rc = add("recover", "recovery dry run of a segment or partition; --repair applies it")
    rc.add_argument("path", metavar="SEGMENT|DIR")
    rc.add_argument(
        "--repair", action="store_true", help="truncate and rebuild indexes (journaled, backed up)"
    )
    rc.add_argument("--index-interval-bytes", type=int, default=4096)
    rc.add_argument("--json", action="store_true")
    rc.add_argument("--quiet", action="store_true", help="no progress bar")

    gen = add("generate", "regenerate generated/ from schemas/ (--check: fail when stale)")
    gen.add_argument("--check", action="store_true")

    ex = add(
        "export-schemas",
        "compile the schemas with the official Kaitai Struct compiler for other languages",
    )
    ex.add_argument("--lang", action="append", required=True, metavar="LANG",
                    help="a target of kaitai-struct-compiler (java, javascript, go, cpp_stl, python, ...); repeatable")  # fmt: skip
    ex.add_argument(
        "--out", type=Path, required=True, help="the folder to write (one subfolder per language)"
    )

    sp = add("spark", "Spark jobs over log directories (needs the pipeline extra: pyspark)")
    jobs = sp.add_subparsers(dest="job", required=True)
    for name, help_ in (("export", "write every record to Parquet, partitioned by topic and partition"),
                        ("stats", "per topic-partition: records, batches, bytes, codecs, timestamps, transactions"),
                        ("verify", "check every CRC, record and index, one Spark task per segment")):  # fmt: skip
        j = jobs.add_parser(name, help=help_, description=help_)
        j.add_argument("paths", nargs=1 if name == "export" else "+", metavar="LOGDIR")
        if name == "export":
            j.add_argument("out", metavar="OUT")
            j.add_argument(
                "--format", default="parquet", help="a Spark file format (default parquet)"
            )
            j.add_argument("--overwrite", action="store_true", help="replace OUT when it exists")
        else:
            j.add_argument("--json", action="store_true")
        if name == "stats":
            j.add_argument("--html", metavar="FILE", type=Path,
                           help="also write a self-contained HTML report with charts")  # fmt: skip
        j.add_argument("--master", help="a Spark master URL (default: embedded local[*])")
        j.add_argument("--conf", action="append", default=[], metavar="KEY=VALUE",
                       help="a Spark setting, e.g. spark.archives=env.tar.gz#environment; repeatable")  # fmt: skip
        if name != "verify":
            j.add_argument(
                "--isolation",
                choices=["read_uncommitted", "read_committed"],
                default="read_uncommitted",
            )
            j.add_argument("--on-corrupt", choices=["fail", "skip", "report"], default="fail",
                           help="damaged data: stop (fail), leave it out (skip), or leave it out "
                                "and list it (report; export writes OUT/_problems)")  # fmt: skip
        j.add_argument("--no-verify-crc", action="store_true")
    return p


def main(argv: list[str] | None = None) -> int:
    argv = list(sys.argv[1:] if argv is None else argv)
    if argv and argv[0] == "generate":  # before anything imports generated code
        from kafkacodec.generator.render import main as generate_main

        return generate_main(argv[1:])
    args = _parser().parse_args(argv)
    try:
        return {"dump": _dump, "verify": _verify, "lookup": _lookup, "records": _records,
                "recover": _recover, "export-schemas": _export, "spark": _spark}[args.command](args)  # fmt: skip
    except BrokenPipeError:  # `| head` stopped reading: not an error
        os.dup2(os.open(os.devnull, os.O_WRONLY), sys.stdout.fileno())
        return 0
    except KafkacodecError as err:
        print(f"kafkacodec {args.command}: {err}", file=sys.stderr)
        return 1
    except OSError as err:
        print(f"kafkacodec {args.command}: {err.filename}: {err.strerror}", file=sys.stderr)
        return 1


def _export(args) -> int:
    from .export import export

    results = export(args.out, args.lang)
    failed = [r for r in results if not r["ok"]]
    for lang in args.lang:
        done = [r for r in results if r["lang"] == lang and r["ok"]]
        files = sorted({f for r in done for f in r["files"]})
        _out(f"{lang}: {len(done)} schemas, {len(files)} files in {args.out / lang}")
    for r in failed:
        print(
            f"kafkacodec export-schemas: {r['schema']} ({r['lang']}): {r['error']}", file=sys.stderr
        )
    return 1 if failed else 0


def _spark(args) -> int:
    try:
        from kafkacodec.pipeline.cli import run
    except ImportError as err:
        raise KafkacodecError(
            f"Spark jobs need pyspark: pip install 'kafkacodec[pipeline]' ({err})"
        ) from None
    return run(args, _out)


def _out(line: str) -> None:
    sys.stdout.write(line + "\n")


def _expand(paths, *, index_only: bool = False) -> list[Path]:
    """Files named on the command line, and the segment files of each directory named
    (only its index files when `index_only`)."""
    from .errors import NotASegmentError

    wanted = {".index", ".timeindex", ".txnindex"} | (set() if index_only else {".log"})
    out = []
    for p in map(Path, paths):
        if p.is_dir():
            out.extend(sorted(c for c in p.iterdir() if c.suffix in wanted))
        elif p.exists():
            out.append(p)
        else:
            raise NotASegmentError(p, "no such file or directory")
    return out


def _read(path: Path):
    from .errors import NotASegmentError
    from .log.index import map_file

    data = map_file(path)[0]
    if data is None:
        raise NotASegmentError(path, "no such file")
    return data


def _dump(args) -> int:
    from . import dump
    from .errors import NotASegmentError
    from .log.segment import parse_segment_name, sniff
    from .progress import Progress

    index_only = args.verify_index_only or args.index_sanity_check
    files = []
    for path in _expand(args.paths, index_only=index_only):
        parsed = parse_segment_name(path.name)
        suffix = parsed[1] if parsed else path.suffix
        if suffix not in (".log", ".bin", "", ".index", ".timeindex", ".txnindex"):
            raise NotASegmentError(path, "not a .log, .index, .timeindex or .txnindex file")
        files.append((path, suffix))
    total = sum(p.stat().st_size for p, s in files if s not in dump.INDEX_SUFFIXES)
    show = not args.quiet and not sys.stdout.isatty()  # on a terminal the dump is the progress
    findings = dump.Findings()
    status = 0
    with Progress(total, "dump", quiet=not show) as progress:
        for path, suffix in files:
            progress.describe(path.name)
            if suffix in dump.INDEX_SUFFIXES:
                if args.index_sanity_check:
                    line, problems = dump.index_sanity(path, suffix)
                    _out(f"Dumping {path.name}")
                    _out(line)
                    for prob in problems:
                        print(f"{path}: {prob}", file=sys.stderr)
                    status |= bool(problems)
                elif args.json:
                    for row in dump.index_json(path, suffix):
                        _out(json.dumps(row))
                else:
                    for line in dump.dump_index(path, suffix, verify_only=args.verify_index_only,
                                                findings=findings):  # fmt: skip
                        _out(line)
                continue
            data = _read(path)
            sniff(data, path)
            deep = args.deep_iteration or args.print_data_log
            if args.json:
                for obj in dump.dump_json(path, data, deep=deep, how=args.bytes,
                                          max_bytes=args.max_bytes, progress=progress):  # fmt: skip
                    _out(json.dumps(obj))
            else:
                for line in dump.dump_text(path, data, deep=deep, print_data=args.print_data_log,
                                           max_bytes=args.max_bytes, findings=findings,
                                           progress=progress):  # fmt: skip
                    _out(line)
    sys.stdout.flush()
    for line in findings.lines():
        print(line, file=sys.stderr)
    if args.verify_index_only and findings.index_problems:
        status = 1
    return status


def _verify(args) -> int:
    from .batches import BatchIterator
    from .errors import DecodeError, NotASegmentError
    from .log import LogDirs, Partition, Segment, open_log
    from .log.segment import parse_segment_name, sniff
    from .progress import Progress

    problems: list[str] = []
    totals = {"segments": 0, "batches": 0, "records": 0, "bytes": 0}
    segments: list[tuple[Path, Segment | None]] = []
    for raw in args.paths:
        p = Path(raw)
        if p.is_file():
            parsed = parse_segment_name(p.name)
            has_indexes = parsed is not None and parsed[1] == ".log"
            segments.append((p, Segment(p.parent, parsed[0]) if has_indexes else None))
            continue
        log = open_log(p)
        for part in log.partitions if isinstance(log, LogDirs) else [log]:
            assert isinstance(part, Partition)
            segments.extend((s.path, s) for s in part.segments)
    total = sum(path.stat().st_size for path, _ in segments)
    with Progress(total, "verify", quiet=args.quiet) as progress:
        for path, seg in segments:
            progress.describe(path.name)
            totals["segments"] += 1
            data = _read(path)
            totals["bytes"] += len(data)
            try:
                sniff(data, path)
            except NotASegmentError as err:
                problems.append(str(err))
                continue
            walk = []
            it = BatchIterator(data, verify_crc=True, source=str(path))
            try:
                for b in it:
                    totals["batches"] += 1
                    totals["records"] += len(b.records())
                    walk.append((b.position, b.base_offset, b.last_offset, b.max_timestamp))
                    progress(b.size)
            except DecodeError as err:
                problems.append(str(err))
            else:
                if it.remaining:
                    problems.append(f"{path}: byte {it.position}: {it.remaining} bytes after the "
                                    "last complete batch")  # fmt: skip
            if seg is not None:
                problems.extend(seg.index_problems(walk))
                seg.close()
    if args.json:
        _out(json.dumps({**totals, "problems": problems, "clean": not problems}))
    else:
        _out(f"{totals['segments']} segments, {totals['batches']} batches, {totals['records']} records, "
             f"{totals['bytes']} bytes: {'clean' if not problems else f'{len(problems)} problems'}")  # fmt: skip
        for prob in problems:
            _out(f"  {prob}")
    return 0 if not problems else 1


def _partition(path):
    """The partition at `path`, each of its segments checked to start like a Kafka segment
    (a file of something else gets named, rather than read as an empty segment)."""
    from .log import Partition

    p = Partition(path)
    for seg in p.segments:
        seg.sniff()
    return p


def _lookup(args) -> int:
    p = _partition(args.dir)
    if args.offset is not None:
        seg = p.segment_for(args.offset) or (p.segments[0] if p.segments else None)
        found = seg.translate_offset(args.offset) if seg else None
        res = None if found is None else {"offset": args.offset, "batch_last_offset": found.offset,
                                          "segment": seg.path.name, "position": found.position, "size": found.size}  # fmt: skip
    else:
        found = p.list_offsets(args.timestamp)
        res = None if found is None else found._asdict()
    if args.json:
        _out(json.dumps(res))
    elif res is None:
        _out("no such offset")
    else:
        _out(" ".join(f"{k}: {v}" for k, v in res.items()))
    return 0


def _show(v) -> str:
    if v is None:
        return "null"
    try:
        return bytes(v).decode("utf-8")
    except UnicodeDecodeError:
        return "0x" + bytes(v).hex()


def _records(args) -> int:
    p = _partition(args.dir)
    start = args.from_offset
    if args.from_timestamp is not None:
        found = p.list_offsets(args.from_timestamp)
        if found is None:
            return 0
        start = found.offset
    n = 0
    for _seg, _batch, r in p.read(start, committed_only=args.read_committed):
        if args.limit is not None and n >= args.limit:
            break
        headers = ", ".join(f"{k}={_show(v)}" for k, v in r.headers)
        extra = f" control={r.control.type_name}" if r.control is not None else ""
        _out(f"offset {r.offset} {r.timestamp_type} {r.timestamp} key={_show(r.key)} value={_show(r.value)}"
             f"{' headers=[' + headers + ']' if headers else ''}{extra}")  # fmt: skip
        n += 1
    return 0


def _recover(args) -> int:
    from .errors import LogError
    from .log import LogDirs, Segment, open_log, recover_segment, repair
    from .log.recovery import TxnTracker, epochs_past, truncate_epochs
    from .log.segment import parse_segment_name
    from .progress import Progress

    path = Path(args.path)
    if path.is_file():
        parsed = parse_segment_name(path.name)
        if not parsed or parsed[1] != ".log":
            from .errors import NotASegmentError

            raise NotASegmentError(path, "not a segment (.log named by its base offset)")
        groups = [[Segment(path.parent, parsed[0])]]
    else:
        log = open_log(path)
        groups = [p.segments for p in (log.partitions if isinstance(log, LogDirs) else [log])]
    dirty = 0
    total = sum(s.size for g in groups for s in g)
    with Progress(total, "recover", quiet=args.quiet) as progress:
        for group in groups:
            tracker = TxnTracker()  # producer state runs across the segments of a partition
            for seg in group:
                progress.describe(seg.path.name)
                rep = recover_segment(seg, args.index_interval_bytes, tracker, progress)
                progress(rep.truncated_bytes)
                progress.clear()
                if args.repair and not rep.clean:
                    repair(seg, rep, index_interval_bytes=args.index_interval_bytes)
                # The log end is the last segment's: epochs starting at or after it go,
                # as Kafka's truncateFromEnd drops them when it loads the log.
                epochs = []
                if seg is group[-1] and _last_segment(seg):
                    try:
                        epochs = (truncate_epochs if args.repair else epochs_past)(
                            seg.dir, rep.next_offset
                        )
                    except LogError as err:  # the segments still get recovered
                        print(f"kafkacodec recover: {err}", file=sys.stderr)
                        dirty += 1
                _report_recovery(args, seg, rep, epochs)
                dirty += not rep.clean or bool(epochs)
                seg.close()
    return 0 if args.repair or not dirty else 1


def _last_segment(seg) -> bool:
    """Whether seg is its directory's last segment (a file named alone may not be)."""
    from .log.segment import parse_segment_name

    bases = [parsed[0] for c in seg.dir.iterdir()
             if (parsed := parse_segment_name(c.name)) and parsed[1] == ".log"]  # fmt: skip
    return seg.base_offset == max(bases, default=seg.base_offset)


def _report_recovery(args, seg, rep, epochs) -> None:
    if args.json:
        _out(json.dumps({**rep.to_dict(), "repaired": bool(args.repair and not rep.clean),
                         "dropped_epochs": [list(e) for e in epochs]}))  # fmt: skip
        return
    if rep.clean:
        _out(f"{seg.path}: clean, {rep.batches} batches, next offset {rep.next_offset}")
    else:
        verb = "cut" if args.repair else "would cut"
        _out(f"{seg.path}: byte {rep.invalid_position}: {rep.reason}; last valid offset "
             f"{rep.last_valid_offset}; {verb} {rep.truncated_bytes} bytes")  # fmt: skip
    if epochs:
        verb = "dropped" if args.repair else "would drop"
        listed = ", ".join(f"{e} from offset {o}" for e, o in epochs)
        _out(f"{seg.dir / 'leader-epoch-checkpoint'}: {verb} epochs past the log end "
             f"{rep.next_offset}: {listed}")  # fmt: skip

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

from .runtime.errors import KafkacodecError

EXAMPLES = {
    "dump": "kafkacodec dump --deep-iteration /var/lib/kafka/orders-0/00000000000000000000.log",
    "verify": "kafkacodec verify /var/lib/kafka            # a log.dirs, a partition or a file",
    "lookup": "kafkacodec lookup /var/lib/kafka/orders-0 --timestamp 1700000000000",
    "records": "kafkacodec records /var/lib/kafka/orders-0 --from-offset 1200 --limit 5",
    "recover": "kafkacodec recover /var/lib/kafka/orders-0 --repair",
    "generate": "kafkacodec generate --check",
    "sample": "kafkacodec sample /tmp/big-logdirs --size 4g --partitions 8",
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

    for define in (
        _add_dump,
        _add_verify,
        _add_lookup,
        _add_records,
        _add_recover,
        _add_sample,
        _add_generate,
        _add_export_schemas,
        _add_spark,
    ):
        define(add)
    return p


def _add_dump(add) -> None:
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


def _add_verify(add) -> None:
    v = add("verify", "check every batch's CRC and structure, and indexes against their log")
    v.add_argument("paths", nargs="+", metavar="PATH")
    v.add_argument("--json", action="store_true")
    v.add_argument("--quiet", action="store_true")
    v.add_argument("--max-problems", type=int, default=1000, metavar="N",
                   help="list at most N problems (the rest are counted); default 1000")  # fmt: skip


def _add_lookup(add) -> None:
    look = add(
        "lookup",
        "Kafka's answer for an offset or a timestamp (-1 latest, -2 earliest, -3 max timestamp)",
    )
    look.add_argument("dir", metavar="DIR")
    g = look.add_mutually_exclusive_group(required=True)
    g.add_argument("--offset", type=int)
    g.add_argument("--timestamp", type=int)
    look.add_argument("--json", action="store_true")


def _add_records(add) -> None:
    r = add("records", "records for humans: keys and values as text when UTF-8, headers shown")
    r.add_argument("dir", metavar="DIR")
    g = r.add_mutually_exclusive_group()
    g.add_argument("--from-offset", type=int)
    g.add_argument("--from-timestamp", type=int)
    r.add_argument("--limit", type=int, default=None)
    r.add_argument(
        "--read-committed", action="store_true", help="drop aborted transactions and markers"
    )
    r.add_argument("--skip-corrupt", action="store_true",
                   help="read past damaged bytes (as verify does) instead of stopping; each "
                        "stretch left out is named on stderr")  # fmt: skip


def _add_recover(add) -> None:
    rc = add(
        "recover", "Kafka's recovery of a partition or log.dirs, as a dry run; --repair applies it"
    )
    rc.add_argument("path", metavar="DIR|SEGMENT")
    rc.add_argument("--repair", action="store_true",
                    help="apply it: truncate the first bad segment, move every later one to the "
                         "backup, rebuild indexes (journaled; takes the log directory's .lock)")  # fmt: skip
    rc.add_argument("--backup", type=Path, metavar="DIR",
                    help="where moved and cut data go (default: kafkacodec-backup beside the "
                         "log directory; never inside a log directory)")  # fmt: skip
    rc.add_argument("--index-interval-bytes", type=int, default=4096)
    rc.add_argument("--json", action="store_true")
    rc.add_argument("--quiet", action="store_true", help="no progress bar")


def _add_sample(add) -> None:
    sm = add(
        "sample", "write a sample log.dirs of any size, for trying the Spark pipeline at scale"
    )
    sm.add_argument("out", metavar="OUT", type=Path, help="a new directory (refused if not empty)")
    sm.add_argument("--records", type=int, default=None, help="how many records (default 100000)")
    sm.add_argument("--size", help="or how many bytes on disk, e.g. 4g (the first reached stops)")
    sm.add_argument("--partitions", type=int, default=4)
    sm.add_argument("--topic", default="sample")
    sm.add_argument("--codecs", default="none,gzip,snappy,lz4,zstd",
                    help="comma-separated, used in turn batch by batch (default: all five)")  # fmt: skip
    sm.add_argument("--record-bytes", type=int, default=100, help="about how long a value is")
    sm.add_argument("--batch-records", type=int, default=50)
    sm.add_argument("--segment-bytes", default="1g", help="roll segments at this size (default 1g)")
    sm.add_argument("--quiet", action="store_true", help="no progress bar")


def _add_generate(add) -> None:
    gen = add("generate", "regenerate generated/ from schemas/ (--check: fail when stale)")
    gen.add_argument("--check", action="store_true")


def _add_export_schemas(add) -> None:
    ex = add(
        "export-schemas",
        "compile the schemas with the official Kaitai Struct compiler for other languages",
    )
    ex.add_argument("--lang", action="append", required=True, metavar="LANG",
                    help="a target of kaitai-struct-compiler (java, javascript, go, cpp_stl, python, ...); repeatable")  # fmt: skip
    ex.add_argument(
        "--out", type=Path, required=True, help="the folder to write (one subfolder per language)"
    )


def _add_spark(add) -> None:
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
    pk = jobs.add_parser("pack", help="pack the executors' Python environment (kafkacodec, numpy, "
                                      "pyarrow; no pyspark) for spark.archives")  # fmt: skip
    pk.add_argument("out", metavar="OUT.tar.gz", type=Path)
    pk.add_argument(
        "--wheel", type=Path, help="a kafkacodec wheel (default: built from this checkout)"
    )


def main(argv: list[str] | None = None) -> int:
    argv = list(sys.argv[1:] if argv is None else argv)
    if argv and argv[0] == "generate":  # before anything imports generated code
        try:
            from kafkacodec.generator.render import main as generate_main
        except ImportError as err:
            print(f"kafkacodec generate: the generator needs its extra: pip install "
                  f"'kafkacodec[generator]' ({err})", file=sys.stderr)  # fmt: skip
            return 2
        return generate_main(argv[1:])
    args = _parser().parse_args(argv)
    try:
        return {"dump": _dump, "verify": _verify, "lookup": _lookup, "records": _records,
                "recover": _recover, "export-schemas": _export, "spark": _spark,
                "sample": _sample}[args.command](args)  # fmt: skip
    except BrokenPipeError:  # `| head` stopped reading: not an error
        os.dup2(os.open(os.devnull, os.O_WRONLY), sys.stdout.fileno())
        return 0
    except KafkacodecError as err:
        print(f"kafkacodec {args.command}: {_safe(str(err))}", file=sys.stderr)
        return 1
    except OSError as err:
        where = f"{err.filename}: " if err.filename else ""
        print(f"kafkacodec {args.command}: {_safe(where)}{err.strerror}", file=sys.stderr)
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


def _sample(args) -> int:
    from . import units
    from .progress import Progress
    from .runtime.compression import CODEC_IDS
    from .sample import write_sized_log_dirs

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
    _out(f"wrote {args.out}: {res['records']} records in {res['batches']} batches over "
         f"{res['partitions']} partitions, {res['bytes']} bytes ({', '.join(codecs)})")  # fmt: skip
    return 0


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
    from .runtime.errors import NotASegmentError

    wanted = {".index", ".timeindex", ".txnindex"} | (set() if index_only else {".log", ".kafka"})
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
    from .log.index import map_file
    from .runtime.errors import NotASegmentError

    data = map_file(path)[0]
    if data is None:
        raise NotASegmentError(path, "no such file")
    return data


def _dump(args) -> int:
    from . import dump
    from .log.kafka07 import Kafka07File
    from .log.segment import parse_segment_name, sniff
    from .progress import Progress
    from .runtime.errors import NotASegmentError

    index_only = args.verify_index_only or args.index_sanity_check
    files = []
    for path in _expand(args.paths, index_only=index_only):
        parsed = parse_segment_name(path.name)
        suffix = parsed[1] if parsed else path.suffix
        if suffix not in (".log", ".bin", "", ".index", ".timeindex", ".txnindex", ".kafka"):
            raise NotASegmentError(path, "not a .log, .index, .timeindex, .txnindex or .kafka file")
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
            deep = args.deep_iteration or args.print_data_log
            if suffix == ".kafka":
                with Kafka07File(path) as f:
                    rows = (dump.dump07_json(f, deep=deep, how=args.bytes, progress=progress)
                            if args.json else
                            dump.dump07_text(f, deep=deep, print_data=args.print_data_log, progress=progress))  # fmt: skip
                    for row in rows:
                        _out(json.dumps(row) if args.json else row)
                continue
            data = _read(path)
            sniff(data, path)
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


#: Exit codes of verify and recover (README: "Exit codes").
CLEAN, PROBLEMS, UNCHECKED = 0, 1, 2


def _verify(args) -> int:
    from .log.fsio import size_or_zero
    from .log.index import Problems
    from .progress import Progress

    problems, notes, unchecked = Problems(args.max_problems), [], []
    totals = dict.fromkeys(("partitions", "segments", "batches", "records", "bytes",
                            "bad_regions", "unreadable_bytes"), 0)  # fmt: skip
    targets = []
    for raw in args.paths:
        try:
            targets += _verify_targets(Path(raw), totals, problems, notes)
        except KafkacodecError as err:
            unchecked.append(str(err))
    regions = []
    total = sum(size_or_zero(path) for path, _check in targets)
    with Progress(total, "verify", quiet=args.quiet) as progress:
        for path, check in targets:
            progress.describe(path.name)
            _verify_one(check, totals, problems, notes, unchecked, regions)
            progress(size_or_zero(path))
    checked = totals["segments"] > 0
    status = UNCHECKED if unchecked or not checked else PROBLEMS if problems else CLEAN
    if args.json:
        _out(json.dumps({**totals, "clean": status == CLEAN, "problems": problems.lines(),
                         "problems_total": problems.total, "bad_regions": regions[: args.max_problems],
                         "unchecked": unchecked, "notes": notes}))  # fmt: skip
    else:
        summary = (f"{totals['partitions']} partitions, {totals['segments']} segments, "
                   f"{totals['batches']} batches, {totals['records']} records, {totals['bytes']} bytes checked")  # fmt: skip
        if not checked:
            pass
        elif status == CLEAN:
            _out(f"{summary}: clean")
        elif problems:
            _out(f"{summary}: {problems.total} problems ({totals['bad_regions']} bad regions, "
                 f"{totals['unreadable_bytes']} bytes unreadable)")  # fmt: skip
        else:
            _out(f"{summary}: no problems in what was checked")
        for line in problems.lines():
            _out(f"  {_safe(line)}")
        for line in notes:
            _out(f"  note: {_safe(line)}")
    for line in unchecked:
        print(f"kafkacodec verify: could not check: {_safe(line)}", file=sys.stderr)
    return status


def _verify_targets(path: Path, totals, problems, notes) -> list:
    """(file, a function that checks it) for each segment a path names; LogError when it
    names nothing verify can check."""
    from .log import LogDirs, Partition, Segment, open_log
    from .log.fsio import lock_holder
    from .log.repair import pending
    from .log.segment import parse_segment_name
    from .runtime.errors import NotAPartitionError, NotASegmentError

    if not path.is_dir():
        if not path.exists() and not path.is_symlink():
            raise NotASegmentError(path, "no such file or directory")
        parsed = parse_segment_name(path.name)
        if parsed and parsed[1] == ".log":
            live = lock_holder(path.parent.parent) is not None
            return [_segment_target(Segment(path.parent, parsed[0]), live, True)]
        if path.suffix == ".kafka":
            return [_kafka07_target(path)]
        seg = Segment.standalone(path)
        seg.sniff()  # a file that is not Kafka data cannot be checked, only named
        return [_segment_target(seg, False, False)]
    log = open_log(path)
    if isinstance(log, LogDirs):
        problems.extend(log.problems)
        if not log.partitions and not log.problems:
            raise NotAPartitionError(path, "neither a partition directory nor a log.dirs: no "
                                           "<topic>-<partition> directories or segments in it")  # fmt: skip
        parts = log.partitions
    else:
        parts = [log]
    live = lock_holder(path if isinstance(log, LogDirs) else path.parent) is not None
    out = []
    for part in parts:
        assert isinstance(part, Partition)
        totals["partitions"] += 1
        problems.extend(part.problems)
        try:
            job = pending(part.path)
        except KafkacodecError as err:
            problems.add(str(err))
            job = None
        if job is not None:
            problems.add(job.describe())
        if part.kafka07 and not part.segments:
            out += [_kafka07_target(part.path / name) for name in part.kafka07]
            continue
        if not part.segments:
            if len(parts) == 1:
                raise NotAPartitionError(part.path, "holds no segments: nothing to verify")
            notes.append(f"{part.path}: holds no segments")
        out += [
            _segment_target(seg, live and seg is part.segments[-1], True) for seg in part.segments
        ]
    if not out:
        raise NotAPartitionError(path, f"no segments in any of its {len(parts)} partition "
                                       "directories: nothing to verify")  # fmt: skip
    return out


def _segment_target(seg, live: bool, indexes: bool):
    from .log.check import check_segment

    def check():
        try:
            return check_segment(seg, live=live, indexes=indexes)
        finally:
            seg.close()

    return seg.path, check


def _kafka07_target(path: Path):
    from .log.kafka07 import Kafka07File, check_file

    def check():
        with Kafka07File(path) as f:
            return check_file(f)

    return path, check


def _verify_one(check, totals, problems, notes, unchecked, regions) -> None:
    try:
        c = check()
    except KafkacodecError as err:
        unchecked.append(str(err))
        return
    totals["segments"] += 1
    totals["bytes"] += c.size
    totals["batches"] += c.batches
    totals["records"] += c.records
    totals["bad_regions"] += len(c.regions)
    totals["unreadable_bytes"] += c.unreadable_bytes
    for r in c.regions:
        problems.add(str(r))
        regions.append(r.to_dict())
    problems.extend(c.problems)
    notes += c.notes


def _safe(text: str) -> str:
    """Control characters escaped, so that a file name or a key cannot drive the terminal."""
    return "".join(ch if ch.isprintable() or ch == " " else ascii(ch)[1:-1] for ch in text)


def _partition(path):
    """The partition at `path`, each of its segments checked to start like a Kafka segment
    (a file of something else gets named, rather than read as an empty segment)."""
    from .log import Partition

    p = Partition(path)
    for seg in p.segments:
        seg.sniff()
    return p


def _kafka07(path):
    """A Kafka 0.7 partition (.kafka files, no .log), or None."""
    from .log.kafka07 import Kafka07Partition

    p = Path(path)
    if not p.is_dir() or any(c.suffix == ".log" for c in p.iterdir()):
        return None
    try:
        return Kafka07Partition(p)
    except KafkacodecError:
        return None


def _lookup07(args, p) -> int:
    if args.timestamp is not None:
        raise KafkacodecError(f"{p.path}: a Kafka 0.7 partition: its messages have no timestamps")
    m = p.lookup(args.offset)
    res = None if m is None else {"offset": args.offset, "message_offset": m.offset,
                                  "file": Path(m.source).name, "position": m.position, "size": m.size}  # fmt: skip
    if args.json:
        _out(json.dumps(res))
    else:
        _out("no such offset" if res is None else " ".join(f"{k}: {v}" for k, v in res.items()))
    return 0


def _lookup(args) -> int:
    k07 = _kafka07(args.dir)
    if k07 is not None:
        return _lookup07(args, k07)
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
    _notes(p)
    return 0


def _notes(p) -> None:
    """What the reads said about indexes they could not trust (on stderr)."""
    for seg in p.segments:
        for note in seg.notes:
            print(f"kafkacodec: note: {_safe(note)}", file=sys.stderr)


def _show(v) -> str:
    if v is None:
        return "null"
    try:
        return bytes(v).decode("utf-8")
    except UnicodeDecodeError:
        return "0x" + bytes(v).hex()


def _record_line(r) -> str:
    headers = ", ".join(f"{k}={_show(v)}" for k, v in r.headers)
    extra = f" control={r.control.type_name}" if r.control is not None else ""
    return _safe(f"offset {r.offset} {r.timestamp_type} {r.timestamp} key={_show(r.key)} "
                 f"value={_show(r.value)}{' headers=[' + headers + ']' if headers else ''}{extra}")  # fmt: skip


def _records(args) -> int:
    skipped = []
    on_damage = skipped.append if args.skip_corrupt else None
    k07 = _kafka07(args.dir)
    if k07 is not None:
        if args.from_timestamp is not None:
            raise KafkacodecError(
                f"{k07.path}: a Kafka 0.7 partition: its messages have no timestamps"
            )
        rows = ((None, None, r) for _f, _m, r in k07.read(args.from_offset, on_damage=on_damage))
        p = None
    else:
        p = _partition(args.dir)
        start = args.from_offset
        if args.from_timestamp is not None:
            found = p.list_offsets(args.from_timestamp)
            if found is None:
                return 0
            start = found.offset
        rows = p.read(start, committed_only=args.read_committed, on_damage=on_damage)
    n = 0
    for _seg, _batch, r in rows:
        if args.limit is not None and n >= args.limit:
            break
        _out(_record_line(r))
        n += 1
    if p is not None:
        _notes(p)
    for line in skipped:
        print(f"kafkacodec records: skipped: {_safe(line)}", file=sys.stderr)
    return 0


def _recover(args) -> int:
    """Kafka's recovery of each partition named (LogLoader's rule, see log/repair.py): a dry
    run by default, applied with --repair under the log directory's lock."""
    from .log.fsio import LogDirLock, size_or_zero
    from .progress import Progress

    groups = _recover_groups(Path(args.path))
    status = CLEAN
    total = sum(size_or_zero(s.path) for _ld, parts in groups for p in parts for s in p.segments)
    with Progress(total, "recover", quiet=args.quiet) as progress:
        for log_dir, parts in groups:
            try:
                lock = LogDirLock(log_dir).acquire() if args.repair else None
            except KafkacodecError as err:
                print(f"kafkacodec recover: {_safe(str(err))}", file=sys.stderr)
                status = UNCHECKED
                continue
            try:
                for part in parts:
                    status = max(status, _recover_partition(args, part, progress))
            finally:
                if lock is not None:
                    lock.release()
    return status


def _recover_groups(path: Path) -> list:
    """[(log directory, [partitions])] for a partition, a log.dirs, or a segment file (its
    partition: Kafka's rule is per partition, a bad segment ends the log there)."""
    from .log import LogDirs, Partition, open_log
    from .log.segment import parse_segment_name

    if path.is_file() or path.is_symlink():
        parsed = parse_segment_name(path.name)
        if not parsed or parsed[1] != ".log":
            from .runtime.errors import NotASegmentError

            raise NotASegmentError(path, "not a segment (.log named by its base offset)")
        path = path.parent
    log = open_log(path)
    if isinstance(log, LogDirs):
        for line in log.problems:
            print(f"kafkacodec recover: {_safe(line)}", file=sys.stderr)
        if not log.partitions:
            from .runtime.errors import NotAPartitionError

            raise NotAPartitionError(path, "neither a partition directory nor a log.dirs")
        return [(path, log.partitions)]
    assert isinstance(log, Partition)
    return [(path.parent, [log])]


def _recover_partition(args, part, progress) -> int:
    from .log import repair as R

    if not part.segments:
        what = ("a Kafka 0.7 partition (.kafka files): recover does not rewrite that format; "
                "verify and records read it" if part.kafka07 else "holds no segments: nothing to recover")  # fmt: skip
        print(f"kafkacodec recover: {_safe(str(part.path))}: {what}", file=sys.stderr)
        return UNCHECKED
    try:
        if args.repair:
            job = R.finish(part.path)
            if job is not None:
                _out(f"{_safe(str(part.path))}: finished an interrupted repair (backup in "
                     f"{_safe(str(job.backup))})")  # fmt: skip
                part.close()
                part = type(part)(part.path)
        else:
            job = R.pending(part.path)
            if job is not None:
                _report_pending(args, job)
                return PROBLEMS
        plan = R.plan(part, index_interval_bytes=args.index_interval_bytes, progress=progress)
        progress.clear()
        done = R.apply(plan, args.backup) if args.repair and not plan.refused else None
    except KafkacodecError as err:
        print(f"kafkacodec recover: {_safe(str(err))}", file=sys.stderr)
        return UNCHECKED
    finally:
        part.close()
    _report_plan(args, plan, done)
    if plan.refused:
        return UNCHECKED
    return CLEAN if plan.clean or args.repair else PROBLEMS


def _report_pending(args, job) -> None:
    why = job.mismatch
    if args.json:
        _out(json.dumps({"partition": str(job.partition), "pending_repair": str(job.path),
                         "backup": str(job.backup), "steps": len(job.steps), "done": job.done,
                         "mismatch": why}))  # fmt: skip
        return
    _out(_safe(job.describe()))
    if why:
        _out(f"  the files no longer match it ({_safe(why)}): it will not be applied")


def _report_plan(args, plan, done) -> None:
    name = _safe(str(plan.partition))
    if args.json:
        _out(json.dumps({**plan.to_dict(), "repaired": done is not None,
                         "backup": str(done.backup) if done else None}))  # fmt: skip
        return
    reps = plan.reports
    if plan.refused:
        _out(f"{name}: not repairable by kafkacodec: {_safe(plan.refused)}")
        return
    if plan.clean:
        _out(f"{name}: clean, {len(reps)} segments, {sum(r.batches for r in reps)} batches, "
             f"log end offset {plan.log_end_offset}")  # fmt: skip
        return
    would = "" if done else "would "
    _out(f"{name}: Kafka's recovery (LogLoader) {'did' if done else 'would do'} this:")
    t = plan.truncate
    if t is not None:
        _out(f"  {would}cut {t.truncated_bytes} bytes from byte {t.invalid_position} of "
             f"{Path(t.segment).name} to the backup ({_safe(t.reason or '')}); offsets up to "
             f"{t.last_valid_offset} stay; the cut bytes hold {plan.cut_batches} readable batches "
             f"({plan.cut_records} records)")  # fmt: skip
    segs = plan.moved_segments
    if plan.moves:
        batches = sum(m.batches or 0 for m in segs)
        records = sum(m.records or 0 for m in segs)
        size = sum(m.size for m in plan.moves)
        later = f"{len(segs)} later segment{'s' if len(segs) != 1 else ''}"
        _out(f"  {would}move {len(plan.moves)} files to the backup ({later}: {batches} batches, "
             f"{records} records; {size} bytes in all):")  # fmt: skip
        for m in plan.moves:
            counts = f", {m.batches} batches, {m.records} records" if m.batches is not None else ""
            _out(f"    {m.name}: {m.size} bytes{counts} ({m.why})")
    for r in plan.replaces:
        _out(f"  {would}rewrite {r.name} ({_safe(r.why)}; the old one to the backup)")
    if plan.dropped_epochs:
        listed = ", ".join(f"{e} from offset {o}" for e, o in plan.dropped_epochs)
        _out(f"  {would}drop epochs past the log end {plan.log_end_offset}: {listed} "
             "(leader-epoch-checkpoint)")  # fmt: skip
    _out(f"  log end offset after the repair: {plan.log_end_offset}")
    if done:
        _out(f"  backup: {_safe(str(done.backup))}")

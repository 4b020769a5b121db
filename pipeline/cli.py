"""`kafkacodec spark export | stats | verify | rewrite | pack | options`: the command line's Spark jobs, a
command of kafkacodec.cli (HELP, EXAMPLE, define, run) and, through main(), the program
spark-submit runs (submit.py). Defining the arguments needs no pyspark; running a job does
(the `pipeline` extra).
"""

from __future__ import annotations

import argparse
import json
import re
import sys
from pathlib import Path

from kafkacodec.console import control_note, counted, out, run_command
from kafkacodec.runtime.errors import KafkacodecError

HELP = "Spark jobs over log directories (needs the pipeline extra: pyspark)"
EXAMPLE = ("kafkacodec spark export /var/lib/kafka /data/kafka-parquet\n"
           "  kafkacodec spark stats /var/lib/kafka --master spark://head:7077")  # fmt: skip


def define(p: argparse.ArgumentParser) -> None:
    jobs = p.add_subparsers(dest="job", required=True)
    p.jobs = jobs.choices  # each job's parser (cli.main: its usage on a wrong argument)
    for name, help_ in (
        ("export", "write every record to Parquet, partitioned by topic and partition"),
        ("stats", "per topic-partition: records, batches, bytes, codecs, timestamps, transactions"),
        ("verify", "check every CRC, record and index, one Spark task per segment"),
    ):
        j = jobs.add_parser(name, help=help_, description=help_)
        j.add_argument("paths", nargs=1 if name == "export" else "+", metavar="LOGDIR",
                       help="a log.dirs or a partition directory, local or an object store's URL")  # fmt: skip
        if name == "export":
            j.add_argument("out", metavar="OUT",
                           help="where the records go (a directory; refused inside LOGDIR)")  # fmt: skip
            j.add_argument(
                "--format", default="parquet", help="a Spark file format (default parquet)"
            )
            j.add_argument("--overwrite", action="store_true", help="replace OUT when it exists")
        else:
            j.add_argument("--json", action="store_true", help="the answer as JSON")
        if name == "stats":
            j.add_argument(
                "--html",
                metavar="FILE",
                type=Path,
                help="also write a self-contained HTML report with charts",
            )
        _session_arguments(j)
        if name != "verify":
            j.add_argument(
                "--isolation",
                choices=["read_uncommitted", "read_committed"],
                default="read_uncommitted",
                help="read_committed leaves out aborted transactions and markers, as a consumer "
                "with isolation.level=read_committed (default read_uncommitted)",
            )
            j.add_argument(
                "--on-corrupt",
                choices=["fail", "skip", "report"],
                default="fail",
                help="damaged data: stop (fail), leave it out (skip), or leave it out "
                "and list it (report; export writes OUT/_problems)",
            )
        j.add_argument("--no-verify-crc", action="store_true",
                       help="do not check each batch's CRC (faster; damage goes unseen)")  # fmt: skip
        j.add_argument(
            "--storage-option", action="append", default=[], metavar="KEY=VALUE",
            help="an option of the object store LOGDIR names (s3://, gs://, abfs://, hdfs://), "
            "e.g. region=eu-west-1 or endpoint_override=URL; repeatable (the data source's "
            "storage.KEY options). The AWS environment applies on the driver and executors",
        )  # fmt: skip
    opts_help = ("list the options of the kafkacodec Spark data sources (Spark's kafka "
                 "source's, and kafkacodec's own), with what each does on log directories")  # fmt: skip
    jobs.add_parser("options", help=opts_help, description=opts_help)
    rw = jobs.add_parser(
        "rewrite", help=REWRITE_HELP, description=REWRITE_HELP + ". SRC and DST are where every "
        "executor sees them (a shared file system on a cluster)",
    )  # fmt: skip
    from kafkacodec.log.rewrite import add_arguments

    add_arguments(rw, src="a log.dirs or a partition directory")
    _session_arguments(rw)
    pack_help = ("pack the executors' Python environment (kafkacodec, numpy, pyarrow; no "
                 "pyspark) for spark.archives")  # fmt: skip
    pk = jobs.add_parser("pack", help=pack_help, description=pack_help)
    pk.add_argument("out", metavar="OUT.tar.gz", type=Path, help="the archive to write")
    pk.add_argument(
        "--wheel", type=Path, help="a kafkacodec wheel (default: built from this checkout)"
    )


REWRITE_HELP = ("write a log.dirs (or a partition) anew, one Spark task per partition, as "
                "`kafkacodec rewrite` writes it; --check writes nothing")  # fmt: skip


def _session_arguments(j: argparse.ArgumentParser) -> None:
    j.add_argument("--master", help="a Spark master URL (default: embedded local[*])")
    j.add_argument(
        "--conf",
        action="append",
        default=[],
        metavar="KEY=VALUE",
        help="a Spark setting, e.g. spark.archives=env.tar.gz#environment; repeatable",
    )


def main(argv: list[str] | None = None) -> int:
    """`kafkacodec spark ARGS` as a program of its own (what spark-submit runs)."""
    p = argparse.ArgumentParser(prog="kafkacodec spark", description=HELP)
    define(p)
    args = p.parse_args(sys.argv[1:] if argv is None else argv)
    return run_command("spark", lambda: run(args))


def run(args: argparse.Namespace) -> int:
    """Run one job on a local Spark (or the cluster --master names)."""
    if args.job == "pack":
        from .pack import pack

        res = pack(args.out, wheel=args.wheel)
        shown = [p for p in res["packages"] if not p.endswith((".dist-info", ".pth"))]  # importable names
        out(f"packed {res['path']}: {res['bytes'] / 1e6:.1f} MB, {len(shown)} packages ({', '.join(shown)})")
        return 0
    try:
        from pyspark.errors import PySparkException

        from . import jobs
    except ImportError as err:
        raise KafkacodecError(
            f"Spark jobs need pyspark: pip install 'kafkacodec[pipeline]' ({err})"
        ) from None
    if args.job == "options":  # (no Spark session: the table the parsers read)
        from .request import options_reference

        out(options_reference().rstrip("\n"))
        return 0
    if args.job == "rewrite":
        options: dict = {}
    else:
        options = _read_options(args)
    conf = {}
    for item in args.conf:
        key, sep, value = item.partition("=")
        if not sep or not key:
            raise KafkacodecError(f"--conf {item!r}: expected KEY=VALUE")
        conf[key.strip()] = value
    if args.job == "rewrite" and args.check == (args.dst is not None):
        print("kafkacodec spark rewrite: give DST to write, or --check to write nothing",
              file=sys.stderr)  # fmt: skip
        return 2
    before_spark(args)
    spark = jobs.session(args.master, conf=conf)
    try:
        return {"export": _export, "stats": _stats, "verify": _verify, "rewrite": _rewrite}[args.job](
            spark, args, options
        )
    except PySparkException as err:
        raise KafkacodecError(spark_message(err)) from None
    except KeyboardInterrupt:
        # Ctrl-C during the job reaches this process alone (Spark's JVM runs in a session
        # of its own: jobs.session): stop Spark (its jobs cancelled), then end what it
        # started; a second Ctrl-C while it stops ends them at once
        jobs.hush()  # what the JVM logs while its jobs are cancelled and it ends is no news
        try:
            spark.sparkContext.setLogLevel("OFF")
            spark.stop()
        except Exception:  # noqa: BLE001 (a py4j call the interrupt cut: the JVM is ended below)
            pass
        finally:
            spark = None
            jobs.end_spark()
        raise
    finally:
        if spark is not None:
            spark.stop()


#: Spark's master URLs (SparkContext.createTaskScheduler, SparkSubmit): what --master takes.
MASTER = re.compile(r"local(\[(\*|\d+)(,\s*\d+)?\])?|local-cluster\[\d+,\s*\d+,\s*\d+\]|"
                    r"(spark|k8s|mesos)://\S+|yarn")  # fmt: skip


def before_spark(args: argparse.Namespace) -> None:
    """What a job can be refused for before Spark starts (a JVM, tens of seconds): a master
    URL Spark has no scheduler for, a local LOGDIR or SRC that is not there, an export's
    OUT that exists without --overwrite. One line each, exit 2 (console.error_status)."""
    from kafkacodec.runtime.errors import NotASegmentError, RefusedError, UsageError

    from .jobs import _local

    if args.master is not None and not MASTER.fullmatch(args.master):
        raise UsageError(f"--master {args.master}: not a Spark master URL (local[*], local[N], "
                         "spark://HOST:PORT, yarn, k8s://URL)")  # fmt: skip
    paths = [args.src] if args.job == "rewrite" else list(args.paths)
    for raw in map(str, paths):
        if _local(raw) and not Path(raw.removeprefix("file://")).exists():
            raise NotASegmentError(raw, "no such file or directory")
    if args.job == "export" and not args.overwrite and _local(args.out):
        out_path = Path(args.out.removeprefix("file://"))
        if out_path.exists():
            raise RefusedError(args.out, "exists (give --overwrite to replace it)")


def _read_options(args: argparse.Namespace) -> dict:
    """The data source's options the reading jobs take from their arguments."""
    options = {"verify_crc": not args.no_verify_crc}
    from kafkacodec.storage import parse_options

    from .options import STORAGE_PREFIX

    options.update({STORAGE_PREFIX + k: v for k, v in parse_options(args.storage_option).items()})
    if args.job != "verify":
        options.update(isolation=args.isolation, on_corrupt=args.on_corrupt)
    return options


def _rewrite(spark, args, _options) -> int:
    from kafkacodec.log.rewrite import options_of

    from . import jobs

    summary = jobs.rewrite(spark, args.src, args.dst, **options_of(args))
    if args.json:
        out(json.dumps(summary.to_dict(), indent=1))
    else:
        for line in summary.lines():
            out(line)
    return 1 if args.check and summary.different else 0


def spark_message(err) -> str:
    """The kafkacodec error inside a Spark error (a Python worker's traceback), if any."""
    text = str(err)
    for line in reversed(text.splitlines()):
        if "kafkacodec" in line and "Error" in line:
            return line.strip()
    return text.splitlines()[0] if text else type(err).__name__


def _export(spark, args, options) -> int:
    from . import jobs

    mode = "overwrite" if args.overwrite else "errorifexists"
    res = jobs.export(spark, args.paths, args.out, fmt=args.format, mode=mode, **options)
    out(
        f"exported {res['records']} records to {args.out} ({args.format}, partitioned by topic, partition)"
    )
    if res["problems"] is not None:
        out(f"{res['problems']} problems (what was left out) written to {res['problems_path']}")
    _fetched(res["fetched"])
    return 0


def _fetched(d: dict | None, *, stream=None) -> None:
    """What the job's tasks fetched from object stores, when they fetched anything."""
    from kafkacodec.storage import Stats

    line = Stats(**d).describe() if d else None
    if line and stream is None:
        out(line)
    elif line:
        print(f"kafkacodec spark: {line}", file=stream)


#: What the columns of `spark stats` count (verify counts every record, control records
#: among them; the JSON rows carry the same fields).
STATS_LEGEND = ("records: data records, what a consumer is handed; control: control records "
                "(transaction markers) apart; offsets and time range: the first and last data record's")


def _stats(spark, args, options) -> int:
    from . import jobs, report
    from .meter import FetchMeter

    meter = FetchMeter(spark)
    options = {**options, "meter": meter}
    if args.html:
        data = jobs.report_data(spark, args.paths, **options)
        rows = data["stats"]
        title = "Kafka log: " + ", ".join(map(str, args.paths))
        args.html.write_text(report.render(data, title=title), encoding="utf-8")
    else:
        rows = jobs.stats(spark, args.paths, **options)
    if args.json:
        for row in rows:
            out(json.dumps(row))
    else:
        out(f"{'topic':<20} {'part':>4} {'records':>9} {'control':>7} {'offsets':>15} {'batches':>8} {'bytes':>10} "
            f"{'txn ok/aborted':>14}  codecs; time range (UTC)")  # fmt: skip
        for r in rows:
            offsets = "-" if r["first_offset"] is None else f"{r['first_offset']}..{r['last_offset']}"
            out(f"{r['topic']:<20} {r['partition']:>4} {r['records']:>9} {r['control_records']:>7} {offsets:>15} "
                f"{r['batches']:>8} {r['bytes']:>10} {str(r['committed']) + '/' + str(r['aborted']):>14}  "
                f"{','.join(r['codecs'])}; {r['min_timestamp'] or '-'} .. {r['max_timestamp'] or '-'}")  # fmt: skip
        if rows:
            out(STATS_LEGEND)
    _fetched(meter.as_dict(), stream=sys.stderr if args.json else None)
    if args.html and not args.json:
        out(f"report written to {args.html}")
    return 0


def _verify(spark, args, options) -> int:
    from . import jobs

    res = jobs.verify(spark, args.paths, **options)
    if args.json:
        out(json.dumps({k: v for k, v in res.items() if k != "per_segment"}))
    elif res["segments"]:
        state = "clean" if res["clean"] else counted(len(res['problems']), 'problem')
        out(f"{counted(res['segments'], 'segment')}, {counted(res['batches'], 'batch', 'batches')}, "
            f"{counted(res['records'], 'record')}{control_note(res['control_records'])}, "
            f"{counted(res['bytes'], 'byte')}: {state}")  # fmt: skip
        for problem in res["problems"]:
            out(f"  {problem}")
        _fetched(res["fetched"])
    if not res["segments"]:  # nothing checked is not clean (exit codes as `kafkacodec verify`)
        print(f"kafkacodec spark verify: could not check: no segments under {' '.join(map(str, args.paths))}",
              file=sys.stderr)  # fmt: skip
        return 2
    return 0 if res["clean"] else 1

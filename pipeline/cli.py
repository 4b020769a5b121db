"""`kafkacodec spark export | stats | verify`: the command line's Spark jobs (the parser is
in kafkacodec.cli, so that `kafkacodec --help` works without pyspark)."""

from __future__ import annotations

import json
import sys

from pyspark.errors import PySparkException

from kafkacodec.runtime.errors import KafkacodecError

from . import jobs, report


def run(args, out) -> int:
    """Run one job on a local Spark (or the cluster --master names); print with out."""
    if args.job == "pack":
        from .pack import pack

        res = pack(args.out, wheel=args.wheel)
        out(f"packed {res['path']}: {res['bytes'] / 1e6:.1f} MB, {len(res['packages'])} packages "
            f"({', '.join(p for p in res['packages'] if not p.endswith(('.dist-info', '.pth')))})")  # fmt: skip
        return 0
    options = {"verify_crc": not args.no_verify_crc}
    if args.job != "verify":
        options.update(isolation=args.isolation, on_corrupt=args.on_corrupt)
    conf = {}
    for item in args.conf:
        key, sep, value = item.partition("=")
        if not sep or not key:
            raise KafkacodecError(f"--conf {item!r}: expected KEY=VALUE")
        conf[key.strip()] = value
    spark = jobs.session(args.master, conf=conf)
    try:
        return {"export": _export, "stats": _stats, "verify": _verify}[args.job](
            spark, args, options, out
        )
    except PySparkException as err:
        raise KafkacodecError(spark_message(err)) from None
    finally:
        spark.stop()


def spark_message(err) -> str:
    """The kafkacodec error inside a Spark error (a Python worker's traceback), if any."""
    text = str(err)
    for line in reversed(text.splitlines()):
        if "kafkacodec" in line and "Error" in line:
            return line.strip()
    return text.splitlines()[0] if text else type(err).__name__


def _export(spark, args, options, out) -> int:
    mode = "overwrite" if args.overwrite else "errorifexists"
    res = jobs.export(spark, args.paths, args.out, fmt=args.format, mode=mode, **options)
    out(
        f"exported {res['records']} records to {args.out} ({args.format}, partitioned by topic, partition)"
    )
    if res["problems"] is not None:
        out(f"{res['problems']} problems (what was left out) written to {res['problems_path']}")
    return 0


def _stats(spark, args, options, out) -> int:
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
        out(
            f"{'topic':<20} {'part':>4} {'records':>9} {'batches':>8} {'bytes':>10} {'txn ok/aborted':>14}  codecs; time range"
        )
        for r in rows:
            out(f"{r['topic']:<20} {r['partition']:>4} {r['records']:>9} {r['batches']:>8} {r['bytes']:>10} "
                f"{str(r['committed']) + '/' + str(r['aborted']):>14}  {','.join(r['codecs'])}; "
                f"{r['min_timestamp'] or '-'} .. {r['max_timestamp'] or '-'}")  # fmt: skip
    if args.html and not args.json:
        out(f"report written to {args.html}")
    return 0


def _verify(spark, args, options, out) -> int:
    res = jobs.verify(spark, args.paths, verify_crc=options["verify_crc"])
    if args.json:
        out(json.dumps({k: v for k, v in res.items() if k != "per_segment"}))
    elif res["segments"]:
        state = "clean" if res["clean"] else f"{len(res['problems'])} problems"
        out(f"{res['segments']} segments, {res['batches']} batches, {res['records']} records, "
            f"{res['bytes']} bytes: {state}")  # fmt: skip
        for problem in res["problems"]:
            out(f"  {problem}")
    if not res["segments"]:  # nothing checked is not clean (exit codes as `kafkacodec verify`)
        print(f"kafkacodec spark verify: could not check: no segments under {' '.join(map(str, args.paths))}",
              file=sys.stderr)  # fmt: skip
        return 2
    return 0 if res["clean"] else 1

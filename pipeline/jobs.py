"""Spark jobs over Kafka log directories: export (to Parquet, partitioned by topic and
partition) and stats (per topic-partition). They run on an embedded local Spark by default
(local[*]) or on the cluster a master URL names."""

from __future__ import annotations

import contextlib
import functools
import json
import os
import subprocess
import sys
import threading
from pathlib import Path

from kafkacodec.units import utc_ms

from . import JAR, parquet
from .meter import FetchMeter, measured
from .options import Options, resolve
from .read import record_slices, segment_slices
from .request import Request
from .scan import PipelineError, check
from .source import register

#: What a record's control key says (FORMATS.md): bytes 2-3 are the type.
ABORT, COMMIT = 0, 1


def session(master: str | None = None, app: str = "kafkacodec", conf: dict | None = None):
    """A SparkSession with the kafkacodec formats registered.

    Under spark-submit, the session spark-submit configured (its master, its Python for
    the executors). Otherwise, with a master URL, that cluster; without one, local[*] with
    the UI off, bound to the loopback interface. Outside spark-submit, Python workers run
    this interpreter unless PYSPARK_PYTHON or spark.pyspark.python says otherwise (a
    packed environment shipped with spark.archives, see docs/spark.md). conf: more settings."""
    from pyspark.sql import SparkSession

    builder = SparkSession.builder.appName(app)
    if os.environ.get("PYSPARK_GATEWAY_PORT"):  # launched by spark-submit
        pass
    elif master is None:
        os.environ.setdefault("PYSPARK_PYTHON", sys.executable)
        builder = (
            builder.master("local[*]").config("spark.ui.enabled", "false")
            .config("spark.ui.showConsoleProgress", "false")
            .config("spark.driver.host", "127.0.0.1").config("spark.driver.bindAddress", "127.0.0.1")
        )  # fmt: skip
    else:
        os.environ.setdefault("PYSPARK_PYTHON", sys.executable)
        builder = builder.master(master)
    conf = dict(conf or {})
    if not os.environ.get("PYSPARK_GATEWAY_PORT") and JAR.is_file():
        # the JVM reader of the kafkacodec format (jvm/, source.py), with this Python planning
        conf["spark.jars"] = ",".join(filter(None, [conf.get("spark.jars"), str(JAR)]))
        conf.setdefault("spark.kafkacodec.python", sys.executable)
    for key, value in conf.items():
        builder = builder.config(key, value)
    here = not os.environ.get("PYSPARK_GATEWAY_PORT")  # this process starts Spark's JVM
    if here:
        _python_here((conf or {}).get("spark.pyspark.python") or os.environ.get("PYSPARK_PYTHON"))
        # py4j reports a call Ctrl-C cut on the root logger (its tracebacks on stderr):
        # the command says "interrupted" instead
        import logging

        logging.getLogger().addHandler(logging.NullHandler())
    try:
        if here:
            _own_session_gateway(conf)
        spark = builder.getOrCreate()
        if here:
            # Ctrl-C is the command's to answer (cli.run: stop Spark, end its JVM), not
            # pyspark's handler's (it cancels the jobs over a py4j call the interrupt cut)
            import signal

            signal.signal(signal.SIGINT, signal.default_int_handler)
        spark.sparkContext.setLogLevel("ERROR")
        register(spark)
    except BaseException as err:
        # Ctrl-C (or a failure) while Spark starts: pyspark started its JVM with SIGINT
        # ignored and may not hold it yet, so nothing would stop it; end it here
        if isinstance(err, KeyboardInterrupt):
            hush()
        end_spark()
        if isinstance(err, Exception) and "JAVA_GATEWAY_EXITED" in str(err):
            raise PipelineError("Spark's JVM exited before it started (its messages above; "
                                "is Java 17 or 21 installed, and JAVA_HOME right?)") from None  # fmt: skip
        raise
    return spark


def end_spark(wait: float = 10.0) -> None:
    """End Spark's JVM as it ends when its Python driver exits (Spark's PythonGatewayServer
    exits at the end of its stdin, cleaning up after itself), waiting `wait` seconds for
    it; then end whatever this process started that still runs (end_children)."""
    from pyspark import SparkContext

    gateway = SparkContext._gateway
    if gateway is not None:  # what a JVM cut short in its start or its job logs is no news
        try:
            log4j = gateway.jvm.org.apache.logging.log4j
            log4j.core.config.Configurator.setRootLevel(log4j.Level.OFF)
        except Exception:  # noqa: BLE001 (a JVM that no longer answers: ended below all the same)
            pass
    proc = getattr(gateway, "proc", None) or _JVM.get("proc")  # (a stopped context forgets it)
    if proc is not None:
        try:
            proc.stdin.close()
            proc.wait(timeout=wait)
        except (OSError, subprocess.TimeoutExpired):
            pass
    relay = _JVM.get("relay")
    if relay is not None:  # the JVM's last words, before this process's own
        relay.join(timeout=2.0)
    end_children()


#: The JVM process _own_session_gateway started (end_spark waits for it).
_JVM: dict = {}


def _own_session_gateway(conf: dict) -> None:
    """Start Spark's JVM (pyspark's gateway) in a session of its own, before the builder
    would start it in ours: Ctrl-C at the terminal then reaches this process alone, which
    stops Spark and ends the JVM (cli.run), instead of reaching the JVM's Python workers
    and planner too, each printing its own traceback."""
    from pyspark import SparkConf, SparkContext
    from pyspark.java_gateway import launch_gateway

    with SparkContext._lock:
        if SparkContext._gateway is not None:
            return
        spark_conf = SparkConf(loadDefaults=False)
        for key, value in conf.items():
            spark_conf.set(key, value)
        # its stderr (and its Python workers') through this process: what a JVM being
        # ended after Ctrl-C logs (cancelled tasks, connections refused) is no news (hush)
        SparkContext._gateway = launch_gateway(
            spark_conf, popen_kwargs={"start_new_session": True, "stderr": subprocess.PIPE}
        )
        SparkContext._jvm = SparkContext._gateway.jvm
        proc = _JVM["proc"] = getattr(SparkContext._gateway, "proc", None)
        if proc is not None and proc.stderr is not None:
            relay = _JVM["relay"] = threading.Thread(
                target=_relay, args=(proc.stderr.fileno(),), name="spark-stderr", daemon=True
            )
            relay.start()


#: Set once the command is interrupted: the JVM's stderr is dropped from then on.
_HUSHED = threading.Event()


def hush() -> None:
    """Drop what Spark's JVM prints from now on (Ctrl-C: it is being ended)."""
    _HUSHED.set()


def _relay(fd: int) -> None:
    """Copy the JVM's stderr to this process's, until the JVM closes it or hush()."""
    while chunk := os.read(fd, 65536):
        if not _HUSHED.is_set():
            try:
                os.write(2, chunk)
            except OSError:
                return


def end_children(grace: float = 2.0) -> None:
    """End every process this one started, and theirs (Spark's JVM, its Python workers):
    SIGTERM, then SIGKILL after `grace` seconds for what still runs. Linux (/proc); a no-op
    elsewhere."""
    import signal
    import time

    def children(pid: int) -> list[int]:
        try:
            text = Path(f"/proc/{pid}/task/{pid}/children").read_text()
        except OSError:
            return []
        return [int(c) for c in text.split()]

    found, todo = [], children(os.getpid())
    while todo:
        pid = todo.pop()
        found.append(pid)
        todo += children(pid)
    for sig in (signal.SIGTERM, signal.SIGKILL):
        for pid in found:
            try:
                os.kill(pid, sig)
            except OSError:
                pass
        deadline = time.monotonic() + grace
        while found and time.monotonic() < deadline:
            for pid in list(found):
                try:
                    done, _ = os.waitpid(pid, os.WNOHANG)
                except ChildProcessError:  # not ours to reap (a grandchild): is it there?
                    done = pid if not Path(f"/proc/{pid}").exists() else 0
                if done:
                    found.remove(pid)
            time.sleep(0.05)
        if not found:
            return


def _python_here(python: str | None) -> None:
    """The driver runs Python workers too (planning), with the executors' Python: a packed
    environment must be unpacked where the job starts. Say so rather than fail in Java."""
    if python and os.sep in python and not os.path.exists(python):
        raise PipelineError(f"{python} (PYSPARK_PYTHON) does not exist here: the driver runs Python "
                            "workers with it too; unpack the environment next to where the job "
                            "starts (mkdir environment && tar -xzf ENV.tar.gz -C environment)")  # fmt: skip


def _strings(options: dict) -> dict:
    """Options as Spark passes them: strings (booleans as true / false), None left out."""
    return {k: str(v).lower() if isinstance(v, bool) else str(v)
            for k, v in options.items() if v is not None}  # fmt: skip


def _local(out: str) -> bool:
    """Whether out is a file system path (or file:// URL) rather than another URL."""
    return "://" not in out or out.startswith("file://")


def _inputs(paths) -> list[str]:
    """Input paths as every process of the job must name them: absolute, resolved here on
    the driver (executors run in working directories of their own); URLs as they are."""
    return [str(resolve(p)) for p in paths]


def _slices_of(paths, opts: Options, *, split: bool = True):
    """The slices of a job that runs its own tasks (verify, the direct export): the paths
    resolved with the read's storage options."""
    return segment_slices([resolve(p, opts.storage_options) for p in paths], opts, split=split)


def _reader(spark, fmt: str, paths, options: dict):
    paths = _inputs(paths)
    reader = spark.read.format(fmt)
    for key, value in _strings(options).items():
        reader = reader.option(key, value)
    if len(paths) == 1:
        return reader.load(paths[0])
    return reader.option("paths", json.dumps([str(p) for p in paths])).load()


def export(
    spark, paths, out: str, *, fmt: str = "parquet", mode: str = "errorifexists",
    direct: bool | None = None, **options,
) -> dict:  # fmt: skip
    """Write every record under paths to out (Parquet by default), partitioned by topic and
    partition. Parquet to a path (not a URL such as s3a://) is written by the executors
    with pyarrow (parquet.py), other formats and URLs by Spark's writer; the output is
    the same (direct=True or False forces one). With on_corrupt=report, what could not be read is written as JSON rows to
    out/_problems (Spark's readers skip names starting with "_"). Returns the records
    written, and the problems with where they were written."""
    paths = _inputs(paths)
    if _local(str(out)):
        out = str(resolve(out))
    _apart(paths, str(out))
    for name in ("includeHeaders", "include_metadata"):  # an export keeps every column
        if not any(k.lower() == name.lower() for k in options):
            options = {**options, name: True}
    if direct is None:
        direct = fmt == "parquet" and _local(str(out))
    meter = FetchMeter(spark)
    if direct:
        strings = _strings(options)
        opts = Options.parse(strings)
        inputs = [resolve(p, opts.storage_options) for p in paths]
        slices = record_slices(inputs, opts, Request.parse(strings))
        written = parquet.export(spark, slices, Path(out), opts=opts, mode=mode, meter=meter.aid)
        if written is None:  # mode ignore, and out is there
            return {"records": 0, "problems": None, "fetched": meter.as_dict()}
        result = {"records": written, "problems": None}
    else:
        df = _reader(spark, "kafkacodec", paths, {**options, **meter.options})
        df.write.format(fmt).mode(mode).partitionBy("topic", "partition").save(str(out))
        result = {"records": spark.read.format(fmt).load(str(out)).count(), "problems": None}
    result["fetched"] = meter.as_dict()
    if options.get("on_corrupt") == "report":
        where = f"{str(out).rstrip('/')}/{PROBLEMS_DIR}"
        found = problems(spark, paths, **options)
        found.coalesce(1).write.mode("overwrite").json(where)
        result.update(problems=found.count(), problems_path=where)
    return result


#: Where a report run of export writes its problems, inside the output.
PROBLEMS_DIR = "_problems"


def problems(spark, paths, **options):
    """A DataFrame of what cannot be read under paths (the kafkacodec_problems format)."""
    return _reader(spark, "kafkacodec_problems", [str(p) for p in paths], options)


def verify(spark, paths, *, verify_crc: bool = True, **options) -> dict:
    """What `kafkacodec verify` checks, one Spark task per segment: every CRC, every
    record decoded, partial batches at the end, the indexes against their log. Returns
    totals, one entry per segment, the problems (strings naming file and byte) and what
    was fetched from object stores."""
    slices = _slices_of(_inputs(paths), Options.parse(_strings(options)), split=False)
    meter = FetchMeter(spark)
    checked = (
        spark.sparkContext.parallelize(slices, max(1, min(len(slices), 10000)))
        .map(functools.partial(_check, verify_crc=verify_crc, meter=meter.aid))
        .collect()
    )
    checked.sort(key=lambda c: (c["topic"], c["partition"], c["segment"]))
    totals = {key: sum(c[key] for c in checked) for key in ("batches", "records", "control_records", "bytes")}
    found = [p for c in checked for p in c["problems"]]
    return {"segments": len(checked), **totals, "problems": found,
            "clean": bool(checked) and not found, "per_segment": checked,
            "fetched": meter.as_dict()}  # fmt: skip


def _check(s, *, verify_crc: bool, meter: str) -> dict:
    with measured(meter):
        return check(s, verify_crc=verify_crc)


def _apart(inputs: list[str], out: str) -> None:
    """Refuse an output that is, holds or lies inside an input, before anything is written
    (an overwrite would delete the log.dirs it reads): paths compared once resolved, URLs
    by their text (s3:// and s3a:// name the same bucket)."""

    def key(text: str):
        if _local(text):
            return Path(os.path.realpath(text.removeprefix("file://")))
        scheme, _, rest = text.partition("://")
        scheme = {"s3a": "s3", "s3n": "s3", "gcs": "gs"}.get(scheme.lower(), scheme.lower())
        return Path("/", scheme, *[p for p in rest.split("/") if p])

    o = key(out)
    for raw in inputs:
        i = key(raw)
        if o == i or i in o.parents or o in i.parents:
            raise PipelineError(f"{out}: the output overlaps the input {raw}; choose an output "
                                "outside every input (and no input inside it)")  # fmt: skip


def _frames(spark, paths, options: dict):
    """What stats reads: the records, control records included, narrowed to the columns
    stats uses (with the control type, from bytes 2-3 of a control key); and the batches."""
    from pyspark.sql import functions as F

    opts = {**options, "include_control": True, "include_metadata": True}
    opts.pop("meter", None)
    if options.get("meter") is not None:  # what the reads fetch, added up (FetchMeter)
        opts.update(options["meter"].options)
    paths = [str(p) for p in paths]
    control_type = F.conv(F.hex(F.substring("key", 3, 2)), 16, 10).cast("int")
    records = _reader(spark, "kafkacodec", paths, opts).select(
        "topic", "partition", "offset", "timestamp", "is_control", "producer_id",
        control_type.alias("control_type"),
    )  # fmt: skip
    return records, _reader(spark, "kafkacodec_batches", paths, opts)


def _summaries(records, batches) -> list[dict]:
    from pyspark.sql import functions as F

    data = ~F.col("is_control")

    def markers(kind):  # control records of one type: COMMIT or ABORT
        return F.sum(F.when(F.col("is_control") & (F.col("control_type") == kind), 1).otherwise(0))

    per_record = records.groupBy("topic", "partition").agg(
        F.sum(F.when(data, 1).otherwise(0)).alias("records"),
        F.min(F.when(data, F.col("offset"))).alias("first_offset"),
        F.max(F.when(data, F.col("offset"))).alias("last_offset"),
        F.sum(F.when(data, 0).otherwise(1)).alias("control_records"),
        F.min(F.when(data, F.unix_millis("timestamp"))).alias("min_timestamp"),
        F.max(F.when(data, F.unix_millis("timestamp"))).alias("max_timestamp"),
        F.countDistinct(F.when(F.col("producer_id") >= 0, F.col("producer_id"))).alias("producers"),
        markers(COMMIT).alias("committed"),
        markers(ABORT).alias("aborted"),
    )  # fmt: skip
    per_batch = batches.groupBy("topic", "partition").agg(
        F.count(F.lit(1)).alias("batches"),
        F.sum("size").alias("bytes"),
        F.sort_array(F.collect_set("compression")).alias("codecs"),
        F.sort_array(F.collect_set("magic")).alias("magics"),
    )
    joined = per_batch.join(per_record, ["topic", "partition"], "left").orderBy(
        "topic", "partition"
    )
    out = []
    for row in joined.collect():
        d = row.asDict()
        for key in ("min_timestamp", "max_timestamp"):  # UTC to the millisecond, as Kafka keeps them
            if d[key] is not None:
                d[key] = utc_ms(d[key])
        d["records"] = d["records"] or 0
        d["control_records"] = d["control_records"] or 0
        out.append(d)
    return out


def stats(spark, paths, **options) -> list[dict]:
    """Per topic-partition: records (data records, what a consumer is handed) and control
    records apart, the first and last data record's offsets, batches, bytes, codecs, the
    data records' timestamp range (ISO 8601, UTC, milliseconds), producers, and the
    transactions committed and aborted (from the control records). meter=FetchMeter
    adds up what the reads fetch from object stores."""
    return _summaries(*_frames(spark, paths, options))


def report_data(spark, paths, *, buckets: int = 60, **options) -> dict:
    """Everything `stats --html` draws: the stats rows, records over time per partition
    (counts in `buckets` equal spans of time), batch sizes (counts per power of two of
    bytes) and the codec mix (batches, bytes, records per codec). The log is decoded once:
    the narrowed records and the batches are kept (memory, then disk) for every figure."""
    from pyspark import StorageLevel
    from pyspark.sql import functions as F

    records, batches = _frames(spark, paths, options)
    records = records.persist(StorageLevel.MEMORY_AND_DISK)
    batches = batches.persist(StorageLevel.MEMORY_AND_DISK)
    try:
        rows = _summaries(records, batches)
        stamped = records.where(~F.col("is_control") & F.col("timestamp").isNotNull())
        ms = F.unix_millis("timestamp")
        low, high = stamped.agg(F.min(ms), F.max(ms)).first()
        timeline = {}
        if low is not None:
            width = max(1, -(-(high - low + 1) // buckets))
            bucket = ((ms - low) / width).cast("int").alias("b")
            series = {}
            for r in stamped.groupBy("topic", "partition", bucket).count().collect():
                series.setdefault(f"{r['topic']}-{r['partition']}", [0] * buckets)[r["b"]] = r[
                    "count"
                ]
            timeline = {"start_ms": low, "bucket_ms": width, "series": dict(sorted(series.items()))}
        log2 = F.floor(F.log2(F.greatest(F.col("size"), F.lit(1)))).cast("int")
        sizes = {r["p"]: r["count"] for r in batches.groupBy(log2.alias("p")).count().collect()}
        codecs = [
            r.asDict()
            for r in batches.groupBy("compression")
            .agg(F.count(F.lit(1)).alias("batches"), F.sum("size").alias("bytes"),
                 F.sum(F.coalesce("num_records", F.lit(0))).alias("records"))
            .orderBy(F.desc("bytes")).collect()
        ]  # fmt: skip
    finally:
        records.unpersist()
        batches.unpersist()
    meter = options.get("meter")
    return {"stats": rows, "timeline": timeline, "batch_sizes": dict(sorted(sizes.items())),
            "codecs": codecs, "fetched": meter.as_dict() if meter is not None else None}  # fmt: skip


def rewrite(spark, src, dst=None, *, index_interval_bytes: int | None = None, **options):
    """`kafkacodec rewrite` of a log.dirs (or one partition) as a Spark job: one task per
    partition rebuilds it with log.rewrite (byte for byte, recompressed or converted: the
    same options and the same bytes as the command), into the job's staging directory
    beside dst; once every task is done the driver copies the log.dirs' own files and
    renames the staging directory to dst in one step (a failed job leaves nothing; a
    stopped one leaves the staging directory, which the next run rolls back). With dst
    None the tasks only check that every batch comes back byte for byte.

    src and dst are paths every executor sees at the same place (one machine, or a shared
    file system on a cluster: the tasks write there). index.interval.bytes as `rewrite`
    takes it: index_interval_bytes, else each topic's config from the cluster's metadata
    where the log.dirs holds it, else 4096. Returns the summary (log.rewrite.RewriteSummary),
    its tasks counted in `tasks`."""
    import time

    from ..internal.cluster import index_intervals
    from ..log import rewrite as rw
    from ..log.partition import LogDirs, open_log

    started = time.perf_counter()
    if not _local(str(src)) or (dst is not None and not _local(str(dst))):
        raise PipelineError(f"{src if not _local(str(src)) else dst}: a rewrite reads and writes "
                            "file systems (on a cluster, one every executor mounts), not object "
                            "stores")  # fmt: skip
    src = Path(str(resolve(src)))
    dst = None if dst is None else Path(str(resolve(dst)))
    rebuild = rw.rebuild_options(**options)
    log = open_log(src)
    try:
        if isinstance(log, LogDirs):
            if log.problems:
                raise PipelineError(f"{src} holds partitions that cannot be read: "
                                    + "; ".join(log.problems[:3]))  # fmt: skip
            parts, log_dir = sorted(str(p.path) for p in log.partitions), src
        else:
            parts, log_dir = [str(log.path)], src.parent
    finally:
        log.close()
    rw.refuse_held(log_dir)
    intervals = None
    if index_interval_bytes is None:  # read once, here: the tasks take it with them
        intervals = index_intervals(src, lambda problem: print(f"kafkacodec spark rewrite: {problem}",
                                                               file=sys.stderr))  # fmt: skip
    summary = rw.RewriteSummary(str(src), None if dst is None else str(dst),
                                {k: v for k, v in rebuild.items() if v is not None})  # fmt: skip
    task = functools.partial(_rewrite_partition, options=rebuild, interval=index_interval_bytes,
                             interval_for=intervals)  # fmt: skip

    def run(targets: list[str | None]) -> None:
        sc = spark.sparkContext
        with _job_group(sc, "kafkacodec rewrite"):
            done = (sc.parallelize(list(zip(parts, targets)), max(1, min(len(parts), 10000)))
                    .map(task).collect())  # fmt: skip
        for part in done:
            summary.merge(part)
        summary.tasks = len(parts)

    if dst is None:
        run([None] * len(parts))
    elif not isinstance(log, LogDirs):  # a partition: its task stages and renames dst itself
        rw.check_destination(src, dst)
        run([str(dst)])
    else:
        rw.check_destination(src, dst)
        with rw.staged(dst, summary) as stage:
            os.mkdir(stage, 0o755)
            run([str(stage / Path(p).name) for p in parts])
            rw.copy_log_dirs_files(src, stage, {Path(p).name for p in parts}, summary)
    summary.seconds = time.perf_counter() - started
    return summary


@contextlib.contextmanager
def _job_group(sc, description: str, timeout: float = 120):
    """The body's Spark jobs in a job group of their own. When the body fails (a task
    failed: Spark aborts the stage, but its other running tasks go on for a while), the
    group is cancelled and its tasks are waited for before the failure goes on, so that none
    still writes into the staging directory the caller then removes."""
    import time

    group = f"kafkacodec-{os.getpid()}-{time.monotonic_ns()}"
    sc.setJobGroup(group, description, interruptOnCancel=True)
    try:
        yield
    except BaseException:
        sc.cancelJobGroup(group)
        tracker = sc.statusTracker()
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            stages = [tracker.getStageInfo(s) for j in tracker.getJobIdsForGroup(group)
                      for s in (getattr(tracker.getJobInfo(j), "stageIds", None) or [])]  # fmt: skip
            if not any(st is not None and st.numActiveTasks > 0 for st in stages):
                break
            time.sleep(0.1)
        raise
    finally:
        sc.setLocalProperty("spark.jobGroup.id", None)
        sc.setLocalProperty("spark.job.description", None)
        sc.setLocalProperty("spark.job.interruptOnCancel", None)


def _rewrite_partition(item: tuple[str, str | None], *, options: dict, interval: int | None,
                       interval_for):  # fmt: skip
    """A task: one partition rewritten (or checked) by log.rewrite in this process. A
    partition an earlier attempt of the task finished (Spark retries a lost task) is
    rewritten afresh: the staging directory is the job's own."""
    import shutil

    from ..log.rewrite import STAGE_SUFFIX, rewrite

    src, target = item
    if target is not None and os.path.isdir(target) and Path(target).parent.name.endswith(STAGE_SUFFIX):
        shutil.rmtree(target)
    return rewrite(src, target, jobs=1, index_interval_bytes=interval, interval_for=interval_for,
                   **options)  # fmt: skip

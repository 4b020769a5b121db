"""The Spark jobs and the data source on a real standalone cluster: a master and two
workers started with pyspark's own `spark-class` on 127.0.0.1, each worker in a working
directory of its own (so that a path resolved against an executor's working directory
shows), the jobs run through the `kafkacodec` command line from a relative directory."""

import json
import os
import shutil
import socket
import subprocess
import sys
import tarfile
import time
import urllib.request
from pathlib import Path

import pytest

pytest.importorskip("pyspark")
pytestmark = [pytest.mark.spark, pytest.mark.slow]

import pyarrow.parquet as pq  # noqa: E402
from conftest import EXE  # noqa: E402
from test_readme import MASTER, cluster_session, shows  # noqa: E402

from kafkacodec.log import LogDirs  # noqa: E402
from kafkacodec.sample import write_cluster_disks, write_sample_log_dirs  # noqa: E402


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def _spark_class() -> Path:
    import pyspark

    return Path(pyspark.__file__).parent / "bin" / "spark-class"


def _wait(what: str, ok, timeout: float = 90) -> None:
    end = time.monotonic() + timeout
    while time.monotonic() < end:
        if ok():
            return
        time.sleep(0.5)
    raise TimeoutError(f"{what} did not come up in {timeout} s")


@pytest.fixture(scope="module")
def cluster(tmp_path_factory):
    """spark://127.0.0.1:PORT with two one-core workers; stopped after the module."""
    if shutil.which("java") is None:
        pytest.skip("Java is needed to run Spark")
    base = tmp_path_factory.mktemp("cluster")
    env = {**os.environ, "SPARK_LOCAL_IP": "127.0.0.1", "SPARK_HOME": str(_spark_class().parents[1]),
           "PYSPARK_PYTHON": sys.executable}  # fmt: skip
    port, ui = _free_port(), _free_port()
    procs, logs = [], []

    def start(name, args, cwd):
        cwd.mkdir(parents=True, exist_ok=True)
        log = open(base / f"{name}.log", "wb")
        logs.append(log)
        procs.append(subprocess.Popen([str(_spark_class()), *args], cwd=cwd, env=env,
                                      stdout=log, stderr=subprocess.STDOUT))  # fmt: skip

    start("master", ["org.apache.spark.deploy.master.Master", "--host", "127.0.0.1",
                     "--port", str(port), "--webui-port", str(ui)], base / "master")  # fmt: skip
    url = f"spark://127.0.0.1:{port}"

    def workers() -> int:
        try:
            with urllib.request.urlopen(f"http://127.0.0.1:{ui}/json/", timeout=2) as r:
                return len([w for w in json.load(r)["workers"] if w["state"] == "ALIVE"])
        except OSError:
            return 0

    try:
        _wait("the master", lambda: workers() == 0 and _answers(ui))
        for n in (1, 2):
            wd = base / f"worker{n}"
            start(f"worker{n}", ["org.apache.spark.deploy.worker.Worker", url, "--host", "127.0.0.1",
                                 "--cores", "1", "--memory", "1536m", "--work-dir", str(wd / "work"),
                                 "--webui-port", str(_free_port())], wd)  # fmt: skip
        _wait("two workers", lambda: workers() == 2)
        yield url, base
    finally:
        for p in procs:
            p.terminate()
        for p in procs:
            try:
                p.wait(30)
            except subprocess.TimeoutExpired:
                p.kill()
        for log in logs:
            log.close()


def _answers(ui: int) -> bool:
    try:
        urllib.request.urlopen(f"http://127.0.0.1:{ui}/json/", timeout=2).close()
        return True
    except OSError:
        return False


@pytest.fixture(scope="module")
def site(tmp_path_factory):
    """A job's directory: out/logdirs, a sample log.dirs, to be named relative to it."""
    d = tmp_path_factory.mktemp("site")
    write_sample_log_dirs(d / "out" / "logdirs", batches=60, segment_bytes=16 << 10)
    return d


def _records(root: Path, *, committed_only=False) -> int:
    return sum(1 for p in LogDirs(root).partitions for _s, _b, r in p.read(committed_only=committed_only)
               if r.control is None)  # fmt: skip


def _spark(site, cluster, *args, ok=True):
    url, _base = cluster
    out = subprocess.run([str(EXE), "spark", *args, "--master", url,
                          "--conf", "spark.executor.memory=512m", "--conf", "spark.cores.max=2"],
                         cwd=site, capture_output=True, text=True, timeout=600,
                         env={**os.environ, "SPARK_LOCAL_IP": "127.0.0.1"})  # fmt: skip
    if ok:
        assert out.returncode == 0, out.stderr[-4000:]
    assert "Traceback" not in out.stderr
    return out


def test_export_with_relative_paths_writes_every_record_where_the_driver_said(site, cluster):
    out = _spark(site, cluster, "export", "out/logdirs", "relout")
    want = _records(site / "out" / "logdirs")
    assert f"exported {want} records to relout" in out.stdout
    files = list((site / "relout").rglob("*.parquet"))
    assert files and sum(pq.read_metadata(f).num_rows for f in files) == want
    assert (site / "relout" / "_SUCCESS").exists()
    _url, base = cluster  # nothing was written under an executor's working directory
    assert not [p for p in base.rglob("*.parquet")]


def test_stats_and_verify_on_the_cluster(site, cluster):
    rows = [json.loads(x) for x in _spark(site, cluster, "stats", "out/logdirs", "--json").stdout.splitlines()
            if x.startswith("{")]  # fmt: skip
    assert sum(r["records"] for r in rows) == _records(site / "out" / "logdirs")
    v = _spark(site, cluster, "verify", "out/logdirs", "--json")
    res = json.loads(next(x for x in v.stdout.splitlines() if x.startswith("{")))
    assert res["clean"] and res["segments"] == sum(
        len(p.segments) for p in LogDirs(site / "out" / "logdirs").partitions
    )


def test_an_output_overlapping_the_input_is_refused(site, cluster):
    before = sorted(p.name for p in (site / "out" / "logdirs").rglob("*"))
    for target in ("out/logdirs", "out"):
        res = _spark(site, cluster, "export", "out/logdirs", target, "--overwrite", ok=False)
        assert res.returncode == 1 and "overlaps the input" in res.stderr
    assert sorted(p.name for p in (site / "out" / "logdirs").rglob("*")) == before


def test_a_clusters_disks_read_once_on_the_cluster_from_paths_and_from_a_bucket(site, cluster, s3_server):
    """Three brokers' log.dirs (replication factor 3, after an unclean election), as every
    worker sees them and as one bucket prefix per broker: Spark's stats count each
    partition once, from the replica Kafka would serve (kafkacodec.brokers), not three
    times (issue 56)."""
    from kafkacodec.brokers import open_disks
    from kafkacodec.log import open_log

    w = write_cluster_disks(site / "out" / "disks", records=400, scenario="unclean", set_apart=True)
    dirs = [Path(d) for ds in w["log_dirs"].values() for d in ds]
    want = {(p.topic, p.partition): sum(1 for _s, _b, r in p.read() if r.control is None)
            for p in open_disks([open_log(d) for d in dirs]).served()}  # fmt: skip
    o0 = w["partitions"]["orders-0"]
    assert want[("orders", 0)] == o0["ends"][o0["leader"]] == 160  # the new leader's log, not all three

    def stats(*args):
        rows = [json.loads(x) for x in _spark(site, cluster, "stats", *args, "--json").stdout.splitlines()
                if x.startswith("{")]  # fmt: skip
        return {(r["topic"], r["partition"]): r["records"] for r in rows}

    assert stats(*(str(d.relative_to(site)) for d in dirs)) == want
    s3_server.bucket("disks")
    urls = []
    for d in dirs:  # s3://disks/broker-N/<log dir>
        url = f"s3://disks/{d.parent.name}/{d.name}"
        s3_server.upload(d, url)
        urls.append(url)
    assert stats(*urls, "--storage-option", f"endpoint_override={s3_server.endpoint}") == want


#: A driver of its own, started in the job's directory: a relative path is resolved where the
#: driver runs (a JVM that pytest started earlier, in another directory, would not do).
_QUERIES = """
import json, sys
from kafkacodec.pipeline.jobs import session
spark = session(sys.argv[1], conf={"spark.executor.memory": "512m", "spark.cores.max": "2"})
try:
    df = spark.read.format("kafkacodec").load("out/logdirs")  # relative: resolved here
    print(json.dumps([df.count(), df.where("offset >= 100").count(), df.count(),
                      spark.read.format("kafkacodec").option("starting_offset", 100)
                      .load("out/logdirs").count()]))
finally:
    spark.stop()
"""


def test_data_source_queries_on_the_cluster(site, cluster):
    url, _base = cluster
    out = subprocess.run([sys.executable, "-c", _QUERIES, url], cwd=site, capture_output=True,
                         text=True, timeout=600, env={**os.environ, "SPARK_LOCAL_IP": "127.0.0.1"})  # fmt: skip
    assert out.returncode == 0, out.stderr[-4000:]
    total = _records(site / "out" / "logdirs")
    high = sum(1 for p in LogDirs(site / "out" / "logdirs").partitions for _s, _b, r in p.read()
               if r.control is None and r.offset >= 100)  # fmt: skip
    assert json.loads(out.stdout.strip().splitlines()[-1]) == [total, high, total, high]


def test_rewrite_on_the_cluster_writes_what_the_command_writes(site, cluster, tmp_path):
    """Relative paths resolved by the driver; every executor writes its partitions into the
    job's staging directory, which the driver renames."""
    out = _spark(site, cluster, "rewrite", "out/logdirs", "rewritten", "--compression", "zstd", "--magic", "2")
    assert "rewrote" in out.stdout and "Spark tasks" in out.stdout
    here = subprocess.run([str(EXE), "rewrite", str(site / "out" / "logdirs"), str(tmp_path / "here"),
                           "--compression", "zstd", "--magic", "2"], capture_output=True, text=True, timeout=600)  # fmt: skip
    assert here.returncode == 0, here.stderr

    def files(d):
        return {p.relative_to(d).as_posix(): p.read_bytes() for p in sorted(d.rglob("*")) if p.is_file()}

    assert files(site / "rewritten") == files(tmp_path / "here")
    assert not list(site.glob(".*kafkacodec-rewrite"))
    check = _spark(site, cluster, "rewrite", "out/logdirs", "--check", "--json")
    summary = json.loads(check.stdout[check.stdout.index("{"):])
    assert summary["different"] == 0 and summary["tasks"] == len(LogDirs(site / "out" / "logdirs").partitions)
    shutil.rmtree(site / "rewritten")


@pytest.fixture(scope="module")
def page_session(cluster, tmp_path_factory):
    """docs/spark.md's run on a standalone cluster, command by command in one shell as the
    page shows it (its master being this cluster's), in an empty directory shown as
    /tmp/job: (the job's directory, the steps, what each printed on stdout and stderr)."""
    url, _base = cluster
    steps = cluster_session()
    mark = "=== kafkacodec page step ==="
    script = ["set -e"]
    for _n, cmd, _out in steps:
        shell = cmd.replace(MASTER, url).replace("kafkacodec ", f"{EXE} ", 1) if cmd.startswith("kafkacodec ") else cmd
        script += [f"echo '{mark}'; echo '{mark}' >&2", shell]
    job = tmp_path_factory.mktemp("page") / "job"
    job.mkdir()
    res = subprocess.run(["bash", "-c", "\n".join(script)], cwd=job, capture_output=True, text=True, timeout=900,
                         env={**os.environ, "SPARK_LOCAL_IP": "127.0.0.1"})  # fmt: skip
    assert res.returncode == 0, res.stderr[-4000:]
    outs = [t.replace(str(job), "/tmp/job").splitlines() for t in res.stdout.split(mark + "\n")[1:]]
    errs = [t.splitlines() for t in res.stderr.split(mark + "\n")[1:]]
    assert len(outs) == len(errs) == len(steps)
    return job, steps, list(zip(outs, errs))


def test_the_pages_cluster_session_prints_what_it_shows(page_session):
    """`kafkacodec sample`, `spark pack`, the archive unpacked where the job starts, then
    `spark export` and `spark verify` with it (spark.archives) on the cluster."""
    _job, steps, printed = page_session
    assert {c.split()[1] for _n, c, _o in steps if c.startswith("kafkacodec ")} == {"sample", "spark"}
    assert any("spark.archives=" in c for _n, c, _o in steps) and any("PYSPARK_PYTHON" in c for _n, c, _o in steps)
    wrong = [f"docs/spark.md:{n}: $ {cmd}\n  shown: {want}\n  printed: {got}"
             for (n, cmd, want), got in zip(steps, printed) if not shows(want, got)]  # fmt: skip
    assert not wrong, "\n".join(wrong)


def test_the_packed_environment_holds_kafkacodec_and_leaves_pyspark_to_the_workers(page_session):
    job, _steps, _printed = page_session
    env = job / "kafkacodec-env.tar.gz"
    with tarfile.open(env) as t:
        names = t.getnames()
    assert any("/site-packages/kafkacodec/" in n for n in names)
    assert any("/site-packages/pyarrow/" in n for n in names)
    assert not any("/site-packages/pyspark/" in n for n in names)  # the workers bring it
    assert env.stat().st_size < 200e6
    exported = list((job / "out" / "parquet").rglob("*.parquet"))
    assert sum(pq.read_metadata(f).num_rows for f in exported) == _records(job / "out" / "logdirs")

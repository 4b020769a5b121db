"""The shown command output of the README and of every page of the documentation site
(docs/) comes from runs these tests repeat: every `$ kafkacodec` example is run against
what the tests make (the `make demo` log.dirs in out/logdirs, the shared vectors in
tests/vectors, out/damaged: that log.dirs' orders-0 with two damaged batches, and
out/consumer-offsets: a __consumer_offsets partition, out/cluster: three brokers' disks
after an unclean leader election, as make demo writes them; a corpus, a bucket in moto's S3 server, a tiered partition in Aiven's
layout, generate --check) and its output compared with the page's, line for line; the
Spark examples on a local Spark, the cluster session on a standalone cluster
(tests/pipeline/test_cluster.py). A shown command that no test runs fails. The ```pycon
blocks are doctests.

In a page's output, a line "..." stands for any lines, and "..." inside a line for any text
(a backup's time stamp, a time taken, a long line cut short). An example's output ends at
the first blank line."""

from __future__ import annotations

import contextlib
import fcntl
import re
import shutil
import subprocess
import sys
from pathlib import Path

import pytest
from conftest import EXE, ROOT
from groups_sample import write_groups_log_dirs

import kafkacodec as kc
from kafkacodec.log import Partition
from kafkacodec.sample import (
    write_cluster_disks,
    write_consumer_offsets,
    write_damaged_copy,
    write_sample_log_dirs,
)

README = ROOT / "README.md"
#: The object-store URL of the pages' examples: make demo's log.dirs in moto's S3 server.
BUCKET = "s3://kafka-backup/broker-1"
#: Where the pages' tiered partition is, as Aiven's RemoteStorageManager wrote it (the
#: plugin's key prefix "kafka/"), and its topic id and remote segments' ids.
TIERED, TOPIC_ID = "s3://tiered-storage/kafka/", "MWJ6FHTfRYy67jzwZdeqSQ"
SEGMENT_IDS = {0: "8XHtG3Ftpf7AxOudM0xFBw", 1470: "6BEouvppv_eTQw09udBr4A"}
#: The pages whose examples run: the README and the documentation site's.
PAGES = [README, *sorted((ROOT / "docs").rglob("*.md"))]
#: The page that shows `make demo`'s output (after the marker below).
DEMO_PAGE = ROOT / "docs" / "getting-started.md"
#: Where a README example's paths come from: what these tests make, or the checkout.
RUNNABLE = ("out/logdirs", "tests/vectors", "out/damaged", "out/consumer-offsets", "out/cluster", "/tmp/kafka-corpus",
            "generate --check",
            "records /tmp", "specs diff kafka-specs/", "/tmp/groups", "export-schemas ",
            BUCKET, TIERED, "broker/orders-0", "remote-log broker")  # fmt: skip


def examples(text: str) -> list[tuple[int, str, list[str]]]:
    """(line number, command, output lines) of each `$ kafkacodec ...` in an indented block."""
    return [step for block in sessions(text) for step in block if step[1].startswith("kafkacodec ")]


def sessions(text: str) -> list[list[tuple[int, str, list[str]]]]:
    """The indented blocks that show commands, each as its (line number, command, output
    lines), every command (`$ mkdir ...`, `$ export ...` too) in the order shown."""
    out: list[list[tuple[int, str, list[str]]]] = []
    block: list[tuple[int, str, list[str]]] | None = None
    current = None
    for n, line in enumerate(text.splitlines(), start=1):
        indented = line.startswith("    ")
        body = line[4:] if indented else None
        if body is not None and body.startswith("$ "):
            current = (n, body[2:].split("  #")[0].strip(), [])
            if block is None:
                block = []
                out.append(block)
            block.append(current)
        elif current is not None and not line.strip():
            if current[2]:
                current = block = None  # a blank line ends an example's output
        elif current is not None and indented:
            current[2].append(body)
        elif current is not None or not indented:
            current = block = None  # prose: the block ended
    return [[(n, cmd, _trim(lines)) for n, cmd, lines in b] for b in out]


def code_block(page: str, containing: str) -> str:
    """The indented code block of a page (a path below the checkout) that holds the text
    `containing`, dedented: for the tests that run a page's snippet against what it needs
    (a broker, a stream's sink)."""
    text, found = (ROOT / page).read_text(), []
    for chunk in re.split(r"\n(?=\S)", text):  # prose lines start blocks' neighbours
        lines = chunk.splitlines()[1:]
        body = "\n".join(line[4:] for line in lines if line.startswith("    ") or not line.strip()).strip("\n")
        if containing in body:
            found.append(body)
    assert len(found) == 1, f"{page}: {len(found)} blocks hold {containing!r}"
    return found[0]


def exec_shown(code: str, shown: dict[str, object], names: dict) -> dict:
    """Run a page's snippet with each string literal it shows (a broker's address, a path)
    replaced by the test's value; each must be in the snippet, so a page that changed
    fails here. names: the snippet's globals (`spark`), returned with what it defined."""
    for literal, value in shown.items():
        assert f'"{literal}"' in code, f"the snippet no longer shows {literal!r}"
        code = code.replace(f'"{literal}"', repr(value))
    exec(code, names)
    return names


def _trim(lines: list[str]) -> list[str]:
    while lines and not lines[-1].strip():
        lines.pop()
    return lines


def matches(want: list[str], got: list[str]) -> bool:
    """Whether got is what want shows ("..." lines and "..." inside lines: see the module)."""
    if not want:
        return not got
    head, rest = want[0], want[1:]
    if head.strip() == "...":
        return any(matches(rest, got[i:]) for i in range(len(got) + 1))
    if not got:
        return False
    pattern = ".*".join(map(re.escape, head.rstrip().split("...")))
    return re.fullmatch(pattern, got[0].rstrip()) is not None and matches(rest, got[1:])


#: The master of the pages' cluster session, run on a standalone cluster by
#: tests/pipeline/test_cluster.py (cluster_session).
MASTER = "spark://127.0.0.1:7077"


def cluster_session() -> list[tuple[int, str, list[str]]]:
    """The commands of docs/spark.md's run on a standalone cluster, in order."""
    (block,) = [b for b in sessions((ROOT / "docs" / "spark.md").read_text()) if any(MASTER in c for _n, c, _o in b)]
    return block


def runnable(cmd: str, spark: bool) -> bool:
    if " ... " in f"{cmd} " or ("kafkacodec spark " in cmd) != spark:
        return False
    if MASTER in cmd or cmd.startswith(("kafkacodec sample ", "kafkacodec spark pack ")):
        return False  # the cluster session (tests/pipeline/test_cluster.py runs it)
    buckets = cmd.count(BUCKET) + cmd.count(TIERED)
    return any(where in cmd for where in RUNNABLE) and cmd.count("s3://") == buckets


@pytest.fixture(scope="module")
def place(tmp_path_factory) -> Path:
    """A working directory with what the examples read: out/logdirs, tests -> the checkout's
    tests, and /tmp's stand-ins (rd, kafka-corpus's parent)."""
    d = tmp_path_factory.mktemp("readme")
    write_sample_log_dirs(d / "out" / "logdirs")
    (d / "tests").symlink_to(ROOT / "tests")
    (d / "kafka-specs").symlink_to(ROOT.parent / "shared" / "kafka-specs")  # Kafka's specs, as shared
    (d / "tmp").mkdir()
    write_consumer_offsets(d / "out" / "consumer-offsets")  # as make demo writes it
    write_cluster_disks(d / "out" / "cluster", scenario="unclean", set_apart=True)
    write_groups_log_dirs(d / "tmp" / "groups")  # commits, a tombstone, transactions
    damaged(d)
    return d


@pytest.fixture(scope="module")
def buckets(place, s3_server) -> None:
    """The pages' object stores in moto's S3 server: make demo's log.dirs at BUCKET, and
    the tiered partition (tiered())."""
    s3_server.bucket("kafka-backup")
    s3_server.upload(place / "out" / "logdirs", BUCKET)
    tiered(place, s3_server)


def tiered(place: Path, s3_server) -> None:
    """The pages' tiered partition: make demo's orders-0, its first two segments (offsets
    0-2942) in tiered storage as Aiven's plugin uploads them (zstd, AES-256-GCM with a data
    key wrapped for place/rsm-key.pem, made by OpenSSL), and place/broker the broker's
    log.dirs after local retention: orders-0 keeps its last segment, with its topic id, the
    log start offset (0) and the __remote_log_metadata partition that lists the remote two."""
    from tiered_layout import Encryptor, remote_log_metadata, rsa_key, write_aiven

    source, broker = place / "out" / "logdirs" / "orders-0", place / "broker"
    _private, public = rsa_key(place, "rsm-key")
    encryption = Encryptor(public)
    s3_server.bucket("tiered-storage")
    uploaded = []
    with Partition(source) as p:
        for seg in p.segments[:2]:
            epochs: dict[int, int] = {}
            for b in seg.batches():
                epochs.setdefault(b.partition_leader_epoch, b.base_offset)
            end, max_ts = seg.read_next_offset() - 1, seg.max_timestamp_so_far().timestamp
            sid = SEGMENT_IDS[seg.base_offset]
            write_aiven(lambda key, data: s3_server.put(f"s3://tiered-storage/{key}", data), "kafka/", "orders",
                        TOPIC_ID, 0, source, seg.base_offset, compression=True, encryption=encryption,
                        segment_id=sid, epochs=epochs, end_offset=end, max_timestamp=max_ts)  # fmt: skip
            uploaded.append((sid, seg.base_offset, end, max_ts, seg.size, epochs))
        local = p.segments[2].base_offset
    (broker / "orders-0").mkdir(parents=True)
    for f in source.iterdir():
        if f.name.split(".")[0] == f"{local:020d}":
            shutil.copy(f, broker / "orders-0" / f.name)
    shutil.copy(source / "leader-epoch-checkpoint", broker / "orders-0")
    (broker / "orders-0" / "partition.metadata").write_text(f"version: 0\ntopic_id: {TOPIC_ID}\n")
    (broker / "log-start-offset-checkpoint").write_text("0\n1\norders 0 0\n")
    (broker / "__remote_log_metadata-0").mkdir()
    values = remote_log_metadata("orders", TOPIC_ID, 0, uploaded, 1700000100000)
    (broker / "__remote_log_metadata-0" / "00000000000000000000.log").write_bytes(
        kc.build_batch([kc.Record(None, 1700000100000, None, v, []) for v in values]))  # fmt: skip


def damaged(place: Path) -> None:
    """out/damaged as make demo writes it and the examples start from it: the log.dirs'
    orders-0, two batches damaged (a page's repair examples change it: each page starts
    from it again)."""
    shutil.rmtree(place / "out" / "damaged", ignore_errors=True)
    shutil.rmtree(place / "out" / "kafkacodec-backup", ignore_errors=True)
    write_damaged_copy(place / "out" / "logdirs" / "orders-0", place / "out" / "damaged")


def run(place: Path, cmd: str) -> tuple[list[str], list[str]]:
    """(stdout lines, stderr lines) of an example run in place (/tmp there being place/tmp)."""
    here = str(place / "tmp")
    shell = cmd.replace("kafkacodec ", f"{EXE} ", 1).replace("/tmp", here)
    shell = shell.replace(f"{EXE} generate", f"cd {ROOT} && {EXE} generate")
    res = subprocess.run(["bash", "-c", shell], cwd=place, capture_output=True, text=True,
                         timeout=300)  # fmt: skip
    assert "Traceback" not in res.stderr, res.stderr
    return tuple([line.replace(here, "/tmp") for line in text.splitlines()]  # type: ignore[return-value]
                 for text in (res.stdout, res.stderr))


@contextlib.contextmanager
def _locked(place: Path, lock: str | None):
    """An example shown "# while a broker holds /tmp/.../.lock": this process holds that
    lock file as a broker does (a POSIX fcntl lock: Java's FileChannel.tryLock) meanwhile."""
    if lock is None:
        yield
        return
    path = lock.replace("/tmp", str(place / "tmp"), 1) if lock.startswith("/tmp") else str(place / lock)
    with open(path, "a+") as f:
        fcntl.lockf(f, fcntl.LOCK_EX)
        try:
            yield
        finally:
            fcntl.lockf(f, fcntl.LOCK_UN)


def shows(want: list[str], printed: tuple[list[str], list[str]]) -> bool:
    """Whether the page shows what was printed: stdout, or (a command that printed only
    an error) stderr, or stdout then stderr (a page that shows both, as a terminal does);
    Spark's own log lines on stderr are not shown."""
    out, err = printed
    return matches(want, out) or (not out and matches(want, err)) or (bool(err) and matches(want, out + err))


def _examples() -> list[tuple[str, int, str, list[str]]]:
    """(page, line, command, output) of every page's examples."""
    return [(page.relative_to(ROOT).as_posix(), n, cmd, out)
            for page in PAGES for n, cmd, out in examples(page.read_text())]  # fmt: skip


def test_the_readme_examples_are_parsed():
    found = [(n, cmd, out) for _page, n, cmd, out in _examples()]
    assert len(found) > 40
    ran = [cmd for _n, cmd, _out in found if runnable(cmd, spark=False)]
    assert len(ran) >= 15, ran
    on_cluster = {("docs/spark.md", n, cmd) for n, cmd, _out in cluster_session()}
    unrun = [(page, n, cmd) for page, n, cmd, _out in _examples()
             if not (runnable(cmd, spark=False) or runnable(cmd, spark=True)) and (page, n, cmd) not in on_cluster]  # fmt: skip
    assert not unrun, f"shown commands no test runs: {unrun}"
    assert matches(["a", "...", "d"], ["a", "b", "c", "d"]) and not matches(["a"], ["a", "b"])
    assert matches(["x ... z"], ["x 123 z"]) and not matches(["x ... z"], ["x 123 y"])


@pytest.mark.slow  # thirty commands; CI runs it
def test_the_pages_show_what_the_commands_print(place, buckets):
    wrong, current, lines = [], None, []
    for page, n, cmd, want in _examples():
        if runnable(cmd, spark=False):
            if page != current:
                damaged(place)
                current, lines = page, (ROOT / page).read_text().splitlines()
            held = re.search(r"# while a broker holds (\S+)", lines[n - 1])
            with _locked(place, held.group(1) if held else None):
                got = run(place, cmd)
            if not shows(want, got):
                wrong.append(f"{page}:{n}: $ {cmd}\n  shown: {want}\n  printed: {got}")
    assert not wrong, "\n".join(wrong)


@pytest.mark.spark
@pytest.mark.slow
def test_the_pages_show_what_make_demo_and_the_spark_jobs_print(place, buckets):
    text = DEMO_PAGE.read_text()
    block = text.split("<!-- make demo's output -->", 1)[1].split("\n\n    demo finished", 1)[0]
    want = [line[4:] for line in block.strip("\n").splitlines()] + ["", "demo finished: every check passed"]
    res = subprocess.run([str(EXE.with_name("python")), "-m", "kafkacodec.demo", "out/logdirs"],
                         cwd=place / "demo", capture_output=True, text=True, timeout=600)  # fmt: skip
    assert res.returncode == 0, res.stderr[-3000:]
    got = res.stdout.splitlines()
    assert matches(want, got), "\n".join(got)
    wrong = []
    for page, n, cmd, shown in _examples():
        if runnable(cmd, spark=True):
            got = run(place, cmd)
            if not shows(shown, got):
                wrong.append(f"{page}:{n}: $ {cmd}\n  shown: {shown}\n  printed: {got[0]}")
    assert not wrong, "\n".join(wrong)


@pytest.fixture(autouse=True)
def _demo_dir(place):
    (place / "demo").mkdir(exist_ok=True)


# ------------------------------------------------------------- the pages' Python examples


def python_examples(text: str) -> list[tuple[int, str]]:
    """(line number, source) of each ```pycon block: a doctest, its output the page's."""
    out, lines = [], text.splitlines()
    for n, line in enumerate(lines, start=1):
        if line.strip() == "```pycon":
            end = next(k for k in range(n, len(lines)) if lines[k].strip() == "```")
            out.append((n + 1, "\n".join(lines[n:end]) + "\n"))
    return out


def _needs_spark(source: str) -> bool:
    return "pyspark" in source or "session()" in source


def _doctest_pages(place: Path, tmp_path: Path, spark: bool) -> list[str]:
    """Each page's blocks (Spark's or the others) as one doctest run in place, in a process
    of its own, as a user runs them (Spark resolves a relative path against its JVM's working
    directory: a session another test started would look elsewhere); a block may use what
    an earlier one of its page made. The blocks keep their line numbers. A /tmp/ in the
    code is tmp_path's tmp/ (/tmp/kafka-corpus: the corpus of seed 7, made there). The
    failures, as doctest reports them."""
    wrong, tmp = [], tmp_path / "tmp"
    for page in PAGES:
        lines = page.read_text().splitlines()
        kept = [""] * len(lines)
        blocks = [(n, src) for n, src in python_examples("\n".join(lines)) if _needs_spark(src) == spark]
        for n, source in blocks:
            body = [_here(line, tmp) for line in source.splitlines()]
            kept[n - 1 : n - 1 + len(body)] = body
        if not blocks:
            continue
        if any("/tmp/kafka-corpus" in src for _n, src in blocks) and not (tmp / "kafka-corpus").exists():
            subprocess.run([str(EXE), "corpus", str(tmp / "kafka-corpus"), "--seed", "7"], check=True,
                           capture_output=True, timeout=300)  # fmt: skip
        script = tmp_path / page.relative_to(ROOT).as_posix().replace("/", "_")
        script.write_text("\n".join(kept) + "\n")
        res = subprocess.run([sys.executable, "-m", "doctest", "-o", "ELLIPSIS", "-o", "NORMALIZE_WHITESPACE",
                              str(script)], cwd=place, capture_output=True, text=True, timeout=600)  # fmt: skip
        if res.returncode:
            wrong.append(f"{page.relative_to(ROOT)}:\n{res.stdout[-4000:]}{res.stderr[-2000:]}")
    return wrong


def _here(line: str, tmp: Path) -> str:
    """A doctest line with the page's /tmp/ made this test's (in code, not in output)."""
    if line.lstrip().startswith((">>> ", "... ")):
        return line.replace("/tmp/", f"{tmp}/")
    return line


def test_the_python_examples_are_found():
    found = [(page, n) for page in PAGES for n, _src in python_examples(page.read_text())]
    assert len(found) >= 5, found
    assert not [page for page in PAGES if "```python" in page.read_text()], "a ```python block: make it ```pycon"


@pytest.mark.slow
def test_the_pages_python_examples_print_what_they_show(place, tmp_path):
    wrong = _doctest_pages(place, tmp_path, spark=False)
    assert not wrong, "\n".join(wrong)


@pytest.mark.spark
@pytest.mark.slow
def test_the_pages_spark_examples_print_what_they_show(place, tmp_path):
    wrong = _doctest_pages(place, tmp_path, spark=True)
    assert not wrong, "\n".join(wrong)

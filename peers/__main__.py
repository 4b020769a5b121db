"""python -m peers [--corpus DIR] --out DIR: the ecosystem's record decoders over the corpus.

Writes the corpus (`kafkacodec corpus --seed 7`, the README's) unless one is given, builds the
Go program (go/cmd/peers, with the Go module's pinned clients) and the Rust one (peers/rust,
with its Cargo.lock's crates), runs every parser over every log image, one process per
parser, and writes the report into --out: README.md (the table per parser and what each
class means) and a folder per wrong value, crash, hang, dropped record and refused valid
case. A parser process that dies (a fatal error in Go, a segfault in C) takes only the
case it was reading: that case is reported as a crash and the process starts again after it.
"""

from __future__ import annotations

import argparse
import json
import os
import re
import selectors
import shutil
import subprocess
import sys
import sysconfig
import tempfile
import threading
from pathlib import Path

from . import CLASSES, classify, expected

ROOT = Path(__file__).resolve().parents[1]
GO_PARSERS = ("franz-go", "sarama", "kafka-go")
RUST_PARSERS = ("kafka-protocol", "rskafka")
PY_PARSERS = ("kafka-python", "aiokafka")
PARSERS = GO_PARSERS + RUST_PARSERS + PY_PARSERS
#: What a case's folder is written for.
WRITTEN_UP = ("wrong", "crash", "hang", "refused", "dropped")
SEED = 7


def write_corpus(out: Path) -> Path:
    """The README's corpus, written by the command line the README shows
    (`kafkacodec corpus OUT --seed 7`)."""
    subprocess.run([sys.executable, "-c", "import sys; from kafkacodec.cli import main; sys.exit(main())", "corpus", str(out), "--seed", str(SEED)],
                   check=True, stdout=subprocess.DEVNULL)  # fmt: skip
    return out


def go_binary(build: Path) -> Path:
    out = build.resolve() / "peers"  # (go builds in go/: a relative path would land there)
    subprocess.run(["go", "build", "-o", str(out), "./cmd/peers"], cwd=ROOT / "go", check=True)
    return out


def rust_binary() -> Path:
    """The Rust program (peers/rust: kafka-protocol, rskafka and kafkacodec's own crate), built
    with the crates its Cargo.lock pins (in peers/rust/target, reused between runs)."""
    subprocess.run(["cargo", "build", "--quiet", "--release", "--locked"], cwd=ROOT / "peers" / "rust", check=True)
    return ROOT / "peers" / "rust" / "target" / "release" / "peers"


def _cargo_versions() -> dict[str, str]:
    """{crate: version} of peers/rust/Cargo.lock."""
    import tomllib

    lock = tomllib.loads((ROOT / "peers" / "rust" / "Cargo.lock").read_text())
    return {p["name"]: p["version"] for p in lock["package"]}


def versions() -> dict[str, str]:
    """The version of each parser this run used (go.mod's, Cargo.lock's, the installed packages')."""
    from importlib.metadata import version

    mods = {"franz-go": "github.com/twmb/franz-go ", "sarama": "github.com/IBM/sarama ",
            "kafka-go": "github.com/segmentio/kafka-go "}  # fmt: skip
    out = {}
    for line in (ROOT / "go" / "go.mod").read_text().splitlines():
        for name, prefix in mods.items():
            if line.strip().startswith(prefix):
                out[name] = line.split()[1]
    crates = _cargo_versions()
    for name in RUST_PARSERS:
        out[name] = crates[name]
    out["kafka-python"] = version("kafka-python")
    out["aiokafka"] = version("aiokafka")
    return out


def run_parser(cmd: list[str], files: list[str], timeout: float, usage: dict | None = None) -> dict[str, dict]:
    """{file: answer} of one parser process over files; a process that dies, or gives no
    answer for timeout seconds (plus a margin for its start), costs the case it was on (a
    crash, or a hang) and starts again after it. usage: its processes' CPU seconds are
    added to usage["cpu"] (what the parser itself took, whatever else runs beside it)."""
    answers: dict[str, dict] = {}
    left = list(files)
    while left:
        with tempfile.TemporaryFile("w+") as err:
            proc = subprocess.Popen([*cmd, "-"], stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                                    stderr=err, text=True)  # fmt: skip
            assert proc.stdin is not None and proc.stdout is not None
            stdin, names = proc.stdin, "\n".join(left) + "\n"

            def feed(stdin=stdin, names=names) -> None:
                # from a thread: a parser answers each name as it reads it, so writing
                # every name before reading would fill both pipes and wait forever
                try:
                    stdin.write(names)
                    stdin.close()
                except (BrokenPipeError, OSError, ValueError):
                    pass  # (it died: the loop below says so)

            threading.Thread(target=feed, daemon=True).start()
            hung = False
            with selectors.DefaultSelector() as sel:
                sel.register(proc.stdout, selectors.EVENT_READ)
                while left:
                    if not sel.select(timeout + 5):
                        hung = True
                        break
                    line = proc.stdout.readline()
                    if not line:
                        break  # it ended (or died)
                    a = json.loads(line)
                    answers[a["file"]] = a
                    left.remove(a["file"])
            if hung:
                proc.kill()
            status = _reap(proc, usage)
            err.seek(0)
            if not left:
                break
            if hung:
                answers[left[0]] = {"file": left[0], "hang": True}
            elif status == 0:
                raise RuntimeError(
                    f"{cmd} ended without answering for {left[0]}: {_said(err.read())}"
                )
            else:
                answers[left[0]] = {"file": left[0],
                                    "panic": f"the process died (exit status {status}): {_said(err.read())}"}  # fmt: skip
            left = left[1:]
    return answers


def _said(stderr: str, room: int = 2000) -> str:
    """What a dying process wrote, within room characters: its start (where Rust and Go put
    the error, before the stack) and its end (where Python puts the exception), so that the
    first line is the same for every case of one crash however long the stack."""
    if len(stderr) <= room:
        return stderr
    return f"{stderr[: room // 2]}\n...\n{stderr[-(room // 2):]}"


def _reap(proc: subprocess.Popen, usage: dict | None) -> int:
    """Wait for the process; its CPU seconds (and those of the children it waited for)
    added to usage["cpu"]."""
    if usage is None:
        return proc.wait()
    _pid, status, ru = os.wait4(proc.pid, 0)
    proc.returncode = os.waitstatus_to_exitcode(status)
    usage["cpu"] = usage.get("cpu", 0.0) + ru.ru_utime + ru.ru_stime
    return proc.returncode


class Session:
    """One parser process kept for case after case (the protocol's "-" mode, each name
    answered as soon as it is read): what a minimizer asks thousands of times. A process
    that dies answers a panic and is started again; one that gives no answer in `timeout`
    seconds (plus a margin) answers a hang and is killed and started again."""

    def __init__(self, cmd: list[str], timeout: float = 10) -> None:
        self.cmd, self.timeout = cmd, timeout
        self.proc: subprocess.Popen | None = None
        self.err = None

    def _start(self) -> subprocess.Popen:
        if self.proc is None or self.proc.poll() is not None:
            if self.err is not None:  # (the last process's, read when it died)
                self.err.close()
            self.err = tempfile.TemporaryFile("w+")
            self.proc = subprocess.Popen([*self.cmd, "-"], stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                                         stderr=self.err, text=True, bufsize=1)  # fmt: skip
        return self.proc

    def answer(self, path: str) -> dict:
        proc = self._start()
        assert proc.stdin is not None and proc.stdout is not None
        try:
            proc.stdin.write(path + "\n")
            proc.stdin.flush()
        except BrokenPipeError:
            pass
        with selectors.DefaultSelector() as sel:
            sel.register(proc.stdout, selectors.EVENT_READ)
            ready = sel.select(self.timeout + 5)
        line = proc.stdout.readline() if ready else None
        if line:
            return json.loads(line)
        if line is None:  # no answer in time
            proc.kill()
            proc.wait()
            return {"file": path, "hang": True}
        status = proc.wait()
        assert self.err is not None
        self.err.seek(0)
        return {"file": path, "panic": f"the process died (exit status {status}): {_said(self.err.read())}"}

    def close(self) -> None:
        if self.proc is not None and self.proc.poll() is None:
            assert self.proc.stdin is not None
            self.proc.stdin.close()
            try:
                self.proc.wait(10)
            except subprocess.TimeoutExpired:
                self.proc.kill()
                self.proc.wait()
        if self.err is not None:
            self.err.close()
            self.err = None

    def __enter__(self) -> Session:
        return self

    def __exit__(self, *exc) -> None:
        self.close()


def run(corpus: Path, build: Path, timeout: float = 10) -> dict:
    """Every parser over every log image of the corpus: {"cases": [...], "answers":
    {parser: {file: answer}}, "versions": {...}}."""
    manifest = json.loads((corpus / "MANIFEST.json").read_text())
    cases = [c for c in manifest["cases"] if c["schema"] == "kafka_log"]
    files = [str(corpus / c["file"]) for c in cases]
    binary = go_binary(build)
    answers = {}
    for name in GO_PARSERS:
        answers[name] = run_parser(
            [str(binary), "-timeout", f"{timeout}s", "-parser", name], files, timeout
        )
    rust = rust_binary()
    for name in RUST_PARSERS:
        answers[name] = run_parser([str(rust), "-timeout", f"{timeout}s", "-parser", name], files, timeout)
    for name in PY_PARSERS:
        answers[name] = run_parser(
            [sys.executable, "-m", "peers.python_parsers", name], files, timeout
        )
    return {"cases": cases, "answers": answers, "versions": versions()}


def report(corpus: Path, result: dict, out: Path) -> dict[str, dict[str, int]]:
    """Write the report into out (replacing it); return the table {parser: {class: count}}."""
    if out.exists():
        shutil.rmtree(out)
    out.mkdir(parents=True)
    table: dict[str, dict[str, int]] = {p: dict.fromkeys(CLASSES, 0) for p in PARSERS}
    totals = {"valid": 0, "damaged": 0}
    written: dict[str, list[str]] = {p: [] for p in PARSERS}
    for case in result["cases"]:
        data = (corpus / case["file"]).read_bytes()
        want = expected(data)
        totals["damaged" if want["error"] else "valid"] += 1
        for p in PARSERS:
            got = result["answers"][p][str(corpus / case["file"])]
            cls = classify(want, got)
            table[p][cls] += 1
            if cls in WRITTEN_UP:
                written[p].append(
                    _write_case(out / p, case, data, want, got, cls, result["versions"][p])
                )
    _write_readme(out, table, totals, written, result["versions"])
    return table


def _write_case(
    folder: Path, case: dict, data: bytes, want: dict, got: dict, cls: str, version: str
) -> str:
    name = Path(case["file"]).stem
    d = folder / name
    d.mkdir(parents=True)
    (d / f"{name}.bin").write_bytes(data)
    got = {
        k: _portable(v) if k == "panic" else v
        for k, v in got.items()
        if k not in ("file", "parser")
    }
    (d / "README.md").write_text(
        f"# {folder.name} {version}: {cls} on `{name}.bin`\n\n"
        f"{CLASSES[cls][0].upper() + CLASSES[cls][1:]}.\n\n"
        f"- The case: {case['about']} ({len(data)} bytes, from `kafkacodec corpus --seed {SEED}`).\n"
        f"- What Kafka reads in it (Kafka's record classes, MemoryRecords with `ensureValid`, "
        f"agree with kafkacodec on every case of this corpus): "
        + ("the records below." if want["error"] is None else f"an error: `{want['error']}`, after the records below.")
        + "\n\nKafka's records (control records flagged; a consumer skips them):\n\n"
        f"```json\n{json.dumps(want['records'], indent=1)}\n```\n\n"
        f"What {folder.name} returned:\n\n```json\n{json.dumps(got, indent=1)}\n```\n\n"
        f"To reproduce: {_how(folder.name, name)}\n"
    )  # fmt: skip
    return name


def _portable(text):
    """A traceback or stack without this machine's paths: the checkout's, the Python
    environment's and Go's module cache's."""
    if not isinstance(text, str):
        return text
    stdlib = sysconfig.get_paths()["stdlib"]
    text = text.replace(f"{stdlib}/", f"{os.path.basename(stdlib)}/")
    text = re.sub(r'/[^\s"]*/(site-packages|pkg/mod|src)/', r"\1/", text)
    return text.replace(f"{ROOT}/", "")


def _how(parser: str, name: str) -> str:
    if parser in GO_PARSERS:
        return (f"from kafkacodec's checkout, `cd go && go run ./cmd/peers -parser {parser} "
                f"../peers/reports/{parser}/{name}/{name}.bin` (go/cmd/peers: how the bytes are "
                "handed to the client).")  # fmt: skip
    if parser in RUST_PARSERS:
        return (f"from kafkacodec's checkout, `cargo run --release --manifest-path peers/rust/Cargo.toml -- -parser "
                f"{parser} peers/reports/{parser}/{name}/{name}.bin` (peers/rust: how the bytes are handed to "
                "the crate).")  # fmt: skip
    return (f"`python -m peers.python_parsers {parser} peers/reports/{parser}/{name}/{name}.bin` "
            "(peers/python_parsers.py: MemoryRecords, as the client's fetcher reads).")  # fmt: skip


def _write_readme(out: Path, table: dict, totals: dict, written: dict, versions: dict) -> None:
    lines = [
        "# The ecosystem's record decoders over `kafkacodec corpus --seed 7`",
        "",
        f"{totals['valid']} valid log images (every magic and codec, edge cases, cut at a batch "
        f"boundary or inside a trailing batch) and {totals['damaged']} damaged ones (a CRC, a length "
        "or a schema rule broken), each read as the client's consumer reads a fetched record "
        "set (peers/__init__.py says how for each). Written by `python -m peers --out peers/reports`; "
        "tests/crosslang/test_peers.py checks that it is what a run gives.",
        "",
        "| parser | " + " | ".join(CLASSES) + " |",
        "|---|" + "---|" * len(CLASSES),
    ]
    for p in PARSERS:
        lines.append(
            f"| {p} {versions[p]} | " + " | ".join(str(table[p][c]) for c in CLASSES) + " |"
        )
    lines += ["", *(f"- **{c}**: {about}." for c, about in CLASSES.items()), ""]
    for p in PARSERS:
        if written[p]:
            lines.append(
                f"{p}: {', '.join(f'[{n}]({p}/{n}/README.md)' for n in sorted(written[p]))}."
            )
            lines.append("")
    (out / "README.md").write_text("\n".join(lines))


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(prog="python -m peers", description=__doc__.split("\n")[0])
    ap.add_argument(
        "--corpus", type=Path, help="a corpus kafkacodec wrote (default: a fresh one, --seed 7)"
    )
    ap.add_argument("--out", type=Path, required=True, help="the report's folder (replaced)")
    ap.add_argument(
        "--timeout", type=float, default=10, help="seconds a parser may take over one case"
    )
    args = ap.parse_args(argv)
    with tempfile.TemporaryDirectory(prefix="kafkacodec-peers-") as tmp:
        corpus = args.corpus
        if corpus is None:
            corpus = write_corpus(Path(tmp) / "corpus")
        table = report(corpus, run(corpus, Path(tmp), args.timeout), args.out)
    for p, counts in table.items():
        print(f"{p}: " + ", ".join(f"{c} {n}" for c, n in counts.items() if n))
    return 0


if __name__ == "__main__":
    os.environ.setdefault("PYTHONHASHSEED", "0")
    sys.exit(main())

"""Kafka's record classes as the oracle of a fuzz run over parsers (issue 57): seeded
mutations of the shared vectors (peers/bytewise.py) judged by the long-lived oracle
(kafka_judge.Oracle, the newest 4.x), read by kafkacodec and by the Python peers
(kafka-python, aiokafka: peers/python_parsers.py, through the plug-in protocol the Go
peers use too: file names on stdin, one JSON line each); every divergence signed
(peers.findings.signature), one finding per signature minimized with the oracle in the
loop and written with its reproducer. kafkacodec itself diverges on none."""

from __future__ import annotations

import sys
import time

import pytest
from kafka_broker import ROOT, VERSIONS
from kafka_judge import Oracle

from peers import expected
from peers.__main__ import Session, run_parser
from peers.bytewise import Mutator, write
from peers.findings import diverges, kafka_answer, minimize, signature, write_finding

pytestmark = [pytest.mark.kafka, pytest.mark.slow]

SEED, CASES = 57, 3000
PARSERS = ("kafka-python", "aiokafka")


@pytest.fixture(scope="module")
def run(tmp_path_factory):
    root = tmp_path_factory.mktemp("fuzz")
    drawn = Mutator(SEED).draw(CASES)
    files = write(root / "cases", drawn)
    images = [f.read_bytes() for f in files]
    oracle = Oracle(VERSIONS[-1], root / "build")
    try:
        kafka = [kafka_answer(v) for v in oracle.judge_many(images)]
        yield root, files, images, kafka, oracle
    finally:
        oracle.close()


def test_kafkacodec_diverges_from_kafka_on_no_case(run):
    _root, files, images, kafka, _oracle = run
    signed = [signature(k, expected(d)) for k, d in zip(kafka, images)]
    bad = [(f.name, s) for f, s in zip(files, signed) if diverges(s)]
    assert not bad, bad[:10]
    assert "rejected" in signed and "right" in signed  # (the run reaches refusals and reads)


@pytest.mark.parametrize("parser", PARSERS)
def test_each_peers_divergences_are_findings_with_reproducers(run, parser, tmp_path):
    root, files, images, kafka, oracle = run
    cmd = [sys.executable, "-m", "peers.python_parsers", parser]
    answers = run_parser(cmd, [str(f) for f in files], timeout=10)
    found: dict[str, int] = {}
    for i, f in enumerate(files):
        sig = signature(kafka[i], answers[str(f)])
        if diverges(sig):
            found.setdefault(sig, i)
    reports = tmp_path / parser
    probe = tmp_path / "probe.bin"
    with Session(cmd, timeout=2) as session:  # one parser process for every try of the minimizer

        def answer(d: bytes) -> dict:
            probe.write_bytes(d)
            return session.answer(str(probe))

        # (a CI-sized run minimizes a few findings of records and rules, within a minute)
        chosen = [(sig, i) for sig, i in sorted(found.items()) if sig.split(":")[0] in ("wrong", "missed", "refused")]
        started = time.monotonic()
        for sig, i in chosen[:3]:
            if time.monotonic() - started > 60:
                break

            def still(d: bytes, sig=sig) -> bool:
                return signature(kafka_answer(oracle.judge_many([d])[0]), answer(d)) == sig

            small = minimize(images[i], still, budget=150)
            assert still(small) and len(small) <= len(images[i])
            d = write_finding(reports, small, kafka_answer(oracle.judge_many([small])[0]), answer(small), sig,
                              f"python -m peers.python_parsers {parser} {{input}}", found_in=files[i].name)  # fmt: skip
            assert (d / "input.bin").read_bytes() == small
            assert f"python -m peers.python_parsers {parser} {d / 'input.bin'}" in (d / "README.md").read_text()
    print(f"{parser}: {len(found)} distinct divergences in {len(files)} cases: {sorted(found)}")


def test_the_fuzz_command_finds_a_planted_bug_in_a_plugged_in_parser(tmp_path):
    """python -m peers.fuzz over a parser plugged in by command (peers/fuzz.py's protocol):
    one that forgets headers. kafkacodec has no finding; the plug-in has "wrong: headers",
    minimized to one batch, its README's command reproducing the parser's answer; the
    table says how many cases each diverged on."""
    import json
    import shlex
    import subprocess

    from peers.fuzz import main

    plugin = tmp_path / "forgetful.py"
    plugin.write_text(
        f"import json, sys\nsys.path.insert(0, {str(ROOT)!r})\nfrom peers.python_parsers import kafkacodec\n"
        "from kafkacodec.runtime.errors import KafkacodecError\n"
        "names = sys.argv[1:] if sys.argv[1:] != ['-'] else iter(sys.stdin.readline, '')\n"
        "for line in names:\n"
        "    f = line.strip()\n"
        "    try:\n"
        "        records, error = kafkacodec(open(f, 'rb').read()), None\n"
        "    except KafkacodecError as err:\n"
        "        records, error = [], str(err)\n"
        "    print(json.dumps({'file': f, 'records': [dict(r, headers=[]) for r in records], 'error': error}),"
        " flush=True)\n"
    )  # fmt: skip
    out = tmp_path / "report"
    status = main(["--parser", "kafkacodec", "--parser", f"forgetful={sys.executable} {plugin}",
                   "--cases", "400", "--seed", "5", "--kafka", VERSIONS[-1], "--out", str(out)])  # fmt: skip
    assert status == 1
    table = json.loads((out / "table.json").read_text())
    assert table["kafkacodec"]["divergences"] == {}
    assert table["forgetful"]["divergences"].get("wrong: headers", 0) > 0
    finding = out / "forgetful" / "wrong-headers"
    readme = (finding / "README.md").read_text()
    command = readme.split("To reproduce:\n\n    ", 1)[1].strip()
    again = subprocess.run(shlex.split(command), capture_output=True, text=True, timeout=60)
    assert json.loads(again.stdout.splitlines()[0])["records"] == \
        json.loads((finding / "parser.json").read_text())["records"]  # fmt: skip
    assert len(finding.joinpath("input.bin").read_bytes()) < 400
    assert "| forgetful | 400 |" in (out / "README.md").read_text()

"""Kafka's record classes as the oracle of a fuzz run over parsers (issue 57): seeded
mutations of the shared vectors (tests/mutations.py) judged by the long-lived oracle
(kafka_judge.Oracle, the newest 4.x), read by kafkacodec and by the Python peers
(kafka-python, aiokafka: peers/python_parsers.py, through the plug-in protocol the Go
peers use too: file names on stdin, one JSON line each); every divergence signed
(peers.findings.signature), one finding per signature minimized with the oracle in the
loop and written with its reproducer. kafkacodec itself diverges on none."""

from __future__ import annotations

import sys

import pytest
from kafka_broker import VERSIONS
from kafka_judge import Oracle
from mutations import Mutator, write

from peers import expected
from peers.__main__ import run_parser
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
    for sig, i in sorted(found.items())[:3]:  # (a CI-sized run minimizes a few)

        def still(d: bytes, sig=sig) -> bool:
            probe = tmp_path / "probe.bin"
            probe.write_bytes(d)
            got = run_parser(cmd, [str(probe)], timeout=10)[str(probe)]
            return signature(kafka_answer(oracle.judge_many([d])[0]), got) == sig

        small = minimize(images[i], still, budget=300)
        assert still(small) and len(small) <= len(images[i])
        probe = reports / "input.bin"
        d = write_finding(reports, small, kafka_answer(oracle.judge_many([small])[0]),
                          run_parser(cmd, [str(tmp_path / "probe.bin")], timeout=10)[str(tmp_path / "probe.bin")],
                          sig, f"python -m peers.python_parsers {parser} {probe.parent.name}/<finding>/input.bin",
                          found_in=files[i].name)  # fmt: skip
        assert (d / "input.bin").read_bytes() == small and (d / "README.md").exists()
    print(f"{parser}: {len(found)} distinct divergences in {len(files)} cases: {sorted(found)}")

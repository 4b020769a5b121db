"""Kafka's classes as the oracle of a fuzz run over parsers (issue 57): seeded mutations
(peers.mutate: the schema-aware families and peers.bytewise's) judged by the long-lived
oracle (kafka_judge.Oracle, the oldest and the newest 4.x), read by kafkacodec and by the
Python peers (kafka-python, aiokafka: peers/python_parsers.py, through the plug-in protocol
the Go peers use too: file names on stdin, one JSON line each); every divergence signed
(peers.findings.signature), one finding per signature minimized with the oracle in the
loop and written with its reproducer. kafkacodec, judged by Kafka's record classes,
diverges on none but the cases peers.findings.BY_DESIGN explains; the client libraries
are judged by what Kafka's consumer (CompletedFetch) hands its application."""

from __future__ import annotations

import sys
import time

import pytest
from kafka_broker import ROOT, VERSIONS
from kafka_judge import Oracle

from peers import expected
from peers.__main__ import Session, run_parser
from peers.bytewise import write
from peers.findings import by_design, diverges, kafka_answer, minimize, signature, write_finding
from peers.mutate import draw

pytestmark = [pytest.mark.kafka, pytest.mark.slow]

SEED, CASES = 57, 3000
#: The seeded subset of `make fuzz` CI runs: cases for each release judging kafkacodec.
KAFKACODEC_CASES = 20000
PARSERS = ("kafka-python", "aiokafka", "kafka-protocol", "rskafka")


@pytest.fixture(scope="module")
def run(tmp_path_factory):
    root = tmp_path_factory.mktemp("fuzz")
    files = write(root / "cases", list(draw(CASES, SEED)))
    images = [f.read_bytes() for f in files]
    oracle = Oracle(VERSIONS[-1], root / "build")
    try:
        verdicts = oracle.judge_many(images)
        yield root, files, images, verdicts, oracle
    finally:
        oracle.close()


@pytest.mark.parametrize("version", [VERSIONS[0], VERSIONS[-1]])
def test_kafkacodec_diverges_from_kafka_on_no_case(version, tmp_path):
    """Every reading kafkacodec gives (its records, or its refusal where Kafka refuses)
    is Kafka's record classes' on a seeded subset of `make fuzz`'s cases, in the oldest
    and the newest release: what differs is by design, and said why."""
    signed, apart = {}, {}
    with Oracle(version, tmp_path / "build") as oracle:
        cases = draw(KAFKACODEC_CASES, SEED + 1)
        while chunk := [c for _, c in zip(range(5000), cases)]:
            for (name, data), verdict in zip(chunk, oracle.judge_many([d for _n, d in chunk])):
                sig = signature(kafka_answer(verdict), expected(data))
                if diverges(sig) and by_design("kafkacodec", sig):
                    apart.setdefault(sig, name)
                else:
                    signed.setdefault(sig, name)
    bad = {s: n for s, n in signed.items() if diverges(s)}
    assert not bad, bad
    assert "rejected" in signed and "right" in signed  # (the run reaches refusals and reads)
    print(f"Kafka {version}: by design {apart}")


def test_the_spark_formats_jvm_reader_diverges_on_no_case(run, tmp_path):
    """The Spark format's JVM reader (SliceReader's own walk, harness/src/SparkJvmPeer.java)
    over the run's cases: every record it gives is Kafka's (the rows before it hands a slice
    to Python included), and it reads a good part of them itself."""
    from peers.spark_jvm import spark_jvm_peer

    root, files, images, verdicts, oracle = run
    answers = run_parser(spark_jvm_peer(tmp_path / "build"), [str(f) for f in files], timeout=30)
    signs: dict[str, int] = {}
    for f, verdict in zip(files, verdicts):
        sig = signature(kafka_answer(verdict), answers[str(f)])
        if not (diverges(sig) and by_design("kafkacodec-spark", sig)):
            signs[sig] = signs.get(sig, 0) + 1
    assert not {s: n for s, n in signs.items() if diverges(s)}, signs
    assert signs.get("right", 0) > CASES // 5 and signs.get("handed over", 0) > 0, signs


def test_the_rust_crate_diverges_on_no_case(run, tmp_path):
    """The crate the schemas generate (rust/, through peers/rust's kafkacodec-rust) over the
    run's cases: Kafka's record classes' reading on every case but those BY_DESIGN explains."""
    from peers.fuzz import _command

    root, files, images, verdicts, oracle = run
    answers = run_parser(_command("kafkacodec-rust", tmp_path, 10)[1], [str(f) for f in files], timeout=10)
    signs: dict[str, int] = {}
    for f, verdict in zip(files, verdicts):
        sig = signature(kafka_answer(verdict), answers[str(f)])
        if not (diverges(sig) and by_design("kafkacodec-rust", sig)):
            signs[sig] = signs.get(sig, 0) + 1
    assert not {s: n for s, n in signs.items() if diverges(s)}, signs
    assert signs.get("right", 0) > CASES // 5 and signs.get("rejected", 0) > CASES // 5, signs


@pytest.mark.parametrize("parser", PARSERS)
def test_each_peers_divergences_are_findings_with_reproducers(run, parser, tmp_path):
    from peers.fuzz import _command, _reproduce

    root, files, images, verdicts, oracle = run
    kafka = [kafka_answer(v, "consumer") for v in verdicts]
    cmd = _command(parser, tmp_path / "build", 10)[1]
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
                return signature(kafka_answer(oracle.judge_many([d])[0], "consumer"), answer(d)) == sig

            small = minimize(images[i], still, budget=150)
            assert still(small) and len(small) <= len(images[i])
            how = _reproduce(parser, cmd)
            d = write_finding(reports, small, kafka_answer(oracle.judge_many([small])[0], "consumer"), answer(small), sig,
                              how, found_in=files[i].name, view="consumer")  # fmt: skip
            assert (d / "input.bin").read_bytes() == small
            assert how.replace("{input}", str(d / "input.bin")) in (d / "README.md").read_text()
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
        "    records, error = [], None\n"
        "    try:\n"
        "        kafkacodec(open(f, 'rb').read(), records)\n"
        "    except KafkacodecError as err:\n"
        "        error = str(err)\n"
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
    assert "| forgetful | consumer | 400 |" in (out / "README.md").read_text()
    assert "| kafkacodec | records | 400 |" in (out / "README.md").read_text()


def test_the_consumers_answer_is_what_completed_fetch_hands_the_application(run):
    """The oracle's second answer, from Kafka's CompletedFetch: a control batch's records
    are not handed over (the record classes read them); a record whose offset is below
    the next fetch offset is skipped; a legacy wrapper's own CRC is not checked, its inner
    messages' are."""
    import kafkacodec as kc
    from kafkacodec.records.builders import build_control_batch, build_message_set

    t = 1_700_000_000_000
    data = kc.build_batch([kc.Record(None, t, b"k", b"v")], base_offset=5)
    control = build_control_batch(True, offset=6, timestamp=t, producer_id=3, producer_epoch=1)
    back = kc.build_batch([kc.Record(None, t, b"old", b"v")], base_offset=2)  # below the next fetch offset
    wrapper = bytearray(build_message_set([kc.Record(None, t, b"w", b"v")], magic=1, compression="gzip",
                                          base_offset=7))  # fmt: skip
    wrapper[12] ^= 0xFF  # the wrapper's own CRC
    oracle = run[4]
    records_view, consumer_view = (kafka_answer(oracle.judge_many([data + control + back])[0], v)
                                   for v in ("records", "consumer"))  # fmt: skip
    assert [(r["offset"], r["control"]) for r in records_view["records"]] == [(5, False), (6, True), (2, False)]
    assert [r["offset"] for r in consumer_view["records"]] == [5]
    assert records_view["error"] is None is consumer_view["error"]
    verdict = oracle.judge_many([data + bytes(wrapper)])[0]
    assert "CorruptRecordException" in kafka_answer(verdict)["error"]
    assert [r["offset"] for r in kafka_answer(verdict, "consumer")["records"]] == [5, 7]

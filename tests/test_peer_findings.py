"""Findings a maintainer can act on (peers/findings.py, issue 57): Kafka's verdict in the
parsers' shape, signatures that name what differs, the minimizer and the finding's folder,
on parsers with bugs planted on purpose (the Kafka-judged run is
tests/kafka/test_kafka_fuzz_peers.py)."""

from __future__ import annotations

import json
import struct

import kafkacodec as kc
from peers import expected
from peers.findings import entries, kafka_answer, minimize, signature, write_finding


def image(batches: int = 5, headers_in: int = 3) -> bytes:
    out = b""
    for i in range(batches):
        recs = [kc.Record(None, 1_700_000_000_000 + i, b"k%d" % j, b"v" * (j + 1),
                          [("h", b"x")] if i == headers_in else []) for j in range(3)]  # fmt: skip
        out += kc.build_batch(recs, base_offset=3 * i)
    return out


def headerless(data: bytes) -> dict:
    """A parser that forgets headers: the records as Kafka reads them, headers dropped."""
    got = expected(data)
    return {"records": [dict(r, headers=[]) for r in got["records"]], "error": got["error"]}


def careless(data: bytes) -> dict:
    """A parser that never refuses: the records up to the damage, no error."""
    return {"records": expected(data)["records"], "error": None}


def test_signatures_name_the_field_the_rule_or_nothing():
    data = image()
    assert signature(expected(data), expected(data)) == "right"
    assert signature(expected(data), headerless(data)) == "wrong: headers"
    damaged = bytearray(data)
    damaged[len(image(2)) + 30] ^= 0xFF  # the third batch's records: its CRC no longer holds
    sig = signature(expected(bytes(damaged)), careless(bytes(damaged)))
    assert sig.startswith("missed: ") and "stored N, computed N" in sig  # the rule, not the values
    assert signature(expected(data), {"panic": "index out of range [7] with length 3\ngoroutine 1"}) == \
        "crash: index out of range [N] with length N"  # fmt: skip
    assert signature(expected(data), {"records": [], "error": "boom"}) == "refused: boom"
    tb = 'Traceback (most recent call last):\n  File "x.py", line 3, in f\nIndexError: index 40 is out of range\n'
    assert signature(expected(data), {"panic": tb}) == "crash: IndexError: index N is out of range"


def test_minimize_keeps_the_divergence_and_drops_the_rest():
    data = image(batches=6, headers_in=4)
    sig = signature(expected(data), headerless(data))

    def still(d: bytes) -> bool:
        return signature(expected(d), headerless(d)) == sig

    small = minimize(data, still)
    assert still(small) and len(small) < len(data) // 4
    assert [b.base_offset for b in kc.iter_batches(small)] == [12]  # the batch with headers, alone
    assert len(entries(data)) == 6 and entries(data[:-5])[-1][1] == len(data) - 5


def test_minimize_stays_within_its_budget():
    calls = []

    def still(d: bytes) -> bool:
        calls.append(1)
        return len(d) > 3

    assert minimize(b"x" * 5000, still, budget=50) and len(calls) <= 50


def test_kafka_answer_in_the_parsers_shape_and_a_finding_folder(tmp_path):
    verdict = {"batches": [{"position": 0, "magic": 0, "compression": "none", "control": False, "records": [
        {"offset": 5, "timestamp": -1, "timestamp_type": "NoTimestampType", "key": None, "value": "6869",
         "headers": []}]}], "error": {"class": "CorruptRecordException", "message": "Record is corrupt (stored crc = 1)",
                                      "position": 40}}  # fmt: skip
    want = kafka_answer(verdict)
    assert want == {"records": [{"offset": 5, "timestamp": None, "key": None, "value": "6869", "headers": [],
                                 "control": False}],
                    "error": "CorruptRecordException: Record is corrupt (stored crc = 1)", "error_position": 40}  # fmt: skip
    got = {"records": want["records"], "error": None}
    sig = signature(want, got)
    assert sig == "missed: CorruptRecordException: Record is corrupt (stored crc = N)"
    d = write_finding(tmp_path / "some-parser", b"\x00" * 12 + struct.pack(">i", 0), want, got, sig,
                      "some-parser input.bin", found_in="a mutation of v2_none_basic")  # fmt: skip
    assert d.name == "missed-corruptrecordexception-record-is-corrupt-stored-crc-n"
    assert json.loads((d / "kafka.json").read_text()) == want
    readme = (d / "README.md").read_text()
    assert "some-parser input.bin" in readme and "minimized from a mutation" in readme


def test_a_verdict_kafka_could_not_give_is_no_divergence():
    """KafkaJudge's JVM out of heap (Kafka's DataLogInputStream allocates an inner message's
    declared size first): no verdict, not a divergence of the parser's."""
    from peers.findings import diverges

    want = kafka_answer({"batches": [], "error": {"class": "OutOfMemoryError", "message": "Java heap space",
                                                  "position": 0}})  # fmt: skip
    assert want["unjudged"] and signature(want, {"records": [{"offset": 1}], "error": None}) == "unjudged"
    assert not diverges("unjudged") and not diverges("rejected") and diverges("wrong: value")


def test_a_session_keeps_one_process_and_survives_crashes_and_hangs(tmp_path):
    """peers.Session: one parser process answers case after case (each name answered as
    soon as it is read); one that dies answers a panic and is started again, one that
    does not answer in time answers a hang and is killed and started again."""
    import sys

    from peers.__main__ import Session

    plugin = tmp_path / "plugin.py"
    plugin.write_text(
        "import json, os, sys, time\n"
        "for line in iter(sys.stdin.readline, ''):\n"
        "    name = line.strip()\n"
        "    data = open(name, 'rb').read()\n"
        "    if data == b'die': os._exit(3)\n"
        "    if data == b'sleep': time.sleep(30)\n"
        "    print(json.dumps({'file': name, 'pid': os.getpid(), 'records': [], 'error': None}), flush=True)\n"
    )  # fmt: skip
    cases = {}
    for name in ("a", "b", "die", "c", "sleep", "d"):
        cases[name] = tmp_path / name
        cases[name].write_bytes(name.encode())
    with Session([sys.executable, str(plugin)], timeout=0.5) as s:
        a, b = s.answer(str(cases["a"])), s.answer(str(cases["b"]))
        assert a["pid"] == b["pid"]  # one process for both
        died = s.answer(str(cases["die"]))
        assert "exit status 3" in died["panic"]
        c = s.answer(str(cases["c"]))
        assert c["pid"] != a["pid"] and c["records"] == []
        assert s.answer(str(cases["sleep"])) == {"file": str(cases["sleep"]), "hang": True}
        assert s.answer(str(cases["d"]))["pid"] not in (a["pid"], c["pid"])

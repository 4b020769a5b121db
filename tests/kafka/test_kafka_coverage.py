"""How much of Kafka's record-reading code the corpus, the shared vectors and the fuzz
cases reach (issue 57), measured with JaCoCo while Kafka's classes judge them
(peers/coverage.py), in the oldest and the newest 4.x release: at least 90% of the
branches of the reading methods, and every branch left unreached has its reason
(peers.coverage.UNREACHABLE: no input reaches it). A seeded subset of `make fuzz`'s run;
what it measures at 1M cases is in docs/fuzzing.md."""

from __future__ import annotations

import pytest
from kafka_broker import VERSIONS

from peers.coverage import READING, SET_ASIDE, measure, reading, run, set_aside

pytestmark = [pytest.mark.kafka, pytest.mark.slow]

CASES = 60000


@pytest.mark.parametrize("version", [VERSIONS[0], VERSIONS[-1]])
def test_the_fuzz_run_reaches_nine_in_ten_of_kafkas_reading_branches(version, tmp_path):
    figure = run(version, CASES, 1, tmp_path / "coverage")
    assert figure["branches"] > 250  # the reading code was found and measured
    share = figure["covered"] / figure["branches"]
    assert share >= 0.90, f"{figure['covered']} of {figure['branches']}"
    unexplained = [m for m in figure["missed"] if not m["why"]]
    assert not unexplained, unexplained
    # every class the figure is about was measured
    measured = {name.split("$")[0].removeprefix("compress/") for name in figure["classes"]}
    for cls in READING:
        if not cls.endswith("/*"):
            assert cls in measured, cls
    readme = (tmp_path / "coverage" / "README.md").read_text()
    assert f"{figure['covered']} of {figure['branches']}" in readme


def test_what_is_set_aside_and_what_is_counted():
    record = "org/apache/kafka/common/record/"
    assert reading(record + "DefaultRecordBatch$RecordIterator")
    assert not reading(record + "MemoryRecordsBuilder")
    assert reading("org/apache/kafka/common/compress/Lz4BlockInputStream")
    assert set_aside(record + "DefaultRecordBatch", "ensureValid") is None
    assert set_aside(record + "DefaultRecordBatch", "writeHeader")
    assert set_aside(record + "FileRecords", "searchForTimestamp") is None
    assert set_aside(record + "FileRecords", "truncateTo")
    assert set_aside("org/apache/kafka/common/compress/Lz4BlockInputStream", "readHeader") is None
    assert set_aside("org/apache/kafka/common/compress/Lz4BlockOutputStream", "writeBlock")
    assert all(why for _c, _m, why in SET_ASIDE)
    # a method set aside is not counted; one with no branches is not counted either
    methods = [{"class": record + "DefaultRecord", "source": "DefaultRecord.java", "method": "readFrom",
                "desc": "()V", "branches": 4, "covered": 3, "missed": [[10, 1, 2]]},
               {"class": record + "DefaultRecord", "source": "DefaultRecord.java", "method": "writeTo",
                "desc": "()V", "branches": 6, "covered": 0, "missed": [[20, 6, 6]]}]  # fmt: skip
    f = measure(methods)
    assert (f["branches"], f["covered"]) == (4, 3)
    assert f["missed"][0]["why"] is None  # readFrom's is no reason: a gap the test above would name

"""Kafka's recovery, predicted (issue 37): on broker-written partitions damaged at random,
what kafkacodec predicts a broker's next load does (kafkacodec.log.loader, `recover`'s
"kafka_load") is what the broker of each release does; and a copy of each case repaired by
kafkacodec (`recover --repair`) is loaded by the broker without a change, ending where the
repair said, and served exactly as kafkacodec reads it. The seeded subset of the drill
(tests/kafka_drill.py; `make drill` runs 200 cases per release), and the loads Kafka fails,
each in a broker of its own since such a failure stops the broker."""

from __future__ import annotations

import json
import struct

import pytest
from conftest import kafkacodec_cli as cli
from kafka_broker import VERSIONS, Broker, HarnessError
from kafka_drill import KINDS, SOURCES, _batches, small_segments, workload, write_checkpoint
from kafka_drill import run as run_drill

from kafkacodec.log import Partition
from kafkacodec.log.loader import RECOVERY_POINT_CHECKPOINT, predict_load
from kafkacodec.log.partition import read_checkpoint

pytestmark = pytest.mark.kafka

CASES, SEED = 52, 7


@pytest.mark.parametrize("version", VERSIONS)
def test_kafka_loads_damaged_partitions_as_predicted(version, tmp_path):
    cases, wrong = run_drill(version, tmp_path, CASES, SEED)
    assert {c.kind for c in cases} == set(KINDS)
    assert sum(bool(c.predicted["changes"]) for c in cases) >= 12  # damage Kafka acts on
    assert sum(not c.predicted["changes"] for c in cases) >= 12  # and damage it does not read
    assert sum(c.repaired is not None for c in cases) >= CASES - 5  # repaired twins Kafka loads
    assert not wrong, "\n".join(json.dumps({"case": c.name, "kind": c.kind, "done": c.done,
                                            "recovery_point": c.recovery_point,
                                            "predicted": c.predicted, "observed": c.observed})
                                for c in wrong)  # fmt: skip


# --------------------------------------------------------------- loads that Kafka fails


def _abort_markers(log) -> list[int]:
    """Positions of the ABORT control batches of a segment (read by kafkacodec)."""
    from kafkacodec.records.batches import iter_batches

    data = log.read_bytes()
    out = []
    for pos, _size in _batches(data):
        b = next(iter(iter_batches(data[pos:], verify_crc=False)))
        if b.magic == 2 and b.is_control and b.records()[0].control.type == 0:
            out.append(pos)
    return out


def _overflow_mid_segment(d):
    """A batch in the middle of the last segment whose offset its segment cannot hold
    (Kafka's split needs the overflow in the last batch)."""
    log = sorted(d.glob("*.log"))[-1]
    data = bytearray(log.read_bytes())
    pos = _batches(bytes(data))[1][0]
    struct.pack_into(">q", data, pos, struct.unpack_from(">q", data, pos)[0] + 2**40)
    log.write_bytes(bytes(data))
    return "Split operation is only permitted for segments with overflow"


def _aborts_out_of_order(d):
    """Two aborted transactions' markers of one segment in decreasing offset order."""
    for log in sorted(d.glob("*.log")):
        marks = _abort_markers(log)
        if len(marks) >= 2:
            data = bytearray(log.read_bytes())
            later = struct.unpack_from(">q", data, marks[1])[0]
            struct.pack_into(">q", data, marks[0], later + 1)
            log.write_bytes(bytes(data))
            return "The last offset of appended transactions must increase sequentially"
    raise AssertionError(f"{d}: no segment with two ABORT markers")


@pytest.fixture(scope="module", params=VERSIONS)
def written(request, tmp_path_factory):
    """A broker's partitions with aborted transactions, after a clean shutdown."""
    root = tmp_path_factory.mktemp(f"fails-{request.param}")
    (root / "build").mkdir()
    broker = Broker(request.param, root / "broker")
    with broker:
        small = small_segments(broker, root / "build")
        broker.create_topic(root / "build", "source", SOURCES, **small)
        broker.create_topic(root / "build", "bad", 1, **small)
        broker.produce(root / "build", workload(SOURCES))
        broker.stop()
    return broker


@pytest.mark.parametrize("damage", [_overflow_mid_segment, _aborts_out_of_order])
def test_a_load_kafka_fails_is_predicted(written, damage):
    broker = written
    broker.transplant("bad-0", broker.log_dir / "source-0")
    expected = damage(broker.log_dir / "bad-0")
    # no recovery point for the partition: Kafka recovers every segment
    cp = broker.log_dir / RECOVERY_POINT_CHECKPOINT
    write_checkpoint(cp, {k: v for k, v in read_checkpoint(cp).items() if k[0] != "bad"})
    with Partition(broker.log_dir / "bad-0") as p:
        predicted = predict_load(p)
    assert predicted.fails, predicted
    said = json.loads(cli("recover", broker.log_dir / "bad-0", "--json", ok=None).stdout)
    assert said["kafka_load"]["fails"] == predicted.fails
    mark = broker.server_log.stat().st_size
    with pytest.raises(HarnessError):
        broker.start(timeout=90)
    broker.kill()
    assert broker.lines(expected, mark), broker.tail()


def test_after_a_clean_shutdown_only_a_segment_without_its_offset_index_is_recovered(written):
    """LogLoader after a clean shutdown: no segment is recovered, damage stays, but a segment
    whose offset index is missing is (loadSegmentFiles), and truncated without deleting the
    later segments: the log keeps its end, with a hole in its middle."""
    broker = written
    broker.transplant("bad-0", broker.log_dir / "source-0")
    d = broker.log_dir / "bad-0"
    logs = sorted(d.glob("*.log"))
    assert len(logs) >= 3
    middle, last = logs[1], logs[-1]
    third = _batches(middle.read_bytes())[2][0]
    for log, at in ((middle, third + 70), (last, _batches(last.read_bytes())[1][0] + 70)):
        data = bytearray(log.read_bytes())
        data[at] ^= 0xFF  # inside the records: a CRC mismatch
        log.write_bytes(bytes(data))
    middle.with_suffix(".index").unlink()
    (broker.log_dir / ".kafka_cleanshutdown").write_text('{"version":0,"brokerEpoch":-1}')
    sizes = {f.name: f.stat().st_size for f in logs}
    with Partition(d) as p:
        predicted = predict_load(p)
    assert predicted.clean_shutdown and not predicted.fails
    assert [(s.name, s.action, s.valid_bytes) for s in predicted.changes] == [(middle.name, "truncated", third)]
    mark = broker.server_log.stat().st_size
    with broker:
        broker.stop()
    loads = [line for line in broker.lines(r"Completed load of Log\(dir=\S*/bad-0,", mark)]
    assert len(loads) == 1, broker.tail()
    assert f"with {predicted.segments_after} segments, local-log-start-offset {predicted.log_start_offset} " \
           f"and log-end-offset {predicted.log_end_offset} in" in loads[0]
    assert {f.name: f.stat().st_size for f in sorted(d.glob("*.log"))} == sizes | {middle.name: third}

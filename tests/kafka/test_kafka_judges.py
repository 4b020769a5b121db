"""kafkacodec writes, Kafka judges (issue 37): partitions written by kafkacodec (the sample
log.dirs of its writer, and `kafkacodec rewrite` of it: identity, every codec, legacy
message sets converted to v2) are brought to a real broker of each release the way an
operator brings files to a KRaft broker: the topic is created through the broker (which
gives it its topic id), the broker is stopped, the partition's files are replaced (its
partition.metadata kept), and the broker is started without its clean-shutdown file, so
that its recovery (LogLoader) reads every segment. A pass: Kafka's recovery finds nothing to
cut, its log ends where kafkacodec says, and every record Kafka's consumer fetches equals
what kafkacodec reads from the same files."""

from __future__ import annotations

import pytest
from conftest import kafkacodec_cli as cli
from kafka_broker import VERSIONS, Broker, as_consumed

from kafkacodec.log import Partition
from kafkacodec.sample import write_sample_log_dirs

pytestmark = pytest.mark.kafka

#: What kafkacodec writes: (topic, the partition directory of the sample it comes from,
#: rewrite options, or None for the sample itself).
CASES = [
    ("sample-orders", "orders-0", None),
    ("sample-clicks", "clicks-0", None),
    ("sample-legacy", "legacy-events-0", None),  # message sets of magic 0 and 1, as written
    ("rewrite-orders", "orders-0", []),
    *[(f"rewrite-{c}", "orders-0", ["--compression", c]) for c in ("none", "gzip", "snappy", "lz4", "zstd")],
    ("rewrite-legacy-v2", "legacy-events-0", ["--magic", "2"]),
]  # fmt: skip
#: What Kafka's recovery says when it cuts or doubts a log: none may appear.
DOUBTS = ("Corruption found", "Found invalid offset", "Truncating", "truncated", "CorruptRecord",
          "Found invalid messages")  # fmt: skip


@pytest.fixture(scope="module", params=VERSIONS)
def judged(request, tmp_path_factory):
    version = request.param
    root = tmp_path_factory.mktemp(f"judge-{version}")
    build = root / "build"
    build.mkdir()
    sample = write_sample_log_dirs(root / "sample")
    (root / "rewritten").mkdir()
    sources = {}
    for topic, src, options in CASES:
        if options is None:
            sources[topic] = sample / src
        else:
            cli("rewrite", sample / src, root / "rewritten" / topic, *options, "--jobs", "1")
            sources[topic] = root / "rewritten" / topic
    broker = Broker(version, root / "broker")
    with broker:
        for topic in sources:
            broker.create_topic(build, topic, 1)
        broker.stop()
    for topic, src in sources.items():
        broker.transplant(f"{topic}-0", src)
    mark = broker.server_log.stat().st_size
    expected = {}
    for topic, src in sources.items():
        with Partition(src) as p:
            expected[topic] = {"end": p.log_end_offset, "start": p.log_start_offset, "records": as_consumed(p, partition=0)}
    with broker:  # an unclean start: LogLoader recovers every transplanted segment
        fetched = {topic: broker.consume(build, topic) for topic in sources}
        offsets = {topic: broker.list_offsets(build, topic) for topic in sources}
        # while the broker holds its log directory: what the tools do with it
        held = {"pid": broker.proc.pid,
                "repair": cli("recover", "--repair", broker.log_dir / "sample-orders-0", ok=None),
                "rewrite": cli("rewrite", broker.log_dir / "sample-orders-0", root / "copy", ok=None),
                "verify": cli("verify", broker.log_dir, ok=None)}  # fmt: skip
        broker.stop()
    return {"version": version, "broker": broker, "since": mark, "expected": expected,
            "fetched": fetched, "offsets": offsets, "held": held}  # fmt: skip


@pytest.mark.parametrize("topic", [c[0] for c in CASES])
def test_kafka_serves_what_kafkacodec_wrote(judged, topic):
    want = judged["expected"][topic]
    got = sorted(judged["fetched"][topic], key=lambda o: o["offset"])
    assert got == want["records"]
    answers = judged["offsets"][topic]["0"]
    assert answers["latest"]["offset"] == want["end"]
    assert answers["earliest"]["offset"] == want["start"]


def test_kafkas_recovery_cut_nothing(judged):
    broker = judged["broker"]
    doubts = [line for line in broker.log_text(judged["since"]).splitlines()
              if any(d in line for d in DOUBTS) and "-0" in line]  # fmt: skip
    assert not doubts, "\n".join(doubts[:10])
    recovered = broker.lines(r"Recovering unflushed segment|recover", judged["since"])
    assert recovered  # the unclean start did run the recovery


def test_a_running_broker_keeps_its_log_directory(judged):
    """The broker holds its log directory's .lock (FileChannel.tryLock, a POSIX lock): a
    repair and a rewrite of its partitions are refused, naming the broker's process; verify
    reads a live log (its last segments as far as they were written)."""
    held, pid = judged["held"], judged["held"]["pid"]
    for what in ("repair", "rewrite"):
        out = held[what]
        assert out.returncode == 2 and f"process {pid}" in out.stderr, (what, out.stderr)
    assert held["verify"].returncode == 0 and held["verify"].stdout.rstrip().endswith(": clean"), held["verify"].stdout

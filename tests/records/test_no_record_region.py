"""A v2 batch of no record whose records region holds bytes: Kafka reads no further than
the codec's head (DefaultRecordBatch: its iterators return no record at once, the streaming
one after opening the codec's stream, whose constructor reads the gzip member header or the
LZ4 frame header). The schema says it (kafka_compression's third argument, the record
count), so every reading path says the same: the generated parsers, the Construct
definitions, the record layer and the columns. Found by the fuzz run against Kafka 4.4.0
(peers.fuzz: 14,763 of 1,000,000 cases, where the Go package refused). Kafka itself judges
the corpus's cases of this family (tests/kafka/test_kafka_judges_corpus.py)."""

from __future__ import annotations

import pytest

from kafkacodec.constructs import CompressionFailed
from kafkacodec.generated.construct.kafka_record_batch import KafkaRecordBatch as ConstructBatch
from kafkacodec.generated.kafka_record_batch import KafkaRecordBatch
from kafkacodec.records.batches import Record, iter_batches
from kafkacodec.records.builders import build_batch
from kafkacodec.runtime import compression as C
from kafkacodec.runtime.errors import CompressionError

T = 1700000000000
JUNK = b"never read: not a record"
GZIP_HEAD = C.compress(C.GZIP, b"")[:10]

CASES = {
    # name: (codec, region, whether Kafka reads it: no record)
    "none-junk": (C.NONE, JUNK, True),
    "gzip-head-then-junk": (C.GZIP, GZIP_HEAD + JUNK, True),
    "gzip-no-head": (C.GZIP, JUNK, False),
    "lz4-no-frame-header": (C.LZ4, JUNK, False),
    "lz4-frame-header-only": (C.LZ4, C.compress(C.LZ4, b"")[:7] + JUNK, True),
    "zstd-junk": (C.ZSTD, JUNK, True),  # zstd-jni's stream reads nothing when opened
    "snappy-framed-then-junk": (C.SNAPPY, C.compress(C.SNAPPY, b"x")[:16] + JUNK, True),
    "snappy-raw-block-broken": (C.SNAPPY, b"\xff\xff\xff\xff\x0f", False),
}


def batch(codec: int, region: bytes) -> bytes:
    b = KafkaRecordBatch.parse(build_batch([Record(None, T, b"k", b"v")]))[0]
    b.read_records_region()
    b.attributes = codec
    b.records_region, b.records_region_raw, b.num_records = None, region, 0
    b.len_batch = b.crc = None
    return b.build()


@pytest.mark.parametrize("name", sorted(CASES))
def test_every_path_reads_no_further_than_the_codecs_head(name):
    codec, region, read = CASES[name]
    data = batch(codec, region)
    generated = KafkaRecordBatch.parse(data)[0]
    paths = {
        "generated": lambda: generated.read_records_region().records,
        "construct": lambda: ConstructBatch.parse(data).records_region.records,
        "records": lambda: [r for b in iter_batches(data) for r in b.records()],
        "process": lambda: C.kafka_compression_decode(region, codec, 2, 0),
    }
    for path, read_it in paths.items():
        if read:
            assert len(read_it()) == 0, path
        else:
            with pytest.raises((CompressionError, CompressionFailed)):
                read_it()


def test_a_count_keeps_the_whole_stream_read():
    """With records said to be there, the region is read whole as before: junk after a
    stream's end is the codec's rule, a missing record is refused."""
    with pytest.raises(CompressionError):
        C.kafka_compression_decode(JUNK, C.GZIP, 2, 1)
    assert C.kafka_compression_decode(JUNK, C.NONE, 2, 1) == JUNK
    assert C.kafka_compression_decode(JUNK, C.NONE, 2) == JUNK

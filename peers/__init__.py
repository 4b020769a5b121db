"""The ecosystem's record decoders over `kafkacodec corpus` (issue 39, part 5).

Every log image of the corpus, valid and damaged, is read by the record decoders of the Kafka
clients users read these bytes with, each as its consumer reads a fetched record set:

- franz-go: kgo.ProcessFetchPartition (kmsg, kgo's default decompressor);
- sarama: Broker.Fetch against a broker on loopback that answers with the bytes, the
  offsets and timestamps as partitionConsumer gives them;
- segmentio/kafka-go: protocol.RecordSet.ReadFrom, as kafka.Client.Fetch reads;
- kafka-protocol (Rust): RecordBatchDecoder::decode_all over the partition's records, as the
  crate's own fetch tests read a FetchResponse;
- rskafka (Rust): Records::read of a Fetch response's records field (public with the crate's
  unstable-fuzzing feature), then the records PartitionClient::fetch_records keeps;
- kafka-python and aiokafka: MemoryRecords with the fetchers' CRC check.

Each answer is compared with the reading of kafkacodec, which Kafka's own record classes
confirm case by case (tests/kafka/test_kafka_judges_corpus.py), and classed (CLASSES). The
report (`python -m peers --out DIR`) is a table per parser and, for every wrong value, crash,
hang, refused valid case and dropped record, a folder a maintainer can be sent: the corpus file, what Kafka
reads in it and what the parser returned.
"""

from __future__ import annotations

from typing import Any

from kafkacodec.records.javatext import java_text

#: What a parser made of a case, from best to worst for a reader of Kafka's data.
CLASSES = {
    "right": "the records Kafka reads, and an error exactly where Kafka refuses",
    "rejected": "a damaged case refused (with the records before the damage, if any)",
    "missed": "a damaged case accepted without an error: the records before the damage, the rest dropped in silence",
    "refused": "a valid case refused",
    "dropped": "a valid case accepted without an error, but records missing",
    "wrong": "records Kafka does not read there: other values, or more records",
    "crash": "a panic, or an exception that escaped the decoder",
    "hang": "no answer in time",
}


def _long(v: int) -> int:
    """v as Java's long arithmetic leaves it (Kafka's baseOffset + offsetDelta wraps)."""
    return (v + (1 << 63)) % (1 << 64) - (1 << 63)


def expected(data: bytes) -> dict[str, Any]:
    """Kafka's reading of a log image, as kafkacodec reads it, in the shape the parsers
    report: every record (control records flagged), and the error where the bytes are
    refused (None). Offsets and timestamps past int64 wrapped as Kafka's long wraps them
    (kafkacodec's records give the exact sum), header keys decoded as Java decodes UTF-8."""
    import kafkacodec as kc
    from kafkacodec.runtime.errors import KafkacodecError

    records: list[dict] = []
    try:
        for b in kc.iter_batches(data):
            records += [record_dict(b, r) for r in b.records()]
    except KafkacodecError as err:
        return {"records": records, "error": f"{type(err).__name__}: {err}"}
    return {"records": records, "error": None}


def record_dict(b, r) -> dict:
    """A record kafkacodec read, in the shape the parsers answer in: offsets and timestamps
    wrapped as Kafka's long wraps them (none for magic 0), bytes as hex, header keys as
    Java decodes UTF-8, control records flagged."""
    return {
        "offset": _long(r.offset), "timestamp": None if b.magic == 0 else _long(r.timestamp),
        "key": None if r.key is None else bytes(r.key).hex(),
        "value": None if r.value is None else bytes(r.value).hex(),
        "headers": [[java_text(k), None if v is None else bytes(v).hex()] for k, v in r.headers],
        "control": bool(b.is_control),
    }  # fmt: skip


def _data(records: list[dict]) -> list[dict]:
    """The records a consumer hands to its user: the control records left out (each parser
    flags them its own way; a consumer skips them)."""
    return [{k: v for k, v in r.items() if k != "control"} for r in records if not r["control"]]


def _untimed(theirs: list[dict], mine: list[dict]) -> list[dict]:
    """theirs with no timestamp where Kafka reads none (a magic 0 message): each client
    says "none" its own way (the zero time, the epoch, None), none of them wrong."""
    return [dict(t, timestamp=None) if i < len(mine) and mine[i]["timestamp"] is None else t
            for i, t in enumerate(theirs)]  # fmt: skip


def classify(want: dict, got: dict) -> str:
    """One of CLASSES for a parser's answer (got) to a case kafkacodec reads as want."""
    if got.get("hang"):
        return "hang"
    if got.get("panic"):
        return "crash"
    mine = _data(want["records"])
    theirs = _untimed(_data(got.get("records") or []), mine)
    if theirs != mine[: len(theirs)]:
        return "wrong"
    if want["error"] is None:
        if got.get("error"):
            return "refused"
        return "right" if theirs == mine else "dropped"
    return "rejected" if got.get("error") else "missed"

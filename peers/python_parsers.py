"""kafka-python's and aiokafka's record decoders (and kafkacodec's reading paths, for a fuzz
run's own check: kafkacodec, its native loops; kafkacodec-python, the generated parsers
alone; kafkacodec-columns, the columnar walk) over Kafka log images, as each client's
fetcher reads a fetched record set: MemoryRecords, every batch's CRC checked (the consumers'
check_crcs, on by default), control batches told apart. The same JSON lines as the Go
program (go/cmd/peers):

    python -m peers.python_parsers PARSER FILE...    (or "-": the files on standard input)

An exception of the library's own error classes is its answer ("error"); any other
exception (IndexError, struct.error, ...) escaped its decoder ("panic", with the traceback).
"""

from __future__ import annotations

import json
import sys
import traceback


def _records(memory_records, corrupt, out: list[dict]) -> None:
    records = memory_records
    while (batch := records.next_batch()) is not None:
        if not batch.validate_crc():  # Fetcher: check_crcs (kafka-python and aiokafka)
            raise corrupt("a batch's CRC does not match its bytes")
        control = bool(getattr(batch, "is_control_batch", False))
        for r in batch:
            out.append({
                "offset": r.offset,
                "timestamp": r.timestamp,
                "key": None if r.key is None else bytes(r.key).hex(),
                "value": None if r.value is None else bytes(r.value).hex(),
                "headers": [[k, None if v is None else bytes(v).hex()] for k, v in r.headers],
                "control": control,
            })  # fmt: skip


def kafka_python(data: bytes, out: list[dict]) -> None:
    from kafka.errors import CorruptRecordError
    from kafka.record.memory_records import MemoryRecords

    _records(MemoryRecords(data), CorruptRecordError, out)


def aiokafka(data: bytes, out: list[dict]) -> None:
    from aiokafka.errors import CorruptRecordException
    from aiokafka.record.memory_records import MemoryRecords

    _records(MemoryRecords(data), CorruptRecordException, out)


def kafkacodec(data: bytes, out: list[dict]) -> None:
    """kafkacodec's own reading (iter_batches, records(), CRCs checked: its native loops
    where they are built), in the same shape."""
    import kafkacodec as kc
    from peers import record_dict

    for b in kc.iter_batches(data):
        out.extend(record_dict(b, r) for r in b.records())


def kafkacodec_python(data: bytes, out: list[dict]) -> None:
    """kafkacodec's reading by the generated parsers alone (the reference its native loops
    are held to)."""
    from kafkacodec.records.batches import reference_parsers

    with reference_parsers():
        kafkacodec(data, out)


def kafkacodec_columns(data: bytes, out: list[dict]) -> None:
    """kafkacodec's columnar walk (iter_columns: the Arrow tables the Spark format and
    `kafkacodec spark` read), its rows in the same shape."""
    from kafkacodec.records.columnar import iter_columns
    from peers import _long

    for table in iter_columns(data):
        for row in table.to_pylist():
            out.append({
                "offset": _long(row["offset"]), "timestamp": None if row["magic"] == 0 else _long(row["timestamp"]),
                "key": None if row["key"] is None else row["key"].hex(),
                "value": None if row["value"] is None else row["value"].hex(),
                "headers": [[h["key"], None if h["value"] is None else h["value"].hex()] for h in row["headers"]],
                "control": bool(row["is_control"]),
            })  # fmt: skip


PARSERS = {"kafka-python": kafka_python, "aiokafka": aiokafka, "kafkacodec": kafkacodec,
           "kafkacodec-python": kafkacodec_python, "kafkacodec-columns": kafkacodec_columns}  # fmt: skip


def _own_errors(name: str) -> tuple[type, ...]:
    if name.startswith("kafkacodec"):
        from kafkacodec.runtime.errors import KafkacodecError

        return (KafkacodecError,)
    if name == "kafka-python":
        from kafka.errors import KafkaError

        return (KafkaError,)
    from aiokafka.errors import KafkaError as AioKafkaError

    return (AioKafkaError,)


def main(argv: list[str]) -> int:
    name, files = argv[0], argv[1:]
    if files == ["-"]:  # each name answered as soon as it is read (peers.Session keeps one process)
        files = (line.strip() for line in iter(sys.stdin.readline, "") if line.strip())
    read, own = PARSERS[name], _own_errors(name)
    for f in files:
        with open(f, "rb") as fh:
            data = fh.read()
        result: dict = {"file": f, "parser": name}
        result["records"] = records = []  # the records read before an error are part of the answer
        try:
            read(data, records)
        except own as err:
            result["error"] = f"{type(err).__name__}: {err}"
        except Exception as err:  # noqa: BLE001 - escaped the decoder: what the report calls a crash
            result["panic"] = "".join(traceback.format_exception(err))
        print(json.dumps(result), flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))

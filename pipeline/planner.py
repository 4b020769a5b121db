"""The Python half of the JVM reader (jvm/, the `kafkacodec` format when its jar is on
Spark's classpath): Kafka's rules stay here, the JVM only decodes.

The JVM's data source runs `python -m kafkacodec.pipeline.planner` and talks to it in JSON
lines, one request and one answer each (a process kept for the JVM's life):

  {"op": "describe", "options": {...}}  the schema of a read (records_schema) for Spark's
                                        inferSchema, the options checked as this source
                                        checks them
  {"op": "plan", "options": {...}}      the input partitions (record_slices: Spark's options
                                        resolved, offsets where the read starts, cut as Spark
                                        cuts them), each a slice in JSON (slice_json)
  {"op": "rows", "options": {...}, "slice": {...}, "out": PATH}
                                        the rows of one slice read here (read.records, with
                                        scan.current: where the broker moved its segment),
                                        written to PATH as an Arrow IPC stream

The JVM reads a slice itself only while it can prove the bytes regular (the planned file,
CRCs right, the layouts Kafka writes); for anything else it asks for `rows` and skips the
rows it already gave, so that what Python reads decides (errors and their text included).
Each answer is the request's result, or {"error": message} when it raised, with the
warnings and log records the request raised ({"warnings": [...]}), which the JVM logs.
"""

from __future__ import annotations

import base64
import json
import logging
import pickle
import sys
import warnings
from pathlib import Path

from .options import Options, input_paths
from .read import record_slices, records, records_schema
from .request import Request
from .scan import SegmentSlice


def _local(s: SegmentSlice) -> bool:
    return s.segment is None and isinstance(s.directory, Path)


def slice_json(s: SegmentSlice) -> dict:
    """A slice for the JVM: where it is and what it keeps. `python`: the JVM cannot open it
    (an object store's, a tiered segment) and asks for its rows."""
    return {
        "directory": str(s.directory), "topic": s.topic, "partition": s.partition,
        "base_offset": s.base_offset, "start": s.start, "end": s.end, "first": s.first,
        "last": s.last, "since": s.since, "aborted": [list(a) for a in s.aborted],
        "identity": list(s.identity) if s.identity is not None else None,
        "deleted": s.deleted, "python": not _local(s),
        "pickle": base64.b64encode(pickle.dumps(s)).decode("ascii"),
    }  # fmt: skip


def _slice(d: dict) -> SegmentSlice:
    """The slice the JVM names, as planned (pickled in its JSON: an object store's path
    keeps its options, a tiered segment its remote segment)."""
    return pickle.loads(base64.b64decode(d["pickle"]))


def describe(options: dict) -> dict:
    Request.parse(options)  # the same checks (and warnings) as the Python source's
    opts = Options.parse(options)
    return {"schema": records_schema(opts.include_headers, opts.include_metadata)}


def plan(options: dict) -> dict:
    """The slices of a read, and what the JVM keeps of each record (the rest of Options is
    in the slices, or is Python's to apply)."""
    opts = Options.parse(options)
    slices = record_slices(input_paths(options), opts, Request.parse(options))
    return {"slices": [slice_json(s) for s in slices],
            "read": {"verify_crc": opts.verify_crc, "include_control": opts.include_control}}  # fmt: skip


def rows(options: dict, d: dict, out: str) -> dict:
    """The slice's rows written to out as an Arrow IPC stream (nothing written when none)."""
    import pyarrow as pa

    opts = Options.parse(options)
    n = 0
    writer = None
    try:
        for batch in records(_slice(d), opts):
            if writer is None:
                writer = pa.ipc.new_stream(out, batch.schema)
            writer.write_batch(batch)
            n += batch.num_rows
    finally:
        if writer is not None:
            writer.close()
    return {"rows": n}


class _Collect(logging.Handler):
    def __init__(self, into: list):
        super().__init__(logging.WARNING)
        self.into = into

    def emit(self, record):
        self.into.append(record.getMessage())


def answer(request: dict) -> dict:
    """One request's answer, with the warnings it raised."""
    said: list[str] = []
    handler = _Collect(said)
    log = logging.getLogger("kafkacodec")
    log.addHandler(handler)
    try:
        with warnings.catch_warnings(record=True) as caught:
            warnings.simplefilter("always")
            op = request.get("op")
            options = request.get("options") or {}
            if op == "describe":
                result = describe(options)
            elif op == "plan":
                result = plan(options)
            elif op == "rows":
                result = rows(options, request["slice"], request["out"])
            else:
                result = {"error": f"unknown request {op!r}"}
        said += [str(w.message) for w in caught]
    except Exception as err:  # noqa: BLE001 - every error goes back to the JVM, named
        result = {"error": str(err) or type(err).__name__, "type": type(err).__name__}
    finally:
        log.removeHandler(handler)
    if said:
        result["warnings"] = said
    return result


def main() -> None:
    """Requests on stdin, answers on stdout, one JSON line each, until stdin ends (the JVM
    that started it ends it: a Ctrl-C at the terminal is not this process's to answer)."""
    import signal

    signal.signal(signal.SIGINT, signal.SIG_IGN)
    out = sys.stdout
    sys.stdout = sys.stderr  # nothing but answers on the JVM's pipe
    for line in sys.stdin:
        if not line.strip():
            continue
        try:
            request = json.loads(line)
        except json.JSONDecodeError as err:
            result = {"error": f"not a JSON request: {err}"}
        else:
            result = answer(request)
        out.write(json.dumps(result) + "\n")
        out.flush()


if __name__ == "__main__":
    main()

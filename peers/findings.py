"""Divergences a maintainer can act on (issue 57, part 4): Kafka's verdict in the peers'
shape, a signature that says what differs (so that a thousand cases of one bug are one
finding), a minimizer that keeps the divergence while it removes entries and bytes, and
the folder a finding is written to.

    want = kafka_answer(verdict)                 # KafkaJudge's JSON -> {"records", "error"}
    sig = signature(want, got)                   # "wrong: value", "missed: CorruptRecordException: ..."
    small = minimize(data, lambda d: signature(kafka(d), parser(d)) == sig)
    write_finding(out / parser_name, small, kafka(small), parser(small), sig, "command to rerun")
"""

from __future__ import annotations

import json
import re
import struct
from collections.abc import Callable
from pathlib import Path

from . import CLASSES, _data, _long, _untimed, classify

__all__ = ["VIEWS", "BY_DESIGN", "by_design", "kafka_answer", "signature", "minimize", "entries", "write_finding", "FIELDS"]

#: A record's fields in the order a difference is named by.
FIELDS = ("offset", "timestamp", "key", "value", "headers")
_NUMBERS = re.compile(r"-?\b(0x[0-9a-fA-F]+|\d+)\b")


#: The two answers Kafka gives about an image (KafkaJudge): "records", its record classes
#: reading every batch and record as a log reader does (the broker, DumpLogSegments,
#: kafkacodec); "consumer", what a KafkaConsumer's CompletedFetch hands its application
#: (control records left out, a record below the next fetch offset skipped, a legacy
#: wrapper's own CRC not checked). A client library is judged by the second.
VIEWS = ("records", "consumer")


def kafka_answer(verdict: dict, view: str = "records") -> dict:
    """KafkaJudge's verdict on an image (the oracle: Kafka's record classes) in the shape
    the parsers answer in: every record (control records flagged), and Kafka's refusal
    ("Class: message") or None, with the position of the batch it refused (the records
    view; the consumer view has no position)."""
    if view == "consumer":
        return _consumer_answer(verdict["consumer"])
    records = []
    for b in verdict.get("batches", []):
        for r in b["records"]:
            records.append({
                "offset": _long(r["offset"]), "timestamp": None if b["magic"] == 0 else _long(r["timestamp"]),
                "key": r["key"], "value": r["value"], "headers": [list(h) for h in r["headers"]],
                "control": bool(b["control"]),
            })  # fmt: skip
    err = verdict.get("error")
    out = {"records": records, "error": None if err is None else f"{err['class']}: {err['message']}",
           "error_position": None if err is None else err["position"]}  # fmt: skip
    if err is not None and err["class"] == "OutOfMemoryError":
        # no verdict: Kafka's DataLogInputStream allocates an inner message's declared size
        # before reading it; with a heap that holds it, the message is a partial entry
        out["unjudged"] = f"Kafka's reader ran out of the oracle's heap ({err['message']})"
    return out


def _consumer_answer(c: dict) -> dict:
    records = [{
        "offset": r["offset"], "timestamp": None if r["timestamp_type"] == "NoTimestampType" else r["timestamp"],
        "key": r["key"], "value": r["value"], "headers": [list(h) for h in r["headers"]], "control": False,
    } for r in c["records"]]  # fmt: skip
    err = c.get("error")
    out = {"records": records, "error": None if err is None else f"{err['class']}: {err['message']}",
           "error_position": None}  # fmt: skip
    if err is not None and err["class"] == "OutOfMemoryError":
        out["unjudged"] = f"Kafka's reader ran out of the oracle's heap ({err['message']})"
    return out


def _generic(text: str) -> str:
    """A message with its numbers taken out: the rule it states, not the case's values."""
    return _NUMBERS.sub("N", text.splitlines()[0] if text else "")[:160]


def signature(want: dict, got: dict) -> str:
    """What a parser's answer (got) does differently from Kafka's (want), in words that
    are the same for every case of one bug: its class (peers.CLASSES) and, for wrong
    records, the first field that differs; for a refusal or a miss, Kafka's rule (its
    exception and message, numbers taken out); for a crash, the first line of the panic.
    "right" and "rejected" are no divergence, nor "unjudged" (Kafka gave no verdict)."""
    if want.get("unjudged"):
        return "unjudged"
    if got.get("handed_over") and not got.get("panic"):
        # a reader that hands the rest to another (the Spark format's JVM reader to
        # kafkacodec's Python one): what it gave before must be Kafka's first records
        mine = _data(want["records"])
        theirs = _untimed(_data(got.get("records") or []), mine)
        if theirs == mine[: len(theirs)]:
            return "handed over"
    cls = classify(want, got)
    if cls == "wrong":
        mine = _data(want["records"])
        theirs = _untimed(_data(got.get("records") or []), mine)
        for a, b in zip(theirs, mine):
            for f in FIELDS:
                if a.get(f) != b.get(f):
                    return f"wrong: {f}"
        return "wrong: more records than Kafka reads"
    if cls in ("missed", "refused"):
        return f"{cls}: {_generic(want['error'] if cls == 'missed' else got.get('error') or '')}"
    if cls == "crash":
        panic = str(got.get("panic"))
        if "Traceback (most recent call last):" in panic:  # Python's: its last line is the exception
            panic = next((line for line in reversed(panic.splitlines()) if line.strip()), panic)
        return f"crash: {_generic(panic)}"
    return cls


#: Where a parser answers otherwise than Kafka on purpose: (parser, signature pattern, why).
#: A case so signed is counted apart (by design), with its reason, not as a divergence.
BY_DESIGN: tuple[tuple[str, str, str], ...] = (
    ("kafkacodec", r"refused: (VarintError: )?byte N: (varint|varlong) value out of range.*",
     "FORMATS.md: a varint or varlong whose value is out of range is corrupt. Kafka's "
     "ByteUtils.readVarint / readVarlong shift the last (5th, 10th) byte in whole and keep the "
     "low 32 / 64 bits: a value past the range is read as another, in silence"),
    ("kafkacodec", r"missed: IllegalArgumentException: newLimit < N: \(N < N\)",
     "a partial last entry whose size is within 12 of 2^31: ByteBufferLogInputStream.nextBatch "
     "adds LOG_OVERHEAD to it in an int, which overflows, and ByteBuffer.limit refuses the "
     "negative end; FileLogInputStream (the broker reading the same bytes from a segment) "
     "and kafkacodec read a partial entry, no error"),
    ("kafkacodec-columns", r"refused: CorruptRecordError: (byte N: )?(the|a record's) (offset|timestamp|offset or timestamp) "
                           r"(N )?(of a record )?does not fit in N bits",
     "docs/corpus.md: a record whose base offset or timestamp plus its delta passes 2^63, which Kafka "
     "wraps as Java's long does, has no int64 value for a column: the columns (and the Spark format) "
     "refuse it, the records give the exact sum"),
)  # fmt: skip


def by_design(parser: str, sig: str) -> str | None:
    """Why parser's answer differs from Kafka's on purpose in cases signed sig, or None
    (kafkacodec's rules hold for each of its reading paths, kafkacodec-python, ...)."""
    for name, pattern, why in BY_DESIGN:
        if (parser == name or parser.startswith(name + "-")) and re.fullmatch(pattern, sig):
            return why
    return None


def diverges(sig: str) -> bool:
    """Whether a signature is a divergence (not right, rejected where Kafka refuses, or
    a case Kafka gave no verdict on, nor one handed over to another reader)."""
    return sig.split(":")[0] not in ("right", "rejected", "unjudged", "handed over")


def entries(data: bytes) -> list[tuple[int, int]]:
    """The top-level entries of an image as (start, end), by their framing alone (base
    offset, length: 12 bytes, then the length's bytes); a last partial entry runs to the
    end. Nothing is decoded: a damaged entry is an entry too."""
    out, pos = [], 0
    while pos < len(data):
        if len(data) - pos < 12:
            out.append((pos, len(data)))
            break
        (size,) = struct.unpack_from(">i", data, pos + 8)
        end = pos + 12 + size if size >= 0 else len(data)
        out.append((pos, min(end, len(data))))
        pos = min(end, len(data))
    return out


def minimize(data: bytes, still: Callable[[bytes], bool], budget: int = 3000) -> bytes:
    """The smallest image found that still diverges as data does (still(image) True),
    within `budget` calls of still: whole top-level entries removed, then the end cut,
    then runs of bytes removed, from large to single bytes (delta debugging). data must
    diverge."""
    calls = 0

    def keep(candidate: bytes) -> bool:
        nonlocal calls
        if calls >= budget or not candidate:
            return False
        calls += 1
        return still(candidate)

    best = bytes(data)
    changed = True
    while changed and calls < budget:
        changed = False
        spans = entries(best)
        for start, end in reversed(spans):  # whole entries
            if len(spans) > 1 and keep(best[:start] + best[end:]):
                best, changed = best[:start] + best[end:], True
                spans = entries(best)
        step = len(best) // 2
        while step >= 1 and calls < budget:  # the end cut
            if keep(best[: len(best) - step]):
                best, changed = best[: len(best) - step], True
            else:
                step //= 2
        size = max(1, len(best) // 2)
        while size >= 1 and calls < budget:  # runs of bytes removed
            at = 0
            while at < len(best) and calls < budget:
                candidate = best[:at] + best[at + size :]
                if keep(candidate):
                    best, changed = candidate, True
                else:
                    at += size
            size //= 2
    return best


#: What kafka.json holds, by the answer the parser was judged by (VIEWS).
KAFKA_JSON = {
    "records": "what Kafka's record classes read (MemoryRecords, `ensureValid` on every batch and record, "
               "Kafka's decompression), control records flagged",
    "consumer": "what Kafka's consumer hands its application (CompletedFetch.fetchRecords, check.crcs on: "
                "control records left out, records below the next fetch offset skipped)",
}  # fmt: skip


def _near(path: Path) -> str:
    """A path relative to the checkout when it is inside it (a report committed there
    names its inputs the same on every machine)."""
    root = Path(__file__).resolve().parents[1]
    try:
        return str(path.resolve().relative_to(root))
    except ValueError:
        return str(path)


def write_finding(folder: Path, data: bytes, want: dict, got: dict, sig: str, reproduce: str,
                  *, found_in: str = "", view: str = "records") -> Path:  # fmt: skip
    """A finding's folder, named by its signature: the input, Kafka's answer (by `view`),
    the parser's, and a README that says what differs and the one command that reproduces
    it (`reproduce`, its "{input}" replaced by the input's path, relative to the checkout
    when it is inside it: run from there)."""
    name = re.sub(r"[^a-z0-9]+", "-", sig.lower()).strip("-")[:80] or "finding"
    d = folder / name
    d.mkdir(parents=True, exist_ok=True)
    (d / "input.bin").write_bytes(data)
    (d / "kafka.json").write_text(json.dumps(want, indent=1) + "\n")
    (d / "parser.json").write_text(json.dumps(got, indent=1) + "\n")
    cls = sig.split(":")[0]
    (d / "README.md").write_text(
        f"# {folder.name}: {sig}\n\n{CLASSES.get(cls, cls)[0].upper() + CLASSES.get(cls, cls)[1:]}.\n\n"
        f"- `input.bin`: {len(data)} bytes{(' (minimized from ' + found_in + ')') if found_in else ''}.\n"
        f"- `kafka.json`: {KAFKA_JSON[view]}.\n"
        "- `parser.json`: what the parser answered.\n\n"
        f"To reproduce:\n\n    {reproduce.replace('{input}', _near(d / 'input.bin'))}\n"
    )  # fmt: skip
    return d

"""Internal-topic benchmark: decoding `__consumer_offsets` records (an OffsetCommitKey and
its OffsetCommitValue, each with its version prefix) to Python values, side by side in one
interleaved run:

- kafkacodec: `kafkacodec.internal.DEFAULT.coordinator_pairs` (all records in one call:
  the framing, the version check, the native interpreter of the generated programs);
- kafkacodec, one record a call: `coordinator_key` / `coordinator_value` per record;
- kafkacodec, Python only: the same with the native interpreter switched off (the
  generated Python parsers);
- Kaitai (official Python): the official compiler's Python output for the same schemas
  (schemas/internal/), the key and value read at their versions;
- hand-written struct: a decoder written for these two specs with `struct`, the floor a
  careful Python programmer reaches without a code generator.

    python -m bench.internal [--records 200000] [--repeat 3]

Records per second (a record is a key and its value) and payloads per second; medians of
--repeat runs. JSON goes to bench/results/internal.json.
"""

from __future__ import annotations

import argparse
import random
import statistics
import struct
import sys
import time
from pathlib import Path

from bench import save
from kafkacodec.internal import codecs as C
from kafkacodec.internal.codecs import Codecs

ROOT = Path(__file__).resolve().parents[1]
TOPIC = "__consumer_offsets"


#: The corpus's consumer groups and the topics they commit offsets of (32 partitions each).
GROUPS = [f"group-{i}" for i in range(50)]
TOPICS = [f"orders-{i}" for i in range(20)]


def corpus(n: int) -> list[tuple[bytes, bytes]]:
    """n (key, value) pairs as a broker writes them: OffsetCommitKey version 1 (group,
    topic, partition) and OffsetCommitValue version 3 or 4 (offset, leader epoch, metadata,
    commit timestamp), with seeded group and topic names."""
    rnd = random.Random(20)
    groups, topics = GROUPS, TOPICS

    def s16(text: str) -> bytes:
        raw = text.encode()
        return struct.pack(">h", len(raw)) + raw

    out = []
    for i in range(n):
        key = struct.pack(">h", 1) + s16(rnd.choice(groups)) + s16(rnd.choice(topics))
        key += struct.pack(">i", rnd.randrange(32))
        offset, ts = rnd.randrange(1 << 40), 1_700_000_000_000 + i
        if i % 2:  # version 3: classic string
            value = struct.pack(">hqi", 3, offset, 7) + s16("") + struct.pack(">q", ts)
        else:  # version 4: flexible, compact string, no tagged fields
            value = struct.pack(">hqib", 4, offset, 7, 1) + struct.pack(">qb", ts, 0)
        out.append((key, value))
    return out


def kafkacodec_pairs(codecs: Codecs, pairs) -> int:
    """The bulk API: every pair in one call."""
    return len(codecs.coordinator_pairs(TOPIC, pairs))


def kafkacodec_decode(codecs: Codecs, pairs) -> int:
    key_of, value_of = codecs.coordinator_key, codecs.coordinator_value
    n = 0
    for k, v in pairs:
        key = key_of(TOPIC, k)
        value_of(TOPIC, key.record_type, v)
        n += 1
    return n


_H, _I, _Q, _QI = (
    struct.Struct(">h"),
    struct.Struct(">i"),
    struct.Struct(">q"),
    struct.Struct(">qi"),
)


def handwritten_decode(pairs) -> int:
    """OffsetCommitKey v0-1 and OffsetCommitValue v0-4 by hand (as Burrow or kminion do)."""
    n = 0
    for k, v in pairs:
        (n1,) = _H.unpack_from(k, 2)
        group = k[4 : 4 + n1].decode()
        at = 4 + n1
        (n2,) = _H.unpack_from(k, at)
        topic = k[at + 2 : at + 2 + n2].decode()
        (partition,) = _I.unpack_from(k, at + 2 + n2)
        (version,) = _H.unpack_from(v, 0)
        if version >= 3:
            offset, epoch = _QI.unpack_from(v, 2)
            at = 14
        else:
            (offset,) = _Q.unpack_from(v, 2)
            epoch, at = -1, 10
        if version >= 4:
            ln, at = v[at] - 1, at + 1
        else:
            (ln,) = _H.unpack_from(v, at)
            at += 2
        metadata = v[at : at + ln].decode()
        (commit_ts,) = _Q.unpack_from(v, at + ln)
        _ = (group, topic, partition, offset, epoch, metadata, commit_ts)
        n += 1
    return n


def kaitai_modules():
    """The official compiler's Python output for schemas/internal, or None."""
    import shutil
    import tempfile

    ksc = ROOT / "tests" / "ksc"
    if (
        shutil.which("node") is None
        or not (ksc / "node_modules" / "kaitai-struct-compiler").exists()
    ):
        return None
    from kafkacodec.export import compile_schemas
    from kafkacodec.schemas import __path__ as schemas

    out = Path(tempfile.mkdtemp(prefix="kafkacodec-bench-ksc-internal-"))
    results = compile_schemas(out, ["python"], Path(schemas[0]))
    if not all(r["ok"] for r in results):
        return None
    sys.path.insert(0, str(out / "python"))
    import offset_commit_key  # noqa: PLC0415 - generated at run time
    import offset_commit_value  # noqa: PLC0415

    return offset_commit_key, offset_commit_value


def kaitai_decode(mods, pairs) -> int:
    from kaitaistruct import BytesIO, KaitaiStream

    key_mod, value_mod = mods
    n = 0
    for k, v in pairs:
        key_mod.OffsetCommitKey(int.from_bytes(k[:2], "big"), KaitaiStream(BytesIO(k[2:])))
        value_mod.OffsetCommitValue(int.from_bytes(v[:2], "big"), KaitaiStream(BytesIO(v[2:])))
        n += 1
    return n


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(
        prog="python -m bench.internal", description=__doc__.split("\n")[0]
    )
    ap.add_argument("--records", type=int, default=200_000)
    ap.add_argument("--repeat", type=int, default=3)
    args = ap.parse_args(argv)
    pairs = corpus(args.records)
    python_only = Codecs()
    python_only.program = lambda cls: None  # type: ignore[method-assign]  # no native path
    peers = {"kafkacodec": lambda: kafkacodec_pairs(C.DEFAULT, pairs),
             "kafkacodec, one record a call": lambda: kafkacodec_decode(C.DEFAULT, pairs),
             "kafkacodec (Python only)": lambda: kafkacodec_decode(python_only, pairs),
             "hand-written struct": lambda: handwritten_decode(pairs)}  # fmt: skip
    mods = kaitai_modules()
    if mods is not None:
        few = pairs[: max(1, len(pairs) // 10)]  # it is slow: a tenth of the records
        peers["Kaitai (official Python)"] = lambda: kaitai_decode(mods, few)
    times: dict[str, list[float]] = {p: [] for p in peers}
    for rep in range(args.repeat):
        order = list(peers)[rep % len(peers) :] + list(peers)[: rep % len(peers)]
        for name in order:
            t0 = time.perf_counter()
            n = peers[name]()
            times[name].append(n / (time.perf_counter() - t0))
    rows = {name: statistics.median(v) for name, v in times.items()}
    base = rows["kafkacodec"]
    print(f"__consumer_offsets records (OffsetCommitKey + OffsetCommitValue v3/v4), {args.records} records, "
          f"median of {args.repeat}; native interpreter: {'yes' if C._programs else 'no'}")  # fmt: skip
    print(f"{'decoder':28} {'records/s':>12} {'payloads/s':>12} {'kafkacodec is':>14}")
    for name, rate in rows.items():
        print(f"{name:28} {rate:12,.0f} {2 * rate:12,.0f} {base / rate:13.2f}x")
    if mods is None:
        print("Kaitai (official Python): skipped (needs node and tests/ksc/node_modules)")
    save("internal", {"records": args.records, "records_per_s": rows})
    return 0


if __name__ == "__main__":
    sys.exit(main())

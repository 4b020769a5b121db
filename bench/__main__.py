"""Codec benchmark: kafkacodec side by side with kafka-python, aiokafka (its compiled
reader and builders), the official Kaitai compiler's Python output for our schemas, and
Construct, on one deterministic corpus per format, in ONE interleaved run.

    python -m bench [--mb 50] [--repeat 3] [--only FIGURE ...] [--corpora NAME ...]

Corpora (about --mb MB each): v2 uncompressed, v2 lz4, v2 zstd, magic 1 uncompressed;
100-record batches of 10-byte keys, 100-byte values (hex text of seeded random bytes: they
compress about 2:1, as text payloads do) and one header (magic 1 has no headers; its
"batch" is 100 messages). Figures:

- decode: every record of every batch, CRCs checked (records/s and MB/s of input);
- encode: the same records into batches (records/s);
- walk: batch headers only (each peer reads its batches' base offset, last offset and
  count, or what its API offers for them), no CRC, no records (batches/s); also the walk
  alone, nothing read;
- crc: every batch's CRC verified (GB/s of input);
- columnar: records into columns (kafkacodec's Arrow table), records/s, next to the
  peers' object decoders.

Every repetition runs every (figure, corpus, peer) once, in turn (starting with a different
peer each time), so that drift on a shared machine and cold caches hit all alike; the table shows medians and the ratio to kafka-python (and to
aiokafka, whose Cython reader is the fastest peer). A peer that cannot run here (the
Kaitai compiler needs node and tests/ksc/node_modules) is listed as skipped. JSON goes to
bench/results/codec.json. The peers come from the `bench` extra.
"""

from __future__ import annotations

import argparse
import operator
import os
import random
import shutil
import statistics
import sys
import tempfile
import time
import zlib
from pathlib import Path
from types import SimpleNamespace

import kafkacodec as kc
from bench import save
from kafkacodec.runtime.compression import CODEC_IDS
from kafkacodec.runtime.crc import crc32c

ROOT = Path(__file__).resolve().parents[1]
RECORDS_PER_BATCH = 100
HEADERS = [("h", b"hdr-value")]
BASE_TS = 1_700_000_000_000
CORPORA = {  # name: (magic, codec)
    "v2 none": (2, "none"),
    "v2 gzip": (2, "gzip"),
    "v2 snappy": (2, "snappy"),
    "v2 lz4": (2, "lz4"),
    "v2 zstd": (2, "zstd"),
    "v1 none": (1, "none"),
    "v1 gzip": (1, "gzip"),
    "v0 none": (0, "none"),
    "v0 gzip": (0, "gzip"),
}
WALK_PASSES = 20  # walks of the corpus a walk sample times
FIGURES = ("decode", "encode", "walk", "crc", "columnar")
UNITS = {"decode": "rec/s", "encode": "rec/s", "walk": "batches/s", "crc": "GB/s",
         "columnar": "rec/s"}  # fmt: skip


# ---------------------------------------------------------------------------- corpus


def _records(magic: int) -> list:
    """The records of every batch: 10-byte keys, 100-byte values, one header (v2)."""
    rnd = random.Random(42)
    headers = HEADERS if magic >= 2 else ()
    return [
        kc.Record(None, BASE_TS + i, b"key-%06d" % i, rnd.randbytes(50).hex().encode(), headers)
        for i in range(RECORDS_PER_BATCH)
    ]


def encoded_batches(magic: int, codec: str, n_batches: int):
    """kafkacodec's encoding of n_batches batches, one at a time."""
    recs = _records(magic)
    for b in range(n_batches):
        if magic >= 2:
            yield kc.build_batch(recs, base_offset=b * RECORDS_PER_BATCH, compression=codec)
        else:
            yield kc.build_message_set(recs, magic=magic, base_offset=b * RECORDS_PER_BATCH,
                                       compression=codec)  # fmt: skip


def corpus(magic: int, codec: str, mb: float) -> tuple[bytes, int]:
    """About mb MB of batches, and how many."""
    one = len(next(encoded_batches(magic, codec, 1)))
    n = max(1, round(mb * 1e6 / one))
    return b"".join(encoded_batches(magic, codec, n)), n


# ------------------------------------------------------------------------ kafkacodec


def ours_decode(data):
    n = 0
    for b in kc.iter_batches(data, verify_crc=True):
        n += len(b.records())
    return n


def ours_iter_walk(data):
    """The public API: iter_batches, headers only (base offset, last offset, count)."""
    n = 0
    headers = operator.attrgetter("base_offset", "last_offset", "count")
    for b in kc.iter_batches(data, verify_crc=False):
        _ = headers(b)
        n += 1
    return n


def ours_iter_bare(data):
    """iter_batches with nothing read: the walk itself."""
    n = 0
    for _b in kc.iter_batches(data, verify_crc=False):
        n += 1
    return n


def ours_iter_crc(data):
    """The public API: iter_batches with every CRC verified."""
    for _b in kc.iter_batches(data, verify_crc=True):
        pass
    return len(data)


def user_data(magic: int) -> list[tuple]:
    """A producer's records as plain data: (timestamp, key, value, headers)."""
    return [(r.timestamp, r.key, r.value, list(r.headers)) for r in _records(magic)]


def ours_encode_from_data(magic: int, codec: str, as_records: bool):
    """Encode as a producer does: the Record objects (or tuples) made inside the loop."""
    raw = user_data(magic)

    def run(n_batches):
        for b in range(n_batches):
            if as_records:
                recs = [kc.Record(None, ts, k, v, h) for ts, k, v, h in raw]
            else:
                recs = [(None, ts, k, v, h) for ts, k, v, h in raw]
            if magic >= 2:
                kc.build_batch(recs, base_offset=b * RECORDS_PER_BATCH, compression=codec)
            else:
                kc.build_message_set(recs, magic=magic, base_offset=b * RECORDS_PER_BATCH,
                                     compression=codec)  # fmt: skip
        return n_batches * RECORDS_PER_BATCH

    return run


def ours_walk(data):
    from kafkacodec.records.columnar import walk_batches

    return len(walk_batches(data, verify_crc=False).entries)


def ours_crc(data):
    from kafkacodec.records.columnar import walk_batches

    walk_batches(data, verify_crc=True)
    return len(data)


def ours_columnar(data):
    from kafkacodec.records.columnar import decode_columns

    return decode_columns(data, verify_crc=True).num_rows


def pure(fn):
    """fn with the native loops switched off: the generated Python code alone (and
    Record.__init__ in Python)."""
    from kafkacodec.records import batches, builders, columnar
    from kafkacodec.records._native import native_record_init

    switches = [(batches, "_native_records"), (batches, "_native_legacy"),
                (batches, "_native_walk"), (builders, "_native_records"),
                (builders, "_native_legacy"), (builders, "_native_batch"),
                (columnar, "_native_columns"),
                (columnar, "NATIVE")]  # fmt: skip

    def run(*args):
        saved = [getattr(module, name) for module, name in switches]
        for module, name in switches:
            setattr(module, name, False if name in ("_native_walk", "NATIVE") else None)
        method = batches.LegacyBatch.records
        batches.LegacyBatch.records = batches.legacy_records_reference
        batches.Record.__init__ = batches.record_init_reference
        try:
            return fn(*args)
        finally:
            for (module, name), value in zip(switches, saved):
                setattr(module, name, value)
            batches.LegacyBatch.records = method
            native_record_init(batches.Record)  # as at import

    return run


# ----------------------------------------------------------- kafka-python and aiokafka


def _peer_decode(memory_records, data):
    """Every record through a peer's MemoryRecords, checking each batch's CRC."""
    n = 0
    mr = memory_records(data)
    while (batch := mr.next_batch()) is not None:
        if not batch.validate_crc():
            raise AssertionError("crc")
        for r in batch:
            _fields = (r.key, r.value, r.headers)  # touch what a reader reads
            n += 1
    return n


#: The batch header values each peer's batch objects offer for ours' base offset, last
#: offset and count (v2; legacy), read in the walk as ours are.
WALK_FIELDS = {
    "kafka-python": (("base_offset", "last_offset", "records_count"), ("base_offset",)),
    "aiokafka": (("base_offset", "next_offset", "last_offset_delta"), ("next_offset",)),
}


def _peer_walk(memory_records, data, fields):
    n = 0
    mr = memory_records(data)
    if not fields:
        while mr.next_batch() is not None:
            n += 1
        return n
    headers = operator.attrgetter(*fields)
    while (b := mr.next_batch()) is not None:
        _ = headers(b)
        n += 1
    return n


def _peer_crc(memory_records, data):
    mr = memory_records(data)
    while (batch := mr.next_batch()) is not None:
        if not batch.validate_crc():
            raise AssertionError("crc")
    return len(data)


def _kp():
    from kafka.record.memory_records import MemoryRecords

    return MemoryRecords


def _aio():
    from aiokafka.record._crecords.memory_records import MemoryRecords

    return MemoryRecords


def _peer_encode(module, magic, codec, n_batches):
    """A peer's builders (module: kafka.record or aiokafka's compiled records)."""
    recs = [(r.timestamp, r.key, r.value) for r in _records(magic)]
    for _ in range(n_batches):
        if magic >= 2:
            bb = module.DefaultRecordBatchBuilder(
                magic=2, compression_type=CODEC_IDS[codec], is_transactional=False,
                producer_id=-1, producer_epoch=-1, base_sequence=-1, batch_size=10**8,
            )  # fmt: skip
            for i, (ts, key, value) in enumerate(recs):
                bb.append(i, timestamp=ts, key=key, value=value, headers=HEADERS)
        else:
            bb = module.LegacyRecordBatchBuilder(magic=magic, compression_type=CODEC_IDS[codec],
                                                 batch_size=10**8)  # fmt: skip
            for i, (ts, key, value) in enumerate(recs):
                bb.append(i, timestamp=ts, key=key, value=value)
        bb.build()
    return n_batches * RECORDS_PER_BATCH


def kp_encode(magic, codec, n):
    from kafka.record.default_records import DefaultRecordBatchBuilder
    from kafka.record.legacy_records import LegacyRecordBatchBuilder

    builders = SimpleNamespace(DefaultRecordBatchBuilder=DefaultRecordBatchBuilder,
                               LegacyRecordBatchBuilder=LegacyRecordBatchBuilder)  # fmt: skip
    return _peer_encode(builders, magic, codec, n)


def aio_encode(magic, codec, n):
    from aiokafka.record import _crecords

    return _peer_encode(_crecords, magic, codec, n)


# ------------------------------------------------------------ the official compiler


def kaitai_module():
    """The official Kaitai compiler's Python output for schemas/ (compiled once into a
    temporary folder), or None when node or the compiler is missing."""
    ksc = ROOT / "tests" / "ksc"
    if (
        shutil.which("node") is None
        or not (ksc / "node_modules" / "kaitai-struct-compiler").exists()
    ):
        return None
    from kafkacodec.export import export

    out = Path(tempfile.mkdtemp(prefix="kafkacodec-bench-ksc-"))
    if not all(r["ok"] for r in export(out, ["python"])):
        return None
    pkg = out / "python"  # with the schemas' kafka_compression process, copied by export
    sys.path.insert(0, str(pkg))
    import kafka_log  # noqa: PLC0415 - generated at run time

    return kafka_log


def kaitai_decode(kafka_log, data):
    """Parse with the official compiler's Python (which decodes every record, decompressing
    as the schema says) and check each batch's CRC over the bytes it covers."""
    log = kafka_log.KafkaLog.from_bytes(data)
    n = pos = 0
    for entry in log.entries:
        body = entry.body
        if entry.magic == 2:
            end = pos + 12 + body.len_batch
            if crc32c(memoryview(data)[pos + 21 : end]) != body.crc:
                raise AssertionError("crc")
            for r in body.records_region.records:
                _fields = (r.body.key, r.body.value, r.body.headers)
                n += 1
        else:
            end = pos + 12 + body.len_message
            if zlib.crc32(memoryview(data)[pos + 16 : end]) != body.crc:
                raise AssertionError("crc")
            n += 1
        pos = end
    return n


# ------------------------------------------------------------------- Construct


CONSTRUCT_SLICE = 4 << 20  # Construct reads this much of a corpus (its rate is per record)
CONSTRUCT_BATCHES = 100  # and encodes this many batches


def construct_decode(data):
    """Parse entries with the generated Construct definition (which checks each CRC and
    decodes every record) up to CONSTRUCT_SLICE bytes; return the records read."""
    import io

    from kafkacodec.generated.construct.kafka_log import Entry

    stream, n = io.BytesIO(data), 0
    while stream.tell() < min(len(data), CONSTRUCT_SLICE):
        body = Entry.parse_stream(stream).body
        n += len(body.records_region.records) if body.magic == 2 else 1
    return n


def construct_encode(magic, codec, n_batches):
    """Build batches with the generated Construct definition from plain dicts."""
    from kafkacodec.generated.construct.kafka_legacy_message import KafkaLegacyMessage
    from kafkacodec.generated.construct.kafka_record_batch import KafkaRecordBatch

    recs = _records(magic)
    n_batches = min(n_batches, CONSTRUCT_BATCHES)
    for b in range(n_batches):
        base = b * RECORDS_PER_BATCH
        if magic >= 2:
            records = [
                dict(attributes=0, timestamp_delta=r.timestamp - BASE_TS, offset_delta=i, key=r.key,
                     value=r.value, headers=[dict(key=k, value=v) for k, v in r.headers])
                for i, r in enumerate(recs)
            ]  # fmt: skip
            KafkaRecordBatch.build(
                dict(base_offset=base, partition_leader_epoch=-1, magic=2, attributes=CODEC_IDS[codec],
                     last_offset_delta=len(recs) - 1, base_timestamp=BASE_TS,
                     max_timestamp=recs[-1].timestamp, producer_id=-1, producer_epoch=-1,
                     base_sequence=-1, records_region=dict(records=records))
            )  # fmt: skip
        else:
            for i, r in enumerate(recs):
                KafkaLegacyMessage.build(
                    dict(offset=base + i, magic=magic, attributes=0, timestamp=r.timestamp,
                         key=r.key, value=r.value, inner=None)
                )  # fmt: skip
    return n_batches * RECORDS_PER_BATCH


# ------------------------------------------------------------------------------ run


def peers_for(figure: str, magic: int, codec: str, kaitai) -> dict:
    """{peer: fn} for one figure; fn takes the corpus bytes (or, for encode, the batch
    count) and returns how many units it processed."""
    kp, aio = _kp(), _aio()

    def encode(n):  # each batch built and dropped, as the peers' builders do
        for _batch in encoded_batches(magic, codec, n):
            pass
        return n * RECORDS_PER_BATCH

    ours = {"decode": ours_decode, "encode": encode, "walk": ours_walk, "crc": ours_crc,
            "columnar": ours_columnar}[figure]  # fmt: skip
    peers = {"kafkacodec": ours}
    if figure == "encode":  # as a producer does: from plain data, in the timed loop
        peers = {"kafkacodec (Records made)": ours_encode_from_data(magic, codec, True),
                 "kafkacodec (tuples)": ours_encode_from_data(magic, codec, False),
                 "kafkacodec (prebuilt Records)": ours}  # fmt: skip
    if figure == "walk":
        peers = {"kafkacodec iter_batches": ours_iter_walk, "kafkacodec walk_batches": ours,
                 "kafkacodec iter_batches, nothing read": ours_iter_bare}  # fmt: skip
    if figure == "crc":
        peers = {"kafkacodec iter_batches": ours_iter_crc, "kafkacodec walk_batches": ours}
    if figure not in ("crc", "walk"):  # CRCs are computed by the crc32c library either way
        peers["kafkacodec (pure Python)"] = pure(next(iter(peers.values())))
    if figure == "encode":
        peers["kafka-python"] = lambda n: kp_encode(magic, codec, n)
        peers["aiokafka"] = lambda n: aio_encode(magic, codec, n)
    else:  # columnar is compared with the peers' object decoders
        read = {"decode": _peer_decode, "columnar": _peer_decode, "walk": _peer_walk,
                "crc": _peer_crc}[figure]  # fmt: skip
        if figure == "walk":
            fields = {peer: WALK_FIELDS[peer][magic < 2] for peer in WALK_FIELDS}
            peers["kafka-python"] = lambda d: read(kp, d, fields["kafka-python"])
            peers["aiokafka"] = lambda d: read(aio, d, fields["aiokafka"])
            peers["aiokafka, nothing read"] = lambda d: read(aio, d, ())
        else:
            peers["kafka-python"] = lambda d: read(kp, d)
            peers["aiokafka"] = lambda d: read(aio, d)
    if figure == "decode" and kaitai is not None:
        peers["Kaitai (official Python)"] = lambda d: kaitai_decode(kaitai, d)
    if figure == "decode":
        peers["Construct"] = construct_decode
    if figure == "encode" and (magic >= 2 or codec == "none"):
        peers["Construct"] = lambda n: construct_encode(magic, codec, n)
    if figure == "walk":  # a walk of one corpus takes well under a millisecond: time several
        peers = {
            p: (lambda d, fn=fn: sum(fn(d) for _ in range(WALK_PASSES))) for p, fn in peers.items()
        }
    return peers


def main(argv=None):
    p = argparse.ArgumentParser(prog="python -m bench", description=__doc__.split("\n\n")[0])
    p.add_argument("--mb", type=float, default=50.0, help="size of each corpus (default 50)")
    p.add_argument("--repeat", type=int, default=3, help="repetitions; medians are shown")
    p.add_argument("--only", nargs="*", choices=FIGURES, default=list(FIGURES))
    p.add_argument("--corpora", nargs="*", choices=list(CORPORA), default=list(CORPORA))
    args = p.parse_args(argv)

    kaitai = kaitai_module() if "decode" in args.only else None
    corpora = {}
    for name in args.corpora:
        magic, codec = CORPORA[name]
        corpora[name] = corpus(magic, codec, args.mb)
    groups = []  # per (figure, corpus): [(peer, fn)], and the argument the fns take
    for name, (data, n_batches) in corpora.items():
        magic, codec = CORPORA[name]
        for figure in args.only:
            peers = list(peers_for(figure, magic, codec, kaitai).items())
            groups.append((figure, name, peers, n_batches if figure == "encode" else data))
    samples: dict[tuple, list[float]] = {}
    units: dict[tuple, int] = {}
    for rep in range(args.repeat + 1):  # the first round warms up (imports, caches, pages)
        for figure, name, peers, arg in groups:
            # Each repetition starts with another peer: the first to touch the corpus after
            # another group pays for cold caches and TLB, and it must not always be the same.
            k = rep % len(peers)
            for peer, fn in peers[k:] + peers[:k]:
                t = time.perf_counter()
                done = fn(arg)
                dt = time.perf_counter() - t
                if rep:
                    samples.setdefault((figure, name, peer), []).append(dt)
                    units[(figure, name, peer)] = done
    results = {}
    for figure, name, peers, _arg in groups:
        for peer, _fn in peers:
            times = samples[(figure, name, peer)]
            dt = statistics.median(times)
            rate = units[(figure, name, peer)] / dt
            row = {"rate": rate / 1e9 if figure == "crc" else rate, "unit": UNITS[figure],
                   "seconds": dt,
                   "mb_per_s": len(corpora[name][0]) * passes(figure) / dt / 1e6}  # fmt: skip
            results.setdefault(figure, {}).setdefault(name, {})[peer] = row
    for figure in results:
        for rows in results[figure].values():
            for ref in ("kafka-python", "aiokafka"):
                if ref in rows:
                    for row in rows.values():
                        row[f"x_{ref}"] = row["rate"] / rows[ref]["rate"]
    print_table(results, corpora, args, kaitai is not None)
    meta = {"mb": args.mb, "repeat": args.repeat, "cpu_count": os.cpu_count(),
            "python": sys.version.split()[0], "kaitai": kaitai is not None}  # fmt: skip
    save("codec", {"meta": meta, "results": results})


def passes(figure: str) -> int:
    """How many times a sample of figure goes over its corpus."""
    return WALK_PASSES if figure == "walk" else 1


def print_table(results, corpora, args, kaitai: bool):
    sizes = ", ".join(
        f"{name} {len(d) / 1e6:.1f} MB ({n} batches)" for name, (d, n) in corpora.items()
    )
    print(f"corpora: {sizes}; medians of {args.repeat}")
    if not kaitai and "decode" in args.only:
        print("Kaitai (official Python): skipped (needs node and tests/ksc/node_modules)")
    print(f"{'figure':<9}{'corpus':<9}{'peer':<38}{'rate':>14} {'unit':<10}{'MB/s':>9}"
          f"{'x kafka-python':>16}{'x aiokafka':>12}")  # fmt: skip
    for figure, by_corpus in results.items():
        for name, rows in by_corpus.items():
            for peer, r in rows.items():
                rate = f"{r['rate']:.2f}" if figure == "crc" else f"{r['rate']:,.0f}"
                xkp = f"{r['x_kafka-python']:.2f}" if "x_kafka-python" in r else ""
                xai = f"{r['x_aiokafka']:.2f}" if "x_aiokafka" in r else ""
                mbs = "" if figure == "encode" else f"{r['mb_per_s']:,.0f}"
                print(
                    f"{figure:<9}{name:<9}{peer:<38}{rate:>14} {r['unit']:<10}{mbs:>9}{xkp:>16}{xai:>12}"
                )


if __name__ == "__main__":
    main()

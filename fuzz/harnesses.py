"""The fuzz harnesses: one function per entry point, taking arbitrary bytes.

A harness may let a kafkacodec error (KafkacodecError) escape or return; anything else
(IndexError, struct.error, RecursionError, MemoryError, a hang) is a bug. They run under
atheris (python -m fuzz) and, for the inputs that once crashed them, as regression tests.
"""

from __future__ import annotations

import contextlib
import io
import shutil
import struct
import tempfile
from pathlib import Path

import kafkacodec as kc
from kafkacodec import cli
from kafkacodec.log import Partition, check, plan_repair, repair_partition
from kafkacodec.log import index as index_module
from kafkacodec.log.index import OffsetIndex, TimeIndex, TxnIndex
from kafkacodec.log.segment import Segment, segment_name
from kafkacodec.runtime import crc
from kafkacodec.runtime.errors import KafkacodecError

try:
    from kafkacodec.records import columnar
except ImportError:  # the columnar extra is optional
    columnar = None

MAX_INFLATED = 1 << 20  # the fuzzers' bound on a decompressed region
_BULK_FROM, _BULK_ENTRIES = check.BULK_FROM, index_module.BULK_ENTRIES
_DIR = Path(tempfile.mkdtemp(prefix="kafkacodec-fuzz-"))


def _write(name: str, data: bytes) -> Path:
    path = _DIR / name
    path.write_bytes(data)
    return path


@contextlib.contextmanager
def _refused():
    """kafkacodec's own errors are the expected answer to bad input."""
    try:
        yield
    except KafkacodecError:
        pass


def batches(data: bytes) -> None:
    """Batch iteration and record decoding, both ways of checking CRCs; the columnar walk."""
    for verify in (True, False):
        with _refused():
            for batch in kc.iter_batches(data, verify_crc=verify):
                for name in (*batch.FIELDS, "last_offset", "count", "size", "is_valid"):
                    with _refused():  # a legacy wrapper's base offset decompresses it
                        getattr(batch, name)
                with _refused():
                    batch.records(verify_crc=verify, max_inflated=MAX_INFLATED)
    if columnar is not None:
        with _refused():
            columnar.walk_batches(data)
        with _refused():
            columnar.decode_columns(data, verify_crc=False, max_inflated=MAX_INFLATED)
    _checks_agree(data)


def _checks_agree(data: bytes) -> None:
    """verify's bulk check of a segment (check._checked_in_bulk: the native walk and record
    check over the whole run) finds what its batch-at-a-time loop finds in the same bytes."""
    path = _write(segment_name(0), data)
    found = []
    for bulk_from in (0, 1 << 62):
        check.BULK_FROM = bulk_from
        seg = Segment(path.parent, 0)
        try:
            c = check.check_segment(seg, verify_crc=False, indexes=False)
            found.append((c.batches, c.records, [str(r) for r in c.regions], list(c.problems), c.walk, c.aborts))
        except KafkacodecError as err:
            found.append(("refused", str(err)))
        finally:
            check.BULK_FROM = _BULK_FROM
            seg.close()
    if found[0] != found[1]:
        raise AssertionError(f"the bulk check found {found[0]}, the loop {found[1]}")


V2_HEADER = struct.Struct(">qiibIhiqqqhii")


def v2_batch(region: bytes, count: int, attributes: int = 0) -> bytes:
    """A v2 batch around a raw records region, with a correct length and CRC (and zeros or
    -1 elsewhere): hostile regions reach record decoding instead of the CRC check."""
    body = V2_HEADER.pack(
        0, 49 + len(region), 0, 2, 0, attributes, max(count - 1, 0), 0, 0, -1, -1, -1, count
    )
    rest = body[21:] + region
    return body[:17] + struct.pack(">I", crc.crc32c(rest)) + rest


def records(data: bytes) -> None:
    """Record decoding behind a valid batch header: the fuzzed bytes are a records region,
    its codec and count taken from the first two bytes."""
    if len(data) < 2:
        return
    codec, count = data[0] % 5, data[1]
    batches(v2_batch(data[2:], count, codec | (data[0] & 0x38)))


def _drawn_records(data: bytes) -> list[kc.Record]:
    """Records spelled by the bytes: per record a length byte for the key and one for the
    value (255: null), a header count, and the bytes they take; timestamps from the bytes."""
    out, pos = [], 0
    while pos + 3 <= len(data) and len(out) < 64:
        lk, lv, nh = data[pos], data[pos + 1], data[pos + 2] % 3
        pos += 3
        key = None if lk == 255 else data[pos : pos + lk]
        pos += 0 if key is None else lk
        value = None if lv == 255 else data[pos : pos + lv]
        pos += 0 if value is None else lv
        headers = [
            (data[pos : pos + 2].decode("latin-1"), data[pos + 2 : pos + 4]) for _ in range(nh)
        ]
        ts = int.from_bytes(data[pos : pos + 6] or b"\0", "big") - 2**40
        out.append(kc.Record(None, ts, key, value, headers))
    return out


def encode(data: bytes) -> None:
    """The builders, native and not, from records the bytes spell: every batch and message
    set decodes back to what was given (v2 with headers; legacy without, magic 0 without
    timestamps), and the records print as the Python formatters print them."""
    recs = _drawn_records(data)
    if not recs:
        return
    codec = ("none", "gzip", "snappy", "lz4", "zstd")[data[0] % 5]
    raw = kc.build_batch(recs, base_offset=data[-1], compression=codec)
    got = [r for b in kc.iter_batches(raw) for r in b.records()]
    want = [(data[-1] + i, r.timestamp, r.key, r.value, r.headers) for i, r in enumerate(recs)]
    if [(r.offset, r.timestamp, r.key, r.value, r.headers) for r in got] != want:
        raise AssertionError(f"v2 {codec}: records do not decode back")
    _lines_agree(got)
    for magic in (0, 1):
        legacy = [(None, abs(r.timestamp), r.key, r.value, []) for r in recs]
        raw = kc.build_message_set(legacy, magic=magic, base_offset=7,
                                   compression="none" if codec == "zstd" else codec)  # fmt: skip
        got = [(r.offset, r.key, r.value) for b in kc.iter_batches(raw) for r in b.records()]
        if got != [(7 + i, r[2], r[3]) for i, r in enumerate(legacy)]:
            raise AssertionError(f"magic {magic} {codec}: messages do not decode back")


def _lines_agree(recs: list[kc.Record]) -> None:
    """The native text formatters (records' lines, dump's) print what the Python ones do."""
    from kafkacodec import dump as dumplog
    from kafkacodec.cli import records as cli_records
    from kafkacodec.records import lines

    for mode in lines.MODES:
        one = (
            cli_records._record_line
            if mode == "text"
            else (lambda r, m=mode: cli_records._record_json(r, m))
        )
        if lines.record_lines(recs, mode, one) != "".join(one(r) + "\n" for r in recs):
            raise AssertionError(f"records' {mode} lines differ")
    got = lines.dump_lines(recs, True, None)
    if got is not None:
        batch = type(
            "B",
            (),
            {
                "magic": 2,
                "is_control": False,
                "records": staticmethod(lambda verify_crc=True: recs),
                "kafka_records": staticmethod(lambda: (recs, None)),
            },
        )
        last: list = [None, []]
        want = "".join(line + "\n" for line in dumplog._record_lines(batch, True, last))
        if got != (want, last[0], last[1]):
            raise AssertionError("dump's record lines differ")


def _index(cls, suffix: str, data: bytes, probes) -> None:
    path = _write(segment_name(0, suffix), data)
    index = cls(path, 0)
    try:
        with _refused():
            loop = list(index.check())
            index_module.BULK_ENTRIES = 0  # the same check in NumPy agrees
            try:
                if list(index.check()) != loop:
                    raise AssertionError(f"{suffix}: the bulk check disagrees with the loop's {loop}")
            finally:
                index_module.BULK_ENTRIES = _BULK_ENTRIES
        for probe in probes:
            with _refused():
                if cls is TxnIndex:
                    index.collect_aborted_txns(probe, probe + 100)
                else:
                    index.lookup(probe)
        with _refused():
            list(index.dump_entries())
    finally:
        index.close()


def indexes(data: bytes) -> None:
    """The offset, time and transaction index of a segment, read from the same bytes."""
    probes = (0, 1, -1, 2**31 - 1, 2**63 - 1, int.from_bytes(data[:4] or b"\0", "big"))
    with _refused():
        _index(OffsetIndex, ".index", data, probes)
    with _refused():
        _index(TimeIndex, ".timeindex", data, probes)
    with _refused():
        _index(TxnIndex, ".txnindex", data, probes)


def recovery(data: bytes) -> None:
    """Partition recovery: the dry run, then a repair (its backup outside the log
    directory), after which a dry run finds it clean."""
    seg_dir = _DIR / "logs" / "recovery-0"
    shutil.rmtree(_DIR / "logs", ignore_errors=True)
    shutil.rmtree(_DIR / "backup", ignore_errors=True)
    seg_dir.mkdir(parents=True)
    (seg_dir / segment_name(0)).write_bytes(data)
    with _refused():
        with Partition(seg_dir) as p:
            plan_repair(p)
        repair_partition(seg_dir, backup_root=_DIR / "backup")
        with Partition(seg_dir) as p:
            again = plan_repair(p)
        if not again.clean:
            raise AssertionError(f"a repaired partition still needs recovery: {again}")


def dump(data: bytes) -> None:
    """The command line's dump of a .log file, as text and as JSON."""
    path = _write(segment_name(0), data)
    for extra in ([], ["--json"], ["--deep-iteration", "--print-data-log"]):
        out, err = io.StringIO(), io.StringIO()
        with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
            code = cli.main(["dump", "--quiet", str(path), *extra])
        if code not in (0, 1, 2):
            raise AssertionError(f"dump exited {code}: {err.getvalue()}")


#: What the first byte of an `internal` input selects: how the rest is read.
INTERNAL_KINDS = (
    "consumer_offsets", "share_group_state", "transaction_state", "cluster_metadata",
    "remote_log_metadata", "control", "consumer_protocol", "producer_snapshot",
)  # fmt: skip


def internal(data: bytes) -> None:
    """The codecs generated from Kafka's message specs, with their framing, the JSON of
    what they decode and a build of it, and kafka-dump-log's parsers. Byte 0 picks the
    kind (INTERNAL_KINDS); for a coordinator topic, bytes 1-2 are a key (its record type)
    and byte 3 says how long, the rest is the value."""
    from kafkacodec.internal import DEFAULT
    from kafkacodec.internal import dump_format as df
    from kafkacodec.internal.kafka_json import NativeJson, to_json
    from kafkacodec.internal.state_files import producer_snapshot

    if not data:
        return
    kind, rest = INTERNAL_KINDS[data[0] % len(INTERNAL_KINDS)], data[1:]
    messages = []
    if kind in ("consumer_offsets", "share_group_state", "transaction_state"):
        n = rest[2] if len(rest) > 2 else 0
        key, value = rest[:2] + rest[3 : 3 + n], rest[3 + n :]
        topic = f"__{kind}"
        with _refused():
            k = DEFAULT.coordinator_key(topic, key)
            messages.append(k)
            messages.append(DEFAULT.coordinator_value(topic, k.record_type, value))
        parser = {"consumer_offsets": df.offsets_parser, "share_group_state": df.share_group_state_parser,
                  "transaction_state": df.transaction_log_parser}[kind]  # fmt: skip
        for v in (value, None):
            with _refused():
                parser(key, v, 0)
        for item in DEFAULT.coordinator_pairs(
            topic, [(bytes(key), bytes(value)), (bytes(key), None)]
        ):
            if not isinstance(item, (tuple, KafkacodecError)):
                raise AssertionError(f"coordinator_pairs gave {item!r}")
        # a batch's records through the native decoder and JSON writer, as one at a time
        decoder = df.Decoder({"consumer_offsets": "offsets", "share_group_state": "share-group-state",
                              "transaction_state": "transaction-log"}[kind])  # fmt: skip
        recs = [kc.Record(0, 0, bytes(key), bytes(value)), kc.Record(1, 0, bytes(key), None)]
        with _refused():
            many = decoder.many(recs)
            if many != [decoder(r.key, r.value, r.offset) for r in recs]:
                raise AssertionError(f"a decoder's batch is not its calls: {many!r}")
        if kind == "consumer_offsets":  # the groups fold, native and reference, both ways
            _folds_agree(DEFAULT.coordinator_pairs(topic, [(r.key, r.value) for r in recs]), recs)
    elif kind in ("cluster_metadata", "remote_log_metadata"):
        with _refused():
            messages.append(DEFAULT.metadata_record(f"__{kind}", rest))
        with _refused():
            (
                df.cluster_metadata_parser
                if kind == "cluster_metadata"
                else df.remote_log_metadata_parser
            )(None, rest, 0)
        if kind == "cluster_metadata":
            _metadata_folds_agree(rest)
        # a batch through the native writers (JSON plans, toString templates), as one at a time
        decoder = df.Decoder(kind.replace("_", "-"))
        recs = [kc.Record(0, 0, None, bytes(rest)), kc.Record(1, 0, None, None)]
        with _refused():
            many = decoder.many(recs)
            if many != [decoder(r.key, r.value, r.offset) for r in recs]:
                raise AssertionError(f"a decoder's batch is not its calls: {many!r}")
    elif kind == "control":
        ctype = rest[0] if rest else 0
        with _refused():
            messages.append(DEFAULT.control_record(ctype, rest[1:]))
        with _refused():
            df.control_text(ctype, rest[1:])
    elif kind == "consumer_protocol":
        spec = "ConsumerProtocolSubscription" if len(rest) % 2 else "ConsumerProtocolAssignment"
        with _refused():
            messages.append(DEFAULT.versioned(spec, rest))
    else:
        with _refused():
            producer_snapshot(Path("fuzz.snapshot"), rest)
    for m in messages:
        with _refused():
            text = to_json(m.obj, m.version)
            native = NativeJson().write(m.obj, m.version)
            if native is not None and native != text:
                raise AssertionError(f"the native JSON writer gave {native!r}, not {text!r}")
        with _refused():
            m.obj.build()


def _folds_agree(items: list, recs: list) -> None:
    """groups' native fold gives its reference's answer (staged and applied)."""
    from kafkacodec.internal import DEFAULT, groups

    attrs, types = groups._key_attrs(DEFAULT), frozenset(groups.OFFSET_COMMIT_TYPES)
    for delete in (True, False):
        native, python = {}, {}
        errors = groups.fold_latest(items, recs, types, attrs, native, delete)
        if errors != groups._fold_latest(items, recs, types, attrs, python, delete) or native != python:
            raise AssertionError(f"the native groups fold gave {native!r}, not {python!r}")


def _metadata_folds_agree(value: bytes) -> None:
    """A metadata record applied by the native run of partition changes and by Python, to
    a state holding the partition it names (and its topic), gives the same state."""
    from kafkacodec.internal import DEFAULT, cluster
    from kafkacodec.internal.dump_format import get_many

    item = DEFAULT.metadata_items("__cluster_metadata", [bytes(value)])[0]
    if not isinstance(item, tuple) or cluster._partition_changes is None:
        return
    changes = cluster._change_readers(DEFAULT)
    if changes is None or item[0] != changes[0]:
        return
    try:
        tid, pid = get_many(item[2], ("TopicId", "PartitionId"))
        key = cluster._topic_id(bytes(tid))
    except (KafkacodecError, TypeError, ValueError):
        return

    def state() -> dict:
        part = {"leader": 1, "leader_epoch": 4, "partition_epoch": 7, "replicas": [1], "isr": [1],
                "adding_replicas": [], "removing_replicas": []}  # fmt: skip
        return {key: {"name": "t", "partitions": {pid: part}}}

    native, python = state(), state()
    if cluster._partition_changes([item], 0, *changes, native, frozenset()) == 1:  # it applied
        s = cluster.ClusterState(topics=python)
        cluster._partition_change(s, item[2])
        if native != python:
            raise AssertionError(f"the native partition change gave {native!r}, not {python!r}")


HARNESSES = {
    "batches": batches,
    "records": records,
    "indexes": indexes,
    "recovery": recovery,
    "dump": dump,
    "internal": internal,
    "encode": encode,
}

"""What the cross-language tests share: the inputs (every shared log and index vector and
every Kafka-written internal payload), what kafkacodec's Python codecs make of each, the
generated classes' names and stored fields in the other languages, and the comparison of
another language's JSON dump with the Python values."""

from __future__ import annotations

import dataclasses
import importlib
import re
import struct
import sys
from dataclasses import dataclass
from pathlib import Path

import pytest

TESTS = Path(__file__).resolve().parents[1]
for sub in ("generator",):  # differential.py
    if str(TESTS / sub) not in sys.path:
        sys.path.insert(0, str(TESTS / sub))

from conftest import INDEX_SCHEMAS, VECTORS  # noqa: E402
from differential import camel, ours_tree, outcome  # noqa: E402

import kafkacodec as kc  # noqa: E402
from kafkacodec.generator.ir import SchemaSet  # noqa: E402
from kafkacodec.generator.render import SCHEMA_DIR  # noqa: E402

LOGS = sorted(VECTORS.rglob("*.bin")) + sorted(VECTORS.rglob("*.log"))
MODULES = list(SchemaSet(SCHEMA_DIR).modules())
# Positional instances are computed in the other languages, not stored: never dumped.
POSITIONAL = {i.name for m in MODULES for t in m.types for i in t.pos_instances}


def schema_classes() -> list[tuple[str, str, list[str]]]:
    """The classes the official compiler writes: (module id, type path, stored fields:
    parameters first, then seq fields, in order). A sized body kafkacodec reads inline
    (-kafkacodec-inline) is a class of its own there, and a field of the type holding it."""
    out = []
    for m in MODULES:
        for t in m.types:
            own = [p.name for p in t.params] + [f.name for f in t.fields if f.via is None]
            out.append((m.id, t.path, own + [b.name for b in t.inlined]))
            out += [(m.id, b.path, b.fields) for b in t.inlined]
    return out


def binary_names() -> dict[tuple[str, str], str]:
    """(module id, type path) -> the class's binary name in Java (KafkaLog$Entry): the
    schema's top type, then one nested class per `types` level, as the official compiler
    names them (upper camel case of the type id)."""
    out = {}
    for module_id, path, _fields in schema_classes():
        parts = [p for p in path.split("/") if p and p != "types"]
        out[(module_id, path)] = "$".join([camel(module_id), *(camel(p) for p in parts)])
    return out


NAMES = binary_names()
TYPES = {(m.id, t.class_name): t for m in MODULES for t in m.types}
#: A class's binary name (NAMES) -> (module id, class name).
BINARY = {NAMES[(m.id, t.path)]: (m.id, t.class_name) for m in MODULES for t in m.types}


def _type(module_id: str, class_name: str):
    if (module_id, class_name) in TYPES:
        return module_id, TYPES[(module_id, class_name)]
    found = [(mod, t) for (mod, cls), t in TYPES.items() if cls == class_name]
    assert len(found) == 1, (module_id, class_name, found)
    return found[0]


def official_shape(tree, class_name: str, module_id: str = ""):
    """A tree of kafkacodec's (ours_tree, a corpus expectation) of a class_name value, in
    the shape of the official compiler's classes: the fields of a sized body kafkacodec
    reads inline (-kafkacodec-inline) under the body's name."""
    if isinstance(tree, list):
        return [official_shape(x, class_name, module_id) for x in tree]
    if not isinstance(tree, dict):
        return tree
    module_id, t = _type(module_id, class_name)
    out = dict(tree)
    for f in t.fields:
        value = out.get(f.name)
        if f.kind == "user" and value is not None:
            out[f.name] = official_shape(value, f.user_class, module_id)
        elif f.kind == "switch" and isinstance(value, (dict, list)):
            keys = set().union(*(x for x in (value if isinstance(value, list) else [value]) if isinstance(x, dict)))
            if keys == {"hex"}:
                continue  # a switch's raw bytes (no case)
            cases = [c for _, c in f.switch_cases if keys <= set(_type(module_id, c)[1].stored) | POSITIONAL]
            shapes = [official_shape(value, c, module_id) for c in dict.fromkeys(cases)]
            assert shapes and all(s == shapes[0] for s in shapes), (f.path, keys, cases)
            out[f.name] = shapes[0]
    for body in t.inlined:
        out[body.name] = {n: out.pop(n) for n in body.fields if n in out}
    return out


def fields_table() -> str:
    """One line per generated class: `BinaryName<TAB>field,field,...`, its stored fields,
    as the dump programs print them."""
    return "".join(f"{NAMES[(m, path)]}\t{','.join(names)}\n" for m, path, names in schema_classes())


@dataclass
class Job:
    """One input: a class to read bytes from offset with, its parameter (None: none), and
    how kafkacodec reads the same bytes (a tree, or ("error", family))."""

    name: str  # for messages
    path: Path
    java_class: str
    param: int | None
    offset: int
    expected: object  # outcome: ("ok", tree) or ("error", family)
    log: bool = False  # a KafkaLog: the dump also checks each entry's CRC


def expected(cls, data: bytes):
    """What kafkacodec's generated parser makes of data: ("ok", tree) or ("error", family)."""
    return outcome(lambda: ours_tree(cls.parse_all(data)))


def log_jobs() -> list[Job]:
    from kafkacodec.generated.kafka_log import KafkaLog

    jobs = []
    for path in LOGS:
        data = path.read_bytes()
        jobs.append(Job(str(path.relative_to(VECTORS)), path, "KafkaLog", None, 0,
                        expected(KafkaLog, data), log=True))  # fmt: skip
    for suffix, schema_id in sorted(INDEX_SCHEMAS.items()):
        cls = getattr(
            importlib.import_module(f"kafkacodec.generated.{schema_id}"), camel(schema_id)
        )
        for path in sorted(VECTORS.rglob(f"*{suffix}")):
            data = path.read_bytes()
            jobs.append(Job(str(path.relative_to(VECTORS)), path, camel(schema_id), None, 0,
                            expected(cls, data)))  # fmt: skip
    return jobs


def internal_jobs(folder: Path) -> list[Job]:
    """Every Kafka-written internal payload, written to folder: the struct after its
    framing, read at the version it was read at in Python."""
    from internal_vectors import decode, row_id, shipped_rows

    from kafkacodec.internal import DEFAULT

    jobs = []
    for r in shipped_rows():  # the other languages compile the shipped schemas
        m = decode(DEFAULT, r)
        cls = type(m.obj)
        module = cls.__module__.rsplit(".", 1)[1]
        path = folder / f"{row_id(r)}.bin"
        path.write_bytes(bytes.fromhex(r["hex"]))
        java = NAMES[(module, cls.PATH.split(" ", 1)[1])]
        jobs.append(
            Job(row_id(r), path, java, m.obj.version, r["headerBytes"], ("ok", ours_tree(m.obj)))
        )
    return jobs


def jobs_file(jobs: list[Job], to: Path) -> Path:
    to.write_text("".join(f"{j.java_class}\t{'-' if j.param is None else j.param}\t{j.offset}\t{j.path}\n"
                          for j in jobs))  # fmt: skip
    return to


def as_json(tree, theirs):
    """An ours_tree in the dumps' JSON shape: bytes as {"hex": ...}; absent fields (None)
    and positional instances left out where the dump has none."""
    if isinstance(tree, dict):
        other = theirs if isinstance(theirs, dict) else {}
        return {
            k: as_json(v, other.get(k))
            for k, v in tree.items()
            if k in other or not (k in POSITIONAL or v is None)
        }
    if isinstance(tree, list):
        other = theirs if isinstance(theirs, list) else []
        return [as_json(v, other[i] if i < len(other) else None) for i, v in enumerate(tree)]
    if isinstance(tree, bytes):
        return {"hex": tree.hex()}
    return tree


def shaped(job, tree):
    """A Job's or Case's tree of kafkacodec's in the official compiler's shape."""
    module_id, class_name = BINARY[job.java_class]
    return official_shape(tree, class_name, module_id)


def check(job: Job, theirs: dict, unchecked=None) -> None:
    """Their dump of job's input says what kafkacodec's codecs say: the same tree where
    they read it, an error where they refuse it (a CRC aside: no other language's parser
    checks one; the dump checks each entry's CRC over the range the schema exposes)."""
    mine = job.expected
    if mine[0] == "ok":
        assert "ok" in theirs, theirs
        assert theirs["ok"] == as_json(shaped(job, mine[1]), theirs["ok"])
        if job.log:
            assert all(c["ok"] for c in theirs["crc"])
        return
    if mine == ("error", "checksum"):
        # The generated parsers cannot check a CRC: the dump does. The rest reads the same.
        data = job.path.read_bytes()
        from kafkacodec.generated.kafka_log import KafkaLog

        unchecked = outcome(lambda: ours_tree(KafkaLog.parse_all(data, verify=False), verify=False))
        if unchecked[0] == "ok":
            assert theirs.get("ok") == as_json(shaped(job, unchecked[1]), theirs.get("ok"))
            bad = [c for c in theirs["crc"] if not c["ok"]]
            top = outcome(lambda: list(kc.iter_batches(data)))
            assert bool(bad) == (top == ("error", "checksum")), (bad, top)
        return
    assert "error" in theirs, f"kafkacodec refuses it ({mine[1]}), the other parser reads it"


@pytest.fixture(scope="session", name="corpus")
def corpus_fixture(tmp_path_factory) -> tuple[Path, dict]:
    """`kafkacodec corpus`, written once per run: the edge cases, objects of every schema
    and version drawn with a fixed seed, and damaged logs, with their expectations."""
    from kafkacodec.corpus import write_corpus

    out = tmp_path_factory.mktemp("corpus")
    return out, write_corpus(out, count=8, internal_count=2, seed=21)


@dataclass
class Case:
    """A corpus case as a job for the dumps, and what the dump must say of it."""

    name: str
    path: Path
    java_class: str
    param: int | None
    offset: int
    expect: dict


def corpus_jobs(corpus) -> list[Case]:
    out, manifest = corpus
    return [
        Case(c["file"], out / c["file"], c["class"], c["param"], 0, c["expect"])
        for c in manifest["cases"]
    ]


def check_case(case: Case, theirs: dict) -> None:
    """Their dump says what the corpus expects: the values, or a refusal; for a CRC
    mismatch (which no generated parser can see), the values read without it and the
    mismatch at the right entries (the dump checks each entry's CRC)."""
    expect = case.expect
    if "ok" in expect:
        assert "ok" in theirs, theirs
        assert theirs["ok"] == shaped(case, expect["ok"])
        assert all(c["ok"] for c in theirs.get("crc", []))
        return
    if "ok_without_crc" in expect:
        assert theirs.get("ok") == shaped(case, expect["ok_without_crc"]), theirs.get("error")
        assert [c["position"] for c in theirs["crc"] if not c["ok"]] == expect["crc_mismatch_at"]
        return
    assert "error" in theirs, (
        f"the corpus expects {expect['error']['check']}, the other parser reads it"
    )


def wide_batches(to: Path) -> list[tuple[Path, dict]]:
    """v2 batches whose value instances leave 32 bits (Kafka's largest offsets: base
    offset 4611686018427387900, the last 3 further; one at 2^40 that a double holds
    exactly), each written to a file, with what kafkacodec's parser computes of them."""
    from kafkacodec.generated.kafka_record_batch import KafkaRecordBatch

    out = []
    for base in (4611686018427387900, 1 << 40):
        data = kc.build_batch([kc.Record(None, 1700000000000 + i, b"k", b"v") for i in range(4)], base_offset=base)
        path = to / f"wide-{base}.bin"
        path.write_bytes(data)
        b = KafkaRecordBatch.parse(data, 0, len(data))[0]
        out.append((path, {"base_offset": b.base_offset, "last_offset": b.last_offset, "crc_to": b.crc_to}))
    assert out[0][1]["last_offset"] == 4611686018427387903
    return out


def _zigzag(v: int) -> bytes:
    z, out = (v << 1) ^ (v >> 63), bytearray()
    while True:
        if z < 0x80:
            return bytes(out + bytes([z]))
        out.append((z & 0x7F) | 0x80)
        z >>= 7


def greedy_jobs(to: Path) -> list[Job]:
    """Inputs of about 3 KB whose lengths or counts claim up to 2^31 - 1: a reader that
    allocates what it reads before it reads it (the official runtimes' readBytes of Java
    and C++) exhausts its memory on them; every reader must refuse each."""
    pad = bytes(3000)
    legacy = [
        # message size 2^31 - 1, a value length 2^31 - 1 (magic 1, no key)
        struct.pack(">qiIbbqii", 0, 0x7FFFFFFF, 0, 1, 0, 0, -1, 0x7FFFFFFF) + pad,
        # a true message size, then a key length the message does not hold
        struct.pack(">qiIbbqi", 0, 22 + len(pad), 0, 1, 0, 0, 0x7FFF0000) + pad,
        # a message size past the input, key and value small: what is left over is huge
        struct.pack(">qiIbbqii", 0, 0x7FFFFF00, 0, 1, 0, 0, -1, 0) + pad,
    ]
    body = lambda *tail: bytes([0]) + _zigzag(0) + _zigzag(0) + b"".join(tail)  # noqa: E731
    records = [
        body(_zigzag(0x7FFFFFFF)) + pad,  # a key length of 2^31 - 1 (the record's own length true)
        body(_zigzag(-1), _zigzag(0x7FFFFFF0)) + pad,  # a value length
        body(_zigzag(-1), _zigzag(-1), _zigzag(0x7FFFFFFF)) + pad,  # a header count
        body(_zigzag(-1), _zigzag(-1), _zigzag(1), _zigzag(0x7FFFFFF0)) + pad,  # a header key length
    ]
    jobs = []
    for n, data in enumerate(legacy):
        (to / f"greedy-legacy-{n}.bin").write_bytes(data)
        jobs.append(Job(f"greedy-legacy-{n}", to / f"greedy-legacy-{n}.bin", "KafkaLegacyMessage", None, 0,
                        ("error", "any")))  # fmt: skip
    for n, rec in enumerate(records):
        data = _zigzag(len(rec)) + rec
        (to / f"greedy-record-{n}.bin").write_bytes(data)
        jobs.append(Job(f"greedy-record-{n}", to / f"greedy-record-{n}.bin", "KafkaRecord", None, 0, ("error", "any")))
    # a record length of 2^31 - 1 (its body a sized substream, which C++ reads into memory)
    (to / "greedy-record-length.bin").write_bytes(_zigzag(0x7FFFFFFF) + body(_zigzag(-1), _zigzag(-1), _zigzag(0)) + pad)
    jobs.append(Job("greedy-record-length", to / "greedy-record-length.bin", "KafkaRecord", None, 0, ("error", "any")))
    return jobs


def disagreeing_lengths(to: Path) -> list[Job]:
    """Uncompressed v2 batches, CRC right, where a length disagrees with what it counts:
    a record's length one more than its fields (one byte left unread), one less (its
    headers reach past it), and a records region with bytes after its last record. Kafka
    refuses each (DefaultRecord.readFrom: "Invalid record size"; DefaultRecordBatch's
    iterator: "Incorrect declared batch size, records still remaining in file"), and so
    do kafkacodec's parsers (asserted here)."""
    from kafkacodec.generated.kafka_log import KafkaLog
    from kafkacodec.runtime.crc import crc32c

    records = [kc.Record(None, 1700000000000 + i, b"k%d" % i, b"v" * 5, [("h", b"x")]) for i in range(3)]
    good = kc.build_batch(records, base_offset=7)
    first = 61  # the first record: its length (a one-byte varint here), then its body
    n = good[first] >> 1
    after = first + 1 + n

    def batch(region: bytes) -> bytes:
        out = bytearray(good[:first] + region)
        out[8:12] = struct.pack(">i", len(out) - 12)
        out[17:21] = struct.pack(">I", crc32c(bytes(out[21:])))
        return bytes(out)

    cases = {
        "record-longer-than-its-fields": batch(_zigzag(n + 1) + good[first + 1 : after] + b"\0" + good[after:]),
        "record-shorter-than-its-fields": batch(_zigzag(n - 1) + good[first + 1 :]),
        "bytes-after-the-last-record": batch(good[first:] + b"\0\0\0"),
    }
    jobs = []
    for name, data in cases.items():
        assert outcome(lambda d=data: ours_tree(KafkaLog.parse_all(d)))[0] == "error", name
        (to / f"{name}.bin").write_bytes(data)
        jobs.append(Job(name, to / f"{name}.bin", "KafkaLog", None, 0, ("error", "any"), log=True))
    return jobs


def check_refused(jobs: list[Job], dumps: list[dict]) -> None:
    """Every job (disagreeing_lengths, greedy_jobs) refused by the other language."""
    for job, theirs in zip(jobs, dumps, strict=True):
        assert "error" in theirs, (job.name, theirs)


def mutated_jobs(to: Path, seed: int, count: int) -> list[Job]:
    """Seeded mutations: half of peers/bytewise.py's (cuts, short tails, edge bytes, changed
    records and compressed regions, lengths and counts), half of peers/mutate.py's
    schema-aware families (fields, varint encodings, lists, codecs and frames, wrappers,
    control records, boundaries), each as a KafkaLog job with what kafkacodec's parser makes
    of it without CRC checks (which the compiled outputs cannot make: their dumps compute
    CRCs beside); REFUSALS[name] keeps kafkacodec's message where it refuses."""
    from kafkacodec.generated.kafka_log import KafkaLog
    from peers.bytewise import Mutator
    from peers.mutate import SCHEMA_FAMILIES, draw

    to.mkdir(parents=True, exist_ok=True)
    jobs = []
    drawn = Mutator(seed).draw(count - count // 2) + list(draw(count // 2, seed, SCHEMA_FAMILIES))
    for i, (name, img) in enumerate(drawn):
        path = to / f"{i:05d}.bin"
        path.write_bytes(img)
        try:
            got = ("ok", ours_tree(KafkaLog.parse_all(img, verify=False), verify=False))
        except kc.KafkacodecError as err:
            got = ("error", "invalid")
            REFUSALS[name] = str(err)
        jobs.append(Job(name, path, "KafkaLog", None, 0, got, log=True))
    return jobs


#: kafkacodec's message for each mutation it refuses (mutated_jobs).
REFUSALS: dict[str, str] = {}

#: Where another language may read a mutation otherwise than kafkacodec, by how kafkacodec
#: names it: a difference of these kinds is known and counted; any other fails the test.
KNOWN_GAPS = {
    # not a gap of the schemas: kafkacodec keeps a string's invalid UTF-8 (surrogate
    # escapes), the runtimes decode it their own way (Java's and JavaScript's decoders put
    # U+FFFD in, C++ keeps the bytes)
    "invalid UTF-8 in a string, decoded by each runtime": re.compile(r"^invalid utf-8$"),
}


def _invalid_utf8(tree) -> bool:
    if isinstance(tree, str):
        return any("\udc80" <= c <= "\udcff" for c in tree)
    if isinstance(tree, dict):
        return any(_invalid_utf8(v) for v in tree.values())
    if isinstance(tree, list):
        return any(_invalid_utf8(v) for v in tree)
    return False


def unchecked_difference(job: Job, theirs: dict, official: bool = True) -> str | None:
    """How another language's reading of a mutation differs from kafkacodec's without CRC
    checks: None when it reads the same values or refuses where kafkacodec refuses; else
    the KNOWN_GAPS kind it is of, or what differs."""
    if job.expected[0] == "ok":
        if "ok" not in theirs:
            why = f"refused ({theirs.get('error')}: {str(theirs.get('message'))[:120]}) what kafkacodec reads"
        elif theirs["ok"] != as_json(shaped(job, job.expected[1]) if official else job.expected[1], theirs["ok"]):
            why = "read other values"
        else:
            return None
        where = "invalid utf-8" if _invalid_utf8(job.expected[1]) else job.name
    elif "error" in theirs:
        return None
    else:
        why, where = "read what kafkacodec refuses", REFUSALS.get(job.name, "")
    for kind, pattern in KNOWN_GAPS.items():
        if pattern.search(where):
            return kind
    return why


def check_mutations(jobs: list[Job], dumps: list[dict], doubles=None, official: bool = True) -> dict[str, int]:
    """Every mutation another language reads as kafkacodec does without CRC checks, but
    for the KNOWN_GAPS kinds, which are counted (returned, and printed); `doubles`: how
    that language holds integers (JavaScript's as_double), applied to both sides;
    `official`: their trees have the official compiler's shape (official_shape), not
    kafkacodec's own (Go's)."""
    differ: dict[str, list[str]] = {}
    for job, theirs in zip(jobs, dumps, strict=True):
        if doubles is not None:
            theirs = doubles(theirs)
            if job.expected[0] == "ok":
                job = dataclasses.replace(job, expected=("ok", doubles(job.expected[1])))
        why = unchecked_difference(job, theirs, official)
        if why is not None:
            differ.setdefault(why.split(" (")[0], []).append(job.name)
    unknown = {k: (len(v), v[:5]) for k, v in differ.items() if k not in KNOWN_GAPS}
    counts = {k: len(v) for k, v in differ.items()}
    print(counts)
    assert not unknown, unknown
    return counts


# -- kafkacodec's own generator targets (Go, Rust): their dump programs speak one protocol

#: A generated target's dump check -> the family of kafkacodec's error (corpus._family).
TARGET_FAMILY = {
    "checksum": "checksum",
    "truncated": "truncated",
    "invalid": "invalid",
    "corrupt": "invalid",
    "length": "invalid",
}


def run_dump(dump: Path, jobs, tmp: Path, name: str, verify: bool = True) -> list[dict]:
    """A generated target's kafkacodec-dump over jobs (go/cmd, rust/src/bin): one answer each."""
    import json
    import subprocess

    proc = subprocess.run([str(dump), *([] if verify else ["-no-crc"]), str(jobs_file(jobs, tmp / f"{name}.jobs"))],
                          capture_output=True, text=True, timeout=600)  # fmt: skip
    assert proc.returncode == 0, proc.stderr[-4000:]
    lines = proc.stdout.split("\n")[:-1]  # not splitlines: strings may hold U+2028
    assert len(lines) == len(jobs)
    return [json.loads(line) for line in lines]


def same_reading(mine, theirs: dict, language: str) -> None:
    """kafkacodec's outcome (("ok", tree) or ("error", family)) is the target's."""
    if mine[0] == "ok":
        assert "ok" in theirs, theirs
        assert theirs["ok"] == as_json(mine[1], theirs["ok"])
    else:
        assert "error" in theirs, f"kafkacodec refuses it ({mine[1]}), {language} reads it"
        assert (TARGET_FAMILY[theirs["check"]] == "checksum") == (mine[1] == "checksum"), theirs


def check_corpus_refusal(expect: dict, theirs: dict, language: str) -> None:
    """A corpus case kafkacodec refuses: refused the same way, at the same byte."""
    assert "error" in theirs, f"the corpus expects {expect['error']['check']}, {language} reads it"
    assert TARGET_FAMILY[theirs["check"]] == expect["error"]["family"], (theirs, expect["error"])
    # a codec's refusal of a whole compressed region names no byte in Python (the region is
    # one stream, read lazily); any other refusal names the same byte
    if expect["error"]["position"] is not None:
        assert f"byte {expect['error']['position']}:" in theirs["error"], (theirs, expect["error"])

import contextlib
import json
import re
import subprocess
import sys
from pathlib import Path

import pytest

VECTORS = Path(__file__).parent / "vectors"
KAFKA_JAVA = VECTORS / "kafka-java"
PEERS = VECTORS / "peers"
#: Internal-topic payloads written by Kafka's own classes (kafka-internal/README.md).
KAFKA_INTERNAL = VECTORS / "kafka-internal" / "records.jsonl"
#: The schema of each index file suffix.
INDEX_SCHEMAS = {
    ".index": "kafka_offset_index",
    ".timeindex": "kafka_time_index",
    ".txnindex": "kafka_txn_index",
}


def kafka_java_cases(*categories):
    out = []
    for cat in categories:
        for j in sorted((KAFKA_JAVA / cat).glob("*.json")):
            doc = json.loads(j.read_text())
            if "batches" in doc:
                out.append(pytest.param(doc, (j.parent / doc["file"]).read_bytes(), id=doc["name"]))
    return out


def _spark_with_its_kafka_source() -> None:
    """Every JVM PySpark starts in the tests gets Spark's own Kafka source on its classpath
    (tests/kafka/test_kafka_spark.py compares the kafkacodec format with it), and kafkacodec's
    JVM reader (`make jar`; jobs.session ships it too): a pytest worker keeps the first JVM it
    starts for the modules it runs later, so the jars must be there from the start, whichever
    test starts it. Without the harness (`make harness`), those tests say what is missing."""
    import os

    from kafka_broker import HarnessError, spark_kafka_jars

    from kafkacodec.pipeline import JAR

    try:
        jars = spark_kafka_jars()
    except (HarnessError, ImportError):
        jars = []
    jars += [str(JAR)] if JAR.is_file() else []
    if jars:
        # on the driver's classpath (local mode: the executors' too), so that spark.jars
        # stays free for what kafkacodec.pipeline.jobs.session() ships
        os.environ.setdefault("PYSPARK_SUBMIT_ARGS",
                              f"--conf spark.driver.extraClassPath={':'.join(jars)} pyspark-shell")  # fmt: skip


_spark_with_its_kafka_source()


#: The installed console script.
EXE = Path(sys.executable).with_name("kafkacodec")


def kafkacodec_cli(*args, ok=True, timeout=120, env=None):
    """Run the installed `kafkacodec` in a subprocess (with `env` added to the environment);
    with ok, it must exit 0. It never prints a traceback."""
    import os

    out = subprocess.run(
        [str(EXE), *map(str, args)], capture_output=True, text=True, timeout=timeout,
        env=None if env is None else {**os.environ, **env},
    )  # fmt: skip
    if ok is True:
        assert out.returncode == 0, out.stderr
    assert "Traceback" not in out.stderr, out.stderr
    return out


class Crash(BaseException):
    """A process killed half-way (raised by crash_after; BaseException, so that no
    `except Exception` in the code under test swallows it)."""


def crash_after(monkeypatch, module, steps: int) -> None:
    """Make module's os.replace and os.fsync (the durable steps of an atomic rewrite)
    raise Crash once `steps` of them have run. monkeypatch.undo() restores them."""
    calls = {"n": 0}

    def counting(fn):
        def wrapped(*a, **k):
            if calls["n"] == steps:
                raise Crash
            calls["n"] += 1
            return fn(*a, **k)

        return wrapped

    monkeypatch.setattr(module.os, "replace", counting(module.os.replace))
    monkeypatch.setattr(module.os, "fsync", counting(module.os.fsync))


def mutate(buf: bytes, data) -> bytes:
    """A Hypothesis-drawn damage of buf (kafkacodec.strategies.mutate: bytes flipped, the
    tail cut, bytes inserted or dropped, a 4-byte field set to a boundary value)."""
    from kafkacodec.strategies import mutate as damaged

    return data.draw(damaged(bytes(buf)))


def hexs(b):
    return None if b is None else bytes(b).hex()


@contextlib.contextmanager
def generated_parsers_only():
    """The records layer without its native loops: every entry read by the generated
    parsers (the reference the native walk and record loops are held to)."""
    from kafkacodec.records.batches import reference_parsers

    with reference_parsers():
        yield


def assert_roundtrip(cls, obj, data: bytes | None = None):
    """Build obj with cls's generated builder, parse it back, compare; with data, the
    encoding must equal those bytes too (Construct's common() pattern)."""
    built = obj.build()
    if data is not None:
        assert built == bytes(data)
    again = cls.parse_all(built)
    assert again.build() == built
    return again


# Realistic runs of batches of every magic, codec and kind, written by kafkacodec's builders.
from hypothesis import strategies as st  # noqa: E402

import kafkacodec as kc  # noqa: E402

blob = st.one_of(st.none(), st.binary(max_size=64))
key_text = st.one_of(st.text(max_size=6), st.sampled_from(["é", "ключ", "\udcff"]))
record = st.builds(kc.Record, timestamp=st.integers(0, 2**40), key=blob, value=blob,
                   headers=st.lists(st.tuples(key_text, blob), max_size=3))  # fmt: skip
batch_spec = st.tuples(
    st.sampled_from(["v2", "v2", "v2", "v1", "v0", "control"]),
    st.sampled_from(["none", "gzip", "snappy", "lz4", "zstd"]),
    st.lists(record, min_size=1, max_size=6),
    st.booleans(),
)


def build_run(specs):
    out, offset = bytearray(), 0
    for kind, codec, recs, flag in specs:
        if kind == "control":
            out += kc.build_control_batch(flag, offset=offset, timestamp=1_700_000_000_000,
                                          producer_id=7, producer_epoch=1)  # fmt: skip
            offset += 1
            continue
        if kind == "v2":
            out += kc.build_batch(recs, base_offset=offset, compression=codec, producer_id=7 if flag else -1,
                                  producer_epoch=1 if flag else -1, base_sequence=offset if flag else -1,
                                  log_append_time=1_700_000_000_000 if not flag else None,
                                  timestamp_type="CreateTime" if flag else "LogAppendTime",
                                  partition_leader_epoch=3)  # fmt: skip
        else:
            legacy = [kc.Record(None, r.timestamp, r.key, r.value) for r in recs]
            out += kc.build_message_set(legacy, magic=int(kind[1]), base_offset=offset,
                                        compression="none" if codec == "zstd" else codec)  # fmt: skip
        offset += len(recs)
    return bytes(out)


ROOT = Path(__file__).resolve().parents[1]
#: The schemas `kafkacodec specs import` made from Kafka's message specs (schemas/internal/).
INTERNAL_SCHEMAS = frozenset(p.stem for p in (ROOT / "schemas" / "internal").glob("*.ksy"))
#: Kafka's JSON message specs, read from the shared folder beside the project (never copied).
KAFKA_SPECS = ROOT.parent / "shared" / "kafka-specs"

#: The specs the internal-topic vectors (tests/vectors/kafka-internal) were written with: a
#: Kafka trunk build of 2024-10, whose share-group records changed before any release.
VECTORS_LABEL = "trunk-2024-10"


def generate_codecs(specs: Path | str, label: str, dest: Path) -> tuple:
    """The schemas and codecs `kafkacodec specs import` makes of a source of specs, written
    into dest: (import result, Codecs)."""
    from kafkacodec.generator.specs_import import generate_codecs as generate
    from kafkacodec.internal import Codecs

    result, out = generate(specs, dest, label)
    return result, Codecs.load(out, "_codecs_" + re.sub(r"\W", "_", f"{label}_{dest.name}"))


_LABEL_CODECS: dict = {}


def label_codecs(label: str = VECTORS_LABEL):
    """The codecs of one label of ../shared/kafka-specs, generated once per process."""
    if label not in _LABEL_CODECS:
        import atexit
        import shutil
        import tempfile

        dest = Path(tempfile.mkdtemp(prefix=f"kafkacodec-codecs-{label}-"))
        atexit.register(shutil.rmtree, dest, True)
        _LABEL_CODECS[label] = generate_codecs(KAFKA_SPECS / label, label, dest)[1]
    return _LABEL_CODECS[label]


#: The checkout's folders and the packages they are (pyproject's package-dir).
FOLDERS = {"kafkacodec": "kafkacodec", "runtime": "kafkacodec.runtime", "generated": "kafkacodec.generated",
           "generator": "kafkacodec.generator", "pipeline": "kafkacodec.pipeline", "schemas": "kafkacodec.schemas"}  # fmt: skip


def generate_inline(
    tmp_path: Path, text: str, name: str = "t", common: tuple[str, ...] = ()
) -> dict:
    """Every file the generator writes for one inline schema (dedented text), with the
    schemas/common files it imports copied beside it: {file name: source}."""
    import shutil
    import textwrap

    from kafkacodec.generator import render

    if common:
        (tmp_path / "common").mkdir(exist_ok=True)
    for c in common:
        shutil.copy(ROOT / "schemas" / "common" / f"{c}.ksy", tmp_path / "common")
    (tmp_path / f"{name}.ksy").write_text(textwrap.dedent(text))
    return render.render_all(tmp_path)


def run_generated(source: str, name: str) -> dict:
    """The namespace of one generated module's source, executed."""
    ns: dict = {}
    exec(compile(source, name, "exec"), ns)  # noqa: S102
    return ns


def checkout_modules() -> set[str]:
    """Every Python module of the project, named as it is imported (kafkacodec/targets holds
    data for the other languages' output, not modules)."""
    names = set()
    for folder, package in FOLDERS.items():
        for p in (ROOT / folder).rglob("*.py"):
            if "targets" in p.parts:
                continue
            parts = p.relative_to(ROOT / folder).with_suffix("").parts
            names.add(".".join((package, *(parts[:-1] if parts[-1] == "__init__" else parts))))
    return names


KSC = ROOT / "tests" / "ksc"


@pytest.fixture(scope="session")
def kaitai(tmp_path_factory):
    """The official Kaitai compiler's Python output for every schema, as a namespace of
    modules (schema id -> module); skipped without node and tests/ksc/node_modules."""
    import importlib
    import shutil
    import sys
    from types import SimpleNamespace

    if (
        shutil.which("node") is None
        or not (KSC / "node_modules" / "kaitai-struct-compiler").exists()
    ):
        pytest.skip("node and tests/ksc/node_modules are needed (make test installs them)")
    from kafkacodec.export import export

    out = tmp_path_factory.mktemp("ksc-python")
    assert all(r["ok"] for r in export(out, ["python"]))
    pkg = out / "python"  # with the schemas' kafka_compression process, copied by export
    sys.path.insert(0, str(pkg))
    try:
        ids = [p.stem for p in (ROOT / "schemas").rglob("*.ksy") if "common" not in p.parts]
        return SimpleNamespace(**{i: importlib.import_module(i) for i in ids})
    finally:
        sys.path.remove(str(pkg))


@pytest.fixture(scope="session")
def s3_server(tmp_path_factory):
    """moto's S3 server on a free port of 127.0.0.1 for the session (one per test worker),
    with the AWS environment set for this process too; stopped at the end."""
    import os

    pytest.importorskip("moto")
    from s3server import start_moto

    try:
        server = start_moto(tmp_path_factory.mktemp("moto") / "moto.log")
    except RuntimeError as err:
        pytest.fail(str(err))
    saved = {k: os.environ.get(k) for k in server.env}
    os.environ.update(server.env)
    try:
        yield server
    finally:
        for k, v in saved.items():
            if v is None:
                os.environ.pop(k, None)
            else:
                os.environ[k] = v
        server.stop()


@pytest.fixture(scope="module")
def spark():
    """A local Spark (local[2]) with the kafkacodec formats, for one test module."""
    from kafkacodec.pipeline import jobs

    session = jobs.session("local[2]", conf={
        "spark.sql.shuffle.partitions": "2", "spark.ui.enabled": "false",
        "spark.driver.host": "127.0.0.1", "spark.driver.bindAddress": "127.0.0.1"})  # fmt: skip
    yield session
    session.stop()


def metadata_value(spec: str, version: int, **fields) -> bytes:
    """A __cluster_metadata record value: frame version 1, apiKey, version, the struct
    (kafkacodec.sample.metadata_value)."""
    from kafkacodec.sample import metadata_value as built

    return built(spec, version, **fields)

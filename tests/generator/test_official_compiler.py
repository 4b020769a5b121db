"""Every schema compiles with the official Kaitai Struct compiler (npm
kaitai-struct-compiler) for every target it can write, and the compiler's Python output
decodes a Kafka vector the same way kafkacodec does."""

import shutil
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
KSC = ROOT / "tests" / "ksc"

pytestmark = [
    pytest.mark.crosslang,
    pytest.mark.skipif(
        shutil.which("node") is None
        or not (KSC / "node_modules" / "kaitai-struct-compiler").exists(),
        reason="node and tests/ksc/node_modules are needed (make test installs them)",
    ),
]


@pytest.fixture(scope="module")
def compiled(tmp_path_factory):
    from kafkacodec.export import LANGUAGES, export

    out = tmp_path_factory.mktemp("ksc")
    # Every target of the compiler but those it cannot write for these schemas (0.11: Perl
    # has no custom `process`, Nim fails on kafka_log). Python and JavaScript are also
    # run: below, in test_differential.py and in test_javascript.py.
    return out, export(out, [lang for lang in LANGUAGES if lang not in ("html", "nim", "perl")])


def test_every_schema_compiles_for_every_language(compiled):
    _out, lines = compiled
    schemas = sorted(
        str(p.relative_to(ROOT / "schemas"))
        for p in (ROOT / "schemas").rglob("*.ksy")
        if "common" not in p.parts
    )
    assert sorted({line["schema"] for line in lines}) == schemas
    failed = [line for line in lines if not line["ok"]]
    assert not failed, failed


def test_official_python_output_decodes_a_vector(kaitai):
    kafka_log = kaitai.kafka_log
    data = (ROOT / "tests/vectors/kafka-java/multi/v2_mixed_batches.bin").read_bytes()
    log = kafka_log.KafkaLog.from_bytes(data)
    import kafkacodec as kc

    ours = list(kc.iter_batches(data))
    assert len(log.entries) == len(ours)
    for entry, b in zip(log.entries, ours):
        body = entry.body
        assert (body.base_offset, body.crc, body.num_records) == (b.base_offset, b.crc, b.count)
        theirs = [(r.body.offset_delta.value, r.body.key, r.body.value) for r in body.records_region.records]
        mine = [(r.offset - b.base_offset, r.key, r.value) for r in b.records()]
        assert theirs == mine

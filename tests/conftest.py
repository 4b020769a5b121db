import json
from pathlib import Path

import pytest

VECTORS = Path(__file__).parent / "vectors"
KAFKA_JAVA = VECTORS / "kafka-java"
PEERS = VECTORS / "peers"


def kafka_java_cases(*categories):
    out = []
    for cat in categories:
        for j in sorted((KAFKA_JAVA / cat).glob("*.json")):
            doc = json.loads(j.read_text())
            if "batches" in doc:
                out.append(pytest.param(doc, (j.parent / doc["file"]).read_bytes(), id=doc["name"]))
    return out


def mutate(buf: bytes, data) -> bytes:
    """A Hypothesis-drawn damage of buf: a flipped byte, a cut, appended or inserted bytes."""
    from hypothesis import strategies as st

    buf = bytearray(buf)
    kind = data.draw(st.sampled_from(["flip", "cut", "append", "insert"]))
    at = data.draw(st.integers(0, len(buf)))
    if kind == "flip" and at < len(buf):
        buf[at] = data.draw(st.integers(0, 255))
    elif kind == "cut":
        del buf[at:]
    elif kind == "append":
        buf += data.draw(st.binary(min_size=1, max_size=8))
    else:
        buf[at:at] = data.draw(st.binary(min_size=1, max_size=8))
    return bytes(buf)


def hexs(b):
    return None if b is None else bytes(b).hex()


def assert_roundtrip(cls, obj, data: bytes | None = None):
    """Build obj with cls's generated builder, parse it back, compare; with data, the
    encoding must equal those bytes too (Construct's common() pattern)."""
    built = obj.build()
    if data is not None:
        assert built == bytes(data)
    again = cls.parse_all(built)
    assert again.build() == built
    return again

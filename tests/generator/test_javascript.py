"""The official Kaitai compiler's JavaScript output, with kafkacodec's JavaScript pieces
(runtime/targets/javascript: the kafka_compression process and the CRC checks), decodes
every shared vector on Node exactly as kafkacodec's Python code does."""

import json
import os
import shutil
import subprocess
from pathlib import Path

import pytest
from conftest import INDEX_SCHEMAS, KSC, VECTORS
from differential import camel, ours_tree, outcome

import kafkacodec as kc
from kafkacodec.export import export
from kafkacodec.generator.ir import SchemaSet
from kafkacodec.generator.render import SCHEMA_DIR

pytestmark = [
    pytest.mark.crosslang,
    pytest.mark.skipif(
        shutil.which("node") is None or not (KSC / "node_modules" / "fzstd").exists(),
        reason="node and tests/ksc/node_modules are needed (make test installs them)",
    ),
]

LOGS = sorted(VECTORS.rglob("*.bin")) + sorted(VECTORS.rglob("*.log"))
# Positional instances are properties in JavaScript, not fields: they are not dumped.
POSITIONAL = {
    i.name for m in SchemaSet(SCHEMA_DIR).modules() for t in m.types for i in t.pos_instances
}


@pytest.fixture(scope="module")
def javascript(tmp_path_factory):
    out = tmp_path_factory.mktemp("export")
    results = export(out, ["javascript"])
    assert all(r["ok"] for r in results), [r for r in results if not r["ok"]]
    return out / "javascript"


def node_dump(folder: Path, schema_id: str, files) -> list[dict]:
    env = dict(os.environ, NODE_PATH=f"{KSC / 'node_modules'}{os.pathsep}{folder}")
    proc = subprocess.run(
        ["node", str(folder / "kafkacodec-dump.js"), schema_id, *map(str, files)],
        capture_output=True, text=True, env=env, timeout=300, check=True,
    )  # fmt: skip
    return [json.loads(line) for line in proc.stdout.splitlines()]


def as_json(tree, theirs):
    """An ours_tree in the dump's JSON shape: bytes as {"hex": ...}; absent fields (None)
    and positional instances left out where the dump has none (JavaScript leaves them
    undefined)."""
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


def check(cls, data: bytes, theirs: dict, *, log: bool):
    mine = outcome(lambda: ours_tree(cls.parse_all(data)))
    if mine[0] == "ok":
        assert "ok" in theirs, theirs
        assert theirs["ok"] == as_json(mine[1], theirs["ok"])
        if log:
            assert all(c["ok"] for c in theirs["crc"])
        return
    if mine == ("error", "checksum"):
        # Kaitai cannot check a CRC: the JavaScript pieces do. The rest reads the same.
        unchecked = outcome(lambda: ours_tree(cls.parse_all(data, verify=False), verify=False))
        if unchecked[0] == "ok":
            assert theirs.get("ok") == as_json(unchecked[1], theirs.get("ok"))
            bad = [c for c in theirs["crc"] if not c["ok"]]
            top = outcome(lambda: [b for b in kc.iter_batches(data)])
            assert bool(bad) == (top == ("error", "checksum")), (bad, top)
        return
    assert "error" in theirs, f"kafkacodec refuses it ({mine[1]}), the JavaScript parser reads it"


def test_every_log_vector_decodes_the_same_on_node(javascript):
    from kafkacodec.generated.kafka_log import KafkaLog

    dumps = node_dump(javascript, "kafka_log", LOGS)
    assert len(dumps) == len(LOGS)
    for path, theirs in zip(LOGS, dumps):
        try:
            check(KafkaLog, path.read_bytes(), theirs, log=True)
        except AssertionError as err:
            raise AssertionError(f"{path.relative_to(VECTORS)}: {err}") from None


@pytest.mark.parametrize("suffix", sorted(INDEX_SCHEMAS))
def test_every_index_vector_decodes_the_same_on_node(javascript, suffix):
    import importlib

    schema_id = INDEX_SCHEMAS[suffix]
    module = importlib.import_module(f"kafkacodec.generated.{schema_id}")
    cls = getattr(module, camel(schema_id))
    files = sorted(VECTORS.rglob(f"*{suffix}"))
    assert files
    for path, theirs in zip(files, node_dump(javascript, schema_id, files)):
        check(cls, path.read_bytes(), theirs, log=False)

"""The Go package's own tools over it (go/kafkacodec, generator/golang.py): what it reads is
compared with kafkacodec's Python parsers in test_targets.py."""

from __future__ import annotations

import shutil
import subprocess
from pathlib import Path

import pytest

GO = Path(__file__).resolve().parents[2] / "go"

pytestmark = [
    pytest.mark.crosslang,
    pytest.mark.skipif(shutil.which("go") is None, reason="needs Go"),
]


def test_the_go_module_vets_and_its_examples_run():
    """`go vet` finds nothing in the generated package or the commands; the package's
    examples (go/kafkacodec/example_test.go) print what they say."""
    for cmd in (["go", "vet", "./..."], ["go", "test", "./..."]):
        proc = subprocess.run(cmd, cwd=GO, capture_output=True, text=True, timeout=900)
        assert proc.returncode == 0, proc.stdout[-3000:] + proc.stderr[-3000:]


def test_the_fuzz_runs_findings_stay_fixed(tmp_path):
    """The Go package's divergences from Kafka that a million-case run found
    (tests/fuzz_regressions/kafkacodec-go: each minimized input with Kafka's answer) are
    Kafka's answers now, in the Go package and in kafkacodec's Python."""
    import json
    import sys

    sys.path.insert(0, str(GO.parent))
    from peers import expected
    from peers.__main__ import go_binary, run_parser
    from peers.findings import diverges, signature

    cases = sorted((GO.parent / "tests" / "fuzz_regressions" / "kafkacodec-go").glob("*/input.bin"))
    assert len(cases) >= 9
    answers = run_parser([str(go_binary(tmp_path)), "-parser", "kafkacodec-go"], [str(c) for c in cases], 30)
    for case in cases:
        kafka = json.loads((case.parent / "kafka.json").read_text())
        for who, answer in (("Go", answers[str(case)]), ("Python", expected(case.read_bytes()))):
            sig = signature(kafka, answer)
            assert not diverges(sig), (case.parent.name, who, sig)

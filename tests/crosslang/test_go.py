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

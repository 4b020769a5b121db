"""The public packages type-check: mypy with pyproject's [tool.mypy] (the runtime, the
record API and the log layer, the generated code they import; the API the README documents
with every function annotated)."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
MYPY = Path(sys.executable).with_name("mypy")


@pytest.mark.slow  # mypy from cold; CI runs it
@pytest.mark.skipif(not MYPY.exists(), reason="mypy is not installed")
def test_mypy_is_clean_on_the_public_packages(tmp_path):
    res = subprocess.run([str(MYPY), "--cache-dir", str(tmp_path / "cache")], cwd=ROOT,
                         capture_output=True, text=True, timeout=600)  # fmt: skip
    assert res.returncode == 0, res.stdout[-4000:]
    assert "Success: no issues found" in res.stdout


def test_the_package_says_it_is_typed():
    import kafkacodec

    assert (Path(kafkacodec.__file__).parent / "py.typed").is_file()

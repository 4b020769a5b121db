"""The Rust crate's own tools over it (rust/, generator/rust.py): what it reads is compared
with kafkacodec's Python parsers in test_targets.py."""

from __future__ import annotations

import shutil
import subprocess
from pathlib import Path

import pytest

RUST = Path(__file__).resolve().parents[2] / "rust"

pytestmark = [
    pytest.mark.crosslang,
    pytest.mark.skipif(shutil.which("cargo") is None, reason="needs Rust (cargo)"),
]


def test_the_crate_is_formatted_lints_clean_and_its_tests_pass():
    """`cargo fmt --check`, `cargo clippy -D warnings` over the crate (the generated modules
    included: no lint of clippy's is turned off for them) and `cargo test` (the example
    docs/languages.md shows among them)."""
    for cmd in (["cargo", "fmt", "--check"], ["cargo", "clippy", "--locked", "--all-targets", "--", "-D", "warnings"],
                ["cargo", "test", "--locked", "--release"]):  # fmt: skip
        proc = subprocess.run(cmd, cwd=RUST, capture_output=True, text=True, timeout=1800)
        assert proc.returncode == 0, proc.stdout[-3000:] + proc.stderr[-3000:]


def test_the_crate_has_no_unsafe_code():
    """No `unsafe` anywhere in the crate (lib.rs forbids it; the generated modules too)."""
    sources = [p for p in (RUST / "src").rglob("*.rs")]
    assert "#![forbid(unsafe_code)]" in (RUST / "src" / "lib.rs").read_text()
    assert not [p for p in sources if "unsafe " in p.read_text() and p.name != "lib.rs"]

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


@pytest.mark.parametrize("crate", [RUST, RUST.parent / "peers" / "rust"], ids=["rust", "peers-rust"])
def test_the_crate_is_formatted_lints_clean_and_its_tests_pass(crate):
    """`cargo fmt --check`, `cargo clippy -D warnings` over the crate (the generated modules
    included: no lint of clippy's is turned off for them) and `cargo test` (the example
    docs/languages.md shows among them); the same for the program that grades the Rust
    peers (peers/rust)."""
    for cmd in (["cargo", "fmt", "--check"], ["cargo", "clippy", "--locked", "--all-targets", "--", "-D", "warnings"],
                ["cargo", "test", "--locked", "--release"]):  # fmt: skip
        proc = subprocess.run(cmd, cwd=crate, capture_output=True, text=True, timeout=1800)
        assert proc.returncode == 0, proc.stdout[-3000:] + proc.stderr[-3000:]


def test_the_crate_has_no_unsafe_code():
    """No `unsafe` anywhere in the crate (lib.rs forbids it; the generated modules too)."""
    sources = [p for p in (RUST / "src").rglob("*.rs")]
    assert "#![forbid(unsafe_code)]" in (RUST / "src" / "lib.rs").read_text()
    assert not [p for p in sources if "unsafe " in p.read_text() and p.name != "lib.rs"]


def test_no_input_makes_a_debug_build_panic(tmp_path):
    """A debug build checks every integer operation for overflow: the seeded mutations of
    the shared vectors and schema-aware ones (peers.mutate) read by it, with and without CRC
    checks, give an answer each and no panic (a release build wraps where a debug one
    panics, so the release runs of test_targets.py alone would not show one)."""
    import sys

    from crosslang import mutated_jobs, run_dump

    sys.path.insert(0, str(RUST.parent))
    from peers.mutate import draw

    proc = subprocess.run(["cargo", "build", "--locked", "--bin", "kafkacodec-dump"], cwd=RUST,
                          capture_output=True, text=True, timeout=1800)  # fmt: skip
    assert proc.returncode == 0, proc.stderr[-3000:]
    dump = RUST / "target" / "debug" / "kafkacodec-dump"
    jobs = mutated_jobs(tmp_path / "bytewise", seed=54, count=600)
    schema_aware = []
    for i, (_name, data) in enumerate(draw(3000, 57)):
        (tmp_path / f"{i}.bin").write_bytes(data)
        schema_aware.append(f"KafkaLog\t-\t0\t{tmp_path / f'{i}.bin'}")
    (tmp_path / "aware.jobs").write_text("\n".join(schema_aware) + "\n")
    for verify in (True, False):
        assert len(run_dump(dump, jobs, tmp_path, "bytewise", verify)) == len(jobs)
        proc = subprocess.run([str(dump), *([] if verify else ["-no-crc"]), str(tmp_path / "aware.jobs")],
                              capture_output=True, text=True, timeout=600)  # fmt: skip
        assert proc.returncode == 0, proc.stderr[-3000:]
        assert len(proc.stdout.split("\n")[:-1]) == len(schema_aware)

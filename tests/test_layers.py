"""The layers of the house (README, "Architecture"): import-linter's contracts in
pyproject.toml, run on the checkout and shown to fail on a tree that breaks them."""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest
import tomllib
from conftest import checkout_modules

ROOT = Path(__file__).resolve().parents[1]
LINT = Path(sys.executable).with_name("lint-imports")

pytestmark = pytest.mark.skipif(not LINT.exists(), reason="import-linter is not installed")


def lint(tree: Path = ROOT) -> subprocess.CompletedProcess:
    """lint-imports on the kafkacodec package under tree (it looks in its working directory
    first, then where Python finds kafkacodec)."""
    env = {**os.environ, "PYTHONPATH": str(tree)}
    return subprocess.run([str(LINT), "--config", str(ROOT / "pyproject.toml"), "--no-cache"],
                          capture_output=True, text=True, timeout=120, env=env, cwd=tree)  # fmt: skip


def contracts() -> list[str]:
    config = tomllib.loads((ROOT / "pyproject.toml").read_text())["tool"]["importlinter"]
    return [c["name"] for c in config["contracts"]]


def test_the_checkout_keeps_every_contract():
    res = lint()
    assert res.returncode == 0, res.stdout[-4000:]
    names = contracts()
    assert len(names) >= 3
    assert f"Contracts: {len(names)} kept, 0 broken." in res.stdout


def test_the_checkout_is_seen_as_the_installed_packages():
    """kafkacodec/runtime is a link to ../runtime (and so on for generated, generator,
    pipeline, schemas): a tool that follows imports through folders, as import-linter and
    mypy do, finds every module of the wheel in the checkout."""
    import grimp

    graph = grimp.build_graph("kafkacodec")
    wheel = checkout_modules()
    assert wheel <= graph.modules, sorted(wheel - graph.modules)


@pytest.mark.parametrize("module,line,broken", [
    ("runtime/crc.py", "import kafkacodec.log.segment", "Layers point down"),  # runtime -> up
    ("records/batches.py", "import kafkacodec.generated.strategies", "no extra's package"),
    ("log/segment.py", "import pyspark", "no extra's package"),
    ("log/index.py", "import kafkacodec.log.partition", "No cycles"),  # partition -> index already
])  # fmt: skip
def test_a_tree_that_breaks_a_contract_fails(tmp_path, module, line, broken):
    tree = tmp_path / "kafkacodec"
    shutil.copytree(ROOT / "kafkacodec", tree,
                    ignore=shutil.ignore_patterns("__pycache__", "*.so", "node_modules"))  # fmt: skip
    with open(tree / module, "a") as f:
        f.write(f"\n{line}\n")
    res = lint(tmp_path)
    assert res.returncode == 1, res.stdout[-2000:]
    flat = "".join(res.stdout.split())
    failed = [n for n in contracts() if "".join(f"{n} BROKEN".split()) in flat]
    assert any(broken in n for n in failed), res.stdout[-3000:]

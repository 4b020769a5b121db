"""Benchmarks (python -m bench, and bench.<name> for each of the others; `make bench`)."""

from __future__ import annotations

import json
from pathlib import Path

RESULTS = Path(__file__).resolve().parent / "results"


def save(name: str, data) -> Path:
    """A benchmark's figures as bench/results/NAME.json (what the README's tables quote)."""
    RESULTS.mkdir(exist_ok=True)
    path = RESULTS / f"{name}.json"
    path.write_text(json.dumps(data, indent=2) + "\n")
    return path

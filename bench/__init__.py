"""Benchmarks (python -m bench, and bench.<name> for each of the others; `make bench`)."""

from __future__ import annotations

import json
import os
from pathlib import Path

RESULTS = Path(__file__).resolve().parent / "results"


def rss_anon_kb(pid: int | str = "self") -> int:
    """A process's anonymous resident memory in kB (heap, not the file pages an mmap walk
    touches); 0 for one that is gone."""
    try:
        for line in Path(f"/proc/{pid}/status").read_text().splitlines():
            if line.startswith("RssAnon:"):
                return int(line.split()[1])
    except OSError:
        pass
    return 0


def machine() -> str:
    """The machine a run is on, for the figures it gives: its CPU model and cores."""
    try:
        model = next((line.split(":", 1)[1].strip() for line in Path("/proc/cpuinfo").read_text().splitlines()
                      if line.startswith("model name")), "an unknown CPU")  # fmt: skip
    except OSError:
        model = "an unknown CPU"
    return f"{model}, {os.cpu_count()} cores"


def save(name: str, data) -> Path:
    """A benchmark's figures as bench/results/NAME.json (what the README's tables quote)."""
    RESULTS.mkdir(exist_ok=True)
    path = RESULTS / f"{name}.json"
    path.write_text(json.dumps(data, indent=2) + "\n")
    return path

"""The speed page's charts (docs/speed.md), drawn with matplotlib from the benchmarks' own
JSON results (bench/results/*.json): `make bench` runs the benchmarks and then this, so that
the charts are the figures of the tables beside them. Each SVG names the sha256 of the JSON
it was drawn from, and a test checks that it is the committed JSON's.

    python -m bench.charts [--out docs/speed]
"""

from __future__ import annotations

import argparse
import hashlib
import json
from pathlib import Path

from kafkacodec.pipeline.report import figure, svg

ROOT = Path(__file__).resolve().parent.parent
RESULTS = ROOT / "bench" / "results"
OUT = ROOT / "docs" / "speed"
#: The charts: name -> (the results file, the function drawing it).
CHARTS: dict[str, tuple[str, str]] = {
    "commands-vs-kafka": ("commands.json", "_against_anchors"),
    "records-per-second": ("commands.json", "_records"),
}


def digest(results: str) -> str:
    """The sha256 of a results file, as a chart names the figures it was drawn from."""
    return hashlib.sha256((RESULTS / results).read_bytes()).hexdigest()


def _against_anchors(r: dict):
    """How many times faster than its anchor each command is (the same output), one bar
    per command, the 3x goal marked."""
    rows = [(f"dump {flag}".replace("dump .", "dump of ."), e["ratio"]) for flag, e in r.get("dump", {}).items()]
    consumers = r.get("consumers", {})
    ours = r["records"]["none"]["text"]["records_per_s"]
    for name in ("kcat", "kafka-console-consumer"):
        if "records_per_s" in consumers.get(name, {}):
            rows.append((f"records, beside {name}", ours / consumers[name]["records_per_s"]))
    tool = r.get("groups_tool", {})
    if "ratio" in tool:
        rows.append(("groups, beside kafka-consumer-groups", tool["ratio"]))
    fig = figure(0.6 + 0.24 * len(rows))
    ax = fig.add_subplot()
    bars = ax.barh([name for name, _v in rows], [v for _n, v in rows], color="#4e79a7")
    ax.bar_label(bars, labels=[f"{v:.1f}x" for _n, v in rows], padding=3, fontsize=8)
    ax.axvline(3, color="#e15759", linewidth=1, linestyle="--", label="the goal: 3x")
    ax.legend(loc="lower right", fontsize=8)
    ax.invert_yaxis()
    ax.set_xscale("log")  # bars from 1x: as fast as the anchor
    top = max(v for _n, v in rows) * 1.5
    ax.set_xlim(1, top)
    ticks = [t for t in (1, 2, 3, 5, 10, 20, 50, 100) if t <= top]
    ax.set_xticks(ticks, labels=[f"{t}x" for t in ticks])
    ax.minorticks_off()
    ax.set_xlabel("times faster than Kafka's own tool (or kcat) on the same files, log scale")
    return fig


def _records(r: dict):
    """Records per second of `kafkacodec records` (text and --json, each codec) beside kcat
    and kafka-console-consumer on the same partition."""
    rows = []
    for codec, e in r["records"].items():
        rows.append((f"kafkacodec records ({codec})", e["text"]["records_per_s"]))
        rows.append((f"kafkacodec records --json ({codec})", e["json"]["records_per_s"]))
    for name, e in r.get("consumers", {}).items():
        if "records_per_s" in e:
            rows.append((f"{name} (none)", e["records_per_s"]))
    fig = figure(0.6 + 0.22 * len(rows))
    ax = fig.add_subplot()
    colors = ["#4e79a7" if n.startswith("kafkacodec") else "#f28e2b" for n, _v in rows]
    bars = ax.barh([n for n, _v in rows], [v / 1e6 for _n, v in rows], color=colors)
    ax.bar_label(bars, labels=[f"{v / 1e6:.2f}M" for _n, v in rows], padding=3, fontsize=8)
    ax.invert_yaxis()
    ax.set_xlabel("million records per second, one process")
    ax.set_xlim(0, max(v for _n, v in rows) / 1e6 * 1.15)
    return fig


def draw(out: Path = OUT) -> list[Path]:
    """Draw every chart into out (name.svg); returns the files written."""
    out.mkdir(parents=True, exist_ok=True)
    written = []
    for name, (results, function) in CHARTS.items():
        data = json.loads((RESULTS / results).read_text())
        fig = globals()[function](data)
        path = out / f"{name}.svg"
        note = f"drawn by bench.charts from bench/results/{results} sha256 {digest(results)}"
        path.write_text(svg(fig, note, description=note, inline=False))
        written.append(path)
    return written


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--out", type=Path, default=OUT, help="where the SVG files go")
    args = ap.parse_args(argv)
    for path in draw(args.out):
        print(f"wrote {path}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())

"""The `kafkacodec spark stats --html` report: one self-contained HTML file (inline CSS and
SVG, no script, nothing fetched) with the stats table and three charts: records over time
per partition, the distribution of batch sizes, and the codec mix."""

from __future__ import annotations

import datetime
from html import escape

PALETTE = ("#4e79a7", "#f28e2b", "#e15759", "#76b7b2", "#59a14f", "#edc948", "#b07aa1",
           "#ff9da7", "#9c755f", "#bab0ac")  # fmt: skip
WIDTH, HEIGHT, PAD = 760, 240, 48

_CSS = """
body { font: 14px/1.4 system-ui, sans-serif; margin: 2em auto; max-width: 860px; color: #222; }
h1 { font-size: 1.4em; } h2 { font-size: 1.1em; margin-top: 2em; }
table { border-collapse: collapse; font-size: 12px; }
th, td { padding: 3px 8px; border-bottom: 1px solid #ddd; text-align: right; }
th:first-child, td:first-child { text-align: left; }
svg text { font: 11px system-ui, sans-serif; fill: #444; }
.legend span { display: inline-block; margin-right: 1em; }
.legend i { display: inline-block; width: 10px; height: 10px; margin-right: 4px; }
.muted { color: #777; }
"""


def _bytes(n: float) -> str:
    for unit in ("B", "KiB", "MiB", "GiB", "TiB"):
        if abs(n) < 1024 or unit == "TiB":
            return f"{n:.0f} {unit}" if unit == "B" else f"{n:.1f} {unit}"
        n /= 1024
    raise AssertionError


def _time(ms: int) -> str:
    moment = datetime.datetime.fromtimestamp(ms / 1000, datetime.timezone.utc)
    return moment.strftime("%Y-%m-%d %H:%M:%S UTC")


def _svg(body: list[str], height: int = HEIGHT) -> str:
    return (f'<svg xmlns="http://www.w3.org/2000/svg" width="{WIDTH}" height="{height}" '
            f'viewBox="0 0 {WIDTH} {height}" role="img">' + "".join(body) + "</svg>")  # fmt: skip


def _axes(y_max: float, label) -> list[str]:
    x0, y0, x1 = PAD, HEIGHT - PAD / 2, WIDTH - 10
    return [
        f'<line x1="{x0}" y1="{y0}" x2="{x1}" y2="{y0}" stroke="#999"/>',
        f'<line x1="{x0}" y1="10" x2="{x0}" y2="{y0}" stroke="#999"/>',
        f'<text x="{x0 - 4}" y="16" text-anchor="end">{escape(label(y_max))}</text>',
        f'<text x="{x0 - 4}" y="{y0}" text-anchor="end">0</text>',
    ]


def timeline_chart(timeline: dict) -> str:
    """Records per time bucket, one line per partition."""
    series = timeline.get("series") if timeline else None
    if not series:
        return '<p class="muted">No record has a timestamp (magic 0 only).</p>'
    n = len(next(iter(series.values())))
    top = max(max(v) for v in series.values()) or 1
    x0, y0 = PAD, HEIGHT - PAD / 2
    span_x, span_y = WIDTH - 10 - x0, y0 - 14
    body = _axes(top, lambda v: f"{v:,.0f}")
    legend = []
    for i, (name, counts) in enumerate(series.items()):
        color = PALETTE[i % len(PALETTE)]
        points = " ".join(
            f"{x0 + span_x * (k + 0.5) / n:.1f},{y0 - span_y * c / top:.1f}"
            for k, c in enumerate(counts)
        )
        body.append(f'<polyline fill="none" stroke="{color}" stroke-width="1.5" points="{points}">'
                    f"<title>{escape(name)}</title></polyline>")  # fmt: skip
        legend.append(f'<span><i style="background:{color}"></i>{escape(name)}</span>')
    start, width = timeline["start_ms"], timeline["bucket_ms"]
    body.append(f'<text x="{x0}" y="{HEIGHT - 6}">{_time(start)}</text>')
    body.append(f'<text x="{WIDTH - 10}" y="{HEIGHT - 6}" text-anchor="end">'
                f"{_time(start + width * n)}</text>")  # fmt: skip
    return (_svg(body) + f'<p class="legend">{"".join(legend)}</p>'
            f'<p class="muted">{n} buckets of {width / 1000:g} s each.</p>')  # fmt: skip


def sizes_chart(sizes: dict) -> str:
    """Batches per power-of-two size class (a batch of 700 bytes counts in 512 B-1 KiB)."""
    if not sizes:
        return '<p class="muted">No batches.</p>'
    classes = list(range(min(sizes), max(sizes) + 1))
    top = max(sizes.values())
    x0, y0 = PAD, HEIGHT - PAD / 2
    step = (WIDTH - 10 - x0) / len(classes)
    body = _axes(top, lambda v: f"{v:,.0f}")
    for k, p in enumerate(classes):
        count = sizes.get(p, 0)
        h = (y0 - 14) * count / top
        x = x0 + k * step
        label = f"{_bytes(2**p)} to {_bytes(2 ** (p + 1))}: {count:,} batches"
        body.append(f'<rect x="{x + 2:.1f}" y="{y0 - h:.1f}" width="{step - 4:.1f}" '
                    f'height="{h:.1f}" fill="{PALETTE[0]}"><title>{label}</title></rect>')  # fmt: skip
        body.append(f'<text x="{x + step / 2:.1f}" y="{HEIGHT - 6}" text-anchor="middle">'
                    f"{escape(_bytes(2**p))}</text>")  # fmt: skip
    return _svg(body)


def codecs_chart(codecs: list[dict]) -> str:
    """One bar per codec: its share of the bytes, with batches and records."""
    total = sum(c["bytes"] or 0 for c in codecs) or 1
    row = 26
    body = []
    for i, c in enumerate(codecs):
        share = (c["bytes"] or 0) / total
        y = 8 + i * row
        body.append(f'<text x="0" y="{y + 14}">{escape(str(c["compression"]))}</text>')
        body.append(f'<rect x="70" y="{y}" width="{max(1.0, 420 * share):.1f}" height="18" '
                    f'fill="{PALETTE[i % len(PALETTE)]}"/>')  # fmt: skip
        body.append(f'<text x="{500}" y="{y + 14}">{share:.1%} of bytes; {c["batches"]:,} batches, '
                    f"{_bytes(c['bytes'] or 0)}, {c['records']:,} records</text>")  # fmt: skip
    return _svg(body, height=16 + row * max(1, len(codecs)))


def _table(rows: list[dict]) -> str:
    head = ("topic", "partition", "records", "offsets", "batches", "bytes", "codecs", "magics",
            "producers", "txn committed", "txn aborted", "timestamps")  # fmt: skip
    out = ["<table><tr>" + "".join(f"<th>{h}</th>" for h in head) + "</tr>"]
    for r in rows:
        offsets = "-" if r["first_offset"] is None else f"{r['first_offset']}..{r['last_offset']}"
        times = (
            "-" if r["min_timestamp"] is None else f"{r['min_timestamp']} .. {r['max_timestamp']}"
        )
        cells = (r["topic"], r["partition"], f"{r['records']:,}", offsets, f"{r['batches']:,}",
                 _bytes(r["bytes"]), ", ".join(r["codecs"]), ", ".join(map(str, r["magics"])),
                 r["producers"], r["committed"], r["aborted"], times)  # fmt: skip
        out.append("<tr>" + "".join(f"<td>{escape(str(c))}</td>" for c in cells) + "</tr>")
    return "".join(out) + "</table>"


def render(data: dict, *, title: str) -> str:
    """The report as one HTML document."""
    rows = data["stats"]
    total = sum(r["records"] for r in rows)
    fetched = data.get("fetched") or {}
    read = (f"<p>Read from object stores: {_bytes(fetched['bytes'])} fetched in "
            f"{fetched['requests']:,} requests ({fetched['retries']:,} retried).</p>"
            if fetched.get("requests") else "")  # fmt: skip
    return "\n".join([
        "<!DOCTYPE html>", '<html lang="en"><head><meta charset="utf-8">',
        f"<title>{escape(title)}</title><style>{_CSS}</style></head><body>",
        f"<h1>{escape(title)}</h1>",
        f"<p>{len(rows)} topic-partitions, {total:,} records, "
        f"{sum(r['batches'] for r in rows):,} batches, {_bytes(sum(r['bytes'] for r in rows))}.</p>",
        read, _table(rows),
        "<h2>Records over time, per partition</h2>", timeline_chart(data["timeline"]),
        "<h2>Batch sizes</h2>", sizes_chart(data["batch_sizes"]),
        "<h2>Codec mix</h2>", codecs_chart(data["codecs"]),
        '<p class="muted">Written by kafkacodec spark stats --html.</p>',
        "</body></html>",
    ])  # fmt: skip

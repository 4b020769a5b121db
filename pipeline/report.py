"""The `kafkacodec spark stats --html` report: one self-contained HTML file (inline CSS and
SVG, no script, nothing fetched) with the stats table and three charts drawn by matplotlib:
records over time per partition (stacked, so that partitions with the same counts stay
visible), the distribution of batch sizes, and the codec mix (with its table)."""

from __future__ import annotations

import datetime
import io
from html import escape

#: Partitions drawn one by one in the timeline; the others are summed into one band.
TIMELINE_SERIES = 9
_WIDTH = 8.0  # inches, at matplotlib's 100 dpi for SVG sizes: 800 px

_CSS = """
body { font: 14px/1.4 system-ui, sans-serif; margin: 2em auto; max-width: 1200px; padding: 0 1em; color: #222; }
h1 { font-size: 1.4em; } h2 { font-size: 1.1em; margin-top: 2em; }
table { border-collapse: collapse; font-size: 12px; }
th, td { padding: 3px 6px; border-bottom: 1px solid #ddd; text-align: right; }
th { vertical-align: bottom; } td { overflow-wrap: anywhere; } td.n { white-space: nowrap; }
.wide { overflow-x: auto; }
th:first-child, td:first-child { text-align: left; }
svg { max-width: 100%; height: auto; }
.muted { color: #777; }
"""


def _bytes(n: float) -> str:
    for unit in ("B", "KiB", "MiB", "GiB", "TiB"):
        if abs(n) < 1024 or unit == "TiB":
            return f"{n:.0f} {unit}" if unit == "B" else f"{n:.1f} {unit}"
        n /= 1024
    raise AssertionError


def _time(ms: int) -> datetime.datetime:
    return datetime.datetime.fromtimestamp(ms / 1000, datetime.timezone.utc)


def figure(height: float):
    """A figure of the report's width (matplotlib's object API: no pyplot, no global state)."""
    from matplotlib.figure import Figure

    return Figure(figsize=(_WIDTH, height), layout="constrained")


def svg(fig, salt: str, *, description: str | None = None, inline: bool = True) -> str:
    """A figure as SVG text: text kept as text, no date, ids that do not collide with another
    chart's on the same page (salt); inline: the <svg> element alone, for an HTML page, else
    a whole file (with `description` in its metadata)."""
    import matplotlib

    out = io.StringIO()
    metadata = {"Date": None, **({"Description": description} if description else {})}
    with matplotlib.rc_context({"svg.fonttype": "none", "svg.hashsalt": salt, "font.size": 9}):
        fig.savefig(out, format="svg", metadata=metadata)
    text = out.getvalue()
    return text[text.index("<svg") :] if inline else text


def timeline_chart(timeline: dict) -> str:
    """Records per time bucket, the partitions stacked (the largest TIMELINE_SERIES each with
    its band, the rest summed)."""
    series = timeline.get("series") if timeline else None
    if not series:
        return '<p class="muted">No record has a timestamp (magic 0 only).</p>'
    n = len(next(iter(series.values())))
    start, width = timeline["start_ms"], timeline["bucket_ms"]
    ranked = sorted(series.items(), key=lambda kv: -sum(kv[1]))
    shown = sorted(ranked[:TIMELINE_SERIES])
    rest = ranked[TIMELINE_SERIES:]
    if rest:
        shown.append((f"{len(rest)} other partitions", [sum(c[k] for _n, c in rest) for k in range(n)]))
    # each bucket a step from its start to the next one's (the last one's end closes it)
    x = [_time(start + width * k) for k in range(n + 1)]
    ys = [[*counts, counts[-1]] for _name, counts in shown]
    fig = figure(3.2)
    ax = fig.add_subplot()
    ax.stackplot(x, *ys, labels=[name for name, _c in shown], step="post")
    ax.set_ylabel("records per bucket")
    ax.set_xlim(x[0], x[-1])
    ax.margins(y=0.05)
    ax.legend(loc="upper left", bbox_to_anchor=(1.01, 1.0), fontsize=8, frameon=False)
    fig.autofmt_xdate()
    return (svg(fig, "timeline") + f'<p class="muted">{n} buckets of {width / 1000:g} s each, '
            f"from {_time(start):%Y-%m-%d %H:%M:%S} UTC; partitions stacked.</p>")  # fmt: skip


def sizes_chart(sizes: dict) -> str:
    """Batches per power-of-two size class (a batch of 700 bytes counts in 512 B-1 KiB)."""
    if not sizes:
        return '<p class="muted">No batches.</p>'
    classes = list(range(min(sizes), max(sizes) + 1))
    fig = figure(2.8)
    ax = fig.add_subplot()
    ax.bar([_bytes(2**p) for p in classes], [sizes.get(p, 0) for p in classes])
    ax.set_ylabel("batches")
    ax.set_xlabel("batch size, from (each bar: up to twice that)")
    ax.tick_params(axis="x", labelrotation=45 if len(classes) > 8 else 0)
    return svg(fig, "sizes")


def codecs_chart(codecs: list[dict]) -> str:
    """One bar per codec: its share of the bytes; then its batches, bytes and records."""
    total = sum(c["bytes"] or 0 for c in codecs) or 1
    names = [str(c["compression"]) for c in codecs]
    shares = [100 * (c["bytes"] or 0) / total for c in codecs]
    fig = figure(0.5 + 0.32 * max(1, len(codecs)))
    ax = fig.add_subplot()
    bars = ax.barh(names, shares)
    ax.bar_label(bars, labels=[f"{s:.1f}%" for s in shares], padding=3, fontsize=8)
    ax.invert_yaxis()
    ax.set_xlim(0, max(shares, default=0) * 1.15 or 1)
    ax.set_xlabel("share of the bytes (%)")
    rows = "".join(
        f"<tr><td>{escape(name)}</td><td>{c['batches']:,}</td><td>{_bytes(c['bytes'] or 0)}</td>"
        f"<td>{c['records']:,}</td></tr>" for name, c in zip(names, codecs)
    )  # fmt: skip
    return (svg(fig, "codecs") + "<table><tr><th>codec</th><th>batches</th><th>bytes</th>"
            f"<th>records</th></tr>{rows}</table>")  # fmt: skip


def _table(rows: list[dict]) -> str:
    head = ("partition", "data records", "control records", "data offsets", "batches", "bytes", "codecs",
            "magics", "producers", "transactions committed / aborted", "timestamps (UTC), first and last")  # fmt: skip
    out = ["<table><tr>" + "".join(f"<th>{h}</th>" for h in head) + "</tr>"]
    for r in rows:
        offsets = "-" if r["first_offset"] is None else f"{r['first_offset']}..{r['last_offset']}"
        cells = (f"{r['topic']}-{r['partition']}", f"{r['records']:,}", f"{r.get('control_records', 0):,}", offsets,
                 f"{r['batches']:,}", _bytes(r["bytes"]), ", ".join(r["codecs"]), ", ".join(map(str, r["magics"])),
                 r["producers"], f"{r['committed']} / {r['aborted']}")  # fmt: skip
        times = "-" if r["min_timestamp"] is None else f"{escape(str(r['min_timestamp']))}<br>{escape(str(r['max_timestamp']))}"
        # a number never breaks; a topic's name and the codecs may (at any character)
        tds = [f"<td>{escape(str(c))}</td>" if k in (0, 6) else f'<td class="n">{escape(str(c))}</td>'
               for k, c in enumerate(cells)]  # fmt: skip
        out.append("<tr>" + "".join(tds) + f'<td class="n">{times}</td></tr>')
    legend = ('<p class="muted">Data records are what a consumer is handed; control records '
              "(transaction markers) are counted apart (kafkacodec verify counts every record, control "
              "records among them). Offsets and timestamps are the first and last data record's.</p>")  # fmt: skip
    return '<div class="wide">' + "".join(out) + "</table></div>" + legend


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
        f"<p>{len(rows)} topic-partitions, {total:,} data records, "
        f"{sum(r['batches'] for r in rows):,} batches, {_bytes(sum(r['bytes'] for r in rows))}.</p>",
        read, _table(rows),
        "<h2>Records over time, per partition</h2>", timeline_chart(data["timeline"]),
        "<h2>Batch sizes</h2>", sizes_chart(data["batch_sizes"]),
        "<h2>Codec mix</h2>", codecs_chart(data["codecs"]),
        '<p class="muted">Written by kafkacodec spark stats --html.</p>',
        "</body></html>",
    ])  # fmt: skip

"""The documentation site and the `spark stats --html` report, looked at in a real browser:
Debian's Chromium, headless, loads each page; a page that does not render (no content in
the DOM after load, or a blank screenshot) fails. The site is built once for the module."""

from __future__ import annotations

import shutil
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
CHROMIUM = shutil.which("chromium") or shutil.which("chromium-browser")

pytestmark = [
    pytest.mark.slow,
    pytest.mark.skipif(CHROMIUM is None, reason="Debian's chromium is not installed (make test installs it)"),
]

#: Pages of the site, and a text each must show once rendered.
PAGES = {
    "index.html": "Where to start",
    "getting-started.html": "make demo",
    "speed.html": "The commands over a whole log",
    "reference/cli.html": "kafkacodec verify",
    "reference/api.html": "iter_batches",
    "reference/schemas/kafka_record_batch.html": "partition_leader_epoch",
}


def _chromium(*args: str) -> subprocess.CompletedProcess:
    return subprocess.run([CHROMIUM, "--headless=new", "--no-sandbox", "--disable-gpu", "--hide-scrollbars",
                           "--window-size=1200,1600", *args], capture_output=True, text=True, timeout=120)  # fmt: skip


def _looks_rendered(url: str, text: str, tmp_path: Path) -> None:
    dom = _chromium("--dump-dom", url)
    assert dom.returncode == 0, dom.stderr[-2000:]
    assert text in dom.stdout, f"{url}: {text!r} is not in the rendered page"
    shot = tmp_path / "shot.png"
    res = _chromium(f"--screenshot={shot}", url)
    assert res.returncode == 0 and shot.is_file(), res.stderr[-2000:]
    from matplotlib.image import imread

    pixels = imread(shot)
    assert pixels.std() > 0.01, f"{url}: the screenshot is blank"


@pytest.fixture(scope="module")
def site(tmp_path_factory) -> Path:
    out = tmp_path_factory.mktemp("site")
    sphinx = Path(sys.executable).with_name("sphinx-build")
    res = subprocess.run([str(sphinx), "-W", "--keep-going", "-q", "-b", "html", str(ROOT / "docs"), str(out)],
                         capture_output=True, text=True, timeout=900)  # fmt: skip
    assert res.returncode == 0, res.stderr[-5000:]
    return out


@pytest.mark.parametrize("page", sorted(PAGES))
def test_the_site_renders_in_chromium(site, page, tmp_path):
    _looks_rendered((site / page).as_uri(), PAGES[page], tmp_path)


def test_the_stats_report_renders_in_chromium(tmp_path):
    from kafkacodec.pipeline import report

    rows = [{"topic": "orders", "partition": p, "first_offset": 0, "last_offset": 9, "records": 10, "batches": 2,
             "bytes": 1000, "codecs": ["gzip", "zstd"], "magics": [2], "producers": 1, "committed": 0, "aborted": 0,
             "min_timestamp": 1, "max_timestamp": 2} for p in (0, 1)]  # fmt: skip
    data = {"stats": rows, "fetched": None, "batch_sizes": {8: 3, 9: 10, 12: 1},
            "timeline": {"start_ms": 1_700_000_000_000, "bucket_ms": 1000,
                         "series": {"orders-0": [1, 2, 3, 0], "orders-1": [1, 2, 3, 0]}},
            "codecs": [{"compression": "zstd", "batches": 2, "bytes": 1500, "records": 10},
                       {"compression": "gzip", "batches": 2, "bytes": 500, "records": 10}]}  # fmt: skip
    page = tmp_path / "report.html"
    page.write_text(report.render(data, title="two partitions"))
    _looks_rendered(page.as_uri(), "Codec mix", tmp_path)
    dom = _chromium("--dump-dom", page.as_uri()).stdout
    assert dom.count("<svg") == 3 and "orders-1" in dom  # both partitions are in the chart's legend


#: Measured in each page once it is laid out: tables wider than their container (the page's
#: column, or the box that scrolls them), and text where an option lost its "--" to a dash.
_MEASURE = r"""
function measure(doc, win) {
  const out = {tables: [], dashes: []};
  doc.querySelectorAll("table").forEach((t, i) => {
    let box = t.parentElement;
    for (let p = t.parentElement; p && p !== doc.body; p = p.parentElement) {
      const o = win.getComputedStyle(p).overflowX;
      if (o === "auto" || o === "scroll" || o === "hidden") { box = p; break; }
    }
    const over = Math.round(t.getBoundingClientRect().width - box.clientWidth);
    const head = Array.from(t.querySelectorAll("th")).slice(0, 3).map(h => h.textContent.trim()).join(" | ");
    if (over > 1) out.tables.push(`table ${i} (${head}) is ${over} px wider than its container`);
  });
  const walk = doc.createTreeWalker(doc.body, NodeFilter.SHOW_TEXT);
  for (let n = walk.nextNode(); n; n = walk.nextNode()) {
    const found = n.textContent.match(/[\u2013\u2014][a-z][a-z-]+/g);
    if (found) out.dashes.push(...found);
  }
  return out;
}
"""


def _measure_pages(root: Path, pages: list[str], width: int = 1280) -> dict:
    """Each page (paths under root) loaded in turn in a frame `width` px wide, in one
    headless Chromium, over a loopback HTTP server (same origin: the frame's DOM is the
    probe's to read); what _MEASURE finds in each."""
    import functools
    import html
    import json
    import re
    import threading
    from http.server import SimpleHTTPRequestHandler, ThreadingHTTPServer

    class Quiet(SimpleHTTPRequestHandler):
        def log_message(self, *args) -> None:
            pass

    probe = root / "__probe__.html"
    probe.write_text(f"""<!DOCTYPE html><html><body style="margin:0">
<iframe id="f" style="width:{width}px;height:1000px;border:0"></iframe><pre id="out"></pre>
<script>{_MEASURE}
const pages = {json.dumps(pages)}; const results = {{}}; let k = 0;
const f = document.getElementById("f");
f.onload = () => {{
  try {{ results[pages[k]] = measure(f.contentDocument, f.contentWindow); }}
  catch (e) {{ results[pages[k]] = {{error: String(e)}}; }}
  k++;
  if (k < pages.length) f.src = "/" + pages[k];
  else document.getElementById("out").textContent = JSON.stringify(results);
}};
f.src = "/" + pages[0];
</script></body></html>""")
    server = ThreadingHTTPServer(("127.0.0.1", 0), functools.partial(Quiet, directory=str(root)))
    threading.Thread(target=server.serve_forever, daemon=True).start()
    try:
        res = _chromium("--disable-background-networking", "--disable-component-update", "--no-first-run",
                        f"--window-size={width + 20},1100", "--virtual-time-budget=600000", "--dump-dom",
                        f"http://127.0.0.1:{server.server_address[1]}/__probe__.html")  # fmt: skip
    finally:
        server.shutdown()
        probe.unlink()
    found = re.search(r'<pre id="out">(.*?)</pre>', res.stdout, re.S)
    assert found and found.group(1), f"the probe did not finish: {res.stderr[-2000:]}"
    return json.loads(html.unescape(found.group(1)))


def _report_page() -> str:
    """The stats report of a realistic log: a dozen partitions of long topic names,
    transactions, every codec, timestamps to the millisecond."""
    from kafkacodec.pipeline import report
    from kafkacodec.units import utc_ms

    rows = [{"topic": f"payments.settlement.eu-west-1.v{p % 3}", "partition": p, "first_offset": 1_000_000 * p,
             "last_offset": 1_000_000 * p + 4_064, "records": 10_292, "control_records": 160, "batches": 2_571,
             "bytes": 734_003_200, "codecs": ["gzip", "lz4", "none", "snappy", "zstd"], "magics": [0, 1, 2],
             "producers": 17, "committed": 120, "aborted": 40, "min_timestamp": utc_ms(1_700_000_000_123),
             "max_timestamp": utc_ms(1_700_086_400_999)} for p in range(12)]  # fmt: skip
    data = {"stats": rows, "fetched": None, "batch_sizes": {8: 3, 9: 10, 12: 1},
            "timeline": {"start_ms": 1_700_000_000_000, "bucket_ms": 1000,
                         "series": {f"t-{p}": [1, 2, 3, 0] for p in range(12)}},
            "codecs": [{"compression": "zstd", "batches": 2, "bytes": 1500, "records": 10}]}  # fmt: skip
    return report.render(data, title="twelve partitions")


def test_no_page_cuts_a_table_or_turns_an_option_into_a_dash(site):
    """Every page of the site, and the stats report, at 1280 px: no table wider than its
    container, no "--" made a dash (issue 55). A page made to fail shows the probe sees."""
    (site / "__bad__.html").write_text(
        '<html><head><meta charset="utf-8"></head><body><div style="width:600px"><table><tr><th>a</th><td style="white-space:nowrap">'
        + "x" * 400 + "</td></tr></table><p>\u2013max-bytes</p></div></body></html>")  # fmt: skip
    (site / "__report__.html").write_text(_report_page())
    pages = sorted(str(p.relative_to(site)) for p in site.rglob("*.html")
                   if p.name not in ("genindex.html", "search.html", "py-modindex.html"))  # fmt: skip
    found = _measure_pages(site, pages)
    assert set(found) == set(pages), "the probe did not load every page"
    bad = found.pop("__bad__.html")
    assert bad["tables"] and bad["dashes"] == ["\u2013max-bytes"], f"the probe misses what it is for: {bad}"
    wrong = {page: r for page, r in found.items() if r.get("tables") or r.get("dashes") or r.get("error")}
    assert not wrong, "\n".join(f"{page}: {r}" for page, r in sorted(wrong.items()))


def test_the_footer_names_whose_copyright_it_is(site):
    """Furo's footer printed "Copyright ©" and nothing after it (issue 55)."""
    import re

    footer = re.search(r"Copyright &#169;([^<]*)", (site / "index.html").read_text())
    assert footer and re.fullmatch(r" \d{4}, \w.+", footer.group(1).strip() and " " + footer.group(1).strip()), footer

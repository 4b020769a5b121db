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
    "index.html": "Where to start, by task",
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

"""The speed page's charts are the benchmarks' figures: each SVG names the sha256 of the
JSON it was drawn from (bench.charts), which must be the committed JSON's, and the page
shows every chart. Drawing them again works from the JSON alone."""

from __future__ import annotations

from pathlib import Path

from bench import charts

ROOT = Path(__file__).resolve().parents[2]


def test_the_committed_charts_are_drawn_from_the_committed_results():
    for name, (results, _function) in charts.CHARTS.items():
        svg = (charts.OUT / f"{name}.svg").read_text()
        assert f"sha256 {charts.digest(results)}" in svg, (
            f"docs/speed/{name}.svg is stale: run `python -m bench.charts` (make bench does)"
        )


def test_the_speed_page_shows_every_chart():
    page = (ROOT / "docs" / "speed.md").read_text()
    for name in charts.CHARTS:
        assert f"(speed/{name}.svg)" in page


def test_the_charts_draw_from_the_results(tmp_path):
    written = charts.draw(tmp_path)
    assert sorted(p.name for p in written) == sorted(f"{n}.svg" for n in charts.CHARTS)
    for p in written:
        text = p.read_text()
        assert text.lstrip().startswith("<?xml") and "<svg" in text
        assert "drawn by bench.charts from bench/results/" in text

"""The documentation site's reference comes from the code, and the code describes itself:
every command and option of the command line has a description (its reference page is
generated from them), every public name of the modules the API reference renders has a
docstring, and the site builds with every warning an error (a broken link, a reference to
nothing, a page left out of the navigation)."""

from __future__ import annotations

import importlib
import inspect
import re
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from kafkacodec.cli import parser
from kafkacodec.cli.reference import commands, markdown, undescribed

ROOT = Path(__file__).resolve().parents[2]
API_PAGE = ROOT / "docs" / "reference" / "api.md"


def test_every_command_and_option_is_described():
    assert undescribed(parser()) == []


def test_the_cli_reference_lists_every_command_option_and_default():
    p = parser()
    page = markdown(p)
    paths = [path for path, _sub, _help in commands(p)]
    assert {"dump", "verify", "records", "spark verify", "spark export"} <= set(paths)
    for path in paths:
        assert f"`kafkacodec {path}`" in page
    assert "`--max-problems MAX_PROBLEMS`" in page or "--max-problems" in page
    assert "| `--jobs" in page  # an option with its default, from the parser


def _api_modules() -> list[str]:
    return re.findall(r"^\.\. automodule:: ([\w.]+)", API_PAGE.read_text(), flags=re.M)


def _public(module) -> list[tuple[str, object]]:
    names = getattr(module, "__all__", None) or [n for n in vars(module) if not n.startswith("_")]
    return [(n, getattr(module, n)) for n in names]


def test_every_public_name_the_api_reference_renders_has_a_docstring():
    missing = []
    modules = _api_modules()
    assert len(modules) >= 8
    for name in modules:
        module = importlib.import_module(name)
        assert module.__doc__, name
        for attr, obj in _public(module):
            if not (inspect.isclass(obj) or inspect.isfunction(obj)):
                continue
            if not inspect.getdoc(obj):
                missing.append(f"{name}.{attr}")
            if inspect.isclass(obj):
                for m, member in vars(obj).items():
                    fn = member.fget if isinstance(member, property) else member
                    if m.startswith("_") or not (inspect.isfunction(fn) or isinstance(member, property)):
                        continue
                    if not inspect.getdoc(fn):
                        missing.append(f"{name}.{attr}.{m}")
    assert not missing, f"{len(missing)} public names without a description: {missing}"


@pytest.mark.slow
def test_the_site_builds_with_every_warning_an_error(tmp_path):
    """`make docs`'s build; and a page with a broken link fails it."""
    sphinx = shutil.which("sphinx-build", path=str(Path(sys.executable).parent))
    assert sphinx, "sphinx is in the dev extra"

    def build(src: Path) -> subprocess.CompletedProcess:
        return subprocess.run([sphinx, "-W", "--keep-going", "-q", "-b", "html", str(src), str(tmp_path / src.name)],
                              cwd=ROOT, capture_output=True, text=True, timeout=900)  # fmt: skip

    res = build(ROOT / "docs")
    assert res.returncode == 0, res.stderr[-5000:]
    site = tmp_path / "docs"
    assert (site / "reference" / "cli.html").is_file()
    assert (site / "reference" / "schemas" / "kafka_record_batch.html").is_file()
    assert "iter_batches" in (site / "reference" / "api.html").read_text()
    broken = ROOT / "docs-broken-link"  # beside docs/: conf.py finds the checkout from there
    shutil.copytree(ROOT / "docs", broken)
    try:
        with (broken / "changelog.md").open("a") as f:
            f.write("\nA [broken link](#no-such-anchor).\n")
        res = build(broken)
    finally:
        shutil.rmtree(broken)
    assert res.returncode != 0 and "no-such-anchor" in res.stderr


def test_every_spark_option_the_parsers_read_is_in_the_table_and_described():
    """The options reference is written from OPTIONS, and KNOWN (what the parsers accept)
    from it: an option read anywhere in the pipeline's code by name is one of the table's
    (or an earlier name of one), and every entry says what it takes and means."""
    from kafkacodec.pipeline import request

    for o in request.OPTIONS:
        assert o.names and o.values and o.meaning and o.origin in ("spark", "kafkacodec"), o
    read = set()
    for source in (ROOT / "pipeline").glob("*.py"):
        text = source.read_text()
        read |= set(re.findall(r'(?:flag|_positive|_optional)\(options, "([\w.]+)"', text))
        read |= set(re.findall(r'options(?:\.get\(|\[)"([\w.]+)"', text))
        read |= set(re.findall(r'"([\w.]+)" in options\b', text))
    read -= {"meter"}  # the jobs' own keyword (a FetchMeter object), not a data source option
    assert read and read <= request.KNOWN, read - request.KNOWN
    page = request.options_reference()
    for o in request.OPTIONS:
        for name in o.names:
            assert f"`{name}`" in page


def test_the_command_lines_summary_names_only_options_its_commands_take():
    """docs/cli.md opens with a summary of every command (written by hand, to be read at a
    glance): each option it shows is one the command's parser takes, so a renamed or
    removed option fails here rather than in a user's terminal."""
    p = parser()
    by_path = {path: sub for path, sub, _help in commands(p)}
    text = (ROOT / "docs" / "cli.md").read_text().split("\n\n", 2)[1]
    entries = re.split(r"\n    (?=kafkacodec )", "\n" + text)[1:]
    assert len(entries) >= 15
    wrong = []
    for entry in entries:
        words = entry.split("#")[0].split()
        if words[1].startswith("--"):  # kafkacodec --version
            options = {o for a in p._actions for o in a.option_strings}
            shown = {words[1]}
        else:
            path = words[1] if f"{words[1]} {words[2]}" not in by_path else f"{words[1]} {words[2]}"
            sub = by_path[path]
            subs = {q: s for q, s, _h in commands(sub, f"{path} ")} or {path: sub}
            options = {o for s in subs.values() for a in s._actions for o in a.option_strings}
            shown = set(re.findall(r"(?<![\w-])--[a-z][\w-]*", " ".join(line.split("#")[0] for line in entry.splitlines())))
        if shown - options:
            wrong.append(f"{' '.join(words[:2])}: {sorted(shown - options)}")
    assert not wrong, wrong


def test_the_languages_offered_are_the_languages_built():
    """README.md and the site's index offer a language only where docs/languages.md's table
    says it is built and checked (a row with "no claim" is not offered, except as "no X")."""
    import re

    from conftest import ROOT

    rows = [line.split("|")[1:-1] for line in (ROOT / "docs" / "languages.md").read_text().splitlines()
            if line.startswith("| ") and not line.startswith("| language")]  # fmt: skip
    unclaimed = {name.strip() for cells in rows if "no claim" in cells[-1]
                 for name in cells[0].split(",")}  # fmt: skip
    assert "Rust" not in unclaimed  # kafkacodec's own Rust target (generator/rust.py)
    readme = next(line for line in (ROOT / "README.md").read_text().splitlines() if line.startswith("| languages |"))
    index = next(line for line in (ROOT / "docs" / "index.md").read_text().splitlines() if "(languages.md)" in line)
    for text in (readme, index):
        for name in unclaimed:
            offered = [m for m in re.finditer(rf"\b{re.escape(name)}\b", text)
                       if not text[: m.start()].rstrip().endswith("no")]  # fmt: skip
            assert not offered, (name, text)


def test_the_format_reference_is_ordered_by_what_readers_look_for():
    """The record batch first, its indexes next, then each internal topic's payloads by
    topic (issue 55: 40 internal-topic pages came before the record batch, by name)."""
    index = (ROOT / "generated" / "reference" / "README.md").read_text()
    listed = re.findall(r"\]\(([a-z0-9_]+)\.md\)", index)
    pages = {p.stem for p in (ROOT / "generated" / "reference").glob("*.md")} - {"README"}
    assert sorted(listed) == sorted(pages), "a schema's page is listed twice, or not at all"
    assert listed[0] == "kafka_record_batch"
    headings = re.findall(r"^## (.+)$", index, re.M)
    assert headings[:3] == ["Records and log segments", "Index files", "__consumer_offsets"], headings
    sections = dict(zip(headings, re.split(r"^## .+$", index, flags=re.M)[1:]))
    assert "(kafka_offset_index.md)" in sections["Index files"]
    assert "(offset_commit_value.md)" in sections["__consumer_offsets"]
    assert "(transaction_log_value.md)" in sections["__transaction_state"]
    assert "(partition_record.md)" in sections["__cluster_metadata"]
    assert "(producer_snapshot.md)" in sections["State files"]
    assert len(re.findall(r"^- ", sections.get("Other payloads", ""), re.M)) <= 1


def test_option_names_in_the_cli_reference_survive_a_copy():
    """An option in a description is code (prose would turn "--" into a dash) and a pipe in
    a usage ("FILE|DIR") does not end the table's cell."""
    page = markdown(parser())
    for row in (line for line in page.splitlines() if line.startswith("| `")):
        cells = re.split(r"(?<!\\)\|", row.strip().strip("|"))
        assert len(cells) == 3, f"a pipe splits this row: {row}"
        prose = re.sub(r"`[^`]*`", "", cells[2])  # what is not in a code span
        for token in re.findall(r"(?<![\w-])--[a-z][a-z-]*", prose):
            raise AssertionError(f"{token} is prose in: {row}")

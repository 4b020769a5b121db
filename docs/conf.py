"""The documentation site (`make docs`: sphinx-build -W, every warning an error).

Sphinx, with MyST-Parser for the Markdown pages and autodoc for the Python API: the Python
ecosystem's long-kept generator (CPython's, PySpark's API reference), which reads the pages
as they were written for the README. Nothing of the reference is written by hand: when the
site is built, this file writes

- reference/cli.md, the command line, from its argparse definitions (kafkacodec.cli.reference);
- reference/spark-options.md, the Spark data sources' options, from the table their parsers
  read (kafkacodec.pipeline.request.OPTIONS);
- reference/schemas/, the schema reference pages the generator writes (generated/reference),
  with an index that lists them;

(both gitignored), and autodoc renders the API from the docstrings and type hints.
"""

from __future__ import annotations

import re
import sys
from pathlib import Path

HERE = Path(__file__).resolve().parent
ROOT = HERE.parent
sys.path.insert(0, str(ROOT))

project = "kafkacodec"
author = "the kafkacodec developers"
# the footer's line: "Copyright © 2026, the kafkacodec developers" (a copyright with no name
# read "Copyright ©" alone)
copyright = f"2026, {author}"
extensions = ["myst_parser", "sphinx.ext.autodoc"]
source_suffix = {".md": "markdown"}
exclude_patterns = ["_build", "conf.py"]
html_theme = "furo"
html_static_path = ["_static"]
html_css_files = ["kafkacodec.css"]
html_title = "kafkacodec"
# `x` in a docstring is code, as it reads in the source
default_role = "code"
myst_heading_anchors = 4
myst_enable_extensions = ["colon_fence"]
autodoc_member_order = "bysource"
autodoc_typehints = "signature"
autodoc_default_options = {"members": True, "show-inheritance": False}
# quotes and ellipses made typographic, never dashes: "--json" in prose stays what is typed
# (docutils' smartquotes would make it an en dash, and a copied option would not work)
smartquotes_action = "qe"
# the pages' fenced blocks of console output and shell sessions are not highlighted as code
highlight_language = "none"


def _generate() -> None:
    from kafkacodec.cli import parser
    from kafkacodec.cli.reference import markdown

    ref = HERE / "reference"
    ref.mkdir(exist_ok=True)
    _write(ref / "cli.md", markdown(parser()))
    from kafkacodec.pipeline.request import options_reference

    _write(ref / "spark-options.md", options_reference())
    schemas = ref / "schemas"
    pages = sorted(p for p in (ROOT / "generated" / "reference").glob("*.md") if p.name != "README.md")
    if schemas.exists():
        for old in schemas.glob("*.md"):
            if old.name != "index.md" and not (ROOT / "generated" / "reference" / old.name).exists():
                old.unlink()
    schemas.mkdir(exist_ok=True)
    for page in pages:
        _write(schemas / page.name, page.read_text())
    index = (ROOT / "generated" / "reference" / "README.md").read_text()
    # the sidebar in the index's order (by section: the record batch first, not alphabetical)
    listed = re.findall(r"\]\(([a-z0-9_]+)\.md\)", index)
    toc = "\n".join(listed + sorted({p.stem for p in pages} - set(listed)))
    _write(schemas / "index.md", f"{index}\n```{{toctree}}\n:hidden:\n\n{toc}\n```\n")


def _write(path: Path, text: str) -> None:
    """Write only what changed, so that Sphinx rebuilds only those pages."""
    if not path.exists() or path.read_text() != text:
        path.write_text(text)


_generate()

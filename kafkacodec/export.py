"""Compile kafkacodec's schemas with the official Kaitai Struct compiler (the npm package
kaitai-struct-compiler) for any of its target languages, with the small per-language
pieces the schemas need (`kafkacodec export-schemas`).

The compiler runs on Node. It is looked for in $KAFKACODEC_KSC_MODULES, in a checkout's
tests/ksc/node_modules, then in ~/.cache/kafkacodec/ksc; when none has it, it is installed
there with npm (once).
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
from pathlib import Path

from .runtime.errors import KafkacodecError

TARGETS = Path(__file__).resolve().parent / "targets"
KSC_PACKAGES = ["kaitai-struct-compiler@0.11.0", "js-yaml@4.1.0"]
#: Languages of kaitai-struct-compiler 0.11 (`ksc --help`).
LANGUAGES = (
    "cpp_stl", "csharp", "go", "html", "java", "javascript", "lua", "nim", "perl", "php",
    "python", "ruby", "rust",
)  # fmt: skip


class ExportError(KafkacodecError):
    """The official compiler could not be found, installed or run."""


def _schema_dir() -> Path:
    import kafkacodec.schemas

    return Path(kafkacodec.schemas.__path__[0])


def _cache() -> Path:
    base = os.environ.get("XDG_CACHE_HOME") or str(Path.home() / ".cache")
    return Path(base) / "kafkacodec" / "ksc"


def _candidates() -> list[Path]:
    out = []
    if os.environ.get("KAFKACODEC_KSC_MODULES"):
        out.append(Path(os.environ["KAFKACODEC_KSC_MODULES"]))
    out.append(Path(__file__).resolve().parents[1] / "tests" / "ksc" / "node_modules")
    out.append(_cache() / "node_modules")
    return out


def compiler_modules(install: bool = True) -> Path:
    """A node_modules folder holding kaitai-struct-compiler (installed when allowed)."""
    if shutil.which("node") is None:
        raise ExportError(
            "the official Kaitai compiler runs on Node.js: install node (20 or later)"
        )
    for path in _candidates():
        if (path / "kaitai-struct-compiler").is_dir() and (path / "js-yaml").is_dir():
            return path
    if not install:
        raise ExportError("kaitai-struct-compiler is not installed (set KAFKACODEC_KSC_MODULES)")
    if shutil.which("npm") is None:
        raise ExportError("npm is needed once, to install kaitai-struct-compiler")
    prefix = _cache()
    prefix.mkdir(parents=True, exist_ok=True)
    proc = subprocess.run(
        ["npm", "install", "--prefix", str(prefix), "--no-audit", "--no-fund", "--silent", *KSC_PACKAGES],
        capture_output=True, text=True, check=False,
    )  # fmt: skip
    if proc.returncode != 0:
        raise ExportError(f"npm could not install {' '.join(KSC_PACKAGES)}: {proc.stderr.strip()}")
    return prefix / "node_modules"


def compile_schemas(out: Path, languages, schema_dir: Path | None = None) -> list[dict]:
    """Compile every schema for each language into out/<language>/; one result per
    (schema, language): {schema, lang, ok, files | error}."""
    for lang in languages:
        if lang not in LANGUAGES:
            raise ExportError(f"unknown language {lang!r} (known: {', '.join(LANGUAGES)})")
    env = dict(os.environ, NODE_PATH=str(compiler_modules()))
    schema_dir = Path(schema_dir or _schema_dir())
    proc = subprocess.run(
        ["node", str(TARGETS / "compile.js"), str(schema_dir), str(out), *languages],
        capture_output=True, text=True, env=env, timeout=600, check=False,
    )  # fmt: skip
    results = [json.loads(line) for line in proc.stdout.splitlines() if line.startswith("{")]
    if not results:
        raise ExportError(f"the compiler did not run: {proc.stderr.strip()[-2000:]}")
    return results


def export(out: Path, languages) -> list[dict]:
    """compile_schemas, then copy each language's runtime pieces next to its output."""
    out = Path(out)
    results = compile_schemas(out, languages)
    for lang in languages:
        pieces = TARGETS / lang
        if pieces.is_dir():
            for piece in sorted(pieces.iterdir()):
                if piece.is_file():
                    shutil.copy(piece, out / lang / piece.name)
    return results

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
import re
import shutil
import subprocess
from pathlib import Path

from .runtime.errors import KafkacodecError, UsageError

TARGETS = Path(__file__).resolve().parent / "targets"
KSC_PACKAGES = ["kaitai-struct-compiler@0.11.0", "js-yaml@4.1.0"]
#: Languages of kaitai-struct-compiler 0.11 (`ksc --help`).
LANGUAGES = (
    "cpp_stl", "csharp", "go", "html", "java", "javascript", "lua", "nim", "perl", "php",
    "python", "ruby", "rust",
)  # fmt: skip


class ExportError(KafkacodecError):
    """The official compiler could not be found, installed or run."""


class UnknownLanguageError(ExportError, UsageError):
    """A language the official compiler has no target for (a usage error: exit 2)."""


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
            raise UnknownLanguageError(f"unknown language {lang!r} (known: {', '.join(LANGUAGES)})")
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


_READ = re.compile(r"(void [\w:]+::_read\(\) \{\n)(.*?)(\n\}\n)", re.S)


def fix_cpp_read(text: str) -> str:
    """The official compiler's C++/STL output (0.11, C++98 pointers) leaves the null flag
    (`n_x`) of conditional fields and the pointer of switch-typed fields (`m_x`)
    uninitialized until `_read` reaches them; when the data is corrupt and `_read` throws
    before that, `_clean_up` tests the garbage flag and deletes the garbage pointer (a
    crash, or worse, on bad input). Each `_read` here first sets every flag it assigns to
    null and every pointer it allocates to 0, which is what `_clean_up` expects of a field
    not read yet; nothing else changes."""

    def fix(m: re.Match) -> str:
        body = m.group(2)
        flags = dict.fromkeys(re.findall(r"\bn_(\w+) = (?:true|false);", body))
        pointers = dict.fromkeys(re.findall(r"\bm_(\w+) = new ", body))
        init = "".join(f"    n_{f} = true;\n" for f in flags) + "".join(
            f"    m_{p} = 0;\n" for p in pointers
        )
        return m.group(1) + init + body + m.group(3)

    return _READ.sub(fix, text)


_JAVA_PACKAGE = re.compile(r"[A-Za-z_]\w*(\.[A-Za-z_]\w*)*")


def java_package(text: str, package: str) -> str:
    """The compiler's Java output in a named package (`ksc --java-package`, which its
    JavaScript API does not take): the declaration after the generated-file comment. Code
    in a named package cannot import classes of the default one, so a Maven project needs
    it (the JVM reader of the Spark source, jvm/)."""
    if not _JAVA_PACKAGE.fullmatch(package):
        raise ExportError(f"not a Java package name: {package!r}")
    head, _, rest = text.partition("\n")
    if not head.startswith("//"):
        head, rest = "", text
    return f"{head}\npackage {package};\n{rest}" if head else f"package {package};\n{rest}"


def export(out: Path, languages, *, java_pkg: str | None = None) -> list[dict]:
    """compile_schemas, then copy each language's runtime pieces next to its output (and
    mend the C++ output's _read: fix_cpp_read; put the Java output in java_pkg, if given).

    Java's pieces include ZigzagVarint and UnsignedVarint, which replace the classes the
    compiler writes from the two primitive schemas: the same API and bounds, read in one
    loop (the compiler's object per byte with lazy Long instances took 42% of a batch's
    decode, bench/languages.py)."""
    out = Path(out)
    results = compile_schemas(out, languages)
    if "cpp_stl" in languages:
        for cpp in sorted((out / "cpp_stl").glob("*.cpp")):
            cpp.write_text(fix_cpp_read(cpp.read_text()))
    for lang in languages:
        pieces = TARGETS / lang
        if pieces.is_dir():
            for piece in sorted(pieces.iterdir()):
                if piece.is_file():  # Java's varints replace the compiler's (targets/java)
                    shutil.copy(piece, out / lang / piece.name)
    if java_pkg and "java" in languages:
        for java in sorted((out / "java").glob("*.java")):
            java.write_text(java_package(java.read_text(), java_pkg))
    return results

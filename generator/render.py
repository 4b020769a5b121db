"""Render the IR with Jinja2, format with the pinned ruff, write or compare generated/."""

from __future__ import annotations

import shutil
import subprocess
import sys
from pathlib import Path

import jinja2

from . import cheader, construct, programs, reference, strategies
from .errors import GenerateError
from .ir import ModuleIR, SchemaSet

_HERE = Path(__file__).resolve().parent
SCHEMA_DIR = Path(__import__("kafkacodec.schemas", fromlist=["x"]).__path__[0])
GENERATED_DIR = Path(__import__("kafkacodec.generated", fromlist=["x"]).__path__[0])
LINE_LENGTH = 100


BLANK = "~"  # a line holding only this is a blank line the templates want kept


def _blanks(text: str) -> str:
    """Mark the blank lines of a doc text so that the cleanup keeps them."""
    return "\n".join(line if line.strip() else BLANK for line in str(text).strip().split("\n"))


def _env() -> jinja2.Environment:
    env = jinja2.Environment(
        loader=jinja2.FileSystemLoader(str(_HERE / "templates")),
        undefined=jinja2.StrictUndefined,
        trim_blocks=True,
        lstrip_blocks=True,
        keep_trailing_newline=True,
        autoescape=False,
    )
    env.filters["blanks"] = _blanks
    env.filters["pystr"] = repr
    env.filters["pyrepr"] = repr
    return env


def _clean(text: str) -> str:
    """Drop whitespace-only lines (template noise); turn kept-blank markers into blanks."""
    lines = []
    for line in text.split("\n"):
        if not line.strip():
            continue
        lines.append("" if line.strip() == BLANK else line)
    return "\n".join(lines) + "\n"


def _ruff() -> list[str]:
    try:
        from ruff.__main__ import find_ruff_bin  # type: ignore[import-not-found]

        return [find_ruff_bin()]
    except Exception:  # noqa: BLE001 - any failure means: look on PATH
        found = shutil.which("ruff")
        if found:
            return [found]
    raise GenerateError(
        "the generator formats its output with ruff; install the dev extra: pip install -e '.[dev]'"
    )


def format_source(source: str, name: str) -> str:
    """Format Python source exactly as the pinned ruff does (byte-identical regeneration)."""
    cmd = _ruff() + [
        "format", "--isolated", f"--line-length={LINE_LENGTH}", "--target-version=py310",
        f"--stdin-filename={name}", "-",
    ]  # fmt: skip
    proc = subprocess.run(cmd, input=source, capture_output=True, text=True, check=False)
    if proc.returncode != 0:
        raise GenerateError(f"{name}: generated code does not parse:\n{proc.stderr.strip()}")
    return proc.stdout


def render_module(env: jinja2.Environment, mod: ModuleIR) -> str:
    progs = {}
    if programs.wanted(mod):
        progs = {t.class_name: programs.program(mod, t) for t in mod.types}
    return _clean(env.get_template("module.py.j2").render(mod=mod, programs=progs))


def render_all(schema_dir: Path = SCHEMA_DIR, *, raw: bool = False) -> dict[str, str]:
    """Every generated file (name -> text) for the schemas in schema_dir."""
    env = _env()
    modules = SchemaSet(Path(schema_dir)).modules()
    files = {}
    for mod in modules:
        text = render_module(env, mod)
        files[f"{mod.id}.py"] = text if raw else format_source(text, f"{mod.id}.py")
    init = _clean(env.get_template("init.py.j2").render(modules=modules))
    files["__init__.py"] = init if raw else format_source(init, "__init__.py")
    for mod in modules:
        name = f"construct/{mod.id}.py"
        text = _clean(env.get_template("construct.py.j2").render(mod=construct.plan(mod)))
        files[name] = text if raw else format_source(text, name)
    for mod in modules:
        name = f"strategies/{mod.id}.py"
        text = _clean(env.get_template("strategies.py.j2").render(mod=strategies.plan(mod)))
        files[name] = text if raw else format_source(text, name)
    for mod in modules:
        page = env.get_template("reference.md.j2").render(**reference.plan(mod))
        files[f"reference/{mod.id}.md"] = _clean(page).rstrip("\n") + "\n"
    files["reference/README.md"] = _clean(
        env.get_template("reference_index.md.j2").render(sections=reference.index_plan(modules))
    )
    files["kafka_layout.h"] = _clean(
        env.get_template("layout.h.j2").render(**cheader.plan(modules))
    )
    for package in ("construct", "strategies"):
        name = f"{package}/__init__.py"
        init = _clean(env.get_template(f"{package}_init.py.j2").render(modules=modules))
        files[name] = init if raw else format_source(init, name)
    return files


OUTPUT_GLOBS = ("*.py", "*.h", "construct/*.py", "strategies/*.py", "reference/*.md")
#: The packages kafkacodec's own targets write in a checkout, beside generated/: the Go
#: package (go/go.mod) and the Rust crate's generated modules (rust/Cargo.toml): (folder,
#: the project file that says it is a checkout's, file pattern, mark of a generated file,
#: the render function's module and name).
TARGETS = {
    "go": (GENERATED_DIR.resolve().parent / "go" / "kafkacodec", "../go.mod", "*.go",
           "// Code generated by kafkacodec's generator", "golang", "render_go"),
    "rust": (GENERATED_DIR.resolve().parent / "rust" / "src" / "gen", "../../Cargo.toml", "*.rs",
             "// Code generated by kafkacodec's generator", "rust", "render_rust"),
}  # fmt: skip


def _targets_wanted(schema_dir: Path, out_dir: Path) -> bool:
    """The other languages' packages are written with the shipped schemas' generated/, in a checkout."""
    return Path(out_dir).resolve() == GENERATED_DIR.resolve() and Path(schema_dir).resolve() == SCHEMA_DIR.resolve()


def _target_changes(name: str, schema_dir: Path) -> dict[str, str | None]:
    """A target's files that differ from what the schemas give: {name: new text, or None for
    a generated file no schema writes any more}; {} outside a checkout holding it."""
    import importlib

    folder, project, pattern, mark, module, render = TARGETS[name]
    if not (folder / project).resolve().is_file():
        return {}
    old = {p.name: p.read_text(encoding="utf-8") for p in sorted(folder.glob(pattern))}
    old = {n: text for n, text in old.items() if text.startswith(mark)}
    new = getattr(importlib.import_module(f"{__package__}.{module}"), render)(SchemaSet(Path(schema_dir)))
    return {n: new.get(n) for n in sorted(set(new) | set(old)) if new.get(n) != old.get(n)}


def _target_path(name: str, file: str) -> str:
    return str(Path("..") / TARGETS[name][0].relative_to(GENERATED_DIR.resolve().parent) / file)


def _existing(out_dir: Path) -> dict[str, str]:
    paths = sorted(p for g in OUTPUT_GLOBS for p in out_dir.glob(g))
    return {p.relative_to(out_dir).as_posix(): p.read_text(encoding="utf-8") for p in paths}


def generate(schema_dir: Path = SCHEMA_DIR, out_dir: Path = GENERATED_DIR) -> list[str]:
    """Write generated/; return the names of files that changed (or were removed)."""
    out_dir = Path(out_dir)
    out_dir.mkdir(parents=True, exist_ok=True)
    files = render_all(schema_dir)
    old = _existing(out_dir)
    changed = []
    for name, text in files.items():
        if old.get(name) != text:
            (out_dir / name).parent.mkdir(parents=True, exist_ok=True)
            (out_dir / name).write_text(text, encoding="utf-8")
            changed.append(name)
    for name in old:
        if name not in files:
            (out_dir / name).unlink()
            changed.append(name)
    if _targets_wanted(schema_dir, out_dir):
        for target in TARGETS:
            folder = TARGETS[target][0]
            for name, text in _target_changes(target, schema_dir).items():
                if text is None:
                    (folder / name).unlink()
                else:
                    folder.mkdir(parents=True, exist_ok=True)
                    (folder / name).write_text(text, encoding="utf-8")
                changed.append(_target_path(target, name))
    return changed


def check(schema_dir: Path = SCHEMA_DIR, out_dir: Path = GENERATED_DIR) -> list[str]:
    """Names of generated files that differ from what the schemas and templates give."""
    files = render_all(schema_dir)
    old = _existing(Path(out_dir))
    stale = [name for name, text in files.items() if old.get(name) != text]
    stale += [name for name in old if name not in files]
    if _targets_wanted(schema_dir, out_dir):
        stale += [_target_path(t, n) for t in TARGETS for n in _target_changes(t, schema_dir)]
    return sorted(stale)


def main(check_only: bool = False, schemas: Path | None = None, out: Path | None = None) -> int:
    """`kafkacodec generate` (its arguments are kafkacodec.cli.generate's): write generated/,
    or with check_only exit 1 when it is stale."""
    schemas = SCHEMA_DIR if schemas is None else schemas
    out = GENERATED_DIR if out is None else out
    if check_only:
        stale = check(schemas, out)
        if stale:
            print(
                f"generated/ is stale: {', '.join(stale)}; run `kafkacodec generate`",
                file=sys.stderr,
            )
            return 1
        print(f"generated/ is fresh ({len(_existing(Path(out)))} files)")
        return 0
    changed = generate(schemas, out)
    print(f"wrote {len(changed)} file(s)" + (f": {', '.join(changed)}" if changed else ""))
    return 0

"""`kafkacodec export-schemas`: the schemas compiled with the official Kaitai Struct compiler
for other languages (kafkacodec.export)."""

from __future__ import annotations

import argparse
import sys

from ..console import out
from .common import local_path

HELP = "compile the schemas with the official Kaitai Struct compiler for other languages"
EXAMPLE = "kafkacodec export-schemas --lang java --lang javascript --out kafka-parsers"


def define(p: argparse.ArgumentParser) -> None:
    p.add_argument(
        "--lang",
        action="append",
        required=True,
        metavar="LANG",
        help="a target of kaitai-struct-compiler (java, javascript, go, cpp_stl, python, ...); repeatable",
    )
    p.add_argument(
        "--out", type=local_path, required=True, help="the folder to write (one subfolder per language)"
    )
    p.add_argument(
        "--java-package",
        metavar="NAME",
        help="the Java output's package (as ksc --java-package; default: none)",
    )


def _writable_out(out) -> None:
    """OUT checked before the compiler runs: a directory this user may write in (made when
    missing), else one line naming OUT and the cause."""
    import os

    from ..runtime.errors import RefusedError, UnreadableError

    if out.exists() and not out.is_dir():
        raise RefusedError(out, "exists and is not a directory")
    try:
        out.mkdir(parents=True, exist_ok=True)
    except OSError as err:
        raise UnreadableError(out, f"cannot create: {err.strerror}") from None
    if not os.access(out, os.W_OK | os.X_OK):
        raise UnreadableError(out, "cannot write there: Permission denied")


def run(args: argparse.Namespace) -> int:
    from ..export import export

    _writable_out(args.out)
    results = export(args.out, args.lang, java_pkg=args.java_package)
    failed = [r for r in results if not r["ok"]]
    for lang in args.lang:
        done = [r for r in results if r["lang"] == lang and r["ok"]]
        files = sorted({f for r in done for f in r["files"]})
        out(f"{lang}: {len(done)} schemas, {len(files)} files in {args.out / lang}")
    for r in failed:
        print(
            f"kafkacodec export-schemas: {r['schema']} ({r['lang']}): {r['error']}", file=sys.stderr
        )
    return 1 if failed else 0

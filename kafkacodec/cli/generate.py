"""`kafkacodec generate`: generated/ from schemas/ (kafkacodec.generator, the `generator`
extra). main() runs it before anything imports generated code, so that it works when
generated/ is stale or broken."""

from __future__ import annotations

import argparse
import sys

from .common import local_path

HELP = "regenerate generated/ from schemas/ (--check: fail when stale)"
EXAMPLE = "kafkacodec generate --check"


def define(p: argparse.ArgumentParser) -> None:
    p.add_argument("--check", action="store_true",
                   help="write nothing: exit 1 when generated/ is not what the schemas and "
                   "templates make (CI runs it)")  # fmt: skip
    p.add_argument("--schemas", type=local_path, metavar="DIR",
                   help="the .ksy schemas (default: the project's schemas/)")  # fmt: skip
    p.add_argument("--out", type=local_path, metavar="DIR",
                   help="where the code goes (default: the project's generated/)")  # fmt: skip


def run_early(argv: list[str]) -> int:
    """The command on its own arguments, parsed by the same definition as every command's."""
    from . import parser

    args = parser().parse_args(["generate", *argv])
    return run(args)


def run(args: argparse.Namespace) -> int:
    try:
        from kafkacodec.generator.render import main
    except ImportError as err:
        print(f"kafkacodec generate: the generator needs its extra: pip install "
              f"'kafkacodec[generator]' ({err})", file=sys.stderr)  # fmt: skip
        return 2
    return main(check_only=args.check, schemas=args.schemas, out=args.out)

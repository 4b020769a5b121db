"""`kafkacodec generate`: generated/ from schemas/ (kafkacodec.generator, the `generator`
extra). main() runs it before anything imports generated code, so that it works when
generated/ is stale or broken."""

from __future__ import annotations

import argparse
import sys

HELP = "regenerate generated/ from schemas/ (--check: fail when stale)"
EXAMPLE = "kafkacodec generate --check"


def define(p: argparse.ArgumentParser) -> None:
    p.add_argument("--check", action="store_true")


def run_early(argv: list[str]) -> int:
    """The command on its own arguments (they are the generator's)."""
    try:
        from kafkacodec.generator.render import main
    except ImportError as err:
        print(f"kafkacodec generate: the generator needs its extra: pip install "
              f"'kafkacodec[generator]' ({err})", file=sys.stderr)  # fmt: skip
        return 2
    return main(argv)


def run(args: argparse.Namespace) -> int:
    return run_early(["--check"] if args.check else [])

"""The `kafkacodec` command line."""

from __future__ import annotations

import sys


def main(argv: list[str] | None = None) -> int:
    argv = list(sys.argv[1:] if argv is None else argv)
    if argv and argv[0] == "generate":
        from kafkacodec.generator.render import main as generate_main

        return generate_main(argv[1:])
    print("usage: kafkacodec generate [--check]", file=sys.stderr)
    return 2

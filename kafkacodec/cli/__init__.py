"""The `kafkacodec` command line: dump, verify, lookup, records, recover, groups, metadata,
replicas, remote-log, rewrite, sample, generate, specs, export-schemas, spark.

One module per command, each with HELP, EXAMPLE, define(parser) and run(args) returning
the exit code; COMMANDS lists them. A command imports what it reads with when it runs, so
that `kafkacodec --help` and `kafkacodec generate` import no generated code. The Spark jobs'
command is kafkacodec.pipeline.cli (its parser needs no pyspark; running it does).

Bad data or a wrong path prints one line on stderr (file, byte position, problem) and
exits with 1; a usage error exits with 2. Never a traceback for bad input.
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

from ..console import run_command
from ..pipeline import cli as spark
from . import (
    corpus,
    dump,
    export_schemas,
    generate,
    groups,
    lookup,
    metadata,
    records,
    recover,
    remote_log,
    replicas,
    rewrite,
    sample,
    specs,
    verify,
)  # fmt: skip

COMMANDS = {
    "dump": dump, "verify": verify, "lookup": lookup, "records": records, "recover": recover,
    "groups": groups, "metadata": metadata, "replicas": replicas, "remote-log": remote_log, "rewrite": rewrite, "sample": sample, "corpus": corpus, "generate": generate, "specs": specs,
    "export-schemas": export_schemas,
    "spark": spark,
}  # fmt: skip

__all__ = ["main", "parser", "COMMANDS"]


def _version() -> str:
    """The installed distribution's version (importlib.metadata: no generated code read)."""
    from importlib.metadata import PackageNotFoundError, version

    try:
        mine = version("kafkacodec")
    except PackageNotFoundError:  # run from a checkout that is not installed
        mine = "(not installed)"
    return f"{mine} (internal-topic codecs from Kafka's specs labelled {_specs_label()})"


def _specs_label() -> str:
    """The label of the specs the shipped codecs come from, as the schemas name it (one
    file's doc line: `specs import` writes it into each)."""
    import re

    from ..schemas import __path__ as schema_path

    try:
        text = (Path(schema_path[0]) / "internal" / "consumer_offsets_key.ksy").read_text("utf-8")
    except OSError:
        return "unknown"
    m = re.search(r"specs labelled (\S+)\)", text)
    return m[1] if m else "unknown"


def parser() -> argparse.ArgumentParser:
    """The whole command line's parser: every command's arguments as its define() sets them."""
    p = argparse.ArgumentParser(
        prog="kafkacodec", description="Read, search, verify and repair Kafka data on disk.",
        epilog="exit codes: 0 done, 1 problems found (or what was asked for is not there), "
        "2 could not check (a path, a file that cannot be read, a usage error), 130 interrupted. "
        "`kafkacodec COMMAND --help` for a command's arguments, with an example",
    )  # fmt: skip
    p.add_argument("--version", action="version", version=f"%(prog)s {_version()}")
    sub = p.add_subparsers(dest="command", required=True)
    for name, command in COMMANDS.items():
        command.define(sub.add_parser(name, help=command.HELP, description=command.HELP,
                                      epilog=f"example:\n  {command.EXAMPLE}",
                                      formatter_class=argparse.RawDescriptionHelpFormatter))  # fmt: skip
    p.commands = sub.choices  # each command's parser, for its own usage line on a wrong argument
    return p


def main(argv: list[str] | None = None) -> int:
    """Run one command (argv without the program name); returns its exit code."""
    argv = list(sys.argv[1:] if argv is None else argv)
    if argv and argv[0] == "generate":  # before anything imports generated code
        return generate.run_early(argv[1:])
    p = parser()
    args, extra = p.parse_known_args(argv)
    if extra:  # an argument the command does not take: the command's usage, not the top one's
        command = p.commands[args.command]
        jobs = getattr(command, "jobs", {})  # a command of commands (spark): the job's parser
        command = jobs.get(getattr(args, "job", None), command)
        command.error(f"unrecognized arguments: {' '.join(extra)}")
    try:
        return run_command(args.command, lambda: COMMANDS[args.command].run(args))
    finally:
        if getattr(args, "verbose", False):
            from .common import fetched_line

            line = fetched_line()
            if line:
                print(f"kafkacodec {args.command}: {line}", file=sys.stderr)


if __name__ == "__main__":
    sys.exit(main())

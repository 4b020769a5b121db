"""The command line's reference, read from its argparse definitions (kafkacodec.cli.parser):
every command and subcommand, each option with its arguments, default and description. The
documentation site's "Command line" reference page is this module's markdown() at build time
(docs/conf.py); undescribed() names what has no description (a test fails on any)."""

from __future__ import annotations

import argparse
import re
from collections.abc import Iterator

__all__ = ["commands", "markdown", "undescribed"]


def commands(p: argparse.ArgumentParser, prefix: str = "") -> Iterator[tuple[str, argparse.ArgumentParser, str]]:
    """(command path, its parser, its one-line help) of every command under p, depth first,
    in the order they are defined ("dump", "spark verify", ...)."""
    for action in p._actions:
        if isinstance(action, argparse._SubParsersAction):
            helps = {a.dest: a.help or "" for a in action._choices_actions}
            for name, sub in action.choices.items():
                path = f"{prefix}{name}"
                yield path, sub, helps.get(name, "")
                yield from commands(sub, f"{path} ")


def _options(p: argparse.ArgumentParser) -> Iterator[argparse.Action]:
    for a in p._actions:
        if isinstance(a, (argparse._HelpAction, argparse._SubParsersAction, argparse._VersionAction)):
            continue
        yield a


def _usage(a: argparse.Action) -> str:
    if not a.option_strings:
        name = a.metavar or a.dest
        return f"{name}..." if a.nargs in ("+", "*") else str(name)
    flags = ", ".join(a.option_strings)
    if a.nargs == 0:
        return flags
    metavar = a.metavar or (a.dest.upper() if not a.choices else "{" + ",".join(map(str, a.choices)) + "}")
    if isinstance(metavar, tuple):
        metavar = " ".join(metavar)
    return f"{flags} {metavar}" + (" ..." if a.nargs in ("+", "*") else "")


def _default(a: argparse.Action) -> str:
    if a.nargs == 0 or a.default in (None, argparse.SUPPRESS) or not a.option_strings:
        return ""
    if isinstance(a.default, (list, tuple)) and not a.default:
        return ""
    return f"`{a.default}`"


def _help(text: str | None, p: argparse.ArgumentParser, a: argparse.Action | None = None) -> str:
    """A help text as argparse prints it (%(default)s and the like filled in), on one line."""
    if not text:
        return ""
    if a is not None and "%" in text:
        params = {**vars(a), "prog": p.prog}
        params = {k: (v.__name__ if hasattr(v, "__name__") else v) for k, v in params.items()}
        try:
            text = text % params
        except (KeyError, TypeError, ValueError):
            pass
    return _cell(" ".join(text.split()))


#: An option named in a description (not already inside a code span).
_OPTION = re.compile(r"(?<![\w`-])(--[a-z][a-z0-9-]*)")


def _cell(text: str) -> str:
    """Text for a table cell: each option it names a code span (what a reader copies must
    be what is typed: prose would turn "--" into a dash), and its pipes escaped (a pipe,
    inside a code span too, ends a cell of a Markdown table)."""
    spans = text.split("`")  # the odd pieces are code spans already
    spans[::2] = [_OPTION.sub(r"`\1`", piece) for piece in spans[::2]]
    return "`".join(spans).replace("|", "\\|")


def markdown(p: argparse.ArgumentParser) -> str:
    """The reference page: the program's description, then each command: its description,
    its usage, a table of its arguments and options, and its example."""
    out = [
        "# Command line reference",
        "",
        "Generated from the command line's own definitions (`kafkacodec.cli.parser`) when the",
        "site is built: every command, option and default is the code's. "
        f"{_help(p.description, p)} {_help(p.epilog, p)}",
        "",
    ]
    for path, sub, summary in commands(p):
        level = "#" * (2 + path.count(" "))
        out += [f"{level} `kafkacodec {path}`", "", _help(sub.description or summary, sub), ""]
        usage = " ".join(sub.format_usage().split())
        out += ["```text", usage.removeprefix("usage: "), "```", ""]
        rows = [(_cell(f"`{_usage(a)}`"), _cell(_default(a)), _help(a.help, sub, a)) for a in _options(sub)]
        if rows:
            out += ["| argument | default | description |", "|---|---|---|"]
            out += [f"| {u} | {d} | {h} |" for u, d, h in rows]
            out.append("")
        if sub.epilog:
            out += ["```text", sub.epilog.strip(), "```", ""]
    return "\n".join(out) + "\n"


def undescribed(p: argparse.ArgumentParser) -> list[str]:
    """The commands and options with no description."""
    missing = []
    for path, sub, summary in commands(p):
        if not (sub.description or summary):
            missing.append(f"kafkacodec {path}")
        for a in _options(sub):
            if not a.help or a.help == argparse.SUPPRESS:
                missing.append(f"kafkacodec {path} {_usage(a)}")
    return missing

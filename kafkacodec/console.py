"""How a command talks to the terminal: its lines, text made safe to print, its errors as
one line and an exit code, and a progress bar. Used by the command line (kafkacodec.cli)
and by the Spark jobs' command (kafkacodec.pipeline.cli).

Exit codes, the same for every command (docs/cli.md): DONE (0) what was asked
was done and nothing was wrong; PROBLEMS (1) problems found in the data (damage, a
mismatch, records that do not decode, damage skipped), or what was asked for is not in it
(an offset out of range); UNCHECKED (2) could not check: a path that is not what the
command reads or holds nothing to read, a file that cannot be read, a refused operation (a
lock a broker holds, a destination that exists), a usage error.

A reader that stops reading (`kafkacodec ... | head`) changes nothing of the answer: the
output goes to /dev/null from then on, the command still returns the status of what it
checked, and a command that only prints (dump, records) stops early (output_closed()).

The progress bar is a line on stderr for long scans (dump, verify, recover, records, sample),
shown only on a terminal: silent when stderr is piped or redirected, or with --quiet. It
redraws at most ten times a second, so a hot loop may call it once per batch.
"""

from __future__ import annotations

import logging
import os
import shutil
import sys
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager

from .runtime.errors import (
    KafkacodecError,
    NotAPartitionError,
    NotASegmentError,
    NotKnownError,
    RefusedError,
    SchemaError,
    StorageError,
    UnreadableError,
    UsageError,
    WorkerError,
)

__all__ = ["out", "out_lines", "safe", "counted", "columns", "control_note", "run_command", "output_closed", "notes_on_stderr", "Progress", "file_label", "DONE", "CLEAN",
           "PROBLEMS", "UNCHECKED", "INTERRUPTED", "error_status"]  # fmt: skip

#: The exit codes of every command (see the module's docstring). CLEAN is DONE.
DONE = CLEAN = 0
PROBLEMS = 1
UNCHECKED = 2
#: Stopped by Ctrl-C (SIGINT): 128 + 2, what a shell reports for a program SIGINT ended.
INTERRUPTED = 130

_closed = False


def out(line: str) -> None:
    """One line of a command's output, on stdout (nothing once the reader has gone)."""
    out_lines(line + "\n")


def out_lines(text: str) -> None:
    """Lines of a command's output, each already ending with a newline (nothing once the
    reader has gone)."""
    if _closed:
        return
    try:
        sys.stdout.write(text)
    except BrokenPipeError:
        _close_stdout()


def output_closed() -> bool:
    """Whether stdout's reader has stopped reading (`| head`): a command that only prints
    may stop."""
    return _closed


def _close_stdout() -> None:
    """The reader went away: what is still to be written goes to /dev/null (Python would
    otherwise complain when it flushes stdout at exit, and change the exit code)."""
    global _closed
    _closed = True
    devnull = os.open(os.devnull, os.O_WRONLY)
    os.dup2(devnull, sys.stdout.fileno())
    os.close(devnull)


def _flush() -> None:
    if not _closed:
        try:
            sys.stdout.flush()
        except BrokenPipeError:
            _close_stdout()


def error_status(err: BaseException) -> int:
    """The exit code of an error that stopped a command: UNCHECKED when nothing could be
    checked (not what the command reads, not readable, refused), PROBLEMS when the data
    itself is wrong."""
    could_not = (NotAPartitionError, NotASegmentError, StorageError, RefusedError, OSError, UnreadableError,
                 NotKnownError,  # an answer only a file not at hand holds
                 SchemaError,  # a schema or message spec that cannot be read
                 UsageError,
                 WorkerError)  # a unit of work a worker process did not finish  # fmt: skip
    return UNCHECKED if isinstance(err, could_not) else PROBLEMS


def counted(n: int, noun: str, plural: str | None = None) -> str:
    """n and its noun, singular for 1: "1 partition", "3 partitions", "1 bad region"."""
    return f"{n} {noun if n == 1 else plural or noun + 's'}"


def columns(titles, rows) -> list[str]:
    """A table as Kafka's tools pad theirs (kafka-consumer-groups --describe): each column
    as wide as its longest value or title, a space between, no trailing blanks; the title
    line first."""
    widths = [max([len(t)] + [len(row[i]) for row in rows]) for i, t in enumerate(titles)]
    return [" ".join(c.ljust(w) for c, w in zip(row, widths)).rstrip() for row in [list(titles), *rows]]


def control_note(n: int) -> str:
    """What a count of every record holds besides what a consumer is handed: " (160 of
    them control records)", or nothing. (verify counts every record; Spark's stats and its
    report count data records and control records apart, as a consumer sees them.)"""
    if not n:
        return ""
    return " (1 of them a control record)" if n == 1 else f" ({n} of them control records)"


def safe(text: str) -> str:
    """Control characters escaped, so that a file name or a key cannot drive the terminal."""
    if text.isprintable():  # the usual case, checked in C: nothing to escape
        return text
    return "".join(ch if ch.isprintable() or ch == " " else ascii(ch)[1:-1] for ch in text)


class _Notes(logging.Handler):
    """The library's warnings (kafkacodec.log: an index not trusted, a walk used instead),
    each said once on stderr as a note of the command."""

    def __init__(self, command: str) -> None:
        super().__init__(logging.WARNING)
        self.command = command
        self.said: set[str] = set()

    def emit(self, record: logging.LogRecord) -> None:
        text = record.getMessage()
        if text not in self.said:
            self.said.add(text)
            print(f"kafkacodec {self.command}: note: {safe(text)}", file=sys.stderr)


@contextmanager
def notes_on_stderr(command: str) -> Iterator[None]:
    """While a command runs, the kafkacodec loggers' warnings are its notes on stderr, once
    each (and not also Python's default rendering of them)."""
    logger = logging.getLogger("kafkacodec")
    handler = _Notes(command)
    saved = logger.propagate, logger.level
    logger.addHandler(handler)
    logger.propagate = False
    if logger.level == logging.NOTSET or logger.level > logging.WARNING:
        logger.setLevel(logging.WARNING)
    try:
        yield
    finally:
        logger.removeHandler(handler)
        logger.propagate, logger.level = saved[0], saved[1]


def run_command(command: str, job: Callable[[], int]) -> int:
    """job() under the command line's rules: a kafkacodec error or an OS error is one line
    on stderr and its exit code (error_status); a reader that stopped reading (`| head`)
    does not change the status; the library's warnings are notes on stderr."""
    try:
        with notes_on_stderr(command):
            status = job()
    except BrokenPipeError:  # written past out(): what was found is not known
        _close_stdout()
        return DONE
    except KafkacodecError as err:
        _flush()
        print(f"kafkacodec {command}: {safe(str(err))}", file=sys.stderr)
        return error_status(err)
    except OSError as err:
        _flush()
        where = f"{err.filename}: " if err.filename else ""
        print(f"kafkacodec {command}: {safe(where)}{err.strerror or err}", file=sys.stderr)
        return error_status(err)
    except KeyboardInterrupt:  # Ctrl-C: one line, the shell's status for SIGINT
        try:
            _flush()
        except (OSError, KeyboardInterrupt):
            pass
        print(f"kafkacodec {command}: interrupted", file=sys.stderr)
        return INTERRUPTED
    _flush()
    return status


def _fit(label: str, width: int) -> str:
    """label in exactly width columns: padded, or shortened in its middle ("orders-0/0…042.log"),
    where a file name's base offset and a partition's number both survive."""
    if len(label) <= width:
        return label.ljust(width)
    keep = width - 1
    return label[: keep // 2] + "…" + label[len(label) - (keep - keep // 2) :]


def file_label(path) -> str:
    """A file as a progress bar names it: its partition's directory and its own name
    ("orders-0/00000000000000000000.log"), since every partition's first segment has
    the same name."""
    parts = str(path).rstrip("/").rsplit("/", 2)
    return safe("/".join(parts[-2:]))


def _size(n: float) -> str:
    for unit in ("B", "kB", "MB", "GB", "TB"):
        if n < 1000 or unit == "TB":
            return f"{n:.0f} {unit}" if unit == "B" else f"{n:.1f} {unit}"
        n /= 1000
    raise AssertionError  # pragma: no cover


class Progress:
    """Bytes done out of `total`, with the rate and the time left, on one line that fits
    the terminal: what is being read named on the left (a partition's segment), a bar
    that moves within a file as its reader reports where it is (at), for the files that
    several worker processes read at once too."""

    WIDTH = 24
    #: The columns a label keeps before the line drops what else it shows.
    LABEL = 30

    def __init__(self, total: int, label: str, *, quiet: bool = False, stream=None):
        self.stream = stream if stream is not None else sys.stderr
        self.enabled = not quiet and total > 0 and self.stream.isatty()
        self.total, self.label, self.done = total, label, 0
        #: What is being read and how far each has got: key -> (bytes read, its label).
        self.running: dict[object, tuple[int, str]] = {}
        self._start = self._last = time.monotonic()
        self._drawn = 0

    def __call__(self, n: int, key: object = None) -> None:
        """Count `n` more bytes as done (those of `key`, no longer being read)."""
        self.running.pop(key, None)
        self.done += n
        self._update()

    def at(self, key: object, n: int, label: str) -> None:
        """`key` (a file, labelled `label`) is being read and has got `n` bytes in."""
        self.running[key] = (n, label)
        self._update()

    def describe(self, label: str) -> None:
        """Name what is being scanned now (a file, a segment)."""
        self.label = label

    def _update(self) -> None:
        if self.enabled:
            now = time.monotonic()
            if now - self._last >= 0.1 or not self._drawn:
                self._last = now
                self._draw(now)

    def _label(self, width: int) -> str:
        """What is being read, in width columns: the first file still being read, and
        how many others are ("+2")."""
        if not self.running:
            return _fit(self.label, width)
        first = next(iter(self.running.values()))[1]
        more = f" +{len(self.running) - 1}" if len(self.running) > 1 else ""
        return (_fit(first, max(width - len(more), 8)).rstrip() + more).ljust(width)

    def _columns(self) -> int:
        """The width of the terminal the bar is drawn on (stderr's, not stdout's: stdout
        is often a pipe), else $COLUMNS, else 80."""
        try:
            columns = os.get_terminal_size(self.stream.fileno()).columns
        except (AttributeError, OSError, ValueError):
            columns = 0
        return columns or shutil.get_terminal_size((80, 24)).columns  # 0: a terminal that does not say

    def _draw(self, now: float) -> None:
        done = self.done + sum(n for n, _label in self.running.values())
        frac = min(done / self.total, 1.0)
        columns = self._columns() - 1  # the last column wraps on some terminals
        rate = done / max(now - self._start, 1e-9)
        left = f" {(self.total - done) / rate:.0f}s left" if done and frac < 1 else ""
        sizes = f" {_size(done)}/{_size(self.total)}"
        # what a narrow terminal drops first: the rate, then the sizes, then the bar's width
        for extra, width in ((f"{sizes} {_size(rate)}/s{left}", self.WIDTH), (f"{sizes}{left}", self.WIDTH),
                             (left, self.WIDTH), (left, 10), ("", 10)):  # fmt: skip
            if columns - (width + 8 + len(extra)) >= self.LABEL:
                break
        filled = int(frac * width)
        rest = f" [{'#' * filled}{'.' * (width - filled)}] {frac:4.0%}{extra}"
        line = (self._label(max(columns - len(rest), 8)) + rest)[:columns]
        self.stream.write("\r" + line.ljust(min(self._drawn, columns)))
        self.stream.flush()
        self._drawn = len(line)

    def clear(self) -> None:
        """Take the bar off the line (before printing something else); it comes back on
        the next update."""
        if self._drawn:
            self.stream.write("\r" + " " * self._drawn + "\r")
            self.stream.flush()
            self._drawn = 0

    def close(self) -> None:
        """Draw the final state, then clear the line so that what follows starts clean."""
        if self.enabled and (self.done or self._drawn):
            self._draw(time.monotonic())
            self.clear()

    def __enter__(self):
        return self

    def __exit__(self, kind, *exc):
        if kind is None:
            self.close()
        else:  # an error or Ctrl-C: its one line starts at the line's start, no bar before it
            self.clear()

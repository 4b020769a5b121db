"""How a command talks to the terminal: its lines, text made safe to print, its errors as
one line and an exit code, and a progress bar. Used by the command line (kafkacodec.cli)
and by the Spark jobs' command (kafkacodec.pipeline.cli).

The progress bar is a line on stderr for long scans (dump, verify, recover, records, sample),
shown only on a terminal: silent when stderr is piped or redirected, or with --quiet. It
redraws at most ten times a second, so a hot loop may call it once per batch.
"""

from __future__ import annotations

import os
import sys
import time
from collections.abc import Callable

from .runtime.errors import KafkacodecError

__all__ = ["out", "safe", "run_command", "Progress"]


def out(line: str) -> None:
    """One line of a command's output, on stdout."""
    sys.stdout.write(line + "\n")


def safe(text: str) -> str:
    """Control characters escaped, so that a file name or a key cannot drive the terminal."""
    return "".join(ch if ch.isprintable() or ch == " " else ascii(ch)[1:-1] for ch in text)


def run_command(command: str, job: Callable[[], int]) -> int:
    """job() under the command line's rules: a kafkacodec error or an OS error is one line
    on stderr and exit 1; a reader that stopped reading (`| head`) is not an error."""
    try:
        return job()
    except BrokenPipeError:
        os.dup2(os.open(os.devnull, os.O_WRONLY), sys.stdout.fileno())
        return 0
    except KafkacodecError as err:
        print(f"kafkacodec {command}: {safe(str(err))}", file=sys.stderr)
        return 1
    except OSError as err:
        where = f"{err.filename}: " if err.filename else ""
        print(f"kafkacodec {command}: {safe(where)}{err.strerror}", file=sys.stderr)
        return 1


def _size(n: float) -> str:
    for unit in ("B", "kB", "MB", "GB", "TB"):
        if n < 1000 or unit == "TB":
            return f"{n:.0f} {unit}" if unit == "B" else f"{n:.1f} {unit}"
        n /= 1000
    raise AssertionError  # pragma: no cover


class Progress:
    """Bytes done out of `total`, with the rate and the time left."""

    WIDTH = 24

    def __init__(self, total: int, label: str, *, quiet: bool = False, stream=None):
        self.stream = stream if stream is not None else sys.stderr
        self.enabled = not quiet and total > 0 and self.stream.isatty()
        self.total, self.label, self.done = total, label, 0
        self._start = self._last = time.monotonic()
        self._drawn = 0

    def __call__(self, n: int) -> None:
        """Count `n` more bytes as done."""
        self.done += n
        if self.enabled:
            now = time.monotonic()
            if now - self._last >= 0.1 or not self._drawn:
                self._last = now
                self._draw(now)

    def describe(self, label: str) -> None:
        """Name what is being scanned now (a file, a segment)."""
        self.label = label

    def _draw(self, now: float) -> None:
        frac = min(self.done / self.total, 1.0)
        filled = int(frac * self.WIDTH)
        rate = self.done / max(now - self._start, 1e-9)
        left = (self.total - self.done) / rate if rate and frac < 1 else 0.0
        line = (f"{self.label[-30:]:<30} [{'#' * filled}{'.' * (self.WIDTH - filled)}] {frac:4.0%} "
                f"{_size(self.done)}/{_size(self.total)} {_size(rate)}/s {left:.0f}s left")  # fmt: skip
        self.stream.write("\r" + line.ljust(self._drawn))
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
        if self.enabled and self.done:
            self._draw(time.monotonic())
            self.clear()

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        self.close()
